"""Round 6, class 5: what ``tapetrace build --out DIR`` wrote outside the checkout, read by a student.

The build writes the solution notebook (``DIR/solutions/``) and the otter zip (the hidden suites and the reference
solutions) wherever the instructor says. Once only the checkout's own ``dist/`` was private: after a build into
``/opt/course`` (``/opt`` was among the folders every worker read whole) a stub read the solution notebook and
scored 10/10, locally and on ``--cluster``. Now whatever the build writes is private wherever it lands: owner-only
modes, recorded in the instructor's record of builds (``autograder/core/build_record.py``) that every grading path
adds to what workers must not read, a narrower read set (no ``/opt``), and a build into a folder every worker reads
(``/usr``, ``/etc``, Python's folders, the engine's package) refused.

The attacks: ex01 whose code reads the build's solution notebook (``notebook``) or the zip's copy of the reference
solution (``zip``) by its path and runs it. The twin (``twin``): the same stub reading a copy of the notebook that
the test made beside the build (no output of a build, readable by any user): where the workers' read set reaches
that folder (namespaces without Landlock) it scores the maximum, so the attacks' zero is the privacy of the
build's outputs, not a stub that cannot work; where Landlock applies it scores 0 too (``/opt`` is no longer read).
The build's folder sits under ``/opt`` (the issue's example; ``/var/tmp`` where ``/opt`` is not writable), never
under ``/tmp``, which a worker with namespaces sees as its own.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.builders.build import solution_notebook_path, zip_name
from autograder.core import build_record as _record
from autograder.core.build_record import private_dirs
from autograder.core.paths import ROOT

from .attacklib import NO_SYS_ADMIN

EX = "ex01_torch_mlp"
HANG = 900  # seconds: a hang guard, never a speed requirement
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None or not sys.platform.startswith(
    "linux"), reason="needs root and setpriv (to drop CAP_SYS_ADMIN as Docker's default does)")

NOTEBOOK_STUB = '''import json
_nb = json.load(open({path!r}, encoding="utf-8"))
print(json.dumps(_nb)[:200])
for _cell in _nb["cells"]:
    _meta = _cell.get("metadata", {{}}).get("tapetrace", {{}})
    if _meta.get("exercise") == "ex01_torch_mlp" and _meta.get("role") == "answer":
        exec("".join(_cell["source"]))
'''
ZIP_STUB = '''import zipfile
with zipfile.ZipFile({path!r}) as _z:
    _code = _z.read("files/solutions/ex01_torch_mlp.py").decode()
print(_code[:200])
exec(_code)
'''


def _outside_folder(prefix: str) -> Path:
    """A folder of the test's under /opt (else /var/tmp), readable by any user as such folders usually are."""
    parent = "/opt" if os.access("/opt", os.W_OK) else "/var/tmp" if os.access("/var/tmp", os.W_OK) else None
    base = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    base.chmod(0o755)
    return base


def _build(out: Path, *extra: str) -> subprocess.CompletedProcess:
    """``tapetrace build`` of ex01's zip and the solution notebook into ``out``, unverified (2 s, not minutes)."""
    cmd = [sys.executable, "-m", "autograder.cli", "build", "--only", "otter", "--no-verify", "--exercises", EX,
           "--out", str(out), *extra]
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=HANG)


@pytest.fixture(scope="module")
def course():
    """``(base, out, twin)``: a build into ``base/course`` (made by the build) and, beside it, a copy of its
    solution notebook that the test made (``base/notes/...``, mode 0644: no output of a build)."""
    base = _outside_folder("tapetrace-r6-")
    out = base / "course"
    try:
        cp = _build(out)
        assert cp.returncode == 0, cp.stderr[-3000:]
        twin = base / "notes" / "tapetrace-solutions.ipynb"
        twin.parent.mkdir(mode=0o755)
        twin.write_bytes(solution_notebook_path(out, "en").read_bytes())
        twin.chmod(0o644)
        yield base, out, twin
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def klass(course, tmp_path_factory):
    """submission key -> its folder: the two attacks and the twin, each an ex01 stub."""
    _base, out, twin = course
    folder = tmp_path_factory.mktemp("r6-class")
    sources = {"notebook": NOTEBOOK_STUB.format(path=str(solution_notebook_path(out, "en"))),
               "zip": ZIP_STUB.format(path=str(out / zip_name("en"))),
               "twin": NOTEBOOK_STUB.format(path=str(twin))}
    subs = {}
    for key, source in sources.items():
        (folder / key).mkdir()
        (folder / key / f"{EX}.py").write_text(source)
        subs[key] = folder / key
    return subs


