'''Ejercicio 12 — checkpointing de gradientes: cambiar memoria por recálculo, en los dos frameworks.

Para derivar, los dos frameworks guardan valores de la pasada hacia delante para
la pasada hacia atrás: PyTorch *guarda tensores* en la cinta (cada nodo guarda lo
que necesita su pasada hacia atrás), JAX *guarda residuos* cuando divide la
traza en una parte hacia delante y otra hacia atrás. En una red profunda esos
valores guardados son la mayor parte de la memoria del entrenamiento. El
checkpointing (rematerialización) guarda solo la entrada de cada bloque y
recalcula su interior durante la pasada hacia atrás: menos memoria, una pasada
hacia delante más de cálculo.
    - JAX: `jax.checkpoint(f)` (alias `jax.remat`) marca `f`: el jaxpr del
      gradiente contiene entonces una ecuación de checkpoint (su primitiva se
      llama `remat`/`checkpoint`, según la versión de JAX) cuyo cuerpo se
      recalcula en la pasada hacia atrás.
      `jax.ad_checkpoint.print_saved_residuals(f, *args)` imprime una línea
      por cada residuo que JAX guarda para derivar `f` en `args`.
    - PyTorch: `torch.utils.checkpoint.checkpoint(block, h,
      use_reentrant=False)` ejecuta `block` sin guardar su interior y lo vuelve
      a ejecutar cuando la pasada hacia atrás lo necesita.
      `torch.autograd.graph.saved_tensors_hooks(pack, unpack)` llama a
      `pack(tensor)` por cada tensor que autograd guarda mientras el contexto
      está activo (y a `unpack` cuando la pasada hacia atrás lo recupera).
Pon un checkpoint a *cada bloque*: un único checkpoint alrededor de toda la red
guarda todavía menos, pero su pasada hacia atrás recalcula toda la red y
mantiene todos sus valores a la vez, justo lo que el checkpointing quería
evitar.

Qué construir:
    - `checkpointed_mlp_forward(params, x)`: el `mlp_forward` del ejercicio 04
      (`params = {"W": [...], "b": [...]}`, `W[i]` de forma
      `(d_i, d_{i+1})`, ReLU entre capas, logits a la salida, `(N, d_last)`)
      con cada capa (la transformación afín, más su ReLU en las ocultas)
      envuelta en `jax.checkpoint`. Los mismos valores y gradientes que
      `mlp_forward`; pura y compatible con jit; el jaxpr del gradiente contiene
      una ecuación de checkpoint por capa, y guarda menos residuos que
      `mlp_forward` con 3 capas o más.
    - `saved_residual_count(f, *args)`: cuántos residuos guarda JAX para
      derivar `f` en `args`: el número de entradas que lista
      `jax.ad_checkpoint.print_saved_residuals(f, *args)` (las imprime:
      captura lo que imprime con `contextlib.redirect_stdout`).
    - `torch_checkpointed(blocks, x)`: aplica los bloques (una secuencia de
      `nn.Module`) en orden, cada uno mediante
      `torch.utils.checkpoint.checkpoint(block, h, use_reentrant=False)`.
      La misma salida y los mismos gradientes de los parámetros que al
      aplicarlos sin más, y menos tensores guardados para la pasada hacia
      atrás. (`use_reentrant=True`, el antiguo valor por defecto, pierde los
      gradientes cuando la entrada no requiere gradiente.)
    - `torch_saved_tensor_count(fn)`: llama a `fn()` (que construye un grafo y
      devuelve un tensor) bajo `saved_tensors_hooks` y devuelve cuántos
      tensores empaquetó autograd, como int de Python. Los hooks deben
      devolver cada tensor sin cambios: el grafo que construyó `fn` tiene que
      poder hacer todavía la pasada hacia atrás.

Ejemplo:
    >>> saved_residual_count(lambda x: jnp.sin(jnp.cos(x)), jnp.ones(3))
    2
    >>> saved_residual_count(jax.checkpoint(lambda x: jnp.sin(jnp.cos(x))), jnp.ones(3))
    1
    >>> a = torch.ones(3, requires_grad=True)
    >>> torch_saved_tensor_count(lambda: (a * a).sum())
    2
'''

# Spanish instructions of ex12_checkpointing: the module docstring above is the student's instructions (the
# solution's module docstring in Spanish: same layout, code identifiers, shapes and `>>>` examples
# unchanged); DOCSTRINGS holds each def/class docstring of the stub, by qualified name, without
# indentation (autograder.student.instructions_es.localize_stub indents them). Terms: docs/glossary.md.

DOCSTRINGS: dict[str, str] = {
    "checkpointed_mlp_forward": """Los logits del MLP, con cada capa envuelta en ``jax.checkpoint``.

Args:
    params: ``{"W": [W0, W1, ...], "b": [b0, b1, ...]}``, ``W[i]`` de forma ``(d_i, d_{i+1})``.
    x: entradas, ``(N, d_0)``.

Returns:
    Logits, ``(N, d_last)``.""",
    "saved_residual_count": """El número de residuos que guarda JAX para derivar ``f`` en ``args``.

Args:
    f: una función de arrays (pytrees de arrays) con salidas array.
    *args: sus argumentos.

Returns:
    Cuántas entradas lista ``jax.ad_checkpoint.print_saved_residuals(f, *args)``.""",
    "torch_checkpointed": """Aplica ``blocks`` en orden, cada uno con checkpoint.

Args:
    blocks: los módulos, aplicados como ``h = block(h)``.
    x: la entrada.

Returns:
    La salida del último bloque, en la cinta.""",
    "torch_saved_tensor_count": """Cuántos tensores guarda autograd para la pasada hacia atrás mientras se ejecuta ``fn()``.

Args:
    fn: construye un grafo y devuelve un tensor.

Returns:
    El número de tensores empaquetados por ``saved_tensors_hooks`` durante la llamada.""",
}

# Fingerprint of the English docstrings these translations follow: tests/test_i18n.py fails when the
# English changes (`python -m autograder.student.instructions_es` prints the current ones).
SOURCE_SHA = "a69f3552a998"
