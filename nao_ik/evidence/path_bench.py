"""``nao-ik bench --paths``: known paths followed point by point (greedy) against planned whole.

Two sets of paths, both arms, fixed seeds:

- *joint-space lines* (the continuity protocol, :func:`nao_ik.evidence.continuity.joint_paths`): the hand positions
  along straight lines between random in-limit postures, WristYaw fixed, joint limits alone
  (:meth:`~nao_ik.model.arm.ArmModel.bodiless`): a continuous motion along each exists (the line itself). A
  step is *beyond* when some joint moves more than the line's own largest step + SLACK rad.
- *Cartesian shapes* in front of the robot with the body (lines, circles and figure-eights, 5 to 15 cm
  across, at several heights and depths, a point every 3 mm or closer, :func:`shapes`): the low ones go
  where only configurations through the body reach.

A *jump*, on both sets and for every rule, is :func:`nao_ik.recipes.path_plan.jumps`: a step larger than SMOOTH rad
that no chain of configurations along the hand's segment (links of at most SMOOTH, inside the limits and
clear) joins, or that enters or leaves a point not reached, or whose motion the body check does not
certify. Greedy is today's rule: each point solved by the method from the previous answer (the first from
the line's start or the neutral posture), as ``trackPath`` does. Planned is :func:`nao_ik.recipes.path_plan.plan_path`
from the same start; it answers from the exact solution set, so it is the plan of every method that does
(the methods whose answers are the nearest exact solution or continue from it: not ``nn-paper`` or ``cells``).
"""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from typing import Sequence

import numpy as np

from ..api import position as api
from ..kinematics.chain import forward_batch
from ..model.arm import ARMS, arm_model
from ..recipes.path_plan import SMOOTH, jumps, plan_path
from .continuity import POINTS, SLACK, joint_paths
from .protocol import Tee, machine

#: Methods compared by default: the exact one and the iterative ones that continue from the exact set.
METHODS = ("analytic", "dls", "jacobian-pinv", "sdls", "nn")
#: Cartesian shapes: at most this far between points (m).
SPACING = 0.003
#: Path lengths timed for planning.
SIZES = (100, 500, 2000)


def shape(kind: str, centre: Sequence[float], size: float, side: float, spacing: float = SPACING) -> np.ndarray:
    """A line, circle or figure-eight ``size`` across about ``centre`` in the plane x = centre's, a point every
    ``spacing`` metres or closer (FRAME_TORSO)."""
    r = size / 2.0
    length = {"line": size * np.sqrt(2.0), "circle": np.pi * size, "eight": 2.5 * size}[kind]
    s = np.linspace(0.0, 1.0, int(np.ceil(length / spacing)) + 1)
    th, z = 2.0 * np.pi * s, np.zeros_like(s)
    d = {"line": (z, side * r * (2 * s - 1), r * (2 * s - 1)), "circle": (z, r * np.cos(th), r * np.sin(th)),
         "eight": (z, r * np.sin(th), 0.5 * r * np.sin(2 * th))}[kind]  # fmt: skip
    return np.asarray(centre, dtype=float) + np.stack(d, axis=1)


def shapes(arm: str) -> list[np.ndarray]:
    """Lines, circles and figure-eights 5-15 cm across in front of the arm's shoulder, at two depths and three
    heights (the lowest in front of the hip)."""
    side = -1.0 if arm == "RArm" else 1.0
    return [shape(kind, (depth, side * 0.10, height), size, side)
            for depth in (0.15, 0.18) for height in (0.0, 0.06, 0.12) for size in (0.05, 0.10, 0.15)
            for kind in ("line", "circle", "eight")]  # fmt: skip


def greedy(method: str, model, x: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, float]:
    """Each point solved from the previous answer: (angles (N, 5), seconds)."""
    t0 = time.perf_counter()
    prev, out = start.tolist(), []
    for p in x:
        prev = list(api.solve(p.tolist(), model, method, initial=prev).angles)
        out.append(prev)
    return np.array(out), time.perf_counter() - t0


def _row(name: str, kind: str, arm: str, runs: list) -> str:
    """One table row from (model, points, angles, the line's allowed step or None, seconds) runs."""
    steps = beyond = jumped = 0
    worst = 0.0
    for model, x, q, allowed, _ in runs:
        d = np.abs(np.diff(q, axis=0)).max(axis=1)
        steps += d.size
        beyond += 0 if allowed is None else int((d > allowed).sum())
        jumped += len(jumps(model, x, q))
        worst = max(worst, float(d.max()) if d.size else 0.0)
    ms = 1e3 * float(np.median([r[-1] for r in runs]))
    over = "-" if runs[0][3] is None else f"{beyond} ({100 * beyond / max(steps, 1):.2f} %)"
    return f"| {kind} | {arm} | {name} | {steps} | {over} | {jumped} | {worst:.3f} | {ms:.1f} ms |"


