"""Hints of __NAME__: tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code (tests/test_i18n.py checks it)."""

HINTS: dict[str, list[str]] = {
    "en": [
        "Standardising works row by row: each row of the last axis gets its own mean and its own spread, "
        "and the result has the shape of the input.",
        "Reduce over the last axis only and keep that axis (size 1) so the statistics broadcast back over "
        "the row; a fixed axis number is right for 2-D inputs only.",
        "The variance is the biased one (divide by d, not d - 1), and eps goes inside the square root.",
    ],
    "es": [
        "Estandarizar se hace fila a fila: cada fila del último eje tiene su propia media y su propia "
        "dispersión, y el resultado tiene la forma de la entrada.",
        "Reduce solo sobre el último eje y consérvalo (con tamaño 1) para que los estadísticos se difundan "
        "sobre la fila; un número de eje fijo solo acierta con entradas de dos dimensiones.",
        "La varianza es la sesgada (divide por d, no por d - 1), y eps va dentro de la raíz cuadrada.",
    ],
}
