"""L5, L7, L8, L9 and L10 by hand, through the (patched) stdio_client and its raw streams; every wait bounded.

l5: an answer holding a byte that is not UTF-8, the server alive: how does the pending receive end?
l7: a request holding a lone surrogate, then a plain one: is each answered?
l8: the server exits at the request, a background job holds its stdout: how does the pending receive end?
l9: the server starts a sleep in its group and exits at stdin EOF: is the sleep left 2.5 s after the exit?
l10: a native asyncio.timeout fires in the shutdown's grace, the server ignores stdin EOF: when does the host return?
"""

import asyncio
import os
import signal
import sys
import threading
import time
from contextlib import suppress

import anyio
import mcp_types as types
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.message import SessionMessage

PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "raw_peer.py")


def peer(mode: str, behind_a_shell: bool = False) -> StdioServerParameters:
    if behind_a_shell:
        command = f"sleep 30 & exec {sys.executable} {PEER} {mode}"
        return StdioServerParameters(command="/bin/sh", args=["-c", command], env={"PYTHONPATH": ""})
    return StdioServerParameters(command=sys.executable, args=[PEER, mode], env={"PYTHONPATH": ""})


def request(i: int, params: dict | None = None) -> SessionMessage:
    call = types.JSONRPCRequest(jsonrpc="2.0", id=i, method="tools/call", params=params or {"name": "x"})
    return SessionMessage(call)


async def receive(read, bound: float = 8) -> str:
    since = time.monotonic()
    with anyio.move_on_after(bound):
        try:
            got = await read.receive()
            return f"got {type(got).__name__} after {time.monotonic() - since:.2f} s"
        except Exception as exc:
            return f"ended ({type(exc).__name__}) after {time.monotonic() - since:.2f} s"
    return f"pending at the {bound:g} s bound"


async def l5() -> None:
    async with stdio_client(peer("badbyte")) as (read, write):
        await write.send(request(1))
        print("L5:", await receive(read))
        raise SystemExit  # leave at once: a pending transport would hold the exit


async def l7() -> None:
    async with stdio_client(peer("echo")) as (read, write):
        await write.send(request(1, {"name": os.fsdecode(b"bad-\xff-name")}))
        first = await receive(read, 5)
        await write.send(request(2))
        print("L7: first", first, "; second", await receive(read, 5))


async def l8() -> None:
    async with stdio_client(peer("die", behind_a_shell=True)) as (read, write):
        await write.send(request(1))
        print("L8:", await receive(read), "(the server exits at once)")
        raise SystemExit


def _tree(pid: int) -> list[int]:
    tasks = os.listdir(f"/proc/{pid}/task")
    kids = [int(c) for tid in tasks for c in open(f"/proc/{pid}/task/{tid}/children").read().split()]
    return kids + [grand for kid in kids for grand in _tree(kid)]


def _held(pids: list[int]) -> dict[int, int]:
    """A pidfd of each pid still in this process's tree once it is open: a kill through it never reaches a process
    that takes the number later (the one it names has been reaped)."""
    held = {}
    for pid in pids:
        with suppress(ProcessLookupError):
            held[pid] = os.pidfd_open(pid)
            if pid not in _tree(os.getpid()):
                os.close(held.pop(pid))
    return held


def _kill(held: dict[int, int], group: bool = False) -> None:
    """SIGKILL through each pidfd (to the group the process leads, with group), then closed."""
    for fd in held.values():
        with suppress(ProcessLookupError):
            signal.pidfd_send_signal(fd, signal.SIGKILL, None, 4 if group else 0)  # 4: PIDFD_SIGNAL_PROCESS_GROUP
        os.close(fd)


def _live(pids: list[int]) -> list[int]:
    live = []
    for pid in pids:
        try:
            if open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0] not in "ZX":
                live.append(pid)
        except OSError:
            pass
    return live


async def l9() -> None:
    async with stdio_client(peer("eof-exit")):
        await anyio.sleep(0.5)
        sleeps = [pid for pid in _tree(os.getpid()) if open(f"/proc/{pid}/cmdline").read().startswith("sleep")]
        held = _held(sleeps)  # while they are still in this process's tree, under the live server
    since = time.monotonic()
    print("L9: descendants left at the exit", _live(sleeps))
    await anyio.sleep(2.5)
    print(f"L9: left {time.monotonic() - since:.1f} s after the exit", _live(sleeps))
    _kill(held)


def _give_up(bound: float) -> None:
    """After bound seconds: say so, end what the host started (its server's group), leave."""
    time.sleep(bound)
    print(f"L10: host not returned {bound:g} s after it connected", flush=True)
    _kill(_held(_live(_tree(os.getpid()))), group=True)
    os._exit(1)


async def l10() -> None:
    began = None
    threading.Thread(target=_give_up, args=(10.0,), daemon=True).start()
    try:
        async with asyncio.timeout(0.5):
            async with stdio_client(peer("linger")):
                await anyio.sleep(0.2)
                began = time.monotonic()
    except TimeoutError:
        pass
    print(f"L10: host returned {time.monotonic() - began:.2f} s after its shutdown began")


if __name__ == "__main__":
    which = sys.argv[1]
    if which == "l10":  # a native cancel: asyncio's own loop
        asyncio.run(l10())
    else:
        try:
            anyio.run(globals()[which])
        except BaseException as exc:
            left = [exc, *getattr(exc, "exceptions", [])]
            if not any(isinstance(e, SystemExit) for e in left):
                print(f"{which.upper()}: raised {type(exc).__name__} {getattr(exc, 'exceptions', exc)}")
