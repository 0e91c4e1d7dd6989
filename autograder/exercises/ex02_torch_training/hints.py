"""Hints of ex02_torch_training: tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code (tests/test_i18n.py checks it)."""

HINTS: dict[str, list[str]] = {
    "en": [
        "Training in PyTorch is a sequence of side effects: `backward()` *adds* gradients into each "
        "parameter's `.grad`, the optimizer changes the parameters in place, and `train()` / `eval()` flip a "
        "flag that layers read. The order of the calls is the whole exercise.",
        "For the loss, never evaluate `exp` of a large positive number: split z into its positive part and "
        "`-|z|`, as in the formula. For `evaluate`, the evaluation mode and the no-graph context are two "
        "different things, and you need both. The returned numbers are Python floats, not tensors.",
        "`torch.clamp(..., min=0)` is max(z, 0) and `torch.log1p(t)` is log(1 + t), accurate for small t. "
        "Clear the old gradients with the optimizer's `zero_grad` method *before* `backward`. `.item()` "
        "turns a 0-d tensor into a float. In `fit`, create the `torch.optim.Adam` optimizer once, before "
        "the epochs, not inside the loop.",
    ],
    "es": [
        "Entrenar en PyTorch es una secuencia de efectos secundarios: `backward()` *suma* gradientes en el "
        "`.grad` de cada parámetro, el optimizador modifica los parámetros en el sitio y `train()` / `eval()` "
        "cambian un indicador que leen las capas. El orden de las llamadas es todo el ejercicio.",
        "En la pérdida, nunca calcules `exp` de un número positivo grande: separa z en su parte positiva y "
        "`-|z|`, como en la fórmula. En `evaluate`, el modo de evaluación y el contexto sin grafo son dos "
        "cosas distintas, y necesitas ambas. Los números devueltos son floats de Python, no tensores.",
        "`torch.clamp(..., min=0)` es max(z, 0) y `torch.log1p(t)` es log(1 + t), precisa para t pequeño. "
        "Borra los gradientes anteriores con el método `zero_grad` del optimizador *antes* de `backward`. "
        "`.item()` convierte un tensor 0-d en un float. En `fit`, crea el optimizador `torch.optim.Adam` una "
        "sola vez, antes de las épocas, no dentro del bucle.",
    ],
}
