"""The motions a joint command may make, certified clear of the body, and a safe sequence where one is not.

``ALMotion.setAngles`` moves every joint from where it is toward its target,
but how is not pinned down: constant speed with instant starts and stops (the
simplest model), a smooth bell-shaped speed profile whose peak is
``fractionMaxSpeed`` (Aldebaran's documentation; moves take about 1.5 times
longer), the joints synchronised or each at its own pace (not documented),
and a joint retargeted mid-move keeps going its old way for about 4 cycles
before it turns. Whatever the profile, each joint goes monotonically from its
start to its goal, so every such motion stays in the joint-space box between
the two postures. :func:`sweep` certifies that box
(:func:`nao_ik.geometry.scalar.sweep.certify`: every posture in it keeps
:data:`SWEEP_MARGIN`, by branch and bound on a bound of how far the links
move), so a certified command is safe under any profile. A command to an arm
still moving (:func:`sweep_moving`) certifies the box around where the arm
is, where it was going and the new goal, grown by the overshoot.

:func:`plan` finds a safe sequence of commands, each sent once the arm has
arrived within :data:`ARRIVED` of the one before:

1. the direct command, when its box is certified;
2. else the arm first swung out sideways (ShoulderRoll away from the body,
   the elbow straightened), then moved, then brought in: one, two or three
   commands, the quickest whose every leg is certified;
3. else the straight joint-space line cut into 2, 4 or 8 legs, each leg's
   box smaller and hugging the line;
4. else no sequence: :class:`Plan` with ``reason`` and no commands.

The constants SWEEP_MARGIN, STEP and REACH, :class:`Motion` (the
constant-speed model, for move times) and the certification live in
:mod:`nao_ik.geometry.scalar.sweep` (the common subset of Python 2.7 and 3:
the robot runtime certifies its commands with the same code).
"""

from __future__ import annotations

import math
from typing import Iterable, NamedTuple, Sequence

import numpy as np

from ..model.arm import ArmModel
from ..model.body import MARGIN, Capsule
from .collision import arm_region, clearance
from .scalar.sweep import (  # noqa: F401  (re-exported)
    ALTERNATIVES,
    BOX_BUDGET,
    BRAKE,
    OVERSHOOT_CYCLES,
    REACH,
    STEP,
    SWEEP_MARGIN,
    Motion,
    certify,
    certify_from,
    first_certified,
    hull,
    overshoot,
    overshoots,
    way_box,
)

#: ShoulderRoll (outward, radians from the body) tried for the swung-out via postures.
OUT_ROLLS = (0.35, 0.7, 1.0, 1.3)
#: The straight joint-space line's cuts tried by :func:`plan`: its legs' boxes hug the line.
LEGS = (2, 4, 8)
#: How close (rad) the sensed angles must come to a via posture before the next command of a sequence.
ARRIVED = 0.01
#: How far (rad) before a goal at the body's margin its last leg starts, up the gradient of its clearance, and
#: the step of that gradient's differences.
APPROACH = 0.1
GRADIENT_STEP = 1e-4
#: How much longer than at constant speed a move may take under setAngles' profile: the documented bell-shaped
#: speed profile takes about 1.5 times as long; the margin covers a profile slower still.
SLOWDOWN = 2.0


class Sweep(NamedTuple):
    """The clearance along one commanded motion.

    Attributes:
        clear: True where every sample keeps the required clearance.
        distance: the smallest clearance along the motion, metres.
        part: the body part at that sample (``""`` when none is near).
        samples: how many postures were checked.
    """

    clear: bool
    distance: float
    part: str
    samples: int


class Plan(NamedTuple):
    """The commands that take the arm from its posture to an answer.

    Attributes:
        commands: the postures to send in turn (the last one is the answer); empty when none is safe.
        reason: ``""``, or why no sequence is safe (``"motion: crosses the torso"``).
        seconds: the time the sequence takes at the given speed.
    """

    commands: list
    reason: str
    seconds: float


