"""Notebook cells -> one graded module per exercise, with what "Run all" gives it (text only).

docs/grading-contract.md ("Notebook semantics"): a notebook is graded with the meaning "Run all" has for its student.
This module turns a notebook (or a jupytext "percent" ``.py``) into, per exercise, the text of
one *graded module*:

- **the exercise's own section**: its code cells, each transformed as IPython would run it
  (:func:`autograder.submissions.ipython_cells.transform_cell`), joined in order. This part is
  strict: if it fails when run, that is the exercise's load error, with line numbers of this section.
- **its context**, appended as one trailing comment line (:data:`TRAILER`): the code cells
  above the section's last cell that belong to no exercise or to another one (cells above the
  first exercise, earlier sections), reduced to what later code can see. Per cell: its
  transformed source, its ``from __future__`` features, and the top-level statements kept,
  each with the names it binds and the global names it reads
  (:func:`autograder.submissions.statements.statement_names`).
  Kept: imports, ``def``, ``class``, assignments, and ``if``/``try``/``with`` blocks without
  loops; not kept: loops and bare expression statements (training runs, prints, plots).
  :mod:`autograder.submissions.execute` runs the part of it the section needs, with every failure skipped,
  under a small time budget.
- **its later cells** (in the same trailer, given the exercises' contracts): "Run all" leaves the *last*
  definition of each name, so a scratch cell below the section that redefines a name of the exercise's
  contract (``class MLP`` fixed at the end of the notebook) is what gets graded. Per cell below the
  section, the statements that only rebind names (``def``, ``class``, imports, ``NAME = ...``:
  :func:`autograder.submissions.statements.rebinds_only`); a contract name counts as redefined only by a
  ``def``/``class`` with the signature the section gave it (a helper ``def accuracy(logits, labels)``
  under ex07 is not ex04's ``accuracy``), and never by a cell whose own exercise has the name in its
  contract too (ex05's ``fit`` stays ex05's); :mod:`autograder.submissions.execute` runs
  the redefinitions (and what they read from those cells) after the section, failures skipped. An exercise
  with no code cell of its own (its answer cell deleted) whose names a cell below its heading defines gets
  an empty section with that trailer.

Sections follow the template: a markdown cell starts exercise EX's section when its first
line is a heading naming EX (``## ex04_jax_mlp — ...``) and, where the notebook still has the
template's metadata for EX's heading, only when it is that cell. Students' own headings
("### compare with ex04") never start a section; the template's intro and outro cells
(tapetrace metadata, no exercise) close one. A code cell carrying an exercise's metadata
belongs to that exercise wherever it was moved, and only that cell does. The set-up cell,
cells made only of ``check``/``hint``/``figure``/``solution`` calls, and cell magics whose
body is not Python (``%%bash``, ``%%html``, ``%%writefile``, ...) are never graded; what the
``%%writefile NAME.py`` cells above a section's last cell wrote travels in its trailer
(:func:`written_files`): the section may import it or ``%run`` it, as in Colab.

Nothing here runs student code: it only reads text (``ast``, ``symtable`` and IPython's
input transformer are parsers).
"""

from __future__ import annotations

import ast
import base64
import json
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from autograder.core.text_intake import TextFault, normalise_source
from autograder.submissions.fstrings import parse_source
from autograder.submissions.ipython_cells import transform_cell, written_file
from autograder.submissions.statements import context_cell, needed, rebinds_only, signature, signatures

TRAILER = "# tapetrace-context v1: "
_CHECK_LINE = re.compile(r"^\s*(check|grader\.check|hint|solution|show|figure|grader\.check_all)\s*\(")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(ex\d\d(?:_\w+)?)")
_PERCENT = re.compile(r"^# %%(?:$|[ \t])")
# what jupytext comments out in a percent file (magics, shell commands, help) and uncomments on reading
_COMMENTED_MAGIC = re.compile(r"^(\s*)# ?((?:%{1,2}[A-Za-z]|!|\w+(?:\s*,\s*\w+)*\s*=\s*[!%][A-Za-z]|\?"
                              r"|[\w.]+\?{1,2}\s*$).*)$")
_SETUP_MARK = "_tapetrace_setup("


