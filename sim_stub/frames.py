"""The simulated robot's frames: where the torso is in FRAME_WORLD and FRAME_ROBOT.

A standing NAO: FRAME_ROBOT lies on the ground between the feet, x forward,
z up, and the torso stands upright above it at the height of the Stand
posture's leg chain; FRAME_WORLD starts where FRAME_ROBOT is. Tests move the
torso (:meth:`TorsoFrames.set`) to check conversions with a non-identity pose.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from .body import STAND

FRAME_TORSO, FRAME_WORLD, FRAME_ROBOT = 0, 1, 2
# URDF (naoV50): hip below the torso origin, thigh, tibia, and the ankle above the sole (metres).
HIP_OFFSET_Z, THIGH_LENGTH, TIBIA_LENGTH, FOOT_HEIGHT = 0.085, 0.100, 0.1029, 0.04519
#: The torso's height above the ground standing: the Stand posture's hip and knee pitches, torso upright.
STAND_HEIGHT = (
    HIP_OFFSET_Z
    + THIGH_LENGTH * math.cos(STAND["LHipPitch"])
    + TIBIA_LENGTH * math.cos(STAND["LHipPitch"] + STAND["LKneePitch"])
    + FOOT_HEIGHT
)


class TorsoFrames:
    """The torso's 4x4 transform in FRAME_WORLD and FRAME_ROBOT (identity in FRAME_TORSO). Thread-safe."""

    def __init__(self) -> None:
        standing = np.eye(4)
        standing[2, 3] = STAND_HEIGHT
        self._lock = threading.Lock()
        self._torso = {FRAME_TORSO: np.eye(4), FRAME_WORLD: standing.copy(), FRAME_ROBOT: standing.copy()}

    def torso(self, frame: Any) -> np.ndarray:
        """The torso's transform in ``frame`` (0, 1 or 2)."""
        if isinstance(frame, bool) or frame not in self._torso:
            raise RuntimeError(f"ALMotion: unknown frame {frame!r} (0 FRAME_TORSO, 1 FRAME_WORLD, 2 FRAME_ROBOT)")
        with self._lock:
            return self._torso[frame].copy()

    def set(self, frame: Any, values: Any) -> None:
        """Put the torso at a 4x4 transform (16 values, row by row) in FRAME_WORLD or FRAME_ROBOT."""
        if isinstance(frame, bool) or frame not in (FRAME_WORLD, FRAME_ROBOT):
            raise RuntimeError(f"ALMotion stub: the torso can be moved in frames 1 and 2, not {frame!r}")
        t = np.array([float(v) for v in values], dtype=float)
        if t.size != 16 or not np.all(np.isfinite(t)):
            raise RuntimeError("ALMotion stub: a torso transform is 16 finite numbers, row by row")
        t = t.reshape(4, 4)
        if not np.allclose(t[:3, :3] @ t[:3, :3].T, np.eye(3), atol=1e-9) or not np.allclose(t[3], [0, 0, 0, 1]):
            raise RuntimeError("ALMotion stub: a torso transform must be rigid (rotation, last row 0 0 0 1)")
        with self._lock:
            self._torso[frame] = t
