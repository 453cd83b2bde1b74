# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP031  (the common subset of Python 2.7 and 3: no f-strings)
"""Argument checks of the robot runtime: every value a caller sends, refused with a message naming it.

The same rules and limits as the computer-side service (:mod:`nao_ik.model.validate`): finite real
numbers (no booleans, no strings), coordinates within +-MAX_COORDINATE m, a known arm, a
method this runtime has, a speed in [MIN_SPEED, 1].
"""

from __future__ import division

import math
import numbers

from ..model.arm_data import ARMS, unit_slip

MAX_COORDINATE = 1e6
MIN_SPEED = 0.01
#: The methods the runtime has (the others need numpy: the computer-side service).
METHODS = ("analytic",)

try:  # Python 2: text may come as unicode
    _TEXT = (str, unicode)  # type: ignore[name-defined]  # noqa: F821
except NameError:
    _TEXT = (str,)


def _show(value):
    try:
        text = repr(value)
    except Exception:  # nested too deep to print (RecursionError; Python 2: RuntimeError)
        text = "a %s nested too deep to show" % type(value).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def number(value, name):
    # type: (object, str) -> float
    """A finite real number; ValueError naming ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError("%s must be a finite number, got %s" % (name, _show(value)))
    try:
        x = float(value)
    except OverflowError:  # an integer beyond the float range (no "raise from" in Python 2)
        x = None
    if x is None:
        raise ValueError("%s must be a finite number, got an integer of %d digits" % (name, len(str(abs(value)))))
    if math.isnan(x) or math.isinf(x):
        raise ValueError("%s must be a finite number, got %r" % (name, x))
    return x


def target(x, y, z):
    # type: (object, object, object) -> tuple
    """A Cartesian target in FRAME_TORSO metres, each coordinate within +-MAX_COORDINATE, not farther than any
    arm reaches by over a metre (:func:`nao_ik.model.arm_data.unit_slip`)."""
    out = []
    for value, label in zip((x, y, z), ("target x", "target y", "target z")):
        v = number(value, label)
        if abs(v) > MAX_COORDINATE:
            raise ValueError("%s must be within +-%g m (FRAME_TORSO metres), got %r" % (label, MAX_COORDINATE, v))
        out.append(v)
    why = unit_slip(out[0], out[1], out[2], "target")
    if why:
        raise ValueError(why)
    return tuple(out)


def arm(value):
    # type: (object) -> str
    """``"LArm"`` or ``"RArm"``."""
    if not isinstance(value, _TEXT) or str(value) not in ARMS:
        raise ValueError("unknown arm %s: expected one of %s" % (_show(value), ", ".join(ARMS)))
    return str(value)


def method(value):
    # type: (object) -> str
    """A method this runtime has (``""`` means the default, ``analytic``)."""
    if not isinstance(value, _TEXT):
        raise ValueError("method must be a string, got %s" % _show(value))
    name = str(value) or METHODS[0]
    if name not in METHODS:
        raise ValueError(
            "method %s is not available on the robot runtime (it has %s; the others need numpy: "
            "use the computer-side service, nao-ik serve)" % (_show(value), ", ".join(METHODS))
        )
    return name


def speed(value):
    # type: (object) -> float
    """ALMotion's fractionMaxSpeed: a number in [MIN_SPEED, 1]."""
    x = number(value, "speed")
    if not MIN_SPEED <= x <= 1.0:
        raise ValueError("speed must be in [%g, 1] (a fraction of the maximum speed), got %r" % (MIN_SPEED, x))
    return x
