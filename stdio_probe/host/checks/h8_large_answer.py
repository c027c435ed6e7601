"""H8: large answer: a 16 MiB tool result; the call completes and the host's memory stays bounded.

Trigger: the tool's result is 16 MiB of text (the scenario server's LARGE). Shown when the host hangs
after the answer (proof or window), exits before it took in the whole answer, or fails the call (exits
non-zero: the host contract's way to say so; a host that bounds a line below the answer, like the TypeScript
SDK's 10 MiB read buffer, closes the connection), or when its processes'
peak resident memory (VmHWM, summed over the host's tree, read every 20 ms; the kernel's peak for the host once
it has exited, which a reading spaced by a loaded machine misses: HostRun._exit_peak) grew by more than
MEMORY_MULTIPLE times the answer over what they held when the call arrived.
"""

from __future__ import annotations

from stdio_probe.core.model import Finding, Host, Options, Probe
from stdio_probe.host import session
from stdio_probe.host.checks import h6_stdout_noise

ID = "H8"
TITLE = "large answer: 16 MiB result completes, host memory bounded"
ARMS = ("bug", "control")
SCENARIO = "large"
MEMORY_MULTIPLE = 10


def run_arm(arm: str, host: Host, options: Options) -> dict:
    def body(r: session.HostRun) -> dict:
        r.track_memory = True
        called = session.at("message", method="tools/call")
        r.wait_for_trigger(lambda events: called(events) is not None)
        base = r.peak_kib
        return {"base_kib": base, **session.shutdown(options, prove_after=called)(r)}

    return session.arm(host, options, arm, SCENARIO, body)


def assess_bug(record: dict) -> Finding:
    """H6's judgement after the answer; when the host completed, whether it took in the whole answer, its call
    succeeded (exit 0) and how much its memory grew for it."""
    finding = h6_stdout_noise.after_answer(record, "16 MiB answer")
    if finding.shown is not False:
        return finding
    answered = session.first(record["events"], "answered")
    if answered is None:
        note = f"the host exited (exit {record['host']['exit_code']}) before it took in the whole answer"
        return Finding(True, note, "exited before taking in the answer")
    if (code := record["host"]["exit_code"]) != 0:
        said = record["host"].get("stderr", "").strip().splitlines()
        note = f"the call failed: the host exited {code} after the answer" + (f" ({said[0][:160]})" if said else "")
        return Finding(True, note, f"call failed, host exit {code}")
    answer_mib = answered["bytes"] / 2**20
    grown_mib = (record["host_peak_kib"] - record["base_kib"]) / 1024
    ratio = grown_mib / answer_mib
    memory = f"peak memory +{grown_mib:.0f} MiB ({ratio:.1f}x the answer, bound {MEMORY_MULTIPLE}x)"
    if ratio > MEMORY_MULTIPLE:
        return Finding(True, f"{finding.note}; {memory}", f"+{grown_mib:.0f} MiB ({ratio:.1f}x the answer)")
    return Finding(False, f"{finding.note}; {memory}", f"completed, +{grown_mib:.0f} MiB ({ratio:.1f}x)")


PROBE = Probe(ID, TITLE, ARMS, run_arm, session.judged(assess_bug))
