"""Over real libqi: arguments are checked as the caller sent them (booleans, maps, sets, strings refused by name)."""

import pytest

from tests.qi_fixtures import qi  # noqa: F401 (skips without libqi)

MAP = {1.0: "a", 2.0: "b", 3.0: "c"}


@pytest.mark.parametrize(
    "call, message",
    [(lambda ik: ik.reachTo(True, False, True, "dls"), "target x must be a finite number, got a boolean True"),
     (lambda ik: ik.reachToWithArm("LArm", 0.15, True, 0.08, "dls"), "target y .* got a boolean True"),
     (lambda ik: ik.computeAngles("LArm", 0.15, 0.12, MAP, "dls"), "target z .* got a map"),
     (lambda ik: ik.computeAllSolutions("LArm", "0.15", 0.12, 0.08), "target x .* got a string '0.15'"),
     (lambda ik: ik.reachTo(0.15, 0.12, 0.08, True), "unknown method a boolean True"),
     (lambda ik: ik.reachToWithArm(True, 0.15, 0.12, 0.08, "dls"), "unknown arm a boolean True"),
     (lambda ik: ik.trackPath("LArm", [MAP], "dls"), r"points\[0\]: target must be .* got a map"),
     (lambda ik: ik.trackPath("LArm", [[0.15, 0.12, 0.08], [True, 0.12, 0.08]], "dls"),
      r"points\[1\]: target x .* got a boolean True"),
     (lambda ik: ik.trackPath("LArm", [{0.15, 0.12, 0.08}], "dls"), r"points\[0\] must be a list .* a tuple or a set"),
     (lambda ik: ik.trackPath("LArm", {(0.15, 0.12, 0.08)}, "dls"), "points must be a list .* a tuple or a set"),
     (lambda ik: ik.trackPath("LArm", [[0.15, 0.12, 0.08]] * 2001, "dls"), "points must hold 1 to 2000 targets"),
     (lambda ik: ik.stopPath(MAP), "unknown arm a map")],
)  # fmt: skip
def test_values_that_only_look_right_are_refused_and_nothing_is_sent(awake, call, message):
    with pytest.raises(RuntimeError, match=message):
        call(awake.ik)
    assert awake.moves() == []


def test_complex_numbers_cannot_even_be_sent(awake):
    with pytest.raises(RuntimeError, match="complex"):  # the caller's libqi refuses to serialise them
        awake.ik.reachTo(0.15 + 1j, 0.12, 0.08, "dls")
    assert awake.moves() == []


@pytest.mark.parametrize("value, message", [(True, "got a boolean True"), (5e-324, r"in \[0.01, 1\]"),
                                            (1e-300, r"in \[0.01, 1\]"), ({0.5: 1}, "got a map")])  # fmt: skip
def test_set_speed_refuses_booleans_maps_and_vanishing_speeds(awake, value, message):
    with pytest.raises(RuntimeError, match=message):
        awake.ik.setSpeed(value)
    assert awake.ik.getSpeed() == pytest.approx(0.2)


def test_integers_are_numbers(awake):
    assert awake.ik.computeAngles("LArm", 0, 0, 0, "dls")["target"] == [0.0, 0.0, 0.0]
    awake.ik.setSpeed(1)
    assert awake.ik.getSpeed() == 1.0
