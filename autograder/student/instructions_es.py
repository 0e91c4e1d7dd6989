"""Spanish student instructions, and the notebook's fixed texts in both languages.

- ``INSTRUCTIONS_ES[exercise]``: the Spanish version of ``solutions/<exercise>.py``'s
  module docstring (the student's instructions), same layout, with code
  identifiers, shapes and the ``>>>`` example unchanged.
- ``DOCSTRINGS_ES[exercise][qualname]``: the Spanish version of each function /
  class docstring of the stub (``"MLP"``, ``"MLP.forward"``, ...), without
  indentation (``localize_stub`` indents them).
- ``localize_stub(source, exercise, lang)``: a stub's source with every docstring
  and the ``# YOUR CODE HERE`` marker in ``lang``; code unchanged.
- ``instructions(exercise, lang)``: the instructions text in either language.
- ``NOTEBOOK_TEXT[lang][key]``: the notebook's fixed texts.
- ``SOURCE_SHA[exercise]``: fingerprint of the English docstrings these
  translations follow; ``tests/test_i18n.py`` fails when the English text
  changes, so the Spanish cannot silently fall behind
  (``python -m autograder.student.instructions_es`` prints the current ones).

Terminology follows ``docs/glossary.md``.
"""

from __future__ import annotations

import ast
import hashlib
from pathlib import Path

