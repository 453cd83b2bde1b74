"""Running a solver loop: continuity, restarts from other seeds, and batches with compaction.

A solver loop is stateless between iterations (its state is the joint angles),
so a batch can be run in chunks of iterations, dropping finished targets
between chunks, with the same answers as one long run.

Continuity: an arm moves from where it is. A failed start restarts first from
the exact solution nearest to the start posture
(:func:`nao_ik.geometry.nearest.nearest`), then from the other seeds; and an
answer that moves some joint more than JUMP_SLACK further than that nearest
solution needs (the method converged on another swivel or branch, or a network
chose one) continues from the nearest solution instead, which is exact, so the
loop only confirms it. The papers' approximations (``own_answer``) keep their
own answers. The search for that nearest solution is skipped where its answer
is known: ``analytic``'s answer is it; and where the closed-form intervals
show that no solution changes the joints JUMP_SLACK less than the answer
(:func:`nao_ik.geometry.nearest.none_closer`, a third of the search's cost;
tried for the methods that iterate from the caller's start, whose answers
mostly lie next to it), the comparison would keep the answer anyway.

Every final answer then goes through the body check (:mod:`nao_ik.solvers.safety`):
clear of the arm model's body, or replaced by the nearest clear solution, or
reported with a reason.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np

from ..geometry.closest import closest
from ..geometry.nearest import Nearest, kept_searches, move_time, nearest, none_closer
from ..geometry.proof import shorter_exists
from ..geometry.scalar.search import BEAT
from ..geometry.spread import unit_spread
from ..geometry.swivel import swivel_seeds
from ..kinematics.chain import forward, forward_batch
from ..kinematics.ops import ARRAY, SCALAR
from ..model.arm import ArmModel
from .base import Run, SolverSpec
from .network import hold_loop
from .safety import check_batch, check_single

#: Restart postures tried, in order, when the caller's start fails: the
#: swivel configurations nearest to the limits, then joint-space seeds.
SWIVEL_RESTARTS = 4
JOINT_RESTARTS = 16

#: An answer farther than the closest attainable pose by more than this (metres) is replaced by it.
REFINE = 1e-8

#: Radians a joint may move beyond what the nearest exact solution needs (0.04: the nearest in move
#: time may move a joint up to 15 % more than the smallest raw change, as the velocities differ).
JUMP_SLACK = 0.04


def restart_seeds(model: ArmModel, wrist: float) -> list[tuple[float, ...]]:
    """The fixed restart postures of an arm (WristYaw at ``wrist``).

    A Halton sequence over the ranges of the four position joints: spread
    evenly, deterministic, the same for every call. Roll joints count from the
    body outward, so the two arms get mirror-image seeds.
    """
    seeds = []
    for row in unit_spread(JOINT_RESTARTS).tolist():
        q = []
        for i, f in enumerate(row):
            if model.is_right and i in (1, 3):
                f = 1.0 - f
            j = model.joints[i]
            q.append(j.lower + f * (j.upper - j.lower))
        seeds.append(tuple(q) + (wrist,))
    return seeds


def _restarts(spec: SolverSpec, model: ArmModel, targets: np.ndarray, wrist: np.ndarray) -> np.ndarray:
    """The method's own restart postures (if any), then the common ones."""
    common = restart_starts(model, targets, wrist)
    if spec.seeds is None:
        return common
    return np.concatenate([np.clip(spec.seeds(model, targets, wrist), model.lower, model.upper), common], axis=1)


def restart_starts(model: ArmModel, targets: np.ndarray, wrist: np.ndarray) -> np.ndarray:
    """Every restart posture for each target, in the order they are tried.

    Args:
        model: the arm.
        targets: (N, 3).
        wrist: (N,) the WristYaw each solve holds.

    Returns:
        (N, K, 5) postures inside the limits.
    """
    first = swivel_seeds(model, targets, wrist, SWIVEL_RESTARTS)
    joint = np.asarray(restart_seeds(model, 0.0))
    rest = np.broadcast_to(joint, (targets.shape[0],) + joint.shape).copy()
    rest[:, :, 4] = np.asarray(wrist)[:, None]
    return np.concatenate([first, rest], axis=1)


