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

_AXES = [(np.asarray(c.a, dtype=float), np.asarray(c.b, dtype=float) - np.asarray(c.a, dtype=float), c.radius, c.part)
         for c in BODY]  # fmt: skip


def arm_clearance(arm: str, angles: Sequence[float]) -> tuple[float, str]:
    """(distance of the arm's links to the body, metres (negative: overlap); the nearest part).

    Args:
        arm: ``"LArm"`` or ``"RArm"``.
        angles: the arm's five joint angles.
    """
    ch = chain(arm_model(arm), [float(a) for a in angles])
    pts = {0: ch.origins[0], 2: ch.origins[2], 4: ch.origins[4], 5: ch.hand}
    u = np.linspace(0.0, 1.0, SAMPLES)
    best, part = np.inf, ""
    for ln in LINKS:
        p, e = np.asarray(pts[ln.start]), np.asarray(pts[ln.end])
        p = p + ln.skip * (e - p)
        samples = p[None, :] + u[:, None] * (e - p)[None, :]
        for a, d, radius, name in _AXES:
            dd = float(d @ d)
            w = np.zeros(SAMPLES) if dd == 0.0 else np.clip((samples - a) @ d / dd, 0.0, 1.0)
            gap = float(np.min(np.linalg.norm(samples - (a + w[:, None] * d), axis=1))) - radius - ln.radius
            if gap < best:
                best, part = gap, name
    return best, part


def collides(arm: str, angles: Sequence[float]) -> tuple[bool, str]:
    """(True if the arm comes within STUB_MARGIN of the body, the part)."""
    gap, part = arm_clearance(arm, angles)
    return gap < STUB_MARGIN, part
