"""The public library API: ``solve``, ``solve_batch``, ``forward`` and ``METHODS``."""

from __future__ import annotations

from typing import Any, Sequence, Union

import numpy as np

from ..kinematics import chain as kinematics
from ..model import validate
from ..model.arm import ArmModel, arm_model
from ..solvers import ALIASES, SOLVERS, BatchSolution, Solution
from ..solvers.pipeline import run_batch, run_single

#: Every method name :func:`solve` accepts.
METHODS: tuple[str, ...] = tuple(SOLVERS) + tuple(ALIASES)

DEFAULT_TOLERANCE = 1e-4

#: solve_batch works through at most this many targets at a time (bounded memory).
BATCH_BLOCK = 50_000

ArmLike = Union[str, ArmModel]


def resolve_arm(arm: ArmLike) -> ArmModel:
    """An arm name or an :class:`ArmModel` (e.g. with the robot's own limits) -> model."""
    if isinstance(arm, ArmModel):
        return arm
    return arm_model(validate.arm(arm))


def resolve_method(method: Any) -> str:
    """A method name or alias -> the registered solver's name."""
    name = validate.choice(method, METHODS, "method")
    return ALIASES.get(name, name)


def _settings(model: ArmModel, method: Any, tolerance: Any, max_iterations: Any):
    name = resolve_method(method)
    spec = SOLVERS[name]
    # 0 means "to machine precision or the method's floor": the loops then end
    # by their stall rule (PATIENCE iterations without progress).
    tol = validate.number(tolerance, "tolerance")
    if tol < 0:
        raise ValueError(f"tolerance must be >= 0, got {tol!r}")
    cap = spec.max_iterations if max_iterations is None else validate.count(max_iterations, "max_iterations")
    return spec, tol, cap


def solve(
    target: Sequence[float],
    arm: ArmLike = "LArm",
    method: str = "analytic",
    initial: Sequence[float] | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    max_iterations: int | None = None,
) -> Solution:
    """Joint angles that put the arm's hand on a target.

    Args:
        target: ``[x, y, z]`` in FRAME_TORSO, metres.
        arm: ``"LArm"``, ``"RArm"``, or an :class:`ArmModel` (runtime limits).
        method: one of :data:`METHODS`.
        initial: the five start angles (the robot's current ones, for smooth
            motion); clamped into the limits. Given, every method answers on
            its side: no joint moves more than 0.04 rad beyond what the nearest
            exact solution needs (see :mod:`nao_ik.solvers.pipeline`). Default:
            the model's neutral posture, without that rule. WristYaw keeps its
            start value.
        tolerance: success distance, metres (default 0.1 mm); 0 iterates to
            machine precision or the method's floor (``reached`` is then True
            only for an exact hit).
        max_iterations: cap per start; default per method.

    Returns:
        A :class:`Solution`; its angles are always finite, inside the
        limits and clear of the arm model's body (NAO's, by default). An
        unreachable target gives the closest pose found with ``reached =
        False`` and a ``reason``.

    Raises:
        ValueError: a malformed or non-finite argument, unknown arm or method; a target no arm reaches by over
            a metre (:func:`nao_ik.model.validate.metres`: coordinates are metres).
    """
    model = resolve_arm(arm)
    t = validate.target(target)
    validate.metres(t)
    spec, tol, cap = _settings(model, method, tolerance, max_iterations)
    q0 = model.neutral if initial is None else model.clamp(validate.vector(initial, 5, "initial"))
    run = run_single(spec, model, t, q0, tol, cap, continuous=initial is not None)
    angles = model.clamp(run.q)
    if list(angles) == list(run.q):
        error = float(run.error)
    else:  # defensive: a solver's angles are already within the limits
        error = float(np.linalg.norm(kinematics.forward(model, angles) - np.asarray(t)))
    names = model.names
    clamped = tuple(n for n, c in zip(names, run.clamped or ()) if c)
    shortfall = None if run.shortfall is None else float(run.shortfall)
    reason = str(run.reason or "")
    return Solution(
        angles, names, error <= tol and not reason, error, int(run.iterations), spec.name, model.arm, clamped,
        shortfall, bool(run.refined), reason,
    )  # fmt: skip


