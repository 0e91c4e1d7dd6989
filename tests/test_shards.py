"""Shards (``grade --shard I/N``, env-var selection) and ``tapetrace merge``.

Grading uses ex01 and ex09 only (the two cheapest exercises); what is checked here (slices,
seeds, parts, merge) does not depend on the exercise.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import MUTANTS, make_submission

from autograder.core.paths import ROOT
from autograder.reports import report as _report
from autograder.scaleout import shard as _shard

ONLY = "ex01_torch_mlp,ex09_autograd_tape"
SEED = 4242
pytestmark = pytest.mark.skipif(
    any(importlib.util.find_spec(f"autograder.hidden.{ex}") is None for ex in ONLY.split(",")),
    reason="ex01/ex09 hidden suites are not installed")


def tapetrace(*args: str, env: dict | None = None, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "autograder.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, env=None if env is None else {**os.environ, **env})


def without_timing(results: list[dict]) -> list[dict]:
    """Result objects without what varies between two runs of the same submissions.

    That is the seconds each exercise took, the ``envelope`` (the grading machine's limits and plan: a Dask
    cluster's rows are graded on its workers' machines and carry none), and the ``isolation`` of a row where
    no student code ran
    (every exercise missing or unreadable): the engine records there the level its workers reached
    so far, which depends on what was graded before.
    """
    out = json.loads(json.dumps(results))
    for r in out:
        r.pop("envelope", None)
        for e in r["exercises"].values():
            e.pop("seconds", None)
        if all(e["status"] == "missing" for e in r["exercises"].values()):
            r.pop("isolation", None)
    return out


def class_of(tmp: Path) -> list[str]:
    """Seven small submissions of different forms and outcomes (solution, mutants, missing, broken)."""
    subs = tmp / "subs"
    make_submission(subs / "alice", only=["ex01_torch_mlp", "ex09_autograd_tape"])
    make_submission(subs / "bob", only=["ex01_torch_mlp", "ex09_autograd_tape"],
                    replace={"ex01_torch_mlp": (MUTANTS / "ex01_torch_mlp" / "sigmoid_output.py").read_text(),
                             "ex09_autograd_tape": (MUTANTS / "ex09_autograd_tape" / "post_order.py").read_text()})
    make_submission(subs / "Carol", only=["ex09_autograd_tape"],
                    replace={"ex09_autograd_tape": (MUTANTS / "ex09_autograd_tape" / "uses_backward.py").read_text()})
    (subs / "dave").mkdir()  # nothing handed in
    make_submission(subs / "erin", only=["ex01_torch_mlp"], replace={"ex01_torch_mlp": "def broken(:\n"})
    (subs / "frank.zip").write_bytes(b"not a zip at all")
    (subs / "gina_ex01_torch_mlp.py").write_text((MUTANTS / "ex01_torch_mlp" / "python_list.py").read_text())
    return [str(p) for p in sorted(subs.iterdir())]


# ------------------------------------------------------------------ selection
@pytest.mark.parametrize("spec,expected", [("1/3", (1, 3)), ("3/3", (3, 3)), (" 2 / 5 ", (2, 5)), ("1/1", (1, 1))])
def test_parse_spec(spec, expected):
    assert _shard.parse_spec(spec) == expected


@pytest.mark.parametrize("spec", ["0/3", "4/3", "1/0", "a/b", "2", "-1/3", "1/3/4", ""])
def test_parse_spec_refuses(spec):
    with pytest.raises(_shard.ShardError, match="--shard"):
        _shard.parse_spec(spec)


@pytest.mark.parametrize("count", [1, 2, 3, 7, 12])
def test_slices_partition_the_sorted_list_whatever_the_order(count):
    rng = random.Random(count)
    paths = [f"subs/s{rng.randrange(10**6):06d}" for _ in range(23)] + ["subs/A", "subs/a", "subs/Z"]
    shuffled = paths[:]
    rng.shuffle(shuffled)
    slices = [_shard.slice_of(paths, i, count) for i in range(1, count + 1)]
    again = [_shard.slice_of(shuffled, i, count) for i in range(1, count + 1)]
    assert [set(s) for s in slices] == [set(s) for s in again]  # the order given does not matter
    flat = [p for s in slices for p in s]
    assert sorted(flat) == sorted(set(paths)) and len(flat) == len(set(paths))  # each exactly once
    assert max(map(len, slices)) - min(map(len, slices)) <= 1
    assert all(s == [p for p in dict.fromkeys(paths) if p in set(s)] for s in slices)  # given order kept
    ordered = sorted(set(paths))
    assert [p for s in slices for p in sorted(s)] == ordered  # contiguous slices of the sorted list


def test_more_shards_than_submissions_gives_empty_slices():
    slices = [_shard.slice_of(["b", "a"], i, 5) for i in range(1, 6)]
    assert sum(map(len, slices)) == 2 and slices.count([]) == 3


@pytest.mark.parametrize("env,shards,expected", [
    ({"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "3"}, None, (1, 3)),
    ({"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "3", "SLURM_ARRAY_TASK_MIN": "1"}, None, (3, 3)),
    ({"SLURM_ARRAY_TASK_ID": "0", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "0"}, None, (1, 4)),
    ({"SLURM_ARRAY_TASK_ID": "12", "SLURM_ARRAY_TASK_COUNT": "4", "SLURM_ARRAY_TASK_MIN": "6",
      "SLURM_ARRAY_TASK_STEP": "2"}, 4, (4, 4)),
    ({"JOB_COMPLETION_INDEX": "0"}, 3, (1, 3)),
    ({"JOB_COMPLETION_INDEX": "2"}, 3, (3, 3)),
])
def test_shard_from_environment(env, shards, expected):
    assert _shard.from_environment(env, shards) == expected


@pytest.mark.parametrize("env,shards,match", [
    ({}, None, "none is set"),
    ({"JOB_COMPLETION_INDEX": "1"}, None, "--shards N"),
    ({"JOB_COMPLETION_INDEX": "3"}, 3, "outside 0..2"),
    ({"JOB_COMPLETION_INDEX": "x"}, 3, "not a number"),
    ({"SLURM_ARRAY_TASK_ID": "2"}, None, "SLURM_ARRAY_TASK_COUNT"),
    ({"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_COUNT": "3"}, None, "cannot tell"),
    ({"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3"}, 4, "disagrees"),
    ({"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_COUNT": "3", "JOB_COMPLETION_INDEX": "0"}, 3, "both"),
])
def test_shard_from_environment_refuses(env, shards, match):
    with pytest.raises(_shard.ShardError, match=match):
        _shard.from_environment(env, shards)


def test_derived_seed_depends_on_the_set_of_paths_only():
    a = _shard.derive_seed(["x/1", "x/2", "x/3"])
    assert a == _shard.derive_seed(["x/3", "x/1", "x/2", "x/1"])
    assert a != _shard.derive_seed(["x/1", "x/2"]) and 0 <= a < 2**31


def test_shard_option_does_not_swallow_a_submission():
    from autograder import cli

    args = cli.build_parser().parse_args(["grade", "--shard", "subs/a", "subs/b", "--seed", "1"])
    assert args.shard == "" and args.shard_spill == ["subs/a"] and args.submissions == ["subs/b"]
    args = cli.build_parser().parse_args(["grade", "subs/a", "--shard", "2/3"])
    assert args.shard == "2/3" and not getattr(args, "shard_spill", [])


# ------------------------------------------------------------- grade + merge
@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One unsharded run, and the same run as three shards chosen three ways."""
    tmp = tmp_path_factory.mktemp("shards")
    subs = class_of(tmp)
    common = ["--only", ONLY, "--device", "cpu", "--seed", str(SEED), "--jobs", "2"]
    full = tapetrace("grade", *subs, *common, "--json", str(tmp / "full.json"), "--csv", str(tmp / "full.csv"),
                     "--quiet")
    assert full.returncode == 0, full.stderr
    parts = []
    for i, extra, env in ((1, ["--shard", "1/3"], None),
                          (2, ["--shard"], {"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_COUNT": "3"}),
                          (3, ["--shards", "3", "--shard"], {"JOB_COMPLETION_INDEX": "2"})):
        part = tmp / f"part{i}.json"
        cp = tapetrace("grade", *subs, *common, "--json", str(part), "--csv", str(tmp / f"part{i}.csv"), *extra,
                       env={"SLURM_ARRAY_TASK_ID": "", "JOB_COMPLETION_INDEX": "", **(env or {})})
        assert cp.returncode == 0, cp.stderr
        assert f"shard {i}/3:" in cp.stderr
        parts.append(part)
    return {"tmp": tmp, "subs": subs, "parts": parts, "full": _report.read_json(str(tmp / "full.json"))}


