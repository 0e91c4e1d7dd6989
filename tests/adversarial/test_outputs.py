"""Copying a classmate's results: the run's own outputs (its ``--json`` checkpoint, the ``--resume`` file,
``--csv``, ``--feedback``) are kept from every student worker, as the submissions are.

The results sit where a worker must read: the engine's checkout, the folder a ``python -m`` run starts in
(on ``sys.path``), as an instructor's ``--json results.json`` does. A submission with no code of its own reads
the file ``--resume`` starts from, which holds a classmate's row. Once it could (Landlock allowed all of a
``sys.path`` folder, namespaces hid nothing of it); now it reads nothing at every level the run accepts, or the
run records the weaker level and says so. Graded with ex01 only: one run grades the classmate, then each level (and ``--cluster``) grades the
attacker alone (``--resume``: its resume file exists before any worker starts, so no timing is involved).

The class lives under /var/tmp, not /tmp: a worker with namespaces mounts a private /tmp.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.core.paths import ROOT, SOLUTIONS
from autograder.engine.reading import output_places

from .attacklib import NO_SYS_ADMIN

EX = "ex01_torch_mlp"
HANG = 600  # seconds: a hang guard, never a speed requirement
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None or not sys.platform.startswith(
    "linux"), reason="needs root and setpriv (to drop CAP_SYS_ADMIN as Docker's default does)")
# A student's answer, then code that reads each of ``paths`` (a file, or every file of a folder) and fails loudly
# where it finds ``marker``: what the run wrote about other students.
ATTACK = """

import os as _os
for _p in {paths!r}:
    try:
        _files = [_os.path.join(_p, _n) for _n in _os.listdir(_p)] if _os.path.isdir(_p) else [_p]
    except OSError:
        _files = []
    for _f in _files:
        try:
            with open(_f) as _h:
                _seen = _h.read()
        except OSError:
            _seen = ""
        if {marker!r} in _seen:
            raise RuntimeError("LEAKED " + _f)
