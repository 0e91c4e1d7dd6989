'''Ejercicio 11 — la traza propia de PyTorch: captura del grafo, rupturas del grafo, recompilaciones.

`torch.compile` es la respuesta opcional de PyTorch a `jax.jit` (ejercicio 05).
Su primera etapa, TorchDynamo, lee el bytecode de Python de tu función mientras
se ejecuta y *captura* las operaciones con tensores en un grafo FX, que compila
un backend ("inductor" por defecto; "eager" ejecuta el grafo capturado tal
cual, y "aot_eager" además traza por adelantado la pasada hacia atrás). Las
diferencias con la traza de JAX son la lección:
    - donde Dynamo no puede seguir (un `if` de Python sobre el valor de un
      tensor, `.item()`, un `print`), no falla: termina el grafo, ejecuta ese
      trozo en Python normal y empieza un grafo nuevo después — una *ruptura
      del grafo*. `fullgraph=True` convierte una ruptura del grafo en un error;
    - cada grafo compilado está protegido por los hechos que supuso (formas,
      dtypes, valores de Python); una llamada que rompe una guarda *recompila*.
      Por defecto un tamaño de lote nuevo compila una vez más con un eje de
      lote dinámico ("automatic dynamic"); `dynamic=True` (o
      `torch._dynamo.mark_dynamic`) pide formas dinámicas desde la primera
      compilación;
    - la cinta sigue funcionando: la pasada hacia delante compilada queda en
      la cinta (con "aot_eager" o "inductor", como un nodo por grafo cuya
      pasada hacia atrás se trazó por adelantado), y `loss.backward()` pasa
      por ella.
El corrector pasa `backend="eager"` o `backend="aot_eager"` (el inductor por
defecto necesita un compilador de C++ y segundos por grafo): usa siempre el
`backend` que recibes.

Qué construir:
    - `clip_by_norm(x, max_norm)`: `x * min(1, max_norm / ||x||)`, con la norma
      L2 sobre *todos* los elementos de `x` (`x` de ceros da ceros); un tensor
      derivable con la forma de `x`. Escríbela sin una rama de Python sobre el
      valor de un tensor (un `if x.norm() > max_norm:` de Python es una
      ruptura del grafo), para que `torch.compile(clip_by_norm, fullgraph=True,
      backend="eager")` la acepte; y mantén la escala como tensor (`.item()` o
      `float(...)` la convierten en una constante que la cinta no puede
      derivar).
    - `graph_report(fn, *args)`: `(graph_count, graph_break_count)` de
      `torch._dynamo.explain(fn)(*args)`, como una tupla de dos ints de Python.
    - `compile_for_any_batch(model, backend)`: una versión compilada de `model`
      (las mismas salidas que `model(x)`) que compila como mucho una vez para
      cualquier secuencia de tamaños de lote (mayores que el ancho de la
      entrada: Dynamo trata de forma especial los tamaños 0 y 1, y un tamaño
      de lote igual a otro tamaño de la entrada): formas dinámicas desde la
      primera llamada. El modo dinámico automático por defecto compila una
      segunda vez con el segundo tamaño de lote, y no supera esa prueba.
    - `compiled_train_step(model, optimizer, loss_fn, backend)`: devuelve
      `step(x, y) -> float`, que hace lo mismo que `train_step` del ejercicio
      02 (`model.train()`, poner a cero los gradientes, pasada hacia delante,
      `loss_fn(model(x), y)`, `backward()`, `optimizer.step()` con los
      gradientes sin recortar, devolver la pérdida anterior a la actualización
      como float de Python), con la pasada
      hacia delante y la pérdida calculadas por una función compilada con
      `torch.compile(..., backend=backend)`. Compílala una vez, en
      `compiled_train_step`, no dentro de `step`: las llamadas repetidas con
      las mismas formas no capturan ningún grafo nuevo ni vuelven a llamar a
      `torch.compile`. Tras 3 pasos los parámetros coinciden con los del
      `train_step` en modo eager. Funciona con cualquier optimizador de
      `torch.optim` (SGD, AdamW, ...), también cuando hay gradientes ya
      acumulados en los parámetros (de un `backward()` anterior).

Ejemplo:
    >>> x = torch.full((2, 2), 3.0)
    >>> clip_by_norm(x, 1.5)
    tensor([[0.7500, 0.7500],
            [0.7500, 0.7500]])
    >>> graph_report(clip_by_norm, x, 1.5)
    (1, 0)
    >>> step = compiled_train_step(model, torch.optim.SGD(model.parameters(), lr=0.1),
    ...                            torch.nn.functional.mse_loss, backend="eager")
    >>> loss = step(x, y)   # captures the graph; later calls reuse it
'''

# Spanish instructions of ex11_torch_compile: the module docstring above is the student's instructions (the
# solution's module docstring in Spanish: same layout, code identifiers, shapes and `>>>` examples
# unchanged); DOCSTRINGS holds each def/class docstring of the stub, by qualified name, without
# indentation (autograder.student.instructions_es.localize_stub indents them). Terms: docs/glossary.md.

DOCSTRINGS: dict[str, str] = {
    "clip_by_norm": """Reduce la escala de ``x`` para que su norma L2 global sea como mucho ``max_norm``.

Derivable en todas partes, también en ``x = 0``: allí donde ``||x|| < max_norm``
la función es la identidad, así que su gradiente (también en cero) es el
gradiente que llega, sin cambios y finito. Una forma que divide entre
``||x||``, que toma la raíz cuadrada de una suma de cuadrados o que elige una
rama con ``torch.where`` (que deriva las dos ramas) da un gradiente nan en
cero aunque su valor sea correcto.

Args:
    x: un tensor de cualquier forma.
    max_norm: la mayor norma permitida (> 0).

Returns:
    ``x * min(1, max_norm / ||x||)``, con la forma de ``x``; los ceros siguen siendo ceros.""",
    "graph_report": """Cómo captura TorchDynamo ``fn`` con ``args``.

Args:
    fn: una función de tensores.
    *args: sus argumentos.

Returns:
    ``(graph_count, graph_break_count)`` tal como los informa ``torch._dynamo.explain``.""",
    "compile_for_any_batch": """``model`` compilado una sola vez para todos los tamaños de lote.

Args:
    model: un módulo que recibe lotes ``(N, ...)``.
    backend: el backend de ``torch.compile`` que se usa.

Returns:
    Un invocable con las salidas de ``model`` que compila como mucho una vez para tamaños de lote
    mayores que el ancho de la entrada.""",
    "compiled_train_step": """El ``train_step`` del ejercicio 02 con la pasada hacia delante y la pérdida compiladas.

Args:
    model: el módulo que se entrena (en el sitio).
    optimizer: un optimizador sobre ``model.parameters()``.
    loss_fn: ``loss_fn(output, target) -> tensor escalar``.
    backend: el backend de ``torch.compile`` que se usa.

Returns:
    ``step(x, y) -> float``: un paso de entrenamiento; la pérdida anterior a la actualización.""",
}

# Fingerprint of the English docstrings these translations follow: tests/test_i18n.py fails when the
# English changes (`python -m autograder.student.instructions_es` prints the current ones).
SOURCE_SHA = "7030b56f26f8"
