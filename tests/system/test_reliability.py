"""Reliability: arbitrary input, adverse targets and starts, faults, load and concurrency.

Everything here goes through the same code a robot user runs; the qi tests go
through real libqi sessions on loopback.
"""

from __future__ import annotations

import itertools
import math
import re
import threading
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import nao_ik
from nao_ik.kinematics import chain as kinematics
from nao_ik.model.arm import arm_model
from nao_ik.model.arm_data import slipped
from nao_ik.solvers import ITERATIVE, SOLVERS
from tests import report
from tests.qi_fixtures import Stack, qi

# ----------------------------------------------------------- arbitrary input

ANYTHING = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0.0, -0.0, 1e308, -1e308, 5e-324, 2.2e-308, 0.15, -0.12, 0.08]),
    st.integers(-(2**31), 2**31),
    st.text(max_size=12),
    st.sampled_from(["LArm", "RArm", "dls", "fabrik", "jacobian", ""]),
    st.lists(st.floats(allow_nan=True), max_size=4),
    st.none(),
    st.booleans(),
)
NUMBERISH = st.one_of(
    st.floats(-1.0, 1.0), st.floats(allow_nan=True, allow_infinity=True), st.integers(-3, 3), ANYTHING
)
ARGUMENT_WORDS = ("target", "unknown arm", "unknown method", "speed", "arguments", "Unable to cast")
#: A well-formed target may be refused for safety: the body is in the way from where the arm is.
SAFETY_WORDS = ("motion: ", "collision: ")


@pytest.fixture(scope="module")
def fuzz_stack():
    s = Stack()
    s.motion.wakeUp()
    yield s
    s.close()


def _check_answer(stack, r):
    model = arm_model(r["arm"])
    assert all(math.isfinite(a) for a in r["angles"])
    assert model.within_limits(r["angles"])
    assert math.isfinite(r["error"])


def _check_refusal(e: Exception):
    text = str(e)
    assert any(w in text for w in ARGUMENT_WORDS + SAFETY_WORDS), text


@given(x=NUMBERISH, y=NUMBERISH, z=NUMBERISH, method=ANYTHING)
def test_reach_to_with_anything(fuzz_stack, x, y, z, method):
    report.cases["NaoArmIK.reachTo over qi"] += 1
    before = len(fuzz_stack.moves())
    try:
        r = fuzz_stack.ik.reachTo(x, y, z, method)
    except RuntimeError as e:
        _check_refusal(e)
        assert len(fuzz_stack.moves()) == before
        return
    _check_answer(fuzz_stack, r)
    assert fuzz_stack.moves()[-1]["angles"] == r["angles"]
    assert fuzz_stack.stub.getViolations() == []


@pytest.mark.parametrize("name", ["reachToWithArm", "computeAngles"])
@given(arm=ANYTHING, x=NUMBERISH, y=NUMBERISH, z=NUMBERISH, method=ANYTHING)
def test_arm_methods_with_anything(fuzz_stack, name, arm, x, y, z, method):
    report.cases[f"NaoArmIK.{name} over qi"] += 1
    before = len(fuzz_stack.moves())
    try:
        r = getattr(fuzz_stack.ik, name)(arm, x, y, z, method)
    except RuntimeError as e:
        _check_refusal(e)
        assert len(fuzz_stack.moves()) == before
        return
    _check_answer(fuzz_stack, r)
    assert fuzz_stack.stub.getViolations() == []


@given(value=ANYTHING)
def test_set_speed_with_anything(fuzz_stack, value):
    report.cases["NaoArmIK.setSpeed over qi"] += 1
    before = fuzz_stack.ik.getSpeed()
    try:
        fuzz_stack.ik.setSpeed(value)
    except RuntimeError as e:
        _check_refusal(e)
        assert fuzz_stack.ik.getSpeed() == before
        return
    assert 0.0 < fuzz_stack.ik.getSpeed() <= 1.0


