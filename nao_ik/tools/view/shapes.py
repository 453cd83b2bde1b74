"""NAO's torso, head and legs as simple primitives, in one table.

Placeholders until a body model exists: boxes, spheres and cylinders sized
from Aldebaran's published dimensions (robot 574 x 275 x 311 mm; neck joint
126.5 mm above the torso origin; hips 50 mm to the side and 85 mm below it;
thigh 100 mm, tibia 102.9 mm, ankle to sole 45.19 mm), FRAME_TORSO, legs
straight. A body model can replace :data:`BODY` and :data:`HEAD` by the same
kind of rows. The arms are drawn from :mod:`nao_ik.model.arm` itself.
"""

from __future__ import annotations

from typing import NamedTuple

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
    """

    name: str
    kind: str
    size: tuple
    position: tuple
    color: tuple


def _leg(side: str, s: float) -> list[Shape]:
    knee, ankle = HIP_Z - THIGH, HIP_Z - THIGH - TIBIA
    return [
        Shape(f"{side}Thigh", "cylinder", (0.030, THIGH), (0.0, s * HIP_Y, HIP_Z - THIGH / 2), WHITE),
        Shape(f"{side}Knee", "sphere", (0.030,), (0.0, s * HIP_Y, knee), GREY),
        Shape(f"{side}Tibia", "cylinder", (0.027, TIBIA), (0.0, s * HIP_Y, knee - TIBIA / 2), WHITE),
        Shape(f"{side}Foot", "box", (0.160, 0.088, FOOT_HEIGHT), (0.020, s * HIP_Y, ankle - FOOT_HEIGHT / 2), WHITE),
    ]


#: The body in FRAME_TORSO (fixed in the view: the legs do not move).
BODY: list[Shape] = [
    Shape("Torso", "box", (0.095, 0.150, 0.170), (-0.005, 0.0, 0.030), WHITE),
    Shape("Chest", "sphere", (0.020,), (0.045, 0.0, 0.060), BLUE),
    Shape("Pelvis", "box", (0.075, 0.135, 0.040), (-0.005, 0.0, HIP_Z + 0.010), GREY),
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
