"""A small multilayer perceptron evaluated with numpy, and its weight files.

A weight file is one ``.npz`` holding the layers (``W0, b0, W1, b1, ...``),
the activations, the input scaling and the output scaling, and a JSON record
of how it was made (seed, data size, epochs, final errors).
"""

from __future__ import annotations

import contextlib
import functools
import json
import threading
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

ACTIVATIONS = {
    "sigmoid": lambda x: 0.5 * (1.0 + np.tanh(0.5 * x)),  # 1 / (1 + e^-x), without overflow
    "tanh": np.tanh,
    "linear": lambda x: x,
}


class MLP(NamedTuple):
    """Weights and scalings of a feed-forward network.

    Attributes:
        weights: per layer, (n_in, n_out) arrays.
        biases: per layer, (n_out,) arrays.
        activations: per layer, a name in :data:`ACTIVATIONS`.
        in_offset, in_scale: network input = (target - in_offset) * in_scale.
        out_offset, out_scale: angles = out_offset + network output * out_scale.
        record: how the network was made (free-form, JSON-serialisable).
    """

    weights: tuple
    biases: tuple
    activations: tuple
    in_offset: np.ndarray
    in_scale: np.ndarray
    out_offset: np.ndarray
    out_scale: np.ndarray
    record: dict

    def raw(self, x: np.ndarray) -> np.ndarray:
        """Network output for already scaled inputs (N, n_in)."""
        h = x
        for w, b, a in zip(self.weights, self.biases, self.activations):
            h = ACTIVATIONS[a](h @ w + b)
        return h

    def __call__(self, targets: np.ndarray) -> np.ndarray:
        """Outputs (N, n_out) in physical units for targets (N, 3), before any clamping."""
        x = (np.asarray(targets, dtype=float) - self.in_offset) * self.in_scale
        return self.out_offset + self.raw(x) * self.out_scale

    def folded(self) -> Folded:
        """The same function with the scalings folded into the first and last layers (fewer numpy calls)."""
        ws, bs = list(self.weights), list(self.biases)
        ws[0] = self.in_scale[:, None] * ws[0]
        bs[0] = bs[0] - (self.in_offset * self.in_scale) @ self.weights[0]
        out_offset, out_scale = self.out_offset, self.out_scale
        if self.activations[-1] == "linear":
            ws[-1] = ws[-1] * self.out_scale[None, :]
            bs[-1] = bs[-1] * self.out_scale + self.out_offset
            out_offset = out_scale = None
        f32 = np.float32
        return Folded(
            tuple(w.astype(f32) for w in ws), tuple(b.astype(f32) for b in bs), self.activations, out_offset, out_scale
        )


_LOCAL = threading.local()

#: Batches from this many rows run their matrix products on one BLAS thread:
#: a multi-threaded OpenBLAS only waits on matrices this small (measured 3.5x
#: slower at 10,000 targets), and its partition of the rows depends on the
#: batch size, which changed float32 results between block sizes.
ONE_THREAD_ROWS = 64


@functools.cache
def _controller():
    """threadpoolctl's controller, or None where threadpoolctl is not installed."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # the core needs numpy only; then BLAS keeps its threads
        return None
    return ThreadpoolController()


def _one_blas_thread():
    """A context in which BLAS uses one thread (scoped to the call, no environment variable)."""
    c = _controller()
    return contextlib.nullcontext() if c is None else c.limit(limits=1, user_api="blas")


def _buffer(layer: int, shape: tuple) -> np.ndarray:
    """A float32 work array for one layer and shape, reused by the calling thread."""
    cache = getattr(_LOCAL, "buffers", None)
    if cache is None:
        cache = _LOCAL.buffers = {}
    key = (layer, shape)
    buf = cache.get(key)
    if buf is None:
        if len(cache) > 64:  # many batch sizes: start over rather than grow
            cache.clear()
        buf = cache[key] = np.empty(shape, dtype=np.float32)
    return buf


class Folded(NamedTuple):
    """An :class:`MLP` with its scalings folded in, for inference.

    The hidden layers run in float32 (4x faster on a batch than float64;
    the ~1e-7 relative rounding is far below any network's own error).
    """

    weights: tuple
    biases: tuple
    activations: tuple
    out_offset: np.ndarray | None
    out_scale: np.ndarray | None

    def __call__(self, targets: np.ndarray) -> np.ndarray:
        """Outputs for targets (N, 3) or one target (3,)."""
        h = np.asarray(targets, dtype=np.float32)
        if h.ndim > 1 and h.shape[0] >= ONE_THREAD_ROWS:
            with _one_blas_thread():
                return self._run(h)
        return self._run(h)

    def _run(self, h: np.ndarray) -> np.ndarray:
        rows = h.shape[:-1]
        for i, (w, b, a) in enumerate(zip(self.weights, self.biases, self.activations)):
            # Layers write into buffers kept per thread and shape: fresh
            # multi-megabyte temporaries cost more in page faults than the
            # arithmetic (3x for a batch of 10,000 on the development VM).
            out = _buffer(i, rows + (w.shape[1],))
            np.matmul(h, w, out=out)
            np.add(out, b, out=out)
            if a == "tanh":
                np.tanh(out, out=out)
            elif a != "linear":
                out[...] = ACTIVATIONS[a](out)
            h = out
        h = h.astype(np.float64)
        if self.out_offset is not None:
            h = self.out_offset + h * self.out_scale
        return h

    def one(self, target: Sequence[float]) -> list[float]:
        """The outputs for one target, as floats: a third of the numpy calls of ``self(target)``."""
        h = np.array(target, dtype=np.float32)
        for w, b, a in zip(self.weights, self.biases, self.activations):
            h = np.dot(h, w)
            h += b
            if a == "tanh":
                np.tanh(h, out=h)
            elif a != "linear":
                h = ACTIVATIONS[a](h)
        if self.out_offset is not None:
            return (self.out_offset + h * self.out_scale).tolist()
        return h.tolist()


def save(path: str | Path, net: MLP) -> None:
    """Write a weight file."""
    arrays = {f"W{i}": w for i, w in enumerate(net.weights)}
    arrays.update({f"b{i}": b for i, b in enumerate(net.biases)})
    np.savez_compressed(
        path,
        **arrays,
        in_offset=net.in_offset,
        in_scale=net.in_scale,
        out_offset=net.out_offset,
        out_scale=net.out_scale,
        activations=np.array(json.dumps(list(net.activations))),
        record=np.array(json.dumps(net.record, sort_keys=True)),
    )


def load(path: str | Path) -> MLP:
    """Read a weight file."""
    with np.load(path, allow_pickle=False) as z:
        n = sum(1 for k in z.files if k.startswith("W"))
        return MLP(
            tuple(z[f"W{i}"] for i in range(n)),
            tuple(z[f"b{i}"] for i in range(n)),
            tuple(json.loads(str(z["activations"]))),
            z["in_offset"],
            z["in_scale"],
            z["out_offset"],
            z["out_scale"],
            json.loads(str(z["record"])),
        )
