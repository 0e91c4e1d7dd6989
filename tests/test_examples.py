"""The sample submissions `make demo` grades stay in step with the solutions, stubs and mutants."""

from __future__ import annotations

import importlib.util

from autograder.core.paths import EXERCISES, ROOT
from autograder.submissions import loader as _loader

spec = importlib.util.spec_from_file_location("make_examples", ROOT / "scripts" / "make_examples.py")
make_examples = importlib.util.module_from_spec(spec)
spec.loader.exec_module(make_examples)


def test_examples_are_fresh():
    out = ROOT / "examples" / "submissions"
    expected = make_examples.files()
    on_disk = {str(p.relative_to(out)): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert set(on_disk) == set(expected), "run `python scripts/make_examples.py`"
    stale = [k for k in expected if on_disk[k] != expected[k]]
    assert not stale, f"stale: {stale} — run `python scripts/make_examples.py`"


def test_bob_has_a_bug_in_every_exercise():
    for ex in EXERCISES:
        bob = (ROOT / "examples" / "submissions" / "bob_buggy" / f"{ex}.py").read_text()
        assert bob.startswith("# MUTANT:"), ex


def test_dave_zip_has_missing_and_looping_exercises():
    sub = _loader.load(str(ROOT / "examples" / "submissions" / "dave_partial.zip"))
    assert sum(v is None for v in sub.sources.values()) >= 3
    assert any(v and v.startswith("while True") for v in sub.sources.values())
