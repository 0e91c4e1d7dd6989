# ATTACK: takes every process-shared lock it inherited from the zygote, writes into every shared writable mapping, exits
# TARGET: ex01_torch_mlp
# STATUS: crashed
# FAILS: all
# MESSAGE: process died
# (tests/adversarial/test_attacks.py then forks another worker from the same zygote: it must not block or see it)
import ctypes
import gc
import multiprocessing.synchronize
import os

import tqdm.std  # noqa: F401 - its process-shared lock, if the zygote made one

gc.unfreeze()  # the zygote froze what it held: back where gc.get_objects() lists it
for _lock in [o for o in gc.get_objects() if type(o) in (multiprocessing.synchronize.Lock,
                                                          multiprocessing.synchronize.RLock)]:
    _lock.acquire(timeout=1)
with open("/proc/self/maps") as _fh:
    for _line in _fh:
        _addr, _perms = _line.split()[:2]
        if _perms[1] == "w" and _perms[3] == "s":
            _lo, _hi = (int(x, 16) for x in _addr.split("-"))
            ctypes.memmove(_hi - 16, b"tapetrace-shared", 16)  # the end of the mapping, past what it holds
os._exit(0)  # never releases anything
