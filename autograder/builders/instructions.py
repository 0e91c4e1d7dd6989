"""An exercise's instructions in the notebook: its heading, its points line and its docstring as Markdown.

The instructions are the stub's (= the solution's) module docstring, in the notebook's language
(:mod:`autograder.student.instructions_es`). Docstring layout is not Markdown (an indented ``- `` list
after a paragraph, an indented snippet, an ``Example:`` block would run into one paragraph):
:func:`docstring_markdown` turns it into Markdown that renders as written, and :func:`instructions`
puts a heading naming the exercise (which the loader finds without metadata) and its points above it.
"""

from __future__ import annotations

import re
import textwrap

from autograder.student.instructions_es import NOTEBOOK_TEXT


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _joined(lines: list[str]) -> str:
    """Prose lines as one Markdown line: a wrapped line can then never start a list, a heading or a quote."""
    return " ".join(ln.strip() for ln in lines if ln.strip())


def _fence(lines: list[str], indent: str = "") -> list[str]:
    """A fenced Python code block, each line indented by ``indent`` (inside a list item)."""
    body = textwrap.dedent("\n".join(lines)).strip("\n").splitlines()
    return [f"{indent}```python", *[(indent + ln) if ln.strip() else "" for ln in body], f"{indent}```"]


def _item(lines: list[str]) -> list[str]:
    """One ``- `` item of a docstring (its first line, then its continuation lines) as Markdown.

    Continuation lines indented like the item's text are prose (joined into one line); lines indented
    deeper are a code snippet, fenced inside the item (the item's prose may go on after it).
    """
    parts: list[tuple[str, list[str]]] = []  # ("prose" | "code", lines), in order
    for ln in lines[1:]:
        if not ln.strip():
            if parts and parts[-1][0] == "code":
                parts[-1][1].append("")
            continue
        kind = "code" if _indent_of(ln) >= 4 else "prose"
        if parts and parts[-1][0] == kind:
            parts[-1][1].append(ln)
        else:
            parts.append((kind, [ln]))
    head = [lines[0][2:]]
    if parts and parts[0][0] == "prose":
        head += parts.pop(0)[1]
    out = [f"- {_joined(head)}"]
    for kind, chunk in parts:
        out.append("")
        out += _fence(chunk, "  ") if kind == "code" else [f"  {_joined(chunk)}"]
    return out


def _list(lines: list[str]) -> list[str]:
    """Lines of ``- `` items (continuation lines indented) as one Markdown list."""
    starts = [k for k, ln in enumerate(lines) if ln.startswith("- ")] + [len(lines)]
    out: list[str] = []
    for a, b in zip(starts[:-1], starts[1:]):
        out += _item(lines[a:b])
    return out


def _block(lines: list[str]) -> list[list[str]]:
    """An indented docstring block, dedented, as Markdown segments: a ``>>>`` example or code lines
    become fenced code, ``- `` items a list."""
    if lines[0].lstrip().startswith(">>>"):
        return [_fence(lines)]
    segments: list[list[str]] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        j = i + 1
        if lines[i].startswith("- "):  # items, up to a line that is neither an item nor indented
            while j < len(lines) and (not lines[j].strip() or lines[j].startswith("- ") or _indent_of(lines[j]) >= 2):
                j += 1
            segments.append(_list(lines[i:j]))
        else:  # code lines (a layer list, an assignment), up to the next item
            while j < len(lines) and not lines[j].startswith("- "):
                j += 1
            segments.append(_fence(lines[i:j]))
        i = j
    return segments


def docstring_markdown(lines: list[str]) -> str:
    """A docstring's body (after its title line) as Markdown that renders as written.

    Docstring layout is not Markdown: a paragraph followed by an indented ``- `` list, or an indented
    code snippet, would run into one paragraph. Here paragraphs become one line each, a one-line
    paragraph ending in ``:`` before an indented block a bold heading (``Example:``: a fenced
    example), indented ``- `` items a list (deeper-indented lines in an item: a code block inside it)
    and other indented lines fenced code; blocks are separated by blank lines.

    Args:
        lines: the docstring's lines after its title, dedented.

    Returns:
        Markdown text.
    """
    segments: list[list[str]] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if line.startswith("    "):  # an indented block
            j = i
            while j < n and (not lines[j].strip() or lines[j].startswith("    ")):
                j += 1
            segments += _block(textwrap.dedent("\n".join(lines[i:j])).strip("\n").splitlines())
            i = j
            continue
        j = i + 1
        if line.startswith("- "):  # a list at the left margin
            while j < n and lines[j].strip() and (lines[j].startswith("- ") or _indent_of(lines[j]) >= 2) \
                    and not lines[j].startswith("    "):
                j += 1
            segments.append(_list(lines[i:j]))
            i = j
            continue
        while j < n and lines[j].strip() and not lines[j][0].isspace() and not lines[j].startswith("- "):
            j += 1
        para = lines[i:j]
        nxt = next((ln for ln in lines[j:] if ln.strip()), "")
        if len(para) == 1 and line.rstrip().endswith(":") and nxt.startswith("    "):
            header = line.rstrip()[:-1]
            segments.append([f"**{header}**"])
            if header.lower().startswith(("example", "ejemplo")):
                k = j
                while k < n and (not lines[k].strip() or lines[k].startswith("    ")):
                    k += 1
                segments.append(_fence(lines[j:k]))
                j = k
        else:
            segments.append([_joined(para)])
        i = j
    return "\n\n".join("\n".join(seg) for seg in segments)


def instructions(doc: str, exercise: str, public_points: float, total_points: float, lang: str = "en") -> str:
    """The markdown of one exercise: a heading naming it, then its docstring as Markdown.

    Args:
        doc: the module docstring of the stub (= of the solution), in ``lang``.
        exercise: the exercise name (put in the heading so the loader finds it without metadata).
        public_points: points the public checks cover.
        total_points: the exercise's maximum.
        lang: language of the fixed words (the points line).
    """
    lines = textwrap.dedent(doc).strip("\n").splitlines()
    title = lines[0].strip().rstrip(".") if lines else exercise
    title = re.sub(r"^(Exercise|Ejercicio)\s+\d+\s*[—–-]\s*", "", title)
    points = NOTEBOOK_TEXT[lang]["points_line"].format(total=total_points, short=exercise[:4], public=public_points)
    body = docstring_markdown(lines[1:])
    return "\n".join([f"## {exercise} — {title}", "", points, "", body]).strip() + "\n"
