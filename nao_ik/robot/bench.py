# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP031  (the common subset of Python 2.7 and 3)
"""The robot runtime's single-solve time, with the Python that runs it (no numpy)::

    python nao_ik/robot/bench.py [--targets N] [--seed S]

Two kinds of target, both arms: a random reachable target (the hand of a random configuration)
from a random start posture (a ``reachTo`` out of the blue: the full ring search), and a step of
1 cm from the current posture (following a path: the local search). Each target is solved with
NAO's standing body (what the service answers) and with the joint limits alone (``body=()``),
taking turns; then the motion check the service makes before ``setAngles`` (the direct motion from
the start to the body-aware answer, :func:`nao_ik.robot.solve.motion`; its "reached" column is the
share of motions found clear). Each is timed alone (``timeit.default_timer``); the
table gives the median, the 90th percentile and the maximum.
"""

from __future__ import division, print_function

import argparse
import os
import platform
import random
import sys
import timeit

if __name__ == "__main__":  # run as a script: the package root (two folders up) on the path
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _cases(model, rng, n, step):
    """n (target, start) pairs: the hand of a random configuration from a random start, or a step from it."""
    from nao_ik.robot.solve import forward

    out = []
    for _ in range(n):
        goal = [rng.uniform(lo, hi) for lo, hi in zip(model.lower, model.upper)]
        start = [rng.uniform(lo, hi) for lo, hi in zip(model.lower, model.upper)]
        t = forward(model, goal)
        if step:
            start = goal
            t = tuple(x + rng.uniform(-step, step) / 3**0.5 for x in t)
        else:
            goal[4] = start[4]
            t = forward(model, goal)
        out.append((t, start))
    return out


def _quantile(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def run(n, seed):
    # type: (int, int) -> list
    """Rows (case, body, solves, reached %, median us, p90 us, max us)."""
    from nao_ik.robot.arms import MODELS
    from nao_ik.robot.solve import STANDING, motion, solve

    rng = random.Random(seed)
    rows = []
    bodies = (("standing", STANDING), ("none (limits only)", ()))
    for case, step in (("random target, random start", 0.0), ("1 cm step from the posture", 0.01)):
        times, reached = ([], [], []), [0, 0, 0]
        for arm in ("LArm", "RArm"):
            model = MODELS[arm]
            for t, q0 in _cases(model, rng, n, step):
                for i, (_, body) in enumerate(bodies):
                    t0 = timeit.default_timer()
                    sol = solve(model, t, q0, body)
                    times[i].append((timeit.default_timer() - t0) * 1e6)
                    reached[i] += sol.reached
                    if i == 0 and sol.found:
                        t0 = timeit.default_timer()
                        clear = motion(model, model.clamp(q0), sol.angles)[0]
                        times[2].append((timeit.default_timer() - t0) * 1e6)
                        reached[2] += clear
        for i, name in enumerate(("standing", "none (limits only)", "motion check, standing")):
            got = times[i]
            rows.append((case, name, len(got), 100.0 * reached[i] / len(got), _quantile(got, 0.5),
                         _quantile(got, 0.9), max(got)))  # fmt: skip
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description="Single-solve time of nao-ik's robot runtime (analytic).")
    parser.add_argument("--targets", type=int, default=500, help="targets per arm and case")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    rows = run(args.targets, args.seed)
    numpy_state = "loaded" if "numpy" in sys.modules else "not loaded"
    cpu = platform.processor() or platform.machine()
    version = platform.python_version()
    load = "load average %.2f" % os.getloadavg()[0] if hasattr(os, "getloadavg") else "load unknown"
    print("Python %s (%s), numpy %s after the solves, %s, %s" % (version, sys.executable, numpy_state, cpu, load))
    print("")
    print("| case | body | solves | reached | median | p90 | max |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for case, body, count, reached, med, p90, top in rows:
        print("| %s | %s | %d | %.1f %% | %.0f us | %.0f us | %.0f us |" % (case, body, count, reached, med, p90, top))
    return 0


if __name__ == "__main__":
    sys.exit(main())
