"""``nao-ik bench --body``: the body model, what its check costs, and moves under each motion profile.

A markdown report, every figure measured by the run that prints it:

1. the body model: one row per shape of the library's body model (the left arm's
   :attr:`~nao_ik.model.arm.ArmModel.body`) and per arm link (:data:`nao_ik.model.body.LINKS`), with the source
   notes kept in :mod:`nao_ik.model.body_data` (read from its source: the ``#:`` comments of the constants a
   shape is built from and the part's entry in ``body_rows``' docstring);
2. what the check costs: ``analytic``'s single solves with the body model and without it
   (:meth:`~nao_ik.model.arm.ArmModel.bodiless`), taking turns: the medians, and the check's cost per target
   (median and mean); and ``reachTo``'s round trip over qi with the service's body and motion checks and
   without (:func:`nao_ik.evidence.latency.print_body_cost`);
3. what the profile-free motion check adds: on the benchmark's targets, from the neutral posture and from
   random clear postures, the direct moves the constant-speed check approves
   (:func:`nao_ik.geometry.scalar.sweep.advance` along a :class:`~nao_ik.geometry.sweep.Motion`), those the box
   check approves (:func:`nao_ik.geometry.sweep.sweep`), those :func:`nao_ik.geometry.sweep.plan` splits or swings
   out and those it refuses;
4. moves between random clear postures that the old and the new check approve, run through the simulated
   robot's three setAngles profiles (:mod:`sim_stub.profiles`: its per-cycle steps, the collision
   protection left out) and measured for entering the body.

Sections 1 and 2 run in this process, alone (section 2's times); sections 3 and 4, counts, in up to
:data:`JOBS` spawned worker processes.

Section 4's experiment is :mod:`nao_ik.evidence.profile_runs`.
"""

from __future__ import annotations

import argparse
import ast
import datetime
import multiprocessing
import os
import re
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import NamedTuple, Sequence

import numpy as np

from ..api import position as api
from ..geometry.collision import clearance_batch, link_points
from ..geometry.sampled import clear_by_move
from ..geometry.scalar.clearance import checker
from ..geometry.scalar.sweep import BOX_BUDGET, advance
from ..geometry.sweep import ALTERNATIVES, SWEEP_MARGIN, Motion, first_direct, plan, sweep
from ..model import body_data
from ..model.arm import ArmModel, arm_model
from ..model.body import LINKS, MARGIN, Box
from .profile_runs import ARM, print_profiles, profile_runs
from .protocol import machine

#: Section 3's targets: the full run's, --quick's.
TARGETS = (2000, 200)
#: Section 4's random pairs of clear postures: the full run's, --quick's.
PAIRS = (2000, 300)
#: Section 2's passes over the targets (each target's time: the best of them).
PASSES = 5
#: Section 2's single solves per arm, and reachTo round trips: the full run's, --quick's.
SINGLE = (1000, 200)
ROUNDS = (300, 60)
#: The fractionMaxSpeed of section 3's commands (the service's default speed; no bearing on what is approved).
FRACTION = 0.2
#: Section 3's kinds of start.
STARTS = ("neutral", "random clear")
#: Processes sections 3 and 4 run in (the machine's cores, at most 3: there are three jobs).
JOBS = max(1, min(3, os.cpu_count() or 1))


