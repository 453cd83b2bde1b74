"""Joint trajectories on file: what ``--record FILE`` writes and ``--replay FILE`` plays.

The format is JSON lines, one object per line:

- the first line is the header:
  ``{"format": "nao-ik-joints", "version": 1, "names": [...], "rate": 50.0, "source": "tcp://..."}``;
- a sample: ``{"t": 1.24, "q": [...]}``: seconds since the start, the angles
  (radians, in the header's ``names`` order) the robot reported then. A
  sample is written when an angle changed (by more than 1e-6 rad), so an
  angle holds its value until the next sample;
- a reach made from the page: ``{"t": 2.50, "target": [x, y, z], "answer": {...}}``
  (the target in FRAME_TORSO, metres, and NaoArmIK's answer).
"""

from __future__ import annotations

import json
import math
from typing import IO, NamedTuple, Sequence

import numpy as np

FORMAT = "nao-ik-joints"
VERSION = 1
CHANGED = 1e-6  # rad


class Recording(NamedTuple):
    """A recording read back.

    Attributes:
        names: joint names, the columns of ``angles``.
        times: (N,) seconds since the start, increasing.
        angles: (N, len(names)) radians.
        events: the reaches, ``{"t", "target", "answer"}``, in time order.
        header: the first line as written.
    """

    names: tuple[str, ...]
    times: np.ndarray
    angles: np.ndarray
    events: list
    header: dict

    def at(self, t: float) -> np.ndarray:
        """The angles at time ``t`` (the last sample at or before it; the first before the first)."""
        i = int(np.searchsorted(self.times, t, side="right")) - 1
        return self.angles[max(i, 0)]

    @property
    def duration(self) -> float:
        """Seconds from the start to the last sample or event."""
        last = [float(self.times[-1])] if len(self.times) else []
        return max(last + [float(e["t"]) for e in self.events] + [0.0])


class Recorder:
    """Writes a recording as it happens.

    Args:
        path: the file (overwritten).
        names: the joints of every sample, in order.
        rate: the sampling rate, for the header (Hz).
        source: where the angles come from, for the header.
    """

    def __init__(self, path: str, names: Sequence[str], rate: float, source: str = ""):
        self.path = path
        self._file: IO[str] = open(path, "w", encoding="utf-8")  # noqa: SIM115 (closed by close())
        self._last: list[float] | None = None
        header = {"format": FORMAT, "version": VERSION, "names": list(names), "rate": rate, "source": source}
        self._write(header)

    def sample(self, t: float, angles: Sequence[float]) -> bool:
        """Write the angles at ``t`` if any changed since the last sample; True if written."""
        q = [float(a) for a in angles]
        if self._last is not None and all(abs(a - b) <= CHANGED for a, b in zip(q, self._last)):
            return False
        self._last = q
        self._write({"t": round(t, 4), "q": q})
        return True

    def event(self, t: float, target: Sequence[float], answer: dict) -> None:
        """Write a reach made from the page."""
        self._write({"t": round(t, 4), "target": [float(c) for c in target], "answer": _plain(answer)})

    def _write(self, obj: dict) -> None:
        self._file.write(json.dumps(obj, allow_nan=False) + "\n")
        self._file.flush()

    def close(self) -> None:
        """Close the file."""
        self._file.close()


def read_recording(path: str) -> Recording:
    """Read a file written by :class:`Recorder`.

    Args:
        path: the file.

    Returns:
        The :class:`Recording`.

    Raises:
        ValueError: not a recording, or a line that does not parse or does not fit the header.
    """
    with open(path, encoding="utf-8") as fh:
        lines = [line for line in fh if line.strip()]
    if not lines:
        raise ValueError(f"{path}: empty, not a {FORMAT} recording")
    try:
        header = json.loads(lines[0])
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: line 1 is not JSON ({e})") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} recording (line 1: {lines[0][:80].strip()!r})")
    if header.get("version") != VERSION:
        raise ValueError(f"{path}: version {header.get('version')!r}, this nao-ik reads version {VERSION}")
    names = tuple(header["names"])
    times, rows, events = [], [], []
    for n, line in enumerate(lines[1:], start=2):
        try:
            obj = json.loads(line)
            t = float(obj["t"])
            if "q" in obj:
                q = [float(v) for v in obj["q"]]
                if len(q) != len(names) or not all(math.isfinite(v) for v in q):
                    raise ValueError(f"{len(q)} finite angles expected, {len(names)} names")
                if times and t < times[-1]:
                    raise ValueError("time goes back")
                times.append(t)
                rows.append(q)
            else:
                events.append({"t": t, "target": [float(c) for c in obj["target"]], "answer": obj.get("answer", {})})
        except (ValueError, KeyError, TypeError, json.JSONDecodeError) as e:
            raise ValueError(f"{path}: line {n}: {e}") from None
    angles = np.array(rows, dtype=float).reshape(len(rows), len(names))
    return Recording(names, np.array(times, dtype=float), angles, events, header)


def _plain(value):
    """An answer made JSON-safe (qi hands back tuples and maybe non-finite floats)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value
