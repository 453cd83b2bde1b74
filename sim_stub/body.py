"""The simulated NAO's joints: names, limits and postures, as data.

Arm joints come from :mod:`nao_ik.model.arm` (one source of truth for the arms);
head, legs and hands are from the ros-naoqi URDF of NAO V5.
"""

from __future__ import annotations

from typing import NamedTuple

from nao_ik.model.arm import arm_model


class JointSpec(NamedTuple):
    """``getLimits``' view of one joint."""

    name: str
    lower: float
    upper: float
    max_velocity: float
    max_torque: float


_OTHER = [
    JointSpec("HeadYaw", -2.08567, 2.08567, 8.26797, 1.547),
    JointSpec("HeadPitch", -0.671952, 0.514872, 7.19407, 1.532),
    JointSpec("LHipYawPitch", -1.14529, 0.740718, 4.16174, 3.348),
    JointSpec("LHipRoll", -0.379435, 0.79046, 4.16174, 3.348),
    JointSpec("LHipPitch", -1.53589, 0.48398, 6.40239, 3.023),
    JointSpec("LKneePitch", -0.0923279, 2.11255, 6.40239, 3.023),
    JointSpec("LAnklePitch", -1.18944, 0.922581, 6.40239, 3.023),
    JointSpec("LAnkleRoll", -0.397761, 0.768992, 4.16174, 3.348),
    JointSpec("RHipYawPitch", -1.14529, 0.740718, 4.16174, 3.348),
    JointSpec("RHipRoll", -0.79046, 0.379435, 4.16174, 3.348),
    JointSpec("RHipPitch", -1.53589, 0.48398, 6.40239, 3.0226),
    JointSpec("RKneePitch", -0.0923279, 2.11255, 6.40239, 3.0226),
    JointSpec("RAnklePitch", -1.1863, 0.932006, 6.40239, 3.0226),
    JointSpec("RAnkleRoll", -0.768992, 0.397761, 6.40239, 3.348),
    JointSpec("LHand", 0.0, 1.0, 8.33, 0.292),
    JointSpec("RHand", 0.0, 1.0, 8.33, 0.292),
]
# URDF efforts of the arm joints (the model keeps kinematics only).
_ARM_TORQUE = {
    "ShoulderPitch": 1.329,
    "ShoulderRoll": 1.7835,
    "ElbowYaw": 1.547,
    "ElbowRoll": 1.532,
    "WristYaw": 0.4075,
}


def _arm_specs(arm: str) -> list[JointSpec]:
    return [JointSpec(j.name, j.lower, j.upper, j.max_velocity, _ARM_TORQUE[j.name[1:]]) for j in arm_model(arm).joints]


_ALL = {j.name: j for j in _OTHER + _arm_specs("LArm") + _arm_specs("RArm")}

#: ALMotion's chain names and the joints they expand to, in ALMotion's order.
CHAINS: dict[str, tuple[str, ...]] = {
    "Head": ("HeadYaw", "HeadPitch"),
    "LArm": arm_model("LArm").names + ("LHand",),
    "LLeg": ("LHipYawPitch", "LHipRoll", "LHipPitch", "LKneePitch", "LAnklePitch", "LAnkleRoll"),
    "RLeg": ("RHipYawPitch", "RHipRoll", "RHipPitch", "RKneePitch", "RAnklePitch", "RAnkleRoll"),
    "RArm": arm_model("RArm").names + ("RHand",),
}
CHAINS["Body"] = CHAINS["Head"] + CHAINS["LArm"] + CHAINS["LLeg"] + CHAINS["RLeg"] + CHAINS["RArm"]
CHAINS["Arms"] = CHAINS["LArm"] + CHAINS["RArm"]

#: Every joint, in ALMotion's "Body" order.
JOINTS: dict[str, JointSpec] = {name: _ALL[name] for name in CHAINS["Body"]}

#: NAO standing, arms down along the body with elbows bent (like ALRobotPosture's "Stand").
STAND: dict[str, float] = {
    "HeadYaw": 0.0,
    "HeadPitch": 0.0,
    "LShoulderPitch": 1.40,
    "LShoulderRoll": 0.30,
    "LElbowYaw": -1.39,
    "LElbowRoll": -1.00,
    "LWristYaw": 0.0,
    "LHand": 0.25,
    "RShoulderPitch": 1.40,
    "RShoulderRoll": -0.30,
    "RElbowYaw": 1.39,
    "RElbowRoll": 1.00,
    "RWristYaw": 0.0,
    "RHand": 0.25,
    "LHipYawPitch": 0.0,
    "LHipRoll": 0.0,
    "LHipPitch": -0.45,
    "LKneePitch": 0.70,
    "LAnklePitch": -0.35,
    "LAnkleRoll": 0.0,
    "RHipYawPitch": 0.0,
    "RHipRoll": 0.0,
    "RHipPitch": -0.45,
    "RKneePitch": 0.70,
    "RAnklePitch": -0.35,
    "RAnkleRoll": 0.0,
}

#: Crouching rest posture that ``rest()`` goes to before the motors go off.
REST: dict[str, float] = dict(
    STAND,
    LShoulderPitch=1.45,
    LShoulderRoll=0.12,
    LElbowYaw=-1.20,
    LElbowRoll=-0.52,
    RShoulderPitch=1.45,
    RShoulderRoll=-0.12,
    RElbowYaw=1.20,
    RElbowRoll=0.52,
    LHipPitch=-0.85,
    LKneePitch=2.10,
    LAnklePitch=-1.18,
    RHipPitch=-0.85,
    RKneePitch=2.10,
    RAnklePitch=-1.18,
)