def main(argv: Sequence[str] | None = None) -> int:
    """``nao-ik bench --body [--quick] [--out FILE]`` (the cli passes the arguments after ``--body``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(
        prog="nao-ik bench --body",
        description="The body model, what its check costs, what the profile-free motion check adds, and moves "
        "entering the body under each of the simulated robot's motion profiles (a markdown report).",
        epilog="example: nao-ik bench --body --quick --out body.md",
    )
    quick = f"a quick run: {TARGETS[1]} targets and {PAIRS[1]} pairs (default {TARGETS[0]} and {PAIRS[0]})"
    p.add_argument("--quick", action="store_true", help=quick)
    p.add_argument("--seed", type=int, default=0, help="the targets' and postures' seed (default 0)")
    p.add_argument("--out", help="also write the report to this markdown file")
    p.add_argument("--against", metavar="DIR", help="section 2 also measures the single solve and reachTo's "
                   "round trip of the nao-ik checkout in DIR (another version), taking turns")  # fmt: skip
    a = p.parse_args(argv)
    from .protocol import Tee

    tee = Tee()
    command = " ".join(["nao-ik bench --body"] + argv)
    report(a.quick, a.seed, tee, command, a.against)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as fh:
            fh.write(tee.text())
        print(f"wrote {a.out}")
    return 0


def report(quick: bool, seed: int, out, command: str, against: str | None = None) -> None:
    """Print the four sections (see the module docstring), with a header naming ``command`` and the machine;
    ``against``: another nao-ik checkout section 2 also measures (:mod:`nao_ik.evidence.versus`)."""
    k = 1 if quick else 0
    began = time.perf_counter()
    print("# The body model, what its check costs, and moves under each motion profile", file=out)
    print(file=out)
    print(f"Generated by `{command}` on {datetime.date.today()}: {machine()}. Every figure below was measured "
          "by that run; one run on one machine: compare within the run, re-measure on yours.", file=out)  # fmt: skip
    print_model(out)
    print_cost(out, SINGLE[k], ROUNDS[k], seed, against)  # alone: its times are not shared with the workers below
    n, pairs = TARGETS[k], PAIRS[k]
    # Sections 3 and 4 are counts (and section 3's few medians): three jobs on up to JOBS processes. Spawned, not
    # forked: section 2's qi sessions leave threads behind.
    with ProcessPoolExecutor(max_workers=JOBS, mp_context=multiprocessing.get_context("spawn")) as pool:
        starts = {kind: pool.submit(motion_counts, kind, n, seed) for kind in STARTS}
        runs = pool.submit(profile_runs, pairs, seed)
        print_motion_check(out, n, seed, {kind: job.result() for kind, job in starts.items()})
        print_profiles(out, pairs, seed, runs.result())
    print(file=out)
    print(f"The whole run took {time.perf_counter() - began:.0f} s (sections 3 and 4 in {JOBS} processes).",
          file=out, flush=True)  # fmt: skip


# ----------------------------------------------------------------------------------------------- 1. the model


def source_notes() -> tuple[dict[str, str], dict[str, str], ast.Module]:
    """The source notes of :mod:`nao_ik.model.body_data`, read from its source.

    Returns:
        (constant name -> the ``#:`` comment above it (a comment above consecutive assignments covers
        them all), body part -> its entry in ``body_rows``' docstring, the module's syntax tree).
    """
    with open(body_data.__file__, encoding="utf-8") as fh:
        text = fh.read()
    lines, tree = text.splitlines(), ast.parse(text)
    notes: dict[str, str] = {}
    prev_end, prev_note = -1, ""
    for node in tree.body:
        if not isinstance(node, (ast.Assign, ast.AnnAssign)):
            prev_end = -1
            continue
        k, block = node.lineno - 2, []
        while k >= 0 and lines[k].strip().startswith("#:"):
            block.insert(0, lines[k].strip()[2:].strip())
            k -= 1
        note = " ".join(block) if block else (prev_note if prev_end == node.lineno - 1 else "")
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name) and note:
                    notes[n.id] = note
        prev_end, prev_note = node.end_lineno or node.lineno, note
    parts: dict[str, str] = {}
    rows = _function(tree, "body_rows")
    doc = ast.get_docstring(rows) if rows is not None else None
    current = None
    for line in (doc or "").splitlines():
        s = line.strip()
        m = re.match(r"- ([\w ]+): (.*)", s)
        if m:
            current = m.group(1)
            parts[current] = m.group(2)
        elif current and s and not s.endswith(":"):
            parts[current] += " " + s
        else:
            current = None
    return notes, {p: _plain(t) for p, t in parts.items()}, tree


def _plain(text: str) -> str:
    """Sphinx roles (``:func:`~x.y```) as plain code spans."""
    return re.sub(r":\w+:`~?([^`]+)`", r"`\1`", text).replace("``", "`")


def _function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _row_names(tree: ast.Module, index: int) -> list[str]:
    """The module-level names the ``index``-th row of ``body_rows``' answer is built from (and those of the
    functions it calls there), in order of appearance."""
    rows = _function(tree, "body_rows")
    ret = next((n for n in ast.walk(rows) if isinstance(n, ast.Return)), None) if rows is not None else None
    if ret is None or not isinstance(ret.value, ast.Tuple) or index >= len(ret.value.elts):
        return []
    names: list[str] = []
    for n in ast.walk(ret.value.elts[index]):
        if isinstance(n, ast.Name):
            names.append(n.id)
            f = _function(tree, n.id)
            if f is not None:
                names += [m.id for m in ast.walk(f) if isinstance(m, ast.Name)]
    return list(dict.fromkeys(names))


def model_rows(model: ArmModel) -> tuple[list[tuple[str, str, str, str, str, list[str]]], dict[str, list[str]]]:
    """The body model's table: one row per shape of ``model.body`` and per link of :data:`~nao_ik.model.body.LINKS`.

    Returns:
        (rows (part, shape, between, radius mm, length mm, the texts of its source notes), notes: every source
        note cited, in order, text -> what it is the note of (constants, ``body_rows: <part>``)).
    """
    notes, parts, tree = source_notes()
    cited: dict[str, list[str]] = {}

    def cite(key: str, text: str) -> str:
        keys = cited.setdefault(text, [])
        if key not in keys:
            keys.append(key)
        return text

    rows = []
    standard = body_data.body_rows()
    for i, c in enumerate(model.body):
        keys = []
        if i < len(standard) and tuple(c) == tuple(standard[i]):  # the model's body is body_data's rows
            if c.part in parts:
                keys.append(cite(f"body_rows: {c.part}", parts[c.part]))
            for name in _row_names(tree, i):
                if name in notes:
                    keys.append(cite(name, notes[name]))
        if isinstance(c, Box):
            size = " x ".join(f"{2e3 * h:.1f}" for h in c.half)
            turned = "" if c.turn is None else ", turned with the leg"
            rows.append((c.part, f"rounded box, FRAME_TORSO{turned}", f"centre ({_mm(c.centre)}), core {size}",
                         f"{1e3 * c.radius:.1f}", "", list(dict.fromkeys(keys))))  # fmt: skip
            continue
        length = float(np.linalg.norm(np.subtract(c.b, c.a)))
        between = f"({_mm(c.a)}) to ({_mm(c.b)})" if length > 0 else f"at ({_mm(c.a)})"
        rows.append((c.part, f"{'capsule' if length > 0 else 'sphere'}, FRAME_TORSO (fixed)", between,
                     f"{1e3 * c.radius:.1f}", f"{1e3 * length:.1f}", list(dict.fromkeys(keys))))  # fmt: skip
    names = _point_names(notes.get("LINK_ROWS", ""))
    pts = link_points(model, list(model.neutral))  # rigid links: the lengths hold at every posture
    for ln in LINKS:
        keys = [cite("LINK_ROWS", notes["LINK_ROWS"])] if "LINK_ROWS" in notes else []
        for name, text in notes.items():
            if re.search(rf"[Cc]hain point {ln.start}\b|[Cc]hain point {ln.end}\b", text):
                keys.append(cite(name, text))
        length = float(np.linalg.norm(np.subtract(pts[ln.end], pts[ln.start])))
        between = f"chain point {ln.start} ({names.get(ln.start, '?')}) to {ln.end} ({names.get(ln.end, '?')})"
        if ln.skip:
            between += f"; the arm's own check leaves out its first {100 * ln.skip:.0f} %"
        rows.append((f"{model.arm} {ln.name}", "capsule, the arm's chain (moves with the arm)", between,
                     f"{1e3 * ln.radius:.1f}", f"{1e3 * length:.1f}", list(dict.fromkeys(keys))))  # fmt: skip
    return rows, cited


def _point_names(note: str) -> dict[int, str]:
    """Chain point -> its name, from LINK_ROWS' note ("chain points (0 shoulder, 1 ..., 6 ...)")."""
    m = re.search(r"chain points \(([^)]*(?:\([^)]*\)[^)]*)*)\)", note)
    out = {}
    for item in m.group(1).split(", ") if m else []:
        k, _, name = item.partition(" ")
        if k.isdigit():
            out[int(k)] = name
    return out


