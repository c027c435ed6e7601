"""The subcommands, their --help, the older flag forms, and -v's blocks (on stored records, nothing spawned)."""

from __future__ import annotations

import copy
import io

import pytest
from rich.console import Console

from stdio_probe.cli import commands
from stdio_probe.cli import main as cli
from stdio_probe.core import runner
from stdio_probe.report import record, report
from tests.paths import ROOT

WIDTH = 80
LONG_WORD = "/" + "long-path-segment/" * 4 + "server.py"  # 82 characters: wider than any line here but 200


def help_of(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as done:
        cli.parse_args(argv)
    assert done.value.code == 0
    return capsys.readouterr().out


# the probes each command's --help lists: run's lists them all, server's and host's their own checks, no other any
LISTED = {"run": set(runner.KINDS), "server": {"server"}, "host": {"host"}}


@pytest.mark.parametrize("command", cli.COMMANDS)
def test_every_command_has_its_own_help_with_examples_within_80_columns(capsys, command):
    text = help_of(capsys, [command, "--help"])
    assert not [line for line in text.splitlines() if len(line) > WIDTH], text
    assert "examples:" in text and "exit codes" in text
    assert text.startswith(f"usage: {commands.usage.PROG} {'' if command == 'run' else command}".rstrip())
    probes = [(kind.key, probe) for kind in runner.KINDS.values() for probe in kind.probes.values()]
    listed = {probe.id for _, probe in probes if f"{probe.id} " in text and probe.title in text}
    assert listed == {probe.id for key, probe in probes if key in LISTED.get(command, set())}


def test_the_bare_help_is_runs_and_names_every_command(capsys):
    text = help_of(capsys, ["--help"])
    assert text == help_of(capsys, ["run", "--help"])
    for command in cli.COMMANDS:
        assert f"\n  {command} " in text


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--only", "L1,L2"],
        ["--only", "L1", "-v", "--sdk", "2.2.0,2.3.0", "--expect", "e.json", "--junit", "j.xml"],
        ["--out", "-", "--window", "5", "--method", "window"],
        ["--only", "L3", "--sdk", ".", "--bisect"],
    ],
)
def test_run_is_the_default_command(argv):
    bare, named = cli.parse_args(argv), cli.parse_args(["run", *argv])
    assert bare.command == "run" and vars(bare) == vars(named)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            ["--server", "python3", "--large-call", "x {}", "--name", "a"],
            ["server", "python3", "--large-call", "x {}", "--name", "a"],
        ),
        (
            ["--only", "S1", "--server", "python3", "--server", "sh"],
            ["server", "python3", "--server", "sh", "--only", "S1"],
        ),
        (["--server=python3", "--protocol", "legacy"], ["server", "python3", "--protocol", "legacy"]),
        (
            ["--host", "sh {server}", "--name", "h", "--env", "A=1"],
            ["host", "sh {server}", "--name", "h", "--env", "A=1"],
        ),
        (["--compare", "a.json", "b.json", "--markdown"], ["compare", "a.json", "b.json", "--markdown"]),
        (
            ["--merge", "o.json", "a.json", "b.json", "--expect", "e.json", "-v"],
            ["merge", "o.json", "a.json", "b.json", "--expect", "e.json", "-v"],
        ),
        (["--list-matrix", "--only", "L1", "--sdk", "2.3.0"], ["matrix", "--only", "L1", "--sdk", "2.3.0"]),
        (
            ["--host", "sh {server}", "--only", "H1", "--list-matrix"],
            ["matrix", "--host", "sh {server}", "--only", "H1"],
        ),
        (["--list"], ["list"]),
    ],
)
def test_older_flag_forms_are_their_commands(old, new):
    assert vars(cli.parse_args(old)) == vars(cli.parse_args(new))


def test_older_and_newer_forms_run_alike(capsys, tmp_path):
    assert cli.main(["--list"]) == cli.main(["list"]) == 0
    listed, again = capsys.readouterr().out.split("L1 ", 2)[1:]
    assert "L1 " + listed == "L1 " + again
    documents = []
    for argv in (["--compare", "a.json", "b.json"], ["compare", "a.json", "b.json"]):
        assert cli.main([*argv, "--markdown"]) == cli.EXIT_USAGE  # the same one line for a missing file
        documents.append(capsys.readouterr().err)
    assert documents[0] == documents[1] and documents[0].count("\n") == 1


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--markdown"], "--markdown does not go with run: it goes with compare"),
        (["--env", "A=1"], "--env does not go with run: it goes with server, host, matrix"),
        (["compare", "a", "b", "--only", "L1"], "--only does not go with compare: it goes with run, server, host"),
        (["--server", "python3", "--sdk", "2.2.0"], "--sdk does not go with --server: it goes with run, matrix"),
        (["--host", "sh {server}", "--python", "x"], "--python does not go with --host: it goes with run, matrix"),
        (["servr", "x"], "unknown command 'servr'"),
        (["server"], "required: COMMAND"),
        (["merge", "only-out.json"], "needs OUT and at least one results file"),
    ],
)
def test_an_option_of_another_command_is_one_line_and_exit_2(capsys, argv, line):
    assert cli.main(argv) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and line in err, err


