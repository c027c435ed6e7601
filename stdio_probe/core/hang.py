"""Prove from the kernel that a process cannot exit by itself.

A process whose every thread sleeps in a syscall with no timeout, one of them
writing to a full pipe whose only reader is this probe, and which nothing
else can wake, can be woken by nothing but the probe draining that pipe (or a
signal from outside): waiting longer cannot change the outcome, so the wait
can stop. The read side is the same proof turned round (L12): one thread
reading an empty pipe whose only writer is this probe. What else could wake
it, and where the proof looks:

  a thread's own timed wait           /proc/PID/task/TID/syscall (its timeout argument)
  a futex shared with another process the futex op (not FUTEX_PRIVATE_FLAG)
  an interval timer (alarm, setitimer) asked of the fixture (fixtures/timer_query.py):
                                      /proc does not show them; no answer, no proof
                                      (a process we cannot ask: no SIGALRM handler,
                                      SIGALRM not blocked in every thread: _foreign_timers)
  a POSIX timer                       /proc/PID/timers
  a pending signal                    SigPnd per thread, ShdPnd, in /proc/PID[/task/TID]/status
  an fd a blocked epoll/poll, read or  its epoll interest list (/proc/PID/fdinfo/EPFD) or pollfd
  write watches                       array (/proc/PID/mem): each must be a pipe whose other end,
                                      or a Unix socket that (with its peer), only this process or
                                      the probe hold, an eventfd at count 0, a disarmed timerfd
                                      (fdinfo it_value) or a signalfd that no other live process
                                      holds (kcmp; libuv's and tokio's wakers), or a pidfd of the
                                      process itself: only a thread of the process could make it
                                      ready, and none runs
  a child's exit (SIGCHLD)            no live child
  a thread that ran meanwhile         each thread's context-switch count, unchanged from the first
                                      reading to the last (the timer-query thread excepted)

  another process's signal            no live process carrying the marker of the process's spawned
                                      tree (Marker: detached ones carry it too) but the process,
                                      the probe, and processes themselves proven blocked; and no
                                      live orphan the probe adopted (a child subreaper: every
                                      orphan of the run re-parents to it) that carries no marker
                                      of the run (Supervisor.adopted: one that dropped its environment)

Anything unreadable or of another kind (an armed timerfd, an eventfd another
process holds, a network socket, a pipe another process holds) means no proof,
and the caller waits out its window instead. A Go program is never proven: its
runtime keeps a thread in a timed wait (sysmon) and handles every signal. Two
functions hold the rule, and every proof here applies both (method.md, "The
wake-source rule"): wake_source, the one reading of what each thread waits in
and of every fd it watches, and outside_wake_source, the process-wide half
(pending signals, POSIX timers, children, the spawned tree). Each gives, with
its decision, the rows above that ruled out each source it read: a proof keeps
them as its "readings" (readings()), so a proven arm's record says why.

prove_waiting_forever is the same rule for a client host (L10, the H checks),
whose wait is on a peer the caller names (its server), and
prove_blocked_together for a group of processes (L5, L7, L8, L9): there the
processes named (the peer; the group, each proven blocked) join the process
and the probe as the only ones whose doing may end a wait (a pipe's other
end, a socket, an eventfd, timerfd or signalfd they hold, a pidfd of one).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from collections.abc import Callable, Collection
from typing import Literal

from stdio_probe.core import sample, spawn

ASK_BOUND = 0.5  # seconds the fixture has to answer the timer query
# (environment variable, value): carried by every process of one spawned tree, detached ones and forks included
Marker = tuple[str, str]


class TimerQuery:
    """The probe's end of a fixture's timer-query socket; the fixture gets fixture_fd (pass it, then spawned())."""

    def __init__(self) -> None:
        self._ours, self._theirs = socket.socketpair()

    @property
    def fixture_fd(self) -> int:
        return self._theirs.fileno()

    def spawned(self) -> None:
        """The fixture holds its end now: close ours, so only the probe holds the other one."""
        self._theirs.close()

    def ask(self) -> dict | None:
        """The fixture's answer (tid, fd, itimers), or None without one within ASK_BOUND."""
        deadline, data = time.monotonic() + ASK_BOUND, b""
        try:
            self._ours.sendall(b"?")
            while not data.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0 or not sample.readable(self._ours, left):
                    return None
                chunk = self._ours.recv(4096)
                if not chunk:
                    return None
                data += chunk
            return json.loads(data)
        except (OSError, ValueError):
            return None

    def close(self) -> None:
        self._ours.close()
        self._theirs.close()


