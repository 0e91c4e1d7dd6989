# ATTACK: fishes in the compile cache the grader lends: its folder, paths and links as keys, guessed keys, a planted entry
# TARGET: ex06_per_example_grads
# STATUS: graded
# FAILS: none
# MESSAGE: 
# AFTER: solution

import glob as _glob
import os as _os
import pwd as _pwd

_leaks = []
_home = _pwd.getpwuid(0).pw_dir
for _dir in [_os.path.join(_home, ".cache", "tapetrace", "jax-compile"),
             *_glob.glob(_os.path.join(_home, ".cache", "tapetrace", "jax-*"))]:
    try:
        if _os.listdir(_dir):
            _leaks.append(_dir)
    except OSError:
        pass
try:
    from jax._src import compilation_cache as _cc

    _lent = _cc._cache
except Exception:  # noqa: BLE001
    _lent = None
if _lent is not None:
    _planted = "jit_per_example-" + "0" * 64
    try:
        _lent.put(_planted, b"a program the reference would run")
    except Exception:  # noqa: BLE001
        pass
    for _key in ["../../solutions/ex06_per_example_grads.py", "../../../../etc/passwd", "/etc/passwd",
                 "../jax-compile", ".lockfile", "jit_f-" + "1" * 64 + "/../../x", "jit_f-" + "a" * 63,
                 _planted, "jit_per_example-" + "f" * 64, "*", ""]:
        try:
            if _lent.get(_key):
                _leaks.append(_key)
        except Exception:  # noqa: BLE001
            pass
if _leaks:
    raise RuntimeError(f"the compile cache leaked: {_leaks}")
