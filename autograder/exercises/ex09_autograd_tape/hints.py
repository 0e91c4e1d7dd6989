"""Hints of ex09_autograd_tape: tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code (tests/test_i18n.py checks it)."""

HINTS: dict[str, list[str]] = {
    "en": [
        "The tape is a graph of node objects: start at `t.grad_fn` and follow `next_functions`. A "
        "depth-first walk that remembers what it has visited is all you need. For `manual_grads`, name the "
        "inner expression and use the chain rule.",
        "Each entry of `next_functions` is a `(node, input_nr)` pair, and the node may be `None`. Remember "
        "the node objects, not their names: two different nodes can share a class name. The visited set "
        "and the result list belong to one call, so create them inside the function (a default argument is "
        "created once and shared by every call). For L = h**2 with h = w*x + b: dL/dh, then dh/dw, dh/dx, "
        "dh/db.",
        "With an explicit stack, push the children in reverse order so that the first child is popped first "
        "(pre-order); or recurse, children in order. `type(node).__name__` is the class name. For "
        "`manual_grads`: each derivative is a product of two factors, dL/dh (the same for all three) and the "
        "derivative of h with respect to that one variable, the other two held constant; forgetting the second "
        "factor is the usual slip. Return three Python floats, and check them against autograd in a scratch "
        "cell at a few points, not only at the example.",
    ],
    "es": [
        "La cinta es un grafo de objetos nodo: empieza en `t.grad_fn` y sigue `next_functions`. Basta un "
        "recorrido en profundidad que recuerde lo que ya ha visitado. En `manual_grads`, da nombre a la "
        "expresión interior y usa la regla de la cadena.",
        "Cada entrada de `next_functions` es un par `(node, input_nr)`, y el nodo puede ser `None`. Recuerda "
        "los objetos nodo, no sus nombres: dos nodos distintos pueden compartir nombre de clase. El conjunto "
        "de visitados y la lista de resultados pertenecen a una llamada, así que créalos dentro de la "
        "función (un argumento por defecto se crea una sola vez y lo comparten todas las llamadas). Para "
        "L = h**2 con h = w*x + b: dL/dh, y luego dh/dw, dh/dx, dh/db.",
        "Con una pila explícita, apila los hijos en orden inverso para que el primer hijo salga primero "
        "(preorden); o usa recursión, con los hijos en orden. `type(node).__name__` es el nombre de la "
        "clase. En `manual_grads`: cada derivada es un producto de dos factores, dL/dh (el mismo para las "
        "tres) y la derivada de h respecto a esa variable, con las otras dos fijas; olvidar el segundo factor "
        "es el descuido habitual. Devuelve tres floats de Python y contrástalos con autograd en una celda "
        "aparte en varios puntos, no solo en el del ejemplo.",
    ],
}
