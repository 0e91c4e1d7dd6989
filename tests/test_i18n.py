"""Two languages, hints and figures: every student-facing text exists in EN and ES.

- message catalogues: every key in both languages, same placeholders;
- hints: 2-3 tiers per exercise and language, and no solution code in them
  (nor anywhere in the shipped ``autograder/student`` package);
- Spanish instructions and docstrings: one per exercise and per docstring,
  keeping the contract names and the ``>>>`` example, and up to date with the
  English text (fingerprint);
- terminology: the glossary's "avoid" words never appear in Spanish prose;
- figures: each renders a non-blank PNG from the reference code, in time.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import io
import os
import re
import sys
import time

import pytest

from autograder.builders import stubs as _stubs
from autograder.core import i18n as messages
from autograder.core.paths import EXERCISES, ROOT, SOLUTIONS
from autograder.student import get_language, hints, instructions_es, set_language

PRESENT = [ex for ex in EXERCISES if (SOLUTIONS / f"{ex}.py").exists()]
STUDENT_PKG = ROOT / "autograder" / "student"
GLOSSARY = ROOT / "docs" / "glossary.md"


# ----------------------------------------------------------------- prose extraction
_WORD = re.compile(r"[A-Za-zÁÉÍÓÚÜÑáéíóúüñ]+")
_CODEISH = re.compile(r"[_=@/\\<>{}\[\]]|\(\)|\w\.\w|\w\(")
_TUPLE = re.compile(r"\((?:\s*[\w.*'+-]+\s*,)+\s*[\w.*'+-]*\s*\)")
_SECTION = ("Args:", "Returns:", "Raises:", "Attributes:", "Example:", "Examples:")
# Common English words that are not Spanish words: none may appear in Spanish prose a student reads.
ENGLISH_WORDS = {"the", "and", "with", "your", "you", "this", "that", "these", "is", "are", "of", "to", "for",
                 "it", "its", "on", "at", "be", "not", "have", "from", "which", "when", "then", "what", "how",
                 "run", "by", "an", "or", "if", "each", "every", "one", "returns", "return", "must", "should",
                 "values", "expected", "got", "shape", "index", "differ", "differs", "missing", "keys"}


def prose_words(text: str) -> list[str]:
    """Lower-cased words of a text outside code: code spans, quoted strings, placeholders,
    tuples of names, ``>>>`` lines, docstring section headers and argument names are dropped (Markdown
    fenced code blocks first: their triple backticks would pair up with inline code spans)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"``.*?``", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`", " ", text)
    text = re.sub(r'"[^"\n]*"', " ", text)
    text = re.sub(r"\{[^{}]*\}", " ", text)
    text = _TUPLE.sub(" ", text)
    lines = []
    for line in text.splitlines():
        s = line.strip()
        if s.startswith(">>>") or s in _SECTION:
            continue
        lines.append(re.sub(r"^\s*\*{0,2}\w+:\s", " ", line))
    words = []
    for tok in " ".join(lines).split():
        if _CODEISH.search(tok):
            continue
        t = tok.strip(".,;:!?¿¡()[]{}'\"—-*")
        if _WORD.fullmatch(t):
            words.append(t.lower())
    return words


def glossary() -> tuple[set[str], set[str]]:
    """(words to avoid in Spanish, Spanish terms not to use in English) from docs/glossary.md."""
    avoid_es, es_terms = set(), set()
    in_table = False
    for line in GLOSSARY.read_text().splitlines():
        if line.startswith("## "):
            in_table = line.strip() == "## Terms"
            continue
        if not in_table or not line.startswith("|") or set(line) <= set("|- "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] == "English":
            continue
        avoid_es |= {w.strip().lower() for w in cells[2].split(",") if w.strip()}
        if "`*`" in cells[1]:
            for part in cells[1].replace("`*`", "").split("/"):
                es_terms |= {w.lower() for w in _WORD.findall(part) if len(w) > 3 and not w.isupper()}
    return avoid_es, es_terms


def spanish_texts() -> dict[str, str]:
    """Every Spanish text: the one catalogue (messages and UI text), hints, instructions, docstrings."""
    out = {f"messages[{k}]": v for k, v in messages.catalogue("es").items()}
    for ex, tiers in hints.HINTS["es"].items():
        out.update({f"HINTS[es][{ex}][{i}]": t for i, t in enumerate(tiers)})
    out.update({f"INSTRUCTIONS_ES[{ex}]": t for ex, t in instructions_es.INSTRUCTIONS_ES.items()})
    for ex, docs in instructions_es.DOCSTRINGS_ES.items():
        out.update({f"DOCSTRINGS_ES[{ex}][{q}]": t for q, t in docs.items()})
    return out


def english_texts() -> dict[str, str]:
    out = {f"messages[{k}]": v for k, v in messages.catalogue("en").items()}
    for ex, tiers in hints.HINTS["en"].items():
        out.update({f"HINTS[en][{ex}][{i}]": t for i, t in enumerate(tiers)})
    for ex in PRESENT:
        docs = instructions_es.english_docstrings((SOLUTIONS / f"{ex}.py").read_text())
        out.update({f"solutions/{ex}.py[{q or 'module'}]": t for q, t in docs.items()})
    return out


# ----------------------------------------------------------------- message catalogues
def _topic_modules() -> list:
    return [importlib.import_module(name) for name in messages.catalogue_modules()]


def test_every_message_key_has_both_languages_and_the_same_placeholders():
    problems = []
    for mod in _topic_modules():
        en, es = getattr(mod, "EN", {}), getattr(mod, "ES", {})
        name = mod.__name__.removeprefix("autograder.")
        for key in sorted(set(en) - set(es)):
            problems.append(f"{name}: {key} has no ES text")
        for key in sorted(set(es) - set(en)):
            problems.append(f"{name}: {key} has no EN text")
        for key in sorted(set(en) & set(es)):
            if not str(en[key]).strip() or not str(es[key]).strip():
                problems.append(f"{name}: {key} is empty in one language")
            elif messages.placeholders(en[key]) != messages.placeholders(es[key]):
                problems.append(f"{name}: {key} placeholders differ: EN {sorted(messages.placeholders(en[key]))} "
                                f"vs ES {sorted(messages.placeholders(es[key]))}")
    assert not problems, "\n".join(problems)
    assert set(messages.catalogue("en")) == set(messages.catalogue("es"))


def test_placeholder_check_catches_a_difference():
    assert messages.placeholders("got {got}, want {n:d}") == {"got", "n"}
    assert messages.placeholders("obtuve {got}") != messages.placeholders("got {got} of {total}")


def test_render_uses_the_language():
    key = next(iter(messages.catalogue("en")))
    fields = {f: "X" for f in messages.placeholders(messages.catalogue("en")[key])}
    assert messages.render(key, "es", **fields) == messages.catalogue("es")[key].format(**fields)


def test_a_nested_catalogued_field_is_rendered_in_the_same_language():
    where = {"key": "where.line_code", "line": 7, "code": "return 1 / 0"}
    es = messages.render("CALL_EXCEPTION", "es", call="f(x)", error="ZeroDivisionError", where=where)
    en = messages.render("CALL_EXCEPTION", "en", call="f(x)", error="ZeroDivisionError", where=where)
    assert "en la línea 7 de tu código: `return 1 / 0`" in es and "line" not in es
    assert "at line 7 of your code: `return 1 / 0`" in en


def test_a_runtime_error_is_located_in_the_runs_language(tmp_path):
    """The worker sends "at line N" as data; a Spanish run says it in Spanish (no English left in the message)."""
    from autograder.engine.run import GradingRun

    ex = "ex09_autograd_tape"
    code = (SOLUTIONS / f"{ex}.py").read_text()
    names = importlib.import_module(f"autograder.exercises.{ex}").META.names
    tree = ast.parse(code)
    target = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in names)
    lines = code.splitlines()
    body = target.body[0]
    if isinstance(body, ast.Expr) and isinstance(body.value, ast.Constant):  # after the docstring
        body = target.body[1]
    indent = " " * body.col_offset
    lines.insert(body.lineno - 1, f"{indent}raise ZeroDivisionError('boom')")
    (tmp_path / f"{ex}.py").write_text("\n".join(lines) + "\n")
    run = GradingRun(device="cpu", seed=3, lang="es", exercises=[ex])
    try:
        res = run.grade([str(tmp_path)], only=[ex])[0]["exercises"][ex]
    finally:
        run.close()
    located = [t["message"] for t in res["tests"] if "ZeroDivisionError" in t["message"]]
    assert located, [t["message"] for t in res["tests"]]
    assert all("en la línea" in m and "of your code" not in m for m in located), located


# ----------------------------------------------------------------- hints
@pytest.mark.parametrize("lang", ["en", "es"])
def test_hints_complete_for_every_exercise(lang):
    assert set(hints.HINTS) == {"en", "es"}
    assert set(hints.HINTS[lang]) == set(EXERCISES)
    for ex in EXERCISES:
        tiers = hints.HINTS[lang][ex]
        assert 2 <= len(tiers) <= 3, f"{ex}: {len(tiers)} hints"
        assert len(tiers) == len(hints.HINTS["en"][ex]), f"{ex}: EN and ES have different numbers of hints"
        assert all(isinstance(t, str) and len(t.strip()) > 40 for t in tiers), ex
        assert len(set(tiers)) == len(tiers), f"{ex}: repeated hint"


def test_hint_api():
    assert hints.hint("ex05") == hints.hint("ex05_jit_train_step", 1, "en")
    assert hints.hint("5", 2) == hints.hint("ex05", 2)
    assert hints.HINTS["es"]["ex05_jit_train_step"][2] in hints.hint("ex05", 3, "es")
    assert hints.hint("ex05", lang="es").startswith("Pista 1/3")
    assert hints.hint("ex05").startswith("Hint 1/3")
    assert "**Hint 2/3" in hints.hint("ex01", 2)._repr_markdown_()
    # a tier the exercise lacks is a line a notebook cell shows, never a traceback
    assert hints.hint("ex05", 4) == 'There is no hint 4 for ex05_jit_train_step: it has 3, from hint("ex05") to hint("ex05", 3).'
    assert hints.hint("ex05", 0, "es").startswith("No hay pista 0 de ex05_jit_train_step: tiene 3")
    assert hints.hint("ex01", "2")._repr_markdown_().startswith("There is no hint 2")
    with pytest.raises(ValueError, match="unknown exercise"):
        hints.hint("ex99")
    with pytest.raises(ValueError, match="unknown language"):
        hints.hint("ex05", 1, "fr")


def test_set_language_changes_the_default():
    before = get_language()
    try:
        set_language("es")
        assert hints.hint("ex02").startswith("Pista")
        set_language("en")
        assert hints.hint("ex02").startswith("Hint")
    finally:
        set_language(before)


def _public_text() -> str:
    """Everything the stubs already show students (all exercises), whitespace-normalised."""
    return " ".join(" ".join(_stubs.expected_stubs().values()).split())


def test_hint_exercises_follow_the_curriculum():
    for lang in ("en", "es"):  # collected from the exercise packages, in the registry's order
        assert list(hints.HINTS[lang]) == list(EXERCISES)


def test_one_current_language_for_checks_hints_and_figures(monkeypatch):
    from autograder import student
    from autograder.builders import public as _public
    from autograder.core import i18n as _i18n

    monkeypatch.setitem(_i18n._STATE, "lang", None)
    monkeypatch.delenv("TAPETRACE_LANG", raising=False)
    assert get_language() == "en"
    monkeypatch.setenv("TAPETRACE_LANG", "es")
    assert get_language() == "es" and hints.hint("ex01").startswith("Pista")
    monkeypatch.setenv("TAPETRACE_LANG", "fr")  # an unknown value is ignored
    assert get_language() == "en"
    _public.set_language("es")  # the notebook's set-up cell sets the checks' language: hints follow
    assert get_language() == "es" and student.get_language() == "es" and hints.hint("ex01").startswith("Pista")
    set_language("en")
    assert get_language() == "en" and get_language("es") == "es"
    with pytest.raises(ValueError):
        _public.set_language("fr")


# ----------------------------------------------------------------- solutions (self-study only)
def test_graded_build_holds_no_solutions():
    from autograder.student import selfstudy

    assert not (STUDENT_PKG / selfstudy.RESOURCE).exists(), "a solutions resource must never be committed"
    selfstudy._payload.cache_clear()
    with pytest.raises(LookupError, match="graded build"):
        selfstudy.solution("ex01", "en")
    with pytest.raises(LookupError, match="versión evaluada"):
        selfstudy.solution("ex01", "es")


def test_self_study_solution_from_its_payload(monkeypatch):
    import json

    from autograder.student import selfstudy

    payload = json.loads(selfstudy.solutions_payload(SOLUTIONS, PRESENT))
    assert set(payload) == set(PRESENT)
    monkeypatch.setattr(selfstudy, "_payload", lambda: payload)
    for ex in PRESENT:
        en, es = selfstudy.solution(ex[:4], "en"), selfstudy.solution(ex, "es")
        assert "BEGIN SOLUTION" not in en and "END SOLUTION" not in es
        for region in _stubs.solution_regions((SOLUTIONS / f"{ex}.py").read_text()):
            assert region.strip() in en and region.strip() in es, ex
        assert instructions_es.INSTRUCTIONS_ES[ex].strip() in es
        assert "```python" in en._repr_markdown_()
        compile(es, ex, "exec")


