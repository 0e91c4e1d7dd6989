"""The notebook's and the student template's fixed texts (UI text, catalogued like messages): the notebook's
intro and outro, the set-up cell's comments, the stub markers, the students' README and check.py."""

EN = {
    "notebook.intro_md": "# tapetrace — the tape vs the trace: PyTorch and JAX, exercise by exercise\n\n"
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
        "**Submit** the notebook file itself (Colab: File → Download → Download .ipynb).\n",
    "notebook.intro_help_md": "**Help along the way**\n"
        "- `hint(\"exNN\")`, `hint(\"exNN\", 2)`, `hint(\"exNN\", 3)`: three hints per exercise, from a "
        "nudge toward the idea to a pointed remark about the API. None contains the solution.\n"
        "- `figure(\"exNN\")`: once an exercise passes its checks, draws your result from your own code "
        "(decision boundaries, training curves, a confusion matrix, derivatives...).\n"
        "- Cells that only call `check`, `hint` or `figure` are not graded.\n",
    "notebook.intro_selfstudy_md": "**Self-study edition**: `solution(\"exNN\")` shows the reference solution of an exercise. "
        "Try the checks and the hints first.\n",
    "notebook.outro_md": "## Submit\n\n"
        "Save the notebook and hand in the `.ipynb` file (Colab: File → Download → Download .ipynb).\n"
        "Hidden tests then grade every exercise on fresh inputs, each in its own sandboxed process with a time "
        "limit,\n"
        "so one exercise that crashes or never finishes costs only that exercise's points.\n",
    "notebook.points_line": "*{total:g} points: the public checks, which `check(\"{short}\")` runs, are worth {public:g} of "
        "them; hidden tests grade the rest when you submit.*",
    "notebook.title_prefix": "Exercise",
    "notebook.setup_comment": "#@title tapetrace set-up: run this cell first",
    "notebook.title": "tapetrace — the tape vs the trace: PyTorch and JAX, side by side",
    "notebook.intro": "In these exercises you build the same models twice: in **PyTorch**, where autograd records "
        "every operation on a *tape* while your Python runs, and in **JAX**, where `jax.jit`, `jax.grad` "
        "and `jax.vmap` *trace* your function once into a jaxpr and transform or compile that trace. "
        "The data are two small scikit-learn datasets: make_moons (a two-class MLP) and load_digits (an 8x8 "
        "digits CNN).\n\n"
        "Each exercise has instructions, a code cell with the functions to write (replace each "
        "`raise NotImplementedError` with your code; keep the names and signatures), and a cell that "
        "checks your work.",
    "notebook.setup_title": "Set-up",
    "notebook.setup": "Run the next cell once, at the start of each session. It installs the grading package if it is "
        "missing (Colab already has PyTorch, JAX, Flax and optax), loads the datasets and sets the "
        "language of the messages. It does not change the versions of torch or jax that are installed.",
    "notebook.exercise": "Exercise {number}",
    "notebook.instructions": "Instructions",
    "notebook.your_code": "Your code",
    "notebook.check_title": "Check your work",
    "notebook.check": "Run `check(\"{short}\")` after the cell above. It runs the public checks of this exercise on "
        "your code, against values recorded from the reference solution, and says what is wrong and how "
        "to fix it.",
    "notebook.hidden_reminder": "The public checks are a sample. Your grade comes from the hidden tests, which run more cases, on "
        "inputs drawn at grading time, and check more properties: passing here is necessary, not "
        "sufficient.",
    "notebook.hints_title": "Stuck?",
    "notebook.hints": "`hint(\"{short}\")` gives a first nudge; `hint(\"{short}\", 2)` and `hint(\"{short}\", 3)` get "
        "more specific. No hint contains the solution.",
    "notebook.figure_title": "See your result",
    "notebook.figure": "Once the checks pass, `figure(\"{short}\")` draws your result from your own code (it trains "
        "briefly where it needs a trained model).",
    "notebook.solution_title": "Solution (self-study)",
    "notebook.solution": "`solution(\"{short}\")` shows the reference solution. Try the hints first: you learn more from "
        "the struggle than from the answer.",
    "notebook.not_attempted": "not attempted",
    "notebook.incorrect": "incorrect",
    "notebook.passed": "passed",
    "notebook.check_summary": "{exercise}: {passed} of {total} public checks passed",
    "notebook.all_passed": "All public checks passed. The hidden tests will check more.",
    "notebook.submit_title": "Submitting",
    "notebook.submit": "Save the notebook (File -> Download -> .ipynb) and hand in the .ipynb file. Keep the names of "
        "the functions and classes exactly as given: the grader looks for them.",
    "setup.comments": """\
{title}
# It installs nothing (torch, jax, flax and optax are used as your runtime has them) and writes
# one file next to this notebook, {runtime_file}: the public checks, their messages and a
# snapshot of the reference solution's outputs on the checks' inputs (no solution code).
# Then check("ex01") checks exercise 01, and check() checks them all; hint("ex01") gives a
# hint and figure("ex01") draws your result.
""",
    "setup.damaged": "tapetrace: the set-up cell is damaged; download a fresh copy of the notebook",
    "stub.code_here": "# YOUR CODE HERE",
    "stub.replace": "replace this line with your code",
    "readme": """\
# tapetrace: your exercises

- `tapetrace.ipynb`: all the exercises. Open it in Colab (File → Upload notebook) or Jupyter,
  run the first cell, then work through the exercises; `check("ex01")` runs exercise 01's public checks,
  `hint("ex01")` gives a hint (`hint("ex01", 2)`, `hint("ex01", 3)`: more specific ones) and `figure("ex01")`
  draws your result.
- `{first}.py` … `{last}.py` ({count} exercises): the same stubs as plain Python files, if you prefer to work
  locally. `python check.py` (or `python check.py ex01 ex04`) runs their public checks; it needs
  `tapetrace.ipynb` next to it (the checks travel inside the notebook).

A check reports NOT ATTEMPTED, INCORRECT (with what is wrong) or PASSED. Public checks cover part of
each exercise's points: hidden tests grade more (other inputs, more properties) when you submit.
Submit the notebook (or, if your instructor asks for it, the `.py` files).
""",
    "check_py.doc": """Public self-checks for the .py exercise files: `python check.py` (all) or `python check.py ex01 ex04`.

The checks travel inside tapetrace.ipynb (keep it next to this file): like the notebook's set-up
cell, this writes tapetrace_checks.zip here, then runs each exercise file (exNN_*.py) of this
folder in this process and prints its public checks. Hidden tests grade more when you submit.
An exercise is named by its number or prefix (`5`, `ex5`, `ex05`). Exit status: 0 when every
exercise checked passes, 1 when one does not, 2 for a name that is no exercise here.
""",
    "check_py.no_setup": "check.py: tapetrace.ipynb has no set-up cell; download a fresh copy",
    "check_py.no_file": "{exercise}: no file {exercise}.py here",
}

