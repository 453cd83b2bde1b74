"""Kim & Tarokh's full posture on NAO's arm, WristYaw free: position cells, then the wrist's orientation cells.

The paper's limb has a spherical wrist, so its position part models the wrist
centre from (x, y, z, v) and its orientation part models the wrist angles from
the first four angles and the hand's orientation (alpha, beta, gamma): eq. 7
(linear in the four angles, quadratic in the orientation angles), in 7-D cells
of 20 degrees (angles) and 45 degrees (orientation). NAO's arm has one wrist
joint, WristYaw, which turns about the forearm; the wrist point (the WristYaw
origin) depends on the first four joints only, exactly as in the paper. So, on
NAO:

- position: the wrist point relative to the shoulder and the swivel v, in the
  shipped table's 12^4 cells and ElbowRoll branches; the paper's linear model
  (eq. 4) and its network model (eqs. 8-12, N = 5);
- orientation: WristYaw from (ShoulderPitch, ShoulderRoll, ElbowYaw,
  ElbowRoll, wx, wy, wz) (ALMotion's position6D angles) by eq. 7, or by a 7-5-1
  network (the paper's orientation network);
- the query: a random in-limit configuration of all five joints (its posture
  is reachable, its swivel and branch given, as the paper's queries are); its
  answer: the position model's four angles (clamped to the limits), then the
  orientation model's WristYaw from those four angles and the asked
  orientation. The hand's position and orientation errors are then measured
  by forward kinematics. The orientation model is also measured alone, from
  the query's true four angles.

Models are fitted only for the cells the queries visit (cells share nothing,
so the answers are those of a full table); the storage a full table would need
is counted from every cell with enough samples.
"""

from __future__ import annotations

import math
import time
from typing import NamedTuple

import numpy as np

from ...geometry.swivel import swivel_of
from ...kinematics.chain import chain
from ...kinematics.ops import ARRAY
from ...model.arm import arm_model
from ...nn import cells
from . import kt_net as report_kt_net

POS_DIV = (12, 12, 12, 12)
ANGLE_CELL = math.radians(20.0)
ORIENT_CELL = math.radians(45.0)
MIN_SAMPLES = 12  # a position model needs this many samples (the shipped table's rule)
MIN_ORIENT = 20  # eq. 7 has 14 parameters
#: The paper's anthropomorphic arm (622 mm): Tables 6a/6b/7a/7b, single-solution rows, and Table 8.
PAPER = {
    "poly position": (1.97, 1.32, 0.1),
    "poly orientation": (2.41, 2.07, 0.3),
    "net position": (0.87, 1.32, 0.7),
    "net orientation": (1.14, 0.66, 0.9),
}
PAPER_REACH_MM = 622.0


class Postures(NamedTuple):
    """Postures of configurations (N, 5): wrist point relative to the shoulder (N, 3), swivel, branch,
    orientation angles (N, 3) (wx, wy, wz), rotation (N, 3, 3), hand point (N, 3)."""

    wrist: np.ndarray
    swivel: np.ndarray
    branch: np.ndarray
    euler: np.ndarray
    rotation: np.ndarray
    hand: np.ndarray


def postures(q: np.ndarray) -> Postures:
    """Forward kinematics of the left arm (no body) in the paper's posture coordinates."""
    model = arm_model("LArm")._replace(body=())
    wrist_model = model._replace(hand_offset=(0.0, 0.0, 0.0))
    ch = chain(model, [q[:, i] for i in range(5)], ARRAY)
    rot = np.stack([np.stack(c, axis=1) for c in ch.rotation], axis=2)  # columns -> (N, 3, 3)
    hand = np.stack(ch.hand, axis=1)
    wrist = np.stack(ch.origins[4], axis=1) - np.asarray(model.shoulder)
    v, branch = swivel_of(wrist_model, q)
    return Postures(wrist, v, branch, euler_angles(rot), rot, hand)


