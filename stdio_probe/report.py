"""What the user sees: a live view of the arms while they run, then the summary, each fitting 80 columns.

The summary of one subject (an SDK, or a server) is one line per case: the verdict, the
decisive evidence in a few words (the run's headline) and whether the host contract held.
Several subjects give a matrix of short verdict words instead. verbose gives every arm's
evidence in full, as the reason says it.
"""

from __future__ import annotations

import io
import re
import threading
from collections import Counter, deque
from pathlib import Path

from rich import box
from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from stdio_probe.decide import contract_status
from stdio_probe.model import shorten
from stdio_probe.record import subject, subject_title, write_text_atomic

STYLES = {
    "reproduced": "bold red",
    "not_reproduced": "green",
    "inconclusive": "yellow",
    "error": "bold magenta",
    "not_applicable": "dim",
}
# the matrix's words: at most three characters, so twelve cases fit beside a subject in 80 columns
WORDS = {"reproduced": "bug", "not_reproduced": "ok", "inconclusive": "?", "error": "ERR", "not_applicable": "n/a"}
# a cell's mark for a host contract that did not hold, or could not be evaluated where the case applies
CONTRACT_MARKS = {"not_held": "!", "not_evaluated": "*"}
MITIGATION = {
    "held": "[green]held[/]",
    "not_held": "[bold red]not held[/]",
    "not_evaluated": "[bold yellow]not evaluated[/]",
    "not_applicable": "[dim]n/a[/]",
}
RECENT_ARMS = 4  # finished arms the live view keeps showing
# one space between columns, none at the edges: what lets a line per case fit 80 columns
COMPACT = {"box": box.SIMPLE_HEAD, "pad_edge": False, "padding": (0, 1, 0, 0), "title_justify": "left"}


class LiveArms:
    """A rich Live view of the arms; usable as the runner's on_arm listener.

    It shows the arms running now and the last few finished, one line each, and a count:
    a sweep of many SDKs stays as high as the arms that run at once. Output that is not a
    terminal (a CI log) cannot be redrawn: it gets one flushed line per (subject, case) whose
    arms have all finished instead, so a long run shows its progress as it goes.
    """

    def __init__(self, console: Console, rows: list[tuple[str, str, str]]) -> None:
        self.console = console
        self.total = len(rows)
        self.running: dict[tuple[str, str, str], None] = {}
        self.finished: deque[tuple[tuple[str, str, str], str]] = deque(maxlen=RECENT_ARMS)
        self.done = 0
        self.lock = threading.Lock()
        self.arms_left = Counter((sdk, case) for sdk, case, _ in rows)
        self.cases_done = 0
        self.live = (
            Live(self._view(), console=console, transient=True, auto_refresh=False) if console.is_terminal else None
        )

    def __enter__(self) -> LiveArms:
        if self.live is not None:
            self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.__exit__(*exc)

    def __call__(self, sdk: str, case: str, arm: str, status: str, note: str) -> None:
        with self.lock:
            row = (sdk, case, arm)
            if status == "running":
                self.running[row] = None
            else:
                self.running.pop(row, None)
                self.finished.append((row, note))
                self.done += 1
                self.arms_left[(sdk, case)] -= 1
                if self.live is None and not self.arms_left[(sdk, case)]:
                    self._case_done(sdk, case)
            if self.live is not None:
                self.live.update(self._view(), refresh=True)

    def _case_done(self, sdk: str, case: str) -> None:
        """The progress line of a (subject, case) whose last arm has finished, flushed at once."""
        self.cases_done += 1
        line = f"{self.cases_done}/{len(self.arms_left)} {sdk} {case}: arms done ({self.done} of {self.total} arms)"
        self.console.file.write(line + "\n")
        self.console.file.flush()

    def _view(self) -> Table:
        table = Table(title=f"arms: {self.done} of {self.total} done", **COMPACT)
        for column in ("subject", "case", "arm"):
            table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=24)
        table.add_column("seen", no_wrap=True, overflow="ellipsis")
        for row, note in self.finished:
            table.add_row(*map(Text, row), Text(note, style="dim"))
        for row in self.running:
            table.add_row(*map(Text, row), Text("running", style="cyan"))
        return table


def summary(runs: list[dict], verbose: bool = False) -> RenderableType:
    """The summary of a run (or a merged file): a line per case, a matrix, or with verbose every reason in full."""
    if verbose:
        return _full(runs)
    if len({subject(run) for run in runs}) > 1:
        return _matrix(runs)
    return _lines(runs)


