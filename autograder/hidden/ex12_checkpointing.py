"""Hidden suite of ex12_checkpointing (jax.checkpoint, torch.utils.checkpoint): the public checks, then these.

What checkpointing saves is measured, not assumed: residuals with print_saved_residuals against the
probe's plain MLP, saved tensors with the probe's own saved_tensors_hooks against the blocks applied
plainly, and per-block recomputation from the order in which the probe's blocks run during backward;
a block run under saved-tensor hooks of the student's own, or run again in backward by anything but
torch.utils.checkpoint, is named (the probe's tallies ``block_own_hooks``, ``block_rerun_outside``).
"""

from __future__ import annotations

from autograder.core.i18n import label
from autograder.core.suite import Ctx, Fail, Suite
from autograder.exercises.ex12_checkpointing.public import (
    check_torch,
    mlp_case,
    residual_case,
    saved_count_case,
    torch_case,
)
from autograder.exercises.ex12_checkpointing.public import suite as _public

suite = Suite("ex12_checkpointing", checks=list(_public.checks))


def _off(counts: tuple[int, int], n: int) -> int:
    """Of the ``(smaller, larger)`` counts of a block's runs (:meth:`Ctx.counts`), the one that is not ``n``
    (the larger when neither is): the number the message shows."""
    return counts[1] if counts[1] != n else counts[0]


@suite.check(points=1)
def ckpt_grads_jit(ctx: Ctx) -> None:
    """Under jax.jit, the logits and the gradients of a squared error match the reference (2 and 3 layers)."""
    for layers in (2, 3):
        case = mlp_case(ctx.rng, layers)
        got, want = ctx.both("grads", call=label("ex12.call.jit_grad"), **case)
        ctx.assert_close(got["jit"], want["jit"], kind="forward", what=label("ex12.what.jit_logits", n=layers),
                         framework="jax")
        ctx.assert_close(got["grads"], want["grads"], kind="step", what=label("ex12.what.grads", n=layers),
                         framework="jax")


@suite.check(points=1)
def ckpt_saves_fewer(ctx: Ctx) -> None:
    """For 3 and 5 layers, JAX saves fewer residuals for the checkpointed forward than for the plain one."""
    for layers in (3, 5):
        case = mlp_case(ctx.rng, layers)
        got = ctx.student("residuals", call="print_saved_residuals(checkpointed_mlp_forward, params, x)",
                          params=case["params"], x=case["x"])
        if got["student"] >= got["plain"]:
            raise Fail("EX12_NOT_FEWER_RESIDUALS", layers=layers, got=got["student"], plain=got["plain"])


@suite.check(points=0.5)
def residual_count_many(ctx: Ctx) -> None:
    """saved_residual_count on a function of two arrays and on MLPs checkpointed per layer and by a policy."""
    for fn in ("two_args", "mlp_ckpt", "mlp_dots"):
        residual_case(ctx, fn)


@suite.check(points=1.5)
def torch_ckpt_recomputes_each_block(ctx: Ctx) -> None:
    """4 blocks, input requiring grad: each block runs once forward, and once again in the backward pass,
    last block first (per-block recomputation); the output and all gradients match."""
    case = torch_case(ctx.rng, 4, x_grad=True)
    got, want = ctx.both("torch", call="torch_checkpointed(blocks, x)", **case)
    n = len(case["weights"]) // 2
    # the probe's logs live in the worker (a write can rewrite them); the grader's own counts of the blocks'
    # tallies cannot be rewound: both must say n runs forward and n recomputations
    forward = ctx.counts("block_forward", len(got["forward_log"]))
    recomputed = ctx.counts("block_recompute", len(got["backward_log"]))
    if got["forward_log"] != list(range(n)) or forward != (n, n):
        raise Fail("EX12_TORCH_FORWARD_ORDER", calls=_off(forward, n), blocks=n)
    back = got["backward_log"]
    if not back or not recomputed[0]:
        raise Fail("EX12_TORCH_NO_RECOMPUTE")
    # a block run again by a hook of the student's during backward is not a recomputation (nothing was freed)
    if ctx.counted("block_rerun_outside"):
        raise Fail("EX12_TORCH_RERUN_OUTSIDE")
    if back == list(range(n)):
        raise Fail("EX12_TORCH_WHOLE_CHECKPOINT")
    if back != list(range(n))[::-1] or recomputed != (n, n):
        raise Fail("EX12_TORCH_RECOMPUTE_ORDER", got=_off(recomputed, n), blocks=n)
    check_torch(ctx, got, want, 4)
    ctx.assert_close(got["x_grad"], want["x_grad"], kind="step", what=label("ex12.what.x_grad"))


@suite.check(points=0.5)
def torch_ckpt_saves_fewer(ctx: Ctx) -> None:
    """The probe's saved_tensors_hooks count fewer tensors saved by torch_checkpointed than by the plain blocks."""
    case = torch_case(ctx.rng, 3, x_grad=False)
    got = ctx.student("torch", call="torch_checkpointed(blocks, x)", **case)
    plain = ctx.reference("torch_plain_saved", weights=case["weights"], x=case["x"], x_grad=False)
    # the probe's count lives in the worker (a raw memory write can rewind it); the grader's own count of the
    # saved tensors' tallies cannot be: the larger one is judged (the two differ only when one was forged)
    _, saved = ctx.counts("saved", got["saved"])
    # saved-tensor hooks of the student's own around a block hide what autograd keeps from the probe's count
    if ctx.counted("block_own_hooks"):
        raise Fail("EX12_TORCH_OWN_HOOKS")
    if saved >= plain:
        raise Fail("EX12_TORCH_NOT_FEWER", got=saved, plain=plain)


@suite.check(points=0.5)
def torch_saved_count_many(ctx: Ctx) -> None:
    """torch_saved_tensor_count on a chain, two blocks, a checkpointed block and inputs without grad; the
    graph still runs backward afterwards (the hooks hand the tensors back)."""
    for fn in ("chain", "blocks", "checkpointed", "no_grad_inputs"):
        pair = saved_count_case(ctx, fn)
        if "grad" in pair["want"]:
            ctx.assert_close(pair["got"].get("grad"), pair["want"]["grad"], kind="step",
                             what=label("ex12.what.grad_after", fn=fn))
