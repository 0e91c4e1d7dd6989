"""Ejercicio 09 — la cinta de PyTorch.

Mientras se ejecuta una pasada hacia delante, el autograd de PyTorch graba cada
operación en una *cinta*: cada tensor resultado recibe un `grad_fn`, un nodo del
grafo hacia atrás, y `grad_fn.next_functions` apunta a los nodos que
produjeron sus entradas. `loss.backward()` recorre ese grafo desde la pérdida
hasta las hojas, donde los nodos `AccumulateGrad` suman el gradiente en
`leaf.grad`. El grafo se construye de nuevo en cada pasada hacia delante y se
libera tras `backward()`. (JAX no guarda ninguna cinta: `jax.grad` traza tu
función en un jaxpr y deriva la traza, ejercicio 08.)

Parte 1 — `backward_graph(t)`: lista lo que hay en la cinta.
    - Devuelve los nombres de clase (`type(node).__name__`) de los nodos
      alcanzables desde `t.grad_fn`, en preorden en profundidad: un nodo, y
      luego cada uno de sus hijos en el orden de `next_functions` (cada entrada
      es un par `(node, input_nr)`; el nodo puede ser `None` para una entrada
      que no necesita gradiente: sáltalo).
    - Cada nodo aparece una vez, aunque sea alcanzable por varios caminos (una
      subexpresión compartida, una hoja usada dos veces): recuerda los nodos
      que ya has visitado — los objetos nodo, no sus nombres.
    - Los nodos `AccumulateGrad` (uno por cada hoja que requiere gradiente) se
      incluyen.
    - Un tensor sin `grad_fn` (una hoja, o un resultado calculado bajo
      `torch.no_grad()`) da `[]`.
    - Las llamadas repetidas dan la misma respuesta: no guardes estado entre
      llamadas. Cuidado con `def walk(node, visited=set())`: un argumento por
      defecto se crea una sola vez, cuando se ejecuta `def`, y lo comparten
      todas las llamadas posteriores.

Parte 2 — `manual_grads(w, x, b)`: haz la pasada hacia atrás a mano.
    - Para `L = (w*x + b)**2`, devuelve `(dL/dw, dL/dx, dL/db)` como una tupla de
      tres floats de Python, calculados con la forma cerrada y la regla de la
      cadena. No uses diferenciación automática (ni `backward`,
      `torch.autograd.grad`, `jax.grad`, ni ningún tensor con
      `requires_grad=True`) dentro de esta función.
    - Antes de fiarte de una derivación a mano, contrástala con autograd en
      una celda aparte, no dentro de `manual_grads`:
          w = torch.tensor(0.5, requires_grad=True)
          L = (w * 2.0 + 0.3) ** 2
          L.backward(); w.grad
      El ejemplo de abajo da 5.2 para dL/dw en (w, x, b) = (0.5, 2.0, 0.3);
      una derivación que pierde un factor de la regla de la cadena obtiene ahí
      2.6. El corrector evalúa tus fórmulas en puntos aleatorios, así que los
      números del ejemplo por sí solos no puntúan.

Ejemplo:
    >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> backward_graph((w * 3.0).sum())
    ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    >>> manual_grads(0.5, 2.0, 0.3)
    (5.2, 1.3, 2.6)
"""

from __future__ import annotations

import torch


def backward_graph(t: torch.Tensor) -> list[str]:
    """Nombres de los nodos del grafo hacia atrás alcanzables desde ``t.grad_fn``.

    Args:
        t: cualquier tensor.

    Returns:
        ``type(node).__name__`` de cada nodo, en preorden en profundidad, con los hijos en el
        orden de ``next_functions``, cada nodo una vez; ``[]`` cuando ``t.grad_fn`` es None.
    """
    # TU CÓDIGO AQUÍ
    raise NotImplementedError("ex09_autograd_tape: sustituye esta línea por tu código")


def manual_grads(w: float, x: float, b: float) -> tuple[float, float, float]:
    """Gradientes de ``L = (w*x + b)**2`` en forma cerrada, sin autograd.

    Args:
        w: peso.
        x: entrada.
        b: sesgo.

    Returns:
        ``(dL/dw, dL/dx, dL/db)`` como floats de Python.
    """
    # TU CÓDIGO AQUÍ
    raise NotImplementedError("ex09_autograd_tape: sustituye esta línea por tu código")
