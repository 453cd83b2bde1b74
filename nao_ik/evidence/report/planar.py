"""Oyama & Tachi (2001) section 4.1 reproduced: the planar 2-DOF arm, its modular experts and learning curve.

The paper's arm (its eq. 10): L1 = 0.30 m, L2 = 0.25 m, th1 in [30, 150] deg,
th2 in [-150, 150] deg. As in the paper: experts are 4-layer networks (2-15-15-2,
linear input and output layers; the hidden activation, not stated there, is
tanh here), each pinned to its representative posture (eq. 1); the selector
takes the smallest error predicted by the complete forward model (MNCFM); the
reaching motion is the straight line from the start's hand position to the
target in steps of r_st = 0.02 m with pseudoinverse RMRC (eqs. 2-4), a solution
being precise within r_e = 5 mm; other experts are tried under r_eim = 0.3 m,
then the representative postures, then random postures (a success founds a new
expert); the discontinuity check of section 2.5 (r_jiz = 10^2) founds an expert where the selected one is
steep; the first expert's posture is (0, 0). Differences: the experts learn
with Adam on mini-batches of their recent solutions (the paper: back-
propagation), and the trials are far fewer than the paper's 5x10^7.

The single-network baseline is Jordan's forward-and-inverse modelling (distal
supervised learning): one 2-15-15-2 network trained to minimise
|x_d - f(Phi(x_d))|^2 through the (here exact) forward model, plus (L1 + L2)^2 times
the squared excursion outside the joint limits (without it the network answers
outside the limits for about a quarter of the targets).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

import numpy as np

from ...nn.mlp import MLP
from ...training.fit import Adam, gradients, init_mlp

L1, L2 = 0.30, 0.25
LO = np.radians([30.0, -150.0])
HI = np.radians([150.0, 150.0])
R_ST, R_E, R_EIM, R_JIZ = 0.02, 0.005, 0.3, 1e2
HIDDEN = (15, 15)
EXTRA_STEPS = 10  # RMRC steps at x_d after the straight line (k >= T in eq. 3)
SINGULAR = 1e-4  # |det J| (m^2) under which J^+ is taken as undefined (L1 L2 |sin th2| < 1e-4: th2 < 0.08 deg)
RANDOM_TRIES = 8
LR = 2e-3
PASSES = 50

#: The paper's figures for this arm (section 4.1, Fig. 2 and 3).
PAPER = {
    "rms": "1.50 mm after 5x10^7 trials (MNCFM)",
    "first": "always correct after 10^5 trials",
    "experts": "3",
    "single": "12.0 mm at best after 10^9 trials (10 initial states)",
    "fm": "MNFM a little less precise than MNCFM, 'not so much difference' (Fig. 2a-c, no figures)",
}


def fk(q: np.ndarray) -> np.ndarray:
    """Eq. 10 (x0 = y0 = 0): hand positions (N, 2) of postures (N, 2)."""
    a, b = q[:, 0], q[:, 0] + q[:, 1]
    return np.stack([L1 * np.cos(a) + L2 * np.cos(b), L1 * np.sin(a) + L2 * np.sin(b)], axis=1)


def jac(q: np.ndarray) -> np.ndarray:
    """Jacobians (N, 2, 2)."""
    a, b = q[:, 0], q[:, 0] + q[:, 1]
    j = np.empty((q.shape[0], 2, 2))
    j[:, 0, 0] = -L1 * np.sin(a) - L2 * np.sin(b)
    j[:, 0, 1] = -L2 * np.sin(b)
    j[:, 1, 0] = L1 * np.cos(a) + L2 * np.cos(b)
    j[:, 1, 1] = L2 * np.cos(b)
    return j


def random_postures(n: int, rng: np.random.Generator) -> np.ndarray:
    return LO + rng.random((n, 2)) * (HI - LO)


def reach(targets: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eqs. 2-4: straight line from f(start) to the target in r_st steps, RMRC with J^+ = J^T (J J^T)^-1.

    As in the paper, a reaching motion fails when it meets a singular Jacobian or a joint limit (it is not
    clamped and continued), and a start outside the limits fails at once.

    Returns:
        (postures (N, 2), precise (N,): within r_e of the target, never having failed).
    """
    q = np.array(starts, dtype=float)
    alive = np.all((q >= LO) & (q <= HI), axis=1)
    xs = fk(q)
    dist = np.linalg.norm(targets - xs, axis=1)
    steps = np.floor(dist / R_ST).astype(int) + 1  # eq. 2
    for k in range(int(steps.max()) + EXTRA_STEPS):
        frac = np.minimum((k + 1) / steps, 1.0)[:, None]
        xd = (1 - frac) * xs + frac * targets  # eq. 3
        j = jac(q)
        det = j[:, 0, 0] * j[:, 1, 1] - j[:, 0, 1] * j[:, 1, 0]
        alive &= np.abs(det) > SINGULAR
        safe = np.where(alive, det, 1.0)
        inv = np.stack([np.stack([j[:, 1, 1], -j[:, 0, 1]], -1), np.stack([-j[:, 1, 0], j[:, 0, 0]], -1)], -2)
        dq = np.einsum("nij,nj->ni", inv / safe[:, None, None], xd - fk(q))  # eq. 4 (J square: J^+ = J^-1)
        qn = q + dq
        alive &= np.all((qn >= LO) & (qn <= HI), axis=1)
        q = np.where(alive[:, None], qn, q)
    return q, alive & (np.linalg.norm(targets - fk(q), axis=1) < R_E)