def verdict_text(verdict: str) -> Text:
    return Text(verdict, style=STYLES[verdict])


def headline(run: dict) -> str:
    """The decisive evidence in a few words: the run's headline, or (older files, error runs) its reason cut."""
    return run.get("headline") or shorten(run["reason"])


def _lines(runs: list[dict]) -> Table:
    title = f"stdio lifecycle probe: {subject_title(runs[0])}" if runs else "stdio lifecycle probe: no runs"
    table = Table(title=title, **COMPACT, caption="-v: every arm's evidence in full", caption_justify="left")
    table.add_column("case", no_wrap=True, min_width=4)
    table.add_column("verdict", no_wrap=True, min_width=max(map(len, STYLES)))
    table.add_column("decisive evidence", no_wrap=True, overflow="ellipsis")
    contract = any("sdk" in run for run in runs)  # server and host checks have no host-contract arm
    if contract:
        table.add_column("host contract", no_wrap=True, min_width=len("host contract"))
    for run in runs:
        evidence = Text(headline(run))
        held = [MITIGATION[contract_status(run)]] if contract else []
        table.add_row(run["case"], verdict_text(run["verdict"]), evidence, *held)
    return table


def _matrix(runs: list[dict]) -> Group:
    cases = list(dict.fromkeys(run["case"] for run in runs))
    cells = {(subject(run), run["case"]): run for run in runs}
    table = Table(title="stdio lifecycle probe: verdicts", **COMPACT)
    table.add_column("subject", no_wrap=True, overflow="ellipsis", max_width=28)
    for case in cases:
        table.add_column(case, no_wrap=True)
    titles = {subject(run): subject_title(run) for run in runs}
    for name, title in titles.items():
        table.add_row(Text(title), *(_cell(cells.get((name, case))) for case in cases))
    legend = " · ".join(f"{word} {verdict}" for verdict, word in WORDS.items())
    marks = " · ".join(f"{mark} host contract {status.replace('_', ' ')}" for status, mark in CONTRACT_MARKS.items())
    return Group(table, Text(f"{legend} · {marks} · -v: every reason", style="dim"))


def _cell(run: dict | None) -> Text:
    if run is None:
        return Text("")
    cell = Text(WORDS[run["verdict"]], style=STYLES[run["verdict"]])
    if mark := CONTRACT_MARKS.get(contract_status(run)):
        cell.append(mark, style="bold red" if mark == "!" else "bold yellow")
    return cell


def _full(runs: list[dict]) -> Table:
    table = Table(title="stdio lifecycle probe", show_lines=True)
    contract = any("sdk" in run for run in runs)  # server and host checks have no host-contract arm
    columns = ("subject", "case", "verdict", "what was seen", "host contract (mitigated arm)")
    for column in columns if contract else columns[:-1]:
        table.add_column(column, overflow="fold")
    for run in runs:
        held = run["mitigation"]
        cells = [f"{MITIGATION[contract_status(run)]}: {escape(held['note'])}"] if contract else []
        verdict = verdict_text(run["verdict"])
        table.add_row(Text(subject_title(run) + _era(run)), run["case"], verdict, Text(run["reason"]), *cells)
    return table


def _era(run: dict) -> str:
    """A server run's protocol era as -v shows it under the label: which, and how it was chosen
    (results.json's server.era has the evidence)."""
    era = run.get("server", {}).get("era")
    if era is None:
        return ""
    which = era["protocol"] or "none in common"
    version = f" {era['version']}" if era["version"] and era["version"] != era["protocol"] else ""
    return f"\nera: {which}{version} (by {era['chosen_by']})"


_TRAILING_BLANKS = re.compile(r"[ \t]+((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)


def print_lines(console: Console, renderable: RenderableType) -> None:
    """Print as console.print does, without the blanks rich pads a table's lines with at their ends
    (styles kept): no report line ends in a space."""
    with console.capture() as captured:
        console.print(renderable)
    console.file.write(_TRAILING_BLANKS.sub(r"\1", captured.get()))
    console.file.flush()


def save_svg(renderable: RenderableType, path: Path, width: int) -> None:
    """The renderable as the terminal shows it, at width columns, as an SVG file (written atomically)."""
    recorder = Console(record=True, width=width, file=io.StringIO(), force_terminal=True, color_system="truecolor")
    recorder.print(renderable)
    write_text_atomic(path, recorder.export_svg(title="probe-stdio-lifecycle"))
