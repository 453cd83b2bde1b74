"""The one argument decoder of the NaoArmIK qi methods: arguments as the caller sent them, checked by name.

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
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from .. import validate
from ..pose import check_axis_mask, check_position6d
from ..track import validate_points


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
    "setSpeed": Spec(("fraction",)),
    "stopPath": Spec(("arm",)),
    "reachToPose": Spec(("arm", "position6D", "axisMask", "method")),
    "reachToPoseWithSpeed": Spec(("arm", "position6D", "axisMask", "method", "fractionMaxSpeed")),
    "computePose": Spec(("arm", "position6D", "axisMask", "method")),
    "getPose": Spec(("arm",)),
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
    in_metres(out)
    return out


def in_metres(args: dict[str, Any]) -> None:
    """Refuse the FRAME_TORSO targets among decoded arguments that no arm reaches by over a metre
    (:func:`nao_ik.validate.metres`): millimetres sent for metres."""
    for name in ("target", "position6D", "left", "right", "points"):
        if name in args:
            validate.metres(args[name], name)
