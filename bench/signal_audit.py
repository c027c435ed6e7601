"""Every signal a command's process tree sent, as the kernel saw it: through a pidfd or by a number, and to whom.

    python bench/signal_audit.py [--keep TRACE] -- COMMAND...

For example, the README's test command: `python bench/signal_audit.py -- .venv/bin/python -m pytest -q -n 8
--dist loadgroup -m "not network"`.

The probe promises that a signal reaches only a process it started, through a pidfd (method.md, "How a pid
is trusted before each signal"); a unit test reads our code for kills by number, but nothing there sees what
runs: an SDK under test, a fixture, a third-party server or host. This asks the kernel. It enables the
tracepoints signal:signal_generate (with the sender's kernel stack: which system call made the signal) and
sched:sched_process_fork and exec in a tracefs instance of its own (another tracer is left alone), runs
COMMAND, and follows the tree by its forks.

Each signal a process of the tree made by a system call is counted by how it was sent (pidfd_send_signal;
kill, which is also killpg and kill(0); tgkill) and by its target: the sender itself, one of its descendants,
another process of the tree, or a process outside it. A signal the kernel raised in a process's name (SIGCHLD
at an exit, SIGPIPE at a write, a timer's) is not a send and is not counted. Every signal to a process outside
the tree is listed: that is the one a run must never send. Descent is by fork, so a process re-parented to a
subreaper is still its forker's descendant.

COMMAND runs as a process group of its own, held by a pidfd (bench/common.started): Ctrl-C ends that group
(SIGINT, then SIGKILL 2 s later), one line, exit 130. Needs root and tracefs (mounted at /sys/kernel/tracing if
it is not). Exit 0 when no signal left the tree,
1 when one did, 2 when it cannot trace or lost events (then nothing is claimed). COMMAND's exit code is printed.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import select
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import started  # noqa: E402

TRACEFS = Path("/sys/kernel/tracing")
EVENTS = ("signal/signal_generate", "sched/sched_process_fork", "sched/sched_process_exec")
SIGCHLD = 17  # one per exit, raised by the kernel: left out at the source
BUFFER_KB = 131072  # per core; the reader drains it as it fills (32 MB lost events under the suite at a load of 20)
READER_NICE = -10  # the reader's priority: under the load COMMAND makes, a reader at 0 fell behind the buffer
LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\(\s*(\d+|-+)\)\s+\[\d+\]\s+\S+\s+([\d.]+): (\w+): (.*)$")
SYSCALLS = {"__x64_sys_pidfd_send_signal": "pidfd", "__x64_sys_kill": "kill", "__x64_sys_tgkill": "tgkill"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", help="also write the raw trace here")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no COMMAND")
    if refused := _refused():
        print(f"cannot trace: {refused}", file=sys.stderr)
        return 2
    instance = TRACEFS / "instances" / f"signal-audit-{os.getpid()}"
    instance.mkdir()
    trace = Path(args.keep) if args.keep else Path(tempfile.mkstemp(prefix="signal-audit-")[1])
    try:
        try:
            pid, code, lost = _traced(instance, command, trace)
        except OSError as exc:
            print(f"cannot run {command[0]}: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            print("interrupted: COMMAND's group ended, nothing claimed", file=sys.stderr)
            return 130
        report = audit(trace.read_text(errors="replace").splitlines(), pid)
    finally:
        instance.rmdir()  # the kernel frees its buffers and disables its events with it
        if not args.keep:
            trace.unlink(missing_ok=True)
    print(f"COMMAND exited {code}")
    print(report.text())
    if lost:
        print(f"{lost} events lost: the tree and its signals are incomplete, nothing is claimed")
        return 2
    return 1 if report.outside else 0


def _refused() -> str | None:
    if os.geteuid() != 0:
        return "tracefs needs root"
    if not (TRACEFS / "instances").is_dir():
        done = subprocess.run(["mount", "-t", "tracefs", "nodev", str(TRACEFS)], capture_output=True, text=True)
        if done.returncode != 0:
            return f"tracefs is not mounted and cannot be: {done.stderr.strip()}"
    missing = [event for event in EVENTS if not (TRACEFS / "events" / event).is_dir()]
    return f"this kernel has no tracepoint {', '.join(missing)}" if missing else None


def _traced(instance: Path, command: list[str], trace: Path) -> tuple[int, int, int]:
    """Run command with the events on, the trace drained into trace meanwhile; its pid, its exit code and the
    events lost."""
    (instance / "buffer_size_kb").write_text(str(BUFFER_KB))
    (instance / "options" / "record-tgid").write_text("1")
    signals = instance / "events" / "signal" / "signal_generate"
    (signals / "filter").write_text(f"sig != {SIGCHLD}")
    (signals / "trigger").write_text(f"stacktrace if sig != {SIGCHLD}")
    for event in EVENTS:
        (instance / "events" / event / "enable").write_text("1")
    stop = threading.Event()
    reader = threading.Thread(target=_drain, args=(instance / "trace_pipe", trace, stop))
    reader.start()
    try:
        with started(command) as process:  # its own group, ended (SIGINT, then SIGKILL) however the block is left
            code = process.wait()
    finally:
        (instance / "tracing_on").write_text("0")
        stop.set()
        reader.join()
    lost = sum(
        int(line.split(":")[1])
        for stats in (instance / "per_cpu").glob("cpu*/stats")
        for line in stats.read_text().splitlines()
        if line.startswith("overrun:")
    )
    return process.pid, code, lost


def _drain(pipe: Path, trace: Path, stop: threading.Event) -> None:
    """Copy the instance's trace_pipe into trace until stop is set and the pipe has nothing left."""
    os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), READER_NICE)  # this thread only
    fd = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with open(trace, "wb") as out:
            while True:
                ready = select.select([fd], [], [], 0.2)[0]
                try:
                    chunk = os.read(fd, 1 << 20) if ready or stop.is_set() else b""
                except BlockingIOError:
                    chunk = b""
                out.write(chunk)
                if not chunk and stop.is_set():
                    return
    finally:
        os.close(fd)


