# VALID: setup() instead of @nn.compact with the submodules named Conv_0, Conv_1, Dense_0, Dense_1 (the
#   contract's tree); to_nhwc by moveaxis; value_and_grad with has_aux; jax.jit(step) returned
import flax.linen as nn
import jax
import jax.numpy as jnp
import optax


class FlaxCNN(nn.Module):
    num_classes: int = 10

    def setup(self):
        # same names @nn.compact would give
        self.Conv_0 = nn.Conv(features=16, kernel_size=(3, 3), padding="SAME")
        self.Conv_1 = nn.Conv(features=32, kernel_size=(3, 3), padding="SAME")
        self.Dense_0 = nn.Dense(features=64)
        self.Dense_1 = nn.Dense(features=self.num_classes)

    def __call__(self, x):
        x = nn.avg_pool(nn.relu(self.Conv_0(x)), window_shape=(2, 2), strides=(2, 2), padding="VALID")
        x = nn.avg_pool(nn.relu(self.Conv_1(x)), window_shape=(2, 2), strides=(2, 2), padding="VALID")
        x = jnp.reshape(x, (x.shape[0], -1))
        return self.Dense_1(nn.relu(self.Dense_0(x)))


def to_nhwc(x):
    return jnp.moveaxis(jnp.asarray(x), 1, -1)


def make_flax_train_step(model, optimizer):
    def loss_fn(params, x, y):
        logits = model.apply(params, x)
        loss = optax.softmax_cross_entropy_with_integer_labels(logits=logits, labels=y)
        return jnp.mean(loss), logits

    def step(params, opt_state, x, y):
        (loss, _logits), grads = jax.value_and_grad(loss_fn, has_aux=True)(params, x, y)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        return params, opt_state, loss

    return jax.jit(step)
