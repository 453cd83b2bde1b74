"""Argument checks shared by the library and the qi service.

Every public entry point runs its arguments through these, so a bad value is
refused with a message that names it before any solver or robot sees it.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Sequence

from .model import ARMS


def number(value: Any, name: str) -> float:
    """A finite real number (bool and strings are refused).

    Raises:
        ValueError: naming ``name`` and the value.
    """
    if type(value) is float:  # the common case, without the ABC check
        if math.isfinite(value):
            return value
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a finite number, got {_show(value)}")
    x = float(value)
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number, got {x!r}")
    return x


def vector(value: Any, length: int, name: str, labels: Sequence[str] | None = None) -> tuple[float, ...]:
    """A sequence of ``length`` finite numbers."""
    if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
        raise ValueError(f"{name} must be a sequence of {length} numbers, got {_show(value)}")
    if len(value) != length:
        raise ValueError(f"{name} must have {length} values, got {len(value)}")
    labels = labels or [f"{name}[{i}]" for i in range(length)]
    return tuple(number(v, lab) for v, lab in zip(value, labels))


#: Largest target coordinate accepted, metres. The arm reaches 0.22 m; a
#: target a thousand kilometres away is an upstream bug, and the squares of
#: coordinates near 1e154 would overflow.
MAX_COORDINATE = 1e6


def target(value: Any) -> tuple[float, float, float]:
    """A Cartesian target ``[x, y, z]`` in metres, each within +-MAX_COORDINATE."""
    labels = ("target x", "target y", "target z")
    t = vector(value, 3, "target", labels)
    for v, label in zip(t, labels):
        if abs(v) > MAX_COORDINATE:
            raise ValueError(f"{label} must be within +-{MAX_COORDINATE:g} m (FRAME_TORSO metres), got {v!r}")
    return t  # type: ignore[return-value]


def arm(value: Any) -> str:
    """``"LArm"`` or ``"RArm"``."""
    if not isinstance(value, str) or value not in ARMS:
        raise ValueError(f"unknown arm {_show(value)}: expected one of {', '.join(ARMS)}")
    return value


def choice(value: Any, options: Sequence[str], what: str) -> str:
    """One of a fixed set of strings."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"unknown {what} {_show(value)}: expected one of {', '.join(options)}")
    return value


def positive(value: Any, name: str) -> float:
    """A finite number > 0."""
    x = number(value, name)
    if x <= 0:
        raise ValueError(f"{name} must be > 0, got {x!r}")
    return x


def count(value: Any, name: str) -> int:
    """A whole number >= 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {_show(value)}")
    return int(value)


def speed(value: Any) -> float:
    """ALMotion's fractionMaxSpeed: a number in (0, 1]."""
    x = number(value, "speed")
    if not 0.0 < x <= 1.0:
        raise ValueError(f"speed must be in (0, 1] (a fraction of the maximum speed), got {x!r}")
    return x


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