class Report:
    """What audit() found: counts of sends by (system call, relation) and every send that left the tree."""

    def __init__(self) -> None:
        self.counts: collections.Counter[tuple[str, str]] = collections.Counter()
        self.outside: list[str] = []
        self.by_number: collections.Counter[str] = collections.Counter()  # kill by number to others than itself

    def text(self) -> str:
        rows = [f"{'sent by':<8} {'to':<12} {'signals':>8}"]
        rows += [f"{how:<8} {relation:<12} {n:>8}" for (how, relation), n in sorted(self.counts.items())]
        rows.append("by a number to another process, by sender: " + (
            ", ".join(f"{sender} {n}" for sender, n in self.by_number.most_common()) or "none"))
        rows.append(f"to a process outside the tree: {len(self.outside) or 'none'}")
        return "\n".join(rows + [f"  {line}" for line in self.outside])


def audit(lines: list[str], command: int) -> Report:
    """Count the sends of command's tree (command: its first process's pid) in a trace."""
    report = Report()
    parent: dict[int, int] = {}
    in_tree: dict[int, bool] = {}
    program: dict[int, str] = {}
    for at, line in enumerate(lines):
        if not (match := LINE.match(line)):
            continue
        comm, tid, tgid, _, event, rest = match.groups()
        sender = int(tgid) if tgid.isdigit() else int(tid)
        fields = dict(re.findall(r"(\w+)=(\S+)", rest))
        if event == "sched_process_fork":
            child = int(fields["child_pid"])
            parent[child], in_tree[child] = sender, child == command or in_tree.get(sender, False)
            program[child] = program.get(sender, comm)
        elif event == "sched_process_exec":
            program[int(fields["pid"])] = Path(fields["filename"]).name
        elif event == "signal_generate" and in_tree.get(sender):
            how = next((SYSCALLS[word] for word in _stack(lines, at) if word in SYSCALLS), None)
            if how is None:  # raised by the kernel, not sent
                continue
            target = int(fields["pid"])
            relation = _relation(sender, int(tid), target, parent, in_tree)
            report.counts[how, relation] += 1
            if how != "pidfd" and relation != "itself":
                report.by_number[program.get(sender, comm)] += 1
            if relation == "outside":
                report.outside.append(
                    f"{program.get(sender, comm)} ({sender}) sent signal {fields['sig']} by {how} to "
                    f"{fields['comm']} ({target})"
                )
    return report


def _stack(lines: list[str], at: int) -> list[str]:
    """The function names of the kernel stack the trigger wrote after the event at lines[at]."""
    names = []
    for line in lines[at + 1 : at + 40]:
        if "<stack trace>" in line:
            continue
        if not line.lstrip().startswith("=>"):
            if names:
                break
            continue
        names.append(line.split("=>", 1)[1].strip())
    return names


def _relation(sender: int, tid: int, target: int, parent: dict[int, int], in_tree: dict[int, bool]) -> str:
    if target in (sender, tid):
        return "itself"
    above, seen = target, 0
    while above in parent and seen < 200:
        above, seen = parent[above], seen + 1
        if above == sender:
            return "descendant"
    return "in the tree" if in_tree.get(target) else "outside"


if __name__ == "__main__":
    sys.exit(main())
