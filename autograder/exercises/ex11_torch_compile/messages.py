"""Messages of ex11_torch_compile."""

EN = {
    "EX11_CLIP_SHAPE": "clip_by_norm returned shape {got} for an input of shape {want}: scale x by one number (the global norm is over all elements), keep its shape",
    "EX11_CLIP_IN_PLACE": "clip_by_norm changed its input x in place: return a new tensor (x * scale), never x.mul_(...) or x[...] = ...",
    "EX11_CLIP_ZEROS": "clip_by_norm of a tensor of zeros must give zeros (finite): dividing by a zero norm gives nan — divide max_norm by max(norm, max_norm) instead, with torch.clamp",
    "EX11_CLIP_DETACHED": "the output of clip_by_norm is not connected to x on the tape: compute it with tensor operations on x (no .detach(), no torch.tensor(...) of values)",
    "EX11_GRAPH_BREAK": "torch.compile(clip_by_norm, fullgraph=True) refused your function ({error}): a Python `if` on a tensor's value (such as `if x.norm() > max_norm:`) is a graph break — compute the scale with tensor operations (torch.clamp, torch.minimum, torch.where)",
    "EX11_REPORT_SWAPPED": "graph_report returned the two counts in the wrong order for {fn}: return (graph_count, graph_break_count)",
    "EX11_REPORT_MISMATCH": "graph_report gave {got} for {fn}, not what torch._dynamo.explain reports: call torch._dynamo.explain(fn)(*args) and return its graph_count and graph_break_count",
    "EX11_ANY_BATCH_NOT_COMPILED": "compile_for_any_batch captured no graph with the backend it was given: return torch.compile(model, backend=backend, ...), not the model itself, and use the backend argument",
    "EX11_ANY_BATCH_RECOMPILES": "your compiled model captured {graphs} graphs in {calls} calls (a recompile at call {at}, a new batch size): the default automatic dynamic compiles again on the second shape — ask for dynamic shapes from the first compile (dynamic=True, or torch._dynamo.mark_dynamic(x, 0))",
    "EX11_STEP_NOT_COMPILED": "the first step captured no graph: compile the function that computes the forward and the loss with torch.compile(..., backend=backend) and call it in step",
    "EX11_STEP_REWRAPS": "step called torch.compile {calls} more time(s) in {steps} later calls: Dynamo's cache hides the cost here, but each call builds a new compiled wrapper — call torch.compile once, in compiled_train_step, and let step reuse it",
    "EX11_STEP_RECOMPILES": "step captured {graphs} new graph(s) in {steps} later calls with the same shapes: something the graph depends on changes between calls (a Python number, a new function) — compile one function once and pass tensors to it",
    "EX11_LOSS_NOT_CALLED": "step never called the loss_fn it was given: compute loss_fn(model(x), y) with that function",
    "EX11_LOSS_EAGER": "the loss is computed outside the compiled graph (only the model is compiled): compile one function that returns loss_fn(model(x), y)",
    "EX11_LOSS_AFTER_UPDATE": "your step returns the loss *after* the update: return the loss computed by the forward pass, before optimizer.step()",
}

ES = {
    "EX11_CLIP_SHAPE": "clip_by_norm devolvió la forma {got} para una entrada de forma {want}: escala x por un único número (la norma global es sobre todos los elementos) y conserva su forma",
    "EX11_CLIP_IN_PLACE": "clip_by_norm modificó su entrada x en el sitio: devuelve un tensor nuevo (x * scale), nunca x.mul_(...) ni x[...] = ...",
    "EX11_CLIP_ZEROS": "clip_by_norm de un tensor de ceros debe dar ceros (finitos): dividir por una norma cero da nan — divide max_norm por max(norm, max_norm), con torch.clamp",
    "EX11_CLIP_DETACHED": "la salida de clip_by_norm no está conectada a x en la cinta: calcúlala con operaciones de tensores sobre x (sin .detach() ni torch.tensor(...) de valores)",
    "EX11_GRAPH_BREAK": "torch.compile(clip_by_norm, fullgraph=True) rechazó tu función ({error}): un `if` de Python sobre el valor de un tensor (como `if x.norm() > max_norm:`) es una ruptura del grafo — calcula la escala con operaciones de tensores (torch.clamp, torch.minimum, torch.where)",
    "EX11_REPORT_SWAPPED": "graph_report devolvió los dos recuentos en el orden equivocado para {fn}: devuelve (graph_count, graph_break_count)",
    "EX11_REPORT_MISMATCH": "graph_report dio {got} para {fn}, distinto de lo que informa torch._dynamo.explain: llama a torch._dynamo.explain(fn)(*args) y devuelve su graph_count y su graph_break_count",
    "EX11_ANY_BATCH_NOT_COMPILED": "compile_for_any_batch no capturó ningún grafo con el backend que recibió: devuelve torch.compile(model, backend=backend, ...), no el propio modelo, y usa el argumento backend",
    "EX11_ANY_BATCH_RECOMPILES": "tu modelo compilado capturó {graphs} grafos en {calls} llamadas (una recompilación en la llamada {at}, con un tamaño de lote nuevo): el modo dinámico automático por defecto vuelve a compilar con la segunda forma — pide formas dinámicas desde la primera compilación (dynamic=True, o torch._dynamo.mark_dynamic(x, 0))",
    "EX11_STEP_NOT_COMPILED": "el primer paso no capturó ningún grafo: compila la función que calcula la pasada hacia delante y la pérdida con torch.compile(..., backend=backend) y llámala en step",
    "EX11_STEP_REWRAPS": "step llamó a torch.compile {calls} vez/veces más en {steps} llamadas posteriores: la caché de Dynamo oculta aquí el gasto, pero cada llamada construye un envoltorio compilado nuevo — llama a torch.compile una sola vez, en compiled_train_step, y deja que step lo reutilice",
    "EX11_STEP_RECOMPILES": "step capturó {graphs} grafo(s) nuevo(s) en {steps} llamadas posteriores con las mismas formas: algo de lo que depende el grafo cambia entre llamadas (un número de Python, una función nueva) — compila una función una sola vez y pásale tensores",
    "EX11_LOSS_NOT_CALLED": "step nunca llamó a la loss_fn que recibió: calcula loss_fn(model(x), y) con esa función",
    "EX11_LOSS_EAGER": "la pérdida se calcula fuera del grafo compilado (solo está compilado el modelo): compila una función que devuelva loss_fn(model(x), y)",
    "EX11_LOSS_AFTER_UPDATE": "tu paso devuelve la pérdida *después* de la actualización: devuelve la pérdida calculada en la pasada hacia delante, antes de optimizer.step()",
}
