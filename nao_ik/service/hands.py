"""The hands' calls' work: open, close or set a hand, and a grasp (approach, open, close, lift).

A hand's command gets the arm's checks (motors on, finite, inside the limits the robot reports). A grasp is
planned whole (:func:`nao_ik.recipes.grasp.plan_grasp`) before anything moves; then each step is sent like a reach
(:meth:`Engine.command`) and waited for until the robot got there.
"""

from __future__ import annotations

import math

from ..model import validate
from ..motion.truth import check_motors
from ..recipes.grasp import plan_grasp
from . import answers
from .engine import Engine
from .jobs import Job
from .link import about, reply_limits
from .motions import StoppedOnItsWay, left
from .reach import DEFAULT_METHOD

#: A grasp's extra budget (five steps, each waiting until the robot got there), seconds.
GRASP_BUDGET = 30.0


def hand_command(engine: Engine, arm: str, opening: float, end: float, speed: float | None = None) -> tuple:
    """The hand's command, with the arm's checks: motor on, finite, inside the limits the robot reports.

    ``speed`` is its fractionMaxSpeed (default: the service's).

    Returns:
        (hand joint name, opening sent, seconds the move takes at the commanded speed).
    """
    hand = arm[0] + "Hand"
    limits = reply_limits(engine.motion.call("getLimits", [hand], budget=left(end)), [hand])[hand]
    try:
        lo, hi, velocity = (validate.number(v, hand) for v in limits[:3])
    except ValueError:
        lo, hi, velocity = math.nan, math.nan, math.nan
    if not (lo <= hi and velocity > 0):
        raise RuntimeError(f"ALMotion.getLimits returned unusable limits for {hand}: {limits}")
    check_motors(arm, [hand], engine.motion.numbers("getStiffnesses", [hand], count=1, budget=left(end)))
    value = min(max(float(opening), lo), hi)
    if not math.isfinite(value):
        raise RuntimeError(f"{hand}: non-finite opening; nothing sent")
    speed = engine.speed if speed is None else speed
    now = engine.motion.numbers("getAngles", [hand], True, count=1, budget=left(end))[0]
    engine.motion.call("setAngles", [hand], [value], speed, budget=left(end))
    return hand, value, abs(value - now) / velocity / speed


def set_hand(engine: Engine, arm: str, opening: float, end: float, speed: float | None = None) -> dict:
    """``openHand``, ``closeHand``, ``setHandWithSpeed``: the hand to ``opening`` (0 closed .. 1 open)."""
    return answers.hand(arm, *hand_command(engine, arm, opening, end, speed))


def grasp(engine: Engine, a: dict, job: Job, end: float) -> dict:
    """A grasp at ``a["target"]`` along ``a["approach"]``; the answer lists the steps done (or planned)."""
    arm = a["arm"]
    speed = a.get("fractionMaxSpeed", engine.speed)
    done: list = []  # (step, what was sent for it: a Command, None for the hand)
    moved = False  # whether anything was sent (a step may fail after its first command went)
    with engine.holding(arm, job, end) as (model, start):
        plan = plan_grasp(a["target"], a["approach"], model, start, DEFAULT_METHOD)
        failed, reason = plan.failed, plan.reason
        if not failed:  # the whole plan holds: now move, each step after the last arrived
            current = start
            for step in plan.steps:
                if job.stop.is_set():
                    failed, reason = step.name, f"{step.name}: {job.reason}"
                    break
                command = None
                try:
                    if step.angles is None:
                        hand, _, seconds = hand_command(engine, arm, step.hand, end, speed)
                        moved = True
                        engine.wait_arrival([hand], [step.hand], seconds, job, end)
                    else:
                        command = engine.command(model, step.angles, current, True, end, step.name, speed, job)
                        moved = moved or bool(command.commands)
                        engine.wait_arrival(list(model.names), command.angles, command.seconds, job, end, arm)
                        current = command.angles
                except StoppedOnItsWay as e:  # legs of the step went, then the arm stopped on its way
                    moved, failed, reason = True, step.name, about(step.name, e)
                    # What it was sent: the legs that went (the engine's partial), or the whole step's command
                    # where the robot stopped the arm on its way to it.
                    done.append((step._replace(reached=False), e.partial or command))
                    break
                except RuntimeError as e:
                    failed, reason = step.name, about(step.name, e)
                    if command is not None and command.commands:  # sent, then the wait for it failed
                        done.append((step._replace(reached=False), command))
                    break
                done.append((step, None if step.angles is None else command))
    engine.log.info(f"grasp {arm} at {list(a['target'])}: {'failed at ' + failed if failed else 'done'}")
    shown = done if done or not failed or moved else [(step, None) for step in plan.steps]
    return answers.grasp(arm, a["target"], a["approach"], failed, reason, shown, moved)