@given(args=st.lists(ANYTHING, max_size=7))
def test_any_arity(fuzz_stack, args):
    report.cases["NaoArmIK methods with any number of arguments"] += 1
    # The method may be left out: those calls have two arities.
    for name, arities in (
        ("reachTo", (3, 4)),
        ("reachToWithArm", (4, 5)),
        ("computeAngles", (4, 5)),
        ("getMethods", (0,)),
    ):
        if len(args) in arities:
            continue
        with pytest.raises(RuntimeError) as refused:
            getattr(fuzz_stack.ik, name)(*args)
        text = str(refused.value)
        if "Unable to cast" not in text:  # the caller's own libqi could not send a value
            assert re.fullmatch(rf"TypeError: {name} takes .*, got {len(args)}", text), text  # one line
    assert fuzz_stack.stub.getViolations() == []


@given(
    target=st.one_of(st.lists(NUMBERISH, min_size=0, max_size=4), ANYTHING),
    arm=ANYTHING,
    method=ANYTHING,
    initial=st.one_of(st.none(), st.lists(NUMBERISH, min_size=4, max_size=6), ANYTHING),
    tolerance=st.one_of(st.just(1e-4), NUMBERISH),
    max_iterations=st.one_of(st.none(), st.integers(-2, 50), ANYTHING),
)
def test_library_solve_with_anything(target, arm, method, initial, tolerance, max_iterations):
    report.cases["nao_ik.solve"] += 1
    try:
        sol = nao_ik.solve(target, arm, method, initial, tolerance, max_iterations)
    except ValueError as e:
        # The message names the argument that was refused.
        assert any(w in str(e) for w in ("target", "arm", "method", "tolerance", "max_iterations", "initial")), e
        return
    model = arm_model(sol.arm)
    assert model.within_limits(sol.angles) and math.isfinite(sol.error)


@given(
    targets=st.lists(st.lists(NUMBERISH, min_size=3, max_size=3), max_size=5),
    method=st.sampled_from(nao_ik.METHODS),
)
def test_library_solve_batch_with_anything(targets, method):
    report.cases["nao_ik.solve_batch"] += 1
    try:
        b = nao_ik.solve_batch(targets, "LArm", method)
    except ValueError as e:
        assert "targets" in str(e)
        return
    assert np.all(np.isfinite(b.angles)) and np.all(np.isfinite(b.error))
    assert np.all((b.angles >= arm_model("LArm").lower) & (b.angles <= arm_model("LArm").upper))


# --------------------------------------------------------- solver adversity


def adverse_targets(arm):
    m = arm_model(arm)
    s = np.asarray(m.shoulder)
    lo, hi = np.asarray(m.lower), np.asarray(m.upper)
    out = {"at the shoulder": s, "1 mm from the shoulder": s + [0.001, 0, 0], "torso origin": np.zeros(3)}
    straight = hi[3] if arm == "LArm" else lo[3]
    bent = lo[3] if arm == "LArm" else hi[3]
    out["full stretch ahead"] = kinematics.forward(m, [0.0, 0.0, 0.0, straight, 0.0])
    out["full stretch up"] = kinematics.forward(m, [-1.5, 0.3, 0.0, straight, 0.0])
    out["elbow fully bent"] = kinematics.forward(m, [0.5, 0.3, 1.0, bent, 0.0])
    for corner in itertools.product((0, 1), repeat=4):
        q = [lo[i] if c == 0 else hi[i] for i, c in enumerate(corner)] + [0.0]
        out[f"limit corner {corner}"] = kinematics.forward(m, q)
    for signs in itertools.product((-1, 1), repeat=3):
        out[f"octant {signs} at 1 m"] = s + np.asarray(signs) / math.sqrt(3)
    out["far away, 1e5 m"] = s + [1e5, 0, 0]
    out["just out of reach"] = s + [0.2210, 0, 0]
    return out


def corner_starts(arm):
    """Start postures at the corners of the first four joints' limits (WristYaw 0), and the neutral posture
    with WristYaw at either limit. The right arm is the left one mirrored (test_kinematics): mirroring swaps
    the lower and upper limits of three of the four joints (the rolls and ElbowYaw), so it turns a corner with
    an even count of upper limits into one with an odd count. Each arm takes the 8 even corners: between them
    the two arms try every corner of the left arm's limits once, at half the suite's time."""
    m = arm_model(arm)
    lo, hi = m.lower, m.upper
    corners = [c for c in itertools.product((0, 1), repeat=4) if sum(c) % 2 == 0]
    starts = [[lo[i] if c == 0 else hi[i] for i, c in enumerate(corner)] + [0.0] for corner in corners]
    return starts + [list(m.neutral[:4]) + [lo[4]], list(m.neutral[:4]) + [hi[4]]]


