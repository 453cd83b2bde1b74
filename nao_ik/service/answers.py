"""The service's answers: one function per kind, each built from the library's solution object and what the
engine sent (:class:`nao_ik.service.engine.Command`), so that every field of an answer is defined once.

The answers are qi maps (``{str: value}``) of plain Python values: floats, ints, bools, strings and lists of
them. docs/service.md describes their fields for the callers.

One contract for every answer: ``reached`` is true only where the answer's angles reach the target and their
motion started (a computation's: would start); ``moved``: a command was sent; ``reason`` is never ``""`` when
not reached (:func:`outcome`).
"""

from __future__ import annotations

import math
from typing import Any

from ..api.pose import off
from ..kinematics.frames import point_from_torso
from .motions import Command

#: Why an answer that reaches its target is not reached: no safe motion from the arm's posture, nothing (to be)
#: sent.
NO_MOTION = "motion: no safe motion from the arm's current posture"


def outcome(reached: bool, why: str, command: Command, stopped: str, position_error: float,
            rotation_error: float = 0.0) -> tuple[bool, str]:  # fmt: skip
    """An arm's (``reached``, ``reason``): reached only where the solver's answer reaches (``reached``) and its
    commands went (a computation: would go) without a stop on the way; else why, never "": where it stopped
    (``stopped``), the solver's reason (``why``), no safe motion (:data:`NO_MOTION`), or what is left of the
    target (:func:`nao_ik.api.pose.off`)."""
    if stopped:
        return False, stopped
    if not command.commands:
        return False, why or NO_MOTION
    if not reached:
        return False, why or off(position_error, rotation_error)
    return True, ""


def _motion(command: Command, moved: bool) -> dict:
    """The fields of an arm's motion: whether it moved, its largest joint change (rad), how long it takes,
    where the call's time went besides solving (waiting for an arm to stop, and the motion check), and what became
    of the arm's command before this one where no answer told it (met motors switched off, moved off its way by
    another program, stayed short: "" if nothing)."""
    return {"moved": bool(moved), "jointChange": float(command.change), "moveSeconds": float(command.seconds),
            "waitMs": float(command.wait * 1e3), "checkMs": float(command.check * 1e3),
            "previousCommand": command.news}  # fmt: skip


def reach(arm: str, method: str, target: tuple, names: list, sol: Any, solve_ms: float, command: Command,
          moved: bool, stopped: str = "", other: bool = False) -> dict:  # fmt: skip
    """A reach's (``reachTo`` ..., ``computeAngles``): ``sol`` a :class:`nao_ik.Solution`; ``stopped``: why the
    arm stopped on its way (:data:`~nao_ik.service.engine.ROBOT_PROTECTION`, or where it stays short), "" if
    it did not; ``other``: the command is another exact solution of the target than the method's; ``moved``: the
    command was sent."""
    reached, reason = outcome(sol.reached, str(sol.reason), command, stopped, float(sol.error))
    return {
        "arm": arm,
        "method": method,
        "target": list(target),
        "names": names,
        "angles": command.angles,
        "reached": reached,
        "error": float(sol.error),
        "iterations": int(sol.iterations),
        "solveTimeMs": float(solve_ms),
        "clamped": command.clamped,
        **_motion(command, moved),
        # How much farther than attainable the hand stays (0 when reached; -1 for the
        # papers' approximations, which keep their own answers), and whether the
        # method's own answer was replaced by the closest attainable pose.
        "shortfall": -1.0 if sol.shortfall is None else float(sol.shortfall),
        "refined": bool(sol.refined),
        # Why the target is not reached ("" when it is): the solver's ("out of reach", "joint limits",
        # "collision: <part>", "not converged"), what is left ("position: 2.13 mm off"), no safe motion
        # (NO_MOTION), or why the arm stopped on its way (:func:`outcome`): the legs sent are in "via".
        "reason": reason,
        # The commands of the move: 1 direct; 2 or 3 when the direct motion would cross the body and the arm
        # is first swung out (a reach: those sent, fewer where a later call took the arm on the way);
        # 0 (computeAngles only) when no safe motion from the current posture exists.
        "commands": len(command.commands),
        # The swung-out postures commanded before the answer (empty for a direct move).
        "via": _via(command),
        # True where the method's answer would have needed legs or a wait for the arm and another exact solution
        # (the same hand position, a different elbow: nearest first among sampled ones) goes direct: "angles"
        # and "error" are that one's.
        "otherSolution": bool(other),
    }