def _mm(p: Sequence[float]) -> str:
    return ", ".join(f"{1e3 * v:.1f}" for v in p)


def print_model(out) -> None:
    """Section 1."""
    model = arm_model(ARM)
    rows, notes = model_rows(model)
    number = {text: i + 1 for i, text in enumerate(notes)}
    print(file=out)
    print("## 1. The body model", file=out)
    print(file=out)
    print(f"The library's body model (`arm_model({ARM!r}).body`: the standing posture, the head at rest) and the "
          f"arm's links ({ARM}; the right arm mirrors y), read from nao_ik/model/body_data.py and "
          f"nao_ik/model/body.py. Millimetres. An arm is clear when every link keeps {1e3 * MARGIN:g} mm (MARGIN) "
          f"from every body shape; a motion's postures keep {1e3 * SWEEP_MARGIN:g} mm (SWEEP_MARGIN). Length: "
          "the capsule's axis (0: a sphere). A rounded box: its core's sizes (its own axes), the radius its "
          "rounding.", file=out)  # fmt: skip
    print(file=out)
    print("| part | shape, frame | between | radius (mm) | length (mm) | source |", file=out)
    print("|---|---|---|---|---|---|", file=out)
    for part, shape, between, radius, length, texts in rows:
        source = ", ".join(f"[{number[t]}]" for t in texts) if texts else "no source recorded"
        print(f"| {part} | {shape} | {between} | {radius} | {length} | {source} |", file=out)
    print(file=out)
    print("Source notes, quoted from nao_ik/model/body_data.py (the `#:` comment of each constant a shape is built "
          "from, and the part's entry in `body_rows`' docstring):", file=out)  # fmt: skip
    print(file=out)
    for text, keys in notes.items():
        print(f"{number[text]}. {', '.join(f'`{k}`' for k in keys)}: {text}", file=out)
    print(file=out, flush=True)


