"""Write each answer once: ``exercises/`` is generated from ``solutions/``.

Every ``# BEGIN SOLUTION`` ... ``# END SOLUTION`` region becomes
``# YOUR CODE HERE`` + ``raise NotImplementedError(...)`` at the region's
indentation (nbgrader's clear-solutions, otter assign's ``...``).
"""

from __future__ import annotations

import os
from pathlib import Path

from autograder.core.paths import BEGIN, END, EXERCISES, EXERCISES_DIR, SOLUTIONS

HEADER = "# Generated from solutions/{name}.py by `tapetrace stubs`: edit the solution, not this file.\n"


class StubError(Exception):
    """Unbalanced or nested solution markers."""


def stub_source(text: str, name: str) -> str:
    """The stub text of one solution module.

    Args:
        text: the solution's source.
        name: the exercise name (for the NotImplementedError message).

    Returns:
        The source with every solution region replaced.
    """
    out: list[str] = []
    inside = False
    for n, line in enumerate(text.splitlines(), 1):
        m = BEGIN.match(line)
        if m:
            if inside:
                raise StubError(f"{name}:{n}: nested BEGIN SOLUTION")
            inside = True
            indent = m.group(1)
            out.append(f"{indent}# YOUR CODE HERE")
            out.append(f'{indent}raise NotImplementedError("{name}: replace this line with your code")')
            continue
        if END.match(line):
            if not inside:
                raise StubError(f"{name}:{n}: END SOLUTION without BEGIN")
            inside = False
            continue
        if not inside:
            out.append(line)
    if inside:
        raise StubError(f"{name}: BEGIN SOLUTION never closed")
    return HEADER.format(name=name) + "\n".join(out) + "\n"


def solution_regions(text: str) -> list[str]:
    """The text of each solution region (used by the leak tests)."""
    regions, cur, inside = [], [], False
    for line in text.splitlines():
        if BEGIN.match(line):
            inside, cur = True, []
        elif END.match(line):
            inside = False
            regions.append("\n".join(cur))
        elif inside:
            cur.append(line)
    return regions


def expected_stubs() -> dict[str, str]:
    """``{exercise: stub text}`` for every solution present."""
    out = {}
    for name in EXERCISES:
        path = SOLUTIONS / f"{name}.py"
        if path.exists():
            out[name] = stub_source(path.read_text(), name)
    return out


def write_stubs(target: Path = EXERCISES_DIR) -> list[Path]:
    """Regenerates the stub files; returns their paths.

    A stub already up to date is left untouched, and a changed one is replaced in one step (a temporary file
    renamed over it): a grading that reads the stubs meanwhile never sees a half-written file.
    """
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in expected_stubs().items():
        path = target / f"{name}.py"
        if not path.exists() or path.read_text() != text:
            fresh = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            fresh.write_text(text)
            os.replace(fresh, path)
        written.append(path)
    return written