# --------------------------------------------------------------------------- the build's outputs, without a worker
def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_build_writes_owner_only_and_records_its_places(course):
    _base, out, _twin = course
    notebook, zipped = solution_notebook_path(out, "en"), out / zip_name("en")
    assert (_mode(out), _mode(notebook.parent)) == (0o700, 0o700)  # folders the build made
    assert (_mode(notebook), _mode(zipped)) == (0o600, 0o600)
    recorded = _record.places()
    for place in (notebook.parent, zipped):
        assert os.path.realpath(place) in recorded, (place, recorded)
    hidden = private_dirs()
    assert {os.path.realpath(notebook.parent), os.path.realpath(zipped), str(_record.RECORD.parent)} <= set(hidden)
    assert _mode(_record.RECORD) == 0o600 and _mode(_record.RECORD.parent) == 0o700


def test_a_build_over_world_readable_outputs_leaves_them_owner_only(course):
    """An older build's files (or anyone's) where the build writes: made private, not written through."""
    base, _out, _twin = course
    out = base / "again"
    for path in (solution_notebook_path(out, "en"), out / zip_name("en")):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
        path.write_text("old")
        path.chmod(0o644)
    out.chmod(0o755)
    cp = _build(out)
    assert cp.returncode == 0, cp.stderr[-3000:]
    notebook = solution_notebook_path(out, "en")
    assert (_mode(notebook), _mode(out / zip_name("en")), _mode(notebook.parent)) == (0o600, 0o600, 0o700)
    assert _mode(out) == 0o755  # the instructor's own folder: its mode is theirs, the build's files are private
    assert {os.path.realpath(notebook.parent), os.path.realpath(out / zip_name("en"))} <= set(_record.places())


@pytest.mark.parametrize("where", ["/usr/local/share/tapetrace-r6-course", "/etc/tapetrace-r6-course",
                                   os.path.join(sys.prefix, "tapetrace-r6-course"),
                                   str(ROOT / "autograder" / "tapetrace-r6-course")])
def test_the_build_refuses_a_place_every_worker_reads(where, capsys):
    from autograder.cli import build as _build_cli

    assert not os.path.lexists(where)
    assert _build_cli.main(["--only", "otter", "--no-verify", "--exercises", EX, "--out", where]) == 2
    err = capsys.readouterr().err
    assert "student workers may read" in err and where in err and len(err.strip().splitlines()) == 1, err
    assert not os.path.lexists(where)