def _secret_lines(ex: str) -> list[str]:
    """Code lines of the solution regions that no public stub already shows."""
    text = (SOLUTIONS / f"{ex}.py").read_text()
    stub = _public_text()
    out = []
    for region in _stubs.solution_regions(text):
        for line in region.splitlines():
            s = " ".join(line.split("#", 1)[0].split()) if not line.strip().startswith("#") else ""
            if len(s) >= 8 and re.search(r"[()\[\]=.:@]", s) and s not in stub:
                out.append(s)
    return out


def test_hints_hold_no_solution_code():
    leaks = []
    for ex in PRESENT:
        secret = _secret_lines(ex)
        assert secret, f"{ex}: no solution lines found (markers?)"
        for lang in ("en", "es"):
            for other in EXERCISES:  # a hint of any exercise must not show any exercise's solution
                for i, t in enumerate(hints.HINTS[lang][other]):
                    flat = " ".join(t.split())
                    leaks += [f"HINTS[{lang}][{other}][{i}] shows {ex}: {s!r}" for s in secret if s in flat]
    assert not leaks, "\n".join(leaks)


def test_shipped_student_package_holds_no_solution_code():
    """The graded build ships autograder/student/: nothing in it may reproduce a solution line."""
    files = sorted(STUDENT_PKG.glob("*.py"))
    assert files
    leaks = []
    for path in files:
        flat = " ".join(path.read_text().split())
        for ex in PRESENT:
            leaks += [f"{path.name} shows {ex}: {s!r}" for s in _secret_lines(ex) if s in flat]
    assert not leaks, "\n".join(leaks)


