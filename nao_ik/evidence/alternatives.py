"""The alternatives nao-ik is compared with, as the benches call them: a pseudoinverse solver as ALMotion's
documentation describes its Cartesian control, and ikpy on the URDF nao-ik ships (extra "peers"; None without it).

``nao-ik report`` (:mod:`nao_ik.evidence.report.build`) and ``nao-ik bench --body``
(:mod:`nao_ik.evidence.body_bench`) both use them.
"""

from __future__ import annotations

import os
import warnings
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Sequence

import numpy as np

from ..kinematics.chain import forward, jacobian
from ..model.arm import arm_model
from ..nn.networks import DATA_DIR

#: The arm the alternatives are set up on (the paper's problem: the left arm's kinematics).
ARM = "LArm"
ALMOTION = "ALMotion-style pinv"
IKPY = "ikpy"


def almotion_pinv(
    target: Sequence[float], tol: float = 1e-4, max_iter: int = 100, start: Sequence[float] | None = None
) -> tuple[np.ndarray, float, int]:
    """A pseudoinverse solver as ALMotion's documentation describes its Cartesian control.

    Moore-Penrose pseudoinverse of the position Jacobian, full steps, no step
    control and no joint limits in the loop (the four position joints; WristYaw
    held). The answer is what it is: the report counts out-of-limit answers.
    """
    model = arm_model(ARM)
    q = np.array(model.neutral if start is None else start, dtype=float)
    t = np.asarray(target, dtype=float)
    err = np.inf
    for it in range(max_iter + 1):
        e = t - forward(model, q)
        err = float(np.linalg.norm(e))
        if err <= tol or not np.isfinite(err) or it == max_iter:
            return q, err, it
        q[:4] += np.linalg.pinv(jacobian(model, q)[:, :4]) @ e
    return q, err, max_iter


def arm_urdf(arm: str = ARM) -> str:
    """The shipped URDF cut to one arm's joints, with the links URDF parsers need."""
    src = ET.parse(DATA_DIR / "naoV50_arms.urdf").getroot()
    robot = ET.Element("robot", {"name": "nao_" + arm})
    links = set()
    for j in src.findall("joint"):
        if j.get("name").startswith(arm[0]):
            robot.append(j)
            links |= {j.find("parent").get("link"), j.find("child").get("link")}
    for name in sorted(links):
        ET.SubElement(robot, "link", {"name": name})
    return ET.tostring(robot, encoding="unicode")


class IkpyArm:
    """ikpy on the URDF nao-ik ships (the arm's joints only), or None without ikpy."""

    def __init__(self):
        from ikpy.chain import Chain

        path = Path(os.environ.get("TMPDIR", "/tmp")) / f"nao_ik_{os.getpid()}_{ARM}.urdf"
        path.write_text(arm_urdf(ARM))
        model = arm_model(ARM)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            names = [link.name for link in Chain.from_urdf_file(str(path), base_elements=["torso"]).links]
            mask = [n in model.names[:4] for n in names]
            self.chain = Chain.from_urdf_file(str(path), base_elements=["torso"], active_links_mask=mask)
        path.unlink()
        self.index = [names.index(n) for n in model.names]
        self.start = np.zeros(len(names))
        self.start[self.index] = model.neutral

    def solve(self, target: Sequence[float], start: Sequence[float] | None = None) -> np.ndarray:
        initial = self.start.copy()
        if start is not None:
            initial[self.index] = start
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            full = self.chain.inverse_kinematics(np.asarray(target), initial_position=initial)
        return np.asarray(full)[self.index]


def ikpy_arm() -> IkpyArm | None:
    try:
        return IkpyArm()
    except ImportError:
        return None
