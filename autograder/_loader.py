"""The one way in: a submission path -> the source text of each exercise.

Supported forms (GRADING.md):
- a directory holding ``exNN_*.py`` files (or one sub-folder that does);
- a single ``.py``: named like an exercise it is that exercise; any other
  name is taken as the whole submission (every exercise reads the same file);
- a notebook: code cells are grouped per exercise. A cell belongs to the
  exercise named in its ``tapetrace`` metadata, else to the exercise of the
  nearest heading above it that names one (``ex04_jax_mlp`` or ``ex04``);
  check, hint and figure cells (``role: check|figure|hint`` or cells that only
  call ``check(...)``/``hint(...)``/``figure(...)``/``grader.check``) and
  notebook magics (``%``, ``!``) are dropped; ``from __future__`` imports that
  the concatenation leaves mid-module move to the top of the exercise's source.
  Cells before the first exercise (set-up) are not graded. Only code cells'
  sources are read (outputs are ignored), so notebooks get a larger size cap
  than ``.py`` files;
- a ``.zip`` of any of these (at the top or inside one folder), extracted
  with limits on size and entry count.

Student code is never executed here: this only reads text.
"""

from __future__ import annotations

import ast
import json
import re
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from autograder._paths import EXERCISES

MAX_ZIP_BYTES = 50 * 1024 * 1024
MAX_ZIP_ENTRIES = 500
MAX_SOURCE_BYTES = 2 * 1024 * 1024  # a .py file
MAX_NOTEBOOK_BYTES = 100 * 1024 * 1024  # a notebook: mostly outputs (images), which are not read
_SHORT = {name[:4]: name for name in EXERCISES}


class SubmissionError(Exception):
    """The submission cannot be read at all (bad path, corrupt zip, bad JSON)."""


@dataclass
class Submission:
    """Source text per exercise; None where the submission has none."""

    path: str
    sources: dict[str, str | None] = field(default_factory=dict)
    form: str = "directory"


def _exercise_in(text: str) -> str | None:
    for m in re.finditer(r"\b(ex\d\d)(_\w+)?\b", text):
        full = m.group(0)
        if full in EXERCISES:
            return full
        if m.group(1) in _SHORT:
            return _SHORT[m.group(1)]
    return None


_CHECK_LINE = re.compile(r"^\s*(check|grader\.check|hint|solution|show|figure|grader\.check_all)\s*\(")


def _clean_cell(src: str) -> str:
    lines = []
    for line in src.splitlines():
        if line.lstrip().startswith(("%", "!")):
            lines.append("pass  # notebook magic removed by the grader" if line.startswith((" ", "\t")) else "")
            continue
        lines.append(line)
    return "\n".join(lines)


def notebook_sources(nb: dict) -> dict[str, str | None]:
    """Groups a notebook's code cells per exercise (see module docstring)."""
    cells = nb.get("cells")
    if not isinstance(cells, list):
        raise SubmissionError("the notebook has no cells")
    parts: dict[str, list[str]] = {}
    current: str | None = None
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        src = cell.get("source", "")
        if isinstance(src, list):
            src = "".join(str(s) for s in src)
        meta = (cell.get("metadata") or {}).get("tapetrace") or {}
        ex = meta.get("exercise") if isinstance(meta, dict) else None
        if cell.get("cell_type") == "markdown":
            found = ex if ex in EXERCISES else None
            if found is None:
                heading = "\n".join(ln for ln in str(src).splitlines() if ln.lstrip().startswith("#"))
                found = _exercise_in(heading)
            if found:
                current = found
            continue
        if cell.get("cell_type") != "code":
            continue
        if ex in EXERCISES:
            current = ex
        role = meta.get("role") if isinstance(meta, dict) else None
        if role in ("check", "setup", "figure", "hint") or current is None:
            continue
        if all(_CHECK_LINE.match(ln) or not ln.strip() or ln.lstrip().startswith("#")
               for ln in str(src).splitlines()):
            if any(_CHECK_LINE.match(ln) for ln in str(src).splitlines()):
                continue
        parts.setdefault(current, []).append(_clean_cell(str(src)))
    return {ex: (hoist_future_imports("\n\n".join(parts[ex]) + "\n") if ex in parts else None) for ex in EXERCISES}