#: Every method on the left arm; on the right arm (the same code on mirrored data, test_kinematics), analytic
#: and a network: the suite's time.
ADVERSE_CASES = [("LArm", m) for m in SOLVERS] + [("RArm", "analytic"), ("RArm", "nn")]
#: Of the targets x starts, one pair in STRIDE (every target and every start still meets three or four of the
#: other kind, rotating): the suite's time.
STRIDE = 3


@pytest.mark.parametrize("arm, method", ADVERSE_CASES)
def test_adverse_targets_and_starts(arm, method):
    model = arm_model(arm)
    starts = corner_starts(arm)
    pairs = [
        (label, target, start)
        for i, (label, target) in enumerate(adverse_targets(arm).items())
        for j, start in enumerate(starts)
        if (i + j) % STRIDE == 0  # each target from every STRIDE-th start, each start to every STRIDE-th target
    ]
    for label, target, start in pairs:
        report.cases["adverse target x start-corner solves"] += 1
        if slipped(*target):  # no arm reaches it by over a metre: refused, as the service refuses it
            with pytest.raises(ValueError, match="coordinates are metres"):
                nao_ik.solve(target, arm, method, initial=start)
            continue
        t0 = time.perf_counter()
        sol = nao_ik.solve(target, arm, method, initial=start)
        dt = time.perf_counter() - t0
        report.slowest(f"adverse solve, {method}", dt, f"{arm}, {label}, start {np.round(start, 2).tolist()}")
        assert all(math.isfinite(a) for a in sol.angles), (label, start)
        assert model.within_limits(sol.angles), (label, start)
        assert math.isfinite(sol.error)
        assert dt < 2.0, (label, start, dt)
        boundary = label.startswith(("limit corner", "full stretch")) or label == "elbow fully bent"
        if boundary and start[4] == 0.0 and method in ITERATIVE:
            # Reachable (with the wrist held where the target was made),
            # though on the boundary of the joint space; unless only through the body.
            assert sol.error < 2e-3 or sol.reason.startswith("collision: "), (label, start, sol.error)


# -------------------------------------------------------------------- faults


def test_almotion_session_closed_then_back():
    s = Stack()
    try:
        s.robot.unregister_motion()
        host = qi.Session()
        host.connect(s.robot.url)
        host.registerService("ALMotion", s.stub)  # ALMotion in a process of its own
        s.motion = s.user.service("ALMotion")
        s.motion.wakeUp()
        assert s.ik.reachTo(0.15, 0.12, 0.08, "dls")["reached"]
        host.close()  # ALMotion's process dies
        # The command goes out without waiting for ALMotion's answer, from a reading up to two cycles old: the
        # first reach may answer before the service hears of the loss; then the next one reports the failure.
        refusals = []
        for _ in range(3):
            try:
                s.ik.reachTo(0.15, 0.12, 0.08, "dls")
            except RuntimeError as e:
                refusals.append(str(e))
        assert len(refusals) >= 2 and all("ALMotion" in r for r in refusals), refusals
        host = qi.Session()
        host.connect(s.robot.url)
        host.registerService("ALMotion", s.stub)  # and comes back
        assert s.ik.reachTo(0.16, 0.12, 0.08, "dls")["reached"]
        host.close()
    finally:
        s.close()