def _via(command: Command) -> list:
    """The swung-out postures of a move's commands: all but the answer."""
    commands = command.commands
    return [list(q) for q in (commands[:-1] if commands and commands[-1] == command.angles else commands)]


def pose(arm: str, position6d: Any, mask: int, names: list, sol: Any, solve_ms: float, command: Command,
         moved: bool, stopped: str = "") -> dict:  # fmt: skip
    """A pose reach's (``reachToPose`` ..., ``computePose``): ``sol`` a :class:`nao_ik.PoseSolution`; ``stopped``
    and ``moved`` as for :func:`reach`."""
    reached, reason = outcome(sol.reached, str(sol.reason), command, stopped, float(sol.position_error),
                              float(sol.rotation_error))  # fmt: skip
    return {
        "arm": arm,
        "method": sol.method,
        "position6D": list(position6d),
        "axisMask": mask,
        "names": names,
        "angles": command.angles,
        "reached": reached,
        "reason": reason,
        "error": float(sol.error),
        "positionError": float(sol.position_error),
        "orientationError": float(sol.rotation_error),
        "iterations": int(sol.iterations),
        "solveTimeMs": float(solve_ms),
        "clamped": command.clamped,
        **_motion(command, moved),
        "commands": len(command.commands),
        "via": _via(command),
    }


def in_frame(answer: dict, frame: int, name: str, value: Any) -> dict:
    """``answer`` (its target in FRAME_TORSO) with the caller's ``frame`` and, as ``name``, the target in it."""
    answer.update({"frame": frame, name: list(value)})
    return answer


def path(arm: str, method: str, names: list, angles: list, errors: list, stopped: str, seconds: float,
         completed: bool = False, via: list | None = None, plan: Any = None, slowed: list | None = None,
         slowed_via: list | None = None) -> dict:  # fmt: skip
    """``trackPath``'s answer for the ``angles`` sent, of a path with these per-point ``errors``; ``via``: the
    postures the arm was swung through on its way to the first point (sent before it); ``plan``: the
    :class:`nao_ik.recipes.path_plan.PathPlan` the angles came from (None: followed point by point);
    ``slowed``: the points of the jumps sent like a reach (``slowAtJumps``), ``slowed_via`` the swung-out legs
    sent before them (``{"point", "via"}`` maps)."""
    done = errors[: len(angles)] or errors[:1] or [0.0]
    return {
        "arm": arm,
        "method": method,
        "names": names,
        "angles": angles,
        "errors": errors[: len(angles)],
        "completed": bool(completed),
        "rmsError": float(math.sqrt(sum(e * e for e in done) / len(done))),
        "seconds": float(seconds),
        "sent": len(angles),
        "via": [] if via is None else via,
        "stopped": stopped,
        "planned": plan is not None,
        "planMs": 0.0 if plan is None else float(plan.seconds * 1e3),
        "jumps": [] if plan is None else [[int(j.index), float(j.radians)] for j in plan.jumps],
        "slowed": [] if slowed is None else slowed,
        "slowedVia": [] if slowed_via is None else slowed_via,
    }


def both(names: list, angles: list, pair: Any, commands: list, collision: str, moved: bool, sent: int,
         legs: list, stopped: str = "") -> dict:  # fmt: skip
    """``reachBoth``'s: ``pair`` a :class:`nao_ik.recipes.both_arms.BothArms`, ``commands`` each arm's
    :class:`~nao_ik.service.engine.Command`, ``collision`` why the pair may not move ("" it may), ``moved``
    whether a leg was sent, ``legs`` the ten-joint postures of the move (its last one the answer), ``sent`` how
    many of them were sent, ``stopped`` why the legs ended before the answer ("" if they did not)."""
    # Why the move did not go to its end ("" it did: moved, no leg stopped); reached needs that and both answers.
    short = stopped or collision
    went = bool(moved) and not short
    sides, missed = {}, []
    for side, ans, c in zip(("left", "right"), (pair.left, pair.right), commands):
        own = "" if ans.reached else ans.reason or off(ans.error, ans.orientation_error)
        if own:
            missed.append(f"{side}: {own}")
        sides[side] = {
            "reached": bool(ans.reached) and went,
            "reason": own or short,
            "error": float(ans.error),
            "orientationError": float(ans.orientation_error),
            "method": ans.method,
            "clamped": c.clamped,
        }
    return {
        "names": names,
        "angles": angles,
        **sides,
        "reached": went and not missed,
        # Why not both arms reached ("" when they did): the pair's collision (nothing sent), why the legs ended
        # on the way, or each arm's reason ("left: out of reach").
        "reason": short or "; ".join(missed),
        "collision": collision,
        # Why the legs ended before the answer, the arms stopped on their way ("" when they did not): the
        # commands sent are counted in "commands".
        "stopped": stopped,
        "moved": bool(moved),
        "jointChange": float(max(commands[0].change, commands[1].change)),
        "moveSeconds": float(max(commands[0].seconds, commands[1].seconds)),
        # The ten-joint commands sent (1 direct; more where the arms go in legs; 0 when nothing moved), and the
        # legs' ends before the answer (those sent).
        "commands": sent if moved else 0,
        "via": [lq + rq for lq, rq in legs[:-1]][:sent] if moved else [],
    }