def outside_wake_source(
    pid: int, marker: Marker, *, blocked: Collection[int] = (), accounted: Collection[int] = ()
) -> tuple[str | None, dict[str, str]]:
    """Why something outside pid's threads could make it run again (None when nothing can), and the rows of
    the table that ruled each source out, as far as it read (the proof's readings, method.md).

    A pending signal (the process's or a thread's), a POSIX timer, a live child (its end signals
    the process), or a live process carrying marker (pid's spawned tree, a detached process
    included) that could signal it: any but pid itself, the probe, the processes in blocked (proven
    unable to wake themselves) and those in accounted (a peer whose end is what the caller waits
    for, named by it); or an orphan the probe adopted that carries no marker of the run (any
    tree's: a process that dropped its environment is nobody's to rule out), or no adopting at
    all (spawn.adoption_refused). Interval timers and the threads' own waits are the caller's half.
    """
    rows: dict[str, str] = {}
    signals = sample.pending_signals(pid)
    if signals is None or int(signals["ShdPnd"], 16) or int(signals["SigPnd"], 16):
        return f"signal pending or unreadable ({signals})", rows
    for thread in sample.threads(pid):
        if thread["pending"] is None or int(thread["pending"], 16):
            return f"thread {thread['tid']} has a signal pending ({thread['pending']})", rows
    rows["signals"] = "none pending, the process's or a thread's"
    timers = sample.posix_timers(pid)
    if timers is None:
        return "POSIX timers unreadable", rows
    if timers:
        return f"POSIX timer exists ({timers[0]})", rows
    rows["posix_timers"] = "none"
    known = {pid, os.getpid(), *blocked, *accounted}
    children = sample.children(pid)
    if live := [child for child in children if child not in known]:
        return f"live child process {live} (its exit signals the process)", rows
    rows["children"] = f"only {sorted(children)}, each proven blocked or named" if children else "none live"
    marked = sorted(p["pid"] for p in sample.marked_processes(*marker))
    if awake := [p for p in marked if p not in known]:
        return f"live process {awake} of its spawned tree ({marker[0]}) could signal it", rows
    others = [p for p in marked if p not in (pid, os.getpid())]
    rows["marked"] = f"only {others}, each proven blocked or named" if others else "no other live process"
    if (why := spawn.adoption_refused()) is not None:
        return f"a process of the run that dropped its marker cannot be seen ({why})", rows
    if unmarked := [p["pid"] for p in spawn.current().adopted() if not p["marked"] and p["pid"] not in known]:
        return f"live process {unmarked} adopted by the probe, carrying no marker of the run, could signal it", rows
    rows["adopted"] = "no orphan without the run's marker: every orphan of the run re-parents to the probe"
    return None, rows


