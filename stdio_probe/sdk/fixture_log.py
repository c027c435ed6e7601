"""The probe's side of a server fixture's event log (fixtures/fixture_events.py): its SDK configuration, its timeline.

A server fixture's stdout belongs to the protocol and its stderr to the SDK, so
what it reports about itself (the configuration it used, read from the SDK;
when its tool returned) goes to a file the probe names.
"""

from __future__ import annotations

import os
import tempfile
from types import TracebackType

from stdio_probe.core import spawn
from stdio_probe.fixtures.fixture_events import EventReader

NOT_APPLICABLE_EXIT = 3  # a fixture whose SDK lacks what it drives exits so, saying "not_applicable: why" on stderr


class EventsFile:
    """A fresh events file for one fixture, removed on exit."""

    def __enter__(self) -> EventsFile:
        self._folder = tempfile.TemporaryDirectory(prefix="probe-events-", dir=spawn.current().run_folder())
        self.path = os.path.join(self._folder.name, "events")
        self._reader = EventReader(self.path)
        return self

    def __exit__(self, kind: type | None, value: BaseException | None, trace: TracebackType | None) -> None:
        self._folder.cleanup()

    def events(self) -> list[dict]:
        """Every event the fixture logged so far, each read once (the cases' waits poll it)."""
        return self._reader.read()

    def config(self) -> dict | None:
        """The SDK configuration the fixture logged (what it set explicitly, the SDK's defaults), if it got so far."""
        found = next((e for e in self.events() if e["event"] == "config"), None)
        return None if found is None else {k: v for k, v in found.items() if k not in ("event", "pid", "t")}


def not_applicable(record: dict) -> dict:
    """{"not_applicable": why} when the fixture exited saying its SDK lacks what it drives, else {}."""
    if record["exit_code"] != NOT_APPLICABLE_EXIT:
        return {}
    line = next((line for line in record["stderr"].splitlines() if line.startswith("not_applicable: ")), None)
    return {} if line is None else {"not_applicable": line.removeprefix("not_applicable: ")}
