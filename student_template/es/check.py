"""Pruebas públicas de los archivos .py: `python check.py` (todos) o `python check.py ex01 ex04`.

Las pruebas viajan dentro de tapetrace.ipynb (mantenlo junto a este archivo): como la celda de
preparación del cuaderno, esto escribe aquí tapetrace_checks.zip, después ejecuta en este proceso
cada archivo de ejercicio (exNN_*.py) de esta carpeta y muestra sus pruebas públicas. Al entregar,
las pruebas ocultas corrigen más. Un ejercicio se nombra por su número o prefijo (`5`, `ex5`, `ex05`).
Código de salida: 0 si pasan todos los ejercicios comprobados, 1 si alguno no, 2 si un nombre no es
ningún ejercicio de aquí.
"""

import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TEXT = {
    'no_setup': 'check.py: tapetrace.ipynb no tiene celda de preparación; descarga una copia nueva',
    'no_file': '{exercise}: aquí no hay ningún archivo {exercise}.py',
}


def _set_up():
    with open(os.path.join(HERE, "tapetrace.ipynb"), encoding="utf-8") as fh:
        notebook = json.load(fh)
    for cell in notebook["cells"]:
        if cell.get("metadata", {}).get("tapetrace", {}).get("role") == "setup":
            before = os.getcwd()
            os.chdir(HERE)
            try:
                exec("".join(cell["source"]), {"__name__": "__tapetrace_setup__"})
            finally:
                os.chdir(before)
            return
    sys.exit(TEXT["no_setup"])


def main(argv):
    """Checks the exercises ``argv`` names (all without one); exit 0 when all pass, 1 when not, 2: a bad argument."""
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip())
        return 0
    _set_up()
    from autograder.builders import public as _public
    from autograder.core import i18n as _i18n
    from autograder.core import registry as _registry

    known = list(_public.snapshot()["exercises"])
    try:
        wanted = [_registry.resolve(a, known, _i18n.get_language(None)) for a in argv] or known
    except ValueError as err:
        print(f"check.py: {err}", file=sys.stderr)
        return 2
    passed = True
    several = len(wanted) > 1
    results = []
    for exercise in known:
        if exercise not in wanted:
            continue
        path = os.path.join(HERE, exercise + ".py")
        if not os.path.isfile(path):
            print(TEXT["no_file"].format(exercise=exercise) + "\n")
            passed = False
            continue
        result = _public.run_file(exercise, path)  # a file that does not load: INCORRECT, saying why and where
        results.append(result)
        print((_public.report_lines(result) if several else result.report) + "\n")
        passed = passed and result.status == "passed"
    if several and results:  # the points reminder once, after how many pass
        print(_public.all_summary(results))
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
