"""ALMotion's breathing and idle posture, as the simulated robot plays them: arms that nothing commanded move by
themselves, for as long as they are on, and start again once a user's command ends.

On a robot, ``ALMotion.setBreathEnabled("Arms", True)`` and idle-posture control move the arms around where they
are; ALAutonomousLife's ALBackgroundMovement switches breathing on while the robot stands in its solitary and
interactive states; "any other user command overrides an idle task", and the idle task takes over again when that
command ends. Here an arm whose breathing is on, once none of its joints has had a command of its own to run for
:data:`RESUME` seconds, swings its ShoulderPitch and ElbowRoll by :data:`AMPLITUDE` rad around where it stood, with
period :data:`PERIOD` s, from a still start. Its commanded angles move with it (ALMotion commands the breathing),
so a service reading the robot sees an arm that never comes to rest. Off by default, as on a robot with
ALAutonomousLife disabled.
"""

from __future__ import annotations

import math
from typing import Callable

#: Radians each breathing joint swings either side of where it stood, and the period of a breath (s).
AMPLITUDE = 0.03
PERIOD = 2.5
#: Seconds after an arm's last command ended before breathing takes it over again.
RESUME = 0.5
#: The joints each arm breathes with.
JOINTS = {"LArm": ("LShoulderPitch", "LElbowRoll"), "RArm": ("RShoulderPitch", "RElbowRoll")}
#: The arms each chain name of setBreathEnabled covers.
CHAINS = {"Body": ("LArm", "RArm"), "Arms": ("LArm", "RArm"), "LArm": ("LArm",), "RArm": ("RArm",), "Legs": (),
          "Head": ()}  # fmt: skip


class Breath:
    """Which arms breathe, and where each breathing joint swings around (its base) since when."""

    def __init__(self):
        self.on = {arm: False for arm in JOINTS}
        self._idle: dict[str, float] = {}  # arm -> since when none of its joints has had a command to run
        self._base: dict[str, tuple[float, float]] = {}  # joint -> (where it stood, when the swing began)

    def enable(self, chain: str, on: bool, now: float) -> None:
        """``setBreathEnabled`` at ``now`` (monotonic s): ``chain`` one of :data:`CHAINS`."""
        if chain not in CHAINS:
            raise RuntimeError(f"ALMotion: breath chain must be one of {', '.join(CHAINS)}, got {chain!r}")
        for arm in CHAINS[chain]:
            if on and not self.on[arm]:
                self._idle[arm] = now  # an arm idle already: it breathes RESUME from now
            self.on[arm] = bool(on)

    def enabled(self, chain: str) -> bool:
        """``getBreathEnabled``: whether every arm of ``chain`` breathes."""
        if chain not in CHAINS:
            raise RuntimeError(f"ALMotion: breath chain must be one of {', '.join(CHAINS)}, got {chain!r}")
        return all(self.on[arm] for arm in CHAINS[chain]) if CHAINS[chain] else False

    def step(self, now: float, sensed: dict, commanded: dict, busy: Callable[[str], bool]) -> None:
        """Move the breathing joints to where the breath has them at ``now`` (monotonic s), sensed and commanded
        alike; ``busy(joint)``: the joint has a command of its own to run, or its motors are off (no breath)."""
        for arm, joints in JOINTS.items():
            if not self.on[arm] or any(busy(j) for j in joints):
                self._idle[arm] = now  # busy as of now (the stub steps at every call it takes: every cycle in use)
                for j in joints:
                    self._base.pop(j, None)
                continue
            start = self._idle.get(arm, now) + RESUME  # the breath runs from then, whenever the stub is asked
            if now < start:
                continue
            for j in joints:
                base, start = self._base.setdefault(j, (sensed[j], start))
                sensed[j] = commanded[j] = base + AMPLITUDE * math.sin(2.0 * math.pi * (now - start) / PERIOD)
