"""``reachBoth``'s work: both arms solved as a pair (:mod:`nao_ik.recipes.both_arms`) and moved by ten-joint commands.

Each arm's answer goes through the same checks as every command (:meth:`Engine.command`: finite, clamped
into the robot's limits); the pair is checked against the body and each arm against the other where it
starts and where it ends, still and moving. That check holds each arm where it starts: where an arm may still be
on its way to an earlier command (or braking toward one), both are judged from where they stop, once at rest
(:meth:`Engine.at_rest`). Where the direct motions may meet at some timing, the arms go in legs along their
straight lines, each leg sent once both arrived.
"""

from __future__ import annotations

import time

from ..api.pose import POSE_METHODS
from ..geometry.sweep import ARRIVED, pair_legs, pair_reason
from ..model import validate
from ..model.arm import ARMS
from ..model.body import OTHER_ARM as OTHER_PART
from ..recipes.both_arms import PairCheck, solve_both
from . import answers
from .engine import Engine, apart
from .jobs import Job
from .link import first_line
from .motions import MOVING, NoAnswer, left
from .reach import DEFAULT_METHOD, position_method

#: The pair's check: the body, and each arm against the other's final and starting postures, still and moving.
#: None: the joint limits alone.
PAIR_CHECK: PairCheck | None = pair_reason


def target_method(method: str, size: int) -> str:
    """A position method for a 3-value target, a pose method for a 6-value one."""
    if size == 3:
        return position_method(method)
    name = DEFAULT_METHOD if method == "" else method
    return validate.choice(name, POSE_METHODS, "pose method (for a position6D target)")


def reach_both(engine: Engine, a: dict, job: Job, end: float) -> dict:
    """Both arms to ``a["left"]`` and ``a["right"]`` (each a point or a position6D), held together."""
    targets = (a["left"], a["right"])
    speed = a.get("fractionMaxSpeed", engine.speed)
    methods = tuple(target_method(a["method"], len(t)) for t in targets)
    with engine.held(ARMS, job, end):
        states = [engine.arm_state(arm, motors=True, end=end) for arm in ARMS]
        still = all(engine.way(m, start) is None for m, start in states)
        if not still:
            # The pair's check holds each arm where it starts: an arm that may still be on its way to an earlier
            # command (or braking toward one) is judged from where it stops, read now, once at rest there.
            while True:
                for m, _ in states:
                    engine.wait_still(m, job, end, f"reachBoth: {m.arm}", state=False)
                states = [engine.arm_state(arm, motors=True, end=end, fresh=True) for arm in ARMS]
                moving = [m.arm for m, start in states if engine.way(m, start) and not engine.at_rest(m, start, end)]
                if not moving:
                    break
                lost = [arm for arm in moving if engine.lost(arm)]
                if lost:  # it may set off any time: never at rest
                    raise RuntimeError(f"reachBoth: {' and '.join(lost)}: a command ALMotion did not answer may still "
                                       "run; nothing sent")  # fmt: skip
                if time.monotonic() > end:
                    raise RuntimeError(f"reachBoth: {' and '.join(moving)}: {MOVING}, past the call's budget; "
                                       "nothing sent")  # fmt: skip
            states = [engine.arm_state(arm, motors=True, end=end, fresh=True) for arm in ARMS]
        # Each arm's body without the other arm where it is now: the pair's check (PAIR_CHECK) has the other arm
        # where it starts and where it ends, since both move at once.
        models = tuple(m._replace(body=tuple(c for c in m.body if c.part != OTHER_PART)) for m, _ in states)
        pair = solve_both(*targets, models, methods, (states[0][1], states[1][1]), check=PAIR_CHECK)
        # Each arm through the same checks as every command (finite, clamped into the robot's limits), then one
        # setAngles of the ten joints.
        checked = [
            engine.command(m, ans.angles, start, False, end, f"reachBoth {arm} {list(t)}", speed, still=not still)
            for m, (_, start), ans, arm, t in zip(models, states, (pair.left, pair.right), ARMS, targets)
        ]
        names = list(models[0].names) + list(models[1].names)
        angles = checked[0].angles + checked[1].angles
        legs = [(checked[0].angles, checked[1].angles)]
        collision = pair.collision
        if collision.startswith("motion:"):
            # The direct motions may meet (each other or the body) at some timing: both arms in legs along
            # their straight lines, each leg sent once both arrived.
            cut = pair_legs(models[0], checked[0].angles, models[1], checked[1].angles, states[0][1], states[1][1])
            legs, collision = (cut, "") if cut else (legs, collision)
        unsafe = [f"motion: {arm} has no safe motion to its answer" for arm, c in zip(ARMS, checked) if not c.commands]
        collision = collision or (unsafe[0] if unsafe and len(legs) == 1 else "")
        move = not collision
        sent, stopped = 0, ""
        if move:
            for k, (lq, rq) in enumerate(legs):
                if time.monotonic() > end:
                    if k == 0:
                        raise RuntimeError(f"reachBoth took longer than its {engine.budget:g} s budget; nothing sent")
                    stopped = f"reachBoth took longer than its {engine.budget:g} s budget"
                    break
                # Once legs went the robot has moved: where the sequence ends, the answer says so (``stopped``)
                # with the legs sent (``commands``).
                try:
                    if k:
                        ways = [engine.arrive(m, q, job, end, speed) for m, q in zip(models, legs[k - 1])]
                        if None in ways:  # a later call took an arm
                            stopped = job.reason
                            break
                        if any(apart(w.reading, q) > ARRIVED for w, q in zip(ways, legs[k - 1])):
                            # An arm stopped short of the leg (a sagging joint): the next leg from where they are.
                            why = pair_reason(models[0], lq, models[1], rq, ways[0].reading, ways[1].reading)
                            if why:
                                stopped = f"reachBoth: {why} (from where the arms stopped on the way)"
                                break
                    engine.call_aimed([("LArm", lq), ("RArm", rq)], names, lq + rq, speed, end)
                except NoAnswer as e:  # the leg may run: counted as sent, the answer says why nothing followed
                    sent += 1
                    stopped = first_line(e)
                    break
                except RuntimeError as e:  # stopped on its way, the robot's protection, ALMotion
                    if not sent:
                        raise
                    stopped = first_line(e)
                    break
                engine.sensed.follow(left(end))
                sent += 1
    return answers.both(names, angles, pair, checked, collision, move, sent, legs, stopped)
