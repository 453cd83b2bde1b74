"""One contract for every answer, end to end over real libqi: ``reached`` only where the answer's angles reach the
target and their motion started (a computation's: would start), ``moved`` where a command was sent, ``reason``
never "" when not reached; a pose's angles beyond 2 pi refused as degrees; every field documented."""

import math
import re
from pathlib import Path

import numpy as np
import pytest

import nao_ik
from nao_ik.geometry.collision import clearance
from nao_ik.model.arm import arm_model
from nao_ik.model.body import MARGIN

DOC = Path(__file__).resolve().parents[2] / "docs" / "service.md"
POSTURE = {"LArm": [0.3, 0.4, -0.6, -0.9, 0.0], "RArm": [0.2, -0.5, 0.7, 1.0, 0.0]}
#: A point in front of the chest that each hand reaches alone: given to both, the hands would meet.
MIDDLE = [0.15, 0.0, 0.1]
#: A LArm posture with the forearm in the torso: its hand pose is reached only through the body.
IN_TORSO = [1.741, -0.249, 0.119, -0.851, -1.596]


# ---------------------------------------------------------------- reachBoth


def test_reach_both_is_reached_where_both_arms_reach_and_moved(awake):
    left, right = (nao_ik.forward(POSTURE[arm], arm).tolist() for arm in ("LArm", "RArm"))
    r = awake.ik.reachBothWithSpeed(left, right, "", 1.0)
    assert r["reached"] and r["moved"] and r["reason"] == "" and r["commands"] >= 1, r
    assert all(r[side]["reached"] and r[side]["reason"] == "" for side in ("left", "right")), r
    awake.wait_still(r["names"])
    # One arm out of reach: the pair moves (the right hand as close as it gets), not reached, the arm named.
    r = awake.ik.reachBothWithSpeed(left, [0.15, -0.5, 0.1], "", 1.0)
    assert r["moved"] and not r["reached"] and r["reason"] == "right: out of reach", r
    assert r["left"]["reached"] and not r["right"]["reached"] and r["right"]["reason"] == "out of reach", r
    assert awake.stub.getViolations() == []


def test_reach_both_to_the_same_point_moves_nothing_and_is_not_reached(awake):
    assert all(nao_ik.solve(MIDDLE, arm).reached for arm in ("LArm", "RArm"))  # each hand reaches it alone
    r = awake.ik.reachBoth(MIDDLE, MIDDLE, "")
    assert not r["moved"] and r["commands"] == 0 and r["via"] == [] and awake.moves() == [], r
    assert not r["reached"] and r["collision"].startswith("collision: ") and r["reason"] == r["collision"], r
    for side in ("left", "right"):
        assert not r[side]["reached"] and r[side]["reason"] == r["collision"], r[side]


# -------------------------------------------------------------- pose reasons


def test_a_pose_the_arm_cannot_take_says_the_orientation_left(awake):
    pose = nao_ik.forward_pose([0.4, 0.5, -0.3, -0.9, 0.7], "LArm")
    pose[5] += 0.5  # turned about z: the hand gets there, not turned so
    plan = awake.ik.computePose("LArm", pose, 63, "")
    assert not plan["reached"] and plan["positionError"] <= 1e-4 and not plan["moved"], plan
    assert plan["reason"] == f"orientation: {math.degrees(plan['orientationError']):.3g} degrees off", plan
    done = awake.ik.reachToPoseWithSpeed("LArm", pose, 63, "", 1.0)
    assert done["moved"] and not done["reached"] and done["reason"] == plan["reason"], done
    assert awake.moves()[-1]["angles"] == pytest.approx(done["angles"], abs=0)


def test_a_pose_out_of_reach_says_the_position_left(awake):
    pose = nao_ik.forward_pose([0.0, 0.3, 0.0, -0.3, 0.0], "LArm")
    pose[0] += 0.1  # 10 cm further forward than the arm, almost stretched, reaches
    r = awake.ik.computePose("LArm", pose, 63, "")
    left = f"position: {r['positionError'] * 1e3:.3g} mm off, orientation: {math.degrees(r['orientationError']):.3g}"
    assert not r["reached"] and r["reason"] == left + " degrees off", r
    r = awake.ik.computePose("LArm", pose, 7, "")  # position only: the position method's reason
    assert not r["reached"] and r["reason"] == "out of reach", r