def test_parts_hold_disjoint_slices_and_the_run(graded):
    seen = []
    for i, part in enumerate(graded["parts"], 1):
        data = json.loads(part.read_text())
        man = data["tapetrace_part"]
        assert man["shard"] == [i, 3] and man["submissions"] == graded["subs"]
        assert man["run"]["seed"] == SEED and man["run"]["exercises"] == ONLY.split(",")
        assert 2 <= len(data["results"]) <= 3
        seen += [r["submission"] for r in data["results"]]
    assert sorted(seen) == sorted(graded["subs"])


def test_merged_parts_equal_the_unsharded_run(graded):
    tmp = graded["tmp"]
    cp = tapetrace("merge", *map(str, reversed(graded["parts"])), "--json", str(tmp / "merged.json"),
                   "--csv", str(tmp / "merged.csv"))
    assert cp.returncode == 0, cp.stderr
    merged = json.loads((tmp / "merged.json").read_text())
    full = json.loads((tmp / "full.json").read_text())
    assert [r["submission"] for r in merged] == graded["subs"]
    assert without_timing(merged) == without_timing(full)
    assert (tmp / "merged.csv").read_text() == (tmp / "full.csv").read_text()
    totals = {Path(r["submission"]).name: r["total"] for r in merged}
    assert totals["alice"] == 20 and totals["dave"] == 0 and totals["frank.zip"] == 0
    assert 0 < totals["bob"] < 20 and 0 < totals["Carol"] < 20  # the mutants lost points


