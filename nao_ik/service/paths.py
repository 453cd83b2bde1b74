"""``trackPath``'s work: a Cartesian path computed and checked whole, then streamed one command per cycle.

With ``analytic`` the angles are planned for the whole path at once (:func:`nao_ik.plan_path`: no jump where a
continuous motion exists, a path that needs one refused unless the caller allows it); with the other methods
they follow Oyama & Tachi's tracking control (:mod:`nao_ik.recipes.track`) from the arm's posture. Every
point, and the motion to it from wherever the arm may be when it arrives, is checked against the body
before the first command; a first point more than a cycle away is reached first like a reach. The path is
a job on its arm: a stop request ends it before its next command.

Its budget (:func:`extra`): from its arrival, the call's budget plus :data:`PATH_COMPUTE_BUDGET` per point to
compute it (then it is abandoned, nothing sent); from its first command, the call's budget plus
:data:`PATH_POINT_BUDGET` per point to send it.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

from ..geometry.collision import clearance
from ..geometry.sweep import ARRIVED, stream_regions, sweep_region
from ..geometry.sweep import seconds as move_seconds
from ..model.arm import ArmModel, arm_model
from ..model.body import MARGIN, OTHER_ARM, Capsule, corners
from ..model.body_data import head_row
from ..recipes.path_plan import follow_or_refuse
from ..recipes.track import track_path
from . import answers
from .engine import CYCLE, MET, STREAMED, Engine, apart
from .jobs import Job, Stopped
from .link import first_line
from .motions import MOVING, NoAnswer, StoppedOnItsWay
from .reach import position_method

#: The methods whose paths are planned whole (:func:`nao_ik.plan_path`, from the exact solution set); the
#: others follow the path point by point (:func:`nao_ik.recipes.track.track_path`).
PLANNED = ("analytic",)
#: A path's extra budget per point to compute it (before the first command) ...
PATH_COMPUTE_BUDGET = 0.1
#: ... and, from its first command, the call's budget plus this per point: its 20 ms cycle and ALMotion's answer.
PATH_POINT_BUDGET = CYCLE + 0.02
#: A path checked again at most this many times where the other arm was sent something while it was checked.
PROMISES = 3
#: Metres a part of the head or hips may move unchecked (its sensed angles' noise; every margin is larger).
BODY_MOVED = 0.001


def sending(a: dict, budget: float) -> float:
    """A path's budget from its first command: a call's ``budget`` and each point's cycle."""
    return budget + len(a["points"]) * PATH_POINT_BUDGET


def extra(a: dict, budget: float, compute: float) -> float:
    """A path's budget beyond the call's: ``compute`` s per point to compute it, then :func:`sending`."""
    return len(a["points"]) * compute + sending(a, budget)


def track(engine: Engine, arm: str, a: dict, job: Job, end: float, compute: float) -> dict:
    """The path ``a["points"]`` on ``arm``; ``compute``: its budget per point to compute it (:func:`extra`)."""
    name = position_method(a["method"])
    speed = a.get("fractionMaxSpeed", engine.speed)
    first = end - sending(a, engine.budget)  # the first command's deadline

    def check(k: int) -> None:
        """While the path is computed: its stop request and its budget end the computation."""
        if job.stop.is_set():
            raise Stopped(job.reason)
        if time.monotonic() > first:
            raise RuntimeError(
                f"trackPath {name}: computing the path took longer than its budget ({engine.budget:g} s + "
                f"{compute:g} s per point; at point {k} of {len(a['points'])}); nothing sent"
            )

    try:
        with engine.held((arm,), job, end, take_by=first):
            return _held(engine, arm, a, job, end, name, speed, check)
    except Stopped:  # while it waited for the arm or was computed: nothing sent
        return answers.path(arm, name, list(arm_model(arm).names), [], [], job.reason, 0.0)