def hoist_future_imports(source: str) -> str:
    """Moves ``from __future__`` imports that are not at the top of a module to its first line.

    Cells joined into one module can leave a ``from __future__ import annotations`` (legal at
    the top of its own cell) after other code, which Python rejects. Each such statement's lines
    are blanked and one combined import goes first, so later line numbers shift by one. A source
    that does not parse, or whose future imports are already where Python wants them, is returned
    unchanged.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source
    futures = [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"]
    if not futures:
        return source
    allowed = 0  # the statements Python allows before a future import: a docstring, other future imports
    for i, node in enumerate(tree.body):
        doc = i == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
            and isinstance(node.value.value, str)
        if doc or node in futures:
            allowed += 1
        else:
            break
    if all(node in tree.body[:allowed] for node in futures):
        return source
    lines = source.splitlines(keepends=True)
    names: list[str] = []
    for node in futures:
        start, end = node.lineno - 1, node.end_lineno or node.lineno
        before = lines[start][:node.col_offset]
        after = lines[end - 1][node.end_col_offset or 0:]
        if before.strip() or after.strip().lstrip(";").strip() and not after.strip().startswith("#"):
            return source  # shares its line with other code: leave it (Python will say where)
        names += [a.name for a in node.names if a.name not in names]
        for k in range(start, end):
            lines[k] = "\n"
    return f"from __future__ import {', '.join(names)}\n" + "".join(lines)


def _read_text(path: Path, limit: int = MAX_SOURCE_BYTES) -> str:
    if path.stat().st_size > limit:
        raise SubmissionError(f"{path.name} is larger than {limit // (1024 * 1024)} MB")
    return path.read_text(encoding="utf-8", errors="replace")


def _from_dir(path: Path) -> Submission:
    files = {p.stem: p for p in path.glob("ex*.py") if p.stem in EXERCISES}
    if not files:
        subdirs = [d for d in path.iterdir() if d.is_dir() and not d.name.startswith((".", "__"))]
        notebooks = sorted(path.glob("*.ipynb"))
        if len(notebooks) == 1:
            return _from_notebook(notebooks[0])
        if len(subdirs) == 1:
            return _from_dir(subdirs[0])
    return Submission(str(path), {ex: (_read_text(files[ex]) if ex in files else None) for ex in EXERCISES})


def _from_notebook(path: Path) -> Submission:
    try:
        nb = json.loads(_read_text(path, MAX_NOTEBOOK_BYTES))
    except (ValueError, UnicodeDecodeError) as err:
        raise SubmissionError(f"{path.name} is not a valid notebook: {err}") from None
    if not isinstance(nb, dict):
        raise SubmissionError(f"{path.name} is not a valid notebook")
    return Submission(str(path), notebook_sources(nb), "notebook")


def _from_zip(path: Path) -> Submission:
    try:
        zf = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as err:
        raise SubmissionError(f"{path.name} is not a readable zip: {err}") from None
    with zf:
        infos = [i for i in zf.infolist() if not i.is_dir() and not i.filename.startswith("__MACOSX")]
        if len(infos) > MAX_ZIP_ENTRIES or sum(i.file_size for i in infos) > MAX_ZIP_BYTES:
            raise SubmissionError(f"{path.name} is too large to be a submission")
        with tempfile.TemporaryDirectory(prefix="tapetrace-zip-") as tmp:
            root = Path(tmp)
            for info in infos:
                name = Path(info.filename)
                if name.is_absolute() or ".." in name.parts or len(name.parts) > 3:
                    continue
                if name.suffix not in (".py", ".ipynb"):
                    continue
                target = root / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(info))
            sub = _from_dir(root)
            sub.path = str(path)
            sub.form = "zip"
            return sub


def load(path_str: str) -> Submission:
    """Reads a submission in any supported form.

    Args:
        path_str: a directory, ``.py``, ``.ipynb`` or ``.zip`` path.

    Returns:
        A :class:`Submission` with one source (or None) per exercise.

    Raises:
        SubmissionError: the path does not exist or cannot be read.
    """
    path = Path(path_str)
    if not path.exists():
        raise SubmissionError(f"{path_str}: no such file or directory")
    try:
        if path.is_dir():
            sub = _from_dir(path)
        elif path.suffix == ".ipynb":
            sub = _from_notebook(path)
        elif path.suffix == ".zip":
            sub = _from_zip(path)
        elif path.suffix == ".py":
            text = _read_text(path)
            if path.stem in EXERCISES:
                sub = Submission(str(path), {ex: (text if ex == path.stem else None) for ex in EXERCISES}, "file")
            else:
                sub = Submission(str(path), dict.fromkeys(EXERCISES, text), "script")
        else:
            raise SubmissionError(f"{path.name}: expected a directory, .py, .ipynb or .zip")
    except OSError as err:
        raise SubmissionError(f"{path_str}: {err.strerror or err}") from None
    sub.path = path_str
    return sub
