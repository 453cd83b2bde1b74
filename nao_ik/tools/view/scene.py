"""NAO in a viser scene: the body from :mod:`.shapes` (the body model's boxes), the head and both arms as
kinematic trees.

Each arm is a chain of scene nodes, one per joint, placed at the joint's
offset from :mod:`nao_ik.model.arm` and turned about its axis by the joint's
angle, so the browser composes the same transforms as
:func:`nao_ik.kinematics.chain.chain`. A frame sends only the joints that moved.
The hand's position in FRAME_TORSO (for the page's readout and the trail)
comes from :func:`nao_ik.kinematics.chain.forward`.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Mapping, NamedTuple, Sequence

import numpy as np

from ...kinematics.chain import forward
from ...model.arm import ARMS, arm_model
from . import shapes
from .shapes import Shape

HEAD_JOINTS = ("HeadYaw", "HeadPitch")
#: The joints the view shows, in the order the sources read them.
VIEW_JOINTS: tuple[str, ...] = HEAD_JOINTS + arm_model("LArm").names + arm_model("RArm").names
TRAIL_POINTS = 300  # hand positions kept per arm
TRAIL_STEP = 0.002  # m: a new trail point when the hand moved this far
MOVED = 1e-5  # rad: a joint whose angle changed less is not sent again
# Shadows cost much in software WebGL (headless browsers, machines without a GPU) and add little here.
NO_SHADOW = {"cast_shadow": False, "receive_shadow": False}


class Hands(NamedTuple):
    """Hand positions in FRAME_TORSO (metres)."""

    LArm: np.ndarray
    RArm: np.ndarray


def axis_quaternion(axis: int, angle: float) -> tuple[float, float, float, float]:
    """The rotation ``angle`` about coordinate axis ``axis`` (0 x, 1 y, 2 z) as (w, x, y, z)."""
    q = [math.cos(angle / 2), 0.0, 0.0, 0.0]
    q[1 + axis] = math.sin(angle / 2)
    return (q[0], q[1], q[2], q[3])


def z_to(vector: Sequence[float]) -> tuple[float, float, float, float]:
    """The shortest rotation (w, x, y, z) taking the z axis onto ``vector``'s direction."""
    v = np.asarray(vector, dtype=float)
    v = v / np.linalg.norm(v)
    w = 1.0 + v[2]
    if w < 1e-9:  # opposite: half a turn about x
        return (0.0, 1.0, 0.0, 0.0)
    q = np.array([w, -v[1], v[0], 0.0])
    q /= np.linalg.norm(q)
    return (float(q[0]), float(q[1]), float(q[2]), float(q[3]))


def add_shape(scene, parent: str, shape: Shape) -> None:
    """Add one primitive of :mod:`.shapes` under ``parent``.

    Args:
        scene: a viser ``SceneApi``.
        parent: node path ("" for the world).
        shape: the primitive.
    """
    name = f"{parent}/{shape.name}"
    if shape.kind == "box":
        scene.add_box(name, color=shape.color, dimensions=shape.size, position=shape.position, wxyz=shape.wxyz,
                      **NO_SHADOW)  # fmt: skip
    elif shape.kind == "sphere":
        scene.add_icosphere(name, radius=shape.size[0], color=shape.color, position=shape.position, **NO_SHADOW)
    elif shape.kind == "cylinder":
        scene.add_cylinder(
            name, radius=shape.size[0], height=shape.size[1], color=shape.color, position=shape.position, **NO_SHADOW
        )
    else:
        raise ValueError(f"unknown shape kind {shape.kind!r}")


def add_link(scene, name: str, vector: Sequence[float], radius: float, color: tuple) -> None:
    """A cylinder from the parent node's origin to ``vector`` (in the parent's frame)."""
    length = float(np.linalg.norm(vector))
    if length < 1e-6:
        return
    centre = tuple(float(c) / 2 for c in vector)
    scene.add_cylinder(name, radius=radius, height=length, color=color, position=centre, wxyz=z_to(vector), **NO_SHADOW)