def reach_range(model: ArmModel) -> tuple[float, float]:
    """Smallest and largest shoulder-to-hand distance the limits allow (any WristYaw).

    Sampled on a grid of ElbowYaw, ElbowRoll and WristYaw (the distance does
    not depend on the shoulder joints), widened by 1 mm for the grid's step.
    """
    cached = _REACH.get(model)
    if cached is None:
        lo, hi = model.lower, model.upper
        g = np.meshgrid(*(np.linspace(lo[i], hi[i], 25) for i in (2, 3, 4)), indexing="ij")
        q = np.zeros((g[0].size, 5))
        q[:, 2], q[:, 3], q[:, 4] = (x.ravel() for x in g)
        d = np.linalg.norm(forward_batch(model, q) - np.asarray(model.shoulder), axis=1)
        cached = _REACH[model] = (max(float(d.min()) - 1e-3, 0.0), float(d.max()) + 1e-3)
    return cached


_REACH: dict = {}


def run_single(
    spec: SolverSpec,
    model: ArmModel,
    target: Sequence[float],
    q0: Sequence[float],
    tol: float,
    max_iter: int,
    continuous: bool = True,
) -> Run:
    """One target: :func:`_closest_single`, then the body check (:mod:`nao_ik.solvers.safety`)."""
    run = _closest_single(spec, model, target, q0, tol, max_iter, continuous)
    return check_single(spec, model, target, q0, run, tol)


def run_loop(spec: SolverSpec, model: ArmModel, target: Sequence[float], q0: Sequence[float], tol: float,
             max_iter: int) -> Run:  # fmt: skip
    """One target: the solver loop (and its restarts, where the spec has them) from ``q0``, nothing else.

    No continuity rule (the nearest exact solution as a seed), no closest attainable pose, no body
    check: the algorithm as its paper has it, which the report's "alone" variants measure.
    """
    return _single(spec, model, target, q0, tol, max_iter, continuous=False)


def run_loop_batch(spec: SolverSpec, model: ArmModel, targets: np.ndarray, q0: np.ndarray, tol: float,
                   max_iter: int) -> Run:  # fmt: skip
    """Many targets: :func:`run_loop`'s rule, vectorised."""
    return _batch(spec, model, targets, q0, tol, max_iter, continuous=False)


def _closest_single(
    spec: SolverSpec,
    model: ArmModel,
    target: Sequence[float],
    q0: Sequence[float],
    tol: float,
    max_iter: int,
    continuous: bool = True,
) -> Run:
    """One target: :func:`_single`, then the closest attainable pose where the answer stopped short of it."""
    run = _single(spec, model, target, q0, tol, max_iter, continuous)
    if spec.own_answer:
        return run._replace(shortfall=None)
    if run.error <= tol:
        return run._replace(shortfall=0.0)
    best = closest(model, target, q0)
    if run.error > best.distance + REFINE:
        return Run(list(best.angles), best.distance, run.iterations, None, 0.0, True, closest=best)
    return run._replace(shortfall=max(float(run.error) - best.distance, 0.0), closest=best)


def _single(
    spec: SolverSpec,
    model: ArmModel,
    target: Sequence[float],
    q0: Sequence[float],
    tol: float,
    max_iter: int,
    continuous: bool = True,
) -> Run:
    """One target: the caller's start, then the nearest exact solution and the restart seeds until one reaches.

    Returns:
        The best run (lowest error) with iterations summed over every start,
        on the start posture's side (see the module docstring).
    """
    if spec.start:
        # A caller already at the target keeps its posture (no needless jump).
        here = hold_loop(model, target, q0, tol, 0, SCALAR)
        if here.error <= tol:
            return here
    start, clamped = spec.start(model, target, q0, SCALAR) if spec.start else (q0, None)
    best = spec.loop(model, target, start, tol, max_iter, SCALAR)._replace(clamped=clamped)
    if spec.own_answer or not continuous:
        return _restarted(spec, model, target, q0, tol, max_iter, best)
    near = None
    if best.error <= tol:
        if spec.nearest or _jump(best.q, q0) <= JUMP_SLACK:
            return best
        if spec.start is None and none_closer(model, target, q0, _jump(best.q, q0) - JUMP_SLACK):
            # A method that iterated from the caller's start mostly lands next to it: where no solution
            # changes the joints JUMP_SLACK less, neither does the nearest, and the test below would keep
            # this answer too without the search for it (a network's proposal mostly is not the nearest).
            return best
        near = nearest(model, target, q0, SCALAR)
        if not near.found or _jump(best.q, q0) <= _jump(near.q, q0) + JUMP_SLACK:
            return best
    total = best.iterations
    if near is None and _far(model, np.asarray(target)[None, :])[0]:
        return best
    near = near or nearest(model, target, q0, SCALAR)
    first = best
    for seed in _seeds(spec, model, target, q0, near):
        run = spec.loop(model, target, seed, tol, max_iter, SCALAR)
        total += run.iterations
        if first.error <= tol:  # a jump replaced by the nearest exact solution
            best = run if run.error <= tol else first
            break
        if run.error < best.error:
            best = run
        if best.error <= tol:
            break
    return Run(best.q, best.error, total, best.clamped if best is first else None)


