"""Ejercicio 10 — el mismo modelo en los dos frameworks.

Un modelo de PyTorch *posee* sus pesos (parámetros dentro de `nn.Module`s,
grabados en la cinta cuando se usan); un modelo de JAX es una función pura de
un pytree que le pasas. Mover los pesos de uno a otro es sobre todo
contabilidad, pero hay tres detalles que muerden:

    - Disposición. `nn.Linear(d_in, d_out)` guarda `weight` como `(d_out, d_in)` y
      calcula `x @ weight.T + bias`; el MLP de JAX del ejercicio 04 calcula
      `x @ W + b` con `W` de forma `(d_in, d_out)`. Las convoluciones también
      difieren: el `Conv2d.weight` de torch es OIHW (out, in, kh, kw) sobre
      imágenes NCHW, un kernel de `Conv` de Flax es HWIO (kh, kw, in, out)
      sobre imágenes NHWC.
    - Memoria. En CPU, torch y numpy (y algunos caminos de JAX: `jax.device_put`,
      `jnp.from_dlpack`, y `jnp.asarray` en las versiones de JAX que toman un
      array de numpy alineado sin copiarlo) pueden compartir un mismo búfer.
      Se supone que los arrays de JAX son inmutables, pero entrenar el modelo
      de torch actualiza sus tensores *en el sitio*: un array que comparte su
      memoria cambia sin que lo notes. Copia (`jnp.array` siempre copia).
    - La cinta. Escribir en un parámetro que requiere gradiente es una
      operación que autograd grabaría (y que rechaza, en el sitio, sobre una
      hoja). Copia bajo `torch.no_grad()`, dentro de los parámetros existentes,
      para que sigan siendo hojas que requieren gradiente y un optimizador
      creado antes los siga viendo.

Qué construir:
    - `torch_mlp_to_jax(model)`: las capas `nn.Linear` de `model`, en orden
      (`model.modules()`), como `{"W": [weight.T, ...], "b": [bias, ...]}` de
      `jax.Array`s float32 que poseen su memoria, de modo que
      `mlp_forward(torch_mlp_to_jax(m), x)` sea igual a `m(x)`. `model` es
      cualquier módulo que contenga las capas `nn.Linear` del MLP, no solo un
      `nn.Sequential`: capas como atributos, o anidadas en bloques.
    - `jax_to_torch_mlp(params, model)`: copia `params` en las capas
      `nn.Linear` de `model`, en el sitio, sin grabar en la cinta; devuelve
      None. Antes de copiar nada, comprueba cada capa: si una forma no
      coincide, lanza `ValueError` nombrando la primera capa errónea por su
      índice i empezando en 0 (como en `params["W"][i]`), p. ej.
      "layer 1: expected W of shape (32, 2), got (2, 32)". Si el número de
      capas difiere, lanza `ValueError` dando los dos números, p. ej.
      "the model has 3 nn.Linear layers, params has 2".
    - `torch_conv_to_flax(weight)`: un `Conv2d.weight` (OIHW) como kernel de
      Flax (HWIO), un `jax.Array` float32.

Con esto, unos mismos pesos iniciales entrenan en los dos frameworks: el bucle
de PyTorch del ejercicio 02 y el paso de JAX compilado con jit del ejercicio
05 dan casi las mismas pérdidas en los primeros pasos (el redondeo de float32
difiere y luego se acumula) y ambos alcanzan una exactitud de validación
>= 0.9 en make_moons.

Ejemplo:
    >>> model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    >>> [w.shape for w in torch_mlp_to_jax(model)["W"]]
    [(2, 3), (3, 1)]
    >>> torch_conv_to_flax(nn.Conv2d(1, 16, 3).weight).shape
    (3, 3, 1, 16)
"""

# Spanish instructions of ex10_bridge: the module docstring above is the student's instructions (the
# solution's module docstring in Spanish: same layout, code identifiers, shapes and `>>>` examples
# unchanged); DOCSTRINGS holds each def/class docstring of the stub, by qualified name, without
# indentation (autograder.student.instructions_es.localize_stub indents them). Terms: docs/glossary.md.

DOCSTRINGS: dict[str, str] = {
    "torch_mlp_to_jax": """Los pesos del MLP como un pytree de JAX.

Args:
    model: un módulo cuyas capas ``nn.Linear`` (en el orden de ``modules()``) forman el MLP.

Returns:
    ``{"W": [(d_i, d_{i+1}), ...], "b": [(d_{i+1},), ...]}``, arrays de jax float32 (copias).""",
    "jax_to_torch_mlp": """Copia un pytree de un MLP de JAX en las capas ``nn.Linear`` del modelo, en el sitio.

Args:
    params: ``{"W": [(d_i, d_{i+1}), ...], "b": [(d_{i+1},), ...]}``.
    model: el MLP de torch que se sobrescribe; sus parámetros reciben copias de los valores (entrenarlo
        después no debe cambiar los arrays de JAX).

Raises:
    ValueError: difiere una forma (el mensaje nombra "layer i") o los números de capas (da los dos).""",
    "torch_conv_to_flax": """Un peso ``Conv2d`` de torch como kernel ``Conv`` de Flax.

Args:
    weight: ``(out, in, kh, kw)`` (OIHW).

Returns:
    ``(kh, kw, in, out)`` (HWIO), array de jax float32.""",
}

# Fingerprint of the English docstrings these translations follow: tests/test_i18n.py fails when the
# English changes (`python -m autograder.student.instructions_es` prints the current ones).
SOURCE_SHA = "a07bd4e7f2ec"
