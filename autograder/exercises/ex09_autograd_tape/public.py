"""Public checks of ex09_autograd_tape (shown in the student notebook)."""

from __future__ import annotations

import numpy as np

from autograder.core.suite import Ctx, Fail, Suite

suite = Suite("ex09_autograd_tape")

GRAD_NAMES = ("dL/dw", "dL/dx", "dL/db")


def graph_seeds(ctx: Ctx, n: int) -> list[int]:
    """``n`` seeds of random graphs, drawn from ``ctx.rng`` (also the hidden suite's).

    Args:
        ctx: The check's context.
        n: How many.

    Returns:
        Seeds in ``[0, 2**31 - 1)``.
    """
    return [int(s) for s in ctx.rng.integers(0, 2**31 - 1, size=n)]


def compare_graphs(got: list, want: list, call: str) -> None:
    """Fails with the sharpest message for the first graph whose node list differs."""
    for g, w in zip(got, want, strict=True):
        if g == w:
            continue
        if w and len(g) > len(w) and g[len(g) - len(w):] == w:
            raise Fail("EX09_LIST_KEPT", call=call, got=len(g))
        if len(g) > len(w) and sorted(set(g)) == sorted(set(w)):
            raise Fail("EX09_DUPLICATES", call=call, got=len(g))
        if any(n not in w and n.rsplit("::", 1)[-1] in w for n in g):
            raise Fail("EX09_NODE_NAME", call=call)
        if "AccumulateGrad" in w and "AccumulateGrad" not in g:
            raise Fail("EX09_NO_ACCUMULATE", call=call)
        if "NoneType" in g:
            raise Fail("EX09_NONE_NODE", call=call)
        if sorted(g) == sorted(w):
            raise Fail("EX09_ORDER", call=call)
        raise Fail("EX09_GRAPH", call=call, got=len(g))


def random_points(ctx: Ctx, n: int) -> list[list[float]]:
    """(w, x, b) triples with |x| away from 1, so a forgotten factor always shows."""
    pts = ctx.rng.uniform(-3.0, 3.0, size=(n, 3))
    sign = np.where(ctx.rng.random(n) < 0.5, -1.0, 1.0)
    pts[:, 1] = sign * ctx.rng.uniform(1.5, 3.0, size=n)
    return [[round(float(v), 4) for v in p] for p in pts]


@suite.check(points=2, hidden=False)
def graph_of_an_expression(ctx: Ctx) -> None:
    """`backward_graph` lists every node of a fresh graph: depth-first, children in order, AccumulateGrad included."""
    graphs = [["tree", s] for s in graph_seeds(ctx, 2)]
    got, want = ctx.both("graphs", call="backward_graph(loss)", graphs=graphs)
    compare_graphs([g[0] for g in got], [w[0] for w in want], "backward_graph(loss)")


@suite.check(points=2, hidden=False)
def manual_grads_at_random_points(ctx: Ctx) -> None:
    """`manual_grads(w, x, b)` equals the chain rule's closed form at random points."""
    pts = random_points(ctx, 5)
    got, want = ctx.both("manual_grads", call="manual_grads(w, x, b)", points=pts)
    g, w = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    if g.shape == w.shape and np.allclose(g[:, 0], w[:, 2], rtol=1e-5, atol=1e-6) \
            and not np.allclose(w[:, 0], w[:, 2], rtol=1e-5, atol=1e-6):
        raise Fail("EX09_MISSING_X")
    # "forward", not "exact": float32 is the course's default, and a closed form evaluated in float32 (torch.tensor(w),
    # jnp.array(w)) cancels in w*x + b near zero to a few 1e-6 absolute, beyond "exact" at about 1 seed in 7000;
    # a wrong formula is off by O(1)
    for i, name in enumerate(GRAD_NAMES):
        ctx.assert_close(g[:, i], w[:, i], kind="forward", what=f"manual_grads(w, x, b)[{i}] ({name})")