def prove_blocked_on_pipe(
    pid: int,
    probe_fd: int,
    *,
    marker: Marker,
    ask_timers: Callable[[], dict | None] | None = None,
    foreign: bool = False,
    side: Literal["write", "read"] = "write",
) -> dict:
    """The proof attempt: {"proven": bool, "why_not": str | None, ...facts}.

    side "write": a thread of pid writes to a full pipe, probe_fd the probe's read end (L1);
    side "read": a thread of pid reads an empty pipe, probe_fd then the probe's write end (L12).

    ask_timers asks the fixture about its interval timers (TimerQuery.ask: its answer, or None
    without one in time); without it (a process we did not write cannot be asked) there is no proof,
    unless foreign: a server we did not write (the server checks), whose interval timers are ruled
    out by its signals instead (_foreign_timers). marker names pid's spawned tree (outside_wake_source).
    """
    inode = os.fstat(probe_fd).st_ino
    pipe = sample.pipe_fill(probe_fd)
    first = sample.threads(pid)
    facts: dict = {"pipe": pipe, "threads": first}

    def no(why: str) -> dict:
        return {"proven": False, "why_not": why, **facts}

    if not first:
        return no("process has no readable threads")
    # a writer asleep in write() on the pipe (checked below) is proof it has no room: the bytes may fall a
    # few pages' part short of the capacity (pages part-filled by earlier writes)
    if side == "write" and pipe["buffered"] <= pipe["capacity"] // 2:
        return no(f"pipe not full ({pipe['buffered']}/{pipe['capacity']})")
    if side == "read" and pipe["buffered"]:
        return no(f"pipe not empty ({pipe['buffered']}/{pipe['capacity']})")
    if ask_timers is None and not foreign:
        return no("interval timers cannot be asked of this process")
    if ask_timers is None:
        if (why := _foreign_timers(pid)) is not None:
            return no(why)
        answer, interval = {"tid": None, "fd": None, "itimers": {}}, FOREIGN_TIMERS_ROW
    else:
        answer, interval = ask_timers(), "none armed, in the fixture's answer"
    facts["timer_answer"] = answer
    if answer is None:
        return no(f"fixture did not answer the timer query within {ASK_BOUND:g} s")
    armed = [name for name, (value, _) in answer["itimers"].items() if value > 0]
    if armed:
        return no(f"interval timer armed: {', '.join(armed)}")
    why, facts["readings"] = _wake_sources(pid, inode, first, answer, side, marker)
    facts["readings"]["process"]["interval_timers"] = interval
    if why is not None:
        return no(why)
    last = sample.threads(pid)
    facts["threads"] = last
    if (why := _blocked_throughout(pid, inode, first, last, answer, side)) is not None:
        return no(why)
    return {"proven": True, "why_not": None, **facts}


def _blocked_throughout(
    pid: int, inode: int, first: list[dict], last: list[dict], answer: dict, side: str
) -> str | None:
    """Every thread asleep in both readings and none but the query thread ran in between (what each waits in
    is wake_source's to judge, on the first reading); one of them in side's syscall (write or read) on the pipe."""
    if [t["tid"] for t in first] != [t["tid"] for t in last]:
        return "threads came or went during the proof"
    writers = 0
    for before, thread in zip(first, last, strict=True):
        call = thread["syscall"]
        if not call.get("readable") or thread["switches"] is None:
            return f"thread {thread['tid']} syscall unreadable"
        if thread["state"] != "S" or call.get("running"):
            return f"thread {thread['tid']} is running"
        if thread["pending"] is None or int(thread["pending"], 16):
            return f"thread {thread['tid']} has a signal pending ({thread['pending']})"
        if answer["tid"] is not None and thread["tid"] == answer["tid"]:
            if call.get("name") != "read" or call["fd"] != answer["fd"]:
                return f"timer-query thread {thread['tid']} not back in its read"
            continue
        if thread["switches"] != before["switches"] or thread["syscall"] != before["syscall"]:
            return f"thread {thread['tid']} ran during the proof"
        if call.get("name") == side and sample.fd_target(pid, call["fd"]) == f"pipe:[{inode}]":
            writers += 1
    return None if writers else f"no thread is {'writing to' if side == 'write' else 'reading from'} the pipe"


def _wake_sources(
    pid: int, inode: int, threads: list[dict], answer: dict, side: str, marker: Marker
) -> tuple[str | None, dict]:
    """Why something other than the probe could wake the process (None when nothing can), and the readings
    that decided it (readings()).

    threads is the first reading; the last one checks that no thread's syscall changed since.
    """
    why, process = outside_wake_source(pid, marker)
    if why is not None:
        return why, readings([], process)
    other_end = "read" if side == "write" else "write"  # the probe's end: only the probe may hold it
    holders = sample.pipe_readers(inode) if other_end == "read" else sample.pipe_writers(inode)
    if holders != [os.getpid()]:
        return f"pipe {other_end} end held by {holders}, not the probe alone", readings([], process)
    if answer["fd"] is not None:
        query = sample.fd_target(pid, answer["fd"]) or ""
        if not query.startswith("socket:[") or sample.unix_peer(int(query[8:-1])) is None:
            why = f"timer-query fd {answer['fd']} is {query or 'unreadable'}, not a connected Unix socket"
            return why, readings([], process)
    why, waits = wake_source(pid, threads, allowed=())
    return why, readings(waits, process)