INSTRUCTIONS_ES: dict[str, str] = {
    "ex01_torch_mlp": """Ejercicio 01 — escribe un `nn.Module` (PyTorch: la cinta).

Construye un perceptrón multicapa como un `nn.Module` de PyTorch. En PyTorch un
modelo es un *objeto que posee sus parámetros*: las capas `nn.Linear` creadas en
`__init__` registran sus pesos, y `forward` solo dice cómo fluyen los datos.
Autograd graba cada operación en una cinta mientras se ejecuta `forward`, así
que nunca escribes la pasada hacia atrás. (En JAX, ejercicio 04, el mismo modelo
es una función pura de un pytree de parámetros explícito.)

Qué construir:
    - `len(hidden_dims) + 1` capas `nn.Linear`: input_dim -> h1 -> ... -> output_dim.
    - ReLU tras cada capa salvo la última; la salida son logits (sin sigmoide).
    - `hidden_dims` puede estar vacía: entonces el modelo es un único `nn.Linear`.
    - `[p.shape for p in model.parameters()]` debe ser, en orden,
      `(h1, input_dim), (h1,), (h2, h1), (h2,), ..., (output_dim, h_last), (output_dim,)`.
    - `forward` debe funcionar tras `model.to(device)`: no crees tensores en un
      dispositivo fijo dentro de `forward`.

Ejemplo:
    >>> model = MLP(2, [32, 32], 1)
    >>> model(torch.zeros(5, 2)).shape
    torch.Size([5, 1])
""",
    "ex02_torch_training": """Ejercicio 02 — el bucle de entrenamiento explícito (PyTorch: la cinta).

Escribe las cuatro piezas de un bucle de entrenamiento de PyTorch. En PyTorch
entrenar es una secuencia de *efectos secundarios*: `loss.backward()` suma
gradientes en el `.grad` de cada parámetro (se acumulan hasta que los pones a
cero), `optimizer.step()` actualiza los parámetros en el sitio, y
`model.train()` / `model.eval()` cambian un indicador que leen capas como
Dropout. (En JAX, ejercicio 05, un paso es una función pura que devuelve
parámetros nuevos y un estado del optimizador nuevo.)

Qué construir:
    - `bce_with_logits(logits, targets)`: la media sobre todos los elementos de
      `max(z, 0) - z*y + log(1 + exp(-|z|))` con `z = logits`, `y = targets`.
      Esta forma nunca calcula `exp` de un número positivo grande, así que sigue
      siendo finita para |z| hasta 1e4 (una fórmula ingenua
      `-(y*log(sigmoid(z)) + ...)` da inf/nan ahí). No llames a
      `F.binary_cross_entropy_with_logits` ni a `nn.BCEWithLogitsLoss`: el
      corrector lo detecta. Devuelve un tensor 0-d que autograd pueda derivar.
    - `train_step(model, optimizer, x, y, loss_fn)`: `model.train()`, pon a cero
      los gradientes, pasada hacia delante, `loss = loss_fn(model(x), y)`,
      `loss.backward()`, `optimizer.step()`. Devuelve la pérdida calculada
      *antes* de la actualización como un float de Python (`loss.item()`), no
      como tensor.
    - `evaluate(model, x, y, loss_fn)`: `model.eval()`, y luego bajo
      `torch.no_grad()` (no se construye ningún grafo) devuelve
      `(pérdida media, exactitud)` como dos floats de Python, con exactitud =
      media de `(sigmoid(logits) >= 0.5) == y`.
    - `fit(model, x, y, *, epochs, lr)`: crea
      `torch.optim.Adam(model.parameters(), lr=lr)` y haz `epochs` llamadas a
      `train_step` con el lote completo y `bce_with_logits`; devuelve la lista
      de las pérdidas de cada época (floats de Python).

Formas: `x` es `(N, d)`; `y` tiene la forma de la salida del modelo (`(N, 1)`
para un clasificador binario) y contiene floats 0./1.

Ejemplo:
    >>> model = torch.nn.Linear(2, 1)
    >>> losses = fit(model, torch.randn(64, 2), torch.ones(64, 1), epochs=3, lr=0.01)
    >>> len(losses), type(losses[0])
    (3, <class 'float'>)
""",
    "ex03_torch_cnn": """Ejercicio 03 — una CNN, canales primero (PyTorch: la cinta).

Construye una pequeña red convolucional para las imágenes 8x8 de `load_digits`
como un `nn.Module` de PyTorch. Las imágenes de PyTorch son *canales primero*:
un lote es `(N, C, H, W)`, así que los dígitos llegan como `(N, 1, 8, 8)`, y al
aplanar un mapa de características `(N, 32, 2, 2)` se obtienen las 128
características en orden de canal (todo el canal 0, luego el canal 1, ...). El
dropout se activa con un indicador guardado en el módulo: `model.train()` lo
enciende y `model.eval()` lo apaga. (En Flax, ejercicio 07, las imágenes son
canales al final `(N, H, W, C)` y el dropout se controla con un argumento
`deterministic` más una clave PRNG explícita.)

Qué construir, en este orden:
    Conv2d(1, 16, 3, padding=1), ReLU, MaxPool2d(2),      # (N, 16, 4, 4)
    Conv2d(16, 32, 3, padding=1), ReLU, MaxPool2d(2),     # (N, 32, 2, 2)
    Flatten,                                              # (N, 128)
    Linear(128, 64), ReLU, Dropout(dropout),
    Linear(64, num_classes)                               # (N, num_classes) logits

    - `[p.shape for p in model.parameters()]` debe ser, en orden,
      `(16, 1, 3, 3), (16,), (32, 16, 3, 3), (32,), (64, 128), (64,),
      (num_classes, 64), (num_classes,)`: crea las capas en el orden del forward.
    - Usa los argumentos `num_classes` y `dropout` (por defecto 10 y 0.3).
    - La salida son logits (sin softmax).
    - En modo `eval()` la salida es determinista; en modo `train()` el dropout
      pone a cero unidades ocultas al azar (usa `nn.Dropout`, que lee el
      indicador; `F.dropout(x, p)` sin `training=self.training` siempre está
      activo).

Ejemplo:
    >>> model = CNN(num_classes=10, dropout=0.3).eval()
    >>> model(torch.zeros(5, 1, 8, 8)).shape
    torch.Size([5, 10])
""",
    "ex04_jax_mlp": """Ejercicio 04 — funciones puras y pytrees (JAX: la traza).

Construye otra vez el MLP de make_moons, ahora en JAX puro. Aquí no hay ningún
objeto módulo: los parámetros son un pytree explícito, un simple dict de listas
de arrays,

    params = {"W": [W0, W1, ...], "b": [b0, b1, ...]},   W[i]: (d_i, d_{i+1}),  b[i]: (d_{i+1},)

y el modelo es una *función pura* `mlp_forward(params, x)`: su salida depende
solo de sus argumentos, y no cambia nada fuera de sí misma.

¿Por qué pura? PyTorch (ejercicio 01) graba una *cinta* mientras tu código de
Python se ejecuta sobre números reales, así que vale cualquier Python. JAX, en
cambio, *traza* tu función: `jax.jit`, `jax.grad` y `jax.vmap` la llaman una vez
con trazadores abstractos (forma y dtype, sin valores), graban las operaciones
en un jaxpr y después compilan o transforman ese registro. Así que dentro de
estas funciones:
    - usa `jax.numpy` (`jnp`) y `jax.nn`, nunca `numpy` sobre las entradas
      (`np.asarray(tracer)` falla bajo jit);
    - nada de `if`/`float()` de Python sobre valores de arrays;
    - nunca modifiques el dict params ni sus listas (nada de `.pop()` ni de
      asignación de elementos), y no leas ni escribas variables globales: un
      efecto secundario se ejecuta una vez, al trazar, no en cada llamada;
    - la aleatoriedad sale de una clave PRNG explícita: divídela, una subclave
      por capa.

Qué construir:
    - `init_params(layer_dims, key)`: `W[i]` de forma `(d_i, d_{i+1})` sorteada
      He-normal (media 0, desviación típica `sqrt(2 / d_i)`; una normal simple
      escalada por esa desviación, o `jax.nn.initializers.he_normal()`),
      float32; `b[i]` ceros; una subclave distinta por capa
      (`jax.random.split`); la misma clave da los mismos parámetros. Debe
      funcionar con `jax.random.PRNGKey(0)` y con la clave tipada más nueva
      `jax.random.key(0)` (no hagas aritmética con claves).
    - `mlp_forward(params, x)`: `(N, d_0)` -> `(N, d_last)` logits, ReLU entre
      capas, ninguna tras la última.
    - `bce_loss(params, x, y)`: `y` es `(N,)` de floats 0/1; la media de la
      entropía cruzada binaria estable `max(z, 0) - z*y + log(1 + exp(-|z|))`
      sobre `z = mlp_forward(params, x)[:, 0]`. Debe seguir siendo finita y
      correcta para |z| hasta 1e4 (recortar probabilidades no basta).
    - `accuracy(params, x, y)`: la fracción de filas donde
      `(z >= 0) == (y == 1)`, devuelta como un `float` de Python.

Ejemplo:
    >>> params = init_params([2, 32, 32, 1], jax.random.PRNGKey(0))
    >>> [w.shape for w in params["W"]]
    [(2, 32), (32, 32), (32, 1)]
    >>> mlp_forward(params, jnp.zeros((5, 2))).shape
    (5, 1)
""",
    "ex05_jit_train_step": """Ejercicio 05 — compila el paso (JAX: traza una vez, ejecuta muchas).

Escribe el paso de entrenamiento del MLP de JAX (ejercicio 04) y compílalo con
`jax.jit`; después úsalo en un bucle de entrenamiento.

Cinta frente a traza. Un paso de PyTorch (ejercicio 02) ejecuta tu Python en
cada llamada: cada operación se ejecuta al momento y se graba en la cinta de
autograd, `backward()` recorre la cinta hacia atrás y `optimizer.step()`
cambia los parámetros en el sitio. Un paso de JAX compilado con jit ejecuta tu
Python *una vez por forma de entrada*: la primera llamada lo traza con
trazadores abstractos en un jaxpr, XLA lo compila en un único programa
fusionado, y cada llamada posterior con las mismas formas y dtypes ejecuta el
programa compilado sin tocar tu Python. Consecuencias:
    - construye la función compilada una sola vez (en `make_train_step`) y
      reutilízala; un `jax.jit(...)` de una función nueva dentro de `step`
      vuelve a trazar y a compilar en cada llamada;
    - un efecto secundario de Python (un print, un contador) dentro del paso se
      ejecuta solo al trazar — las pruebas ocultas cuentan las trazas así;
    - una forma de lote nueva provoca exactamente una traza nueva; no marques
      como argumentos estáticos valores que cambian;
    - nada se actualiza en el sitio: el estado del optimizador es un valor
      explícito (`optimizer.init(params)`), y el paso devuelve parámetros y
      estado nuevos.

Qué construir:
    - `make_train_step(loss_fn, optimizer)` devuelve un
      `step(params, opt_state, x, y) -> (params, opt_state, loss)` compilado con
      jit, donde `loss = loss_fn(params, x, y)` en los parámetros *antiguos*
      (usa `jax.value_and_grad`), seguido de
      `optimizer.update(grads, opt_state, params)` y `optax.apply_updates`. Debe
      funcionar con cualquier optimizador de optax (sgd, momentum, adam, ...:
      usa el que recibes), compilar una sola vez para llamadas repetidas con las
      mismas formas, y no modificar sus entradas (nada de actualizaciones en el
      sitio del dict params, nada de `donate_argnums`).
    - `fit(params, x, y, *, steps, learning_rate, loss_fn)`: `optax.adam(learning_rate)`,
      un paso creado con `make_train_step`, llamado `steps` veces sobre el
      `(x, y)` completo; devuelve `(final_params, losses)` con `losses` una
      lista de `steps` floats de Python (la pérdida antes de cada
      actualización). En make_moons, `fit(init_params([2, 32, 32, 1], key), x, y, steps=300,
      learning_rate=0.01, loss_fn=bce_loss)` alcanza una exactitud de
      validación >= 0.9.
    - Este módulo no debe importar tu ejercicio 04: la función de pérdida llega
      como argumento.

Ejemplo:
    >>> step = make_train_step(bce_loss, optax.sgd(0.1))
    >>> opt_state = optax.sgd(0.1).init(params)
    >>> params, opt_state, loss = step(params, opt_state, x, y)   # traces + compiles
    >>> params, opt_state, loss = step(params, opt_state, x, y)   # runs the compiled program
""",
    "ex06_per_example_grads": """Ejercicio 06 — gradientes por ejemplo con `vmap` (JAX: la traza; PyTorch: torch.func).

`jax.grad(loss_fn)(params, x, y)` da el gradiente de la pérdida del *lote*. La
privacidad diferencial (DP-SGD) y muchos diagnósticos necesitan en cambio un
gradiente *por ejemplo*. En JAX escribes el gradiente de UN ejemplo y dejas que
`jax.vmap` lo convierta en una función por lotes: vmap es una transformación
de la traza, así que el jaxpr de tu función tiene el mismo tamaño para 2
ejemplos que para 2000 — no se ejecuta ningún bucle, el lote es solo un eje
inicial en cada array. Un bucle `for` de Python da los mismos números pero
despliega N copias en la traza; `jax.lax.map` conserva una copia pero es un
`scan` que procesa los ejemplos uno tras otro. Ambos pierden la prueba de
vectorización.

La cinta de PyTorch graba una pasada hacia atrás por cada llamada a
`.backward()`, así que el bucle ingenuo por ejemplo llama a `.backward()` N
veces. `torch.func` trae el estilo de JAX a PyTorch:
`functional_call(model, params, (x,))` ejecuta el modelo como función pura de
un dict de parámetros, `torch.func.grad` lo deriva sin tocar `.grad`, y
`torch.func.vmap` lo vectoriza sobre el lote.

Qué construir:
    - `per_example_grads(loss_fn, params, x, y)`: `loss_fn(params, xb, yb)`
      es una pérdida escalar de un lote (p. ej. `bce_loss` del ejercicio 04).
      Devuelve un pytree con la forma de `params` cuyas hojas tienen un eje
      inicial N, donde la entrada i es
      `jax.grad(loss_fn)(params, x[i:i+1], y[i:i+1])`. Usa `jax.vmap` (ni bucle
      de Python, ni `lax.map`/`scan`/`fori_loop`); mantenla pura: sin globales,
      sin caché entre llamadas, sin modificar `params`; también debe funcionar
      dentro de `jax.jit`.
    - `clip_and_average(per_example, max_norm)`: gradientes por ejemplo como
      los devuelve la función anterior (cualquier pytree, hojas `(N, ...)`).
      Para cada ejemplo i, `norm_i` es la norma L2 global sobre TODAS sus
      hojas; escala el ejemplo i por `1 / max(1, norm_i / max_norm)` (así las
      normas por encima de `max_norm` se reducen a `max_norm` y las menores no
      cambian); devuelve la media sobre los ejemplos, un pytree con la forma
      del gradiente de un ejemplo.
    - `torch_per_example_grads(model, loss_fn, x, y)`: `loss_fn(out, target)`
      es una pérdida escalar de un lote. Devuelve
      `{name: tensor de forma (N, *p.shape)}` para
      `name, p in model.named_parameters()`, con la entrada i igual al
      gradiente de `loss_fn(model(x[i:i+1]), y[i:i+1])`. Usa
      `torch.func.functional_call`, `torch.func.grad` y `torch.func.vmap` (el
      modelo se ejecuta una vez sobre el lote, no N veces). Deja intactos los
      parámetros del modelo y su `.grad`.

Ejemplo:
    >>> g = per_example_grads(bce_loss, params, x, y)   # x: (N, d)
    >>> [w.shape for w in g["W"]]
    [(N, 2, 32), (N, 32, 32), (N, 32, 1)]
    >>> clip_and_average(g, 1.0)["W"][0].shape
    (2, 32)
""",
    "ex07_flax_cnn": """Ejercicio 07 — una CNN en Flax: canales al final, y un paso de entrenamiento compilado (JAX: la traza).

Construye otra vez la CNN de dígitos del ejercicio 03, esta vez como un módulo
`linen` de Flax, y escribe un paso de entrenamiento que `jax.jit` compile una
sola vez.

Dos diferencias con PyTorch que conviene tener presentes:

- **Canales al final.** Las imágenes de PyTorch son `(N, C, H, W)` y los
  kernels de `Conv2d` son `(out, in, kH, kW)` ("OIHW"). Las imágenes de Flax
  son `(N, H, W, C)` y los kernels de `nn.Conv` son `(kH, kW, in, out)`
  ("HWIO"). Los datos dispuestos para PyTorch deben trasponerse con `to_nhwc`
  antes de entrar en el modelo — un `reshape` da la forma correcta con los
  píxeles revueltos. El paso (stride) del pooling de Flax vale 1 por defecto
  (el de PyTorch, el tamaño de la ventana): pasa `strides`.
- **Cinta frente a traza.** Un paso de PyTorch se ejecuta al momento y graba
  una cinta en cada llamada. Un paso de JAX compilado con jit se *traza* una
  vez por forma de entrada: Python ejecuta tu función con valores abstractos,
  XLA compila el resultado, y las llamadas posteriores con las mismas formas
  reutilizan el código compilado sin volver a ejecutar tu Python. Así que
  `make_flax_train_step` debe construir la función compilada una sola vez y
  devolverla (no compilar con jit dentro de cada llamada, ni saltarse jit).

Qué construir:
    - `FlaxCNN(num_classes=10)`: con `@nn.compact`, en este orden:
      `nn.Conv(16, (3, 3), padding="SAME")`, relu,
      `nn.avg_pool(x, (2, 2), strides=(2, 2))`,
      `nn.Conv(32, (3, 3), padding="SAME")`, relu, el mismo avg_pool,
      aplanar a `(N, 128)`, `nn.Dense(64)`, relu, `nn.Dense(num_classes)`.
      Entrada `(N, 8, 8, 1)`, salida logits `(N, num_classes)`. Los nombres
      automáticos dan `params["Conv_0"]["kernel"]` de forma `(3, 3, 1, 16)`,
      `Conv_1` `(3, 3, 16, 32)`, `Dense_0` `(128, 64)`, `Dense_1`
      `(64, num_classes)`, cada uno con un `bias`.
    - `to_nhwc(x)`: `(N, C, H, W)` -> `(N, H, W, C)`; recibe un array de numpy
      o de JAX y devuelve un array de JAX.
    - `make_flax_train_step(model, optimizer)`: devuelve un
      `step(params, opt_state, x, y) -> (params, opt_state, loss)` compilado con
      jit, donde `params` es el dict completo que devuelve `model.init`
      (`{"params": ...}`), `x` es `(N, 8, 8, 1)`, `y` son etiquetas enteras
      `(N,)`, y `loss` es la media de
      `optax.softmax_cross_entropy_with_integer_labels(model.apply(params, x), y)`
      en los parámetros *antes* de la actualización. Funciona con cualquier
      optimizador de optax.

Ejemplo:
    >>> model = FlaxCNN(num_classes=10)
    >>> variables = model.init(jax.random.key(0), jnp.zeros((1, 8, 8, 1)))
    >>> variables["params"]["Conv_0"]["kernel"].shape
    (3, 3, 1, 16)
    >>> to_nhwc(np.zeros((5, 1, 8, 8), np.float32)).shape
    (5, 8, 8, 1)
    >>> optimizer = optax.adam(1e-3)
    >>> step = make_flax_train_step(model, optimizer)
    >>> x, y = jnp.zeros((5, 8, 8, 1)), jnp.zeros(5, jnp.int32)
    >>> variables, opt_state, loss = step(variables, optimizer.init(variables), x, y)
""",
    "ex08_jax_transforms": """Ejercicio 08 — grad de grad, `lax.cond`, jaxprs y claves explícitas (JAX: la traza).

PyTorch graba una cinta *mientras tu código se ejecuta*: los `if` de Python, los
bucles y el generador aleatorio global simplemente ocurren, y la cinta recuerda
las operaciones que se ejecutaron. JAX, en cambio, *traza* tu función una vez
en un jaxpr (un pequeño programa de ecuaciones primitivas) y transforma o
compila ese programa. Cuatro consecuencias, una función cada una:

Qué construir:
    - `nth_derivative(f, n)`: `f` lleva un escalar a un escalar; devuelve la
      función que calcula su derivada n-ésima anidando `jax.grad` n veces
      (`n = 0` devuelve la propia `f`). `jax.grad` devuelve una función, así
      que el resultado se compone: debe funcionar también bajo `jax.jit` (nada
      de `float()` ni de numpy dentro).
    - `coin_net(x, key, w1, w2)`: sortea `branch = jax.random.bernoulli(key)`
      (p = 0.5, exactamente con la clave que recibes); devuelve
      `relu(x @ w1)` si `branch` y si no `sigmoid(x @ w2)`, usando
      `jax.lax.cond`. Bajo `jax.jit` la clave es un trazador, así que `branch`
      no tiene valor de Python: un `if branch:` de Python lanza
      TracerBoolConversionError. `jnp.where(branch, a, b)` funciona pero
      calcula las dos ramas; `lax.cond` pone un `cond` en el jaxpr.
      `x`: `(N, d)`; `w1`, `w2`: `(d, h)`; salida `(N, h)`.
    - `count_ops(f, *args)`: el número de ecuaciones del jaxpr de nivel
      superior de `jax.make_jaxpr(f)(*args)` (su `.jaxpr.eqns`). Un `cond`, un
      `scan` o una llamada a una función compilada con jit es UNA ecuación, por
      grande que sea el sub-jaxpr que contiene.
    - `dropout(x, rate, key)`: dropout invertido con una clave PRNG explícita:
      cada elemento se conserva con probabilidad `1 - rate` y se escala por
      `1 / (1 - rate)`, y si no se pone a 0 (`0 <= rate < 1`). Misma clave ->
      misma salida; `rate = 0` devuelve `x` sin cambios. En JAX no hay estado
      aleatorio global: no uses `np.random` (el `nn.Dropout` de PyTorch usa el
      generador global de torch; aquí la clave es el estado).

Ejemplo:
    >>> nth_derivative(jnp.sin, 2)(0.5)         # -sin(0.5)
    Array(-0.47942555, dtype=float32, weak_type=True)
    >>> count_ops(lambda x: jnp.sin(x) * 2.0, 1.0)
    2
    >>> dropout(jnp.ones(4), 0.5, jax.random.PRNGKey(0))   # entries are 0.0 or 2.0
""",
    "ex09_autograd_tape": """Ejercicio 09 — la cinta de PyTorch.

Mientras se ejecuta una pasada hacia delante, el autograd de PyTorch graba cada
operación en una *cinta*: cada tensor resultado recibe un `grad_fn`, un nodo del
grafo hacia atrás, y `grad_fn.next_functions` apunta a los nodos que
produjeron sus entradas. `loss.backward()` recorre ese grafo desde la pérdida
hasta las hojas, donde los nodos `AccumulateGrad` suman el gradiente en
`leaf.grad`. El grafo se construye de nuevo en cada pasada hacia delante y se
libera tras `backward()`. (JAX no guarda ninguna cinta: `jax.grad` traza tu
función en un jaxpr y deriva la traza, ejercicio 08.)

Parte 1 — `backward_graph(t)`: lista lo que hay en la cinta.
    - Devuelve los nombres de clase (`type(node).__name__`) de los nodos
      alcanzables desde `t.grad_fn`, en preorden en profundidad: un nodo, y
      luego cada uno de sus hijos en el orden de `next_functions` (cada entrada
      es un par `(node, input_nr)`; el nodo puede ser `None` para una entrada
      que no necesita gradiente: sáltalo).
    - Cada nodo aparece una vez, aunque sea alcanzable por varios caminos (una
      subexpresión compartida, una hoja usada dos veces): recuerda los nodos
      que ya has visitado — los objetos nodo, no sus nombres.
    - Los nodos `AccumulateGrad` (uno por cada hoja que requiere gradiente) se
      incluyen.
    - Un tensor sin `grad_fn` (una hoja, o un resultado calculado bajo
      `torch.no_grad()`) da `[]`.
    - Las llamadas repetidas dan la misma respuesta: no guardes estado entre
      llamadas. Cuidado con `def walk(node, visited=set())`: un argumento por
      defecto se crea una sola vez, cuando se ejecuta `def`, y lo comparten
      todas las llamadas posteriores.

Parte 2 — `manual_grads(w, x, b)`: haz la pasada hacia atrás a mano.
    - Para `L = (w*x + b)**2`, devuelve `(dL/dw, dL/dx, dL/db)` como una tupla de
      tres floats de Python, calculados con la forma cerrada y la regla de la
      cadena. No uses diferenciación automática (ni `backward`,
      `torch.autograd.grad`, `jax.grad`, ni ningún tensor con
      `requires_grad=True`) dentro de esta función.
    - La Figura 2 de la fuente etiqueta dL/dw como 2.6 en (w, x, b) = (0.5, 2.0, 0.3);
      el ejemplo de abajo dice 5.2. Antes de fiarte de cualquier derivación a
      mano (la de la figura o la tuya), contrástala con autograd en una celda
      aparte, no dentro de `manual_grads`:
          w = torch.tensor(0.5, requires_grad=True)
          L = (w * 2.0 + 0.3) ** 2
          L.backward(); w.grad
      y después encuentra el factor que olvidó la figura. El corrector evalúa
      tus fórmulas en puntos aleatorios, así que los números del ejemplo por sí
      solos no puntúan.

Ejemplo:
    >>> w = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> backward_graph((w * 3.0).sum())
    ['SumBackward0', 'MulBackward0', 'AccumulateGrad']
    >>> manual_grads(0.5, 2.0, 0.3)
    (5.2, 1.3, 2.6)
""",
    "ex10_bridge": """Ejercicio 10 — el mismo modelo en los dos frameworks.

Un modelo de PyTorch *posee* sus pesos (parámetros dentro de `nn.Module`s,
grabados en la cinta cuando se usan); un modelo de JAX es una función pura de
un pytree que le pasas. Mover los pesos de uno a otro es sobre todo
contabilidad, pero hay tres detalles que muerden:

    - Disposición. `nn.Linear(d_in, d_out)` guarda `weight` como `(d_out, d_in)` y
      calcula `x @ weight.T + bias`; el MLP de JAX del ejercicio 04 calcula
      `x @ W + b` con `W` de forma `(d_in, d_out)`. Las convoluciones también
      difieren: el `Conv2d.weight` de torch es OIHW (out, in, kh, kw) sobre
      imágenes NCHW, un kernel de `Conv` de Flax es HWIO (kh, kw, in, out)
      sobre imágenes NHWC.
    - Memoria. En CPU, torch y numpy (y algunos caminos de JAX: `jax.device_put`,
      `jnp.from_dlpack`) pueden compartir un mismo búfer. Se supone que los
      arrays de JAX son inmutables, pero entrenar el modelo de torch actualiza
      sus tensores *en el sitio*: un array que comparte su memoria cambia sin
      que lo notes. Copia.
    - La cinta. Escribir en un parámetro que requiere gradiente es una
      operación que autograd grabaría (y que rechaza, en el sitio, sobre una
      hoja). Copia bajo `torch.no_grad()`, dentro de los parámetros existentes,
      para que sigan siendo hojas que requieren gradiente y un optimizador
      creado antes los siga viendo.

Qué construir:
    - `torch_mlp_to_jax(model)`: las capas `nn.Linear` de `model`, en orden
      (`model.modules()`), como `{"W": [weight.T, ...], "b": [bias, ...]}` de
      `jax.Array`s float32 que poseen su memoria, de modo que
      `mlp_forward(torch_mlp_to_jax(m), x)` sea igual a `m(x)`.
    - `jax_to_torch_mlp(params, model)`: copia `params` en las capas
      `nn.Linear` de `model`, en el sitio, sin grabar en la cinta; devuelve
      None. Antes de copiar nada, comprueba cada capa: si una forma no
      coincide, lanza `ValueError` nombrando la primera capa errónea por su
      índice i empezando en 0 (como en `params["W"][i]`), p. ej.
      "layer 1: expected W of shape (32, 2), got (2, 32)". Si el número de
      capas difiere, lanza `ValueError` dando los dos números, p. ej.
      "the model has 3 nn.Linear layers, params has 2".
    - `torch_conv_to_flax(weight)`: un `Conv2d.weight` (OIHW) como kernel de
      Flax (HWIO), un `jax.Array` float32.

Con esto, unos mismos pesos iniciales entrenan en los dos frameworks: el bucle
de PyTorch del ejercicio 02 y el paso de JAX compilado con jit del ejercicio
05 dan casi las mismas pérdidas en los primeros pasos (el redondeo de float32
difiere y luego se acumula) y ambos alcanzan una exactitud de validación
>= 0.9 en make_moons.

Ejemplo:
    >>> model = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    >>> [w.shape for w in torch_mlp_to_jax(model)["W"]]
    [(2, 3), (3, 1)]
    >>> torch_conv_to_flax(nn.Conv2d(1, 16, 3).weight).shape
    (3, 3, 1, 16)
""",
    "ex11_torch_compile": '''Ejercicio 11 — la traza propia de PyTorch: captura del grafo, rupturas del grafo, recompilaciones.

`torch.compile` es la respuesta opcional de PyTorch a `jax.jit` (ejercicio 05).
Su primera etapa, TorchDynamo, lee el bytecode de Python de tu función mientras
se ejecuta y *captura* las operaciones con tensores en un grafo FX, que compila
un backend ("inductor" por defecto; "eager" ejecuta el grafo capturado tal
cual, y "aot_eager" además traza por adelantado la pasada hacia atrás). Las
diferencias con la traza de JAX son la lección:
    - donde Dynamo no puede seguir (un `if` de Python sobre el valor de un
      tensor, `.item()`, un `print`), no falla: termina el grafo, ejecuta ese
      trozo en Python normal y empieza un grafo nuevo después — una *ruptura
      del grafo*. `fullgraph=True` convierte una ruptura del grafo en un error;
    - cada grafo compilado está protegido por los hechos que supuso (formas,
      dtypes, valores de Python); una llamada que rompe una guarda *recompila*.
      Por defecto un tamaño de lote nuevo compila una vez más con un eje de
      lote dinámico ("automatic dynamic"); `dynamic=True` (o
      `torch._dynamo.mark_dynamic`) pide formas dinámicas desde la primera
      compilación;
    - la cinta sigue funcionando: la pasada hacia delante compilada queda en
      la cinta (con "aot_eager" o "inductor", como un nodo por grafo cuya
      pasada hacia atrás se trazó por adelantado), y `loss.backward()` pasa
      por ella.
El corrector pasa `backend="eager"` o `backend="aot_eager"` (el inductor por
defecto necesita un compilador de C++ y segundos por grafo): usa siempre el
`backend` que recibes.

Qué construir:
    - `clip_by_norm(x, max_norm)`: `x * min(1, max_norm / ||x||)`, con la norma
      L2 sobre *todos* los elementos de `x` (`x` de ceros da ceros); un tensor
      derivable con la forma de `x`. Escríbela sin una rama de Python sobre el
      valor de un tensor (el `if x.norm() > max_norm:` de la fuente es una
      ruptura del grafo), para que `torch.compile(clip_by_norm, fullgraph=True,
      backend="eager")` la acepte; y mantén la escala como tensor (`.item()` o
      `float(...)` la convierten en una constante que la cinta no puede
      derivar).
    - `graph_report(fn, *args)`: `(graph_count, graph_break_count)` de
      `torch._dynamo.explain(fn)(*args)`, como una tupla de dos ints de Python.
    - `compile_for_any_batch(model, backend)`: una versión compilada de `model`
      (las mismas salidas que `model(x)`) que compila como mucho una vez para
      cualquier secuencia de tamaños de lote (mayores que el ancho de la
      entrada: Dynamo trata de forma especial los tamaños 0 y 1, y un tamaño
      de lote igual a otro tamaño de la entrada): formas dinámicas desde la
      primera llamada. El modo dinámico automático por defecto compila una
      segunda vez con el segundo tamaño de lote, y no supera esa prueba.
    - `compiled_train_step(model, optimizer, loss_fn, backend)`: devuelve
      `step(x, y) -> float`, que hace lo mismo que `train_step` del ejercicio
      02 (`model.train()`, poner a cero los gradientes, pasada hacia delante,
      `loss_fn(model(x), y)`, `backward()`, `optimizer.step()`, devolver la
      pérdida anterior a la actualización como float de Python), con la pasada
      hacia delante y la pérdida calculadas por una función compilada con
      `torch.compile(..., backend=backend)`. Compílala una vez, en
      `compiled_train_step`, no dentro de `step`: las llamadas repetidas con
      las mismas formas no capturan ningún grafo nuevo ni vuelven a llamar a
      `torch.compile`. Tras 3 pasos los parámetros coinciden con los del
      `train_step` en modo eager.

Ejemplo:
    >>> x = torch.full((2, 2), 3.0)
    >>> clip_by_norm(x, 1.5)
    tensor([[0.7500, 0.7500],
            [0.7500, 0.7500]])
    >>> graph_report(clip_by_norm, x, 1.5)
    (1, 0)
    >>> step = compiled_train_step(model, torch.optim.SGD(model.parameters(), lr=0.1),
    ...                            torch.nn.functional.mse_loss, backend="eager")
    >>> loss = step(x, y)   # captures the graph; later calls reuse it
''',
    "ex12_checkpointing": '''Ejercicio 12 — checkpointing de gradientes: cambiar memoria por recálculo, en los dos frameworks.

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
''',
    "ex13_spmd": '''Ejercicio 13 — un paso de entrenamiento en muchos dispositivos (SPMD: GSPMD y shard_map).

JAX programa muchos dispositivos igual que programa uno: escribes el programa
para el lote completo (*un solo programa*), dices cómo se disponen los arrays
sobre una *malla* de dispositivos, y cada dispositivo ejecuta el mismo programa
sobre su parte (*múltiples datos*: SPMD). El paralelismo de datos es la
disposición más sencilla: el lote se divide por su primer eje entre los
dispositivos, los parámetros se replican (cada dispositivo tiene una copia
completa) y el gradiente se promedia entre los dispositivos para que todas las
copias den el mismo paso.
    - `jax.make_mesh((n,), ("data",), devices=...)` construye una malla 1-D
      cuyo único eje se llama "data"; `NamedSharding(mesh, P("data"))` divide
      el primer eje de un array sobre ella, `NamedSharding(mesh, P())` lo
      replica; `jax.device_put(x, sharding)` coloca un array.
    - GSPMD: `jax.jit` del paso normal de un dispositivo, con entradas
      repartidas (o indicándolo con `in_shardings`/`out_shardings`), lo reparte
      el compilador: inserta él mismo la suma del gradiente entre
      dispositivos.
    - `jax.shard_map(f, mesh=..., in_specs=..., out_specs=...)`: escribes `f`
      para *el fragmento de un dispositivo* y haces tú la comunicación con
      colectivos como `jax.lax.pmean(value, "data")` (la media sobre los
      dispositivos del eje de la malla). Dentro, el gradiente respecto a una
      entrada replicada vuelve ya sumado sobre los dispositivos: para entrenar
      con `shard_map`, deriva el `pmean` de la pérdida (hacer `pmean` de los
      gradientes de la pérdida local los deja n veces más grandes).
(El equivalente en PyTorch es DistributedDataParallel: un proceso por
dispositivo, cada uno con su copia del modelo, y un all-reduce de los
gradientes dentro de `backward()`.)
El corrector da a tu código 8 dispositivos CPU y comprueba mallas de 1, 2, 4 y
8 dispositivos (en un cuaderno, la celda de preparación pide 8 dispositivos CPU;
si JAX ya estaba en marcha con menos, las pruebas usan los tamaños que haya y lo
dicen).

Qué construir:
    - `make_data_mesh(n_devices=None)`: una malla 1-D con el eje "data" sobre
      los `n_devices` primeros dispositivos de `jax.devices()` (todos, por
      defecto).
    - `shard_batch(x, mesh)`: `x` colocado con `NamedSharding(mesh, P("data"))`:
      su eje inicial dividido a partes iguales sobre la malla (el tamaño de la
      malla divide a `x.shape[0]`).
    - `data_parallel_step(loss_fn, optimizer, mesh)`: el paso del ejercicio 05,
      `step(params, opt_state, x, y) -> (params, opt_state, loss)`, compilado
      con jit, para params y estado del optimizador replicados en `mesh` y un
      lote `x, y` repartido sobre "data" (como lo coloca `shard_batch`). La
      pérdida y los nuevos params son los del paso en un dispositivo sobre el
      lote completo; los nuevos params y el estado vuelven replicados en la
      malla; las llamadas repetidas compilan una sola vez.
    - `per_device_mean_loss(loss_fn, params, x, y, mesh)`: con `jax.shard_map`
      sobre `mesh`, cada dispositivo calcula `loss_fn(params, x_shard, y_shard)`
      sobre su propio fragmento, y el resultado es su media mediante
      `jax.lax.pmean` sobre "data": un escalar replicado. (Para una pérdida que
      es una media sobre los ejemplos y fragmentos iguales, es la pérdida del
      lote completo.) `x, y` llegan repartidos como los coloca `shard_batch`, y
      `params` replicados.

Ejemplo:
    >>> mesh = make_data_mesh(4)
    >>> dict(mesh.shape)
    {'data': 4}
    >>> xs = shard_batch(jnp.zeros((32, 2)), mesh)
    >>> xs.addressable_shards[0].data.shape
    (8, 2)
    >>> step = data_parallel_step(bce_loss, optax.adam(0.01), mesh)
''',
}

