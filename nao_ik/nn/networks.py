"""The shipped networks and how to train them: ``nn-paper`` and ``nn``.

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

import json
import math
from functools import cache
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

from ..kinematics import forward_batch
from ..model import MIRROR_ANGLES, MIRROR_TARGET, ArmModel, arm_model
from . import data, mlp
from .train import fit, init_mlp, progress_bar

MIRROR_T, MIRROR_Q = np.asarray(MIRROR_TARGET), np.asarray(MIRROR_ANGLES[:4])

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


class Recipe(NamedTuple):
    """Everything that defines a training run (stored with the weights)."""

    name: str
    data: str  # "paper" or "single-valued"
    hidden: tuple
    activation: str
    output: str
    optimiser: str
    train_samples: int
    valid_samples: int
    epochs: int
    patience: int
    batch: int
    lr: float
    seed: int


PAPER = Recipe("nn-paper", "paper", (40,), "sigmoid", "sigmoid", "rprop", 10_000, 10_000, 3000, 200, 0, 0.01, 1)
OURS = Recipe("nn", "swivel", (64, 64), "tanh", "linear", "adam", 200_000, 20_000, 60, 10, 256, 2e-3, 3)

#: Table 2 of Poddighe (2013): hidden units -> (training error %, validation error %).
PAPER_TABLE2 = {5: (2.70, 2.73), 10: (2.70, 2.71), 15: (2.37, 2.41), 20: (2.37, 2.40), 30: (2.37, 2.40),
                40: (2.35, 2.38), 50: (2.35, 2.38), 75: (2.35, 2.38), 100: (2.35, 2.38)}  # fmt: skip
SWEEP = tuple(PAPER_TABLE2)


def _samples(recipe: Recipe, n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(targets, desired outputs) in physical units: angles (paper) or (cos, sin) of the swivel."""
    model = arm_model("LArm")
    if recipe.data == "paper":
        return data.paper_samples(model, n, seed)
    targets, swivel = data.swivel_samples(model, n, seed)
    return targets, np.stack([np.cos(swivel), np.sin(swivel)], axis=1)


def _scalings(recipe: Recipe, targets: np.ndarray, model: ArmModel):
    tmin, tmax = targets.min(axis=0), targets.max(axis=0)
    if recipe.data == "paper":  # as in the paper: inputs and outputs in [0, 1]
        lo, hi = np.asarray(model.lower[:4]), np.asarray(model.upper[:4])
        return tmin, 1.0 / (tmax - tmin), lo, hi - lo
    return 0.5 * (tmin + tmax), 2.0 / (tmax - tmin), np.zeros(2), np.ones(2)


def _hand_stats(hand_mm: np.ndarray) -> dict:
    return {
        "hand_mean_mm": float(hand_mm.mean()),
        "hand_median_mm": float(np.median(hand_mm)),
        "hand_p99_mm": float(np.percentile(hand_mm, 99)),
        "hand_max_mm": float(hand_mm.max()),
    }


def errors(net: mlp.MLP, targets: np.ndarray, outputs: np.ndarray) -> dict:
    """How far a network is from its data, in its own terms and at the hand.

    ``nn-paper``: the output error in % of each joint's range, as the mean
    squared error of the outputs normalised to [0, 1] (the error Encog reports,
    which the paper's Table 2 lists) and as RMS; and the hand's distance to the
    target with the predicted angles. ``nn``: the swivel error in degrees and
    the hand's distance with the full ``nn`` answer (:func:`nn_angles`).
    """
    model = arm_model("LArm")
    if net.out_offset.shape[0] == 2:
        sw_pred = np.arctan2(*net(targets)[:, ::-1].T)
        sw_true = np.arctan2(outputs[:, 1], outputs[:, 0])
        dev = np.degrees(np.abs((sw_pred - sw_true + np.pi) % (2 * np.pi) - np.pi))
        q, _ = nn_angles(model, targets, 0.0, net)
        hand = np.linalg.norm(forward_batch(model, q) - targets, axis=1) * 1e3
        return {"swivel_mean_deg": float(dev.mean()), "swivel_p99_deg": float(np.percentile(dev, 99)),
                **_hand_stats(hand)}  # fmt: skip
    lo, hi = np.asarray(model.lower[:4]), np.asarray(model.upper[:4])
    pred = np.clip(net(targets), lo, hi)
    frac = (pred - outputs) / (hi - lo)
    q = np.concatenate([pred, np.zeros((pred.shape[0], 1))], axis=1)
    hand = np.linalg.norm(forward_batch(model, q) - targets, axis=1) * 1e3
    return {
        "mse_percent_of_range": float(100 * np.mean(frac**2)),
        "rms_percent_of_range": float(100 * np.sqrt(np.mean(frac**2))),
        **_hand_stats(hand),
    }


def train(recipe: Recipe, hidden: tuple | None = None, show_progress: bool = True) -> tuple[mlp.MLP, dict]:
    """Train one network from scratch, deterministically from ``recipe.seed``.

    Returns:
        The network (its ``record`` says how it was made) and the record.
    """
    hidden = tuple(hidden or recipe.hidden)
    model = arm_model("LArm")
    x, y = _samples(recipe, recipe.train_samples, recipe.seed)
    xv, yv = _samples(recipe, recipe.valid_samples, recipe.seed + 1000)
    in_off, in_scale, out_off, out_scale = _scalings(recipe, x, model)
    rng = np.random.default_rng(recipe.seed)
    sizes = [3, *hidden, 4 if recipe.data == "paper" else 2]
    acts = [recipe.activation] * len(hidden) + [recipe.output]
    net = init_mlp(sizes, acts, rng, in_off, in_scale, out_off, out_scale)
    label = f"{recipe.name} {'-'.join(map(str, sizes))}"
    bar = progress_bar(recipe.epochs, label) if show_progress else None
    best, hist = fit(
        net,
        (x - in_off) * in_scale,
        (y - out_off) / out_scale,
        (xv - in_off) * in_scale,
        (yv - out_off) / out_scale,
        recipe.optimiser,
        recipe.epochs,
        recipe.patience,
        rng,
        batch=recipe.batch,
        lr=recipe.lr,
        progress=bar,
    )
    if show_progress:
        print(file=__import__("sys").stderr)
    record = {
        "recipe": recipe._replace(hidden=list(hidden))._asdict(),
        "layers": sizes,
        "epochs_run": len(hist.train),
        "best_epoch": hist.best_epoch,
        "train_seconds": round(hist.seconds, 1),
        "train_samples_used": int(x.shape[0]),
        "train": errors(best, x, y),
        "valid": errors(best, xv, yv),
        "final_train_mse": hist.train[hist.best_epoch - 1],
        "final_valid_mse": hist.valid[hist.best_epoch - 1],
    }
    return best._replace(record=record), record


def weight_path(name: str) -> Path:
    """Where a shipped network lives."""
    return DATA_DIR / f"{name}.npz"


def write(net: mlp.MLP, name: str, folder: Path = DATA_DIR) -> Path:
    """Save a network and its record (``name.npz`` and a readable ``name.json``)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.npz"
    mlp.save(path, net)
    (folder / f"{name}.json").write_text(json.dumps(net.record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


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
    from ..ops import ARRAY

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