def sweep(model: ArmModel, start: Sequence[float], goal: Sequence[float], fraction: float = 1.0,
          body: Sequence[Capsule] | None = None, extra: float = 0.0, tolerance: float = 0.0,
          budget: int = BOX_BUDGET) -> Sweep:  # fmt: skip
    """Whether every motion setAngles may make from ``start`` to ``goal`` keeps SWEEP_MARGIN (+ ``extra``).

    The box between the two postures (each joint anywhere between its start and its goal) is certified
    (:func:`nao_ik.geometry.scalar.sweep.certify_from`); ``fraction`` does not matter, the timing does not. A
    start already closer than the margin to a body part (the robot put there by someone else) may move as long
    as no posture of the box comes more than STEP / 2 nearer to that part than it is; every other part keeps
    the margin.

    Args:
        model: the arm.
        start, goal: five joint angles each.
        fraction: the command's ``fractionMaxSpeed`` (kept for the callers; no bearing on the box).
        body: the shapes to keep clear of (default: the model's body).
        extra: clearance required beyond SWEEP_MARGIN, metres.
        tolerance: radians by which the start may be off (an arm sent on once it arrived within it).
        budget: the most postures checked before the box is called not certified.

    Returns:
        :class:`Sweep`.
    """
    # A start off by ``tolerance`` widens the box around the start alone: from anywhere there, each joint still
    # goes monotonically to the goal, so the box never reaches past the goal.
    off = [[float(s) - tolerance for s in start], [float(s) + tolerance for s in start]] if tolerance else []
    none = [0.0] * 5
    return _certify(model, [start, *off, goal], none, none, body, extra, budget)


def sweep_moving(model: ArmModel, reading: Sequence[float], aim: Sequence[float], aim_fraction: float,
                 goal: Sequence[float], body: Sequence[Capsule] | None = None, budget: int = BOX_BUDGET,
                 earlier: Sequence[tuple] = ()) -> Sweep:  # fmt: skip
    """Whether a command to ``goal`` is safe for an arm that may still be on its way from ``reading`` to ``aim``.

    Wherever the arm is on its way (anywhere in the box between ``reading`` and ``aim``, whatever the
    profile and however late the command arrives), each joint may go on past it for the retarget's
    overshoot (:func:`~nao_ik.geometry.scalar.sweep.overshoot` at ``aim_fraction``) before it turns
    toward ``goal``: the box around the three postures, grown by the overshoot on the side the joint was
    moving, holds every such motion. ``earlier``: (aim, fraction) of the commands before ``aim`` that a joint
    may still be braking toward (:func:`way_box`).
    """
    postures, low, high = way_box(model, reading, [*earlier, (aim, aim_fraction)])
    return _certify(model, [*postures, goal], low, high, body, 0.0, budget)


def sweep_from(model: ArmModel, start: Sequence[float], goal: Sequence[float], fraction: float,
               way: tuple | None = None, budget: int = BOX_BUDGET) -> Sweep:  # fmt: skip
    """One command's check: from ``start`` (:func:`sweep`), or with ``way`` (reading, aim, aim's fraction, and the
    earlier aims a joint may still brake toward: an arm that may still be on its way) from anywhere on that way
    (:func:`sweep_moving`)."""
    if way is None:
        return sweep(model, start, goal, fraction, budget=budget)
    reading, aim, aim_fraction, earlier = way
    return sweep_moving(model, reading, aim, aim_fraction, goal, budget=budget, earlier=earlier)


def first_direct(model: ArmModel, start: Sequence[float], candidates: Iterable[Sequence[float]], fraction: float,
                 way: tuple | None = None, most: int | None = None) -> list | None:  # fmt: skip
    """The first of at most ``most`` (default ALTERNATIVES) ``candidates`` (postures that do the same task, best
    first) clear of the body by MARGIN whose one command is certified (:func:`sweep_from`), their checks together
    within one check's BOX_BUDGET postures. None where none is.
    """

    def check(q: list, budget: int) -> tuple:
        if clearance(model, q, model.body).distance < MARGIN - 1e-6:
            return False, 0
        got = sweep_from(model, start, q, fraction, way, budget)
        return got.clear, got.samples

    clamped = ([float(x) for x in model.clamp(q)] for q in candidates)
    return first_certified(clamped, check, ALTERNATIVES if most is None else most)


def sweep_region(model: ArmModel, postures: Sequence[Sequence[float]], grow: Sequence[float],
                 body: Sequence[Capsule] | None = None) -> Sweep:  # fmt: skip
    """Whether every posture in the box around ``postures`` (the first: where the arm starts), grown by ``grow``
    radians per joint on both sides, keeps SWEEP_MARGIN: an arm somewhere among them, moving on."""
    return _certify(model, list(postures), grow, grow, body, 0.0)


def _certify(model: ArmModel, postures: list, low: Sequence[float], high: Sequence[float],
             body: Sequence[Capsule] | None, extra: float, budget: int = BOX_BUDGET) -> Sweep:  # fmt: skip
    shapes = model.body if body is None else tuple(body)
    if not shapes:
        return Sweep(True, math.inf, "", 0)
    first = [float(x) for x in postures[0]]
    lo, hi = hull([[float(x) for x in q] for q in postures], low, high)
    lo, hi = [max(a, m) for a, m in zip(lo, model.lower)], [min(b, m) for b, m in zip(hi, model.upper)]
    return Sweep(*certify_from(model, shapes, first, lo, hi, SWEEP_MARGIN + extra, budget))


