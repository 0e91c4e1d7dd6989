"""Hints of ex13_spmd: tier 1 nudges toward the concept, tier 2 narrows it down, tier 3 is a pointed
remark about the API. No tier holds solution code (tests/test_i18n.py checks it)."""

HINTS: dict[str, list[str]] = {
    "en": [
        "SPMD: one program, many devices, each working on its own piece of the data. With GSPMD you do not "
        "write per-device code: you describe how arrays are laid out over a mesh of devices and `jax.jit` "
        "partitions the step (and adds the communication). With `shard_map` you write the code of one device "
        "and the communication yourself.",
        "A 1-D mesh over the first n devices with its axis named \"data\"; a `NamedSharding` with "
        "`PartitionSpec(\"data\")` splits an array's leading axis over that axis, `PartitionSpec()` "
        "replicates it. The step takes replicated params and state and a split batch, and gives replicated "
        "results back: `jax.jit` can be told both (`in_shardings`, `out_shardings`). Inside `shard_map` each "
        "device's loss covers only its shard: average it across the devices with a collective over "
        "\"data\".",
        "`jax.make_mesh` takes the mesh shape, the axis names and `devices=`; `jax.device_put` places an "
        "array with a sharding. Write exercise 05's step unchanged and jit it with one sharding per argument "
        "and per output. For the loss: an inner function of (params, x_shard, y_shard) that returns "
        "`jax.lax.pmean` of `loss_fn` over \"data\", mapped with `jax.shard_map(..., mesh=mesh, "
        "in_specs=(P(), P(\"data\"), P(\"data\")), out_specs=P())`.",
    ],
    "es": [
        "SPMD: un programa, muchos dispositivos, cada uno con su parte de los datos. Con GSPMD no escribes "
        "código por dispositivo: describes cómo se disponen los arrays sobre una malla de dispositivos y "
        "`jax.jit` reparte el paso (y añade la comunicación). Con `shard_map` escribes el código de un "
        "dispositivo y también la comunicación.",
        "Una malla 1-D sobre los n primeros dispositivos, con su eje llamado \"data\"; un `NamedSharding` con "
        "`PartitionSpec(\"data\")` divide el eje inicial de un array sobre ese eje, `PartitionSpec()` lo "
        "replica. El paso recibe params y estado replicados y un lote dividido, y devuelve resultados "
        "replicados: a `jax.jit` se le pueden indicar ambas cosas (`in_shardings`, `out_shardings`). Dentro "
        "de `shard_map` la pérdida de cada dispositivo cubre solo su fragmento: promédiala entre los "
        "dispositivos con un colectivo sobre \"data\".",
        "`jax.make_mesh` recibe la forma de la malla, los nombres de los ejes y `devices=`; `jax.device_put` "
        "coloca un array con un sharding. Escribe el paso del ejercicio 05 sin cambios y compílalo con jit "
        "con un sharding por argumento y por salida. Para la pérdida: una función interna de (params, "
        "x_shard, y_shard) que devuelva `jax.lax.pmean` de `loss_fn` sobre \"data\", aplicada con "
        "`jax.shard_map(..., mesh=mesh, in_specs=(P(), P(\"data\"), P(\"data\")), out_specs=P())`.",
    ],
}