def test_no_pose_answer_is_not_reached_without_a_reason(awake):
    rng = np.random.default_rng(3)
    for arm in ("LArm", "RArm"):
        model = arm_model(arm)
        for q in rng.uniform(model.lower, model.upper, (12, 5)):
            pose = nao_ik.forward_pose(q, model)
            pose[3:] = rng.uniform(-math.pi, math.pi, 3).tolist()  # another orientation: mostly not the arm's
            for mask in (63, 56, 7, 31):
                r = awake.ik.computePose(arm, pose, mask, "")
                assert r["reached"] == (r["reason"] == ""), r


# ------------------------------------------------------- angles beyond 2 pi

POSE_90 = [0.15, 0.12, 0.08, 90.0, 0.0, 0.0]  # wx in degrees


@pytest.mark.parametrize(
    "name, args, label",
    [
        ("reachToPose", ("LArm", POSE_90, 63, ""), "position6D wx 90.0"),
        ("reachToPoseWithSpeed", ("LArm", [0.15, 0.12, 0.08, 0.0, 0.0, -7.0], 63, "", 0.5), "position6D wz -7.0"),
        ("computePose", ("LArm", [0.15, 0.12, 0.08, 0.0, 1e6, 0.0], 63, ""), "position6D wy 1000000.0"),
        ("reachToPoseInFrame", ("LArm", POSE_90, 2, 63, ""), "position6D wx 90.0"),
        ("computePoseInFrame", ("LArm", POSE_90, 1, 56, ""), "position6D wx 90.0"),
        ("reachBoth", (POSE_90, [0.15, -0.12, 0.08], ""), "left: position6D wx 90.0"),
    ],
)
def test_pose_angles_beyond_two_pi_are_refused_in_one_line_as_degrees(awake, name, args, label):
    with pytest.raises(RuntimeError) as e:
        getattr(awake.ik, name)(*args)
    message = str(e.value)
    assert message == f"ValueError: {label} is beyond 2 pi: angles are radians (ALMotion's position6D), not degrees"
    assert awake.moves() == []


def test_pose_angles_within_two_pi_are_taken(awake):
    r = awake.ik.computePose("LArm", [0.15, 0.12, 0.08, 0.0, 0.0, 2 * math.pi], 63, "")
    assert r["position6D"][5] == 2 * math.pi


# ------------------------------------------------- only answers in the body


def test_a_pose_reached_only_through_the_body_is_answered_alike_by_reach_and_compute(awake):
    model = arm_model("LArm")
    assert clearance(model, IN_TORSO, model.body).distance < MARGIN  # the premise: the posture is in the torso
    pose = nao_ik.forward_pose(IN_TORSO, model)
    plan = awake.ik.computePose("LArm", pose, 63, "")
    assert not plan["reached"] and plan["reason"] == "collision: torso" and plan["commands"] == 0, plan
    done = awake.ik.reachToPose("LArm", pose, 63, "")
    assert not done["moved"] and awake.moves() == [], done
    same = ("reached", "reason", "commands", "angles", "via", "positionError", "orientationError")
    assert {k: done[k] for k in same} == {k: plan[k] for k in same}


def test_a_position_reached_only_through_the_body_is_answered_by_reach_and_compute(awake):
    """The same outcome for a position: not reached, the part named (its answer, the nearest clear posture
    toward it, sent)."""
    target = [0.05, 0.12, -0.10]  # by the left thigh
    plan = awake.ik.computeAngles("LArm", *target, "")
    assert not plan["reached"] and plan["reason"] == "collision: thighs", plan
    done = awake.ik.reachToWithArm("LArm", *target, "")
    assert not done["reached"] and done["reason"] == "collision: thighs" and done["moved"], done


def test_an_answer_in_the_body_is_not_sent_and_says_why(awake, mocker):
    """A papers' approximation keeps its own answer; one through the body is answered, not refused."""
    names = arm_model("LArm").names
    own = nao_ik.Solution(tuple(IN_TORSO), names, False, 0.02, 1, "nn-paper", "LArm", shortfall=None,
                          reason="collision: torso")  # fmt: skip
    mocker.patch("nao_ik.service.reach.solve", return_value=own)
    r = awake.ik.reachToWithArm("LArm", 0.15, 0.12, 0.08, "nn-paper")
    assert not r["moved"] and not r["reached"] and r["reason"] == "collision: torso" and r["commands"] == 0, r
    assert awake.moves() == []


def test_a_grasp_not_sent_reaches_no_step(awake):
    model = arm_model("LArm")
    out = np.array([0.0, 1.0, 0.0])
    target = nao_ik.forward([0.0, 1.3, 0.0, -0.0349, 0.0], model)  # reachable; 4 cm further out is not
    r = awake.ik.grasp("LArm", *target.tolist(), (-out).tolist())
    assert not r["moved"] and r["failedStep"] == "preGrasp" and r["reason"], r
    assert r["steps"] and not any(s["reached"] for s in r["steps"]), r["steps"]
    assert awake.moves() == []


