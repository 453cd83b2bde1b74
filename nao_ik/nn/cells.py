"""Kim & Tarokh's information-based IK on the NAO arm: the ``cells`` method.

Off-line: the posture space (hand position relative to the shoulder, x, y, z,
and the elbow swivel v, the arm's redundancy) is cut into D_x x D_y x D_z x
D_v cells. Random in-limit configurations are generated, their postures
computed by forward kinematics, and each is filed into its cell and its
solution branch (the ElbowRoll root, see :mod:`nao_ik.geometry.swivel`). For every
(cell, branch) with enough samples a model is fitted by least squares: the
paper's linear theta = A [x, y, z, v, 1] (its equation (4)), plus the products
of the offsets where the cell holds three times as many samples (see
:func:`build`: 5.0 -> 1.9 mm mean error). The parameters are
stored in one file, sorted by the paper's address (equation (5)),
``address = ((k_x D_y + k_y) D_z + k_z) D_v + k_v``.

On-line: the cell indices of the target (and of each swivel cell, or of the
swivel asked for) give addresses, a binary search finds the records, the
models give every branch's angles. ``cells`` returns the best of them (the
smallest hand error after clamping to the limits); :func:`cell_solutions`
returns them all. The exact counterpart is :func:`nao_ik.solve_all`.

The left arm's model serves the right arm by mirror symmetry.
"""

from __future__ import annotations

import math
import time
from functools import cache
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

from ..geometry.swivel import swivel_of
from ..kinematics.chain import forward_batch
from ..model.arm import MIRROR_ANGLES, MIRROR_TARGET, ArmModel, arm_model
from .data import random_configurations

DATA_FILE = Path(__file__).resolve().parent.parent / "data" / "cells.npz"
REACH = 0.222  # metres: the posture box is the shoulder +- REACH


class CellModel(NamedTuple):
    """The stored lookup table.

    Attributes:
        divisions: (D_x, D_y, D_z, D_v).
        addresses: (R,) sorted record addresses (equation (5)).
        branches: (R,) the ElbowRoll branch of each record.
        coefs: (R, 4, F) float32: angles = coefs @ [dx, dy, dz, dv, 1] (F = 5,
            the paper's linear model; F = 15 with the products of the offsets
            for ``degree`` 2), with the posture taken relative to the cell's
            centre in units of the cell size.
        samples: (R,) the configurations each model was fitted on.
        record: how the table was made.
    """

    divisions: tuple
    addresses: np.ndarray
    branches: np.ndarray
    coefs: np.ndarray
    samples: np.ndarray
    record: dict


