"""Messages of ex09_autograd_tape."""

EN = {
    "EX09_DUPLICATES": "`{call}` lists some nodes more than once ({got} names): a node reachable along two paths (a shared subexpression, a leaf used twice) must appear once — keep a set of visited nodes (the node objects) and skip a node already in it",
    "EX09_NODE_NAME": "`{call}` returns names like 'torch::autograd::AccumulateGrad': use the Python class name, `type(node).__name__`, not `node.name()`",
    "EX09_NO_ACCUMULATE": "`{call}` leaves out the AccumulateGrad nodes: the leaves that require grad end in an AccumulateGrad node in `next_functions` — list it like any other node",
    "EX09_NONE_NODE": "`{call}` lists 'NoneType': an entry of `next_functions` is `(None, 0)` for an input that needs no gradient — skip None",
    "EX09_ORDER": "`{call}` has the right nodes in the wrong order: depth-first pre-order — a node, then the whole subgraph of its first child (in `next_functions` order), then the next child (a breadth-first queue, reversed children or listing a node after its children all give other orders)",
    "EX09_GRAPH": "`{call}` does not list the nodes reachable from `t.grad_fn` ({got} names): start from `t.grad_fn`, follow every `next_functions` entry, depth-first",
    "EX09_NO_GRAD_FN": "for a tensor without grad_fn (a leaf, or a result computed under torch.no_grad() or detached) `backward_graph` must return [] — you returned {got} names; check `t.grad_fn is None` first",
    "EX09_STATE_FEWER": "{which}, `backward_graph` returned fewer nodes ({got}) than on a first call: your visited set outlives the call — a default argument like `visited=set()` is created once, when `def` runs, and shared by every call (and AccumulateGrad nodes of the same leaves are the same objects in the next graph); create the set inside `backward_graph`",
    "EX09_STATE_MORE": "{which}, `backward_graph` returned more names ({got}) than on a first call: your result list outlives the call — a default argument like `out=[]` is created once and shared by every call; create the list inside `backward_graph`",
    "EX09_LIST_KEPT": "`{call}` returned {got} names, this graph's nodes after those of earlier calls: your result list outlives the call — a default argument like `out=[]` is created once, when `def` runs, and shared by every call; create the list inside `backward_graph`",
    "EX09_MISSING_X": "your dL/dw equals your dL/db at every point, although w enters L through the product w*x: the chain rule gives dL/dw one more factor than dL/db — derive it again, then check all three derivatives against autograd in a scratch cell (not inside `manual_grads`)",
    "EX09_USED_AUTOGRAD": "`manual_grads` used autodiff ({used}): compute the three derivatives from the closed form with the chain rule, on plain floats — use autograd only in a scratch cell to check your answer",
    "EX09_NOT_TUPLE": "`manual_grads` returned {got} with {length} item(s): return a tuple `(dL_dw, dL_dx, dL_db)`",
    "EX09_NOT_FLOATS": "`manual_grads` returned items of types {got}: return Python floats (`float(...)` or `.item()`), not tensors or arrays",
    "ex09.call.again": '`backward_graph(t)`, called again on the same `t`',
    "ex09.call.rebuilt": '`backward_graph(t)` on a new graph over the same leaves',
}

ES = {
    "EX09_DUPLICATES": "`{call}` lista algunos nodos más de una vez ({got} nombres): un nodo alcanzable por dos caminos (una subexpresión compartida, una hoja usada dos veces) debe aparecer una sola vez — guarda un conjunto de nodos visitados (los objetos nodo) y salta los que ya estén en él",
    "EX09_NODE_NAME": "`{call}` devuelve nombres como 'torch::autograd::AccumulateGrad': usa el nombre de la clase de Python, `type(node).__name__`, no `node.name()`",
    "EX09_NO_ACCUMULATE": "`{call}` omite los nodos AccumulateGrad: las hojas que requieren gradiente terminan en un nodo AccumulateGrad en `next_functions` — lístalo como cualquier otro nodo",
    "EX09_NONE_NODE": "`{call}` lista 'NoneType': una entrada de `next_functions` es `(None, 0)` para una entrada que no necesita gradiente — salta None",
    "EX09_ORDER": "`{call}` tiene los nodos correctos en el orden equivocado: preorden en profundidad — un nodo, luego todo el subgrafo de su primer hijo (en el orden de `next_functions`), luego el siguiente hijo (una cola en anchura, los hijos invertidos o listar un nodo después de sus hijos dan otros órdenes)",
    "EX09_GRAPH": "`{call}` no lista los nodos alcanzables desde `t.grad_fn` ({got} nombres): empieza en `t.grad_fn`, sigue cada entrada de `next_functions`, en profundidad",
    "EX09_NO_GRAD_FN": "para un tensor sin grad_fn (una hoja, o un resultado calculado bajo torch.no_grad() o separado con detach) `backward_graph` debe devolver [] — devolviste {got} nombres; comprueba primero `t.grad_fn is None`",
    "EX09_STATE_FEWER": "{which}, `backward_graph` devolvió menos nodos ({got}) que en una primera llamada: tu conjunto de visitados sobrevive a la llamada — un argumento por defecto como `visited=set()` se crea una sola vez, al ejecutarse `def`, y lo comparten todas las llamadas (y los nodos AccumulateGrad de las mismas hojas son los mismos objetos en el grafo siguiente); crea el conjunto dentro de `backward_graph`",
    "EX09_STATE_MORE": "{which}, `backward_graph` devolvió más nombres ({got}) que en una primera llamada: tu lista de resultados sobrevive a la llamada — un argumento por defecto como `out=[]` se crea una sola vez y lo comparten todas las llamadas; crea la lista dentro de `backward_graph`",
    "EX09_LIST_KEPT": "`{call}` devolvió {got} nombres, los nodos de este grafo tras los de llamadas anteriores: tu lista de resultados sobrevive a la llamada — un argumento por defecto como `out=[]` se crea una sola vez, al ejecutarse `def`, y lo comparten todas las llamadas; crea la lista dentro de `backward_graph`",
    "EX09_MISSING_X": "tu dL/dw es igual a tu dL/db en todos los puntos, aunque w entra en L a través del producto w*x: la regla de la cadena le da a dL/dw un factor más que a dL/db — vuelve a derivarla y después contrasta las tres derivadas con autograd en una celda aparte (no dentro de `manual_grads`)",
    "EX09_USED_AUTOGRAD": "`manual_grads` usó diferenciación automática ({used}): calcula las tres derivadas con la forma cerrada y la regla de la cadena, sobre floats de Python — usa autograd solo en una celda aparte para comprobar tu respuesta",
    "EX09_NOT_TUPLE": "`manual_grads` devolvió {got} con {length} elemento(s): devuelve una tupla `(dL_dw, dL_dx, dL_db)`",
    "EX09_NOT_FLOATS": "`manual_grads` devolvió elementos de tipos {got}: devuelve floats de Python (`float(...)` o `.item()`), no tensores ni arrays",
    "ex09.call.again": '`backward_graph(t)`, llamada otra vez con el mismo `t`',
    "ex09.call.rebuilt": '`backward_graph(t)` con un grafo nuevo sobre las mismas hojas',
}
