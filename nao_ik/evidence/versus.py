"""``nao-ik bench --body --against DIR``: the body check's cost on ``analytic``'s single solve, this code against
another checkout of nao-ik (an earlier version: its own body model and check) in the same run.

Each code runs in its own process (``PYTHONPATH`` at its checkout), with only the public API every version has
(``nao_ik.arm_model``, ``nao_ik.solve``, ``ArmModel._replace(body=())``); the two take turns, one pass over the
targets each, :data:`~nao_ik.evidence.body_report.PASSES` times; each target's time is the best of its passes.
The check's cost on a target: its time with the body less its time without.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import numpy as np

#: The worker each code runs: the targets (.npy) and the arm as arguments; one pass per line read.
WORKER = """
import json, sys, time
import numpy as np
import nao_ik
targets = np.load(sys.argv[1]).tolist()
body = nao_ik.arm_model(sys.argv[2])
none = body._replace(body=())
for x in targets[:20]:
    nao_ik.solve(x, body), nao_ik.solve(x, none)
print("ready", flush=True)
for _ in sys.stdin:
    out = {"body": [], "none": []}
    for x in targets:
        for key, m in (("body", body), ("none", none)):
            t0 = time.perf_counter()
            nao_ik.solve(x, m)
            out[key].append(time.perf_counter() - t0)
    print(json.dumps(out), flush=True)
"""

#: This checkout (the folder holding the nao_ik package).
HERE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def best_times(roots: dict[str, str], targets: np.ndarray, arm: str, passes: int) -> dict[str, dict]:
    """Per code (name -> checkout), per "body"/"none", each target's best time over ``passes`` (s)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "targets.npy")
        np.save(path, np.asarray(targets, dtype=float))
        procs = {}
        try:
            for name, root in roots.items():
                env = dict(os.environ, PYTHONPATH=root)
                procs[name] = subprocess.Popen([sys.executable, "-c", WORKER, path, arm], stdin=subprocess.PIPE,
                                               stdout=subprocess.PIPE, text=True, env=env, cwd=tmp)  # fmt: skip
                if procs[name].stdout.readline().strip() != "ready":
                    raise RuntimeError(f"nao-ik at {root} did not start (see its error above)")
            best = {name: {"body": np.inf, "none": np.inf} for name in roots}
            for _ in range(passes):
                for name, proc in procs.items():
                    proc.stdin.write("\n")
                    proc.stdin.flush()
                    got = json.loads(proc.stdout.readline())
                    for key, times in got.items():
                        best[name][key] = np.minimum(best[name][key], np.asarray(times))
            return best
        finally:
            for proc in procs.values():
                proc.stdin.close()
                proc.wait()


def print_versus(out, against: str, targets: np.ndarray, arm: str, passes: int) -> None:
    """The table: this code and the code at ``against``, and the ratio of each column."""
    best = best_times({"this code": HERE, against: os.path.abspath(against)}, targets, arm, passes)
    print(file=out)
    print(f"Against the code at `{against}` ({arm}, the same {len(targets)} targets, each code in its own process, "
          f"the two taking turns pass by pass, {passes} passes, each target's best; `nao_ik.solve`, analytic, from "
          "the neutral posture):", file=out)  # fmt: skip
    print(file=out)
    print("| code | median single, body | median single, none | check's cost, median | check's cost, mean | "
          "targets the body adds over 1 ms to |", file=out)  # fmt: skip
    print("|---|---|---|---|---|---|", file=out)
    rows = {}
    for name, t in best.items():
        added = (t["body"] - t["none"]) * 1e6
        rows[name] = (np.median(t["body"]) * 1e6, np.median(t["none"]) * 1e6, np.median(added), added.mean(),
                      np.mean(added > 1e3))  # fmt: skip
        b, n, med, mean, share = rows[name]
        print(f"| {name} | {b:.0f} µs | {n:.0f} µs | {med:.0f} µs | {mean:,.0f} µs | {share:.1%} |", file=out)
    now, then = rows["this code"], rows[against]
    ratios = " | ".join(f"{a / b:.2f}" if b else "-" for a, b in zip(now, then))
    print(f"| this / that | {ratios} |", file=out, flush=True)
