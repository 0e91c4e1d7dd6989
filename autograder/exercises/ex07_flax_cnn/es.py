"""Ejercicio 07 — una CNN en Flax: canales al final, y un paso de entrenamiento compilado (JAX: la traza).

Construye otra vez la CNN de dígitos del ejercicio 03, esta vez como un módulo
`linen` de Flax, y escribe un paso de entrenamiento que `jax.jit` compile una
sola vez.

Dos diferencias con PyTorch que conviene tener presentes:

- **Canales al final.** Las imágenes de PyTorch son `(N, C, H, W)` y los
  kernels de `Conv2d` son `(out, in, kH, kW)` ("OIHW"). Las imágenes de Flax
  son `(N, H, W, C)` y los kernels de `nn.Conv` son `(kH, kW, in, out)`
  ("HWIO"). Los datos dispuestos para PyTorch deben trasponerse con `to_nhwc`
  antes de entrar en el modelo — un `reshape` da la forma correcta con los
  píxeles revueltos. El paso (stride) del pooling de Flax vale 1 por defecto
  (el de PyTorch, el tamaño de la ventana): pasa `strides`.
- **Cinta frente a traza.** Un paso de PyTorch se ejecuta al momento y graba
  una cinta en cada llamada. Un paso de JAX compilado con jit se *traza* una
  vez por forma de entrada: Python ejecuta tu función con valores abstractos,
  XLA compila el resultado, y las llamadas posteriores con las mismas formas
  reutilizan el código compilado sin volver a ejecutar tu Python. Así que
  `make_flax_train_step` debe construir la función compilada una sola vez y
  devolverla (no compilar con jit dentro de cada llamada, ni saltarse jit).

Qué construir:
    - `FlaxCNN(num_classes=10)`: con `@nn.compact`, en este orden:
      `nn.Conv(16, (3, 3), padding="SAME")`, relu,
      `nn.avg_pool(x, (2, 2), strides=(2, 2))`,
      `nn.Conv(32, (3, 3), padding="SAME")`, relu, el mismo avg_pool,
      aplanar a `(N, 128)`, `nn.Dense(64)`, relu, `nn.Dense(num_classes)`.
      Entrada `(N, 8, 8, 1)`, salida logits `(N, num_classes)`. Los nombres
      automáticos dan `params["Conv_0"]["kernel"]` de forma `(3, 3, 1, 16)`,
      `Conv_1` `(3, 3, 16, 32)`, `Dense_0` `(128, 64)`, `Dense_1`
      `(64, num_classes)`, cada uno con un `bias`.
    - `to_nhwc(x)`: `(N, C, H, W)` -> `(N, H, W, C)`; recibe un array de numpy
      o de JAX y devuelve un array de JAX.
    - `make_flax_train_step(model, optimizer)`: devuelve un
      `step(params, opt_state, x, y) -> (params, opt_state, loss)` compilado con
      jit, donde `params` es el dict completo que devuelve `model.init`
      (`{"params": ...}`), `x` es `(N, 8, 8, 1)`, `y` son etiquetas enteras
      `(N,)`, y `loss` es la media de
      `optax.softmax_cross_entropy_with_integer_labels(model.apply(params, x), y)`
      en los parámetros *antes* de la actualización. Funciona con cualquier
      optimizador de optax.

Ejemplo:
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

# Spanish instructions of ex07_flax_cnn: the module docstring above is the student's instructions (the
# solution's module docstring in Spanish: same layout, code identifiers, shapes and `>>>` examples
# unchanged); DOCSTRINGS holds each def/class docstring of the stub, by qualified name, without
# indentation (autograder.student.instructions_es.localize_stub indents them). Terms: docs/glossary.md.

DOCSTRINGS: dict[str, str] = {
    "FlaxCNN": """La CNN de dígitos, canales al final: imágenes `(N, 8, 8, 1)` -> logits `(N, num_classes)`.

Attributes:
    num_classes: número de logits de salida.""",
    "FlaxCNN.__call__": "Transforma imágenes `(N, 8, 8, 1)` en logits `(N, num_classes)`.",
    "to_nhwc": """Canales primero `(N, C, H, W)` -> canales al final `(N, H, W, C)`, como array de JAX.

Args:
    x: imágenes dispuestas para PyTorch, de numpy o de JAX.

Returns:
    Los mismos píxeles como un `jax.Array` de forma `(N, H, W, C)`.""",
    "make_flax_train_step": """Construye un paso de entrenamiento compilado con jit para un clasificador de Flax.

Args:
    model: un módulo de Flax que transforma entradas `(N, ...)` en logits `(N, num_classes)`.
    optimizer: cualquier optimizador de optax, también uno cuya actualización necesita los
        params (`optax.adamw`, `optax.lamb`, `optax.add_decayed_weights`).

Returns:
    `step(params, opt_state, x, y) -> (params, opt_state, loss)`, compilado
    con `jax.jit`: `params` es el dict que devuelve `model.init`, `y` contiene
    etiquetas enteras `(N,)`, y `loss` (un escalar) es la entropía cruzada
    softmax media en los parámetros antes de la actualización.""",
}

# Fingerprint of the English docstrings these translations follow: tests/test_i18n.py fails when the
# English changes (`python -m autograder.student.instructions_es` prints the current ones).
SOURCE_SHA = "90f9a328d9eb"
