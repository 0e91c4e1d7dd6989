"""IPython's view of a notebook cell: the plain Python it runs, line numbers kept (text only).

Owns :func:`transform_cell`: IPython's own input transformer turns magics, ``!cmd``, ``x = !cmd`` and
``obj?`` into calls of ``get_ipython()`` (in time linear in the cell's length: ``_ipython``), a one-line
cell that names a magic without its ``%`` (``pip install tqdm``, ``ls``: IPython's automagic) calls it too,
``%time stmt`` becomes ``stmt``, and cell magics whose body is not Python (``%%bash``, ``%%html``, ...) are not
graded; what a ``%%writefile NAME.py`` cell writes is read by :func:`written_file`. Without IPython a plain
fallback drops magic lines. Nothing here runs student code.
"""

from __future__ import annotations

import ast
import re
from functools import cache
from typing import Any

from autograder.core import syntax as _syntax

# Cell magics whose body is Python run by IPython in the notebook's namespace: the body is graded.
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
# ``%%timeit`` runs its body inside a function (its names stay local): graded as a call of this one
TIMEIT_FUNCTION = "_tapetrace_timeit"


@cache
def _transformer() -> Any:
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # no IPython: a plain fallback (magic lines dropped)
        return None
    return TransformerManager()


_LINE_END = re.compile(r"\r\n|\r|\n")


def split_lines(src: str) -> list[str]:
    """``src``'s lines as Python counts them (``\\n``, ``\\r\\n``, ``\\r``; as ``str.splitlines`` without its other
    separators: a U+2028, U+0085 or form feed inside a string literal stays in its line, as IPython keeps it)."""
    lines = _LINE_END.split(src)
    return lines[:-1] if lines and lines[-1] == "" else lines


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def _keep_ends(text: str) -> list[str]:
    """:func:`split_lines` with each line's end kept (``"".join`` gives ``text`` back)."""
    return _LINE.findall(text)


def _plain_fallback(src: str) -> str:
    lines = []
    for line in split_lines(src):
        stripped = line.lstrip()
        if stripped.startswith(("%", "!")):
            lines.append(line[: len(line) - len(stripped)] + "pass" if line[:1].isspace() else "")
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


_MAGIC_START = re.compile(r"^\s*(?:%[A-Za-z]|!|\w+\s*=\s*[!%][A-Za-z!])")


