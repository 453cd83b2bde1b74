"""Joint angles from a recording, served like ALMotion's ``getAngles`` so the viewer plays it as a robot.

(The live sources need no wrapper: the stub ALMotion in process and an
ALMotion proxy over qi both answer ``getAngles(names, useSensors)``.)
"""

from __future__ import annotations

import time
from typing import Callable, Sequence

from .record import Recording
from .scene import VIEW_JOINTS


class ReplayMotion:
    """Plays a :class:`~.record.Recording` back in real time (times ``speed``), looping if asked.

    Args:
        recording: what to play.
        speed: playback speed (1 = as recorded).
        loop: start again after the end.
        clock: monotonic time source (seconds).
    """

    def __init__(
        self, recording: Recording, speed: float = 1.0, loop: bool = True, clock: Callable[[], float] = time.monotonic
    ):
        if not speed > 0:
            raise ValueError(f"replay speed must be > 0, got {speed!r}")
        self.recording = recording
        self.speed = speed
        self.loop = loop
        self._clock = clock
        self._start = clock()
        self._columns = {n: i for i, n in enumerate(recording.names)}

    def elapsed(self) -> float:
        """Recording time now (seconds since its start)."""
        t = (self._clock() - self._start) * self.speed
        duration = self.recording.duration
        if self.loop and duration > 0:
            return t % (duration + 0.5)  # half a second of stillness between passes
        return min(t, duration)

    def getAngles(self, names: Sequence[str], useSensors: bool) -> list[float]:  # noqa: N802, N803 (ALMotion's names)
        """The recorded angles now (a joint the recording lacks reads 0)."""
        row = self.recording.at(self.elapsed()) if len(self.recording.times) else None
        return [float(row[self._columns[n]]) if row is not None and n in self._columns else 0.0 for n in names]

    def target_at(self, _now: float) -> dict | None:
        """The last reach recorded before now, or None."""
        t = self.elapsed()
        last = None
        for event in self.recording.events:
            if event["t"] <= t:
                last = event
        return last


__all__ = ["ReplayMotion", "VIEW_JOINTS"]
