"""Never spawns a process (conftest.py refuses): verdict rules, records, outputs, judged on stored data."""
