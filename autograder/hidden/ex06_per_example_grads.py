"""Hidden suite of ex06_per_example_grads (vmap, clipping, torch.func): the public checks, then these."""

from __future__ import annotations

import numpy as np

from autograder.core.compare import first_difference
from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, StudentProblem, Suite
from autograder.core.tolerances import tolerance
from autograder.exercises.ex06_per_example_grads.public import bce_case, per_example_tree, softmax_case, torch_case
from autograder.exercises.ex06_per_example_grads.public import suite as _public
from autograder.probing.artefact import Program, ProgramTooLarge, read_stablehlo

suite = Suite("ex06_per_example_grads", checks=list(_public.checks))


@suite.check(points=2)
def per_example_grads_vectorised(ctx: Ctx) -> None:
    """The compiled program does not grow with N (N=2 vs N=9), holds no loop (scan, map, fori_loop, while)
    and no host callback (pure_callback, io_callback, debug.callback): read here, in the grader, from the
    StableHLO text of that program, which, compiled, gives what per_example_grads returns."""
    small = bce_case(ctx.rng, n=2)
    # One params pytree for both sizes: only the batch axis changes.
    d = small["x"].shape[1]
    x9 = (1.5 * ctx.rng.standard_normal((9, d))).astype(np.float32)
    y9 = (ctx.rng.random(9) < 0.5).astype(np.float32)
    sizes = {"params": small["params"], "x_small": small["x"], "y_small": small["y"], "x_large": x9, "y_large": y9}
    got = ctx.student("pe_program", call="jax.jit(per_example_grads).lower(...)", loss="bce", **sizes)
    # the programs read below are the ones per_example_grads runs: their outputs are what it returns itself
    for x, y, out in ((small["x"], small["y"], got["outs"][0]), (x9, y9, got["outs"][1])):
        mine = ctx.student("per_example", call="per_example_grads(bce_loss, params, x, y)", loss="bce",
                           params=small["params"], x=x, y=y)
        ctx.assert_close(out, mine, kind="step", framework="jax",
                         what=label("ex06.what.compiled_n", n=x.shape[0]))
    progs = [read_program(text) for text in got["programs"]]
    callbacks = sorted({c for p in progs for c in p.callbacks})
    if callbacks:
        raise Fail("EX06_HOST_CALLBACK", targets=", ".join(callbacks))
    if any(p.loops for p in progs):
        raise Fail("EX06_LOOP_PRIMITIVE", prims="while")
    n_small, n_large = progs[0].ops, progs[1].ops
    if n_large > n_small:
        raise Fail("EX06_NOT_VECTORISED", small=n_small, large=n_large)


def read_program(text: object) -> Program:
    """The grader's reading of a program text a probe sent; a text it cannot read fails the check."""
    try:
        return read_stablehlo(text)  # type: ignore[arg-type]
    except ProgramTooLarge:
        raise Fail("EX06_PROGRAM_TOO_LARGE") from None
    except TypeError:
        raise Fail("EX06_PROGRAM_TOO_LARGE") from None


@suite.check(points=1)
def per_example_grads_pure(ctx: Ctx) -> None:
    """Leaves `params` alone, gives the same result under jax.jit, and uses no state from earlier calls."""
    case = bce_case(ctx.rng, n=int(ctx.rng.integers(4, 9)))
    got = ctx.student("pe_pure", call="jax.jit(per_example_grads)", loss="bce", **case)
    if got["mutated"]:
        raise Fail("EX06_MUTATES")
    want = ctx.reference("per_example", loss="bce", **case)
    ctx.assert_close(got["jit"], want, kind="step", what="jax.jit(per_example_grads)", framework="jax")
    other = softmax_case(ctx.rng, n=int(ctx.rng.integers(4, 9)))
    call = "per_example_grads(another_loss, another_params, x, y)"
    try:
        got2, want2 = ctx.both("per_example", call=call, loss="softmax", **other)
    except StudentProblem as err:
        if err.key == "CALL_EXCEPTION":
            raise Fail("EX06_SECOND_CALL", detail=err.fields.get("error", "")) from None
        raise
    detail = first_difference(got2, want2, tolerance("step", ctx.backend("jax")))
    if detail:
        raise Fail("EX06_SECOND_CALL", detail=detail)


