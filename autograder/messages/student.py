"""What the notebook's helpers print (UI text, catalogued like messages): the self-check's report
(``check``), the hints' labels (``hint``) and the figures' labels and notes (``figure``)."""

EN = {
    "exercise.unknown": "unknown exercise {name!r}: expected one of {choices}",
    "public.title": "{exercise}: public checks (torch on {torch}, jax on {jax})",
    "public.ok": "  \u2713 {name} ({points:g} pt)",
    "public.bad": "  \u2717 {name} ({points:g} pt): {message}",
    "public.passed": "PASSED: all {n} public checks pass.",
    "public.incorrect": "INCORRECT: {failed} of {n} public checks fail. Fix what the message says, run your code cell "
        "again, then this check.",
    "public.incorrect_one": "INCORRECT: 1 of {n} public checks fails. Fix what the message says, run your code cell "
        "again, then this check.",
    "public.incorrect_file": "INCORRECT: {failed} of {n} public checks fail. Fix what the message says in {file}, "
        "save the file and run `python check.py {exercise}` again.",
    "public.incorrect_one_file": "INCORRECT: 1 of {n} public checks fails. Fix what the message says in {file}, "
        "save the file and run `python check.py {exercise}` again.",
    "public.not_attempted": "NOT ATTEMPTED: {message}. Write your code in the exercise's cell, run it, then run this "
        "check again.",
    "public.missing": "none of {names} is defined yet — run the exercise's code cell first",
    "public.not_attempted_file": "NOT ATTEMPTED: {message}. Write your code in {file}, then run "
        "`python check.py {exercise}` again.",
    "public.missing_file": "none of {names} is defined in {file} yet",
    "public.all": "{passed} of {n} exercises pass all their public checks. Reminder: public checks are worth "
        "{public:g} of the {total:g} points. When you submit, hidden tests grade more (other inputs, more "
        "properties): passing here does not guarantee full marks.",
    "public.reminder": "Reminder: these public checks are worth {public:g} of the exercise's {total:g} points. When you "
        "submit, hidden tests grade more (other inputs, more properties): passing here does not "
        "guarantee full marks.",
    "public.snapshot": "snapshot mismatch, rebuild: this notebook's snapshot has no reference value for `{probe}` on "
        "these inputs — the notebook is out of date or its set-up cell was edited (instructors: run "
        "`tapetrace build`; students: download a fresh copy). This check did not pass.",
    "public.no_snapshot": "no snapshot here: `check` runs inside the notebook built by `tapetrace build` "
        "(run its first cell)",
    "public.as_graded": "as graded, {exercise} does not load: {message}. Grading runs the code cells under the "
        "exercise's heading, after what the cells above it define (their loops and bare "
        "expressions do not run): make that code work on its own, in order",
    "public.where": " at line {line} of the exercise's code: `{code}`",
    "public.file_load": "{file} does not load: {message}",
    "public.no_section": "the notebook has no code cell under {exercise}'s heading, so grading finds no code for it: "
        "keep your code in the exercise's cells (between its heading and the next exercise's)",
    "public.unread": "Note: check could not read this notebook's cells, so this check and the later ones check the "
        "names your session has defined, not the code as it is graded (each exercise's cells under its heading, after what "
        "the cells above define).",
    "public.stale": "Note: the saved notebook differs from the code you ran: save it (Ctrl+S) so check reads what "
        "you hand in. This time it checked the names your session has defined.",
    "hint.label": "Hint {tier}/{n} — {exercise}",
    "hint.bad_tier": "There is no hint {tier} for {exercise}: it has {n}, from hint(\"{short}\") to hint(\"{short}\", {n}).",
    "figure.torch": "PyTorch",
    "figure.jax": "JAX",
    "figure.boundary": "make_moons: decision boundary",
    "figure.boundary_init": "make_moons: decision boundary at initialisation (untrained)",
    "figure.val_acc": "val. accuracy {acc:.2f}",
    "figure.train_pts": "training",
    "figure.val_pts": "validation",
    "figure.x1": "$x_1$",
    "figure.x2": "$x_2$",
    "figure.prob": "P(class 1)",
    "figure.curves": "Training curves",
    "figure.loss": "loss",
    "figure.accuracy": "accuracy",
    "figure.epoch": "epoch",
    "figure.step": "step",
    "figure.train": "training",
    "figure.val": "validation",
    "figure.digits": "load_digits: validation split",
    "figure.confusion": "Confusion matrix (accuracy {acc:.3f})",
    "figure.true": "true digit",
    "figure.pred": "predicted digit",
    "figure.filters": "First-layer filters",
    "figure.untrained": "untrained",
    "figure.bridge": "One set of starting weights, two frameworks",
    "figure.abs_diff": "|PyTorch - JAX|",
    "figure.bce": "BCE with logits, label y = {y:g}: derivatives from your nth_derivative",
    "figure.logit": "logit z",
    "figure.analytic": "closed form",
    "figure.d0": "$L(z)$",
    "figure.d1": "$dL/dz$",
    "figure.d2": "$d^2L/dz^2$",
    "figure.norms": "Per-example gradient norms ({n} examples, at initialisation)",
    "figure.norm": "global L2 norm of one example's gradient",
    "figure.count": "examples",
    "figure.max_norm": "max_norm = {m:.3g} ({k} of {n} clipped)",
    "figure.mean_norm": "norm of the averaged gradient",
    "figure.plain_mean": "plain mean",
    "figure.clipped_mean": "clip_and_average",
    "figure.tape": "The tape of L = (w*x + b)**2: backward_graph(L)",
    "figure.grads": "manual_grads({w}, {x}, {b}) = ({gw:.4g}, {gx:.4g}, {gb:.4g})\nautograd = ({aw:.4g}, {ax:.4g}, {ab:.4g})",
    "figure.needs": "figure({ex!r}) needs {names} in your notebook: run the cells of {where} first",
    "figure.no_figure": "there is no figure for {ex}",
    "figure.no_model": "give at least one of torch_model or jax_params (with jax_forward)",
    "figure.check_fails": "{ex}'s check does not pass yet ({failed} of {n} public checks fail): this figure draws your "
        "code as it is now, mistakes included. Run check({ex!r}) for what to fix.",
    "figure.not_done": "No figure yet for {ex}: part of it still raises NotImplementedError. Write the exercise, "
        "run its code cell and its check, then this cell again.",
    "figure.failed": "figure({ex!r}) could not be drawn: your code raised {error}. Run check({ex!r}): it says what "
        "to fix.",
    "figure.no_matplotlib": "figure({ex!r}) draws with matplotlib, which is not installed here (supported: {want}); "
        "check() judges your code without it.",
    "figure.went_nan": "The {what} is nan or inf from {at} on (of {total}): training diverged, so the curve stops there "
        "(a learning rate too high, or a loss that is not numerically stable, does this).",
    "figure.at_epoch": "epoch {n}",
    "figure.at_step": "step {n}",
    "figure.diverged": "The {what} ended higher than it started ({first:.3g} → {last:.3g}): training diverged instead of "
        "learning (try a smaller learning rate, or check the loss and the step).",
    "figure.nan_short": "nan / inf",
    "figure.nan_outputs": "{name}: the model's outputs are nan or inf, so there is no boundary to draw.",
    "figure.nan_logits": "The model's logits are nan or inf: the predictions shown mean nothing.",
    "figure.chance": "{name}: validation accuracy {acc:.2f} after training, no better than chance ({chance:g}): the "
        "model did not learn.",
    "figure.chance_digits": "Accuracy {acc:.2f} after training, no better than chance ({chance:g}): the model did not "
        "learn.",
    "figure.from_ex01": "Your MLP(2, [32, 32], 1) as initialised: untrained, so the boundary is arbitrary until "
        "exercise 02 trains it.",
    "figure.from_ex02": "Trained here: your MLP(2, [32, 32], 1) from exercise 01, {epochs} epochs of your train_step "
        "with your bce_with_logits, measured with your evaluate (Adam, lr {lr:g}, full batch).",
    "figure.from_ex03": "Trained here: your CNN, {steps} steps of your train_step (exercise 02) with cross-entropy "
        "(Adam, lr {lr:g}).",
    "figure.from_ex03_untrained": "Your CNN as initialised (untrained): once train_step (exercise 02) is defined in "
        "this notebook, the figure trains the CNN with it.",
    "figure.from_ex04": "Your init_params and mlp_forward at initialisation: untrained (exercise 05 trains them).",
    "figure.torch_untrained": "The PyTorch panel is your MLP from exercise 01, also untrained.",
    "figure.from_ex05": "Trained here: your init_params, mlp_forward and bce_loss (exercise 04), {steps} steps of your "
        "make_train_step (optax.adam, lr {lr:g}, full batch).",
    "figure.from_ex05_fit": "Trained here: your init_params, mlp_forward and bce_loss (exercise 04) with your fit "
        "({steps} steps, lr {lr:g}).",
    "figure.torch_trained": "The PyTorch panel is your MLP from exercise 01, trained the same way with your "
        "train_step (exercise 02).",
    "figure.from_ex06": "Gradients of your bce_loss (exercise 04) at your init_params' starting weights, one per "
        "make_moons training example, from your per_example_grads.",
    "figure.from_ex07": "Trained here: your FlaxCNN on images from your to_nhwc, {steps} steps of your "
        "make_flax_train_step (optax.adam, lr {lr:g}).",
    "figure.from_ex10": "Trained here from one set of starting weights, your MLP from exercise 01 converted by your "
        "torch_mlp_to_jax: in PyTorch with your train_step (exercise 02), in JAX with your make_train_step "
        "(exercise 05) and your mlp_forward and bce_loss (exercise 04), {epochs} steps each.",
    "figure.compile_title": "torch.compile: graphs, graph breaks and recompiles (backend \"eager\")",
    "figure.graphs": "graphs",
    "figure.breaks": "graph breaks",
    "figure.if_clip": "a clip with a Python if",
    "figure.your_clip": "your clip_by_norm",
    "figure.call": "call (batch size below)",
    "figure.graphs_so_far": "graphs compiled so far",
    "figure.default_compile": "torch.compile (automatic dynamic)",
    "figure.any_batch": "your compile_for_any_batch",
    "figure.compiled_loss": "compiled_train_step on make_moons",
    "figure.ckpt_title": "Checkpointing: what is kept for the backward pass",
    "figure.layers": "layers",
    "figure.blocks": "blocks",
    "figure.residuals": "residuals saved (JAX)",
    "figure.saved_tensors": "tensors saved (PyTorch)",
    "figure.plain": "plain",
    "figure.checkpointed": "checkpointed",
    "figure.spmd_title": "Data parallelism over a mesh of {n} device(s)",
    "figure.rows": "rows of the batch",
    "figure.device": "device",
    "figure.mesh_of": "data_parallel_step, mesh of {n}",
    "solution.graded": "This is the graded build of the notebook: it holds no solutions. Ask your instructor, "
              "or try hint(\"{short}\", 1..3).",
    "solution.title": "Reference solution — {exercise}",
    "solution.missing": "no solution for {exercise} in this build",
    "stack.title": "UNSUPPORTED VERSIONS: this runtime's libraries are outside the versions the self-checks were "
        "measured on:",
    "stack.bad": "  - {dist} {have} (supported: {want})",
    "stack.missing": "  - {dist} is not installed (supported: {want})",
    "stack.python": "  - Python {have} (supported: {want})",
    "stack.fix": "Fix it: run `{command}` in a new cell, then Runtime > Restart session, then run the notebook "
        "again from the top.",
    "stack.fix_jupyter": "Fix it: run `{command}` in a new cell, then restart the kernel (Kernel > Restart), then "
        "run the notebook again from the top.",
    "stack.fix_terminal": "Fix it: run `{command}` in your terminal, in the environment that runs check.py, then run "
        "check.py again.",
    "stack.fix_python": "Python itself is outside the supported versions: use a runtime whose Python is supported "
        "(Colab's default runtime is).",
    "stack.fix_python_local": "Python itself is outside the supported versions: make a virtual environment with a "
        "supported Python ({want}) and install the libraries there.",
    "stack.meaning": "Until then, check() reports UNSUPPORTED VERSIONS for the exercises that use {dists} instead of "
        "judging your code; it judges the others.",
    "public.unsupported": "UNSUPPORTED VERSIONS: these checks ran on library versions they were not measured on "
        "({problems}), so they say nothing about your code. Run `{command}` in a new cell, then Runtime > Restart "
        "session, and run the notebook again.",
    "public.unsupported_jupyter": "UNSUPPORTED VERSIONS: these checks ran on library versions they were not measured "
        "on ({problems}), so they say nothing about your code. Run `{command}` in a new cell, restart the kernel "
        "and run the notebook again.",
    "public.unsupported_terminal": "UNSUPPORTED VERSIONS: these checks ran on library versions they were not "
        "measured on ({problems}), so they say nothing about your code. Run `{command}` in your terminal, then "
        "run check.py again.",
    "public.unsupported_python": "UNSUPPORTED VERSIONS: these checks ran on library versions they were not measured "
        "on ({problems}), so they say nothing about your code. Use a runtime whose versions are supported.",
    "public.grader_trouble": "GRADER TROUBLE: {n} public check(s) could not run on this runtime's libraries; that is "
        "the checks' fault, not your code's. Tell your instructor, with this message.",
    "public.apart": "Note: JAX has {have} {platform} device(s) here, too few for this exercise's meshes, so these "
        "checks ran in a separate process on {need} CPU devices, as the grader runs them.",
    "public.one_device": "NOT CHECKED ON SEVERAL DEVICES: the {n} public checks pass on a mesh of 1 {platform} "
        "device, the only one JAX has here; on one device, data-parallel mistakes (a gradient or a loss averaged "
        "on each device instead of across the devices, a batch copied to every device instead of split, `psum` "
        "where `pmean` is meant) give the right numbers, so this is no pass. A separate process with {need} CPU "
        "devices could not check them ({why}). To check them, save the notebook and run check(\"{exercise}\") "
        "again, or run `python check.py {exercise}` beside the exercise's .py file.",
    "public.apart_no_source": "check has your functions but not their code as text, to load in that process",
}

