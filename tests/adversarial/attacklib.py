"""What the files of tests/adversarial share: the attacks in ``attacks/`` (every ``*.py`` there, found by
glob: a new attack file is graded without being listed anywhere), their headers, their source as graded,
and how a run drops CAP_SYS_ADMIN as Docker's default does.

An attack's header (its first lines) says ``# TARGET: exercise``, ``# STATUS: ...``, ``# FAILS: ...``,
``# MESSAGE: ...`` (and ``-CONTAINER`` variants for a run without namespaces), ``# OPEN: why`` for one
that breaks out today, and ``# AFTER: solution`` when the file is appended to the exercise's reference
solution (an honest answer that also attacks).
"""

from __future__ import annotations

import re
from pathlib import Path

from autograder.core.paths import SOLUTIONS

ATTACKS_DIR = Path(__file__).parent / "attacks"
ATTACKS = sorted(ATTACKS_DIR.glob("*.py"))

# Docker's default privileges: root without CAP_SYS_ADMIN (no namespaces) and without CAP_SYS_PTRACE (the
# grader reads its workers' threads only as their own user). `setpriv` gives the same to the zygote and so
# to every worker; the workers then fall back to Landlock, seccomp, a uid of their own and no capabilities.
NO_SYS_ADMIN = ["setpriv", "--bounding-set=-sys_admin,-sys_ptrace", "--inh-caps=-sys_admin,-sys_ptrace", "--"]

HEADER = re.compile(r"#\s*(ATTACK|TARGET|STATUS|STATUS-CONTAINER|FAILS|MESSAGE|MESSAGE-CONTAINER|AFTER|OPEN):\s*(.*)")


def meta(path: Path) -> dict[str, str]:
    """An attack's header (every comment line before its first line of code) as a dict (keys lower case, ``-`` as
    ``_``); ``fails`` defaults to ``all``, ``status`` to ``graded`` and ``message`` to empty. ``fails``, ``status``
    and ``message`` may give alternatives split by ``|`` (an attack that races the grader and may lose)."""
    out = {"fails": "all", "status": "graded", "message": ""}
    for line in path.read_text().splitlines():
        if not line.startswith("#"):
            break
        if m := HEADER.match(line):
            out[m.group(1).lower().replace("-", "_")] = m.group(2).strip()
    return out


def attack_source(path: Path) -> tuple[str, str]:
    """``(target exercise, source as graded)``: the attack, after the target's reference solution where its
    header says ``# AFTER: solution``."""
    m = meta(path)
    target = m["target"]
    honest = (SOLUTIONS / f"{target}.py").read_text() + "\n\n" if m.get("after") == "solution" else ""
    return target, honest + path.read_text()


def targets() -> list[str]:
    """Every exercise an attack targets, sorted."""
    return sorted({meta(p)["target"] for p in ATTACKS})
