"""Docs that match the code (issue 38): every path, module and subcommand a doc or a docstring names exists,
and every subcommand is in the lists that name them all.

Read: README.md, docs/**/*.md, each autograder/**/README.md, and every docstring (module, class, function)
under autograder/ and tests/. Checked in them:

- a path under ``autograder/``, ``tests/``, ``scripts/`` or ``benchmarks/`` exists; a placeholder such as
  ``exNN_*`` or ``exNN_name`` (or an upper-case word: ``tests/scripts/SCRIPT``) and a glob must match at
  least one file; the files only the build writes (inside the notebook's runtime zip) are read from the code
  that writes them (:data:`GENERATED`);
- a dotted module (``autograder.engine.run``) is a file of the tree, and a dotted name
  (``autograder.engine.run.GradingRun``) is defined in its module;
- ``tapetrace SUBCOMMAND`` (in backticks, after ``bin/``, or a command line of a Markdown page) is one of
  :data:`autograder.cli.app.COMMANDS`, and the pre-split ``cmd_SUBCOMMAND`` functions are named nowhere;
- the subcommand lists of :data:`LISTS` (``subcommand (`grade`, ...)``) name every subcommand.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from autograder.builders.runtime import SELF_STUDY_ARC
from autograder.builders.snapshot import SNAPSHOT_ARC
from autograder.cli.app import COMMANDS
from autograder.core.paths import ROOT

PATH = re.compile(r"(?<![\w./-])((?:autograder|tests|scripts|benchmarks)/[\w./*-]*[\w*/])")
MODULE = re.compile(r"(?<![\w./-])(autograder(?:\.\w+)+)")
COMMAND_MD = re.compile(r"(?:`|bin/|^[ \t]*\$?[ \t]*|&&[ \t]*)tapetrace ([a-z][\w-]*)", re.M)
COMMAND_DOC = re.compile(r"(?:`|bin/)tapetrace ([a-z][\w-]*)")
PRE_SPLIT = re.compile(rf"\bcmd_(?:{'|'.join(COMMANDS)})\b")
SUBCOMMAND_LIST = re.compile(r"subcommand \(([^)]*)\)")

# written by the build into the notebook's runtime zip, never into the tree
GENERATED = frozenset({SNAPSHOT_ARC, SELF_STUDY_ARC})
# `tapetrace X` that is not a subcommand: the name of a column (docs/instructors/reports.md)
NOT_COMMANDS = frozenset({"notes"})
# a file name that starts like a module: `tapetrace-autograder.zip`, `autograder.zip`
FILE_SUFFIXES = frozenset({"zip", "json", "py", "md", "toml", "txt", "csv", "html"})
# the pages whose list of subcommands must be whole
LISTS = ("README.md", "docs/instructors/grading.md", "autograder/cli/README.md", "docs/architecture.md")


def _pages() -> Iterator[tuple[str, str]]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "autograder").rglob("README.md"))]
    for page in pages:
        yield str(page.relative_to(ROOT)), page.read_text(encoding="utf-8")


def _docstrings() -> Iterator[tuple[str, str]]:
    for base in ("autograder", "tests"):
        for path in sorted((ROOT / base).rglob("*.py")):
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except SyntaxError:  # the tests' deliberately broken submissions
                continue
            for node in ast.walk(tree):
                if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    doc = ast.get_docstring(node, clean=False)
                    if doc:
                        yield f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 1)}", doc


def path_exists(path: str, root: Path = ROOT) -> bool:
    """Whether ``path`` (relative to ``root``) names something of the tree; a placeholder or glob must match."""
    path = path.rstrip("./") if path.endswith((".", "/")) else path
    if path in GENERATED:
        return True
    parts = [re.sub(r"exNN(?:_\w+)?", "ex[0-9][0-9]_*", part) for part in path.split("/")]
    parts = ["*" if re.fullmatch(r"[A-Z][A-Z_]+(\.\w+)?", part) else part for part in parts]
    pattern = "/".join(parts)
    if any(c in pattern for c in "*["):
        return next(root.glob(pattern), None) is not None
    return (root / pattern).exists()


def module_exists(dotted: str, root: Path = ROOT) -> bool:
    """Whether ``dotted`` is a module of the tree under ``root``, or a name such a module defines."""
    parts = dotted.split(".")
    if parts[-1] in FILE_SUFFIXES:
        return True
    for i in range(len(parts), 1, -1):
        base = root.joinpath(*parts[:i])
        source = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
        if source.is_file():
            rest = parts[i:]
            return not rest or re.search(rf"\b{re.escape(rest[0])}\b", source.read_text(encoding="utf-8")) is not None
    return False


def drift(name: str, text: str, markdown: bool) -> list[str]:
    """What ``text`` names that does not exist."""
    bad = [f"path {p}" for p in PATH.findall(text) if not path_exists(p)]
    bad += [f"module {m}" for m in MODULE.findall(text) if not module_exists(m)]
    commands = (COMMAND_MD if markdown else COMMAND_DOC).findall(text)
    bad += [f"`tapetrace {c}`" for c in commands if c not in COMMANDS and c not in NOT_COMMANDS]
    bad += [f"the pre-split {m}" for m in PRE_SPLIT.findall(text)]
    return [f"{name}: {b}" for b in bad]


def test_every_doc_names_only_what_exists():
    bad = [b for name, text in _pages() for b in drift(name, text, markdown=True)]
    assert not bad, "\n".join(bad)


def test_every_docstring_names_only_what_exists():
    bad = [b for name, text in _docstrings() for b in drift(name, text, markdown=False)]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("page", LISTS)
def test_a_list_of_the_subcommands_names_them_all(page):
    lists = SUBCOMMAND_LIST.findall((ROOT / page).read_text(encoding="utf-8"))
    assert lists, f"{page} has no `subcommand (...)` list"
    for found in lists:
        names = re.findall(r"[a-z][\w-]*", found)
        assert names == list(COMMANDS), f"{page}: subcommand ({found}) is not ({', '.join(COMMANDS)})"


def test_the_checks_catch_drift_and_tolerate_placeholders(tmp_path):
    (tmp_path / "autograder" / "engine").mkdir(parents=True)
    (tmp_path / "autograder" / "engine" / "run.py").write_text("class GradingRun: ...\n")
    (tmp_path / "autograder" / "hidden").mkdir()
    (tmp_path / "autograder" / "hidden" / "ex01_torch_mlp.py").write_text("")
    assert path_exists("autograder/engine/run.py", tmp_path)
    assert not path_exists("autograder/_run.py", tmp_path)
    assert path_exists("autograder/hidden/exNN_name.py", tmp_path)
    assert path_exists("autograder/hidden/exNN_*.py", tmp_path)
    assert not path_exists("autograder/exercises/exNN_*/probes.py", tmp_path)
    assert path_exists("autograder/engine/SCRIPT", tmp_path)
    assert module_exists("autograder.engine.run.GradingRun", tmp_path)
    assert not module_exists("autograder.engine.run.ExerciseGrading", tmp_path)
    assert not module_exists("autograder.engine.rows", tmp_path)
    assert module_exists("autograder.zip", tmp_path)
    assert drift("x", "see ``cmd_grade`` and `tapetrace grades`", markdown=False) == [
        "x: `tapetrace grades`", "x: the pre-split cmd_grade"]
    assert drift("x", "tapetrace grade subs/*\n`tapetrace notes` column", markdown=True) == []
    assert drift("x", "tapetrace public checks", markdown=False) == []


WHERE = ("a hidden check", "a message in one language", "a new report or gradebook format", "a sandbox layer",
         "how tasks spread over Dask")


def _where_rows() -> list[list[str]]:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Where to change what", 1)[1].split("\n## ", 1)[0]
    return [[c.strip() for c in row.strip().strip("|").split("|")] for row in section.splitlines()
            if row.startswith("| ") and not row.startswith("| To change")]


def test_where_to_change_what_names_files_and_names_that_exist():
    rows = _where_rows()
    assert all(any(r[0].startswith(w) for r in rows) for w in WHERE), [r[0] for r in rows]
    for change, edit, run in rows:
        files = [ROOT / p for p in PATH.findall(edit) if p.endswith(".py") and "NN" not in p]
        files += [f for p in PATH.findall(edit) if "NN" in p and p.endswith(".py")
                  for f in sorted(ROOT.glob(re.sub(r"exNN(?:_\w+)?", "ex[0-9][0-9]_*", p)))[:1]]
        assert run, f"{change}: nothing to run"
        assert files or not change.startswith(WHERE), f"{change}: no file to edit"
        sources = "\n".join(f.read_text(encoding="utf-8") for f in files)
        names = re.findall(r"`([A-Za-z_]\w*)`", edit)
        missing = [n for n in names if not re.search(rf"\b{n}\b", sources)]
        assert not missing, f"{change}: {missing} defined in none of {[str(f.relative_to(ROOT)) for f in files]}"
