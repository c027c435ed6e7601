"""A stdlib host with the defect shapes of the host checks, chosen by flags; without flags, a well-behaved one.

    python fixture_host.py [FLAGS] -- SERVER_ARGV...

Well behaved: the server in a process group of its own with PR_SET_PDEATHSIG (SIGTERM), stderr
inherited; initialize, tools/list, tools/call probe, reading stdout in poll(2) (lines that are not
JSON-RPC, or answer no request of ours, are skipped) while watching the server's exit; then close
stdin, drain and wait GRACE s, SIGTERM to its group, GRACE s, SIGKILL to its group, and the group
killed once more after the server's exit (what it left behind). Flags:

  --never-close-stdin   end the server by SIGTERM, stdin left open (H1)
  --never-signal        after closing stdin, wait for the server's exit with no bound (H2, H3)
  --direct-child-only   signal only the server's pid, never its group, no PDEATHSIG (H4, H10)
  --hang-on-dead-server wait for the answer on stdout alone, not on the server's exit (H5)
  --pipe-stderr         a stderr pipe the host never reads (H7)
  --modern              speak 2026-07-28: server/discover, then _meta on every request
  --reconnect           relaunch a server that died (up to RELAUNCHES times) at once, re-list and call (H9)
  --backoff             with --reconnect: wait BACKOFF s before the first relaunch, doubling each time
  --grows-after-answer  hold BALLAST MiB from the start (so its fork before the server's exec is a copy that
                        large), then take GROWTH MiB more once the call is answered, until it exits (H8)
  --daemon              leave a daemon behind: double fork, setsid, re-exec of this command line with an empty
                        environment (no marker of the probe's; the {server} words, the run id among them, kept)
  --call-timeout SECONDS  give up on tools/call after SECONDS: send notifications/cancelled, then close and
                        exit 1 (without it the call waits for its answer, or the server's end, with no bound: H11)
  --server-per-operation  a server for each operation, as a host that opens a session per call: one started,
                        connected, sent tools/list and closed, then a new one for tools/call (H3, H9, H10)
  --close-after SECONDS wait SECONDS after the answer before closing the server, asleep: idle past a window
  --busy-close          with --close-after, those seconds spent on a core: a host's teardown that a loaded
                        machine makes long, progress all the while (the window rule: not stuck)
  --term-at-once        close by SIGTERM to the server's pid alone, at once, stdin never closed; then wait for
                        its exit and its stdout's end, with no bound, and exit: a runtime that an open pipe
                        keeps alive (a JavaScript host's own stdio transport, measured; H4's wrapper pair)
"""

import contextlib
import ctypes
import json
import os
import select
import signal
import subprocess
import sys
import time

GRACE = 1.0
BALLAST, GROWTH = 150, 200  # MiB (--grows-after-answer): the growth is above H8's bound for a 16 MiB answer
RELAUNCHES = 6
BACKOFF = 0.3
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
PR_SET_PDEATHSIG = 1
PIDFD_SIGNAL_PROCESS_GROUP = 1 << 2  # pidfd_send_signal(2): to the pidfd's process group


def pdeathsig() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


class Host:
    def __init__(self, flags: set[str], argv: list[str]) -> None:
        self.flags = flags
        good = "--direct-child-only" not in flags
        self.server = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if "--pipe-stderr" in flags else None,
            start_new_session=good,
            preexec_fn=pdeathsig if good else None,
        )
        self.held = os.pidfd_open(self.server.pid)  # our child, not reaped yet: the number is still its own
        self.pending = b""
        self.next_id = 0

    def send(self, method: str, params: dict | None = None, notify: bool = False) -> int:
        params = dict(params or {})
        if "--modern" in self.flags and not notify:
            params["_meta"] = META
        message = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self.next_id += 1
            message["id"] = self.next_id
        try:
            self.server.stdin.write(json.dumps(message).encode() + b"\n")
            self.server.stdin.flush()
        except BrokenPipeError:
            pass
        return self.next_id

    def answer(self, rid: int, timeout: float | None = None) -> dict | None:
        """The response to rid; None when stdout ended or (unless --hang-on-dead-server) the server exited.
        TimeoutError once timeout s have passed without it."""
        poller = select.poll()
        poller.register(self.server.stdout.fileno(), select.POLLIN)
        watch_exit = "--hang-on-dead-server" not in self.flags
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            *lines, self.pending = self.pending.split(b"\n")
            for line in lines:
                try:
                    message = json.loads(line.decode("utf-8"))
                except ValueError:
                    continue
                if isinstance(message, dict) and message.get("id") == rid:
                    return message
            wait = 100 if watch_exit else -1
            if deadline is not None:
                left = max(0, round((deadline - time.monotonic()) * 1000))
                wait = left if wait < 0 else min(wait, left)
            if not poller.poll(wait):
                if deadline is not None and time.monotonic() >= deadline:
                    raise TimeoutError
                if self.server.poll() is not None:
                    return None
                continue
            chunks = [self.pending]
            while chunk := os.read(self.server.stdout.fileno(), 1 << 20):
                chunks.append(chunk)
                if b"\n" in chunk or not poller.poll(0):
                    break
            if not chunk:
                return None
            self.pending = b"".join(chunks)

    def signal(self, sig: int, alone: bool = False) -> None:
        """sig to the server's group, or to the server alone (alone, --direct-child-only), through the pidfd held
        since its spawn: once the server is reaped, what is left of its group or nothing, never a process or a
        group that took its number since (the group flag: Linux 6.9)."""
        alone = alone or "--direct-child-only" in self.flags
        with contextlib.suppress(ProcessLookupError):
            signal.pidfd_send_signal(self.held, sig, None, 0 if alone else PIDFD_SIGNAL_PROCESS_GROUP)

    def close(self) -> None:
        if "--close-after" in self.flags:
            linger(float(sys.argv[sys.argv.index("--close-after") + 1]), "--busy-close" in self.flags)
        if "--term-at-once" in self.flags:
            self.signal(signal.SIGTERM, alone=True)
            self.server.wait()
            while os.read(self.server.stdout.fileno(), 65536):
                pass
            return
        if "--never-close-stdin" in self.flags:
            self.signal(signal.SIGTERM)
            self.server.wait()
            return
        with contextlib.suppress(BrokenPipeError):
            self.server.stdin.close()
        if "--never-signal" in self.flags:
            self.server.wait()
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            deadline = time.monotonic() + GRACE
            while self.server.poll() is None and time.monotonic() < deadline:
                if select.select([self.server.stdout], [], [], 0.05)[0]:
                    os.read(self.server.stdout.fileno(), 65536)
            if self.server.poll() is not None:
                break
            self.signal(sig)
        self.server.wait()
        if "--direct-child-only" not in self.flags:
            self.signal(signal.SIGKILL)  # what the server left in its group


