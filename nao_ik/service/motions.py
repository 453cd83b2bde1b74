"""What the engine's commands come to: a moving arm's way, what a command did, and how a motion stopped short.

The vocabulary the command engine (:mod:`nao_ik.service.engine`), its routes (:mod:`~nao_ik.service.routes`), its
watch of the arms (:mod:`~nao_ik.service.arm_watch`) and the calls' work share.
"""

from __future__ import annotations

import time
from typing import NamedTuple

#: The service's default fractionMaxSpeed (``setSpeed`` changes it; each ``...WithSpeed`` call has its own).
DEFAULT_SPEED = 0.2
#: The other arm of each arm.
OTHER_ARM = {"LArm": "RArm", "RArm": "LArm"}
#: Why a command waits (or is refused): the arm is still moving, and from where it is on the way the new one
#: would cross the body.
MOVING = (
    "motion: the arm is still moving toward its last command, and from where it may be on the way there "
    "the new one would cross the body"
)
#: The ``reason`` of an answer whose motion the robot's own collision protection stopped or bent.
ROBOT_PROTECTION = "robot collision protection"


class Way(NamedTuple):
    """A moving arm's way (:meth:`Engine.way`): from its reading toward its last command, at that command's
    fractionMaxSpeed, and toward the earlier commands its joints may still be braking toward ((aim, fraction)
    each). A command now starts anywhere on it (:func:`nao_ik.geometry.sweep.sweep_moving`)."""

    reading: list
    aim: list
    fraction: float
    earlier: tuple = ()


class Command(NamedTuple):
    """What :meth:`Engine.command` did (or would do) with an arm's answer."""

    angles: list  # the angles sent (finite, clamped into the robot's limits)
    clamped: list  # the names of the joints clamped
    change: float  # the largest joint change, rad
    seconds: float  # how long the move takes (setAngles moves each joint at fractionMaxSpeed of its maximum)
    # The postures of the move: those sent when moving (the last one is the answer unless a later call took the
    # arm on the way), else those it takes (none: no safe motion).
    commands: list
    # Seconds the call waited for an arm to stop (its earlier motion, where the new one is not certified from
    # everywhere on its way; the other arm; each swung-out posture on the way) and computed the motion check.
    wait: float = 0.0
    check: float = 0.0
    other: bool = False  # the angles are another posture for the task (``others``), not the answer's
    # What became of the arm's command before this one, where no answer told it (:meth:`Record.news`): "" if
    # nothing.
    news: str = ""


class StoppedOnItsWay(RuntimeError):
    """An arm stopped on its way through a sequence's postures; ``partial``: what was sent (:class:`Command`)."""

    partial: Command | tuple = ()


class NoAnswer(RuntimeError):
    """ALMotion did not answer a command in time: it may have gone out and may still run (the caller counts it
    as sent)."""


class RobotProtection(StoppedOnItsWay):
    """The robot's own collision protection stopped an arm on its way (ALMotion's ``isCollision``)."""


class StoppedShort(StoppedOnItsWay):
    """An arm stays short of a posture it was sent to, the robot's protection not holding it (:meth:`Engine.arrive`)."""


def left(end: float) -> float:
    """Seconds left until ``end`` (monotonic), at least 0."""
    return max(0.0, end - time.monotonic())
