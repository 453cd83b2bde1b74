"""The one-arm calls' work: a reach to a point or a pose (in any frame), pointing, reachability, every solution
and the hand's pose.

Each function runs on a service thread with the call's decoded arguments ``a`` (:mod:`nao_ik.service.args`)
and its deadline ``end`` (monotonic s). The library computes (:mod:`nao_ik.api.position`, :mod:`nao_ik.api.pose`,
:mod:`nao_ik.recipes.pointing`, :mod:`nao_ik.recipes.reachability`, :mod:`nao_ik.api.all_solutions`); the engine reads
the robot and sends (:mod:`nao_ik.service.engine`); :mod:`nao_ik.service.answers` builds the answer. With a job the
arm is held and moved (an answer within the body's margin is answered, not sent: :func:`inside`); without one
(``computeAngles`` ...) nothing is held or sent.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from ..api.all_solutions import solve_all
from ..api.pose import POSE_METHODS, POSITION_MASK, check_pose_metres, forward_pose, solve_pose
from ..api.position import resolve_method, solve
from ..geometry.collision import clear_of_body, clearance
from ..geometry.sampled import clear_by_move
from ..kinematics.chain import forward
from ..kinematics.frames import FRAME_TORSO, check_transform, point_to_torso, pose_to_torso
from ..model import validate
from ..model.body import MARGIN
from ..recipes.pointing import point_at
from ..recipes.reachability import ClearCheck, is_reachable, nearest_reachable
from . import answers
from .engine import Engine
from .jobs import Job
from .link import about
from .motions import ROBOT_PROTECTION, RobotProtection, StoppedOnItsWay, left

DEFAULT_METHOD = "analytic"
#: The body's check of isReachable and nearestReachable: it keeps an arm's configuration outside the body (the
#: body at the robot's posture, the other arm included). None: the joint limits alone.
BODY_CLEAR: ClearCheck | None = clear_of_body


def position_method(method: str) -> str:
    """A position method's name: ``""`` is :data:`DEFAULT_METHOD`; an unknown name is refused."""
    return resolve_method(DEFAULT_METHOD if method == "" else method)


def reach(engine: Engine, arm: str, a: dict, job: Job | None, end: float) -> dict:
    """A reach; with a job, it takes the arm (stopping a path there) and sends the command."""
    name = position_method(a["method"])
    target = a["target"]
    with engine.holding(arm, job, end) as (model, start):
        names = list(model.names)
        t0 = time.perf_counter()
        sol = solve(target, model, name, initial=start)
        solve_ms = (time.perf_counter() - t0) * 1e3
        move = job is not None and not inside(model, sol)
        what = f"{name} for {target}"
        # A reached target's other exact solutions, nearest first: one of them goes where the answer's motion
        # would need legs or a wait (the same hand position, a different elbow).
        others = (lambda m, q: (x.tolist() for x in clear_by_move(m, target, q))) if sol.reached else None
        command, stopped = _command(engine, model, sol.angles, start, move, end, what, a.get("fractionMaxSpeed"), job,
                                    others)  # fmt: skip
    other = command.other
    if other:  # another exact solution was sent instead
        error = float(np.linalg.norm(forward(model, command.angles) - np.asarray(target, dtype=float)))
        sol = sol._replace(angles=tuple(command.angles), error=error)
    engine.log.info(
        f"{_verb(job, move)} {arm} {name} -> ({target[0]:.4f}, {target[1]:.4f}, {target[2]:.4f}) "
        f"reached={sol.reached} error={sol.error * 1e3:.3f}mm it={sol.iterations} {solve_ms:.2f}ms"
        f"{' (another solution, direct)' if other else ''}"
    )
    return answers.reach(arm, name, target, names, sol, solve_ms, command, move, stopped, other)


def reach_pose(engine: Engine, a: dict, job: Job | None, end: float) -> dict:
    """A pose reach; with a job, it takes the arm (stopping a path there) and sends the command."""
    arm, pose, mask = a["arm"], a["position6D"], a["axisMask"]
    method = DEFAULT_METHOD if a["method"] == "" else a["method"]
    if mask == POSITION_MASK:
        method = resolve_method(method)
    else:
        method = validate.choice(method, POSE_METHODS, "pose method (axisMask 7 takes any position method)")
    with engine.holding(arm, job, end) as (model, start):
        names = list(model.names)
        t0 = time.perf_counter()
        sol = solve_pose(pose, model, mask, initial=start, method=method)
        solve_ms = (time.perf_counter() - t0) * 1e3
        move = job is not None and not inside(model, sol)
        what = f"{method} for {list(pose)}"
        command, stopped = _command(engine, model, sol.angles, start, move, end, what, a.get("fractionMaxSpeed"), job)
    engine.log.info(
        f"{_verb(job, move)} pose {arm} {sol.method} mask={mask} reached={sol.reached} "
        f"position={sol.position_error * 1e3:.3f}mm orientation={math.degrees(sol.rotation_error):.3f}deg "
        f"{solve_ms:.2f}ms"
    )
    return answers.pose(arm, pose, mask, names, sol, solve_ms, command, move, stopped)


def _verb(job: Job | None, move: bool) -> str:
    """What the log calls a reach: sent, a computation, or a reach answered without a command."""
    return "compute" if job is None else "reach" if move else "reach (within the body: not sent)"


