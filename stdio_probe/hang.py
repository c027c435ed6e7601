"""Prove from the kernel that a process cannot exit by itself.

A process whose every thread sleeps in a syscall with no timeout, one of them
writing to a full pipe whose only reader is this probe, can be woken by
nothing but the probe draining that pipe (or a signal): waiting longer cannot
change the outcome, so the wait can stop. Any timed wait, any running thread,
any other reader, or anything unreadable means no proof, and the caller waits
out its window instead.

prove_waiting_forever is the weaker half, for a client host (L10): every
thread sleeps with no timeout, so no timer of its own will ever wake it; what
can is named by the caller (a peer's output or exit, a signal).
"""

from __future__ import annotations

import os

from stdio_probe import sample


def prove_blocked_on_pipe(pid: int, read_fd: int) -> dict:
    """The proof attempt: {"proven": bool, "why_not": str | None, ...facts}."""
    inode = os.fstat(read_fd).st_ino
    pipe = sample.pipe_fill(read_fd)
    threads = sample.threads(pid)
    facts = {"pipe": pipe, "threads": threads}

    def no(why: str) -> dict:
        return {"proven": False, "why_not": why, **facts}

    if not threads:
        return no("process has no readable threads")
    if pipe["buffered"] < pipe["capacity"]:
        return no(f"pipe not full ({pipe['buffered']}/{pipe['capacity']})")
    writers = 0
    for thread in threads:
        call = thread["syscall"]
        if not call.get("readable"):
            return no(f"thread {thread['tid']} syscall unreadable")
        if thread["state"] != "S" or call.get("running"):
            return no(f"thread {thread['tid']} is running")
        if call.get("name") == "write" and sample.fd_target(pid, call["fd"]) == f"pipe:[{inode}]":
            writers += 1
        elif not call.get("no_timeout"):
            return no(f"thread {thread['tid']} in {call.get('name', 'syscall ' + str(call.get('nr')))} may wake")
    if writers == 0:
        return no("no thread is writing to the stdout pipe")
    readers = sample.pipe_readers(inode)
    if readers != [os.getpid()]:
        return no(f"pipe read end held by {readers}, not the probe alone")
    return {"proven": True, "why_not": None, **facts}


def prove_waiting_forever(pid: int) -> dict:
    """Every thread of pid sleeps in a wait with no timeout: {"proven": bool, "why_not": str | None, "threads"}."""
    threads = sample.threads(pid)

    def no(why: str) -> dict:
        return {"proven": False, "why_not": why, "threads": threads}

    if not threads:
        return no("process has no readable threads")
    for thread in threads:
        call = thread["syscall"]
        if not call.get("readable"):
            return no(f"thread {thread['tid']} syscall unreadable")
        if thread["state"] != "S" or call.get("running"):
            return no(f"thread {thread['tid']} is running")
        if not call.get("no_timeout"):
            return no(f"thread {thread['tid']} in {call.get('name', 'syscall ' + str(call.get('nr')))} may wake")
    return {"proven": True, "why_not": None, "threads": threads}
