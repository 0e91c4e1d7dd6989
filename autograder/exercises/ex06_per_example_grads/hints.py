"""Hints of ex06_per_example_grads: tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code (tests/test_i18n.py checks it)."""

HINTS: dict[str, list[str]] = {
    "en": [
        "Write the gradient for ONE example, then let a transformation add the batch axis, with no loop. The "
        "jaxpr of a vectorised function is the same size for 2 examples or 2000.",
        "`jax.vmap` with `in_axes`: the params are shared (`None`), x and y are mapped over their axis 0. "
        "Inside, the single example has lost its batch axis: give it back a leading axis of size 1 before "
        "calling `loss_fn`. For clipping, compute one norm per example over all the leaves, then one scale "
        "factor per example, broadcast against each leaf.",
        "`jax.tree.leaves` lists the leaves and `jax.tree.map` rebuilds a pytree of the same structure. In "
        "PyTorch: `torch.func.functional_call(model, params_dict, (x,))` runs the model as a function of a "
        "dict of detached params, `torch.func.grad` differentiates with respect to the first argument, and "
        "`torch.func.vmap` with `in_dims` maps over the batch; `unsqueeze(0)` restores the batch axis of one "
        "example. Never call `.backward()` here.",
    ],
    "es": [
        "Escribe el gradiente de UN ejemplo y deja que una transformación añada el eje del lote, sin bucle. "
        "El jaxpr de una función vectorizada tiene el mismo tamaño para 2 ejemplos que para 2000.",
        "`jax.vmap` con `in_axes`: los parámetros se comparten (`None`), x e y se recorren por su eje 0. "
        "Dentro, el ejemplo suelto ha perdido su eje de lote: devuélvele un eje inicial de tamaño 1 antes de "
        "llamar a `loss_fn`. Para el recorte, calcula una norma por ejemplo sobre todas las hojas, luego un "
        "factor de escala por ejemplo, difundido sobre cada hoja.",
        "`jax.tree.leaves` lista las hojas y `jax.tree.map` reconstruye un pytree con la misma estructura. "
        "En PyTorch: `torch.func.functional_call(model, params_dict, (x,))` ejecuta el modelo como función "
        "de un dict de parámetros desacoplados, `torch.func.grad` deriva respecto al primer argumento y "
        "`torch.func.vmap` con `in_dims` recorre el lote; `unsqueeze(0)` devuelve el eje de lote a un "
        "ejemplo. Aquí no llames nunca a `.backward()`.",
    ],
}
