"""docs/curriculum.md is the exercises' own contract (issue 65): one section per exercise, in the registry's order,
whose code block is the solution's and the stub's signatures, name for name, and names exactly `META.names`."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from autograder.core.paths import EXERCISES, EXERCISES_DIR, ROOT, SOLUTIONS
from autograder.core.registry import REGISTRY

PAGE = ROOT / "docs" / "curriculum.md"
SECTION = re.compile(r"^## (ex\d\d_\w+)[^\n]*\n(.*?)(?=^## |\Z)", re.S | re.M)
BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def sections(text: str) -> dict[str, str]:
    """Exercise -> the code of its section's first ```python block ('' when it has none)."""
    out = {}
    for name, body in SECTION.findall(text):
        block = BLOCK.search(body)
        out[name] = block.group(1) if block else ""
    return out


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _def(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str:
    decorators = "".join(f"@{ast.unparse(d)} " for d in node.decorator_list)
    returns = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    return f"{decorators}def {node.name}({ast.unparse(node.args)}){returns}"


def signatures(source: str) -> dict[str, object]:
    """The public top-level names of ``source`` and what the contract fixes of each, in the order defined.

    A function: its decorators, parameters (names, kinds, defaults, annotations) and return annotation. A class:
    its bases and decorators, its annotated fields and the signatures of its methods (private ones left out).
    An assignment at the top level (a type alias such as ``LossFn``): its text.
    """
    out: dict[str, object] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _public(node.name):
            out[node.name] = _def(node)
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            members = []
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and _public(item.name):
                    members.append(_def(item))
                elif isinstance(item, ast.AnnAssign) and _public(ast.unparse(item.target)):
                    members.append(ast.unparse(item))
            bases = ", ".join(ast.unparse(b) for b in node.bases)
            decorators = "".join(f"@{ast.unparse(d)} " for d in node.decorator_list)
            out[node.name] = (f"{decorators}class {node.name}({bases})", members)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = ast.unparse(node)
    return out


def _callables(sigs: dict[str, object]) -> list[str]:
    return [name for name, sig in sigs.items() if not (isinstance(sig, str) and " = " in sig)]


def test_one_section_per_exercise_in_order():
    found = [name for name, _ in SECTION.findall(PAGE.read_text(encoding="utf-8"))]
    assert found == list(EXERCISES), f"docs/curriculum.md's sections {found} are not the exercises {list(EXERCISES)}"


@pytest.mark.parametrize("exercise", EXERCISES)
def test_the_page_is_the_exercises_signatures(exercise: str) -> None:
    block = sections(PAGE.read_text(encoding="utf-8")).get(exercise, "")
    assert block, f"docs/curriculum.md: the section `{exercise}` needs a ```python block of its signatures"
    page = signatures(block)
    names = _callables(page)
    assert tuple(names) == REGISTRY[exercise].names, (
        f"{exercise}: the page names {names}, META.names is {list(REGISTRY[exercise].names)}")
    for folder in (SOLUTIONS, EXERCISES_DIR):
        path = Path(folder) / f"{exercise}.py"
        code = signatures(path.read_text(encoding="utf-8"))
        where = path.relative_to(ROOT)
        assert sorted(_callables(code)) == sorted(names), (
            f"{where} defines {_callables(code)} in public; the page's section names {names}")
        for name, sig in page.items():
            assert name in code, f"{where} has no top-level `{name}` (the page's section has it)"
            assert code[name] == sig, f"{exercise}: `{name}` in the page is\n  {sig}\nin {where}:\n  {code[name]}"


def test_the_checker_reads_what_it_compares():
    """A signature differing in an annotation, a default or a parameter's kind differs; the layout does not."""
    one = signatures("def f(a: int, *, b: str = 'x') -> None: ...")
    assert one == signatures('def f(a: int, *, b: str = "x") -> None:\n    """Doc."""\n    return None\n')
    assert one != signatures("def f(a: int, b: str = 'x') -> None: ...")
    assert one != signatures("def f(a: float, *, b: str = 'x') -> None: ...")
    assert one != signatures("def f(a: int, *, b: str = 'y') -> None: ...")
    cls = signatures("class M(nn.Module):\n    k: int = 10\n    @nn.compact\n    def __call__(self, x): ...\n"
                     "    def _helper(self): ...\n")
    assert cls == {"M": ("class M(nn.Module)", ["k: int = 10", "@nn.compact def __call__(self, x)"])}
    assert _callables(signatures("A = int\ndef g(): ...\n")) == ["g"]