def test_merge_of_one_submission_writes_one_object(tmp_path):
    sub = make_submission(tmp_path / "only", only=["ex09_autograd_tape"])
    common = ["--only", "ex09", "--device", "cpu", "--jobs", "1", "--quiet"]
    parts = []
    for i in (1, 2):
        parts.append(str(tmp_path / f"p{i}.json"))
        cp = tapetrace("grade", str(sub), *common, "--json", parts[-1], "--shard", f"{i}/2")
        assert cp.returncode == 0, cp.stderr
    assert [len(json.loads(Path(p).read_text())["results"]) for p in parts] == [0, 1]  # an empty part is written
    cp = tapetrace("merge", *parts, "--json", str(tmp_path / "out.json"))
    assert cp.returncode == 0, cp.stderr
    out = json.loads((tmp_path / "out.json").read_text())
    assert isinstance(out, dict) and out["submission"] == str(sub) and out["total"] == 10
    assert out["seed"] == _shard.derive_seed([str(sub)])  # no --seed: every shard derives the same one


def _edited(graded, tmp: Path, index: int, edit) -> list[str]:
    """The three parts, part ``index`` (0-based) replaced by an edited copy."""
    data = json.loads(graded["parts"][index].read_text())
    edit(data)
    copy = tmp / f"edited{index}.json"
    copy.write_text(json.dumps(data))
    return [str(copy) if k == index else str(p) for k, p in enumerate(graded["parts"])]


def _refused(tmp: Path, parts: list[str], *needles: str) -> str:
    cp = tapetrace("merge", *parts, "--json", str(tmp / "out.json"))
    assert cp.returncode == 2, cp
    assert cp.stderr.count("\n") == 1 and cp.stderr.startswith("tapetrace: "), cp.stderr
    for needle in needles:
        assert needle in cp.stderr, cp.stderr
    assert not (tmp / "out.json").exists()
    return cp.stderr


def test_merge_refuses_a_missing_part(graded, tmp_path):
    parts = [str(p) for p in graded["parts"]]
    second = json.loads(graded["parts"][1].read_text())["results"][0]["submission"]
    _refused(tmp_path, [parts[0], parts[2]], "missing submission", second, "shard 2/3", "no part")


def test_merge_refuses_a_part_that_lost_a_row(graded, tmp_path):
    lost = json.loads(graded["parts"][2].read_text())["results"][-1]["submission"]
    parts = _edited(graded, tmp_path, 2, lambda d: d["results"].pop())
    _refused(tmp_path, parts, f"missing submission: {lost} ", "shard 3/3")


def test_merge_refuses_duplicates(graded, tmp_path):
    parts = [str(p) for p in graded["parts"]]
    first = json.loads(graded["parts"][0].read_text())["results"][0]["submission"]
    _refused(tmp_path, [*parts, parts[0]], f"duplicated submission: {first}")


def test_merge_refuses_a_row_of_another_shard(graded, tmp_path):
    other = json.loads(graded["parts"][0].read_text())["results"][0]
    parts = _edited(graded, tmp_path, 1, lambda d: d["results"].append(other))
    _refused(tmp_path, parts, other["submission"], "belongs to another shard")


@pytest.mark.parametrize("key,value,needle", [("seed", 1, "seed"), ("exercises", ["ex01_torch_mlp"], "exercises"),
                                              ("lang", "es", "lang"), ("public_only", True, "public_only")])
