"""Hints of ex07_flax_cnn: tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code (tests/test_i18n.py checks it)."""

HINTS: dict[str, list[str]] = {
    "en": [
        "Flax is channels-last: images are (N, H, W, C) and conv kernels (kH, kW, in, out). Change the layout "
        "of the data, with `to_nhwc`, before it enters the model, never inside the model.",
        "With `@nn.compact` you create the layers inline inside `__call__`; Flax names them automatically in "
        "call order (Conv_0, Conv_1, Dense_0, Dense_1). Flax pooling has stride 1 by default (PyTorch's "
        "stride is the window): pass `strides`. A `reshape` gives the right shape with scrambled pixels: "
        "use a transpose.",
        "`nn.avg_pool` with window (2, 2) and `strides=(2, 2)`; flatten with a reshape that keeps "
        "`x.shape[0]`. For the step: a loss function of the params that calls `model.apply` and takes the "
        "mean of `optax.softmax_cross_entropy_with_integer_labels`; `jax.value_and_grad`, the optimizer's "
        "`update`, `optax.apply_updates`, all in one function compiled with `jax.jit` that "
        "`make_flax_train_step` returns.",
    ],
    "es": [
        "Flax es canales al final: las imágenes son (N, H, W, C) y los kernels de convolución (kH, kW, in, "
        "out). Cambia la disposición de los datos, con `to_nhwc`, antes de que entren en el modelo, nunca "
        "dentro del modelo.",
        "Con `@nn.compact` creas las capas en línea dentro de `__call__`; Flax las nombra automáticamente en "
        "orden de llamada (Conv_0, Conv_1, Dense_0, Dense_1). El pooling de Flax tiene paso 1 por defecto "
        "(en PyTorch el paso es la ventana): pasa `strides`. Un `reshape` da la forma correcta con los "
        "píxeles revueltos: usa una trasposición.",
        "`nn.avg_pool` con ventana (2, 2) y `strides=(2, 2)`; aplana con un reshape que conserve "
        "`x.shape[0]`. Para el paso: una función de pérdida de los parámetros que llama a `model.apply` y "
        "toma la media de `optax.softmax_cross_entropy_with_integer_labels`; `jax.value_and_grad`, el "
        "`update` del optimizador, `optax.apply_updates`, todo en una función compilada con `jax.jit` que "
        "devuelve `make_flax_train_step`.",
    ],
}
