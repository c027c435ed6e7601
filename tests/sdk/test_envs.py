"""SDK requests and environments: spec checks, creation, verified reuse, reinstall on change, cleanup on failure.

Environments here hold a tiny stand-in "mcp" wheel (no dependencies), in a
temporary cache, so each creation costs a venv and nothing from an index.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import importlib.util
import json
import os
import select
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from stdio_probe.core.spawn import child_env
from stdio_probe.sdk import envs
from stdio_probe.sdk.facts import SdkError, read_facts
from stdio_probe.sdk.sdk import Request, requests, resolve
from tests.paths import ROOT


def make_wheel(folder: Path, body: str, version: str = "0.0.1") -> Path:
    """A minimal valid mcp wheel whose mcp/__init__.py is body (and empty stdio modules, for the import check)."""
    wheel = folder / f"mcp-{version}-py3-none-any.whl"
    info = f"mcp-{version}.dist-info"
    files = {
        "mcp/__init__.py": body,
        **{f"mcp/{side}/{module}.py": "" for side in ("client", "server") for module in ("__init__", "stdio")},
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: mcp\nVersion: {version}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return wheel


def installed_body(python: str) -> str:
    return (Path(python).parent.parent / "lib").glob("python*/site-packages/mcp/__init__.py").__next__().read_text()


def test_requests_sort_specs_into_sources(tmp_path):
    wheel = make_wheel(tmp_path, "")
    found = requests(f"2.3.0, {wheel}", None)
    assert [(r.source, r.target) for r in found] == [("pypi", "2.3.0"), ("path", str(wheel))]
    assert requests(None, None)[0].spec == "pinned"


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda tmp: "not-a-version", "neither an mcp version, an existing path, nor PATH@REF"),
        (lambda tmp: str(tmp), "not an SDK source tree"),
        (lambda tmp: _write(tmp / "pyproject.toml", '[project]\nname = "other"\n').parent, "its project is 'other'"),
        (lambda tmp: _write(tmp / "x.whl", ""), "not an mcp wheel"),
    ],
)
def test_bad_sdk_specs_are_one_line_errors(tmp_path, make, message):
    with pytest.raises(SdkError, match=message):
        requests(str(make(tmp_path)), None)


def test_python_must_be_an_executable(tmp_path):
    with pytest.raises(SdkError, match="not an executable file"):
        requests(None, str(tmp_path / "python"))


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_tree_hash_follows_content_not_vcs_or_bytecode(tmp_path):
    _write(tmp_path / "pyproject.toml", '[project]\nname = "mcp"\n')
    (tmp_path / ".git").mkdir()
    (tmp_path / "src").mkdir()
    _write(tmp_path / "src" / "a.py", "x = 1\n")
    first = envs.content_hash(tmp_path)
    _write(tmp_path / ".git" / "HEAD", "ref\n")
    (tmp_path / "src" / "__pycache__").mkdir()
    _write(tmp_path / "src" / "__pycache__" / "a.pyc", "bytes")
    assert envs.content_hash(tmp_path) == first
    _write(tmp_path / "src" / "a.py", "x = 2\n")
    assert envs.content_hash(tmp_path) != first


@pytest.mark.parametrize("tool", ["uv", "pip"])
def test_environment_is_made_once_reused_and_rebuilt_when_its_source_changes(tmp_path, monkeypatch, tool):
    if tool == "pip":
        monkeypatch.setenv("STDIO_PROBE_ENV_TOOL", "pip")
    cache = tmp_path / "cache"
    wheel = make_wheel(tmp_path, "BODY = 1\n")
    request = Request(str(wheel), "path", str(wheel))

    made = resolve(request, cache)
    assert made.facts["source"] == "path" and made.facts["version"] == "0.0.1"
    assert made.facts["env_tool"] == tool and made.facts["installed"] == [str(wheel)]
    assert (cache / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    folder = Path(made.python).parent.parent
    sentinel = folder / "sentinel"
    sentinel.write_text("kept while the environment is reused")

    again = resolve(request, cache)
    assert again.python == made.python and sentinel.exists()

    make_wheel(tmp_path, "BODY = 2\n")  # same file name, new content: a bisection step
    changed = resolve(request, cache)
    assert changed.python == made.python
    assert not sentinel.exists(), "a changed local SDK gets a fresh environment: nothing of the last step stays"
    assert installed_body(changed.python) == "BODY = 2\n"
    assert changed.facts["content_hash"] != made.facts["content_hash"]

    sentinel.write_text("again")
    os.unlink(made.python)  # a broken interpreter
    rebuilt = resolve(request, cache)
    assert not sentinel.exists() and installed_body(rebuilt.python) == "BODY = 2\n"


def test_an_sdk_that_cannot_import_is_found_when_its_environment_is_made(tmp_path):
    wheel = make_wheel(tmp_path, "import no_such_module_anywhere\n")
    with pytest.raises(SdkError) as caught:
        resolve(Request(str(wheel), "path", str(wheel)), tmp_path / "cache")
    message = str(caught.value)
    assert "cannot be imported" in message and "No module named 'no_such_module_anywhere'" in message
    assert "\n" not in message


def test_failed_creation_leaves_no_folder(tmp_path):
    cache = tmp_path / "cache"
    wheel = tmp_path / "mcp-0.0.1-py3-none-any.whl"
    wheel.write_text("not a zip")
    with pytest.raises(SdkError, match="cannot install"):
        resolve(Request(str(wheel), "path", str(wheel)), cache)
    assert [p.name for p in cache.iterdir() if not p.name.endswith(".lock")] == ["CACHEDIR.TAG"]


def test_sdk_facts_read_the_versions_importlib_metadata_reads():
    """sdk_facts.py reads dist-info itself (to stay fast); it must agree with importlib.metadata."""
    names = ["mcp", "mcp-types", "pydantic", "pydantic-core", "anyio"]
    script = f"import importlib.metadata as m, json; print(json.dumps({{n: m.version(n) for n in {names!r}}}))"
    expected = json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, check=True).stdout)
    assert read_facts(sys.executable, {})["packages"] == expected


def test_the_pinned_sdks_fixtures_see_mcp_without_the_probes_rich():
    """The probe's interpreter has rich; the pinned SDK's fixtures, as a release's, do not (method.md, "SDK
    environments"): MCPServer's logging then takes the standard library's handler, as `pip install mcp` gives."""
    assert importlib.util.find_spec("rich") is not None, "the probe's own interpreter has rich"
    [request] = requests(None, None)
    sdk = resolve(request, Path("unused: the pinned SDK has no environment of its own"))
    script = (
        "import logging, mcp.server.mcpserver.utilities.logging as log; log.configure_logging(); "
        "print(type(logging.getLogger().handlers[0]).__name__)"
    )
    env = child_env(sdk.env)
    done = subprocess.run([sdk.python, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "StreamHandler", done.stderr


# An in-tree PEP 517 backend: the stand-in tree builds its wheel with nothing from an index.
BACKEND = """
import base64, hashlib, pathlib, zipfile

def get_requires_for_build_wheel(config_settings=None):
    return []

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    root = pathlib.Path(__file__).parent
    info, name = "mcp-0.0.1.dist-info", "mcp-0.0.1-py3-none-any.whl"
    files = {str(p.relative_to(root)): p.read_text() for p in sorted((root / "mcp").rglob("*.py"))}
    files[info + "/METADATA"] = "Metadata-Version: 2.1\\nName: mcp\\nVersion: 0.0.1\\n"
    files[info + "/WHEEL"] = "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(info + "/RECORD,,")
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / name, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
        archive.writestr(info + "/RECORD", "\\n".join(record) + "\\n")
    return name
"""


def _git(tree: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_path_at_ref_installs_that_commit_from_a_worktree_cached_by_commit_and_removed_with_its_environment(
    tmp_path,
):
    tree = tmp_path / "python-sdk"
    for module in ("mcp/client/__init__.py", "mcp/client/stdio.py", "mcp/server/__init__.py", "mcp/server/stdio.py"):
        (tree / module).parent.mkdir(parents=True, exist_ok=True)
        _write(tree / module, "")
    _write(tree / "backend.py", BACKEND)
    pyproject = '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
    _write(tree / "pyproject.toml", pyproject + '[project]\nname = "mcp"\nversion = "0.0.1"\n')
    _write(tree / "mcp" / "__init__.py", "BODY = 1\n")
    _git(tree, "init", "-q")
    _git(tree, "add", ".")
    _git(tree, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    _git(tree, "tag", "v1")
    _write(tree / "mcp" / "__init__.py", "BODY = 2\n")  # the checkout's own tree moves on, uncommitted

    (request,) = requests(f"{tree}@v1", None)
    assert (request.source, request.target, request.commit) == ("path", str(tree), _git(tree, "rev-parse", "v1"))
    cache = tmp_path / "cache"
    made = resolve(request, cache)
    assert installed_body(made.python) == "BODY = 1\n", "the commit, not the checkout's work tree"
    assert made.facts["commit"] == request.commit and made.facts["env_reused"] is False
    folder = Path(made.python).parent.parent
    worktree = envs.worktree_folder(folder)
    assert (worktree / "mcp" / "__init__.py").read_text() == "BODY = 1\n"
    assert (tree / "mcp" / "__init__.py").read_text() == "BODY = 2\n"

    again = resolve(request, cache)
    assert again.python == made.python and again.facts["env_reused"] is True
    assert again.facts["env_created_at"] == made.facts["env_created_at"] is not None
    assert again.facts["env_created_s"] == made.facts["env_created_s"]

    envs.remove(folder, envs.Source("path", str(tree), commit=request.commit))
    assert not folder.exists() and not worktree.exists()
    assert str(worktree) not in _git(tree, "worktree", "list")

    with pytest.raises(SdkError, match="names no commit"):
        requests(f"{tree}@no-such-ref", None)


def test_a_version_may_carry_a_tags_v_prefix():
    (request,) = requests("v2.0.0", None)
    assert (request.spec, request.source, request.target) == ("v2.0.0", "pypi", "2.0.0")


# A build that never ends, and an SDK whose import never ends: each notes its pid in STARTED, then sleeps (an install
# or an import check that takes minutes). The pid is written aside and renamed into place: the test, polling for
# STARTED, never reads it created and still empty.
ENDLESS_BACKEND = """
import os, pathlib, time

def get_requires_for_build_wheel(config_settings=None):
    return []

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    aside = pathlib.Path(os.environ["STARTED"] + ".aside")
    aside.write_text(str(os.getpid()))
    aside.replace(os.environ["STARTED"])
    time.sleep(600)
"""
ENDLESS_IMPORT = """
import os, pathlib, time
aside = pathlib.Path({started!r} + ".aside")
aside.write_text(str(os.getpid()))
aside.replace({started!r})
time.sleep(600)
"""


@pytest.mark.parametrize("stage", ["build", "import check"])
@pytest.mark.parametrize(
    ("sig", "code", "word"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
)
def test_a_signal_while_an_environment_is_made_ends_the_probe_at_once_leaving_nothing(sig, code, word, stage, tmp_path):
    """Each environment command runs in a session of its own (a terminal's Ctrl-C does not reach it): the probe
    kills it and starts nothing after, rather than waiting out its bound (600 s), and the half-made environment
    goes: a killed import check is no import error to remember."""
    tree, started = tmp_path / "tree", tmp_path / "started"
    (tree / "mcp").mkdir(parents=True)
    _write(tree / "mcp" / "__init__.py", ENDLESS_IMPORT.format(started=str(started)) if stage == "import check" else "")
    _write(tree / "backend.py", ENDLESS_BACKEND if stage == "build" else BACKEND)
    pyproject = '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
    _write(tree / "pyproject.toml", pyproject + '[project]\nname = "mcp"\nversion = "0.0.1"\n')
    cache = tmp_path / "envs"
    command = [sys.executable, str(ROOT / "probe_stdio_lifecycle.py"), "--sdk", str(tree), "--env-dir", str(cache)]
    env = {**os.environ, "STARTED": str(started)}
    process = subprocess.Popen(
        [*command, "--only", "L1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    build = None
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), f"the {stage} never started: exit {process.poll()}"
        build = os.pidfd_open(int(started.read_text()))  # the sleeping build or import, alive: it wrote it
        process.send_signal(sig)
        _, err = process.communicate(timeout=30)  # the bound of a wait that fails: the install's own is 600 s
        assert process.returncode == code and err.endswith(f"{word}: every process reaped, no results written\n")
        assert select.select([build], [], [], 5.0)[0], f"the {stage} outlived the probe"  # a pidfd reads once it ended
    finally:
        process.kill()
        if build is not None:  # a failed test's build or import must not sleep on: the probe's kill never reached it
            with contextlib.suppress(ProcessLookupError):  # ended and reaped: the test passed, or it died anyway
                signal.pidfd_send_signal(build, signal.SIGKILL)
            os.close(build)
    assert [path.name for path in cache.iterdir() if path.is_dir()] == [], "a half-made environment is left"