def test_leak_check_would_catch_a_solution_line():
    ex = PRESENT[0]
    secret = _secret_lines(ex)
    assert any(s in " ".join(("x " + secret[0] + " y").split()) for s in secret)


# ----------------------------------------------------------------- Spanish instructions
def _contract_names(source: str) -> set[str]:
    tree = ast.parse(source)
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")}


def _example_lines(doc: str) -> list[str]:
    """The ``>>>`` lines of a docstring and the output lines that follow them."""
    out, in_example = [], False
    for line in doc.splitlines():
        s = line.strip()
        if s.startswith(">>>"):
            out.append(s)
            in_example = True
        elif in_example and s:
            out.append(s)
        else:
            in_example = False
    return out


@pytest.mark.parametrize("ex", PRESENT)
def test_spanish_instructions_keep_contract_names_and_examples(ex):
    source = (SOLUTIONS / f"{ex}.py").read_text()
    en = instructions_es.english_docstrings(source)
    assert ex in instructions_es.INSTRUCTIONS_ES, f"{ex}: no Spanish instructions"
    es = instructions_es.INSTRUCTIONS_ES[ex]
    for name in _contract_names(source):
        assert re.search(rf"\b{re.escape(name)}\b", es), f"{ex}: the Spanish text lost the name {name}"
    es_lines = {ln.strip() for ln in es.splitlines()}
    missing = [ln for ln in _example_lines(en[""]) if ln not in es_lines]
    assert not missing, f"{ex}: the Spanish example differs from the English one: {missing}"
    assert _example_lines(en[""]), f"{ex}: the English instructions have no >>> example"
    assert set(instructions_es.DOCSTRINGS_ES[ex]) == set(en) - {""}, (
        f"{ex}: Spanish docstrings for {sorted(instructions_es.DOCSTRINGS_ES[ex])}, English ones for "
        f"{sorted(set(en) - {''})}")
    assert es.split("—", 1)[0].strip() == f"Ejercicio {ex[2:4]}", f"{ex}: title should start 'Ejercicio {ex[2:4]} —'"