DOCSTRINGS_ES: dict[str, dict[str, str]] = {
    "ex01_torch_mlp": {
        "MLP": """Un perceptrón multicapa con ReLU que devuelve logits.

Args:
    input_dim: número d de características de entrada.
    hidden_dims: anchos de las capas ocultas (puede estar vacía).
    output_dim: número de salidas.""",
        "MLP.forward": "Transforma entradas `(N, input_dim)` en logits `(N, output_dim)`.",
    },
    "ex02_torch_training": {
        "bce_with_logits": """Entropía cruzada binaria numéricamente estable sobre logits, promediada sobre todos los elementos.

Args:
    logits: puntuaciones sin activar z, de cualquier forma, p. ej. `(N, 1)`.
    targets: floats 0./1. y, de la misma forma que `logits`.

Returns:
    Un tensor 0-d: la media de `max(z, 0) - z*y + log(1 + exp(-|z|))`.""",
        "train_step": """Un paso de optimización sobre el lote `(x, y)`.

Args:
    model: la red; ponla en modo de entrenamiento.
    optimizer: un optimizador de `torch.optim` sobre `model.parameters()`.
    x: entradas `(N, d)`.
    y: objetivos con la forma de la salida del modelo.
    loss_fn: `loss_fn(model(x), y)` -> tensor 0-d.

Returns:
    La pérdida antes de la actualización, como float de Python.""",
        "evaluate": """Pérdida y exactitud de un clasificador binario, sin construir un grafo.

Args:
    model: la red; ponla en modo de evaluación.
    x: entradas `(N, d)`.
    y: objetivos 0./1. con la forma de la salida del modelo.
    loss_fn: `loss_fn(model(x), y)` -> tensor 0-d.

Returns:
    `(pérdida media, exactitud)` como floats de Python.""",
        "fit": """Entrenamiento con el lote completo, Adam y `bce_with_logits`.

Args:
    model: la red (se entrena en el sitio).
    x: entradas `(N, d)`.
    y: objetivos 0./1. con la forma de la salida del modelo.
    epochs: número de pasos con el lote completo.
    lr: la tasa de aprendizaje de Adam.

Returns:
    Las `epochs` pérdidas, cada una medida antes de su actualización, como floats de Python.""",
    },
    "ex03_torch_cnn": {
        "CNN": """Dos bloques convolucionales y una cabeza clasificadora de dos capas con dropout.

Args:
    num_classes: número de logits de salida.
    dropout: probabilidad de poner a cero cada unidad oculta antes de la última capa
        (solo en modo de entrenamiento).""",
        "CNN.forward": "Transforma imágenes `(N, 1, 8, 8)` en logits `(N, num_classes)`.",
    },
    "ex04_jax_mlp": {
        "init_params": """Pesos He-normal y sesgos nulos para un MLP.

Args:
    layer_dims: `[d_0, d_1, ..., d_L]`, primero el ancho de entrada, al final el de salida.
    key: una clave PRNG (`jax.random.PRNGKey(s)` o `jax.random.key(s)`).

Returns:
    `{"W": [W0, ...], "b": [b0, ...]}` con `W[i]: (d_i, d_{i+1})` y
    `b[i]: (d_{i+1},)`, todos float32.""",
        "mlp_forward": """Logits del MLP.

Args:
    params: `{"W": [...], "b": [...]}` como los crea `init_params`.
    x: entradas, `(N, d_0)`.

Returns:
    Logits, `(N, d_L)`.""",
        "bce_loss": """Entropía cruzada binaria media sobre el primer logit, calculada de forma estable.

Args:
    params: los parámetros del MLP.
    x: entradas, `(N, d_0)`.
    y: etiquetas float 0/1, `(N,)`.

Returns:
    Un `jax.Array` escalar.""",
        "accuracy": """Fracción de filas donde el signo del primer logit coincide con la etiqueta.

Args:
    params: los parámetros del MLP.
    x: entradas, `(N, d_0)`.
    y: etiquetas 0/1, `(N,)`.

Returns:
    Un float de Python en [0, 1].""",
    },
    "ex05_jit_train_step": {
        "make_train_step": """Un paso de entrenamiento compilado con jit para ``loss_fn`` y ``optimizer``.

Args:
    loss_fn: ``loss_fn(params, x, y) -> scalar``, derivable respecto a ``params``.
    optimizer: cualquier transformación de gradientes de optax.

Returns:
    ``step(params, opt_state, x, y) -> (new_params, new_opt_state, loss)``,
    compilado con ``jax.jit``; ``loss`` es la pérdida en los ``params`` antiguos.""",
        "fit": """Entrenamiento con Adam y el lote completo, con un paso compilado.

Args:
    params: el pytree de parámetros inicial.
    x: entradas, ``(N, d)``.
    y: etiquetas, ``(N,)``.
    steps: número de pasos.
    learning_rate: la tasa de aprendizaje de Adam.
    loss_fn: ``loss_fn(params, x, y) -> scalar``.

Returns:
    ``(final_params, losses)``: el pytree entrenado y ``steps`` floats de Python.""",
    },
    "ex06_per_example_grads": {
        "per_example_grads": """Gradientes de `loss_fn` para cada ejemplo por separado, vectorizados con `jax.vmap`.

Args:
    loss_fn: `loss_fn(params, xb, yb) -> scalar`, xb de forma `(B, ...)`.
    params: un pytree de arrays.
    x: entradas, forma `(N, ...)`.
    y: objetivos, forma `(N, ...)`.

Returns:
    Un pytree con la forma de `params`; cada hoja tiene forma `(N, *leaf.shape)`.""",
        "clip_and_average": """Recorta el gradiente de cada ejemplo a la norma L2 global `max_norm` y después promedia.

Args:
    per_example: un pytree cuyas hojas tienen forma `(N, ...)`.
    max_norm: la mayor norma permitida por ejemplo (> 0).

Returns:
    Un pytree con la forma de un ejemplo: la media sobre N de los gradientes recortados.""",
        "torch_per_example_grads": """Gradientes por ejemplo de un modelo de torch con `torch.func`.

Args:
    model: cualquier `nn.Module`; sus parámetros y `.grad` quedan intactos.
    loss_fn: `loss_fn(out, target) -> scalar` sobre un lote.
    x: entradas, forma `(N, ...)`.
    y: objetivos, forma `(N, ...)`.

Returns:
    `{name: (N, *param.shape)}` para cada nombre de `model.named_parameters()`.""",
    },
    "ex07_flax_cnn": {
        "FlaxCNN": """La CNN de dígitos, canales al final: imágenes `(N, 8, 8, 1)` -> logits `(N, num_classes)`.

Attributes:
    num_classes: número de logits de salida.""",
        "FlaxCNN.__call__": "Transforma imágenes `(N, 8, 8, 1)` en logits `(N, num_classes)`.",
        "to_nhwc": """Canales primero `(N, C, H, W)` -> canales al final `(N, H, W, C)`, como array de JAX.

Args:
    x: imágenes dispuestas para PyTorch, de numpy o de JAX.

Returns:
    Los mismos píxeles como un `jax.Array` de forma `(N, H, W, C)`.""",
        "make_flax_train_step": """Construye un paso de entrenamiento compilado con jit para un clasificador de Flax.

Args:
    model: un módulo de Flax que transforma entradas `(N, ...)` en logits `(N, num_classes)`.
    optimizer: cualquier optimizador de optax.

Returns:
    `step(params, opt_state, x, y) -> (params, opt_state, loss)`, compilado
    con `jax.jit`: `params` es el dict que devuelve `model.init`, `y` contiene
    etiquetas enteras `(N,)`, y `loss` (un escalar) es la entropía cruzada
    softmax media en los parámetros antes de la actualización.""",
    },
    "ex08_jax_transforms": {
        "nth_derivative": """La derivada n-ésima de una función escalar, anidando `jax.grad`.

Args:
    f: una función de un escalar a un escalar.
    n: el orden (n >= 0); 0 devuelve `f`.

Returns:
    Una función de un escalar, compilable con jit.""",
        "coin_net": """`relu(x @ w1)` si `jax.random.bernoulli(key)` y si no `sigmoid(x @ w2)`, con `jax.lax.cond`.

Args:
    x: entradas, forma `(N, d)`.
    key: una clave PRNG.
    w1: pesos de la rama ReLU, forma `(d, h)`.
    w2: pesos de la rama sigmoide, forma `(d, h)`.

Returns:
    Forma `(N, h)`.""",
        "count_ops": """Número de ecuaciones del jaxpr de nivel superior de `f` trazada sobre `args`.

Args:
    f: una función que JAX puede trazar.
    *args: argumentos de ejemplo.

Returns:
    `len(jax.make_jaxpr(f)(*args).jaxpr.eqns)`, un int de Python.""",
        "dropout": """Dropout invertido con una clave PRNG explícita.

Args:
    x: cualquier array (float32).
    rate: probabilidad de descartar un elemento, `0 <= rate < 1`.
    key: una clave PRNG.

Returns:
    Misma forma y dtype que `x`: los elementos conservados escalados por `1 / (1 - rate)`, los descartados a 0.""",
    },
    "ex09_autograd_tape": {
        "backward_graph": """Nombres de los nodos del grafo hacia atrás alcanzables desde ``t.grad_fn``.

Args:
    t: cualquier tensor.

Returns:
    ``type(node).__name__`` de cada nodo, en preorden en profundidad, con los hijos en el
    orden de ``next_functions``, cada nodo una vez; ``[]`` cuando ``t.grad_fn`` es None.""",
        "manual_grads": """Gradientes de ``L = (w*x + b)**2`` en forma cerrada, sin autograd.

Args:
    w: peso.
    x: entrada.
    b: sesgo.

Returns:
    ``(dL/dw, dL/dx, dL/db)`` como floats de Python.""",
    },
    "ex10_bridge": {
        "torch_mlp_to_jax": """Los pesos del MLP como un pytree de JAX.

Args:
    model: un módulo cuyas capas ``nn.Linear`` (en el orden de ``modules()``) forman el MLP.

Returns:
    ``{"W": [(d_i, d_{i+1}), ...], "b": [(d_{i+1},), ...]}``, arrays de jax float32 (copias).""",
        "jax_to_torch_mlp": """Copia un pytree de un MLP de JAX en las capas ``nn.Linear`` del modelo, en el sitio.

Args:
    params: ``{"W": [(d_i, d_{i+1}), ...], "b": [(d_{i+1},), ...]}``.
    model: el MLP de torch que se sobrescribe.

Raises:
    ValueError: difiere una forma (el mensaje nombra "layer i") o los números de capas (da los dos).""",
        "torch_conv_to_flax": """Un peso ``Conv2d`` de torch como kernel ``Conv`` de Flax.

Args:
    weight: ``(out, in, kh, kw)`` (OIHW).

Returns:
    ``(kh, kw, in, out)`` (HWIO), array de jax float32.""",
    },
    "ex11_torch_compile": {
        "clip_by_norm": """Reduce la escala de ``x`` para que su norma L2 global sea como mucho ``max_norm``.

Args:
    x: un tensor de cualquier forma.
    max_norm: la mayor norma permitida (> 0).

Returns:
    ``x * min(1, max_norm / ||x||)``, con la forma de ``x``; los ceros siguen siendo ceros.""",
        "graph_report": """Cómo captura TorchDynamo ``fn`` con ``args``.

Args:
    fn: una función de tensores.
    *args: sus argumentos.

Returns:
    ``(graph_count, graph_break_count)`` tal como los informa ``torch._dynamo.explain``.""",
        "compile_for_any_batch": """``model`` compilado una sola vez para todos los tamaños de lote.

Args:
    model: un módulo que recibe lotes ``(N, ...)``.
    backend: el backend de ``torch.compile`` que se usa.

Returns:
    Un invocable con las salidas de ``model`` que compila como mucho una vez para tamaños de lote
    mayores que el ancho de la entrada.""",
        "compiled_train_step": """El ``train_step`` del ejercicio 02 con la pasada hacia delante y la pérdida compiladas.

Args:
    model: el módulo que se entrena (en el sitio).
    optimizer: un optimizador sobre ``model.parameters()``.
    loss_fn: ``loss_fn(output, target) -> tensor escalar``.
    backend: el backend de ``torch.compile`` que se usa.

Returns:
    ``step(x, y) -> float``: un paso de entrenamiento; la pérdida anterior a la actualización.""",
    },
    "ex12_checkpointing": {
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
    },
    "ex13_spmd": {
        "make_data_mesh": """Una malla 1-D de dispositivos para el paralelismo de datos.

Args:
    n_devices: cuántos de ``jax.devices()`` usar, desde el primero; None: todos.

Returns:
    Una ``jax.sharding.Mesh`` de forma ``{"data": n_devices}``.""",
        "shard_batch": """``x`` con su eje inicial dividido sobre el eje "data" de la malla.

Args:
    x: un array ``(N, ...)``, N divisible por el tamaño de la malla.
    mesh: una malla 1-D con el eje "data".

Returns:
    Los mismos valores, colocados con ``NamedSharding(mesh, P("data"))``.""",
        "data_parallel_step": """Un paso de entrenamiento con paralelismo de datos, compilado con jit.

Args:
    loss_fn: ``loss_fn(params, x, y) -> scalar``, una media sobre el lote.
    optimizer: cualquier transformación de gradientes de optax.
    mesh: una malla 1-D con el eje "data".

Returns:
    ``step(params, opt_state, x, y) -> (new_params, new_opt_state, loss)``: params y
    estado replicados en ``mesh``, ``x, y`` repartidos sobre "data"; ``loss`` en los params antiguos.""",
        "per_device_mean_loss": """La media sobre los dispositivos de la pérdida de cada uno en su propio fragmento.

Args:
    loss_fn: ``loss_fn(params, x, y) -> scalar``.
    params: el pytree de parámetros (replicado).
    x: entradas ``(N, ...)``, repartidas sobre "data".
    y: objetivos ``(N, ...)``, repartidos sobre "data".
    mesh: una malla 1-D con el eje "data".

Returns:
    Un escalar replicado: ``pmean`` sobre "data" de las pérdidas por dispositivo.""",
    },
}

