"""Poddighe (2013) section 5.3, the equations as printed, checked on the paper's own chain.

The paper's chain (its eqs. 12-13, 15, 21): p1 = Rx(th1) Rz(th2) (0, l1, 0),
p2 = p1 + Rx(th1) Rz(th2) Ry(th3) Rz(th4) (0, l2, 0), no offsets, l1 = 105 mm
and l2 = 113.7 mm (the paper's 21.87 cm), each angle in the range of the NAO
joint it stands for (ShoulderPitch, ShoulderRoll, ElbowYaw, ElbowRoll). The
check recovers the angles from the points three ways:

- as printed: eq. 16's coordinates, and eqs. 17, 18, 23, 24 dividing the
  arcsin/arccos *result* by the link length;
- corrected: the argument divided instead, from the true coordinates
  (y1 = l1 cos th1 cos th2, z1 = +l1 sin th1 cos th2);
- exact: atan2 recovery, which keeps the quadrant.

Lengths are in metres (in millimetres the printed arcsin's argument leaves
[-1, 1] and the equations give NaN everywhere).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ...model.arm import arm_model

L1 = 0.105
L2 = 0.1137


def _rx(a: np.ndarray) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    o, z = np.ones_like(a), np.zeros_like(a)
    return np.stack([np.stack([o, z, z], -1), np.stack([z, c, -s], -1), np.stack([z, s, c], -1)], -2)


def _ry(a: np.ndarray) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    o, z = np.ones_like(a), np.zeros_like(a)
    return np.stack([np.stack([c, z, s], -1), np.stack([z, o, z], -1), np.stack([-s, z, c], -1)], -2)


def _rz(a: np.ndarray) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    o, z = np.ones_like(a), np.zeros_like(a)
    return np.stack([np.stack([c, -s, z], -1), np.stack([s, c, z], -1), np.stack([z, z, o], -1)], -2)


def paper_points(th: np.ndarray, l1: float = L1, l2: float = L2) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The paper's forward kinematics (eqs. 15, 19-21) by matrix products.

    Args:
        th: (N, 4) angles th1..th4.

    Returns:
        p1 (N, 3), p2 (N, 3), and p2' = T^-1 p2 (N, 3), the hand in the elbow's frame.
    """
    r1 = _rx(th[:, 0]) @ _rz(th[:, 1])
    p1 = r1 @ np.array([0.0, l1, 0.0])
    p2_rel = (_ry(th[:, 2]) @ _rz(th[:, 3])) @ np.array([0.0, l2, 0.0])
    p2 = p1 + np.einsum("nij,nj->ni", r1, p2_rel)
    return p1, p2, p2_rel


def eq16_as_printed(th: np.ndarray, l1: float = L1) -> np.ndarray:
    """Eq. 16 as printed: x1 = -l1 sin th2, y1 = l1 cos th2 sin th1, z1 = -l1 cos th2 sin th1."""
    s1, c2, s2 = np.sin(th[:, 0]), np.cos(th[:, 1]), np.sin(th[:, 1])
    return np.stack([-l1 * s2, l1 * c2 * s1, -l1 * c2 * s1], axis=1)


def recover_as_printed(p1: np.ndarray, p2_rel: np.ndarray, l1: float = L1, l2: float = L2) -> np.ndarray:
    """Eqs. 17, 18, 23, 24 exactly as printed (the result, not the argument, divided by the length)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        th2 = -np.arcsin(p1[:, 0]) / l1
        th1 = -np.arcsin(p1[:, 2]) / (l1 * np.cos(th2))
        th4 = -np.arccos(p2_rel[:, 1]) / l2
        th3 = -np.arcsin(p2_rel[:, 2]) / (l2 * np.sin(th4))
    return np.stack([th1, th2, th3, th4], axis=1)


def recover_corrected(p1: np.ndarray, p2_rel: np.ndarray, l1: float = L1, l2: float = L2) -> np.ndarray:
    """The same equations with the argument divided and eq. 16's signs fixed (arcsin kept: quadrant lost)."""
    th2 = -np.arcsin(np.clip(p1[:, 0] / l1, -1, 1))
    th1 = np.arcsin(np.clip(p1[:, 2] / (l1 * np.cos(th2)), -1, 1))
    # y2' = l2 cos th4: arccos gives |th4|; the sign is th4's range's (ElbowRoll <= 0 on the left arm).
    th4 = -np.arccos(np.clip(p2_rel[:, 1] / l2, -1, 1))
    th3 = np.arcsin(np.clip(p2_rel[:, 2] / (l2 * np.sin(th4)), -1, 1))
    return np.stack([th1, th2, th3, th4], axis=1)