def test_serve_reconnects_when_the_robot_session_drops():
    from nao_ik.service.serve import serve
    from sim_stub.robot import SimulatedRobot
    from tests.unit.test_cli import free_port

    url = f"tcp://127.0.0.1:{free_port()}"
    robot = SimulatedRobot(url)
    stop = threading.Event()
    registered = []
    thread = threading.Thread(
        target=serve, args=(url,), kwargs=dict(stop=stop, on_registered=registered.append), daemon=True
    )
    thread.start()
    try:
        _wait(lambda: len(registered) == 1)
        user = qi.Session()
        user.connect(url)
        user.service("NaoArmIK").setSpeed(0.05)  # a caller's speed, which the new registration keeps
        user.close()
        robot.close()  # the robot's NAOqi goes away...
        time.sleep(1.0)
        t0 = time.monotonic()
        robot = SimulatedRobot(url)  # ...and comes back on the same address
        _wait(lambda: len(registered) == 2, timeout=15)
        report.slowest("serve re-registration after the robot came back", time.monotonic() - t0, url)
        user = qi.Session()
        user.connect(url)
        user.service("ALMotion").wakeUp()
        assert user.service("NaoArmIK").reachTo(0.15, 0.12, 0.08, "fabrik")["reached"]
        assert user.service("NaoArmIK").getSpeed() == 0.05
        user.close()
    finally:
        stop.set()
        thread.join(timeout=10)
        robot.close()
    assert not thread.is_alive()


def test_serve_passes_user_and_password_to_libqi(mocker):
    from nao_ik.service.serve import AuthenticatorFactory, serve
    from sim_stub.robot import SimulatedRobot

    spy = mocker.spy(AuthenticatorFactory, "newAuthenticator")
    with SimulatedRobot() as robot:
        stop = threading.Event()
        registered = []
        kwargs = dict(stop=stop, on_registered=registered.append, user="nao", password="s3cret")
        thread = threading.Thread(target=serve, args=(robot.url,), kwargs=kwargs, daemon=True)
        thread.start()
        _wait(lambda: registered)
        stop.set()
        thread.join(timeout=10)
    assert spy.call_count >= 1
    assert spy.spy_return.initialAuthData() == {"user": "nao", "token": "s3cret"}


def _wait(cond, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


# ---------------------------------------------------- concurrency and load


def test_commands_to_one_arm_never_interleave(awake, mocker):
    """The service's declared concurrency: reaches on one arm one at a time, the two arms side by side."""
    real = nao_ik.service.reach.solve
    spans = {"LArm": [], "RArm": []}

    def slow(target, model, *a, **k):
        t0 = time.monotonic()
        time.sleep(0.15)
        out = real(target, model, *a, **k)
        spans[model.arm].append((t0, time.monotonic()))
        return out

    mocker.patch("nao_ik.service.reach.solve", side_effect=slow)
    errors = []

    def client(y):
        s = qi.Session()
        s.connect(awake.robot.url)
        try:
            s.service("NaoArmIK").reachTo(0.15, y, 0.08, "dls")
        except Exception as e:  # reported below
            errors.append(e)
        s.close()

    threads = [threading.Thread(target=client, args=(y,)) for y in (0.12, -0.12, 0.10, -0.10, 0.11, -0.11)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # A reach that waits for the arm to stop (its box from the moving arm is not clear) is ended by the next
    # reach on that arm, as every job on an arm is: the only error allowed.
    assert all("preempted by reachTo" in str(e) for e in errors), errors
    assert [len(v) for v in spans.values()] == [3, 3]
    for arm_spans in spans.values():
        arm_spans.sort()
        assert all(a[1] <= b[0] for a, b in zip(arm_spans, arm_spans[1:])), arm_spans
    left, right = spans["LArm"], spans["RArm"]
    assert any(a[0] < b[1] and b[0] < a[1] for a in left for b in right), "the two arms were not served side by side"
    assert len(awake.moves()) >= 6 - len(errors)


def test_load_four_clients():
    from nao_ik.evidence.loadtest import format_report, run_load

    r = run_load(clients=4, seconds=6.0, seed=1)
    report.lines.append("load (4 client processes, 6 s):")
    report.lines.extend(format_report(r).splitlines())
    # Four clients on the same arms: a reach whose motion may cross the body from where the arm may still be
    # going (at any profile) is refused or waits, and a waiting one is ended by the next reach on its arm
    # (nothing sent) - safety answers, not failures; anything else is one.
    assert r.failures - r.refused <= 0.05 * r.calls, r.failure_examples
    assert r.calls > 20
    # Every command the robot received is an answer's (its swung-out postures included), and every answer's sent.
    assert r.unmatched == 0 and r.violations == 0
    assert r.rss_end_mb - r.rss_warm_mb < 20.0
