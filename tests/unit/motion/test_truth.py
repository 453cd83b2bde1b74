"""nao_ik.motion.truth with readings that are late: getAngles answers the robot as it was up to LAG before (no
timestamp says so), and a still arm's readings repeat their values."""

import pytest

from nao_ik.geometry.scalar.sweep import CYCLE, STOPPED_CYCLES
from nao_ik.motion import truth
from nao_ik.motion.truth import LAG, REST_SPAN, Watch, shows

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