def _join_magic_continuations(lines: list[str]) -> list[str]:
    """A magic or shell line continued with ``\\`` as one line, then blank lines: later lines keep their numbers."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if _MAGIC_START.match(line) and line.endswith("\\"):
            j = i
            parts = [line]
            while j + 1 < len(lines) and lines[j].endswith("\\"):
                parts[-1] = parts[-1][:-1]
                j += 1
                parts.append(lines[j])
            out += ["".join(parts)] + [""] * (j - i)
            i = j + 1
            continue
        out.append(line)
        i += 1
    return out


# IPython's line magics and its aliases (``ls``, ``cp``...), which automagic calls without ``%`` in a one-line cell
AUTOMAGICS = frozenset({
    "alias", "alias_magic", "autoawait", "autocall", "automagic", "bookmark", "cat", "cd", "code_wrap", "colors",
    "conda", "config", "cp", "debug", "dhist", "dirs", "doctest_mode", "ed", "edit", "env", "gui", "hist", "history",
    "killbgscripts", "ldir", "lf", "lk", "ll", "load", "load_ext", "loadpy", "logoff", "logon", "logstart", "logstate",
    "logstop", "ls", "lsmagic", "lx", "macro", "magic", "mamba", "matplotlib", "micromamba", "mkdir", "mv", "notebook",
    "page", "pastebin", "pdb", "pdef", "pdoc", "pfile", "pinfo", "pinfo2", "pip", "popd", "pprint", "precision", "prun",
    "psearch", "psource", "pushd", "pwd", "pycat", "pylab", "quickref", "recall", "rehashx", "reload_ext", "rep",
    "rerun", "reset", "reset_selective", "rm", "rmdir", "run", "save", "sc", "set_env", "sx", "system", "tb", "time",
    "timeit", "unalias", "unload_ext", "uv", "who", "who_ls", "whos", "xdel", "xmode", "autoreload", "aimport",
    "tensorboard"})
_AUTOMAGIC = re.compile(r"^(\s*)([A-Za-z_]\w*)(?:\s+(.*?))?\s*$")


def _automagic(line: str) -> str:
    """A one-line cell as IPython's automagic runs it: ``pip install tqdm`` -> ``%pip install tqdm``.

    IPython calls the magic unless the line assigns to the name (``ls = 3``, ``ls, x = ...``) or a variable
    shadows it. Here (text only) a statement other than an expression, or a call, stays Python; an expression
    that reads like one (``ls``, ``reset -f``) is the magic: as Python its value was only displayed.
    """
    m = _AUTOMAGIC.match(line)
    if not m or m.group(2) not in AUTOMAGICS:
        return line
    rest = m.group(3) or ""
    if rest[:1] in ("=", ","):
        return line
    try:
        tree = _syntax.parse(line.strip())
    except SyntaxError:
        tree = None
    if tree is not None and (not (len(tree.body) == 1 and isinstance(tree.body[0], ast.Expr))
                             or isinstance(tree.body[0].value, ast.Call)):
        return line  # a statement, or a call (`run (model)`: the student's own function, shadowing the magic)
    return f"{m.group(1)}get_ipython().run_line_magic({m.group(2)!r}, {rest!r})"


_MAIN_TEST = re.compile(r"""\b__name__(\s*==\s*)(['"])__main__\2|(['"])__main__\3(\s*==\s*)__name__\b""")


def _as_main(line: str) -> str:
    """``__name__ == "__main__"`` holds in every notebook cell (a graded module has its own ``__name__``)."""
    if "__main__" not in line or "__name__" not in line:
        return line
    return _MAIN_TEST.sub(lambda m: '"__main__" == "__main__"', line)


_TIME_LINE = re.compile(r"^(\s*)get_ipython\(\)\.run_line_magic\('time', (.*)\)\s*$")


def _unwrap_time(line: str) -> str:
    """``%time stmt`` runs ``stmt`` in the notebook: graded as the statement itself."""
    m = _TIME_LINE.match(line)
    if not m:
        return line
    try:
        stmt = _syntax.literal(m.group(2))
        _syntax.parse(stmt)
    except (ValueError, SyntaxError):
        return line
    return m.group(1) + stmt if "\n" not in stmt else line


def transform_cell(src: str) -> str | None:
    """One code cell as the plain Python IPython runs, line numbers kept; None: not Python.

    IPython's own input transformer turns magics anywhere in the cell, ``x = !cmd`` and
    ``obj?`` into calls of ``get_ipython()``; so does a one-line cell naming a magic without its ``%``
    (IPython's automagic: ``pip install tqdm``, ``cd /content``, ``ls``); ``%time stmt`` becomes ``stmt``. A cell magic
    whose body is Python (:data:`PYTHON_CELL_MAGICS`) keeps its body (its first line blank), ``%%timeit``'s
    inside a function called once (:data:`TIMEIT_FUNCTION`: as in IPython, it defines nothing);
    ``__name__ == "__main__"`` is true, as in a notebook (a graded module has its own name);
    any other cell magic (``%%bash``, ``%%html``, ``%%writefile``, ...) gives None.
    """
    lines = split_lines(src)
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        return ""
    head = lines[first].lstrip()
    if head.startswith("%%"):
        name = head[2:].split(maxsplit=1)[0] if head[2:].strip() else ""
        if name not in PYTHON_CELL_MAGICS:
            return None
        body = transform_cell("\n".join(lines[first + 1:]))
        if body is None:
            return None
        if name == "timeit":  # IPython times the body inside a function: it binds nothing in the notebook
            inner = "".join(f"    {ln}\n" if ln.strip() else "\n" for ln in split_lines(body))
            return "\n" * first + f"def {TIMEIT_FUNCTION}():\n{inner}    pass\n{TIMEIT_FUNCTION}()\n"
        return "\n" * (first + 1) + body
    text = "\n".join(_join_magic_continuations(lines[first:])) + "\n"
    tm = _transformer()
    try:
        out = _ipython(tm, text) if tm is not None else _plain_fallback(text)
    except Exception:  # noqa: BLE001 - IPython could not read it: Python will say what is wrong
        out = text
    out_lines = split_lines(out)
    if len(out_lines) == 1:  # IPython's prefilter, for one-line cells only
        out_lines = [_automagic(out_lines[0])]
    out_lines = [_as_main(_unwrap_time(ln)) for ln in out_lines]
    out_lines += [""] * (len(lines) - first - len(out_lines))  # a joined `\` continuation: same length
    return "\n" * first + "\n".join(out_lines) + "\n"


_WRITEFILE = re.compile(r"^%%writefile((?:\s+-a|\s+--append)?)\s+(['\"]?)([\w.-]+\.py)\2\s*$")


def written_file(src: str) -> tuple[str, str, bool] | None:
    """What a ``%%writefile NAME.py`` cell writes: ``(NAME.py, its text, whether it appends)``; None for any
    other cell (or a file in a folder, or not a ``.py``: nothing a notebook imports or runs by name)."""
    lines = src.splitlines(keepends=True)
    first = next((i for i, ln in enumerate(lines) if ln.strip()), None)
    if first is None:
        return None
    m = _WRITEFILE.match(lines[first].strip())
    if not m:
        return None
    return m.group(3), "".join(lines[first + 1:]), bool(m.group(1).strip())


# a line IPython's token transforms may rewrite: an escape first (``!cmd``, ``%magic``, ``?obj``, ``,f a``...),
# ``x = !cmd`` / ``x = %magic``, or ``obj?`` at its end
_IPYTHON_SYNTAX = re.compile(r"^\s*[!?%,;/]|=\s*[!%]|\?\s*(?:#.*)?$", re.MULTILINE)


def _ipython(tm: Any, text: str) -> str:
    """What IPython's ``TransformerManager.transform_cell`` gives, in time linear in the cell's length.

    IPython re-tokenises the whole cell after each rewrite it makes (up to 500: a cell of thousands of
    ``!cmd`` lines took minutes). Here its line-based clean-ups run on the whole cell as there, and its
    token transforms run IPython's own loop on the cell's logical lines, each tokenised alone and only
    again when it changed: each round, every transform's first match in the cell (its first logical
    line with one), the earliest applied, the next tried when one fails, until none applies.
    """
    from IPython.core.inputtransformer2 import TRANSFORM_LOOP_LIMIT, make_tokens_by_line

    lines = _keep_ends(text)
    for transform in tm.cleanup_transforms + tm.line_transforms:
        lines = transform(lines)
    if not _IPYTHON_SYNTAX.search("".join(lines)):
        return "".join(lines)
    starts = sorted({group[0].start[0] - 1 for group in make_tokens_by_line(lines) if group} | {0})
    chunks = [lines[a:b] for a, b in zip(starts, [*starts[1:], len(lines)], strict=True) if a < len(lines)]
    kinds = tm.token_transformers
    found: dict[int, list[Any]] = {}  # chunk -> each transform's match in it (None: no match)

    def matches(k: int) -> list[Any]:
        if k not in found:
            maybe = _IPYTHON_SYNTAX.search("".join(chunks[k]))
            tokens = make_tokens_by_line(chunks[k]) if maybe else []
            found[k] = [kind.find(tokens) if maybe else None for kind in kinds]
        return found[k]

    first = [0] * len(kinds)  # per transform: no chunk before this one has a match
    for _ in range(TRANSFORM_LOOP_LIMIT):
        candidates = []
        for t in range(len(kinds)):
            while first[t] < len(chunks) and matches(first[t])[t] is None:
                first[t] += 1
            if first[t] < len(chunks):
                m = matches(first[t])[t]
                candidates.append((first[t], m.sortby(), m))
        if not candidates:
            return "".join(line for chunk in chunks for line in chunk)
        for k, _order, m in sorted(candidates, key=lambda c: (c[0], c[1])):
            try:
                chunks[k] = m.transform(chunks[k])
            except SyntaxError:
                continue
            found.pop(k, None)  # only chunk k changed: a transform's first match can only move to it
            first = [k if f > k and matches(k)[t] is not None else f for t, f in enumerate(first)]
            break
        else:  # IPython stops at a round where every match fails
            return "".join(line for chunk in chunks for line in chunk)
    raise RuntimeError(f"Input transformation still changing after {TRANSFORM_LOOP_LIMIT} iterations. Aborting.")
