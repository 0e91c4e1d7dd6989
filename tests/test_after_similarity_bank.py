"""``tapetrace similarity`` against the usual disguises (tests/similarity_bank/disguises.py): for every honest
implementation in the bank, a copy with its docstrings deleted, reformatted by ``ast.unparse``, its locals
renamed, its top-level definitions reversed, its comments changed, and all of these at once, scores as a
verbatim copy (1.0) and ranks above every other pair of the class. The table is printed (``pytest -s``) and
``benchmarks/similarity_disguises.py`` prints it too.
"""

from __future__ import annotations

import pytest

pytest.importorskip("copydetect", reason="pip install 'tapetrace[similarity]'")

from similarity_bank import disguises  # noqa: E402


@pytest.fixture(scope="module")
def rows():
    out = disguises.table()
    print("\n" + disguises.render(out))
    return out


def test_the_bank_is_honest_work_apart_from_the_reference():
    from autograder.core.paths import SOLUTIONS
    from autograder.reports import similarity as _similarity

    assert len(disguises.exercises()) >= 3
    for ex in disguises.exercises():
        work = disguises.honest(ex)
        assert len(work) >= 3, ex
        codes = {n: _similarity.canonical(c) for n, c in work.items()}
        codes["reference"] = _similarity.canonical((SOLUTIONS / f"{ex}.py").read_text())
        pairs = _similarity.compare(ex, codes, _similarity.template_code(ex))
        assert all(p.score < 0.7 for p in pairs), [(p.a, p.b, round(p.score, 2)) for p in pairs if p.score >= 0.7]


def test_every_disguised_copy_ranks_first_and_scores_as_a_verbatim_copy(rows):
    assert {r["disguise"] for r in rows} == set(disguises.DISGUISES)
    bad = [r for r in rows if r["rank"] != 1 or r["score"] < 0.99 or r["score"] - r["best_honest"] < 0.3]
    assert not bad, "\n" + disguises.render(bad)


def test_each_disguise_changes_the_text(rows):
    """The bank would prove nothing if a disguise left the file as it was."""
    for ex in disguises.exercises():
        for name, code in disguises.honest(ex).items():
            for disguise, make in disguises.DISGUISES.items():
                if disguise != "verbatim":
                    assert make(code) != code, (ex, name, disguise)
