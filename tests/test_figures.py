"""`tapetrace figures`: the PyTorch-vs-JAX loss figure is written and is not blank."""

from __future__ import annotations

import numpy as np

from autograder import cli
from autograder.cli import figures as _cmd_figures


def test_figures_writes_a_non_blank_png(tmp_path, capsys):
    out = tmp_path / "figs"
    assert _cmd_figures.main(["--out", str(out), "--epochs", "60", "--dpi", "80"]) == 0
    png = out / _cmd_figures.FIGURE_NAME
    assert png.exists()
    assert png.stat().st_size > 20_000
    import matplotlib.image

    pixels = matplotlib.image.imread(str(png))
    assert pixels.ndim == 3 and pixels.shape[0] > 200 and pixels.shape[1] > 400
    assert float(np.std(pixels[..., :3])) > 0.05  # lines, text and axes, not one flat colour
    assert "wrote" in capsys.readouterr().out


def test_cli_dispatches_figures(tmp_path):
    assert cli.main(["figures", "--out", str(tmp_path / "a_file"), "--epochs", "0"]) == 2
    (tmp_path / "a_file").write_text("")
    assert cli.main(["figures", "--out", str(tmp_path / "a_file")]) == 2


def test_training_matches_the_seeds_claim():
    run = _cmd_figures.train_both(epochs=300, lr=0.01, seed=0)
    assert np.max(np.abs(run["torch"][:5] - run["jax"][:5])) < 1e-4
    assert run["torch_acc"] >= 0.9 and run["jax_acc"] >= 0.9
