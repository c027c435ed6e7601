"""spawn.reachable on hand-made words: which words of a server's command are started by an absolute path (they
name a file or folder where the probe runs, and the server starts in its sandbox's working folder)."""

from __future__ import annotations

import os

from stdio_probe.core import spawn


def test_a_word_naming_a_file_or_folder_here_is_started_by_its_absolute_path(tmp_path):
    (tmp_path / "server.py").write_text("")
    (tmp_path / "data").mkdir()
    here = str(tmp_path)
    given = ["python", "server.py", "--root", "data", "--repository", ".", "data/../server.py"]
    started = spawn.reachable(given, here)
    assert started == [
        "python",
        f"{here}/server.py",
        "--root",
        f"{here}/data",
        "--repository",
        f"{here}/.",
        f"{here}/data/../server.py",
    ]
    resolved = [(was, now) for was, now in zip(given, started, strict=True) if was != now]
    assert all(os.path.samefile(os.path.join(here, was), now) for was, now in resolved)  # the file named here


def test_the_program_is_resolved_only_when_it_holds_a_slash(tmp_path):
    """A bare program is looked for on PATH, never here, even when a file of that name is here."""
    for name in ("server", "python"):
        (tmp_path / name).write_text("")
    here = str(tmp_path)
    assert spawn.reachable(["./server", "--stdio"], here) == [f"{here}/./server", "--stdio"]
    assert spawn.reachable(["python", "-u"], here) == ["python", "-u"]
    assert spawn.reachable(["server"], here) == ["server"]


def test_what_names_nothing_here_or_holds_a_path_inside_it_is_left_as_given(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    here = str(tmp_path)
    given = [
        "node",
        "dist/index.js",  # nothing of that name here
        "--config=config.json",  # a path inside a word
        "CONFIG=config.json",
        "",
        "/usr/bin/env",  # absolute already
        "-c",
        "python config.json",  # a shell's script
    ]
    assert spawn.reachable(given, here) == given
