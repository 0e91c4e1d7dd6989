"""Every file the repository cites is in the repository (issue 65): a document name (`SOMETHING.md`) or a path
(`autograder/core/records.py`, `core/data.py`, `instructors/otter.md`, `../security.md`) named in the docs, in
the code or in the tests' prose resolves to a file of the clone, and none leads out of it (`../shared/...`).

What is read: every Markdown page (the README, docs/, the packages' READMEs), the whole text of the shipped and
grading code (autograder/, scripts/, benchmarks/, solutions/, exercises/: its messages cite pages too), and the
comments and docstrings of tests/ (whose strings are fixtures: `alice.md`, `../shared/GRADING.md`). What counts
as a citation: any name ending in `.md`, and any path with a folder whose first part is one of the clone's own
folders (a top-level one, a sub-package of autograder/, a folder of docs/) or `shared/` or `../`, ending in a
source or text extension. Placeholders (`exNN_name`, `*`, `<name>`, `{ex}`) are skipped.
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from pathlib import Path

import pytest

from autograder.core.paths import ROOT

# Folders whose files are read (the generated student template, the mutants, the attacks and the example
# submissions are data: they quote a student's code).
READ = ("autograder", "docs", "tests", "scripts", "benchmarks", "solutions", "exercises")
READ_FROM = tuple(f"{top}/" for top in READ) + ("README.md",)
SKIP = ("tests/mutants/", "tests/adversarial/attacks/", "tests/test_citations.py")  # this file quotes examples
NOT_WALKED = {"site", "__pycache__", "node_modules", "build", "dist"}  # and hidden folders (.git, .venv)
PROSE_ONLY = ("tests/",)  # read for comments and docstrings only

NAME = r"[\w-]*[A-Za-z][\w-]*"
DOCUMENT = re.compile(rf"(?<![\w./-])((?:\.\.?/)*(?:[\w.-]+/)*{NAME}\.md)(?![\w/-])")
PATH = re.compile(rf"(?<![\w./-])((?:\.\.?/)*(?:[\w.-]+/)+{NAME}\.(?:py|md|toml|ya?ml|sh|txt|cfg|ini))(?![\w/-])")
PLACEHOLDER = re.compile(r"NN|XX|[*<>{}$]|\.\.\.")

# Contract files of the workspace the repository once cited: the repository's own page instead.
INSTEAD = {"GRADING.md": "docs/grading-contract.md", "CURRICULUM.md": "docs/curriculum.md"}

# Names that look like citations and are not (file -> {name: why}).
NOT_CITATIONS = {
    "docs/instructors/grading.md": {"alice-work.md": "a feedback file's name, what `--feedback` writes"},
    "tests/test_readmes.py": {"../security.md": "a link a page in docs/instructors/ may write (the rule's example)"},
}
# Tests may name a workspace tool beside the checkout that they run when it is there and skip without.
WORKSPACE_TOOLS = re.compile(r"^(?:\.\./)*shared/tools/")


def _walk() -> list[str]:
    """The clone's files (as POSIX paths from the root), build outputs and virtual environments left out."""
    out = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in NOT_WALKED and not d.startswith(".") and not d.endswith(".egg-info")]
        out += [Path(folder, f).relative_to(ROOT).as_posix() for f in files]
    return out


FILES = _walk()
FOLDERS = ({p.split("/")[0] for p in FILES if "/" in p}
           | {p.split("/")[1] for p in FILES if p.startswith(("autograder/", "docs/")) and p.count("/") >= 2}
           | {"shared"})


def _prose(source: str) -> str:
    """The comments and docstrings of Python ``source`` (all of it where it does not parse)."""
    try:
        tree = ast.parse(source)
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (SyntaxError, tokenize.TokenError):
        return source
    docs = {node.body[0].value.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and node.body and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant) and isinstance(node.body[0].value.value, str)}
    return "\n".join(t.string for t in tokens
                     if t.type == tokenize.COMMENT or (t.type == tokenize.STRING and t.start[0] in docs))


