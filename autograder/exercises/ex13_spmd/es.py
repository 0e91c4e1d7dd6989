'''Ejercicio 13 — un paso de entrenamiento en muchos dispositivos (SPMD: GSPMD y shard_map).

JAX programa muchos dispositivos igual que programa uno: escribes el programa
para el lote completo (*un solo programa*), dices cómo se disponen los arrays
sobre una *malla* de dispositivos, y cada dispositivo ejecuta el mismo programa
sobre su parte (*múltiples datos*: SPMD). El paralelismo de datos es la
disposición más sencilla: el lote se divide por su primer eje entre los
dispositivos, los parámetros se replican (cada dispositivo tiene una copia
completa) y el gradiente se promedia entre los dispositivos para que todas las
copias den el mismo paso.
    - `jax.make_mesh((n,), ("data",), devices=...)` construye una malla 1-D
      cuyo único eje se llama "data"; `NamedSharding(mesh, P("data"))` divide
      el primer eje de un array sobre ella, `NamedSharding(mesh, P())` lo
      replica; `jax.device_put(x, sharding)` coloca un array.
    - GSPMD: `jax.jit` del paso normal de un dispositivo, con entradas
      repartidas (o indicándolo con `in_shardings`/`out_shardings`), lo reparte
      el compilador: inserta él mismo la suma del gradiente entre
      dispositivos.
    - `jax.shard_map(f, mesh=..., in_specs=..., out_specs=...)`: escribes `f`
      para *el fragmento de un dispositivo* y haces tú la comunicación con
      colectivos como `jax.lax.pmean(value, "data")` (la media sobre los
      dispositivos del eje de la malla). Dentro, el gradiente respecto a una
      entrada replicada vuelve ya sumado sobre los dispositivos: para entrenar
      con `shard_map`, deriva el `pmean` de la pérdida (hacer `pmean` de los
      gradientes de la pérdida local los deja n veces más grandes).
(El equivalente en PyTorch es DistributedDataParallel: un proceso por
dispositivo, cada uno con su copia del modelo, y un all-reduce de los
gradientes dentro de `backward()`.)
El corrector da a tu código 8 dispositivos CPU y comprueba mallas de 1, 2, 4 y
8 dispositivos (en un cuaderno, la celda de preparación pide 8 dispositivos CPU;
si JAX ya estaba en marcha con menos, las pruebas usan los tamaños que haya y lo
dicen).
Las funciones que reciben una `mesh` se llaman con mallas de los dos tipos
de ejes y deben funcionar con ambas: de `jax.make_mesh` (ejes Explicit en el
JAX actual) y de `jax.sharding.Mesh(devices, ("data",))` (ejes Auto, lo que
también daba `jax.make_mesh` en versiones anteriores de JAX). Las specs
deducidas de shardings Explicit (p. ej. `jax.shard_map` sin `in_specs`)
fallan con ejes Auto: dalas tú.

Qué construir:
    - `make_data_mesh(n_devices=None)`: una malla 1-D con el eje "data" sobre
      los `n_devices` primeros dispositivos de `jax.devices()` (todos, por
      defecto).
    - `shard_batch(x, mesh)`: `x` colocado con `NamedSharding(mesh, P("data"))`:
      su eje inicial dividido a partes iguales sobre la malla (el tamaño de la
      malla divide a `x.shape[0]`).
    - `data_parallel_step(loss_fn, optimizer, mesh)`: el paso del ejercicio 05,
      `step(params, opt_state, x, y) -> (params, opt_state, loss)`, compilado
      con jit, para params y estado del optimizador replicados en `mesh` y un
      lote `x, y` repartido sobre "data" (como lo coloca `shard_batch`). La
      pérdida y los nuevos params son los del paso en un dispositivo sobre el
      lote completo (sus gradientes llegan al optimizador sin recortar, como
      en el ejercicio 05); los nuevos params y el estado vuelven replicados en la
      malla; las llamadas repetidas compilan una sola vez. Como en el
      ejercicio 05, el paso deja sus entradas utilizables: sin
      `donate_argnums` (donar borra los params, el estado del optimizador o
      el lote de quien llama).
    - `per_device_mean_loss(loss_fn, params, x, y, mesh)`: con `jax.shard_map`
      sobre `mesh`, cada dispositivo calcula `loss_fn(params, x_shard, y_shard)`
      sobre su propio fragmento, y el resultado es su media mediante
      `jax.lax.pmean` sobre "data": un escalar replicado. (Para una pérdida que
      es una media sobre los ejemplos y fragmentos iguales, es la pérdida del
      lote completo.) `x, y` llegan repartidos como los coloca `shard_batch`, y
      `params` replicados.

Ejemplo:
    >>> mesh = make_data_mesh(4)
    >>> dict(mesh.shape)
    {'data': 4}
    >>> xs = shard_batch(jnp.zeros((32, 2)), mesh)
    >>> xs.addressable_shards[0].data.shape
    (8, 2)
    >>> step = data_parallel_step(bce_loss, optax.adam(0.01), mesh)
'''

# Spanish instructions of ex13_spmd: the module docstring above is the student's instructions (the
# solution's module docstring in Spanish: same layout, code identifiers, shapes and `>>>` examples
# unchanged); DOCSTRINGS holds each def/class docstring of the stub, by qualified name, without
# indentation (autograder.student.instructions_es.localize_stub indents them). Terms: docs/glossary.md.

DOCSTRINGS: dict[str, str] = {
    "make_data_mesh": """Una malla 1-D de dispositivos para el paralelismo de datos.

Args:
    n_devices: cuántos de ``jax.devices()`` usar, desde el primero; None: todos.

Returns:
    Una ``jax.sharding.Mesh`` de forma ``{"data": n_devices}``.""",
    "shard_batch": """``x`` con su eje inicial dividido sobre el eje "data" de la malla.

Args:
    x: un array ``(N, ...)``, N divisible por el tamaño de la malla.
    mesh: una malla 1-D con el eje "data" (ejes Auto o Explicit).

Returns:
    Los mismos valores, colocados con ``NamedSharding(mesh, P("data"))``.""",
    "data_parallel_step": """Un paso de entrenamiento con paralelismo de datos, compilado con jit.

Args:
    loss_fn: ``loss_fn(params, x, y) -> scalar``, una media sobre el lote.
    optimizer: cualquier transformación de gradientes de optax, también una cuya actualización
        necesita los params (``optax.adamw``, ``optax.lamb``, ``optax.add_decayed_weights``).
    mesh: una malla 1-D con el eje "data" (ejes Auto o Explicit).

Returns:
    ``step(params, opt_state, x, y) -> (new_params, new_opt_state, loss)``: params y
    estado replicados en ``mesh``, ``x, y`` repartidos sobre "data"; ``loss`` en los params antiguos.""",
    "per_device_mean_loss": """La media sobre los dispositivos de la pérdida de cada uno en su propio fragmento.

Args:
    loss_fn: ``loss_fn(params, x, y) -> scalar``.
    params: el pytree de parámetros (replicado).
    x: entradas ``(N, ...)``, repartidas sobre "data".
    y: objetivos ``(N, ...)``, repartidos sobre "data".
    mesh: una malla 1-D con el eje "data" (ejes Auto o Explicit).

Returns:
    Un escalar replicado: ``pmean`` sobre "data" de las pérdidas por dispositivo.""",
}

# Fingerprint of the English docstrings these translations follow: tests/test_i18n.py fails when the
# English changes (`python -m autograder.student.instructions_es` prints the current ones).
SOURCE_SHA = "730b7fbcf708"
