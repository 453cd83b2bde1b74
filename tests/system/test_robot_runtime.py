"""The robot runtime (nao_ik.robot): the library's answers, Python 2.7's grammar, no numpy, served from the .pkg.

The served tests create a virtual environment with ``qi`` and no numpy, build the .pkg, install
it into a simulated PackageManager folder, start the service as its manifest says (the
manifest's command, with this venv's Python for /usr/bin/python2, in the installed folder, with
``--qi-url`` of the simulated robot added as ServiceManager does) and call it over real libqi.
"""

from __future__ import annotations

import ast
import glob
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import pytest

from nao_ik import solve as library_solve
from nao_ik.geometry.collision import arm_capsules, clearance, posture_body
from nao_ik.geometry.sweep import sweep
from nao_ik.kinematics import chain as kinematics
from nao_ik.model.arm import arm_model
from nao_ik.model.body import MARGIN
from nao_ik.robot.arms import MODELS
from nao_ik.robot.other import rows
from nao_ik.robot.package import EXEC_START, RUNTIME, SERVICE_NAME, SERVICE_NAOQI, box_calls, build, for_runtime, served
from nao_ik.robot.record import Record
from nao_ik.robot.solve import STANDING, solve
from tests import report
from tests.system.test_behaviors import XAR, Speech, boxes, io, make_box, q, run_diagram, start

ROOT = Path(__file__).resolve().parents[2]
#: The other arm of each arm.
OTHER = {"LArm": "RArm", "RArm": "LArm"}
#: A target inside the torso: every configuration that reaches it goes through the body.
INSIDE_TORSO = [0.02, 0.0, -0.02]
#: The standard-library modules the runtime may import (and qi).
ALLOWED = {"__future__", "argparse", "collections", "errno", "fcntl", "functools", "hashlib", "heapq", "inspect",
           "json", "math", "numbers", "os", "platform", "random", "select", "signal", "subprocess", "sys", "tempfile",
           "threading", "time", "timeit", "traceback", "typing", "qi"}  # fmt: skip


def _cases(arm: str, n: int, seed: int) -> list:
    """(target, start): random configurations' hands (every fifth moved 5 cm off) from random starts."""
    model = arm_model(arm)
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        goal, start = rng.uniform(model.lower, model.upper), rng.uniform(model.lower, model.upper)
        goal[4] = start[4]
        t = kinematics.forward(model, goal) + (rng.normal(scale=0.05, size=3) if i % 5 == 0 else 0.0)
        out.append((t.tolist(), start.tolist()))
    return out


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_the_runtime_gives_the_librarys_answers(arm):
    """The same code (the scalar path, the body's clearance): the same angles to 1e-12 wherever the runtime finds
    an allowed swivel clear of the body, the library's reason where it finds none."""
    lib = arm_model(arm)  # with NAO's standing body, as the runtime
    found = 0
    for t, q0 in _cases(arm, 200, 7):
        mine = solve(MODELS[arm], t, q0)
        theirs = library_solve(t, lib, "analytic", initial=q0)
        if mine.found:
            found += 1
            assert max(abs(a - b) for a, b in zip(mine.angles, theirs.angles)) <= 1e-12, (t, q0)
            assert mine.reached == theirs.reached and abs(mine.error - theirs.error) <= 1e-12
            assert MODELS[arm].within_limits(mine.angles)
            assert clearance(lib, mine.angles).distance >= MARGIN - 1e-9
        else:  # the library's least-squares fallback (numpy) may get closer: the runtime reports it
            assert not mine.reached and mine.angles == MODELS[arm].clamp(q0) and not theirs.reached
            assert mine.reason == theirs.reason, (t, q0)
    assert found >= 140, found


def test_only_configurations_through_the_body_reach_a_target_inside_the_torso():
    """The runtime refuses it as the library does ("collision: torso"); the bodiless search would answer it."""
    model = MODELS["LArm"]
    mine = solve(model, INSIDE_TORSO, list(model.neutral))
    assert not mine.found and not mine.reached and mine.reason == "collision: torso"
    assert library_solve(INSIDE_TORSO, arm_model("LArm"), "analytic", initial=list(model.neutral)).reason == \
        "collision: torso"  # fmt: skip
    assert solve(model, INSIDE_TORSO, list(model.neutral), body=()).found  # control: the body is what refuses it


def test_the_runtime_models_are_the_librarys():
    for arm, model in MODELS.items():
        lib = arm_model(arm)
        assert model.names == lib.names and model.hand_offset == lib.hand_offset and model.neutral == lib.neutral
        assert [tuple(j) for j in model.joints] == [tuple(j) for j in lib.joints]


# ------------------------------------------------------------------ the other arm


def _in_the_way() -> tuple:
    """(a right-arm target, a left-arm posture swung out, one swung in) drawn from a fixed seed, where the right
    arm's answer from its neutral posture, checked without the left arm, goes into the left arm swung in, though
    it keeps clear of the left arm swung out (and its motion too); swung in is the runtime's answer, from swung
    out, for its own hand, its motion clear of the body and of the right arm at neutral (the runtime sends it).
    Searched, not written down: it holds for the body model of the day."""
    from nao_ik.robot.solve import forward, motion

    left, right = MODELS["LArm"], MODELS["RArm"]
    home = list(right.neutral)
    near = STANDING + rows(right, home, home)
    rng = np.random.default_rng(5)
    for _ in range(2000):
        t = forward(right, rng.uniform(right.lower, right.upper).tolist())
        if t[0] < 0.08:
            continue
        blind = solve(right, t, home)
        if not (blind.reached and motion(right, home, blind.angles)[0]):
            continue
        for _ in range(50):
            aim = rng.uniform(left.lower, left.upper).tolist()
            if clearance(right, blind.angles, STANDING + rows(left, aim, aim)).distance >= 0:
                continue
            out = list(aim)
            out[1] = min(out[1] + 0.4, left.upper[1])  # the same posture swung out sideways
            there = STANDING + rows(left, out, out)
            if min(clearance(left, out, near).distance, clearance(right, blind.angles, there).distance) < MARGIN:
                continue
            if solve(right, t, home, there).angles != blind.angles or not motion(right, home, blind.angles, there)[0]:
                continue
            way = solve(left, forward(left, aim), out, near)
            if not (way.reached and motion(left, out, way.angles, near)[0]):
                continue
            if clearance(right, blind.angles, STANDING + rows(left, way.angles, way.angles)).distance < 0:
                return list(t), out, list(way.angles)
    raise AssertionError("no right-arm target with the left arm in its way")


#: A right-arm target, the left arm swung out of its way and swung into it (:func:`_in_the_way`).
RIGHT_TARGET, LEFT_OUT_OF_THE_WAY, LEFT_IN_THE_WAY = _in_the_way()


def _same_rows(mine, theirs) -> bool:
    return len(mine) == len(theirs) and all(
        a[0] == b[0] and max(abs(x - y) for x, y in zip((*a[1], *a[2], a[3]), (*b[1], *b[2], b[3]))) <= 1e-12
        for a, b in zip(mine, theirs)
    )


def test_the_other_arm_is_the_librarys_where_it_stands_and_where_it_may_go():
    """Standing: the library's capsules of its posture (``collision.arm_capsules``). On its way to a command: the
    library's region of the computer-side model (``posture_body`` with the command, its overshoot), piece for
    piece."""
    rng = np.random.default_rng(5)
    for arm in ("LArm", "RArm"):
        model, lib = MODELS[arm], arm_model(arm)
        for _ in range(20):
            here, aim = rng.uniform(lib.lower, lib.upper).tolist(), rng.uniform(lib.lower, lib.upper).tolist()
            assert rows(model, here, here) == tuple(tuple(c) for c in arm_capsules(lib, here))
            fraction = float(rng.uniform(0.05, 1.0))
            record = Record(MODELS)
            record.add(arm, aim, fraction)  # sent, not answered yet: it may still run
            lo, hi, _ = record.box(model, here)
            assert _same_rows(rows(model, lo, hi), posture_body(None, (lib, here), aim, fraction)[len(STANDING) :])


def _segment_distance(p, a, b) -> float:
    p, a, b = np.asarray(p), np.asarray(a), np.asarray(b)
    d = b - a
    t = 0.0 if d @ d < 1e-18 else min(max(float((p - a) @ d / (d @ d)), 0.0), 1.0)
    return float(np.linalg.norm(p - a - t * d))


def test_the_other_arms_rows_hold_its_links_at_every_posture_of_its_box():
    """Boxes small and large (up to the joints' whole ranges): every point of every link, at postures drawn in the
    box and at its corners, lies within that link's capsule of some piece, grown radius less the link's own (the
    rows: the arm's shoulder, fixed to the torso, then each piece's links)."""
    from nao_ik.geometry.scalar.clearance import link_points
    from nao_ik.geometry.scalar.swivel import arm as scalar_arm
    from nao_ik.model.body_data import LINK_ROWS, OTHER_ARM, shoulder_row

    rng = np.random.default_rng(8)
    for arm in ("LArm", "RArm"):
        model = MODELS[arm]
        k = scalar_arm(model)
        for width in (0.0, 0.05, 0.3, 1.0, 5.0):
            a = rng.uniform(model.lower, model.upper)
            b = np.clip(a + rng.uniform(-width, width, 5), model.lower, model.upper)
            lo, hi = np.minimum(a, b).tolist(), np.maximum(a, b).tolist()
            cover = rows(model, lo, hi)
            assert cover[0] == shoulder_row(k.s, OTHER_ARM)
            cover = cover[1:]
            corners = [[(lo, hi)[(n >> j) & 1][j] for j in range(5)] for n in range(32)]
            for posture in corners + rng.uniform(lo, hi, (40, 5)).tolist():
                pts = link_points(k, posture)
                for i, (_, first, last, _, radius) in enumerate(LINK_ROWS):
                    for t in np.linspace(0.0, 1.0, 7):
                        x = np.asarray(pts[first]) + t * (np.asarray(pts[last]) - np.asarray(pts[first]))
                        assert min(_segment_distance(x, r[1], r[2]) - (r[3] - radius) for r in cover[i::3]) <= 1e-9


class _Future:
    def __init__(self, done: bool):
        self.done = done

    def isFinished(self) -> bool:  # noqa: N802 (qi's name)
        return self.done


