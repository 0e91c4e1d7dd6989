"""The attack suite: each file in attacks/ replaces one exercise of a correct submission.

The attacked exercise must get exactly what its honest part earns (the checks named in
FAILS score 0, all others pass) with a clear message, and the rest of the run must be
untouched: a canary exercise graded in the same submission keeps full marks, and after
all attacks the same grading run (same zygote, same reference cache) still gives the
solutions full marks. Nothing may be written outside the run's temp folders, no student
process may survive its exercise, and the network must be unreachable.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from autograder._engine import GradingRun, load_suite
from autograder._paths import ROOT, SOLUTIONS

ATTACKS = sorted((Path(__file__).parent / "attacks").glob("*.py"))
CANARY = "ex09_autograd_tape"  # graded beside every attack on another exercise
CANARY_FOR_EX09 = "ex01_torch_mlp"


def meta(path: Path) -> dict:
    out = {"fails": "all", "status": "graded", "message": ""}
    for line in path.read_text().splitlines()[:8]:
        if m := re.match(r"#\s*(ATTACK|TARGET|STATUS|FAILS|MESSAGE):\s*(.*)", line):
            out[m.group(1).lower()] = m.group(2).strip()
    return out


@pytest.fixture(scope="module")
def attack_run():
    r = GradingRun(device="cpu", timeout=8.0, seed=1234, mem_bytes=1024**3)
    yield r
    r.close()


@pytest.fixture(scope="module")
def listener():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    hits: list[bytes] = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
                hits.append(conn.recv(64))
                conn.close()
            except OSError:
                continue

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    os.environ["TAPETRACE_ATTACK_PORT"] = str(srv.getsockname()[1])
    yield hits
    stop.set()
    t.join(2)
    srv.close()


def _leftovers() -> list[str]:
    found = []
    for p in [Path("/tmp/tapetrace_attack_tmp.txt"), Path("/dev/shm/tapetrace_attack_shm.txt"),
              Path.home() / "tapetrace_attack_home.txt", ROOT / "autograder" / "tapetrace_attack_engine.txt",
              Path.cwd().parent / "tapetrace_attack_parent.txt"]:
        if p.exists():
            found.append(str(p))
    return found


@pytest.mark.parametrize("path", ATTACKS, ids=lambda p: p.stem)
def test_attack_is_contained(attack_run, listener, tmp_path, path):
    m = meta(path)
    target = m["target"]
    sub = tmp_path / "submission"
    sub.mkdir()
    (sub / f"{target}.py").write_text(path.read_text())
    canary = CANARY if target != CANARY else CANARY_FOR_EX09
    (sub / f"{canary}.py").write_text((SOLUTIONS / f"{canary}.py").read_text())
    only = [target, canary]
    res = attack_run.grade([str(sub)], only=only)[0]
    ex = res["exercises"][target]
    suite = load_suite(target)
    names = [c.name for c in suite.checks]
    fails = set(names) if m["fails"] == "all" else set() if m["fails"] == "none" else {
        s.strip() for s in m["fails"].split(",")}
    failed = {t["name"] for t in ex["tests"] if not t["passed"]}
    detail = {t["name"]: t["message"] for t in ex["tests"] if not t["passed"]}
    assert ex["status"] == m["status"], (ex["status"], ex["message"])
    assert failed == fails, detail
    assert ex["score"] == sum(c.points for c in suite.checks if c.name not in fails)
    if m["message"]:
        texts = [ex["message"], *detail.values()]
        assert any(m["message"] in t for t in texts), texts
    for t in ex["tests"]:
        assert len(t["message"]) < 600
    kept = res["exercises"][canary]
    assert kept["score"] == kept["max_score"], kept
    assert not _leftovers()
    assert not listener, "a student worker reached the network"
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert "sleep 4242" not in ps


def test_run_still_sound_after_attacks(attack_run):
    """Same zygote and reference cache as the attacks: the solutions still get full marks."""
    res = attack_run.grade([str(SOLUTIONS)], only=[CANARY, CANARY_FOR_EX09])[0]
    assert res["total"] == res["max_total"] > 0
    assert res["isolation"].get("private_dirs_hidden") is True
    assert res["isolation"].get("network_dropped") is True


def test_at_least_twenty_attacks():
    assert len(ATTACKS) >= 20


def test_engine_unpacked_under_tmp_is_still_usable_and_hidden(tmp_path):
    """`otter run` unpacks the grader under /tmp, which workers cover with a private tmpfs."""
    import json
    import shutil
    import sys
    import tempfile

    copy = Path(tempfile.mkdtemp(prefix="tapetrace-engine-", dir="/tmp"))
    try:
        for sub in ("autograder", "solutions"):
            shutil.copytree(ROOT / sub, copy / sub, ignore=shutil.ignore_patterns("__pycache__"))
        attack = tmp_path / "attack"
        attack.mkdir()
        (attack / f"{CANARY_FOR_EX09}.py").write_text(
            (Path(__file__).parent / "attacks" / "read_solution_file.py").read_text())
        out = tmp_path / "r.json"
        done = subprocess.run([sys.executable, "-m", "autograder.cli", "grade", str(copy / "solutions"), str(attack),
                               "--only", CANARY_FOR_EX09, "--device", "cpu", "--json", str(out), "--quiet"],
                              cwd=copy, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        good, bad = json.loads(out.read_text())
        assert good["total"] == good["max_total"] > 0, good
        msg = bad["exercises"][CANARY_FOR_EX09]["message"]
        assert bad["total"] == 0 and bad["exercises"][CANARY_FOR_EX09]["status"] == "error"
        assert "PermissionError" in msg or "No such file" in msg
    finally:
        shutil.rmtree(copy, ignore_errors=True)
