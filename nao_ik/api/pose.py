"""The hand's pose: ``solve_pose`` (ALMotion's position6D and axisMask) and ``forward_pose``.

A NAO arm has five joints and a hand pose six components, so a full pose
(axisMask 63) is either one the arm can take, with an exact answer in closed
form (:mod:`nao_ik.geometry.full_pose`), or one it cannot, where the answer is
the best compromise. How the two are weighed is documented and adjustable:

- the cost is sum_i (w_i r_i)^2 over the components the axisMask selects,
  r = [p* - p; log(R* R^T)], position in metres, orientation as the
  FRAME_TORSO rotation vector in radians (the axisMask's WX, WY, WZ bits pick
  its components);
- the default weights put the position first: 1 per metre for x, y, z and
  1e-3 m per radian for wx, wy, wz (one degree weighs as 17.5 um), so the
  hand goes where it is sent when it can and turns as close as it can from
  there; ``weights`` sets other ones;
- the compromise is a damped least squares on the 6-row Jacobian within the
  joint limits (:mod:`nao_ik.solvers.pose_dls`), run from the start posture
  and from the lowest-cost of these seeds: the closed form of the pose (the
  configuration of a nearby consistent pose) and, when the position is
  wanted, the exact position solution nearest to it and the exact position
  solutions (elbow swivels every 15 degrees, WristYaw across its range) whose
  orientation is nearest; the lowest cost wins, and among answers that reach,
  the one nearest the start posture (move time).

``reached`` is True only when every selected component is within tolerance:
the position within ``tolerance`` (0.1 mm) and the orientation within
``rotation_tolerance`` (0.1 degree); otherwise ``reason`` says why: the body
(``"collision: <part>"``), the position method's reason (axisMask 7), or what is
left (:func:`off`: ``"orientation: 35.5 degrees off"``). axisMask 7 (position
only) is :func:`nao_ik.api.position.solve` itself, any position method included.

A position6D's angles are radians within +-2 pi: a larger one is refused, as
degrees sent for radians.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple, Sequence

import numpy as np

from ..geometry.collision import clearance
from ..geometry.full_pose import pose_fast, pose_roots
from ..geometry.nearest import move_time
from ..geometry.swivel import SEED_SWIVELS, swivel_configurations
from ..kinematics.chain import chain
from ..kinematics.hand_pose import Rotation, rotation_from_angles
from ..kinematics.hand_pose import forward_pose as _forward_pose
from ..kinematics.ops import ARRAY, SCALAR
from ..model import validate
from ..model.arm import ArmModel
from ..model.body import MARGIN
from ..solvers.pose_dls import PoseRun, PoseTarget, pose_dls, residual, residual_cost
from .position import DEFAULT_TOLERANCE, ArmLike, resolve_arm, resolve_method, solve

#: Methods for poses other than position only: ``analytic`` (closed form, then
#: the compromise) and ``dls`` (the compromise's least squares from the start alone).
POSE_METHODS: tuple[str, ...] = ("analytic", "dls")
#: Default orientation tolerance, radians (0.1 degree).
DEFAULT_ROTATION_TOLERANCE = math.radians(0.1)
#: Default weights (x, y, z, wx, wy, wz): position first.
DEFAULT_WEIGHTS: tuple[float, ...] = (1.0, 1.0, 1.0, 1e-3, 1e-3, 1e-3)
#: axisMask bits.
POSITION_MASK, ROTATION_MASK, FULL_MASK = 7, 56, 63
#: Least-squares runs of the compromise: from the start posture and the lowest-cost seeds.
RUNS = 3
#: WristYaw values of the swivel seeds, evenly across its range (plus the closed form's).
SEED_WRISTS = 7
#: Iteration cap of the compromise; SCOUT of them from every seed, the rest from the best.
MAX_ITERATIONS = 200
SCOUT = 12
#: Joint-limit slack within which a closed-form answer counts as allowed (rounding).
SLACK = 1e-9
_tuple_new = tuple.__new__
#: Largest coordinate (m) and angle (rad) of a position6D: beyond 2 pi an angle is degrees sent for radians.
_BOUND = validate.MAX_COORDINATE
MAX_ANGLE = 2.0 * math.pi
_BOUNDS = (_BOUND,) * 3 + (MAX_ANGLE,) * 3
LABELS = ("position6D x", "position6D y", "position6D z", "position6D wx", "position6D wy", "position6D wz")


class PoseSolution(NamedTuple):
    """The answer of :func:`solve_pose`: a :class:`~nao_ik.solvers.base.Solution` plus the pose's errors.

    Attributes:
        angles: the five joint angles (WristYaw included), inside the limits.
        names: their ALMotion joint names.
        reached: True when every component the axisMask selects is within tolerance.
        error: ``position_error`` (the meaning :attr:`Solution.error` has).
        iterations: least-squares iterations, summed over the starts (0 for the closed form).
        method: the method that answered.
        arm: ``"LArm"`` or ``"RArm"``.
        clamped: joints clamped into the limits (rounding of the closed form only).
        position_error: distance over the selected position components, metres.
        rotation_error: length of the selected rotation-vector components, radians.
        reason: ``""`` when reached, else why: ``"collision: <part>"`` (the only answers found go
            through the body), the position method's reason (axisMask 7), or what is left (:func:`off`).
    """

    angles: tuple[float, ...]
    names: tuple[str, ...]
    reached: bool
    error: float
    iterations: int
    method: str
    arm: str
    clamped: tuple[str, ...] = ()
    position_error: float = 0.0
    rotation_error: float = 0.0
    reason: str = ""


def check_axis_mask(value: Any) -> int:
    """ALMotion's axisMask: a whole number in 1..63 (X 1, Y 2, Z 4, WX 8, WY 16, WZ 32)."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"axisMask must be a whole number in 1..63, got {value!r}")
    if not 1 <= value <= FULL_MASK:
        raise ValueError(f"axisMask must be in 1..63 (7 position, 56 orientation, 63 both), got {value!r}")
    return value


