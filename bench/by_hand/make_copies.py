"""Make a patched copy of the installed mcp for every FRESH_SHAPES shape: OUT/<shape>/mcp, for PYTHONPATH=OUT/<shape>.

Only this maker reads tests/sdk_fixes.py; the checks themselves import the SDK copy and nothing of the probe.
Usage, from the repository: python bench/by_hand/make_copies.py OUT
"""

import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from stdio_probe.sdk.sdk import pinned  # noqa: E402
from tests.sdk_fixes import FRESH_SHAPES, patched_sdk  # noqa: E402  (the repository on the path first)

out = Path(sys.argv[1])
for name, (edits, expected) in FRESH_SHAPES.items():
    shutil.rmtree(out / name, ignore_errors=True)
    patched_sdk(out, name, edits, pinned())
    print(f"{name}: PYTHONPATH={out / name} (expected {expected})")