def _held(engine: Engine, arm: str, a: dict, job: Job, end: float, name: str, speed: float,
          check: Callable[[int], None]) -> dict:  # fmt: skip
    """A path on an arm its job holds: computed and checked (``check`` before each point), then sent."""
    model, start = engine.arm_state(arm, motors=True, end=end)
    for attempt in range(2):
        plan, errors, completed = None, [], False
        if name in PLANNED:
            check(0)
            plan, why = follow_or_refuse(a["points"], model, start, speed, a.get("allowJumps", False))
            check(len(a["points"]))
            if why:
                raise RuntimeError(f"trackPath {name}: {why}; nothing sent")
            angles, errors, completed = plan.angles, plan.errors.tolist(), bool(plan.reached.all())
        else:
            tracked = track_path(a["points"], model, name, initial=start, check=check)
            angles, errors, completed = tracked.angles, tracked.errors.tolist(), bool(tracked.completed)
        safe = [list(model.clamp(q)) for q in angles.tolist()]
        if not all(math.isfinite(q) for qs in safe for q in qs):
            raise RuntimeError(f"{name} produced a non-finite angle on the path; nothing sent")
        lead, blocked = _checked(engine, model, start, safe, speed, check, end)
        if attempt or blocked is None or not blocked[1].startswith(MOVING):
            break
        # From where the arm may be on its way to its last command the path's first motion would cross
        # the body: wait until it stops, then compute the path from there.
        model, start = engine.wait_still(model, job, end, f"trackPath {name}")
    check(len(safe))
    for _ in range(PROMISES):
        # The points to send, told to the other arm's checks (its body holds this arm anywhere on them) under one
        # lock with the check that no command went since this path's body was read; else checked again from now.
        if engine.promise(arm, safe[: _sendable(safe, blocked)], speed, lead):
            break
        model, start = engine.arm_state(arm, motors=True, end=end, fresh=True)
        lead, blocked = _checked(engine, model, start, safe, speed, check, end)
    else:
        raise RuntimeError(f"trackPath {name}: {MET} (the other arm was sent again each time this path was checked); "
                           "nothing sent")  # fmt: skip
    try:
        return _send(engine, arm, a, job, end, name, speed, model, start, safe, errors, completed, plan, lead,
                     blocked)  # fmt: skip
    finally:
        engine.release(arm)


