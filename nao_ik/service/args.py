"""The argument decoder of the NaoArmIK qi methods: arguments as the caller sent them, checked by name.

Every qi method declares its arguments ``qi.Dynamic``, so libqi hands over
what the caller sent: with ``qi.Double`` it would turn ``True`` into ``1.0``
before the method runs (measured with libqi 3.1.5), and a boolean would move
the arm. :func:`decode` checks each argument against the method's
specification in :data:`SPECS`; declared maximum sizes (path length) are
checked before any element is looked at.

What libqi lets through and what not (libqi 3.1.5, measured): a Python
``set`` arrives as a tuple (in whatever order the caller's set had), so
path points must be lists (a tuple is refused as "a tuple or a set");
``bytes`` arrives as a string, and ``complex`` cannot be sent at all (the caller's libqi
refuses it). The whole argument is converted to Python objects before the
method runs (``qi.Dynamic`` and ``qi.AnyArguments`` alike), so the size of a
message is bounded below libqi, by its maximum payload (see
:mod:`nao_ik.service.serve`).

Targets in FRAME_TORSO that no arm reaches by over a metre are refused
(millimetres sent for metres); a target in another frame is checked once
converted to FRAME_TORSO, and a point to point at may be far away.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from ..api.pose import check_axis_mask, check_pose_metres, check_position6d
from ..kinematics.frames import FRAME_TORSO, check_frame
from ..model import validate
from ..recipes.grasp import approach_direction
from ..recipes.track import validate_points


class Spec(NamedTuple):
    """One qi method's arguments: their names, in order."""

    names: tuple[str, ...]


def _method(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"unknown method {validate.show(value)}: expected a method name (getMethods())")
    return value  # resolved (and refused if unknown) by api.resolve_method


def _points(value: Any) -> np.ndarray:
    if not isinstance(value, list):
        raise ValueError(f"points must be a list of [x, y, z] targets, got {_kind(value)}{validate.show(value)}")
    path = validate_points(value)  # its size first (at most MAX_POINTS), then each point
    for i, p in enumerate(value):  # the points are lists: a set would arrive as a tuple, in its own order
        if not isinstance(p, list):
            raise ValueError(f"points[{i}] must be a list [x, y, z], got {_kind(p)}{validate.show(p)}")
    return path


def _kind(value: Any) -> str:
    """libqi delivers a Python set (and a tuple) as a tuple: say so."""
    return "a tuple or a set (send a list) " if isinstance(value, tuple) else ""


def _coordinate(label: str) -> Callable[[Any], float]:
    return lambda value: validate.target_coordinate(value, label)


def _arm_target(side: str) -> Callable[[Any], tuple]:
    def check(value: Any) -> tuple:
        if not isinstance(value, (list, tuple)) or len(value) not in (3, 6):
            raise ValueError(
                f"{side} must be a list [x, y, z] or a position6D [x, y, z, wx, wy, wz], got {validate.show(value)}"
            )
        try:
            return validate.target(value) if len(value) == 3 else check_position6d(value)
        except ValueError as e:
            raise ValueError(f"{side}: {e}") from None

    return check


def _opening(value: Any) -> float:
    opening = validate.number(value, "opening")
    if not 0.0 <= opening <= 1.0:
        raise ValueError(f"opening must be in [0, 1] (0 closed, 1 open), got {opening!r}")
    return opening


#: The options ``trackPathWithOptions`` takes, and how each is decoded.
PATH_OPTIONS: dict[str, Callable[[Any], Any]] = {
    "method": _method,
    "fractionMaxSpeed": validate.speed,
    "allowJumps": lambda value: validate.flag(value, "allowJumps"),
    "slowAtJumps": lambda value: validate.flag(value, "slowAtJumps"),
}


def _path_options(value: Any) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"options must be a map of {', '.join(PATH_OPTIONS)}, got {validate.show(value)}")
    out = {}
    for key, item in value.items():
        if key not in PATH_OPTIONS:
            raise ValueError(f"unknown path option {validate.show(key)}: one of {', '.join(PATH_OPTIONS)}")
        out[key] = PATH_OPTIONS[key](item)
    return out


