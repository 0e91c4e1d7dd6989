"""Ejercicio 05 — compila el paso (JAX: traza una vez, ejecuta muchas).

Escribe el paso de entrenamiento del MLP de JAX (ejercicio 04) y compílalo con
`jax.jit`; después úsalo en un bucle de entrenamiento.

Cinta frente a traza. Un paso de PyTorch (ejercicio 02) ejecuta tu Python en
cada llamada: cada operación se ejecuta al momento y se graba en la cinta de
autograd, `backward()` recorre la cinta hacia atrás y `optimizer.step()`
cambia los parámetros en el sitio. Un paso de JAX compilado con jit ejecuta tu
Python *una vez por forma de entrada*: la primera llamada lo traza con
trazadores abstractos en un jaxpr, XLA lo compila en un único programa
fusionado, y cada llamada posterior con las mismas formas y dtypes ejecuta el
programa compilado sin tocar tu Python. Consecuencias:
    - construye la función compilada una sola vez (en `make_train_step`) y
      reutilízala; un `jax.jit(...)` de una función nueva dentro de `step`
      vuelve a trazar y a compilar en cada llamada;
    - un efecto secundario de Python (un print, un contador) dentro del paso se
      ejecuta solo al trazar — las pruebas ocultas cuentan las trazas así;
    - una forma de lote nueva provoca exactamente una traza nueva; no marques
      como argumentos estáticos valores que cambian;
    - nada se actualiza en el sitio: el estado del optimizador es un valor
      explícito (`optimizer.init(params)`), y el paso devuelve parámetros y
      estado nuevos.

Qué construir:
    - `make_train_step(loss_fn, optimizer)` devuelve un
      `step(params, opt_state, x, y) -> (params, opt_state, loss)` compilado con
      jit, donde `loss = loss_fn(params, x, y)` en los parámetros *antiguos*
      (usa `jax.value_and_grad`), seguido de
      `optimizer.update(grads, opt_state, params)` con esos gradientes tal cual
      (sin recortarlos: un optimizador que recorta lo pasa quien llama) y
      `optax.apply_updates`. Debe
      funcionar con cualquier optimizador de optax (sgd, momentum, adam, ...:
      usa el que recibes), compilar una sola vez para llamadas repetidas con las
      mismas formas, y no modificar sus entradas (nada de actualizaciones en el
      sitio del dict params, nada de `donate_argnums`).
    - `fit(params, x, y, *, steps, learning_rate, loss_fn)`: `optax.adam(learning_rate)`,
      un paso creado con `make_train_step`, llamado `steps` veces sobre el
      `(x, y)` completo; devuelve `(final_params, losses)` con `losses` una
      lista de `steps` floats de Python (la pérdida antes de cada
      actualización). En make_moons, `fit(init_params([2, 32, 32, 1], key), x, y, steps=300,
      learning_rate=0.01, loss_fn=bce_loss)` alcanza una exactitud de
      validación >= 0.9.
    - Este módulo no debe importar tu ejercicio 04: la función de pérdida llega
      como argumento.

Ejemplo:
    >>> step = make_train_step(bce_loss, optax.sgd(0.1))
    >>> opt_state = optax.sgd(0.1).init(params)
    >>> params, opt_state, loss = step(params, opt_state, x, y)   # traces + compiles
    >>> params, opt_state, loss = step(params, opt_state, x, y)   # runs the compiled program
"""

# Spanish instructions of ex05_jit_train_step: the module docstring above is the student's instructions (the
# solution's module docstring in Spanish: same layout, code identifiers, shapes and `>>>` examples
# unchanged); DOCSTRINGS holds each def/class docstring of the stub, by qualified name, without
# indentation (autograder.student.instructions_es.localize_stub indents them). Terms: docs/glossary.md.

DOCSTRINGS: dict[str, str] = {
    "make_train_step": """Un paso de entrenamiento compilado con jit para ``loss_fn`` y ``optimizer``.

Args:
    loss_fn: ``loss_fn(params, x, y) -> scalar``, derivable respecto a ``params``.
    optimizer: cualquier transformación de gradientes de optax, también una cuya actualización
        necesita los params (``optax.adamw``, ``optax.lamb``, ``optax.add_decayed_weights``).

Returns:
    ``step(params, opt_state, x, y) -> (new_params, new_opt_state, loss)``,
    compilado con ``jax.jit``; ``loss`` es la pérdida en los ``params`` antiguos.""",
    "fit": """Entrenamiento con Adam y el lote completo, con un paso compilado.

Args:
    params: el pytree de parámetros inicial.
    x: entradas, ``(N, d)``.
    y: etiquetas, ``(N,)``.
    steps: número de pasos.
    learning_rate: la tasa de aprendizaje de Adam.
    loss_fn: ``loss_fn(params, x, y) -> scalar``.

Returns:
    ``(final_params, losses)``: el pytree entrenado y ``steps`` floats de Python.""",
}

# Fingerprint of the English docstrings these translations follow: tests/test_i18n.py fails when the
# English changes (`python -m autograder.student.instructions_es` prints the current ones).
SOURCE_SHA = "e24ba9c59de7"
