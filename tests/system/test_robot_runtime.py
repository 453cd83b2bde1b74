"""The robot runtime (nao_ik.robot): the library's answers, Python 2.7's grammar, no numpy, served from the .pkg.

The served tests create a virtual environment with ``qi`` and no numpy, build the .pkg, install
it into a simulated PackageManager folder, start the service as its manifest says (the
manifest's command, with this venv's Python for /usr/bin/python2, in the installed folder, with
``--qi-url`` of the simulated robot added as ServiceManager does) and call it over real libqi.
"""

from __future__ import annotations

import ast
import glob
import os
import re
import shlex
import shutil
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
from nao_ik.robot.other import Commands, rows
from nao_ik.robot.package import EXEC_START, RUNTIME, SERVICE_NAME, SERVICE_NAOQI, box_calls, build, for_runtime, served
from nao_ik.robot.solve import STANDING, solve
from tests import report
from tests.system.test_behaviors import XAR, Speech, boxes, io, make_box, q, run_diagram, start

ROOT = Path(__file__).resolve().parents[2]
#: The other arm of each arm.
OTHER = {"LArm": "RArm", "RArm": "LArm"}
#: A target inside the torso: every configuration that reaches it goes through the body.
INSIDE_TORSO = [0.02, 0.0, -0.02]
#: The standard-library modules the runtime may import (and qi).
ALLOWED = {"__future__", "argparse", "collections", "errno", "fcntl", "functools", "heapq", "inspect", "math",
           "numbers", "os", "platform", "random", "select", "signal", "subprocess", "sys", "threading", "time",
           "timeit", "traceback", "typing", "qi"}  # fmt: skip


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
            commands = Commands()
            commands.add(arm, aim, fraction, 10.0)  # sent, not answered yet: it may still run
            lo, hi, _ = commands.box(model, here, time.monotonic())
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


def test_the_commands_that_may_still_move_an_arm():
    """The box of an arm's postures from a reading on: the reading, the commands ALMotion has not taken yet, the
    last one it took unless it had finished by the reading; a later command taken replaces an earlier one once a
    joint on its way there has had the time to brake (fraction x BRAKE)."""
    from nao_ik.geometry.scalar.sweep import BRAKE, overshoot

    model = MODELS["LArm"]
    still, first, second = list(model.neutral), [0.1, -0.25, -0.11, -1.29, 0.0], [-0.5, 0.6, -0.4, -0.5, 0.3]
    over = overshoot(model, 0.5)

    def holds(lo, hi, q):
        return all(a - o - 1e-12 <= x <= b + o + 1e-12 for a, b, x, o in zip(lo, hi, q, over))

    commands = Commands()
    assert commands.box(model, still, time.monotonic()) == (still, still, 0)  # standing
    one = commands.add("LArm", first, 0.5, 3.0, _Future(False))
    lo, hi, version = commands.box(model, still, time.monotonic())
    assert version == 1 and holds(lo, hi, first) and holds(lo, hi, still)  # not answered yet: it may run
    assert commands.box(MODELS["RArm"], list(MODELS["RArm"].neutral), time.monotonic())[2] == 0  # the other arm
    one.answered = time.monotonic() - 0.5  # taken, and still running at the reading
    assert holds(*commands.box(model, still, time.monotonic())[:2], first)
    one.answered = time.monotonic() - 5.0  # taken, and finished before the reading: the reading shows where it is
    assert commands.box(model, still, time.monotonic())[:2] == (still, still)
    one.answered = time.monotonic() - 0.5
    two = commands.add("LArm", second, 0.5, 3.0, _Future(False))
    lo, hi, version = commands.box(model, still, time.monotonic())
    assert version == 2 and holds(lo, hi, first) and holds(lo, hi, second)
    two.answered = time.monotonic() - 0.1  # both taken, the second just before the reading: a joint on its way to
    lo, hi, _ = commands.box(model, still, time.monotonic())  # the first may still be braking toward it
    assert holds(lo, hi, second) and holds(lo, hi, first)
    two.answered = time.monotonic() - 0.5 * BRAKE - 0.05  # long enough before it for a joint to stop: replaced
    lo, hi, _ = commands.box(model, still, time.monotonic())
    assert holds(lo, hi, second) and not holds(lo, hi, first)
    asked = two.answered - 0.05  # a reading asked before the second was taken: both may still run from there
    assert holds(*commands.box(model, still, asked)[:2], first)
    one.answered = None
    one.future = _Future(True)  # answered since: seen now
    assert one.taken_by(time.monotonic() + 1.0) and one.answered is not None
    # Proven at rest from a reading on (both commands taken before it): readings asked from then on leave them out,
    # earlier ones keep them; a command not yet taken then stays in every box.
    proof = time.monotonic() + 2.0
    assert commands.settled("LArm", proof) and not commands.settled("LArm", one.answered - 1.0)
    three = commands.add("LArm", first, 0.5, 3.0, _Future(False))
    commands.rest("LArm", proof)
    assert commands.box(model, still, proof + 0.1)[:2] != (still, still)  # the third, not answered, may still run
    three.answered = proof + 0.5  # taken after the proof: not proven done by it
    lo, hi, _ = commands.box(model, still, proof + 0.6)
    assert holds(lo, hi, first) and not holds(lo, hi, second)
    three.answered = proof - 0.5
    commands.rest("LArm", proof)
    assert commands.box(model, still, proof + 0.1)[:2] == (still, still)
    assert holds(*commands.box(model, still, proof - 0.3)[:2], second)  # before the proof: as before it


