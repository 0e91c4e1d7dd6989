"""Hints of ex05_jit_train_step: tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code (tests/test_i18n.py checks it)."""

HINTS: dict[str, list[str]] = {
    "en": [
        "A JAX train step is a pure function: it receives the params and the optimizer state and returns new "
        "ones, plus the loss. `jax.jit` traces the Python function once per input shape and reuses the "
        "compiled code afterwards, so the jitted function must be built once, in `make_train_step`, and "
        "returned.",
        "One transformation gives you both the loss and the gradients at the old params. The optax optimizer "
        "turns the gradients into updates and a new state; another optax function adds the updates to the "
        "params. Nothing is modified in place: you return the new values.",
        "`jax.value_and_grad(loss_fn)`, then the optimizer's `update(grads, opt_state, params)`, then "
        "`optax.apply_updates`. Wrap the inner step function with `jax.jit` inside `make_train_step`, never "
        "inside a call of the step. In `fit`: `optax.adam(learning_rate)`, its `init(params)`, and `float()` "
        "on each loss as you store it.",
    ],
    "es": [
        "Un paso de entrenamiento en JAX es una función pura: recibe los parámetros y el estado del "
        "optimizador y devuelve otros nuevos, además de la pérdida. `jax.jit` traza la función de Python una "
        "vez por forma de entrada y después reutiliza el código compilado, así que la función compilada se "
        "construye una sola vez, en `make_train_step`, y se devuelve.",
        "Una sola transformación te da a la vez la pérdida y los gradientes en los parámetros antiguos. El "
        "optimizador de optax convierte los gradientes en actualizaciones y un estado nuevo; otra función "
        "de optax suma las actualizaciones a los parámetros. Nada se modifica en el sitio: devuelves los "
        "valores nuevos.",
        "`jax.value_and_grad(loss_fn)`, luego el `update(grads, opt_state, params)` del optimizador y luego "
        "`optax.apply_updates`. Envuelve la función interna del paso con `jax.jit` dentro de "
        "`make_train_step`, nunca dentro de una llamada al paso. En `fit`: `optax.adam(learning_rate)`, su "
        "`init(params)` y `float()` sobre cada pérdida al guardarla.",
    ],
}
