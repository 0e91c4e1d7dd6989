"""The figure of ex11_torch_compile: what ``figure("ex11")`` draws from the student's own code."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from autograder.student import get_language
from autograder.student.figure_canvas import check_series, figure_text, new_figure, show_figure
from autograder.student.figure_training import load_dataset, need_names


def _branching_clip(x: Any, max_norm: float) -> Any:
    """A clip with a Python branch on a tensor's value (a graph break under TorchDynamo)."""
    if x.norm() > max_norm:
        return x * (max_norm / x.norm())
    return x


def _graphs_compiled() -> int:
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


COMPILE_BATCHES = (16, 16, 24, 40, 9, 33, 57)


def compile_report(clip_by_norm: Callable, graph_report: Callable, compile_for_any_batch: Callable | None = None,
                   compiled_train_step: Callable | None = None, *, steps: int = 150, lang: str | None = None,
                   title: str | None = None, show: bool = True) -> Any:
    """Graphs and graph breaks of two clips, compiles over a sequence of batch sizes, a compiled training run.

    Args:
        clip_by_norm: the student's ``clip_by_norm``.
        graph_report: the student's ``graph_report``.
        compile_for_any_batch: the student's ``compile_for_any_batch``, or None.
        compiled_train_step: the student's ``compiled_train_step``, or None.
        steps: training steps of the compiled step on make_moons.
        lang: ``"en"``/``"es"``; default: the notebook's language.
        title: the figure's title.
        show: display inline when running in IPython.

    Returns:
        The matplotlib Figure (backend "eager" throughout).
    """
    import numpy as np
    import torch
    import torch._dynamo  # noqa: F401 - the counters below live there

    lang = get_language(lang)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        x = torch.randn(4, 5) * 3.0
        reports = [graph_report(_branching_clip, x, 1.0), graph_report(clip_by_norm, x, 1.0)]
        panels = 1 + (compile_for_any_batch is not None) + (compiled_train_step is not None)
        fig = new_figure(4.2 * panels, 3.8)
        axes = list(np.atleast_1d(fig.subplots(1, panels)))
        ax = axes.pop(0)
        pos = np.arange(2)
        ax.bar(pos - 0.18, [int(r[0]) for r in reports], 0.36, label=figure_text("graphs", lang), color="tab:blue")
        ax.bar(pos + 0.18, [int(r[1]) for r in reports], 0.36, label=figure_text("breaks", lang), color="tab:red")
        ax.set_xticks(pos, [figure_text("if_clip", lang), figure_text("your_clip", lang)], fontsize=8)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.legend(fontsize=8)
        if compile_for_any_batch is not None:
            ax = axes.pop(0)
            curves = {}
            for key, make in (("default_compile", lambda m: torch.compile(m, backend="eager")),
                              ("any_batch", lambda m: compile_for_any_batch(m, "eager"))):
                model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
                compiled, start, counts = make(model), _graphs_compiled(), []
                for n in COMPILE_BATCHES:
                    compiled(torch.randn(n, 3))
                    counts.append(_graphs_compiled() - start)
                curves[key] = counts
            calls = np.arange(1, len(COMPILE_BATCHES) + 1)
            ax.step(calls, curves["default_compile"], where="mid", color="tab:gray", linewidth=2,
                    label=figure_text("default_compile", lang))
            ax.step(calls, curves["any_batch"], where="mid", color="tab:orange", linewidth=2, linestyle="--",
                    label=figure_text("any_batch", lang))
            ax.set_xticks(calls, [str(n) for n in COMPILE_BATCHES], fontsize=8)
            ax.set_xlabel(figure_text("call", lang))
            ax.set_ylabel(figure_text("graphs_so_far", lang))
            ax.yaxis.get_major_locator().set_params(integer=True)
            ax.legend(fontsize=8)
        if compiled_train_step is not None:
            ax = axes.pop(0)
            data = load_dataset("moons")
            xt, yt = torch.as_tensor(data["x_train"]), torch.as_tensor(data["y_train"])[:, None]
            model = torch.nn.Sequential(torch.nn.Linear(2, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
            opt = torch.optim.Adam(model.parameters(), lr=0.01)
            step = compiled_train_step(model, opt, torch.nn.functional.binary_cross_entropy_with_logits, "eager")
            losses = [float(step(xt, yt)) for _ in range(steps)]
            ax.plot(np.arange(1, steps + 1), losses, color="tab:green")
            check_series(fig, losses, f"{figure_text('loss', lang)} ({figure_text('compiled_loss', lang)})", "step", lang)
            ax.set_xlabel(figure_text("step", lang))
            ax.set_ylabel(figure_text("loss", lang))
            ax.set_title(figure_text("compiled_loss", lang), fontsize=9)
            ax.grid(alpha=0.3)
    fig.suptitle(title or figure_text("compile_title", lang))
    return show_figure(fig, show)


def figures(ex: str, ns: dict, lang: str) -> list[Any]:
    """The figures of ``figure("ex11")``, drawn from the notebook's names ``ns`` (``ex``: the exercise's
    full name, for the messages of a missing name)."""
    kw = {"lang": lang, "show": False}
    clip, report = need_names(ns, ex, ("clip_by_norm", "graph_report"), "ex11", lang)
    any_batch = ns.get("compile_for_any_batch") if callable(ns.get("compile_for_any_batch")) else None
    step = ns.get("compiled_train_step") if callable(ns.get("compiled_train_step")) else None
    return [compile_report(clip, report, any_batch, step, **kw)]
