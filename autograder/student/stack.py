"""The student's library stack: is it one the notebook's self-checks were measured on?

``SUPPORTED`` holds the ranges that ``scripts/stack_matrix.py`` measured (docs/supported-versions.md);
pyproject.toml declares the same ranges (tests/test_stack_check.py keeps them equal). The set-up
cell calls :func:`check_stack`: it reads the installed versions from package metadata (nothing is
imported for it: fast), prints, in the student's language, which library the checks use is outside its
range and the one command that fixes it where the student is (:func:`where`: Colab, Jupyter, or
``check.py`` in a terminal), and remembers the verdict; :mod:`autograder.builders.public` then marks the
self-check results of the exercises using such a library "unsupported versions" instead of blaming the
code, and judges the others. Libraries the checks do not use (``OPTIONAL``: matplotlib draws the figures)
never hold a check back: ``figure()`` names a missing matplotlib itself (:func:`plotting_missing`).

    >>> problems({"torch": "2.13.0+cpu", "jax": "0.4.30", "jaxlib": "0.4.30"}, python=(3, 11))
    [Problem(dist='jax', have='0.4.30', want='>=0.5.2,<0.11'), Problem(dist='jaxlib', ...)]
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from typing import NamedTuple

# distribution -> (lowest supported, first unsupported): measured (docs/supported-versions.md)
SUPPORTED: dict[str, tuple[str, str]] = {
    "torch": ("2.6", "2.15"),
    "jax": ("0.5.2", "0.11"),
    "jaxlib": ("0.5.1", "0.11"),
    "flax": ("0.10.4", "0.13"),
    "optax": ("0.2.4", "0.3"),
    "numpy": ("1.26.4", "2.5"),
    "matplotlib": ("3.7.5", "3.12"),
    "ipython": ("7.34", "10"),
}
PYTHON: tuple[tuple[int, int], tuple[int, int]] = ((3, 11), (3, 14))
# installed together: a fix for one names the others (jaxlib must match jax)
TOGETHER = {"jax": ("jax", "jaxlib"), "jaxlib": ("jax", "jaxlib")}
# what the self-checks use (an exercise's checks use some of them); the others only draw or display
CHECKED: tuple[str, ...] = ("torch", "jax", "jaxlib", "flax", "optax", "numpy")
OPTIONAL: tuple[str, ...] = ("matplotlib", "ipython")
# where the student runs the checks, and how a library is installed there
PIP = {"colab": "!pip install", "jupyter": "%pip install", "terminal": "python -m pip install"}


class Problem(NamedTuple):
    """One library outside its supported range (``have`` is None when it is not installed)."""

    dist: str
    have: str | None
    want: str


def parse(version: str) -> tuple[int, ...]:
    """The release numbers of a version string: ``"2.13.0+cpu"`` -> ``(2, 13, 0)``, ``"0.5.0rc1"`` -> ``(0, 5, 0)``."""
    out = []
    for part in version.split("+")[0].split("."):
        m = re.match(r"\d+", part)
        if not m:
            break
        out.append(int(m.group()))
        if m.end() != len(part):
            break
    return tuple(out)


def spec(dist: str) -> str:
    """The pip specifier of ``dist``'s supported range, e.g. ``">=0.5.2,<0.11"``."""
    low, high = SUPPORTED[dist]
    return f">={low},<{high}"


def inside(version: str, low: str, high: str) -> bool:
    """Whether ``low <= version < high`` (release numbers compared, missing ones as 0)."""
    def pad(v: tuple[int, ...]) -> tuple[int, ...]:
        return v + (0,) * (6 - len(v))

    v = pad(parse(version))
    return pad(parse(low)) <= v < pad(parse(high))


def installed(dists: tuple[str, ...] = tuple(SUPPORTED)) -> dict[str, str | None]:
    """``{dist: version or None}`` from package metadata (importlib.metadata: no library is imported)."""
    from importlib import metadata

    out: dict[str, str | None] = {}
    for dist in dists:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def problems(versions: Mapping[str, str | None] | None = None, *,
             python: tuple[int, ...] | None = None) -> list[Problem]:
    """The libraries (and Python) outside their supported ranges.

    Args:
        versions: ``{dist: version or None}``; default: what is installed (:func:`installed`).
        python: ``(major, minor)``; default: the running interpreter's.

    Returns:
        One :class:`Problem` per library outside its range (``dist="python"`` for the interpreter);
        a library ``versions`` does not name is not judged.
    """
    versions = installed() if versions is None else versions
    out = []
    py = tuple(python or sys.version_info[:2])[:2]
    if not PYTHON[0] <= py < PYTHON[1]:
        out.append(Problem("python", ".".join(map(str, py)),
                           f">={'.'.join(map(str, PYTHON[0]))},<{'.'.join(map(str, PYTHON[1]))}"))
    for dist, (low, high) in SUPPORTED.items():
        if dist not in versions:
            continue
        have = versions[dist]
        if have is None or not inside(have, low, high):
            out.append(Problem(dist, have, spec(dist)))
    return out


