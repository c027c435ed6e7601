"""A results document as written names no folder of this machine: record.portable writes each path under the
checkout, the probe's cache, the home folder or the temporary folder from that place (<repo>, <cache>, ~,
<tmp>), in every string, and leaves any other text as it is. Pure: nothing is spawned."""

from __future__ import annotations

import json

from stdio_probe.report import record
from tests.paths import ROOT

HOME = "/home/ana"
CACHE = f"{HOME}/.cache/stdio-probe"
REPO = f"{HOME}/src/stdio-probe"
TMP = "/tmp"
WHERE = {REPO: "<repo>", CACHE: "<cache>", HOME: "~", TMP: "<tmp>"}
ENV = f"{CACHE}/envs/mcp-2.3.0-84d5089e9339"
RUN = f"{TMP}/probe-run-0it4xvuz"


def _arm() -> dict:
    """An arm's record holding each kind of path, in the shapes the probe records them."""
    return {
        "command": f"{ENV}/bin/python {REPO}/stdio_probe/fixtures/fixture_server.py --events {RUN}/a.events",
        "sdk_config": {"args": {"value": f"['{REPO}/stdio_probe/fixtures/fixture_server.py', '--x']"}},
        "env": {"PYTHONPATH": f"{REPO}:{HOME}/lib:/usr/lib/python3", "PROBE_FORK_SOCKET": f"{RUN}/fork.sock"},
        "children": [{"cmdline": f"{ENV}/bin/python -c import signal; signal.pause()"}],
        "stderr": f'Traceback:\n  File "{REPO}/stdio_probe/fixtures/fork_server.py", line 323, in run\n',
        "interpreter": f"{HOME}/.pyenv/versions/3.11.7/bin/python",
        "cut": f"/usr/bin/node {CACHE}/servers/npm-2c8867e30df6/node_mo… (136 characters)",
        "home_cut": f"{HOME[:-1]}… (90 characters)",
        "checkout_cut": f"{HOME}/s…",
        f"{RUN}/server.events": 3,
    }


def test_every_kind_of_path_is_written_from_its_place():
    document = {"metadata": {"argv": ["probe_stdio_lifecycle.py", "--out", f"{REPO}/results/r.json"]}}
    document["runs"] = [{"sdk": {"executable": f"{ENV}/bin/python"}, "arms": {"bug": _arm()}}]
    written = record.portable(document, WHERE)
    assert written["metadata"]["argv"][-1] == "<repo>/results/r.json"
    assert written["runs"][0]["sdk"]["executable"] == "<cache>/envs/mcp-2.3.0-84d5089e9339/bin/python"
    arm = written["runs"][0]["arms"]["bug"]
    env = "<cache>/envs/mcp-2.3.0-84d5089e9339"
    assert arm["command"] == (
        f"{env}/bin/python <repo>/stdio_probe/fixtures/fixture_server.py --events <tmp>/probe-run-0it4xvuz/a.events"
    )
    assert arm["sdk_config"]["args"]["value"] == "['<repo>/stdio_probe/fixtures/fixture_server.py', '--x']"
    assert arm["env"] == {
        "PYTHONPATH": "<repo>:~/lib:/usr/lib/python3",
        "PROBE_FORK_SOCKET": "<tmp>/probe-run-0it4xvuz/fork.sock",
    }
    assert arm["children"] == [{"cmdline": f"{env}/bin/python -c import signal; signal.pause()"}]
    assert arm["stderr"] == 'Traceback:\n  File "<repo>/stdio_probe/fixtures/fork_server.py", line 323, in run\n'
    assert arm["interpreter"] == "~/.pyenv/versions/3.11.7/bin/python"
    assert arm["cut"] == "/usr/bin/node <cache>/servers/npm-2c8867e30df6/node_mo… (136 characters)"
    assert arm["home_cut"] == "~… (90 characters)"  # cut inside a place's own path: its name and the cut
    assert arm["checkout_cut"] == "~/s…"  # cut inside the checkout's path, past the home folder's
    assert arm["<tmp>/probe-run-0it4xvuz/server.events"] == 3
    assert not any(place in json.dumps(written) for place in WHERE)
    assert record.portable(written, WHERE) == written  # a file written so is written again unchanged


def test_text_that_is_no_path_of_this_machine_is_left_as_it_is():
    kept = [
        "/usr/bin/python3 -c 'print(1/2)'",
        f"/usr{HOME}/x",  # the home folder's path inside another
        f"{HOME}2/x and {TMP}x",  # a longer name than the place's
        f"https://example.com{HOME}",
        "a/b, ../tmp/c, tmp/x",
        "/home/…",  # a cut that names no folder of this machine
        "/usr/lib/python3.11/site-packages/mc… (90 characters)",
        "\t/home/runner/work/mcp-cron/mcp-cron/internal/server/server.go:197",  # another machine's, in a binary
        "",
    ]
    document = {"runs": [{"reason": text} for text in kept]}
    assert record.portable(document, WHERE) == document


def test_a_path_ends_where_a_command_line_a_repr_or_a_sentence_ends_it():
    texts = {
        f"held by ({CACHE}/envs/e/bin/python)": "held by (<cache>/envs/e/bin/python)",
        f"cwd={REPO}; then {HOME}.": "cwd=<repo>; then ~.",
        f"'{TMP}'": "'<tmp>'",
        f"{HOME}": "~",
    }
    assert record.portable({"notes": list(texts)}, WHERE) == {"notes": list(texts.values())}


def test_an_sdk_spec_is_kept_as_given_the_name_runs_are_keyed_on():
    """--python PATH or --sdk PATH names the subject by that path: --expect, compare and merge key runs on it."""
    run = {"case": "L1", "sdk": {"spec": f"{REPO}/.venv/bin/python", "executable": f"{REPO}/.venv/bin/python"}}
    (written,) = record.portable({"runs": [run]}, WHERE)["runs"]
    assert written["sdk"] == {"spec": f"{REPO}/.venv/bin/python", "executable": "<repo>/.venv/bin/python"}


def test_the_places_of_this_machine(monkeypatch, tmp_path):
    """The checkout the tests run from is <repo>; the cache follows XDG_CACHE_HOME; / is never a place."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", "/")
    places = record.places()
    assert places[str(ROOT)] == "<repo>" and places[str(tmp_path / "xdg" / "stdio-probe")] == "<cache>"
    assert "/" not in places and "<tmp>" in places.values()


def test_a_results_file_is_written_with_portable_paths(tmp_path):
    """write_atomic (--out, merge, the tables) writes through portable: pytest's tmp_path is in <tmp>."""
    out = tmp_path / "results.json"
    record.write_atomic(out, {"metadata": {"argv": ["--out", str(out)]}, "runs": []})
    argv = json.loads(out.read_text())["metadata"]["argv"]
    assert argv[1].startswith("<tmp>/") and argv[1].endswith("/results.json") and str(tmp_path) not in argv[1]
