"""One server fixture under one case's arm: spawned with its markers, an events file and (where a proof
needs it) a timer query, and ended whatever the arm does.

Written once for every case that drives a server fixture (L1, L2, L12, L13): the fixture is spawned
(Supervisor.spawn: its own session, the run and spawn markers), given --events and --timer-query-fd, and
on leaving the block it is stopped (SIGTERM to its group, then SIGKILL) and the probe's end of the
timer query closed, also when the arm raises or the spawn fails. Arm.finish adds the facts every
such arm record carries: the fixture, the SDK configuration it logged, its exit facts, and
not_applicable when it said its SDK lacks what it drives (fixture_log.not_applicable).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from stdio_probe.core import hang, spawn
from stdio_probe.core.model import Sdk
from stdio_probe.core.spawn import Child
from stdio_probe.sdk import fixture_log


@dataclass
class Arm:
    """A started fixture: its child, its events file, and its timer query (None when not asked for)."""

    script: str
    child: Child
    events: fixture_log.EventsFile
    timers: hang.TimerQuery | None

    def finish(self, record: dict) -> dict:
        """The arm's record with the fixture's facts, once it is stopped (it is stopped here if still running)."""
        self.child.stop()
        record = {**record, "fixture": self.script, "sdk_config": self.events.config(), **self.child.record()}
        return {**record, **fixture_log.not_applicable(record)}


@contextmanager
def started(sdk: Sdk, script: str, args: list[str], timers: bool = False) -> Iterator[Arm]:
    """script in sdk's interpreter with args, --events and (timers) --timer-query-fd; stopped on leaving."""
    with fixture_log.EventsFile() as events:
        query = hang.TimerQuery() if timers else None
        try:
            fds = () if query is None else (query.fixture_fd,)
            args = [*args, *(["--timer-query-fd", str(query.fixture_fd)] if query else []), "--events", events.path]
            try:
                child = spawn.current().spawn(sdk.python, script, args, sdk.env, pass_fds=fds)
            finally:
                if query is not None:
                    query.spawned()
            try:
                yield Arm(script, child, events, query)
            finally:
                child.stop()
        finally:
            if query is not None:
                query.close()
