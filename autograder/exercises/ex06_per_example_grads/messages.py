"""Messages of ex06_per_example_grads."""

EN = {
    "EX06_NOT_VECTORISED": "the compiled program of per_example_grads grows with the batch ({small} operations for N=2, {large} for N=9): a Python loop over the examples is unrolled into the trace — write the gradient of ONE example and batch it with jax.vmap(..., in_axes=(None, 0, 0))",
    "EX06_LOOP_PRIMITIVE": "the compiled program of per_example_grads contains a `{prims}` loop: lax.map, lax.scan and fori_loop run the examples one after another — use jax.vmap, which batches the trace instead of looping",
    "EX06_HOST_CALLBACK": "per_example_grads calls back into Python from its compiled program (`{targets}`: jax.pure_callback, io_callback, jax.debug.callback or jax.debug.print): code there runs outside the program, one example after another — compute the gradients with jax.vmap inside the program, and take debug callbacks out",
    "EX06_PROGRAM_TOO_LARGE": "the compiled program of per_example_grads is too large to read (megabytes of operations): a loop over the examples is unrolled into it — use jax.vmap",
    "EX06_MUTATES": "per_example_grads changed the `params` you passed (a dict entry or list was replaced in place): never assign into the caller's pytree — build new containers (jax.tree.map) if you need converted values",
    "EX06_SECOND_CALL": "per_example_grads is wrong when called again with another loss_fn and another params pytree ({detail}) — build everything from the arguments of each call: no module-level cache or globals, no assumption on the keys of params (any pytree)",
    "EX06_TORCH_UNBATCHED": "`torch_per_example_grads` called the model on one example without its batch axis (a tensor of shape {shape}): entry i is the gradient of loss_fn(model(x[i:i+1]), y[i:i+1]) — inside vmap, give the model xi.unsqueeze(0) and the loss yi.unsqueeze(0); many models (BatchNorm, Flatten, this one) take batches only",
    "EX06_TORCH_GRAD_SET": "after torch_per_example_grads these parameters have a .grad: {names} — do not call .backward(); torch.func.grad returns the gradients and leaves .grad untouched",
    "EX06_TORCH_PARAMS_CHANGED": "torch_per_example_grads changed the model's parameters ({names}: values or requires_grad) — pass detached copies `{{n: p.detach() for n, p in model.named_parameters()}}` to functional_call and never modify the model",
    "EX06_TORCH_BACKWARD_LOOP": "{passes} backward passes went through the model's output for a batch of {n}: a loop of torch.autograd.grad over the examples of one forward is still a loop over the examples — use torch.func.vmap(torch.func.grad(f), in_dims=(None, 0, 0)) with functional_call, one batched pass",
    "EX06_TORCH_LOOP": "model.forward ran {calls} times for a batch of {n}: that is a loop over the examples — use torch.func.vmap(torch.func.grad(f), in_dims=(None, 0, 0)) with functional_call, so the model runs once on the whole batch",
    "EX06_CLIP_ZERO_NORM": "`clip_and_average` returns nan/inf when one example's gradient is all zeros (its norm is 0, e.g. a dead ReLU): a form that divides by the norm gives 0/0 there — scale example i by 1 / max(1, norm_i / max_norm), which is 1 for every norm below max_norm, 0 included",
    "ex06.what.compiled_n": '`jax.jit(per_example_grads).lower(...).compile()` for N = {n}',
    "ex06.call.zero_example": '`clip_and_average(per_example, max_norm)` with an all-zero example',
}

ES = {
    "EX06_NOT_VECTORISED": "el programa compilado de per_example_grads crece con el lote ({small} operaciones para N=2, {large} para N=9): un bucle de Python sobre los ejemplos queda desenrollado en la traza — escribe el gradiente de UN ejemplo y vectorízalo con jax.vmap(..., in_axes=(None, 0, 0))",
    "EX06_LOOP_PRIMITIVE": "el programa compilado de per_example_grads contiene un bucle `{prims}`: lax.map, lax.scan y fori_loop procesan los ejemplos uno tras otro — usa jax.vmap, que vectoriza la traza en lugar de iterar",
    "EX06_HOST_CALLBACK": "per_example_grads vuelve a Python desde su programa compilado (`{targets}`: jax.pure_callback, io_callback, jax.debug.callback o jax.debug.print): ese código se ejecuta fuera del programa, un ejemplo tras otro — calcula los gradientes con jax.vmap dentro del programa y quita los callbacks de depuración",
    "EX06_PROGRAM_TOO_LARGE": "el programa compilado de per_example_grads es demasiado grande para leerlo (megabytes de operaciones): un bucle sobre los ejemplos queda desenrollado en él — usa jax.vmap",
    "EX06_MUTATES": "per_example_grads modificó los `params` que le pasaste (se reemplazó en el sitio una entrada de un dict o una lista): nunca asignes dentro del pytree de quien llama — crea contenedores nuevos (jax.tree.map) si necesitas valores convertidos",
    "EX06_SECOND_CALL": "per_example_grads falla al llamarla de nuevo con otra loss_fn y otro pytree de parámetros ({detail}) — construye todo a partir de los argumentos de cada llamada: sin caché ni variables globales del módulo, sin suponer las claves de params (cualquier pytree)",
    "EX06_TORCH_UNBATCHED": "`torch_per_example_grads` llamó al modelo con un ejemplo sin su eje de lote (un tensor de forma {shape}): la entrada i es el gradiente de loss_fn(model(x[i:i+1]), y[i:i+1]) — dentro de vmap, pasa al modelo xi.unsqueeze(0) y a la pérdida yi.unsqueeze(0); muchos modelos (BatchNorm, Flatten, este) solo aceptan lotes",
    "EX06_TORCH_GRAD_SET": "tras torch_per_example_grads estos parámetros tienen .grad: {names} — no llames a .backward(); torch.func.grad devuelve los gradientes y no toca .grad",
    "EX06_TORCH_PARAMS_CHANGED": "torch_per_example_grads modificó los parámetros del modelo ({names}: valores o requires_grad) — pasa copias desacopladas `{{n: p.detach() for n, p in model.named_parameters()}}` a functional_call y nunca modifiques el modelo",
    "EX06_TORCH_BACKWARD_LOOP": "{passes} pasadas hacia atrás atravesaron la salida del modelo para un lote de {n}: un bucle de torch.autograd.grad sobre los ejemplos de una sola pasada hacia delante sigue siendo un bucle sobre los ejemplos — usa torch.func.vmap(torch.func.grad(f), in_dims=(None, 0, 0)) con functional_call, una sola pasada por lotes",
    "EX06_TORCH_LOOP": "model.forward se ejecutó {calls} veces para un lote de {n}: es un bucle sobre los ejemplos — usa torch.func.vmap(torch.func.grad(f), in_dims=(None, 0, 0)) con functional_call, para que el modelo se ejecute una sola vez sobre todo el lote",
    "EX06_CLIP_ZERO_NORM": "`clip_and_average` devuelve nan/inf cuando el gradiente de un ejemplo es todo ceros (su norma es 0, p. ej. una ReLU muerta): una forma que divide entre la norma da 0/0 ahí — escala el ejemplo i por 1 / max(1, norm_i / max_norm), que vale 1 para toda norma menor que max_norm, 0 incluida",
    "ex06.what.compiled_n": '`jax.jit(per_example_grads).lower(...).compile()` con N = {n}',
    "ex06.call.zero_example": '`clip_and_average(per_example, max_norm)` con un ejemplo todo a ceros',
}
