"""``tapetrace figures``: instructor figures, starting with PyTorch vs JAX from one set of weights.

The seeds' claim, drawn: one set of starting weights (the JAX init of ex04,
He-normal, zero biases) is moved into a torch MLP and back with the
reference bridge (ex10), then trained on make_moons by the reference
PyTorch loop (ex02: Adam, stable BCE with logits, full batch) and the
reference JAX loop (ex05: ``optax.adam``, jitted step). The figure shows
both loss curves and their difference per epoch: equal to float32 rounding
for the first steps, then drifting apart while both keep learning.

This runs in-process on the instructor's machine (it may import the
reference solutions); the training loops are the ones the ex10 grader uses.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

from autograder.core.paths import SOLUTIONS

FIGURE_NAME = "torch_vs_jax_losses.png"
DIMS = [2, 32, 32, 1]


DESCRIPTION = "Instructor figures: PyTorch vs JAX training from one set of weights."


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Adds ``figures`` and its options to the CLI's subparsers."""
    p = sub.add_parser("figures", help="instructor figures (PyTorch vs JAX loss curves)", description=DESCRIPTION)
    _add_arguments(p)
    p.set_defaults(func=run)
    return p


def build_parser() -> argparse.ArgumentParser:
    """Options of ``tapetrace figures``."""
    from autograder.cli.app import _Parser

    return _add_arguments(_Parser(prog="tapetrace figures", description=DESCRIPTION))


def _add_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--out", default="figures", metavar="DIR", help="folder for the PNG files (default: figures/)")
    p.add_argument("--epochs", type=int, default=300, help="training epochs in each framework (default 300)")
    p.add_argument("--lr", type=float, default=0.01, help="Adam learning rate (default 0.01)")
    p.add_argument("--seed", type=int, default=0, help="seed of the starting weights (default 0)")
    p.add_argument("--dpi", type=int, default=120)
    return p


def _reference_bridge() -> Any:
    path = SOLUTIONS / "ex10_bridge.py"
    if not path.exists():
        raise FileNotFoundError(f"{path} not found: `tapetrace figures` needs the reference solutions")
    spec = importlib.util.spec_from_file_location("_tapetrace_ref_ex10_bridge", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def train_both(epochs: int, lr: float, seed: int) -> dict[str, Any]:
    """Runs the two reference loops from one start; returns losses and validation accuracies."""
    import jax
    import torch

    torch.set_num_threads(1)  # reproducible bits, and fast on a busy machine (env-measurements §8)
    jax.config.update("jax_default_matmul_precision", "highest")
    from autograder.core import data as _data
    from autograder.exercises.ex10_bridge import probes as loops

    bridge = _reference_bridge()
    rng = np.random.default_rng(seed)
    start = {"W": [(rng.standard_normal((a, b)) * np.sqrt(2.0 / a)).astype(np.float32)
                   for a, b in zip(DIMS[:-1], DIMS[1:])],
             "b": [np.zeros(b, np.float32) for b in DIMS[1:]]}
    model = loops.torch_mlp(DIMS, seed=seed)
    bridge.jax_to_torch_mlp(loops.jax_params(start), model)
    params = bridge.torch_mlp_to_jax(model)
    d = _data.load("moons")
    final, jax_losses = loops.fit_jax(params, d["x_train"], d["y_train"], epochs, lr)
    torch_losses = loops.fit_torch(model, d["x_train"], d["y_train"], epochs, lr)
    return {"torch": np.asarray(torch_losses), "jax": np.asarray(jax_losses),
            "torch_acc": loops.accuracy_torch(model, d["x_val"], d["y_val"]),
            "jax_acc": loops.accuracy_jax(final, d["x_val"], d["y_val"])}


def plot_losses(run: dict[str, Any], path: Path, lr: float, seed: int, dpi: int = 120) -> Path:
    """Two panels: both loss curves, and their absolute difference per epoch (log scale)."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    t, j = run["torch"], run["jax"]
    epochs = np.arange(1, len(t) + 1)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=dpi)
    ax1.plot(epochs, t, color="#e8590c", lw=2.2, label=f"PyTorch (tape), val acc {run['torch_acc']:.2f}")
    ax1.plot(epochs, j, color="#1c7ed6", lw=1.2, ls="--", label=f"JAX (jit), val acc {run['jax_acc']:.2f}")
    ax1.set(xlabel="epoch", ylabel="training loss (BCE with logits)", yscale="log",
            title="Same starting weights, two frameworks")
    ax1.grid(alpha=0.3, which="both")
    ax1.legend()
    diff = np.abs(t - j)
    ax2.semilogy(epochs, np.maximum(diff, 1e-9), color="#495057", lw=1.2)
    ax2.axhline(1e-4, color="#2f9e44", ls=":", lw=1, label="grader's tolerance for steps 1-5")
    ax2.axvspan(0.5, 5.5, color="#2f9e44", alpha=0.12)
    ax2.set(xlabel="epoch", ylabel="|loss PyTorch - loss JAX|  (0 drawn at 1e-9)", title="float32 rounding, then chaotic drift")
    ax2.grid(alpha=0.3, which="both")
    ax2.legend(loc="lower right")
    fig.suptitle(f"make_moons, MLP {DIMS}, Adam lr={lr:g}, full batch, start seed {seed}", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def main(argv: list[str]) -> int:
    """``tapetrace figures`` from its own arguments (tests, scripts)."""
    return run(build_parser().parse_args(argv))


def run(args: argparse.Namespace) -> int:
    """``tapetrace figures``: trains both, draws the figure; returns the exit status."""
    if args.epochs < 1:
        print("tapetrace figures: --epochs must be >= 1", file=sys.stderr)
        return 2
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        print(f"tapetrace figures: --out {out}: exists and is not a directory", file=sys.stderr)
        return 2
    try:
        run = train_both(args.epochs, args.lr, args.seed)
        path = plot_losses(run, out / FIGURE_NAME, args.lr, args.seed, args.dpi)
    except FileNotFoundError as err:
        print(f"tapetrace figures: {err}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"tapetrace figures: cannot write the figure: {err}", file=sys.stderr)
        return 2
    head = float(np.max(np.abs(run["torch"][:5] - run["jax"][:5])))
    print(f"wrote {path} (first 5 losses differ by <= {head:.2g}; val acc PyTorch {run['torch_acc']:.2f}, "
          f"JAX {run['jax_acc']:.2f})")
    return 0
