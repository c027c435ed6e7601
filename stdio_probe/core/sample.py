"""Read process state from /proc: states, threads, pipes, marked processes.

Everything here is a plain reading with a timestamp; nothing decides. The one
interpretation kept here is what a syscall's arguments say about its timeout,
because that is a fact about the kernel ABI, not about any case.
"""

from __future__ import annotations

import array
import ctypes
import fcntl
import os
import platform
import re
import select
import signal
import socket
import struct
import termios
import time
from collections.abc import Iterator

F_GETPIPE_SZ = 1032
SAMPLE_INTERVAL = 0.05  # seconds between two readings of a watch loop (observe.watch): short against any window

# Blocking syscalls whose timeout argument we can read: name -> (x86_64 nr, aarch64 nr, timeout arg index, kind);
# None where the architecture lacks the call. kind "ms": an int, negative means forever; "ptr": a pointer, NULL
# means forever; "none": the call has no timeout (wait4: until a child changes state; pause, rt_sigsuspend: until
# a signal).
_WAIT_CALLS = {
    "epoll_wait": (232, None, 3, "ms"),
    "epoll_pwait": (281, 22, 3, "ms"),
    "epoll_pwait2": (441, 441, 3, "ptr"),
    "futex": (202, 98, 3, "ptr"),
    "poll": (7, None, 2, "ms"),
    "ppoll": (271, 73, 2, "ptr"),
    "wait4": (61, 260, 0, "none"),
    "pause": (34, None, 0, "none"),
    "rt_sigsuspend": (130, 133, 0, "none"),
}
_WAITS = {
    arch: {nrs[column]: (name, arg, kind) for name, (*nrs, arg, kind) in _WAIT_CALLS.items() if nrs[column] is not None}
    for column, arch in enumerate(("x86_64", "aarch64"))
}
_WRITE = {"x86_64": 1, "aarch64": 64}
_READ = {"x86_64": 0, "aarch64": 63}
FUTEX_PRIVATE_FLAG = 128
PF_EXITING = 0x4  # include/linux/sched.h: a task in do_exit, from its first step (exit_signals) on
MAX_POLL_FDS = 1 << 20  # poll(2) refuses more fds than RLIMIT_NOFILE, whose hard ceiling is fs.nr_open (1 << 20)
ARCH = platform.machine()


def readable(source: object, timeout: float) -> bool:
    """Whether source (an fd or an object with fileno()) is readable within timeout seconds.

    poll(2), not select(2): select cannot watch an fd above 1023, and a sweep of many SDKs (a fork
    server each) opens more than that in the probe.
    """
    poller = select.poll()
    poller.register(source, select.POLLIN | select.POLLPRI)
    return bool(poller.poll(max(0.0, timeout) * 1000))


def writable(fd: int, timeout: float) -> bool:
    """Whether fd (a pipe's write end) has room within timeout seconds (or its reader is gone: the write then fails)."""
    poller = select.poll()
    poller.register(fd, select.POLLOUT)
    return bool(poller.poll(max(0.0, timeout) * 1000))


def _read(path: str) -> str | None:
    """A /proc file's text, or None when it cannot be read."""
    data = _read_bytes(path)
    try:
        return None if data is None else data.decode()
    except UnicodeDecodeError:
        return None


