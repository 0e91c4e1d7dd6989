"""Copying a classmate: a submission with no code of its own reads another student's submission.

A class of more than :data:`MAX_HIDE` folders, one per student (``class/s000/...``), as an instructor keeps
it. The attacker's exercise is one line that runs a classmate's solution file (its path known, as a
classmate's user name and the assignment's file name are). Whatever keeps submissions from each other
must hold without Landlock on every path (``tapetrace grade``, ``--cluster``, the pytest entry) at every
isolation level the run accepts: the attacker scores 0, or the run records the weaker level and says so
(``--require-isolation container`` then refuses), or it refuses. Graded with ex01 only; the other
classmates hold no exercise (their rows are ``missing``: no worker starts for them).

The class lives under /var/tmp, not /tmp: a worker with namespaces mounts a private /tmp, where a class
would be out of its sight whatever the engine hides (the attack could not succeed, the test not fail).
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

from autograder.core.paths import ROOT, SOLUTIONS
from autograder.engine.reading import MAX_HIDE, HideRefused, covers_needed, hide_places
from autograder.sandbox import isolate as _sandbox
from autograder.sandbox.privileges import reachable_by_others

from .attacklib import NO_SYS_ADMIN

EX = "ex01_torch_mlp"
SIZE = MAX_HIDE + 44  # past the old limit, where the cluster's list became [] and each task hid its own folder
HANG = 900  # seconds: a hang guard, never a speed requirement
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None or not sys.platform.startswith(
    "linux"), reason="needs root and setpriv (to drop CAP_SYS_ADMIN as Docker's default does)")


def _var_tmp(prefix: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=prefix, dir="/var/tmp" if os.path.isdir("/var/tmp") else None))


def _notebook(path: Path, exercise: str | None, source: str) -> None:
    cells = [{"cell_type": "markdown", "metadata": {}, "source": [f"## {exercise or 'notes'}"]}]
    if exercise:
        cells.append({"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                      "source": source.splitlines(keepends=True)})
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}))


@pytest.fixture(scope="module")
def klass():
    """``(class folder, attacker, victim, every submission)``: ``class/sNNN/work.ipynb``, all readable by any
    user (as a shared folder often is); the attacker is ``s000``, its victim ``s150``."""
    base = _var_tmp("tapetrace-class-")
    base.chmod(0o755)
    folder = base / "class"
    subs = []
    for i in range(SIZE):
        d = folder / f"s{i:03d}"
        d.mkdir(parents=True)
        _notebook(d / "work.ipynb", None, "")
        subs.append(str(d / "work.ipynb"))
    victim = folder / f"s{SIZE // 2:03d}" / "work.ipynb"
    _notebook(victim, EX, (SOLUTIONS / f"{EX}.py").read_text())
    attacker = folder / "s000" / "work.ipynb"
    _notebook(attacker, EX, f"import json\nexec(''.join(json.load(open({str(victim)!r}))['cells'][1]['source']))\n")
    for p in [folder, *folder.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    yield folder, attacker, victim, subs
    shutil.rmtree(base, ignore_errors=True)


# --------------------------------------------------------------------------- the places, without a worker
def test_a_class_of_any_size_is_one_folder(klass):
    folder, _, _, subs = klass
    assert hide_places(subs, "/tmp/tapetrace-run-x") == [str(folder.parent)]  # below /var/tmp, a system folder


def test_places_never_hold_what_a_worker_needs(tmp_path):
    run_tmp = str(tmp_path / "tapetrace-run-x")
    beside_engine = [str(ROOT / "solutions"), str(ROOT / "examples" / "a.ipynb")]
    places = hide_places(beside_engine, run_tmp)
    assert places == [str(ROOT / "examples"), str(ROOT / "solutions")]  # never ROOT, which holds the engine
    home = os.path.expanduser("~")
    assert hide_places([f"{home}/x.ipynb", f"{home}/y.ipynb"], run_tmp) == [f"{home}/x.ipynb", f"{home}/y.ipynb"]
    assert hide_places([f"{home}/c/a/w.py", f"{home}/c/b/w.py"], run_tmp) == [f"{home}/c"]
    assert hide_places(["/usr/local/a/s", "/usr/local/b/s"], run_tmp) == ["/usr/local/a", "/usr/local/b"]
    assert hide_places(["/var/tmp/k/a"], run_tmp) == ["/var/tmp/k"]  # /var/tmp itself: never
    assert hide_places(["/srv/k/a/w.py", "/srv/k"], run_tmp) == ["/srv"]  # one place, never "/"
    under_tmp = [f"{tmp_path}/c/{n}/w.py" for n in "ab"]
    assert str(tmp_path).startswith(tempfile.gettempdir() + os.sep)
    assert all(not covers_needed(p, run_tmp) for p in hide_places(under_tmp, run_tmp))
    assert covers_needed(str(ROOT), run_tmp) and covers_needed(sys.prefix, run_tmp) and covers_needed("/", run_tmp)


def test_too_many_places_refuse_never_an_empty_list():
    many = [f"/usr/local/d{i}/s" for i in range(MAX_HIDE + 1)]  # in a system tree: folder by folder
    with pytest.raises(HideRefused, match=f"more than {MAX_HIDE}"):
        hide_places(many, "/tmp/tapetrace-run-x")
    assert len(hide_places(many[:MAX_HIDE], "/tmp/tapetrace-run-x")) == MAX_HIDE


def test_an_enterable_class_folder_gives_away_guessable_names():
    """Without namespaces nor Landlock only file modes keep a classmate out: a class folder others may enter
    but not list (0711) still lets them open ``s150/ex01_torch_mlp.py`` by name."""
    base = _var_tmp("tapetrace-modes-")
    try:
        base.chmod(0o755)
        folder = base / "class"
        (folder / "bob").mkdir(parents=True)
        (folder / "bob" / "w.py").write_text("x = 1\n")
        (folder / "bob").chmod(0o755)
        got = {"network_dropped": False, "pid_namespace": False, "read_only_filesystem": False,
               "private_dirs_hidden": False, "capabilities_dropped": True, "landlock": 0, "seccomp": True,
               "uid": 300000}
        for mode, exposed in ((0o711, True), (0o755, True), (0o700, False), (0o750, False)):
            folder.chmod(mode)
            assert reachable_by_others(str(folder)) is exposed, oct(mode)
            record = dict(got)
            _sandbox._guarantees(record, [str(folder)])
            assert record["private_files_unreadable"] is not exposed and (record["level"] == "minimal") is exposed
        folder.chmod(0o711)
        (folder / "bob" / "w.py").chmod(0o600)  # every file private: nothing to read by name
        assert not reachable_by_others(str(folder))
        assert reachable_by_others(str(folder), limit=0)  # cannot tell: yes
    finally:
        shutil.rmtree(base, ignore_errors=True)


# --------------------------------------------------------------------------- graded, on every path and level
def _grade(klass, tmp: Path, *extra: str, prefix: list[str] | None = None) -> tuple[subprocess.CompletedProcess, dict]:
    folder, attacker, _, subs = klass
    out = tmp / "r.json"
    cmd = [*(prefix or []), sys.executable, "-m", "autograder.cli", "grade", *subs, "--only", EX, "--device", "cpu",
           "--seed", "7", "--json", str(out), *extra]
    cp = subprocess.run(cmd, capture_output=True, text=True, timeout=HANG, cwd=ROOT)
    rows = {r["submission"]: r for r in json.loads(out.read_text())} if out.exists() else {}
    return cp, rows.get(str(attacker), {})


def _contained(cp: subprocess.CompletedProcess, row: dict, level: str) -> None:
    """The attacker read nothing, at ``level``."""
    assert cp.returncode in (0, 1), cp.stderr[-3000:]
    ex = row["exercises"][EX]
    assert ex["score"] == 0 and ex["max_score"] > 0, ex
    assert row["isolation"]["level"] == level, row["isolation"]


LOCAL = [pytest.param([], [], "full", id="namespaces-no-landlock"),
         pytest.param(NO_SYS_ADMIN, [], "container", id="no_sys_admin-landlock", marks=ROOT_ONLY)]


@pytest.mark.parametrize(("prefix", "skip", "level"), LOCAL)
def test_grade_keeps_the_class_apart(klass, tmp_path, prefix, skip, level):
    cp, row = _grade(klass, tmp_path, "--sandbox-skip", "landlock" if level == "full" else "", prefix=prefix)
    _contained(cp, row, level)


@ROOT_ONLY
def test_without_namespaces_nor_landlock_the_weaker_level_is_recorded_and_refusable(klass, tmp_path):
    """Docker's default privileges and an old kernel: only the class's file modes remain. Here they let any
    user read it, so the attacker may read its classmate: the rows say ``minimal`` (private files NOT
    guaranteed unreadable), the run says so, and ``--require-isolation container`` grades nothing."""
    cp, row = _grade(klass, tmp_path, "--sandbox-skip", "landlock", prefix=NO_SYS_ADMIN)
    assert cp.returncode in (0, 1), cp.stderr[-3000:]
    iso = row["isolation"]
    if row["exercises"][EX]["score"] > 0:
        assert iso["level"] == "minimal" and iso["private_files_unreadable"] is False, iso
    assert iso["level"] != "minimal" or "NOT guaranteed: private files unreadable" in cp.stderr, cp.stderr[-2000:]
    cp, row = _grade(klass, tmp_path / "strict", "--sandbox-skip", "landlock", "--require-isolation", "container",
                     prefix=NO_SYS_ADMIN)
    if iso["level"] == "minimal":
        assert cp.returncode not in (0, 1) and "--require-isolation container" in cp.stderr and not row, cp.stderr


def test_cluster_keeps_the_class_apart(klass, tmp_path):
    """``--cluster local:1`` without Landlock: the client sends the class's one folder with every task (the old
    list was [] past 256 places, and each task hid only its own submission's folder)."""
    pytest.importorskip("distributed", reason="Dask distributed is not installed (tapetrace[cluster])")
    cp, row = _grade(klass, tmp_path, "--cluster", "local:1", "--sandbox-skip", "landlock")
    _contained(cp, row, "full")


