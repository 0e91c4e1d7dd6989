"""Hints of ex08_jax_transforms: tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code (tests/test_i18n.py checks it)."""

HINTS: dict[str, list[str]] = {
    "en": [
        "JAX transformations take a function and return a function, so they compose: the derivative of a "
        "derivative is `jax.grad` applied again. And the jaxpr is the trace: what `jax.make_jaxpr` prints is "
        "exactly what `jax.jit` compiles.",
        "Under `jax.jit` the key and the branch choice are tracers: a Python `if` on them fails, and "
        "`jnp.where` computes both branches. A control-flow primitive picks one branch at run time. For "
        "`count_ops`, the jaxpr holds a list of equations; count only the top level. For `dropout`, the same "
        "key must give the same mask.",
        "`jax.lax.cond(pred, true_fn, false_fn, *operands)` with the predicate from `jax.random.bernoulli`. "
        "`jax.make_jaxpr(f)(*args)` returns a ClosedJaxpr: its `.jaxpr.eqns` are the equations. In `dropout`, "
        "draw the keep-mask with `jax.random.bernoulli` at probability `1 - rate` and the shape of x, and "
        "divide what you keep by `1 - rate`; `rate = 0` must return x unchanged.",
    ],
    "es": [
        "Las transformaciones de JAX reciben una función y devuelven una función, así que se componen: la "
        "derivada de una derivada es `jax.grad` aplicada otra vez. Y el jaxpr es la traza: lo que imprime "
        "`jax.make_jaxpr` es exactamente lo que compila `jax.jit`.",
        "Bajo `jax.jit` la clave PRNG y la elección de rama son trazadores: un `if` de Python sobre ellos "
        "falla, y `jnp.where` calcula las dos ramas. Una primitiva de control de flujo elige una rama en "
        "tiempo de ejecución. En `count_ops`, el jaxpr guarda una lista de ecuaciones; cuenta solo el nivel "
        "superior. En `dropout`, la misma clave debe dar la misma máscara.",
        "`jax.lax.cond(pred, true_fn, false_fn, *operands)` con el predicado de `jax.random.bernoulli`. "
        "`jax.make_jaxpr(f)(*args)` devuelve un ClosedJaxpr: su `.jaxpr.eqns` son las ecuaciones. En "
        "`dropout`, sortea la máscara de elementos conservados con `jax.random.bernoulli` con probabilidad "
        "`1 - rate` y la forma de x, y divide lo que conservas entre `1 - rate`; `rate = 0` debe devolver x "
        "sin cambios.",
    ],
}
