"""Student code for tests/adversarial/test_attacks.py: fills the disk it can reach, then says how much it wrote.

Creates up to 20,000 empty files, then writes up to 1 GB in 8 MB files (each under the 64 MB file cap),
half in its working folder (the scratch), half in /tmp; every refused write is skipped. If it is still
alive, it raises at import with one JSON line (the grader reports it as the load error's message):
``files`` and ``mb`` it managed to create. A worker over the caps is killed before that.
"""

import json
import os
import time

files = mb = 0
for i in range(20_000):
    try:
        with open(os.path.join(".", f"f{i}"), "w"):
            files += 1
    except OSError:
        break
chunk = b"x" * (8 * 1024**2)
for i in range(128):
    where = "." if i % 2 else "/tmp"
    try:
        with open(os.path.join(where, f"tapetrace-fill-{os.getpid()}-{i}"), "wb") as fh:
            fh.write(chunk)
        mb += 8
    except OSError:
        continue
time.sleep(1.0)  # a watch that looks a few times a second has seen it by now
raise RuntimeError("FILLED " + json.dumps({"files": files, "mb": mb}))