def hand(arm: str, hand: str, opening: float, seconds: float) -> dict:
    """``openHand``'s, ``closeHand``'s, ``setHandWithSpeed``'s: the opening sent and how long it takes."""
    return {"arm": arm, "hand": hand, "opening": opening, "moved": True, "moveSeconds": seconds}


def grasp(arm: str, target: Any, approach: Any, failed: str, reason: str, shown: list, moved: bool) -> dict:
    """``grasp``'s: ``shown`` the steps the answer lists, each (:class:`nao_ik.recipes.grasp.GraspStep`, the
    :class:`Command` sent for it or None: a hand step, or a step planned but not sent), the steps the robot was
    sent (the last one maybe cut short on its way), else the plan; ``failed`` the step that could not be done
    ("" none); ``moved`` whether anything was sent."""
    return {
        "arm": arm,
        "target": list(target),
        "approach": list(approach),
        "completed": not failed,
        "failedStep": failed,
        "reason": reason,
        "moved": bool(moved),
        "steps": [
            {
                "step": s.name,
                "target": [] if s.target is None else list(s.target),
                # A step of the plan that was not sent (nothing moved) is not reached.
                "reached": bool(s.reached) and bool(moved),
                "error": float(s.error),
                "hand": -1.0 if s.hand is None else float(s.hand),
                # The arm's commands for the step: its posture ([] if not sent: a hand step, or planned only)
                # and the swung-out postures sent before it.
                "angles": list(c.angles) if c is not None and c.commands and c.commands[-1] == c.angles else [],
                "via": [] if c is None else _via(c),
            }
            for s, c in shown
        ],
    }


def point(arm: str, frame: int, target: Any, torso_target: Any, found: Any, names: list, command: Command,
          moved: bool) -> dict:  # fmt: skip
    """``pointAt``'s: ``found`` a :class:`nao_ik.recipes.pointing.Pointing`, ``torso_target`` the target in
    FRAME_TORSO."""
    return {
        "arm": arm,
        "frame": frame,
        "target": list(target),
        "targetTorso": list(torso_target),
        "pointed": bool(found.found),
        "miss": float(found.miss),
        "reason": found.reason,
        "names": names,
        "angles": command.angles,
        **_motion(command, moved),
        # The commands sent (swung out first where the direct motion would cross the body), the swung-out ones.
        "commands": len(command.commands) if moved else 0,
        "via": _via(command) if moved else [],
    }


def reachability(arm: str, frame: int, target: Any, torso_target: Any, found: Any, torso: Any,
                 names: list | None = None) -> dict:  # fmt: skip
    """``isReachable``'s; with ``names`` (the arm's joints), ``nearestReachable``'s: ``found`` a
    :class:`nao_ik.recipes.reachability.Reachability`, ``torso`` the torso's transform in ``frame``."""
    answer = {
        "arm": arm,
        "frame": frame,
        "target": list(target),
        "targetTorso": list(torso_target),
        "reachable": bool(found.reachable),
        "dexterity": float(found.dexterity),
        "intervals": [[b, lo, hi] for b, lo, hi in found.intervals],
    }
    if names is not None:
        answer.update(
            nearest=list(point_from_torso(found.nearest, torso)),
            distance=float(found.distance),
            names=names,
            angles=[float(q) for q in found.angles],
        )
    return answer


def solutions(arm: str, target: Any, names: list, found: Any) -> dict:
    """``computeAllSolutions``': ``found`` a :class:`nao_ik.api.all_solutions.AllSolutions`."""
    return {
        "arm": arm,
        "target": list(target),
        "reachable": found.reachable,
        "names": names,
        "intervals": [[b, lo, hi] for b, lo, hi in found.intervals],
        "solutions": [
            {"branch": s.branch, "swivel": s.swivel, "angles": list(s.angles), "error": s.error}
            for s in found.solutions
        ],
    }
