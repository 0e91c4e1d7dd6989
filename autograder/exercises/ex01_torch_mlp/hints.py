"""Hints of ex01_torch_mlp: tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code (tests/test_i18n.py checks it)."""

HINTS: dict[str, list[str]] = {
    "en": [
        "A PyTorch model is an object that owns its layers. Whatever module you create in `__init__` and "
        "store on `self` is registered: `parameters()` lists it, in creation order, and `.to(device)` moves it. "
        "Think of the widths input_dim, then each hidden width, then output_dim: each consecutive pair is "
        "one `nn.Linear`.",
        "A plain Python list of layers is invisible to PyTorch: the layers in it are not registered, so "
        "`parameters()` misses them and the optimizer never sees them. You need a container that is itself "
        "a module, because `hidden_dims` has a variable length (it may be empty).",
        "`nn.ModuleList` holds a variable number of layers. In `forward`, apply `torch.relu` after every layer "
        "except the last and return the last layer's output as it is: logits, no sigmoid. Build nothing with "
        "`device=` inside `forward`.",
    ],
    "es": [
        "Un modelo de PyTorch es un objeto que posee sus capas. Todo módulo que creas en `__init__` y "
        "guardas en `self` queda registrado: `parameters()` lo lista, en orden de creación, y `.to(device)` "
        "lo mueve. Piensa en los anchos input_dim, luego cada ancho oculto y luego output_dim: cada par "
        "consecutivo es un `nn.Linear`.",
        "Una lista de Python con capas es invisible para PyTorch: sus capas no se registran, así que "
        "`parameters()` no las ve y el optimizador nunca las actualiza. Necesitas un contenedor que sea a su "
        "vez un módulo, porque `hidden_dims` tiene longitud variable (puede estar vacía).",
        "`nn.ModuleList` guarda un número variable de capas. En `forward`, aplica `torch.relu` tras cada capa "
        "salvo la última y devuelve la salida de la última tal cual: logits, sin sigmoide. No construyas "
        "nada con `device=` dentro de `forward`.",
    ],
}