def inside(model: Any, sol: Any) -> bool:
    """Whether a solver's answer is within the body's margin (a pose's, or a paper's approximation's, whose only
    answers go through the body: not reached, ``reason`` ``"collision: <part>"``): it is answered, not sent, as
    from a computation (the engine would refuse it)."""
    return (not sol.reached and sol.reason.startswith("collision") and bool(model.body)
            and clearance(model, model.clamp(sol.angles), model.body).distance < MARGIN - 1e-6)  # fmt: skip


def _command(engine: Engine, model: Any, angles: Any, start: Any, move: bool, end: float, what: str,
             speed: float | None, job: Job | None, others: Any = None) -> tuple:  # fmt: skip
    """(:meth:`Engine.command`'s command, "") or, where the sequence ended after a command went (the arm stopped
    on its way, a later call took it, ALMotion failed), (what was sent, why: the answer's ``reason``)."""
    try:
        return engine.command(model, angles, start, move, end, what, speed, job, others=others), ""
    except StoppedOnItsWay as e:
        engine.log.warning(f"reach {model.arm} stopped on its way", about(what, e))
        return e.partial, ROBOT_PROTECTION if isinstance(e, RobotProtection) else str(e)


def torso(engine: Engine, frame: int, end: float) -> Any:
    """The torso's 4x4 transform in ``frame`` from ALMotion (identity for FRAME_TORSO)."""
    if frame == FRAME_TORSO:
        return np.eye(4)
    reply = engine.motion.call("getTransform", "Torso", frame, True, budget=left(end))
    try:
        return check_transform(reply, f"ALMotion.getTransform('Torso', {frame}, True)")
    except ValueError as e:  # the robot's fault, not the caller's
        raise RuntimeError(f"unusable torso transform: {e}") from None


def target_in_torso(engine: Engine, a: dict, end: float) -> tuple:
    """The call's ``target`` given in ``a["frame"]``, in FRAME_TORSO, refused if no arm reaches it by over a metre."""
    t = point_to_torso(a["target"], torso(engine, a["frame"], end))
    validate.metres(t, "target")
    return t


def reach_in_frame(engine: Engine, a: dict, job: Job | None, end: float) -> dict:
    """:func:`reach` to a target in ``a["frame"]``."""
    answer = reach(engine, a["arm"], dict(a, target=target_in_torso(engine, a, end)), job, end)
    return answers.in_frame(answer, a["frame"], "targetInFrame", a["target"])


def pose_in_frame(engine: Engine, a: dict, job: Job | None, end: float) -> dict:
    """:func:`reach_pose` to a position6D in ``a["frame"]``."""
    pose = pose_to_torso(a["position6D"], torso(engine, a["frame"], end))
    check_pose_metres(pose, a["axisMask"])
    answer = reach_pose(engine, dict(a, position6D=pose), job, end)
    return answers.in_frame(answer, a["frame"], "position6DInFrame", a["position6D"])


def reachability(engine: Engine, a: dict, with_nearest: bool, end: float) -> dict:
    """``isReachable``; ``with_nearest``: ``nearestReachable``. No motion."""
    transform = torso(engine, a["frame"], end)
    model, current = engine.arm_state(a["arm"], motors=False, end=end)
    t = point_to_torso(a["target"], transform)
    validate.metres(t, "target")
    if with_nearest:
        r = nearest_reachable(t, model, initial=current, clear=BODY_CLEAR)
    else:
        r = is_reachable(t, model, current[4], clear=BODY_CLEAR)
    names = list(model.names) if with_nearest else None
    return answers.reachability(a["arm"], a["frame"], a["target"], t, r, transform, names)


def point(engine: Engine, a: dict, job: Job, end: float) -> dict:
    """``pointAt``: the forearm's line through the target; nothing moves when no posture points there."""
    arm = a["arm"]
    t = point_to_torso(a["target"], torso(engine, a["frame"], end))
    with engine.holding(arm, job, end) as (model, start):
        p = point_at(t, model, start)
        if p.found and model.body:
            near = clearance(model, p.angles, model.body)
            if near.distance < MARGIN - 1e-9:  # pointing there takes the arm through the body
                p = p._replace(found=False, reason=f"collision: {near.part}")
        moved = p.found
        command, stopped = _command(engine, model, p.angles, start, moved, end, f"pointAt {list(t)}",
                                    a.get("fractionMaxSpeed"), job)  # fmt: skip
        if stopped:  # legs went, then the arm stopped on its way: not pointed, and why
            p = p._replace(found=False, reason=stopped)
    return answers.point(arm, a["frame"], a["target"], t, p, list(model.names), command, moved)


def all_solutions(engine: Engine, arm: str, target: tuple, end: float) -> dict:
    """``computeAllSolutions``: for the robot's limits and the arm's current WristYaw. No motion."""
    model, current = engine.arm_state(arm, motors=False, end=end)
    return answers.solutions(arm, target, list(model.names), solve_all(target, model, wrist=current[4]))


def hand_pose(engine: Engine, arm: str, end: float) -> list:
    """``getPose``: the hand's position6D from the angles read now."""
    model, current = engine.arm_state(arm, motors=False, end=end, fresh=True, settle=0.0)
    return [float(v) for v in forward_pose(current, model)]
