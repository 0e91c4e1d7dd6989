"""Ejercicio 08 — grad de grad, `lax.cond`, jaxprs y claves explícitas (JAX: la traza).

PyTorch graba una cinta *mientras tu código se ejecuta*: los `if` de Python, los
bucles y el generador aleatorio global simplemente ocurren, y la cinta recuerda
las operaciones que se ejecutaron. JAX, en cambio, *traza* tu función una vez
en un jaxpr (un pequeño programa de ecuaciones primitivas) y transforma o
compila ese programa. Cuatro consecuencias, una función cada una:

Qué construir:
    - `nth_derivative(f, n)`: `f` lleva un escalar a un escalar; devuelve la
      función que calcula su derivada n-ésima anidando `jax.grad` n veces
      (`n = 0` devuelve la propia `f`). `jax.grad` devuelve una función, así
      que el resultado se compone: debe funcionar también bajo `jax.jit` (nada
      de `float()` ni de numpy dentro).
    - `coin_net(x, key, w1, w2)`: sortea `branch = jax.random.bernoulli(key)`
      (p = 0.5, exactamente con la clave que recibes); devuelve
      `relu(x @ w1)` si `branch` y si no `sigmoid(x @ w2)`, usando
      `jax.lax.cond`. Bajo `jax.jit` la clave es un trazador, así que `branch`
      no tiene valor de Python: un `if branch:` de Python lanza
      TracerBoolConversionError. `jnp.where(branch, a, b)` funciona pero
      calcula las dos ramas; `lax.cond` pone un `cond` en el jaxpr.
      `x`: `(N, d)`; `w1`, `w2`: `(d, h)`; salida `(N, h)`.
    - `count_ops(f, *args)`: el número de ecuaciones del jaxpr de nivel
      superior de `jax.make_jaxpr(f)(*args)` (su `.jaxpr.eqns`). Un `cond`, un
      `scan` o una llamada a una función compilada con jit es UNA ecuación, por
      grande que sea el sub-jaxpr que contiene.
    - `dropout(x, rate, key)`: dropout invertido con una clave PRNG explícita:
      cada elemento se conserva, por separado, con probabilidad `1 - rate` y se escala por
      `1 / (1 - rate)`, y si no se pone a 0 (`0 <= rate < 1`). Misma clave ->
      misma salida; `rate = 0` devuelve `x` sin cambios. En JAX no hay estado
      aleatorio global: no uses `np.random` (el `nn.Dropout` de PyTorch usa el
      generador global de torch; aquí la clave es el estado).

Ejemplo:
    >>> nth_derivative(jnp.sin, 2)(0.5)         # -sin(0.5)
    Array(-0.47942555, dtype=float32, weak_type=True)
    >>> count_ops(lambda x: jnp.sin(x) * 2.0, 1.0)
    2
    >>> dropout(jnp.ones(4), 0.5, jax.random.PRNGKey(0))   # entries are 0.0 or 2.0
"""

# Spanish instructions of ex08_jax_transforms: the module docstring above is the student's instructions (the
# solution's module docstring in Spanish: same layout, code identifiers, shapes and `>>>` examples
# unchanged); DOCSTRINGS holds each def/class docstring of the stub, by qualified name, without
# indentation (autograder.student.instructions_es.localize_stub indents them). Terms: docs/glossary.md.

DOCSTRINGS: dict[str, str] = {
    "nth_derivative": """La derivada n-ésima de una función escalar, anidando `jax.grad`.

Args:
    f: una función de un escalar a un escalar.
    n: el orden (n >= 0); 0 devuelve `f`.

Returns:
    Una función de un escalar, compilable con jit.""",
    "coin_net": """`relu(x @ w1)` si `jax.random.bernoulli(key)` y si no `sigmoid(x @ w2)`, con `jax.lax.cond`.

Args:
    x: entradas, forma `(N, d)`.
    key: una clave PRNG.
    w1: pesos de la rama ReLU, forma `(d, h)`.
    w2: pesos de la rama sigmoide, forma `(d, h)`.

Returns:
    Forma `(N, h)`.""",
    "count_ops": """Número de ecuaciones del jaxpr de nivel superior de `f` trazada sobre `args`.

Args:
    f: una función que JAX puede trazar.
    *args: argumentos de ejemplo.

Returns:
    `len(jax.make_jaxpr(f)(*args).jaxpr.eqns)`, un int de Python.""",
    "dropout": """Dropout invertido con una clave PRNG explícita.

Args:
    x: cualquier array (float32).
    rate: probabilidad de descartar un elemento, `0 <= rate < 1`.
    key: una clave PRNG.

Returns:
    Misma forma y dtype que `x`: los elementos conservados escalados por `1 / (1 - rate)`, los descartados a 0.""",
}

# Fingerprint of the English docstrings these translations follow: tests/test_i18n.py fails when the
# English changes (`python -m autograder.student.instructions_es` prints the current ones).
SOURCE_SHA = "50eb54225167"