def stored_runs() -> list[dict]:
    """Real runs of every case and of a sweep, as committed, plus a hand-made one with a word longer than a line."""
    runs = record.read(ROOT / "results" / "results.json")["runs"]
    runs += record.read(ROOT / "results" / "l9-1.0.0-to-2.3.0.json")["runs"][:3]
    long = copy.deepcopy(runs[0])
    long["reason"] = f"bug: stuck in {LONG_WORD}; control: exited"
    return [*runs, long]


def stored(name: str) -> list[dict]:
    return record.read(ROOT / "results" / f"{name}.json")["runs"]


def render(runs: list[dict], width: int) -> str:
    out = io.StringIO()
    Console(file=out, width=width).print(report.summary(runs, verbose=True))
    return out.getvalue()


@pytest.mark.parametrize("width", [40, 57, WIDTH, 200])
def test_verbose_blocks_never_split_a_word(width):
    runs = stored_runs() + [run for name in ("servers", "hosts") for run in stored(name)[:12]]
    text = render(runs, width)
    words = set()
    for run in runs:
        sources = [run["reason"], run["mitigation"]["note"], record.subject_title(run), run["case"], run["verdict"]]
        words |= {word for source in sources for word in source.split()}
    words |= {"stdio", "lifecycle", "probe", "why:", "held:", "not", "evaluated:", "n/a:"}
    words |= {"era:", "by", "none", "in", "common"}  # a server's era line, from its record's fields
    eras = [run["server"]["era"] for run in runs if run.get("server", {}).get("era")]
    words |= {str(era[key]) for era in eras for key in ("protocol", "version", "chosen_by")}
    words |= {f"{name}:" for run in runs for name in (*run["arms"], *run.get("pairs", {}))}
    causes = [cause for run in runs if "sdk" not in run for cause in report.exit_causes(run)]  # an exit's stderr
    words |= {word for label, tail in causes for word in (*label.split(), label.split()[-1] + ":", *tail.split())}
    words = {word.strip(";()") for word in words}  # a line loses the "; " or ")" that separated its arm
    printed = {word.strip(";()") for line in text.splitlines() for word in line.split()}
    folded = {word for word in words if len(word) + 6 > width}  # longer than a line: folded, nothing lost
    joined = "".join("".join(line.split()) for line in text.splitlines())
    assert all(word in joined for word in folded)
    printed = {word for word in printed if not any(word in long for long in folded)}
    assert (LONG_WORD in folded) == (width < 200)
    assert printed <= words, sorted(printed - words)
    assert max(map(len, text.splitlines())) <= width


def test_verbose_is_a_block_per_case_with_each_arms_evidence():
    runs = stored_runs()[:-1]
    blocks = render(runs, WIDTH).split("\n\n")[1:]
    assert [block.split()[0] for block in blocks] == [run["case"] for run in runs]
    for block, run in zip(blocks, runs, strict=True):
        labels = [line.split(":")[0].strip() for line in block.splitlines()[1:] if not line.startswith("    ")]
        arms = [arm for arm in run["arms"] if arm != "mitigated"] if run["verdict"] != "not_applicable" else []
        why = ["why"] if run["verdict"] in ("inconclusive", "not_applicable") else []
        assert labels == [*why, *arms, "mitigated"], (labels, run["reason"])
        assert run["verdict"] in block.splitlines()[0]


def test_verbose_keeps_a_pair_judged_beside_on_its_own_line_and_an_undecided_lead():
    run = copy.deepcopy(stored_runs()[0])
    run["arms"] |= {"bug_server_api": {}, "control_server_api": {}}
    run["pairs"] = {"server API": {"verdict": "reproduced", "reason": "x"}}
    run["reason"] = "control arm shows the defect too (bug: hung; control: hung too)"
    run["reason"] += "; server API: reproduced (bug: a; control: b)"
    lines = dict(report.arm_lines(run))
    assert lines["why"] == "control arm shows the defect too"
    assert (lines["bug"], lines["control"]) == ("hung", "hung too")
    assert lines["server API"] == "reproduced (bug: a; control: b)"
