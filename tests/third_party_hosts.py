"""Real MCP hosts nobody here wrote, for the host recipes' tests: installed once, pinned, cached, reused.

Each PyPI host gets a virtual environment of its own (made with the pinned uv, never the probe's
environment), each npm host an npm prefix of its own; both live under HOSTS_CACHE, named by a hash
of what defines them, built and reused as tests/third_party.py builds its servers (a lock per
folder, a marker written last, a failed build leaves nothing). HOSTS is the one list of pins;
examples/hosts/README.md shows the same table to readers (a test keeps the two equal).

hosts() is what a table of hosts x checks needs: per host its name, package, version and command
template, `{server}` standing for the argv words of the server it must start; probe_arguments()
turns them into the probe's `--host TEMPLATE --name NAME` arguments. Make the caches ahead of a
run and see the templates: python -m tests.third_party_hosts (with --args: the probe's arguments).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from stdio_probe.sdk.envs import base_python
from tests.third_party import COMPILE, Unavailable, _ensure, _folder, _run, _uv

HOSTS_CACHE = Path(os.environ.get("STDIO_PROBE_HOSTS", Path.home() / ".cache" / "stdio-probe" / "hosts"))
RECIPES = Path(__file__).resolve().parent.parent / "examples" / "hosts"


@dataclass(frozen=True)
class HostPin:
    """One real host: its registry, the package pinned, and the recipe that adapts it to the contract."""

    name: str  # the host, without its version
    registry: str  # "pypi" or "npm"
    package: str  # as the registry names it (a PyPI extra included)
    version: str
    recipe: str  # a file under examples/hosts/
    requires: tuple[str, ...] = ()  # pins of what the host runs on (its MCP client), so that a rebuild is the same

    @property
    def label(self) -> str:
        """The host and its version: unique among HOSTS."""
        return f"{self.name}-{self.version}"

    @property
    def requirements(self) -> list[str]:
        return [f"{self.package}{'@' if self.registry == 'npm' else '=='}{self.version}", *self.requires]


@dataclass(frozen=True)
class Host:
    """A host ready to run: command is a template whose `{server}` word the server's argv replaces."""

    name: str  # the pin's label: host and version
    package: str
    version: str
    requires: tuple[str, ...]
    recipe: str
    command: str

    def argv(self, server: list[str]) -> list[str]:
        """The host's argv with `{server}` replaced by the server's argv words."""
        words = shlex.split(self.command)
        at = words.index("{server}")
        return [*words[:at], *server, *words[at + 1 :]]


HOSTS = [
    HostPin("python-sdk", "pypi", "mcp", "2.2.0", "python_sdk_client.py"),
    HostPin("python-sdk", "pypi", "mcp", "2.3.0", "python_sdk_client.py"),
    HostPin("typescript-sdk", "npm", "@modelcontextprotocol/sdk", "1.32.2", "typescript_sdk_client.cjs"),
    HostPin(
        "inspector-cli",
        "npm",
        "@modelcontextprotocol/inspector",
        "0.15.0",
        "inspector_cli.sh",
        ("@modelcontextprotocol/sdk@1.32.2",),  # its own range (^1.13.1) would float
    ),
    HostPin("openai-agents", "pypi", "openai-agents", "0.24.0", "openai_agents_client.py", ("mcp==2.3.0",)),
    HostPin(
        "pydantic-ai",
        "pypi",
        "pydantic-ai-slim[mcp]",
        "2.68.0",
        "pydantic_ai_client.py",
        ("fastmcp-slim==4.2.3", "mcp==2.3.0"),
    ),
    HostPin(
        "langchain-mcp-adapters",
        "pypi",
        "langchain-mcp-adapters",
        "0.3.2",
        "langchain_mcp_client.py",
        ("langchain-core==1.8.3", "mcp==1.30.0"),
    ),
]


def hosts(labels: list[str] | None = None) -> list[Host]:
    """The hosts labelled (all of HOSTS by default), each installed on first use (Unavailable: one cannot be)."""
    return [host(pin) for pin in HOSTS if labels is None or pin.label in labels]


def host(pin: HostPin) -> Host:
    """pin installed (on first use) and its command template."""
    recipe = RECIPES / pin.recipe
    if pin.registry == "pypi":
        command = f"{shlex.quote(str(_python_env(pin) / 'bin' / 'python'))} {shlex.quote(str(recipe))} {{server}}"
    elif pin.recipe.endswith(".sh"):  # a CLI host: the recipe runs the package's own program
        program = _npm_prefix(pin) / "node_modules" / ".bin" / _npm_program(pin)
        command = f"env MCP_HOST_PROGRAM={shlex.quote(str(program))} sh {shlex.quote(str(recipe))} {{server}}"
    else:  # a library host: node resolves the package from NODE_PATH
        modules = _npm_prefix(pin) / "node_modules"
        node = shutil.which("node")
        command = f"env NODE_PATH={shlex.quote(str(modules))} {node} {shlex.quote(str(recipe))} {{server}}"
    return Host(pin.label, pin.package, pin.version, pin.requires, pin.recipe, command)


def _python_env(pin: HostPin) -> Path:
    base = os.path.realpath(base_python())
    folder = _folder_in("python", [*pin.requirements, base])

    def build() -> None:
        uv = _uv()
        _run([uv, "venv", "--quiet", "--python", base, str(folder)])
        _run([uv, "pip", "install", "--quiet", COMPILE, "--python", str(folder / "bin" / "python"), *pin.requirements])

    _ensure(folder, pin.requirements, build, lambda: (folder / "bin" / "python").exists())
    return folder


def _npm_prefix(pin: HostPin) -> Path:
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        raise Unavailable(f"node and npm are needed for {pin.package}")
    folder = _folder_in("npm", pin.requirements)

    def build() -> None:
        folder.mkdir(parents=True)
        _run([npm, "install", "--silent", "--no-audit", "--no-fund", "--prefix", str(folder), *pin.requirements])

    _ensure(folder, pin.requirements, build, lambda: (folder / "node_modules" / pin.package).is_dir())
    return folder


def _npm_program(pin: HostPin) -> str:
    """The package's one program (its package.json bin)."""
    manifest = json.loads((_npm_prefix(pin) / "node_modules" / pin.package / "package.json").read_text())
    bin_ = manifest["bin"]
    return next(iter(bin_)) if isinstance(bin_, dict) else pin.package.rsplit("/", 1)[-1]


def _folder_in(kind: str, identity: list[str]) -> Path:
    return HOSTS_CACHE / _folder(kind, identity).name


def probe_arguments(chosen: list[Host]) -> list[str]:
    """The probe's arguments that run the host checks on each of chosen: --host TEMPLATE --name NAME, repeated."""
    return [word for h in chosen for word in ("--host", h.command, "--name", h.name)]


if __name__ == "__main__":  # make the caches ahead of a test session; print each host as JSON (--args: probe args)
    ready = []
    for pin in HOSTS:
        try:
            ready.append(host(pin))
        except Unavailable as exc:
            print(f"{pin.label}: unavailable: {exc}", file=sys.stderr)
    if sys.argv[1:] == ["--args"]:
        print(shlex.join(probe_arguments(ready)))
    else:
        for ready_host in ready:
            print(json.dumps(asdict(ready_host)))
