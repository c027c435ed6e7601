"""Plain data shared by the runner and the cases."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Options:
    """How arms run: the observation window (seconds) and the method.

    method "fast" stops waiting on kernel proof or an observed event;
    "window" reproduces the article: 2 s before EOF, the whole window, in sequence.
    """

    window: float = 10.0
    method: str = "fast"


@dataclass(frozen=True)
class Sdk:
    """An SDK under test: the interpreter that has it, extra environment, and its facts."""

    spec: str
    python: str
    env: dict[str, str] = field(default_factory=dict)
    facts: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Finding:
    """What one arm's record says about the defect: shown True/False, or None for no evidence."""

    shown: bool | None
    note: str
