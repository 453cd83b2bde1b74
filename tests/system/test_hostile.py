"""Hostile input at scale, over real libqi: every NaoArmIK method with every argument, valid or not.

At least :data:`CALLS` calls per run (``NAO_IK_HOSTILE_CALLS`` another count; seeded,
``NAO_IK_HOSTILE_SEED`` another sequence), spread over every method that takes arguments
(:data:`nao_ik.service.args.SPECS` but :data:`ARM_METHODS`: a new method is fuzzed as soon as it is declared) and the
argument-less ones, from :data:`CLIENTS` clients at once, shared evenly among the stub's motion profiles
(:data:`sim_stub.profiles.PROFILES`: the robot may move any of these ways; make test runs the default profile's
share alone, make soak every profile's). A call gets the right number of
arguments most of the time, each argument valid or hostile (NaN, infinities, huge numbers,
booleans, None, strings, nested lists (400 deep), maps, tuples). After every call the robot's state is
checked: no command out of the limits or non-finite ever reached the stub, an answer's angles
are finite and in the limits, a refusal names the problem; every 500 calls the service answers
and the commanded posture is inside the limits. The figures go to the reliability summary.
"""

import math
import os
import random
import re
import threading
import time
from collections import Counter

import numpy as np
import pytest

from nao_ik import METHODS
from nao_ik.kinematics.hand_pose import forward_pose
from nao_ik.model.arm import arm_model
from nao_ik.service import args
from sim_stub.profiles import PROFILES
from tests import report
from tests.qi_fixtures import Stack, profiles_here, qi

#: The frame, both-arm, hand, pointing and reachability methods: test_hostile_arms fuzzes them (a grasp waits for
#: the robot at every step); this file the others.
ARM_METHODS = (
    "reachToInFrame", "reachToInFrameWithSpeed", "computeAnglesInFrame", "reachToPoseInFrame", "computePoseInFrame",
    "isReachable", "nearestReachable", "pointAt", "pointAtWithSpeed", "reachBoth", "reachBothWithSpeed", "openHand",
    "closeHand", "setHandWithSpeed", "grasp", "graspWithSpeed",
)  # fmt: skip
SPECS = {name: spec for name, spec in args.SPECS.items() if name not in ARM_METHODS}

#: Under ``make test``; ``make soak`` sends 20,000 (every reach's motion is certified and a move near the body
#: waits for the arm at each of its legs: calls that move take up to a second or two).
CALLS = int(os.environ.get("NAO_IK_HOSTILE_CALLS", "2100"))
CLIENTS = 3  # calling at once, each its own qi session
VALID = 0.6  # the chance that an argument is valid (a 5-argument call is all valid 8 times in 100)
SEED = int(os.environ.get("NAO_IK_HOSTILE_SEED", "15"))
NO_ARGUMENTS = ("getMethods", "getSpeed")
MODELS = {arm: arm_model(arm) for arm in ("LArm", "RArm")}
ALL_JOINTS = [n for m in MODELS.values() for n in m.names]


def _nested(depth: int) -> list:
    v: object = 0.1
    for _ in range(depth):
        v = [v]
    return v  # type: ignore[return-value]


HOSTILE = [
    float("nan"), float("inf"), -float("inf"), 1e308, -1e308, 5e-324, -0.0, 2**63, -(2**63), 10**30,
    True, False, None, "", "LArm ", "larm", "dls\x00", "x" * 300, "💥", [], [float("nan")] * 3, [[[]]],
    {"x": 1.0}, (0.15, 0.12, 0.08), [0.15, 0.12], [0.15, 0.12, 0.08, 0.0], ["0.15", "0.12", "0.08"],
    [[0.15, 0.12, float("inf")]], [(0.15, 0.12, 0.08)], [[True, 0.1, 0.1]], 0, 1, -1, 64, 0.5, 3.5,
    _nested(400), [_nested(100)] * 3,  # deeper still crashes libqi itself: tests/unit/service/test_supervisor.py
]  # fmt: skip
#: Refusals name what was wrong: the argument, or the number of arguments (the method and the counts it takes).
REFUSAL_WORDS = (
    "target", "arm", "method", "speed", "points", "position6D", "axisMask", "x ", "y ", "z ", "wx", "wy", "wz",
    " takes ", "Unable to cast", "can't find", "not reachable", "collision:", "motion:", "seconds", "frame",
    "(time budget)",  # a call whose waits (for the arm, its legs, ALMotion) outlast its budget: nothing more sent
)  # fmt: skip
#: An error of the service's own code (a bug, whatever words its message holds), never a refusal.
INTERNAL = re.compile(
    r"\b(IndexError|KeyError|AttributeError|ZeroDivisionError|NameError|UnboundLocalError|AssertionError|"
    r"NotImplementedError|RecursionError|OverflowError|UnicodeError)\b"
)


def refused(text: str, words: tuple = REFUSAL_WORDS) -> bool:
    """Whether an error a call got is a refusal: it names what was wrong (one of ``words``), and is no bug's."""
    return not INTERNAL.search(text) and any(w in text for w in words)


def _poses(n: int) -> list:
    """Hand poses of random in-limit configurations of both arms (what a user's targets mostly are)."""
    rng = np.random.default_rng(SEED)
    out = []
    for model in MODELS.values():
        q = rng.uniform(model.lower, model.upper, size=(n, 5))
        out += [[float(v) for v in forward_pose(model, row)] for row in q]
    return out


POSES = _poses(300)  # the first half LArm's, the second RArm's


