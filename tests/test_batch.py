"""Batch grading through the CLI: forms mixed, --jobs, outputs, --resume, Ctrl-C, exit codes, load.

Grading here uses ex01 only (the cheapest exercise), so the tests stay short
whatever else is installed; what they check (rows, files, signals, processes)
does not depend on the exercise.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from conftest import SEED, make_submission

from autograder import cli
from autograder.core.paths import EXERCISES_DIR, ROOT, SOLUTIONS

EX = "ex01_torch_mlp"
pytestmark = pytest.mark.skipif(importlib.util.find_spec(f"autograder.hidden.{EX}") is None,
                                reason="ex01's hidden suite is not installed")
ATTACKS = ROOT / "tests" / "adversarial" / "attacks"
MUTANTS = ROOT / "tests" / "mutants" / EX


def tapetrace(*args: str, timeout: float = 600, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, **kw)


def notebook(path: Path, source: str) -> Path:
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": [f"## {EX}"]},
                    {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                     "source": source.splitlines(keepends=True)}],
          "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb))
    return path


def zipped(path: Path, folder: Path) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for f in folder.iterdir():
            zf.write(f, f"{folder.name}/{f.name}")
    return path


def solution_dir(path: Path) -> Path:
    return make_submission(path, only=[EX])


def code_dir(path: Path, source: str) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    (path / f"{EX}.py").write_text(source)
    return path


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (by parent links in /proc)."""
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            stat = Path(f"/proc/{d}/stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(d))
    out, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            if c not in out:
                out.add(c)
                todo.append(c)
    return out


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# ------------------------------------------------------------------ exit codes
@pytest.mark.parametrize("argv", [
    ["grade"],
    ["grade", "solutions", "--jobs", "0"],
    ["grade", "solutions", "--jobs", "two"],
    ["grade", "no/such/submission"],
    ["grade", "solutions", "--only", "ex99"],
    ["grade", "solutions", "--timeout", "-1"],
    ["grade", "solutions", "--resume"],
    ["grade", "solutions", "--json", "solutions"],  # a folder, not a file (a missing folder is created)
    ["grade", "solutions", "--csv", "solutions"],
    ["grade", "solutions", "--device", "quantum"],
    ["report"],
    ["report", "no/such/results.json"],
], ids=lambda a: " ".join(a) or "nothing")
def test_bad_arguments_exit_nonzero_with_one_line(argv, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    try:
        rc = cli.main(argv)
    except SystemExit as e:
        rc = e.code
    assert rc not in (0, None)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("tapetrace"), err


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads everything")
def test_unreadable_path_exits_nonzero(tmp_path, capsys):
    sub = solution_dir(tmp_path / "locked")
    sub.chmod(0)
    try:
        assert cli.main(["grade", str(sub)]) == 2
    finally:
        sub.chmod(0o755)
    assert "permission" in capsys.readouterr().err


# ----------------------------------------------------------- mixed forms, jobs
def test_mixed_forms_with_jobs_and_all_outputs(tmp_path):
    subs = tmp_path / "subs"
    good = solution_dir(subs / "alice")
    forms = [
        good,
        notebook(subs / "bob.ipynb", (SOLUTIONS / f"{EX}.py").read_text()),
        zipped(subs / "carol.zip", good),
        code_dir(subs / "dave", (EXERCISES_DIR / f"{EX}.py").read_text()),
        subs / "erin.zip",
        subs / "frank.txt",
    ]
    (subs / "erin.zip").write_bytes(b"PK\x03\x04 this is not a zip")
    (subs / "frank.txt").write_text("my answers are in the notebook")
    out = tmp_path / "out"
    out.mkdir()
    cp = tapetrace("grade", *map(str, forms), "--only", EX, "--device", "cpu", "--seed", str(SEED), "--jobs", "2",
                   "--json", str(out / "r.json"), "--csv", str(out / "r.csv"), "--feedback", str(out / "fb"),
                   "--feedback-format", "both")
    assert cp.returncode == 0, cp.stderr
    rows = json.loads((out / "r.json").read_text())
    assert [r["submission"] for r in rows] == [str(f) for f in forms]
    totals = {Path(r["submission"]).stem: r["total"] for r in rows}
    assert totals == {"alice": 10, "bob": 10, "carol": 10, "dave": 0, "erin": 0, "frank": 0}, totals
    assert rows[3]["exercises"][EX]["message"].startswith("not attempted")
    assert "could not be read" in rows[4]["exercises"][EX]["message"]
    assert all(r["seed"] == SEED and r["max_total"] == 10 for r in rows)
    csv_lines = (out / "r.csv").read_text().splitlines()
    assert len(csv_lines) == 1 + len(forms)
    fb = sorted(p.name for p in (out / "fb").iterdir())
    assert len(fb) == 2 * len(forms) and "alice.md" in fb and "bob.html" in fb
    assert "graded 6 submissions" in cp.stderr  # the summary line
    assert "alice" in cp.stdout and "10" in cp.stdout  # the table


def test_resume_skips_what_the_json_holds(tmp_path):
    a, b, c = (solution_dir(tmp_path / n) for n in ("a", "b", "c"))
    out = tmp_path / "r.json"
    first = tapetrace("grade", str(a), str(b), "--only", EX, "--device", "cpu", "--json", str(out), "--quiet")
    assert first.returncode == 0, first.stderr
    seed = json.loads(out.read_text())[0]["seed"]
    # b's result is kept as it was (a marker proves it was not re-graded); only c is new
    rows = json.loads(out.read_text())
    rows[1]["marker"] = "graded before"
    out.write_text(json.dumps(rows))
    again = tapetrace("grade", str(a), str(b), str(c), "--only", EX, "--device", "cpu", "--json", str(out),
                      "--resume")
    assert again.returncode == 0, again.stderr
    assert "2 already graded" in again.stderr and "1 to go" in again.stderr
    rows = json.loads(out.read_text())
    assert [Path(r["submission"]).name for r in rows] == ["a", "b", "c"]
    assert rows[1].get("marker") == "graded before"
    assert {r["seed"] for r in rows} == {seed}  # the resumed part reuses the run's seed
    assert rows[2]["total"] == 10


# --------------------------------------------------------------------- Ctrl-C
def _default_interrupts() -> None:
    """A terminal's Ctrl-C reaches a grader whose SIGINT is not ignored. A test process may have inherited
    SIG_IGN (a CI runner, `nohup`, a shell's background job), and an ignored SIGINT is inherited by exec:
    Python would then install no KeyboardInterrupt handler and the grader would never see the signal."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _rows(data: dict | list) -> list:
    """The rows of a ``--json`` file: one submission's object alone, several as a list (docs/grading-contract.md, "Row schema"). A checkpoint
    read while one row was written is a dict (its keys are no count of rows: on a loaded machine this test once
    interrupted the run after one)."""
    return data if isinstance(data, list) else [data]


def test_ctrl_c_keeps_graded_kills_workers_and_resumes(tmp_path):
    """SIGINT mid-batch: exit 130 at once, the finished rows kept, no worker left, --resume finishes."""
    subs = [solution_dir(tmp_path / f"s{i}") for i in range(2)]
    hang = (ATTACKS / "call_infinite_loop.py").read_text()
    subs += [code_dir(tmp_path / f"hang{i}", hang) for i in range(2)]  # both workers busy, s_last waits
    subs += [solution_dir(tmp_path / "s_last")]
    out = tmp_path / "r.json"
    args = [*map(str, subs), "--only", EX, "--device", "cpu", "--seed", str(SEED), "--json", str(out)]
    proc = subprocess.Popen([sys.executable, "-m", "autograder.cli", "grade", *args, "--jobs", "2",
                             "--timeout", "120"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_default_interrupts)
    try:
        deadline = time.monotonic() + 240
        graded = []
        while time.monotonic() < deadline:  # the checkpoint shows the two fast ones, hang workers spin
            time.sleep(0.5)
            if out.exists():
                try:
                    graded = _rows(json.loads(out.read_text()))
                except ValueError:
                    continue
                if len(graded) >= 2:
                    break
        assert len(graded) >= 2, "nothing was graded in time"
        time.sleep(1.0)
        before = descendants(proc.pid)
        assert before, "no zygote or worker below the grader?"
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _stdout, stderr = proc.communicate(timeout=30)
        took = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert took < 20, f"Ctrl-C took {took:.1f} s"
    assert "interrupted" in stderr and "--resume" in stderr
    assert "Traceback" not in stderr
    rows = _rows(json.loads(out.read_text()))
    names = [Path(r["submission"]).name for r in rows]
    assert names[:2] == ["s0", "s1"] and not any(n.startswith("hang") for n in names), names
    assert all(EX in r["exercises"] and r["total"] == 10 for r in rows)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(alive(p) for p in before):
        time.sleep(0.2)
    assert not [p for p in before if alive(p)], "workers or the zygote outlived the grader"
    # --resume grades only what is left (the hangs now time out quickly)
    done = tapetrace("grade", *args, "--jobs", "2", "--timeout", "3", "--resume", "--quiet")
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())
    assert sorted(Path(r["submission"]).name for r in rows) == sorted(p.name for p in subs)
    hangs = [r for r in rows if Path(r["submission"]).name.startswith("hang")]
    assert all(r["exercises"][EX]["status"] == "graded" and r["total"] < 10 for r in hangs)
    assert any("did not finish" in t["message"] for t in hangs[0]["exercises"][EX]["tests"])


# ----------------------------------------------------------- nothing lost
def mixed_batch(folder: Path, n: int) -> list[Path]:
    """n submissions cycling through honest, wrong, empty, broken and hostile ones."""
    kinds: list[tuple[str, str | None]] = [("solution", (SOLUTIONS / f"{EX}.py").read_text()),
                                           ("stub", (EXERCISES_DIR / f"{EX}.py").read_text())]
    kinds += [(f"mutant-{p.stem}", p.read_text()) for p in sorted(MUTANTS.glob("*.py"))[:3]]
    for name in ("os_exit_at_import", "patch_torch_allclose", "print_flood", "memory_bomb_numpy",
                 "import_solution_module", "call_infinite_loop"):
        p = ATTACKS / f"{name}.py"
        if p.exists() and f"TARGET: {EX}" in p.read_text()[:400]:
            kinds.append((f"attack-{name}", p.read_text()))
    kinds += [("corrupt-zip", None), ("empty-dir", None), ("notebook", (SOLUTIONS / f"{EX}.py").read_text())]
    subs = []
    for i in range(n):
        kind, src = kinds[i % len(kinds)]
        base = folder / f"{i:03d}-{kind}"
        if kind == "corrupt-zip":
            base = base.with_suffix(".zip")
            base.write_bytes(b"PK garbage")
        elif kind == "empty-dir":
            base.mkdir()
        elif kind == "notebook":
            base = notebook(base.with_suffix(".ipynb"), src)
        else:
            code_dir(base, src)
        subs.append(base)
    return subs


@pytest.mark.slow
def test_nothing_lost_under_load(tmp_path):
    subs = mixed_batch(tmp_path / "subs", 16)
    out = tmp_path / "r.json"
    cp = tapetrace("grade", *map(str, subs), "--only", EX, "--device", "cpu", "--jobs", "2", "--timeout", "3",
                   "--json", str(out), "--csv", str(tmp_path / "r.csv"), "--quiet", timeout=900)
    assert cp.returncode == 0, cp.stderr
    rows = json.loads(out.read_text())
    assert [r["submission"] for r in rows] == [str(s) for s in subs]
    assert all(EX in r["exercises"] and r["exercises"][EX]["tests"] for r in rows)
    from autograder.hidden import load_suite

    checks = {c.name for c in load_suite(EX).checks}
    for r in rows:
        kind = Path(r["submission"]).name.split("-", 1)[1]
        e = r["exercises"][EX]
        failed = {t["name"] for t in e["tests"] if not t["passed"]}
        if kind.startswith(("solution", "notebook")):
            assert r["total"] == 10, (kind, e["message"])
        elif kind.startswith("attack-"):
            head = dict(re.findall(r"#\s*(STATUS|FAILS):\s*(.*)", (ATTACKS / f"{kind[7:]}.py").read_text()[:600]))
            want = checks if head["FAILS"].strip() == "all" else {
                x.strip() for x in head["FAILS"].split(",") if x.strip() and x.strip() != "none"}
            assert (e["status"], failed) == (head["STATUS"].strip(), want), (kind, e["message"])
        else:
            assert r["total"] < 10, (kind, r["total"])
    assert len((tmp_path / "r.csv").read_text().splitlines()) == 1 + len(subs)


# ---------------------------------------------------------- zygote == spawn
@pytest.mark.slow
def test_zygote_workers_match_spawned_ones_bit_for_bit(tmp_path):
    """Workers forked from the warm zygote give exactly what fresh interpreters give (torch and JAX)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from zygote_safety import compare_launchers

    exercises = [EX] + [e for e in ("ex04_jax_mlp",) if (SOLUTIONS / f"{e}.py").exists()
                        and importlib.util.find_spec(f"autograder.hidden.{e}") is not None]
    # the solutions, the stubs and a mutant (wrong answers on the wire): every worker a fresh interpreter in the
    # spawn half, so one mutant (not two) keeps the check cheap; how many does not change what is compared
    subs = [str(SOLUTIONS), str(EXERCISES_DIR)] + [
        str(make_submission(tmp_path / p.stem, {EX: p.read_text()}, only=[EX])) for p in sorted(MUTANTS.glob("*.py"))[:1]]
    report = compare_launchers(subs, exercises, seed=SEED)
    assert report["probe_calls"] > 10
    assert report["probe_mismatches"] == [], report["probe_mismatches"][:5]
    assert report["result_mismatches"] == [], report["result_mismatches"][:5]


def test_worker_env_pins_one_thread():
    from autograder.workers.environment import worker_env

    env = worker_env()
    assert env["OMP_NUM_THREADS"] == env["MKL_NUM_THREADS"] == env["OPENBLAS_NUM_THREADS"] == "1"
    assert "--xla_cpu_multi_thread_eigen=false" in env["XLA_FLAGS"].split()


# ------------------------------------------------------------- thread count
@pytest.mark.slow
def test_verdicts_survive_torch_thread_count(tmp_path):
    """torch's bits change with its thread count (1e-5 level): a student side on 2 threads still passes.

    Grading pins 1 thread in every worker, but a notebook self-check or another grader may not; the
    tolerances must absorb the difference. Runs the hidden checks in one process (benchmarks/inprocess.py),
    student side with 2 torch threads, reference with 1.
    """
    from autograder.hidden import available_exercises
    from autograder.workers.environment import worker_env

    torch_ex = [e for e in available_exercises() if (SOLUTIONS / f"{e}.py").exists()
                and "torch" in (ROOT / "autograder" / "exercises" / e / "probes.py").read_text()]
    cp = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "inprocess.py"), str(SOLUTIONS), "--only",
                         ",".join(torch_ex), "--seed", str(SEED), "--student-threads", "2"],
                        capture_output=True, text=True, env=worker_env(), cwd=ROOT, timeout=900)
    assert cp.returncode == 0, cp.stderr[-2000:]
    out = json.loads(cp.stdout.strip().splitlines()[-1])
    failed = {ex: e["failed"] for ex, e in out["exercises"].items() if e["score"] != e["max_score"]}
    assert not failed, failed


def test_a_worker_forked_while_the_run_is_cancelled_is_killed():
    """Ctrl-C while a worker is being forked: kill_all misses it, so spawn kills it when it returns."""
    from autograder.engine.run_workers import TrackedLauncher

    class FakeProc:
        def __init__(self) -> None:
            self.killed = False

        def wait(self, _timeout: float) -> int | None:
            return -9 if self.killed else None

        def kill(self) -> None:
            self.killed = True

    class FakeInner:
        kind = "fake"

        def spawn(self, _spec: dict, _fds: tuple) -> FakeProc:
            return FakeProc()

    tracked = TrackedLauncher(FakeInner())
    before = tracked.spawn({}, (0, 0))
    tracked.kill_all()
    late = tracked.spawn({}, (0, 0))
    assert before.killed and late.killed
