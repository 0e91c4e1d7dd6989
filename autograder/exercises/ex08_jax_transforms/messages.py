"""Messages of ex08_jax_transforms."""

EN = {
    "EX08_NTH_JIT": "jax.jit(nth_derivative(f, n)) failed ({error}): return the nested jax.grad function itself — no float(), .item(), numpy or Python `if` on values inside, so the trace can flow through it",
    "EX08_BRANCH": "coin_net disagrees with the reference for {bad} of {total} keys: draw `branch = jax.random.bernoulli(key)` from exactly the key you were given (no split, no other draw), then relu(x @ w1) when branch is True, sigmoid(x @ w2) when False",
    "EX08_PYTHON_IF": "coin_net cannot be traced with the key as a tracer ({error}): a Python `if` needs a concrete bool, but under jax.jit `branch` is only known at run time — use jax.lax.cond(branch, true_fun, false_fun, x)",
    "EX08_NO_COND": "the program jax.jit(coin_net) compiles has no branch (`cond`): jnp.where / lax.select compute BOTH branches and then pick one — use jax.lax.cond so only the chosen branch runs",
    "EX08_COUNT_OPS": "count_ops({name}, ...) returned {got}, which is not the number of equations of the jaxpr: return len(jax.make_jaxpr(f)(*args).jaxpr.eqns) — do not count lines of the printed jaxpr or distinct primitives",
    "EX08_COUNT_OPS_NESTED": "count_ops({name}, ...) returned {got}: count only the TOP-LEVEL equations, len(jax.make_jaxpr(f)(*args).jaxpr.eqns) — a cond, scan, while, custom_jvp or jitted call is ONE equation; do not recurse into its sub-jaxprs or count printed lines",
    "EX08_DROPOUT_SHAPE": "dropout returned {got}, expected the shape and dtype of x, {want}",
    "EX08_KEEP_RATE": "dropout kept a fraction {kept:.4f} of the elements at rate={rate:.3f}: each element must be KEPT with probability 1 - rate — jax.random.bernoulli(key, 1 - rate, x.shape) is the keep mask",
    "EX08_DROPOUT_SCALE": "{bad} of {total} dropout outputs at rate={rate:.3f} are neither 0 nor x / (1 - rate): inverted dropout scales the kept elements by 1 / (1 - rate) (not by 1 - rate, and not left unscaled)",
    "EX08_DROPOUT_IDENTITY": "dropout(x, 0.0, key) changed {bad} of {total} elements: with rate = 0 every element is kept and scaled by 1 / (1 - 0) = 1, so the output must equal x exactly",
    "EX08_DROPOUT_NOT_DETERMINISTIC": "dropout gave two different outputs for the same key: all randomness must come from the key (jax.random.*(key, ...)), never from a global generator",
    "EX08_DROPOUT_IGNORES_KEY": "dropout gave the same mask for two different keys: use the key you were given — do not create jax.random.PRNGKey(0) (or any fixed key) inside",
    "EX08_NUMPY_RNG": "dropout uses numpy's global random generator (np.random was drawn from or re-seeded): JAX has no global random state — draw the mask with jax.random.bernoulli(key, 1 - rate, x.shape)",
    "ex08.what.at_points": '`{call}` at x = {x}',
    "ex08.what.for_keys": '`{call}` for {n} keys',
    "ex08.what.compiled_keys": '`jax.jit(coin_net).lower(...).compile()` for {n} keys',
}

ES = {
    "EX08_NTH_JIT": "jax.jit(nth_derivative(f, n)) falló ({error}): devuelve la propia función de jax.grad anidados — sin float(), .item(), numpy ni `if` de Python sobre valores dentro, para que la traza pueda atravesarla",
    "EX08_BRANCH": "coin_net no coincide con la referencia en {bad} de {total} claves: obtén `branch = jax.random.bernoulli(key)` exactamente de la clave PRNG recibida (sin split ni otro sorteo), y luego relu(x @ w1) si branch es True, sigmoid(x @ w2) si es False",
    "EX08_PYTHON_IF": "coin_net no se puede trazar con la clave como trazador ({error}): un `if` de Python necesita un bool concreto, pero bajo jax.jit `branch` solo se conoce en ejecución — usa jax.lax.cond(branch, true_fun, false_fun, x)",
    "EX08_NO_COND": "el programa que compila jax.jit(coin_net) no tiene ninguna rama (`cond`): jnp.where / lax.select calculan AMBAS ramas y luego eligen una — usa jax.lax.cond para que solo se ejecute la rama elegida",
    "EX08_COUNT_OPS": "count_ops({name}, ...) devolvió {got}, que no es el número de ecuaciones del jaxpr: devuelve len(jax.make_jaxpr(f)(*args).jaxpr.eqns) — no cuentes líneas del jaxpr impreso ni primitivas distintas",
    "EX08_COUNT_OPS_NESTED": "count_ops({name}, ...) devolvió {got}: cuenta solo las ecuaciones del NIVEL SUPERIOR, len(jax.make_jaxpr(f)(*args).jaxpr.eqns) — un cond, scan, while, custom_jvp o una llamada jit es UNA ecuación; no entres en sus sub-jaxprs ni cuentes líneas impresas",
    "EX08_DROPOUT_SHAPE": "dropout devolvió {got}; se esperaba la forma y el dtype de x, {want}",
    "EX08_KEEP_RATE": "dropout conservó una fracción {kept:.4f} de los elementos con rate={rate:.3f}: cada elemento debe CONSERVARSE con probabilidad 1 - rate — jax.random.bernoulli(key, 1 - rate, x.shape) es la máscara de los conservados",
    "EX08_DROPOUT_SCALE": "{bad} de {total} salidas de dropout con rate={rate:.3f} no son ni 0 ni x / (1 - rate): el dropout invertido escala los elementos conservados por 1 / (1 - rate) (no por 1 - rate, ni sin escalar)",
    "EX08_DROPOUT_IDENTITY": "dropout(x, 0.0, key) cambió {bad} de {total} elementos: con rate = 0 se conservan todos y se escalan por 1 / (1 - 0) = 1, así que la salida debe ser exactamente x",
    "EX08_DROPOUT_NOT_DETERMINISTIC": "dropout dio dos salidas distintas para la misma clave PRNG: toda la aleatoriedad debe venir de la clave (jax.random.*(key, ...)), nunca de un generador global",
    "EX08_DROPOUT_IGNORES_KEY": "dropout dio la misma máscara para dos claves PRNG distintas: usa la clave recibida — no crees jax.random.PRNGKey(0) (ni ninguna clave fija) dentro",
    "EX08_NUMPY_RNG": "dropout usa el generador aleatorio global de numpy (se extrajo de np.random o se volvió a sembrar): JAX no tiene estado aleatorio global — obtén la máscara con jax.random.bernoulli(key, 1 - rate, x.shape)",
    "ex08.what.at_points": '`{call}` en x = {x}',
    "ex08.what.for_keys": '`{call}` con {n} claves',
    "ex08.what.compiled_keys": '`jax.jit(coin_net).lower(...).compile()` con {n} claves',
}
