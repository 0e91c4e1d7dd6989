"""Ejercicio __NN__ — __TITLEES__.

Estandariza las filas de un arreglo: resta la media de cada fila y divide por su
desviación típica, `(x - mean) / sqrt(var + 1e-5)`, con la media y la varianza
sesgada tomadas sobre el último eje. (Es el esqueleto que escribió `tapetrace new`:
sustitúyelo por las instrucciones reales del ejercicio.)

Qué construir:
    - `__FUNC__(x)` recibe un `jax.Array` float32 `x` de forma `(..., d)` y
      devuelve un arreglo de la misma forma.
    - Los estadísticos se toman solo sobre el último eje, sea cual sea el número
      de ejes iniciales.

Ejemplo:
    >>> __FUNC__(jnp.zeros((4, 3))).shape
    (4, 3)
"""

# Spanish instructions of __NAME__: the module docstring above is the student's instructions (the
# solution's module docstring in Spanish: same layout, code identifiers, shapes and `>>>` examples
# unchanged); DOCSTRINGS holds each def/class docstring of the stub, by qualified name, without
# indentation (autograder.student.instructions_es.localize_stub indents them). Terms: docs/glossary.md.

DOCSTRINGS: dict[str, str] = {
    "__FUNC__": """Estandariza `x` sobre su último eje.

Args:
    x: arreglo float32 `(..., d)`.

Returns:
    `(x - mean) / sqrt(var + 1e-5)` por fila, forma `(..., d)`.""",
}

# Fingerprint of the English docstrings these translations follow: tests/test_i18n.py fails when the
# English changes (`python -m autograder.student.instructions_es` prints the current ones).
SOURCE_SHA = "__SHA__"
