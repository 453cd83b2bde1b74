"""Training the networks with numpy: RPROP (full batch) and Adam (mini-batches).

RPROP is the variant PyTorch's ``torch.optim.Rprop`` implements (Riedmiller &
Braun's RPROP without weight-backtracking, "iRprop-"): per weight, the step
grows by 1.2 while the gradient keeps its sign and shrinks by 0.5 when it
flips (and that gradient is then ignored), within [1e-6, 50].
"""

from __future__ import annotations

import sys
import time
from typing import Callable, NamedTuple

import numpy as np

from ..nn.mlp import ACTIVATIONS, MLP

_DERIV = {
    "sigmoid": lambda y: y * (1.0 - y),
    "tanh": lambda y: 1.0 - y * y,
    "linear": lambda y: np.ones_like(y),
}


def init_mlp(
    sizes: list[int],
    activations: list[str],
    rng: np.random.Generator,
    in_offset: np.ndarray,
    in_scale: np.ndarray,
    out_offset: np.ndarray,
    out_scale: np.ndarray,
) -> MLP:
    """A network with Glorot-uniform weights and zero biases."""
    ws, bs = [], []
    for n_in, n_out in zip(sizes[:-1], sizes[1:]):
        limit = np.sqrt(6.0 / (n_in + n_out))
        ws.append(rng.uniform(-limit, limit, (n_in, n_out)))
        bs.append(np.zeros(n_out))
    return MLP(tuple(ws), tuple(bs), tuple(activations), in_offset, in_scale, out_offset, out_scale, {})


def mse(out: np.ndarray, y: np.ndarray) -> tuple[float, np.ndarray]:
    """Mean squared error and its gradient with respect to the output."""
    diff = out - y
    return float(np.mean(diff * diff)), 2.0 * diff / diff.size


def gradients(net: MLP, x: np.ndarray, y: np.ndarray, loss_fn=mse) -> tuple[float, list, list]:
    """A loss of the network's output (default: mean squared error against ``y``) and its
    gradients by backpropagation. ``loss_fn(output, y) -> (loss, d loss / d output)``."""
    hs = [x]
    for w, b, a in zip(net.weights, net.biases, net.activations):
        hs.append(ACTIVATIONS[a](hs[-1] @ w + b))
    loss, delta = loss_fn(hs[-1], y)
    gw, gb = [None] * len(net.weights), [None] * len(net.weights)
    for i in range(len(net.weights) - 1, -1, -1):
        delta = delta * _DERIV[net.activations[i]](hs[i + 1])
        gw[i] = hs[i].T @ delta
        gb[i] = delta.sum(axis=0)
        if i:
            delta = delta @ net.weights[i].T
    return loss, gw, gb


class Rprop:
    """iRprop- over a list of arrays, updated in place (same rule as torch.optim.Rprop)."""

    def __init__(self, params: list, lr: float = 0.01, etas=(0.5, 1.2), step_sizes=(1e-6, 50.0)):
        self.params = params
        self.etaminus, self.etaplus = etas
        self.smin, self.smax = step_sizes
        self.prev = [np.zeros_like(p) for p in params]
        self.step = [np.full_like(p, lr) for p in params]

    def update(self, grads: list) -> None:
        for p, g, prev, step in zip(self.params, grads, self.prev, self.step):
            s = np.sign(g * prev)
            factor = np.where(s > 0, self.etaplus, np.where(s < 0, self.etaminus, 1.0))
            np.clip(step * factor, self.smin, self.smax, out=step)
            g = np.where(s < 0, 0.0, g)
            p -= np.sign(g) * step
            prev[...] = g


class Adam:
    """Adam over a list of arrays, updated in place."""

    def __init__(self, params: list, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8):
        self.params, self.lr, (self.b1, self.b2), self.eps = params, lr, betas, eps
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def update(self, grads: list) -> None:
        self.t += 1
        c1, c2 = 1 - self.b1**self.t, 1 - self.b2**self.t
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            m *= self.b1
            m += (1 - self.b1) * g
            v *= self.b2
            v += (1 - self.b2) * g * g
            p -= self.lr * (m / c1) / (np.sqrt(v / c2) + self.eps)


class History(NamedTuple):
    """Per epoch: training and validation loss; the epoch kept (best validation)."""

    train: list
    valid: list
    best_epoch: int
    seconds: float


def _params(net: MLP) -> list:
    return list(net.weights) + list(net.biases)


def _copy(net: MLP) -> MLP:
    return net._replace(weights=tuple(w.copy() for w in net.weights), biases=tuple(b.copy() for b in net.biases))


def fit(
    net: MLP,
    x: np.ndarray,
    y: np.ndarray,
    xv: np.ndarray,
    yv: np.ndarray,
    optimiser: str,
    epochs: int,
    patience: int,
    rng: np.random.Generator,
    batch: int = 0,
    lr: float | None = None,
    progress: Callable[[int, float, float], None] | None = None,
    loss_fn=mse,
) -> tuple[MLP, History]:
    """Train ``net`` (its arrays are updated) and return the best-validation copy.

    Args:
        net: the network; x, y: scaled inputs and outputs; xv, yv: validation.
        optimiser: ``"rprop"`` (full batch) or ``"adam"`` (mini-batches of ``batch``,
            learning rate decayed along a cosine to 1 % over ``epochs``).
        epochs: at most this many; training stops after ``patience`` epochs
            without a better validation loss ("until the error does not decrease").
        rng: shuffles the mini-batches.
        progress: called with (epoch, train loss, validation loss).
    """
    params = _params(net)
    if optimiser == "rprop":
        opt = Rprop(params, lr=lr or 0.01)
    elif optimiser == "adam":
        opt = Adam(params, lr=lr or 1e-3)
    else:
        raise ValueError(f"unknown optimiser {optimiser!r}")
    base_lr = getattr(opt, "lr", None)
    best, best_loss, best_epoch, since = _copy(net), np.inf, 0, 0
    train_hist, valid_hist = [], []
    t0 = time.perf_counter()
    for epoch in range(1, epochs + 1):
        if optimiser == "rprop":
            loss, gw, gb = gradients(net, x, y, loss_fn)
            opt.update(gw + gb)
        else:
            opt.lr = base_lr * (0.01 + 0.99 * 0.5 * (1 + np.cos(np.pi * (epoch - 1) / epochs)))
            order = rng.permutation(x.shape[0])
            total = 0.0
            for start in range(0, x.shape[0], batch):
                idx = order[start : start + batch]
                lb, gw, gb = gradients(net, x[idx], y[idx], loss_fn)
                opt.update(gw + gb)
                total += lb * idx.size
            loss = total / x.shape[0]
        vloss = loss_fn(net.raw(xv), yv)[0]
        train_hist.append(loss)
        valid_hist.append(vloss)
        if vloss < best_loss * (1 - 1e-4):
            best, best_loss, best_epoch, since = _copy(net), vloss, epoch, 0
        else:
            since += 1
        if progress:
            progress(epoch, loss, vloss)
        if since >= patience:
            break
    return best, History(train_hist, valid_hist, best_epoch, time.perf_counter() - t0)


def progress_bar(total: int, label: str, stream=sys.stderr) -> Callable[[int, float, float], None]:
    """A one-line text progress bar for :func:`fit`."""

    def show(epoch: int, loss: float, vloss: float) -> None:
        if epoch % max(1, total // 200) and epoch != total:
            return
        done = int(30 * epoch / total)
        stream.write(f"\r{label} [{'#' * done}{'.' * (30 - done)}] {epoch}/{total} train {loss:.3g} valid {vloss:.3g}")
        stream.flush()

    return show
