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

One module over 500 lines on purpose: it is one report, its four sections printed in order from one run;
cut apart, each part would only be read with the others.
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
from .protocol import machine

#: The arm of sections 1, 3 and 4.
ARM = "LArm"
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
#: Section 4's fractionMaxSpeed values.
FRACTIONS = (0.2, 0.6)
#: Section 3's kinds of start.
STARTS = ("neutral", "random clear")
#: Processes sections 3 and 4 run in (the machine's cores, at most 3: there are three jobs).
JOBS = max(1, min(3, os.cpu_count() or 1))
#: Section 4's "near" moves: a start or an end whose clearance is below this (and at least MARGIN), metres.
NEAR = 0.030


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


# -------------------------------------------------------------------------------------------- 4. the profiles


def simulate(model: ArmModel, start: Sequence[float], goal: Sequence[float], fraction: float, profile: str,
             cycle: float | None = None) -> np.ndarray:  # fmt: skip
    """The postures, one per control cycle, of the simulated robot's arm moved by one ``setAngles`` command.

    The stub's own per-cycle steps (:func:`sim_stub.profiles.linear_step` / :func:`~sim_stub.profiles.smooth_step`),
    each joint's move set up as :class:`sim_stub.motion.StubMotion` sets it up for a command to an arm at rest
    (peak ``fraction`` x the joint's maximum speed, its limit acceleration, :func:`~sim_stub.profiles.synchronise`
    for ``"synchronised"``); its collision protection is not applied (nothing bends the motion).

    Returns:
        (cycles + 1, 5) postures, the start first, the goal last.
    """
    from sim_stub.body import JOINTS
    from sim_stub.profiles import DEFAULT_CYCLE, Move, limit_acceleration, linear_step, smooth_step, synchronise

    dt = DEFAULT_CYCLE if cycle is None else cycle
    speeds = [JOINTS[name].max_velocity for name in model.names]
    q = [float(x) for x in start]
    peaks = [fraction * v for v in speeds]
    accels = [limit_acceleration(v) for v in speeds]
    setup = list(zip(peaks, accels))
    if profile == "synchronised":
        setup = synchronise([abs(float(g) - s) for s, g in zip(q, goal)], peaks, accels)
    moves = {
        j: Move(float(g), peak, accel if profile != "linear" else 0.0, accels[j], 0.0)
        for j, (g, (peak, accel)) in enumerate(zip(goal, setup))
    }
    step = linear_step if profile == "linear" else smooth_step
    out = [list(q)]
    while moves:
        for j, move in list(moves.items()):
            q[j], arrived = step(move, q[j], dt)
            if arrived:
                del moves[j]
        out.append(list(q))
    return np.array(out)


class ProfileRuns(NamedTuple):
    """Section 4's moves and what became of them.

    Attributes:
        a, b: (pairs, 5) starts and goals; near: (pairs,) a start or goal closer than NEAR.
        after: the new check approves; budget: it refused for want of budget.
        before: fraction -> the old check approves.
        closest: (profile, fraction) -> (pairs,) the least clearance along the simulated motion (NaN: not run).
        robot: the same, by the simulated robot's own shapes (:func:`sim_stub.body_shapes.part_gaps`).
    """

    a: np.ndarray
    b: np.ndarray
    near: np.ndarray
    after: np.ndarray
    budget: np.ndarray
    before: dict
    closest: dict
    robot: dict


def profile_runs(pairs: int, seed: int) -> ProfileRuns:
    """Section 4's moves, checked and run through the stub's profiles."""
    from sim_stub.body_shapes import part_gaps
    from sim_stub.profiles import PROFILES

    from ..nn.data import random_configurations

    model = arm_model(ARM)
    rng = np.random.default_rng(seed + 2)
    q, d = np.empty((0, 5)), np.empty(0)
    while len(q) < 2 * pairs:
        more = random_configurations(model, 4 * pairs, rng, 0.0)
        dist = clearance_batch(model, more)[0]
        keep = dist >= MARGIN
        q, d = np.concatenate([q, more[keep]]), np.concatenate([d, dist[keep]])
    a, b = q[:pairs], q[pairs : 2 * pairs]
    near = (d[:pairs] < NEAR) | (d[pairs : 2 * pairs] < NEAR)
    check = checker(model, model.body)
    swept = [sweep(model, x, y, FRACTIONS[0]) for x, y in zip(a, b)]
    after = np.array([w.clear for w in swept])
    budget = np.array([not w.clear and w.samples >= BOX_BUDGET for w in swept])
    before = {f: np.array([advance(Motion(model, x, y, f), check)[0] for x, y in zip(a, b)]) for f in FRACTIONS}
    closest, robot = {}, {}
    for profile in PROFILES:
        for f in FRACTIONS:
            low, real = np.full(pairs, np.nan), np.full(pairs, np.nan)
            for i in np.flatnonzero(before[f] | after):
                path = simulate(model, a[i], b[i], f, profile)
                low[i] = clearance_batch(model, path)[0].min()
                real[i] = min(min(part_gaps(ARM, q)) for q in path)
            closest[profile, f], robot[profile, f] = low, real
    return ProfileRuns(a, b, near, after, budget, before, closest, robot)