def readings(waits: list[dict], process: dict[str, str]) -> dict:
    """A proof's readings of one process, as its record keeps them (method.md, "The wake-source rule"): threads,
    what each thread waits on and the row that ruled out each fd it watches (wake_source); process, the row that
    ruled out each process-wide source (signals, posix_timers, children, marked, adopted: outside_wake_source;
    interval_timers: the fixture's answer or _foreign_timers), as far as the proof read."""
    return {"threads": waits, "process": process}


FUTEX_ROW = "futex private to the process: only its own threads wake it"
SIGNAL_ROW = "woken by a signal or a child's exit only: the process rows"


def wake_source(pid: int, threads: list[dict], allowed: Collection[int]) -> tuple[str | None, list[dict]]:
    """Why a thread of pid could leave its wait by the doing of a process other than pid and those in allowed
    (and the probe, on a pipe or socket), None when none can: the one reading of a wait that every proof
    applies (method.md, "The wake-source rule"). With it, read as it decides, not read again: each thread's
    tid, the syscall it sleeps in, what that call names (fd, epfd, nfds) and, in ruled_out, the row of the
    table that ruled out each wake source (row -> the fds it ruled out; "not ruled out" for those the decision
    did not reach). A few hundred bytes a thread: the rows are few, the fds numbers. threads is a reading of
    pid's (sample.threads).

    Each thread sleeps in a syscall with no timeout: a futex private to the process; wait4, pause or
    rt_sigsuspend (a child's exit, a signal: outside_wake_source's half); a read or write, an epoll or poll
    wait, whose every fd is ruled out by _fds_wake_source's table. A select, an unknown syscall or one with a
    timeout may wake. allowed: processes the caller proves unable to wake (a joint proof's group), or names
    as what pid waits for (its server); pid's own threads are the caller's to prove asleep throughout.
    """
    if not threads:
        return "process has no readable threads", []
    readings: list[dict] = []
    watched: dict[int, str] = {}  # fd -> the thread that watches it, for the reason
    thread_fds: list[list[int]] = []  # each reading's fds, in order
    for thread in threads:
        call, tid = thread["syscall"], thread["tid"]
        if not call.get("readable"):
            return f"thread {tid} syscall unreadable", readings
        if thread["state"] != "S" or call.get("running"):
            return f"thread {tid} is running", readings
        name = call.get("name", f"syscall {call.get('nr')}")
        readings.append({"tid": tid, "waits_in": name, **{k: call[k] for k in ("fd", "epfd", "nfds") if k in call}})
        if name in ("read", "write"):
            fds: list[int] | str = [call["fd"]]
        elif not call.get("no_timeout"):
            return f"thread {tid} in {name} may wake", readings
        elif name == "futex" and not call["private"]:
            return f"thread {tid} waits on a futex another process can wake", readings
        else:
            fds = _watched_fds(pid, tid, call)
        if isinstance(fds, str):
            return fds, readings
        readings[-1]["ruled_out"] = {} if fds else {FUTEX_ROW if name == "futex" else SIGNAL_ROW: []}
        thread_fds.append(fds)
        watched |= {fd: f"thread {tid} in {name}" for fd in fds}
    why, rows = _fds_wake_source(pid, watched, {pid, *allowed})
    for reading, fds in zip(readings, thread_fds, strict=True):
        for fd in fds:
            reading["ruled_out"].setdefault(rows.get(fd, "not ruled out"), []).append(fd)
    return why, readings