def recover_exact(p1: np.ndarray, p2_rel: np.ndarray, l1: float = L1, l2: float = L2) -> np.ndarray:
    """atan2 recovery: the quadrant kept (th4 < 0, as ElbowRoll on the left arm)."""
    th2 = -np.arcsin(np.clip(p1[:, 0] / l1, -1, 1))
    th1 = np.arctan2(p1[:, 2], p1[:, 1])  # (y1, z1) = l1 cos th2 (cos th1, sin th1), cos th2 > 0 here
    th4 = -np.arccos(np.clip(p2_rel[:, 1] / l2, -1, 1))
    s4 = np.sin(th4)
    th3 = np.arctan2(p2_rel[:, 2] / s4, -p2_rel[:, 0] / s4)  # (x', z') = l2 sin th4 (-cos th3, sin th3)
    return np.stack([th1, th2, th3, th4], axis=1)


class Check(NamedTuple):
    """What the check measures on N random configurations."""

    n: int
    eq16_wrong: float  # fraction where eq. 16 as printed misses p1 by more than 1e-9 m
    printed_median: float  # median over configurations of the worst angle error, rad (NaN counted as inf)
    printed_nan: float  # fraction where the printed equations give NaN
    printed_within: float  # fraction with every angle within 0.01 rad
    corrected_median: float
    corrected_within: float
    past90: float  # fraction with |th1| or |th3| past 90 degrees
    corrected_within_past90: float  # of those, fraction the corrected arcsin gets within 0.01 rad
    exact_worst: float  # worst angle error of the atan2 recovery, rad


def _worst(est: np.ndarray, th: np.ndarray) -> np.ndarray:
    d = np.abs(est - th)  # not wrapped: a joint told -13 rad is not at -13 + 4 pi
    return np.where(np.isfinite(d).all(axis=1), d.max(axis=1), np.inf)


def check(n: int = 10_000, seed: int = 0) -> Check:
    """Run the three recoveries on ``n`` random in-limit configurations of the paper's chain."""
    model = arm_model("LArm")._replace(body=())
    rng = np.random.default_rng(seed)
    lo, hi = np.asarray(model.lower[:4]), np.asarray(model.upper[:4])
    th = lo + rng.random((n, 4)) * (hi - lo)
    p1, _, p2_rel = paper_points(th)
    wrong = np.linalg.norm(eq16_as_printed(th) - p1, axis=1) > 1e-9
    # The printed recovery starts from eq. 16's coordinates (what the paper's reader would derive).
    printed = _worst(recover_as_printed(eq16_as_printed(th), p2_rel), th)
    corrected = _worst(recover_corrected(p1, p2_rel), th)
    exact = _worst(recover_exact(p1, p2_rel), th)
    past = (np.abs(th[:, 0]) > np.pi / 2) | (np.abs(th[:, 2]) > np.pi / 2)
    return Check(
        n,
        float(wrong.mean()),
        float(np.median(printed)),
        float(np.mean(~np.isfinite(printed))),
        float(np.mean(printed <= 0.01)),
        float(np.median(corrected)),
        float(np.mean(corrected <= 0.01)),
        float(past.mean()),
        float(np.mean(corrected[past] <= 0.01)),
        float(exact.max()),
    )
