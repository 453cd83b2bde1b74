"""Argument checks shared by the library and the qi service.

Every public entry point runs its arguments through these, so a bad value is
refused with a message that names it before any solver or robot sees it.
"""

from __future__ import annotations

import math
import numbers
import reprlib
from collections.abc import Mapping, Set
from typing import Any, Sequence

import numpy as np

from .arm import ARMS
from .arm_data import slipped, unit_slip


def number(value: Any, name: str) -> float:
    """A finite real number (bool and strings are refused).

    Raises:
        ValueError: naming ``name`` and the value.
    """
    if type(value) is float:  # the common case, without the ABC check
        if math.isfinite(value):
            return value
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        shown = f"a string {show(value)}" if isinstance(value, (str, bytes)) else show(value)
        raise ValueError(f"{name} must be a finite number, got {shown}")
    try:
        x = float(value)
    except OverflowError:  # an integer beyond the float range, e.g. 10**400
        raise ValueError(f"{name} must be a finite number, got an integer of {len(str(abs(value)))} digits") from None
    if not math.isfinite(x):
        raise ValueError(f"{name} must be a finite number, got {x!r}")
    return x


def vector(value: Any, length: int, name: str, labels: Sequence[str] | None = None) -> tuple[float, ...]:
    """A sequence (list, tuple, 1-d array) of ``length`` finite numbers; maps and sets are refused (no order)."""
    if not isinstance(value, (list, tuple, np.ndarray)) or (isinstance(value, np.ndarray) and value.ndim != 1):
        raise ValueError(f"{name} must be a sequence of {length} numbers (list, tuple), got {show(value)}")
    if len(value) != length:
        raise ValueError(f"{name} must have {length} values, got {len(value)}")
    if type(value) is not np.ndarray and all(type(v) is float and math.isfinite(v) for v in value):
        return tuple(value)  # the common case (what number() returns for each), without a label per value
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
    if abs(t[0]) <= MAX_COORDINATE and abs(t[1]) <= MAX_COORDINATE and abs(t[2]) <= MAX_COORDINATE:
        return t  # type: ignore[return-value]
    return tuple(target_coordinate(v, label) for v, label in zip(t, labels))  # type: ignore[return-value]


def target_coordinate(value: Any, label: str) -> float:
    """One target coordinate: a finite number within +-MAX_COORDINATE metres."""
    v = number(value, label)
    if abs(v) > MAX_COORDINATE:
        raise ValueError(f"{label} must be within +-{MAX_COORDINATE:g} m (FRAME_TORSO metres), got {v!r}")
    return v


def metres(points: Any, label: str = "target") -> None:
    """Refuse FRAME_TORSO points that no arm reaches by over a metre (:func:`nao_ik.model.arm_data.unit_slip`):
    millimetres sent for metres. ``points`` is one point (a position6D counts by its x, y, z) or rows of them (a
    list, an (N, 3) or (N, 6) array), checked all at once.

    Raises:
        ValueError: in one line, the first such point, that coordinates are metres, and for rows the indices of
            the first few such rows and how many there are.
    """
    if len(points) == 0:
        return
    if not isinstance(points[0], (list, tuple, np.ndarray)):  # one point
        why = unit_slip(float(points[0]), float(points[1]), float(points[2]), label)
        if why:
            raise ValueError(why)
        return
    a = np.asarray(points, dtype=float)
    rows = np.flatnonzero(slipped(a[:, 0], a[:, 1], a[:, 2]))
    if rows.size:
        i = int(rows[0])
        shown = ", ".join(str(r) for r in rows[:SHOWN_ROWS]) + (", ..." if rows.size > SHOWN_ROWS else "")
        why = unit_slip(float(a[i, 0]), float(a[i, 1]), float(a[i, 2]), f"{label}[{i}]")
        raise ValueError(f"{why}; rows that far off: {shown} ({rows.size} of {len(a)})")


#: Row indices a refusal of rows lists (then "...").
SHOWN_ROWS = 5


def arm(value: Any) -> str:
    """``"LArm"`` or ``"RArm"``."""
    if not isinstance(value, str) or value not in ARMS:
        raise ValueError(f"unknown arm {show(value)}: expected one of {', '.join(ARMS)}")
    return value