def _read_bytes(path: str) -> bytes | None:
    """A /proc file's bytes, or None when it cannot be read (plain os calls: the probe reads thousands a second)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def proc_state(pid: int) -> str | None:
    """The one-letter state from /proc/<pid>/stat, or None when the process is gone."""
    stat = _read(f"/proc/{pid}/stat")
    return stat.rsplit(")", 1)[1].split()[0] if stat else None


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time the process has used (0.0 once it is gone)."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return 0.0
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def scheduled_ns(pid: int) -> int:
    """Nanoseconds the process's main thread has run or waited on a run queue for a CPU (/proc/PID/schedstat; 0
    once it is gone): it grows while the thread runs, and by each wait on a run queue only as that wait ends: a
    thread queued for seconds reads still until then (its state, R, says it is runnable). A kernel that keeps no
    schedstat (no CONFIG_SCHED_INFO, or zeros: no SCHEDSTATS and no delay accounting) gives its CPU time alone,
    which still grows while it runs: without it a running process would read as asleep."""
    fields = (_read(f"/proc/{pid}/schedstat") or "").split()
    if len(fields) >= 2 and any(int(field) for field in fields[:2]):
        return int(fields[0]) + int(fields[1])
    return int(cpu_seconds(pid) * 1e9)


def cpu_reading(pid: int) -> tuple[int, int | None]:
    """Clock ticks of CPU the process and the children it has reaped have used (utime, stime, cutime, cstime;
    0 once it is gone: a child's ticks stay counted once it is reaped), and, while its main thread is runnable
    (state R: on a CPU or queued for one), how many times that thread has slept (voluntary_ctxt_switches,
    /proc/PID/status); None when it is not runnable. Runnable at two readings with no sleep between them: it
    was runnable throughout, and its ticks show how little of that time it ran."""
    stat = _read(f"/proc/{pid}/stat")
    if not stat:
        return 0, None
    fields = stat.rsplit(")", 1)[1].split()
    ticks = sum(int(field) for field in fields[11:15])
    if fields[0] != "R":
        return ticks, None
    status = _read(f"/proc/{pid}/status") or ""
    slept = re.search(r"^voluntary_ctxt_switches:\s*(\d+)", status, re.MULTILINE)
    return ticks, int(slept.group(1)) if slept else None


def exiting(pid: int) -> bool:
    """Whether every thread of pid is on its way out: its exit is under way in the kernel, its files perhaps
    closed (its stdout at EOF), though it is not a zombie yet, and no signal can change how it ends.

    A thread is on its way out once it is in do_exit (PF_EXITING in /proc/PID/task/TID/stat's flags) or, not
    there yet, has the SIGKILL pending that a group exit gives every other thread (zap_other_threads: SigPnd,
    its own pending set). Every thread, because a leader that left by pthread_exit carries PF_EXITING while
    the others run on."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    return bool(tids) and all(_thread_exiting(f"/proc/{pid}/task/{tid}") for tid in tids)


def _thread_exiting(base: str) -> bool:
    stat = _read(f"{base}/stat")
    if not stat:
        return False
    if int(stat.rsplit(")", 1)[1].split()[6]) & PF_EXITING:
        return True
    pending = _status_fields(f"{base}/status").get("SigPnd")
    return pending is not None and bool(int(pending, 16) & 1 << (signal.SIGKILL - 1))


def parent_pid(pid: int) -> int | None:
    """The parent's pid from /proc/<pid>/stat, or None when the process is gone."""
    stat = _read(f"/proc/{pid}/stat")
    return int(stat.rsplit(")", 1)[1].split()[1]) if stat else None


def cmdline(pid: int) -> str:
    """The command line of pid, space-joined, its last 200 characters (the script and its arguments; "" when gone)."""
    return (_read(f"/proc/{pid}/cmdline") or "").replace("\0", " ").strip()[-200:]


def unexeced_fork(pid: int) -> bool:
    """Whether pid is a fork of its parent that has not exec'd yet: the same executable and command line. Its
    memory is its parent's pages, copied on write, and its VmHWM counts them again."""
    parent = parent_pid(pid)
    try:
        same_exe = parent is not None and os.readlink(f"/proc/{pid}/exe") == os.readlink(f"/proc/{parent}/exe")
    except OSError:
        return False
    return same_exe and _read_bytes(f"/proc/{pid}/cmdline") == _read_bytes(f"/proc/{parent}/cmdline")


_WAITID = {"x86_64": 247, "aarch64": 95}
P_PIDFD = 3
_libc = ctypes.CDLL(None, use_errno=True)


def exit_peak_kib(pidfd: int) -> int | None:
    """The peak resident memory (KiB) of the process pidfd holds, once it has exited and before it is reaped; None
    while it runs, or once reaped. The kernel's figure (waitid(2) with WNOWAIT and a struct rusage, which leaves
    the zombie to its reaper): the process's own peak over its life, exec'd images included, and that of each
    child it reaped. What /proc reads while the process lives misses a peak reached after the last reading."""
    info, usage = ctypes.create_string_buffer(128), (ctypes.c_long * 18)()
    flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
    if _libc.syscall(_WAITID[ARCH], P_PIDFD, pidfd, info, flags, usage) != 0:
        return None
    exited_pid = struct.unpack_from("i", info.raw, 16)[0]  # siginfo's si_pid; 0: not exited (WNOHANG)
    return usage[4] if exited_pid else None  # ru_maxrss, after the two struct timevals


def is_live(pid: int) -> bool:
    state = proc_state(pid)
    return state is not None and state not in ("Z", "X")


def describe_syscall(line: str | None) -> dict:
    """Parse /proc/<pid>/task/<tid>/syscall: name, args, whether it waits with no timeout, and what it waits on.

    epoll waits carry their epoll fd, poll waits the address and count of their pollfd array, futex waits
    whether the futex is private to the process (a shared one can be woken from another process). Arguments
    are read only for the calls whose arguments are known: wait4's, pause's and rt_sigsuspend's are not a
    pollfd array, and reading them as one read a stack pointer as a count.
    """
    if line is None:
        return {"readable": False}
    fields = line.split()
    if fields[0] == "running":
        return {"readable": True, "running": True}
    nr, args = int(fields[0]), [int(a, 16) for a in fields[1:7]]
    entry = {"readable": True, "nr": nr, "args": [hex(a) for a in args]}
    if nr == _WRITE.get(ARCH):
        entry.update(name="write", fd=args[0])
    elif nr == _READ.get(ARCH):
        entry.update(name="read", fd=args[0])
    elif nr in _WAITS.get(ARCH, {}):
        name, index, kind = _WAITS[ARCH][nr]
        value = args[index]
        forever = kind == "none" or (value == 0 if kind == "ptr" else value >= 2**31)  # ms: a negative int
        entry.update(name=name, no_timeout=forever)
        if name.startswith("epoll"):
            entry["epfd"] = args[0]
        elif name == "futex":
            entry["private"] = bool(args[1] & FUTEX_PRIVATE_FLAG)
        elif name in ("poll", "ppoll"):
            entry.update(pollfds=args[0], nfds=args[1])
    return entry


def threads(pid: int) -> list[dict]:
    """Per-thread state, wchan and syscall; unreadable fields come back as None."""
    out = []
    try:
        tids = sorted(int(t) for t in os.listdir(f"/proc/{pid}/task"))
    except OSError:
        return out
    for tid in tids:
        base = f"/proc/{pid}/task/{tid}"
        stat = _read(f"{base}/stat")
        status = _status_fields(f"{base}/status")
        switches = status.get("voluntary_ctxt_switches"), status.get("nonvoluntary_ctxt_switches")
        out.append(
            {
                "tid": tid,
                "state": stat.rsplit(")", 1)[1].split()[0] if stat else None,
                "wchan": _read(f"{base}/wchan"),
                "syscall": describe_syscall((_read(f"{base}/syscall") or "").strip() or None),
                "switches": None if None in switches else int(switches[0]) + int(switches[1]),
                "pending": status.get("SigPnd"),
            }
        )
    return out


def _status_fields(path: str) -> dict[str, str]:
    text = _read(path) or ""
    return dict(line.split(":\t", 1) for line in text.strip().splitlines() if ":\t" in line)


def pending_signals(pid: int) -> dict[str, str] | None:
    """SigPnd (the main thread's) and ShdPnd (the process's) from /proc/<pid>/status, as hex masks."""
    status = _status_fields(f"/proc/{pid}/status")
    if "SigPnd" not in status or "ShdPnd" not in status:
        return None
    return {"SigPnd": status["SigPnd"], "ShdPnd": status["ShdPnd"]}


def caught_signals(pid: int) -> int | None:
    """The mask of signals the process has a handler for (SigCgt in /proc/<pid>/status), or None."""
    caught = _status_fields(f"/proc/{pid}/status").get("SigCgt")
    return None if caught is None else int(caught, 16)


def ignored_signals(pid: int) -> int | None:
    """The mask of signals the process ignores (SigIgn in /proc/<pid>/status), or None."""
    ignored = _status_fields(f"/proc/{pid}/status").get("SigIgn")
    return None if ignored is None else int(ignored, 16)


def disposition(pid: int, signum: int) -> str | None:
    """What the process does with signum, from its masks: "caught" (a handler of its own), "ignored", or "default"
    (the kernel's action: SIGINT's and SIGTERM's ends it with no code of its own run); None if unreadable."""
    caught, ignored = caught_signals(pid), ignored_signals(pid)
    if caught is None or ignored is None:
        return None
    bit = 1 << (signum - 1)
    return "caught" if caught & bit else "ignored" if ignored & bit else "default"


def blocked_in_every_thread(pid: int) -> int | None:
    """The mask of signals every thread of the process blocks (SigBlk of each /proc/<pid>/task/<tid>/status):
    one of them sent to the process stays pending. None when a thread's mask cannot be read (or none can)."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return None
    masks = [_status_fields(f"/proc/{pid}/task/{tid}/status").get("SigBlk") for tid in tids]
    if not masks or None in masks:
        return None
    held = -1
    for mask in masks:
        held &= int(mask, 16)
    return held


def session_id(pid: int) -> int | None:
    """The session id from /proc/<pid>/stat, or None when the process is gone."""
    stat = _read(f"/proc/{pid}/stat")
    return int(stat.rsplit(")", 1)[1].split()[3]) if stat else None


def session_members(sid: int) -> list[dict]:
    """Live processes of session sid (pid, state, cmdline)."""
    return [
        {"pid": pid, "state": proc_state(pid), "cmdline": cmdline(pid)}
        for pid in _pids()
        if session_id(pid) == sid and is_live(pid)
    ]


def posix_timers(pid: int) -> list[dict] | None:
    """The process's POSIX timers from /proc/<pid>/timers (armed or not: the file does not say)."""
    text = _read(f"/proc/{pid}/timers")
    if text is None:
        return None
    timers: list[dict] = []
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key == "ID":
            timers.append({})
        if timers:
            timers[-1][key.strip()] = value.strip()
    return timers


def epoll_interest(pid: int, epfd: int) -> list[dict] | None:
    """The interest list of an epoll fd, from its fdinfo 'tfd:' lines: target fd and its inode."""
    text = _read(f"/proc/{pid}/fdinfo/{epfd}")
    if text is None:
        return None
    out = []
    for line in text.splitlines():
        if line.startswith("tfd:"):
            fields = line.split()
            inode = next((f[4:] for f in fields if f.startswith("ino:")), None)
            out.append({"fd": int(fields[1]), "ino": None if inode is None else int(inode, 16)})
    return out


def poll_fds(pid: int, address: int, count: int) -> list[int] | None:
    """The fds of a blocked poll's pollfd array, read from the process's memory (needs ptrace access).

    None when it cannot be read as one: a count past the kernel's limit on open files (the thread left its
    poll between the two readings and the words are another call's), or memory that is gone or changed.
    A poll of no fds watches none (only a signal ends it)."""
    if count == 0:
        return []
    if count > MAX_POLL_FDS:
        return None
    try:
        with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
            data = os.pread(mem.fileno(), 8 * count, address)
    except (OSError, OverflowError, ValueError, MemoryError):
        return None
    if len(data) != 8 * count:
        return None
    return [fd for (fd,) in struct.iter_unpack("=i4x", data) if fd >= 0]


_NETLINK_SOCK_DIAG, _SOCK_DIAG_BY_FAMILY, _UDIAG_SHOW_PEER, _UNIX_DIAG_PEER = 4, 20, 4, 2


def unix_peer(inode: int) -> int | None:
    """The inode of a Unix socket's peer, from the kernel's sock_diag; None when it is not a connected Unix socket."""
    request = struct.pack(
        "=BBHIII2I", socket.AF_UNIX, 0, 0, 0xFFFFFFFF, inode, _UDIAG_SHOW_PEER, 0xFFFFFFFF, 0xFFFFFFFF
    )
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _NETLINK_SOCK_DIAG) as diag:
            diag.sendto(struct.pack("=IHHII", 16 + len(request), _SOCK_DIAG_BY_FAMILY, 1, 1, 0) + request, (0, 0))
            diag.settimeout(1.0)
            data = diag.recv(65536)
    except OSError:
        return None
    length, kind = struct.unpack_from("=IH", data)
    offset = 32  # nlmsghdr, then unix_diag_msg
    while kind == _SOCK_DIAG_BY_FAMILY and offset + 4 <= length:
        size, attribute = struct.unpack_from("=HH", data, offset)
        if attribute == _UNIX_DIAG_PEER:
            return struct.unpack_from("=I", data, offset + 4)[0] or None
        offset += max(4, (size + 3) & ~3)
    return None


def fd_holders(targets: set[str]) -> dict[str, list[int]]:
    """For each fd target (e.g. "pipe:[123]", "socket:[456]"), the pids holding an fd on it, from /proc/*/fd."""
    found: dict[str, set[int]] = {target: set() for target in targets}
    for pid, _, target in _open_fds():
        if target in found:
            found[target].add(pid)
    return {target: sorted(pids) for target, pids in found.items()}


def _open_fds() -> Iterator[tuple[int, str, str | None]]:
    """(pid, fd, its target) for every fd of every process in /proc; a process gone meanwhile is passed over."""
    for pid in _pids():
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            yield pid, fd, fd_target(pid, int(fd))


_KCMP = {"x86_64": 312, "aarch64": 272}
_KCMP_FILE = 0


def _kcmp_file(pid1: int, fd1: int, pid2: int, fd2: int) -> int:
    """kcmp(2) KCMP_FILE: 0 when both fds are the same open file, -1 when it cannot tell (errno kept)."""
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(_KCMP[ARCH], pid1, pid2, _KCMP_FILE, fd1, fd2)


def anon_file_holders(pid: int, fds: list[int]) -> dict[int, list[int]] | None:
    """For each of pid's fds on an anonymous-inode file (an eventfd, timerfd, signalfd), the pids holding
    it (pid among them), compared by kcmp(2) with every fd of the same kind in /proc/*/fd (one scan):
    their links ("anon_inode:[eventfd]") and inode numbers are the same for them all. None when kcmp
    cannot tell or an fd is gone."""
    targets = {fd: fd_target(pid, fd) for fd in fds}
    if None in targets.values() or ARCH not in _KCMP:
        return None
    holders = {fd: {pid} for fd in fds}
    kinds = set(targets.values())
    for other in _pids():
        if other == pid:
            continue
        try:
            other_fds = os.listdir(f"/proc/{other}/fd")
        except OSError:
            continue
        for other_fd in other_fds:
            if (kind := fd_target(other, int(other_fd))) not in kinds:
                continue
            for fd in (fd for fd, target in targets.items() if target == kind):
                same = _kcmp_file(pid, fd, other, int(other_fd))
                if same < 0 and is_live(other):
                    return None
                if same == 0:
                    holders[fd].add(other)
    return {fd: sorted(found) for fd, found in holders.items()}


def fdinfo(pid: int, fd: int) -> dict[str, str] | None:
    """The 'key: value' lines of /proc/<pid>/fdinfo/<fd> (eventfd-count, it_value, sigmask, ...), or None."""
    text = _read(f"/proc/{pid}/fdinfo/{fd}")
    if text is None:
        return None
    return {key.strip(): value.strip() for key, _, value in (line.partition(":") for line in text.splitlines())}


def go_runtime(pid: int) -> bool | None:
    """Whether the process's executable was built by Go (an ELF section .go.buildinfo), None when unreadable."""
    try:
        with open(f"/proc/{pid}/exe", "rb") as exe:
            head = exe.read(64)
            if head[:4] != b"\x7fELF" or head[4] != 2:  # 64-bit ELF only
                return False
            shoff, = struct.unpack_from("<Q", head, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from("<HHH", head, 0x3A)
            exe.seek(shoff)
            table = exe.read(shentsize * shnum)
            names_at, names_size = struct.unpack_from("<QQ", table, shstrndx * shentsize + 0x18)
            exe.seek(names_at)
            names = exe.read(names_size)
    except (OSError, struct.error, IndexError):
        return None
    return b"\x00.go.buildinfo\x00" in names


def children(pid: int, exited: bool = False) -> list[int]:
    """Live processes whose parent is pid (zombies have exited); with exited, its zombies too (not reaped yet).

    Read from the kernel's list of each thread's children (/proc/PID/task/TID/children), which
    costs a read per thread; a kernel without those lists (CONFIG_PROC_CHILDREN) has every
    process's stat read instead.
    """
    if _KERNEL_CHILDREN:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            return []
        found = {int(c) for tid in tids for c in (_read(f"/proc/{pid}/task/{tid}/children") or "").split()}
        return sorted(child for child in found if exited or is_live(child))
    out = []
    for other in _pids():
        stat = _read(f"/proc/{other}/stat")
        if stat:
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and (exited or fields[0] not in ("Z", "X")):
                out.append(other)
    return out


def descendants(pid: int) -> list[int]:
    """Live processes below pid, children before their own children."""
    found = children(pid)
    return found + [grand for child in found for grand in descendants(child)]


_KERNEL_CHILDREN = os.path.exists(f"/proc/self/task/{os.getpid()}/children")


def snapshot(pid: int, since: float) -> dict:
    """One timestamped sample of a process: state and threads."""
    return {"t": round(time.monotonic() - since, 3), "state": proc_state(pid), "threads": threads(pid)}


def pipe_fill(read_fd: int) -> dict:
    """Bytes buffered in a pipe (FIONREAD on our read end) against its capacity."""
    buffered = array.array("i", [0])
    fcntl.ioctl(read_fd, termios.FIONREAD, buffered)
    return {"buffered": buffered[0], "capacity": fcntl.fcntl(read_fd, F_GETPIPE_SZ)}


def fd_target(pid: int, fd: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/fd/{fd}")
    except OSError:
        return None


def pipe_readers(inode: int) -> list[int]:
    """Pids holding the read end of pipe inode open, from every /proc/<pid>/fd."""
    return _pipe_holders(inode, (os.O_RDONLY, os.O_RDWR))


def pipe_writers(inode: int) -> list[int]:
    """Pids holding the write end of pipe inode open, from every /proc/<pid>/fd."""
    return _pipe_holders(inode, (os.O_WRONLY, os.O_RDWR))


def _pipe_holders(inode: int, modes: tuple[int, ...]) -> list[int]:
    pipe, holders = f"pipe:[{inode}]", set()
    for pid, fd, target in _open_fds():
        if target != pipe:
            continue
        info = _read(f"/proc/{pid}/fdinfo/{fd}") or ""
        flags = next((int(line.split()[1], 8) for line in info.splitlines() if line.startswith("flags:")), 0)
        if flags & os.O_ACCMODE in modes:
            holders.add(pid)
    return sorted(holders)


LISTINGS = 10  # /proc listings one scan makes at most, until one shows no new pid


def marked_processes(name: str, value: str, argv: bool = False) -> list[dict]:
    """Live processes that carry name=value (carries; with argv, a command line holding value counts too).

    /proc is listed again after its pids are read, and the new pids read at once, until a listing shows
    none: a process that forks its successor and exits while a scan reads the others (a pid hopper)
    would otherwise be gone when its turn came, and its successor not listed yet.
    """
    found, listed = [], set()
    for _ in range(LISTINGS):
        new = [pid for pid in _pids() if pid not in listed]
        if not new:
            break
        listed.update(new)
        for pid in new:
            if carries(pid, name, value, argv) and is_live(pid):
                found.append({"pid": pid, "state": proc_state(pid), "cmdline": cmdline(pid)})
    return found


def carries(pid: int, name: str, value: str, argv: bool = False) -> bool:
    """Whether pid's environment holds name=value, or, with argv, its command line holds value.

    argv is for a value the probe also put in a command line (the scenario server's --run and --tag): a
    process that drops the marker from its environment (a daemon that re-execs itself with an empty one)
    still carries it there. A marker's value is a fresh uuid, in no other command line by chance; only the
    probe's own fixtures are given a value as an argument (a driver its arm's), so they never ask for argv."""
    environ = _read_bytes(f"/proc/{pid}/environ")
    if environ is not None and f"{name}={value}".encode() in environ.split(b"\0"):
        return True
    if not argv:
        return False
    words = _read_bytes(f"/proc/{pid}/cmdline")
    return words is not None and any(value.encode() in word for word in words.split(b"\0"))


def _pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]
