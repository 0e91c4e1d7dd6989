"""Round 6, class 4 (issue 64): similarity compares what was graded, not what the section holds.

The grader runs a notebook as "Run all" does: the cells above give the section its context, and a later cell that
redefines a name of the exercise's contract is what gets graded (the last definition counts). Similarity once read
the section alone: the template's stub left in the section and a classmate's solution pasted into a cell at the
end scored 10/10 and paired with nobody, while the same copy in the section paired at 1.0. Each attack here hides
a copy of ``alice``'s graded code somewhere the grader runs it, beside a harmless twin that does the same with code
of its own; the copy must pair with ``alice`` as the copy in the section does, the twin must not. The mirror case
too: a copy left in the section but replaced by the student's own later definitions was not graded, and is not
what is compared. Two tests guard the reduction itself (a replaced definition that did something when it ran; a
demo that calls another exercise's answer): the section compared whole passed them, a careless reduction would not.

Not caught, as no reading of the text can: a string built at run time and ``exec``ed, code fetched or decoded then
run (the grader runs it; similarity compares what the statements around it say). A second ``.py`` file beside a
folder's exercise file is not graded at all (each exercise file is loaded alone: ``ModuleNotFoundError``).

Fast: similarity reads text only (no grading run); each class is three notebooks (or folders) built from the
student template.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from autograder.core.paths import ROOT, SOLUTIONS

pytest.importorskip("copydetect", reason="pip install 'tapetrace[similarity]'")

from autograder.reports import similarity as _similarity  # noqa: E402

EX = "ex04_jax_mlp"
NAMES = ("init_params", "mlp_forward", "bce_loss", "accuracy")
BANK = ROOT / "tests" / "similarity_bank" / EX
COPY = (SOLUTIONS / f"{EX}.py").read_text(encoding="utf-8")  # alice's work, which the attackers copy
OWN = (BANK / "honest_loops.py").read_text(encoding="utf-8")  # a twin's own work, written apart from alice's
TEMPLATE = ROOT / "student_template" / "tapetrace.ipynb"
DELETED = "<the answer cell deleted>"
PAIRED = 0.95  # a copy pairs at (about) 1.0; of alice's code, a copy holds (about) all
APART = 0.7  # honest work written apart scores below this (tests/test_after_similarity_bank.py)
HELD = 0.9  # of alice's code, a copy reached through code of the attacker's own holds at least this much


def _cell(source: str) -> dict:
    """A code cell a student added (no metadata of the template's)."""
    return {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}


def _answer(nb: dict, ex: str) -> int:
    return next(k for k, c in enumerate(nb["cells"])
                if c.get("metadata", {}).get("tapetrace", {}) == {"exercise": ex, "role": "answer"})


def notebook(top: Path, name: str, *, section: str | None = None, first: tuple[str, ...] = (),
             under_ex03: tuple[str, ...] = (), last: tuple[str, ...] = ()) -> str:
    """The student template with ``section`` in ex04's answer cell (None: the stub left as it is; DELETED: the
    cell deleted), ``first`` code cells right after the set-up cell (above the first exercise), ``under_ex03`` code
    cells after ex03's answer cell (ex03's section) and ``last`` code cells at the very end (below "Submit")."""
    nb = copy.deepcopy(json.loads(TEMPLATE.read_text(encoding="utf-8")))
    if section == DELETED:
        del nb["cells"][_answer(nb, EX)]
    elif section is not None:
        nb["cells"][_answer(nb, EX)]["source"] = section
    at = _answer(nb, "ex03_torch_cnn") + 1
    nb["cells"][at:at] = [_cell(s) for s in under_ex03]
    setup = next(k for k, c in enumerate(nb["cells"]) if c.get("metadata", {}).get("tapetrace", {}).get("role") == "setup")
    nb["cells"][setup + 1:setup + 1] = [_cell(s) for s in first]
    nb["cells"] += [_cell(s) for s in last]
    path = top / f"{name}.ipynb"
    path.write_text(json.dumps(nb), encoding="utf-8")
    return str(path)


def folder(top: Path, name: str, code: str) -> str:
    """A folder submission holding ``code`` as ex04's file."""
    d = top / name
    d.mkdir()
    (d / f"{EX}.py").write_text(code, encoding="utf-8")
    return str(d)


def scores(subs: list[str]) -> dict[frozenset[str], _similarity.Pair]:
    """Every pair on EX, as ``tapetrace similarity`` finds them (graded code, template removed)."""
    per, _notes = _similarity.collect(subs, [EX])
    codes = {n: _similarity.canonical(c) for n, c in per.get(EX, {}).items()}
    pairs = _similarity.compare(EX, codes, _similarity.template_code(EX))
    return {frozenset((p.a, p.b)): p for p in pairs}


def score(pairs: dict[frozenset[str], _similarity.Pair], a: str, b: str) -> float:
    """The pair's score (0: not a pair)."""
    p = pairs.get(frozenset((a, b)))
    return p.score if p is not None else 0.0


def share(pairs: dict[frozenset[str], _similarity.Pair], of: str, b: str) -> float:
    """The share of ``of``'s code that ``b``'s holds (0: not a pair)."""
    p = pairs.get(frozenset((of, b)))
    return 0.0 if p is None else p.sim_a if p.a == of else p.sim_b


def renamed(src: str, suffix: str = "_kept") -> str:
    """``src`` with the contract's definitions (and the calls between them) under other names."""
    for n in NAMES:
        src = re.sub(rf"\b{n}\b", f"_{n}{suffix}", src)
    return src


ALIASES = "".join(f"{n} = _{n}_kept\n" for n in NAMES)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> float:
    """The copy in the section: what every hidden copy must score too."""
    top = tmp_path_factory.mktemp("r6sim-base")
    pairs = scores([notebook(top, "alice", section=COPY), notebook(top, "copier", section=COPY),
                    notebook(top, "twin", section=OWN)])
    assert score(pairs, "alice", "twin") < APART
    assert score(pairs, "alice", "copier") >= PAIRED
    return score(pairs, "alice", "copier")


def _check(top: Path, baseline: float, attacker: dict, twin: dict, make=notebook, glued: bool = False) -> None:
    """``attacker`` (hiding COPY) pairs with alice at the baseline; ``twin`` (hiding OWN the same way) does not.

    ``glued``: the attacker needs code of its own to reach the copy (``mlp_forward = _kept``, ``from copied import
    *``, wrappers), which the twin shares: the attacker's graded code holds all of alice's (and the pair ranks
    above the twin's: :data:`HELD`), the twin's holds no more of alice's than honest work does.
    """
    pairs = scores([notebook(top, "alice", section=COPY), make(top, "attacker", **attacker),
                    make(top, "twin", **twin)])
    assert score(pairs, "alice", "twin") < APART and share(pairs, "alice", "twin") < APART, pairs
    if glued:
        assert share(pairs, "alice", "attacker") >= HELD, pairs
        assert score(pairs, "alice", "attacker") >= score(pairs, "alice", "twin") + 0.3, pairs
    else:
        assert score(pairs, "alice", "attacker") == pytest.approx(baseline, abs=0.02), pairs
        assert score(pairs, "attacker", "twin") < APART, pairs


@pytest.mark.parametrize("section", [None, DELETED])
def test_the_stub_in_the_section_and_a_copy_in_a_last_cell(tmp_path, baseline, section):
    """The issue's case: the template's stub left in the section (or the answer cell deleted), the copy pasted
    into a cell at the end."""
    _check(tmp_path, baseline, {"section": section, "last": (COPY,)}, {"section": section, "last": (OWN,)})


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85"])
def test_a_files_last_definitions_after_a_line_separator_python_does_not_split_on(tmp_path, baseline, sep):
    """Each statement is cut out of its text by the parser's lines and columns: a character ``str.splitlines``
    ends a line at but Python does not, in a comment or a string, once moved every statement below it onto its
    neighbour's text."""
    future = "from __future__ import annotations\n"
    head = f"{future}# mine{sep}truly\n'é{sep}é'; 'ü'\n\n\n"

    def body(code: str) -> str:
        return code.replace(future, "")

    _check(tmp_path, baseline, {"code": head + body(OWN) + "\n\n" + body(COPY)},
           {"code": head + body(COPY) + "\n\n" + body(OWN)}, make=lambda top, name, code: folder(top, name, code))


def test_a_copy_in_the_section_replaced_by_the_students_own_later_definitions(tmp_path):
    """The mirror case: what was graded is the student's own (the later cell), not the copy left above it."""
    pairs = scores([notebook(tmp_path, "alice", section=COPY),
                    notebook(tmp_path, "mirror", section=COPY, last=(OWN,)),
                    notebook(tmp_path, "twin", section=OWN)])
    assert score(pairs, "alice", "mirror") < APART, pairs
    assert score(pairs, "twin", "mirror") >= PAIRED, pairs  # it is the twin's work that was graded


def test_a_copy_above_the_first_exercise(tmp_path, baseline):
    """The copy in a cell above ex01, the section emptied (no definition of its own: the context's count)."""
    _check(tmp_path, baseline, {"first": (COPY,), "section": "# my answer is above\n"},
           {"first": (OWN,), "section": "# my answer is above\n"})


def test_a_copy_in_an_earlier_section_behind_aliases(tmp_path, baseline):
    """The copy under other names in ex03's section; ex04's section only aliases them (``mlp_forward = ...``)."""
    _check(tmp_path, baseline, {"under_ex03": (renamed(COPY),), "section": ALIASES},
           {"under_ex03": (renamed(OWN),), "section": ALIASES}, glued=True)


@pytest.mark.parametrize("use", ["from copied import *\n", "from copied import " + ", ".join(NAMES) + "\n",
                                 "%run copied.py\n"])
def test_a_copy_in_a_written_file(tmp_path, baseline, use):
    """``%%writefile copied.py`` above the section, the section imports it or ``%run``s it (as in Colab)."""
    _check(tmp_path, baseline, {"first": ("%%writefile copied.py\n" + COPY,), "section": use},
           {"first": ("%%writefile copied.py\n" + OWN,), "section": use}, glued=not use.startswith("%run"))


def test_a_copy_in_a_written_file_behind_a_later_cell(tmp_path, baseline):
    """The stub left in the section; a last cell redefines the contract by calling a written file's copy."""
    wrappers = {"init_params": "def init_params(layer_dims, key):\n    return copied.init_params(layer_dims, key)\n"}
    for n in NAMES[1:]:
        args = "params, x" if n == "mlp_forward" else "params, x, y"
        wrappers[n] = f"def {n}({args}):\n    return copied.{n}({args})\n"
    later = "import copied\n\n" + "\n\n".join(wrappers.values())
    _check(tmp_path, baseline, {"first": ("%%writefile copied.py\n" + COPY,), "last": (later,)},
           {"first": ("%%writefile copied.py\n" + OWN,), "last": (later,)}, glued=True)


@pytest.mark.parametrize("run", ["exec({!r})\n", "exec(compile({!r}, 'mine', 'exec'))\n",
                                 "_done = [exec({!r}, globals())]\n"])
def test_a_copy_in_an_exec_string(tmp_path, baseline, run):
    """The copy as a string literal the section ``exec``s (a computed string is beyond any static reading)."""
    _check(tmp_path, baseline, {"section": run.format(COPY)}, {"section": run.format(OWN)},
           glued=run.startswith("_done"))


REGISTRY = "_REG = {}\n\n\ndef _keep(f):\n    _REG[f.__name__] = f\n    return f\n\n\n"
WRAPPERS = "".join(f"def _{n}_kept(*args):\n    return _REG['_{n}_kept'](*args)\n\n\n" for n in NAMES)


def test_a_replaced_definition_that_did_something_when_it_ran(tmp_path, baseline):
    """The copy's definitions, each replaced by a wrapper, but registered first by a decorator of the student's
    own: what it does when it runs is not only binding a name, so it counts however it was replaced. (A guard on
    what a replaced definition is: the section was once compared whole, replaced definitions and all.)"""
    def hidden(code: str) -> str:
        return REGISTRY + re.sub(r"^def ", "@_keep\ndef ", renamed(code), flags=re.M) + "\n\n" + WRAPPERS + ALIASES

    _check(tmp_path, baseline, {"section": hidden(COPY)}, {"section": hidden(OWN)}, glued=True)


def test_a_copy_registered_by_a_function_named_as_another_exercises_answer(tmp_path, baseline):
    """The copy under other names in ex03's section, put in a table by a function named as ex03's ``CNN``, which
    ex04's section calls; ex04's answers read the table. A function that changes a global when called is a
    binding of it: the copy is reached through the table."""
    table = "_REG = {}\n\n\ndef CNN():\n" + "".join(f"    _REG[{n!r}] = _{n}_kept\n" for n in NAMES)
    reach = "CNN()\n\n\n" + "".join(f"def {n}(*args):\n    return _REG[{n!r}](*args)\n\n\n" for n in NAMES)
    _check(tmp_path, baseline, {"under_ex03": (renamed(COPY) + "\n\n" + table,), "section": reach},
           {"under_ex03": (renamed(OWN) + "\n\n" + table,), "section": reach}, glued=True)


def test_a_copy_reached_through_globals(tmp_path, baseline):
    """The section looks the copy up by a name built at run time: the grader then runs every statement of the cells
    above (``globals()``), and all of it is compared."""
    lookup = "".join(f"globals()[{n!r}] = globals()['_' + {n!r} + '_kept']\n" for n in NAMES)
    _check(tmp_path, baseline, {"under_ex03": (renamed(COPY),), "section": lookup},
           {"under_ex03": (renamed(OWN),), "section": lookup}, glued=True)


def test_a_reading_that_fails_compares_all_the_grader_might_run(tmp_path, monkeypatch):
    """Where reading the graded module fails for a reason no one foresaw, the copy in a last cell is still
    compared (all the grader might run), never the section alone."""
    def broken(*args, **kwargs):
        raise RuntimeError("unforeseen")

    monkeypatch.setattr(_similarity, "_read", broken, raising=False)
    code = _similarity.graded_code(notebook(tmp_path, "attacker", last=(COPY,)))[EX]
    assert "BEGIN SOLUTION" in code and "replace this line with your code" in code


def test_a_demo_calling_another_exercises_answer_brings_none_of_it(tmp_path):
    """Precision: a section's own demo code that calls ex03's ``CNN`` runs it, but ex03's code is compared under
    ex03 (two students with the same ex03 do not pair on ex04 for it); a name of ex04's own reaching into ex03's
    section (an alias) does bring it."""
    cnn = (SOLUTIONS / "ex03_torch_cnn.py").read_text(encoding="utf-8")
    demo = OWN + "\n\nmodel = CNN()\nprint(accuracy(init_params([2, 4, 1], jax.random.PRNGKey(0)), None, None))\n"
    nb = notebook(tmp_path, "demo", section=demo, under_ex03=(cnn,))
    code = _similarity.graded_code(nb)[EX]
    assert "model = CNN()" in code and "class CNN" not in code
    assert "class CNN" in _similarity.graded_code(nb)["ex03_torch_cnn"]


def test_a_file_counts_its_last_definitions(tmp_path, baseline):
    """A ``.py`` file is run whole: of two definitions of a name, the last one is graded."""
    _check(tmp_path, baseline, {"code": OWN + "\n\n" + COPY}, {"code": COPY + "\n\n" + OWN},
           make=lambda top, name, code: folder(top, name, code))


def test_a_zipped_notebook_with_a_copy_in_a_last_cell(tmp_path, baseline):
    """The issue's case inside a zip: the same loader, the same reading."""
    import zipfile

    def zipped(top: Path, name: str, **kw) -> str:
        nb = notebook(top, f"{name}-nb", **kw)
        z = top / f"{name}.zip"
        with zipfile.ZipFile(z, "w") as zf:
            zf.write(nb, f"{name}/work.ipynb")
        return str(z)

    _check(tmp_path, baseline, {"last": (COPY,)}, {"last": (OWN,)}, make=zipped)


def test_what_is_shown_is_where_the_graded_code_came_from(tmp_path):
    """The pages show the graded code as written, each part under the cell it came from; the stub is not shown."""
    nb = notebook(tmp_path, "attacker", last=(COPY,))
    code = _similarity.graded_code(nb)[EX]
    assert "BEGIN SOLUTION" in code and "replace this line with your code" not in code
    assert re.search(r"^# <notebook cell \d+: outside the exercises>$", code, re.M), code
    plain = _similarity.graded_code(folder(tmp_path, "plain", COPY))[EX]
    assert plain == COPY  # a file graded whole is shown as it was written