# ----------------------------------------------------------------------------------------------- 2. the cost


def print_cost(out, single: int, rounds: int, seed: int, against: str | None = None) -> None:
    """Section 2."""
    from .latency import print_body_cost
    from .protocol import interleaved_times, sample_targets

    print("## 2. What the check costs", file=out)
    print(file=out)
    print(f"analytic's single solve (`nao_ik.solve`, from the neutral posture) on {single} benchmark targets per "
          "arm, with the body model (the default) and without it (`ArmModel.bodiless()`: the joint limits alone), "
          f"the two taking turns in 10 rounds, {PASSES} passes, each target's time the best of its passes: the "
          "medians and their ratio; the check's cost on a target, its time with the body less its time without "
          "(the median over the targets: what the check adds to a typical solve; the mean: over a workload, where "
          "the targets whose nearest answer is blocked by the body take a search); and the share of targets to "
          "which the body adds over 1 ms (those searches):", file=out)  # fmt: skip
    print(file=out)
    print("| arm | median single, body | median single, none | ratio | check's cost, median | check's cost, mean | "
          "targets the body adds over 1 ms to |", file=out)  # fmt: skip
    print("|---|---|---|---|---|---|---|", file=out, flush=True)
    for arm in ("LArm", "RArm"):
        with_body = arm_model(arm)
        without = with_body.bodiless()
        listed = sample_targets(arm, single, seed).tolist()
        calls = {"body": lambda x, m=with_body: api.solve(x, m), "none": lambda x, m=without: api.solve(x, m)}
        passes = [interleaved_times(calls, listed) for _ in range(PASSES)]
        times = {k: np.min([p[k] for p in passes], axis=0) for k in calls}
        b, n = (float(np.median(times[k]) * 1e6) for k in ("body", "none"))
        added = (times["body"] - times["none"]) * 1e6
        print(f"| {arm} | {b:.0f} µs | {n:.0f} µs | {b / n:.2f} | {np.median(added):.0f} µs | {added.mean():,.0f} µs | "
              f"{np.mean(added > 1e3):.1%} |", file=out, flush=True)  # fmt: skip
    if against:
        from .versus import print_versus

        print_versus(out, against, sample_targets(ARM, single, seed), ARM, PASSES)
    print_body_cost(rounds, out)
    if against:
        from .versus import print_round_trips

        print_round_trips(out, against, rounds)
    print(file=out, flush=True)


# -------------------------------------------------------------------------------------- 3. the motion check