def test_the_record_of_an_arms_commands_is_held_against_its_readings():
    """The runtime's record (nao_ik.robot.record: the motion core's rule, as the computer-side engine holds its own):
    an arm not seen at rest is anywhere in its range, one seen at rest (its commanded angles unchanged over
    REST_SPAN) where it stands. A command holds while the commanded angles read stay on its way, judged only by
    readings asked LAG after its answer (an earlier one may show the arm before ALMotion took it); a reading off its
    way drops it (another command moved the arm: anywhere until seen at rest again); it ends where they reach its
    goal, and any motion after that drops it; seen at rest short of its goal after its answer, the motors on, it has
    stalled (the caller drops it once nothing holds the arm); an earlier command stays in the box until a joint on
    its way there has had the time to brake; one whose answer never came is held once the arm is at rest since."""
    from nao_ik.geometry.scalar.sweep import BRAKE, CYCLE
    from nao_ik.motion.truth import LAG, REST_SPAN

    model = MODELS["LArm"]
    still, first, second = list(model.neutral), [0.1, -0.25, -0.11, -1.29, 0.0], [-0.5, 0.6, -0.4, -0.5, 0.3]
    mid = [(a + b) / 2 for a, b in zip(still, first)]

    def at_rest():  # a record whose LArm was seen at rest at ``still`` a while ago
        record = Record(MODELS)
        t = time.monotonic() - 5.0
        for asked in (t - REST_SPAN, t):
            record.observe(asked, {"LArm": still}, {"LArm": True})
        return record

    def holds(record, q, at=still):
        lo, hi, _ = record.box(model, at)
        return all(a - 1e-12 <= x <= b + 1e-12 for a, b, x in zip(lo, hi, q))

    record = Record(MODELS)
    assert record.unknown("LArm") and record.box(model, still)[:2] == (list(model.lower), list(model.upper))
    t = time.monotonic()
    for asked in (t, t + REST_SPAN / 2):
        record.observe(asked, {"LArm": still}, {"LArm": True})
    assert record.unknown("LArm")  # still for less than REST_SPAN
    record.observe(t + REST_SPAN, {"LArm": still}, {"LArm": True})
    assert not record.unknown("LArm") and record.box(model, still)[:2] == (still, still)

    # Judged LAG after its answer; off its way: dropped, and the arm moved: anywhere.
    record = at_rest()
    one = record.add("LArm", first, 0.5, _Future(False))
    assert record.running("LArm") and holds(record, first) and holds(record, still)
    version = record.version("LArm")
    record.observe(time.monotonic(), {"LArm": second}, {"LArm": True})  # its answer not seen yet: judges nothing
    one.answered = time.monotonic()
    record.observe(one.answered + LAG / 2, {"LArm": second}, {"LArm": True})  # may show the arm before it was taken
    assert record.running("LArm") and not record.unknown("LArm")
    record.observe(one.answered + LAG, {"LArm": second}, {"LArm": True})
    assert not record.running("LArm") and record.unknown("LArm") and record.version("LArm") > version

    # On its way, then at its goal: ended there; any motion after: another's.
    record = at_rest()
    two = record.add("LArm", first, 0.5, _Future(True))
    assert two.judged_by(two.sent + LAG + 1.0) and two.answered is not None  # its answer seen when asked for
    record.observe(two.answered + LAG, {"LArm": mid}, {"LArm": True})
    assert record.running("LArm") and holds(record, first, mid)
    record.observe(two.answered + LAG + 0.1, {"LArm": first}, {"LArm": True})
    assert not record.running("LArm") and record.box(model, first)[:2] == (first, first)
    record.observe(two.answered + LAG + 0.2, {"LArm": mid}, {"LArm": True})
    assert record.unknown("LArm")

    # Seen at rest short of its goal, from a cycle after its answer over REST_SPAN, the motors on: stalled.
    record = at_rest()
    three = record.add("LArm", first, 0.5, _Future(False))
    three.answered = time.monotonic()
    record.observe(three.answered + LAG, {"LArm": still}, {"LArm": True})
    assert record.stalled("LArm") is None
    record.observe(three.answered + CYCLE + REST_SPAN, {"LArm": still}, {"LArm": False})
    assert record.stalled("LArm") is None  # its motors off
    record.observe(three.answered + CYCLE + REST_SPAN + 0.01, {"LArm": still}, {"LArm": True})
    assert record.stalled("LArm") is three and record.running("LArm")
    record.drop("LArm", three)
    assert not record.running("LArm") and record.box(model, still)[:2] == (still, still)

    # An earlier command: in the box until its joints have had the time to brake once the next one was taken.
    record = at_rest()
    record.add("LArm", first, 0.5, _Future(False)).answered = time.monotonic()
    four = record.add("LArm", second, 0.5, _Future(False))
    assert holds(record, first) and holds(record, second)  # the next one not taken yet
    four.answered = time.monotonic()
    assert holds(record, first)  # taken just now: a joint may still be braking toward the first
    four.answered = time.monotonic() - 0.5 * BRAKE - 0.05
    assert holds(record, second) and not holds(record, first)
    # ... but a reading on the way the arm took toward the first, where a joint that was moving away from the second
    # braked beyond the second's origin and is on its way back, holds the record.
    record.observe(four.answered + LAG, {"LArm": mid}, {"LArm": True})
    assert record.running("LArm") and not record.unknown("LArm")

    # No answer came: ALMotion may take it later; held once the arm is at rest since it went.
    record = at_rest()
    five = record.add("LArm", first, 0.5, None)
    five.lost = True
    record.observe(five.sent + LAG, {"LArm": still}, {"LArm": True})
    assert record.running("LArm") and not record.held("LArm") and record.stalled("LArm") is None
    record.observe(five.sent + CYCLE + REST_SPAN, {"LArm": still}, {"LArm": True})
    assert record.held("LArm") and record.running("LArm")


class _Collision:
    """ALMotion's isCollision answering ``answer`` (an exception: failing) to the runtime's proof of a stalled
    command."""

    def __init__(self, answer):
        self.answer = answer

    def start(self, method, args, end):
        assert method == "isCollision", method
        return None

    def result(self, pending):
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_a_reach_waits_until_the_arms_last_command_has_ended_and_no_longer():
    """NaoArmIK._ended, the readings given: "" once the commanded angles reach the command's goal, or once it
    stalled (at rest short of it) and isCollision says nothing holds the arm (the record dropped); STILL_HELD at once
    where the robot's protection holds it, isCollision fails, or ALMotion never answered the command and the arm is
    at rest; AGAIN where the arm keeps moving until the budget ends."""
    from nao_ik.motion.truth import REST_SPAN
    from nao_ik.robot.service import AGAIN, ANSWER_TIME, STILL_HELD, NaoArmIK

    model = MODELS["LArm"]
    here, there = list(model.neutral), [0.1, -0.25, -0.11, -1.29, 0.0]

    def ended(readings, collision="none", lost=False):
        ik = NaoArmIK.__new__(NaoArmIK)
        ik._record = Record(MODELS)
        t = time.monotonic() - 5.0
        for asked in (t - REST_SPAN, t):
            ik._record.observe(asked, {"LArm": here}, {"LArm": True})
        entry = ik._record.add("LArm", there, 0.5, None)
        entry.sent -= 2.0
        if lost:
            entry.lost = True
        else:
            entry.answered = entry.sent  # taken long ago: every reading now judges it
        ik._link = _Collision(collision)
        feed = iter(readings)
        ik._read = lambda arm, end: ik._record.observe(time.monotonic(), {"LArm": next(feed)}, {"LArm": True})
        t0 = time.monotonic()
        return ik._ended("LArm", t0 + 1.0), time.monotonic() - t0, ik._record

    def toward(k):  # k-th reading on the way to there, at the goal from the sixth
        return [a + min(k / 5.0, 1.0) * (b - a) for a, b in zip(here, there)]

    why, took, record = ended([toward(k) for k in range(1, 60)])
    assert why == "" and not record.running("LArm") and took < 0.5, (why, took)
    why, took, record = ended([here] * 60)  # at rest short of its goal, nothing holding it: it runs no more
    assert why == "" and not record.running("LArm") and record.box(model, here)[:2] == (here, here)
    for collision in ("collision", RuntimeError("ALMotion has no method isCollision")):
        why, took, record = ended([here] * 60, collision)
        assert why == STILL_HELD and record.running("LArm") and took < 0.2, (collision, took)
    why, took, record = ended([here] * 60, lost=True)
    assert why == STILL_HELD and record.running("LArm")
    why, took, _ = ended([toward(k / 100.0) for k in range(1, 200)])  # on its way, slowly
    assert why == AGAIN and 1.0 - ANSWER_TIME - 0.05 <= took <= 1.0, took


def test_a_reach_on_its_way_waits_once_for_the_arms_last_command_to_end(monkeypatch):
    """A reach refused from the arm's way waits for the arm's last command to end and answers once more from where
    the arm is then; where the arm stopped short of it and may still go on (not proven to have ended), it is
    refused at once, not answered again and again until its budget is spent."""
    from nao_ik.robot.service import AGAIN, ON_ITS_WAY, STILL_HELD, NaoArmIK, Turn

    for waited, answered in (("", 2), (STILL_HELD, 1)):
        ik = NaoArmIK.__new__(NaoArmIK)
        ik._turns, ik._budget = {"LArm": Turn()}, 4.0
        answers = []

        def answer(*args, answers=answers):
            answers.append(args)
            return {"reason": ON_ITS_WAY + " crosses the head " + AGAIN}

        monkeypatch.setattr(ik, "_answer", answer)
        monkeypatch.setattr(ik, "_ended", lambda arm, end, waited=waited: waited)
        t0 = time.monotonic()
        got = ik._reach("LArm", [0.1, 0.1, 0.1], "analytic", 0.2, True, t0 + 2.0)
        assert got["reason"].startswith(ON_ITS_WAY) and len(answers) == answered and time.monotonic() - t0 < 1.0
        assert got["reason"].endswith(AGAIN if answered == 2 else "not proven at rest)"), got


# ------------------------------------------------------------------ the grammar and the imports


def _python2() -> str | None:
    pyenv = sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/2.7*/bin/python2.7")))
    for path in [shutil.which("python2.7")] + pyenv:
        if path and subprocess.run([path, "-c", "pass"], capture_output=True).returncode == 0:
            return path
    return None