def _fds_wake_source(pid: int, watched: dict[int, str], allowed: set[int]) -> tuple[str | None, dict[int, str]]:
    """Why one of pid's fds that a thread waits on (fd -> which thread) could become ready by the doing of a
    process outside allowed (pid among them), or None; with the row of the table that ruled out each fd it
    read (fd -> row). The table: a pipe whose other end (the write end of a read end, and the other way round)
    only processes of allowed or the probe hold, and not one the probe drains (Supervisor.drained_pipes: a server's
    stderr, a host's stdout and stderr, read by the probe whatever the proof awaits); a Unix socket that, with
    its peer, only they hold; an eventfd at count 0, a disarmed timerfd or a signalfd (_anon_ready) that only
    processes of allowed hold (kcmp); a pidfd of a live process of allowed (_pidfd_ready). Anything else (an
    armed timerfd, a network socket, a file) is a wake source."""
    # the probe writes or reads a pipe or socket only as the proof awaits, but for the pipes it drains
    ends = allowed | {os.getpid()}
    drained = spawn.current().drained_pipes()
    rows: dict[int, str] = {}
    sockets: dict[str, int] = {}  # a socket or its peer -> the fd it is reached by
    anon: dict[int, str] = {}  # fd -> its row, once kcmp says who else holds it
    for fd, waiter in watched.items():
        target = sample.fd_target(pid, fd)
        if target == "anon_inode:[pidfd]":
            why, row = _pidfd_ready(pid, fd, allowed)
            if why is not None:
                return why, rows
            rows[fd] = row
        elif target is not None and target.startswith("anon_inode:"):
            why, row = _anon_ready(pid, fd, target)
            if why is not None:
                return why, rows
            anon[fd] = row
        elif target is not None and target.startswith("pipe:[") and int(target[6:-1]) in drained:
            return f"{waiter}: fd {fd} is {target}, which the probe drains (its next read makes room)", rows
        elif target is not None and target.startswith("pipe:["):
            others = _pipe_other_end(pid, fd, int(target[6:-1]))
            if others is None:
                return f"{waiter}: the mode of fd {fd} ({target}) is unreadable", rows
            if outside := sorted(set(others) - ends):
                return f"{waiter}: the other end of {target} (fd {fd}) is held by {outside} too", rows
            rows[fd] = f"pipe: other end held only by {_who(others, pid)}"
        elif target is not None and target.startswith("socket:[") and (peer := sample.unix_peer(int(target[8:-1]))):
            sockets |= {target: fd, f"socket:[{peer}]": fd}
        else:
            return f"{waiter}: fd {fd} is {target or 'unreadable'}, which another source can make ready", rows
    if anon:
        why, holders = _anon_shared(pid, list(anon), allowed)
        if why is not None:
            return why, rows
        rows |= {fd: f"{row}, held by {_who(set(holders[fd]) - {pid}, pid)}" for fd, row in anon.items()}
    held: dict[int, set[int]] = {}
    for target, pids in sample.fd_holders(set(sockets)).items():
        if outside := sorted(set(pids) - ends):
            return f"{watched[sockets[target]]}: {target} (of fd {sockets[target]}) is also held by {outside}", rows
        held.setdefault(sockets[target], set()).update(pids)
    rows |= {fd: f"Unix socket: it and its peer held only by {_who(pids, pid)}" for fd, pids in held.items()}
    return None, rows


def _who(pids: Collection[int], pid: int) -> str:
    """The holders of a file as a row names them: the process itself, the probe, and the processes named."""
    names = ["the process itself"] * (pid in pids) + ["the probe"] * (os.getpid() in pids)
    if others := sorted(set(pids) - {pid, os.getpid()}):
        names.append(f"named processes {others}")
    return " and ".join(names) or "no other process"


def _pipe_other_end(pid: int, fd: int, inode: int) -> list[int] | None:
    """Who holds the end of pipe inode that can make pid's fd on it ready: its writers for a read end, its
    readers for a write end, both for an fd open for both; None when the fd's mode cannot be read."""
    flags = (sample.fdinfo(pid, fd) or {}).get("flags")
    if flags is None:
        return None
    mode = int(flags, 8) & os.O_ACCMODE
    writers = sample.pipe_writers(inode) if mode != os.O_WRONLY else []
    return sorted({*writers, *(sample.pipe_readers(inode) if mode != os.O_RDONLY else [])})


QUIET_ANON = {  # an anonymous-inode file a blocked loop watches -> (fdinfo key, its value when not ready, row)
    "anon_inode:[eventfd]": ("eventfd-count", "0", "eventfd at count 0"),
    "anon_inode:[timerfd]": ("it_value", "(0, 0)", "timerfd disarmed"),
    # ready only on a pending signal, which the proof rules out
    "anon_inode:[signalfd]": ("sigmask", None, "signalfd: ready only on a pending signal"),
}


