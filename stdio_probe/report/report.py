"""What the user sees: a live view of the arms while they run, then the summary, each fitting 80 columns.

The summary of one subject (an SDK, or a server) is one line per case: the verdict, the
decisive evidence in a few words (the run's headline) and whether the host contract held.
Several subjects give a matrix of short verdict words instead. verbose gives every arm's
evidence in full, as the reason says it.
"""

from __future__ import annotations

import io
import re
import textwrap
import threading
from collections import Counter, deque
from pathlib import Path

from rich import box
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.live import Live
from rich.table import Table
from rich.text import Text

from stdio_probe.core.model import printable
from stdio_probe.core.outcome import CONTRACT, MEANING, Outcome
from stdio_probe.report.record import subject, subject_title, write_text_atomic

RECENT_ARMS = 4  # finished arms the live view keeps showing
# one space between columns, none at the edges: what lets a line per case fit 80 columns
COMPACT = {"box": box.SIMPLE_HEAD, "pad_edge": False, "padding": (0, 1, 0, 0), "title_justify": "left"}
SUBJECT_WIDTH = 28  # a matrix's subject column at most; a longer title ends in an ellipsis


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
        self.planned = set(rows)  # a rerun's row (runner.Servers.reruns) is shown, not counted
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
            if status != "running" and row in self.planned:
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
        self.console.file.write(printable(line) + "\n")
        self.console.file.flush()

    def _view(self) -> Table:
        table = Table(title=f"arms: {self.done} of {self.total} done", **COMPACT)
        for column in ("subject", "case", "arm"):
            table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=24)
        table.add_column("seen", no_wrap=True, overflow="ellipsis")
        for row, note in self.finished:
            table.add_row(*_cells(row), Text(printable(note), style="dim"))
        for row in self.running:
            table.add_row(*_cells(row), Text("running", style="cyan"))
        return table


def _cells(row: tuple[str, str, str]) -> list[Text]:
    return [Text(printable(cell)) for cell in row]


def summary(runs: list[dict], verbose: bool = False) -> RenderableType:
    """The summary of a run (or a merged file): a line per case, a matrix, or with verbose every reason in full."""
    if verbose:
        return _Blocks(runs)
    if len({subject(run) for run in runs}) > 1:
        return _Matrix(runs)
    return _lines(runs)


def verdict_text(verdict: str) -> Text:
    return Text(verdict, style=MEANING[verdict].style)


def _lines(runs: list[dict]) -> Table:
    title = f"stdio lifecycle probe: {subject_title(runs[0])}" if runs else "stdio lifecycle probe: no runs"
    table = Table(title=title, **COMPACT, caption="-v: every arm's evidence in full", caption_justify="left")
    table.add_column("case", no_wrap=True, min_width=4)
    table.add_column("verdict", no_wrap=True, min_width=max(map(len, Outcome)))
    table.add_column("decisive evidence", no_wrap=True, overflow="ellipsis")
    contract = any("sdk" in run for run in runs)  # server and host checks have no host-contract arm
    if contract:
        table.add_column("host contract", no_wrap=True, min_width=len("host contract"))
    for run in runs:
        evidence = Text(run["headline"])
        held = [CONTRACT[run["mitigation"]["status"]].markup] if contract else []
        table.add_row(run["case"], verdict_text(run["verdict"]), evidence, *held)
    return table