class RobotScene:
    """The robot drawn in a viser server's scene.

    Args:
        server: a ``viser.ViserServer``.
    """

    def __init__(self, server):
        self.server = server
        scene = server.scene
        scene.set_up_direction("+z")
        # Plain lights instead of the image-based environment: its first frame takes seconds in software WebGL.
        scene.configure_environment_map(hdri=None)
        scene.add_light_hemisphere("/light/sky", intensity=1.6)
        scene.add_light_directional("/light/key", intensity=1.6, position=(1.0, 0.6, 1.5))
        scene.add_grid("/floor", width=1.0, height=1.0, cell_size=0.05, position=(0.0, 0.0, -0.333))
        for shape in shapes.BODY:
            add_shape(scene, "/body", shape)
        self._nodes: dict[str, object] = {}
        self._axes: dict[str, int] = {}
        self._sent: dict[str, float] = {}
        # Head: yaw about z at the neck, then pitch about y.
        yaw = scene.add_frame("/head", show_axes=False, position=(0.0, 0.0, shapes.NECK_Z))
        pitch = scene.add_frame("/head/pitch", show_axes=False)
        self._nodes.update(HeadYaw=yaw, HeadPitch=pitch)
        self._axes.update(HeadYaw=2, HeadPitch=1)
        for shape in shapes.HEAD:
            add_shape(scene, "/head/pitch", shape)
        self.hand_nodes: dict[str, object] = {}
        for arm in ARMS:
            self._add_arm(arm)
        self.trails = {arm: deque(maxlen=TRAIL_POINTS) for arm in ARMS}
        self._trail_nodes: dict[str, object] = {}
        self._trail_dirty = False
        self.target = scene.add_icosphere(
            "/target", radius=0.012, color=shapes.TARGET_COLOR, position=(0.0, 0.0, 0.0), visible=False
        )
        self.hands: Hands | None = None

    def _add_arm(self, arm: str) -> None:
        scene = self.server.scene
        model = arm_model(arm)
        path = f"/{arm}"
        joints = model.joints
        for i, joint in enumerate(joints):
            path = f"{path}/{joint.name}"
            self._nodes[joint.name] = scene.add_frame(path, show_axes=False, position=joint.offset)
            self._axes[joint.name] = joint.axis
            if any(joint.offset) or i == 0:
                scene.add_icosphere(
                    f"{path}/ball", radius=shapes.ARM_JOINT_RADIUS, color=shapes.ARM_JOINT_COLOR, **NO_SHADOW
                )
            nxt = joints[i + 1].offset if i + 1 < len(joints) else model.hand_offset
            add_link(scene, f"{path}/link", nxt, shapes.ARM_LINK_RADIUS, shapes.ARM_COLOR[arm])
        self.hand_nodes[arm] = scene.add_icosphere(
            f"{path}/hand", radius=shapes.HAND_RADIUS, color=shapes.HAND_COLOR, position=model.hand_offset, **NO_SHADOW
        )

    def show(self, angles: Mapping[str, float]) -> Hands:
        """Turn the joints to ``angles`` (joint name -> rad; missing joints stay); returns the hands.

        Only the joints that moved by more than :data:`MOVED` are sent to the browsers.
        """
        changed = [n for n, q in angles.items() if n in self._nodes and abs(q - self._sent.get(n, math.inf)) > MOVED]
        if changed:
            with self.server.atomic():
                for n in changed:
                    self._nodes[n].wxyz = axis_quaternion(self._axes[n], angles[n])
                    self._sent[n] = angles[n]
        if changed or self.hands is None:
            self.hands = Hands(*(self._hand(arm) for arm in ARMS))
            for arm, hand in zip(ARMS, self.hands):
                trail = self.trails[arm]
                if not trail or np.linalg.norm(hand - trail[-1]) >= TRAIL_STEP:
                    trail.append(hand)
                    self._trail_dirty = True
        return self.hands

    def _hand(self, arm: str) -> np.ndarray:
        model = arm_model(arm)
        return forward(model, [self._sent.get(n, 0.0) for n in model.names])

    def draw_trails(self) -> None:
        """Send the hands' trails if they grew since the last call."""
        if not self._trail_dirty:
            return
        self._trail_dirty = False
        for arm, trail in self.trails.items():
            if len(trail) < 2:
                continue
            pts = np.asarray(trail, dtype=np.float32)
            segments = np.stack([pts[:-1], pts[1:]], axis=1)
            node = self._trail_nodes.get(arm)
            if node is None:
                self._trail_nodes[arm] = self.server.scene.add_line_segments(
                    f"/trail/{arm}", segments, shapes.TRAIL_COLOR[arm], thickness=0.004
                )
            else:
                node.points = segments

    def clear_trails(self) -> None:
        """Forget the trails (the next frames start new ones)."""
        for trail in self.trails.values():
            trail.clear()
        for node in self._trail_nodes.values():
            node.remove()
        self._trail_nodes.clear()

    def world_position(self, arm: str) -> np.ndarray:
        """Where the browsers draw the hand of ``arm`` (FRAME_TORSO, m): the scene's own nodes composed.

        Read from the node handles the browsers are sent, not from the
        kinematics, so a test can hold the scene to :func:`nao_ik.kinematics.chain.forward`.
        """
        point = np.asarray(self.hand_nodes[arm].position, dtype=float)
        for joint in reversed(arm_model(arm).joints):
            node = self._nodes[joint.name]
            point = _rotate(np.asarray(node.wxyz, dtype=float), point) + np.asarray(node.position, dtype=float)
        return point

    def show_target(self, target: Sequence[float]) -> None:
        """Mark the last target."""
        self.target.position = tuple(float(c) for c in target)
        self.target.visible = True


def _rotate(wxyz: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate ``v`` by the unit quaternion ``wxyz``."""
    w, u = wxyz[0], wxyz[1:]
    return v + 2.0 * np.cross(u, np.cross(u, v) + w * v)