class _Link:
    """ALMotion's answers to the runtime's at-rest proof: isCollision's, the sensed readings in turn, the command."""

    def __init__(self, collision: str, readings: list, commanded: list):
        self.collision, self.readings, self.commanded, self.asked = collision, list(readings), commanded, []

    def start(self, method, args, end):
        self.asked.append((method, args[-1] if method == "getAngles" else None, time.monotonic()))
        return method, args

    def result(self, pending):
        method, args = pending
        if method == "isCollision":
            return self.collision
        return self.readings.pop(0) if args[1] else self.commanded


def test_an_arm_is_at_rest_only_once_still_over_the_cycles_after_every_answer():
    """The runtime's proof (NaoArmIK._at_rest): every command answered before the reading, none lost; five more
    readings a cycle apart within STILL of it; ALMotion commanding the arm within SAG of there; the robot's
    protection not holding it. Only then are its commands recorded as done."""
    from nao_ik.geometry.scalar.sweep import CYCLE, STOPPED_CYCLES
    from nao_ik.robot.service import NaoArmIK

    model = MODELS["LArm"]
    here, there = list(model.neutral), [0.1, -0.25, -0.11, -1.29, 0.0]
    moving = here[:3] + [here[3] + 0.002, here[4]]

    def proof(collision="none", readings=None, commanded=here, answered=True, lost=False):
        ik = NaoArmIK.__new__(NaoArmIK)
        ik._commands = Commands()
        e = ik._commands.add("LArm", there, 0.5, 3.0, _Future(answered))
        e.lost = lost
        ik._link = _Link(collision, [here] * STOPPED_CYCLES if readings is None else readings, commanded)
        asked = time.monotonic() + 0.001  # the reading: after the answer was seen
        e.taken_by(asked - 0.0005)
        return ik, ik._at_rest("LArm", here, asked, time.monotonic() + 2.0), asked

    ik, rest, asked = proof()
    assert rest and ik._commands.box(model, here, asked)[:2] == (here, here)
    gets = [t for m, sensors, t in ik._link.asked if m == "getAngles" and sensors]
    assert len(gets) == STOPPED_CYCLES and min(b - a for a, b in zip(gets, gets[1:])) >= 0.9 * CYCLE
    for why, args in [
        ("a command not answered", {"answered": False}),
        ("a command whose answer never came", {"lost": True}),
        ("the robot's protection holds it", {"collision": "collision"}),
        ("it sets off", {"readings": [here] * (STOPPED_CYCLES - 1) + [moving]}),
        ("ALMotion commands it elsewhere", {"commanded": there}),
    ]:
        ik, rest, asked = proof(**args)
        assert not rest, why
        lo, hi, _ = ik._commands.box(model, here, asked)
        assert all(a <= g <= b for a, g, b in zip(lo, there, hi)), why  # still on its way there


def test_a_reach_on_its_way_waits_once_for_the_arm_to_stop(monkeypatch):
    """A reach refused from the arm's way waits for the arm to stop and answers once more from there; still refused
    then (an arm standing still that is not proven at rest: held short of its command), it is refused at once,
    not answered again and again until its budget is spent."""
    from nao_ik.robot.service import ON_ITS_WAY, NaoArmIK, Turn

    ik = NaoArmIK.__new__(NaoArmIK)
    ik._turns, ik._budget = {"LArm": Turn()}, 4.0
    answers = []

    def answer(*args):
        answers.append(args)
        return {"reason": ON_ITS_WAY + " crosses the head (call again once it stopped)"}

    monkeypatch.setattr(ik, "_answer", answer)
    monkeypatch.setattr(ik, "_stopped", lambda arm, end: time.sleep(0.01) or time.monotonic() < end)  # still
    t0 = time.monotonic()
    got = ik._reach("LArm", [0.1, 0.1, 0.1], "analytic", 0.2, True, t0 + 2.0)
    assert got["reason"].startswith(ON_ITS_WAY) and len(answers) == 2 and time.monotonic() - t0 < 1.0
    assert got["reason"].endswith("not proven at rest)"), got  # not "call again once it stopped": it has


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
    same answers."""
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
    )
    import json

    from nao_ik.geometry.scalar.clearance import clearance as float_clearance
    from nao_ik.geometry.sweep import sweep
    from tests.unit.geometry.test_motion_body import CROSSING_START, CROSSING_TARGET

    goal = solve(MODELS["LArm"], CROSSING_TARGET, CROSSING_START).angles
    lo, hi = [-0.2, -1.0, 0.1, 0.3, -0.5], [0.6, -0.2, 0.9, 1.2, 0.5]  # a right arm on its way
    run = subprocess.run([_python2(), "-c", script, str(tree)],
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


class Here:
    """The runtime's NaoArmIK in this process on a simulated robot, with a 1 s budget and 0.5 s ALMotion calls."""

    def __init__(self):
        from nao_ik.robot.service import NaoArmIK

        self.robot = SimulatedRobot()
        self.server = qi.Session()
        self.server.connect(self.robot.url)
        self.server.listen("tcp://127.0.0.1:0")
        self.service = NaoArmIK(self.server, call_budget=1.0, motion_timeout=0.5)
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
        stub.clearRecordedCommands()

    def sent(self) -> list:
        self.user.service("ALMotion").getAngles(["LArm"], True)  # after every command taken
        return [c for c in self.robot.motion.getRecordedCommands() if c["method"] == "setAngles"]

    def close(self) -> None:
        self.user.close()
        self.server.close()
        self.robot.close()


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