def _anon_ready(pid: int, fd: int, target: str) -> tuple[str | None, str]:
    """Why a watched eventfd, timerfd or signalfd could be or become ready by itself (None: it cannot), and the
    row that rules it out: an eventfd at count 0 (written only by its holders), a disarmed timerfd, a signalfd
    (ready on a pending signal only)."""
    if target not in QUIET_ANON:
        return f"watched fd {fd} is {target}, which another source can make ready", ""
    key, quiet, row = QUIET_ANON[target]
    info = sample.fdinfo(pid, fd)
    if info is None or key not in info:
        return f"watched fd {fd} ({target}): its state ({key}) is unreadable", ""
    if quiet is not None and info[key] != quiet:
        return f"watched fd {fd} ({target}) may be ready: {key} {info[key]}", ""
    return None, row


def _pidfd_ready(pid: int, fd: int, allowed: set[int]) -> tuple[str | None, str]:
    """Why a watched pidfd could become ready (None: it cannot), and the row that rules it out: it is ready once
    its process ends, which one of allowed (proven unable to wake, or the peer whose end pid waits for) does
    not do by itself."""
    of = (sample.fdinfo(pid, fd) or {}).get("Pid")
    if of is None:
        return f"watched fd {fd} (anon_inode:[pidfd]): its process is unreadable", ""
    if int(of) not in allowed or not sample.is_live(int(of)):
        return f"watched fd {fd} is a pidfd of process {of}, whose end would make it ready", ""
    return None, "pidfd of the process itself" if int(of) == pid else f"pidfd of a named peer ({of})"


def _anon_shared(pid: int, fds: list[int], allowed: set[int]) -> tuple[str | None, dict[int, list[int]]]:
    """Why a process outside allowed could make one of these watched anonymous-inode files ready (it holds
    it too), or None when only processes of allowed hold them; with who holds each (fd -> pids)."""
    holders = sample.anon_file_holders(pid, fds)
    if holders is None:
        return f"who else holds watched fds {fds} (eventfd, timerfd, signalfd) cannot be told (kcmp)", {}
    for fd, pids in holders.items():
        if outside := [p for p in pids if p not in allowed]:
            return f"watched fd {fd} ({sample.fd_target(pid, fd)}) is also held by {outside}", holders
    return None, holders


FOREIGN_TIMERS_ROW = "not a Go runtime, SIGALRM neither caught nor held pending: a timer can only kill it (no exit)"


def _foreign_timers(pid: int) -> str | None:
    """Why an interval timer of a process we cannot ask could make it run again, or None when none can.

    A Go program never qualifies: its runtime keeps a thread in a timed wait (sysmon) and handles
    SIGALRM; nor does a process whose executable cannot be read (sample.go_runtime: None), which may be
    one, and the reason says which of the two it is, not what follows from it. ITIMER_VIRTUAL and
    ITIMER_PROF advance only while the process uses CPU, which a process whose threads all stay asleep
    does not (the proof checks that none ran). ITIMER_REAL delivers SIGALRM: with no handler for it
    (SigCgt), it is discarded (ignored) or kills the process, which is not an exit on EOF either, unless
    every thread blocks it: then it stays pending, and a signalfd the process watches becomes readable
    (read, its loop runs code that exits; the signalfd row of the table holds only while nothing is
    pending). A handler, or SIGALRM blocked in every thread and not ignored: no proof.
    """
    runtime = sample.go_runtime(pid)
    if runtime is None:
        return "runtime not known (its executable could not be read), so a Go runtime's timed waits cannot be ruled out"
    if runtime:
        return "Go runtime: a runtime thread in a timed wait (sysmon), which can run code that exits"
    caught = sample.caught_signals(pid)
    if caught is None:
        return "signal dispositions unreadable"
    alarm = 1 << (signal.SIGALRM - 1)
    if caught & alarm:
        return "SIGALRM has a handler (an interval timer could wake the process)"
    held, ignored = sample.blocked_in_every_thread(pid), sample.ignored_signals(pid)
    if held is None or ignored is None:
        return "signal masks unreadable"
    if held & alarm and not ignored & alarm:
        return "SIGALRM is blocked in every thread: an interval timer's would stay pending, for a signalfd to read"
    return None


