"""ALMotion's frames: FRAME_TORSO 0, FRAME_WORLD 1, FRAME_ROBOT 2, and conversions to FRAME_TORSO.

Every solver works in FRAME_TORSO. A target given in FRAME_WORLD or
FRAME_ROBOT is converted with the torso's transform in that frame, as
``ALMotion.getTransform("Torso", frame, True)`` gives it (16 values, a 4x4
homogeneous matrix row by row): a point p in the frame is
``inverse(T) * p`` in FRAME_TORSO, a pose (position6D) likewise.

- FRAME_TORSO: attached to the torso (x forward, y left, z up).
- FRAME_ROBOT: on the ground between the feet, x forward, z up (the camera's
  usual answer: ALTracker and ALLandMarkDetection give targets there).
- FRAME_WORLD: fixed where the robot woke up; it drifts with walking.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ..model import validate
from .hand_pose import pose6d_to_transform, transform_to_pose6d

FRAME_TORSO, FRAME_WORLD, FRAME_ROBOT = 0, 1, 2
#: ALMotion's numbering -> name.
FRAMES = {FRAME_TORSO: "FRAME_TORSO", FRAME_WORLD: "FRAME_WORLD", FRAME_ROBOT: "FRAME_ROBOT"}
#: How far a reported rotation may be from orthonormal (the robot's rounding).
ORTHO_TOLERANCE = 1e-5


def check_frame(value: Any) -> int:
    """A frame number: 0 (FRAME_TORSO), 1 (FRAME_WORLD) or 2 (FRAME_ROBOT); a whole float is accepted.

    Raises:
        ValueError: naming the value.
    """
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value not in FRAMES:
        raise ValueError(
            f"frame must be 0 (FRAME_TORSO), 1 (FRAME_WORLD) or 2 (FRAME_ROBOT), got {validate.show(value)}"
        )
    return value


def check_transform(values: Any, what: str = "transform") -> np.ndarray:
    """16 finite numbers (row by row) forming a rigid 4x4 transform.

    Raises:
        ValueError: not 16 numbers, not finite, last row not [0, 0, 0, 1], or the rotation not orthonormal.
    """
    v = validate.vector(list(values) if isinstance(values, (list, tuple)) else values, 16, what)
    t = np.array(v, dtype=float).reshape(4, 4)
    if not np.allclose(t[3], [0.0, 0.0, 0.0, 1.0], atol=ORTHO_TOLERANCE):
        raise ValueError(f"{what} must end with the row [0, 0, 0, 1], got {t[3].tolist()}")
    r = t[:3, :3]
    if not np.allclose(r @ r.T, np.eye(3), atol=ORTHO_TOLERANCE) or np.linalg.det(r) < 0:
        raise ValueError(f"{what} must have a rotation (orthonormal, determinant 1): {r.tolist()}")
    return t


def point_to_torso(p: Sequence[float], torso: np.ndarray) -> tuple[float, float, float]:
    """A point given in a frame, in FRAME_TORSO.

    Args:
        p: ``[x, y, z]`` in the frame, metres.
        torso: the torso's 4x4 transform in that frame (``getTransform("Torso", frame, True)``).

    Returns:
        ``(x, y, z)`` in FRAME_TORSO.
    """
    r, o = torso[:3, :3], torso[:3, 3]
    x = r.T @ (np.asarray(p, dtype=float) - o)
    return float(x[0]), float(x[1]), float(x[2])


def point_from_torso(p: Sequence[float], torso: np.ndarray) -> tuple[float, float, float]:
    """A FRAME_TORSO point in the frame whose torso transform is ``torso`` (the inverse of :func:`point_to_torso`)."""
    x = torso[:3, :3] @ np.asarray(p, dtype=float) + torso[:3, 3]
    return float(x[0]), float(x[1]), float(x[2])


def pose_to_torso(pose: Sequence[float], torso: np.ndarray) -> tuple[float, ...]:
    """A position6D given in a frame, in FRAME_TORSO."""
    return tuple(transform_to_pose6d(np.linalg.inv(torso) @ pose6d_to_transform(pose)))


def pose_from_torso(pose: Sequence[float], torso: np.ndarray) -> tuple[float, ...]:
    """A FRAME_TORSO position6D in the frame whose torso transform is ``torso``."""
    return tuple(transform_to_pose6d(torso @ pose6d_to_transform(pose)))


def torso_transform(x: float = 0.0, y: float = 0.0, z: float = 0.0, yaw: float = 0.0, pitch: float = 0.0,
                    roll: float = 0.0) -> np.ndarray:  # fmt: skip
    """A torso transform from a position and Rz(yaw) Ry(pitch) Rx(roll) (for the stub and tests)."""
    return pose6d_to_transform([x, y, z, roll, pitch, yaw])
