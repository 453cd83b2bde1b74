"""``nao-ik bench --paths``: known paths followed point by point (greedy) against planned whole.

Two sets of paths, both arms, fixed seeds:

- *joint-space lines* (the continuity protocol, :func:`nao_ik.continuity.joint_paths`): the hand positions
  along straight lines between random in-limit postures, WristYaw fixed, joint limits alone
  (:meth:`~nao_ik.model.ArmModel.bodiless`): a continuous motion along each exists (the line itself), so
  every jump is the rule's. A step *jumps* when some joint moves more than the line's own largest step +
  SLACK rad.
- *Cartesian shapes* in front of the robot with the body (lines, circles and figure-eights, 5 to 15 cm
  across, at several heights and depths, :func:`shapes`): a step jumps when some joint moves more than
  SHAPE_JUMP rad.

Greedy is today's rule: each point solved by the method from the previous answer (the first from the
neutral posture), as ``trackPath`` does. Planned is :func:`nao_ik.path_plan.plan_path` from the same
start; it answers from the exact solution set, so it is the plan of every method that does (the methods
whose answers are the nearest exact solution or continue from it: not ``nn-paper`` or ``cells``).
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from typing import Sequence

import numpy as np

from . import api
from .bench import Tee, machine
from .continuity import POINTS, SLACK, joint_paths
from .kinematics import forward_batch
from .model import ARMS, arm_model
from .path_plan import plan_path

#: Methods compared by default: the exact one and the iterative ones that continue from the exact set.
METHODS = ("analytic", "dls", "jacobian-pinv", "sdls", "nn")
#: A step of a Cartesian shape jumps when a joint moves more than this, rad.
SHAPE_JUMP = 0.15
#: Path lengths timed for planning, and repetitions of each.
SIZES = (100, 500, 2000)


def shapes(arm: str, points: int = POINTS) -> list[np.ndarray]:
    """Lines, circles and figure-eights 5-15 cm across in front of the arm's shoulder, FRAME_TORSO metres."""
    side = -1.0 if arm == "RArm" else 1.0
    s = np.linspace(0.0, 1.0, points)
    th = 2.0 * np.pi * s
    out = []
    for depth in (0.12, 0.16):
        for height in (-0.02, 0.06, 0.12):
            centre = np.array([depth, side * 0.1, height])
            for size in (0.05, 0.10, 0.15):
                r = size / 2.0
                line = np.stack([np.zeros(points), side * r * (2 * s - 1), r * (2 * s - 1)], axis=1)
                circle = np.stack([np.zeros(points), r * np.cos(th), r * np.sin(th)], axis=1)
                eight = np.stack([np.zeros(points), r * np.sin(th), 0.5 * r * np.sin(2 * th)], axis=1)
                out += [centre + line, centre + circle, centre + eight]
    return out


def greedy(method: str, model, x: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, float]:
    """Each point solved from the previous answer: (angles (N, 5), seconds)."""
    t0 = time.perf_counter()
    prev, out = start.tolist(), []
    for p in x:
        prev = list(api.solve(p.tolist(), model, method, initial=prev).angles)
        out.append(prev)
    return np.array(out), time.perf_counter() - t0


def _row(name: str, kind: str, arm: str, runs: list) -> str:
    """One table row from (angles, allowed step per path, seconds) runs."""
    steps = jumps = 0
    worst = 0.0
    for q, allowed, _ in runs:
        d = np.abs(np.diff(q, axis=0)).max(axis=1)
        steps += d.size
        jumps += int((d > allowed).sum())
        worst = max(worst, float(d.max()) if d.size else 0.0)
    ms = 1e3 * float(np.median([r[2] for r in runs]))
    share = 100 * jumps / max(steps, 1)
    return f"| {kind} | {arm} | {name} | {steps} | {jumps} | {share:.2f} % | {worst:.3f} | {ms:.1f} ms |"