def test_pytest_entry_keeps_the_class_apart(klass, tmp_path):
    """The pytest entry grades one submission: it hides the folder of its classmates too, not its own alone."""
    _, attacker, victim, _ = klass
    assert stat.S_IMODE(victim.stat().st_mode) & 0o004  # the classmate's file: readable by any user
    xml = tmp_path / "j.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(ROOT)
    cmd = [sys.executable, "-m", "pytest", "-p", "autograder.pytest_plugin", f"--tapetrace-submission={attacker}",
           "--tapetrace-device", "cpu", "--tapetrace-seed", "7", "--tapetrace-sandbox-skip", "landlock",
           "-p", "no:cacheprovider", "-o", f"cache_dir={tmp_path / 'cache'}", "-k", "ex01", f"--junitxml={xml}"]
    cp = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=HANG)
    assert xml.exists(), cp.stdout[-3000:] + cp.stderr[-3000:]
    cases = [c for c in __import__("xml.etree.ElementTree", fromlist=["x"]).parse(xml).getroot().iter("testcase")]
    assert cases and all(c.find("failure") is not None or c.find("error") is not None for c in cases), cp.stdout[-3000:]


def test_grade_refuses_submissions_it_cannot_hide(tmp_path):
    """Notebooks loose in a folder a worker needs (here on ``sys.path``): each is a place of its own; past
    MAX_HIDE of them the run grades nothing and says why in one line (the cluster's client did the same with
    an empty list: every classmate visible)."""
    loose = _var_tmp("tapetrace-loose-")
    try:
        subs = []
        for i in range(MAX_HIDE + 1):
            _notebook(loose / f"s{i:03d}.ipynb", None, "")
            subs.append(str(loose / f"s{i:03d}.ipynb"))
        out = tmp_path / "r.json"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(loose)]))
        cp = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", *subs, "--only", EX, "--device", "cpu",
                             "--json", str(out)], capture_output=True, text=True, timeout=HANG, cwd=ROOT, env=env)
        assert cp.returncode not in (0, 1), cp.stderr[-2000:]
        said = [line for line in cp.stderr.splitlines() if f"more than {MAX_HIDE}" in line]
        assert len(said) == 1 and "folder of their own" in said[0], cp.stderr[-2000:]
        assert not out.exists() or json.loads(out.read_text()) == []
    finally:
        shutil.rmtree(loose, ignore_errors=True)


