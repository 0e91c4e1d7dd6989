"""Messages of ex10_bridge."""

EN = {
    "EX10_TREE": "`{call}` returned a dict with {got}: return exactly {{\"W\": [...], \"b\": [...]}}, one entry per nn.Linear, in order",
    "EX10_SHAPES": "`{call}` gives W shapes {got}: W[i] must be (d_in, d_out) = weight.T of the i-th nn.Linear",
    "EX10_LAYER_COUNT": "`{call}` returned {got} W arrays for a model with {expected} nn.Linear layers: take every nn.Linear in `model.modules()`, in order",
    "EX10_NO_TRANSPOSE": "`{call}`: W[{i}] has shape {got}, nn.Linear's (out, in) layout; the JAX MLP computes x @ W + b, so W[{i}] must be weight.T, of shape {expected}",
    "EX10_TORCH_SHAPES": "after `{call}` the model's parameters have shapes {got}: nn.Linear's weight is (out, in) = W.T, its bias (out,) — copy into the existing parameters (`p.copy_(...)` under torch.no_grad()), do not replace their data with another shape",
    "EX10_SHARED_MEMORY": "after training the torch model, your JAX arrays {which} changed too: they share memory with the torch tensors (jnp.from_dlpack, jax.device_put of a numpy view and torch.Tensor.numpy() can all avoid a copy) — copy, e.g. jnp.array(t.detach().cpu().numpy())",
    "EX10_NEW_PARAMETERS": "`jax_to_torch_mlp` replaced the model's parameters with new objects: an optimizer created before the copy keeps updating the old ones — copy into the existing tensors in place, `p.copy_(...)` under torch.no_grad()",
    "EX10_NO_REQUIRES_GRAD": "after `jax_to_torch_mlp` some parameters no longer require grad: they will not train — instead of turning requires_grad off to get around the in-place error, copy under `with torch.no_grad():`",
    "EX10_ON_TAPE": "after `jax_to_torch_mlp` some parameters have a grad_fn (they are no longer leaves): the copy was recorded on the tape — copy under `with torch.no_grad():`",
    "EX10_GRAD_SET": "after `jax_to_torch_mlp` some parameters have a .grad: copying weights must not run a backward pass or set gradients",
    "EX10_NOT_TRAINING": "after `jax_to_torch_mlp`, a training step with an optimizer created before the copy does not move the model's weights: keep the same parameter tensors, leaves that require grad",
    "EX10_NO_ERROR": "`jax_to_torch_mlp` accepted {case} without raising: check every layer's W and b shapes, and the number of layers, before copying, and raise ValueError(\"layer i: ...\")",
    "EX10_NOT_VALUEERROR": "`jax_to_torch_mlp` on {case} raised {got} ({message}): check the shapes yourself first and raise ValueError naming the layer, e.g. \"layer 1: expected W of shape (32, 2), got (2, 32)\"",
    "EX10_NO_LAYER_INDEX": "`jax_to_torch_mlp` on {case} raised ValueError(\"{message}\"), which does not name \"layer {index}\": name the first bad layer by its 0-based index i, as in params[\"W\"][i] (for a different number of layers, the first index present on one side only)",
    "EX10_CONV_LAYOUT": "`torch_conv_to_flax` returned a kernel of shape {got}; a Flax Conv kernel is HWIO, here {expected}: torch's weight is OIHW (out, in, kh, kw), so permute the axes to (2, 3, 1, 0)",
    "EX10_LOW_ACCURACY": "from your bridge's starting weights, the reference {framework} loop reaches only {acc:.3f} validation accuracy after {epochs} epochs (>= 0.9 expected): the weights were not moved faithfully (transpose, layer order, biases)",
}