def _watched_fds(pid: int, tid: int, call: dict) -> list[int] | str:
    """The fds a blocked epoll or poll wait watches (none for another call), or why they cannot be read."""
    if "epfd" in call:
        interest = sample.epoll_interest(pid, call["epfd"])
        if interest is None:
            return f"epoll interest list of fd {call['epfd']} unreadable"
        for entry in interest:
            target = sample.fd_target(pid, entry["fd"])
            if target is None or entry["ino"] is None or not _same_inode(pid, entry["fd"], target, entry["ino"]):
                return f"epoll fd {call['epfd']} watches a file no longer at fd {entry['fd']}"
        return [entry["fd"] for entry in interest]
    if "pollfds" in call:
        polled = sample.poll_fds(pid, call["pollfds"], call["nfds"])
        return f"the fds of thread {tid}'s poll are unreadable" if polled is None else polled
    return []


def _same_inode(pid: int, fd: int, target: str, ino: int) -> bool:
    """Whether pid's fd is still the file of inode ino. A pipe's or socket's link names its inode; an
    anonymous-inode file's ("anon_inode:[eventfd]") does not, and is compared by stat instead."""
    if not target.startswith("anon_inode:"):
        return f":[{ino}]" in target
    try:
        return os.stat(f"/proc/{pid}/fd/{fd}").st_ino == ino
    except OSError:
        return False


def prove_waiting_forever(pid: int, marker: Marker, accounted: Collection[int] = ()) -> dict:
    """pid cannot run again until a peer in accounted ends or writes: {"proven": bool, "why_not": str | None,
    "threads", "readings"}. It sleeps for good (_asleep_for_good) and nothing outside it but the accounted peers
    can wake it (outside_wake_source); readings is what decided it (readings())."""
    threads = sample.threads(pid)
    why, found = _asleep_for_good(pid, threads, accounted)
    if why is None:
        why, process = outside_wake_source(pid, marker, accounted=accounted)
        found["process"] |= process
    return {"proven": why is None, "why_not": why, "threads": threads, "readings": found}


def prove_blocked_together(members: dict[int, Marker], accounted: Collection[int] = ()) -> dict:
    """No process in members (pid: the marker of its spawned tree) can run again unless one of them does:
    {"proven": bool, "why_not": str | None, "threads": {pid: threads}, "readings": {pid: readings}}. Each
    sleeps for good (_asleep_for_good, its waits on what only the group and the peers in accounted hold) and
    nothing outside the group can wake it (outside_wake_source, the others counted as blocked, the peers in
    accounted as the caller names them); so none ever will (L8: a host and the process holding its server's
    stdout; L9: a host waiting for what its server left to end)."""
    threads = {pid: sample.threads(pid) for pid in members}
    found: dict[int, dict] = {}
    for pid, marker in members.items():
        why, found[pid] = _asleep_for_good(pid, threads[pid], [*members, *accounted])
        if why is None:
            why, process = outside_wake_source(pid, marker, blocked=members, accounted=accounted)
            found[pid]["process"] |= process
        if why is not None:
            return {"proven": False, "why_not": f"{pid}: {why}", "threads": threads, "readings": found}
    return {"proven": True, "why_not": None, "threads": threads, "readings": found}


def _asleep_for_good(pid: int, threads: list[dict], allowed: Collection[int]) -> tuple[str | None, dict]:
    """Why pid could wake by itself (None: it cannot), and the readings so far (readings()): no thread's wait
    can end but by a process of allowed (wake_source), and no interval timer can fire a handler
    (_foreign_timers: such a process, a host or a process the server left, cannot be asked)."""
    why, waits = wake_source(pid, threads, allowed)
    found = readings(waits, {})
    if why is None and (why := _foreign_timers(pid)) is None:
        found["process"]["interval_timers"] = FOREIGN_TIMERS_ROW
    return why, found