def compare(arms: Sequence[str], methods: Sequence[str], lines: int, out=sys.stdout) -> None:
    """The greedy-against-planned table."""
    print("| paths | arm | rule | steps | steps with a jump | share | worst step (rad) | median per path |",
          file=out)  # fmt: skip
    print("|---|---|---|---|---|---|---|---|", file=out, flush=True)
    for i, arm in enumerate(arms):
        bodiless = arm_model(arm).bodiless()
        paths = joint_paths(arm, lines, seed=11 + i)
        sets = [
            (f"{lines} joint-space lines, limits alone", bodiless,
             [(forward_batch(bodiless, p), p[0], float(np.abs(np.diff(p, axis=0)).max()) + SLACK) for p in paths]),
        ]  # fmt: skip
        model = arm_model(arm)
        cart = shapes(arm)
        sets.append((f"{len(cart)} Cartesian shapes, body", model, [(x, np.asarray(model.neutral), SHAPE_JUMP)
                                                                    for x in cart]))  # fmt: skip
        for kind, m, items in sets:
            for method in methods:
                runs = []
                for x, start, allowed in items:
                    q, sec = greedy(method, m, x, start)
                    runs.append((q, allowed, sec))
                print(_row(f"greedy {method}", kind, arm, runs), file=out, flush=True)
            planned = []
            for x, start, allowed in items:
                p = plan_path(x, m, start)
                planned.append((p.angles, allowed, p.seconds))
            print(_row("planned", kind, arm, planned), file=out, flush=True)


def timing(arms: Sequence[str], sizes: Sequence[int], repeats: int, out=sys.stdout) -> None:
    """Planning time of a circle 10 cm across in front of the arm, with the body, per path length."""
    print("| arm | points | median plan | min | max |", file=out)
    print("|---|---|---|---|---|", file=out, flush=True)
    for arm in arms:
        model = arm_model(arm)
        side = -1.0 if arm == "RArm" else 1.0
        for n in sizes:
            th = np.linspace(0.0, 2.0 * np.pi, n)
            x = np.array([0.14, side * 0.1, 0.06]) + 0.05 * np.stack([np.zeros(n), np.cos(th), np.sin(th)], axis=1)
            times = [plan_path(x, model).seconds for _ in range(repeats)]
            print(f"| {arm} | {n} | {1e3 * np.median(times):.0f} ms | {1e3 * min(times):.0f} ms | "
                  f"{1e3 * max(times):.0f} ms |", file=out, flush=True)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (``nao-ik bench --paths``)."""
    p = argparse.ArgumentParser(prog="nao-ik bench --paths",
                                description="Known paths: point-by-point following against planning the whole path.")
    p.add_argument("--lines", type=int, default=30, help="joint-space lines per arm (default 30)")
    p.add_argument("--methods", nargs="+", choices=api.METHODS, default=list(METHODS))
    p.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS))
    p.add_argument("--repeats", type=int, default=11, help="plans per path length for the timing table")
    p.add_argument("--out", help="also write the tables to this markdown file")
    a = p.parse_args(argv)
    tee = Tee()
    command = "nao-ik bench --paths " + " ".join(argv if argv is not None else sys.argv[1:])
    print(f"`{command.strip()}`", file=tee)
    print(f"machine: {machine()}", file=tee)
    print(file=tee)
    print(f"Greedy: each point solved from the previous answer (today's rule); planned: `nao_ik.plan_path`. "
          f"A step jumps beyond the line's own largest step + {SLACK} rad (joint-space lines) or beyond "
          f"{SHAPE_JUMP} rad (Cartesian shapes, {POINTS} points each). Time: per path, median.", file=tee)  # fmt: skip
    print(file=tee)
    compare(a.arms, a.methods, a.lines, tee)
    print(file=tee)
    print(f"Planning time, a circle 10 cm across with the body, {a.repeats} plans each:", file=tee)
    print(file=tee)
    timing(a.arms, SIZES, a.repeats, tee)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write(f"# Known paths: greedy against planned\n\nGenerated by `{command.strip()}` on "
                     f"{datetime.date.today()}. One run on one machine; re-measure on yours.\n\n")  # fmt: skip
            fh.write(tee.text())
        print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
