"""The SDK's history: release ranges from the index, era-true cut-offs, trees with workspace packages,
--bisect's last line and its results file when a step cannot install, and the release table."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from pathlib import Path

import jsonschema
import pytest
from packaging.version import Version

from stdio_probe.cli import main as cli
from stdio_probe.report import release_table
from stdio_probe.report.record import SCHEMA_PATH
from stdio_probe.report.release_table import changes, markdown, ranges, verdicts_by_release
from stdio_probe.sdk import envs, index
from stdio_probe.sdk.cases import CASES
from stdio_probe.sdk.facts import SdkError
from stdio_probe.sdk.sdk import Request, requests, resolve
from tests.paths import ROOT

REPO = ROOT
PROBE = REPO / "probe_stdio_lifecycle.py"
SCHEMA = json.loads(SCHEMA_PATH.read_text())

# A stored PEP 691 page: 1.0.0, a yanked 1.1.0, 1.2.0, a pre-release 2.0.0a1 (two files, the later one decides).
INDEX_PAGE = {
    "versions": ["1.0.0", "1.1.0", "1.2.0", "2.0.0a1"],
    "files": [
        {"filename": "mcp-1.0.0-py3-none-any.whl", "upload-time": "2024-11-25T10:00:00.500000Z"},
        {"filename": "mcp-1.0.0.tar.gz", "upload-time": "2024-11-25T09:59:00Z"},
        {"filename": "mcp-1.1.0-py3-none-any.whl", "upload-time": "2024-12-01T00:00:00Z", "yanked": "bad"},
        {"filename": "mcp-1.2.0-py3-none-any.whl", "upload-time": "2025-01-01T00:00:00Z"},
        {"filename": "mcp-2.0.0a1-py3-none-any.whl", "upload-time": "2025-06-01T00:00:00Z"},
    ],
}


@pytest.fixture
def stored_index(monkeypatch):
    """The release list read from INDEX_PAGE instead of the index (restored after the test)."""
    monkeypatch.setitem(index._cache, index.PROJECT, index.parse(INDEX_PAGE))


def _versions(spec: str) -> list[str]:
    return [r.target for r in requests(spec, None, Path("/nonexistent"))]


def test_index_page_gives_each_release_its_last_upload_rounded_up():
    found = {r.version: r for r in index.parse(INDEX_PAGE)}
    assert found["1.0.0"].cutoff == "2024-11-25T10:00:01Z"
    assert found["1.1.0"].yanked and not found["1.2.0"].yanked


def test_specifiers_and_all_resolve_from_the_release_list_pre_releases_only_when_asked(stored_index):
    assert _versions("all") == ["1.0.0", "1.2.0"]  # no yanked release, no pre-release
    assert _versions(">=1.0,<2") == ["1.0.0", "1.2.0"]
    assert _versions(">=1.2") == ["1.2.0"]
    assert _versions(">=2.0.0a1") == ["2.0.0a1"]  # a specifier naming a pre-release asks for them
    assert _versions("!=1.0.0") == ["1.2.0"]
    assert _versions("<1.2") == ["1.0.0"]  # the yanked 1.1.0 is left out


def test_the_index_page_read_over_http_lists_mcp_releases_oldest_first_with_cut_offs(tmp_path, monkeypatch):
    """The stored page (tests/stored_index.py) as the probe reads it: over HTTP, then kept for offline runs."""
    monkeypatch.setattr(index, "_cache", {})  # read it afresh, not as an earlier test of this process did
    found = index.releases(tmp_path)
    assert json.loads((tmp_path / "index-mcp.json").read_text())["name"] == "mcp"
    versions = [r.version for r in found]
    assert versions.index("1.0.0") < versions.index("1.24.0") < versions.index("2.3.0")
    first = index.release("1.0.0", tmp_path)
    assert first is not None and first.cutoff.startswith("2024-11-") and first.cutoff.endswith("Z"), first
    assert [r.target for r in requests(">=1.24,<1.25", None, tmp_path)][0] == "1.24.0"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (">=99", "--sdk >=99: no release of mcp on the index matches"),
        (">=1.x", "--sdk >=1.x: not a PEP 440 version specifier"),
    ],
)
def test_range_matching_nothing_or_bad_is_one_line_and_exit_2(tmp_path, spec, message):
    out = tmp_path / "results.json"
    done = subprocess.run(
        [sys.executable, str(PROBE), "--sdk", spec, "--only", "L3", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()


def _upload_times(project: str, version: str) -> list[str]:
    """The upload times of a project's files of one version, from the index's stored page."""
    request = urllib.request.Request(f"{index.INDEX_URL}{project}/", headers={"Accept": index._ACCEPT})
    with urllib.request.urlopen(request, timeout=30) as response:
        page = json.loads(response.read())
    marker = f"{project.replace('-', '_')}-{version}-"
    return [f["upload-time"] for f in page["files"] if f["filename"].startswith(marker) and f.get("upload-time")]


@pytest.mark.network
def test_an_old_release_gets_the_dependencies_of_its_day_and_results_record_the_cut_off(tmp_path):
    if envs.find_uv() is None:
        pytest.skip("the cut-off needs uv")
    out = tmp_path / "results.json"
    code = cli.main(["--sdk", "1.3.0", "--only", "L3", "--out", str(out)])
    assert code in (cli.EXIT_OK, 1), code
    document = json.loads(out.read_text())
    jsonschema.validate(document, SCHEMA)
    facts = document["runs"][0]["sdk"]
    release = index.release("1.3.0", envs.default_cache())
    assert release is not None
    assert facts["exclude_newer"] == release.cutoff and facts["exclude_newer_basis"] == "release_upload", facts
    assert facts["env_tool"] == "uv" and facts.get("installed", ["mcp==1.3.0"]) == ["mcp==1.3.0"], facts
    assert document["runs"][0]["verdict"] != "error", document["runs"][0]["reason"]
    pydantic = facts["packages"]["pydantic"]
    uploads = _upload_times("pydantic", pydantic)
    assert uploads and min(uploads) <= release.cutoff, (pydantic, uploads, release.cutoff)
    assert release.cutoff < "2025-03-01", release  # mcp 1.3.0 came out in February 2025
    assert pydantic != "2.14.4"  # today's pydantic, which 1.3.0 cannot import


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _tree(root: Path, version: str, extra_module: str) -> Path:
    """A tiny mcp tree whose mcp depends on its workspace member mcp-types, pinned to an unpublished version
    (so it installs only from the tree), as the SDK's tree is after the types split."""
    backend = '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
    _write(
        root / "pyproject.toml",
        f'[project]\nname = "mcp"\nversion = "{version}"\ndependencies = ["mcp-types=={version}"]\n'
        '[tool.uv.workspace]\nmembers = ["src/*"]\n[tool.uv.sources]\nmcp-types = { workspace = true }\n'
        f'[tool.hatch.build.targets.wheel]\npackages = ["mcp"]\n{backend}',
    )
    for module in ("mcp/__init__.py", "mcp/client/__init__.py", "mcp/client/stdio.py", "mcp/server/__init__.py"):
        _write(root / module, "")
    _write(root / "mcp/server/stdio.py", "")
    _write(
        root / "src/mcp-types/pyproject.toml",
        f'[project]\nname = "mcp-types"\nversion = "{version}"\n'
        f'[tool.hatch.build.targets.wheel]\npackages = ["mcp_types"]\n{backend}',
    )
    _write(root / "src/mcp-types/mcp_types/__init__.py", "")
    _write(root / "src/mcp-types/mcp_types" / f"{extra_module}.py", "")
    return root


