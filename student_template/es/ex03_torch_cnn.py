"""Ejercicio 03 — una CNN, canales primero (PyTorch: la cinta).

Construye una pequeña red convolucional para las imágenes 8x8 de `load_digits`
como un `nn.Module` de PyTorch. Las imágenes de PyTorch son *canales primero*:
un lote es `(N, C, H, W)`, así que los dígitos llegan como `(N, 1, 8, 8)`, y al
aplanar un mapa de características `(N, 32, 2, 2)` se obtienen las 128
características en orden de canal (todo el canal 0, luego el canal 1, ...). El
dropout se activa con un indicador guardado en el módulo: `model.train()` lo
enciende y `model.eval()` lo apaga. (En Flax, ejercicio 07, las imágenes son
canales al final `(N, H, W, C)` y el dropout se controla con un argumento
`deterministic` más una clave PRNG explícita.)

Qué construir, en este orden:
    Conv2d(1, 16, 3, padding=1), ReLU, MaxPool2d(2),      # (N, 16, 4, 4)
    Conv2d(16, 32, 3, padding=1), ReLU, MaxPool2d(2),     # (N, 32, 2, 2)
    Flatten,                                              # (N, 128)
    Linear(128, 64), ReLU, Dropout(dropout),
    Linear(64, num_classes)                               # (N, num_classes) logits

    - `[p.shape for p in model.parameters()]` debe ser, en orden,
      `(16, 1, 3, 3), (16,), (32, 16, 3, 3), (32,), (64, 128), (64,),
      (num_classes, 64), (num_classes,)`: crea las capas en el orden del forward.
    - Usa los argumentos `num_classes` y `dropout` (por defecto 10 y 0.3).
    - La salida son logits (sin softmax).
    - En modo `eval()` la salida es determinista; en modo `train()` el dropout
      pone a cero unidades ocultas al azar, cada unidad de cada ejemplo por
      separado (usa `nn.Dropout`, que lee el
      indicador; `F.dropout(x, p)` sin `training=self.training` siempre está
      activo).
    - Los gradientes deben fluir también en modo `train()`: ninguna operación
      in situ sobre la salida de una ReLU (un dropout con `inplace=True` tras
      la ReLU sobrescribe lo que el backward de la ReLU necesita, y
      `loss.backward()` falla; el modo `eval()` lo oculta, porque ahí el
      dropout no hace nada).

Ejemplo:
    >>> model = CNN(num_classes=10, dropout=0.3).eval()
    >>> model(torch.zeros(5, 1, 8, 8)).shape
    torch.Size([5, 10])
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class CNN(nn.Module):
    """Dos bloques convolucionales y una cabeza clasificadora de dos capas con dropout.

    Args:
        num_classes: número de logits de salida.
        dropout: probabilidad de poner a cero cada unidad oculta antes de la última capa
            (solo en modo de entrenamiento).
    """

    def __init__(self, num_classes: int = 10, dropout: float = 0.3):
        super().__init__()
        # TU CÓDIGO AQUÍ
        raise NotImplementedError("ex03_torch_cnn: sustituye esta línea por tu código")

    def forward(self, x: Tensor) -> Tensor:
        """Transforma imágenes `(N, 1, 8, 8)` en logits `(N, num_classes)`."""
        # TU CÓDIGO AQUÍ
        raise NotImplementedError("ex03_torch_cnn: sustituye esta línea por tu código")

