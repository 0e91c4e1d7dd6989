"""Hints of ex04_jax_mlp: tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code (tests/test_i18n.py checks it)."""

HINTS: dict[str, list[str]] = {
    "en": [
        "There is no object that holds the parameters: `init_params` builds a dict of lists, and "
        "`mlp_forward` receives it as an argument. Everything a function needs comes in through its "
        "arguments; randomness comes only from the key you are given.",
        "One key per layer: split the key into as many subkeys as there are layers, and never reuse a key or "
        "do arithmetic on it. `x @ W` needs W of shape (d_in, d_out); PyTorch stores (out, in). Under "
        "`jax.jit` your function sees tracers: no numpy, no Python `if` or `float()` on array values "
        "inside `mlp_forward` or `bce_loss`.",
        "`jax.random.split`, then `jax.random.normal(subkey, shape)` scaled by the He std sqrt(2 / d_in); "
        "`jnp.zeros` for the biases; `jax.nn.relu` between layers. For the loss use `jnp.maximum`, "
        "`jnp.abs` and `jnp.log1p` on the first column of the logits. In `accuracy`, compare two boolean "
        "arrays, average them with `jnp.mean` and convert the result with `float()`.",
    ],
    "es": [
        "No hay ningún objeto que guarde los parámetros: `init_params` construye un dict de listas y "
        "`mlp_forward` lo recibe como argumento. Todo lo que necesita una función entra por sus argumentos; "
        "la aleatoriedad sale solo de la clave PRNG que recibes.",
        "Una clave PRNG por capa: divide la clave en tantas subclaves como capas, y nunca reutilices una "
        "clave ni hagas aritmética con ella. `x @ W` necesita W de forma (d_in, d_out); PyTorch guarda "
        "(out, in). Bajo `jax.jit` tu función ve trazadores: nada de numpy, ni `if` o `float()` de Python "
        "sobre valores de arrays dentro de `mlp_forward` o `bce_loss`.",
        "`jax.random.split`, luego `jax.random.normal(subclave, forma)` escalada por la desviación típica "
        "de He sqrt(2 / d_in); `jnp.zeros` para los sesgos; `jax.nn.relu` entre capas. Para la pérdida usa "
        "`jnp.maximum`, `jnp.abs` y `jnp.log1p` sobre la primera columna de los logits. En `accuracy`, "
        "compara dos arrays booleanos, promédialos con `jnp.mean` y convierte el resultado con `float()`.",
    ],
}