def test_every_runtime_file_keeps_to_the_common_subset_and_imports_only_the_runtime():
    """No Python-3-only construct, division from __future__, imports: the runtime's own files, stdlib, qi."""
    modules = {rel[:-3].replace("/", ".").removesuffix(".__init__") for rel in RUNTIME}
    for rel in RUNTIME:
        source = (ROOT / rel).read_text()
        tree = ast.parse(source)
        package = rel[:-3].replace("/", ".").removesuffix(".__init__")
        package = package if rel.endswith("__init__.py") else package.rpartition(".")[0]
        assert rel.endswith("__init__.py") or "from __future__ import division" in source, rel
        for node in ast.walk(tree):
            where = f"{rel}:{getattr(node, 'lineno', '?')}"
            assert not isinstance(node, (ast.JoinedStr, ast.NamedExpr, ast.Nonlocal, ast.YieldFrom, ast.AnnAssign,
                                         ast.AsyncFunctionDef, ast.Await, ast.MatMult)), where  # fmt: skip
            if isinstance(node, (ast.List, ast.Tuple, ast.Set)):  # [*a, b], a, *b = ...: Python 3 only
                assert not any(isinstance(e, ast.Starred) for e in node.elts), where
            if isinstance(node, ast.Call):  # f(*a, *b), f(**a, **b): Python 3.5+
                assert sum(isinstance(e, ast.Starred) for e in node.args) <= 1, where
                assert sum(k.arg is None for k in node.keywords) <= 1, where
            if isinstance(node, (ast.FunctionDef, ast.Lambda)):
                a = node.args
                assert not a.kwonlyargs and not a.posonlyargs, where
                assert all(x.annotation is None for x in a.args + [a.vararg, a.kwarg] if x is not None), where
                assert not isinstance(node, ast.FunctionDef) or node.returns is None, where
            if isinstance(node, ast.Raise):
                assert node.cause is None, where  # "raise ... from" is Python 3 only
            if isinstance(node, ast.Import):
                assert all(alias.name in ALLOWED for alias in node.names), where
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                    assert target in modules, (where, target)
                elif node.module.startswith("nao_ik."):
                    assert node.module in modules, where
                else:
                    assert node.module in ALLOWED, where


