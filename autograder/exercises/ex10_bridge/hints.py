"""Hints of ex10_bridge: tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code (tests/test_i18n.py checks it)."""

HINTS: dict[str, list[str]] = {
    "en": [
        "The same model, two layouts: `nn.Linear` stores its weight as (out, in) and computes x @ weight.T + "
        "bias; the JAX MLP uses W of shape (in, out). Moving weights between the two is a transpose.",
        "Copies, not views: on CPU a numpy array made from a tensor shares its memory, and `jnp.asarray` may "
        "share it too, so later training would change your JAX arrays. In the other direction, writing into "
        "the parameters must not be recorded on the tape, and every shape is checked before anything is "
        "copied, with a message that names the layer's index.",
        "Collect the `nn.Linear` layers from `model.modules()` with `isinstance`. `.detach().cpu().numpy()`, "
        "then an explicit copy (`np.array` copies) as float32. Write into parameters inside a "
        "`torch.no_grad()` block with the in-place `copy_`; raise `ValueError` with a message like "
        "\"layer 1: expected (32, 2), got (2, 32)\". For the conv kernel, `transpose` takes the list of "
        "OIHW axes in the order HWIO wants them.",
    ],
    "es": [
        "El mismo modelo, dos disposiciones: `nn.Linear` guarda su peso como (out, in) y calcula "
        "x @ weight.T + bias; el MLP de JAX usa W de forma (in, out). Pasar los pesos de uno a otro es una "
        "trasposición.",
        "Copias, no vistas: en CPU un array de numpy hecho a partir de un tensor comparte su memoria, y "
        "`jnp.asarray` también puede compartirla, así que entrenar después cambiaría tus arrays de JAX. En "
        "la otra dirección, escribir en los parámetros no debe quedar grabado en la cinta, y todas las formas "
        "se comprueban antes de copiar nada, con un mensaje que nombre el índice de la capa.",
        "Reúne las capas `nn.Linear` de `model.modules()` con `isinstance`. `.detach().cpu().numpy()`, y "
        "luego una copia explícita (`np.array` copia) en float32. Escribe en los parámetros dentro de un "
        "bloque `torch.no_grad()` con el `copy_` en el sitio; lanza `ValueError` con un mensaje como "
        "\"layer 1: expected (32, 2), got (2, 32)\". Para el kernel de la convolución, `transpose` recibe "
        "la lista de ejes OIHW en el orden en que los quiere HWIO.",
    ],
}