# Fingerprints of the English docstrings (module + functions) the Spanish above translates.
SOURCE_SHA: dict[str, str] = {
    "ex01_torch_mlp": "1fdce9573546",
    "ex02_torch_training": "7df1ea8eb3ad",
    "ex03_torch_cnn": "8d5726636202",
    "ex04_jax_mlp": "bae220a20ec9",
    "ex05_jit_train_step": "f4473627671f",
    "ex06_per_example_grads": "d9196b03f59d",
    "ex07_flax_cnn": "772e9c03bdd9",
    "ex08_jax_transforms": "731855ad7878",
    "ex09_autograd_tape": "982e16eec70e",
    "ex10_bridge": "ff593e8c39ff",
    "ex11_torch_compile": "11bdad482c45",
    "ex12_checkpointing": "a69f3552a998",
    "ex13_spmd": "0c2ad78a96da",
}

STUB_MARKERS: dict[str, dict[str, str]] = {
    "en": {"code_here": "# YOUR CODE HERE", "replace": "replace this line with your code"},
    "es": {"code_here": "# TU CÓDIGO AQUÍ", "replace": "sustituye esta línea por tu código"},
}

NOTEBOOK_TEXT: dict[str, dict[str, str]] = {
    "en": {
        "intro_md": (
            "# tapetrace — the tape vs the trace: PyTorch and JAX, exercise by exercise\n\n"
            "The exercises build the same models twice: in PyTorch, where autograd records a *tape*\n"
            "while your code runs, and in JAX, where `jax.jit` *traces* your function once and compiles it.\n\n"
            "**How to work**\n"
            "1. Run the set-up cell below first (it installs nothing; torch, jax, flax and optax come with Colab).\n"
            "2. For each exercise: read the instructions, replace each `raise NotImplementedError(...)` in its code\n"
            "   cell with your code, run the cell, then run its check cell: `check(\"exNN\")`.\n"
            "3. A check says one of three things: **NOT ATTEMPTED** (the stub is still there), **INCORRECT** (with "
            "what\n"
            "   is wrong: a shape, a max error, a property — never the expected values) or **PASSED**.\n"
            "   The public checks cover part of each exercise's points; hidden tests grade more when you submit.\n\n"
            "**Rules that keep grading fair to you**\n"
            "- Keep the names and signatures of the stubs. Helpers of your own are fine (start their names with "
            "`_`).\n"
            "- An exercise's code is every code cell from its heading to the next exercise's heading (cells you add "
            "count).\n"
            "  It is graded as *Run all* runs it: it may use what the cells above define (imports, functions, classes,\n"
            "  variables; their loops and bare expressions are not re-run for it), and an error elsewhere costs it "
            "nothing.\n"
            "  Its own top-level code runs when it is graded: keep long training runs inside functions.\n"
            "- Do not edit or delete the set-up cell. Checks use your runtime's device: torch on a GPU when there is "
            "one,\n"
            "  JAX on its default backend (GPU or TPU).\n\n"
            "**Submit** the notebook file itself (Colab: File → Download → Download .ipynb).\n"
        ),
        "intro_help_md": (
            "**Help along the way**\n"
            "- `hint(\"exNN\")`, `hint(\"exNN\", 2)`, `hint(\"exNN\", 3)`: three hints per exercise, from a "
            "nudge toward the idea to a pointed remark about the API. None contains the solution.\n"
            "- `figure(\"exNN\")`: once an exercise passes its checks, draws your result from your own code "
            "(decision boundaries, training curves, a confusion matrix, derivatives...).\n"
            "- Cells that only call `check`, `hint` or `figure` are not graded.\n"
        ),
        "intro_selfstudy_md": (
            "**Self-study edition**: `solution(\"exNN\")` shows the reference solution of an exercise. "
            "Try the checks and the hints first.\n"
        ),
        "outro_md": (
            "## Submit\n\n"
            "Save the notebook and hand in the `.ipynb` file (Colab: File → Download → Download .ipynb).\n"
            "Hidden tests then grade every exercise on fresh inputs, each in its own sandboxed process with a time "
            "limit,\n"
            "so one exercise that crashes or never finishes costs only that exercise's points.\n"
        ),
        "points_line": "*{total:g} points; `check(\"{short}\")` runs the public checks ({public:g} of them).*",
        "title_prefix": "Exercise",
        "setup_comment": "#@title tapetrace set-up: run this cell first",
        "title": "tapetrace — the tape vs the trace: PyTorch and JAX, side by side",
        "intro": (
            "In these exercises you build the same models twice: in **PyTorch**, where autograd records "
            "every operation on a *tape* while your Python runs, and in **JAX**, where `jax.jit`, `jax.grad` "
            "and `jax.vmap` *trace* your function once into a jaxpr and transform or compile that trace. "
            "The data are the seeds' two datasets: make_moons (a two-class MLP) and load_digits (an 8x8 "
            "digits CNN).\n\n"
            "Each exercise has instructions, a code cell with the functions to write (replace each "
            "`raise NotImplementedError` with your code; keep the names and signatures), and a cell that "
            "checks your work."
        ),
        "setup_title": "Set-up",
        "setup": (
            "Run the next cell once, at the start of each session. It installs the grading package if it is "
            "missing (Colab already has PyTorch, JAX, Flax and optax), loads the datasets and sets the "
            "language of the messages. It does not change the versions of torch or jax that are installed."
        ),
        "exercise": "Exercise {number}",
        "instructions": "Instructions",
        "your_code": "Your code",
        "check_title": "Check your work",
        "check": (
            "Run `check(\"{short}\")` after the cell above. It runs the public checks of this exercise on "
            "your code, against values recorded from the reference solution, and says what is wrong and how "
            "to fix it."
        ),
        "hidden_reminder": (
            "The public checks are a sample. Your grade comes from the hidden tests, which run more cases, on "
            "inputs drawn at grading time, and check more properties: passing here is necessary, not "
            "sufficient."
        ),
        "hints_title": "Stuck?",
        "hints": (
            "`hint(\"{short}\")` gives a first nudge; `hint(\"{short}\", 2)` and `hint(\"{short}\", 3)` get "
            "more specific. No hint contains the solution."
        ),
        "figure_title": "See your result",
        "figure": (
            "Once the checks pass, `figure(\"{short}\")` draws your result from your own code (it trains "
            "briefly where it needs a trained model)."
        ),
        "solution_title": "Solution (self-study)",
        "solution": (
            "`solution(\"{short}\")` shows the reference solution. Try the hints first: you learn more from "
            "the struggle than from the answer."
        ),
        "not_attempted": "not attempted",
        "incorrect": "incorrect",
        "passed": "passed",
        "check_summary": "{exercise}: {passed} of {total} public checks passed",
        "all_passed": "All public checks passed. The hidden tests will check more.",
        "submit_title": "Submitting",
        "submit": (
            "Save the notebook (File -> Download -> .ipynb) and hand in the .ipynb file. Keep the names of "
            "the functions and classes exactly as given: the grader looks for them."
        ),
    },
    "es": {
        "intro_md": (
            "# tapetrace — la cinta frente a la traza: PyTorch y JAX, ejercicio a ejercicio\n\n"
            "Los ejercicios construyen los mismos modelos dos veces: en PyTorch, donde autograd graba una "
            "*cinta*\n"
            "mientras se ejecuta tu código, y en JAX, donde `jax.jit` *traza* tu función una vez y la compila.\n\n"
            "**Cómo trabajar**\n"
            "1. Ejecuta primero la celda de preparación de abajo (no instala nada; torch, jax, flax y optax vienen "
            "con Colab).\n"
            "2. En cada ejercicio: lee las instrucciones, sustituye cada `raise NotImplementedError(...)` de su "
            "celda\n"
            "   de código por tu código, ejecuta la celda y después su celda de comprobación: `check(\"exNN\")`.\n"
            "3. Una comprobación dice una de tres cosas: **SIN INTENTAR** (el esqueleto sigue ahí), **INCORRECTO** "
            "(con lo\n"
            "   que falla: una forma, un error máximo, una propiedad — nunca los valores esperados) o **SUPERADO**.\n"
            "   Las pruebas públicas cubren parte de los puntos de cada ejercicio; al entregar, las pruebas ocultas "
            "corrigen más.\n\n"
            "**Reglas que hacen la corrección justa contigo**\n"
            "- Conserva los nombres y las firmas del esqueleto. Puedes añadir funciones auxiliares propias (empieza "
            "sus nombres con `_`).\n"
            "- El código de un ejercicio es cada celda de código desde su encabezado hasta el encabezado del "
            "ejercicio siguiente (las celdas que añadas cuentan).\n"
            "  Se corrige como lo ejecuta *Ejecutar todo*: puede usar lo que definen las celdas de encima "
            "(importaciones, funciones, clases,\n"
            "  variables; sus bucles y expresiones sueltas no se vuelven a ejecutar para él), y un error en otra "
            "parte no le cuesta nada.\n"
            "  Su propio código de nivel superior se ejecuta al corregir: deja los entrenamientos largos dentro de "
            "funciones.\n"
            "- No edites ni borres la celda de preparación. Las comprobaciones usan el dispositivo de tu entorno: "
            "torch en una GPU cuando la hay,\n"
            "  JAX en su backend por defecto (GPU o TPU).\n\n"
            "**Entrega** el propio archivo del cuaderno (Colab: Archivo → Descargar → Descargar .ipynb).\n"
        ),
        "intro_help_md": (
            "**Ayuda por el camino**\n"
            "- `hint(\"exNN\")`, `hint(\"exNN\", 2)`, `hint(\"exNN\", 3)`: tres pistas por ejercicio, desde un "
            "empujón hacia la idea hasta una indicación concreta sobre la API. Ninguna contiene la solución.\n"
            "- `figure(\"exNN\")`: cuando un ejercicio supera sus comprobaciones, dibuja tu resultado a partir "
            "de tu propio código (fronteras de decisión, curvas de entrenamiento, una matriz de confusión, "
            "derivadas...).\n"
            "- Las celdas que solo llaman a `check`, `hint` o `figure` no se corrigen.\n"
        ),
        "intro_selfstudy_md": (
            "**Edición de autoestudio**: `solution(\"exNN\")` muestra la solución de referencia de un ejercicio. "
            "Prueba antes las comprobaciones y las pistas.\n"
        ),
        "outro_md": (
            "## Entrega\n\n"
            "Guarda el cuaderno y entrega el archivo `.ipynb` (Colab: Archivo → Descargar → Descargar .ipynb).\n"
            "Después, las pruebas ocultas corrigen cada ejercicio con entradas nuevas, cada uno en su propio "
            "proceso aislado con un límite de tiempo,\n"
            "así que un ejercicio que hace caer el proceso o nunca termina solo cuesta los puntos de ese ejercicio.\n"
        ),
        "points_line": "*{total:g} puntos; `check(\"{short}\")` pasa las pruebas públicas ({public:g} de ellos).*",
        "title_prefix": "Ejercicio",
        "setup_comment": "#@title Preparación de tapetrace: ejecuta primero esta celda",
        "title": "tapetrace — la cinta frente a la traza: PyTorch y JAX, lado a lado",
        "intro": (
            "En estos ejercicios construyes los mismos modelos dos veces: en **PyTorch**, donde autograd "
            "graba cada operación en una *cinta* mientras se ejecuta tu Python, y en **JAX**, donde `jax.jit`, "
            "`jax.grad` y `jax.vmap` *trazan* tu función una vez en un jaxpr y transforman o compilan esa "
            "traza. Los datos son los dos conjuntos de datos de la fuente: make_moons (un MLP de dos clases) y "
            "load_digits (una CNN para dígitos de 8x8).\n\n"
            "Cada ejercicio tiene instrucciones, una celda de código con las funciones que debes escribir "
            "(sustituye cada `raise NotImplementedError` por tu código; conserva los nombres y las firmas) y "
            "una celda que comprueba tu trabajo."
        ),
        "setup_title": "Preparación",
        "setup": (
            "Ejecuta la celda siguiente una vez, al principio de cada sesión. Instala el paquete de corrección "
            "si falta (Colab ya tiene PyTorch, JAX, Flax y optax), carga los conjuntos de datos y fija el "
            "idioma de los mensajes. No cambia las versiones de torch ni de jax instaladas."
        ),
        "exercise": "Ejercicio {number}",
        "instructions": "Instrucciones",
        "your_code": "Tu código",
        "check_title": "Comprueba tu trabajo",
        "check": (
            "Ejecuta `check(\"{short}\")` después de la celda anterior. Pasa las pruebas públicas de este "
            "ejercicio sobre tu código, contra valores grabados de la solución de referencia, y te dice qué "
            "falla y cómo arreglarlo."
        ),
        "hidden_reminder": (
            "Las pruebas públicas son una muestra. Tu nota sale de las pruebas ocultas, que ejecutan más "
            "casos, con entradas sorteadas al corregir, y comprueban más propiedades: superarlas aquí es "
            "necesario, no suficiente."
        ),
        "hints_title": "¿Atascado?",
        "hints": (
            "`hint(\"{short}\")` da un primer empujón; `hint(\"{short}\", 2)` y `hint(\"{short}\", 3)` son "
            "más concretas. Ninguna pista contiene la solución."
        ),
        "figure_title": "Mira tu resultado",
        "figure": (
            "Cuando las pruebas pasen, `figure(\"{short}\")` dibuja tu resultado a partir de tu propio código "
            "(entrena un poco cuando necesita un modelo entrenado)."
        ),
        "solution_title": "Solución (autoestudio)",
        "solution": (
            "`solution(\"{short}\")` muestra la solución de referencia. Prueba antes las pistas: se aprende "
            "más del esfuerzo que de la respuesta."
        ),
        "not_attempted": "sin intentar",
        "incorrect": "incorrecto",
        "passed": "superado",
        "check_summary": "{exercise}: {passed} de {total} pruebas públicas superadas",
        "all_passed": "Todas las pruebas públicas superadas. Las pruebas ocultas comprobarán más.",
        "submit_title": "Entrega",
        "submit": (
            "Guarda el cuaderno (Archivo -> Descargar -> .ipynb) y entrega el archivo .ipynb. Conserva "
            "exactamente los nombres de las funciones y clases: el corrector los busca."
        ),
    },
}