@pytest.mark.skipif(_python2() is None, reason="no Python 2.7 on this machine")
def test_every_runtime_file_compiles_with_python_2_7():
    script = "import sys\nfor p in sys.argv[1:]:\n    compile(open(p).read(), p, 'exec')\n"
    run = subprocess.run([_python2(), "-c", script, *(str(ROOT / rel) for rel in RUNTIME)],
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert run.returncode == 0, run.stderr


@pytest.mark.skipif(_python2() is None, reason="no Python 2.7 on this machine")
def test_python_2_7_solves_from_the_package_tree(tmp_path):
    """The packaged tree under Python 2.7 (no numpy, no qi): the runtime's solve, motion check and other arm, the
    same answers; its record held against readings by the motion core, and the speed kept across restarts."""
    pkg = build(tmp_path / "nao-ik.pkg")
    tree = tmp_path / "tree"
    zipfile.ZipFile(pkg).extractall(tree)
    cases = _cases("RArm", 30, 11)
    script = (
        "import json, sys\nsys.path.insert(0, sys.argv[1])\nfrom nao_ik.robot.arms import MODELS\n"
        "from nao_ik.robot.solve import STANDING, motion, solve\n"
        "from nao_ik.robot.other import rows\n"
        "cases, start, goal, lo, hi = json.load(sys.stdin)\nm = MODELS['LArm']\n"
        "print(json.dumps([[list(solve(MODELS['RArm'], t, q)) for t, q in cases], list(motion(m, start, goal)),"
        " rows(MODELS['RArm'], lo, hi)]))\n"
        "assert 'numpy' not in sys.modules\n"
        "from nao_ik.robot.record import Record\nfrom nao_ik.motion.truth import REST_SPAN\n"
        "from nao_ik.service.kept import Kept\n"
        "r = Record(MODELS)\nwas = r.unknown('LArm')\n"
        "for t in (0.0, REST_SPAN):\n    r.observe(t, {'LArm': start}, {'LArm': True})\n"
        "e = r.add('LArm', goal, 0.5)\ne.answered = 1.0\nr.observe(2.0, {'LArm': goal}, {'LArm': True})\n"
        "Kept('robot', 'NaoArmIK', sys.argv[2]).set_speed(0.2, 0.05)\n"
        "assert was and not r.unknown('LArm') and not r.running('LArm')\n"
        "assert Kept('robot', 'NaoArmIK', sys.argv[2]).speed(0.2) == 0.05\n"
    )
    import json

    from nao_ik.geometry.scalar.clearance import clearance as float_clearance
    from nao_ik.geometry.sweep import sweep
    from tests.unit.geometry.test_motion_body import CROSSING_START, CROSSING_TARGET

    goal = solve(MODELS["LArm"], CROSSING_TARGET, CROSSING_START).angles
    lo, hi = [-0.2, -1.0, 0.1, 0.3, -0.5], [0.6, -0.2, 0.9, 1.2, 0.5]  # a right arm on its way
    run = subprocess.run([_python2(), "-c", script, str(tree), str(tmp_path / "kept")],
                         input=json.dumps([cases, CROSSING_START, goal, lo, hi]),
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert run.returncode == 0, run.stderr
    solves, crossing, other = json.loads(run.stdout)
    # The motion check under Python 2.7: the library's sweep's numbers.
    theirs = sweep(arm_model("LArm"), CROSSING_START, goal, 1.0)
    assert crossing == [False, theirs.distance, theirs.part, theirs.samples] and theirs.part == "torso"
    assert len(other) > 3 and _same_rows([(r[0], tuple(r[1]), tuple(r[2]), r[3]) for r in other],
                                         rows(MODELS["RArm"], lo, hi))  # fmt: skip
    assert float_clearance(MODELS["LArm"], goal, STANDING).distance >= MARGIN - 1e-9
    for (angles, reached, _, _, found, reason), (t, q0) in zip(solves, cases):
        mine = solve(MODELS["RArm"], t, q0)
        assert found == mine.found and reached == mine.reached and reason == mine.reason
        assert max(abs(a - b) for a, b in zip(angles, mine.angles)) <= 1e-12


# ------------------------------------------------------------------ the package


def test_the_package_declares_the_service_and_holds_the_runtime(tmp_path):
    pkg = tmp_path / "nao-ik.pkg"
    make = subprocess.run(["make", "-s", "-C", str(ROOT), "package", f"PKG={pkg}"], capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert make.returncode == 0, make.stderr
    with zipfile.ZipFile(pkg) as z:
        names = set(z.namelist())
        manifest = ET.fromstring(z.read("manifest.xml"))
    assert set(RUNTIME) <= names and "nao_ik/__init__.py" in names and "behavior_1/behavior.xar" in names
    services = manifest.findall("./services/service")
    assert [(s.get("name"), s.get("execStart"), s.get("autorun")) for s in services] == [
        (SERVICE_NAME, EXEC_START, "true")
    ]
    assert "--qi-url" in EXEC_START and EXEC_START.startswith("/usr/bin/python2 nao_ik/robot/main.py")
    assert manifest.find("./contents/behaviorContent").get("path") == "behavior_1"  # the boxes still there
    # The boxes alone (a computer serves NaoArmIK): no service, no runtime.
    with zipfile.ZipFile(build(tmp_path / "boxes.pkg", service=False)) as z:
        assert ET.fromstring(z.read("manifest.xml")).find("./services") is None
        assert not [n for n in z.namelist() if n.startswith("nao_ik/")] and "behavior_1/behavior.xar" in z.namelist()


# ------------------------------------------------------------------ served over libqi, no numpy

qi = pytest.importorskip("qi", reason="libqi (the 'qi' package) is needed for the served tests")

from nao_ik.service.supervisor import process_tree  # noqa: E402
from sim_stub.latency import PUBLIC  # noqa: E402
from sim_stub.motion import JOINTS, StubMotion  # noqa: E402
from sim_stub.profiles import default_profile  # noqa: E402
from sim_stub.robot import SimulatedRobot  # noqa: E402


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> str:
    """A virtual environment with qi (the version this one has) and no numpy."""
    venv = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    pip = subprocess.run([python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                          f"qi=={qi.__version__ if hasattr(qi, '__version__') else _qi_version()}"],
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    if pip.returncode != 0:
        pytest.skip(f"cannot install qi into a fresh venv: {pip.stderr[-300:]}")
    assert subprocess.run([python, "-c", "import numpy"], capture_output=True).returncode != 0
    return python


def _qi_version() -> str:
    from importlib.metadata import version

    return version("qi")


class Installed:
    """The simulated robot, the package installed by its PackageManager, the service its ServiceManager started."""

    def __init__(self, python: str, tmp: Path):
        # The stub ServiceManager runs the manifest's command in the package's folder with --qi-url added; this
        # numpy-free venv's Python plays the robot's /usr/bin/python2.
        self.robot = SimulatedRobot(apps_dir=str(tmp / "apps"), python2=python)
        self.user = qi.Session()
        self.user.connect(self.robot.url)
        self.user.service("PackageManager").install(str(build(tmp / "nao-ik.pkg")))
        self.folder = tmp / "apps" / "nao-ik-behaviors"
        entry = ET.parse(self.folder / "manifest.xml").find("./services/service")
        self.name = f"nao-ik-behaviors.{entry.get('name')}"
        self.proc = self.robot.services.process(self.name)
        assert self.proc is not None and shlex.split(entry.get("execStart"))[0] == "/usr/bin/python2"
        self.ik = self._wait(entry.get("name"))
        self.motion = self.user.service("ALMotion")

    def _wait(self, name: str, timeout: float = 30.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end and self.proc.poll() is None:
            try:
                return self.user.service(name)
            except RuntimeError:
                time.sleep(0.1)
        raise AssertionError(f"{name} did not register: {self.log()}")

    def log(self) -> str:
        return (self.folder / f"{self.name}.log").read_text()[-2000:]

    def services(self) -> set:
        return {s["name"] for s in self.user.services()}

    def close(self) -> None:
        self.user.close()
        self.robot.close()


@pytest.fixture(scope="module")
def installed(bare_python, tmp_path_factory):
    with pytest.MonkeyPatch.context() as env:  # what the service keeps (nao_ik.service.kept): a folder of its own
        env.setenv("XDG_RUNTIME_DIR", str(tmp_path_factory.mktemp("runtime-dir")))
        s = Installed(bare_python, tmp_path_factory.mktemp("robot"))
    yield s
    s.close()


def test_the_installed_service_registers_and_says_what_it_has(installed):
    assert SERVICE_NAME in installed.services()
    assert installed.ik.getMethods() == ["analytic"]
    installed.ik.setSpeed(0.5)
    assert installed.ik.getSpeed() == 0.5


def _settle(installed, names: list, q: list) -> None:
    installed.motion.setAngles(names, q, 1.0)
    end = time.monotonic() + 10
    while installed.motion.getAngles(names, True) != installed.motion.getTargets(names):
        assert time.monotonic() < end, "the simulated joints did not arrive"
        time.sleep(0.02)


@pytest.mark.parametrize("arm", ["LArm", "RArm"])
def test_compute_angles_over_qi_gives_the_librarys_answers(installed, arm):
    """With NAO's standing body and the other arm where it stands, as the computer-side service's model has them
    (:func:`nao_ik.geometry.collision.posture_body`)."""
    other = arm_model(OTHER[arm])
    names = list(arm_model(arm).names)
    rng = np.random.default_rng(3)
    installed.motion.wakeUp()
    compared = 0
    for _ in range(3):
        _settle(installed, names, rng.uniform(arm_model(arm).lower, arm_model(arm).upper).tolist())
        start = installed.motion.getAngles(names, True)
        lib = arm_model(arm)._replace(body=posture_body(None, (other, installed.motion.getAngles(other.names, True))))
        for t, _ in _cases(arm, 10, int(rng.integers(1 << 30))):
            got = installed.ik.computeAngles(arm, *t, "")
            theirs = library_solve(t, lib, "analytic", initial=start)
            assert got["method"] == "analytic" and got["names"] == names and not got["moved"]
            if got["otherSolution"]:  # the answer's motion crosses the body; another solution's does not
                assert got["reached"] and got["commands"] == 1 and theirs.reached
                assert np.linalg.norm(kinematics.forward(lib, got["angles"]) - t) <= 1e-4
                assert not sweep(lib, start, list(theirs.angles), 1.0).clear
                assert sweep(lib, start, got["angles"], 1.0).clear
            elif got["commands"] == 1 or got["reason"].startswith("motion:"):  # found (maybe no safe direct motion)
                assert max(abs(a - b) for a, b in zip(got["angles"], theirs.angles)) <= 1e-12
                assert got["reached"] == (theirs.reached and got["commands"] == 1)
                compared += 1
            else:  # nothing allowed found: the library's least-squares fallback does not reach either
                assert not got["reached"] and got["angles"] == start and not theirs.reached
                assert got["reason"] == theirs.reason
    assert compared >= 20, compared


def test_a_reach_whose_answer_would_cross_the_body_goes_direct_to_another_solution(installed):
    """Where the nearest exact answer's motion from the sensed posture is not certified and another sampled
    exact solution's is, the runtime sends that one (as the computer-side service does): one command, the hand
    on the target, the answer says so; the simulated robot's protection stops nothing."""
    from tests.unit.geometry.test_motion_body import _needs_legs_but_another_goes_direct

    stub = installed.robot.motion
    installed.motion.wakeUp()
    model = arm_model("LArm")
    names = list(model.names)
    other = 0
    for posture, target in _needs_legs_but_another_goes_direct(model, 4, 5):
        stub.setCollisionProtectionEnabled("Arms", False)  # the test's own move there: behind the runtime's back
        _settle(installed, names, posture)
        stub.setCollisionProtectionEnabled("Arms", True)
        stub.clearRecordedCommands()
        before = len(stub.getRecordedCommands())
        got = installed.ik.reachToWithSpeed("LArm", *target, "", 1.0)
        sent = [c for c in stub.getRecordedCommands()[before:] if c["method"] == "setAngles"]
        if not got["otherSolution"]:  # the other arm, part of the runtime's body, may bar it
            assert not got["moved"] and not sent, got
            continue
        other += 1
        assert got["moved"] and got["reached"] and got["commands"] == 1, got
        assert len(sent) == 1 and sent[0]["angles"] == got["angles"]
        hand = kinematics.forward(model, got["angles"])
        assert np.linalg.norm(hand - target) == pytest.approx(got["error"], abs=1e-12) and got["error"] <= 1e-4
        _settle(installed, names, got["angles"])
    assert other >= 2, other
    assert stub.getCollisionStops() == [] and stub.getViolations() == []


def test_reach_moves_the_arm_and_bad_input_sends_nothing(installed):
    stub = installed.robot.motion
    installed.motion.wakeUp()
    model = arm_model("LArm")
    # From neutral (wherever earlier tests left the arm) to a posture near it: one direct command.
    stub.setAngles(list(model.names), list(model.neutral), 1.0)
    end = time.monotonic() + 5
    while max(abs(a - b) for a, b in zip(stub.getAngles(list(model.names), True), model.neutral)) > 1e-6:
        assert time.monotonic() < end, "the arm did not get to neutral"
        time.sleep(0.02)
    t = kinematics.forward(model, [model.neutral[0] - 0.2, *model.neutral[1:]]).tolist()
    before = len(stub.getRecordedCommands())
    got = installed.ik.reachTo(*t, "analytic")
    assert got["moved"] and got["reached"] and got["error"] < 1e-9, got
    installed.ik.getSpeed()  # a round trip after the command
    time.sleep(0.2)
    sent = [c for c in stub.getRecordedCommands()[before:] if c["method"] == "setAngles"]
    assert len(sent) == 1 and sent[0]["names"] == list(model.names) and sent[0]["angles"] == got["angles"]
    assert not sent[0]["violations"] and sent[0]["speed"] == installed.ik.getSpeed()
    for call, args, word in [
        ("reachTo", (float("nan"), 0.1, 0.1, ""), "target x"),
        ("reachTo", (0.1, True, 0.1, ""), "target y"),
        ("reachToWithArm", ("Leg", 0.1, 0.1, 0.1, ""), "unknown arm"),
        ("reachToWithArm", ("LArm", 0.1, 0.1, 0.1, "fabrik"), "not available on the robot runtime"),
        ("reachToWithSpeed", ("RArm", 0.1, -0.1, 0.1, "", 2.0), "speed"),
        ("setSpeed", (0.0,), "speed"),
        ("reachTo", (150, 120, 80), "coordinates are metres"),
        ("computeAngles", ("LArm", 0.0, 1.5, 0.1), "coordinates are metres"),
    ]:
        with pytest.raises(RuntimeError, match=word) as e:
            getattr(installed.ik, call)(*args)
        assert str(e.value).startswith("ValueError: ") and "\n" not in str(e.value)  # one line, no server stack
    installed.ik.getSpeed()
    time.sleep(0.2)
    assert not [c for c in stub.getRecordedCommands()[before + 1 :] if c["method"] == "setAngles"]


#: Each arm hanging at its side, out of the other's way (the other arm is part of the body).
HANGING = {"LArm": [1.4, 0.25, -1.2, -0.5, 0.0], "RArm": [1.4, -0.25, 1.2, 0.5, 0.0]}


def _computed_with_the_other_arm_hanging(installed, arm: str, *args) -> dict:
    """computeAngles with the arm still at neutral, the other hanging at its side (at neutral the other arm is in
    the way of a reach across the chest), once the runtime's own earlier commands have run out.

    The runtime takes an arm it commanded to be anywhere between its reading and that command's angles (grown by
    a retarget's overshoot) for as long as the command may run (``nao_ik.robot.other.run_time``: twice its
    constant-speed time and a second): an arm an earlier test sent off is then rightly in the other's way
    ("collision: other arm", "motion: the move crosses the other arm"), however the test has moved it since.
    """
    model, other = arm_model(arm), arm_model(OTHER[arm])
    _settle(installed, list(model.names) + list(other.names), list(model.neutral) + HANGING[other.arm])
    end = time.monotonic() + 10
    while True:
        got = installed.ik.computeAngles(arm, *args)
        if "other arm" not in got["reason"] or time.monotonic() > end:
            return got
        time.sleep(0.1)


def test_the_method_may_be_left_out_and_reach_to_takes_the_targets_side(installed):
    installed.motion.wakeUp()
    right = _computed_with_the_other_arm_hanging(installed, "RArm", 0.15, -0.12, 0.08)
    assert right["method"] == "analytic" and right["reached"], right["reason"]
    got = installed.ik.reachTo(0.15, -0.12, 0.08)
    assert got["arm"] == "RArm" and got["reached"] and got["moved"]
    assert installed.ik.computeAngles("LArm", 0.15, 0.12, 0.08)["method"] == "analytic"


def _sent_since(installed, before: int) -> list:
    installed.ik.getSpeed()  # a round trip after any command
    time.sleep(0.2)
    return [c for c in installed.robot.motion.getRecordedCommands()[before:] if c["method"] == "setAngles"]


def test_the_runtime_keeps_the_arm_out_of_the_head_where_the_head_is(installed):
    """The runtime reads the head's yaw and pitch with the arms: a target before the face is reached with the
    head up, and refused ("collision: head") with the head pitched forward (the face 26 mm nearer)."""
    installed.motion.wakeUp()
    target = (0.12, 0.03, 0.20)
    try:
        _settle(installed, ["HeadYaw", "HeadPitch"], [0.0, 0.0])
        got = _computed_with_the_other_arm_hanging(installed, "LArm", *target, "analytic")
        assert got["reached"], got["reason"]
        _settle(installed, ["HeadYaw", "HeadPitch"], [0.0, 0.5])
        got = installed.ik.computeAngles("LArm", *target, "analytic")
        assert not got["reached"] and got["reason"] == "collision: head", got["reason"]
    finally:
        _settle(installed, ["HeadYaw", "HeadPitch"], [0.0, 0.0])


def test_a_target_inside_the_torso_is_refused_and_nothing_is_sent(installed):
    installed.motion.wakeUp()
    model = arm_model("LArm")
    _settle(installed, list(model.names), list(model.neutral))
    before = len(installed.robot.motion.getRecordedCommands())
    got = installed.ik.reachTo(*INSIDE_TORSO, "analytic")
    assert got["reason"] == "collision: torso" and not got["reached"] and not got["moved"] and got["commands"] == 0
    assert _sent_since(installed, before) == []


def test_a_move_that_crosses_the_body_is_refused_and_nothing_is_sent(installed):
    """tests/unit/geometry/test_motion_body.py's crossing: the answer is clear, the direct motion to it crosses the
    torso; the runtime has no swung-out sequences, so it sends nothing. Control: the same answer sent directly trips
    the stub's protection."""
    from tests.unit.geometry.test_motion_body import CROSSING_START, CROSSING_TARGET

    stub, names = installed.robot.motion, list(arm_model("LArm").names)
    installed.motion.wakeUp()
    stub.setCollisionProtectionEnabled("Arms", False)
    _settle(installed, names, CROSSING_START)
    stub.setCollisionProtectionEnabled("Arms", True)
    stub.clearRecordedCommands()
    for call in ("reachToWithSpeed", "computeAngles"):
        args = ("LArm", *CROSSING_TARGET, "analytic") + ((1.0,) if call == "reachToWithSpeed" else ())
        got = getattr(installed.ik, call)(*args)
        assert got["reason"] == "motion: the move crosses the torso", got
        assert not got["reached"] and not got["moved"] and got["commands"] == 0
    assert _sent_since(installed, 0) == [] and stub.getCollisionStops() == []
    _settle_stopped(installed, names, got["angles"])
    assert stub.getCollisionStops()  # the control: the direct command crosses the body


def _settle_stopped(installed, names: list, q: list) -> None:
    """Send ``q`` directly and wait until the arm stands still (reached, or stopped by the stub's protection)."""
    installed.motion.setAngles(names, q, 1.0)
    end, last = time.monotonic() + 10, None
    while True:
        time.sleep(0.1)
        now = installed.motion.getAngles(names, True)
        if now == last:
            return
        assert time.monotonic() < end, "the simulated joints did not stop"
        last = now


# ------------------------------------------------------------------ a huge message, a hung ALMotion, a crash


def _service_pid(installed) -> int:
    """The process that serves NaoArmIK: the supervisor's child (the process itself where there is none)."""
    pid = installed.proc.pid
    kids = process_tree(pid)[1:]
    assert len(kids) <= 1, kids
    return kids[0] if kids else pid


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        return next(int(line.split()[1]) / 1024 for line in fh if line.startswith("VmRSS:"))


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _home(installed) -> None:
    """Both arms at their neutral postures (the stub's protection off on the way: an arm may be anywhere)."""
    stub = installed.robot.motion
    stub.setCollisionProtectionEnabled("Arms", False)
    try:
        for arm in ("LArm", "RArm"):
            _settle(installed, list(MODELS[arm].names), list(MODELS[arm].neutral))
    finally:
        stub.setCollisionProtectionEnabled("Arms", True)


def test_a_huge_argument_is_dropped_unread_and_the_others_are_answered(installed):
    """A 'nao-ik' client sends 1,000,000 [x, y, z] points as reachTo's x (about 50 MB): libqi in the runtime reads
    the message's header, finds it over the cap (QI_MAX_MESSAGE_PAYLOAD) and drops that caller's connection within
    a second of the message going out, its memory and CPU untouched; the other callers are answered."""
    pid = _service_pid(installed)
    assert installed.ik.computeAngles("LArm", 0.15, 0.12, 0.08)["names"] == list(MODELS["LArm"].names)  # warm
    caller = qi.Session()
    caller.connect(installed.robot.url)
    try:
        big = caller.service(SERVICE_NAME)
        points = [[0.15, 0.12, 0.08] for _ in range(1_000_000)]
        rss, cpu = _rss_mb(pid), _cpu_s(pid)
        t0 = time.monotonic()
        future = big.reachTo(points, 0.1, 0.1, "", _async=True)  # the caller's libqi builds the message and sends it
        sent = time.monotonic()
        state = future.wait(1000)
        refused = time.monotonic() - sent
        grew, spent = _rss_mb(pid) - rss, _cpu_s(pid) - cpu
    finally:
        caller.close()
    t1 = time.perf_counter()
    assert installed.ik.getMethods() == ["analytic"]  # the others are answered
    answered = time.perf_counter() - t1
    report.lines.append(
        f"robot runtime, reachTo with 1,000,000 points as x: the caller built and sent it in {sent - t0:.1f} s, "
        f"refused {refused:.2f} s later; runtime RSS {rss:.0f} MB {grew:+.1f} MB, CPU {spent:.2f} s; "
        f"the next call answered in {answered * 1e3:.1f} ms"
    )
    assert state == qi.FutureState.FinishedWithError and "disconnected" in future.error().lower(), future.error()
    assert grew < 10 and spent < 0.5, (grew, spent)
    assert _service_pid(installed) == pid  # dropped, not crashed


def test_a_hung_almotion_costs_a_reach_its_budget_and_nothing_is_sent_after(installed):
    """ALMotion's getAngles hangs 20 s: three reaches at once each fail within the call's budget with a one-line
    error (the first on its ALMotion timeout, the next waiting for the arm's turn), the service answers other calls
    meanwhile, and once ALMotion answers again none of them sends anything."""
    from nao_ik.robot import service as runtime

    budget = getattr(runtime, "CALL_BUDGET", 4.0)
    stub, model = installed.robot.motion, arm_model("LArm")
    installed.motion.wakeUp()
    _home(installed)
    target = kinematics.forward(model, list(model.neutral)).tolist()
    before = len(stub.getRecordedCommands())
    results: list = [None] * 3

    def reach(i):
        t0 = time.monotonic()
        try:
            installed.ik.reachTo(*target, "")
            results[i] = ("sent", time.monotonic() - t0)
        except RuntimeError as e:
            results[i] = (str(e), time.monotonic() - t0)

    stub.setHang("getAngles", 20.0)
    try:
        threads = [threading.Thread(target=reach, args=(i,)) for i in range(3)]
        for th in threads:
            th.start()
        time.sleep(0.3)
        t0 = time.monotonic()
        assert installed.ik.getMethods() == ["analytic"]
        other = time.monotonic() - t0
        for th in threads:
            th.join(30)
    finally:
        stub.setHang("getAngles", 0)
    installed.motion.getAngles(list(model.names), True)  # the stub has served every call queued behind the hang
    time.sleep(0.3)
    report.lines.append(
        f"robot runtime, getAngles hung: three reaches failed after {', '.join(f'{r[1]:.2f}' for r in results)} s "
        f"(budget {budget:g} s), another call answered in {other * 1e3:.0f} ms meanwhile"
    )
    assert other < 0.5, other
    for message, seconds in results:
        assert message != "sent" and seconds <= budget + 0.5, results
        assert message.endswith("nothing sent") and "\n" not in message, message
    assert any("ALMotion.getAngles did not answer within" in m for m, _ in results), results
    assert not [c for c in stub.getRecordedCommands()[before:] if c["method"] == "setAngles"]
    again = installed.ik.reachTo(*target, "")
    assert again["moved"], again  # and reaches work again


#: How deep a nested list must be to overflow libqi's decoding thread in the runtime here (it does from about 3500).
NESTED = 6000


def test_a_value_nested_too_deep_for_libqi_leaves_the_service_answering(installed):
    """libqi decodes a call's arguments recursively on its network thread: a value nested NESTED lists deep (sent
    as reachTo's x) overflows that thread's stack and the service process dies of SIGSEGV before any Python code
    runs. The supervisor (the process ServiceManager watches) starts it again at once: NaoArmIK answers again
    within a few seconds, and the supervisor is the same process."""
    supervisor, worker = installed.proc.pid, _service_pid(installed)
    caller = qi.Session()
    caller.connect(installed.robot.url)
    ik = caller.service(SERVICE_NAME)
    failed: list = []

    def send():  # a thread with a large stack: the caller's own libqi recurses too while it encodes the value
        value = 0.1
        for _ in range(NESTED):
            value = [value]
        try:
            ik.reachTo(value, 0.1, 0.1, "")
        except RuntimeError as e:
            failed.append(str(e))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 100_000))
    threading.stack_size(256 << 20)
    try:
        thread = threading.Thread(target=send)
        thread.start()
    finally:
        threading.stack_size(0)
    thread.join(30)
    sys.setrecursionlimit(limit)
    caller.close()
    t0 = time.monotonic()
    while True:
        try:
            again = installed.user.service(SERVICE_NAME)
            if again.getMethods() == ["analytic"] and again.computeAngles("LArm", 0.15, 0.12, 0.08)["angles"]:
                break
        except RuntimeError:
            pass
        assert time.monotonic() - t0 < 10, f"NaoArmIK did not come back: {installed.log()}"
        time.sleep(0.1)
    back = time.monotonic() - t0
    installed.ik = again
    report.lines.append(f"robot runtime, a value nested {NESTED} deep: the service answered again {back:.2f} s later")
    assert failed and "disconnected" in failed[0].lower(), failed
    assert installed.proc.poll() is None and installed.proc.pid == supervisor
    assert _service_pid(installed) != worker
    assert "died of signal 11" in installed.log()


#: A right-arm target and a left-arm one, drawn from a fixed seed: with both arms at their neutral postures, the
#: right arm's motion to its answer is certified (and takes over 6 s at fraction 0.01); the left arm's answer,
#: computed with the right arm where it starts, overlaps the region of the right arm's way (the box between its
#: start and its answer) and comes within 2 cm of its straight way there; the left target is reached clear of the
#: right arm once that has got there.
TOWARD = ([0.1054, -0.1056, -0.0413], [0.1504, 0.0537, 0.0246])


def _killed_and_restarted(s: Installed, timeout: float = 20.0):
    """SIGKILL the process ServiceManager watches (the supervisor; its worker stops by itself), and wait until
    ServiceManager has started it again and the new NaoArmIK answers; its proxy."""
    old, worker = s.proc, _service_pid(s)
    os.kill(old.pid, signal.SIGKILL)
    assert old.wait(10) == -signal.SIGKILL
    end = time.monotonic() + timeout
    while os.path.exists(f"/proc/{worker}"):  # the old worker stops (and unregisters) by itself
        assert time.monotonic() < end, "the worker of the killed supervisor did not stop"
        time.sleep(0.05)
    while True:
        proc = s.robot.services.process(s.name)
        if proc is not None and proc is not old and proc.poll() is None:
            try:
                ik = s.user.service(SERVICE_NAME)
                if ik.getMethods() == ["analytic"]:
                    s.proc, s.ik = proc, ik
                    return ik
            except RuntimeError:
                pass
        assert time.monotonic() < end, f"ServiceManager did not start NaoArmIK again: {s.log()}"
        time.sleep(0.1)


def test_restarted_by_servicemanager_it_keeps_the_speed_and_takes_the_other_arm_as_anywhere_until_at_rest(
    bare_python, tmp_path
):
    """The runtime sent the right arm on a slow motion (fraction 0.01) toward where the next left reach goes, and is
    killed; ServiceManager starts it again. The new runtime did not send that command: it takes the right arm as
    anywhere in its range until it sees it at rest, so the left reach is refused or sent clear of all of it, and the
    arms never come within the robot protection's margin of each other (the protection off, so that an overlap
    shows: gaps sampled every cycle); once the right arm has stopped, the same reach is reached. The speed a
    caller set survives the restart, and the commands go at it."""
    from sim_stub.protection import MARGIN as STOP
    from sim_stub.shapes import arms_gap

    s = Installed(bare_python, tmp_path)
    stub, names = s.robot.motion, {arm: list(MODELS[arm].names) for arm in ("LArm", "RArm")}
    gaps: list = []
    done = threading.Event()

    def watch() -> None:  # the gap between the arms' shapes (the stub's own), every cycle
        while not done.wait(0.02):
            gaps.append(arms_gap(stub.getAngles(names["LArm"], True), stub.getAngles(names["RArm"], True)))

    try:
        s.motion.wakeUp()
        _home(s)
        s.ik.setSpeed(0.05)
        stub.setCollisionProtectionEnabled("Arms", False)
        going = s.ik.reachToWithSpeed("RArm", *TOWARD[0], "", 0.01)
        assert going["moved"] and going["moveSeconds"] > 5.0, (going["reason"], going["moveSeconds"])
        threading.Thread(target=watch, daemon=True).start()
        t0 = time.monotonic()
        ik = _killed_and_restarted(s)
        back = time.monotonic() - t0
        assert ik.getSpeed() == 0.05
        target = TOWARD[1]
        assert stub.getAngles(names["RArm"], True) != stub.getTargets(names["RArm"])  # still on its way
        try:
            got = ik.reachToWithArm("LArm", *target, "")
        except RuntimeError as e:
            got = {"moved": False, "reason": str(e)}
        if got["moved"]:  # clear of the right arm anywhere in its range
            body = posture_body(None, (arm_model("RArm"), list(MODELS["RArm"].lower)), list(MODELS["RArm"].upper))
            assert clearance(arm_model("LArm"), got["angles"], body).distance >= MARGIN - 1e-6, got
        end = time.monotonic() + 30
        while stub.getAngles(names["RArm"], True) != stub.getTargets(names["RArm"]):
            assert time.monotonic() < end, "the right arm did not stop"
            time.sleep(0.05)
        again = ik.reachToWithArm("LArm", *target, "")
        assert again["reached"] and again["moved"], again["reason"]
        assert [c["speed"] for c in stub.getRecordedCommands() if c["method"] == "setAngles"][-1] == 0.05
        _arrive(s, names["LArm"], again["angles"])
    finally:
        done.set()
        s.close()
    near = [g for g in gaps if g < STOP]
    report.lines.append(
        f"robot runtime restarted by ServiceManager while the other arm moved (fraction 0.01): back in {back:.1f} s; "
        f"the reach toward it: {got['reason'] or 'sent'}; {len(near)} of {len(gaps)} cycles with the arms within "
        f"the protection's {STOP * 1e3:.0f} mm (closest {min(gaps) * 1e3:.0f} mm); speed kept"
    )
    assert gaps and not near, min(gaps)


# ------------------------------------------------------------------ the other arm, served


def _place(installed, arm: str, q: list) -> None:
    """An arm put at ``q`` directly (the stub's protection off on the way), the other at its neutral posture."""
    _home(installed)
    stub = installed.robot.motion
    stub.setCollisionProtectionEnabled("Arms", False)
    try:
        _settle(installed, list(MODELS[arm].names), q)
    finally:
        stub.setCollisionProtectionEnabled("Arms", True)


def test_a_reach_keeps_clear_of_the_other_arm_standing_in_the_way(installed):
    """The left arm stands swung in (LEFT_IN_THE_WAY); the right arm's answer for RIGHT_TARGET without the left arm
    goes into it (the control). The runtime refuses it or answers clear of the left arm, answer and motion; what
    it sends keeps MARGIN from the left arm."""
    from nao_ik.geometry.sweep import sweep

    left, right = arm_model("LArm"), arm_model("RArm")
    installed.motion.wakeUp()
    _place(installed, "LArm", LEFT_IN_THE_WAY)
    start = installed.motion.getAngles(list(right.names), True)
    body = posture_body(None, (left, installed.motion.getAngles(list(left.names), True)))  # the library's
    blind = solve(MODELS["RArm"], RIGHT_TARGET, start)  # the answer of a check without the left arm
    assert blind.reached and clearance(right, blind.angles, body).distance < 0
    assert clearance(right, blind.angles, body).part == "other arm"
    before = len(installed.robot.motion.getRecordedCommands())
    for call in ("computeAngles", "reachToWithArm"):
        got = getattr(installed.ik, call)("RArm", *RIGHT_TARGET, "")
        if got["commands"]:
            assert clearance(right, got["angles"], body).distance >= MARGIN - 1e-9
            assert sweep(right, start, got["angles"], 0.5, body).clear
        else:
            assert "other arm" in got["reason"] and not got["moved"] and not got["reached"], got
    for command in _sent_since(installed, before):
        assert clearance(right, command["angles"], body).distance >= MARGIN - 1e-9, command


def test_a_reach_keeps_clear_of_where_the_other_arm_is_still_going(installed):
    """The left arm stands swung out (LEFT_OUT_OF_THE_WAY), where the right arm's answer for RIGHT_TARGET keeps
    clear of it; the runtime sends it slowly to swung in (LEFT_IN_THE_WAY), and at once the right arm's reach. The
    left arm has barely moved, but its way leads into that answer: the runtime refuses the reach, or answers
    clear of the left arm's whole way (the library's region of it, ``posture_body`` with its command)."""
    left, right = arm_model("LArm"), arm_model("RArm")
    installed.motion.wakeUp()
    _place(installed, "LArm", LEFT_OUT_OF_THE_WAY)
    start = installed.motion.getAngles(list(right.names), True)
    here = installed.motion.getAngles(list(left.names), True)
    before = len(installed.robot.motion.getRecordedCommands())
    going = installed.ik.reachToWithSpeed("LArm", *kinematics.forward(left, LEFT_IN_THE_WAY).tolist(), "", 0.03)
    got = installed.ik.reachToWithArm("RArm", *RIGHT_TARGET, "")
    assert going["moved"] and going["moveSeconds"] > 1.0, going
    blind = solve(MODELS["RArm"], RIGHT_TARGET, start)
    assert clearance(right, blind.angles, posture_body(None, (left, here))).distance >= MARGIN  # the control ...
    assert clearance(right, blind.angles, posture_body(None, (left, going["angles"]))).distance < 0  # ... and here
    way = posture_body(None, (left, here), going["angles"], 0.03)
    if got["commands"]:
        assert clearance(right, got["angles"], way).distance >= MARGIN - 1e-9, got
    else:
        assert "other arm" in got["reason"] and not got["moved"], got
    sent = [c for c in _sent_since(installed, before) if c["names"] == list(right.names)]
    assert all(clearance(right, c["angles"], way).distance >= MARGIN - 1e-9 for c in sent), sent
    _home(installed)


# ------------------------------------------------------------------ the budget and the arms' turns, in this process


class Late:
    """ALMotion as the stub serves it, but ``getAngles`` answers the robot as it was up to ``lag`` seconds before,
    sensed and commanded angles alike, with nothing that says so (ALMotion's answers carry no timestamp): the stub
    is sampled every few milliseconds, and a call gets the sample of a moment on a grid of HOLD seconds that is
    ``lag`` - HOLD to ``lag`` old, so that a value, a moving arm's too, repeats for HOLD seconds."""

    HOLD = 0.06
    SAMPLE = 0.005

    def __init__(self, stub: StubMotion, lag: float):
        names = list(JOINTS)
        history: list = []  # (when sampled, sensed, commanded), oldest first
        # One tuple: qi publishes an object's callable attributes.
        self._state = (stub, lag, names, history, threading.Lock(), threading.Event())
        self._sample()
        threading.Thread(target=self._run, name="late-almotion", daemon=True).start()

    @qi.nobind
    def _sample(self) -> None:
        stub, lag, names, history, lock, _ = self._state
        t = time.monotonic()  # before the stub's reading: the sample shows the robot at t or later
        sample = (t, dict(zip(names, stub.getAngles(names, True))), dict(zip(names, stub.getAngles(names, False))))
        with lock:
            history.append(sample)
            while len(history) > 2 and history[1][0] < t - lag - 1.0:
                history.pop(0)

    @qi.nobind
    def _run(self) -> None:
        stop = self._state[5]
        while not stop.wait(self.SAMPLE):
            self._sample()

    @qi.nobind
    def close(self) -> None:
        self._state[5].set()

    def getAngles(self, names, useSensors):  # noqa: N802, N803 (ALMotion's names)
        stub, lag, _, history, lock, _ = self._state
        grid = self.HOLD
        # A moment on the grid, lag - HOLD to lag - 0.02 s ago: its newest sample, taken a few ms before at most.
        moment = grid * math.floor((time.monotonic() - lag + grid + 0.02) / grid) - 0.02
        with lock:
            sample = next((h for h in reversed(history) if h[0] <= moment), history[0])
        values = sample[1] if useSensors else sample[2]
        return [values[n] for n in stub._expand(names)]


def _forwarded(name: str):
    def method(self, *args):
        return getattr(self._state[0], name)(*args)

    method.__name__ = name
    return method


for _name in PUBLIC:
    if _name != "getAngles":
        setattr(Late, _name, _forwarded(_name))


class Here:
    """The runtime's NaoArmIK in this process on a simulated robot, with a 1 s budget (``call_budget``) and 0.5 s
    ALMotion calls; with ``lag``, ALMotion's readings are that late (:class:`Late`)."""

    def __init__(self, lag: float = 0.0, profile: str | None = None, call_budget: float = 1.0):
        from nao_ik.robot.service import NaoArmIK

        self.robot = SimulatedRobot(profile=profile)
        self.late = None
        if lag:
            self.late = Late(self.robot.motion, lag)
            self.robot.unregister_motion()
            self.robot.session.registerService("ALMotion", self.late)
        self.server = qi.Session()
        self.server.connect(self.robot.url)
        self.server.listen("tcp://127.0.0.1:0")
        self.service = NaoArmIK(self.server, call_budget=call_budget, motion_timeout=0.5)
        self.server.registerService(SERVICE_NAME, self.service)
        self.user = qi.Session()
        self.user.connect(self.robot.url)
        self.ik = self.user.service(SERVICE_NAME)
        stub = self.robot.motion
        stub.wakeUp()
        for arm in ("LArm", "RArm"):  # from where the reaches' motions are clear
            names = list(MODELS[arm].names)
            stub.setAngles(names, list(MODELS[arm].neutral), 1.0)
            end = time.monotonic() + 10
            while stub.getAngles(names, True) != stub.getTargets(names):
                assert time.monotonic() < end, "the simulated joints did not arrive"
                time.sleep(0.02)
        time.sleep(lag)  # the readings show the arms there
        end = time.monotonic() + 5
        while True:  # the runtime sees both arms at rest (it has just started: they may be anywhere until then)
            try:
                self.ik.computeAngles("LArm", *_hand("LArm"), "")
                break
            except RuntimeError:
                assert time.monotonic() < end, "the runtime did not see the arms at rest"
        stub.clearRecordedCommands()

    def sent(self) -> list:
        self.user.service("ALMotion").getAngles(["LArm"], True)  # after every command taken
        return [c for c in self.robot.motion.getRecordedCommands() if c["method"] == "setAngles"]

    def close(self) -> None:
        self.user.close()
        self.server.close()
        self.robot.close()
        if self.late is not None:
            self.late.close()


@pytest.fixture()
def here():
    s = Here()
    yield s
    s.close()


#: Two left-arm targets: from the neutral posture, the second's answer moves there clear, but not from where the arm
#: may be on its way to the first's (through the head).
ON_ITS_WAY = ([0.0723, 0.2984, 0.1382], [0.0692, 0.1692, 0.2587])


def _hand(arm: str) -> list:
    return kinematics.forward(arm_model(arm), list(arm_model(arm).neutral)).tolist()


def test_a_command_computed_from_a_reading_older_than_the_budget_is_never_sent(here, monkeypatch):
    """The stale-command guard: a solve that finishes past the call's budget (a robot's CPU taken by something
    else) leaves a command computed from an old reading; it is refused, nothing is sent. The control: in time, the
    same reach is sent."""
    import nao_ik.robot.service as runtime

    def slow(*args):
        time.sleep(1.2)
        return solve(*args)

    monkeypatch.setattr(runtime, "solve", slow)
    with pytest.raises(RuntimeError, match=r"reading 1\.\d+ s old, past the call's budget; nothing sent$"):
        here.ik.reachToWithArm("LArm", *_hand("LArm"), "")
    assert here.sent() == []
    monkeypatch.setattr(runtime, "solve", solve)
    assert here.ik.reachToWithArm("LArm", *_hand("LArm"), "")["moved"] and len(here.sent()) == 1


def test_one_call_at_a_time_commands_an_arm_and_the_other_arm_is_free(here):
    """While a call holds the left arm's turn, a left reach waits for it until its budget is spent and then fails,
    sending nothing; a right reach and a left computeAngles are answered meanwhile."""
    turn = here.service._turns["LArm"]
    assert turn.take(time.monotonic() + 1.0)  # a call commanding the left arm
    try:
        t0 = time.monotonic()
        with pytest.raises(RuntimeError, match="LArm: another call commanded it until past the call's budget"):
            here.ik.reachToWithArm("LArm", *_hand("LArm"), "")
        waited = time.monotonic() - t0
        t0 = time.monotonic()
        assert here.ik.reachToWithArm("RArm", *_hand("RArm"), "")["moved"]
        assert here.ik.computeAngles("LArm", *_hand("LArm"), "")["reached"]
        others = time.monotonic() - t0
    finally:
        turn.give()
    assert 0.9 <= waited <= 1.5 and others < 0.5, (waited, others)
    assert [c["names"][0] for c in here.sent()] == ["RShoulderPitch"]
    assert here.ik.reachToWithArm("LArm", *_hand("LArm"), "")["moved"]  # the turn given back


def test_a_reach_while_the_arm_is_on_its_way_is_checked_from_all_of_its_way(here):
    """The left arm is sent slowly toward ON_ITS_WAY's first target and at once reaches for its second: that
    answer's motion from where the arm was read is clear (the control), but from somewhere on its way to the first
    command (where the second may take it) it would cross the head. The runtime refuses it, saying why; the
    robot got the first command only."""
    from nao_ik.model.body_data import body_rows
    from nao_ik.robot.service import BODY_JOINTS
    from nao_ik.robot.solve import motion

    first, second = ON_ITS_WAY
    model, other = MODELS["LArm"], MODELS["RArm"]
    motion_service = here.user.service("ALMotion")
    start = motion_service.getAngles(list(model.names), True)
    hips_head = motion_service.getAngles(BODY_JOINTS, True)
    stands = motion_service.getAngles(list(other.names), True)
    body = body_rows(hips_head[0], hips_head[1], (hips_head[2], hips_head[3])) + rows(other, stands, stands)
    going = here.ik.reachToWithSpeed("LArm", *first, "", 0.05)
    got = here.ik.reachToWithArm("LArm", *second, "")
    assert going["moved"] and going["reached"], going
    assert not got["moved"] and not got["reached"] and got["commands"] == 0, got
    assert re.fullmatch(r"motion: the move from where the arm may still be on its way to its last command crosses "
                        r"the (head|other arm) \(call again once it stopped\)", got["reason"]), got  # fmt: skip
    assert [c["angles"] for c in here.sent()] == [going["angles"]]
    # The control, from the posture before the first command (the arm has moved little since: the answers agree):
    # from there alone the answer's motion is certified; from its way to the first command it is not.
    blind = solve(model, second, start, body)
    assert blind.reached and np.allclose(blind.angles, got["angles"], atol=0.05), (blind, got)
    assert motion(model, start, blind.angles, body)[0]
    way = (np.minimum(start, going["angles"]).tolist(), np.maximum(start, going["angles"]).tolist())
    assert not motion(model, start, blind.angles, body, way=way)[0]
    assert here.robot.motion.getCollisionStops() == []


def test_a_reach_while_the_arm_is_on_its_way_waits_for_it_to_stop(here):
    """ON_ITS_WAY's two reaches again, the first fast enough to end within the second's budget: the second waits
    for the arm to stop at the first and is sent from there; the simulated robot's protection stops nothing."""
    first, second = ON_ITS_WAY
    going = here.ik.reachToWithSpeed("LArm", *first, "", 0.5)
    t0 = time.monotonic()
    got = here.ik.reachToWithArm("LArm", *second, "")
    waited = time.monotonic() - t0
    assert going["moved"] and got["moved"] and got["reached"] and got["commands"] == 1, got
    assert [c["angles"] for c in here.sent()] == [going["angles"], got["angles"]]
    assert waited > 0.1 and here.robot.motion.getCollisionStops() == []


def test_a_reach_barred_by_the_other_arms_record_goes_once_it_moved_off_and_rests():
    """The runtime sent the left arm to LEFT_IN_THE_WAY; another client then moved it to LEFT_OUT_OF_THE_WAY, where
    it stays. The runtime's record (the left arm there, or on its way there) would bar the right arm's reach for
    RIGHT_TARGET; the reading that shows the left arm off that command's goal drops it, and once the left arm is
    seen at rest where it stands the reach goes, clear of it there."""
    s = Here(call_budget=2.0)
    try:
        left, right = MODELS["LArm"], arm_model("RArm")
        names = list(left.names)

        def elsewhere(q):  # another client's move, behind the runtime's back
            s.robot.motion.setCollisionProtectionEnabled("Arms", False)
            s.user.service("ALMotion").setAngles(names, q, 1.0)
            _arrive(s, names, q)
            s.robot.motion.setCollisionProtectionEnabled("Arms", True)

        elsewhere(LEFT_OUT_OF_THE_WAY)
        into = kinematics.forward(arm_model("LArm"), LEFT_IN_THE_WAY).tolist()
        going = s.ik.reachToWithSpeed("LArm", *into, "", 1.0)
        assert going["moved"], going
        _arrive(s, names, going["angles"])
        elsewhere(LEFT_OUT_OF_THE_WAY)
        lo, hi, _ = s.service._record.box(left, LEFT_OUT_OF_THE_WAY)
        assert lo != hi  # the record as last read: the left arm may be on its way in
        got = s.ik.reachToWithArm("RArm", *RIGHT_TARGET, "")
        assert got["moved"] and got["reached"], got
        assert not s.service._record.running("LArm")
        body = posture_body(None, (arm_model("LArm"), LEFT_OUT_OF_THE_WAY))
        assert clearance(right, got["angles"], body).distance >= MARGIN - 1e-9
        assert s.robot.motion.getCollisionStops() == []
    finally:
        s.close()


def _arrive(here, names: list, q: list) -> None:
    end = time.monotonic() + 10
    while max(abs(a - b) for a, b in zip(here.robot.motion.getAngles(names, True), q)) > 1e-9:
        assert time.monotonic() < end, "the simulated joints did not arrive"
        time.sleep(0.02)


def test_an_arm_moved_off_its_command_and_at_rest_is_checked_from_where_it_stands():
    """The left arm got to ON_ITS_WAY's first target (the runtime's command), and another client sent it back to its
    neutral posture, where it stays. The reach for the second target, which from the way to the first would cross
    the head, is checked from where the arm stands once the readings show it off the first command's goal (the
    record dropped) and at rest there: it is sent."""
    s = Here(call_budget=2.0)
    try:
        first, second = ON_ITS_WAY
        model = MODELS["LArm"]
        names, neutral = list(model.names), list(model.neutral)
        going = s.ik.reachToWithSpeed("LArm", *first, "", 1.0)
        assert going["moved"] and going["reached"], going
        _arrive(s, names, going["angles"])
        s.user.service("ALMotion").setAngles(names, neutral, 1.0)  # another client's command
        _arrive(s, names, neutral)
        lo, hi, _ = s.service._record.box(model, neutral)
        assert all(a <= g <= b for a, g, b in zip(lo, going["angles"], hi))  # the record as last read
        got = s.ik.reachToWithArm("LArm", *second, "")
        assert got["moved"] and got["reached"] and got["commands"] == 1, got
        assert s.sent()[-1]["angles"] == got["angles"]
        assert s.robot.motion.getCollisionStops() == []
    finally:
        s.close()


#: The lags of ALMotion's readings the runtime is tried with (the bound, nao_ik.motion.truth.LAG, the largest):
#: make test the bound alone, make soak (a profile set, or NAO_IK_SOAK) the shorter ones as well.
LAGS = (0.2, 0.3, 0.5) if os.environ.get("NAO_IK_SOAK") or os.environ.get("NAO_IK_STUB_PROFILE") else (0.5,)


def _direct(s, arm: str, q: list) -> None:
    """Another client's move of ``arm`` to ``q`` (the stub's protection off on the way), waited for."""
    stub = s.robot.motion
    stub.setCollisionProtectionEnabled("Arms", False)
    try:
        stub.setAngles(list(MODELS[arm].names), q, 1.0)
        _arrive(s, list(MODELS[arm].names), q)
    finally:
        stub.setCollisionProtectionEnabled("Arms", True)


def _both_still(s, timeout: float = 10.0) -> None:
    """Until both arms are at their commands' targets (the stub's own view: no lag)."""
    names = list(MODELS["LArm"].names) + list(MODELS["RArm"].names)
    end = time.monotonic() + timeout
    while s.robot.motion.getAngles(names, True) != s.robot.motion.getTargets(names):
        assert time.monotonic() < end, "the arms did not stop"
        time.sleep(0.02)


# Every profile in make soak (which runs this file under each with NAO_IK_STUB_PROFILE); make test: the default one.
@pytest.mark.parametrize("profile", [default_profile()])
@pytest.mark.parametrize("lag", LAGS)
def test_late_readings_neither_prove_a_moving_arm_at_rest_nor_keep_a_still_one_from_it(lag, profile):
    """ALMotion's getAngles answers the robot as it was up to ``lag`` s before (sensed and commanded alike, each value
    repeated for a few cycles; :class:`Late`). The right arm is sent at full speed toward RIGHT_TARGET and at once
    the left arm toward where the right one goes (LEFT_IN_THE_WAY): its readings, late, show the right arm still
    where it was. The left reach is refused or sent clear of where the right arm went, and the robot's protection
    stops nothing. Then another client puts the right arm back out of the way: once it is still there, the runtime
    proves it at rest within its budget, and the same left reach goes."""
    from nao_ik.motion.truth import LAG, REST_SPAN

    assert max(LAGS) == LAG
    s = Here(lag=lag, profile=profile, call_budget=4.0)
    stub = s.robot.motion
    into = kinematics.forward(arm_model("LArm"), LEFT_IN_THE_WAY).tolist()
    right, home = arm_model("RArm"), list(MODELS["RArm"].neutral)
    took, reasons = [], []
    try:
        for _ in range(2):
            _direct(s, "LArm", LEFT_OUT_OF_THE_WAY)
            _direct(s, "RArm", home)
            time.sleep(lag)  # the readings show both arms where they were put
            going = s.ik.reachToWithSpeed("RArm", *RIGHT_TARGET, "", 1.0)
            assert going["moved"], going["reason"]
            got = s.ik.reachToWithArm("LArm", *into, "")
            _both_still(s)
            reasons.append(got["reason"] or "sent")
            if got["moved"]:
                went = s.robot.motion.getAngles(list(right.names), True)
                body = posture_body(None, (right, went))
                assert clearance(arm_model("LArm"), got["angles"], body).distance >= MARGIN - 1e-6, got
            _direct(s, "RArm", home)  # another client's: the right arm out of the way, still
            time.sleep(lag)  # the readings show it there
            t0 = time.monotonic()
            again = s.ik.reachToWithArm("LArm", *into, "")
            took.append(time.monotonic() - t0)
            assert again["moved"] and again["reached"], again["reason"]
            _both_still(s)
        stops = stub.getCollisionStops()
    finally:
        s.close()
    report.lines.append(
        f"robot runtime, readings {lag:g} s late ({profile}): {len(stops)} collision stops; the reach toward the "
        f"moving arm: {'; '.join(reasons)}; a still arm proven at rest and the reach sent in "
        f"{', '.join(f'{t:.2f}' for t in took)} s"
    )
    assert stops == [], stops
    assert max(took) <= REST_SPAN + 1.0, took  # the proof: REST_SPAN of readings; the rest, a busy machine's


def test_stopped_it_unregisters(installed):
    """Last: ServiceManager's stop (SIGTERM) unregisters NaoArmIK and the process exits 0."""
    manager = installed.user.service("ALServiceManager")
    assert manager.isServiceRunning(installed.name)
    assert manager.stop(installed.name)
    assert installed.proc.wait(15) == 0, installed.log()
    assert SERVICE_NAME not in installed.services() and "NaoArmIK unregistered" in installed.log()


# ------------------------------------------------------------------ the package's boxes on the runtime


@pytest.fixture(scope="module")
def packaged(tmp_path_factory):
    """The package installed on a simulated robot whose ServiceManager started the runtime (this Python plays
    /usr/bin/python2: the boxes are under test here, the runtime's imports above), and a stand-in for
    ALTextToSpeech (``speech``)."""
    s = Installed(sys.executable, tmp_path_factory.mktemp("boxes"))
    s.speech = Speech()
    s.robot.session.registerService("ALTextToSpeech", s.speech)
    yield s
    s.close()


class _Recorder:
    """A box's session: the NaoArmIK calls it makes, as (method, arguments, the error or None), passed on."""

    def __init__(self, session):
        self.session, self.calls = session, []

    def service(self, name):
        real = self.session.service(name)
        return real if name != SERVICE_NAME else _RecordedService(real, self.calls)


class _RecordedService:
    def __init__(self, real, calls):
        self._real, self._calls = real, calls

    def __getattr__(self, method):
        real = getattr(self._real, method)  # a method the service lacks is missing here too: a box may look first

        def call(*args):
            try:
                answer = real(*args)
            except Exception as e:  # what the box would get: recorded, raised again
                self._calls.append((method, args, f"{type(e).__name__}: {e}"))
                raise
            self._calls.append((method, args, None))
            return answer

        return call


def _packaged_xar(packaged) -> Path:
    return packaged.folder / "behavior_1" / "behavior.xar"


def test_the_packaged_boxes_answer_on_the_robot_runtime(packaged):
    """Every box of the installed package that calls NaoArmIK, run as its script is, with its default parameters
    (wait for the arm included): its calls reach the runtime and it answers on its success output. Then with each
    choice of each of its parameters (the others default): every call answers (an unreachable target may fail,
    but no call is refused: no unknown method, no method the runtime does not have)."""
    xar = _packaged_xar(packaged)
    assert packaged.ik.getMethods() == ["analytic"]  # the runtime, not the computer's service
    packaged.motion.wakeUp()
    calling = [(b, s) for b, s in boxes(xar) if SERVICE_NAME in s]
    assert calling, "the package carries boxes that call NaoArmIK"
    for box, _ in calling:
        session = _Recorder(packaged.user)
        obj = make_box(box.get("name"), session, xar)
        start(obj)  # a bang: the parameters
        assert session.calls and all(error is None for *_, error in session.calls), (box.get("name"), session.calls)
        assert obj.fired and obj.fired[-1][0] != "onFailed", (box.get("name"), obj.fired, session.calls)
        for param in io(box, "Parameter").values():
            for choice in param.findall(q("Choice")):
                session = _Recorder(packaged.user)
                extra = {"wait": False} if "wait" in io(box, "Parameter") else {}
                obj = make_box(box.get("name"), session, xar, **extra, **{param.get("name"): choice.get("value")})
                start(obj)
                where = (box.get("name"), param.get("name"), choice.get("value"))
                assert session.calls and all(error is None for *_, error in session.calls), (where, session.calls)


def test_the_packaged_behaviour_runs_on_the_robot_runtime(packaged):
    """The installed package's diagram from root.onStart: wake up, three reaches answered by the runtime, rest,
    root.onStopped; nothing said."""
    speech = packaged.speech
    speech.said.clear()
    stub = packaged.robot.motion
    before = len(stub.getRecordedCommands())
    ended, _ = run_diagram(packaged.user, _packaged_xar(packaged))
    assert ended == [("onStopped", None)] and speech.said == [], (ended, speech.said)
    packaged.ik.getSpeed()  # a round trip after the last command
    commands = stub.getRecordedCommands()[before:]
    assert len([c for c in commands if c["method"] == "setAngles"]) == 3 and commands[-1]["method"] == "rest"


#: Runs of the packaged diagram in a row on the runtime: 2.7 s a run, so 3 in make test, 20 in make soak.
RUNS = 20 if os.environ.get("NAO_IK_SOAK") else 3


def test_the_packaged_behaviour_runs_run_after_run_on_the_robot_runtime(packaged):
    """The installed package's diagram RUNS times in a row against the one runtime, which has no getArmState (its
    Reach To boxes see the arm arrive in ALMotion's angles): every run ends on root.onStopped, every reach on
    onReached."""
    for run in range(RUNS):
        ended, boxes_ = run_diagram(packaged.user, _packaged_xar(packaged))
        reaches = {n: b.fired for n, b in boxes_.items() if n.startswith("Reach To")}
        assert ended == [("onStopped", None)], (run, ended, reaches)
        assert len(reaches) == 3 and all([f[0] for f in fired] == ["onReached"] for fired in reaches.values()), (
            run, reaches)


def test_a_method_the_runtime_lacks_is_said_and_ends_the_packaged_behaviour(packaged):
    """A Reach To set to dls on the robot runtime: not a silent onFailed passed on, but the reason said, logged and
    on root.onFailed; nothing moved after it."""
    speech = packaged.speech
    speech.said.clear()
    packaged.motion.wakeUp()
    ended, boxes_ = run_diagram(
        packaged.user, _packaged_xar(packaged), params=lambda name: {"method": "dls"} if name == "Reach To" else {}
    )
    assert len(ended) == 1 and ended[0][0] == "onFailed", ended
    assert "method 'dls' is not available on the robot runtime" in ended[0][1]
    assert speech.said == ["I could not reach the point: method 'dls' is not available on the robot runtime."]
    assert ("error", f"I could not reach the point: {ended[0][1]}") in boxes_["Say Why"].logger.lines
    assert boxes_["Reach To (2)"].fired == [] and boxes_["Rest"].fired == []


def test_the_package_with_the_runtime_carries_the_boxes_it_serves(tmp_path):
    """The boxes alone: every box, as in behaviors/. With the runtime: the boxes whose NaoArmIK calls the runtime
    binds, their method choices the runtime's, the same links; a linked box it cannot serve stops the build."""
    from nao_ik.robot.service import NaoArmIK

    bound = {getattr(v, "__qi_name__", None) or k for k, v in vars(NaoArmIK).items()
             if getattr(v, "__qi_signature__", "DONOTBIND") != "DONOTBIND"}  # fmt: skip
    assert served() == bound
    xars = {}
    for kind, service in (("robot", True), ("boxes", False)):
        with zipfile.ZipFile(build(tmp_path / f"{kind}.pkg", service=service)) as z:
            xars[kind] = Path(z.extract("behavior_1/behavior.xar", tmp_path / kind))
    assert xars["boxes"].read_bytes() == XAR.read_bytes()
    full = {b.get("name"): (b, s) for b, s in boxes(XAR)}
    robot = {b.get("name"): (b, s) for b, s in boxes(xars["robot"])}
    for name, (_, script) in full.items():
        assert (name in robot) == (box_calls(script) <= bound), name
    assert {"Point At", "Grasp", "Track Path", "Reach Pose", "Reach Both", "Open/Close Hand"}.isdisjoint(robot)
    assert {"Wake Up", "Reach To", "Reach To (2)", "Reach To (3)", "Rest", "Compute Angles", "Say Why"} <= set(robot)
    for name, (box, script) in robot.items():
        assert script == full[name][1]
        for param in io(box, "Parameter").values():
            choices = [c.get("value") for c in param.findall(q("Choice"))]
            if param.get("name") == "method":
                assert choices == ["", "analytic"] and param.get("value") == "", (name, choices)
            else:
                assert choices == [c.get("value") for c in io(full[name][0], "Parameter")[param.get("name")]]

    def links(xar):
        return [sorted(lk.attrib.items()) for lk in ET.parse(xar).getroot().iter(q("Link"))]

    assert links(xars["robot"]) == links(XAR)
    track = next(b for b, _ in full.values() if b.get("name") == "Track Path")
    linked = XAR.read_text().replace(
        "</Diagram>",
        f'<Link inputowner="{track.get("id")}" indexofinput="2" outputowner="0" indexofoutput="2" />\n</Diagram>',
    )
    with pytest.raises(ValueError, match="links the box 'Track Path'.*trackPathWithSpeed"):
        for_runtime(linked)


def test_the_package_with_the_runtime_needs_the_naoqi_of_its_service(tmp_path):
    """ServiceManager came with NAOqi 2.3: the package with the service says so; the boxes alone keep the project's
    requirement (a computer serves them)."""
    with zipfile.ZipFile(build(tmp_path / "nao-ik.pkg")) as z:
        manifest = ET.fromstring(z.read("manifest.xml"))
    assert manifest.find("./requirements/naoqiRequirement").get("minVersion") == SERVICE_NAOQI == "2.3"
    with zipfile.ZipFile(build(tmp_path / "boxes.pkg", service=False)) as z:
        assert z.read("manifest.xml") == (ROOT / "behaviors" / "manifest.xml").read_bytes()