def _net(rng: np.random.Generator, posture: np.ndarray) -> MLP:
    net = init_mlp([2, *HIDDEN, 2], ["tanh", "tanh", "linear"], rng, np.zeros(2), np.full(2, 1 / (L1 + L2)),
                   posture.copy(), np.full(2, math.pi))  # fmt: skip
    net.weights[-1][...] *= 0.01
    return net


def _pin(net: MLP, posture: np.ndarray) -> None:
    """Eq. 1: Phi(f(theta_r)) = theta_r, by the output bias."""
    miss = posture - net(fk(posture[None]))[0]
    net.biases[-1][...] += miss / net.out_scale


class Row(NamedTuple):
    """One evaluation of the learning curve."""

    trials: int
    experts: int
    rms_mm: float  # model alone (selected expert, clamped), Fig. 2a
    first: float  # first selection reaches, Fig. 2c
    single_rms_mm: float  # Jordan's single network after as many trials
    fm_rms_mm: float  # the learned forward model's RMS error (Fig. 2b); NaN with the complete one


def _select(nets: list, x: np.ndarray, fm: MLP | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every expert's answer, its predicted error (by the learned forward model ``fm``, or the complete one),
    and the experts in increasing order of predicted error."""
    outs = np.stack([np.clip(n(x), LO, HI) for n in nets])  # (E, N, 2)
    flat = outs.reshape(-1, 2)
    pos = fk(flat) if fm is None else fm(flat)
    p = np.linalg.norm(pos.reshape(outs.shape) - x[None], axis=2)
    return outs, p, np.argsort(p, axis=0)


def _evaluate(nets: list, single: MLP, fm: MLP | None, x: np.ndarray, q_eval: np.ndarray, trials: int) -> Row:
    outs, _, order = _select(nets, x, fm)
    cols = np.arange(x.shape[0])
    best = outs[order[0], cols]
    err = np.linalg.norm(fk(best) - x, axis=1)  # the true error of the selected answer
    _, ok = reach(x, best)
    err_single = np.linalg.norm(fk(np.clip(single(x), LO, HI)) - x, axis=1)
    fm_err = np.nan if fm is None else float(np.sqrt(np.mean(np.sum((fm(q_eval) - fk(q_eval)) ** 2, axis=1))) * 1e3)
    return Row(trials, len(nets), float(np.sqrt(np.mean(err**2)) * 1e3), float(ok.mean()),
               float(np.sqrt(np.mean(err_single**2)) * 1e3), fm_err)  # fmt: skip


def _distal_loss(net: MLP, x: np.ndarray):
    """Jordan's distal loss |x_d - f(Phi(x_d))|^2 and its gradient with respect to the raw output."""

    def loss(raw: np.ndarray, _y: np.ndarray) -> tuple[float, np.ndarray]:
        q = net.out_offset + raw * net.out_scale
        e = x - fk(q)
        over = q - np.clip(q, LO, HI)  # the joint limits as a penalty: the arm cannot leave them
        w = (L1 + L2) ** 2
        d_q = (-2.0 * np.einsum("nji,nj->ni", jac(q), e) + 2.0 * w * over) / x.shape[0]
        return float(np.mean(np.sum(e * e, axis=1) + w * np.sum(over * over, axis=1))), d_q * net.out_scale

    return loss


def learn(
    trials: int,
    batch: int = 100,
    evaluations: int = 1000,
    every: int | None = None,
    seed: int = 3,
    learned_fm: bool = False,
):
    """The modular model and Jordan's single network learned side by side, from untrained.

    Args:
        learned_fm: select experts with a forward model learned from the reaching motions' postures, with no
            previous learning (the paper's MNFM); False: the complete forward model (MNCFM).

    Returns:
        (learning curve rows, the experts' representative postures).
    """
    rng = np.random.default_rng(seed)
    q_eval = random_postures(evaluations, np.random.default_rng(seed + 1))
    x_eval = fk(q_eval)
    fm = None
    if learned_fm:
        fm = init_mlp([2, *HIDDEN, 2], ["tanh", "tanh", "linear"], rng, (LO + HI) / 2, np.full(2, 1 / math.pi),
                      np.zeros(2), np.full(2, L1 + L2))  # fmt: skip
        fm_opt = Adam(list(fm.weights) + list(fm.biases), lr=LR)
        fm_buffer: list[np.ndarray] = []
    first = np.zeros(2)  # the paper's first representative posture
    nets, postures = [_net(rng, first)], [first]
    _pin(nets[0], first)
    opts = [Adam(list(nets[0].weights) + list(nets[0].biases), lr=LR)]
    buffers: list[list[np.ndarray]] = [[]]
    single = _net(rng, (LO + HI) / 2)
    single_opt = Adam(list(single.weights) + list(single.biases), lr=LR)
    every = every or max(trials // 5, batch)
    rows = [_evaluate(nets, single, fm, x_eval, q_eval, 0)]
    done = 0
    while done < trials:
        x = fk(random_postures(batch, rng))
        n = x.shape[0]
        outs, p, order = _select(nets, x, fm)
        seen = []  # postures the reaching motions ended at: the forward model's samples
        cols = np.arange(n)
        solved = np.zeros(n, bool)
        theta = np.zeros((n, 2))
        owner = np.full(n, -1)
        for rank in range(len(nets)):  # steps (1), (2)
            who = order[rank]
            rows_ = np.flatnonzero(~solved & ((rank == 0) | (p[who, cols] < R_EIM)))
            if rows_.size:
                q, ok = reach(x[rows_], outs[who[rows_], rows_])
                seen.append(q)
                hit = rows_[ok]
                theta[hit], owner[hit], solved[hit] = q[ok], who[hit], True
        for i in rng.permutation(len(nets)):  # step (3)
            rows_ = np.flatnonzero(~solved)
            if not rows_.size:
                break
            q, ok = reach(x[rows_], np.tile(postures[i], (rows_.size, 1)))
            seen.append(q)
            hit = rows_[ok]
            theta[hit], owner[hit], solved[hit] = q[ok], i, True
        rows_ = np.flatnonzero(~solved)  # step (5): random postures; the first success founds an expert
        if rows_.size:
            q, ok = reach(np.repeat(x[rows_], RANDOM_TRIES, axis=0), random_postures(rows_.size * RANDOM_TRIES, rng))
            if ok.any():
                new = q[np.flatnonzero(ok)[0]]
                nets.append(_net(rng, new))
                _pin(nets[-1], new)
                postures.append(new)
                opts.append(Adam(list(nets[-1].weights) + list(nets[-1].biases), lr=LR))
                buffers.append([])
        # Section 2.5: where the selected expert is steep (|dPhi/dx| > r_jiz) at a target it solved, the first
        # such solution founds a new expert (one expert should not straddle two branches).
        steep = _steep(nets, x, order[0], owner)
        if steep is not None:
            new = theta[steep]
            nets.append(_net(rng, new))
            _pin(nets[-1], new)
            postures.append(new)
            opts.append(Adam(list(nets[-1].weights) + list(nets[-1].biases), lr=LR))
            buffers.append([])
            owner[steep] = len(nets) - 1
        for i in range(len(nets)):  # step (4): solutions train their expert
            mine = np.flatnonzero(owner == i)
            if mine.size:
                _train(nets[i], opts[i], buffers, i, x[mine], theta[mine], rng)
                _pin(nets[i], postures[i])
        if fm is not None:  # the forward model learns f(theta) of the postures the arm reached (Phi'_fm = f)
            q = np.concatenate(seen)
            fm_buffer = [np.concatenate(fm_buffer + [np.concatenate([q, fk(q)], axis=1)])[-20_000:]]
            _fit(fm, fm_opt, fm_buffer[0], q.shape[0], rng)
        for _ in range(PASSES):  # Jordan's single network on the same targets
            _, gw, gb = gradients(single, x * single.in_scale, x, _distal_loss(single, x))
            single_opt.update(gw + gb)
        done += n
        if done % every == 0 or done >= trials:
            rows.append(_evaluate(nets, single, fm, x_eval, q_eval, done))
    return rows, np.array(postures)


def _steep(nets: list, x: np.ndarray, first: np.ndarray, owner: np.ndarray) -> int | None:
    """The first target solved by its selected expert where that expert's |dPhi/dx| (Frobenius) > r_jiz."""
    h = 1e-4
    for i in np.unique(first):
        rows = np.flatnonzero((owner == i) & (first == i))
        if not rows.size:
            continue
        d = [(nets[i](x[rows] + h * e) - nets[i](x[rows] - h * e)) / (2 * h) for e in np.eye(2)]
        norm = np.sqrt(sum(np.sum(c * c, axis=1) for c in d))
        hit = rows[norm > R_JIZ]
        if hit.size:
            return int(hit[0])
    return None


def _train(net: MLP, opt: Adam, buffers: list, i: int, x: np.ndarray, y: np.ndarray, rng) -> None:
    buffers[i].append(np.concatenate([x, y], axis=1))
    data = np.concatenate(buffers[i])[-20_000:]
    buffers[i] = [data]
    _fit(net, opt, data, x.shape[0], rng)


def _fit(net: MLP, opt: Adam, data: np.ndarray, new: int, rng) -> None:
    """Adam steps on samples (input, output) drawn from the recent data: PASSES x ``new`` / 64 of them."""
    xs = (data[:, :2] - net.in_offset) * net.in_scale
    ys = (data[:, 2:] - net.out_offset) / net.out_scale
    for _ in range(max(1, PASSES * new // 64)):
        pick = rng.integers(0, data.shape[0], min(64, data.shape[0]))
        _, gw, gb = gradients(net, xs[pick], ys[pick])
        opt.update(gw + gb)


def table(rows: list[Row], learned: list[Row] | None = None) -> str:
    """The learning curve (complete forward model; and the learned one if given) beside the paper's figures."""
    reach_mm = (L1 + L2) * 1e3
    lines = [
        "| learning trials | experts | model alone RMS (mm) | as % of reach | first selection reaches | "
        "with a learned forward model: experts / RMS (mm) / first selection / forward model RMS (mm) | "
        "Jordan's single network RMS (mm) |",
        "|---|---|---|---|---|---|---|",
    ]
    for k, r in enumerate(rows):
        f = learned[k] if learned and k < len(learned) else None
        fcell = "" if f is None else f"{f.experts} / {f.rms_mm:.2f} / {100 * f.first:.1f} % / {f.fm_rms_mm:.1f}"
        lines.append(f"| {r.trials:,} | {r.experts} | {r.rms_mm:.2f} | {100 * r.rms_mm / reach_mm:.2f} % | "
                     f"{100 * r.first:.1f} % | {fcell} | {r.single_rms_mm:.1f} |")  # fmt: skip
    lines.append(f"| the paper | {PAPER['experts']} | {PAPER['rms']} | {100 * 1.5 / reach_mm:.2f} % | "
                 f"{PAPER['first']} | {PAPER['fm']} | {PAPER['single']} |")  # fmt: skip
    return "\n".join(lines)


def plot(rows: list[Row], postures: np.ndarray, out: Path) -> None:
    """planar.png: the learning curves (the paper's Fig. 2a, 2c, 2d) and the experts' representative postures."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    t = [max(r.trials, 1) for r in rows]
    fig, ax = plt.subplots(1, 3, figsize=(12, 3.6))
    ax[0].plot(t, [r.rms_mm for r in rows], "-o", ms=3, label="modular (MNCFM)")
    ax[0].plot(t, [r.single_rms_mm for r in rows], "-s", ms=3, label="single network (Jordan)")
    ax[0].axhline(1.5, color="grey", ls=":", label="paper, modular, 5x10^7 trials")
    ax[0].axhline(12.0, color="grey", ls="--", label="paper, single, 10^9 trials")
    ax[0].set(xscale="log", yscale="log", xlabel="learning trials", ylabel="RMS hand error (mm)", title="Fig. 2a")
    ax[0].legend(fontsize=6)
    ax[1].plot(t, [100 * r.first for r in rows], "-o", ms=3)
    ax[1].set(xscale="log", xlabel="learning trials", ylabel="first selection reaches (%)", title="Fig. 2c")
    ax[1].plot(t, [r.experts for r in rows], alpha=0)
    ax2 = ax[1].twinx()
    ax2.step(t, [r.experts for r in rows], "r-", where="post")
    ax2.set_ylabel("experts (red, Fig. 2d)")
    for q in postures:
        a, b = q[0], q[0] + q[1]
        e = (L1 * math.cos(a), L1 * math.sin(a))
        h = (e[0] + L2 * math.cos(b), e[1] + L2 * math.sin(b))
        ax[2].plot([0, e[0], h[0]], [0, e[1], h[1]], "-o", ms=3)
    ax[2].set(aspect="equal", title="representative postures (Fig. 4)", xlabel="x (m)", ylabel="y (m)")
    fig.tight_layout()
    fig.savefig(out / "planar.png", dpi=80)
    plt.close(fig)
