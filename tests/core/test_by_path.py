"""The probe's modules that other interpreters load by path (fixtures/contract.py; eras.py for a scenario server):
each imports nothing outside the standard library at module level, and loads in an interpreter with no site."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stdio_probe.core import eras, host_contract, sample, spawn

CONTRACT = spawn.FIXTURES / "contract.py"
BY_PATH = {"host_contract": Path(host_contract.__file__), "sample": Path(sample.__file__), "eras": Path(eras.__file__)}


def module_level_imports(path: Path) -> set[str]:
    """The top-level packages a module imports when loaded: its module-level statements, not the bodies of functions
    (run only inside an SDK's interpreter) nor `if TYPE_CHECKING:` blocks."""
    names: set[str] = set()

    def visit(nodes) -> None:
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                continue
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                names.add("." if node.level else node.module.split(".")[0])
            visit(ast.iter_child_nodes(node))

    visit(ast.parse(path.read_text()).body)
    return names


def test_contract_loads_exactly_the_modules_checked_here():
    """A module added to contract.py's loads must be added to BY_PATH, so this file checks it too."""
    assert set(re.findall(r'_load\("(\w+)"\)', CONTRACT.read_text())) == {"host_contract", "sample"}


@pytest.mark.parametrize("name", sorted(BY_PATH))
def test_module_level_imports_are_the_standard_library(name):
    imports = module_level_imports(BY_PATH[name])
    assert imports, f"{name}: no import read: the reader is wrong"
    outside = {module for module in imports if module != "__future__" and module not in sys.stdlib_module_names}
    assert not outside, f"{name} imports {sorted(outside)} at module level: it is loaded by path with no site"


def test_they_load_in_an_interpreter_without_site_or_the_probe():
    """What a fixture and a scenario server do: contract.py loads its two, eras.py loads by its path; -I -S: no
    site-packages, no PYTHONPATH, no current folder on sys.path."""
    code = (
        "import importlib.util as u, sys\n"
        f"sys.path.insert(0, {str(CONTRACT.parent)!r})\n"
        "import contract\n"
        f"spec = u.spec_from_file_location('eras', {str(BY_PATH['eras'])!r}); m = u.module_from_spec(spec)\n"
        "spec.loader.exec_module(m)\n"
        "print(contract.host_contract.Pidfd.__name__, contract.sample.__name__, m.MODERN)\n"
    )
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["Pidfd", "stdio_probe_sample", eras.MODERN]
