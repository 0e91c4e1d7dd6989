"""Student code for tests/adversarial/test_attacks.py: what does a worker see of another one forked from the
same zygote (after tests/adversarial/attacks/shared_lock_taken.py took every shared lock and wrote into every
shared writable mapping, then exited)? Raises at import with one JSON line: the grader reports it as the
load error's message.

- ``locks``: process-shared locks inherited (multiprocessing SemLocks), ``free``: how many could be taken
  within 2 s each (a lock taken by a dead worker never is);
- ``shared_writable``: shared writable mappings left in this worker, ``overwritten``: how many of them
  hold the other worker's marker.
"""

import ctypes
import gc
import json
import multiprocessing.synchronize

import tqdm.std  # noqa: F401 - as the other worker

gc.unfreeze()  # the zygote froze what it held: back where gc.get_objects() lists it
locks = [o for o in gc.get_objects() if type(o) in (multiprocessing.synchronize.Lock, multiprocessing.synchronize.RLock)]
free = sum(bool(lock.acquire(timeout=2)) for lock in locks)
shared = overwritten = 0
with open("/proc/self/maps") as fh:
    for line in fh:
        addr, perms = line.split()[:2]
        if perms[1] == "w" and perms[3] == "s":
            lo, hi = (int(x, 16) for x in addr.split("-"))
            shared += 1
            overwritten += ctypes.string_at(hi - 16, 16) == b"tapetrace-shared"
raise RuntimeError("PROBE " + json.dumps({"locks": len(locks), "free": free, "shared_writable": shared,
                                          "overwritten": overwritten}))