"""


def test_outputs_are_hidden_with_their_folder_or_alone(tmp_path):
    """An output's own folder where hiding it breaks nothing; alone where its folder holds what a worker needs
    (the engine's checkout, ``tmp`` here); a folder output (``--feedback``) whole."""
    (tmp_path / "results").mkdir()
    (tmp_path / "feedback").mkdir()
    tmp = str(tmp_path / "run")
    places = output_places([str(tmp_path / "results" / "r.json"), str(ROOT / "r.json"), None,
                            str(tmp_path / "feedback"), str(tmp_path / "run" / "r.csv")], tmp)
    assert places == sorted([str(tmp_path / "results"), str(ROOT / "r.json"), str(tmp_path / "feedback"),
                             str(tmp_path / "run" / "r.csv")])


def _grade(subs: list[Path], out: Path, *extra: str, prefix: list[str] | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(ROOT)
    cmd = [*(prefix or []), sys.executable, "-m", "autograder.cli", "grade", *map(str, subs), "--only", EX,
           "--device", "cpu", "--seed", "7", "--json", str(out), *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=HANG, cwd=ROOT, env=env)


@pytest.fixture(scope="module")
def graded():
    """``(base folder, the classmate's folder, the results file holding its row)``."""
    base = Path(tempfile.mkdtemp(prefix="tapetrace-outputs-", dir="/var/tmp" if os.path.isdir("/var/tmp") else None))
    base.chmod(0o755)
    alice = base / "class" / "alice"
    alice.mkdir(parents=True)
    (alice / f"{EX}.py").write_text((SOLUTIONS / f"{EX}.py").read_text())
    first = base / "first" / "r.json"
    first.parent.mkdir()
    cp = _grade([alice], first)
    assert cp.returncode == 0 and first.exists(), cp.stderr[-3000:]
    yield base, alice, first
    shutil.rmtree(base, ignore_errors=True)


LEVELS = [pytest.param([], [], id="namespaces-landlock"),
          pytest.param([], ["--sandbox-skip", "landlock"], id="namespaces-no-landlock"),
          pytest.param(NO_SYS_ADMIN, [], id="no_sys_admin-landlock", marks=ROOT_ONLY),
          pytest.param([], ["--cluster", "local:1"], id="cluster-namespaces-landlock")]


@pytest.mark.parametrize(("prefix", "extra"), LEVELS)
def test_the_resume_file_is_kept_from_a_classmate(graded, request, prefix, extra):
    base, alice, first = graded
    if "--cluster" in extra:
        pytest.importorskip("distributed", reason="Dask distributed is not installed (tapetrace[cluster])")
    name = f"level-{len(prefix)}-{'-'.join(x.strip('-').replace(':', '') for x in extra)}"
    fd, where = tempfile.mkstemp(prefix=".tapetrace-test-results-", suffix=".json", dir=ROOT)  # gitignored
    os.close(fd)
    out = Path(where)
    request.addfinalizer(lambda: [p.unlink(missing_ok=True) for p in (out, out.with_name(out.stem + ".receipt.json"))])
    shutil.copy(first, out)
    out.chmod(0o644)  # as an earlier run, or a copy, may have left it
    fd, where = tempfile.mkstemp(prefix=".tapetrace-test-results-", suffix=".json", dir=ROOT)
    os.close(fd)
    earlier = Path(where)  # another run's results kept in the checkout, named by no option of this run
    request.addfinalizer(lambda: earlier.unlink(missing_ok=True))
    shutil.copy(first, earlier)
    earlier.chmod(0o644)
    # with Landlock, the checkout is listed, not read: nothing there but the engine (and its venv) is readable;
    # without it, only what the run names is hidden (docs/security.md: Landlock keeps out what no list names)
    paths = [str(out)] if "landlock" in extra else [str(out), str(earlier)]
    mallory = base / "class" / f"mallory-{name}"
    mallory.mkdir()
    (mallory / f"{EX}.py").write_text((SOLUTIONS / f"{EX}.py").read_text() + ATTACK.format(paths=paths, marker="submission"))
    cp = _grade([alice, mallory], out, "--resume", *extra, prefix=prefix)
    assert cp.returncode == 0, cp.stderr[-3000:]
    rows = {r["submission"]: r for r in json.loads(out.read_text())}
    row = rows[str(mallory)]
    ex = row["exercises"][EX]
    iso = row["isolation"]
    if iso.get("outputs_readable"):  # without Landlock and a uid of its own: recorded, lowered and said
        assert iso["outputs_readable"] == [str(out)] and iso["level"] == "minimal", iso
        assert "folder of their own" in cp.stderr, cp.stderr[-2000:]
    else:
        assert ex["score"] == ex["max_score"] > 0, ex
    assert out.stat().st_mode & 0o077 == 0  # rewritten for its owner only




def test_every_declared_output_is_kept_from_a_student(graded, request):
    """Every output ``grade`` declares (autograder/reports/outputs.py: ``--json`` and its receipt, ``--csv``,
    ``--feedback``, and any added later) is out of a student worker's reach, each where it is hardest to hide:
    beside the engine, in its checkout. An earlier run's copies hold a classmate's data before any worker starts
    (nothing is rewritten while the lone submission's worker runs: no timing is involved). Without Landlock
    (which keeps out of the checkout what no list names), so that only the run's hide list keeps them: an
    output left off it is read."""
    extra = ["--sandbox-skip", "landlock"]
    import argparse

    from autograder.reports import outputs as _outputs

    base, _alice, _first = graded
    fd, where = tempfile.mkstemp(prefix=".tapetrace-test-results-", dir=ROOT)  # gitignored
    os.close(fd)
    stem = Path(where)
    flags = {o.name: f"{stem}.{o.name}" for o in _outputs.GRADE_OUTPUTS if o.flag}
    places = _outputs.paths(argparse.Namespace(**flags))
    request.addfinalizer(lambda: [shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) else
                                  Path(p).unlink(missing_ok=True) for p in [str(stem), *filter(None, places.values())]])
    folders = {o.name for o in _outputs.GRADE_OUTPUTS if o.folder}
    for name, path in places.items():
        assert path, name  # every declared output has a path once its options are given
        target = Path(path) / "alice.md" if name in folders else Path(path)
        target.parent.mkdir(exist_ok=True)
        target.write_text('{"submission": "classmate", "score": 10}')
        target.chmod(0o644)
    hidden = [places[o.name] for o in _outputs.GRADE_OUTPUTS if o.hidden_from_students]
    mallory = base / "class" / "mallory-declared"
    mallory.mkdir()
    (mallory / f"{EX}.py").write_text((SOLUTIONS / f"{EX}.py").read_text() + ATTACK.format(paths=hidden, marker="classmate"))
    cmd = [sys.executable, "-m", "autograder.cli", "grade", str(mallory), "--only", EX, "--device", "cpu",
           "--seed", "7", "--jobs", "1", *extra,
           *[arg for o in _outputs.GRADE_OUTPUTS if o.flag for arg in (o.flag, flags[o.name])]]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(ROOT)
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=HANG, cwd=ROOT, env=env)
    assert cp.returncode == 0, cp.stderr[-3000:]
    row = json.loads(Path(flags["json"]).read_text())
    row = row[0] if isinstance(row, list) else row
    ex = row["exercises"][EX]
    assert "LEAKED" not in json.dumps(ex), ex
    assert ex["score"] == ex["max_score"] > 0, ex


def test_regrade_keeps_the_class_results_from_a_classmate(graded, request):
    """``tapetrace regrade OLD.json``: the class's earlier results lie beside the engine while a submission is
    graded again (once read by the regraded submission's worker)."""
    base, alice, first = graded
    fd, where = tempfile.mkstemp(prefix=".tapetrace-test-results-", suffix=".json", dir=ROOT)  # gitignored
    os.close(fd)
    old = Path(where)
    request.addfinalizer(lambda: old.unlink(missing_ok=True))
    mallory = base / "class" / "mallory-regrade"
    mallory.mkdir()
    (mallory / f"{EX}.py").write_text((SOLUTIONS / f"{EX}.py").read_text() + ATTACK.format(paths=[str(old)], marker="submission"))
    row = json.loads(first.read_text())
    old.write_text(json.dumps([row, {**row, "submission": str(mallory)}]))
    new = base / "regraded" / "r.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(ROOT)
    cmd = [sys.executable, "-m", "autograder.cli", "regrade", str(old), str(mallory), "--all", "--json", str(new),
           "--device", "cpu", "--quiet"]
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=HANG, cwd=ROOT, env=env)
    assert cp.returncode == 0, cp.stderr[-3000:]
    got = {r["submission"]: r for r in json.loads(new.read_text())}[str(mallory)]
    ex = got["exercises"][EX]
    assert ex["score"] == ex["max_score"] > 0, ex  # nothing rewritten while it grades: a mount holds it too