def stream_regions(model: ArmModel, base: Sequence[float], path: Sequence[Sequence[float]], fraction: float,
                   cycle: float, tolerance: float = 0.0) -> list:  # fmt: skip
    """For each command of a path streamed one per ``cycle`` from an arm at ``base``, where the arm may be when
    the command arrives, as the postures of a box and how far each joint may go past it.

    The arm is among the points commanded since the last one it has surely reached by then (each leg taking
    at most SLOWDOWN times its constant-speed time, starting once its command is sent and the previous leg
    is done), ``base`` if none yet, each within ``tolerance``. Each command retargets the joints: a joint
    keeps going its way for OVERSHOOT_CYCLES cycles at the speed it had, at most the larger of its steps
    there per cycle (and at most ``fraction`` of its maximum speed), decelerating: half that speed.

    Each box is given by three postures: the first of those points (where the arm starts) and the box's two
    corners, whose box is theirs: a fixed size per command however many points the arm may be behind (a path
    of far points at full speed leaves it hundreds behind).

    Returns:
        One (postures, growth per joint in rad) per command.
    """
    rows, first, lo, hi, grow = _stream_boxes(model, base, path, fraction, cycle, tolerance)
    rows = rows.tolist()
    return [([rows[f], a, b], g) for f, a, b, g in zip(first.tolist(), lo.tolist(), hi.tolist(), grow.tolist())]


def _stream_boxes(model: ArmModel, base: Sequence[float], path: Sequence[Sequence[float]], fraction: float,
                  cycle: float, tolerance: float) -> tuple:  # fmt: skip
    """:func:`stream_regions`' boxes as arrays, for a path of any length in time linear in it: (rows (N + 1, 5):
    ``base`` then the path; first (N,): each box's first row; its lower and upper corners (N, 5); its growth
    (N, 5))."""
    over = np.asarray(overshoot(model, fraction))  # at most a joint's overshoot at full command speed
    rows = np.asarray([[float(x) for x in base]] + [[float(x) for x in q] for q in path]).reshape(-1, 5)
    moves = np.abs(np.diff(rows, axis=0))  # move t: rows t -> t + 1
    took = (moves / (np.array([j.max_velocity for j in model.joints]) * fraction)).max(axis=1, initial=0.0)
    done, arrive = 0.0, []
    for j, t in enumerate(took.tolist()):  # :func:`seconds` of each leg
        done = max(done, j * cycle) + SLOWDOWN * t
        arrive.append(done)
    # Command k's points: rows first[k]..k + 1 (row 0, base, until a point is surely reached).
    first, reached = [], -1
    for k in range(len(path)):
        while reached + 1 < k and arrive[reached + 1] <= k * cycle:
            reached += 1
        first.append(reached + 1)
    start, last = np.asarray(first, dtype=np.int64), np.arange(1, len(path) + 1)
    lo, hi = _window(rows, start, last, np.minimum), _window(rows, start, last, np.maximum)
    step = _window(moves, start, last - 1, np.maximum)
    return rows, start, lo, hi, np.minimum(step * OVERSHOOT_CYCLES / 2.0, over) + tolerance


def _window(values: np.ndarray, first: np.ndarray, last: np.ndarray, op) -> np.ndarray:
    """Per window, ``op`` (np.minimum or np.maximum) over ``values[first : last + 1]`` (rows), each column: from
    the extremes of the runs of 2, 4, 8 ... rows (two runs cover a window)."""
    out = np.zeros((first.size, values.shape[1]))
    if not first.size:
        return out
    length = last - first + 1
    level = np.frexp(length.astype(float))[1] - 1  # floor(log2(length))
    runs = [values]
    for k in range(1, int(level.max()) + 1):
        runs.append(op(runs[-1][: -(1 << (k - 1))], runs[-1][1 << (k - 1) :]))
    for k in np.unique(level).tolist():
        at = np.flatnonzero(level == k)
        out[at] = op(runs[k][first[at]], runs[k][last[at] - (1 << k) + 1])
    return out


#: An arm streaming a path is held as the body by at most this many hulls of the boxes it may be in
#: (:func:`stream_body`): each is :func:`~nao_ik.geometry.collision.arm_region`'s capsules.
STREAM_PIECES = 4


