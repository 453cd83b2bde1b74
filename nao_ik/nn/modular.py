"""``nn-modular``: the modular inverse model of Oyama & Tachi (2001) for the NAO arm.

- **Experts.** Each is a small network, hand target -> (ShoulderPitch,
  ShoulderRoll, ElbowYaw, ElbowRoll), that covers one continuous region of
  the (multi-valued) inverse, and has a representative posture theta_r that
  it reproduces exactly: Phi(x_r) = theta_r with x_r = f(theta_r) (their
  equation 1, kept by shifting the output bias after every update).
- **Expert selector.** Every expert's answer is scored by the error the
  forward model predicts for it, p_i = |x_d - f(Phi_i(x_d))|, and the
  smallest wins. The paper learns f; NAO's forward kinematics is known
  exactly, so f is :func:`~nao_ik.kinematics.chain.forward_batch` (their "correct
  forward model" case, MNCFM).
- **Extended feedback controller.** Error feedback with the Jacobian from (1)
  the selected expert's answer, (2) the other experts' answers whose
  predicted error is under :data:`R_SIM`, best first, (3) the experts'
  representative postures, (4) random postures. The feedback is the damped
  pseudoinverse step of :func:`~nao_ik.solvers.jacobian.dls_step`, whose
  damping vanishes near the target (J^+ there) and keeps the step finite at
  singular postures, where the paper's J^T (J J^T)^-1 is undefined.
- **Expert generation and on-line learning.** A solution found from (1)-(3)
  is a training sample for the expert it started from; a solution only (4)
  finds becomes the representative posture of a new expert.

Trained for the left arm; the right arm is its mirror image (as ``nn``).
How the experts are learned: :mod:`nao_ik.training.modular_learning`.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np

from ..kinematics.chain import forward_batch
from ..model.arm import MIRROR_ANGLES, MIRROR_TARGET, ArmModel
from . import mlp

#: Predicted error under which other experts' answers are tried (step 2), metres.
R_SIM = 0.02
#: Iterations of one reaching motion, and the precision that counts as a solution, metres.
REACH_ITERATIONS = 30
PRECISE = 1e-4


class Expert(NamedTuple):
    """One expert: its network (target -> four angles) and representative posture (5,)."""

    net: mlp.MLP
    posture: np.ndarray


class Modular(NamedTuple):
    """The experts and the record of how they were learned (with the learning curve).

    ``folded`` and ``stacked`` are the experts' inference forms (see
    :func:`for_inference`); None while a model is learning (its networks change).
    """

    experts: tuple[Expert, ...]
    record: dict
    folded: tuple | None = None
    stacked: Callable[[np.ndarray], np.ndarray] | None = None


def for_inference(mod: Modular) -> Modular:
    """The model with its networks folded (batch) and side by side (one target) for answering."""
    mod = mod._replace(folded=tuple(ex.net.folded() for ex in mod.experts))
    return mod._replace(stacked=_stacked(mod))


_MT, _MQ = np.asarray(MIRROR_TARGET), np.asarray(MIRROR_ANGLES)


def answers(
    model: ArmModel,
    mod: Modular,
    targets: np.ndarray,
    wrist: float | np.ndarray,
    clamp: bool = True,
    only: Sequence[int] | None = None,
) -> np.ndarray:
    """Every expert's (or the ``only`` ones') answer for targets (N, 3), clamped into the limits
    (unless ``clamp`` is False): (E, N, 5)."""
    right = model.is_right
    t = targets * _MT if right else targets
    nets = mod.folded or [ex.net for ex in mod.experts]
    which = range(len(nets)) if only is None else only
    out = np.empty((len(which), targets.shape[0], 5))
    for k, i in enumerate(which):
        out[k, :, :4] = nets[i](t)
    if right:
        out[:, :, :4] *= _MQ[:4]
    out[:, :, 4] = wrist
    return np.clip(out, model.lower, model.upper) if clamp else out


def best_answer_one(model: ArmModel, mod: Modular, t: Sequence[float], wrist: float) -> list[float]:
    """The selector for one target with Python floats: the unclamped answer (5 angles) of the best expert."""
    from ..kinematics.chain import chain

    right = model.is_right
    x = np.array([t[0], -t[1] if right else t[1], t[2]])
    lo, hi = model.lower, model.upper
    best, best_err = None, math.inf
    for raw in (mod.stacked or _stacked(mod))(x).tolist():
        if right:
            raw = [a * m for a, m in zip(raw, MIRROR_ANGLES)]
        raw.append(wrist)
        q = [min(max(a, lo[i]), hi[i]) for i, a in enumerate(raw)]
        err = math.dist(chain(model, q).hand, t)
        if err < best_err:
            best, best_err = raw, err
    return best


def _stacked(mod: Modular) -> Callable[[np.ndarray], np.ndarray]:
    """Every expert at once for one target: the layers side by side (block-diagonal), one matmul each.

    Returns:
        x (3,) -> (E, 4) answers, unclamped.
    """
    nets = mod.folded or [ex.net.folded() for ex in mod.experts]
    e, acts = len(nets), nets[0].activations
    ws = [np.concatenate([n.weights[0] for n in nets], axis=1).astype(float)]
    bs = [np.concatenate([n.biases[0] for n in nets]).astype(float)]
    for layer in range(1, len(acts)):
        blocks = [n.weights[layer].astype(float) for n in nets]
        rows, cols = blocks[0].shape
        w = np.zeros((e * rows, e * cols))
        for i, b in enumerate(blocks):
            w[i * rows : (i + 1) * rows, i * cols : (i + 1) * cols] = b
        ws.append(w)
        bs.append(np.concatenate([n.biases[layer] for n in nets]).astype(float))

    def answer(x: np.ndarray) -> np.ndarray:
        h = x
        for w, b, a in zip(ws, bs, acts):
            h = np.dot(h, w) + b
            if a == "tanh":
                h = np.tanh(h)
            elif a != "linear":
                h = mlp.ACTIVATIONS[a](h)
        return h.reshape(e, -1)

    return answer


def predicted_errors(model: ArmModel, targets: np.ndarray, outs: np.ndarray) -> np.ndarray:
    """p_i = |x_d - f(Phi_i(x_d))| for answers (E, N, 5): (E, N)."""
    e, n = outs.shape[:2]
    hands = forward_batch(model, outs.reshape(-1, 5)).reshape(e, n, 3)
    return np.linalg.norm(hands - targets[None], axis=2)


def select(model: ArmModel, mod: Modular, targets: np.ndarray, wrist: float | np.ndarray):
    """The expert selector.

    Returns:
        (answers (E, N, 5), predicted errors (E, N), experts best first (E, N)).
    """
    outs = answers(model, mod, targets, wrist)
    p = predicted_errors(model, targets, outs)
    return outs, p, np.argsort(p, axis=0, kind="stable")


def restart_postures(model: ArmModel, mod: Modular, targets: np.ndarray, wrist: np.ndarray) -> np.ndarray:
    """Steps (2) and (3) of the controller for each target: (N, K, 5) starts in the order tried.

    Every other expert's answer, best predicted first, then every expert's
    representative posture. Learning keeps the paper's cut (only the answers
    predicted within :data:`R_SIM`); here the driver runs a fixed number of
    starts per target, so a cut answer could only be replaced by a repeat.
    """
    outs, _, order = select(model, mod, targets, wrist[0] if np.all(wrist == wrist[0]) else wrist)
    n = targets.shape[0]
    ranked = outs[order[1:], np.arange(n)[None, :]].transpose(1, 0, 2)  # (N, E - 1, 5)
    postures = np.stack([_posture(model, ex) for ex in mod.experts])
    rest = np.broadcast_to(postures, (n,) + postures.shape).copy()
    rest[:, :, 4] = wrist[:, None]
    return np.concatenate([ranked, rest], axis=1)


def _posture(model: ArmModel, ex: Expert) -> np.ndarray:
    return ex.posture * _MQ if model.is_right else ex.posture


#: The reaching motion: (target, model, start, max_iterations) -> (angles, reached). The
#: caller passes the solver (this layer is below the solvers): :func:`nao_ik.recipes.track.reach`.
Reach = Callable[[Sequence[float], ArmModel, Sequence[float] | None, int | None], tuple]


def path_inverse(
    model: ArmModel, mod: Modular, points: np.ndarray, reach: Reach, initial: Sequence[float] | None = None
) -> tuple[np.ndarray, Callable[..., np.ndarray]]:
    """Section 3, step (1): the expert for a path, and a precise solution of its first point.

    The experts are tried in increasing order of their predicted error summed
    over the path's representative points (its ends); the first whose answer
    the reaching motion takes to the first point precisely is kept.

    Returns:
        (theta(0), Phi: (point, previous angles, unused) -> that expert's answer, clamped).
    """
    wrist = float(model.neutral[4] if initial is None else initial[4])
    ends = points[[0, -1]]
    outs = answers(model, mod, ends, wrist)
    p = predicted_errors(model, ends, outs).sum(axis=1)
    theta = None
    for i in np.argsort(p, kind="stable"):
        angles, reached = reach(points[0].tolist(), model, outs[i, 0].tolist(), REACH_ITERATIONS)
        if reached:
            theta, chosen = np.asarray(angles), int(i)
            break
    if theta is None:  # no expert reaches: the best predicted, from a full solve
        chosen = int(np.argmin(p))
        theta = np.asarray(reach(points[0].tolist(), model, initial, None)[0])

    def phi(target: np.ndarray, previous: np.ndarray | None = None) -> np.ndarray:
        return answers(model, mod, np.asarray(target, dtype=float)[None], wrist, only=(chosen,))[0, 0]

    return theta, phi


# ----------------------------------------------------------------- storage

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "nn-modular.npz"


def save(mod: Modular, path: Path = DATA_FILE) -> Path:
    """One ``.npz``: every expert's layers and posture, and the record (also as ``.json``)."""
    arrays: dict[str, Any] = {"count": np.array(len(mod.experts))}
    for i, ex in enumerate(mod.experts):
        n = ex.net
        for j, (w, b) in enumerate(zip(n.weights, n.biases)):
            arrays[f"e{i}_W{j}"], arrays[f"e{i}_b{j}"] = w, b
        arrays[f"e{i}_in"] = np.stack([n.in_offset, n.in_scale])
        arrays[f"e{i}_out"] = np.stack([n.out_offset, n.out_scale])
        arrays[f"e{i}_posture"] = ex.posture
    arrays["activations"] = np.array(json.dumps(list(mod.experts[0].net.activations)))
    arrays["record"] = np.array(json.dumps(mod.record, sort_keys=True))
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **arrays)
    path.with_suffix(".json").write_text(json.dumps(mod.record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def load_file(path: Path) -> Modular:
    """Read a model written by :func:`save`."""
    with np.load(path, allow_pickle=False) as z:
        acts = tuple(json.loads(str(z["activations"])))
        experts = []
        for i in range(int(z["count"])):
            layers = sum(1 for k in z.files if k.startswith(f"e{i}_W"))
            (io, isc), (oo, osc) = z[f"e{i}_in"], z[f"e{i}_out"]
            net = mlp.MLP(tuple(z[f"e{i}_W{j}"] for j in range(layers)), tuple(z[f"e{i}_b{j}"] for j in range(layers)),
                          acts, io, isc, oo, osc, {})  # fmt: skip
            experts.append(Expert(net, z[f"e{i}_posture"]))
        return Modular(tuple(experts), json.loads(str(z["record"])))


@cache
def shipped() -> Modular:
    """The shipped model, loaded once."""
    if not DATA_FILE.exists():
        raise RuntimeError(f"the nn-modular model is missing ({DATA_FILE}); run 'nao-ik train --which nn-modular'")
    return for_inference(load_file(DATA_FILE))
