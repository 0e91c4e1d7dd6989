"""Student code for tests/adversarial/test_attacks.py: a fork bomb, run from a small interpreter of its own
(forking the worker itself, torch and all, takes ~0.1 s per process on a loaded machine): forks until the
kernel refuses (at most 3,000), each child named ``tt-forkbomb`` and sleeping. Raises at import with one JSON
line, ``forked``: how many it started."""

import json
import subprocess
import sys

BOMB = """
import ctypes, os, time
forked = 0
for _ in range(3000):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        ctypes.CDLL(None).prctl(15, b"tt-forkbomb", 0, 0, 0)  # PR_SET_NAME: what `ps -eo comm` shows
        time.sleep(600)
        os._exit(0)
    forked += 1
print(forked, flush=True)
time.sleep(600)
"""

helper = subprocess.Popen([sys.executable, "-S", "-c", BOMB], stdout=subprocess.PIPE, text=True)
forked = int(helper.stdout.readline() or -1)
raise RuntimeError("FORKED " + json.dumps({"forked": forked}))