def valid(name: str, rng: random.Random, target: list):
    """A valid value of one argument: x, y, z of ``target`` (reachable 9 times in 10: out of reach is valid too)."""
    if name in ("x", "y", "z"):
        return target["xyz".index(name)]
    if name == "method":
        return rng.choice([*METHODS, ""])
    if name == "points":
        return [rng.choice(POSES)[:3]]
    if name in ("fraction", "fractionMaxSpeed"):
        return rng.uniform(0.01, 1.0)
    if name == "position6D":
        return list(target)
    if name == "axisMask":
        return rng.choice([7, 56, 63, rng.randint(1, 63)])
    if name == "frame":
        return 0  # FRAME_TORSO: the robot's other frames move with it (test_hostile_arms fuzzes them)
    if name == "seconds":
        return rng.uniform(0.05, 10.0)
    if name == "options":
        keys = [k for k in ("method", "fractionMaxSpeed", "allowJumps", "slowAtJumps") if rng.random() < 0.5]
        return {k: rng.random() < 0.5 if k.endswith("Jumps") else valid(k, rng, target) for k in keys}
    raise AssertionError(f"no valid value known for argument {name!r}: add it here")


def hostile_call(rng: random.Random) -> tuple[str, list]:
    """A method and its arguments: right arity 9 times in 10, each argument valid with probability VALID."""
    name = rng.choice([*SPECS, *NO_ARGUMENTS])
    names = SPECS[name].names if name in SPECS else ()
    arm = rng.choice(["LArm", "RArm"])
    side = POSES[:300] if arm == "LArm" else POSES[300:]
    target = rng.choice(side) if rng.random() < 0.95 else [rng.uniform(-0.4, 0.4) for _ in range(6)]
    args = [
        (arm if n == "arm" else valid(n, rng, target)) if rng.random() < VALID else rng.choice(HOSTILE) for n in names
    ]
    if rng.random() < 0.1:
        args = args[: rng.randint(0, len(args))] if args and rng.random() < 0.5 else [*args, rng.choice(HOSTILE)]
    return name, args


def check_answer(name: str, answer) -> None:
    if isinstance(answer, dict) and "angles" in answer:
        model = MODELS[answer["arm"]]
        rows = answer["angles"] if name.startswith("trackPath") else [answer["angles"]]
        for q in rows:
            assert all(math.isfinite(a) for a in q), (name, answer)
            assert model.within_limits(q), (name, answer)


@pytest.fixture(scope="module", params=profiles_here())
def hostile_stack(request):
    s = Stack(profile=request.param)
    s.motion.wakeUp()
    yield s
    s.close()


def client(s: Stack, seed: int, count: int, calls: Counter, outcomes: Counter, lock: threading.Lock) -> None:
    """One client's share of the calls, each checked; the counters are shared (under ``lock``)."""
    rng = random.Random(seed)
    session = qi.Session()
    session.connect(s.robot.url)
    ik = session.service("NaoArmIK")
    try:
        for _ in range(count):
            name, args = hostile_call(rng)
            try:
                answer = getattr(ik, name)(*args)
            except RuntimeError as e:
                text = str(e)
                assert refused(text), (name, args, text)
                outcome = "refused"
            else:
                check_answer(name, answer)
                outcome = "answered"
            assert s.stub.getViolations() == [], (name, args)  # nothing out of limits or non-finite, ever
            with lock:
                calls[name] += 1
                outcomes[outcome] += 1
                checkpoint = sum(calls.values()) % 500 == 0
            if checkpoint:
                assert "dls" in ik.getMethods()  # the service is alive
                commanded = s.motion.getAngles(ALL_JOINTS, False)
                assert MODELS["LArm"].within_limits(commanded[:5]) and MODELS["RArm"].within_limits(commanded[5:])
    finally:
        session.close()


def test_thousands_of_hostile_calls(hostile_stack):
    s = hostile_stack
    share = -(-CALLS // len(PROFILES))
    calls, outcomes, lock, errors = Counter(), Counter(), threading.Lock(), []

    def run(k: int) -> None:
        try:
            client(s, SEED * 100 + k, -(-share // CLIENTS), calls, outcomes, lock)
        except BaseException as e:  # reported by the test below
            errors.append(e)

    t0 = time.monotonic()
    threads = [threading.Thread(target=run, args=(k,)) for k in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.monotonic() - t0
    if errors:
        raise errors[0]
    s.flush()
    commands = [c for c in s.stub.getRecordedCommands() if c["method"] == "setAngles"]
    bad = [c for c in commands if c["violations"] or not all(math.isfinite(a) for a in c["angles"])]
    for name, n in calls.items():
        report.cases[f"hostile calls over qi: NaoArmIK.{name}"] += n
    report.lines.append(
        f"hostile calls over qi: {sum(calls.values())} calls to {len(calls)} methods in {seconds:.1f} s "
        f"({outcomes['answered']} answered, {outcomes['refused']} refused), {len(commands)} commands received by "
        f"the robot, {len(bad)} bad commands (out of limits or non-finite), {len(s.stub.getCollisionStops())} "
        f"stopped by the robot's collision protection, {CLIENTS} clients at once, seed {SEED}, "
        f"the stub's {s.stub.profile} profile"
    )
    assert sum(calls.values()) >= share and set(calls) == {*SPECS, *NO_ARGUMENTS}
    assert bad == [] and s.stub.getViolations() == []
    # Nothing into the body (the robot's own check, 5 mm; the service keeps 7.5 mm along every motion).
    assert s.stub.getCollisionStops() == [], s.stub.getCollisionStops()[:3]
    assert outcomes["answered"] > share // 10 and outcomes["refused"] > share // 10  # both kinds exercised
