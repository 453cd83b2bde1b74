"""Training the shipped networks from scratch: their recipes, their data and how far a network is from it.

The networks themselves (loading, answering) are :mod:`nao_ik.nn.networks`; ``nao-ik train``
(:mod:`nao_ik.training.cli`) runs :func:`train` and :func:`write`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ..kinematics.chain import forward_batch
from ..model.arm import ArmModel, arm_model
from ..nn import data, mlp
from ..nn.networks import DATA_DIR, nn_angles
from .fit import fit, init_mlp, progress_bar


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


def write(net: mlp.MLP, name: str, folder: Path = DATA_DIR) -> Path:
    """Save a network and its record (``name.npz`` and a readable ``name.json``)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.npz"
    mlp.save(path, net)
    (folder / f"{name}.json").write_text(json.dumps(net.record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path
