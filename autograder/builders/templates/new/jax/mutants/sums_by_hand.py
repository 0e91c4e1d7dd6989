# VALID: the moments from sums over the last axis, no mean/var helpers
import jax
import jax.numpy as jnp


def __FUNC__(x: jax.Array) -> jax.Array:
    d = x.shape[-1]
    centred = x - jnp.sum(x, axis=-1, keepdims=True) / d
    return centred * jax.lax.rsqrt(jnp.sum(centred * centred, axis=-1, keepdims=True) / d + 1e-5)
