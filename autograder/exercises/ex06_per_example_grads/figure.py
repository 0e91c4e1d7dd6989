"""The figure of ex06_per_example_grads: what ``figure("ex06")`` draws from the student's own code."""

from __future__ import annotations

from typing import Any

from autograder.student import get_language
from autograder.student.figure_canvas import figure_text, new_figure, say, show_figure
from autograder.student.figure_training import load_dataset, need_names


def grad_norms(per_example: Any, clipped_mean: Any = None, max_norm: float | None = None, *,
               lang: str | None = None, title: str | None = None, show: bool = True) -> Any:
    """Histogram of per-example gradient norms, with the clipping threshold.

    Args:
        per_example: a pytree whose leaves have a leading axis N (``per_example_grads``'s output).
        clipped_mean: ``clip_and_average(per_example, max_norm)``, or None.
        max_norm: the clipping threshold, or None.
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title.
        show: display inline when running in IPython.

    Returns:
        The matplotlib Figure.
    """
    import jax
    import numpy as np

    lang = get_language(lang)
    leaves = [np.asarray(leaf, np.float64) for leaf in jax.tree_util.tree_leaves(per_example)]
    n = len(leaves[0])
    norms = np.sqrt(sum(np.square(leaf).reshape(n, -1).sum(axis=1) for leaf in leaves))
    has_bar = clipped_mean is not None
    fig = new_figure(10.0 if has_bar else 5.5, 3.8)
    axes = fig.subplots(1, 2 if has_bar else 1, squeeze=False)[0]
    axes[0].hist(norms, bins=30, color="tab:blue", alpha=0.8)
    if max_norm is not None:
        k = int(np.sum(norms > max_norm))
        axes[0].axvline(max_norm, color="tab:red", linestyle="--",
                        label=figure_text("max_norm", lang, m=float(max_norm), k=k, n=n))
        axes[0].legend(fontsize=8)
    axes[0].set_xlabel(figure_text("norm", lang))
    axes[0].set_ylabel(figure_text("count", lang))
    if has_bar:
        plain = np.sqrt(sum((leaf.mean(axis=0) ** 2).sum() for leaf in leaves))
        clipped = np.sqrt(sum((np.asarray(leaf, np.float64) ** 2).sum()
                              for leaf in jax.tree_util.tree_leaves(clipped_mean)))
        axes[1].bar([figure_text("plain_mean", lang), figure_text("clipped_mean", lang)], [plain, clipped],
                    color=["tab:gray", "tab:orange"])
        axes[1].set_ylabel(figure_text("mean_norm", lang))
    fig.suptitle(title or figure_text("norms", lang, n=n))
    return show_figure(fig, show)


def figures(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of ``figure("ex06")``, drawn from the notebook's names ``ns`` (``ex``: the exercise's
    full name, for the messages of a missing name)."""
    kw = {"lang": lang, "show": False}
    import jax
    import jax.numpy as jnp
    import numpy as np

    peg, clip = need_names(ns, ex, ("per_example_grads", "clip_and_average"), "ex06", lang)
    init, loss_fn = need_names(ns, ex, ("init_params", "bce_loss"), "ex04", lang)
    data = load_dataset("moons")
    params = init([2, 32, 32, 1], jax.random.PRNGKey(0))
    g = peg(loss_fn, params, jnp.asarray(data["x_train"]), jnp.asarray(data["y_train"]))
    leaves = [np.asarray(leaf, np.float64) for leaf in jax.tree_util.tree_leaves(g)]
    norms = np.sqrt(sum((leaf.reshape(leaf.shape[0], -1) ** 2).sum(axis=1) for leaf in leaves))
    max_norm = float(np.median(norms))
    fig = grad_norms(g, clip(g, max_norm), max_norm, **kw)
    say(fig, figure_text("from_ex06", lang))
    return [fig]