def print_profiles(out, pairs: int, seed: int, runs: ProfileRuns) -> None:
    """Section 4, from :func:`profile_runs`."""
    a, b, near, after, budget, before, closest, robot = runs
    print("## 4. Moves entering the body under each profile, before and after", file=out)
    print(file=out)
    print(f"{pairs} random pairs of {ARM} postures (`nao_ik.nn.data.random_configurations`, seed {seed + 2}; "
          f"WristYaw 0), both ends clear of the body by at least {1e3 * MARGIN:g} mm "
          f"(`nao_ik.geometry.collision.clearance_batch`); near: the start or the end closer than {1e3 * NEAR:g} mm "
          f"({int(near.sum())} of the {pairs}). Approved before: the old constant-speed check clear at that "
          f"fractionMaxSpeed; approved after: `sweep(model, start, goal, fraction).clear` (the box does not "
          f"depend on the fraction: {int(after.sum())} approved, {int((after & near).sum())} of them near). Each "
          "approved move is run through the simulated robot's setAngles profiles (sim_stub.profiles: linear, "
          "smooth, synchronised; its per-cycle steps, one posture per 20 ms cycle, the stub's collision "
          "protection off) and its clearance taken at every cycle.", file=out)  # fmt: skip
    _profile_table(out, "Entering the body (clearance < 0 at some cycle): approved moves that do, and the worst "
                   "depth.", closest, before, after, near, 0.0, a, b)  # fmt: skip
    _profile_table(out, "Entering the simulated robot's own shapes (`sim_stub.body_shapes.part_gaps`: its torso, "
                   "head, pelvis and thighs and its arm, measured from the robot's meshes independently of the "
                   "library's model; the robot's body as a test meets it) at some cycle: approved moves that do, and "
                   "the worst depth.", robot, before, after, near, 0.0, a, b)  # fmt: skip
    _profile_table(out, f"Closer than SWEEP_MARGIN ({1e3 * SWEEP_MARGIN:g} mm, what the checks promise a motion "
                   "keeps) at some cycle: approved moves that do, and the least clearance.",
                   closest, before, after, near, SWEEP_MARGIN, a, b)  # fmt: skip
    # What the new check costs in moves: those the old one approved and it refuses, run through every profile.
    lost = np.zeros(pairs, dtype=bool)
    for f in FRACTIONS:
        lost |= before[f] & ~after
    low = np.fmin.reduce(np.array(list(closest.values())), axis=0)  # NaN only where no profile ran it
    print(file=out)
    print(f"Refused after, approved before (at either fraction): {int(lost.sum())} moves "
          f"({int((lost & budget).sum())} of them for want of budget: the box not certified within {BOX_BUDGET} "
          f"postures); {int((lost & (low < 0.0)).sum())} of them enter the body under some profile at some "
          f"fraction, {int((lost & (low < SWEEP_MARGIN)).sum())} come closer than SWEEP_MARGIN, "
          f"{int((lost & (low >= SWEEP_MARGIN)).sum())} keep SWEEP_MARGIN under all three profiles at both "
          "fractions.", file=out, flush=True)  # fmt: skip


def _profile_table(out, title: str, closest: dict, before: dict, after: np.ndarray, near: np.ndarray,
                   limit: float, a: np.ndarray, b: np.ndarray) -> None:  # fmt: skip
    """One table of section 4: per profile and fraction, approved moves coming below ``limit``, before and after,
    all and near; an example of the worst one of every nonzero "after" cell."""
    print(file=out)
    print(title, file=out)
    print(file=out)
    print("| profile | fractionMaxSpeed | before, all moves | after, all moves | before, near moves | "
          "after, near moves |", file=out)  # fmt: skip
    print("|---|---|---|---|---|---|", file=out)
    examples = []
    for (profile, f), low in closest.items():
        cells = []
        for moves in (np.ones_like(near), near):
            for approved in (before[f], after):
                sel = approved & moves
                bad = sel & (low < limit)
                cell = f"{int(bad.sum())} / {int(sel.sum())}"
                if bad.any():
                    worst = float(low[bad].min())
                    size = f"{-1e3 * worst:.1f} mm deep" if limit == 0.0 else f"{1e3 * worst:.1f} mm"
                    cell += f" ({100 * bad.sum() / sel.sum():.2f} %), {size}"
                cells.append(cell)
        print(f"| {profile} | {f:g} | {cells[0]} | {cells[1]} | {cells[2]} | {cells[3]} |", file=out)
        bad = after & (low < limit)
        if bad.any():
            i = int(np.flatnonzero(bad)[np.argmin(low[bad])])
            examples.append((profile, f, i, float(low[i])))
    for profile, f, i, low_i in examples:
        print(file=out)
        print(f"Approved after, yet {profile} at fractionMaxSpeed {f:g} comes to {1e3 * low_i:.1f} mm of the body "
              f"(worst of its cell): start {np.round(a[i], 4).tolist()}, goal {np.round(b[i], 4).tolist()}.",
              file=out)  # fmt: skip
    out.flush()


if __name__ == "__main__":
    sys.exit(main())
