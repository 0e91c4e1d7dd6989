"""Tiered hints for the exercises, in English and Spanish.

Tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code: ``tests/test_i18n.py``
checks that no code line of a ``# BEGIN SOLUTION`` region (that is not already
in the public stub) appears in any hint.

    >>> hint("ex05")          # tier 1, default language
    >>> hint("ex05", 2)       # tier 2
    >>> hint("ex05", 3, "es") # tier 3, in Spanish
"""

from __future__ import annotations

from autograder.student import get_language

HINTS: dict[str, dict[str, list[str]]] = {
    "en": {
        "ex01_torch_mlp": [
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
        "ex02_torch_training": [
            "Training in PyTorch is a sequence of side effects: `backward()` *adds* gradients into each "
            "parameter's `.grad`, the optimizer changes the parameters in place, and `train()` / `eval()` flip a "
            "flag that layers read. The order of the calls is the whole exercise.",
            "For the loss, never evaluate `exp` of a large positive number: split z into its positive part and "
            "`-|z|`, as in the formula. For `evaluate`, the evaluation mode and the no-graph context are two "
            "different things, and you need both. The returned numbers are Python floats, not tensors.",
            "`torch.clamp(..., min=0)` is max(z, 0) and `torch.log1p(t)` is log(1 + t), accurate for small t. "
            "Clear the old gradients with the optimizer's `zero_grad` method *before* `backward`. `.item()` "
            "turns a 0-d tensor into a float. In `fit`, create the `torch.optim.Adam` optimizer once, before "
            "the epochs, not inside the loop.",
        ],
        "ex03_torch_cnn": [
            "Follow the list of layers in the instructions literally: the order in which you create them in "
            "`__init__` is the order of `parameters()`, and the grader copies weights in that order.",
            "Follow the shapes: (N, 1, 8, 8) -> a 3x3 conv with padding 1 keeps 8x8 -> pooling halves it to 4x4 "
            "-> conv -> pooling to 2x2, with 32 channels: 32 * 2 * 2 = 128 features reach the first `nn.Linear`. "
            "Flattening keeps the batch axis.",
            "Dropout must be a module created in `__init__` (`nn.Dropout`), so that `model.train()` and "
            "`model.eval()` switch it on and off; the functional `F.dropout` with its default `training=True` "
            "stays on in eval mode. `nn.Sequential` keeps the order of the layers for you, and `nn.Flatten()` "
            "flattens everything but the batch axis.",
        ],
        "ex04_jax_mlp": [
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
        "ex05_jit_train_step": [
            "A JAX train step is a pure function: it receives the params and the optimizer state and returns new "
            "ones, plus the loss. `jax.jit` traces the Python function once per input shape and reuses the "
            "compiled code afterwards, so the jitted function must be built once, in `make_train_step`, and "
            "returned.",
            "One transformation gives you both the loss and the gradients at the old params. The optax optimizer "
            "turns the gradients into updates and a new state; another optax function adds the updates to the "
            "params. Nothing is modified in place: you return the new values.",
            "`jax.value_and_grad(loss_fn)`, then the optimizer's `update(grads, opt_state, params)`, then "
            "`optax.apply_updates`. Wrap the inner step function with `jax.jit` inside `make_train_step`, never "
            "inside a call of the step. In `fit`: `optax.adam(learning_rate)`, its `init(params)`, and `float()` "
            "on each loss as you store it.",
        ],
        "ex06_per_example_grads": [
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
        "ex07_flax_cnn": [
            "Flax is channels-last: images are (N, H, W, C) and conv kernels (kH, kW, in, out). Change the layout "
            "of the data, with `to_nhwc`, before it enters the model, never inside the model.",
            "With `@nn.compact` you create the layers inline inside `__call__`; Flax names them automatically in "
            "call order (Conv_0, Conv_1, Dense_0, Dense_1). Flax pooling has stride 1 by default (PyTorch's "
            "stride is the window): pass `strides`. A `reshape` gives the right shape with scrambled pixels: "
            "use a transpose.",
            "`nn.avg_pool` with window (2, 2) and `strides=(2, 2)`; flatten with a reshape that keeps "
            "`x.shape[0]`. For the step: a loss function of the params that calls `model.apply` and takes the "
            "mean of `optax.softmax_cross_entropy_with_integer_labels`; `jax.value_and_grad`, the optimizer's "
            "`update`, `optax.apply_updates`, all in one function compiled with `jax.jit` that "
            "`make_flax_train_step` returns.",
        ],
        "ex08_jax_transforms": [
            "JAX transformations take a function and return a function, so they compose: the derivative of a "
            "derivative is `jax.grad` applied again. And the jaxpr is the trace: what `jax.make_jaxpr` prints is "
            "exactly what `jax.jit` compiles.",
            "Under `jax.jit` the key and the branch choice are tracers: a Python `if` on them fails, and "
            "`jnp.where` computes both branches. A control-flow primitive picks one branch at run time. For "
            "`count_ops`, the jaxpr holds a list of equations; count only the top level. For `dropout`, the same "
            "key must give the same mask.",
            "`jax.lax.cond(pred, true_fn, false_fn, *operands)` with the predicate from `jax.random.bernoulli`. "
            "`jax.make_jaxpr(f)(*args)` returns a ClosedJaxpr: its `.jaxpr.eqns` are the equations. In `dropout`, "
            "draw the keep-mask with `jax.random.bernoulli` at probability `1 - rate` and the shape of x, and "
            "divide what you keep by `1 - rate`; `rate = 0` must return x unchanged.",
        ],
        "ex09_autograd_tape": [
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
            "`manual_grads`: dL/dh = 2h, dh/dw = x, dh/dx = w, dh/db = 1; return three Python floats, and check "
            "the example (0.5, 2.0, 0.3) -> (5.2, 1.3, 2.6) against autograd in a scratch cell.",
        ],
        "ex10_bridge": [
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
        "ex11_torch_compile": [
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
        "ex12_checkpointing": [
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
        "ex13_spmd": [
            "SPMD: one program, many devices, each working on its own piece of the data. With GSPMD you do not "
            "write per-device code: you describe how arrays are laid out over a mesh of devices and `jax.jit` "
            "partitions the step (and adds the communication). With `shard_map` you write the code of one device "
            "and the communication yourself.",
            "A 1-D mesh over the first n devices with its axis named \"data\"; a `NamedSharding` with "
            "`PartitionSpec(\"data\")` splits an array's leading axis over that axis, `PartitionSpec()` "
            "replicates it. The step takes replicated params and state and a split batch, and gives replicated "
            "results back: `jax.jit` can be told both (`in_shardings`, `out_shardings`). Inside `shard_map` each "
            "device's loss covers only its shard: average it across the devices with a collective over "
            "\"data\".",
            "`jax.make_mesh` takes the mesh shape, the axis names and `devices=`; `jax.device_put` places an "
            "array with a sharding. Write exercise 05's step unchanged and jit it with one sharding per argument "
            "and per output. For the loss: an inner function of (params, x_shard, y_shard) that returns "
            "`jax.lax.pmean` of `loss_fn` over \"data\", mapped with `jax.shard_map(..., mesh=mesh, "
            "in_specs=(P(), P(\"data\"), P(\"data\")), out_specs=P())`.",
        ],
    },
    "es": {
        "ex01_torch_mlp": [
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
        "ex02_torch_training": [
            "Entrenar en PyTorch es una secuencia de efectos secundarios: `backward()` *suma* gradientes en el "
            "`.grad` de cada parámetro, el optimizador modifica los parámetros en el sitio y `train()` / `eval()` "
            "cambian un indicador que leen las capas. El orden de las llamadas es todo el ejercicio.",
            "En la pérdida, nunca calcules `exp` de un número positivo grande: separa z en su parte positiva y "
            "`-|z|`, como en la fórmula. En `evaluate`, el modo de evaluación y el contexto sin grafo son dos "
            "cosas distintas, y necesitas ambas. Los números devueltos son floats de Python, no tensores.",
            "`torch.clamp(..., min=0)` es max(z, 0) y `torch.log1p(t)` es log(1 + t), precisa para t pequeño. "
            "Borra los gradientes anteriores con el método `zero_grad` del optimizador *antes* de `backward`. "
            "`.item()` convierte un tensor 0-d en un float. En `fit`, crea el optimizador `torch.optim.Adam` una "
            "sola vez, antes de las épocas, no dentro del bucle.",
        ],
        "ex03_torch_cnn": [
            "Sigue al pie de la letra la lista de capas de las instrucciones: el orden en que las creas en "
            "`__init__` es el orden de `parameters()`, y el corrector copia los pesos en ese orden.",
            "Sigue las formas: (N, 1, 8, 8) -> una convolución 3x3 con padding 1 mantiene 8x8 -> el pooling la "
            "reduce a 4x4 -> convolución -> pooling a 2x2, con 32 canales: 32 * 2 * 2 = 128 características "
            "llegan al primer `nn.Linear`. Aplanar conserva el eje del lote.",
            "El dropout debe ser un módulo creado en `__init__` (`nn.Dropout`), para que `model.train()` y "
            "`model.eval()` lo enciendan y apaguen; la función `F.dropout` con su `training=True` por defecto "
            "sigue activa en modo eval. `nn.Sequential` mantiene el orden de las capas por ti, y `nn.Flatten()` "
            "aplana todo salvo el eje del lote.",
        ],
        "ex04_jax_mlp": [
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
        "ex05_jit_train_step": [
            "Un paso de entrenamiento en JAX es una función pura: recibe los parámetros y el estado del "
            "optimizador y devuelve otros nuevos, además de la pérdida. `jax.jit` traza la función de Python una "
            "vez por forma de entrada y después reutiliza el código compilado, así que la función compilada se "
            "construye una sola vez, en `make_train_step`, y se devuelve.",
            "Una sola transformación te da a la vez la pérdida y los gradientes en los parámetros antiguos. El "
            "optimizador de optax convierte los gradientes en actualizaciones y un estado nuevo; otra función "
            "de optax suma las actualizaciones a los parámetros. Nada se modifica en el sitio: devuelves los "
            "valores nuevos.",
            "`jax.value_and_grad(loss_fn)`, luego el `update(grads, opt_state, params)` del optimizador y luego "
            "`optax.apply_updates`. Envuelve la función interna del paso con `jax.jit` dentro de "
            "`make_train_step`, nunca dentro de una llamada al paso. En `fit`: `optax.adam(learning_rate)`, su "
            "`init(params)` y `float()` sobre cada pérdida al guardarla.",
        ],
        "ex06_per_example_grads": [
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
        "ex07_flax_cnn": [
            "Flax es canales al final: las imágenes son (N, H, W, C) y los kernels de convolución (kH, kW, in, "
            "out). Cambia la disposición de los datos, con `to_nhwc`, antes de que entren en el modelo, nunca "
            "dentro del modelo.",
            "Con `@nn.compact` creas las capas en línea dentro de `__call__`; Flax las nombra automáticamente en "
            "orden de llamada (Conv_0, Conv_1, Dense_0, Dense_1). El pooling de Flax tiene paso 1 por defecto "
            "(en PyTorch el paso es la ventana): pasa `strides`. Un `reshape` da la forma correcta con los "
            "píxeles revueltos: usa una trasposición.",
            "`nn.avg_pool` con ventana (2, 2) y `strides=(2, 2)`; aplana con un reshape que conserve "
            "`x.shape[0]`. Para el paso: una función de pérdida de los parámetros que llama a `model.apply` y "
            "toma la media de `optax.softmax_cross_entropy_with_integer_labels`; `jax.value_and_grad`, el "
            "`update` del optimizador, `optax.apply_updates`, todo en una función compilada con `jax.jit` que "
            "devuelve `make_flax_train_step`.",
        ],
        "ex08_jax_transforms": [
            "Las transformaciones de JAX reciben una función y devuelven una función, así que se componen: la "
            "derivada de una derivada es `jax.grad` aplicada otra vez. Y el jaxpr es la traza: lo que imprime "
            "`jax.make_jaxpr` es exactamente lo que compila `jax.jit`.",
            "Bajo `jax.jit` la clave PRNG y la elección de rama son trazadores: un `if` de Python sobre ellos "
            "falla, y `jnp.where` calcula las dos ramas. Una primitiva de control de flujo elige una rama en "
            "tiempo de ejecución. En `count_ops`, el jaxpr guarda una lista de ecuaciones; cuenta solo el nivel "
            "superior. En `dropout`, la misma clave debe dar la misma máscara.",
            "`jax.lax.cond(pred, true_fn, false_fn, *operands)` con el predicado de `jax.random.bernoulli`. "
            "`jax.make_jaxpr(f)(*args)` devuelve un ClosedJaxpr: su `.jaxpr.eqns` son las ecuaciones. En "
            "`dropout`, sortea la máscara de elementos conservados con `jax.random.bernoulli` con probabilidad "
            "`1 - rate` y la forma de x, y divide lo que conservas entre `1 - rate`; `rate = 0` debe devolver x "
            "sin cambios.",
        ],
        "ex09_autograd_tape": [
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
            "clase. En `manual_grads`: dL/dh = 2h, dh/dw = x, dh/dx = w, dh/db = 1; devuelve tres floats de "
            "Python, y contrasta el ejemplo (0.5, 2.0, 0.3) -> (5.2, 1.3, 2.6) con autograd en una celda aparte.",
        ],
        "ex10_bridge": [
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
        "ex11_torch_compile": [
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
        "ex12_checkpointing": [
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
        "ex13_spmd": [
            "SPMD: un programa, muchos dispositivos, cada uno con su parte de los datos. Con GSPMD no escribes "
            "código por dispositivo: describes cómo se disponen los arrays sobre una malla de dispositivos y "
            "`jax.jit` reparte el paso (y añade la comunicación). Con `shard_map` escribes el código de un "
            "dispositivo y también la comunicación.",
            "Una malla 1-D sobre los n primeros dispositivos, con su eje llamado \"data\"; un `NamedSharding` con "
            "`PartitionSpec(\"data\")` divide el eje inicial de un array sobre ese eje, `PartitionSpec()` lo "
            "replica. El paso recibe params y estado replicados y un lote dividido, y devuelve resultados "
            "replicados: a `jax.jit` se le pueden indicar ambas cosas (`in_shardings`, `out_shardings`). Dentro "
            "de `shard_map` la pérdida de cada dispositivo cubre solo su fragmento: promédiala entre los "
            "dispositivos con un colectivo sobre \"data\".",
            "`jax.make_mesh` recibe la forma de la malla, los nombres de los ejes y `devices=`; `jax.device_put` "
            "coloca un array con un sharding. Escribe el paso del ejercicio 05 sin cambios y compílalo con jit "
            "con un sharding por argumento y por salida. Para la pérdida: una función interna de (params, "
            "x_shard, y_shard) que devuelva `jax.lax.pmean` de `loss_fn` sobre \"data\", aplicada con "
            "`jax.shard_map(..., mesh=mesh, in_specs=(P(), P(\"data\"), P(\"data\")), out_specs=P())`.",
        ],
    },
}

# The curriculum's exercises, in order (the same tuple as autograder._paths.EXERCISES, which does not ship
# to students; tests/test_i18n.py checks they agree).
EXERCISES: tuple[str, ...] = tuple(HINTS["en"])

_LABEL = {"en": "Hint {tier}/{n} — {exercise}", "es": "Pista {tier}/{n} — {exercise}"}
_BAD_TIER = {
    "en": "{exercise} has {n} hints: ask for tier 1 to {n}",
    "es": "{exercise} tiene {n} pistas: pide un nivel del 1 al {n}",
}


_UNKNOWN = {
    "en": "unknown exercise {name!r}: expected one of {choices}",
    "es": "ejercicio desconocido {name!r}: elige uno de {choices}",
}


def resolve_exercise(exercise: str, lang: str | None = None) -> str:
    """Full exercise name from a short one: ``"ex05"``, ``"5"`` or ``"ex05_jit_train_step"``.

    Raises:
        ValueError: the name matches no exercise (message in ``lang``, default: the notebook's).
    """
    name = str(exercise).strip()
    if name.isdigit():
        name = f"ex{int(name):02d}"
    for full in EXERCISES:
        if name == full or full.startswith(name + "_"):
            return full
    raise ValueError(_UNKNOWN[get_language(lang)].format(name=exercise, choices=", ".join(e[:4] for e in EXERCISES)))


class Hint(str):
    """A hint: a ``str`` that renders as Markdown in Jupyter/Colab and as plain text elsewhere."""

    def __repr__(self) -> str:
        return str(self)

    def _repr_markdown_(self) -> str:
        head, _, body = str(self).partition("\n")
        return f"**{head}**\n\n{body}"


def hint(exercise: str, tier: int = 1, lang: str | None = None) -> str:
    """One hint for an exercise.

    Args:
        exercise: ``"ex05"`` or the full name ``"ex05_jit_train_step"``.
        tier: 1 (a nudge toward the concept) to 3 (a pointed remark about the API).
        lang: ``"en"`` or ``"es"``; default: the language set with ``set_language``
            (English unless the notebook set it).

    Returns:
        The hint as a string (displays as Markdown in a notebook).

    Raises:
        ValueError: unknown exercise, language or tier.
    """
    lang = get_language(lang)
    full = resolve_exercise(exercise, lang)
    tiers = HINTS[lang][full]
    if not isinstance(tier, int) or isinstance(tier, bool) or not 1 <= tier <= len(tiers):
        raise ValueError(_BAD_TIER[lang].format(exercise=full, n=len(tiers)))
    head = _LABEL[lang].format(tier=tier, n=len(tiers), exercise=full)
    return Hint(f"{head}\n{tiers[tier - 1]}")
