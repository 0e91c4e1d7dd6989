"""The figure of ex13_spmd: what ``figure("ex13")`` draws from the student's own code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograder.student import get_language
from autograder.student.figure_canvas import check_series, figure_text, new_figure, show_figure
from autograder.student.figure_training import load_dataset, need_names


def mesh_layout(make_data_mesh: Callable, shard_batch: Callable, data_parallel_step: Callable | None = None, *,
                rows: int = 32, steps: int = 100, lang: str | None = None, title: str | None = None,
                show: bool = True) -> Any:
    """Which device holds which rows of a batch, and the same training run on one device and on all.

    Args:
        make_data_mesh: the student's ``make_data_mesh``.
        shard_batch: the student's ``shard_batch``.
        data_parallel_step: the student's ``data_parallel_step``, or None.
        rows: rows of the batch drawn in the first panel (a multiple of the device count).
        steps: Adam steps of the training runs (make_moons, a small tanh MLP).
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title.
        show: display inline when running in IPython.

    Returns:
        The matplotlib Figure.
    """
    import jax
    import jax.numpy as jnp
    import numpy as np
    import optax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    lang = get_language(lang)
    mesh = make_data_mesh()
    n = int(mesh.devices.size)
    rows = max(n, rows // n * n)
    xs = shard_batch(jnp.arange(rows * 2, dtype=jnp.float32).reshape(rows, 2), mesh)
    order = {int(d.id): i for i, d in enumerate(mesh.devices.flat)}
    fig = new_figure(10.0 if data_parallel_step is not None else 5.5, 3.8)
    axes = list(np.atleast_1d(fig.subplots(1, 2 if data_parallel_step is not None else 1)))
    ax = axes.pop(0)
    for shard in xs.addressable_shards:
        start, stop, _ = shard.index[0].indices(rows)
        lane = order.get(int(shard.device.id), 0)
        ax.barh(lane, stop - start, left=start, color=f"C{lane % 10}", edgecolor="white")
        ax.text((start + stop) / 2, lane, f"{start}:{stop}", ha="center", va="center", fontsize=7, color="white")
    ax.set_yticks(range(n), [str(d.id) for d in mesh.devices.flat])
    ax.set_ylabel(figure_text("device", lang))
    ax.set_xlabel(figure_text("rows", lang))
    ax.set_xlim(0, rows)
    if data_parallel_step is not None:
        ax = axes.pop(0)
        data = load_dataset("moons")
        x_all, y_all = data["x_train"], data["y_train"]
        keep = len(x_all) // n * n
        rng = np.random.default_rng(0)
        p0 = {"w1": (rng.standard_normal((2, 16)) / np.sqrt(2)).astype(np.float32), "b1": np.zeros(16, np.float32),
              "w2": (rng.standard_normal((16, 1)) / 4).astype(np.float32), "b2": np.zeros(1, np.float32)}

        def loss_fn(params: Any, x: Any, y: Any) -> Any:
            z = (jnp.tanh(x @ params["w1"] + params["b1"]) @ params["w2"] + params["b2"])[:, 0]
            return jnp.mean(jax.nn.softplus(z) - z * y)  # BCE with logits

        for size, style in sorted({(1, "-"), (n, "--")}):
            sub = make_data_mesh(size)
            opt = optax.adam(0.05)
            step = data_parallel_step(loss_fn, opt, sub)
            params = jax.device_put(p0, NamedSharding(sub, P()))
            state = jax.device_put(opt.init(params), NamedSharding(sub, P()))
            xb, yb = shard_batch(jnp.asarray(x_all[:keep]), sub), shard_batch(jnp.asarray(y_all[:keep]), sub)
            history = []
            for _step in range(steps):
                params, state, loss = step(params, state, xb, yb)
                history.append(float(loss))
            ax.plot(np.arange(1, steps + 1), history, style, linewidth=2 if size == 1 else 1.4,
                    label=figure_text("mesh_of", lang, n=size))
            check_series(fig, history, f"{figure_text('loss', lang)} ({figure_text('mesh_of', lang, n=size)})", "step", lang)
        ax.set_xlabel(figure_text("step", lang))
        ax.set_ylabel(figure_text("loss", lang))
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle(title or figure_text("spmd_title", lang, n=n))
    return show_figure(fig, show)


def figures(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of ``figure("ex13")``, drawn from the notebook's names ``ns`` (``ex``: the exercise's
    full name, for the messages of a missing name)."""
    kw = {"lang": lang, "show": False}
    mesh, shard = need_names(ns, ex, ("make_data_mesh", "shard_batch"), "ex13", lang)
    step = ns.get("data_parallel_step") if callable(ns.get("data_parallel_step")) else None
    return [mesh_layout(mesh, shard, step, **kw)]
