"""Ejercicio 02 — el bucle de entrenamiento explícito (PyTorch: la cinta).

Escribe las cuatro piezas de un bucle de entrenamiento de PyTorch. En PyTorch
entrenar es una secuencia de *efectos secundarios*: `loss.backward()` suma
gradientes en el `.grad` de cada parámetro (se acumulan hasta que los pones a
cero), `optimizer.step()` actualiza los parámetros en el sitio, y
`model.train()` / `model.eval()` cambian un indicador que leen capas como
Dropout. (En JAX, ejercicio 05, un paso es una función pura que devuelve
parámetros nuevos y un estado del optimizador nuevo.)

Qué construir:
    - `bce_with_logits(logits, targets)`: la media sobre todos los elementos de
      `max(z, 0) - z*y + log(1 + exp(-|z|))` con `z = logits`, `y = targets`.
      Esta forma nunca calcula `exp` de un número positivo grande, así que sigue
      siendo finita para |z| hasta 1e4 (una fórmula ingenua
      `-(y*log(sigmoid(z)) + ...)` da inf/nan ahí). No llames a
      `F.binary_cross_entropy_with_logits` ni a `nn.BCEWithLogitsLoss`: el
      corrector lo detecta. Devuelve un tensor 0-d que autograd pueda derivar.
    - `train_step(model, optimizer, x, y, loss_fn)`: `model.train()`, pon a cero
      los gradientes, pasada hacia delante, `loss = loss_fn(model(x), y)`,
      `loss.backward()`, `optimizer.step()`, nada entre medias (el optimizador
      recibe los gradientes que dejó `backward()`, sin recortar). Devuelve la
      pérdida calculada *antes* de la actualización como un float de Python
      (`loss.item()`), no como tensor.
    - `evaluate(model, x, y, loss_fn)`: `model.eval()`, y luego bajo
      `torch.no_grad()` (no se construye ningún grafo) devuelve
      `(pérdida media, exactitud)` como dos floats de Python, con exactitud =
      media de `(sigmoid(logits) >= 0.5) == y`.
    - `fit(model, x, y, *, epochs, lr)`: crea
      `torch.optim.Adam(model.parameters(), lr=lr)` y haz `epochs` llamadas a
      `train_step` con el lote completo y `bce_with_logits`; devuelve la lista
      de las pérdidas de cada época (floats de Python).

Formas: `x` es `(N, d)`; `y` tiene la forma de la salida del modelo (`(N, 1)`
para un clasificador binario) y contiene floats 0./1.

Ejemplo:
    >>> model = torch.nn.Linear(2, 1)
    >>> losses = fit(model, torch.randn(64, 2), torch.ones(64, 1), epochs=3, lr=0.01)
    >>> len(losses), type(losses[0])
    (3, <class 'float'>)
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

LossFn = Callable[[Tensor, Tensor], Tensor]


def bce_with_logits(logits: Tensor, targets: Tensor) -> Tensor:
    """Entropía cruzada binaria numéricamente estable sobre logits, promediada sobre todos los elementos.

    Args:
        logits: puntuaciones sin activar z, de cualquier forma, p. ej. `(N, 1)`.
        targets: floats 0./1. y, de la misma forma que `logits`.

    Returns:
        Un tensor 0-d: la media de `max(z, 0) - z*y + log(1 + exp(-|z|))`.
    """
    # TU CÓDIGO AQUÍ
    raise NotImplementedError("ex02_torch_training: sustituye esta línea por tu código")


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, x: Tensor, y: Tensor,
               loss_fn: LossFn) -> float:
    """Un paso de optimización sobre el lote `(x, y)`.

    Args:
        model: la red; ponla en modo de entrenamiento.
        optimizer: cualquier optimizador de `torch.optim` sobre `model.parameters()` (SGD,
            Adam, AdamW, RMSprop, ...). Puede haber gradientes ya acumulados en los
            parámetros cuando se llama (de un `backward()` anterior).
        x: entradas `(N, d)`.
        y: objetivos con la forma de la salida del modelo.
        loss_fn: `loss_fn(model(x), y)` -> tensor 0-d.

    Returns:
        La pérdida antes de la actualización, como float de Python.
    """
    # TU CÓDIGO AQUÍ
    raise NotImplementedError("ex02_torch_training: sustituye esta línea por tu código")


def evaluate(model: nn.Module, x: Tensor, y: Tensor, loss_fn: LossFn) -> tuple[float, float]:
    """Pérdida y exactitud de un clasificador binario, sin construir un grafo.

    Args:
        model: la red; ponla en modo de evaluación.
        x: entradas `(N, d)`.
        y: objetivos 0./1. con la forma de la salida del modelo.
        loss_fn: `loss_fn(model(x), y)` -> tensor 0-d.

    Returns:
        `(pérdida media, exactitud)` como floats de Python.
    """
    # TU CÓDIGO AQUÍ
    raise NotImplementedError("ex02_torch_training: sustituye esta línea por tu código")


def fit(model: nn.Module, x: Tensor, y: Tensor, *, epochs: int, lr: float) -> list[float]:
    """Entrenamiento con el lote completo, Adam y `bce_with_logits`.

    Args:
        model: la red (se entrena en el sitio).
        x: entradas `(N, d)`.
        y: objetivos 0./1. con la forma de la salida del modelo.
        epochs: número de pasos con el lote completo.
        lr: la tasa de aprendizaje de Adam.

    Returns:
        Las `epochs` pérdidas, cada una medida antes de su actualización, como floats de Python.
    """
    # TU CÓDIGO AQUÍ
    raise NotImplementedError("ex02_torch_training: sustituye esta línea por tu código")