def _send(engine: Engine, arm: str, a: dict, job: Job, end: float, name: str, speed: float, model: ArmModel,
          start: Any, safe: list, errors: list, completed: bool, plan: Any, lead: bool, blocked: tuple | None
          ) -> dict:  # fmt: skip
    """A path checked and promised (:meth:`Engine.promise`): its lead, then its points one per cycle."""
    names = list(model.names)
    t0 = time.monotonic()
    sent, done, vias = 0, t0 - CYCLE, []
    if lead and _sendable(safe, blocked) > 0:
        try:
            lead_commands = engine.command(model, safe[0], start, True, end, f"trackPath {name}: its first point",
                                           speed, job).commands  # fmt: skip
            vias, sent = [list(q) for q in lead_commands[:-1]], 1
        except StoppedOnItsWay as e:  # legs toward the first point went, then it stopped: the answer names them
            vias, blocked = [list(q) for q in e.partial.commands], (0, str(e))
        # The rest of the path streams once the arm is there (nothing to wait for after a single point).
        if sent and _sendable(safe, blocked) > 1:
            way, stuck = _arrived(engine, model, safe[0], job, end, speed)
            if way is None:
                blocked = (1, stuck or job.reason)
            elif apart(way.reading, safe[0]) > ARRIVED:
                # Stopped short of the first point (a sagging joint): the stream is checked from there against the
                # body now (the point went: no compute deadline now), and promised from there.
                model = engine.arm_state(arm, motors=True, end=end, fresh=True)[0]
                again = _blocked(engine, model, way.reading, safe, speed, False, lambda k: None)
                if again is not None and again[0] < _sendable(safe, blocked):
                    blocked = (max(1, again[0]), again[1])
                if not engine.promise(arm, safe[1 : _sendable(safe, blocked)], speed, False):
                    blocked = (1, f"trackPath {name}: {MET}")
        done = time.monotonic()
    # With slowAtJumps, a planned jump is not streamed: the arm is waited for at the point before it, the jump
    # sent like a reach (its own route and check from where the arm is) and waited for, then the stream goes on.
    slow = {j.index for j in plan.jumps} if plan is not None and a.get("slowAtJumps") else set()
    slowed, jump_vias, failed = [], [], ""
    blocked_at = _sendable(safe, blocked)
    for k in range(sent, blocked_at):
        if k >= blocked_at:  # the body moved since the path was checked (below): the rest is not sent
            break
        q = safe[k]
        if k in slow and k > 0:
            way, failed = _arrived(engine, model, safe[k - 1], job, end, speed)
            if way is None:
                break
            try:
                legs = engine.command(model, q, way.reading, True, end, f"trackPath {name}: the jump to point {k}",
                                      speed, job).commands[:-1]  # fmt: skip
            except StoppedOnItsWay as e:  # legs of the jump went, then it stopped: the answer names them
                jump_vias.append({"point": k, "via": [list(v) for v in e.partial.commands]})
                failed = first_line(e)
                break
            except RuntimeError as e:
                failed = first_line(e)
                break
            if legs:
                jump_vias.append({"point": k, "via": [list(v) for v in legs]})
            sent += 1
            slowed.append(k)
            way, failed = _arrived(engine, model, q, job, end, speed)
            if way is None:
                break
            done = time.monotonic()
            continue
        if model.body:  # the head and hips read at every point (below)
            model, moved = _body_now(engine, arm, model, safe, k, speed, end)
            if moved is not None:
                blocked, blocked_at = moved, moved[0]
                if k >= blocked_at:
                    break
        # One command per ALMotion cycle: the next one a cycle (20 ms) after ALMotion took the
        # last one, so a late command is never followed by one within the same cycle. A stop
        # request ends the wait at once.
        if job.stop.wait(max(0.0, done + CYCLE - time.monotonic())):
            break
        try:
            engine.call_aimed([(arm, q)], names, q, speed, end, ahead=safe[k + 1 : blocked_at])
        except NoAnswer as e:  # it may run: counted as sent, the answer says why nothing followed
            sent += 1
            failed = first_line(e)
            break
        except RuntimeError as e:
            if not sent and not vias:
                raise  # nothing went: the call's error
            failed = first_line(e)  # points went: the answer says how many, and why the rest did not
            break
        done = time.monotonic()
        sent += 1
    stopped = failed or ((blocked[1] if blocked is not None and sent == blocked[0] else job.reason)
                         if sent < len(safe) else "")  # fmt: skip
    return answers.path(arm, name, names, safe[:sent], [float(e) for e in errors], stopped, time.monotonic() - t0,
                        completed and sent == len(safe), vias, plan, slowed, jump_vias)  # fmt: skip


def _body_now(engine: Engine, arm: str, model: ArmModel, path: list, k: int, speed: float, end: float) -> tuple:
    """(the model the rest of the path is checked against, None or (index of the first point not to send, why)):
    the head and the hips read now, before every point a path streams (another client may move them: a head
    moving at full speed crosses a hand's margin in a few cycles); where the body they give
    is more than BODY_MOVED away from ``model``'s, the path from point ``k`` checked again against it, from the
    arm's reading through the STREAMED points sent last."""
    now, start = engine.arm_state(arm, motors=False, end=end, settle=0.0)
    anywhere = Capsule(*head_row(None))
    head_known = anywhere not in model.body
    if not _moved(_fixed(now.body, head_known), _fixed(model.body, head_known)):
        return model, None
    # Moved: another client moves it, on to where it is not known yet: the head anywhere it may be from now on.
    now = now._replace(body=tuple(anywhere if c.part == "head" else c for c in now.body))
    back = max(0, k - STREAMED)
    again = _blocked(engine, now, start, path[back:], speed, False, lambda j: None)
    if again is None:
        return now, None
    at = max(k, back + again[0])
    return now, (at, f"collision: the head or the hips moved while the path streamed; from there the motion to "
                     f"point {back + again[0]} may meet the body")  # fmt: skip


def _fixed(body: tuple, head: bool = True) -> tuple:
    """The body's parts other than the other arm (its head, where ``head``, and hips as read)."""
    return tuple(c for c in body if c.part != OTHER_ARM and (head or c.part != "head"))