def check_position6d(value: Any) -> tuple[float, ...]:
    """A position6D ``[x, y, z, wx, wy, wz]``: six finite numbers, coordinates within +-MAX_COORDINATE m, angles
    within +-:data:`MAX_ANGLE` rad (a larger one is degrees sent for radians: refused, saying so)."""
    if type(value) in (list, tuple) and len(value) == 6:
        # The common case: six finite floats in range (NaN fails the comparisons).
        for x, bound in zip(value, _BOUNDS):
            if type(x) is not float or not -bound <= x <= bound:
                break
        else:
            return tuple(value)
    v = validate.vector(value, 6, "position6D", LABELS)
    for x, label in zip(v[:3], LABELS):
        if abs(x) > validate.MAX_COORDINATE:
            raise ValueError(f"{label} must be within +-{validate.MAX_COORDINATE:g} m (FRAME_TORSO metres), got {x!r}")
    for x, label in zip(v[3:], LABELS[3:]):
        if abs(x) > MAX_ANGLE:
            raise ValueError(f"{label} {x!r} is beyond 2 pi: angles are radians (ALMotion's position6D), not degrees")
    return v


def off(position_error: float, rotation_error: float, tolerance: float = DEFAULT_TOLERANCE,
        rotation_tolerance: float = DEFAULT_ROTATION_TOLERANCE) -> str:  # fmt: skip
    """What an answer leaves of its target, for a ``reason``: the components beyond their tolerance
    (``"position: 2.13 mm off, orientation: 35.5 degrees off"``)."""
    parts = []
    if position_error > tolerance:
        parts.append(f"position: {position_error * 1e3:.3g} mm off")
    if rotation_error > rotation_tolerance:
        parts.append(f"orientation: {math.degrees(rotation_error):.3g} degrees off")
    return ", ".join(parts) or f"position: {position_error * 1e3:.3g} mm off"


def check_pose_metres(pose: Sequence[float], mask: int) -> None:
    """Refuse a position6D whose position counts (the axisMask selects x, y and z) and lies where no arm reaches
    by over a metre (:func:`nao_ik.model.validate.metres`); the components a mask leaves free may hold anything."""
    if mask & POSITION_MASK == POSITION_MASK:
        validate.metres(pose, "position6D")


def forward_pose(angles: Sequence[float], arm: ArmLike = "LArm") -> list[float]:
    """The hand's position6D ``[x, y, z, wx, wy, wz]`` for five joint angles (FRAME_TORSO, Rz*Ry*Rx)."""
    return _forward_pose(resolve_arm(arm), validate.vector(angles, 5, "angles"))