def _seeds(spec: SolverSpec, model: ArmModel, target: Sequence[float], q0: Sequence[float], near: Nearest) -> Iterator:
    """The nearest exact solution (if found), then the restart postures: made only if it does not reach
    (from an exact solution the loop mostly stops at once; the restarts cost a swivel sweep)."""
    if near.found:
        yield model.clamp(near.q)
    if spec.restarts:
        yield from _restarts(spec, model, np.asarray(target)[None, :], np.array([q0[4]]))[0].tolist()


def _restarted(spec: SolverSpec, model: ArmModel, target: Sequence[float], q0: Sequence[float], tol: float,
               max_iter: int, best: Run) -> Run:  # fmt: skip
    """Without the continuity rule: the restart seeds after a failed start, best run kept."""
    if best.error <= tol or not spec.restarts or _far(model, np.asarray(target)[None, :])[0]:
        return best
    total = best.iterations
    for seed in _restarts(spec, model, np.asarray(target)[None, :], np.array([q0[4]]))[0].tolist():
        run = spec.loop(model, target, seed, tol, max_iter, SCALAR)
        total += run.iterations
        if run.error < best.error:
            best = run
        if best.error <= tol:
            break
    return Run(best.q, best.error, total, best.clamped)


def _jump(q: Sequence[float], q0: Sequence[float]) -> float:
    """The largest joint change from q0 to q, radians."""
    return max(abs(a - b) for a, b in zip(q, q0))


#: Targets per block of a one-shot method's batch (the network methods and
#: the cell lookup): blocks this size keep numpy's temporaries in the
#: processor's caches (measured: about 1.5x the throughput of one
#: 100,000-target block). Iterative methods run as one block: their
#: compaction shrinks the arrays after a few iterations anyway, and each block
#: would pay the per-iteration overhead again.
BLOCK = 16384


def run_batch(
    spec: SolverSpec,
    model: ArmModel,
    targets: np.ndarray,
    q0: np.ndarray,
    tol: float,
    max_iter: int,
    continuous: bool = True,
) -> Run:
    """Many targets: :func:`_closest_batch`, then the body check (:mod:`nao_ik.solvers.safety`).

    The nearest-solution searches that the method's start ran are the body check's too, within this call only
    (:func:`nao_ik.geometry.nearest.kept_searches`).
    """
    with kept_searches():
        run = _closest_batch(spec, model, targets, q0, tol, max_iter, continuous)
        return check_batch(spec, model, targets, q0, run, tol)


def _closest_batch(
    spec: SolverSpec,
    model: ArmModel,
    targets: np.ndarray,
    q0: np.ndarray,
    tol: float,
    max_iter: int,
    continuous: bool = True,
) -> Run:
    """Many targets: :func:`_batch`, then the closest attainable pose where an answer stopped short of it."""
    run = _batch(spec, model, targets, q0, tol, max_iter, continuous)
    n = targets.shape[0]
    if spec.own_answer:
        return run._replace(shortfall=np.full(n, np.nan), refined=np.zeros(n, dtype=bool))
    q, err = np.array(run.q, dtype=float), np.array(run.error, dtype=float)
    shortfall, refined, found = np.zeros(n), np.zeros(n, dtype=bool), {}
    for i in np.flatnonzero(err > tol):  # unreachable targets: one exact (or many-start) search each
        best = found[i] = closest(model, targets[i], q0[i])
        if err[i] > best.distance + REFINE:
            q[i], err[i], refined[i] = best.angles, best.distance, True
        else:
            shortfall[i] = max(err[i] - best.distance, 0.0)
    clamped = None if run.clamped is None else np.where(refined[:, None], False, run.clamped)
    return Run(q, err, run.iterations, clamped, shortfall, refined, closest=found)


