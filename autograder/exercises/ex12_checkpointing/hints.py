"""Hints of ex12_checkpointing: tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code (tests/test_i18n.py checks it)."""

HINTS: dict[str, list[str]] = {
    "en": [
        "Checkpointing is a trade: keep only each block's input, and recompute the inside of the block in "
        "the backward pass. In JAX it is a transformation you apply to a function, like `jit` and `grad`; in "
        "PyTorch a function that runs a module for you. To count what is saved, JAX has a printer of "
        "residuals and PyTorch has hooks that see every tensor autograd saves.",
        "Wrap the function of *one* layer, and call it once per layer: the gradient's jaxpr then shows one "
        "checkpoint per layer (one checkpoint around the whole forward shows one). `print_saved_residuals` "
        "prints, one line per residual: capture what it prints and count the lines. In PyTorch pass "
        "`use_reentrant=False`: the old reentrant mode loses the graph when the input does not require grad. "
        "Your pack hook must return something its unpack hook turns back into the same tensor.",
        "`jax.checkpoint` works as a decorator: one small function for a hidden layer (affine map and ReLU) "
        "and one for the output layer (affine map only), both of (h, w, b), called in the loop over the "
        "layers. `contextlib.redirect_stdout` into an `io.StringIO`, then count its non-empty lines. "
        "`torch.utils.checkpoint.checkpoint(block, h, use_reentrant=False)` inside the loop over the blocks. "
        "For the count: a counter that `pack` increments (`nonlocal` in a nested function), `pack` returns "
        "the tensor, `unpack` returns what it receives, and `fn()` runs inside the hooks' `with` block.",
    ],
    "es": [
        "El checkpointing es un intercambio: guarda solo la entrada de cada bloque y recalcula su interior "
        "en la pasada hacia atrás. En JAX es una transformación que aplicas a una función, como `jit` y "
        "`grad`; en PyTorch, una función que ejecuta un módulo por ti. Para contar lo que se guarda, JAX "
        "tiene una función que imprime los residuos y PyTorch tiene hooks que ven cada tensor que guarda "
        "autograd.",
        "Envuelve la función de *una* capa y llámala una vez por capa: el jaxpr del gradiente muestra entonces "
        "un checkpoint por capa (un checkpoint alrededor de toda la pasada hacia delante muestra uno). "
        "`print_saved_residuals` imprime una línea por residuo: captura lo que imprime y cuenta las líneas. "
        "En PyTorch pasa `use_reentrant=False`: el antiguo modo reentrante pierde el grafo cuando la entrada "
        "no requiere gradiente. Tu hook pack debe devolver algo que su hook unpack convierta de nuevo en el "
        "mismo tensor.",
        "`jax.checkpoint` funciona como decorador: una función pequeña para una capa oculta (transformación "
        "afín y ReLU) y otra para la capa de salida (solo la afín), ambas de (h, w, b), llamadas en el bucle "
        "sobre las capas. `contextlib.redirect_stdout` hacia un `io.StringIO`, y después cuenta sus líneas no "
        "vacías. `torch.utils.checkpoint.checkpoint(block, h, use_reentrant=False)` dentro del bucle sobre "
        "los bloques. Para el recuento: un contador que incrementa `pack` (`nonlocal` en una función "
        "anidada), `pack` devuelve el tensor, `unpack` devuelve lo que recibe, y `fn()` se ejecuta dentro del "
        "bloque `with` de los hooks.",
    ],
}