#: How each argument name is decoded.
KINDS: dict[str, Callable[[Any], Any]] = {
    "arm": validate.arm,
    "x": _coordinate("target x"),
    "y": _coordinate("target y"),
    "z": _coordinate("target z"),
    "method": _method,
    "points": _points,
    "fraction": validate.speed,
    "fractionMaxSpeed": validate.speed,
    "position6D": check_position6d,
    "axisMask": check_axis_mask,
    "frame": check_frame,
    "approach": approach_direction,
    "left": _arm_target("left"),
    "right": _arm_target("right"),
    "opening": _opening,
    "options": _path_options,
    "seconds": lambda value: validate.positive(value, "seconds"),
}

#: Every NaoArmIK qi method that takes arguments.
SPECS: dict[str, Spec] = {
    "reachTo": Spec(("x", "y", "z", "method")),
    "reachToWithArm": Spec(("arm", "x", "y", "z", "method")),
    "reachToWithSpeed": Spec(("arm", "x", "y", "z", "method", "fractionMaxSpeed")),
    "computeAngles": Spec(("arm", "x", "y", "z", "method")),
    "computeAllSolutions": Spec(("arm", "x", "y", "z")),
    "trackPath": Spec(("arm", "points", "method")),
    "trackPathWithSpeed": Spec(("arm", "points", "method", "fractionMaxSpeed")),
    "trackPathWithOptions": Spec(("arm", "points", "options")),
    "setSpeed": Spec(("fraction",)),
    "stopPath": Spec(("arm",)),
    "reachToPose": Spec(("arm", "position6D", "axisMask", "method")),
    "reachToPoseWithSpeed": Spec(("arm", "position6D", "axisMask", "method", "fractionMaxSpeed")),
    "computePose": Spec(("arm", "position6D", "axisMask", "method")),
    "getPose": Spec(("arm",)),
    "getArmState": Spec(("arm",)),
    "reachToInFrame": Spec(("arm", "x", "y", "z", "frame", "method")),
    "reachToInFrameWithSpeed": Spec(("arm", "x", "y", "z", "frame", "method", "fractionMaxSpeed")),
    "computeAnglesInFrame": Spec(("arm", "x", "y", "z", "frame", "method")),
    "reachToPoseInFrame": Spec(("arm", "position6D", "frame", "axisMask", "method")),
    "computePoseInFrame": Spec(("arm", "position6D", "frame", "axisMask", "method")),
    "isReachable": Spec(("arm", "x", "y", "z", "frame")),
    "nearestReachable": Spec(("arm", "x", "y", "z", "frame")),
    "pointAt": Spec(("arm", "x", "y", "z", "frame")),
    "pointAtWithSpeed": Spec(("arm", "x", "y", "z", "frame", "fractionMaxSpeed")),
    "reachBoth": Spec(("left", "right", "method")),
    "reachBothWithSpeed": Spec(("left", "right", "method", "fractionMaxSpeed")),
    "openHand": Spec(("arm",)),
    "closeHand": Spec(("arm",)),
    "setHandWithSpeed": Spec(("arm", "opening", "fractionMaxSpeed")),
    "grasp": Spec(("arm", "x", "y", "z", "approach")),
    "graspWithSpeed": Spec(("arm", "x", "y", "z", "approach", "fractionMaxSpeed")),
    "followTarget": Spec(("arm", "x", "y", "z", "frame")),
    "followTargetWithSpeed": Spec(("arm", "x", "y", "z", "frame", "fractionMaxSpeed")),
    "stopFollowing": Spec(("arm",)),
    "setFollowTimeout": Spec(("seconds",)),
}


def decode(method: str, values: tuple) -> dict[str, Any]:
    """The arguments of one call, checked, by name (``x, y, z`` also as ``target``).

    Raises:
        ValueError: naming the argument and what was wrong with it.
    """
    spec = SPECS[method]
    out = {name: KINDS[name](value) for name, value in zip(spec.names, values)}
    if "x" in out:
        out["target"] = (out["x"], out["y"], out["z"])
    if out.get("frame", FRAME_TORSO) == FRAME_TORSO and not method.startswith("pointAt"):
        in_metres(out)  # other frames: once converted to FRAME_TORSO; a pointed-at target may be far away
    return out


def in_metres(args: dict[str, Any]) -> None:
    """Refuse the FRAME_TORSO targets among decoded arguments that no arm reaches by over a metre
    (:func:`nao_ik.model.validate.metres`; a pose's position where its axisMask counts it): millimetres sent
    for metres."""
    for name in ("target", "left", "right", "points"):
        if name in args:
            validate.metres(args[name], name)
    if "position6D" in args:
        check_pose_metres(args["position6D"], args["axisMask"])
