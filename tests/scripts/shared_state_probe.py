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
import json
import multiprocessing.synchronize
import sys

import tqdm.std  # noqa: F401 - as the other worker


def _inherited_locks() -> list:
    """Process-shared locks reachable from every module and class namespace (gc's own lists are refused
    while tapetrace grades: autograder/workers/guard.py)."""
    kinds = (multiprocessing.synchronize.Lock, multiprocessing.synchronize.RLock)
    seen, found = set(), []
    for mod in list(sys.modules.values()):
        for value in list(getattr(mod, "__dict__", {}).values()):
            inner = list(vars(value).values()) if isinstance(value, type) else []
            for v in (value, *inner):
                if type(v) in kinds and id(v) not in seen:
                    seen.add(id(v))
                    found.append(v)
    return found


locks = _inherited_locks()
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