def _indices(div: Sequence[int], rel: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Cell indices (N, 4) and the offsets (N, 4) from the cell centres, in cell units."""
    lo = np.array([-REACH, -REACH, -REACH, -math.pi])
    size = np.array([2 * REACH / div[0], 2 * REACH / div[1], 2 * REACH / div[2], 2 * math.pi / div[3]])
    p = np.concatenate([rel, v[:, None]], axis=1)
    f = (p - lo) / size
    k = np.floor(f).astype(np.int64)
    k[:, 3] %= div[3]
    return k, f - (np.floor(f) + 0.5)


def _features(off: np.ndarray, degree: int) -> np.ndarray:
    """The model's inputs from the offsets (N, 4): [off, 1] (linear) or also every product of two offsets."""
    cols = [off, np.ones((off.shape[0], 1))]
    if degree == 2:
        i, j = np.triu_indices(4)
        cols.append(off[:, i] * off[:, j])
    return np.concatenate(cols, axis=1)


def _address(div: Sequence[int], k: np.ndarray) -> np.ndarray:
    return ((k[:, 0] * div[1] + k[:, 1]) * div[2] + k[:, 2]) * div[3] + k[:, 3]


def build(
    samples: int = 3_000_000,
    divisions: tuple = (12, 12, 12, 12),
    min_samples: int = 12,
    seed: int = 5,
    degree: int = 2,
) -> CellModel:
    """Generate configurations, file them into cells and branches, fit one model per (cell, branch).

    ``degree`` 1 is the paper's linear model; 2 (shipped) adds the products
    of the offsets, 15 parameters per joint, where a cell has 3 x
    ``min_samples`` configurations (else the linear model, its quadratic
    terms zero). ``nao-ik train --which cells [--degree 1] --out DIR`` prints
    the figures: linear 5.0 mm mean error (std 6.4), quadratic 1.9 mm (std
    3.2), for 0.9 MB instead of 0.34 MB.
    """
    t0 = time.perf_counter()
    model = arm_model("LArm")
    q = random_configurations(model, samples, np.random.default_rng(seed))
    rel = forward_batch(model, q) - np.asarray(model.shoulder)
    v, branch = swivel_of(model, q)
    k, off = _indices(divisions, rel, v)
    inside = np.all((k[:, :3] >= 0) & (k[:, :3] < np.asarray(divisions[:3])), axis=1)
    key = _address(divisions, k[inside]) * 2 + branch[inside]
    order = np.argsort(key, kind="stable")
    key, x, y = key[order], off[inside][order], q[inside][order, :4]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    ends = np.r_[starts[1:], key.size]
    addresses, branches, coefs, counts = [], [], [], []
    width = _features(np.zeros((1, 4)), degree).shape[1]
    for s, e in zip(starts, ends):
        if e - s < min_samples:
            continue
        deg = degree if e - s >= 3 * min_samples else 1
        a = _features(x[s:e], deg)
        sol, *_ = np.linalg.lstsq(a, y[s:e], rcond=None)
        sol = np.r_[sol, np.zeros((width - sol.shape[0], 4))]
        addresses.append(key[s] // 2)
        branches.append(key[s] % 2)
        coefs.append(sol.T)
        counts.append(e - s)
    record = {
        "samples": samples,
        "divisions": list(divisions),
        "min_samples": min_samples,
        "seed": seed,
        "degree": degree,
        "records": len(addresses),
        "seconds": round(time.perf_counter() - t0, 1),
    }
    return CellModel(
        tuple(divisions),
        np.asarray(addresses, dtype=np.int64),
        np.asarray(branches, dtype=np.int8),
        np.asarray(coefs, dtype=np.float32),
        np.asarray(counts, dtype=np.int32),
        record,
    )


def save(cm: CellModel, path: Path = DATA_FILE) -> Path:
    """Write the table (one .npz, records sorted by address)."""
    import json

    Path(path).parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(
        path,
        divisions=np.asarray(cm.divisions),
        addresses=cm.addresses,
        branches=cm.branches,
        coefs=cm.coefs,
        samples=cm.samples,
        record=np.array(json.dumps(cm.record)),
    )
    return path


@cache
def load(path: Path = DATA_FILE) -> CellModel:
    """Read the shipped table once."""
    import json

    if not Path(path).exists():
        raise RuntimeError(f"the cell table is missing ({path}); run 'nao-ik train --which cells'")
    with np.load(path, allow_pickle=False) as z:
        return CellModel(
            tuple(int(d) for d in z["divisions"]),
            z["addresses"],
            z["branches"],
            z["coefs"],
            z["samples"],
            json.loads(str(z["record"])),
        )


class CellAnswers(NamedTuple):
    """Every (swivel cell, branch) answer for each target: angles (N, K, 4) raw, found (N, K) bool,
    swivel (K,) the swivel used, branch (K,)."""

    angles: np.ndarray
    found: np.ndarray
    swivel: np.ndarray
    branch: np.ndarray


def cell_solutions(
    model: ArmModel, targets: np.ndarray, swivel: float | None = None, table: Path = DATA_FILE
) -> CellAnswers:
    """The stored answers for targets (N, 3): at every swivel cell's centre (or at ``swivel``), both branches."""
    cm = load(table)
    div = cm.divisions
    right = model.is_right
    t = np.asarray(targets, dtype=float) * (np.asarray(MIRROR_TARGET) if right else 1.0)
    rel = t - np.asarray(arm_model("LArm").shoulder)
    if swivel is None:
        vs = -math.pi + (np.arange(div[3]) + 0.5) * 2 * math.pi / div[3]
    else:
        vs = np.array([-swivel if right else swivel], dtype=float)
    n, kv = rel.shape[0], vs.size
    cand_v = np.tile(np.repeat(vs, 2), n)
    cand_b = np.tile(np.tile([0, 1], kv), n)
    k, off = _indices(div, np.repeat(rel, 2 * kv, axis=0), cand_v)
    valid = np.all((k[:, :3] >= 0) & (k[:, :3] < np.asarray(div[:3])), axis=1)
    key = _address(div, np.where(valid[:, None], k, 0)) * 2 + cand_b
    keys = cm.addresses * 2 + cm.branches  # sorted: addresses ascending, branch within
    pos = np.clip(np.searchsorted(keys, key), 0, keys.size - 1)  # the paper's binary search
    found = valid & (keys[pos] == key)
    x = _features(off, cm.record.get("degree", 1))
    angles = np.einsum("nij,nj->ni", cm.coefs[pos].astype(float), x)
    if right:
        angles = angles * np.asarray(MIRROR_ANGLES[:4])
    shape = (n, 2 * kv)
    swivels = np.repeat(-vs if right else vs, 2)
    return CellAnswers(angles.reshape(n, 2 * kv, 4), found.reshape(shape), swivels, np.tile([0, 1], kv))


def best(
    model: ArmModel, targets: np.ndarray, wrist: np.ndarray, table: Path = DATA_FILE
) -> tuple[np.ndarray, np.ndarray]:
    """``cells``' answer: of every stored answer, the one whose clamped angles put the hand nearest.

    Returns:
        (raw angles (N, 5) of the pick, unclamped; found (N,): False where no cell has a model).
    """
    ans = cell_solutions(model, targets, table=table)
    n, k = ans.found.shape
    q = np.concatenate([ans.angles, np.broadcast_to(np.asarray(wrist, dtype=float)[:, None, None], (n, k, 1))], axis=2)
    clamped = np.clip(q, model.lower, model.upper).reshape(-1, 5)
    err = np.linalg.norm(forward_batch(model, clamped).reshape(n, k, 3) - targets[:, None, :], axis=2)
    err = np.where(ans.found, err, np.inf)
    pick = err.argmin(axis=1)
    found = ans.found.any(axis=1)
    raw = q[np.arange(n), pick]
    raw[~found] = np.asarray(model.neutral)[None, :]
    raw[~found, 4] = np.asarray(wrist, dtype=float)[~found] if np.ndim(wrist) else wrist
    return raw, found


def figures(queries: int = 1000, seed: int = 99, table: Path = DATA_FILE) -> str:
    """The paper's Table 6a for the NAO arm, measured: a markdown table."""
    cm = load(table)
    model = arm_model("LArm")
    per_cell = np.bincount(np.unique(cm.addresses, return_counts=True)[1])
    q = random_configurations(model, queries, np.random.default_rng(seed))
    targets = forward_batch(model, q)
    v, branch = swivel_of(model, q)
    rows = []
    for b in (0, 1):
        sel = branch == b
        if not sel.any():
            continue
        errs, found = [], 0
        for t, vv in zip(targets[sel], v[sel]):
            ans = cell_solutions(model, t[None, :], swivel=float(vv), table=table)
            k = np.flatnonzero(ans.branch == b)[0]
            if ans.found[0, k]:
                found += 1
                qq = np.r_[np.clip(ans.angles[0, k], model.lower[:4], model.upper[:4]), 0.0]
                errs.append(np.linalg.norm(forward_batch(model, qq[None, :])[0] - t) * 1e3)
        errs = np.array(errs)
        rows.append(
            f"| {b} | {int(sel.sum())} | {100 * found / sel.sum():.1f} % | {errs.mean():.2f} | {errs.std():.2f} | "
            f"{np.percentile(errs, 99):.2f} |"
        )
    t1 = targets[:1]
    t0 = time.perf_counter()
    for _ in range(50):
        best(model, t1, np.zeros(1), table)
    single = (time.perf_counter() - t0) / 50 * 1e6
    t0 = time.perf_counter()
    best(model, targets, np.zeros(len(targets)), table)
    batch = (time.perf_counter() - t0) / len(targets) * 1e6
    size = Path(table).stat().st_size / 1e3
    cells_line = ", ".join(f"{n} cells with {k} solution(s)" for k, n in enumerate(per_cell) if k and n)
    return "\n".join(
        [
            f"Cells: {cm.divisions[0]} x {cm.divisions[1]} x {cm.divisions[2]} positions (about "
            f"{2 * REACH / cm.divisions[0] * 100:.1f} cm) x {cm.divisions[3]} swivel sectors "
            f"({360 // cm.divisions[3]} degrees); {len(cm.addresses)} models; {cells_line}; "
            f"file {size:.0f} kB; fitted on {cm.record['samples']:,} configurations.",
            "",
            "| branch | queries | success (a model for the query's cell) | mean error (mm) | std (mm) | p99 (mm) |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
            f"On-line time: {single:.0f} µs for one query (every swivel sector, both branches), "
            f"{batch:.1f} µs per query in a batch of {len(targets)}.",
        ]
    )