def _moved(now: tuple, then: tuple) -> bool:
    """Whether a shape of ``now`` is more than BODY_MOVED from its place in ``then`` (the same parts)."""
    if len(now) != len(then):
        return True
    return any(type(a) is not type(b) or any(math.dist(p, q) > BODY_MOVED for p, q in zip(corners(a), corners(b)))
               for a, b in zip(now, then))  # fmt: skip


def _arrived(engine: Engine, model: ArmModel, q: list, job: Any, end: float, speed: float) -> tuple:
    """(:meth:`Engine.arrive` at ``q``, ""), or (None, why) where the arm stops on its way (stays short of it, the
    robot's protection holds it, the call's budget ends, no reading) (None, "": the job was stopped)."""
    try:
        return engine.arrive(model, q, job, end, speed), ""
    except RuntimeError as e:  # stays short, the robot's protection, the budget, a reading: commands went before
        return None, first_line(e)


def _sendable(path: list, blocked: tuple | None) -> int:
    """How many of the path's points go: up to the first :func:`_blocked` names, else all."""
    return len(path) if blocked is None else blocked[0]


def _checked(engine: Engine, model: ArmModel, start: Any, path: list, speed: float,
             check: Callable[[int], None], end: float) -> tuple:  # fmt: skip
    """(whether the path leads to its first point (:func:`_leads`), :func:`_blocked`) from the arm at ``start``
    (``end``: the call's deadline)."""
    lead = _leads(engine, model, start, path[0], speed)
    return lead, _blocked(engine, model, start, path, speed, lead, check, end)


def _leads(engine: Engine, model: ArmModel, start: Any, first: list, speed: float) -> bool:
    """Whether a path's first point is reached first, like a reach (swung out around the body where needed), and
    waited for, before the stream: where it is more than a cycle away (a stream of commands starting far from
    the arm would leave it behind, heading straight for later points), or where the arm may still be moving
    toward an earlier command (the stream's boxes, and the other arm's body while it streams, hold a joint's
    overshoot at the path's speed only, not at that command's)."""
    return move_seconds(model, start, first, speed) > CYCLE or engine.way(model, start) is not None


def _blocked(engine: Engine, model: ArmModel, start: Any, path: list, speed: float, lead: bool,
             check: Callable[[int], None], end: float = 0.0) -> tuple | None:  # fmt: skip
    """(index of the first point not to send, why) where a point or the motion to it meets the body; None.

    With ``lead``, the first point is reached like a reach (:meth:`Engine.command`: a plan from the arm's
    posture, swung out where needed; from ``start`` alone where the arm rests there short of its last command:
    :meth:`Engine.rested_route`, proved by ``end``, the call's deadline) and waited for; else (:func:`_leads`: the
    arm at rest within a cycle of it) its motion is checked from the reading.
    Every later command is checked from wherever the arm may be when it arrives, at any profile: among
    the points commanded since the last one it has surely reached (:func:`nao_ik.geometry.sweep.stream_regions`),
    each joint going on past them by its overshoot (and within ARRIVED of the first point after a lead).
    ``check`` is called before each point's checks. A path that comes back to its places repeats its points and
    its boxes (an alternation between two places: two of each): each distinct one is checked once.
    """
    if not model.body:
        return None
    near_of: dict = {}
    for k, q in enumerate(path):
        check(k)
        if tuple(q) not in near_of:
            near_of[tuple(q)] = clearance(model, q, model.body)
        near = near_of[tuple(q)]
        if near.distance < MARGIN - 1e-6:
            return k, f"collision: {near.part} at point {k}"
    if lead:
        route, _ = engine.rested_route(model, start, path[0], speed, bool(end), end)
        if not route.commands:
            return 0, f"{route.reason} (the path's first point)"
    base = path[0] if lead else start
    move_of: dict = {}
    for k, (region, grow) in enumerate(stream_regions(model, base, path, speed, CYCLE, ARRIVED if lead else 0.0)):
        if lead and k == 0:
            continue
        check(k)
        key = (*(tuple(q) for q in region), tuple(grow))
        if key not in move_of:
            move_of[key] = sweep_region(model, region, grow)
        move = move_of[key]
        if not move.clear:
            return k, f"collision: the motion to point {k} may cross the {move.part or 'body'}"
    return None
