# MUTANT: the step returns the opt_state it was given (a typo: new_opt_state computed, opt_state returned): right for plain sgd (no state) and for every first step, wrong from the second update of any optimizer with a state (momentum, adam...)
# FAILS: step_any_optimizer, fit_first_losses, fit_trains_moons, step_optimizers_needing_params
# CODE step_any_optimizer: EX05_STATE_NOT_CARRIED
# CODE step_optimizers_needing_params: EX05_STATE_NOT_CARRIED
# CODE fit_first_losses: EX05_FIT_STATE_NOT_CARRIED
# CODE fit_trains_moons: EX05_FIT_STATE_NOT_CARRIED
"""Exercise 05 — compile the step (JAX: trace once, run many times).

Write the training step of the JAX MLP (exercise 04) and compile it with
`jax.jit`, then use it in a training loop.

Tape versus trace. A PyTorch step (exercise 02) runs your Python on every
call: each operation executes eagerly and is recorded on the autograd tape,
`backward()` replays the tape, and `optimizer.step()` changes the parameters
in place. A jitted JAX step runs your Python *once per input shape*: the
first call traces it with abstract tracers into a jaxpr, XLA compiles that
into one fused program, and every later call with the same shapes and dtypes
runs the compiled program without touching your Python. Consequences:
    - build the jitted function once (in `make_train_step`) and reuse it;
      `jax.jit(...)` of a new function inside `step` re-traces and re-compiles
      on every call;
    - a Python side effect (a print, a counter) inside the step runs at trace
      time only — the hidden tests count traces this way;
    - a new batch shape triggers exactly one new trace; do not mark changing
      values as static arguments;
    - nothing is updated in place: the optimizer state is an explicit value
      (`optimizer.init(params)`), and the step returns new params and state.

What to build:
    - `make_train_step(loss_fn, optimizer)` returns a jitted
      `step(params, opt_state, x, y) -> (params, opt_state, loss)` where
      `loss = loss_fn(params, x, y)` at the *old* params (use
      `jax.value_and_grad`), then `optimizer.update(grads, opt_state, params)`
      with those gradients as they are (no clipping: an optimizer that clips
      is the caller's to pass in) and `optax.apply_updates`. It must work
      with any optax optimizer (sgd,
      momentum, adam, ...: use the one you are given), compile once for
      repeated calls with the same shapes, and not modify its inputs
      (no in-place updates of the params dict, no `donate_argnums`).
    - `fit(params, x, y, *, steps, learning_rate, loss_fn)`: `optax.adam(learning_rate)`,
      one step from `make_train_step`, called `steps` times on the full
      `(x, y)`; returns `(final_params, losses)` with `losses` a list of
      `steps` Python floats (the loss before each update).
      On make_moons, `fit(init_params([2, 32, 32, 1], key), x, y, steps=300,
      learning_rate=0.01, loss_fn=bce_loss)` reaches >= 0.9 validation accuracy.
    - This module must not import your exercise 04: the loss function comes in
      as an argument.

Example:
    >>> step = make_train_step(bce_loss, optax.sgd(0.1))
    >>> opt_state = optax.sgd(0.1).init(params)
    >>> params, opt_state, loss = step(params, opt_state, x, y)   # traces + compiles
    >>> params, opt_state, loss = step(params, opt_state, x, y)   # runs the compiled program
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import optax


def make_train_step(loss_fn: Callable[[dict, jax.Array, jax.Array], jax.Array],
                    optimizer: optax.GradientTransformation) -> Callable:
    """A jitted training step for ``loss_fn`` and ``optimizer``.

    Args:
        loss_fn: ``loss_fn(params, x, y) -> scalar``, differentiable in ``params``.
        optimizer: any optax gradient transformation, also one whose update needs the
            params (``optax.adamw``, ``optax.lamb``, ``optax.add_decayed_weights``).

    Returns:
        ``step(params, opt_state, x, y) -> (new_params, new_opt_state, loss)``,
        compiled with ``jax.jit``; ``loss`` is the loss at the old ``params``.
    """
    @jax.jit
    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, new_opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return step


def fit(params: dict, x: jax.Array, y: jax.Array, *, steps: int, learning_rate: float,
        loss_fn: Callable[[dict, jax.Array, jax.Array], jax.Array]) -> tuple[dict, list[float]]:
    """Full-batch Adam training with a compiled step.

    Args:
        params: the initial parameter pytree.
        x: inputs, ``(N, d)``.
        y: labels, ``(N,)``.
        steps: number of steps.
        learning_rate: Adam's learning rate.
        loss_fn: ``loss_fn(params, x, y) -> scalar``.

    Returns:
        ``(final_params, losses)``: the trained pytree and ``steps`` Python floats.
    """
    optimizer = optax.adam(learning_rate)
    opt_state = optimizer.init(params)
    step = make_train_step(loss_fn, optimizer)
    losses = []
    for _ in range(steps):
        params, opt_state, loss = step(params, opt_state, x, y)
        losses.append(float(loss))
    return params, losses