@pytest.mark.parametrize("ex", PRESENT)
def test_spanish_text_follows_the_current_english(ex):
    sha = instructions_es.english_sha((SOLUTIONS / f"{ex}.py").read_text())
    assert instructions_es.SOURCE_SHA.get(ex) == sha, (
        f"the English docstrings of solutions/{ex}.py changed since they were translated: update "
        f"the module docstring and DOCSTRINGS in autograder/exercises/{ex}/es.py, then set its "
        f"SOURCE_SHA = {sha!r} (`python -m autograder.student.instructions_es` prints them all)")


def _without_docs(tree: ast.AST) -> str:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            body[0].value.value = "<doc>"
        if isinstance(node, ast.Raise):
            node.exc = None
    return ast.dump(tree)


@pytest.mark.parametrize("ex", PRESENT)
def test_localized_stub_changes_only_the_words(ex):
    stub = _stubs.stub_source((SOLUTIONS / f"{ex}.py").read_text(), ex)
    es = instructions_es.localize_stub(stub, ex, "es")
    assert instructions_es.localize_stub(stub, ex, "en") == stub
    assert _without_docs(ast.parse(es)) == _without_docs(ast.parse(stub))
    docs = instructions_es.english_docstrings(es)
    assert docs[""] == instructions_es.INSTRUCTIONS_ES[ex]
    for q, text in instructions_es.DOCSTRINGS_ES[ex].items():
        assert " ".join(docs[q].split()) == " ".join(text.split()), f"{ex}: {q}"
    assert "# YOUR CODE HERE" not in es and "# TU CÓDIGO AQUÍ" in es
    assert es.count("raise NotImplementedError") == stub.count("raise NotImplementedError")