def euler_angles(r: np.ndarray) -> np.ndarray:
    """(wx, wy, wz) with Rz(wz) Ry(wy) Rx(wx) = r, for rotations (N, 3, 3)."""
    wy = np.arctan2(-r[:, 2, 0], np.hypot(r[:, 0, 0], r[:, 1, 0]))
    return np.stack([np.arctan2(r[:, 2, 1], r[:, 2, 2]), wy, np.arctan2(r[:, 1, 0], r[:, 0, 0])], axis=1)


def _orient_div() -> tuple:
    model = arm_model("LArm")
    joints = [math.ceil((model.upper[i] - model.lower[i]) / ANGLE_CELL) for i in range(4)]
    return (*joints, 8, 4, 8)


def orient_cells(q4: np.ndarray, euler: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """7-D cell keys (N,) and offsets from the cell centres in cell units (N, 7) of (angles, orientation)."""
    model = arm_model("LArm")
    div = _orient_div()
    lo = np.r_[np.asarray(model.lower[:4]), -math.pi, -math.pi / 2, -math.pi]
    size = np.r_[[ANGLE_CELL] * 4, [ORIENT_CELL] * 3]
    f = (np.concatenate([q4, euler], axis=1) - lo) / size
    k = np.clip(np.floor(f).astype(np.int64), 0, np.asarray(div) - 1)
    key = np.zeros(len(k), dtype=np.int64)
    for i, d in enumerate(div):
        key = key * d + k[:, i]
    return key, f - (k + 0.5)


def pos_cells(p: Postures) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position keys (address * 2 + branch), offsets (N, 4) in cell units, and inside-the-box flags."""
    k, off = cells._indices(POS_DIV, p.wrist, p.swivel)
    inside = np.all((k[:, :3] >= 0) & (k[:, :3] < np.asarray(POS_DIV[:3])), axis=1)
    key = cells._address(POS_DIV, np.where(inside[:, None], k, 0)) * 2 + p.branch
    return np.where(inside, key, -1), off, inside


def eq7_features(q4: np.ndarray, off: np.ndarray) -> np.ndarray:
    """Eq. 7's terms: the four angles, the orientation offsets, their products and squares, and 1 (N, 14)."""
    a, b, c = off[:, 4], off[:, 5], off[:, 6]
    return np.column_stack([q4, a, b, c, a * b, a * c, b * c, a * a, b * b, c * c, np.ones(len(q4))])


def _configs(rng: np.random.Generator, n: int) -> np.ndarray:
    model = arm_model("LArm")
    return rng.uniform(model.lower, model.upper, size=(n, 5))


def _gather(samples: int, seed: int, want: np.ndarray, keyer, space: int, chunk: int = 500_000) -> tuple:
    """Generate ``samples`` configurations (same stream for a seed), count every cell's samples, and keep
    those in the cells ``want``. ``keyer(q, postures) -> keys`` (N,), -1 outside."""
    rng = np.random.default_rng(seed)
    counts = np.zeros(space, dtype=np.int64)
    kept_q, kept_k = [], []
    for start in range(0, samples, chunk):
        q = _configs(rng, min(chunk, samples - start))
        key = keyer(q, postures(q))
        ok = key >= 0
        counts += np.bincount(key[ok], minlength=space)
        sel = ok & np.isin(key, want)
        kept_q.append(q[sel])
        kept_k.append(key[sel])
    return np.concatenate(kept_q), np.concatenate(kept_k), counts


def _groups(keys: np.ndarray, want_keys: np.ndarray) -> np.ndarray:
    """Index of each key in the sorted unique ``want_keys`` (-1 when absent)."""
    pos = np.clip(np.searchsorted(want_keys, keys), 0, max(want_keys.size - 1, 0))
    return np.where((want_keys.size > 0) & (want_keys[pos] == keys), pos, -1)


def _lstsq(groups: np.ndarray, a: np.ndarray, y: np.ndarray, n: int, minimum: int) -> tuple:
    """One least-squares fit per group: coefficients (n, F, K) and fitted flags (n,)."""
    coefs = np.zeros((n, a.shape[1], y.shape[1]))
    ok = np.zeros(n, dtype=bool)
    order = np.argsort(groups, kind="stable")
    gs = groups[order]
    starts = np.searchsorted(gs, np.arange(n + 1))
    for g in range(n):
        s, e = starts[g], starts[g + 1]
        if e - s >= minimum:
            coefs[g] = np.linalg.lstsq(a[order[s:e]], y[order[s:e]], rcond=None)[0]
            ok[g] = True
    return coefs, ok


class Part(NamedTuple):
    """One model's figures."""

    name: str
    success: float  # fraction of queries with a model for their cell(s)
    mean: float  # error of the part (mm for position, degrees for orientation)
    std: float
    p99: float
    records: int  # cells (and solutions) a full table would hold
    kilobytes: float  # float32 storage of a full table
    online_us: float  # the lookup and the model, per query, numpy batch


class KtPose(NamedTuple):
    """The measured tables."""

    queries: int
    samples: int
    parts: list
    chained: list  # (model, success, hand mm mean, p99, orientation deg mean, p99)


def _stats(err: np.ndarray, ok: np.ndarray) -> tuple[float, float, float]:
    e = err[ok]
    if not e.size:
        return math.nan, math.nan, math.nan
    return float(e.mean()), float(e.std()), float(np.percentile(e, 99))


def _timed(fn, reps: int = 3) -> float:
    best = math.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def measure(samples: int = 6_000_000, queries: int = 1000, seed: int = 7, epochs: int = 1500) -> KtPose:
    """Fit both models for both parts on the cells the queries visit, and measure them.

    Args:
        samples: random configurations per pass (the paper does not give its count).
        queries: random in-limit configurations to answer.
        seed: seed of the samples (the queries use seed + 1).
        epochs: Adam steps of the networks.

    Returns:
        The :class:`KtPose` figures.
    """
    model = arm_model("LArm")._replace(body=())
    lower, upper = np.asarray(model.lower), np.asarray(model.upper)
    qq = _configs(np.random.default_rng(seed + 1), queries)
    pq = postures(qq)
    kq, offq, _ = pos_cells(pq)
    want = np.unique(kq[kq >= 0])

    def pos_keyer(q, p):
        return pos_cells(p)[0]

    sq, sk, pcounts = _gather(samples, seed, want, pos_keyer, int(np.prod(POS_DIV)) * 2)
    ps = postures(sq)
    _, soff, _ = pos_cells(ps)
    grp = _groups(sk, want)
    ones = np.ones((len(sq), 1))
    pcoef, pok = _lstsq(grp, np.hstack([soff, ones]), sq[:, :4], want.size, MIN_SAMPLES)
    xs = np.concatenate([ps.wrist, ps.swivel[:, None]], axis=1)
    xp, yp, mask = report_kt_net.pad(grp, xs, sq[:, :4], cap=256)
    pnets = report_kt_net.train(xp, yp, mask, epochs=epochs, seed=seed)

    gq = _groups(kq, want)
    found = (gq >= 0) & pok[np.maximum(gq, 0)]
    g0 = np.maximum(gq, 0)
    xq = np.concatenate([pq.wrist, pq.swivel[:, None]], axis=1)
    pred = {
        "poly": np.einsum("qf,qfk->qk", np.hstack([offq, np.ones((queries, 1))]), pcoef[g0]),
        "net": report_kt_net.evaluate(pnets, g0, xq),
    }
    pred = {k: np.clip(v, lower[:4], upper[:4]) for k, v in pred.items()}

    # Orientation cells needed: at the true four angles (the model alone) and at each position model's answer.
    okeys = {k: orient_cells(v, pq.euler) for k, v in [("true", qq[:, :4]), *pred.items()]}
    owant = np.unique(np.concatenate([k for k, _ in okeys.values()]))

    def ori_keyer(q, p):
        return orient_cells(q[:, :4], p.euler)[0]

    space = int(np.prod(_orient_div()))
    oq, ok_, ocounts = _gather(samples, seed + 2, owant, ori_keyer, space)
    op = postures(oq)
    _, ooff = orient_cells(oq[:, :4], op.euler)
    ogrp = _groups(ok_, owant)
    ocoef, ook = _lstsq(ogrp, eq7_features(oq[:, :4], ooff), oq[:, 4:5], owant.size, MIN_ORIENT)
    xo = np.concatenate([oq[:, :4], op.euler], axis=1)
    xp, yp, mask = report_kt_net.pad(ogrp, xo, oq[:, 4:5], cap=256)
    onets = report_kt_net.train(xp, yp, mask, epochs=epochs, seed=seed + 2)

    def wrist_angle(kind: str, q4: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        key, off = orient_cells(q4, pq.euler)
        g = _groups(key, owant)
        g0 = np.maximum(g, 0)
        if kind == "poly":
            has = (g >= 0) & ook[g0]
            w = np.einsum("qf,qf->q", eq7_features(q4, off), ocoef[g0, :, 0])
        else:
            has = (g >= 0) & (np.bincount(ogrp, minlength=owant.size)[g0] >= MIN_ORIENT)
            w = report_kt_net.evaluate(onets, g0, np.concatenate([q4, pq.euler], axis=1))[:, 0]
        return np.clip(w, lower[4], upper[4]), has

    net_found = found & (np.bincount(grp, minlength=want.size)[g0] >= MIN_SAMPLES)
    parts, chained = [], []
    for kind, pfound, pcount, ocount, psize, osize in [
        ("poly", found, pcounts, ocounts, 20, 14),
        ("net", net_found, pcounts, ocounts, pnets.parameters(), onets.parameters()),
    ]:
        q5 = np.c_[pred[kind], qq[:, 4]]
        perr = np.linalg.norm(postures(q5).wrist - pq.wrist, axis=1) * 1e3
        prec = int(np.sum(pcount >= MIN_SAMPLES))
        orec = int(np.sum(ocount >= MIN_ORIENT))
        ptime = _timed(lambda kind=kind: _position_lookup(kind, want, pcoef, pnets, kq, offq, xq))
        parts.append(Part(f"{kind} position", float(pfound.mean()), *_stats(perr, pfound), prec,
                          prec * psize * 4 / 1e3, ptime / queries * 1e6))  # fmt: skip
        w_true, has_true = wrist_angle(kind, qq[:, :4])
        oerr = _rotation_error(postures(np.c_[qq[:, :4], w_true]).rotation, pq.rotation)
        otime = _timed(lambda kind=kind: wrist_angle(kind, qq[:, :4]))
        parts.append(Part(f"{kind} orientation", float(has_true.mean()), *_stats(oerr, has_true), orec,
                          orec * osize * 4 / 1e3, otime / queries * 1e6))  # fmt: skip
        w, has = wrist_angle(kind, pred[kind])
        full = postures(np.c_[pred[kind], w])
        both = pfound & has
        herr = np.linalg.norm(full.hand - pq.hand, axis=1) * 1e3
        rerr = _rotation_error(full.rotation, pq.rotation)
        hm, _, hp = _stats(herr, both)
        rm, _, rp = _stats(rerr, both)
        chained.append((kind, float(both.mean()), hm, hp, rm, rp))
    return KtPose(queries, samples, parts, chained)


def _position_lookup(kind, want, pcoef, pnets, kq, offq, xq) -> np.ndarray:
    """The position on-line step for all queries: binary search, then the cell's model."""
    g = np.maximum(_groups(kq, want), 0)
    if kind == "poly":
        return np.einsum("qf,qfk->qk", np.hstack([offq, np.ones((len(kq), 1))]), pcoef[g])
    return report_kt_net.evaluate(pnets, g, xq)


def _rotation_error(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Angle (degrees) of the rotation between two batches of rotations (N, 3, 3)."""
    tr = np.einsum("nij,nij->n", a, b)
    return np.degrees(np.arccos(np.clip((tr - 1.0) / 2.0, -1.0, 1.0)))


def wrist_reach_mm() -> float:
    """The longest shoulder-to-wrist distance the limits allow, mm (the posture the position cells model)."""
    from ...solvers.pipeline import reach_range

    model = arm_model("LArm")._replace(body=(), hand_offset=(0.0, 0.0, 0.0))
    return reach_range(model)[1] * 1e3 - 1.0  # reach_range widens by 1 mm for its grid


def text(r: KtPose) -> str:
    """The tables (the paper's 6a/6b, 7a/7b and 8 where NAO's arm allows) and the sentences where it does not."""
    reach = wrist_reach_mm()
    rows = []
    for p in r.parts:
        ref = PAPER[p.name]
        unit = "mm" if "position" in p.name else "deg"
        frac = f" ({100 * p.mean / reach:.2f} % of reach)" if unit == "mm" else ""
        pfrac = f" ({100 * ref[0] / PAPER_REACH_MM:.2f} %)" if unit == "mm" else ""
        rows.append(
            f"| {p.name} | {100 * p.success:.1f} % | {p.mean:.2f} ± {p.std:.2f} {unit}{frac} | {p.p99:.2f} | "
            f"{p.records:,} | {p.kilobytes / 1e3:.2f} MB | {p.online_us:.2f} µs | {ref[0]} ± {ref[1]} {unit}{pfrac} | "
            f"{ref[2]} µs |"
        )
    chained = [
        f"| {k} | {100 * s:.1f} % | {hm:.2f} mm (p99 {hp:.1f}) | {rm:.2f}° (p99 {rp:.1f}) |"
        for k, s, hm, hp, rm, rp in r.chained
    ]
    poly_p, poly_o, net_p, net_o = r.parts

    def than(a: Part, b: Part) -> str:
        return "better" if a.mean < b.mean else "worse"

    alone = min(poly_o.mean, net_o.mean)
    chain_o = min(c[4] for c in r.chained)
    return "\n".join(
        [
            f"{r.queries:,} random in-limit configurations of all five joints (WristYaw free); {r.samples:,} random "
            f"configurations per model family for the fits; position cells {' x '.join(map(str, POS_DIV))} "
            "(wrist point and swivel), orientation cells of 20 degrees (the four angles) and 45 degrees (wx, wy, "
            "wz), the paper's sizes. Success: the query's cell (and branch) holds a model. Errors by forward "
            "kinematics: the wrist point (position part, as the paper's wrist centre), the hand's rotation angle "
            "(orientation part, from the query's true four angles). Times: the lookup and the model, numpy on all "
            "queries at once, per query. The networks learn from at most 256 samples a cell, the polynomials "
            "from all of them.",
            "",
            "| model (NAO) | success | mean ± std error | p99 | records (full table) | storage (float32) | on-line "
            "| the paper (row 1, 622 mm arm) | the paper's on-line (Table 8) |",
            "|---|---|---|---|---|---|---|---|---|",
            *rows,
            "",
            "The whole posture, chained as the paper's on-line phase runs: the position model's four angles "
            "(clamped to the limits), then WristYaw from the orientation model at those angles; hand position and "
            "orientation errors of the result:",
            "",
            "| model | both cells hold a model | hand position error, mean | orientation error, mean |",
            "|---|---|---|---|",
            *chained,
            "",
            f"What NAO's arm allows and what it does not. Its wrist is one joint, so eq. 7 models one angle and "
            "the wrist adds no solution: the paper's Tables 6b/7b rows 5-8 (the second wrist solution) and its "
            "eight-solution count have no counterpart, and the table above gives one row per model, not per "
            "solution count. A 5-DOF arm cannot take an arbitrary 6-D posture, so the queries are postures of "
            "random configurations (reachable by construction), as the paper's are. Position errors are "
            f"compared as fractions of the reach (NAO's shoulder-to-wrist {reach:.0f} mm against the paper's "
            "622 mm arm). The network cell model (eqs. 8-12, 5 tanh units, trained per cell with Adam instead of "
            f"the paper's backpropagation) is {than(net_p, poly_p)} than eq. 4 for position and {than(net_o, poly_o)} "
            "than eq. 7 for orientation here (the paper finds it better for both). Chained, the orientation error "
            f"is {chain_o:.2f}° at best against {alone:.2f}° for the orientation model alone: the position "
            "model's error in the four angles turns the forearm, and with it the hand, and one wrist joint cannot "
            "undo that; the paper's Tables 6b/7b report the orientation part alone. The paper's times are C on a "
            "3.0 GHz "
            "Pentium 4 for all solutions of a posture; these are numpy per query in a batch (one branch), so they "
            "compare in order of magnitude only.",
        ]
    )
