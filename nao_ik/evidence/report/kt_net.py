"""Kim & Tarokh's network cell model (their eqs. 8-12): one small tanh network per cell, trained all at once.

Each (cell, solution) gets its own network: inputs scaled to [-1, 1] by the
cell's minimum and maximum (eq. 8), one hidden layer of ``N`` tanh units
(eqs. 9-10, the paper's N = 5), a linear output layer (eq. 11), outputs
scaled back by the cell's angle range (eq. 12). The paper trains each network
by backpropagation; here every cell's network is trained at once (a batch of
independent networks, full batch per cell, Adam), which changes the optimiser
but not the model. Cells do not share anything, so a network fitted only for
the cells a test visits gives exactly the answers a full table would.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class CellNets(NamedTuple):
    """Independent networks, one per group (cell and solution).

    Attributes:
        w_in, b_in: (G, D, N), (G, N): eq. 9.
        w_out, b_out: (G, N, K), (G, K): eq. 11.
        x_min, x_max: (G, D) the cell's input range (eq. 8).
        y_min, y_max: (G, K) the cell's output range (eq. 12).
    """

    w_in: np.ndarray
    b_in: np.ndarray
    w_out: np.ndarray
    b_out: np.ndarray
    x_min: np.ndarray
    x_max: np.ndarray
    y_min: np.ndarray
    y_max: np.ndarray

    def parameters(self) -> int:
        """Numbers stored per cell (weights, biases, the ranges): the paper's storage unit."""
        return int(sum(a[0].size for a in self))


def _scale(v: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return 2.0 * (v - lo) / np.maximum(hi - lo, 1e-9) - 1.0  # eq. 8


def pad(groups: np.ndarray, x: np.ndarray, y: np.ndarray, cap: int) -> tuple:
    """Samples sorted by group into padded arrays.

    Args:
        groups: (S,) group index of each sample, 0..G-1.
        x, y: (S, D) inputs, (S, K) outputs.
        cap: at most this many samples per group (the first ones).

    Returns:
        (x (G, M, D), y (G, M, K), mask (G, M) bool).
    """
    g = int(groups.max()) + 1 if groups.size else 0
    order = np.argsort(groups, kind="stable")
    gs = groups[order]
    starts = np.searchsorted(gs, np.arange(g))
    rank = np.arange(gs.size) - starts[gs]
    keep = rank < cap
    m = int(min(cap, rank.max() + 1)) if gs.size else 1
    xp = np.zeros((g, m, x.shape[1]))
    yp = np.zeros((g, m, y.shape[1]))
    mask = np.zeros((g, m), dtype=bool)
    xp[gs[keep], rank[keep]] = x[order][keep]
    yp[gs[keep], rank[keep]] = y[order][keep]
    mask[gs[keep], rank[keep]] = True
    return xp, yp, mask


def train(
    x: np.ndarray,
    y: np.ndarray,
    mask: np.ndarray,
    hidden: int = 5,
    epochs: int = 1500,
    seed: int = 0,
    lr: float = 0.02,
) -> CellNets:
    """Fit one D-N-K tanh network per group on its own samples (masked mean squared error, scaled outputs).

    Args:
        x, y, mask: from :func:`pad`.
        hidden: N, the hidden units (the paper: 5).
        epochs: full-batch Adam steps.
        seed: the initial weights' seed.
        lr: Adam's step.

    Returns:
        The trained :class:`CellNets`.
    """
    big = np.where(mask[..., None], 0.0, np.inf)
    x_min, x_max = np.min(x + big, axis=1), np.max(x - big, axis=1)
    y_min, y_max = np.min(y + big, axis=1), np.max(y - big, axis=1)
    empty = ~mask.any(axis=1)
    for lo, hi in ((x_min, x_max), (y_min, y_max)):
        lo[empty], hi[empty] = 0.0, 0.0
    xs = np.where(mask[..., None], _scale(x, x_min[:, None], x_max[:, None]), 0.0)
    ys = np.where(mask[..., None], _scale(y, y_min[:, None], y_max[:, None]), 0.0)
    g, _, d = x.shape
    k = y.shape[2]
    rng = np.random.default_rng(seed)
    params = [
        rng.uniform(-1, 1, (g, d, hidden)) * np.sqrt(6 / (d + hidden)),
        np.zeros((g, hidden)),
        rng.uniform(-1, 1, (g, hidden, k)) * np.sqrt(6 / (hidden + k)),
        np.zeros((g, k)),
    ]
    m1 = [np.zeros_like(p) for p in params]
    m2 = [np.zeros_like(p) for p in params]
    count = np.maximum(mask.sum(axis=1), 1)[:, None, None] * k
    w = mask[..., None] / count
    for t in range(1, epochs + 1):
        h = np.tanh(xs @ params[0] + params[1][:, None, :])
        out = h @ params[2] + params[3][:, None, :]
        delta = 2.0 * (out - ys) * w
        g_wout = np.swapaxes(h, 1, 2) @ delta
        g_bout = delta.sum(axis=1)
        dh = (delta @ np.swapaxes(params[2], 1, 2)) * (1.0 - h * h)
        grads = [np.swapaxes(xs, 1, 2) @ dh, dh.sum(axis=1), g_wout, g_bout]
        for p, gr, a, b in zip(params, grads, m1, m2):
            a *= 0.9
            a += 0.1 * gr
            b *= 0.999
            b += 0.001 * gr * gr
            p -= lr * (a / (1 - 0.9**t)) / (np.sqrt(b / (1 - 0.999**t)) + 1e-8)
    return CellNets(*params, x_min, x_max, y_min, y_max)


def evaluate(nets: CellNets, groups: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The networks' answers (eqs. 8-12) for inputs x (Q, D), each through its group's network.

    Returns:
        (Q, K) outputs in physical units.
    """
    xs = _scale(x, nets.x_min[groups], nets.x_max[groups])
    h = np.tanh(np.einsum("qd,qdn->qn", xs, nets.w_in[groups]) + nets.b_in[groups])  # eqs. 9-10
    out = np.einsum("qn,qnk->qk", h, nets.w_out[groups]) + nets.b_out[groups]  # eq. 11
    lo, hi = nets.y_min[groups], nets.y_max[groups]
    return 0.5 * (hi - lo) * (out + 1.0) + lo  # eq. 12