def _site_packages(python: str) -> Path:
    return next((Path(python).parent.parent / "lib").glob("python*/site-packages"))


def _imports(python: str, module: str) -> bool:
    return subprocess.run([python, "-c", f"import {module}"], capture_output=True, timeout=60).returncode == 0


def _distributions(python: str) -> list[str]:
    return sorted(p.name for p in _site_packages(python).glob("*.dist-info"))


@pytest.mark.network  # builds its environments afresh: uv resolves their dependencies on the index
def test_a_tree_is_installed_with_its_workspace_package_and_each_step_holds_only_its_own(tmp_path):
    tree = _tree(tmp_path / "sdk", "9.9.9.dev1", "first_step")
    cache = tmp_path / "envs"
    assert envs.workspace_members(tree) == [tree / "src" / "mcp-types"]
    first = resolve(Request(str(tree), "path", str(tree)), cache)
    assert first.facts["installed"] == [str(tree), str(tree / "src" / "mcp-types")]
    assert first.facts["packages"]["mcp"] == "9.9.9.dev1" and first.facts["packages"]["mcp-types"] == "9.9.9.dev1"
    assert _distributions(first.python) == ["mcp-9.9.9.dev1.dist-info", "mcp_types-9.9.9.dev1.dist-info"]
    assert _imports(first.python, "mcp_types.first_step")
    # the next bisection step: the same folder, other content and another version of both packages
    (tree / "src/mcp-types/mcp_types/first_step.py").unlink()
    _tree(tree, "9.9.9.dev2", "second_step")
    second = resolve(Request(str(tree), "path", str(tree)), cache)
    assert second.python == first.python  # one environment folder serves the whole bisection
    assert second.facts["packages"]["mcp"] == "9.9.9.dev2" and second.facts["packages"]["mcp-types"] == "9.9.9.dev2"
    assert _distributions(second.python) == ["mcp-9.9.9.dev2.dist-info", "mcp_types-9.9.9.dev2.dist-info"]
    assert _imports(second.python, "mcp_types.second_step") and not _imports(second.python, "mcp_types.first_step")


