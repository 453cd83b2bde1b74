"""nao_ik.motion.truth: what readings of the commanded angles prove, held against the simulated robot's motion."""

import random

import pytest

from nao_ik.geometry.scalar.sweep import CYCLE
from nao_ik.model.arm import arm_model
from nao_ik.motion.truth import REST_SPAN, UNMOVED, Watch, arrived, on_its_way, way_span, widen
from sim_stub.motion import StubMotion

MODEL = arm_model("LArm")
NAMES = list(MODEL.names)
HERE = [1.4, 0.3, -1.39, -1.0, 0.0]


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now

    def sleep(self, dt):
        self.now += dt


def test_an_unchanged_command_over_the_span_is_rest_and_a_slow_creep_is_not():
    watch = Watch()
    for k in range(6):
        assert watch.observe(k * CYCLE, HERE)
    assert watch.at_rest() and watch.rest == HERE
    # The slowest setAngles (fraction 0.01 of 6.4 rad/s) moves a command 1.3 mrad a cycle: never at rest.
    creep = Watch()
    for k in range(50):
        creep.observe(k * CYCLE, [HERE[0] + 0.0013 * k] + HERE[1:])
        assert not creep.at_rest()
    # Seen at rest, then the command moves: no longer; an older reading changes nothing.
    assert watch.observe(0.2, [HERE[0] + 10 * UNMOVED] + HERE[1:]) and not watch.at_rest()
    assert not watch.observe(0.19, HERE)


def test_a_reading_equal_to_where_it_rested_keeps_it_at_rest_and_still_after_needs_the_span_after():
    watch = Watch()
    watch.observe(0.0, HERE)
    watch.observe(REST_SPAN, HERE)
    assert watch.at_rest()
    assert watch.observe(5.0, HERE) and watch.at_rest()  # after a pause: unchanged since
    assert not watch.still_after(4.95)  # a command ALMotion took 50 ms ago: not yet long enough
    assert watch.still_after(5.0 - REST_SPAN - CYCLE)


@pytest.mark.parametrize("profile", ["linear", "smooth", "synchronised"])
def test_the_simulated_robots_command_stays_in_the_span_of_commands_that_retarget_one_another(profile):
    """Commands sent at random moments (retargeting one another mid-move, at random fractions): every commanded
    posture read each cycle stays inside the widened spans of the commands sent so far, from where the command
    was read when each went; and a command that ALMotion's command reached has arrived."""
    rng = random.Random(7)
    for trial in range(30):
        clock = Clock()
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
    span = way_span(MODEL, HERE, [1.0, 0.3, -1.39, -1.0, 0.0], 0.2)
    assert on_its_way(span, [1.2, 0.3, -1.39, -1.0, 0.0])
    assert not on_its_way(span, [1.2, 0.5, -1.39, -1.0, 0.0])  # another joint moved: another's command
    assert not on_its_way(span, [1.6, 0.3, -1.39, -1.0, 0.0])  # past the start, beyond any overshoot
