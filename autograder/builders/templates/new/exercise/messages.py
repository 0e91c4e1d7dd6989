"""Messages of __NAME__: ``EN`` and ``ES``, the same keys and the same placeholders."""

EN = {
    "__KEY___LEADING_AXES": "`{call}` differs from the reference on a {ndim}-D input ({detail}): take the mean and the variance over the last axis only (dim=-1 in PyTorch, axis=-1 in JAX), whatever the number of leading axes",
    "__KEY___FIGURE": "your `{call}`: the input (left) and its standardised rows (right)",
}

ES = {
    "__KEY___LEADING_AXES": "`{call}` difiere de la referencia con una entrada de {ndim} dimensiones ({detail}): toma la media y la varianza solo sobre el último eje (dim=-1 en PyTorch, axis=-1 en JAX), sea cual sea el número de ejes iniciales",
    "__KEY___FIGURE": "tu `{call}`: la entrada (izquierda) y sus filas estandarizadas (derecha)",
}
