"""L1 and L12 by hand, on the SDK's stdio_server under raw_server.py; every wait bounded at 8 s.

l1: a 256 KiB answer never read, then stdin EOF: when does the server exit?
l12: the server waiting for input, stdin open, one SIGINT: when does it exit?
"""

import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BOUND = 8.0


def start(big: int) -> subprocess.Popen:
    env = {**os.environ, "BIG": str(big)}
    server = [sys.executable, os.path.join(HERE, "raw_server.py")]
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE}
    child = subprocess.Popen(server, env=env, start_new_session=True, **pipes)
    child.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    child.stdin.flush()
    return child


def outcome(child: subprocess.Popen, since: float, after: str) -> str:
    try:
        code = child.wait(BOUND)
    except subprocess.TimeoutExpired:
        held = os.pidfd_open(child.pid)  # not reaped yet: the number is still the child's
        signal.pidfd_send_signal(held, signal.SIGKILL, None, 4)  # 4: PIDFD_SIGNAL_PROCESS_GROUP, the group it leads
        os.close(held)
        child.wait()
        return f"still running {BOUND:g} s after {after}"
    return f"exit {code} {time.monotonic() - since:.2f} s after {after}"


def l1() -> str:
    child = start(262_144)
    time.sleep(1.0)
    since = time.monotonic()
    child.stdin.close()
    return outcome(child, since, "stdin EOF")


def l12() -> str:
    child = start(0)
    child.stdout.readline()  # serving
    time.sleep(1.0)
    since = time.monotonic()
    child.send_signal(signal.SIGINT)
    return outcome(child, since, "SIGINT")


if __name__ == "__main__":
    print(f"{sys.argv[1].upper()}: {globals()[sys.argv[1]]()}")