def compare(arms: Sequence[str], methods: Sequence[str], lines: int, out=sys.stdout, every: int = 1) -> None:
    """The greedy-against-planned table (of the Cartesian shapes, every ``every``-th of :func:`shapes`)."""
    print("| paths | arm | rule | steps | beyond the line's step + 0.05 | jumps | worst step (rad) | median per path |",
          file=out)  # fmt: skip
    print("|---|---|---|---|---|---|---|---|", file=out, flush=True)
    for i, arm in enumerate(arms):
        bodiless = arm_model(arm).bodiless()
        paths = joint_paths(arm, lines, seed=11 + i)
        model = arm_model(arm)
        cart = shapes(arm)[::every]
        sets = [
            (f"{lines} joint-space lines, limits alone", bodiless,
             [(forward_batch(bodiless, p), p[0], float(np.abs(np.diff(p, axis=0)).max()) + SLACK) for p in paths]),
            (f"{len(cart)} Cartesian shapes, body", model, [(x, np.asarray(model.neutral), None) for x in cart]),
        ]  # fmt: skip
        for kind, m, items in sets:
            for method in methods:
                runs = []
                for x, start, allowed in items:
                    q, sec = greedy(method, m, x, start)
                    runs.append((m, x, q, allowed, sec))
                print(_row(f"greedy {method}", kind, arm, runs), file=out, flush=True)
            planned = []
            for x, start, allowed in items:
                p = plan_path(x, m, start)
                planned.append((m, x, p.angles, allowed, p.seconds))
            print(_row("planned", kind, arm, planned), file=out, flush=True)


def timed_paths(arm: str, n: int) -> dict[str, np.ndarray]:
    """The timed paths of ``n`` points: a circle and a figure-eight 6 cm across in front of the chest (every point
    reachable with the body), and a circle 10 cm across nearer the shoulder (a third of it out of reach)."""
    side = -1.0 if arm == "RArm" else 1.0
    th = np.linspace(0.0, 2.0 * np.pi, n)
    z = np.zeros(n)
    front = np.array([0.15, side * 0.08, 0.05])
    return {
        "circle 6 cm": front + 0.03 * np.stack([z, np.cos(th), np.sin(th)], axis=1),
        "figure-eight 6 cm": front + 0.03 * np.stack([z, np.sin(th), 0.5 * np.sin(2 * th)], axis=1),
        "circle 10 cm, a third out of reach": np.array([0.14, side * 0.1, 0.06])
        + 0.05 * np.stack([z, np.cos(th), np.sin(th)], axis=1),
    }


def timing(arms: Sequence[str], sizes: Sequence[int], repeats: int, out=sys.stdout) -> None:
    """Planning time with the body, per path and length: median, min, max of ``repeats`` plans."""
    print("| arm | path | points | median plan | min | max | unreached | jumps |", file=out)
    print("|---|---|---|---|---|---|---|---|", file=out, flush=True)
    for arm in arms:
        model = arm_model(arm)
        for n in sizes:
            for name, x in timed_paths(arm, n).items():
                plans = [plan_path(x, model) for _ in range(repeats)]
                times = [p.seconds for p in plans]
                print(f"| {arm} | {name} | {n} | {1e3 * np.median(times):.0f} ms | {1e3 * min(times):.0f} ms | "
                      f"{1e3 * max(times):.0f} ms | {int((~plans[0].reached).sum())} | {len(plans[0].jumps)} |",
                      file=out, flush=True)  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (``nao-ik bench --paths``)."""
    p = argparse.ArgumentParser(
        prog="nao-ik bench --paths",
        description="Known paths: point-by-point following against planning the whole path.",
    )
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
          f"Joint-space lines: {POINTS} points each; a step is beyond when a joint moves more than the line's own "
          f"largest step + {SLACK} rad. Cartesian shapes: a point every {1e3 * SPACING:g} mm or closer. Jumps: "
          f"`nao_ik.recipes.path_plan.jumps` (a step over {SMOOTH} rad that no chain of links of at most {SMOOTH} rad "
          f"along its segment joins, one into or out of an unreached point, or one whose motion is not certified "
          f"clear of the body). Time: per path, median.", file=tee)  # fmt: skip
    print(file=tee)
    compare(a.arms, a.methods, a.lines, tee)
    print(file=tee)
    print(f"Planning time with the body, {a.repeats} plans each (the first two paths: every point reachable; "
          f"the third: the unreachable points' answers dominate):", file=tee)  # fmt: skip
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
