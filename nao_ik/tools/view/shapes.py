"""NAO's torso, head and legs as simple primitives, in one table.

The torso, the pelvis and the thighs are the library's body model itself
(:data:`nao_ik.model.body.BODY`, standing): each rounded box drawn as its box
grown by its radius, so what the view shows is what the body check keeps the
arms out of (up to the rounded edges). The head, the shins and the feet are
drawn from Aldebaran's published dimensions (neck joint 126.5 mm above the
torso origin; hips 50 mm to the side and 85 mm below it; thigh 100 mm, tibia
102.9 mm, ankle to sole 45.19 mm), FRAME_TORSO, legs straight. The arms are
drawn from :mod:`nao_ik.model.arm` itself.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...model.body import BODY as BODY_MODEL
from ...model.body import Box

NECK_Z = 0.1265
HIP_Y, HIP_Z = 0.050, -0.085
THIGH, TIBIA, FOOT_HEIGHT = 0.100, 0.1029, 0.04519

WHITE = (235, 235, 240)
GREY = (150, 155, 165)
ORANGE = (240, 140, 40)
BLUE = (60, 110, 220)


class Shape(NamedTuple):
    """One primitive.

    Attributes:
        name: node name (unique within its table).
        kind: ``"box"``, ``"sphere"`` or ``"cylinder"`` (a cylinder lies along its z axis).
        size: box (dx, dy, dz); sphere (radius,); cylinder (radius, length), metres.
        position: centre in the parent frame (FRAME_TORSO for :data:`BODY`, the head for :data:`HEAD`).
        color: RGB.
        wxyz: its turn in the parent frame, a quaternion (w, x, y, z).
    """

    name: str
    kind: str
    size: tuple
    position: tuple
    color: tuple
    wxyz: tuple = (1.0, 0.0, 0.0, 0.0)


def quaternion(turn: np.ndarray) -> tuple[float, float, float, float]:
    """The rotation matrix ``turn`` (3, 3) as (w, x, y, z)."""
    m = np.asarray(turn, dtype=float)
    w = 0.5 * float(np.sqrt(max(1.0 + np.trace(m), 0.0)))
    if w > 1e-6:
        return (w, float(m[2, 1] - m[1, 2]) / (4 * w), float(m[0, 2] - m[2, 0]) / (4 * w),
                float(m[1, 0] - m[0, 1]) / (4 * w))  # fmt: skip
    i = int(np.argmax(np.diag(m)))  # a half turn: from the largest diagonal entry
    j, k = (i + 1) % 3, (i + 2) % 3
    v = [0.0, 0.0, 0.0]
    v[i] = 0.5 * float(np.sqrt(max(1.0 + m[i, i] - m[j, j] - m[k, k], 0.0)))
    v[j], v[k] = float(m[j, i] + m[i, j]) / (4 * v[i]), float(m[k, i] + m[i, k]) / (4 * v[i])
    return (0.0, v[0], v[1], v[2])


def _model_boxes() -> list[Shape]:
    """The body model's rounded boxes (torso, pelvis, thighs), each as its box grown by its radius."""
    out = []
    for k, c in enumerate(b for b in BODY_MODEL if isinstance(b, Box)):
        turn = np.eye(3) if c.turn is None else np.reshape(c.turn, (3, 3))
        size = tuple(2.0 * (float(h) + c.radius) for h in c.half)
        # turn takes FRAME_TORSO into the box's frame: the box's own axes are turn's rows.
        centre = tuple(float(x) for x in c.centre)
        colour = GREY if c.part == "hips" else WHITE
        out.append(Shape(f"{c.part}{k}", "box", size, centre, colour, quaternion(turn.T)))
    return out


def _leg(side: str, s: float) -> list[Shape]:
    knee, ankle = HIP_Z - THIGH, HIP_Z - THIGH - TIBIA
    return [  # the thigh is the body model's
        Shape(f"{side}Tibia", "cylinder", (0.027, TIBIA), (0.0, s * HIP_Y, knee - TIBIA / 2), WHITE),
        Shape(f"{side}Foot", "box", (0.160, 0.088, FOOT_HEIGHT), (0.020, s * HIP_Y, ankle - FOOT_HEIGHT / 2), WHITE),
    ]


#: The body in FRAME_TORSO (fixed in the view: the legs do not move).
BODY: list[Shape] = [
    *_model_boxes(),
    Shape("Neck", "cylinder", (0.016, 0.020), (0.0, 0.0, NECK_Z - 0.008), GREY),
    *_leg("L", 1.0),
    *_leg("R", -1.0),
]

#: The head, in the frame after HeadYaw and HeadPitch (origin at the neck joint).
HEAD: list[Shape] = [
    Shape("Skull", "sphere", (0.062,), (0.0, 0.0, 0.058), WHITE),
    Shape("LEye", "sphere", (0.011,), (0.052, 0.024, 0.062), BLUE),
    Shape("REye", "sphere", (0.011,), (0.052, -0.024, 0.062), BLUE),
]

#: Arm links and joints: radius of the link cylinders and of the joint spheres, and their colours.
ARM_LINK_RADIUS = 0.018
ARM_JOINT_RADIUS = 0.022
ARM_COLOR = {"LArm": WHITE, "RArm": WHITE}
ARM_JOINT_COLOR = GREY
HAND_RADIUS = 0.020
HAND_COLOR = ORANGE
TARGET_COLOR = (220, 30, 30)
TRAIL_COLOR = {"LArm": (230, 120, 20), "RArm": (30, 150, 220)}
