"""Forward kinematics and the position Jacobian of an :class:`~nao_ik.model.arm.ArmModel`.

One elementwise kernel, :func:`chain`, walks the joints of the model; it runs
on Python floats (one configuration) or numpy arrays (a batch) through
:mod:`nao_ik.kinematics.ops`. Vectors are 3-lists of components, rotations 3-lists of
columns.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

import numpy as np

from ..model.arm import ArmModel
from .ops import ARRAY, SCALAR, Ops

Vec = list  # [x, y, z], components float or ndarray


class Chain(NamedTuple):
    """The arm's frames for one configuration (or a batch).

    Attributes:
        origins: origin of each joint in FRAME_TORSO.
        axes: rotation axis of each joint in FRAME_TORSO (unit).
        rotation: orientation of the last joint frame (= hand frame), as
            three column vectors.
        hand: the hand effector point.
    """

    origins: list[Vec]
    axes: list[Vec]
    rotation: list[Vec]
    hand: Vec


def chain(model: ArmModel, q: Sequence[Any], ops: Ops = SCALAR) -> Chain:
    """Walk the chain.

    Args:
        model: the arm.
        q: the five joint angles in chain order (floats, or arrays of one shape).
        ops: :data:`~nao_ik.kinematics.ops.SCALAR` or :data:`~nao_ik.kinematics.ops.ARRAY`.

    Returns:
        The :class:`Chain`.
    """
    # Rotation as three columns x = (x0, x1, x2), y, z; position p. Written out
    # component by component: this is the innermost loop of every solver.
    x0, x1, x2 = 1.0, 0.0, 0.0
    y0, y1, y2 = 0.0, 1.0, 0.0
    z0, z1, z2 = 0.0, 0.0, 1.0
    p0 = p1 = p2 = 0.0
    origins, axes = [], []
    cos_sin = ops.cos_sin
    for joint, qj in zip(model.joints, q):
        ox, oy, oz = joint.offset
        if ox:
            p0, p1, p2 = p0 + ox * x0, p1 + ox * x1, p2 + ox * x2
        if oy:
            p0, p1, p2 = p0 + oy * y0, p1 + oy * y1, p2 + oy * y2
        if oz:
            p0, p1, p2 = p0 + oz * z0, p1 + oz * z1, p2 + oz * z2
        origins.append([p0, p1, p2])
        c, s = cos_sin(qj)
        a = joint.axis
        if a == 0:
            axes.append([x0, x1, x2])
            y0, y1, y2, z0, z1, z2 = (
                c * y0 + s * z0, c * y1 + s * z1, c * y2 + s * z2,
                c * z0 - s * y0, c * z1 - s * y1, c * z2 - s * y2,
            )  # fmt: skip
        elif a == 1:
            axes.append([y0, y1, y2])
            z0, z1, z2, x0, x1, x2 = (
                c * z0 + s * x0, c * z1 + s * x1, c * z2 + s * x2,
                c * x0 - s * z0, c * x1 - s * z1, c * x2 - s * z2,
            )  # fmt: skip
        else:
            axes.append([z0, z1, z2])
            x0, x1, x2, y0, y1, y2 = (
                c * x0 + s * y0, c * x1 + s * y1, c * x2 + s * y2,
                c * y0 - s * x0, c * y1 - s * x1, c * y2 - s * x2,
            )  # fmt: skip
    hx, hy, hz = model.hand_offset
    hand = [
        p0 + hx * x0 + hy * y0 + hz * z0,
        p1 + hx * x1 + hy * y1 + hz * z1,
        p2 + hx * x2 + hy * y2 + hz * z2,
    ]
    return Chain(origins, axes, [[x0, x1, x2], [y0, y1, y2], [z0, z1, z2]], hand)


def jacobian_columns(ch: Chain, joints: Sequence[int]) -> list[Vec]:
    """Columns d(hand)/d(q_i) = axis_i x (hand - origin_i) for the given joints."""
    h = ch.hand
    cols = []
    for i in joints:
        a, o = ch.axes[i], ch.origins[i]
        r0, r1, r2 = h[0] - o[0], h[1] - o[1], h[2] - o[2]
        cols.append([a[1] * r2 - a[2] * r1, a[2] * r0 - a[0] * r2, a[0] * r1 - a[1] * r0])
    return cols


# ---------------------------------------------------------------- public API


def forward(model: ArmModel, angles: Sequence[float]) -> np.ndarray:
    """Hand position for one configuration.

    Args:
        model: the arm.
        angles: five joint angles, chain order, radians.

    Returns:
        (3,) hand position in FRAME_TORSO, metres.
    """
    return np.array(chain(model, [float(a) for a in angles]).hand)


def forward_batch(model: ArmModel, angles: np.ndarray) -> np.ndarray:
    """Hand positions for many configurations in one vectorised pass.

    Args:
        model: the arm.
        angles: (N, 5) joint angles.

    Returns:
        (N, 3) hand positions.
    """
    a = np.asarray(angles, dtype=float)
    h = chain(model, [a[:, i] for i in range(a.shape[1])], ARRAY).hand
    return np.stack([np.broadcast_to(c, a.shape[:1]) for c in h], axis=1)


def joint_positions(model: ArmModel, angles: Sequence[float]) -> dict[str, np.ndarray]:
    """Shoulder, elbow, wrist and hand points for one configuration.

    Returns:
        Mapping ``shoulder``, ``elbow``, ``wrist``, ``hand`` -> (3,) arrays.
    """
    ch = chain(model, [float(a) for a in angles])
    return {
        "shoulder": np.array(ch.origins[0]),
        "elbow": np.array(ch.origins[2]),
        "wrist": np.array(ch.origins[4]),
        "hand": np.array(ch.hand),
    }


def hand_transform(model: ArmModel, angles: Sequence[float]) -> np.ndarray:
    """The hand's 4x4 homogeneous transform in FRAME_TORSO."""
    ch = chain(model, [float(a) for a in angles])
    t = np.eye(4)
    t[:3, :3] = np.array(ch.rotation).T
    t[:3, 3] = ch.hand
    return t


def jacobian(model: ArmModel, angles: Sequence[float]) -> np.ndarray:
    """The analytic 3x5 position Jacobian of the hand.

    Args:
        model: the arm.
        angles: five joint angles, chain order.

    Returns:
        (3, 5) array, d(hand)/d(angles), metres per radian.
    """
    ch = chain(model, [float(a) for a in angles])
    return np.array(jacobian_columns(ch, range(len(model.joints)))).T
