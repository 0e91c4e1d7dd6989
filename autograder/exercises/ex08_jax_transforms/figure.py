"""The figure of ex08_jax_transforms: what ``figure("ex08")`` draws from the student's own code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograder.student import get_language
from autograder.student.figure_canvas import figure_text, new_figure, show_figure
from autograder.student.figure_panels import sigmoid
from autograder.student.figure_training import need_names


def bce_derivatives(nth_derivative: Callable, *, label: float = 1.0, lang: str | None = None,
                    title: str | None = None, show: bool = True) -> Any:
    """The binary cross-entropy of one logit and its first two derivatives, from ``nth_derivative``.

    Args:
        nth_derivative: the student's ``nth_derivative(f, n)``.
        label: the target y (0 or 1).
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title.
        show: display inline when running in IPython.

    Returns:
        The matplotlib Figure: the three curves, each with its closed form dotted.
    """
    import jax
    import jax.numpy as jnp
    import numpy as np

    lang = get_language(lang)
    y = float(label)

    def loss(z: Any) -> Any:  # BCE of one logit for label y, written as softplus
        return jax.nn.softplus(z) - y * z

    z = np.linspace(-8.0, 8.0, 241).astype(np.float32)
    curves = []
    for n in range(3):
        fn = nth_derivative(loss, n)
        try:
            values = np.asarray(jax.jit(jax.vmap(fn))(jnp.asarray(z)), dtype=np.float64)
        except Exception:  # not vmappable: fall back to a coarse loop
            z_small = z[::6]
            values = np.interp(z, z_small, [float(fn(jnp.float32(v))) for v in z_small])
        curves.append(values)
    s = sigmoid(z.astype(np.float64))
    closed = [np.logaddexp(0.0, z) - y * z, s - y, s * (1.0 - s)]
    fig = new_figure(10.5, 3.6)
    axes = fig.subplots(1, 3)
    for n, ax in enumerate(axes):
        ax.plot(z, curves[n], "-", linewidth=2.2, color=f"C{n}", label=figure_text(f"d{n}", lang))
        ax.plot(z, closed[n], ":", linewidth=1.4, color="k", label=figure_text("analytic", lang))
        ax.set_xlabel(figure_text("logit", lang))
        ax.set_title(figure_text(f"d{n}", lang))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title or figure_text("bce", lang, y=y))
    return show_figure(fig, show)


def figures(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of ``figure("ex08")``, drawn from the notebook's names ``ns`` (``ex``: the exercise's
    full name, for the messages of a missing name)."""
    kw = {"lang": lang, "show": False}
    return [bce_derivatives(need_names(ns, ex, ("nth_derivative",), "ex08", lang)[0], **kw)]
