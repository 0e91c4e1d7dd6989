"""scripts/device_check.py, the accelerator's check (issue 54, item 3), on the CPU: passes saved as they go,
resumed where they were cut, compared, and each mutant judged by its own file on the device's verdicts."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from pathlib import Path

from autograder.core.paths import ROOT

spec = importlib.util.spec_from_file_location("device_check", ROOT / "scripts" / "device_check.py")
assert spec is not None and spec.loader is not None
device_check = importlib.util.module_from_spec(spec)
sys.modules["device_check"] = device_check
spec.loader.exec_module(device_check)

EX = "ex04_jax_mlp"


def test_interleaved_order_takes_one_of_each_exercise_first(tmp_path: Path) -> None:
    subs = device_check.submissions(tmp_path, [EX, "ex08_jax_transforms"], 2, ("mutants",), interleave=True)
    exercises = [name.split(" ", 1)[1].split("/")[0] for name in subs]
    assert exercises == [EX, "ex08_jax_transforms", EX, "ex08_jax_transforms"]
    (tmp_path / "order").mkdir()
    in_order = device_check.submissions(tmp_path / "order", ["ex08_jax_transforms", EX], 2, ("mutants",))
    assert [name.split(" ", 1)[1].split("/")[0] for name in in_order] == ["ex08_jax_transforms"] * 2 + [EX] * 2
    assert all((Path(path) / f"{only[0]}.py").is_file() for path, only in subs.values())


def test_a_pass_saves_resumes_and_compares(tmp_path: Path, capsys) -> None:
    (tmp_path / "subs").mkdir()
    subs = device_check.submissions(tmp_path / "subs", [EX], 2, ("mutants", "valid"))
    save = tmp_path / "cpu.json"
    first = device_check.Pass("cpu", save)
    first.grade(dict(list(subs.items())[:2]), jobs=2, timeout=60.0, seed=2026)
    assert len(json.loads(save.read_text())["results"]) == 2
    again = device_check.Pass("cpu", save)
    again.resume()
    again.grade(subs, jobs=2, timeout=60.0, seed=2026)  # grades only the ones the file lacks
    doc = json.loads(save.read_text())
    assert set(doc["results"]) == set(subs)
    assert device_check.report(doc, doc) == 0
    judged = sum(1 for name in doc["results"] if name.startswith(("mutant ", "valid ")))  # as many as ex04 has
    assert judged >= 5 and f"not as their files say, on cpu: 0 of {judged}" in capsys.readouterr().out

    # a mutant that passed everything on the "device" is a verdict that differs and is not as its file says
    dev = copy.deepcopy(doc)
    mutant = next(n for n in dev["results"] if n.startswith("mutant "))
    for test in dev["results"][mutant]["exercises"][EX]["tests"]:
        test["passed"] = True
    dev["device"] = "tpu"
    assert device_check.report(dev, doc) == 1
    out = capsys.readouterr().out
    assert f"{mutant}: on tpu: failed [], its file names" in out and "differ from the CPU run: 1" in out
    # a valid answer short of full marks is flagged too
    dev = copy.deepcopy(doc)
    valid = next(n for n in dev["results"] if n.startswith("valid "))
    dev["results"][valid]["exercises"][EX]["tests"][0]["passed"] = False
    assert device_check.report(dev, doc) == 1
    assert f"{valid}: on cpu: failed" in capsys.readouterr().out