def _batch(
    spec: SolverSpec,
    model: ArmModel,
    targets: np.ndarray,
    q0: np.ndarray,
    tol: float,
    max_iter: int,
    continuous: bool = True,
) -> Run:
    """Many targets (N, 3) from starts (N, 5), vectorised across targets.

    Every target's answer depends on that target alone, so blocks of targets
    give the same answers as one call over all of them.

    Returns:
        A Run of arrays: q (N, 5), error (N,), iterations (N,).
    """
    n = targets.shape[0]
    if n <= BLOCK or not _one_shot(spec):
        return _run_block(spec, model, targets, q0, tol, max_iter, continuous)
    runs = [
        _run_block(spec, model, targets[i : i + BLOCK], q0[i : i + BLOCK], tol, max_iter, continuous)
        for i in range(0, n, BLOCK)
    ]
    clamped = None if runs[0].clamped is None else np.concatenate([r.clamped for r in runs])
    return Run(*(np.concatenate([getattr(r, f) for r in runs]) for f in ("q", "error", "iterations")), clamped)


def _one_shot(spec: SolverSpec) -> bool:
    """A method that answers in one evaluation: its start is its answer."""
    return spec.loop is hold_loop and not spec.restarts


def _at_start(model: ArmModel, targets: np.ndarray, q0: np.ndarray, tol: float) -> np.ndarray:
    """(N,) True where the start posture already has the hand on the target."""
    if (q0 == q0[0]).all():  # one start for all (the usual case): one FK
        return np.linalg.norm(targets - forward(model, q0[0]), axis=1) <= tol
    cols = [targets[:, k] for k in range(3)]
    return np.asarray(hold_loop(model, cols, [q0[:, i] for i in range(5)], tol, 0, ARRAY).error) <= tol


def _run_block(
    spec: SolverSpec, model: ArmModel, targets: np.ndarray, q0: np.ndarray, tol: float, max_iter: int, continuous: bool
) -> Run:
    """:func:`run_batch` on one block."""
    clamped = None
    cols = [targets[:, k] for k in range(3)]
    caller = q0
    if spec.start:
        start, flags = spec.start(model, cols, [q0[:, i] for i in range(5)], ARRAY)
        # A caller already at the target keeps its posture (no needless jump).
        here = _at_start(model, targets, q0, tol)
        q0 = np.where(here[:, None], q0, np.stack([np.broadcast_to(c, targets.shape[:1]) for c in start], axis=1))
        if flags is not None:
            clamped = np.stack([np.broadcast_to(c, targets.shape[:1]) for c in flags], axis=1) & ~here[:, None]
    if _one_shot(spec):
        err = np.asarray(hold_loop(model, cols, [q0[:, i] for i in range(5)], tol, 0, ARRAY).error)
        q, iters = q0, np.zeros(targets.shape[0], dtype=np.int64)
        if continuous and not spec.own_answer:
            q, err, clamped = _continuous(model, targets, caller, q0.copy(), err, clamped, tol)
        return Run(q, err, iters, clamped)
    q, err, iters = _chunked(spec, model, targets, q0.copy(), tol, max_iter)
    if continuous and spec.nearest:
        q, err = _proved(model, targets, caller, q, err, tol)
    elif continuous and not spec.own_answer:
        q, err, clamped = _continuous(model, targets, caller, q, err, clamped, tol)
    # The failures: every restart seed at once, one batch of targets x seeds.
    todo = np.flatnonzero((err > tol) & ~_far(model, targets)) if spec.restarts else np.zeros(0, dtype=int)
    if todo.size:
        starts = _restarts(spec, model, targets[todo], q0[todo, 4])
        k = starts.shape[1]
        qs = starts.reshape(-1, 5)
        qs, errs, used = _chunked(spec, model, np.repeat(targets[todo], k, axis=0), qs, tol, max_iter)
        errs = errs.reshape(todo.size, k)
        # A single solve stops at the first seed that reaches; count the same.
        ok = errs <= tol
        first = np.where(ok.any(axis=1), ok.argmax(axis=1), k - 1)
        pick = np.where(ok.any(axis=1), first, errs.argmin(axis=1))
        used = used.reshape(todo.size, k)
        iters[todo] += np.where(np.arange(k)[None, :] <= first[:, None], used, 0).sum(axis=1)
        rows = np.arange(todo.size) * k + pick
        better = errs[np.arange(todo.size), pick] < err[todo]
        q[todo[better]] = qs[rows[better]]
        err[todo[better]] = errs[np.arange(todo.size), pick][better]
    return Run(q, err, iters, clamped)


