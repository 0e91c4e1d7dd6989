"""Hints of ex11_torch_compile: tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code (tests/test_i18n.py checks it)."""

HINTS: dict[str, list[str]] = {
    "en": [
        "TorchDynamo reads your Python while it runs and captures the tensor operations into a graph. "
        "Anything that needs a tensor's *value* in Python (an `if` on it) ends the graph there: a graph "
        "break. Every captured graph is guarded by what it assumed (shapes, Python values), and a call that "
        "breaks a guard compiles again. Use the backend you are given everywhere.",
        "For the clip, min(1, max_norm / norm) can be computed without asking Python which is smaller: "
        "tensor operations that clamp or select do it inside the graph, and a tensor of zeros must not "
        "divide by a zero norm. `torch._dynamo.explain(fn)` returns a function; calling it returns a report "
        "whose attributes hold both counts. For any batch size, ask for dynamic shapes at the first compile. "
        "For the step, build the compiled function once, outside `step`, and let it return the loss.",
        "max(norm, max_norm) is `torch.clamp` with `min=`, and max_norm divided by it is the scale you want; "
        "`torch.linalg.vector_norm(x)` is the global L2 norm. The report's `graph_count` and "
        "`graph_break_count` become Python ints with `int(...)`. `dynamic=True` in `torch.compile`, or "
        "`torch._dynamo.mark_dynamic(x, 0)` before each compiled call. In `compiled_train_step`, define an "
        "inner function of (x, y) returning the loss, decorate it with `torch.compile` and the backend, then "
        "write `step` as in exercise 02 around it: `backward()` and `optimizer.step()` stay outside the "
        "compiled function, and the loss goes back as a Python float.",
    ],
    "es": [
        "TorchDynamo lee tu Python mientras se ejecuta y captura las operaciones con tensores en un grafo. "
        "Todo lo que necesita el *valor* de un tensor en Python (un `if` sobre él) termina ahí el grafo: una "
        "ruptura del grafo. Cada grafo capturado está protegido por lo que supuso (formas, valores de Python), "
        "y una llamada que rompe una de esas guardas vuelve a compilar. Usa siempre el backend que recibes.",
        "En el recorte, min(1, max_norm / norm) se puede calcular sin preguntar a Python cuál es menor: las "
        "operaciones con tensores que acotan o seleccionan lo hacen dentro del grafo, y un tensor de ceros no "
        "debe dividir por una norma cero. `torch._dynamo.explain(fn)` devuelve una función; al llamarla "
        "devuelve un informe cuyos atributos guardan los dos recuentos. Para cualquier tamaño de lote, pide "
        "formas dinámicas desde la primera compilación. En el paso, construye la función compilada una sola "
        "vez, fuera de `step`, y haz que devuelva la pérdida.",
        "max(norm, max_norm) es `torch.clamp` con `min=`, y max_norm dividido por eso es la escala que "
        "buscas; `torch.linalg.vector_norm(x)` es la norma L2 global. `graph_count` y `graph_break_count` del "
        "informe se convierten en ints de Python con `int(...)`. `dynamic=True` en `torch.compile`, o "
        "`torch._dynamo.mark_dynamic(x, 0)` antes de cada llamada compilada. En `compiled_train_step`, define "
        "una función interna de (x, y) que devuelva la pérdida, decórala con `torch.compile` y el backend, y "
        "escribe `step` como en el ejercicio 02 a su alrededor: `backward()` y `optimizer.step()` quedan "
        "fuera de la función compilada, y la pérdida se devuelve como float de Python.",
    ],
}
