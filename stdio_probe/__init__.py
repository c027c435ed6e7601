"""Probe the stdio lifecycle of MCP: the Python SDK (sdk/), any stdio server (server/), any stdio host (host/),
over one core (core/)."""

from pathlib import Path

__version__ = "0.3.0"


def package_file(name: str) -> Path:
    """A file shipped inside the package (the fixtures, the schema), found through importlib.resources.

    The fixtures are run as scripts by other interpreters, so they must be real files: an installed
    wheel and a checkout both have them on disk.
    """
    from importlib.resources import files  # here, not above: the entry points' signal handlers come first (start.py)

    path = files(__name__) / name
    if not isinstance(path, Path):
        raise RuntimeError(f"stdio_probe is not installed on a file system ({path}): its fixtures cannot run")
    return path