def print_motion_check(out, n: int, seed: int, counts: dict[str, MotionCounts]) -> None:
    """Section 3, from :func:`motion_counts` of each kind of start."""
    print("## 3. What the profile-free motion check adds", file=out)
    print(file=out)
    print(f"{n} benchmark targets (`nao_ik.evidence.protocol.sample_targets`, seed {seed}), {ARM}, each solved by "
          f"analytic from the start posture (`nao_ik.solve(target, model, initial=start)`), and the move from the "
          f"start to the "
          f"answer at fractionMaxSpeed {FRACTION:g}: (a) the old constant-speed check approves the direct command "
          "(`advance(Motion(model, start, answer, fraction), checker(model, model.body))` clear: every joint at "
          "constant speed, each arriving when its change is done); (b) the new check approves it "
          "(`sweep(model, start, answer, fraction).clear`: every posture of the joint-space box between the two, "
          "so any profile in which each joint goes monotonically); (c) `plan` sends it as two or more commands "
          "(legs of the straight line, or the arm swung out first); (d) `plan` finds no safe sequence (no "
          "commands). (b) + (c) + (d) = all moves. Starts: the neutral posture, and random postures clear of the "
          f"body by {1e3 * MARGIN:g} mm (MARGIN), one per target (seed {seed + 1}). Why (b) refused the rest: a "
          f"posture of the box found within the margin, or the box not certified within its budget of "
          f"{BOX_BUDGET} postures checked. (e) Of the moves (b) refused whose answer reached the target, those where "
          "another exact solution of it goes direct (`first_direct(model, start, clear_by_move(model, target, "
          "start), fraction)`: the target's sampled solutions clear of the body, nearest move first, at most "
          f"{ALTERNATIVES} within one check's budget): the service's reach sends that one instead of (c).",
          file=out)  # fmt: skip
    print(file=out)
    print("| start | moves | answers reached | (a) old check approves direct | (b) new check approves direct | "
          "(c) plan: legs or swung out | (d) refused | not (b): a posture within the margin | not (b): budget "
          "ran out | (e) not (b), another solution direct |", file=out)  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|", file=out)
    for kind, c in counts.items():
        print(f"| {kind} | {n} | {_share(c.reached, n)} | {_share(c.old, n)} | {_share(c.new, n)} | "
              f"{_share(c.split, n)} | {_share(c.refused, n)} | {_share(c.found, n)} | {_share(c.budget, n)} | "
              f"{_share(c.other, n)} |", file=out)  # fmt: skip
    old = [t for c in counts.values() for t in c.old_s]
    new = [t for c in counts.values() for t in c.new_s]
    planned = [t for c in counts.values() for t in c.plan_s]
    print(file=out)
    print(f"Median times in this run (both kinds of start): the old check {np.median(old) * 1e3:.2f} ms, the new "
          f"check {np.median(new) * 1e3:.2f} ms per direct move; `plan` for the {len(planned)} moves the new check "
          f"did not approve {np.median(planned) * 1e3:.0f} ms (mean {np.mean(planned) * 1e3:.0f} ms, worst "
          f"{np.max(planned) * 1e3:.0f} ms)." if planned else "", file=out)  # fmt: skip
    print(file=out, flush=True)


class MotionCounts(NamedTuple):
    """Section 3's counts for one kind of start: answers reached, (a) old, (b) new, (c) split, (d) refused, and
    why the new check refused ((b) found a posture within the margin, or ran out of budget), (e) of the reached
    answers (b) refused, those with another solution whose move is direct; the checks' times."""

    reached: int
    old: int
    new: int
    split: int
    refused: int
    found: int
    budget: int
    other: int
    old_s: list
    new_s: list
    plan_s: list


def motion_counts(kind: str, n: int, seed: int) -> MotionCounts:
    """Section 3's counts on ``n`` benchmark targets from one kind of start (:data:`STARTS`)."""
    from ..nn.data import random_configurations
    from .protocol import sample_targets

    model = arm_model(ARM)
    targets = sample_targets(ARM, n, seed)
    if kind == "neutral":
        starts = np.tile(model.neutral, (n, 1))
    else:
        rng = np.random.default_rng(seed + 1)
        starts = np.empty((0, 5))
        while len(starts) < n:
            q = random_configurations(model, 2 * n, rng, 0.0)
            starts = np.concatenate([starts, q[clearance_batch(model, q)[0] >= MARGIN]])
    check = checker(model, model.body)
    c = dict.fromkeys(("reached", "old", "new", "split", "refused", "found", "budget", "other"), 0)
    times: dict[str, list] = {"old_s": [], "new_s": [], "plan_s": []}
    for x, q0 in zip(targets, starts[:n]):
        start = q0.tolist()
        sol = api.solve(x.tolist(), model, initial=start)
        goal = list(sol.angles)
        c["reached"] += sol.reached
        t0 = time.perf_counter()
        c["old"] += advance(Motion(model, start, goal, FRACTION), check)[0]
        t1 = time.perf_counter()
        direct = sweep(model, start, goal, FRACTION)
        t2 = time.perf_counter()
        times["old_s"].append(t1 - t0)
        times["new_s"].append(t2 - t1)
        if direct.clear:  # plan's first step is this very check: its answer is the direct command
            c["new"] += 1
            continue
        c["budget" if direct.samples >= BOX_BUDGET else "found"] += 1
        if sol.reached:  # what the service does first: another exact solution of the target whose move is direct
            c["other"] += first_direct(model, start, clear_by_move(model, x, start), FRACTION) is not None
        route = plan(model, start, goal, FRACTION)
        times["plan_s"].append(time.perf_counter() - t2)
        if len(route.commands) == 1:
            raise AssertionError("plan answered the direct command its own check refused")
        c["split" if route.commands else "refused"] += 1
    return MotionCounts(**c, **times)


def _share(k: int, n: int) -> str:
    return f"{k} ({100 * k / n:.1f} %)" if n else "0"


if __name__ == "__main__":
    sys.exit(main())