def test_notebook_and_figure_texts_match_across_languages():
    from autograder.student import figure_canvas

    for table, name in ((instructions_es.NOTEBOOK_TEXT, "NOTEBOOK_TEXT"), (figure_canvas.TEXT, "figure_canvas.TEXT"),
                        (instructions_es.STUB_MARKERS, "STUB_MARKERS")):
        assert set(table) == {"en", "es"}, name
        assert set(table["en"]) == set(table["es"]), f"{name}: keys differ: {set(table['en']) ^ set(table['es'])}"
        for k in table["en"]:
            assert table["en"][k].strip() and table["es"][k].strip(), f"{name}[{k}] empty"
            assert messages.placeholders(table["en"][k]) == messages.placeholders(table["es"][k]), f"{name}[{k}]"
    for key in ("intro", "setup", "check_title", "hidden_reminder", "not_attempted", "incorrect", "passed"):
        assert key in instructions_es.NOTEBOOK_TEXT["en"], key


def test_notebook_text_matches_the_builders_english():
    """NOTEBOOK_TEXT["en"] carries the builder's English intro/outro (the Spanish translates them):
    when the builder's text changes, this says to update both."""
    nb = pytest.importorskip("autograder.builders.notebook")
    for key, name in (("intro_md", "INTRO"), ("outro_md", "OUTRO")):
        if hasattr(nb, name):
            assert instructions_es.NOTEBOOK_TEXT["en"][key] == getattr(nb, name), (
                f"autograder/builders/notebook.py {name} changed: copy it to NOTEBOOK_TEXT['en'][{key!r}] and update the "
                f"Spanish NOTEBOOK_TEXT['es'][{key!r}]")


