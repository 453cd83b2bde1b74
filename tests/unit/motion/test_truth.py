"""nao_ik.motion.truth: what readings of the commanded angles prove, held against the simulated robot's motion, with
readings that may be late: getAngles answers the robot as it was up to LAG before (no timestamp says so), and a still
arm's readings repeat their values."""

import random

import pytest

from nao_ik.geometry.scalar.sweep import CYCLE, STOPPED_CYCLES
from nao_ik.model.arm import arm_model
from nao_ik.motion import truth
from nao_ik.motion.truth import LAG, REST_SPAN, UNMOVED, Watch, arrived, on_its_way, shows, way_span, widen
from sim_stub.motion import StubMotion
from tests.unit.sim_stub.test_stub import FakeClock

MODEL = arm_model("LArm")
NAMES = list(MODEL.names)
STAND = [1.4, 0.3, -1.39, -1.0, 0.0]


HERE = [0.0, 0.3, -1.0, -0.5, 0.0]


def _commanded(t: float, start: float) -> list:
    """ALMotion's command at ``t``: HERE until ``start``, then moving at the slowest setAngles (1.3 mrad a cycle)."""
    q = list(HERE)
    q[0] += max(0.0, t - start) / CYCLE * 1.3e-3
    return q


def _first_proof(lag: float, start: float, answered: float, until: float = 3.0) -> float | None:
    """When a watch whose readings are asked every cycle and show the robot ``lag`` before, first says the arm is
    still after ``answered`` (a command ALMotion took then that set it moving at ``start``); None if never."""
    watch = Watch()
    t = 0.0
    while t < until:
        watch.observe(t, _commanded(t - lag, start))
        if watch.still_after(answered):
            return t
        t += CYCLE
    return None


@pytest.mark.parametrize("lag", [0.0, 0.2, 0.3, 0.5])
def test_readings_up_to_lag_late_never_show_a_moving_arm_at_rest(lag):
    """A command taken at 1 s sets the arm moving a cycle later: readings up to LAG late show it still until then
    plus their lag, and the watch never takes it as still after the command (nor seen at rest)."""
    assert _first_proof(lag, 1.0 + CYCLE, 1.0) is None


def test_the_proof_without_the_lag_bound_is_fooled_by_late_readings(monkeypatch):
    """The control: with STOPPED_CYCLES cycles of stillness alone (REST_SPAN without LAG), readings 0.2 s late show
    a moving arm still after its command."""
    monkeypatch.setattr(truth, "REST_SPAN", STOPPED_CYCLES * CYCLE)
    assert _first_proof(0.2, 1.0 + CYCLE, 1.0) is not None


@pytest.mark.parametrize("lag", [0.0, 0.2, 0.5])
def test_a_still_arm_is_seen_at_rest_within_rest_span_of_readings(lag):
    """An arm that stays where it is: still after a command taken at 1 s once readings asked REST_SPAN after a cycle
    past it say so (about 0.6 s), whatever their lag; seen at rest from REST_SPAN of readings."""
    proof = _first_proof(lag, 99.0, 1.0)
    assert proof is not None and proof <= 1.0 + CYCLE + REST_SPAN + CYCLE + 1e-9, proof
    watch = Watch()
    for k in range(int(REST_SPAN / CYCLE) + 1):
        assert not watch.at_rest()
        watch.observe(k * CYCLE, HERE)
    assert watch.at_rest()


def test_a_reading_judges_a_command_only_lag_after_its_answer():
    assert not shows(1.0 + LAG - 1e-6, 1.0) and shows(1.0 + LAG, 1.0)
    assert REST_SPAN == pytest.approx(STOPPED_CYCLES * CYCLE + LAG)


def test_an_unchanged_command_over_the_span_is_rest_and_a_slow_creep_is_not():
    watch = Watch()
    span = int(round(REST_SPAN / CYCLE))
    for k in range(span + 1):
        assert watch.observe(k * CYCLE, STAND)
    assert watch.at_rest() and watch.rest == STAND
    # The slowest setAngles (fraction 0.01 of 6.4 rad/s) moves a command 1.3 mrad a cycle: never at rest.
    creep = Watch()
    for k in range(5 * span):
        creep.observe(k * CYCLE, [STAND[0] + 0.0013 * k] + STAND[1:])
        assert not creep.at_rest()
    # Seen at rest, then the command moves: no longer; an older reading changes nothing.
    t = (span + 1) * CYCLE
    assert watch.observe(t, [STAND[0] + 10 * UNMOVED] + STAND[1:]) and not watch.at_rest()
    assert not watch.observe(t - 0.01, STAND)


def test_a_reading_equal_to_where_it_rested_keeps_it_at_rest_and_still_after_needs_the_span_after():
    watch = Watch()
    watch.observe(0.0, STAND)
    watch.observe(REST_SPAN, STAND)
    assert watch.at_rest()
    assert watch.observe(5.0, STAND) and watch.at_rest()  # after a pause: unchanged since
    assert not watch.still_after(4.95)  # a command ALMotion took 50 ms ago: not yet long enough
    assert watch.still_after(5.0 - REST_SPAN - CYCLE)


@pytest.mark.parametrize("profile", ["linear", "smooth", "synchronised"])
def test_the_simulated_robots_command_stays_in_the_span_of_commands_that_retarget_one_another(profile):
    """Commands sent at random moments (retargeting one another mid-move, at random fractions): every commanded
    posture read each cycle stays inside the widened spans of the commands sent so far, from where the command
    was read when each went; and a command that ALMotion's command reached has arrived."""
    rng = random.Random(7)
    for trial in range(30):
        clock = FakeClock()
        stub = StubMotion(clock=clock, sleep=clock.sleep, profile=profile)
        stub.wakeUp()
        stub.setCollisionProtectionEnabled("Arms", False)  # the profiles' motion alone (the protection bends it)
        span = None
        for _ in range(rng.randint(1, 4)):
            goal = [rng.uniform(lo, hi) for lo, hi in zip(MODEL.lower, MODEL.upper)]
            fraction = rng.uniform(0.05, 1.0)
            origin = stub.getAngles(NAMES, False)
            stub.setAngles(NAMES, goal, fraction)
            span = widen(span, way_span(MODEL, origin, goal, fraction))
            for _ in range(rng.randint(1, 60)):
                clock.now += CYCLE
                assert on_its_way(span, stub.getAngles(NAMES, False)), (profile, trial)
        for _ in range(400):
            clock.now += CYCLE
            assert on_its_way(span, stub.getAngles(NAMES, False)), (profile, trial)
        assert arrived(stub.getAngles(NAMES, False), goal)


def test_a_command_elsewhere_leaves_the_span():
    span = way_span(MODEL, STAND, [1.0, 0.3, -1.39, -1.0, 0.0], 0.2)
    assert on_its_way(span, [1.2, 0.3, -1.39, -1.0, 0.0])
    assert not on_its_way(span, [1.2, 0.5, -1.39, -1.0, 0.0])  # another joint moved: another's command
    assert not on_its_way(span, [1.6, 0.3, -1.39, -1.0, 0.0])  # past the start, beyond any overshoot
