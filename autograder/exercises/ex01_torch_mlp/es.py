"""Ejercicio 01 — escribe un `nn.Module` (PyTorch: la cinta).

Construye un perceptrón multicapa como un `nn.Module` de PyTorch. En PyTorch un
modelo es un *objeto que posee sus parámetros*: las capas `nn.Linear` creadas en
`__init__` registran sus pesos, y `forward` solo dice cómo fluyen los datos.
Autograd graba cada operación en una cinta mientras se ejecuta `forward`, así
que nunca escribes la pasada hacia atrás. (En JAX, ejercicio 04, el mismo modelo
es una función pura de un pytree de parámetros explícito.)

Qué construir:
    - `len(hidden_dims) + 1` capas `nn.Linear`: input_dim -> h1 -> ... -> output_dim.
    - ReLU tras cada capa salvo la última; la salida son logits (sin sigmoide).
    - `hidden_dims` puede estar vacía: entonces el modelo es un único `nn.Linear`.
    - `[p.shape for p in model.parameters()]` debe ser, en orden,
      `(h1, input_dim), (h1,), (h2, h1), (h2,), ..., (output_dim, h_last), (output_dim,)`.
    - `forward` debe funcionar tras `model.to(device)`: no crees tensores en un
      dispositivo fijo dentro de `forward`.

Ejemplo:
    >>> model = MLP(2, [32, 32], 1)
    >>> model(torch.zeros(5, 2)).shape
    torch.Size([5, 1])
"""

# Spanish instructions of ex01_torch_mlp: the module docstring above is the student's instructions (the
# solution's module docstring in Spanish: same layout, code identifiers, shapes and `>>>` examples
# unchanged); DOCSTRINGS holds each def/class docstring of the stub, by qualified name, without
# indentation (autograder.student.instructions_es.localize_stub indents them). Terms: docs/glossary.md.

DOCSTRINGS: dict[str, str] = {
    "MLP": """Un perceptrón multicapa con ReLU que devuelve logits.

Args:
    input_dim: número d de características de entrada.
    hidden_dims: anchos de las capas ocultas (puede estar vacía).
    output_dim: número de salidas.""",
    "MLP.forward": "Transforma entradas `(N, input_dim)` en logits `(N, output_dim)`.",
}

# Fingerprint of the English docstrings these translations follow: tests/test_i18n.py fails when the
# English changes (`python -m autograder.student.instructions_es` prints the current ones).
SOURCE_SHA = "1fdce9573546"
