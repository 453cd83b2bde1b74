"""An independent forward-kinematics reference: compose the URDF's joint transforms with numpy.

Deliberately shares nothing with nao_ik.kinematics.chain: homogeneous 4x4 matrices,
Rodrigues rotations about the URDF's axis vectors, origins as written.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

URDF = Path(__file__).resolve().parent.parent / "nao_ik" / "data" / "naoV50_arms.urdf"


def load_joints(path: Path = URDF) -> dict[str, dict]:
    root = ET.parse(path).getroot()
    joints = {}
    for j in root.findall("joint"):
        o, a, lim = j.find("origin"), j.find("axis"), j.find("limit")
        joints[j.get("name")] = {
            "parent": j.find("parent").get("link"),
            "child": j.find("child").get("link"),
            "xyz": np.array([float(v) for v in o.get("xyz").split()]),
            "rpy": np.array([float(v) for v in o.get("rpy").split()]),
            "axis": np.array([float(v) for v in a.get("xyz").split()]),
            "lower": float(lim.get("lower")),
            "upper": float(lim.get("upper")),
            "velocity": float(lim.get("velocity")),
        }
    return joints


def _rot(axis: np.ndarray, angle: float) -> np.ndarray:
    k = axis / np.linalg.norm(axis)
    kx = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * kx + (1 - np.cos(angle)) * kx @ kx


def _rpy(rpy: np.ndarray) -> np.ndarray:
    r, p, y = rpy
    return _rot(np.array([0, 0, 1.0]), y) @ _rot(np.array([0, 1.0, 0]), p) @ _rot(np.array([1.0, 0, 0]), r)


def hand_transform(joints: dict[str, dict], side: str, angles, hand_z: float | None = None) -> np.ndarray:
    """FRAME_TORSO transform of the gripper link for the five arm angles (Hand joint at 0)."""
    names = [side + n for n in ("ShoulderPitch", "ShoulderRoll", "ElbowYaw", "ElbowRoll", "WristYaw", "Hand")]
    t = np.eye(4)
    for name, q in zip(names, list(angles) + [0.0]):
        j = joints[name]
        xyz = j["xyz"].copy()
        if name.endswith("Hand") and hand_z is not None:
            xyz[2] = hand_z
        step = np.eye(4)
        step[:3, :3] = _rpy(j["rpy"]) @ _rot(j["axis"], q)
        step[:3, 3] = xyz
        t = t @ step
    return t