ES = {
    "EX10_TREE": "`{call}` devolvió un dict con {got}: devuelve exactamente {{\"W\": [...], \"b\": [...]}}, una entrada por nn.Linear, en orden",
    "EX10_SHAPES": "`{call}` da formas de W {got}: W[i] debe ser (d_in, d_out) = weight.T del i-ésimo nn.Linear",
    "EX10_LAYER_COUNT": "`{call}` devolvió {got} arrays W para un modelo con {expected} capas nn.Linear: toma cada nn.Linear de `model.modules()`, en orden",
    "EX10_NO_TRANSPOSE": "`{call}`: W[{i}] tiene forma {got}, la disposición (out, in) de nn.Linear; el MLP de JAX calcula x @ W + b, así que W[{i}] debe ser weight.T, de forma {expected}",
    "EX10_TORCH_SHAPES": "tras `{call}` los parámetros del modelo tienen formas {got}: el peso de nn.Linear es (out, in) = W.T y su sesgo (out,) — copia en los parámetros existentes (`p.copy_(...)` bajo torch.no_grad()), no sustituyas sus datos por otra forma",
    "EX10_SHARED_MEMORY": "tras entrenar el modelo de torch, tus arrays de JAX {which} también cambiaron: comparten memoria con los tensores de torch (jnp.from_dlpack, jax.device_put de una vista de numpy y torch.Tensor.numpy() pueden evitar la copia) — copia, p. ej. jnp.array(t.detach().cpu().numpy())",
    "EX10_NEW_PARAMETERS": "`jax_to_torch_mlp` sustituyó los parámetros del modelo por objetos nuevos: un optimizador creado antes de la copia sigue actualizando los antiguos — copia en los tensores existentes, en el sitio, `p.copy_(...)` bajo torch.no_grad()",
    "EX10_NO_REQUIRES_GRAD": "tras `jax_to_torch_mlp` algunos parámetros ya no requieren gradiente: no se entrenarán — en lugar de desactivar requires_grad para esquivar el error de operación en el sitio, copia dentro de `with torch.no_grad():`",
    "EX10_ON_TAPE": "tras `jax_to_torch_mlp` algunos parámetros tienen grad_fn (ya no son hojas): la copia quedó grabada en la cinta — copia dentro de `with torch.no_grad():`",
    "EX10_GRAD_SET": "tras `jax_to_torch_mlp` algunos parámetros tienen .grad: copiar pesos no debe ejecutar una pasada hacia atrás ni fijar gradientes",
    "EX10_NOT_TRAINING": "tras `jax_to_torch_mlp`, un paso de entrenamiento con un optimizador creado antes de la copia no mueve los pesos del modelo: conserva los mismos tensores de parámetros, hojas que requieren gradiente",
    "EX10_NO_ERROR": "`jax_to_torch_mlp` aceptó {case} sin lanzar error: comprueba las formas de W y b de cada capa, y el número de capas, antes de copiar, y lanza ValueError(\"layer i: ...\")",
    "EX10_NOT_VALUEERROR": "`jax_to_torch_mlp` con {case} lanzó {got} ({message}): comprueba tú las formas primero y lanza ValueError nombrando la capa, p. ej. \"layer 1: expected W of shape (32, 2), got (2, 32)\"",
    "EX10_NO_LAYER_INDEX": "`jax_to_torch_mlp` con {case} lanzó ValueError(\"{message}\"), que no nombra \"layer {index}\": nombra la primera capa errónea por su índice i desde 0, como en params[\"W\"][i] (si el número de capas difiere, el primer índice presente en un solo lado)",
    "EX10_CONV_LAYOUT": "`torch_conv_to_flax` devolvió un kernel de forma {got}; el kernel de un Conv de Flax es HWIO, aquí {expected}: el peso de torch es OIHW (out, in, kh, kw), así que permuta los ejes a (2, 3, 1, 0)",
    "EX10_LOW_ACCURACY": "desde los pesos iniciales de tu puente, el bucle de referencia de {framework} solo alcanza una exactitud de validación de {acc:.3f} tras {epochs} épocas (se espera >= 0.9): los pesos no se trasladaron fielmente (transposición, orden de capas, sesgos)",
}
