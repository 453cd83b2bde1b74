"""The motion a joint command makes, checked against the body, and a safe sequence where the direct one is not.

``ALMotion.setAngles`` moves every joint from where it is toward its target
at its own speed (``fractionMaxSpeed`` x the joint's maximum velocity), so
joints with short moves arrive first: the path in joint space is a broken
line, not the straight one, and an answer that is clear of the body can
still be reached through it (the forearm swung across the chest, the elbow
through the torso's side). :func:`sweep` samples that path densely enough for
the body's margin and :func:`plan` finds a safe sequence of commands:

1. the direct command, when its whole motion keeps :data:`SWEEP_MARGIN`;
2. else the arm first swung out sideways (ShoulderRoll away from the body,
   the elbow straightened), then moved, then brought in: one, two or three
   commands, the quickest whose every motion is clear;
3. else no sequence: :class:`Plan` with ``reason`` and no commands.

:class:`Motion`, the sampling and the constants SWEEP_MARGIN, STEP, REACH are in
:mod:`nao_ik.geometry.scalar_sweep` (the common subset of Python 2.7 and 3: the robot
runtime checks its commands with the same code). Sampling (:func:`sweep`): no point
of the arm moves more than :data:`REACH`
times the joints' summed change, so the clearance between two checked
postures is bounded below by theirs; the checks are placed so that a
motion whose checked postures keep SWEEP_MARGIN keeps at least
SWEEP_MARGIN - STEP / 2 everywhere, more than the robot's own protection
margin (the stub's :data:`~nao_ik.body.STUB_MARGIN`).
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

from .body import Capsule
from .collision import clearance
from .geometry.scalar_clearance import checker
from .geometry.scalar_sweep import REACH, STEP, SWEEP_MARGIN, Motion, advance  # noqa: F401  (re-exported)
from .model import ArmModel

#: ShoulderRoll (outward, radians from the body) tried for the swung-out via postures.
OUT_ROLLS = (0.35, 0.7, 1.0, 1.3)
#: The shortest stretch of a moving arm's way that :func:`sweep_along` checks from its middle, radians of summed
#: joint change (the margin grows by REACH x half of it: 0.6 mm).
ALONG_SPACING = 0.005
#: The most postures :func:`sweep_along` checks (about 20 ms) before it calls the motions not clear.
ALONG_BUDGET = 1500


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


def sweep(model: ArmModel, start: Sequence[float], goal: Sequence[float], fraction: float,
          body: Sequence[Capsule] | None = None, extra: float = 0.0) -> Sweep:  # fmt: skip
    """The clearance of the motion setAngles makes from ``start`` to ``goal``.

    Conservative advancement (:func:`nao_ik.geometry.scalar_sweep.advance`, the Python 2/3
    code the robot runtime runs too): from a posture with clearance c, the next
    posture checked is (c - required + STEP) / REACH of summed joint change
    further on (no point of the arm moves more than REACH per radian), so a
    motion far from the body takes a few checks and one near it a check
    every STEP. A start already closer than SWEEP_MARGIN (the robot put
    there by someone else) may move as long as it comes no closer than it is.

    Args:
        model: the arm.
        start, goal: five joint angles each.
        fraction: the command's ``fractionMaxSpeed``.
        body: the shapes to keep clear of (default: the model's body).
        extra: clearance required beyond SWEEP_MARGIN, metres.

    Returns:
        :class:`Sweep`.
    """
    shapes = model.body if body is None else tuple(body)
    if not shapes:
        return Sweep(True, math.inf, "", 0)
    return Sweep(*advance(Motion(model, start, goal, fraction), checker(model, shapes), extra))


def sweep_along(model: ArmModel, along: Motion, goal: Sequence[float], fraction: float,
                body: Sequence[Capsule] | None = None, lo: float = 0.0, hi: float | None = None) -> Sweep:  # fmt: skip
    """The clearance of the motions to ``goal`` from every posture on ``along``: a command to an arm still moving.

    A command that arrives while the arm moves (``along``: toward the last command) starts wherever
    the arm is then. Two motions toward the same goal at the same joint speeds stay at most their
    starts' joint difference apart (each joint closes on the goal at its speed), so no point of the
    arm is further than REACH x the starts' summed joint difference from the other motion's. So the
    motion from the middle of a stretch of ``along`` is checked with the margin grown by REACH x half
    the stretch: clear, it covers the whole stretch (every motion from it keeps SWEEP_MARGIN, less
    :func:`sweep`'s STEP / 2, like every checked motion); else both halves are checked, down to
    stretches of ALONG_SPACING. A short way, or one far from the body, takes one check; one that
    needs more than ALONG_BUDGET postures checked is called not clear (the caller waits instead).

    Args:
        model: the arm.
        along: the motion the arm may be anywhere on (its ``fraction`` does not matter: only its path).
        goal: the new command.
        fraction: the new command's ``fractionMaxSpeed``.
        body: the shapes to keep clear of (default: the model's body).
        lo, hi: the stretch of ``along`` the arm may be on, by summed joint change (default: all of it).

    Returns:
        :class:`Sweep` of the worst start checked (``samples``: postures checked over all starts).
    """
    hi = along.length if hi is None else min(hi, along.length)
    stretches, samples, worst = [(min(lo, hi), hi)], 0, None
    while stretches:
        a, b = stretches.pop()
        half = (b - a) / 2
        got = sweep(model, along.at(a + half), goal, fraction, body, REACH * half)
        samples += got.samples
        if worst is None or got.distance < worst.distance:
            worst = got
        if got.clear:
            continue
        if half <= ALONG_SPACING / 2 or samples > ALONG_BUDGET:
            return Sweep(False, got.distance, got.part, samples)
        stretches += [(a + half, b), (a, a + half)]
    return Sweep(True, worst.distance, worst.part, samples)


def seconds(model: ArmModel, start: Sequence[float], goal: Sequence[float], fraction: float) -> float:
    """The time setAngles takes from ``start`` to ``goal``: the slowest joint's change over its speed."""
    return max(abs(g - s) / (j.max_velocity * fraction) for s, g, j in zip(start, goal, model.joints))


def plan(model: ArmModel, start: Sequence[float], goal: Sequence[float], fraction: float,
         body: Sequence[Capsule] | None = None) -> Plan:  # fmt: skip
    """The quickest safe sequence of commands from ``start`` to ``goal`` (see the module docstring).

    Args:
        model: the arm.
        start: the arm's posture now.
        goal: the answer to reach (clear of the body by MARGIN).
        fraction: the commands' ``fractionMaxSpeed``.
        body: the shapes to keep clear of (default: the model's body).

    Returns:
        :class:`Plan`.
    """
    start, goal = [float(x) for x in start], [float(x) for x in goal]
    direct = sweep(model, start, goal, fraction, body)
    if direct.clear:
        return Plan([goal], "", seconds(model, start, goal, fraction))
    best: Plan | None = None
    for route in _routes(model, start, goal):
        legs = list(zip([start] + route[:-1], route))
        if all(sweep(model, a, b, fraction, body).clear for a, b in legs):
            took = sum(seconds(model, a, b, fraction) for a, b in legs)
            if best is None or took < best.seconds:
                best = Plan(route, "", took)
    if best is not None:
        return best
    return Plan([], f"motion: the move crosses the {direct.part or 'body'} and no safe sequence was found", math.inf)


def _routes(model: ArmModel, start: list, goal: list) -> list:
    """Candidate sequences (each ends at ``goal``): via the start and/or the goal swung out sideways."""
    routes = []
    for roll in OUT_ROLLS:
        a, b = _out(model, start, roll), _out(model, goal, roll)
        routes += [[a, goal], [b, goal], [a, b, goal]]
    return routes


def _out(model: ArmModel, q: list, roll: float) -> list:
    """``q`` with the upper arm swung out to ``roll`` from the body (never in) and the elbow straightened."""
    s = -1.0 if model.is_right else 1.0
    out = list(q)
    out[1] = s * max(s * q[1], roll)
    straight = model.upper[3] if s > 0 else model.lower[3]  # ElbowRoll nearest 0: the arm straight
    out[3] = straight
    return list(model.clamp(out))


def pair_reason(left: ArmModel, q_left: Sequence[float], right: ArmModel, q_right: Sequence[float],
                left_start: Sequence[float], right_start: Sequence[float]) -> str:  # fmt: skip
    """Why two arms moved together would meet (``""`` when they would not): both arms at once.

    Each arm's final posture keeps MARGIN from the other's final posture (and the body: the models'
    ``body``, without the other arm); each arm's motion keeps SWEEP_MARGIN from the body and from the
    other arm where it starts and where it ends (the two motions run at the same time).

    Args:
        left, right: the arms' models (their ``body`` without the other arm).
        q_left, q_right: their answers.
        left_start, right_start: their postures now.

    Returns:
        ``""``, or ``"collision: <part>"`` / ``"motion: ..."`` naming the arm.
    """
    from .body import MARGIN, OTHER_ARM
    from .collision import arm_capsules

    arms = (
        (left, q_left, left_start, right, q_right, right_start),
        (right, q_right, right_start, left, q_left, left_start),
    )
    for model, q, start, other, q_other, other_start in arms:
        for posture in (q_other, other_start):
            shapes = tuple(model.body) + arm_capsules(other, posture)
            if posture is q_other:
                near = clearance(model, q, shapes)
                if near.distance < MARGIN - 1e-9:
                    return f"collision: {model.arm} {near.part}"
            move = sweep(model, start, q, 1.0, shapes)
            if not move.clear:
                part = move.part or "body"
                return f"motion: {model.arm} would cross the {part if part != OTHER_ARM else 'other arm'}"
    return ""