@dataclass
class Cell:
    """One notebook cell, as far as grading is concerned."""

    index: int
    kind: str  # "code", "markdown", "raw"
    source: str
    exercise: str | None = None  # from its tapetrace metadata
    role: str | None = None
    meta: bool = False  # whether it carries tapetrace metadata at all
    faults: tuple[TextFault, ...] = ()  # characters IPython cannot run (now U+FFFD): the cell fails in "Run all"


# --------------------------------------------------------------------------- reading cells
def _meta(cell_meta: Any, exercises: tuple[str, ...]) -> tuple[str | None, str | None, bool]:
    meta = (cell_meta or {}).get("tapetrace") if isinstance(cell_meta, dict) else None
    if not isinstance(meta, dict):
        return None, None, False
    ex = meta.get("exercise")
    role = meta.get("role")
    return (ex if ex in exercises else None), (role if isinstance(role, str) else None), True


def notebook_cells(nb: dict, exercises: tuple[str, ...]) -> list[Cell]:
    """The cells of an nbformat notebook (plain dict); ``exercises``: the curriculum's names, in order.

    Raises:
        ValueError: the notebook has no list of cells.
    """
    cells = nb.get("cells") if isinstance(nb, dict) else None
    if not isinstance(cells, list):
        raise ValueError("the notebook has no cells")
    out = []
    for i, cell in enumerate(cells):
        if not isinstance(cell, dict):
            continue
        src = cell.get("source", "")
        src = "".join(str(s) for s in src) if isinstance(src, list) else str(src or "")
        text = normalise_source(src)  # the one intake of a cell's text (autograder.core.text_intake)
        ex, role, has = _meta(cell.get("metadata"), exercises)
        out.append(Cell(i, str(cell.get("cell_type", "")), text.text, ex, role, has, text.faults))
    return out


def is_percent_script(text: str) -> bool:
    """Whether a ``.py`` file is a jupytext "percent" notebook (``# %%`` cell markers)."""
    return any(_PERCENT.match(line) for line in text.splitlines())


_CELL_KIND = re.compile(r"\[(markdown|md|raw)\]")
_META_KEY = re.compile(r"([A-Za-z_][\w.-]*)=")
MAX_HEADER = 4096  # characters of a ``# %%`` line whose metadata is read (jupytext writes short ones)


def _percent_header(rest: str) -> tuple[str, dict]:
    """``[markdown] key={json} key="v"`` after ``# %%`` -> (cell type, metadata). Linear in the line's length:
    a header of thousands of spaces once made a backtracking pattern run for minutes."""
    kind = "code"
    m = _CELL_KIND.search(rest)
    if m:
        kind = "raw" if m.group(1) == "raw" else "markdown"
        rest = rest[m.end():]
    meta: dict = {}
    if len(rest) > MAX_HEADER:  # no jupytext header is this long: its metadata is not read
        return kind, meta
    decoder = json.JSONDecoder()
    pos = 0
    while (m := _META_KEY.search(rest, pos)) is not None:
        try:
            value, end = decoder.raw_decode(rest, m.end())
        except ValueError:
            pos = m.end()
            continue
        meta[m.group(1)] = value
        pos = end
    return kind, meta


def percent_cells(text: str, exercises: tuple[str, ...]) -> list[Cell]:
    """The cells of a jupytext percent script, as jupytext reads them back.

    Markdown cells lose their ``# `` prefixes; code cells get back the magics, shell commands
    and ``obj?`` help lines jupytext comments out when it writes the file.
    """
    cells: list[Cell] = []
    kind, meta, lines = "code", {}, []

    def flush() -> None:
        body = list(lines)
        if kind == "code":
            body = [_COMMENTED_MAGIC.sub(r"\1\2", ln) for ln in body]
        else:
            body = [ln[2:] if ln.startswith("# ") else ln[1:] if ln.startswith("#") else ln for ln in body]
        src = "\n".join(body).strip("\n")
        if src.strip() or cells or kind != "code":
            ex, role, has = _meta(meta, exercises)
            text = normalise_source(src + "\n" if src else "")  # the one intake of a cell's text
            cells.append(Cell(len(cells), kind, text.text, ex, role, has, text.faults))

    in_header = False
    for n, line in enumerate(text.splitlines()):
        if n == 0 and line.strip() == "# ---":
            in_header = True
            continue
        if in_header:
            in_header = line.strip() != "# ---"
            continue
        if _PERCENT.match(line):
            flush()
            kind, meta = _percent_header(line[4:])
            lines = []
            continue
        lines.append(line)
    flush()
    return cells