def choice(value: Any, options: Sequence[str], what: str) -> str:
    """One of a fixed set of strings."""
    if not isinstance(value, str) or value not in options:
        raise ValueError(f"unknown {what} {show(value)}: expected one of {', '.join(options)}")
    return value


def flag(value: Any, name: str) -> bool:
    """A boolean (True or False, not a number or a string that looks like one)."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be true or false, got {show(value)}")
    return bool(value)


def positive(value: Any, name: str) -> float:
    """A finite number > 0."""
    x = number(value, name)
    if x <= 0:
        raise ValueError(f"{name} must be > 0, got {x!r}")
    return x


def count(value: Any, name: str) -> int:
    """A whole number >= 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {show(value)}")
    return int(value)


#: Slowest fractionMaxSpeed accepted: below it a reach would take minutes
#: (ALMotion moves nothing visible at 1e-300, while the answer says ``moved``).
MIN_SPEED = 0.01


def speed(value: Any) -> float:
    """ALMotion's fractionMaxSpeed: a number in [MIN_SPEED, 1]."""
    x = number(value, "speed")
    if not MIN_SPEED <= x <= 1.0:
        raise ValueError(f"speed must be in [{MIN_SPEED:g}, 1] (a fraction of the maximum speed), got {x!r}")
    return x


def array(value: Any, name: str, width: int) -> np.ndarray:
    """An (N, width) float array of finite numbers (one row may be given as a flat ``width``-vector).

    Booleans, complex numbers, strings, maps, sets and other objects are
    refused, as :func:`number` refuses them one at a time.

    Raises:
        ValueError: naming ``name``, the shape or the first bad entry.
    """
    if isinstance(value, (Mapping, Set, str, bytes)):
        raise ValueError(f"{name} must be an array of numbers, got {show(value)}")
    if not isinstance(value, np.ndarray):
        _no_hidden_booleans(value, name)
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError):  # ragged
        raise ValueError(f"{name} must be an array of numbers, got {show(value)}") from None
    if raw.dtype.kind not in "iuf":
        kind = _KINDS.get(raw.dtype.kind, f"{raw.dtype} values")
        raise ValueError(f"{name} must be an array of numbers (real), got {kind}")
    a = raw.astype(float, copy=False)
    if a.ndim == 1 and a.shape[0] == width:
        a = a[None, :]
    if a.ndim != 2 or a.shape[1] != width:
        raise ValueError(f"{name} must have shape (N, {width}), got {a.shape}")
    bad = ~np.isfinite(a)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise ValueError(f"{name}[{row}, {col}] must be finite, got {a[row, col]!r}")
    return a


_KINDS = {"b": "booleans", "c": "complex numbers", "U": "strings", "S": "strings", "O": "objects"}


def _no_hidden_booleans(value: Any, name: str) -> None:
    """numpy turns ``[True, 0.1, 0.2]`` into floats: look for booleans in nested lists first."""
    rows = value if isinstance(value, (list, tuple)) else ()
    for i, row in enumerate(rows):
        items = row if isinstance(row, (list, tuple)) else (row,)
        for v in items:
            if isinstance(v, (bool, np.bool_)):
                raise ValueError(f"{name}[{i}] must hold numbers, got {show(v)}")


def show(value: Any) -> str:
    """The value (shortened), its kind named where its repr could pass for a number or a list."""
    kind = next((label for types, label in _LABELS if isinstance(value, types)), None)
    # Containers to a few levels only: a value nested thousands deep must not recurse (RecursionError).
    text = _SHORT.repr(value) if isinstance(value, (list, tuple, dict, set, frozenset)) else repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{kind} {text}" if kind else text


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxtuple, _SHORT.maxdict, _SHORT.maxset = 3, 8, 8, 4, 4
_SHORT.maxstring = _SHORT.maxother = 60

_LABELS = (
    ((bool, np.bool_), "a boolean"),
    (Mapping, "a map"),
    (Set, "a set"),
    (complex, "a complex number"),
)
