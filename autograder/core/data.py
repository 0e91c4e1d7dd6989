"""The seeds' datasets, cached as one small .npz so no worker imports sklearn.

make_moons(n_samples=500, noise=0.25, random_state=42) and load_digits()/16,
each split 80/20 with ``np.random.RandomState(42).permutation`` (docs/curriculum.md).
``tapetrace-data`` regenerates the file from scikit-learn (a dev dependency);
a test checks the committed file against it.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np

DATA_FILE = Path(__file__).resolve().parents[1] / "data" / "datasets.npz"


def _split(x: np.ndarray, y: np.ndarray) -> dict[str, np.ndarray]:
    idx = np.random.RandomState(42).permutation(len(x))
    cut = int(0.8 * len(x))
    tr, va = idx[:cut], idx[cut:]
    return {"x_train": x[tr], "y_train": y[tr], "x_val": x[va], "y_val": y[va]}


def build_from_sklearn() -> dict[str, np.ndarray]:
    """Regenerates the arrays with scikit-learn (the seeds' recipe)."""
    from sklearn.datasets import load_digits, make_moons

    out = {}
    x, y = make_moons(n_samples=500, noise=0.25, random_state=42)
    for k, v in _split(x.astype(np.float32), y.astype(np.float32)).items():
        out[f"moons_{k}"] = v
    d = load_digits()
    xd = (d.images / 16.0).astype(np.float32)  # (N, 8, 8)
    for k, v in _split(xd, d.target.astype(np.int32)).items():
        out[f"digits_{k}"] = v
    return out


def write() -> Path:
    """Writes the .npz file."""
    DATA_FILE.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(DATA_FILE, **build_from_sklearn())  # type: ignore[arg-type]  # reason: numpy's stub lets ** fill allow_pickle
    return DATA_FILE


@cache
def all_arrays() -> dict[str, np.ndarray]:
    """Every array of :data:`DATA_FILE`, read once (``all_arrays.cache_clear()`` after changing the file).

    Returns:
        ``{"moons_x_train": ..., "digits_y_val": ...}``: each dataset's split, keys prefixed by its name.
    """
    with np.load(DATA_FILE, allow_pickle=False) as f:
        return {k: f[k] for k in f.files}


def load(name: str) -> dict[str, np.ndarray]:
    """One dataset's split.

    Args:
        name: ``"moons"`` (x: (N, 2) float32, y: (N,) float32 0/1) or ``"digits"``
            (x: (N, 8, 8) float32 in [0, 1], y: (N,) int32 0..9).

    Returns:
        ``{"x_train", "y_train", "x_val", "y_val"}`` (copies).
    """
    data = all_arrays()
    return {k[len(name) + 1:]: data[k].copy() for k in data if k.startswith(name + "_")}