# ----------------------------------------------------------------- terminology
def test_glossary_is_readable():
    avoid, es_terms = glossary()
    assert {"tape", "trace", "loss", "accuracy", "epoch", "batch"} <= avoid
    assert {"cinta", "traza", "pérdida", "exactitud", "época", "lote", "clave"} <= es_terms


def test_prose_filter_drops_code_and_keeps_words():
    words = prose_words('usa `loss_fn` y loss.item(), "layer 1: expected" {loss} (out, in) pero la loss crece')
    assert words.count("loss") == 1 and "layer" not in words and "out" not in words and "crece" in words


def test_spanish_texts_use_the_glossary_terms():
    avoid, _ = glossary()
    bad = []
    for where, text in spanish_texts().items():
        found = sorted(set(prose_words(text)) & avoid)
        if found:
            bad.append(f"{where}: {found} — {text[:100]!r}")
    assert not bad, "Spanish texts with words the glossary says to avoid:\n" + "\n".join(bad)


def test_english_texts_do_not_mix_in_spanish_terms():
    _, es_terms = glossary()
    bad = []
    for where, text in english_texts().items():
        found = sorted(set(prose_words(text)) & es_terms)
        if found:
            bad.append(f"{where}: {found}")
    assert not bad, "\n".join(bad)


def test_spanish_tape_and_trace_are_cinta_and_traza():
    es = " ".join(spanish_texts().values()).lower()
    assert "cinta" in es and "traza" in es