def _proved(model: ArmModel, targets: np.ndarray, caller: np.ndarray, q: np.ndarray, err: np.ndarray,
            tol: float) -> tuple:  # fmt: skip
    """``analytic``'s batch answers made the nearest, as a single solve's are (its answer is the nearest
    already, so :func:`_continuous` has nothing to compare): where the batch's proof
    (:func:`nao_ik.geometry.proof.shorter_exists`) finds a move shorter by BEAT, the target's answer is
    the single solve's (:func:`nao_ik.geometry.nearest.nearest`, which proves its own)."""
    rows = np.flatnonzero(err <= tol)
    if rows.size == 0:
        return q, err
    start = [caller[rows, j] for j in range(5)]
    took = move_time(model, [q[rows, j] for j in range(5)], start, ARRAY)
    for j in np.flatnonzero(shorter_exists(model, [targets[rows, k] for k in range(3)], start, took - BEAT)):
        i = rows[j]
        near = nearest(model, targets[i].tolist(), caller[i].tolist(), SCALAR)
        # Taken only where nearer: with the body the shorter moves the proof finds may all be blocked.
        if near.found and near.seconds < took[j]:
            q[i] = model.clamp(near.q)
            err[i] = float(np.linalg.norm(forward(model, q[i]) - targets[i]))
    return q, err


def _continuous(model: ArmModel, targets: np.ndarray, caller: np.ndarray, q: np.ndarray, err: np.ndarray,
                clamped: np.ndarray | None, tol: float) -> tuple:  # fmt: skip
    """The batch form of run_single's continuity rule: jumps and failures take the nearest exact solution."""
    jump = np.abs(q - caller).max(axis=1)
    reached = err <= tol
    rows = np.flatnonzero((reached & (jump > JUMP_SLACK)) | (~reached & ~_far(model, targets)))
    if rows.size == 0:
        return q, err, clamped
    near = nearest(model, [targets[rows, k] for k in range(3)], [caller[rows, i] for i in range(5)], ARRAY)
    nq = np.clip(np.stack(np.broadcast_arrays(*near.q), axis=1), model.lower, model.upper)
    nerr = np.linalg.norm(forward_batch(model, nq) - targets[rows], axis=1)
    njump = np.abs(nq - caller[rows]).max(axis=1)
    was = reached[rows]
    take = np.broadcast_to(near.found, rows.shape) & (
        (was & (jump[rows] > njump + JUMP_SLACK)) | (~was & (nerr < err[rows]))
    )
    q[rows[take]], err[rows[take]] = nq[take], nerr[take]
    if clamped is not None:
        clamped[rows[take]] = False
    return q, err, clamped


def _chunked(spec: SolverSpec, model: ArmModel, targets: np.ndarray, q: np.ndarray, tol: float, max_iter: int):
    n = targets.shape[0]
    err = np.full(n, np.inf)
    used = np.zeros(n, dtype=np.int64)
    active = np.arange(n)
    chunk = 8
    first = True  # a loop with no iterations still measures the error
    while active.size and (max_iter > 0 or first):
        first = False
        steps = min(chunk, max_iter)
        t = [targets[active, k] for k in range(3)]
        run = spec.loop(model, t, [q[active, i] for i in range(q.shape[1])], tol, steps, ARRAY)
        q[active] = np.stack([np.broadcast_to(c, active.shape) for c in run.q], axis=1)
        err[active] = run.error
        it = np.broadcast_to(run.iterations, active.shape)
        used[active] += it
        active = active[(it >= steps) & (run.error > tol) & (steps > 0)]
        max_iter -= steps
        chunk *= 2
    return q, err, used


def _far(model: ArmModel, targets: np.ndarray) -> np.ndarray:
    """Targets no start can reach, nearer or farther than the arm's reach: restarts are pointless."""
    d = np.linalg.norm(targets - np.asarray(model.shoulder), axis=1)
    near, far = reach_range(model)
    return (d < near) | (d > far)
