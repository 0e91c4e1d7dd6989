"""Messages of ex12_checkpointing."""

EN = {
    "EX12_FORWARD_SHAPE": "checkpointed_mlp_forward returned shape {got}; expected {want} (N, d_last): logits of every row, no squeeze",
    "EX12_NO_CHECKPOINT": "the gradient of your {layers}-layer forward holds no checkpoint: wrap each layer's computation in jax.checkpoint (jax.remat)",
    "EX12_ONE_CHECKPOINT": "the gradient of your {layers}-layer forward holds one checkpoint for the whole network: its backward pass recomputes everything at once — wrap each layer in its own jax.checkpoint",
    "EX12_CHECKPOINT_COUNT": "the gradient of your {layers}-layer forward holds {got} checkpoints: wrap each layer (the output layer too) in exactly one jax.checkpoint",
    "EX12_NOT_FEWER_RESIDUALS": "with {layers} layers your checkpointed forward saves {got} residuals, the plain one {plain}: a checkpoint that saves everything (a policy like everything_saveable or dots_saveable) recomputes nothing — use jax.checkpoint's default policy",
    "EX12_RESIDUALS_MISMATCH": "saved_residual_count gave {got} for {fn}, not the number of lines print_saved_residuals prints: capture its output (contextlib.redirect_stdout into io.StringIO) and count the lines — not the jaxpr's equations",
    "EX12_TORCH_NO_GRAPH": "the output of torch_checkpointed is not on the tape: with use_reentrant=True and an input that does not require grad, checkpoint drops the graph — pass use_reentrant=False",
    "EX12_TORCH_NO_GRAD": "{what} got no gradient through torch_checkpointed: keep every block on the tape (use_reentrant=False, no .detach() between blocks)",
    "EX12_TORCH_FORWARD_ORDER": "torch_checkpointed ran the blocks' forward {calls} times for {blocks} blocks: apply each block once, in order",
    "EX12_TORCH_NO_RECOMPUTE": "no block was recomputed in the backward pass: nothing is checkpointed — wrap each block in torch.utils.checkpoint.checkpoint(block, h, use_reentrant=False)",
    "EX12_TORCH_WHOLE_CHECKPOINT": "the backward pass recomputed the whole network in forward order: you checkpointed all blocks together — checkpoint each block separately",
    "EX12_TORCH_RECOMPUTE_ORDER": "the backward pass recomputed {got} block forward(s) for {blocks} blocks, not each block once from the last one: checkpoint every block (torch.utils.checkpoint.checkpoint_sequential leaves the last one out)",
    "EX12_TORCH_NOT_FEWER": "torch_checkpointed saves {got} tensors for backward, the plain blocks {plain}: checkpoint each block, so that only block inputs are kept",
    "EX12_SAVED_MISMATCH": "torch_saved_tensor_count gave {got} for {fn}: count every call of the pack hook of torch.autograd.graph.saved_tensors_hooks while fn() runs (a tensor saved twice counts twice); do not count graph nodes",
    "EX12_FN_CALLS": "torch_saved_tensor_count called fn {calls} times: call it exactly once, inside the saved_tensors_hooks context",
    "EX12_HOOKS_BROKE_GRAPH": "after torch_saved_tensor_count the graph fn built cannot run backward ({error}): pack must return the tensor and unpack must give it back; do not run backward yourself",
}

ES = {
    "EX12_FORWARD_SHAPE": "checkpointed_mlp_forward devolvió la forma {got}; se esperaba {want} (N, d_last): los logits de cada fila, sin squeeze",
    "EX12_NO_CHECKPOINT": "el gradiente de tu pasada hacia delante de {layers} capas no contiene ningún checkpoint: envuelve el cálculo de cada capa en jax.checkpoint (jax.remat)",
    "EX12_ONE_CHECKPOINT": "el gradiente de tu pasada hacia delante de {layers} capas contiene un único checkpoint para toda la red: su pasada hacia atrás lo recalcula todo a la vez — envuelve cada capa en su propio jax.checkpoint",
    "EX12_CHECKPOINT_COUNT": "el gradiente de tu pasada hacia delante de {layers} capas contiene {got} checkpoints: envuelve cada capa (también la de salida) en exactamente un jax.checkpoint",
    "EX12_NOT_FEWER_RESIDUALS": "con {layers} capas tu pasada con checkpoints guarda {got} residuos, la normal {plain}: un checkpoint que lo guarda todo (una política como everything_saveable o dots_saveable) no recalcula nada — usa la política por defecto de jax.checkpoint",
    "EX12_RESIDUALS_MISMATCH": "saved_residual_count dio {got} para {fn}, no el número de líneas que imprime print_saved_residuals: captura su salida (contextlib.redirect_stdout a un io.StringIO) y cuenta las líneas — no las ecuaciones del jaxpr",
    "EX12_TORCH_NO_GRAPH": "la salida de torch_checkpointed no está en la cinta: con use_reentrant=True y una entrada que no requiere gradiente, checkpoint pierde el grafo — pasa use_reentrant=False",
    "EX12_TORCH_NO_GRAD": "{what} no recibió gradiente a través de torch_checkpointed: mantén todos los bloques en la cinta (use_reentrant=False, sin .detach() entre bloques)",
    "EX12_TORCH_FORWARD_ORDER": "torch_checkpointed ejecutó la pasada hacia delante de los bloques {calls} veces para {blocks} bloques: aplica cada bloque una vez, en orden",
    "EX12_TORCH_NO_RECOMPUTE": "ningún bloque se recalculó en la pasada hacia atrás: no hay nada con checkpoint — envuelve cada bloque en torch.utils.checkpoint.checkpoint(block, h, use_reentrant=False)",
    "EX12_TORCH_WHOLE_CHECKPOINT": "la pasada hacia atrás recalculó toda la red en el orden de la pasada hacia delante: pusiste un checkpoint a todos los bloques juntos — pon un checkpoint a cada bloque por separado",
    "EX12_TORCH_RECOMPUTE_ORDER": "la pasada hacia atrás recalculó {got} pasada(s) de bloques para {blocks} bloques, no cada bloque una vez empezando por el último: pon un checkpoint a cada bloque (torch.utils.checkpoint.checkpoint_sequential deja fuera el último)",
    "EX12_TORCH_NOT_FEWER": "torch_checkpointed guarda {got} tensores para la pasada hacia atrás, los bloques normales {plain}: pon un checkpoint a cada bloque, para que solo se guarden sus entradas",
    "EX12_SAVED_MISMATCH": "torch_saved_tensor_count dio {got} para {fn}: cuenta cada llamada al hook pack de torch.autograd.graph.saved_tensors_hooks mientras se ejecuta fn() (un tensor guardado dos veces cuenta dos); no cuentes nodos del grafo",
    "EX12_FN_CALLS": "torch_saved_tensor_count llamó a fn {calls} veces: llámala exactamente una vez, dentro del contexto de saved_tensors_hooks",
    "EX12_HOOKS_BROKE_GRAPH": "tras torch_saved_tensor_count el grafo que construyó fn no puede hacer la pasada hacia atrás ({error}): pack debe devolver el tensor y unpack devolverlo de nuevo; no hagas tú la pasada hacia atrás",
}
