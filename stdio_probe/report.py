"""What the user sees: a live view of the arms while they run, then one summary table."""

from __future__ import annotations

import threading

from rich.console import Console
from rich.live import Live
from rich.table import Table

STYLES = {
    "reproduced": "bold red",
    "not_reproduced": "green",
    "inconclusive": "yellow",
    "error": "bold magenta",
    "not_applicable": "dim",
}


class LiveArms:
    """A rich Live table of every arm's status; usable as the runner's on_arm listener."""

    def __init__(self, console: Console, rows: list[tuple[str, str, str]]) -> None:
        self.console = console
        self.rows = {row: ("waiting", "") for row in rows}
        self.lock = threading.Lock()
        self.live = Live(self._table(), console=console, transient=True, auto_refresh=False)

    def __enter__(self) -> LiveArms:
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.__exit__(*exc)

    def __call__(self, sdk: str, case: str, arm: str, status: str, note: str) -> None:
        with self.lock:
            self.rows[(sdk, case, arm)] = (status, note)
            self.live.update(self._table(), refresh=True)

    def _table(self) -> Table:
        table = Table(title="arms", expand=False)
        for column in ("sdk", "case", "arm", "status", "seen"):
            table.add_column(column)
        for (sdk, case, arm), (status, note) in self.rows.items():
            table.add_row(sdk, case, arm, status, note)
        return table


MITIGATION = {True: "[green]held[/]", False: "[bold red]not held[/]", None: "[yellow]no evidence[/]"}


def summary(runs: list[dict]) -> Table:
    """One row per (SDK, case): the verdict, what bug and control showed, and whether the host contract held."""
    table = Table(title="stdio lifecycle probe", show_lines=True)
    for column in ("sdk", "case", "verdict", "what was seen", "host contract (mitigated arm)"):
        table.add_column(column, overflow="fold")
    for run in runs:
        style = STYLES[run["verdict"]]
        sdk = f"{run['sdk']['spec']} ({run['sdk'].get('version', '?')})"
        held = run["mitigation"]
        contract = f"{MITIGATION[held['held']]}: {held['note']}"
        table.add_row(sdk, run["case"], f"[{style}]{run['verdict']}[/]", run["reason"], contract)
    return table
