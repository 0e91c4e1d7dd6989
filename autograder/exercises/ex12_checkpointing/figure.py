"""The figure of ex12_checkpointing: what ``figure("ex12")`` draws from the student's own code."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from autograder.student import get_language
from autograder.student.figure_canvas import figure_text, new_figure, show_figure
from autograder.student.figure_training import need_names


def _plain_mlp(params: Any, x: Any) -> Any:
    import jax

    h = x
    for i, (w, b) in enumerate(zip(params["W"], params["b"])):
        h = h @ w + b
        if i < len(params["W"]) - 1:
            h = jax.nn.relu(h)
    return h


def checkpoint_savings(checkpointed_mlp_forward: Callable | None, saved_residual_count: Callable | None,
                       torch_checkpointed: Callable | None = None, torch_saved_tensor_count: Callable | None = None,
                       *, depths: Sequence[int] = (2, 3, 4, 5, 6), lang: str | None = None,
                       title: str | None = None, show: bool = True) -> Any:
    """What is kept for the backward pass, with and without checkpoints, as the network deepens.

    Args:
        checkpointed_mlp_forward: the student's JAX forward (compared with a plain MLP forward).
        saved_residual_count: the student's residual counter (counts both curves).
        torch_checkpointed: the student's ``torch_checkpointed``, or None.
        torch_saved_tensor_count: the student's saved-tensor counter (counts both curves), or None.
        depths: numbers of layers / blocks.
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title.
        show: display inline when running in IPython.

    Returns:
        The matplotlib Figure.
    """
    import numpy as np

    lang = get_language(lang)
    jax_side = checkpointed_mlp_forward is not None and saved_residual_count is not None
    torch_side = torch_checkpointed is not None and torch_saved_tensor_count is not None
    fig = new_figure(4.6 * (jax_side + torch_side), 3.8)
    axes = list(np.atleast_1d(fig.subplots(1, jax_side + torch_side)))
    rng = np.random.default_rng(0)
    if jax_side:
        import jax.numpy as jnp

        plain, ckpt = [], []
        for depth in depths:
            dims = [4] + [16] * (depth - 1) + [1]
            params = {"W": [jnp.asarray(rng.standard_normal((a, b)), jnp.float32) for a, b in zip(dims, dims[1:])],
                      "b": [jnp.zeros(b, jnp.float32) for b in dims[1:]]}
            x = jnp.asarray(rng.standard_normal((8, 4)), jnp.float32)
            plain.append(int(saved_residual_count(_plain_mlp, params, x)))
            ckpt.append(int(saved_residual_count(checkpointed_mlp_forward, params, x)))
        ax = axes.pop(0)
        ax.plot(depths, plain, "o-", color="tab:gray", label=figure_text("plain", lang))
        ax.plot(depths, ckpt, "s--", color="tab:purple", label=figure_text("checkpointed", lang))
        ax.set_xticks(list(depths))
        ax.set_xlabel(figure_text("layers", lang))
        ax.set_ylabel(figure_text("residuals", lang))
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    if torch_side:
        import torch

        plain, ckpt = [], []
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            for depth in depths:
                blocks = [torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.Tanh()) for _ in range(depth)]
                x = torch.randn(8, 16)

                def run_plain(blocks: list = blocks, x: Any = x) -> Any:
                    h = x
                    for blk in blocks:
                        h = blk(h)
                    return h.sum()

                plain.append(int(torch_saved_tensor_count(run_plain)))
                ckpt.append(int(torch_saved_tensor_count(lambda blocks=blocks, x=x: torch_checkpointed(blocks, x).sum())))
        ax = axes.pop(0)
        ax.plot(depths, plain, "o-", color="tab:gray", label=figure_text("plain", lang))
        ax.plot(depths, ckpt, "s--", color="tab:red", label=figure_text("checkpointed", lang))
        ax.set_xticks(list(depths))
        ax.set_xlabel(figure_text("blocks", lang))
        ax.set_ylabel(figure_text("saved_tensors", lang))
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle(title or figure_text("ckpt_title", lang))
    return show_figure(fig, show)


def figures(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of ``figure("ex12")``, drawn from the notebook's names ``ns`` (``ex``: the exercise's
    full name, for the messages of a missing name)."""
    kw = {"lang": lang, "show": False}
    fwd, count = need_names(ns, ex, ("checkpointed_mlp_forward", "saved_residual_count"), "ex12", lang)
    tck, tcount = (ns.get(n) if callable(ns.get(n)) else None
                   for n in ("torch_checkpointed", "torch_saved_tensor_count"))
    return [checkpoint_savings(fwd, count, tck, tcount, **kw)]