def solve_pose(
    position6d: Sequence[float],
    arm: ArmLike = "LArm",
    axis_mask: int = FULL_MASK,
    initial: Sequence[float] | None = None,
    method: str = "analytic",
    weights: Sequence[float] | None = None,
    tolerance: float = DEFAULT_TOLERANCE,
    rotation_tolerance: float = DEFAULT_ROTATION_TOLERANCE,
) -> PoseSolution:
    """Joint angles (all five, WristYaw included) that give the hand a pose.

    Args:
        position6d: ``[x, y, z, wx, wy, wz]``, FRAME_TORSO metres and radians,
            rotation Rz(wz) * Ry(wy) * Rx(wx) (ALMotion's position6D).
        arm: ``"LArm"``, ``"RArm"`` or an :class:`ArmModel`.
        axis_mask: the components that count (ALMotion's axisMask, 1..63).
        initial: the five start angles (the robot's current ones); default the
            neutral posture.
        method: :data:`POSE_METHODS`; with axisMask 7 any of :data:`nao_ik.METHODS`.
        weights: six weights (x, y, z, wx, wy, wz) of the compromise, >= 0;
            default :data:`DEFAULT_WEIGHTS`.
        tolerance: position tolerance, metres.
        rotation_tolerance: orientation tolerance, radians.

    Returns:
        A :class:`PoseSolution`, angles always finite and inside the limits;
        where the model has a body (NAO's, by default), reached only when
        the answer keeps the body's margin (else ``reason`` names the part);
        not reached, ``reason`` says why (never ``""``).

    Raises:
        ValueError: a malformed argument (an angle beyond 2 pi: degrees), unknown arm or method; a position that
            counts and that no arm reaches by over a metre (:func:`check_pose_metres`: coordinates are metres).
    """
    model = resolve_arm(arm)
    sol = _solve_pose(model, position6d, axis_mask, initial, method, weights, tolerance, rotation_tolerance)
    if model.body and not sol.reason:
        sol = _clear(model, sol, position6d, axis_mask, tolerance, rotation_tolerance)
    if sol.reached or sol.reason:
        return sol
    return sol._replace(reason=off(sol.position_error, sol.rotation_error, tolerance, rotation_tolerance))


def _clear(model: ArmModel, sol: PoseSolution, position6d: Sequence[float], axis_mask: int, tolerance: float,
           rotation_tolerance: float) -> PoseSolution:  # fmt: skip
    """``sol`` where it keeps the body's margin; else the closed form's other root where that one does, else not
    reached, the part named."""
    near = clearance(model, sol.angles, model.body)
    if near.distance >= MARGIN - 1e-9:
        return sol
    if sol.reached and axis_mask == FULL_MASK:  # the other root of the closed form, where it is clear
        pose = check_position6d(position6d)
        p, r = pose[:3], rotation_from_angles(pose[3], pose[4], pose[5])
        for root in pose_roots(model, p, r):
            q = model.clamp(root.q)
            pos, rot = _errors(residual(model, PoseTarget(p, r, DEFAULT_WEIGHTS), q)[0], FULL_MASK)
            if pos <= tolerance and rot <= rotation_tolerance and clearance(model, q, model.body).distance >= MARGIN:
                return sol._replace(angles=q, position_error=pos, error=pos, rotation_error=rot)
    return sol._replace(reached=False, reason=f"collision: {near.part}")


