"""The arguments of the frame, both-arm, hand, pointing and reachability qi methods.

The same decoder as :mod:`nao_ik.qi_args` (its kinds for ``arm``, ``x``,
``y``, ``z``, ``method``, ``position6D``, ``axisMask``), plus ``frame``
(0, 1, 2), ``approach`` (a direction) and ``left``/``right`` (a position or
a full pose each).
"""

from __future__ import annotations

from typing import Any, Callable

from .. import validate
from ..frames import FRAME_TORSO, check_frame
from ..grasp import approach_direction
from ..pose import check_position6d
from .args import KINDS, Spec, in_metres


def _arm_target(side: str) -> Callable[[Any], tuple]:
    def check(value: Any) -> tuple:
        if not isinstance(value, (list, tuple)) or len(value) not in (3, 6):
            raise ValueError(
                f"{side} must be a list [x, y, z] or a position6D [x, y, z, wx, wy, wz], got {validate.show(value)}"
            )
        if len(value) == 3:
            return validate.target(value)
        return check_position6d(value)

    return check


def _opening(value: Any) -> float:
    opening = validate.number(value, "opening")
    if not 0.0 <= opening <= 1.0:
        raise ValueError(f"opening must be in [0, 1] (0 closed, 1 open), got {opening!r}")
    return opening


#: How each argument name is decoded.
ARM_KINDS: dict[str, Callable[[Any], Any]] = {
    **KINDS,
    "frame": check_frame,
    "approach": approach_direction,
    "left": _arm_target("left"),
    "right": _arm_target("right"),
    "opening": _opening,
}

#: Those methods' arguments.
ARM_SPECS: dict[str, Spec] = {
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
}


def decode_arms(method: str, values: tuple) -> dict[str, Any]:
    """The arguments of one call to those methods, checked, by name (``x, y, z`` also as ``target``).

    Raises:
        ValueError: naming the argument and what was wrong with it.
    """
    spec = ARM_SPECS[method]
    out = {name: ARM_KINDS[name](value) for name, value in zip(spec.names, values)}
    if "x" in out:
        out["target"] = (out["x"], out["y"], out["z"])
    if out.get("frame", FRAME_TORSO) == FRAME_TORSO and not method.startswith("pointAt"):
        in_metres(out)  # other frames: once converted to FRAME_TORSO; a pointed-at target may be far away
    return out