# --------------------------------------------------------------------------- sections
def _first_line(src: str) -> str:
    return next((ln for ln in src.splitlines() if ln.strip()), "")


def _heading_names(src: str, exercises: tuple[str, ...]) -> str | None:
    """The exercise a heading in the template's form names: ``## ex04_jax_mlp ...``."""
    m = _HEADING.match(_first_line(src))
    if not m:
        return None
    name = m.group(1)
    return name if name in exercises else None


def _helper_only(src: str) -> bool:
    lines = [ln for ln in src.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    return bool(lines) and all(_CHECK_LINE.match(ln) for ln in lines)


def graded_cells(cells: list[Cell], exercises: tuple[str, ...]) -> list[tuple[Cell, str | None]]:
    """The code cells that take part in grading, each with its owner (an exercise, or None).

    Owner None: above the first exercise, or after a template cell that closes a section.
    """
    return _walk(cells, exercises)[0]


def _walk(cells: list[Cell], exercises: tuple[str, ...]) -> tuple[list[tuple[Cell, str | None]], dict[str, int]]:
    """:func:`graded_cells`, and the index of the heading cell that starts each exercise's section (its last)."""
    meta_headings = {c.exercise for c in cells
                     if c.kind == "markdown" and c.exercise and _heading_names(c.source, exercises) == c.exercise}
    current: str | None = None
    out: list[tuple[Cell, str | None]] = []
    headings: dict[str, int] = {}
    for cell in cells:
        if cell.kind == "markdown":
            named = _heading_names(cell.source, exercises)
            if named and (named not in meta_headings or cell.exercise == named):
                current = named
                headings[named] = cell.index
            elif cell.meta and cell.exercise is None and cell.role == "markdown":
                current = None  # the template's intro or outro
            continue
        if cell.kind != "code" or cell.role == "setup" or _SETUP_MARK in cell.source:
            continue
        if _helper_only(cell.source):
            continue
        out.append((cell, cell.exercise or current))
    return out, headings


def hoist_future_imports(source: str) -> str:
    """Moves ``from __future__`` imports that are not at the top of a module to its first line.

    Cells joined into one module can leave a ``from __future__ import annotations`` (legal at
    the top of its own cell) after other code, which Python rejects. Each such statement's lines
    are blanked and one combined import goes first, so later line numbers shift by one. A source
    that does not parse, or whose future imports are already where Python wants them, is returned
    unchanged.
    """
    try:
        tree = parse_source(source)
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


# --------------------------------------------------------------------------- graded modules
def _encode(context: list[dict[str, Any]], later: list[dict[str, Any]], files: dict[str, str],
            faults: Iterable[TextFault] = ()) -> str:
    data: dict[str, Any] = {"cells": context}
    if later:
        data["later"] = later
    if files:
        data["files"] = files
    marks = [[f.line, f.column, f.char] for f in faults]
    if marks:
        data["faults"] = marks
    raw = zlib.compress(json.dumps(data, separators=(",", ":")).encode(), 9)
    return TRAILER + base64.b64encode(raw).decode("ascii") + "\n"


def _split(text: str) -> tuple[str, dict[str, Any]]:
    body, sep, last = text.rstrip("\n").rpartition("\n")
    if not sep:
        body, last = "", text.rstrip("\n")
    if not last.startswith(TRAILER):
        return text, {}
    try:
        data = json.loads(zlib.decompress(base64.b64decode(last[len(TRAILER):].strip())))
        out = {key: [c for c in data.get(key, []) if isinstance(c, dict)] for key in ("cells", "later")}
        files = data.get("files", {})
        out["files"] = {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}
        marks = data.get("faults", [])
        out["faults"] = [TextFault(m[0], m[1], m[2]) for m in (marks if isinstance(marks, list) else [])
                         if isinstance(m, list) and len(m) == 3 and all(type(v) is int for v in m)
                         and m[0] >= 1 and m[1] >= 1 and (m[2] == 0 or 0xD800 <= m[2] <= 0xDFFF)]
    except (ValueError, KeyError, TypeError, AttributeError, zlib.error):
        return text, {}
    return body + "\n", out


def split_graded(text: str) -> tuple[str, list[dict[str, Any]]]:
    """A graded module's text -> (its section's source, its context cells). Plain files: no context."""
    body, data = _split(text)
    return body, data.get("cells", [])


def faults_of(text: str) -> list[TextFault]:
    """The characters Python cannot read in a graded module's section (its lines), first first; ``[]``: none.

    Recorded at intake (:func:`autograder.core.text_intake.normalise_source`: each is U+FFFD in the text); the
    section fails to load on the first one, as "Run all" fails the cell that holds it.
    """
    return _split(text)[1].get("faults", [])


class UnreadableCharacter(SyntaxError):
    """A section holds a character Python cannot read (:func:`faults_of`): the exercise's load error, the
    student's, as "Run all" fails the cell that holds it (``LOAD_SURROGATE``, ``LOAD_NULL_CHAR``)."""

    def __init__(self, fault: TextFault, filename: str = "<unknown>", line: str = "") -> None:
        what = "a null character" if fault.kind == "nul" else f"half of a character (lone surrogate U+{fault.char:04X})"
        super().__init__(f"{what} that Python cannot read", (filename, fault.line, fault.column, line))
        self.fault = fault


def refuse_unreadable(text: str, filename: str = "<unknown>") -> None:
    """Raises :class:`UnreadableCharacter` for the first fault of a graded module's section, if it has one."""
    faults = faults_of(text)
    if faults:
        lines = split_graded(text)[0].splitlines()
        first = faults[0]
        raise UnreadableCharacter(first, filename, lines[first.line - 1] if first.line <= len(lines) else "")


def with_faults(text: str, faults: Iterable[TextFault]) -> str:
    """A plain file's text with a trailer recording ``faults`` (its own lines); ``text`` itself when there are none."""
    faults = list(faults)
    if not faults:
        return text
    return text.rstrip("\n") + "\n" + _encode([], [], {}, faults)


def later_cells(text: str) -> list[dict[str, Any]]:
    """A graded module's *later* cells: the redefinitions of its contract's names below its section."""
    return _split(text)[1].get("later", [])


def written_files(text: str) -> dict[str, str]:
    """The ``.py`` files the notebook's ``%%writefile`` cells above a graded module's last cell wrote: name -> text."""
    return _split(text)[1].get("files", {})


def _files(cells: list[Cell], upto: int) -> dict[str, str]:
    """What the ``%%writefile NAME.py`` cells (any code cell) up to cell ``upto`` left in each file."""
    out: dict[str, str] = {}
    for cell in cells:
        if cell.index > upto or cell.kind != "code" or cell.faults:  # a cell "Run all" fails writes nothing
            continue
        written = written_file(cell.source)
        if written is not None:
            name, body, append = written
            out[name] = (out.get(name, "") if append else "") + body
    return out


def sections(cells: list[Cell], exercises: tuple[str, ...]) -> dict[str, str | None]:
    """Per exercise, its section's source (None: no code cell of it), without the context."""
    return graded_sources(cells, exercises, with_context=False)


def _later(graded: list[tuple[Cell, str | None]], code: dict[int, str | None], ex: str, after: int,
           contracts: Mapping[str, Iterable[str]], cache: dict[int, tuple[dict[str, Any], list[ast.stmt]] | None],
           section: str = "") -> list[dict[str, Any]]:
    """The cells below ``ex``'s section, each reduced to the statements that only rebind names and, of those,
    to the redefinitions of ``ex``'s contract and (transitively) what they read.

    A redefinition is a ``def`` or ``class`` of a contract name with the signature the section gave it
    (:func:`autograder.submissions.statements.signature`; any, where the section defines none): a helper that
    merely shares the name (``def accuracy(logits, labels)`` under ex07) is not one, nor is a statement of a
    cell whose own exercise has the name in its contract (ex05's ``fit`` is not ex02's). ``cache``: each
    cell's record, shared by the exercises; ``section``: the exercise's own code.
    """
    own = set(contracts.get(ex, ()))
    mine = signatures(section)
    records = []
    for cell, owner in graded:
        if cell.index <= after or code[cell.index] is None:
            continue
        if cell.index not in cache:
            label = f"<notebook cell {cell.index + 1}: {owner or 'outside the exercises'}>"
            rec = context_cell(code[cell.index] or "", label, only=rebinds_only)
            cache[cell.index] = None if rec is None else (rec, parse_source(rec["source"]).body)  # it parses: a record
        if cache[cell.index] is None:
            continue
        record, body = cache[cell.index]
        theirs = own & set(contracts.get(owner, ())) if owner else set()
        kept = []
        for st in record["stmts"]:
            names = set(st[2]) & own
            sig = signature(body[st[0]])
            if names and (names & theirs or sig is None or any(mine.get(n, sig) != sig for n in names)):
                continue
            kept.append(st)
        records.append({**record, "stmts": kept})
    flat = [(r, k) for r, record in enumerate(records) for k in range(len(record["stmts"]))]
    # the redefinitions, then (transitively) what they read from these cells
    chosen = {flat[n] for n in needed([(records[r]["stmts"][k][2], records[r]["stmts"][k][3]) for r, k in flat], own)}
    out = []
    for r, record in enumerate(records):
        record["stmts"] = [st for k, st in enumerate(record["stmts"]) if (r, k) in chosen]
        if record["stmts"]:
            out.append(record)
    return out


def graded_sources(cells: list[Cell], exercises: tuple[str, ...], with_context: bool = True,
                   contracts: Mapping[str, Iterable[str]] | None = None) -> dict[str, str | None]:
    """Per exercise, the text of its graded module (see module docstring); None: no code cell of it.

    Args:
        cells: from :func:`notebook_cells` or :func:`percent_cells`.
        exercises: the curriculum's exercise names, in order.
        with_context: append the context trailer (False: the sections alone).
        contracts: each exercise's contract names; given, the trailer also carries the exercise's *later*
            cells (:func:`later_cells`): "Run all" ends with the last definition of each name.
    """
    graded, headings = _walk(cells, exercises)
    contexts: dict[int, dict[str, Any] | None] = {}
    rebinding: dict[int, tuple[dict[str, Any], list[ast.stmt]] | None] = {}
    out: dict[str, str | None] = {}
    code: dict[int, str | None] = {cell.index: transform_cell(cell.source) for cell, _ in graded}
    # a cell holding a character IPython cannot run fails in "Run all": never context nor a later redefinition
    runs = {cell.index: (None if cell.faults else code[cell.index]) for cell, _ in graded}
    parts: dict[str, list[str]] = {}
    faults: dict[str, list[TextFault]] = {}  # each section's, in its own lines (before the future imports' hoist)
    last: dict[str, int] = {}
    for cell, owner in graded:
        if owner is not None:
            last[owner] = cell.index
            own = parts.setdefault(owner, [])
            if code[cell.index] is not None:
                start = sum((p.count("\n") + 2 for p in own), 1)  # the line this cell starts at, once joined
                faults.setdefault(owner, []).extend(
                    TextFault(start + f.line - 1, f.column, f.char) for f in cell.faults)
                own.append(code[cell.index] or "")
    for ex in exercises:
        if ex not in last and contracts and with_context:  # no code cell of its own: maybe one further down
            anchor = headings.get(ex, -1)
            if _later(graded, runs, ex, anchor, contracts, rebinding, ""):
                last[ex] = anchor
                parts[ex] = []
        if ex not in last:
            out[ex] = None
            continue
        joined = "\n\n".join(parts[ex]) + "\n"
        text = hoist_future_imports(joined)
        shift = 0 if text == joined else 1  # the hoist put one line first
        marks = [TextFault(f.line + shift, f.column, f.char) for f in faults.get(ex, [])]
        if with_context:
            ctx = []
            for cell, owner in graded:
                if owner == ex or cell.index >= last[ex] or runs[cell.index] is None:
                    continue
                if cell.index not in contexts:
                    label = f"<notebook cell {cell.index + 1}: {owner or 'outside the exercises'}>"
                    contexts[cell.index] = context_cell(code[cell.index] or "", label)
                if contexts[cell.index] is not None:
                    ctx.append(contexts[cell.index])
            later = _later(graded, runs, ex, last[ex], contracts, rebinding, text) if contracts else []
            files = _files(cells, last[ex])
            if ctx or later or files or marks:
                text = text.rstrip("\n") + "\n" + _encode(ctx, later, files, marks)
        out[ex] = text
    return out
