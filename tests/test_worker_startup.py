"""What a worker does before its first probe, paid once where it can be: the zygote imports what every worker
imports (autograder.workers.zygote.worker_modules), and the student worker's snapshot of the libraries' callables
(autograder.workers.guard) is taken at C speed, keeping exactly what ``_kept`` keeps, in the dict's order, asking
each value the same questions in the same order."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types

from autograder.core.paths import ROOT
from autograder.probing.tools import RESULT_FD, TALLY_ENV
from autograder.workers import guard as _guard

_AFTER_FORK = ("autograder.probing.tools", "autograder.workers.guard", "autograder.workers.seal",
               "autograder.workers.worker", "autograder.workers.compile_cache")


def test_a_zygote_holds_what_every_worker_imports_with_its_tally_bound():
    """Every worker imports these before its first probe; a zygote's ``worker_modules`` has them, and the probes'
    tally is bound to the result pipe its environment names (as in a worker that imported it itself)."""
    code = ("import json, sys\n"
            "from autograder.workers import zygote\n"
            "zygote.worker_modules()\n"
            "from autograder.probing import tools\n"
            "print(json.dumps({'held': [m for m in sys.argv[1:] if m in sys.modules],"
            " 'fd': tools.tally.__defaults__[0], 'big': [m for m in ('torch', 'jax') if m in sys.modules]}))\n")
    env = {**os.environ, TALLY_ENV: str(RESULT_FD)}
    out = subprocess.run([sys.executable, "-c", code, *_AFTER_FORK], cwd=ROOT, env=env, capture_output=True,
                         text=True, check=True, timeout=120)
    got = json.loads(out.stdout)
    assert got == {"held": list(_AFTER_FORK), "fd": RESULT_FD, "big": []}


def _by_kept(ns: dict) -> tuple[tuple, tuple]:
    """What the snapshot kept before it was made fast: one ``_kept`` call per entry."""
    rest = [(k, v) for k, v in list(ns.items()) if _guard._kept(v)]
    return tuple(k for k, _ in rest), tuple(v for _, v in rest)


class _Asked:
    """Records each time ``isinstance`` asks for its ``__class__`` (what a lazy proxy's property would run)."""

    log: list[str] = []

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def __class__(self):  # noqa: D401 - what isinstance reads when the type itself does not match
        _Asked.log.append(self.name)
        return types.ModuleType if self.name.startswith("mod") else object


class _CallableAsked(_Asked):
    def __call__(self) -> None:
        return None


def test_kept_entries_match_one_kept_call_per_entry():
    ns = {"f": len, "data": 3, "mod_a": _Asked("mod_a"), "cls": int, "text": "x", "sys": sys,
          "other": _Asked("other"), "call": _CallableAsked("call"), "mod_b": _Asked("mod_b"), "none": None}
    _Asked.log.clear()
    want = _by_kept(ns)
    asked_before = list(_Asked.log)
    _Asked.log.clear()
    got = _guard._kept_entries(ns)
    assert got[0] == want[0] == ("f", "mod_a", "cls", "sys", "call", "mod_b")
    assert all(a is b for a, b in zip(got[1], want[1], strict=True))
    # isinstance only for values that are not callable, in the dict's order (a callable proxy is never asked)
    assert _Asked.log == asked_before == ["mod_a", "other", "mod_b"]


def test_kept_entries_match_on_every_loaded_module():
    for name, mod in list(sys.modules.items()):
        ns = getattr(mod, "__dict__", None)
        if type(ns) is not dict:
            continue
        keys, values = _guard._kept_entries(ns)
        want_keys, want_values = _by_kept(ns)
        assert keys == want_keys, name
        assert all(a is b for a, b in zip(values, want_values, strict=True)), name


def test_snapshot_restores_a_library_callable_and_not_its_data():
    mod = types.ModuleType("tapetrace_test_library")
    mod.fn, mod.value = len, 1
    sys.modules[mod.__name__] = mod
    try:
        snap = _guard.Snapshot(_guard.grader_folder())
        mod.fn, mod.value = print, 2
        snap.restore()
        assert mod.fn is len and mod.value == 2
    finally:
        del sys.modules[mod.__name__]


def test_library_callables_are_kept_only_when_asked_and_then_as_at_once():
    """A plain file's worker keeps no library callable (it has no context to undo): ``libraries=False`` walks
    none, :meth:`keep_libraries` (called where a context will run) keeps what the full snapshot keeps."""
    mod = types.ModuleType("tapetrace_test_library")
    mod.fn = len
    sys.modules[mod.__name__] = mod
    try:
        full = _guard.Snapshot(_guard.grader_folder(), extra=_guard.WATCHED)
        lazy = _guard.Snapshot(_guard.grader_folder(), extra=_guard.WATCHED, libraries=False)
        assert lazy._restored == [] and lazy._modules == full._modules
        mod.fn = print
        lazy.restore()
        assert mod.fn is print  # nothing of the libraries kept: nothing put back
        mod.fn = len
        lazy.keep_libraries()
        assert [(n, k) for n, _, k, _ in lazy._restored] == [(n, k) for n, _, k, _ in full._restored]
        assert all(a is b for (*_, va), (*_, vb) in zip(lazy._restored, full._restored, strict=True)
                   for a, b in zip(va, vb, strict=True))
        mod.fn = print
        lazy.restore()
        assert mod.fn is len
    finally:
        del sys.modules[mod.__name__]