def test_a_place_chosen_on_the_client_is_carved_around_what_this_machine_needs(tmp_path):
    """A Dask worker whose temporary folder lies under the client's class folder hides all of the folder
    but the way to its own: never the folder whole (its workers could not start), never nothing (a leak)."""
    from autograder.engine.reading import carve

    cls = tmp_path / "class"
    for name in ("alice", "bob", "carol"):
        (cls / name).mkdir(parents=True)
        (cls / name / "work.ipynb").write_text("{}")
    (cls / "roster.csv").write_text("x")
    own = cls / "worker" / "tmp"
    own.mkdir(parents=True)
    (cls / "worker" / "notes").mkdir()
    (cls / "link").symlink_to(cls / "alice")
    run_tmp = str(tmp_path / "run")
    got = carve([str(cls)], run_tmp, extra_needed=[str(own)])
    assert got == sorted(str(cls / n) for n in ("alice", "bob", "carol", "roster.csv", "worker/notes"))
    assert carve([str(cls / "alice")], run_tmp, extra_needed=[str(own)]) == [str(cls / "alice")]
    with pytest.raises(HideRefused, match="need"):
        carve([str(own)], run_tmp, extra_needed=[str(own)])
    from autograder.engine.reading import MAX_CARVE

    for i in range(MAX_HIDE + 1):  # a busy scratch beside the worker's own folder: carved, one place each
        (cls / "worker" / f"f{i:04d}").write_text("")
    assert len(carve([str(cls)], run_tmp, extra_needed=[str(own)])) == 5 + MAX_HIDE + 1
    for i in range(MAX_HIDE + 1, MAX_CARVE + 1):
        (cls / "worker" / f"f{i:04d}").write_text("")
    with pytest.raises(HideRefused, match=str(MAX_CARVE)):
        carve([str(cls)], run_tmp, extra_needed=[str(own)])
