"""Where the tests' files are: the checkout, and this folder (helpers, data, fixture servers and hosts)."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
