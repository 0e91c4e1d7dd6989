# MUTANT: the step returns the opt_state it was given (new_opt_state computed, opt_state returned): every first update is right, the optimizer's state (momentum, Adam's moments) never moves
# FAILS: train_step_sgd, train_step_adam, learns_digits, train_step_any_model_and_classes, train_step_optimizers_needing_params
# CODE train_step_sgd: EX07_STATE_NOT_CARRIED
# CODE train_step_adam: EX07_STATE_NOT_CARRIED
# CODE train_step_any_model_and_classes: EX07_STATE_NOT_CARRIED
# CODE train_step_optimizers_needing_params: EX07_STATE_NOT_CARRIED
# CODE learns_digits: EX07_NOT_LEARNING
"""Exercise 07 — a CNN in Flax: channels-last, and a compiled train step (JAX: the trace).

Build the digits CNN of exercise 03 again, this time as a Flax `linen`
module, and write a train step that `jax.jit` compiles once.

Two differences from PyTorch to keep in mind:

- **Channels-last.** PyTorch images are `(N, C, H, W)` and `Conv2d` kernels
  are `(out, in, kH, kW)` ("OIHW"). Flax images are `(N, H, W, C)` and
  `nn.Conv` kernels are `(kH, kW, in, out)` ("HWIO"). Data laid out for
  PyTorch must be transposed with `to_nhwc` before it enters the model —
  a `reshape` gives the right shape with scrambled pixels. Flax's pooling
  stride also defaults to 1 (PyTorch's to the window): pass `strides`.
- **Tape vs trace.** A PyTorch step runs eagerly and records a tape on
  every call. A jitted JAX step is *traced* once per input shape: Python
  runs your function with abstract values, XLA compiles the result, and
  later calls with the same shapes reuse the compiled code without running
  your Python again. So `make_flax_train_step` must build the jitted
  function once and return it (not jit inside each call, not skip jit).

What to build:
    - `FlaxCNN(num_classes=10)`: with `@nn.compact`, in this order:
      `nn.Conv(16, (3, 3), padding="SAME")`, relu,
      `nn.avg_pool(x, (2, 2), strides=(2, 2))`,
      `nn.Conv(32, (3, 3), padding="SAME")`, relu, the same avg_pool,
      flatten to `(N, 128)`, `nn.Dense(64)`, relu, `nn.Dense(num_classes)`.
      Input `(N, 8, 8, 1)`, output logits `(N, num_classes)`. The automatic
      names give `params["Conv_0"]["kernel"]` of shape `(3, 3, 1, 16)`,
      `Conv_1` `(3, 3, 16, 32)`, `Dense_0` `(128, 64)`, `Dense_1`
      `(64, num_classes)`, each with a `bias`.
    - `to_nhwc(x)`: `(N, C, H, W)` -> `(N, H, W, C)`; takes a numpy or JAX
      array, returns a JAX array.
    - `make_flax_train_step(model, optimizer)`: returns a jitted
      `step(params, opt_state, x, y) -> (params, opt_state, loss)` where
      `params` is the whole dict that `model.init` returns (`{"params": ...}`),
      `x` is `(N, 8, 8, 1)`, `y` is `(N,)` integer labels, and `loss` is the mean of
      `optax.softmax_cross_entropy_with_integer_labels(model.apply(params, x), y)`
      at the params *before* the update. Works with any optax optimizer.

Example:
    >>> model = FlaxCNN(num_classes=10)
    >>> variables = model.init(jax.random.key(0), jnp.zeros((1, 8, 8, 1)))
    >>> variables["params"]["Conv_0"]["kernel"].shape
    (3, 3, 1, 16)
    >>> to_nhwc(np.zeros((5, 1, 8, 8), np.float32)).shape
    (5, 8, 8, 1)
    >>> optimizer = optax.adam(1e-3)
    >>> step = make_flax_train_step(model, optimizer)
    >>> x, y = jnp.zeros((5, 8, 8, 1)), jnp.zeros(5, jnp.int32)
    >>> variables, opt_state, loss = step(variables, optimizer.init(variables), x, y)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax


class FlaxCNN(nn.Module):
    """The digits CNN, channels-last: `(N, 8, 8, 1)` images -> `(N, num_classes)` logits.

    Attributes:
        num_classes: number of output logits.
    """

    num_classes: int = 10

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        """Maps `(N, 8, 8, 1)` images to `(N, num_classes)` logits."""
        x = nn.relu(nn.Conv(16, (3, 3), padding="SAME")(x))
        x = nn.avg_pool(x, (2, 2), strides=(2, 2))
        x = nn.relu(nn.Conv(32, (3, 3), padding="SAME")(x))
        x = nn.avg_pool(x, (2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.relu(nn.Dense(64)(x))
        return nn.Dense(self.num_classes)(x)


def to_nhwc(x: np.ndarray | jax.Array) -> jax.Array:
    """Channels-first `(N, C, H, W)` -> channels-last `(N, H, W, C)`, as a JAX array.

    Args:
        x: images laid out for PyTorch, numpy or JAX.

    Returns:
        The same pixels as a `jax.Array` of shape `(N, H, W, C)`.
    """
    return jnp.transpose(jnp.asarray(x), (0, 2, 3, 1))


def make_flax_train_step(model: nn.Module, optimizer: optax.GradientTransformation) -> Callable[..., Any]:
    """Builds a jitted train step for a Flax classifier.

    Args:
        model: a Flax module mapping `(N, ...)` inputs to `(N, num_classes)` logits.
        optimizer: any optax optimizer, also one whose update needs the params
            (`optax.adamw`, `optax.lamb`, `optax.add_decayed_weights`).

    Returns:
        `step(params, opt_state, x, y) -> (params, opt_state, loss)`, compiled
        with `jax.jit`: `params` is the dict `model.init` returns, `y` holds
        integer labels `(N,)`, and `loss` (a scalar) is the mean softmax
        cross-entropy at the params before the update.
    """
    def loss_fn(params: Any, x: jax.Array, y: jax.Array) -> jax.Array:
        logits = model.apply(params, x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    @jax.jit
    def step(params: Any, opt_state: Any, x: jax.Array, y: jax.Array) -> tuple[Any, Any, jax.Array]:
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, new_opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return step