@suite.check(points=0.5)
def clip_and_average_any_pytree(ctx: Ctx) -> None:
    """Works on any pytree (nested dicts, tuples, scalar leaves), norm taken over all leaves."""
    shapes = {"conv": {"kernel": (3, 3, 1, int(ctx.rng.integers(2, 5))), "bias": (int(ctx.rng.integers(2, 5)),)},
              "scale": (),
              "head": ((int(ctx.rng.integers(2, 6)), 3), (3,))}
    max_norm = float(ctx.rng.uniform(0.5, 3.0))
    per_example = per_example_tree(ctx.rng, shapes, int(ctx.rng.integers(5, 10)), max_norm)
    got, want = ctx.both("clip", call="clip_and_average(nested_pytree, max_norm)", per_example=per_example,
                         max_norm=max_norm)
    ctx.assert_close(got, want, kind="step", what="clip_and_average(nested_pytree, max_norm)", framework="jax")


@suite.check(points=1)
def torch_leaves_model_untouched(ctx: Ctx) -> None:
    """After the call every `.grad` is still None and the parameters are unchanged."""
    case = torch_case(ctx.rng, int(ctx.rng.integers(4, 9)), "mse")
    got = ctx.student("torch_untouched", call="torch_per_example_grads(model, mse_loss, x, y)", **case)
    if got["grad_set"]:
        raise Fail("EX06_TORCH_GRAD_SET", names=", ".join(got["grad_set"]))
    if got["changed"]:
        raise Fail("EX06_TORCH_PARAMS_CHANGED", names=", ".join(got["changed"]))


@suite.check(points=1)
def torch_vectorised(ctx: Ctx) -> None:
    """torch.func.vmap runs the model once on the batch and one backward pass through it; a loop over examples
    runs it N times, or runs N backward passes through one batched forward."""
    case = torch_case(ctx.rng, int(ctx.rng.integers(8, 13)), "xent")
    got = ctx.student("torch_calls", call="torch_per_example_grads(model, xent_loss, x, y)", **case)
    # vmap calls forward once (twice if the student also runs a plain forward); a loop calls it >= N times.
    # The probe's count lives in the worker (a raw memory write can rewind it); the grader's own count of
    # the forwards' tallies cannot be: the larger one is judged (the two differ only when one was forged).
    _, calls = ctx.counts("forward", got["calls"])
    if calls > got["n"] // 2:
        raise Fail("EX06_TORCH_LOOP", calls=calls, n=got["n"])
    # one forward on the batch, then torch.autograd.grad per example: the loop moved to the backward passes
    _, passes = ctx.counts("backward", got["backward"])
    if passes > got["n"] // 2:
        raise Fail("EX06_TORCH_BACKWARD_LOOP", passes=passes, n=got["n"])


def _zero_example(tree: object, i: int) -> object:
    """The per-example tree with example ``i`` all zeros (every leaf)."""
    if isinstance(tree, dict):
        return {k: _zero_example(v, i) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(_zero_example(v, i) for v in tree)
    out = np.array(tree, copy=True)
    out[i] = 0.0
    return out


@suite.check(points=0.5)
def clip_and_average_zero_gradient(ctx: Ctx) -> None:
    """An example whose gradient is all zeros (norm 0: a dead ReLU, a loss already at its minimum) is left
    alone like any example below max_norm: the result is finite and equals the reference's."""
    case = bce_case(ctx.rng, n=1)
    shapes = {k: [list(a.shape) for a in v] for k, v in case["params"].items()}
    max_norm = float(ctx.rng.uniform(0.5, 2.0))
    n = int(ctx.rng.integers(6, 12))
    per_example = _zero_example(per_example_tree(ctx.rng, shapes, n, max_norm), int(ctx.rng.integers(n)))
    call = label("ex06.call.zero_example")
    got, want = ctx.both("clip", call=call, per_example=per_example, max_norm=max_norm)
    if not all(np.isfinite(np.asarray(leaf)).all() for leaf in _leaves(got)):
        raise Fail("EX06_CLIP_ZERO_NORM")
    ctx.assert_close(got, want, kind="step", what=call, framework="jax")


def _leaves(tree: object) -> list:
    if isinstance(tree, dict):
        return [x for v in tree.values() for x in _leaves(v)]
    if isinstance(tree, (list, tuple)):
        return [x for v in tree for x in _leaves(v)]
    return [tree]
