"""Put a victim on every pid a probe's run gives back, and tell which victims the probe signalled.

    unshare --pid --fork --mount-proc python pid_victims.py RESULT_JSON -- COMMAND...

Run as the first process of a private pid namespace (root), it starts COMMAND (a probe run) and watches
/proc. Once a process carrying PROBE_RUN_ID (of any run) is reaped, a victim is made to take its pid at
once: /proc/sys/kernel/ns_last_pid set to the pid before it, then a fork. A victim carries no marker,
leads a session and a process group of its own (so a group signal by that number reaches it too) and
sleeps with every signal's default action, so any signal the probe sends it by a reused number ends it.
When COMMAND has ended, RESULT_JSON says how many victims were placed, which of them a signal ended, and
COMMAND's exit code. A fork the probe makes between the write and our fork may take the pid first: that
victim is not placed (counted as missed), never a false alarm.
"""

import json
import os
import signal
import subprocess
import sys
import time

MARKER = b"PROBE_RUN_ID="
SCAN = 0.001
LAST_PID = "/proc/sys/kernel/ns_last_pid"
LINGER_BOUND = 60.0  # seconds the probe's guardian may take to finish once the probe has ended (ends when it has)


def marked(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as environ:
            return any(entry.startswith(MARKER) for entry in environ.read().split(b"\0"))
    except OSError:
        return False


def place(target: int) -> int | None:
    """A victim on target's pid, or None when another process took it first."""
    with open(LAST_PID, "w") as last:
        last.write(str(target - 1))
    pid = os.fork()
    if pid == 0:
        if os.getpid() != target:
            os._exit(0)
        os.setsid()
        os.execv("/bin/sleep", ["sleep", "3600"])
    if pid != target:
        os.waitpid(pid, 0)
        return None
    return pid


def main() -> None:
    result_path, command = sys.argv[1], sys.argv[sys.argv.index("--") + 1 :]
    probe = subprocess.Popen(command)
    known: set[int] = set()
    victims: dict[int, int | None] = {}  # victim pid: the signal that ended it (None while alive)
    missed = 0
    while probe.poll() is None:
        pids = {int(entry) for entry in os.listdir("/proc") if entry.isdigit()}
        known |= {pid for pid in pids - known - victims.keys() if marked(pid)}
        for pid in sorted(known - pids):  # reaped: its number is free
            known.discard(pid)
            if (victim := place(pid)) is None:
                missed += 1
            else:
                victims[victim] = None
        reap_orphans(probe.pid, victims)
        time.sleep(SCAN)
    # as an init does: wait (bounded) for what the probe left to end by itself, its guardian among them (whose
    # clean-up the namespace's end would otherwise cut short: the kernel kills every process in it)
    deadline = time.monotonic() + LINGER_BOUND
    while others(victims) and time.monotonic() < deadline:
        reap_orphans(probe.pid, victims)
        time.sleep(SCAN)
    reap_orphans(probe.pid, victims)
    signalled = {pid: signal.Signals(sig).name for pid, sig in victims.items() if sig}
    for pid, sig in victims.items():
        if sig is None:
            os.kill(pid, signal.SIGKILL)  # our own child, not reaped: its pid is still its own
            os.waitpid(pid, 0)
    with open(result_path, "w") as out:
        json.dump({"placed": len(victims), "missed": missed, "signalled": signalled, "exit": probe.returncode}, out)


def others(victims: dict[int, int | None]) -> bool:
    """Whether a process other than this one and the live victims is still in the namespace."""
    live = {int(entry) for entry in os.listdir("/proc") if entry.isdigit()} - {os.getpid()}
    return bool(live - {pid for pid, sig in victims.items() if sig is None})


def reap_orphans(probe: int, victims: dict[int, int | None]) -> None:
    """Reap every child that has ended but the probe (Popen's to reap): orphans of the run re-parented to this
    first process of the namespace, which would stay in /proc as zombies, and victims, noting their signal."""
    while True:
        try:
            ended = os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return
        if ended is None or ended.si_pid == probe:
            return
        _, status = os.waitpid(ended.si_pid, 0)
        if ended.si_pid in victims:
            victims[ended.si_pid] = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0


if __name__ == "__main__":
    main()