# ----------------------------------------------------------------- figures
def _load_solution(ex: str):
    spec = importlib.util.spec_from_file_location(f"_i18n_reference_{ex}", SOLUTIONS / f"{ex}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # flax's dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def notebook_namespaces():
    """``{ex: globals}`` as a notebook has them after running the reference cells up to ``ex``."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models; avoids thread contention on shared CI cores
    ns: dict = {}
    out = {}
    for ex in EXERCISES:
        if (SOLUTIONS / f"{ex}.py").exists():
            mod = _load_solution(ex)
            ns.update({k: v for k, v in vars(mod).items() if not k.startswith("__")})
        out[ex] = dict(ns)
    yield out
    torch.set_num_threads(threads)


def _pixels(png: bytes):
    import matplotlib.image

    return matplotlib.image.imread(io.BytesIO(png), format="png")


FIGURE_BUDGET_S = float(os.environ.get("TAPETRACE_FIGURE_BUDGET", "20"))


@pytest.mark.parametrize("ex", PRESENT)
def test_figure_renders_from_the_reference_code(ex, notebook_namespaces):
    from autograder.student import figure_canvas, figures

    lang = "es" if int(ex[2:4]) % 2 else "en"  # alternate, so both tables are exercised
    t0 = time.process_time()
    result = figures.figure(ex, notebook_namespaces[ex], lang=lang, show=False)
    cpu = time.process_time() - t0
    figs = result if isinstance(result, list) else [result]
    assert figs
    for fig in figs:
        img = _pixels(figure_canvas.to_png(fig))
        assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
        assert float(img[..., :3].std()) > 0.02, f"{ex}: blank figure"
        title = fig.get_suptitle()
        other = "en" if lang == "es" else "es"
        assert title and title not in figure_canvas.TEXT[other].values(), f"{ex}: title {title!r} not in {lang}"
        assert not [n for n in figure_canvas.notes(fig) if n.startswith("⚠")], f"{ex}: {figure_canvas.notes(fig)}"
    if ex[:4] in ("ex01", "ex02", "ex04", "ex05", "ex10"):  # figures of models built in other exercises say whose
        assert all(figure_canvas.notes(fig) for fig in figs), f"{ex}: no word on whose model it shows"
    assert cpu < FIGURE_BUDGET_S, f"{ex}: figure took {cpu:.1f} s of CPU (target < 5 s on an idle CPU)"


def test_each_figure_function_renders_directly():
    np = pytest.importorskip("numpy")
    from autograder.exercises.ex06_per_example_grads.figure import grad_norms
    from autograder.exercises.ex10_bridge.figure import bridge_overlay
    from autograder.student import figure_canvas, figure_panels

    rng = np.random.default_rng(0)
    losses = list(np.exp(-np.linspace(0, 3, 50)) + 0.05)
    for fig in (figure_panels.training_curves(losses, losses[::-1], show=False),
                figure_panels.training_curves(losses, accs=[0.5] * 50, unit="step", lang="es", show=False),
                bridge_overlay(losses, [v + 1e-4 for v in losses], show=False),
                grad_norms({"w": rng.standard_normal((16, 3, 2))}, {"w": np.zeros((3, 2))}, 1.0,
                           show=False),
                figure_panels.digits_report(lambda x: np.arange(len(x)) % 10, lang="es", show=False)):
        assert float(_pixels(figure_canvas.to_png(fig))[..., :3].std()) > 0.02
    with pytest.raises(ValueError):
        figure_panels.moons_boundary(show=False)


def test_figure_reads_the_callers_globals_and_names_what_is_missing(notebook_namespaces):
    from autograder.student import figures

    ns = dict(notebook_namespaces["ex09_autograd_tape"])
    ns["figure"] = figures.figure
    exec("fig = figure('ex09', show=False)", ns)  # the notebook's way of calling it
    assert ns["fig"].get_axes()
    with pytest.raises(NameError, match="nth_derivative"):
        figures.figure("ex08", {}, lang="en", show=False)
    with pytest.raises(NameError, match="necesita"):
        figures.figure("ex03", {}, lang="es", show=False)


def test_figure_shows_once_per_cell(monkeypatch):
    """In IPython, drawing shows the figure; returning it as the cell's value does not show it again."""
    from autograder.student import figure_canvas, figure_panels

    shown = []

    class Shell:
        execution_count = 7

    monkeypatch.setattr(figure_canvas, "_ipython", lambda: Shell())
    display_mod = pytest.importorskip("IPython.display")
    monkeypatch.setattr(display_mod, "display", lambda obj, **kw: obj._ipython_display_()
                        if hasattr(obj, "_ipython_display_") and not isinstance(obj, display_mod.Image)
                        else shown.append(obj))
    fig = figure_panels.training_curves([1.0, 0.5, 0.25])
    fig._ipython_display_()  # the cell's value, same cell
    assert len(shown) == 1
    Shell.execution_count = 8
    fig._ipython_display_()  # shown again in a later cell
    assert len(shown) == 2


def test_notebook_figure_explains_instead_of_raising(notebook_namespaces, capsys):
    """The notebook's `figure` (figure cells run with "Run all"): an unfinished exercise prints what to do,
    in the notebook's language, and returns None; a finished one draws."""
    from autograder.student import figure_canvas, figures

    stub = dict(notebook_namespaces["ex09_autograd_tape"])

    def backward_graph(t):
        raise NotImplementedError("ex09_autograd_tape: sustituye esta línea por tu código")

    stub["backward_graph"] = backward_graph
    assert figures.notebook_figure("ex09", stub, lang="es", show=False) is None
    assert capsys.readouterr().out.strip() == figure_canvas.TEXT["es"]["not_done"].format(ex="ex09")
    assert figures.notebook_figure("ex08", {}, lang="en", show=False) is None
    assert "needs `nth_derivative`" in capsys.readouterr().out

    def broken(t):
        raise RuntimeError("boom")

    stub["backward_graph"] = broken
    assert figures.notebook_figure("ex09", stub, lang="es", show=False) is None
    out = capsys.readouterr().out
    assert "RuntimeError: boom" in out and 'check(\'ex09\')' in out and "no se pudo dibujar" in out
    ns = dict(notebook_namespaces["ex09_autograd_tape"])
    ns["figure"] = figures.notebook_figure
    exec("fig = figure('ex09', show=False)", ns)  # the caller's globals, as in a notebook cell
    assert ns["fig"].get_axes() and not capsys.readouterr().out
    with pytest.raises(ValueError, match="ejercicio desconocido"):
        figures.notebook_figure("ex99", ns, lang="es")


def test_comparison_details_are_translated():
    """`MISMATCH` and friends embed first_difference's sentence: in Spanish it is translated too."""
    np = pytest.importorskip("numpy")
    from autograder.core.compare import first_difference, localize_detail
    from autograder.core.tolerances import Tol

    tol = Tol(1e-5, 1e-4)
    pairs = [(np.ones((2, 3)), np.zeros((2, 3))), (np.ones(3), np.zeros((2, 3))),
             (np.ones(3, np.float32), np.ones(3)), (np.array([1, 2]), np.array([1, 3])),
             (np.array([np.nan]), np.array([1.0])), ({"a": 1, "c": 2}, {"b": 1}), ({"a": 1}, {"a": 1, "b": 2}),
             ({"a": 1, "b": 2}, {"a": 1}), ([1, 2], [1]), ("x", 1.0), ("x", "y"), (1.0, 0.0),
             ({"w": [np.ones(2)]}, {"w": [np.zeros(2)]}), (np.zeros(3), np.array([0.0, 0.0, 1.0]))]
    for got, want in pairs:
        detail = first_difference(got, want, tol)
        assert detail, (got, want)
        es = localize_detail(detail, "es")
        assert localize_detail(detail, "en") == detail
        bad = set(prose_words(es)) & ENGLISH_WORDS
        assert es != detail and not bad, (detail, es, bad)
        rendered = messages.render("MISMATCH", "es", what="MLP.forward", detail=detail)
        assert es in rendered and detail not in rendered
    assert localize_detail("something else: entirely", "es") == "something else: entirely"  # unknown: as is
    assert messages.render("MISMATCH", "en", what="f", detail="output: differs").endswith("output: differs")


def test_feedback_files_in_spanish():
    """`tapetrace grade --lang es --feedback DIR`: the fixed words of the per-student files are Spanish."""
    from autograder.core import status as _status
    from autograder.reports import feedback as _feedback

    detail = "output: 1 of 3 values off (shape (3,), max abs error 1, max rel error 1, worst at index (2,); " \
             "tolerance atol=1e-05, rtol=0.0001)"
    statuses = _status.STATUSES  # every status the engine writes
    res = {"submission": "ana.ipynb", "device": {"torch": "cpu", "jax": "cpu"}, "seed": 1, "total": 3.0,
           "max_total": 10.0 * len(statuses), "exercises": {}}
    for ex, status in zip(EXERCISES, statuses):
        res["exercises"][ex] = {"score": 3.0, "max_score": 10.0, "status": status, "message": "", "tests": [
            {"name": "public_check", "score": 3, "max_score": 3, "passed": True, "hidden": False, "message": ""},
            {"name": "hidden_check", "score": 0, "max_score": 7, "passed": False, "hidden": True,
             "message": messages.render("MISMATCH", "es", what="MLP.forward", detail=detail)}]}
    md = _feedback.feedback_markdown(res, "es")
    page = _feedback.feedback_html(res, "es")
    avoid, _ = glossary()
    for text in (md, re.sub(r"<style>.*?</style>|<[^>]+>", " ", page, flags=re.S)):
        words = set(prose_words(text))
        assert not words & (avoid | ENGLISH_WORDS | {"hidden", "public", "points", "test", "graded", "timeout",
                                                     "crashed", "passed", "failed"}), sorted(words & ENGLISH_WORDS)
    for status in statuses:
        assert status == "error" or _feedback.STATUS_WORDS["es"][status] != status
