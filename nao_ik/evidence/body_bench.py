"""``nao-ik bench``'s body table: answers through NAO's body, targets the body makes unreachable, the check's cost.

Three parts, on the benchmark's targets (:func:`nao_ik.evidence.protocol.sample_targets`,
from the neutral posture):

1. the answers of ikpy and of the ALMotion-style pseudoinverse
   (:mod:`nao_ik.evidence.report.build`; the left arm, the first N targets) whose links
   overlap the body (:mod:`nao_ik.model.body`), all and among those that reach;
2. per body part, the targets ``analytic`` answers ``reached: false`` with
   ``reason`` ``"collision: <part>"`` (only configurations through the body
   reach them);
3. the body check's cost: ``analytic``'s median single solve, its batch
   throughput and tracking steps with the body and without it (``body=()``),
   taking turns in the same run, and their ratios (``reachTo``'s round trip with
   the service's checks and without: :func:`nao_ik.evidence.latency.print_body_cost`).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from typing import Sequence

import numpy as np

from ..api import position as api
from ..geometry.collision import clearance_batch
from ..kinematics.chain import forward_batch
from ..model.arm import arm_model
from ..model.body import PARTS


def print_body(arms: Sequence[str], targets: int, seed: int, alternatives: int, out=sys.stdout,
               single: int = 300) -> None:  # fmt: skip
    """Print the three parts of the module docstring.

    Args:
        arms: the arms.
        targets: benchmark targets per arm (as the main table).
        seed: the benchmark's seed.
        alternatives: targets for ikpy and the pseudoinverse (the first ones of the left arm's).
        out: where to print.
        single: targets timed as single solves for the cost.
    """
    print_through(targets, seed, alternatives, out)
    print_unreachable(arms, targets, seed, out)
    print_cost(arms, targets, seed, out, single)


def print_through(targets: int, seed: int, alternatives: int, out=sys.stdout) -> None:
    """Part 1: ikpy's and the ALMotion-style pseudoinverse's answers through the body."""
    from .alternatives import ALMOTION, ARM, IKPY, almotion_pinv, ikpy_arm
    from .protocol import sample_targets

    print(file=out)
    print("Through the body: answers whose links overlap NAO's body (nao_ik.model.body), from the neutral posture; "
          "reached: within 0.1 mm.", file=out)  # fmt: skip
    print(file=out)
    print("| arm | solver | targets | through body | reached through body |", file=out)
    print("|---|---|---|---|---|", file=out, flush=True)
    model = arm_model(ARM)
    sub = sample_targets(ARM, targets, seed)[:alternatives]
    solvers = {ALMOTION: lambda t: almotion_pinv(t)[0]}
    ik = ikpy_arm()
    if ik is not None:
        solvers[IKPY] = ik.solve
    for name, solve in solvers.items():
        q = np.array([solve(t) for t in sub])
        dist = clearance_batch(model, q)[0]
        reached = np.linalg.norm(forward_batch(model, q) - sub, axis=1) <= api.DEFAULT_TOLERANCE
        print(f"| {ARM} | {name} | {len(sub)} | {int(np.sum(dist < 0))} | {int(np.sum(reached & (dist < 0)))} |",
              file=out, flush=True)  # fmt: skip
    if ik is None:
        print("(ikpy is not installed: `pip install .[compare]`)", file=out)


def print_unreachable(arms: Sequence[str], targets: int, seed: int, out=sys.stdout) -> None:
    """Part 2: per body part, the benchmark targets only configurations through the body reach."""
    from .protocol import sample_targets

    print(file=out)
    print(f"Unreachable without collision: of {targets} benchmark targets per arm, those analytic answers "
          "reached: false with reason collision: <part>.", file=out)  # fmt: skip
    print(file=out)
    print("| arm | " + " | ".join(PARTS) + " | total |", file=out)
    print("|---|" + "---|" * (len(PARTS) + 1), file=out, flush=True)
    for arm in arms:
        b = api.solve_batch(sample_targets(arm, targets, seed), arm, "analytic")
        counts = Counter(r[len("collision: ") :] for r in b.reason if r.startswith("collision: "))
        print(f"| {arm} | " + " | ".join(str(counts.get(p, 0)) for p in PARTS) + f" | {sum(counts.values())} |",
              file=out, flush=True)  # fmt: skip


def print_cost(arms: Sequence[str], targets: int, seed: int, out=sys.stdout, single: int = 300) -> None:
    """Part 3: the body check's cost on ``analytic`` (single solves, batch, tracking steps)."""
    from .protocol import interleaved_times, sample_targets

    print(file=out)
    print("The body check's cost on analytic (with the body / body=(), taking turns in one run): single solves "
          "from the neutral posture, batch, and tracking steps (paths of 10 steps from a start clear of the body by "
          "12 mm, each target 1-2 mm from the last answer's hand and solved from it: the service's common case):",
          file=out)  # fmt: skip
    print(file=out)
    print("| arm | median single, body | median single, none | ratio | batch/s, body | batch/s, none | ratio | "
          "median step, body | median step, none | ratio |", file=out)  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|", file=out, flush=True)
    for arm in arms:
        with_body = arm_model(arm)
        without = with_body._replace(body=())
        t = sample_targets(arm, targets, seed)
        listed = t[:single].tolist()
        calls = {"body": lambda x, m=with_body: api.solve(x, m), "none": lambda x, m=without: api.solve(x, m)}
        times = interleaved_times(calls, listed)
        batch: dict = {"body": [], "none": []}
        for _ in range(3):
            for key, m in (("body", with_body), ("none", without)):
                t0 = time.perf_counter()
                api.solve_batch(t, m)
                batch[key].append(time.perf_counter() - t0)
        steps = _tracking_steps(with_body, single, seed)
        step_calls = {"body": _follower(with_body), "none": _follower(without)}
        step_times = interleaved_times(step_calls, steps, rounds=max(1, len(steps) // PATH_STEPS))
        sb, sn = (float(np.median(times[k]) * 1e6) for k in ("body", "none"))
        bb, bn = (t.shape[0] / float(np.median(batch[k])) for k in ("body", "none"))
        kb, kn = (float(np.median(step_times[k]) * 1e6) for k in ("body", "none"))
        print(f"| {arm} | {sb:.0f} µs | {sn:.0f} µs | {sb / sn:.2f} | {bb:,.0f} | {bn:,.0f} | {bb / bn:.2f} | "
              f"{kb:.0f} µs | {kn:.0f} µs | {kb / kn:.2f} |", file=out, flush=True)  # fmt: skip


#: Steps per tracked path in the tracking-step measure.
PATH_STEPS = 10


def _tracking_steps(model, count: int, seed: int) -> list:
    """Tracking steps, PATH_STEPS to a path: (target, the path's start posture or None: go on from the last answer).

    A path starts at a random posture clear of the body by 12 mm and moves its hand by the hands of
    0.01 rad joint steps (1-2 mm), each solved from the answer before, as the service tracks.
    """
    from ..nn.data import random_configurations

    rng = np.random.default_rng(seed + 1)
    paths = max(1, count // PATH_STEPS)
    q = random_configurations(model, 4 * paths, rng, 0.0)
    q = q[clearance_batch(model, q)[0] >= 0.012][:paths]
    step = rng.normal(size=q.shape) * 0.01
    step[:, 4] = 0.0
    out = []
    for q0, dq in zip(q, step):
        t = forward_batch(model, np.clip(q0 + np.arange(1, PATH_STEPS + 1)[:, None] * dq, model.lower, model.upper))
        out += [(row, q0.tolist() if k == 0 else None) for k, row in enumerate(t.tolist())]
    return out


def _follower(model):
    """One tracking step: solve from the path's start, or from this follower's last answer."""
    last: list = []

    def step(x: tuple) -> None:
        start = x[1] if x[1] is not None else last[0]
        last[:] = [api.solve(x[0], model, initial=start).angles]

    return step
