"""The set-up cell's version check (autograder/student/stack.py), the shims (compat.py) and what the
self-check says on an unsupported stack. Fake package metadata throughout; tests/test_stacks.py runs
the notebook on real stacks."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib

import pytest

from autograder.builders import public as _public
from autograder.core.i18n import render
from autograder.core.paths import ROOT
from autograder.student import compat, stack

GOOD = {"torch": "2.13.0+cpu", "jax": "0.10.2", "jaxlib": "0.10.2", "flax": "0.12.8", "optax": "0.2.8",
        "numpy": "2.4.6", "matplotlib": "3.11.2", "ipython": "9.18.1"}


def test_pyproject_declares_exactly_the_measured_ranges():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {}
    for dep in meta["dependencies"]:
        m = re.fullmatch(r"([A-Za-z0-9_-]+)(.*)", dep.replace(" ", ""))
        declared[m.group(1).lower()] = m.group(2)
    for dist in stack.SUPPORTED:
        assert declared.get(dist) == stack.spec(dist), (dist, declared.get(dist))
    low, high = stack.PYTHON
    assert meta["requires-python"] == f">={low[0]}.{low[1]},<{high[0]}.{high[1]}"
    # our own install never resolves an unpinned (CUDA) torch: the cap stays at the release on disk
    assert stack.parse(stack.SUPPORTED["torch"][1]) <= (2, 15)


def test_constraints_pins_are_inside_the_ranges():
    pins = dict(line.split("==") for line in (ROOT / "constraints.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    assert stack.problems({d: v for d, v in pins.items() if d in stack.SUPPORTED}, python=(3, 11)) == []


@pytest.mark.parametrize(("version", "want"), [("2.13.0+cpu", (2, 13, 0)), ("0.5.0rc1", (0, 5, 0)), ("1.26", (1, 26)),
                                               ("2.0.0.dev20250101", (2, 0, 0))])
def test_parse(version, want):
    assert stack.parse(version) == want


def test_supported_stack_says_nothing(capsys):
    assert stack.check_stack("en", GOOD, python=(3, 12)) == []
    assert capsys.readouterr().out == ""
    assert stack.unsupported() == []


def test_floor_and_last_minor_are_inside_one_below_and_next_outside():
    floor = {d: low for d, (low, _) in stack.SUPPORTED.items()}
    assert stack.problems(floor, python=(3, 11)) == []
    assert [p.dist for p in stack.problems({**GOOD, "jax": "0.5.1", "jaxlib": "0.5.0"}, python=(3, 13))] == [
        "jax", "jaxlib"]
    assert [p.dist for p in stack.problems({**GOOD, "torch": "2.15.0"}, python=(3, 11))] == ["torch"]
    assert [p.dist for p in stack.problems(GOOD, python=(3, 10))] == ["python"]
    assert [p for p in stack.problems({**GOOD, "flax": None}, python=(3, 11))] == [
        stack.Problem("flax", None, stack.spec("flax"))]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_unsupported_stack_says_which_version_and_the_one_command(capsys, monkeypatch, lang):
    old = {**GOOD, "jax": "0.4.30", "jaxlib": "0.4.30", "numpy": "1.24.4"}
    monkeypatch.setattr(stack, "where", lambda: "colab")
    try:
        found = stack.check_stack(lang, old, python=(3, 11))
        out = capsys.readouterr().out
        assert [p.dist for p in found] == ["jax", "jaxlib", "numpy"]
        command = "!pip install 'jax>=0.5.2,<0.11' 'jaxlib>=0.5.1,<0.11' 'numpy>=1.26.4,<2.5'"
        assert stack.fix_command(found) == command
        assert command in out and "jax 0.4.30" in out and "numpy 1.24.4" in out
        assert out.startswith(render("stack.title", lang))
        assert ("Restart session" if lang == "en" else "Reiniciar sesión") in out
        # every self-check result on this stack says "unsupported versions", never INCORRECT
        tests = [{"name": "t", "points": 1.0, "passed": False, "code": "MISMATCH", "message": "wrong"}]
        res = _public.CheckResult("ex04_jax_mlp", _public._status(tests), tests, 1.0, 3.0, {"torch": "cpu", "jax": "cpu"})
        assert res.status == "unsupported versions"
        report = _public._report(res, lang)
        assert command in report and "wrong" not in report
        assert render("public.incorrect_one", lang, n=1) not in report
        assert ("UNSUPPORTED VERSIONS" if lang == "en" else "VERSIONES NO SOPORTADAS") in report
    finally:
        stack.FOUND.clear()


def test_python_outside_says_so_without_pip(capsys):
    try:
        found = stack.check_stack("en", GOOD, python=(3, 10))
        assert stack.fix_command(found) == ""
        assert "Python 3.10" in capsys.readouterr().out
        res = _public.CheckResult("ex01_torch_mlp", _public._status([]), [], 1.0, 3.0, {})
        assert res.status == "unsupported versions" and "pip" not in _public._report(res, "en")
    finally:
        stack.FOUND.clear()


def test_a_check_that_crashes_is_the_graders_trouble_never_incorrect():
    tests = [{"name": "a", "points": 1.0, "passed": True, "code": "", "message": ""},
             {"name": "b", "points": 1.0, "passed": False, "code": "INTERNAL_ERROR",
              "message": render("INTERNAL_ERROR", "en", error="AttributeError: no make_mesh")}]
    res = _public.CheckResult("ex13_spmd", _public._status(tests), tests, 2.0, 4.0, {})
    assert res.status == "grader trouble"
    report = _public._report(res, "en")
    assert "GRADER TROUBLE" in report and "INCORRECT" not in report


def test_the_check_reads_metadata_only():
    """Fast: the set-up cell's check imports no library (torch, jax, numpy) to read versions."""
    code = ("import sys; from autograder.student import stack; stack.check_stack('en');"
            "print([m for m in ('torch', 'jax', 'numpy', 'flax', 'optax', 'matplotlib') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert json.loads(out.strip().splitlines()[-1].replace("'", '"')) == []


def test_shard_map_shim_only_where_jax_lacks_it(monkeypatch):
    jax = pytest.importorskip("jax")
    assert compat.add_missing({"jax": "0.10.2"}) == []
    monkeypatch.delattr(jax, "shard_map")
    assert compat.add_missing({"jax": "0.10.2"}) == []  # metadata says it has one: nothing patched, nothing imported
    assert compat.add_missing({"jax": "0.5.2"}) == ["jax.shard_map"]
    assert jax.shard_map is compat.shard_map


def test_shard_map_shim_maps_like_jax_shard_map():
    jax = pytest.importorskip("jax")
    pytest.importorskip("jax.experimental.shard_map")
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import PartitionSpec as P

    mesh = jax.sharding.Mesh(np.array(jax.devices()[:1]), ("data",))
    x = jnp.arange(8.0)

    def f(xs):
        return jax.lax.pmean(jnp.mean(xs), "data")

    want = jax.shard_map(f, mesh=mesh, in_specs=(P("data"),), out_specs=P())(x)
    got = compat.shard_map(f, mesh=mesh, in_specs=(P("data"),), out_specs=P())(x)
    deco = compat.shard_map(mesh=mesh, in_specs=(P("data"),), out_specs=P())(f)(x)
    assert float(got) == float(want) == float(deco) == 3.5
    with pytest.raises(TypeError, match="mesh="):
        compat.shard_map(f, in_specs=(P("data"),), out_specs=P())


def test_checks_that_cannot_load_on_these_libraries_are_the_graders_trouble(tmp_path):
    """ex11/ex13's probes once crashed at import on an older torch/JAX: a traceback, or INCORRECT on a stub."""
    from autograder import builders
    from autograder.builders import notebook as _notebook

    nb = json.loads((builders.TEMPLATES["en"] / _notebook.NOTEBOOK).read_text(encoding="utf-8"))
    zip_path = tmp_path / _notebook.RUNTIME_FILE
    zip_path.write_bytes(_notebook.runtime_of(nb))
    code = f"""
import importlib, sys
sys.path.insert(0, {str(zip_path)!r})
real = importlib.import_module
def fake(name, *args, **kwargs):
    if name == "autograder.exercises.ex01_torch_mlp.probes":
        raise AttributeError("module 'torch.compiler' has no attribute 'is_compiling'")
    return real(name, *args, **kwargs)
importlib.import_module = fake
from autograder.builders import public
res = public.run("ex01", {{}}, lang="es")
print(res.status)
print(res.report)
"""
    proc = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    status, report = proc.stdout.split("\n", 1)
    assert status == "grader trouble"
    assert "PROBLEMA DEL CORRECTOR" in report and "is_compiling" in report and "INCORRECTO" not in report


def test_jax_random_bits_are_pinned_while_checking_and_restored_after():
    """ex08 blamed the student on a JAX whose default jax_threefry_partitionable differed from the snapshot's."""
    jax = pytest.importorskip("jax")
    from autograder.builders.public_student import pinned_precision

    before = jax.config.jax_threefry_partitionable
    try:
        jax.config.update("jax_threefry_partitionable", False)
        off = jax.random.bits(jax.random.PRNGKey(0), (4,))
        with pinned_precision():
            assert jax.config.jax_threefry_partitionable is True
            pinned = jax.random.bits(jax.random.PRNGKey(0), (4,))
        assert jax.config.jax_threefry_partitionable is False
        jax.config.update("jax_threefry_partitionable", True)
        assert (jax.random.bits(jax.random.PRNGKey(0), (4,)) == pinned).all() and not (off == pinned).all()
    finally:
        jax.config.update("jax_threefry_partitionable", before)


# ---- issue 56 item 7: an optional library never holds a check back; the advice fits where the student is
def test_no_matplotlib_nor_ipython_holds_no_check_back_and_says_nothing(capsys):
    """A TPU VM, a plain venv for check.py: torch, JAX, Flax and optax in range, no matplotlib (nor IPython)."""
    try:
        found = stack.check_stack("en", {**GOOD, "matplotlib": None, "ipython": None}, python=(3, 12), place="terminal")
        assert {p.dist for p in found} == {"matplotlib", "ipython"}
        assert capsys.readouterr().out == ""  # figure() names matplotlib itself, where it needs it
        assert stack.unsupported() == []
        passed = [{"name": "t", "points": 1.0, "passed": True, "code": "", "message": ""}]
        for ex in ("ex01_torch_mlp", "ex07_flax_cnn", "ex13_spmd"):
            assert _public._status(passed, dists=_public.libraries(ex)) == "passed", ex
    finally:
        stack.FOUND.clear()


def test_a_missing_library_holds_back_only_the_exercises_using_it(capsys):
    """No torch (a TPU VM): the JAX exercises are judged, the torch ones say which library to install."""
    assert _public.libraries("ex01_torch_mlp") == ("torch", "numpy")
    assert _public.libraries("ex04_jax_mlp") == ("jax", "jaxlib", "numpy")
    assert _public.libraries("ex07_flax_cnn") == ("jax", "jaxlib", "flax", "optax", "numpy")
    assert _public.libraries("ex10_bridge") == ("torch", "jax", "jaxlib", "flax", "optax", "numpy")
    try:
        stack.check_stack("en", {**GOOD, "torch": None}, python=(3, 12), place="terminal")
        out = capsys.readouterr().out
        assert "torch is not installed" in out and "for the exercises that use torch" in out, out
        failed = [{"name": "t", "points": 1.0, "passed": False, "code": "MISMATCH", "message": "wrong"}]
        assert _public._status(failed, dists=_public.libraries("ex04_jax_mlp")) == "incorrect"
        assert _public._status(failed, dists=_public.libraries("ex13_spmd")) == "incorrect"
        assert _public._status(failed, dists=_public.libraries("ex01_torch_mlp")) == "unsupported versions"
        assert _public._status(failed, dists=_public.libraries("ex06_per_example_grads")) == "unsupported versions"
    finally:
        stack.FOUND.clear()


ADVICE = {  # where -> (language -> words the advice must hold, words it must not)
    "colab": {"en": (["!pip install 'jax>=", "Runtime > Restart session"], ["check.py", "%pip"]),
              "es": (["!pip install 'jax>=", "Reiniciar sesión"], ["check.py", "%pip"])},
    "jupyter": {"en": (["%pip install 'jax>=", "restart the kernel"], ["Runtime >", "check.py", "!pip"]),
                "es": (["%pip install 'jax>=", "reinicia el núcleo"], ["Entorno de ejecución", "check.py", "!pip"])},
    "terminal": {"en": (['python -m pip install "jax>=', "in your terminal", "check.py"], ["Runtime >", "cell"]),
                 "es": (['python -m pip install "jax>=', "en tu terminal", "check.py"], ["Entorno de ejecución",
                                                                                        "celda"])},
}


@pytest.mark.parametrize("place", list(ADVICE))
@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_advice_fits_where_the_student_is(capsys, monkeypatch, place, lang):
    monkeypatch.setattr(stack, "where", lambda: place)
    want, avoid = ADVICE[place][lang]
    try:
        stack.check_stack(lang, {**GOOD, "jax": "0.4.30", "jaxlib": "0.4.30"}, python=(3, 12))
        said = capsys.readouterr().out
        tests = [{"name": "t", "points": 1.0, "passed": False, "code": "MISMATCH", "message": "wrong"}]
        res = _public.CheckResult("ex04_jax_mlp", _public._status(tests, dists=_public.libraries("ex04_jax_mlp")),
                                  tests, 1.0, 3.0, {"torch": "cpu", "jax": "cpu"})
        assert res.status == "unsupported versions"
        report = _public._report(res, lang)
        for text in (said, report):
            assert all(w in text for w in want), (place, text)
            assert not any(w in text for w in avoid), (place, text)
    finally:
        stack.FOUND.clear()


def test_python_outside_in_a_terminal_says_to_make_a_virtual_environment(capsys):
    try:
        stack.check_stack("en", GOOD, python=(3, 10), place="terminal")
        out = capsys.readouterr().out
        assert "virtual environment" in out and ">=3.11,<3.14" in out and "Colab" not in out, out
    finally:
        stack.FOUND.clear()


def test_where_reads_the_kernel_from_the_modules_loaded(monkeypatch):
    monkeypatch.delenv("COLAB_RELEASE_TAG", raising=False)
    for name in ("google.colab", "ipykernel"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    assert stack.where() == "terminal"
    monkeypatch.setitem(sys.modules, "ipykernel", object())
    assert stack.where() == "jupyter"
    monkeypatch.setitem(sys.modules, "google.colab", object())
    assert stack.where() == "colab"


@pytest.mark.parametrize("lang", ["en", "es"])
def test_figure_names_matplotlib_where_it_is_missing(capsys, monkeypatch, lang):
    from autograder.student import figures

    real = stack.installed
    monkeypatch.setattr(stack, "installed", lambda dists=tuple(stack.SUPPORTED): {
        **real(dists), **({"matplotlib": None} if "matplotlib" in dists else {})})
    monkeypatch.setattr(stack, "where", lambda: "jupyter")
    with pytest.raises(figures.PlottingMissing) as err:
        figures.figure("ex02", {}, lang=lang)
    message = str(err.value)
    assert "matplotlib" in message and "%pip install 'matplotlib>=" in message and "check()" in message, message
    assert figures.notebook_figure("ex02", {}, lang=lang) is None  # the notebook's figure cell: said, not raised
    assert capsys.readouterr().out.strip() == message