MIRROR = Path("/work/.mirror/modelcontextprotocol+python-sdk/repo")
AFTER_SPLIT = "78e6fbb7e46d43069f88935e80cbea206d807e18"  # v2.0.0rc1-13: mcp-types in src/mcp-types


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], capture_output=True, text=True, check=True, timeout=60).stdout.strip()


@pytest.mark.skipif(not MIRROR.is_dir(), reason="needs a clone of the python-sdk repository")
@pytest.mark.network  # builds its environments afresh: uv resolves their dependencies on the index
@pytest.mark.slow(40)
def test_a_real_sdk_commit_after_the_split_installs_with_its_mcp_types_and_each_step_holds_its_own(tmp_path):
    tree, cache = tmp_path / "python-sdk", tmp_path / "envs"
    _git("clone", "-q", "--shared", "--no-checkout", str(MIRROR), str(tree))
    steps = {}
    for commit in (AFTER_SPLIT, f"{AFTER_SPLIT}~3"):
        _git("-C", str(tree), "checkout", "-q", commit)
        assert (tree / "src" / "mcp-types" / "pyproject.toml").exists()
        found = resolve(Request(str(tree), "path", str(tree)), cache)
        facts = found.facts
        assert facts["installed"] == [str(tree), str(tree / "src" / "mcp-types")], facts
        assert facts["commit"] == _git("-C", str(tree), "rev-parse", "HEAD")
        assert facts["exclude_newer_basis"] == "commit_date" and facts["exclude_newer"], facts
        packages = facts["packages"]
        assert packages["mcp"] == packages["mcp-types"] and facts["commit"][:9] in packages["mcp"], packages
        mcp_dists = [d for d in _distributions(found.python) if d.startswith(("mcp-", "mcp_types-"))]
        assert mcp_dists == [f"mcp-{packages['mcp']}.dist-info", f"mcp_types-{packages['mcp']}.dist-info"]
        steps[commit] = (found.python, packages["mcp"])
    (first_python, first), (second_python, second) = steps.values()
    assert first_python == second_python and first != second, steps


def test_the_workspace_pin_is_unpublished_so_only_the_tree_can_satisfy_it():
    """The control of the test above: the index has no mcp-types 9.9.9.dev1."""
    source = envs.Source("pypi", "9.9.9.dev1")
    uv = envs.find_uv() or "uv"
    with pytest.raises(SdkError, match="cannot install"):
        envs._run([uv, "pip", "install", "--dry-run", "--python", sys.executable, "mcp-types==9.9.9.dev1"], source)


def test_bisect_ends_with_one_line_naming_case_sdk_verdict_and_code(tmp_path, capsys):
    code = cli.main(["--bisect", "--only", "L3", "--out", str(tmp_path / "results.json")])
    assert code == cli.BISECT_BAD
    last = capsys.readouterr().err.strip().splitlines()[-1]
    document = json.loads((tmp_path / "results.json").read_text())
    version = document["runs"][0]["sdk"]["version"]
    assert last == f"bisect: L3 on mcp {version}: reproduced, exit 1", last