def test_merge_refuses_parts_of_another_run(graded, tmp_path, key, value, needle):
    parts = _edited(graded, tmp_path, 1, lambda d: d["tapetrace_part"]["run"].__setitem__(key, value))
    _refused(tmp_path, parts, "another run", needle)


def test_merge_refuses_another_submission_list(graded, tmp_path):
    parts = _edited(graded, tmp_path, 2, lambda d: d["tapetrace_part"]["submissions"].append("subs/zed"))
    _refused(tmp_path, parts, "submission lists differ", "subs/zed")


def test_merge_refuses_another_shard_count(graded, tmp_path):
    parts = _edited(graded, tmp_path, 0, lambda d: d["tapetrace_part"].__setitem__("shard", [1, 4]))
    _refused(tmp_path, parts, "4 vs 3 shards")


def test_merge_refuses_what_is_not_a_part(graded, tmp_path):
    full = str(graded["tmp"] / "full.json")
    _refused(tmp_path, [str(graded["parts"][0]), full], "not a shard part")
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    _refused(tmp_path, [str(bad)], "not valid JSON")
    _refused(tmp_path, [str(tmp_path / "absent.json")], "cannot read")


@pytest.mark.parametrize("row", [{"submission": ["a"], "exercises": {}, "total": 0, "max_total": 0},
                                 {"submission": "a", "exercises": {"ex01_torch_mlp": "oops"}, "total": 0,
                                  "max_total": 10}], ids=["name_a_list", "exercise_a_string"])
def test_merge_refuses_a_damaged_row_in_one_line(tmp_path, row):
    """A part whose row is not the row schema's shape (docs/grading-contract.md) (edited, damaged) once met a traceback (a name that is a list:
    unhashable) or was merged as it was; now the merge refuses it, naming the row."""
    part = tmp_path / "part.json"
    part.write_text(json.dumps({_shard.PART_KEY: {"version": _shard.PART_VERSION, "run": {}, "submissions": ["a"],
                                                 "shard": [1, 1]}, "results": [row]}))
    with pytest.raises(_shard.ShardError, match="result 1 is not well formed"):
        _shard.merge([str(part)])


def test_a_part_reads_as_results_and_resumes(graded, tmp_path):
    part = graded["parts"][1]
    assert _report.read_json(str(part)) == json.loads(part.read_text())["results"]  # `report`, --resume
    copy = tmp_path / "part2.json"
    data = json.loads(part.read_text())
    kept = data["results"][:1]
    copy.write_text(json.dumps({**data, "results": kept}))
    common = ["--only", ONLY, "--device", "cpu", "--jobs", "2", "--quiet", "--json", str(copy), "--resume"]
    cp = tapetrace("grade", *graded["subs"], *common, "--seed", "99", "--shard", "2/3")
    assert cp.returncode == 2 and "another run" in cp.stderr and "seed" in cp.stderr  # not mixed with seed 99
    cp = tapetrace("grade", *graded["subs"], *common, "--seed", str(SEED), "--shard", "2/3")
    assert cp.returncode == 0, cp.stderr
    resumed = json.loads(copy.read_text())
    assert resumed["results"][0] == kept[0]  # kept as it was, not regraded
    assert without_timing(resumed["results"]) == without_timing(data["results"])


@pytest.mark.parametrize("extra,env,needle", [
    (["--shard", "4/3"], {}, "between 1 and N"),
    (["--shard"], {}, "none is set"),
    (["--shards", "3"], {"JOB_COMPLETION_INDEX": "5"}, "outside 0..2"),
    (["--shard", "1/3", "--shards", "2"], {}, "disagrees"),
    (["--shards", "0"], {}, ">= 1"),
])
def test_bad_shard_options_exit_2_in_one_line(tmp_path, extra, env, needle):
    sub = make_submission(tmp_path / "s", only=["ex01_torch_mlp"])
    cp = tapetrace("grade", str(sub), "--only", "ex01", "--json", str(tmp_path / "p.json"), *extra,
                   env={"SLURM_ARRAY_TASK_ID": "", "JOB_COMPLETION_INDEX": "", **env})
    assert cp.returncode == 2 and needle in cp.stderr and cp.stderr.count("\n") == 1, cp.stderr
    assert not (tmp_path / "p.json").exists()


def test_run_settings_normalise_the_exercise_order():
    ns = argparse.Namespace(public_only=False, lang="en", timeout=30, device="cpu")
    a = _shard.run_settings(ns, ["ex09_autograd_tape", "ex01_torch_mlp"], 1)
    b = _shard.run_settings(ns, ["ex01_torch_mlp", "ex09_autograd_tape"], 1)
    assert a == b
