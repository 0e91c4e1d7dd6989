# ATTACK: takes every process-shared lock it inherited from the zygote, writes into every shared writable mapping, exits
# TARGET: ex01_torch_mlp
# STATUS: crashed
# FAILS: all
# MESSAGE: process died
# (tests/adversarial/test_attacks.py then forks another worker from the same zygote: it must not block or see it)
import ctypes
import multiprocessing.synchronize
import os
import sys

import tqdm.std  # noqa: F401 - its process-shared lock, if the zygote made one


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


for _lock in _inherited_locks():
    _lock.acquire(timeout=1)
with open("/proc/self/maps") as _fh:
    for _line in _fh:
        _addr, _perms = _line.split()[:2]
        if _perms[1] == "w" and _perms[3] == "s":
            _lo, _hi = (int(x, 16) for x in _addr.split("-"))
            ctypes.memmove(_hi - 16, b"tapetrace-shared", 16)  # the end of the mapping, past what it holds
os._exit(0)  # never releases anything