def where() -> str:
    """Where the checks run: ``"colab"`` (Colab's kernel), ``"jupyter"`` (another notebook kernel: Jupyter,
    VS Code) or ``"terminal"`` (``python check.py``, a script). Imports nothing."""
    import os

    if "google.colab" in sys.modules or os.environ.get("COLAB_RELEASE_TAG"):
        return "colab"
    if "ipykernel" in sys.modules:
        return "jupyter"
    return "terminal"


def fix_command(found: list[Problem], where: str = "colab") -> str:
    """The one command installing supported versions of the libraries in ``found`` ("" if none can), as
    typed ``where`` the student is (:func:`where`: a notebook cell's ``!pip`` / ``%pip``, or a terminal's)."""
    dists: list[str] = []
    for p in found:
        for d in TOGETHER.get(p.dist, (p.dist,)):
            if d in SUPPORTED and d not in dists:
                dists.append(d)
    quote = '"' if where == "terminal" else "'"  # a terminal may be Windows' (cmd, PowerShell)
    return (PIP.get(where, PIP["colab"]) + " " + " ".join(f"{quote}{d}{spec(d)}{quote}" for d in dists)) \
        if dists else ""


def fix_key(where: str) -> str:
    """The suffix of the advice's message keys (``stack.fix``, ``public.unsupported``) for ``where``."""
    return {"jupyter": "_jupyter", "terminal": "_terminal"}.get(where, "")


def describe(found: list[Problem], lang: str, where: str = "colab") -> str:
    """What the set-up cell prints about ``found``, in ``lang``, with the advice for ``where`` ("" when every
    library the checks use is supported: an ``OPTIONAL`` one is ``figure()``'s to name)."""
    from autograder.core.i18n import render

    found = [p for p in found if p.dist not in OPTIONAL]
    if not found:
        return ""
    lines = [render("stack.title", lang)]
    for p in found:
        key = "stack.missing" if p.have is None else ("stack.python" if p.dist == "python" else "stack.bad")
        lines.append(render(key, lang, dist=p.dist, have=p.have or "", want=p.want))
    cmd = fix_command(found, where)
    if cmd:
        lines.append(render("stack.fix" + fix_key(where), lang, command=cmd))
    python = next((p for p in found if p.dist == "python"), None)
    if python is not None:
        lines.append(render("stack.fix_python", lang) if where == "colab"
                     else render("stack.fix_python_local", lang, want=python.want))
    dists = ", ".join(dict.fromkeys(p.dist for p in found if p.dist != "python")) or "Python"
    lines.append(render("stack.meaning", lang, dists=dists))
    return "\n".join(lines)


FOUND: list[Problem] = []  # what check_stack found in this session (read by the self-check)


def check_stack(lang: str, versions: Mapping[str, str | None] | None = None, *,
                python: tuple[int, ...] | None = None, place: str | None = None) -> list[Problem]:
    """The set-up cell's check: remembers the problems and prints those of the libraries the checks use
    (nothing when they are supported), with the advice for ``place`` (default: :func:`where`)."""
    FOUND[:] = problems(versions, python=python)
    said = describe(FOUND, lang, place or where())
    if said:
        print(said)
    return list(FOUND)


def unsupported(dists: Iterable[str] | None = None) -> list[Problem]:
    """The problems :func:`check_stack` found in this session that hold back checks using ``dists`` (default:
    every library of ``CHECKED``): those of these libraries, and Python's (empty: supported, or never checked)."""
    wanted = set(CHECKED if dists is None else dists) - set(OPTIONAL)
    return [p for p in FOUND if p.dist == "python" or p.dist in wanted]


def plotting_missing() -> Problem | None:
    """matplotlib's problem where it is not installed (``figure()`` cannot draw), else None (metadata only)."""
    have = installed(("matplotlib",))["matplotlib"]
    return None if have is not None else Problem("matplotlib", None, spec("matplotlib"))
