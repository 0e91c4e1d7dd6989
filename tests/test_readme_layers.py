"""Each subpackage README says what the package may import and what imports it, as the layers contract does.

The lists under the README's **May import** and **Imported by** headings are the layers of
``[tool.importlinter]`` in pyproject.toml: a layer may import every layer below it and is imported by
every layer above it; two layers on one line (``a | b``) are independent (neither imports the other).
``tests/test_layers.py`` runs ``lint-imports`` on the code; this test keeps the READMEs saying the same.
After a change of the contract, ``python tests/test_readme_layers.py`` rewrites the two lines.
"""

from __future__ import annotations

import re
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HEADINGS = {"may": "**May import**", "by": "**Imported by**"}
INTROS = {"may": " (every layer below it, `[tool.importlinter]`): ", "by": " (every layer above it): "}
NAME = re.compile(r"`(autograder\.\w+)`")


def layers() -> list[list[str]]:
    """The layers contract, top first: each layer's modules."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    (contract,) = [c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [[m.strip() for m in re.split(r"[|:]", layer)] for layer in contract["layers"]]


def expected(module: str) -> dict[str, list[str]]:
    """What ``module`` may import and what may import it, by the contract."""
    stack = layers()
    (level,) = [i for i, layer in enumerate(stack) if module in layer]
    return {"may": [m for layer in stack[level + 1:] for m in layer],
            "by": [m for layer in stack[:level] for m in layer]}


def packages() -> list[str]:
    """The subpackages with a README (each a module of the contract)."""
    return sorted(p.parent.name for p in (ROOT / "autograder").glob("*/README.md"))


def listed(text: str, key: str) -> list[str] | None:
    """The modules of the README paragraph under ``key``'s heading (None: no such heading)."""
    for para in re.split(r"\n\s*\n", text):
        if para.lstrip().startswith(HEADINGS[key]):
            return NAME.findall(para)
    return None


def line(module: str, key: str) -> str:
    """The README line the contract gives for ``key``."""
    names = expected(module)[key]
    none = "nothing (the bottom layer)." if key == "may" else "nothing (the top layer)."
    return HEADINGS[key] + INTROS[key] + (", ".join(f"`{n}`" for n in names) + "." if names else none)


@pytest.mark.parametrize("package", packages())
def test_a_readme_lists_what_the_layers_contract_allows(package):
    module = f"autograder.{package}"
    text = (ROOT / "autograder" / package / "README.md").read_text(encoding="utf-8")
    assert "Must never import it" not in text, f"{package}/README.md: the old heading (it read backwards)"
    for key, heading in HEADINGS.items():
        got = listed(text, key)
        assert got is not None, f"{package}/README.md has no {heading} paragraph"
        assert sorted(got) == sorted(expected(module)[key]), (
            f"{package}/README.md {heading}: {got}\nthe contract: {expected(module)[key]}\n"
            f"(python tests/test_readme_layers.py rewrites it: {line(module, key)})")


def test_every_package_of_the_contract_has_a_readme():
    modules = {m for layer in layers() for m in layer}
    assert {f"autograder.{p}" for p in packages()} <= modules
    assert {m for m in modules if (ROOT / m.replace(".", "/")).is_dir()} == {f"autograder.{p}" for p in packages()}


def test_the_lists_follow_the_contract():
    assert expected("autograder.messages") == {"may": [], "by": expected("autograder.messages")["by"]}
    assert "autograder.scaleout" not in expected("autograder.builders")["may"]  # a sibling: independent
    assert "autograder.core" in expected("autograder.exercises")["may"]
    assert "autograder.core" not in expected("autograder.exercises")["by"]  # the exercises README said both
    assert listed("x\n\n**May import** (...): `autograder.core`, `autograder.messages`.\n\nmore `autograder.cli`",
                  "may") == ["autograder.core", "autograder.messages"]
    assert listed("no heading", "by") is None


def write() -> None:
    """Rewrites each README's two paragraphs under the headings from the contract."""
    for package in packages():
        path = ROOT / "autograder" / package / "README.md"
        text = path.read_text(encoding="utf-8")
        for key, heading in HEADINGS.items():
            new = textwrap.fill(line(f"autograder.{package}", key), 110, break_on_hyphens=False,
                                break_long_words=False)
            text = re.sub(rf"^{re.escape(heading)}[^\n]*(\n(?!\n)[^\n]*)*", new.replace("\\", "\\\\"), text,
                          count=1, flags=re.M)
        path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    write()
    sys.exit(0)
