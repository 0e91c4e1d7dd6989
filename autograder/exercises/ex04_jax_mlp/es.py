"""Ejercicio 04 — funciones puras y pytrees (JAX: la traza).

Construye otra vez el MLP de make_moons, ahora en JAX puro. Aquí no hay ningún
objeto módulo: los parámetros son un pytree explícito, un simple dict de listas
de arrays,

    params = {"W": [W0, W1, ...], "b": [b0, b1, ...]},   W[i]: (d_i, d_{i+1}),  b[i]: (d_{i+1},)

y el modelo es una *función pura* `mlp_forward(params, x)`: su salida depende
solo de sus argumentos, y no cambia nada fuera de sí misma.

¿Por qué pura? PyTorch (ejercicio 01) graba una *cinta* mientras tu código de
Python se ejecuta sobre números reales, así que vale cualquier Python. JAX, en
cambio, *traza* tu función: `jax.jit`, `jax.grad` y `jax.vmap` la llaman una vez
con trazadores abstractos (forma y dtype, sin valores), graban las operaciones
en un jaxpr y después compilan o transforman ese registro. Así que dentro de
estas funciones:
    - usa `jax.numpy` (`jnp`) y `jax.nn`, nunca `numpy` sobre las entradas
      (`np.asarray(tracer)` falla bajo jit);
    - nada de `if`/`float()` de Python sobre valores de arrays;
    - nunca modifiques el dict params ni sus listas (nada de `.pop()` ni de
      asignación de elementos), y no leas ni escribas variables globales: un
      efecto secundario se ejecuta una vez, al trazar, no en cada llamada;
    - la aleatoriedad sale de una clave PRNG explícita: divídela, una subclave
      por capa.

Qué construir:
    - `init_params(layer_dims, key)`: `W[i]` de forma `(d_i, d_{i+1})` sorteada
      He-normal (media 0, desviación típica `sqrt(2 / d_i)`; una normal simple
      escalada por esa desviación, o `jax.nn.initializers.he_normal()`),
      float32; `b[i]` ceros; una subclave distinta por capa
      (`jax.random.split`); la misma clave da los mismos parámetros. Debe
      funcionar con `jax.random.PRNGKey(0)` y con la clave tipada más nueva
      `jax.random.key(0)` (no hagas aritmética con claves).
    - `mlp_forward(params, x)`: `(N, d_0)` -> `(N, d_last)` logits, ReLU entre
      capas, ninguna tras la última.
    - `bce_loss(params, x, y)`: `y` es `(N,)` de floats 0/1; la media de la
      entropía cruzada binaria estable `max(z, 0) - z*y + log(1 + exp(-|z|))`
      sobre `z = mlp_forward(params, x)[:, 0]`. Debe seguir siendo finita y
      correcta para |z| hasta 1e4 (recortar probabilidades no basta).
    - `accuracy(params, x, y)`: la fracción de filas donde
      `(z >= 0) == (y == 1)`, devuelta como un `float` de Python.

Ejemplo:
    >>> params = init_params([2, 32, 32, 1], jax.random.PRNGKey(0))
    >>> [w.shape for w in params["W"]]
    [(2, 32), (32, 32), (32, 1)]
    >>> mlp_forward(params, jnp.zeros((5, 2))).shape
    (5, 1)
"""

# Spanish instructions of ex04_jax_mlp: the module docstring above is the student's instructions (the
# solution's module docstring in Spanish: same layout, code identifiers, shapes and `>>>` examples
# unchanged); DOCSTRINGS holds each def/class docstring of the stub, by qualified name, without
# indentation (autograder.student.instructions_es.localize_stub indents them). Terms: docs/glossary.md.

DOCSTRINGS: dict[str, str] = {
    "init_params": """Pesos He-normal y sesgos nulos para un MLP.

Args:
    layer_dims: `[d_0, d_1, ..., d_L]`, primero el ancho de entrada, al final el de salida.
    key: una clave PRNG (`jax.random.PRNGKey(s)` o `jax.random.key(s)`).

Returns:
    `{"W": [W0, ...], "b": [b0, ...]}` con `W[i]: (d_i, d_{i+1})` y
    `b[i]: (d_{i+1},)`, todos float32.""",
    "mlp_forward": """Logits del MLP.

Args:
    params: `{"W": [...], "b": [...]}` como los crea `init_params`.
    x: entradas, `(N, d_0)`.

Returns:
    Logits, `(N, d_L)`.""",
    "bce_loss": """Entropía cruzada binaria media sobre el primer logit, calculada de forma estable.

Args:
    params: los parámetros del MLP.
    x: entradas, `(N, d_0)`.
    y: etiquetas float 0/1, `(N,)`.

Returns:
    Un `jax.Array` escalar.""",
    "accuracy": """Fracción de filas donde el signo del primer logit coincide con la etiqueta.

Args:
    params: los parámetros del MLP.
    x: entradas, `(N, d_0)`.
    y: etiquetas 0/1, `(N,)`.

Returns:
    Un float de Python en [0, 1].""",
}

# Fingerprint of the English docstrings these translations follow: tests/test_i18n.py fails when the
# English changes (`python -m autograder.student.instructions_es` prints the current ones).
SOURCE_SHA = "bae220a20ec9"