def _solve_pose(model: ArmModel, position6d: Sequence[float], axis_mask: int, initial: Sequence[float] | None,
                method: str, weights: Sequence[float] | None, tolerance: float, rotation_tolerance: float
                ) -> PoseSolution:  # fmt: skip
    """:func:`solve_pose` on the arm's limits (the body is checked by the caller)."""
    pose = check_position6d(position6d)
    if (
        axis_mask == FULL_MASK and type(axis_mask) is int and method == "analytic" and weights is None
        and tolerance == DEFAULT_TOLERANCE and rotation_tolerance == DEFAULT_ROTATION_TOLERANCE
    ):  # fmt: skip
        # The common call, a full pose with the defaults: the closed form at once (the start is only checked).
        check_pose_metres(pose, FULL_MASK)
        if initial is not None:
            _start(model, initial)
        exact = _exact(model, pose[:3], rotation_from_angles(pose[3], pose[4], pose[5]), tolerance,
                       rotation_tolerance)  # fmt: skip
        if exact is not None:
            q, pos, rot = exact
            return _tuple_new(PoseSolution, (q, _names(model), True, pos, 0, method, model.arm, (), pos, rot, ""))
    mask = check_axis_mask(axis_mask)
    check_pose_metres(pose, mask)
    tol = validate.positive(tolerance, "tolerance")
    rtol = validate.positive(rotation_tolerance, "rotation_tolerance")
    if mask == POSITION_MASK:
        sol = solve(pose[:3], model, resolve_method(method), initial, tol)
        same = {k: v for k, v in sol._asdict().items() if k in PoseSolution._fields}
        return PoseSolution(**same, position_error=sol.error, rotation_error=0.0)
    name = validate.choice(method, POSE_METHODS, "pose method (axisMask 7 takes any position method)")
    w = _weights(weights, mask)
    q0 = model.neutral if initial is None else _start(model, initial)
    p, r = pose[:3], rotation_from_angles(pose[3], pose[4], pose[5])
    seeds = [q0]
    if name == "analytic":
        if mask == FULL_MASK:
            exact = _exact(model, p, r, tol, rtol)
            if exact is not None:
                q, pos, rot = exact
                return PoseSolution(q, _names(model), True, pos, 0, name, model.arm, (), pos, rot)
        q, clamped = closed_form(model, p, r, q0)
        if mask == FULL_MASK:  # the general closed form (two ElbowRoll roots where the limits allow both)
            pos, rot = _errors(residual(model, PoseTarget(p, r, w), q)[0], mask)
            if pos <= tol and rot <= rtol:
                return PoseSolution(q, _names(model), True, pos, 0, name, model.arm, clamped, pos, rot)
        seeds = [q, q0]
        if mask & POSITION_MASK == POSITION_MASK:
            seeds.append(solve(p, model, "analytic", initial=q).angles)
            seeds += _swivel_seeds(model, p, r, q[4])
    target = PoseTarget(p, r, w)
    if len(seeds) > RUNS:
        # The least squares from the start and from the lowest-cost seeds.
        costs = [residual_cost(model, target, s) for s in seeds[1:]]
        seeds = [q0] + [seeds[1 + i] for i in sorted(range(len(costs)), key=costs.__getitem__)[: RUNS - 1]]
    run, total = _compromise(model, target, seeds, q0, mask, tol, rtol)
    pos, rot = _errors(run.residual, mask)
    reached = pos <= tol and rot <= rtol
    return PoseSolution(run.q, model.names, reached, pos, total, name, model.arm, (), pos, rot)


_NAMES: dict = {}


def _names(model: ArmModel) -> tuple[str, ...]:
    """``model.names``, kept per model (the property builds the tuple on every call)."""
    hit = _NAMES.get(id(model))
    if hit is None or hit[0] is not model:
        if len(_NAMES) > 64:
            _NAMES.clear()
        hit = _NAMES[id(model)] = (model, model.names)
    return hit[1]


def _start(model: ArmModel, initial: Any) -> tuple[float, ...]:
    """The start posture, validated and clamped into the limits."""
    if type(initial) in (list, tuple) and len(initial) == 5:
        # The common case, without the general checks' cost: five floats inside the limits (NaN fails).
        for x, lo, hi in zip(initial, model.lower, model.upper):
            if type(x) is not float or not lo <= x <= hi:
                break
        else:
            return tuple(initial)
    return model.clamp(validate.vector(initial, 5, "initial"))


def _exact(model: ArmModel, p: Sequence[float], r: Rotation, tol: float, rtol: float):
    """The closed form's answer for a pose the arm can take, with its errors (FK); None otherwise."""
    fast = pose_fast(model, p, r)
    if fast is None or fast.violation > SLACK:
        return None
    q, pos, rot = fast.q, fast.position_error, fast.rotation_error
    if fast.outside:  # within SLACK of a limit: clamp, and measure the clamped angles
        q = model.clamp(q)
        res, _ = residual(model, PoseTarget(p, r, DEFAULT_WEIGHTS), q)
        pos, rot = _errors(res, FULL_MASK)
    return (q, pos, rot) if pos <= tol and rot <= rtol else None


