""""Not attempted" means the stub's own raise, nothing else (issue 29).

A ``NotImplementedError`` raised by a library inside correct-looking code (JAX raises one for a
``shard_map`` that closes over inputs sharded on explicit axes, and its message names the fix), or a
student's own ``raise NotImplementedError("...")``, is an error of the code: reported with its message,
never as "not attempted — replace the stub body".
"""

from __future__ import annotations

import importlib.util
import sys
import types
from pathlib import Path

import pytest
from conftest import MUTANTS, make_submission

from autograder.core.i18n import catalogue
from autograder.workers.worker import is_stub_raise, run_probe

STUDENT = '''
from helper_lib import library_call


def stub_en(x):
    # YOUR CODE HERE
    raise NotImplementedError("ex05_jit_train_step: replace this line with your code")


def stub_es(x):
    raise NotImplementedError("ex05_jit_train_step: {es}")


def own_todo(x):
    raise NotImplementedError("todo: the momentum term")


def bare(x):
    raise NotImplementedError


def through_library(x):
    return library_call(x) + 1
'''

# A library (another file): raises with the stub's very words, still not the student's stub.
LIBRARY = '''
def library_call(x):
    raise NotImplementedError("ex05_jit_train_step: replace this line with your code")
'''


@pytest.fixture()
def student(tmp_path, monkeypatch):
    """The student's module (a real file, as in a worker) and its absolute path."""
    (tmp_path / "helper_lib.py").write_text(LIBRARY)
    path = tmp_path / "student_mod.py"
    path.write_text(STUDENT.format(es=catalogue("es")["stub.replace"]))
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = importlib.util.spec_from_file_location("student_mod", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    yield mod, str(path)
    sys.modules.pop("helper_lib", None)


def _probes(name: str) -> types.SimpleNamespace:
    return types.SimpleNamespace(probe_call=lambda mod: getattr(mod, name)(1))


@pytest.mark.parametrize("name", ["stub_en", "stub_es"])
def test_the_stubs_raise_is_not_attempted(student, name):
    mod, path = student
    resp = run_probe(_probes(name), mod, {"probe": "call"}, path)
    assert resp == {"ok": False, "kind": "not_attempted", "where": name}


@pytest.mark.parametrize("name, message", [
    ("own_todo", "todo: the momentum term"),
    ("bare", ""),
    ("through_library", "ex05_jit_train_step: replace this line with your code"),
])
def test_other_not_implemented_errors_are_errors_with_their_message(student, name, message):
    mod, path = student
    resp = run_probe(_probes(name), mod, {"probe": "call"}, path)
    assert resp["kind"] == "exception" and resp["type"] == "NotImplementedError", resp
    assert resp["message"] == message
    if name == "through_library":  # located at the student's line that called the library
        assert resp["where"]["code"] == "return library_call(x) + 1"


def test_is_stub_raise_needs_the_students_frame(student):
    mod, path = student
    try:
        mod.stub_en(1)
    except NotImplementedError as err:
        assert is_stub_raise(err, path)
        assert not is_stub_raise(err, str(Path(path).with_name("other.py")))


def test_jax_not_implemented_error_is_reported_with_its_message(run, tmp_path):
    """A per_device_mean_loss that closes over a sharded y: JAX's NotImplementedError, with its fix."""
    path = MUTANTS / "ex13_spmd" / "pdml_closes_over_targets.py"
    sub = make_submission(tmp_path / "sub", {"ex13_spmd": path.read_text()}, only=["ex13_spmd"])
    res = run.grade([str(sub)], only=["ex13_spmd"])[0]["exercises"]["ex13_spmd"]
    failed = {t["name"]: t for t in res["tests"] if not t["passed"]}
    assert {"pdml_matches", "pdml_shard_map_pmean"} <= set(failed), failed
    for t in (failed["pdml_matches"], failed["pdml_shard_map_pmean"]):
        assert t["code"] == "CALL_EXCEPTION", t
        assert "NotImplementedError: Closing over inputs to shard_map" in t["message"], t["message"]
        assert "pass those inputs as an argument to shard_map" in t["message"], t["message"]
        assert not t["message"].startswith("not attempted")
    assert not res["message"].startswith("not attempted")