# ------------------------------------------------------ every field documented


def documented() -> list:
    """docs/service.md's Answers: (the methods of a heading, their documented fields; a nested map's as
    ``map.field``) for each heading."""
    text = DOC.read_text()
    section = text[text.index("\n## Answers\n") :]
    section = section[: section.index("\n## ", 1)]
    out = []
    for block in section.split("\n### ")[1:]:
        heading, _, body = block.partition("\n")
        rows = [row.split("|")[1] for row in body.splitlines() if row.startswith("| `")]
        names = {f for row in rows for f in re.findall(r"`([^`]+)`", row)}
        out.append((re.findall(r"`(\w+)`", heading), names | {f.split(".")[0] for f in names}))
    return out


def flat(answer: dict, prefix: str = "") -> set:
    """An answer's fields, a nested map's (or a list of maps') as ``map.field``."""
    out = set()
    for key, value in answer.items():
        out.add(prefix + key)
        inner = [value] if isinstance(value, dict) else [v for v in value if isinstance(v, dict)] if isinstance(
            value, list) else []  # fmt: skip
        for v in inner:
            out |= flat(v, f"{prefix}{key}.")
    return out


def every_answer(ik) -> dict:
    """One answer of every NaoArmIK method that answers a map."""
    left, right = (nao_ik.forward(POSTURE[arm], arm).tolist() for arm in ("LArm", "RArm"))
    pose = nao_ik.forward_pose(POSTURE["LArm"], "LArm")
    path = [[left[0], left[1], left[2] + 0.002 * k] for k in range(5)]
    calls = {
        "computeAngles": ("LArm", *left, ""),
        "reachTo": (*left, ""),
        "reachToWithArm": ("LArm", *left, "dls"),
        "reachToWithSpeed": ("RArm", *right, "", 1.0),
        "computeAnglesInFrame": ("LArm", *left, 0, ""),
        "reachToInFrame": ("LArm", *left, 0, ""),
        "reachToInFrameWithSpeed": ("LArm", *left, 0, "", 1.0),
        "computePose": ("LArm", pose, 63, ""),
        "reachToPose": ("LArm", pose, 63, ""),
        "reachToPoseWithSpeed": ("LArm", pose, 63, "", 1.0),
        "computePoseInFrame": ("LArm", pose, 0, 63, ""),
        "reachToPoseInFrame": ("LArm", pose, 0, 63, ""),
        "reachBoth": (left, right, ""),
        "reachBothWithSpeed": (MIDDLE, MIDDLE, "", 1.0),
        "trackPath": ("LArm", path, ""),
        "trackPathWithSpeed": ("LArm", path[::-1], "dls", 1.0),
        "trackPathWithOptions": ("LArm", path, {"slowAtJumps": True}),
        "pointAt": ("LArm", 1.0, 0.5, 0.3, 0),
        "pointAtWithSpeed": ("RArm", 1.0, -0.5, 0.3, 0, 1.0),
        "isReachable": ("LArm", *left, 0),
        "nearestReachable": ("LArm", 0.3, 0.3, 0.3, 0),
        "computeAllSolutions": ("LArm", *left),
        "openHand": ("LArm",),
        "closeHand": ("LArm",),
        "setHandWithSpeed": ("LArm", 0.5, 1.0),
        "grasp": ("LArm", *left, [1.0, 0.0, 0.0]),
        "graspWithSpeed": ("LArm", *left, [0.0, 0.0, 1.0], 1.0),
        "followTarget": ("LArm", *left, 0),
        "followTargetWithSpeed": ("LArm", *left, 0, 0.5),
        "getArmState": ("LArm",),
    }
    ik.setSpeed(1.0)
    return {name: getattr(ik, name)(*args) for name, args in calls.items()}


def test_every_field_of_every_answer_is_documented(awake):
    sections = documented()
    got = every_answer(awake.ik)
    fields = {name: names for methods, names in sections for name in methods}
    assert set(got) <= set(fields), sorted(set(got) - set(fields))
    missing = {name: sorted(flat(answer) - fields[name]) for name, answer in got.items()}
    assert not any(missing.values()), {k: v for k, v in missing.items() if v}
    # And no field documented that none of its heading's answers carries (a nested list may be empty: its maps'
    # fields are checked where they came).
    for methods, names in sections:
        carried = set().union(*(flat(got[m]) for m in methods))
        assert {f for f in names if "." not in f} <= carried, (methods, sorted(names - carried))