def solve_batch(
    targets: Any,
    arm: ArmLike = "LArm",
    method: str = "analytic",
    initial: Any = None,
    tolerance: float = DEFAULT_TOLERANCE,
    max_iterations: int | None = None,
) -> BatchSolution:
    """Solve N targets at once, vectorised with numpy across targets.

    Args:
        targets: (N, 3) targets, metres.
        arm: as in :func:`solve`.
        method: one of :data:`METHODS`.
        initial: (5,) start angles for all targets or (N, 5) one per target.
        tolerance: success distance, metres; >= 0, as in :func:`solve`.
        max_iterations: cap per start.

    Returns:
        A :class:`BatchSolution` of arrays.

    Raises:
        ValueError: wrong shapes, non-finite values, unknown arm or method; targets no arm reaches by over a
            metre, the first few by row (:func:`nao_ik.model.validate.metres`: coordinates are metres).
    """
    model = resolve_arm(arm)
    spec, tol, cap = _settings(model, method, tolerance, max_iterations)
    t = validate.array(targets, "targets", 3)
    far = np.abs(t) > validate.MAX_COORDINATE
    if far.any():
        row, col = np.argwhere(far)[0]
        raise ValueError(f"targets[{row}, {col}] must be within +-{validate.MAX_COORDINATE:g} m, got {t[row, col]!r}")
    validate.metres(t, "targets")
    n = t.shape[0]
    if initial is None:
        q0 = np.tile(np.asarray(model.neutral), (n, 1))
    else:
        q0 = validate.array(initial, "initial", 5)
        if q0.shape[0] == 1:
            q0 = np.tile(q0, (n, 1))
        elif q0.shape[0] != n:
            raise ValueError(f"initial must be (5,) or ({n}, 5), got {q0.shape}")
        q0 = np.clip(q0, model.lower, model.upper)
    if n > BATCH_BLOCK:  # in blocks: each target's answer is its own, memory stays bounded
        blocks = [(t[i : i + BATCH_BLOCK], None if initial is None else q0[i : i + BATCH_BLOCK])
                  for i in range(0, n, BATCH_BLOCK)]  # fmt: skip
        parts = [solve_batch(bt, model, method, bq, tol, max_iterations) for bt, bq in blocks]
        arrays = {f: np.concatenate([getattr(p, f) for p in parts]) for f, v in parts[0]._asdict().items()
                  if isinstance(v, np.ndarray)}  # fmt: skip
        return parts[0]._replace(**arrays)
    if n == 0:
        empty = np.zeros(0)
        none = np.zeros((0, 5), dtype=bool)
        return BatchSolution(
            np.zeros((0, 5)),
            model.names,
            none[:, 0],
            empty,
            empty.astype(int),
            spec.name,
            model.arm,
            none,
            searched=none[:, 0],
        )
    run = run_batch(spec, model, t, q0, tol, cap, continuous=initial is not None)
    angles = np.clip(run.q, model.lower, model.upper)
    if np.array_equal(angles, run.q):
        error = np.asarray(run.error, dtype=float)
    else:  # defensive: a solver's angles are already within the limits
        error = np.linalg.norm(kinematics.forward_batch(model, angles) - t, axis=1)
    clamped = run.clamped if run.clamped is not None else np.zeros((n, 5), dtype=bool)
    reason = np.asarray(run.reason if run.reason is not None else np.full(n, "", dtype=object), dtype=object)
    reason = np.broadcast_to(reason, (n,)).copy()
    return BatchSolution(
        angles, model.names, (error <= tol) & (reason == ""), error, run.iterations, spec.name, model.arm, clamped,
        run.shortfall, run.refined, reason, np.broadcast_to(np.asarray(run.searched, dtype=bool), (n,)).copy(),
    )  # fmt: skip


def forward(angles: Sequence[float], arm: ArmLike = "LArm") -> np.ndarray:
    """The hand position for five joint angles (chain order), FRAME_TORSO metres."""
    model = resolve_arm(arm)
    return kinematics.forward(model, validate.vector(angles, 5, "angles"))