def test_a_bisect_step_that_cannot_install_writes_results_saying_why_and_skips(tmp_path, capsys):
    tree = tmp_path / "sdk"
    _write(tree / "pyproject.toml", '[project]\nname = "mcp"\nversion = "9.9.9"\ndependencies = ["mcp-types==9.9.9"]\n')
    subprocess.run(["git", "init", "-q", str(tree)], check=True, timeout=30)
    subprocess.run(
        ["git", "-C", str(tree), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x", "--allow-empty"],
        check=True,
        timeout=30,
    )
    commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    out = tmp_path / "results.json"
    out.write_text('{"an": "earlier step"}')
    args = ["--bisect", "--only", "L3", "--sdk", str(tree), "--out", str(out), "--env-dir", str(tmp_path / "envs")]
    assert cli.main(args) == cli.BISECT_SKIP == 125
    last = capsys.readouterr().err.strip().splitlines()[-1]
    document = json.loads(out.read_text())
    jsonschema.validate(document, SCHEMA)
    [run] = document["runs"]
    assert run["case"] == "L3" and run["verdict"] == "error" and "cannot install" in run["reason"], run
    assert run["sdk"]["commit"] == commit.strip()
    assert last.startswith(f"bisect: L3 on commit {commit[:12]}: error (") and last.endswith(", exit 125"), last


def _run(case: str, version: str, verdict: str, source: str = "pypi") -> dict:
    return {"case": case, "verdict": verdict, "sdk": {"source": source, "version": version}}


def test_release_table_groups_agreeing_releases_in_version_order_and_names_each_change():
    document = {
        "runs": [
            _run("L1", "1.10.0", "reproduced"),
            _run("L2", "1.10.0", "reproduced"),
            _run("L1", "1.9.0", "not_applicable"),
            _run("L2", "1.9.0", "reproduced"),
            _run("L1", "1.2.0", "not_applicable"),
            _run("L2", "1.2.0", "reproduced"),
            _run("L1", "2.0.0", "reproduced"),
            _run("L2", "2.0.0", "not_reproduced"),
            _run("L1", "9.9.9", "error", source="path"),  # a local tree is no release
        ]
    }
    cases, releases = verdicts_by_release(document)
    assert cases == ["L1", "L2"] and list(releases) == ["1.2.0", "1.9.0", "1.10.0", "2.0.0"]
    assert [(first, last, count) for first, last, count, _ in ranges(releases, cases)] == [
        ("1.2.0", "1.9.0", 2),
        ("1.10.0", "1.10.0", 1),
        ("2.0.0", "2.0.0", 1),
    ]
    assert changes(releases, cases) == {
        "L1": [("1.10.0", "not_applicable", "reproduced")],
        "L2": [("2.0.0", "reproduced", "not_reproduced")],
    }
    table = markdown(document)
    assert "| 1.2.0 – 1.9.0 (2) | n/a | R |" in table and "- L2: R → – at 2.0.0" in table


def test_the_release_sweep_gives_every_release_a_real_verdict_as_of_its_own_day(tmp_path):
    """results/releases.json: every case on every release from 1.0.0, no error or inconclusive, and each
    release's environment cut off at that release's upload time on the index (its stored page)."""
    document = json.loads((REPO / "results" / "releases.json").read_text())
    on_index = index.releases(tmp_path)
    cutoffs = {r.version: r.cutoff for r in on_index}
    cases, releases = verdicts_by_release(document)
    assert cases == list(CASES)
    wanted = {r.version for r in on_index if not r.yanked and not Version(r.version).is_prerelease}
    assert {v for v in wanted if Version(v) >= Version("1.0.0")} <= set(releases)
    for run in document["runs"]:
        assert run["verdict"] in ("reproduced", "not_reproduced", "not_applicable"), (run["sdk"]["version"], run)
        sdk = run["sdk"]
        assert sdk["exclude_newer"] == cutoffs[sdk["version"]] and sdk["exclude_newer_basis"] == "release_upload"


def test_release_table_reads_a_real_results_file(capsys):
    assert release_table.main([str(REPO / "results" / "client-cases-1.0.0-to-2.3.0.json")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("| releases | L7 | L8 | L10 |") and "First release at which" in out


def test_release_table_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    assert release_table.main([str(tmp_path / "missing.json")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
