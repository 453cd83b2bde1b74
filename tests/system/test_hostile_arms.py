"""Hostile input over real libqi for the frame, both-arm, hand, pointing and reachability methods
(:data:`tests.system.test_hostile.ARM_METHODS`), as test_hostile does for the others: valid or hostile arguments, the
robot checked after every call."""

import math
import os
import random
from collections import Counter

import pytest

from nao_ik.service.args import SPECS
from sim_stub.profiles import PROFILES
from tests import report
from tests.qi_fixtures import Stack, profiles_here
from tests.system.test_hostile import ARM_METHODS, HOSTILE, MODELS, POSES, REFUSAL_WORDS, refused, valid

ARM_SPECS = {name: SPECS[name] for name in ARM_METHODS}

#: Calls per stub motion profile (``make soak``: 2,000).
CALLS = int(os.environ.get("NAO_IK_HOSTILE_ARM_CALLS", "200"))
#: grasp waits for the robot at every step: only with a hostile argument here (its runs are in test_service_arms).
SLOW = {"grasp", "graspWithSpeed"}
WORDS = (*REFUSAL_WORDS, "frame", "approach", "left", "right", "opening")
NEVER_VALID = [float("nan"), float("inf"), None, "", True, [], {"x": 1.0}]


def arm_valid(name: str, rng: random.Random, target: list):
    if name == "frame":
        return rng.choice([0, 1, 2])
    if name == "approach":
        return [rng.uniform(-1, 1) for _ in range(3)]
    if name == "opening":
        return rng.uniform(0.0, 1.0)
    if name in ("left", "right"):
        pose = rng.choice(POSES[:300] if name == "left" else POSES[300:])
        return list(pose[:3]) if rng.random() < 0.5 else list(pose)
    return valid(name, rng, target)


def check(name: str, answer) -> None:
    if not isinstance(answer, dict) or "angles" not in answer:
        return
    if name.startswith("reachBoth"):
        parts = [(MODELS["LArm"], answer["angles"][:5]), (MODELS["RArm"], answer["angles"][5:])]
    else:
        parts = [(MODELS[answer["arm"]], answer["angles"])]
    for model, q in parts:
        assert all(math.isfinite(a) for a in q) and model.within_limits(q), (name, answer)


@pytest.fixture(params=profiles_here())
def awake(request):
    s = Stack(profile=request.param)
    s.motion.wakeUp()
    yield s
    s.close()


def test_hostile_calls_to_the_arm_methods(awake):
    rng = random.Random(19 + PROFILES.index(awake.stub.profile))
    calls, outcomes = Counter(), Counter()
    for _ in range(CALLS):
        name = rng.choice(list(ARM_SPECS))
        names = ARM_SPECS[name].names
        arm = rng.choice(["LArm", "RArm"])
        side = POSES[:300] if arm == "LArm" else POSES[300:]
        target = rng.choice(side) if rng.random() < 0.95 else [rng.uniform(-0.4, 0.4) for _ in range(6)]
        args = [(arm if n == "arm" else arm_valid(n, rng, target)) if rng.random() < 0.6 else rng.choice(HOSTILE)
                for n in names]  # fmt: skip
        if name in SLOW:
            args[rng.randrange(len(args))] = rng.choice(NEVER_VALID)  # refused by the decoder
        if rng.random() < 0.1:
            args = args[: rng.randint(0, len(args))] if rng.random() < 0.5 else [*args, rng.choice(HOSTILE)]
        try:
            answer = getattr(awake.ik, name)(*args)
        except RuntimeError as e:
            assert refused(str(e), WORDS), (name, args, str(e))
            outcomes["refused"] += 1
        else:
            check(name, answer)
            outcomes["answered"] += 1
        assert awake.stub.getViolations() == [], (name, args)
        calls[name] += 1
    assert set(calls) == set(ARM_SPECS) and outcomes["answered"] > 10 and outcomes["refused"] > 10
    stops = awake.stub.getCollisionStops()
    report.lines.append(
        f"hostile calls to ARM_SPECS methods: {CALLS} calls to {len(calls)} methods ({outcomes['answered']} answered, "
        f"{outcomes['refused']} refused), {len(awake.moves())} commands received, 0 bad commands, {len(stops)} "
        f"stopped by the robot's collision protection (arm against body or other arm), the stub's "
        f"{awake.stub.profile} profile"
    )
    assert stops == [], stops[:3]