class _Matrix:
    """Subjects by cases, a cell per verdict, cut into as many grids as the console's width needs: the subject
    column in each, a case's column whole (never an ellipsis: at 80 columns a server's fifteen checks do not fit
    in one grid, and cut columns read "…"), and in each grid only the subjects it holds a cell of (a merged table
    of servers and hosts shows servers by S checks, then hosts by H checks)."""

    def __init__(self, runs: list[dict]) -> None:
        self.runs = runs

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        cases = list(dict.fromkeys(run["case"] for run in self.runs))
        cells = {(subject(run), run["case"]): _cell(run) for run in self.runs}
        titles = {subject(run): Text(subject_title(run)) for run in self.runs}
        subject_width = min(SUBJECT_WIDTH, max(title.cell_len for title in titles.values()))
        width = max(options.max_width, MIN_WIDTH) - subject_width - 3  # its padding and the box's two edges
        columns = {case: max(len(case), *(c.cell_len for (_, of), c in cells.items() if of == case)) for case in cases}
        for n, grid in enumerate(_fitting(cases, columns, width)):
            table = Table(title=None if n else "stdio lifecycle probe: verdicts", **COMPACT)
            table.add_column("subject", no_wrap=True, overflow="ellipsis", max_width=SUBJECT_WIDTH)
            for case in grid:
                table.add_column(case, no_wrap=True)
            for name, title in titles.items():
                if any((name, case) in cells for case in grid):
                    table.add_row(title, *(cells.get((name, case), Text("")) for case in grid))
            yield table
        legend = " · ".join(f"{meaning.word} {verdict}" for verdict, meaning in MEANING.items())
        marks = " · ".join(f"{shown.mark} host contract {shown.words}" for shown in CONTRACT.values() if shown.mark)
        yield Text(f"{legend} · {marks} · -v: every reason", style="dim")


def _fitting(cases: list[str], columns: dict[str, int], width: int) -> list[list[str]]:
    """cases in order, cut into runs whose columns (each its width, the box's separator and its padding) fit in
    width, and where the kind of case changes (L, S, H: servers' grids apart from hosts'); one case a run at
    least, however narrow the width."""
    grids: list[list[str]] = [[]]
    used = 0
    for case in cases:
        if grids[-1] and (used + columns[case] + 2 > width or case[0] != grids[-1][-1][0]):
            grids.append([])
            used = 0
        grids[-1].append(case)
        used += columns[case] + 2
    return grids


def _cell(run: dict) -> Text:
    meaning, shown = MEANING[run["verdict"]], CONTRACT[run["mitigation"]["status"]]
    cell = Text(meaning.word, style=meaning.style)
    if shown.mark:
        cell.append(shown.mark, style=shown.mark_style)
    return cell


class _Blocks:
    """-v: a block per case or check, its header (id, verdict, subject) and a line per arm's evidence
    (bug:, control:, further arms, mitigated:), wrapped at the width the console gives on spaces only:
    no word is split, but one longer than a whole line (folded where the line ends)."""

    def __init__(self, runs: list[dict]) -> None:
        self.runs = runs

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width, MIN_WIDTH)
        yield Text("stdio lifecycle probe", style="bold")
        for run in self.runs:
            yield Text("")
            header = f"{run['case']}  {run['verdict']}  {subject_title(run)}"
            for n, line in enumerate(textwrap.wrap(header, width, subsequent_indent=INDENT * 2, **UNBROKEN)):
                text = _whole(line)
                if n == 0:
                    text.stylize("bold", 0, len(run["case"]))
                    start = len(run["case"]) + 2
                    text.stylize(MEANING[run["verdict"]].style, start, start + len(run["verdict"]))
                yield text
            for label, evidence in arm_lines(run):
                lines = textwrap.wrap(f"{label}: {evidence}", width, initial_indent=INDENT,
                                      subsequent_indent=INDENT * 3, **UNBROKEN)
                for n, line in enumerate(lines):
                    text = _whole(line)
                    if n == 0:
                        text.stylize(LABEL_STYLES.get(label, "bold"), len(INDENT), len(INDENT) + len(label) + 1)
                    yield text


INDENT = "  "
MIN_WIDTH = 20
UNBROKEN = {"break_long_words": False, "break_on_hyphens": False}
LABEL_STYLES = {"bug": "bold red", "control": "bold green", "mitigated": "bold cyan"}


def _whole(line: str) -> Text:
    """A line already wrapped on word boundaries, so rich has nothing to wrap; but a word longer than a whole
    line is folded (rich would otherwise crop it), as a terminal would show it."""
    return Text(line, overflow="fold")