def test_the_build_refuses_a_place_holding_what_workers_need(tmp_path, monkeypatch, capsys):
    """A self-study edition (the solutions inside) into a folder holding a library folder workers import from:
    hiding it would stop every worker, not hiding it would let them read the solutions."""
    from autograder.cli import build as _build_cli

    (tmp_path / "lib").mkdir()
    monkeypatch.setenv("TAPETRACE_WORKER_PYTHONPATH", str(tmp_path / "lib"))
    assert _build_cli.main(["--self-study", "--template", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "holds what student workers need" in err and str(tmp_path) in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lib"]
    assert str(tmp_path) not in _record.places()


def test_the_workers_read_set_leaves_out_opt():
    """The least a worker needs: the system's libraries and settings, Python's folders, the engine's package;
    never /opt whole (a course's folder, vendors' trees), nor /var or /srv."""
    from autograder.sandbox.isolate import worker_reads

    assert worker_reads("/usr/lib/x") == "/usr" and worker_reads("/etc/x") == "/etc"
    assert worker_reads(os.path.join(sys.prefix, "x")) is not None
    python = [os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)]
    for place in ("/opt/course/solutions", "/var/tmp/course", "/srv/course", str(ROOT / "dist" / "x")):
        if not any(place.startswith(p + "/") for p in python):
            assert worker_reads(place) is None, place


def test_a_damaged_record_refuses_to_say_nothing_is_private(tmp_path, monkeypatch, capsys):
    """Fail closed: a record that cannot be read is never an empty one (grading and the build stop, naming it)."""
    from autograder.cli import build as _build_cli
    from autograder.cli.app import main as _tapetrace

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / f"{EX}.py").write_text("x = 1\n")
    bad = tmp_path / "record.json"
    monkeypatch.setattr(_record, "RECORD", bad)
    assert _record.places() == []  # none yet: nothing was built outside dist/
    for text in ("{", '{"places": "/opt/course"}', '{"places": ["relative/path"]}', '["/opt/x"]', "\ud800"):
        bad.write_text(text, encoding="utf-8", errors="surrogatepass")
        with pytest.raises(_record.BuildRecordError, match=str(bad)):
            _record.places()
        with pytest.raises(_record.BuildRecordError):
            private_dirs()
        assert _build_cli.main(["--only", "otter", "--no-verify", "--exercises", EX, "--out",
                                str(tmp_path / "out")]) == 2
        assert not (tmp_path / "out").exists()
        capsys.readouterr()
        assert _tapetrace(["grade", str(tmp_path / "sub"), "--only", EX, "--json", str(tmp_path / "r.json")]) == 2
        err = capsys.readouterr().err
        assert str(bad) in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "r.json").exists(), err
    bad.write_text('{"version": 1, "places": []}')
    bad.chmod(0o666)  # another user could have emptied it
    with pytest.raises(_record.BuildRecordError, match="other users"):
        _record.places()


# --------------------------------------------------------------------------- graded, on every path and level
def _grade(klass, tmp: Path, *extra: str, prefix: list[str] | None = None) -> tuple[subprocess.CompletedProcess,
                                                                                    dict[str, dict]]:
    out = tmp / "r.json"
    cmd = [*(prefix or []), sys.executable, "-m", "autograder.cli", "grade", *map(str, klass.values()), "--only", EX,
           "--device", "cpu", "--seed", "7", "--json", str(out), *extra]
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=HANG, cwd=ROOT)
    rows = {r["submission"]: r for r in json.loads(out.read_text())} if out.exists() else {}
    return cp, {key: rows.get(str(path), {}) for key, path in klass.items()}


def _check(cp: subprocess.CompletedProcess, rows: dict[str, dict], level: str, twin_reads: bool) -> None:
    """Neither attack read a build's output, at ``level``; the twin scored the maximum where it may read its file."""
    assert cp.returncode in (0, 1), cp.stderr[-3000:]
    for key in ("notebook", "zip"):
        ex = rows[key]["exercises"][EX]
        assert ex["score"] == 0 and ex["max_score"] > 0, (key, ex)
        assert rows[key]["isolation"]["level"] == level, rows[key]["isolation"]
    twin = rows["twin"]["exercises"][EX]
    assert twin["score"] == (twin["max_score"] if twin_reads else 0), twin


LOCAL = [pytest.param([], "", "full", False, id="namespaces-landlock"),
         pytest.param([], "landlock", "full", True, id="namespaces-no-landlock"),
         pytest.param(NO_SYS_ADMIN, "", "container", False, id="no_sys_admin-landlock", marks=ROOT_ONLY)]


@pytest.mark.parametrize(("prefix", "skip", "level", "twin_reads"), LOCAL)
def test_grade_keeps_the_build_private(klass, tmp_path, prefix, skip, level, twin_reads):
    cp, rows = _grade(klass, tmp_path, "--sandbox-skip", skip, prefix=prefix)
    _check(cp, rows, level, twin_reads)


def test_cluster_keeps_the_build_private(klass, tmp_path):
    """``--cluster local:1`` without Landlock: the build's places are hidden in the Dask worker's student workers."""
    pytest.importorskip("distributed", reason="Dask distributed is not installed (tapetrace[cluster])")
    cp, rows = _grade(klass, tmp_path, "--cluster", "local:1", "--sandbox-skip", "landlock")
    _check(cp, rows, "full", True)
