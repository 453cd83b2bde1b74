"""The qi methods of ``NaoArmIK`` for frames, both arms, hands, pointing and reachability (a part of its surface,
:mod:`nao_ik.service.surface`, which takes them in as a base class).

The logic lives in the library (frames, reachability, pointing, both arms, the grasp); the work
(:mod:`nao_ik.service.reach`, :mod:`~nao_ik.service.both`, :mod:`~nao_ik.service.hands`) fetches the robot's state,
converts frames and sends through the engine (the arms) or ``hands.hand_command``.
"""

from __future__ import annotations

from typing import Any

import qi

from ..recipes.grasp import CLOSED, OPEN
from . import both, hands, reach
from .motions import DEFAULT_SPEED

_ANSWER = qi.Map(qi.String, qi.Dynamic)


class ArmCalls:
    """The frame, both-arm, hand, pointing and reachability methods (``_decode`` and ``_submit`` are the surface's)."""


    @qi.bind(_ANSWER, [qi.Dynamic] * 6)
    def reachToInFrame(self, arm: Any, x: Any, y: Any, z: Any, frame: Any, method: Any) -> Any:
        """``reachToWithArm`` with the target in ``frame``: 0 FRAME_TORSO, 1 FRAME_WORLD, 2 FRAME_ROBOT.

        The target is converted with ``ALMotion.getTransform("Torso", frame, True)``; the answer adds
        ``frame`` and ``targetInFrame`` (its ``target`` is in FRAME_TORSO).
        """
        a = self._decode("reachToInFrame", (arm, x, y, z, frame, method))
        return self._submit("reachToInFrame", lambda job, end: reach.reach_in_frame(self._engine, a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 7)
    def reachToInFrameWithSpeed(  # noqa: N803 (qi names)
        self, arm: Any, x: Any, y: Any, z: Any, frame: Any, method: Any, fractionMaxSpeed: Any
    ) -> Any:
        """``reachToInFrame`` at this call's own fraction of the joints' maximum speed, in [0.01, 1]."""
        a = self._decode("reachToInFrameWithSpeed", (arm, x, y, z, frame, method, fractionMaxSpeed))
        return self._submit("reachToInFrameWithSpeed", lambda job, end: reach.reach_in_frame(self._engine, a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 6)
    def computeAnglesInFrame(self, arm: Any, x: Any, y: Any, z: Any, frame: Any, method: Any) -> Any:
        """The answer ``reachToInFrame`` would send, without moving the robot."""
        a = self._decode("computeAnglesInFrame", (arm, x, y, z, frame, method))
        return self._submit("computeAnglesInFrame", lambda job, end: reach.reach_in_frame(self._engine, a, None, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def reachToPoseInFrame(self, arm: Any, position6D: Any, frame: Any, axisMask: Any, method: Any) -> Any:  # noqa: N803
        """``reachToPose`` with the position6D in ``frame`` (0, 1, 2); the answer adds ``frame`` and
        ``position6DInFrame`` (its ``position6D`` is in FRAME_TORSO)."""
        a = self._decode("reachToPoseInFrame", (arm, position6D, frame, axisMask, method))
        return self._submit("reachToPoseInFrame", lambda job, end: reach.pose_in_frame(self._engine, a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def computePoseInFrame(self, arm: Any, position6D: Any, frame: Any, axisMask: Any, method: Any) -> Any:  # noqa: N803
        """The answer ``reachToPoseInFrame`` would send, without moving the robot."""
        a = self._decode("computePoseInFrame", (arm, position6D, frame, axisMask, method))
        return self._submit("computePoseInFrame", lambda job, end: reach.pose_in_frame(self._engine, a, None, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def isReachable(self, arm: Any, x: Any, y: Any, z: Any, frame: Any) -> Any:
        """Whether the hand can be put exactly on (x, y, z) in ``frame``, from the exact solution set.

        Returns a map: ``arm``, ``frame``, ``target`` (in ``frame``), ``targetTorso``, ``reachable``,
        ``dexterity`` (the allowed elbow swivel there, degrees), ``intervals`` (``[branch, start, end]``),
        for the robot's limits and the arm's current WristYaw. No motion.
        """
        a = self._decode("isReachable", (arm, x, y, z, frame))
        return self._submit("isReachable", lambda job, end: reach.reachability(self._engine, a, False, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def nearestReachable(self, arm: Any, x: Any, y: Any, z: Any, frame: Any) -> Any:
        """``isReachable`` plus the nearest reachable point: ``nearest`` (in ``frame``; the target when
        reachable), ``distance`` (m) and ``angles`` (a configuration with the hand there). No motion."""
        a = self._decode("nearestReachable", (arm, x, y, z, frame))
        return self._submit("nearestReachable", lambda job, end: reach.reachability(self._engine, a, True, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def pointAt(self, arm: Any, x: Any, y: Any, z: Any, frame: Any) -> Any:
        """Point the arm at (x, y, z) in ``frame``: the forearm's line through the target, arm stretched.

        Returns a map: ``arm``, ``frame``, ``target``, ``targetTorso``, ``pointed`` (a posture was found),
        ``miss`` (m, the target's distance from the forearm's line), ``reason`` ("" when pointed),
        ``names``, ``angles``, ``moved``, ``jointChange``, ``moveSeconds``, ``waitMs``, ``checkMs``, ``commands``,
        ``via``. Nothing moves when no posture points there.
        """
        a = self._decode("pointAt", (arm, x, y, z, frame))
        return self._submit("pointAt", lambda job, end: reach.point(self._engine, a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 6)
    def pointAtWithSpeed(self, arm: Any, x: Any, y: Any, z: Any, frame: Any, fractionMaxSpeed: Any) -> Any:  # noqa: N803
        """``pointAt`` at this call's own fraction of the joints' maximum speed, in [0.01, 1]."""
        a = self._decode("pointAtWithSpeed", (arm, x, y, z, frame, fractionMaxSpeed))
        return self._submit("pointAtWithSpeed", lambda job, end: reach.point(self._engine, a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 3)
    def reachBoth(self, left: Any, right: Any, method: Any) -> Any:
        """Move both arms in one ``setAngles`` of ten joints (FRAME_TORSO).

        ``left`` and ``right``: ``[x, y, z]`` or a position6D ``[x, y, z, wx, wy, wz]`` (axisMask 63) each;
        ``method``: a position method for positions, a pose method for poses ("" the default). Returns a
        map: ``names`` and ``angles`` (ten), ``left`` and ``right`` (``reached``, ``reason``, ``error``,
        ``orientationError``, ``method``, ``clamped``), ``reached`` (both arms', false where nothing moved),
        ``reason`` ("" when reached), ``collision`` ("" when the pair is clear; else nothing is sent),
        ``stopped``, ``moved``, ``jointChange``, ``moveSeconds``, ``commands``, ``via`` (docs/service.md).
        """
        a = self._decode("reachBoth", (left, right, method))
        return self._submit("reachBoth", lambda job, end: both.reach_both(self._engine, a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 4)
    def reachBothWithSpeed(self, left: Any, right: Any, method: Any, fractionMaxSpeed: Any) -> Any:  # noqa: N803
        """``reachBoth`` at this call's own fraction of the joints' maximum speed, in [0.01, 1]."""
        a = self._decode("reachBothWithSpeed", (left, right, method, fractionMaxSpeed))
        return self._submit("reachBothWithSpeed", lambda job, end: both.reach_both(self._engine, a, job, end))

    @qi.bind(_ANSWER, [qi.Dynamic])
    def openHand(self, arm: Any) -> Any:
        """Open the arm's hand (LHand / RHand to 1); returns ``arm``, ``hand``, ``opening``, ``moved``,
        ``moveSeconds``."""
        a = self._decode("openHand", (arm,))
        return self._submit("openHand", lambda job, end: hands.set_hand(self._engine, a["arm"], OPEN, end))

    @qi.bind(_ANSWER, [qi.Dynamic])
    def closeHand(self, arm: Any) -> Any:
        """Close the arm's hand (LHand / RHand to 0); answers like ``openHand``."""
        a = self._decode("closeHand", (arm,))
        return self._submit("closeHand", lambda job, end: hands.set_hand(self._engine, a["arm"], CLOSED, end))

    @qi.bind(_ANSWER, [qi.Dynamic] * 3)
    def setHandWithSpeed(self, arm: Any, opening: Any, fractionMaxSpeed: Any) -> Any:  # noqa: N803
        """Move the arm's hand to ``opening`` (0 closed .. 1 open) at this call's own fraction of its
        maximum speed, in [0.01, 1]; answers like ``openHand``."""
        a = self._decode("setHandWithSpeed", (arm, opening, fractionMaxSpeed))
        arm, opening, speed = a["arm"], a["opening"], a["fractionMaxSpeed"]
        return self._submit("setHandWithSpeed", lambda job, end: hands.set_hand(self._engine, arm, opening, end, speed))

    @qi.bind(_ANSWER, [qi.Dynamic] * 5)
    def grasp(self, arm: Any, x: Any, y: Any, z: Any, approach: Any) -> Any:
        """Grasp at (x, y, z) (FRAME_TORSO), the hand coming in along ``approach`` ([dx, dy, dz]).

        Steps: preGrasp (4 cm before the target along ``approach``), open, approach (to the target),
        close, lift (3 cm up); every arm step is planned and checked like a reach before anything moves,
        and each waits until the robot got there. Returns a map: ``arm``, ``target``, ``approach``,
        ``completed``, ``failedStep`` ("" or the step that could not be done), ``reason``, ``steps``
        (per step sent, else per step planned: ``step``, ``target``, ``reached`` (false where not sent),
        ``error``, ``hand``, ``angles``, ``via``), ``moved``.
        """
        a = self._decode("grasp", (arm, x, y, z, approach))
        return self._submit("grasp", lambda job, end: hands.grasp(self._engine, a, job, end), hands.GRASP_BUDGET)

    @qi.bind(_ANSWER, [qi.Dynamic] * 6)
    def graspWithSpeed(self, arm: Any, x: Any, y: Any, z: Any, approach: Any, fractionMaxSpeed: Any) -> Any:  # noqa: N803
        """``grasp`` at this call's own fraction of the joints' maximum speed, in [0.01, 1] (arm and hand);
        the call's budget grows as the speed falls below the default."""
        a = self._decode("graspWithSpeed", (arm, x, y, z, approach, fractionMaxSpeed))
        budget = hands.GRASP_BUDGET * max(1.0, DEFAULT_SPEED / a["fractionMaxSpeed"])
        return self._submit("graspWithSpeed", lambda job, end: hands.grasp(self._engine, a, job, end), budget)