def arm_lines(run: dict) -> list[tuple[str, str]]:
    """(label, evidence) per line of -v's block: why (when the verdict has a reason of its own, such as
    "control arm shows the defect too"), each arm's evidence as the reason gives it, an arm that is another
    check's (shared_arms), a server run's era, and the mitigated arm's judgement."""
    reason, lines = run["reason"], []
    found = _labelled(run)
    if not found:
        arms = [name for name in run.get("arms", {}) if name != "mitigated"]
        label = arms[0] if len(arms) == 1 and MEANING[run["verdict"]].defect is not None else "why"
        lines.append((label, reason))
    else:
        lead = reason[: found[0].start()].rstrip(" (")
        lines += [("why", lead)] if lead else []
        for match, after in zip(found, [*found[1:], None], strict=True):
            text = reason[match.end() : after.start() if after else len(reason)].removesuffix("; ")
            if text.endswith(")") and text.count(")") > text.count("("):  # the lead's closing parenthesis
                text = text[:-1]
            lines.append((match[1], text))
    for arm, owner in run.get("shared_arms", {}).items():  # whose start of the server the arm's record is
        lines.append(("shared", f"{arm} is {owner}'s arm, one start of the server for both"))
    era = run.get("server", {}).get("era")
    if era is not None:
        which = era["protocol"] or "none in common"
        version = f" {era['version']}" if era["version"] and era["version"] != era["protocol"] else ""
        lines.append(("era", f"{which}{version} (by {era['chosen_by']})"))
    if "sdk" in run:  # server and host checks have no host-contract arm
        lines.append(("mitigated", f"{CONTRACT[run['mitigation']['status']].words}: {run['mitigation']['note']}"))
    else:
        lines += exit_causes(run)
    return lines


STDERR_TAIL_LINES, STDERR_TAIL_CHARS = 2, 160


def exit_causes(run: dict) -> list[tuple[str, str]]:
    """A server's or host's exit that was not clean (a code other than 0, a signal) and not the probe's doing:
    the last lines of its stderr, where its cause usually is (S8's "exit 120", S10's "exit 1", a host's)."""
    lines = []
    for name, arm in run.get("arms", {}).items():
        facts = arm.get("host", arm)  # a host check's arm keeps the host's exit facts apart from the timeline
        if facts.get("ended_by") != "self" or facts.get("exit_code") in (0, None):
            continue
        tail = [line.strip() for line in facts.get("stderr", "").splitlines() if line.strip()][-STDERR_TAIL_LINES:]
        if tail:
            text = " | ".join(tail)
            cut = text if len(text) <= STDERR_TAIL_CHARS else "…" + text[-STDERR_TAIL_CHARS:]
            lines.append((f"{name} stderr", cut))
    return lines


def _labelled(run: dict) -> list[re.Match]:
    """Where the reason names an arm (or a pair) of the run: at its start or after "; ", outside any
    parentheses but those of a lead ("no evidence (bug: ...; control: ...)"), so the bug and control of a
    pair judged beside ("server API: reproduced (bug: ...)") stay inside the pair's line."""
    names = [name for name in (*run.get("arms", {}), *run.get("pairs", {})) if name != "mitigated"]
    if not names:
        return []
    reason = run["reason"]
    lead = re.match(r"[^(:;]* \(", reason)
    inside = range(lead.end(), _closing(reason, lead.end())) if lead else range(0)
    pattern = rf"(?:^|(?<=; )|(?<=\())({'|'.join(map(re.escape, names))}): "
    return [
        match
        for match in re.finditer(pattern, reason)
        if _depth(reason, match.start()) == (1 if match.start() in inside else 0)
    ]


def _depth(text: str, at: int) -> int:
    return text[:at].count("(") - text[:at].count(")")


def _closing(text: str, opened: int) -> int:
    """The index of the ")" that closes the "(" just before opened (the text's end if none does)."""
    depth = 1
    for at in range(opened, len(text)):
        depth += {"(": 1, ")": -1}.get(text[at], 0)
        if depth == 0:
            return at
    return len(text)


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
