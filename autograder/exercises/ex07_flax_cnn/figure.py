"""The figure of ex07_flax_cnn: what ``figure("ex07")`` draws from the student's own code."""

from __future__ import annotations

from typing import Any

from autograder.student.figure_canvas import check_series, figure_text, say
from autograder.student.figure_panels import digits_report
from autograder.student.figure_training import DIGITS_LR, DIGITS_STEPS, load_dataset, need_names


def _flax_init(model: Any, x: Any) -> Any:
    """Variables shaped as ``model.init`` makes them, filled by numpy (LeCun-normal kernels, zero rest).

    ``jax.eval_shape`` traces the student's module without compiling, which saves
    seconds of XLA compile time for the random initialisers on CPU.
    """
    import jax
    import numpy as np

    shapes = jax.eval_shape(model.init, jax.random.PRNGKey(0), x)
    rng = np.random.RandomState(0)

    def fill(path: Any, leaf: Any) -> Any:
        if "kernel" in jax.tree_util.keystr(path) and len(leaf.shape) >= 2:
            fan_in = int(np.prod(leaf.shape[:-1]))
            value = rng.standard_normal(leaf.shape) / np.sqrt(fan_in)
        else:
            value = np.zeros(leaf.shape)
        return jax.device_put(value.astype(leaf.dtype))

    return jax.tree_util.tree_map_with_path(fill, shapes)


def _train_digits_flax(ns: dict, ex: str, lang: str) -> tuple[Any, Any]:
    import jax.numpy as jnp
    import numpy as np
    import optax

    flax_cnn, to_nhwc, make_step = need_names(ns, ex, ("FlaxCNN", "to_nhwc", "make_flax_train_step"), "ex07", lang)
    model = flax_cnn(num_classes=10)
    data = load_dataset("digits")
    x = to_nhwc(data["x_train"][:, None].astype(np.float32))
    y = jnp.asarray(data["y_train"].astype(np.int32))
    params = _flax_init(model, x[:1])
    opt = optax.adam(DIGITS_LR)
    step = make_step(model, opt)
    state = opt.init(params)
    losses = []
    for _ in range(DIGITS_STEPS):
        params, state, loss = step(params, state, x, y)
        losses.append(float(loss))
    return model, params, losses


def figures(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of ``figure("ex07")``, drawn from the notebook's names ``ns`` (``ex``: the exercise's
    full name, for the messages of a missing name)."""
    kw = {"lang": lang, "show": False}
    model, params, losses = _train_digits_flax(ns, ex, lang)
    fig = digits_report(model, params, trained=True, **kw)
    say(fig, figure_text("from_ex07", lang, steps=DIGITS_STEPS, lr=DIGITS_LR))
    check_series(fig, losses, figure_text("loss", lang), "step", lang)
    return [fig]