# ----------------------------------------------------------------- English sources
def _solutions_dir() -> Path:
    from autograder._paths import SOLUTIONS

    return SOLUTIONS


def _docstring_nodes(tree: ast.Module) -> list[tuple[str, ast.Expr]]:
    """``(qualname, docstring Expr node)`` for the module ("") and every def/class, in source order."""
    out: list[tuple[str, ast.Expr]] = []

    def first_doc(body: list[ast.stmt]) -> ast.Expr | None:
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            return body[0]
        return None

    doc = first_doc(tree.body)
    if doc is not None:
        out.append(("", doc))

    def walk(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                d = first_doc(node.body)
                if d is not None:
                    out.append((prefix + node.name, d))
                if isinstance(node, ast.ClassDef):
                    walk(node.body, prefix + node.name + ".")

    walk(tree.body, "")
    return out


def english_docstrings(source: str) -> dict[str, str]:
    """``{qualname: docstring}`` of a module's source (``""`` is the module docstring), uncleaned."""
    return {name: node.value.value for name, node in _docstring_nodes(ast.parse(source))}


def english_sha(source: str) -> str:
    """Fingerprint of all docstrings of a solution module (what the Spanish must follow)."""
    docs = english_docstrings(source)
    blob = "\x00".join(f"{k}\x01{v}" for k, v in sorted(docs.items()))
    return hashlib.sha1(blob.encode()).hexdigest()[:12]


def instructions(exercise: str, lang: str = "en") -> str:
    """The student's instructions (the module docstring) of an exercise in ``lang``."""
    if lang == "es":
        return INSTRUCTIONS_ES[exercise]
    source = (_solutions_dir() / f"{exercise}.py").read_text()
    return english_docstrings(source)[""]


# ----------------------------------------------------------------- localised stubs
def _literal(text: str, indent: str) -> str:
    """A triple-quoted docstring literal, continuation lines indented by ``indent``."""
    lines = text.strip("\n").split("\n")
    body = "\n".join([lines[0]] + [(indent + ln) if ln.strip() else "" for ln in lines[1:]])
    closing = f"\n{indent}" if len(lines) > 1 else ""
    quote = '"""' if '"""' not in text else "'''"
    prefix = "r" if "\\" in text else ""
    return f"{prefix}{quote}{body}{closing}{quote}"


def localize_stub(source: str, exercise: str, lang: str = "es") -> str:
    """A stub's (or solution's) source with its docstrings and stub markers in ``lang``.

    Code is untouched: only the module docstring (-> ``INSTRUCTIONS_ES``), each def/class
    docstring (-> ``DOCSTRINGS_ES``), the ``# YOUR CODE HERE`` comment and the
    ``NotImplementedError`` message change. ``lang="en"`` returns ``source`` unchanged.

    Raises:
        KeyError: a docstring of the source has no Spanish translation.
    """
    if lang == "en":
        return source
    if lang != "es":
        raise ValueError(f"unknown language {lang!r}")
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    for name, node in reversed(_docstring_nodes(tree)):
        text = INSTRUCTIONS_ES[exercise] if name == "" else DOCSTRINGS_ES[exercise][name]
        start, end = node.lineno - 1, node.end_lineno
        first = lines[start]
        indent = first[: len(first) - len(first.lstrip())]
        tail = lines[end - 1][node.end_col_offset:]
        lines[start:end] = [indent + _literal(text, indent) + tail]
    out = "".join(lines)
    en, es = STUB_MARKERS["en"], STUB_MARKERS[lang]
    return out.replace(en["code_here"], es["code_here"]).replace(en["replace"], es["replace"])


if __name__ == "__main__":  # prints the fingerprints to paste into SOURCE_SHA after re-translating
    from autograder._paths import EXERCISES

    for _ex in EXERCISES:
        _p = _solutions_dir() / f"{_ex}.py"
        if _p.exists():
            print(f'    "{_ex}": "{english_sha(_p.read_text())}",')