def test_a_reach_barred_by_where_the_other_arm_may_still_go_goes_once_it_rests(here, monkeypatch):
    """The runtime sent the left arm to LEFT_IN_THE_WAY, and holds that command as possibly running (here for 30 s);
    another client then moved the arm to LEFT_OUT_OF_THE_WAY, where it stays. The right arm's reach for
    RIGHT_TARGET, barred by the left arm's way back in, goes once the left arm is proven at rest: the answer
    keeps clear of it where it stands."""
    import nao_ik.robot.service as runtime

    monkeypatch.setattr(runtime, "run_time", lambda *args: 30.0)
    left, right = MODELS["LArm"], arm_model("RArm")
    names = list(left.names)

    def elsewhere(q):  # another client's move, behind the runtime's back
        here.robot.motion.setCollisionProtectionEnabled("Arms", False)
        here.user.service("ALMotion").setAngles(names, q, 1.0)
        _arrive(here, names, q)
        here.robot.motion.setCollisionProtectionEnabled("Arms", True)

    elsewhere(LEFT_OUT_OF_THE_WAY)
    going = here.ik.reachToWithSpeed("LArm", *kinematics.forward(arm_model("LArm"), LEFT_IN_THE_WAY).tolist(), "", 1.0)
    assert going["moved"], going
    _arrive(here, names, going["angles"])
    elsewhere(LEFT_OUT_OF_THE_WAY)
    lo, hi, _ = here.service._commands.box(left, LEFT_OUT_OF_THE_WAY, runtime.now())
    assert lo != hi  # the record: the left arm may still be on its way in
    got = here.ik.reachToWithArm("RArm", *RIGHT_TARGET, "")
    assert got["moved"] and got["reached"], got
    body = posture_body(None, (arm_model("LArm"), LEFT_OUT_OF_THE_WAY))
    assert clearance(right, got["angles"], body).distance >= MARGIN - 1e-9
    assert here.robot.motion.getCollisionStops() == []


def _arrive(here, names: list, q: list) -> None:
    end = time.monotonic() + 10
    while max(abs(a - b) for a, b in zip(here.robot.motion.getAngles(names, True), q)) > 1e-9:
        assert time.monotonic() < end, "the simulated joints did not arrive"
        time.sleep(0.02)


def test_an_arm_proven_at_rest_is_checked_from_where_it_stands(here, monkeypatch):
    """The runtime holds a command it sent as possibly running for the longest time it may take (here made 30 s);
    the left arm got to ON_ITS_WAY's first target, and another client sent it back to its neutral posture, where
    it stays. The reach for the second target, which from the way to the first would cross the head, is checked
    from where the arm stands once the arm is proven at rest there (its readings still over the next cycles): it
    is sent. A reading asked before that proof still has the first command's way (the control)."""
    import nao_ik.robot.service as runtime
    from nao_ik.robot.other import now

    monkeypatch.setattr(runtime, "run_time", lambda *args: 30.0)
    first, second = ON_ITS_WAY
    model = MODELS["LArm"]
    names, neutral = list(model.names), list(model.neutral)
    going = here.ik.reachToWithSpeed("LArm", *first, "", 1.0)
    assert going["moved"] and going["reached"], going
    _arrive(here, names, going["angles"])
    here.user.service("ALMotion").setAngles(names, neutral, 1.0)  # another client's command
    _arrive(here, names, neutral)
    before = now()
    lo, hi, _ = here.service._commands.box(model, neutral, before)
    assert lo != hi  # the record: the arm may still be on its way to the first command
    got = here.ik.reachToWithArm("LArm", *second, "")
    assert got["moved"] and got["reached"] and got["commands"] == 1, got
    assert here.sent()[-1]["angles"] == got["angles"]
    lo, hi, _ = here.service._commands.box(model, neutral, before)  # a reading before the proof: still on its way
    assert all(a <= g <= b for a, g, b in zip(lo, going["angles"], hi))
    assert here.robot.motion.getCollisionStops() == []


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
        assert all([f[0] for f in fired] == ["onReached"] for fired in reaches.values()), (run, reaches)


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