ES = {
    "notebook.intro_md": "# tapetrace — la cinta frente a la traza: PyTorch y JAX, ejercicio a ejercicio\n\n"
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
        "**Entrega** el propio archivo del cuaderno (Colab: Archivo → Descargar → Descargar .ipynb).\n",
    "notebook.intro_help_md": "**Ayuda por el camino**\n"
        "- `hint(\"exNN\")`, `hint(\"exNN\", 2)`, `hint(\"exNN\", 3)`: tres pistas por ejercicio, desde un "
        "empujón hacia la idea hasta una indicación concreta sobre la API. Ninguna contiene la solución.\n"
        "- `figure(\"exNN\")`: cuando un ejercicio supera sus comprobaciones, dibuja tu resultado a partir "
        "de tu propio código (fronteras de decisión, curvas de entrenamiento, una matriz de confusión, "
        "derivadas...).\n"
        "- Las celdas que solo llaman a `check`, `hint` o `figure` no se corrigen.\n",
    "notebook.intro_selfstudy_md": "**Edición de autoestudio**: `solution(\"exNN\")` muestra la solución de referencia de un ejercicio. "
        "Prueba antes las comprobaciones y las pistas.\n",
    "notebook.outro_md": "## Entrega\n\n"
        "Guarda el cuaderno y entrega el archivo `.ipynb` (Colab: Archivo → Descargar → Descargar .ipynb).\n"
        "Después, las pruebas ocultas corrigen cada ejercicio con entradas nuevas, cada uno en su propio "
        "proceso aislado con un límite de tiempo,\n"
        "así que un ejercicio que hace caer el proceso o nunca termina solo cuesta los puntos de ese ejercicio.\n",
    "notebook.points_line": "*{total:g} puntos: las comprobaciones públicas, que ejecuta `check(\"{short}\")`, valen "
        "{public:g}; al entregar, las pruebas ocultas corrigen el resto.*",
    "notebook.title_prefix": "Ejercicio",
    "notebook.setup_comment": "#@title Preparación de tapetrace: ejecuta primero esta celda",
    "notebook.title": "tapetrace — la cinta frente a la traza: PyTorch y JAX, lado a lado",
    "notebook.intro": "En estos ejercicios construyes los mismos modelos dos veces: en **PyTorch**, donde autograd "
        "graba cada operación en una *cinta* mientras se ejecuta tu Python, y en **JAX**, donde `jax.jit`, "
        "`jax.grad` y `jax.vmap` *trazan* tu función una vez en un jaxpr y transforman o compilan esa "
        "traza. Los datos son dos pequeños conjuntos de datos de scikit-learn: make_moons (un MLP de dos clases) y "
        "load_digits (una CNN para dígitos de 8x8).\n\n"
        "Cada ejercicio tiene instrucciones, una celda de código con las funciones que debes escribir "
        "(sustituye cada `raise NotImplementedError` por tu código; conserva los nombres y las firmas) y "
        "una celda que comprueba tu trabajo.",
    "notebook.setup_title": "Preparación",
    "notebook.setup": "Ejecuta la celda siguiente una vez, al principio de cada sesión. Instala el paquete de corrección "
        "si falta (Colab ya tiene PyTorch, JAX, Flax y optax), carga los conjuntos de datos y fija el "
        "idioma de los mensajes. No cambia las versiones de torch ni de jax instaladas.",
    "notebook.exercise": "Ejercicio {number}",
    "notebook.instructions": "Instrucciones",
    "notebook.your_code": "Tu código",
    "notebook.check_title": "Comprueba tu trabajo",
    "notebook.check": "Ejecuta `check(\"{short}\")` después de la celda anterior. Pasa las pruebas públicas de este "
        "ejercicio sobre tu código, contra valores grabados de la solución de referencia, y te dice qué "
        "falla y cómo arreglarlo.",
    "notebook.hidden_reminder": "Las pruebas públicas son una muestra. Tu nota sale de las pruebas ocultas, que ejecutan más "
        "casos, con entradas sorteadas al corregir, y comprueban más propiedades: superarlas aquí es "
        "necesario, no suficiente.",
    "notebook.hints_title": "¿Atascado?",
    "notebook.hints": "`hint(\"{short}\")` da un primer empujón; `hint(\"{short}\", 2)` y `hint(\"{short}\", 3)` son "
        "más concretas. Ninguna pista contiene la solución.",
    "notebook.figure_title": "Mira tu resultado",
    "notebook.figure": "Cuando las pruebas pasen, `figure(\"{short}\")` dibuja tu resultado a partir de tu propio código "
        "(entrena un poco cuando necesita un modelo entrenado).",
    "notebook.solution_title": "Solución (autoestudio)",
    "notebook.solution": "`solution(\"{short}\")` muestra la solución de referencia. Prueba antes las pistas: se aprende "
        "más del esfuerzo que de la respuesta.",
    "notebook.not_attempted": "sin intentar",
    "notebook.incorrect": "incorrecto",
    "notebook.passed": "superado",
    "notebook.check_summary": "{exercise}: {passed} de {total} pruebas públicas superadas",
    "notebook.all_passed": "Todas las pruebas públicas superadas. Las pruebas ocultas comprobarán más.",
    "notebook.submit_title": "Entrega",
    "notebook.submit": "Guarda el cuaderno (Archivo -> Descargar -> .ipynb) y entrega el archivo .ipynb. Conserva "
        "exactamente los nombres de las funciones y clases: el corrector los busca.",
    "setup.comments": """\
{title}
# No instala nada (usa torch, jax, flax y optax tal como los tiene tu entorno) y escribe un
# archivo junto a este cuaderno, {runtime_file}: las pruebas públicas, sus mensajes y una
# instantánea de las salidas de la solución de referencia con las entradas de las pruebas
# (sin código de la solución). Después, check("ex01") comprueba el ejercicio 01 y check()
# los comprueba todos; hint("ex01") da una pista y figure("ex01") dibuja tu resultado.
""",
    "setup.damaged": "tapetrace: la celda de preparación está dañada; descarga una copia nueva del cuaderno",
    "stub.code_here": "# TU CÓDIGO AQUÍ",
    "stub.replace": "sustituye esta línea por tu código",
    "readme": """\
# tapetrace: tus ejercicios

- `tapetrace.ipynb`: todos los ejercicios. Ábrelo en Colab (Archivo → Subir cuaderno) o en Jupyter,
  ejecuta la primera celda y después resuelve los ejercicios; `check("ex01")` ejecuta las comprobaciones
  públicas del ejercicio 01, `hint("ex01")` da una pista (`hint("ex01", 2)`, `hint("ex01", 3)`: otras más
  concretas) y `figure("ex01")` dibuja tu resultado.
- `{first}.py` … `{last}.py` ({count} ejercicios): los mismos esqueletos como archivos de Python, por si
  prefieres trabajar en local. `python check.py` (o `python check.py ex01 ex04`) ejecuta sus
  comprobaciones públicas; necesita `tapetrace.ipynb` al lado (las comprobaciones viajan dentro del
  cuaderno).

Una comprobación informa SIN INTENTAR, INCORRECTO (con lo que falla) o SUPERADO. Las comprobaciones
públicas cubren parte de los puntos de cada ejercicio: al entregar, las pruebas ocultas corrigen más
(otras entradas, más propiedades). Entrega el cuaderno (o, si tu profesor lo pide, los archivos `.py`).
""",
    "check_py.doc": """Pruebas públicas de los archivos .py: `python check.py` (todos) o `python check.py ex01 ex04`.

Las pruebas viajan dentro de tapetrace.ipynb (mantenlo junto a este archivo): como la celda de
preparación del cuaderno, esto escribe aquí tapetrace_checks.zip, después ejecuta en este proceso
cada archivo de ejercicio (exNN_*.py) de esta carpeta y muestra sus pruebas públicas. Al entregar,
las pruebas ocultas corrigen más. Un ejercicio se nombra por su número o prefijo (`5`, `ex5`, `ex05`).
Código de salida: 0 si pasan todos los ejercicios comprobados, 1 si alguno no, 2 si un nombre no es
ningún ejercicio de aquí.
""",
    "check_py.no_setup": "check.py: tapetrace.ipynb no tiene celda de preparación; descarga una copia nueva",
    "check_py.no_file": "{exercise}: aquí no hay ningún archivo {exercise}.py",
}
