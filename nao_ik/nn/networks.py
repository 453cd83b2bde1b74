"""The shipped networks (inference): ``nn-paper`` and ``nn``; :mod:`nao_ik.training.networks` trains them.

- ``nn-paper`` reproduces Poddighe (2013): target -> the four angles, 3-40-4
  sigmoid, RPROP, trained on random configurations (a multi-valued inverse).
- ``nn`` learns only what a hand position leaves open, the elbow swivel
  (see :mod:`nao_ik.geometry.swivel`), as (cos, sin), from a single-valued rule; the
  arm's geometry then gives the joint angles exactly (:func:`nn_angles`).

Both are trained for the left arm; the right arm is its mirror image through
the torso's x-z plane: a right-arm target (x, y, z) is answered from the
left-arm network at (x, -y, z), with the roll and yaw angles (``nn-paper``)
or the swivel (``nn``) negated.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path
from typing import Sequence

import numpy as np

from ..model.arm import MIRROR_ANGLES, MIRROR_TARGET, ArmModel
from . import mlp

MIRROR_T, MIRROR_Q = np.asarray(MIRROR_TARGET), np.asarray(MIRROR_ANGLES[:4])

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


def weight_path(name: str) -> Path:
    """Where a shipped network lives."""
    return DATA_DIR / f"{name}.npz"


@cache
def shipped(name: str) -> mlp.MLP:
    """A shipped network, loaded once."""
    path = weight_path(name)
    if not path.exists():
        raise RuntimeError(f"the weights of {name} are missing ({path}); run 'nao-ik train --which {name}'")
    return mlp.load(path)


@cache
def _fast(name: str) -> mlp.Folded:
    return shipped(name).folded()


def paper_angles(model: ArmModel, targets: np.ndarray) -> np.ndarray:
    """``nn-paper``: raw (unclamped) ShoulderPitch..ElbowRoll for targets (N, 3) of either arm."""
    net = _fast("nn-paper")
    if model.is_right:
        return net(targets * MIRROR_T) * MIRROR_Q
    return net(targets)


def predict_swivel(model: ArmModel, targets: np.ndarray, net: mlp.MLP | None = None) -> np.ndarray:
    """``nn``'s swivel angle (N,) for targets (N, 3) of either arm."""
    net = net or _fast("nn")
    if model.is_right:
        cs = net(targets * MIRROR_T)
        return -np.arctan2(cs[:, 1], cs[:, 0])
    cs = net(targets)
    return np.arctan2(cs[:, 1], cs[:, 0])


#: When the predicted swivel is not allowed by the limits (11 % of the
#: benchmark's targets), these offsets (degrees) are tried in order and the
#: first allowed one is taken. A batch tries them in rounds, all of a round in
#: one call: the rounds are sized so that few rows go on to the next (the
#: first round fixes about half of them), which costs about 4.8 evaluations
#: per failing row instead of 7.5 with (10, -10, 20, -20) first.
FALLBACK_ROUNDS = ((15, -15), (30, -30, 50, -50), (75, -75, 110, -110, 150, -150, 180))
FALLBACK_OFFSETS = np.radians([o for r in FALLBACK_ROUNDS for o in r])


def predict_swivel_one(model: ArmModel, t: Sequence[float]) -> float:
    """:func:`predict_swivel` for one target, with as few numpy calls as it takes."""
    right = model.is_right
    c, s = _fast("nn").one((t[0], -t[1] if right else t[1], t[2]))
    return -math.atan2(s, c) if right else math.atan2(s, c)


_ROUNDS = tuple(np.radians(r) for r in FALLBACK_ROUNDS)


def nn_angles(
    model: ArmModel, targets: np.ndarray, wrist: float | np.ndarray, net: mlp.MLP | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``nn``'s answer: the configuration at the predicted swivel, or at the nearest allowed one.

    Args:
        wrist: the held WristYaw, one for all targets (cheaper: the forearm
            is then the same for all) or (N,).

    Returns:
        (angles (N, 5) unclamped, feasible (N,)): where no tried swivel is
        allowed, the predicted one is returned (its angles then need clamping).
    """
    from ..geometry.swivel import point
    from ..kinematics.ops import ARRAY

    t = [targets[:, 0], targets[:, 1], targets[:, 2]]
    w = np.asarray(wrist, dtype=float)
    if w.ndim and (w == w.flat[0]).all():
        w = w.flat[0]
    phi = predict_swivel(model, targets, net)
    n = targets.shape[0]
    q, vio = point(model, t, w, phi, ARRAY)
    q = np.stack([np.broadcast_to(c, (n,)) for c in q], axis=1)
    ok = np.asarray(vio) == 0
    # The fallback swivels of the failing rows, round by round: all of a
    # round in one call, the first allowed offset taken.
    for offsets in _ROUNDS:
        rows = np.flatnonzero(~ok)
        if rows.size == 0:
            break
        k = offsets.size
        rr = np.repeat(rows, k)
        tries = phi[rows][:, None] + offsets[None, :]
        qo, vo = point(model, [c[rr] for c in t], w if w.ndim == 0 else w[rr], tries.ravel(), ARRAY)
        good = (np.broadcast_to(vo, rr.shape) == 0).reshape(rows.size, k)
        first = good.argmax(axis=1)
        found = good.any(axis=1)
        qo = np.stack([np.broadcast_to(c, rr.shape) for c in qo], axis=1).reshape(rows.size, k, 5)
        q[rows[found]] = qo[found, first[found]]
        ok[rows[found]] = True
    return q, ok
