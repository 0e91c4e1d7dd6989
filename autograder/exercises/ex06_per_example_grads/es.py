"""Ejercicio 06 — gradientes por ejemplo con `vmap` (JAX: la traza; PyTorch: torch.func).

`jax.grad(loss_fn)(params, x, y)` da el gradiente de la pérdida del *lote*. La
privacidad diferencial (DP-SGD) y muchos diagnósticos necesitan en cambio un
gradiente *por ejemplo*. En JAX escribes el gradiente de UN ejemplo y dejas que
`jax.vmap` lo convierta en una función por lotes: vmap es una transformación
de la traza, así que el jaxpr de tu función tiene el mismo tamaño para 2
ejemplos que para 2000 — no se ejecuta ningún bucle, el lote es solo un eje
inicial en cada array. Un bucle `for` de Python da los mismos números pero
despliega N copias en la traza; `jax.lax.map` conserva una copia pero es un
`scan` que procesa los ejemplos uno tras otro. Ambos pierden la prueba de
vectorización.

La cinta de PyTorch graba una pasada hacia atrás por cada llamada a
`.backward()`, así que el bucle ingenuo por ejemplo llama a `.backward()` N
veces. `torch.func` trae el estilo de JAX a PyTorch:
`functional_call(model, params, (x,))` ejecuta el modelo como función pura de
un dict de parámetros, `torch.func.grad` lo deriva sin tocar `.grad`, y
`torch.func.vmap` lo vectoriza sobre el lote.

Qué construir:
    - `per_example_grads(loss_fn, params, x, y)`: `loss_fn(params, xb, yb)`
      es una pérdida escalar de un lote (p. ej. `bce_loss` del ejercicio 04).
      Devuelve un pytree con la forma de `params` cuyas hojas tienen un eje
      inicial N, donde la entrada i es
      `jax.grad(loss_fn)(params, x[i:i+1], y[i:i+1])`. Usa `jax.vmap` (ni bucle
      de Python, ni `lax.map`/`scan`/`fori_loop`); mantenla pura: sin globales,
      sin caché entre llamadas, sin modificar `params`; también debe funcionar
      dentro de `jax.jit`.
    - `clip_and_average(per_example, max_norm)`: gradientes por ejemplo como
      los devuelve la función anterior (cualquier pytree, hojas `(N, ...)`).
      Para cada ejemplo i, `norm_i` es la norma L2 global sobre TODAS sus
      hojas; escala el ejemplo i por `1 / max(1, norm_i / max_norm)` (así las
      normas por encima de `max_norm` se reducen a `max_norm` y las menores no
      cambian); devuelve la media sobre los ejemplos, un pytree con la forma
      del gradiente de un ejemplo.
    - `torch_per_example_grads(model, loss_fn, x, y)`: `loss_fn(out, target)`
      es una pérdida escalar de un lote. Devuelve
      `{name: tensor de forma (N, *p.shape)}` para
      `name, p in model.named_parameters()`, con la entrada i igual al
      gradiente de `loss_fn(model(x[i:i+1]), y[i:i+1])` (cada ejemplo conserva
      su eje de lote: el modelo puede aceptar solo lotes). Usa
      `torch.func.functional_call`, `torch.func.grad` y `torch.func.vmap` (el
      modelo se ejecuta una vez sobre el lote, no N veces). Deja intactos los
      parámetros del modelo y su `.grad`.

Ejemplo:
    >>> g = per_example_grads(bce_loss, params, x, y)   # x: (N, d)
    >>> [w.shape for w in g["W"]]
    [(N, 2, 32), (N, 32, 32), (N, 32, 1)]
    >>> clip_and_average(g, 1.0)["W"][0].shape
    (2, 32)
"""

# Spanish instructions of ex06_per_example_grads: the module docstring above is the student's instructions (the
# solution's module docstring in Spanish: same layout, code identifiers, shapes and `>>>` examples
# unchanged); DOCSTRINGS holds each def/class docstring of the stub, by qualified name, without
# indentation (autograder.student.instructions_es.localize_stub indents them). Terms: docs/glossary.md.

DOCSTRINGS: dict[str, str] = {
    "per_example_grads": """Gradientes de `loss_fn` para cada ejemplo por separado, vectorizados con `jax.vmap`.

Args:
    loss_fn: `loss_fn(params, xb, yb) -> scalar`, xb de forma `(B, ...)`.
    params: un pytree de arrays.
    x: entradas, forma `(N, ...)`.
    y: objetivos, forma `(N, ...)`.

Returns:
    Un pytree con la forma de `params`; cada hoja tiene forma `(N, *leaf.shape)`.""",
    "clip_and_average": """Recorta el gradiente de cada ejemplo a la norma L2 global `max_norm` y después promedia.

Args:
    per_example: un pytree cuyas hojas tienen forma `(N, ...)`.
    max_norm: la mayor norma permitida por ejemplo (> 0).

Returns:
    Un pytree con la forma de un ejemplo: la media sobre N de los gradientes recortados.""",
    "torch_per_example_grads": """Gradientes por ejemplo de un modelo de torch con `torch.func`.

Args:
    model: cualquier `nn.Module` (puede tener también buffers); sus parámetros y `.grad` quedan intactos.
    loss_fn: `loss_fn(out, target) -> scalar` sobre un lote.
    x: entradas, forma `(N, ...)`.
    y: objetivos, forma `(N, ...)`.

Returns:
    `{name: (N, *param.shape)}` para cada nombre de `model.named_parameters()`.""",
}

# Fingerprint of the English docstrings these translations follow: tests/test_i18n.py fails when the
# English changes (`python -m autograder.student.instructions_es` prints the current ones).
SOURCE_SHA = "e30bce49bf89"
