"""ex05: another valid way to write the exercise gets full marks (no false fails on style)."""

from __future__ import annotations

from conftest import make_submission

EX = "ex05_jit_train_step"

# jax.jit applied after the definition, loss and grad computed separately (the loss is
# traced twice per compile), tree.map instead of apply_updates, floats converted at the end.
VARIANT = '''
import jax
import optax


def make_train_step(loss_fn, optimizer):
    def step(params, opt_state, x, y):
        loss = loss_fn(params, x, y)
        grads = jax.grad(loss_fn)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = jax.tree.map(lambda p, u: p + u, params, updates)
        return params, opt_state, loss

    return jax.jit(step)


def fit(params, x, y, *, steps, learning_rate, loss_fn):
    opt = optax.adam(learning_rate)
    state = opt.init(params)
    step = make_train_step(loss_fn, opt)
    losses = []
    for _ in range(steps):
        params, state, loss = step(params, state, x, y)
        losses.append(loss)
    return params, [float(v) for v in losses]
'''


def test_valid_variant_gets_full_marks(run, tmp_path):
    sub = make_submission(tmp_path / "sub", {EX: VARIANT}, only=[EX])
    res = run.grade([str(sub)], only=[EX])[0]["exercises"][EX]
    failed = {t["name"]: t["message"] for t in res["tests"] if not t["passed"]}
    assert not failed, failed