def closed_form(model: ArmModel, p: Sequence[float], r: Sequence[Sequence[float]], q0: Sequence[float]):
    """The closed-form configuration of pose (p, r) nearest to ``q0`` in move time, clamped into the limits.

    Returns:
        (five angles, names of the joints that had to be clamped). Where the
        pose is not one the arm can take, the least violating root (a nearby
        consistent pose's configuration).
    """
    roots = pose_roots(model, p, r)
    ok = [x for x in roots if x.violation <= SLACK]
    if len(ok) > 1:
        best = min(ok, key=lambda x: move_time(model, x.q, q0, SCALAR))
    else:
        best = ok[0] if ok else min(roots, key=lambda x: x.violation)
    q = best.q
    for a, lo, hi in zip(q, model.lower, model.upper):
        if a < lo or a > hi:
            break
    else:
        return q, ()
    c = model.clamp(q)
    return c, tuple(n for n, a, b in zip(model.names, c, q) if abs(a - b) > SLACK) if ok else ()


def _swivel_seeds(model: ArmModel, p: Sequence[float], r: Rotation, wrist: float) -> list:
    """Exact configurations of the position (elbow swivels every 15 degrees, WristYaw across its range) whose
    orientation is nearest to ``r``: the position-first compromise's basins."""
    lo, hi = model.lower[4], model.upper[4]
    wrists = np.unique(np.concatenate([[min(max(wrist, lo), hi)], np.linspace(lo, hi, SEED_WRISTS)]))
    sw = swivel_configurations(model, np.tile(np.asarray(p, dtype=float), (len(wrists), 1)), wrists, SEED_SWIVELS)
    if not sw.reachable[0]:
        return []
    q = sw.angles.reshape(-1, 5)[sw.violation.ravel() <= SLACK]
    if not len(q):
        return []
    cols = chain(model, [q[:, i] for i in range(5)], ARRAY).rotation
    # trace(r R^T) = sum over the columns k of r's column k . R's column k.
    trace = sum(r[0][k] * cols[k][0] + r[1][k] * cols[k][1] + r[2][k] * cols[k][2] for k in range(3))
    best = np.argsort(-trace, kind="stable")[:2]
    return [tuple(q[i].tolist()) for i in best]


def _compromise(model, target, seeds, q0, mask, tol, rtol) -> tuple[PoseRun, int]:
    """The weighted least squares from each seed: the lowest cost, or among those that reach, the nearest.

    Every seed first gets SCOUT iterations; only the lowest-cost run goes on to convergence.
    """
    runs = [pose_dls(model, target, s, SCOUT) for s in seeds]
    total = sum(x.iterations for x in runs)

    def reaching(rs: list) -> list:
        return [x for x in rs if all(e <= t for e, t in zip(_errors(x.residual, mask), (tol, rtol)))]

    if not reaching(runs):
        best = min(runs, key=lambda x: x.cost)
        more = pose_dls(model, target, best.q, MAX_ITERATIONS - SCOUT)
        total += more.iterations
        runs = [more if more.cost <= best.cost else best]
    reached = reaching(runs)
    if reached:
        return min(reached, key=lambda x: move_time(model, x.q, q0, SCALAR)), total
    return min(runs, key=lambda x: x.cost), total


_DEFAULT_BY_MASK: dict = {}


def _weights(weights: Any, mask: int) -> tuple[float, ...]:
    """The validated weights with the components outside the mask zeroed."""
    if weights is None:
        w = _DEFAULT_BY_MASK.get(mask)
        if w is None:
            w = _DEFAULT_BY_MASK[mask] = _weights(DEFAULT_WEIGHTS, mask)
        return w
    w = validate.vector(weights, 6, "weights")
    if any(x < 0.0 for x in w):
        raise ValueError(f"weights must be >= 0, got {list(w)!r}")
    out = tuple(x if mask >> i & 1 else 0.0 for i, x in enumerate(w))
    if not any(out):
        raise ValueError(f"weights {list(w)!r} give every component axisMask {mask} selects weight 0")
    return out


def _errors(res: Sequence[float], mask: int) -> tuple[float, float]:
    """(position error m, rotation error rad) over the components the mask selects."""
    pos = math.sqrt(sum(res[i] ** 2 for i in range(3) if mask >> i & 1))
    rot = math.sqrt(sum(res[i] ** 2 for i in range(3, 6) if mask >> i & 1))
    return pos, rot
