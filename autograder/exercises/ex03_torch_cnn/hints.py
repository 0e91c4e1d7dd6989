"""Hints of ex03_torch_cnn: tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code (tests/test_i18n.py checks it)."""

HINTS: dict[str, list[str]] = {
    "en": [
        "Follow the list of layers in the instructions literally: the order in which you create them in "
        "`__init__` is the order of `parameters()`, and the grader copies weights in that order.",
        "Follow the shapes: (N, 1, 8, 8) -> a 3x3 conv with padding 1 keeps 8x8 -> pooling halves it to 4x4 "
        "-> conv -> pooling to 2x2, with 32 channels: 32 * 2 * 2 = 128 features reach the first `nn.Linear`. "
        "Flattening keeps the batch axis.",
        "Dropout must be a module created in `__init__` (`nn.Dropout`), so that `model.train()` and "
        "`model.eval()` switch it on and off; the functional `F.dropout` with its default `training=True` "
        "stays on in eval mode. `nn.Sequential` keeps the order of the layers for you, and `nn.Flatten()` "
        "flattens everything but the batch axis.",
    ],
    "es": [
        "Sigue al pie de la letra la lista de capas de las instrucciones: el orden en que las creas en "
        "`__init__` es el orden de `parameters()`, y el corrector copia los pesos en ese orden.",
        "Sigue las formas: (N, 1, 8, 8) -> una convolución 3x3 con padding 1 mantiene 8x8 -> el pooling la "
        "reduce a 4x4 -> convolución -> pooling a 2x2, con 32 canales: 32 * 2 * 2 = 128 características "
        "llegan al primer `nn.Linear`. Aplanar conserva el eje del lote.",
        "El dropout debe ser un módulo creado en `__init__` (`nn.Dropout`), para que `model.train()` y "
        "`model.eval()` lo enciendan y apaguen; la función `F.dropout` con su `training=True` por defecto "
        "sigue activa en modo eval. `nn.Sequential` mantiene el orden de las capas por ti, y `nn.Flatten()` "
        "aplana todo salvo el eje del lote.",
    ],
}
