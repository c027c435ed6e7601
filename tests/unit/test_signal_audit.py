"""bench/signal_audit.py's reading of a kernel trace (a stored one: tests/data/records/signal-audit-trace.txt).

The trace is a real run of `bench/signal_audit.py --keep` around a shell (pid 25700) that SIGTERMs its own child
by number, then (exec'd into python3) SIGTERMs its child through a pidfd and SIGUSR1s a `sleep` started outside
its tree by number, while another test suite ran beside it (its events are in the trace and are not the tree's).
"""

from bench.signal_audit import audit
from tests.paths import ROOT

TRACE = ROOT / "tests" / "data" / "records" / "signal-audit-trace.txt"
COMMAND = 25700


def test_each_send_of_the_tree_is_counted_by_how_and_to_whom():
    report = audit(TRACE.read_text().splitlines(), COMMAND)
    assert dict(report.counts) == {("kill", "descendant"): 1, ("pidfd", "descendant"): 1, ("kill", "outside"): 1}
    assert report.outside == ["python3 (25700) sent signal 10 by kill to sleep (25677)"]
    assert sum(report.by_number.values()) == 2


def test_the_processes_beside_the_tree_count_for_nothing():
    assert not audit(TRACE.read_text().splitlines(), 1).counts
