"""Regenerates examples/submissions/ (the samples `make demo` grades) from solutions/ and mutants.

- alice_correct/: every solution, markers stripped (all correct);
- bob_buggy/: realistic bugs — one mutant per exercise where one exists (the first in name order
  of the list below), the solution elsewhere;
- carol_untouched/: the stubs as handed out;
- dave_partial.zip: a zip of a folder with some exercises done, one missing, one that loops forever.

`tests/test_examples.py` fails when these drift from what this script writes.
"""

from __future__ import annotations

import io
import shutil
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.core.paths import EXERCISES, EXERCISES_DIR, SOLUTIONS  # noqa: E402

OUT = ROOT / "examples" / "submissions"
BOB = {  # exercise -> mutant file stem (a bug a student really makes)
    "ex01_torch_mlp": "sigmoid_output",
    "ex02_torch_training": "no_zero_grad",
    "ex03_torch_cnn": "avg_pool",
    "ex04_jax_mlp": "same_key_every_layer",
    "ex05_jit_train_step": "jit_inside_step",
    "ex06_per_example_grads": "python_loop",
    "ex07_flax_cnn": "max_pool",
    "ex08_jax_transforms": "python_if",
    "ex09_autograd_tape": "figure2_dldw",
    "ex10_bridge": "missing_transpose",
    "ex11_torch_compile": "clip_python_if",
    "ex12_checkpointing": "torch_whole_network",
    "ex13_spmd": "dp_averages_losses_not_grads",
}


def strip_markers(text: str) -> str:
    return "\n".join(ln for ln in text.splitlines() if ln.strip() not in ("# BEGIN SOLUTION", "# END SOLUTION")) + "\n"


def solution(ex: str) -> str:
    return strip_markers((SOLUTIONS / f"{ex}.py").read_text())


def bob(ex: str) -> str:
    mutants = sorted((ROOT / "tests" / "mutants" / ex).glob("*.py"))
    chosen = [m for m in mutants if m.stem == BOB.get(ex)] or mutants[:1]
    return chosen[0].read_text() if chosen else solution(ex)


def files() -> dict[str, bytes]:
    """relative path -> content of everything under examples/submissions/."""
    out: dict[str, bytes] = {}
    present = [ex for ex in EXERCISES if (SOLUTIONS / f"{ex}.py").exists()]
    for ex in present:
        out[f"alice_correct/{ex}.py"] = solution(ex).encode()
        out[f"bob_buggy/{ex}.py"] = bob(ex).encode()
        out[f"carol_untouched/{ex}.py"] = (EXERCISES_DIR / f"{ex}.py").read_bytes()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for i, ex in enumerate(present):
            if i % 3 == 2:
                continue  # missing exercise
            text = solution(ex) if i != 3 else "while True:\n    pass\n"
            info = zipfile.ZipInfo(f"dave/{ex}.py", date_time=(2026, 1, 1, 0, 0, 0))
            zf.writestr(info, text)
    out["dave_partial.zip"] = buf.getvalue()
    return out


def main() -> int:
    if OUT.exists():
        shutil.rmtree(OUT)
    for rel, data in files().items():
        path = OUT / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    print(f"wrote {len(files())} files under {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
