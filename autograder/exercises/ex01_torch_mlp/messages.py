"""Messages of ex01_torch_mlp."""

EN = {
    "EX01_PARAM_SHAPES": "`{call}` gives shapes {got}; expected one nn.Linear per layer, in order: weight (out, in) then bias (out,) — create the layers in forward order and register them (nn.ModuleList, not a Python list)",
    "EX01_LOGITS": "your output is never negative while logits should be: remove the ReLU/sigmoid after the last layer — return raw logits",
    "EX01_NO_HIDDEN_RELU": "`{call}` gives exactly what the layers give with no activation at all: a ReLU must follow every layer except the last (without it, stacked nn.Linear layers collapse into one linear map)",
    "EX01_NO_GRAPH": "the output of `forward` has no grad_fn: do not use torch.no_grad(), .detach() or .data inside forward",
    "EX01_NO_GRAD": "a parameter got no gradient: every nn.Linear must be used in forward, and registered as a submodule",
    "EX01_FIXED_DEVICE": "`forward` failed after model.to(device) ({error}): do not create tensors on a fixed device inside forward",
    "EX01_DEVICE_OUT": "after model.to(\"meta\") your output is on {got}: build everything from the input and the layers",
    "EX01_SEQUENCE": "`MLP(input_dim, hidden_dims, output_dim)` with hidden_dims given as a tuple raised {error}: hidden_dims may be any sequence of ints (a list, a tuple) — build the list of widths with [input_dim, *hidden_dims, output_dim] or list(hidden_dims) instead of adding lists to it",
}

ES = {
    "EX01_PARAM_SHAPES": "`{call}` da las formas {got}; se esperaba un nn.Linear por capa, en orden: peso (out, in) y luego sesgo (out,) — crea las capas en el orden del forward y regístralas (nn.ModuleList, no una lista de Python)",
    "EX01_LOGITS": "tu salida nunca es negativa, pero los logits deberían poder serlo: quita la ReLU/sigmoide tras la última capa — devuelve logits sin activar",
    "EX01_NO_HIDDEN_RELU": "`{call}` da exactamente lo que dan las capas sin ninguna activación: después de cada capa salvo la última va una ReLU (sin ella, varias nn.Linear seguidas se reducen a una sola transformación lineal)",
    "EX01_NO_GRAPH": "la salida de `forward` no tiene grad_fn: no uses torch.no_grad(), .detach() ni .data dentro de forward",
    "EX01_NO_GRAD": "un parámetro no recibió gradiente: cada nn.Linear debe usarse en forward y estar registrado como submódulo",
    "EX01_FIXED_DEVICE": "`forward` falló tras model.to(device) ({error}): no crees tensores en un dispositivo fijo dentro de forward",
    "EX01_DEVICE_OUT": "tras model.to(\"meta\") tu salida está en {got}: construye todo a partir de la entrada y las capas",
    "EX01_SEQUENCE": "`MLP(input_dim, hidden_dims, output_dim)` con hidden_dims dado como tupla lanzó {error}: hidden_dims puede ser cualquier secuencia de ints (una lista, una tupla) — construye la lista de anchos con [input_dim, *hidden_dims, output_dim] o list(hidden_dims) en lugar de sumarle listas",
}
