"""The stub ALMotion's own arm collision protection, like ALMotion's ``setCollisionProtectionEnabled("Arms")``.

An independent check of the same body (:data:`nao_ik.body.BODY`) with the
smaller :data:`nao_ik.body.STUB_MARGIN`: it does not use nao-ik's distance
function (:mod:`nao_ik.collision`), but samples points along each arm link
and measures their distance to each body capsule's axis. Sampling can only
overestimate the distance, by the sag between samples (SAMPLES points per
link: measured under 0.2 mm where the link is clear of the part, up to about
1 mm deep inside it), less than the difference between the two margins.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from nao_ik.body import BODY, LINKS, STUB_MARGIN
from nao_ik.kinematics import chain
from nao_ik.model import arm_model

#: Points sampled along each link (both ends included).
SAMPLES = 12

# The body's capsule axes (start a, direction d, 1/|d|^2 or 0 for a sphere), radii and parts; the links'.
_A = np.array([c.a for c in BODY], dtype=float)
_D = np.array([c.b for c in BODY], dtype=float) - _A
_DD = np.einsum("ij,ij->i", _D, _D)
_INV = np.divide(1.0, _DD, out=np.zeros_like(_DD), where=_DD > 0.0)
_RADII = np.array([c.radius for c in BODY], dtype=float)
_PARTS = [c.part for c in BODY]
_U = np.linspace(0.0, 1.0, SAMPLES)[None, :, None]
_SKIP = np.array([ln.skip for ln in LINKS], dtype=float)[:, None]
_LINK_RADII = np.array([ln.radius for ln in LINKS], dtype=float)[:, None]


def arm_clearance(arm: str, angles: Sequence[float]) -> tuple[float, str]:
    """(distance of the arm's links to the body, metres (negative: overlap); the nearest part).

    Every link's samples against every capsule at once (the stub runs this each control cycle an arm
    moves, inside the ALMotion calls the service waits for).

    Args:
        arm: ``"LArm"`` or ``"RArm"``.
        angles: the arm's five joint angles.
    """
    ch = chain(arm_model(arm), [float(a) for a in angles])
    pts = {0: ch.origins[0], 2: ch.origins[2], 4: ch.origins[4], 5: ch.hand}
    p = np.array([pts[ln.start] for ln in LINKS], dtype=float)
    e = np.array([pts[ln.end] for ln in LINKS], dtype=float)
    p = p + _SKIP * (e - p)
    rel = (p[:, None, :] + _U * (e - p)[:, None, :])[:, :, None, :] - _A  # (link, sample, capsule, xyz)
    w = np.clip(np.einsum("lscj,cj->lsc", rel, _D) * _INV, 0.0, 1.0)
    gap = np.linalg.norm(rel - w[..., None] * _D, axis=3).min(axis=1) - _RADII - _LINK_RADII  # (link, capsule)
    k = int(np.argmin(gap))  # the first smallest, links then capsules in order
    return float(gap.flat[k]), _PARTS[k % len(_PARTS)]


def collides(arm: str, angles: Sequence[float]) -> tuple[bool, str]:
    """(True if the arm comes within STUB_MARGIN of the body, the part)."""
    gap, part = arm_clearance(arm, angles)
    return gap < STUB_MARGIN, part
