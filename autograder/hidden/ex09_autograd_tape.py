"""Hidden suite of ex09_autograd_tape (the tape): the public checks, then these."""

from __future__ import annotations

from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, Suite
from autograder.exercises.ex09_autograd_tape.public import compare_graphs, graph_seeds, random_points
from autograder.exercises.ex09_autograd_tape.public import suite as _public

suite = Suite("ex09_autograd_tape", checks=list(_public.checks))


@suite.check(points=2)
def graph_with_shared_nodes(ctx: Ctx) -> None:
    """Shared subexpressions and a leaf used twice appear once; tensors without grad_fn give []."""
    graphs = [["dag", s] for s in graph_seeds(ctx, 2)] + [["nograd", graph_seeds(ctx, 1)[0]]]
    got, want = ctx.both("graphs", call="backward_graph(t)", graphs=graphs)
    for g, w in zip(got[-1], want[-1], strict=True):
        if g != w:
            raise Fail("EX09_NO_GRAD_FN", got=len(g))
    compare_graphs([g[0] for g in got[:-1]], [w[0] for w in want[:-1]], "backward_graph(t)")


@suite.check(points=2)
def graph_repeated_calls(ctx: Ctx) -> None:
    """Three calls in a row (a graph, the same graph, a new graph over the same leaves) all answer in full."""
    seed = graph_seeds(ctx, 1)[0]
    got, want = ctx.both("repeated", call="backward_graph(t)", kind="tree", seed=seed)
    compare_graphs(got[:1], want[:1], "backward_graph(t)")
    for g, w, which in zip(got[1:], want[1:], (label("ex09.which.again"), label("ex09.which.rebuilt")),
                           strict=True):
        if g != w:
            key = "EX09_STATE_FEWER" if len(g) < len(w) else "EX09_STATE_MORE"
            raise Fail(key, which=which, got=len(g))


def _used_words(used: list[str]) -> str | dict:
    """What the probe saw used: the autodiff APIs called, as code; else, in words, JAX's differentiation reached
    another way (``<jax>``), an operation recorded on the tape (``<tape>``), another thread (``<thread>``, where the probe cannot look) or a record the code
    under test erased (``<erased>``)."""
    apis = [u for u in used if not u.startswith("<")]
    if apis:
        return ", ".join(f"`{u}`" for u in apis)
    for mark, key in (("<jax>", "ex09.used.jax"), ("<tape>", "ex09.used.tape"), ("<thread>", "ex09.used.thread")):
        if mark in used:
            return label(key)
    return label("ex09.used.erased")


@suite.check(points=1)
def manual_grads_without_autograd(ctx: Ctx) -> None:
    """`manual_grads` computes the closed form itself: no backward, no autograd.grad, no jax.grad."""
    got = ctx.student("manual_tape", call="manual_grads(w, x, b)", points=random_points(ctx, 2))
    if got["used"]:
        raise Fail("EX09_USED_AUTOGRAD", used=_used_words(got["used"]))
    # the probe's record lives in the worker (a raw memory write can rewind its count); the grader's own
    # count of its autodiff tallies cannot be: any one means the record was erased
    if ctx.counted("autodiff"):
        raise Fail("EX09_USED_AUTOGRAD", used=_used_words(["<erased>"]))


@suite.check(points=1)
def manual_grads_returns_floats(ctx: Ctx) -> None:
    """`manual_grads` returns a tuple of three Python floats."""
    got = ctx.student("manual_types", call="manual_grads(w, x, b)", point=random_points(ctx, 1)[0])
    if not got["is_tuple"] or got["length"] != 3:
        raise Fail("EX09_NOT_TUPLE", got=got["container"], length=got["length"])
    if not got["all_float"]:
        raise Fail("EX09_NOT_FLOATS", got=", ".join(f"`{t}`" for t in got["item_types"]))
