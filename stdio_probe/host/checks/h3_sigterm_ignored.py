"""H3: SIGTERM ignored too: the host ends the server (SIGKILL) within the bound; nothing of it is alive
once the host has exited.

Trigger: a server that ignores stdin EOF and SIGTERM (each logged). Shown when the host hung (proof or
window), when its first signal came later than the bound, or when anything of the server's tree was
alive SURVIVOR_GRACE (1 s) after the host's exit. A host that started more than one server is judged on
each (session.per_server): each one's escalation, and when it was gone, from its own EOF. Host rule:
host_contract.shutdown_child (SIGKILL after the SIGTERM grace).
"""

from __future__ import annotations

from stdio_probe.core.model import Finding, Probe
from stdio_probe.host import session
from stdio_probe.host.checks import h2_eof_ignored

ID = "H3"
TITLE = "SIGTERM ignored: the host SIGKILLs the server within the bound"
ARMS = ("bug", "control")
SCENARIO = "ignore_term"


def assess_bug(record: dict) -> Finding:
    """H2's escalation; when it was in time, how long after EOF (or the answer) the server was gone."""
    finding = h2_eof_ignored.escalation(record)
    gone = [float(t) for t in record["server_gone_t"].values()]
    since = session.first(record["events"], "stdin_eof") or session.first(record["events"], "answered")
    if finding.shown is False and gone and since is not None:
        when = f"gone {max(gone) - since['t']:.2f} s after {'EOF' if since['event'] == 'stdin_eof' else 'the answer'}"
        return Finding(False, f"{finding.note}; the server {when}", f"server killed, {when}")
    return finding


PROBE = Probe(ID, TITLE, ARMS, session.shutdown_arm(SCENARIO), session.judged(session.per_server(assess_bug)))
