"""Oyama & Tachi's expert selection with a learned forward model, against the exact one, on NAO's arm.

The paper's selector predicts each expert's error as |x_d - f^(Phi_i(x_d))|
with a learned forward model f^ (its "correct forward model" case uses the
true kinematics). ``nn-modular`` uses NAO's exact forward kinematics. Here a
forward network (the four position joints -> hand position, 4-32-32-3 tanh,
Adam) is learned from random in-limit configurations and used instead; on the
same held-out targets and the shipped experts, both selectors are compared:
how often they pick the same expert, the true error of the picked answer,
and how often the reaching motion from it succeeds (first selection).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...kinematics.chain import forward_batch
from ...model.arm import arm_model
from ...nn import modular
from ...nn.data import random_configurations
from ...nn.mlp import MLP
from ...recipes.track import reach
from ...training.fit import fit, init_mlp


class Selection(NamedTuple):
    """The two selectors side by side."""

    samples: int  # configurations the forward model learned from
    fm_rms_mm: float  # the forward model's own RMS error on held-out configurations
    targets: int
    same: float  # fraction of targets where both pick the same expert
    rms_mm: dict  # selector -> RMS true error of the picked answer
    first: dict  # selector -> fraction solved by the reaching motion from the picked answer


def learn_forward(samples: int, seed: int, epochs: int = 60) -> MLP:
    """A forward model of the left arm's four position joints (WristYaw 0), learned from random configurations."""
    model = arm_model("LArm")._replace(body=())
    rng = np.random.default_rng(seed)
    q = random_configurations(model, samples + samples // 10, rng)
    x = forward_batch(model, q)
    lo, hi = np.asarray(model.lower[:4]), np.asarray(model.upper[:4])
    centre, half = (lo + hi) / 2, (hi - lo) / 2
    shoulder = np.asarray(model.shoulder)
    net = init_mlp([4, 32, 32, 3], ["tanh", "tanh", "linear"], rng, centre, 1 / half, shoulder, np.full(3, 0.25))
    xs = (q[:, :4] - centre) / half
    ys = (x - shoulder) / 0.25
    n = samples
    best, _ = fit(net, xs[:n], ys[:n], xs[n:], ys[n:], "adam", epochs, 10, rng, batch=128, lr=3e-3)
    return best


def predicted_learned(fm: MLP, targets: np.ndarray, outs: np.ndarray) -> np.ndarray:
    """p^_i = |x_d - f^(Phi_i(x_d))| for answers (E, N, 5): (E, N)."""
    e, n = outs.shape[:2]
    hands = fm(outs.reshape(-1, 5)[:, :4]).reshape(e, n, 3)
    return np.linalg.norm(hands - targets[None], axis=2)


def compare(samples: int, targets: int, seed: int = 31, epochs: int = 60) -> Selection:
    """Learn the forward model, then select the shipped experts' answers with it and with the exact kinematics."""
    model = arm_model("LArm")._replace(body=())
    fm = learn_forward(samples, seed, epochs)
    check = random_configurations(model, 2000, np.random.default_rng(seed + 1))
    fm_err = np.linalg.norm(fm(check[:, :4]) - forward_batch(model, check), axis=1)
    held = forward_batch(model, random_configurations(model, targets, np.random.default_rng(seed + 2)))
    mod = modular.shipped()
    outs = modular.answers(model, mod, held, 0.0)
    exact = modular.predicted_errors(model, held, outs)
    picks = {"exact forward kinematics": exact.argmin(axis=0),
             "learned forward model": predicted_learned(fm, held, outs).argmin(axis=0)}  # fmt: skip
    cols = np.arange(targets)
    rms, first = {}, {}
    for name, pick in picks.items():
        rms[name] = float(np.sqrt(np.mean(exact[pick, cols] ** 2)) * 1e3)
        first[name] = float(np.mean([reach(t.tolist(), model, q.tolist(), modular.REACH_ITERATIONS)[1]
                                     for t, q in zip(held, outs[pick, cols])]))  # fmt: skip
    same = float(np.mean(picks["exact forward kinematics"] == picks["learned forward model"]))
    return Selection(samples, float(np.sqrt(np.mean(fm_err**2)) * 1e3), targets, same, rms, first)


def text(s: Selection) -> str:
    """The comparison as markdown."""
    rows = [
        f"| {name} | {s.rms_mm[name]:.1f} mm | {100 * s.first[name]:.1f} % |"
        for name in ("exact forward kinematics", "learned forward model")
    ]
    return "\n".join(
        [
            "| selector's forward model | model alone: RMS true error of the picked answer | first selection solved |",
            "|---|---|---|",
            *rows,
            "",
            f"The forward network learned from {s.samples:,} random configurations (its own RMS error "
            f"{s.fm_rms_mm:.2f} mm on held-out configurations); on {s.targets:,} held-out targets the two selectors "
            f"pick the same expert for {100 * s.same:.1f} % of them. The shipped experts are used by both, so the "
            "difference is the selector's alone.",
        ]
    )