def stream_body(model: ArmModel, base: Sequence[float], points: Sequence[Sequence[float]], fraction: float,
                cycle: float, tolerance: float = 0.0, pieces: int = STREAM_PIECES) -> tuple[Capsule, ...]:  # fmt: skip
    """The links of an arm streaming a path, anywhere it may be until it got to its end, as capsules.

    ``points``: the commands streamed one per ``cycle`` at ``fraction`` from an arm at ``base`` (within
    ``tolerance``); while it streams, the first is its last command (sent: the arm is, if anything, farther on
    than this takes it). :func:`stream_regions` gives each command's box; consecutive boxes are merged into at
    most ``pieces`` hulls, each grown by the most any of its boxes is, and each hull held by
    :func:`~nao_ik.geometry.collision.arm_region`.
    """
    _, _, lo, hi, grow = _stream_boxes(model, base, points, fraction, cycle, tolerance)
    size = max(1, -(-len(lo) // pieces))
    shapes: tuple[Capsule, ...] = ()
    for k in range(0, len(lo), size):
        most = grow[k : k + size].max(axis=0).tolist()
        corners = [lo[k : k + size].min(axis=0).tolist(), hi[k : k + size].max(axis=0).tolist()]
        region = arm_region(model, corners, most, most)
        shapes += region[1:] if shapes else region  # each region's first shape is the arm's shoulder: once
    return shapes


def pair_legs(left: ArmModel, q_left: Sequence[float], right: ArmModel, q_right: Sequence[float],
              left_start: Sequence[float], right_start: Sequence[float]) -> list:  # fmt: skip
    """Both arms' straight joint-space lines cut into 2, 4 or 8 legs, the first cut whose every leg passes
    :func:`pair_reason` (each leg sent once both arms arrived within ARRIVED of the last): [(left, right), ...]
    ending at the answers; [] if none does."""
    for n in LEGS:
        legs = [
            ([s + (g - s) * k / n for s, g in zip(left_start, q_left)],
             [s + (g - s) * k / n for s, g in zip(right_start, q_right)])
            for k in range(1, n)
        ] + [(list(q_left), list(q_right))]  # fmt: skip
        starts = [(list(left_start), list(right_start))] + legs[:-1]
        if all(not pair_reason(left, lq, right, rq, ls, rs, ARRIVED if k else 0.0)
               for k, ((ls, rs), (lq, rq)) in enumerate(zip(starts, legs))):  # fmt: skip
            return legs
    return []


def seconds(model: ArmModel, start: Sequence[float], goal: Sequence[float], fraction: float) -> float:
    """The time setAngles takes from ``start`` to ``goal``: the slowest joint's change over its speed."""
    return max(abs(g - s) / (j.max_velocity * fraction) for s, g, j in zip(start, goal, model.joints))


def plan(model: ArmModel, start: Sequence[float], goal: Sequence[float], fraction: float,
         body: Sequence[Capsule] | None = None, direct: Sweep | None = None) -> Plan:  # fmt: skip
    """The quickest safe sequence of commands from ``start`` to ``goal`` (see the module docstring).

    Args:
        model: the arm.
        start: the arm's posture now.
        goal: the answer to reach (clear of the body by MARGIN).
        fraction: the commands' ``fractionMaxSpeed``.
        body: the shapes to keep clear of (default: the model's body).
        direct: the direct motion's :func:`sweep` from ``start`` where the caller has it already.

    Returns:
        :class:`Plan`.
    """
    start, goal = [float(x) for x in start], [float(x) for x in goal]
    direct = sweep(model, start, goal, fraction, body) if direct is None else direct
    if direct.clear:
        return Plan([goal], "", seconds(model, start, goal, fraction))
    # The candidates quickest first: the first whose every leg is certified is the quickest safe one. The
    # approaches from a posture farther from the body come last: they cost a few more clearances to set up.
    for routes in (_routes(model, start, goal), lambda: _approaches(model, start, goal, body)):
        timed = []
        for route in routes() if callable(routes) else routes:
            legs = list(zip([start] + route[:-1], route))
            timed.append((sum(seconds(model, a, b, fraction) for a, b in legs), len(timed), route, legs))
        for took, _, route, legs in sorted(timed):
            if all(sweep(model, a, b, fraction, body, tolerance=ARRIVED if k else 0.0).clear
                   for k, (a, b) in enumerate(legs)):  # fmt: skip
                return Plan(route, "", took)
    return Plan([], f"motion: the move crosses the {direct.part or 'body'} and no safe sequence was found", math.inf)


def _routes(model: ArmModel, start: list, goal: list) -> list:
    """Candidate sequences (each ends at ``goal``): via the start and/or the goal swung out sideways, and the
    straight joint-space line in legs."""
    routes = []
    for roll in OUT_ROLLS:
        a, b = _out(model, start, roll), _out(model, goal, roll)
        routes += [[a, goal], [b, goal], [a, b, goal]]
    for n in LEGS:
        routes.append([[s + (g - s) * k / n for s, g in zip(start, goal)] for k in range(1, n)] + [goal])
    return routes


def _approaches(model: ArmModel, start: list, goal: list, body: Sequence[Capsule] | None) -> list:
    """Candidate sequences that leave ``start`` and come to ``goal`` by a posture APPROACH radians away up the
    gradient of its clearance (:func:`_away`), swung out between or not: an arm at the body's margin moves
    first, and last, where the clearance grows in every joint that moves, so that leg's box keeps the margin
    the posture keeps."""
    shapes = model.body if body is None else tuple(body)
    leave, come = _away(model, start, shapes), _away(model, goal, shapes)
    routes = []
    for first in ([], [leave]) if leave else ([],):
        for last in ([], [come]) if come else ([],):
            if not first and not last:
                continue  # the plain routes (:func:`_routes`)
            routes.append(first + last + [goal])
            for roll in OUT_ROLLS:
                a, b = _out(model, (first or [start])[0], roll), _out(model, (last or [goal])[0], roll)
                routes += [first + [a] + last + [goal], first + [b] + last + [goal], first + [a, b] + last + [goal]]
    return routes


def _away(model: ArmModel, q: list, shapes: Sequence[Capsule]) -> list | None:
    """``q`` moved APPROACH radians up the gradient of its clearance (finite differences of GRADIENT_STEP); None
    where it has none (every shape beyond the clearance's cap)."""
    base = clearance(model, q, shapes).distance
    slope = [(clearance(model, [x + (GRADIENT_STEP if i == j else 0.0) for i, x in enumerate(q)], shapes).distance
              - base) / GRADIENT_STEP for j in range(5)]  # fmt: skip
    norm = math.sqrt(sum(x * x for x in slope))
    if not norm > 0.0:
        return None
    return [float(x) for x in model.clamp([x + APPROACH * d / norm for x, d in zip(q, slope)])]


def _out(model: ArmModel, q: list, roll: float) -> list:
    """``q`` with the upper arm swung out to ``roll`` from the body (never in) and the elbow straightened."""
    s = -1.0 if model.is_right else 1.0
    out = list(q)
    out[1] = s * max(s * q[1], roll)
    straight = model.upper[3] if s > 0 else model.lower[3]  # ElbowRoll nearest 0: the arm straight
    out[3] = straight
    return list(model.clamp(out))


def pair_reason(left: ArmModel, q_left: Sequence[float], right: ArmModel, q_right: Sequence[float],
                left_start: Sequence[float], right_start: Sequence[float], tolerance: float = 0.0) -> str:  # fmt: skip
    """Why two arms moved together would meet (``""`` when they would not): both arms at once.

    Each arm's final posture keeps MARGIN from the other's final posture (and the body: the models'
    ``body``, without the other arm); each arm's motion (its box, any profile) keeps SWEEP_MARGIN from the
    body and from the other arm anywhere on its own way (:func:`nao_ik.geometry.collision.arm_region`): the two
    motions run at the same time, at whatever pace.

    Args:
        left, right: the arms' models (their ``body`` without the other arm).
        q_left, q_right: their answers.
        left_start, right_start: their postures now.
        tolerance: radians by which the starts may be off (arms sent on once they arrived within it).

    Returns:
        ``""``, or ``"collision: <part>"`` / ``"motion: ..."`` naming the arm.
    """
    from ..model.body import MARGIN, OTHER_ARM
    from .collision import arm_capsules

    arms = (
        (left, q_left, left_start, right, q_right, right_start),
        (right, q_right, right_start, left, q_left, left_start),
    )
    for model, q, start, other, q_other, other_start in arms:
        near = clearance(model, q, tuple(model.body) + arm_capsules(other, q_other))
        if near.distance < MARGIN - 1e-9:
            return f"collision: {model.arm} {near.part}"
        grow = [tolerance] * 5
        region = arm_region(other, [other_start, q_other], grow, grow)
        move = sweep(model, start, q, 1.0, tuple(model.body) + region, tolerance=tolerance)
        if not move.clear:
            part = move.part or "body"
            return f"motion: {model.arm} would cross the {part if part != OTHER_ARM else 'other arm'}"
    return ""