def linger(seconds: float, busy: bool) -> None:
    """seconds asleep, or (busy) spent on a core."""
    if not busy:
        time.sleep(seconds)
        return
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        pass


CLIENT = {"name": "fixture-host", "version": "1"}
INITIALIZE = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": CLIENT}


STEPS = (("tools/list", {}), ("tools/call", {"name": "probe"}))


def session(host: Host, call_timeout: float | None, steps: tuple = STEPS) -> str | None:
    """Connect, then steps: list, call (given up after call_timeout s, and cancelled); how a step failed, or None."""
    connect = ("server/discover", {}) if "--modern" in host.flags else ("initialize", INITIALIZE)
    for method, params in (connect, *steps):
        rid = host.send(method, params)
        try:
            if host.answer(rid, call_timeout if method == "tools/call" else None) is None:
                return f"{method} failed: the server is gone"
        except TimeoutError:
            host.send("notifications/cancelled", {"requestId": rid, "reason": "timed out"}, notify=True)
            return f"{method} timed out after {call_timeout:g} s"
        if method == "initialize":
            host.send("notifications/initialized", notify=True)
    if "--grows-after-answer" in host.flags and STEPS[-1] in steps:
        HELD.append(touched(GROWTH))
    return None


def per_operation(flags: set[str], argv: list[str], call_timeout: float | None) -> str | None:
    """--server-per-operation: each step on a server of its own, started, connected and closed; how one failed."""
    for step in STEPS:
        host = Host(flags, argv)
        failed = session(host, call_timeout, (step,))
        host.close()
        if failed:
            return failed
    return None


def one_server(flags: set[str], argv: list[str], call_timeout: float | None) -> str | None:
    """The whole session on one server (relaunched with --reconnect when it failed), closed; how it failed."""
    host = Host(flags, argv)
    failed = session(host, call_timeout)
    delay = BACKOFF
    for _ in range(RELAUNCHES if "--reconnect" in flags and failed else 0):
        host.close()
        if "--backoff" in flags:
            time.sleep(delay)
            delay *= 2
        host = Host(flags, argv)
        if (failed := session(host, call_timeout)) is None:
            break
    host.close()
    return failed


HELD: list[bytearray] = []  # memory --grows-after-answer holds until the host exits


def touched(mib: int) -> bytearray:
    """mib MiB, every page written: resident, as a host's own data would be."""
    block = bytearray(mib << 20)
    for offset in range(0, len(block), 4096):
        block[offset] = 1
    return block


def leave_daemon() -> None:
    """Double fork and setsid, then re-exec this command line as the daemon, with an empty environment."""
    if os.fork():
        return
    os.setsid()
    if os.fork():
        os._exit(0)
    os.execve(sys.executable, [sys.executable, __file__, "--daemon-sleep", *sys.argv[1:]], {})


def main() -> int:
    split = sys.argv.index("--")
    flags, argv = set(sys.argv[1:split]), sys.argv[split + 1 :]
    timed = "--call-timeout" in flags
    call_timeout = float(sys.argv[sys.argv.index("--call-timeout") + 1]) if timed else None
    if "--daemon-sleep" in flags:
        time.sleep(3600)
        return 0
    if "--daemon" in flags:
        leave_daemon()
    if "--grows-after-answer" in flags:
        HELD.append(touched(BALLAST))
    failed = (per_operation if "--server-per-operation" in flags else one_server)(flags, argv, call_timeout)
    if failed:
        print(failed, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