ES = {
    "exercise.unknown": "ejercicio desconocido {name!r}: elige uno de {choices}",
    "public.title": "{exercise}: comprobaciones públicas (torch en {torch}, jax en {jax})",
    "public.ok": "  \u2713 {name} ({points:g} pt)",
    "public.bad": "  \u2717 {name} ({points:g} pt): {message}",
    "public.passed": "SUPERADO: pasan las {n} comprobaciones públicas.",
    "public.incorrect": "INCORRECTO: fallan {failed} de {n} comprobaciones públicas. Corrige lo que dice el mensaje, "
        "vuelve a ejecutar tu celda de código y después esta comprobación.",
    "public.incorrect_one": "INCORRECTO: falla 1 de las {n} comprobaciones públicas. Corrige lo que dice el mensaje, "
        "vuelve a ejecutar tu celda de código y después esta comprobación.",
    "public.incorrect_file": "INCORRECTO: fallan {failed} de {n} comprobaciones públicas. Corrige en {file} lo que "
        "dice el mensaje, guarda el archivo y vuelve a ejecutar `python check.py {exercise}`.",
    "public.incorrect_one_file": "INCORRECTO: falla 1 de las {n} comprobaciones públicas. Corrige en {file} lo que "
        "dice el mensaje, guarda el archivo y vuelve a ejecutar `python check.py {exercise}`.",
    "public.not_attempted": "SIN INTENTAR: {message}. Escribe tu código en la celda del ejercicio, ejecútala y vuelve "
        "a ejecutar esta comprobación.",
    "public.missing": "todavía no está definido ninguno de {names} — ejecuta primero la celda de código del ejercicio",
    "public.not_attempted_file": "SIN INTENTAR: {message}. Escribe tu código en {file} y vuelve a ejecutar "
        "`python check.py {exercise}`.",
    "public.missing_file": "{file} todavía no define ninguno de {names}",
    "public.all": "{passed} de {n} ejercicios pasan todas sus comprobaciones públicas. Recuerda: las comprobaciones "
        "públicas valen {public:g} de los {total:g} puntos. Al entregar, pruebas ocultas corrigen más (otras "
        "entradas, más propiedades): pasar aquí no garantiza la nota máxima.",
    "public.reminder": "Recuerda: estas comprobaciones públicas valen {public:g} de los {total:g} puntos del ejercicio. "
        "Al entregar, pruebas ocultas corrigen más (otras entradas, más propiedades): pasar aquí no "
        "garantiza la nota máxima.",
    "public.snapshot": "la instantánea no coincide, hay que reconstruir: la instantánea de este cuaderno no tiene valor "
        "de referencia para `{probe}` con estas entradas — el cuaderno está desactualizado o se editó su "
        "celda de preparación (profesores: `tapetrace build`; estudiantes: descargad una copia nueva). "
        "Esta comprobación no se ha superado.",
    "public.no_snapshot": "aquí no hay instantánea: `check` funciona dentro del cuaderno generado por "
        "`tapetrace build` (ejecuta su primera celda)",
    "public.as_graded": "tal como se corrige, {exercise} no se carga: {message}. La corrección ejecuta las celdas de "
        "código bajo el encabezado del ejercicio, después de lo que definen las celdas de encima "
        "(sus bucles y expresiones sueltas no se ejecutan): haz que ese código funcione por sí "
        "solo, en orden",
    "public.where": " en la línea {line} del código del ejercicio: `{code}`",
    "public.file_load": "{file} no se carga: {message}",
    "public.no_section": "el cuaderno no tiene ninguna celda de código bajo el encabezado de {exercise}, así que la "
        "corrección no encuentra código para él: deja tu código en las celdas del ejercicio "
        "(entre su encabezado y el del siguiente ejercicio)",
    "public.unread": "Nota: check no pudo leer las celdas de este cuaderno, así que esta comprobación y las "
        "siguientes comprueban los nombres que ha definido tu sesión, no el código tal como se corrige (las celdas de cada ejercicio bajo su "
        "encabezado, después de lo que definen las celdas de encima).",
    "public.stale": "Nota: el cuaderno guardado difiere del código que ejecutaste: guárdalo (Ctrl+S) para que check "
        "lea lo que entregas. Esta vez comprobó los nombres que ha definido tu sesión.",
    "hint.label": "Pista {tier}/{n} — {exercise}",
    "hint.bad_tier": "No hay pista {tier} de {exercise}: tiene {n}, de hint(\"{short}\") a hint(\"{short}\", {n}).",
    "figure.torch": "PyTorch",
    "figure.jax": "JAX",
    "figure.boundary": "make_moons: frontera de decisión",
    "figure.boundary_init": "make_moons: frontera de decisión al inicializar (sin entrenar)",
    "figure.val_acc": "exactitud de validación {acc:.2f}",
    "figure.train_pts": "entrenamiento",
    "figure.val_pts": "validación",
    "figure.x1": "$x_1$",
    "figure.x2": "$x_2$",
    "figure.prob": "P(clase 1)",
    "figure.curves": "Curvas de entrenamiento",
    "figure.loss": "pérdida",
    "figure.accuracy": "exactitud",
    "figure.epoch": "época",
    "figure.step": "paso",
    "figure.train": "entrenamiento",
    "figure.val": "validación",
    "figure.digits": "load_digits: partición de validación",
    "figure.confusion": "Matriz de confusión (exactitud {acc:.3f})",
    "figure.true": "dígito real",
    "figure.pred": "dígito predicho",
    "figure.filters": "Filtros de la primera capa",
    "figure.untrained": "sin entrenar",
    "figure.bridge": "Unos mismos pesos iniciales, dos frameworks",
    "figure.abs_diff": "|PyTorch - JAX|",
    "figure.bce": "BCE con logits, etiqueta y = {y:g}: derivadas con tu nth_derivative",
    "figure.logit": "logit z",
    "figure.analytic": "forma cerrada",
    "figure.d0": "$L(z)$",
    "figure.d1": "$dL/dz$",
    "figure.d2": "$d^2L/dz^2$",
    "figure.norms": "Normas del gradiente por ejemplo ({n} ejemplos, al inicializar)",
    "figure.norm": "norma L2 global del gradiente de un ejemplo",
    "figure.count": "ejemplos",
    "figure.max_norm": "max_norm = {m:.3g} ({k} de {n} recortados)",
    "figure.mean_norm": "norma del gradiente promediado",
    "figure.plain_mean": "media simple",
    "figure.clipped_mean": "clip_and_average",
    "figure.tape": "La cinta de L = (w*x + b)**2: backward_graph(L)",
    "figure.grads": "manual_grads({w}, {x}, {b}) = ({gw:.4g}, {gx:.4g}, {gb:.4g})\nautograd = ({aw:.4g}, {ax:.4g}, {ab:.4g})",
    "figure.needs": "figure({ex!r}) necesita {names} en tu cuaderno: ejecuta antes las celdas de {where}",
    "figure.no_figure": "no hay figura para {ex}",
    "figure.no_model": "da al menos torch_model o jax_params (con jax_forward)",
    "figure.check_fails": "la comprobación de {ex} todavía no pasa (fallan {failed} de {n} comprobaciones públicas): "
        "esta figura dibuja tu código tal como está, con sus errores. Ejecuta check({ex!r}) para saber qué corregir.",
    "figure.not_done": "Todavía no hay figura de {ex}: una parte sigue lanzando NotImplementedError. Escribe el "
        "ejercicio, ejecuta su celda de código y su comprobación, y después otra vez esta celda.",
    "figure.failed": "no se pudo dibujar figure({ex!r}): tu código lanzó {error}. Ejecuta check({ex!r}): dice qué "
        "corregir.",
    "figure.no_matplotlib": "figure({ex!r}) dibuja con matplotlib, que no está instalado aquí (soportadas: {want}); "
        "check() juzga tu código sin él.",
    "figure.went_nan": "La {what} es nan o inf desde {at} (de {total}): el entrenamiento divergió, así que la curva se "
        "corta ahí (lo provoca una tasa de aprendizaje demasiado alta o una pérdida numéricamente inestable).",
    "figure.at_epoch": "la época {n}",
    "figure.at_step": "el paso {n}",
    "figure.diverged": "La {what} terminó más alta de lo que empezó ({first:.3g} → {last:.3g}): el entrenamiento divergió "
        "en vez de aprender (prueba una tasa de aprendizaje menor, o revisa la pérdida y el paso).",
    "figure.nan_short": "nan / inf",
    "figure.nan_outputs": "{name}: las salidas del modelo son nan o inf, así que no hay frontera que dibujar.",
    "figure.nan_logits": "Los logits del modelo son nan o inf: las predicciones que se muestran no significan nada.",
    "figure.chance": "{name}: exactitud de validación de {acc:.2f} tras entrenar, no mejor que el azar ({chance:g}): "
        "el modelo no aprendió.",
    "figure.chance_digits": "Exactitud de {acc:.2f} tras entrenar, no mejor que el azar ({chance:g}): el modelo no "
        "aprendió.",
    "figure.from_ex01": "Tu MLP(2, [32, 32], 1) recién inicializado: sin entrenar, así que la frontera es arbitraria "
        "hasta que el ejercicio 02 lo entrene.",
    "figure.from_ex02": "Entrenado aquí: tu MLP(2, [32, 32], 1) del ejercicio 01, {epochs} épocas de tu train_step con "
        "tu bce_with_logits, medidas con tu evaluate (Adam, lr {lr:g}, lote completo).",
    "figure.from_ex03": "Entrenada aquí: tu CNN, {steps} pasos de tu train_step (ejercicio 02) con entropía cruzada "
        "(Adam, lr {lr:g}).",
    "figure.from_ex03_untrained": "Tu CNN recién inicializada (sin entrenar): cuando train_step (ejercicio 02) esté "
        "definido en este cuaderno, la figura entrenará la CNN con él.",
    "figure.from_ex04": "Tus init_params y mlp_forward al inicializar: sin entrenar (el ejercicio 05 los entrena).",
    "figure.torch_untrained": "El panel de PyTorch es tu MLP del ejercicio 01, también sin entrenar.",
    "figure.from_ex05": "Entrenado aquí: tus init_params, mlp_forward y bce_loss (ejercicio 04), {steps} pasos de tu "
        "make_train_step (optax.adam, lr {lr:g}, lote completo).",
    "figure.from_ex05_fit": "Entrenado aquí: tus init_params, mlp_forward y bce_loss (ejercicio 04) con tu fit "
        "({steps} pasos, lr {lr:g}).",
    "figure.torch_trained": "El panel de PyTorch es tu MLP del ejercicio 01, entrenado del mismo modo con tu "
        "train_step (ejercicio 02).",
    "figure.from_ex06": "Gradientes de tu bce_loss (ejercicio 04) en los pesos iniciales de tu init_params, uno por "
        "cada ejemplo de entrenamiento de make_moons, calculados con tu per_example_grads.",
    "figure.from_ex07": "Entrenada aquí: tu FlaxCNN con imágenes de tu to_nhwc, {steps} pasos de tu "
        "make_flax_train_step (optax.adam, lr {lr:g}).",
    "figure.from_ex10": "Entrenado aquí desde unos mismos pesos iniciales, tu MLP del ejercicio 01 convertido con tu "
        "torch_mlp_to_jax: en PyTorch con tu train_step (ejercicio 02), en JAX con tu make_train_step "
        "(ejercicio 05) y tus mlp_forward y bce_loss (ejercicio 04), {epochs} pasos en cada uno.",
    "figure.compile_title": "torch.compile: grafos, rupturas del grafo y recompilaciones (backend \"eager\")",
    "figure.graphs": "grafos",
    "figure.breaks": "rupturas del grafo",
    "figure.if_clip": "un recorte con un if de Python",
    "figure.your_clip": "tu clip_by_norm",
    "figure.call": "llamada (tamaño de lote debajo)",
    "figure.graphs_so_far": "grafos compilados hasta ahora",
    "figure.default_compile": "torch.compile (dinámico automático)",
    "figure.any_batch": "tu compile_for_any_batch",
    "figure.compiled_loss": "compiled_train_step en make_moons",
    "figure.ckpt_title": "Checkpointing: lo que se guarda para la pasada hacia atrás",
    "figure.layers": "capas",
    "figure.blocks": "bloques",
    "figure.residuals": "residuos guardados (JAX)",
    "figure.saved_tensors": "tensores guardados (PyTorch)",
    "figure.plain": "sin checkpoint",
    "figure.checkpointed": "con checkpoint",
    "figure.spmd_title": "Paralelismo de datos sobre una malla de {n} dispositivo(s)",
    "figure.rows": "filas del lote",
    "figure.device": "dispositivo",
    "figure.mesh_of": "data_parallel_step, malla de {n}",
    "solution.graded": "Esta es la versión evaluada del cuaderno: no contiene soluciones. Pregunta a tu profesor, "
              "o prueba hint(\"{short}\", 1..3).",
    "solution.title": "Solución de referencia — {exercise}",
    "solution.missing": "no hay solución de {exercise} en esta versión",
    "stack.title": "VERSIONES NO SOPORTADAS: las bibliotecas de este entorno están fuera de las versiones con las que "
        "se midieron las comprobaciones:",
    "stack.bad": "  - {dist} {have} (soportadas: {want})",
    "stack.missing": "  - {dist} no está instalado (soportadas: {want})",
    "stack.python": "  - Python {have} (soportadas: {want})",
    "stack.fix": "Para arreglarlo: ejecuta `{command}` en una celda nueva, después Entorno de ejecución > Reiniciar "
        "sesión, y vuelve a ejecutar el cuaderno desde el principio.",
    "stack.fix_jupyter": "Para arreglarlo: ejecuta `{command}` en una celda nueva, después reinicia el núcleo "
        "(Kernel > Restart) y vuelve a ejecutar el cuaderno desde el principio.",
    "stack.fix_terminal": "Para arreglarlo: ejecuta `{command}` en tu terminal, en el entorno que ejecuta check.py, y "
        "vuelve a ejecutar check.py.",
    "stack.fix_python": "El propio Python está fuera de las versiones soportadas: usa un entorno cuyo Python lo esté "
        "(el entorno por defecto de Colab lo está).",
    "stack.fix_python_local": "El propio Python está fuera de las versiones soportadas: crea un entorno virtual con un "
        "Python soportado ({want}) e instala allí las bibliotecas.",
    "stack.meaning": "Hasta entonces, check() dice VERSIONES NO SOPORTADAS en los ejercicios que usan {dists} en "
        "lugar de juzgar tu código; los demás sí los juzga.",
    "public.unsupported": "VERSIONES NO SOPORTADAS: estas comprobaciones se ejecutaron con versiones de bibliotecas "
        "con las que no se midieron ({problems}), así que no dicen nada de tu código. Ejecuta `{command}` en una "
        "celda nueva, después Entorno de ejecución > Reiniciar sesión, y vuelve a ejecutar el cuaderno.",
    "public.unsupported_jupyter": "VERSIONES NO SOPORTADAS: estas comprobaciones se ejecutaron con versiones de "
        "bibliotecas con las que no se midieron ({problems}), así que no dicen nada de tu código. Ejecuta "
        "`{command}` en una celda nueva, reinicia el núcleo y vuelve a ejecutar el cuaderno.",
    "public.unsupported_terminal": "VERSIONES NO SOPORTADAS: estas comprobaciones se ejecutaron con versiones de "
        "bibliotecas con las que no se midieron ({problems}), así que no dicen nada de tu código. Ejecuta "
        "`{command}` en tu terminal y vuelve a ejecutar check.py.",
    "public.unsupported_python": "VERSIONES NO SOPORTADAS: estas comprobaciones se ejecutaron con versiones de "
        "bibliotecas con las que no se midieron ({problems}), así que no dicen nada de tu código. Usa un entorno "
        "con versiones soportadas.",
    "public.grader_trouble": "PROBLEMA DEL CORRECTOR: {n} comprobación(es) pública(s) no pudieron ejecutarse con las "
        "bibliotecas de este entorno; es culpa de las comprobaciones, no de tu código. Avisa a tu profesor con "
        "este mensaje.",
    "public.apart": "Nota: aquí JAX tiene {have} dispositivo(s) {platform}, demasiado pocos para las mallas de este "
        "ejercicio, así que estas comprobaciones se ejecutaron en un proceso aparte con {need} dispositivos CPU, "
        "como las ejecuta el corrector.",
    "public.one_device": "SIN COMPROBAR EN VARIOS DISPOSITIVOS: las {n} comprobaciones públicas pasan en una malla de "
        "1 dispositivo {platform}, el único que JAX tiene aquí; en un solo dispositivo, los errores de paralelismo "
        "de datos (un gradiente o una pérdida promediados en cada dispositivo en lugar de entre los dispositivos, "
        "un lote copiado en cada dispositivo en lugar de repartido, `psum` donde corresponde `pmean`) dan los "
        "números correctos, así que esto no es un aprobado. Un proceso aparte con {need} dispositivos CPU no pudo "
        "comprobarlas ({why}). Para comprobarlas, guarda el cuaderno y vuelve a ejecutar check(\"{exercise}\"), "
        "o ejecuta `python check.py {exercise}` junto al archivo .py del ejercicio.",
    "public.apart_no_source": "check tiene tus funciones pero no su código como texto, para cargarlo en ese proceso",
}
