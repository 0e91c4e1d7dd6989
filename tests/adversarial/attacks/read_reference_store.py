# ATTACK: reads the reference's kept answers (expected values): the default store, any named by the environment, its MAC key
# TARGET: ex01_torch_mlp
# STATUS: graded
# FAILS: none
# MESSAGE:
# AFTER: solution

import os as _os
import pwd as _pwd

_leaks = []
_homes = {_pwd.getpwuid(0).pw_dir, _os.path.expanduser("~"), _os.environ.get("HOME", "")}
_dirs = [_os.path.join(h, ".cache", "tapetrace", "reference") for h in _homes if h]
_dirs += [_os.environ.get("TAPETRACE_REFERENCE_CACHE", "")]
for _dir in [d for d in _dirs if d and d != "off"]:
    try:
        _names = _os.listdir(_dir)
    except OSError:
        continue
    if _names:
        _leaks.append(_dir)
    for _name in _names[:3]:
        try:
            with open(_os.path.join(_dir, _name), "rb") as _fh:
                _leaks.append(len(_fh.read()))
        except OSError:
            pass
if _leaks:
    raise RuntimeError(f"the reference's kept answers leaked: {_leaks}")