def citations(text: str) -> list[str]:
    """The file names ``text`` cites: documents (`*.md`) and paths under the clone's own folders."""
    found = [m.rstrip(".") for m in DOCUMENT.findall(text)]
    for m in PATH.findall(text):
        first = m.split("/")[0]
        if m.startswith("../") or first in FOLDERS:
            found.append(m.rstrip("."))
    return [c for c in dict.fromkeys(found) if not PLACEHOLDER.search(c)]


def unresolved(name: str, folder: Path, files: list[str] | None = None) -> str | None:
    """Why the citation ``name`` (read in ``folder``) points at no file of the clone, or None when it does.

    A path is tried from the citing file's folder, the root, docs/ and autograder/, then as the end of a
    file's path (`otter.md`, `instructors/otter.md`); a `../` path only from the citing file's folder.
    """
    root = ROOT.resolve()
    if name.startswith("../"):
        target = (folder / name).resolve()
        if not target.is_relative_to(root):
            return "leads out of the repository"
        return None if target.exists() else "no such file"
    if name.split("/")[0] == "shared" and not (ROOT / "shared").exists():
        return "leads out of the repository (the workspace's shared/)"
    for base in (folder, ROOT, ROOT / "docs", ROOT / "autograder"):
        if (base / name).is_file():
            return None
    tail = name.removeprefix("./")
    if any(f == tail or f.endswith("/" + tail) for f in (FILES if files is None else files)):
        return None
    return "no such file in the repository"


def _texts() -> list[tuple[str, str]]:
    """``(path, text)`` for every file read: Markdown whole, code whole, tests' prose."""
    out = []
    for rel in FILES:
        if not rel.startswith(READ_FROM) or rel.startswith(SKIP) or not rel.endswith((".md", ".py")):
            continue
        text = (ROOT / rel).read_text(encoding="utf-8")
        out.append((rel, _prose(text) if rel.endswith(".py") and rel.startswith(PROSE_ONLY) else text))
    return out


def test_every_cited_file_is_in_the_repository():
    missing = []
    for rel, text in _texts():
        folder = (ROOT / rel).parent
        allowed = NOT_CITATIONS.get(rel, {})
        for name in citations(text):
            if name in allowed or (rel.startswith("tests/") and WORKSPACE_TOOLS.search(name)):
                continue
            why = unresolved(name, folder)
            if why:
                hint = f" (cite {INSTEAD[Path(name).name]})" if Path(name).name in INSTEAD else ""
                missing.append(f"{rel}: {name}: {why}{hint}")
    assert not missing, "citations of files the repository lacks:\n" + "\n".join(missing)


@pytest.mark.parametrize("name", sorted(INSTEAD))
def test_the_workspace_contracts_are_pages_here_not_files(name):
    """The contract files stay the docs pages: a copy at the root would make a stale citation resolve again."""
    assert not (ROOT / name).exists()
    assert (ROOT / INSTEAD[name]).is_file()


def test_the_finder_sees_any_file_name_and_judges_it():
    text = ("the contract (CURRICULUM.md, ex04); see docs/curriculum.md and `core/data.py`; a link "
            "[it](../security.md); ../shared/GRADING.md; shared/tools/x.sh; tests/mutants/exNN_name/*.py; "
            "an output `grades.csv`; `new/hints.py` relative to a template folder")
    found = citations(text)
    assert found == ["CURRICULUM.md", "docs/curriculum.md", "../security.md", "../shared/GRADING.md",
                     "core/data.py", "shared/tools/x.sh"]
    docs = ROOT / "docs" / "instructors"
    assert unresolved("CURRICULUM.md", ROOT) == "no such file in the repository"
    assert unresolved("NOTES.md", ROOT, files=[]) == "no such file in the repository"
    assert unresolved("docs/curriculum.md", ROOT) is None
    assert unresolved("core/data.py", ROOT / "autograder" / "probing") is None
    assert unresolved("../security.md", docs) is None
    assert unresolved("../security.md", ROOT) == "leads out of the repository"
    assert unresolved("../../../shared/GRADING.md", docs) == "leads out of the repository"
    assert unresolved("shared/tools/x.sh", ROOT).startswith("leads out of the repository")
    assert unresolved("otter.md", ROOT) is None  # docs/instructors/otter.md, by the end of its path
