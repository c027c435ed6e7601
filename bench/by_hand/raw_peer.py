"""A stdlib server for the client-side hand checks; argv[1] is its mode.

badbyte: answers each request with a line holding a non-UTF-8 byte, stays alive with stdout open;
echo: answers each request with its params echoed;
die: exits at the first request without answering (run behind sh -c 'sleep 30 & exec ...');
eof-exit: starts a background sleep in its group, exits at stdin EOF;
linger: ignores stdin EOF (sleeps 60 s).
"""

import json
import os
import subprocess
import sys
import time

mode = sys.argv[1]
if mode == "eof-exit":
    subprocess.Popen(["sleep", "60"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
for line in sys.stdin.buffer:
    message = json.loads(line.decode("utf-8", "surrogateescape"))
    if "id" not in message:
        continue
    if mode == "badbyte":
        sys.stdout.buffer.write(b'{"jsonrpc":"2.0","id":%d,"result":{"x":"\xff"}}\n' % message["id"])
    elif mode == "echo":
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"echo": message.get("params")}}
        sys.stdout.write(json.dumps(answer) + "\n")
    elif mode == "die":
        os._exit(0)
    sys.stdout.flush()
if mode == "linger":
    time.sleep(60)
