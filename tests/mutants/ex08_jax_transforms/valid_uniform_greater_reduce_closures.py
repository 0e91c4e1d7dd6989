# VALID: dropout mask uniform(key) > rate (drops a draw of exactly 0.0 at rate 0: accepted, see
#   tests/test_ex08_dropout_rate_zero.py); nth_derivative by a loop; coin_net's cond with lambdas over x
import jax
import jax.numpy as jnp


def nth_derivative(f, n):
    g = f
    for _ in range(n):
        g = jax.grad(g)
    return g


def coin_net(x, key, w1, w2):
    return jax.lax.cond(jax.random.bernoulli(key), lambda x: jax.nn.relu(x @ w1), lambda x: jax.nn.sigmoid(x @ w2), x)


def count_ops(f, *args):
    return len(jax.make_jaxpr(f)(*args).jaxpr.eqns)


def dropout(x, rate, key):
    keep = jax.random.uniform(key, x.shape) > rate
    return jnp.where(keep, x / (1 - rate), 0)
