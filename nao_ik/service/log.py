"""A bounded log for the service: qi's logger without its per-line stack walk, repeats rate-limited.

``qi.Logger`` walks the Python stack (``inspect.stack()``, which reads source
files) for every line, even one its level drops. :class:`ServiceLog` calls
libqi's ``pylog`` directly, and lets through at most one line per
``period`` seconds per key (e.g. "reachTo refused"): a client hammering the
service with bad calls writes a line a second, each saying how many similar
lines were left out, not a line per call.
"""

from __future__ import annotations

import threading
import time

import qi

#: Seconds between two lines of the same key.
PERIOD = 1.0


class ServiceLog:
    """Rate-limited lines to libqi's log under one category.

    Args:
        category: the qi log category, e.g. ``nao_ik.NaoArmIK``.
        period: seconds between two lines of the same key.
    """

    def __init__(self, category: str, period: float = PERIOD):
        self._category = category
        self._period = period
        self._lock = threading.Lock()
        self._last: dict[str, tuple[float, int]] = {}  # key -> (time of last line, lines left out since)

    def info(self, message: str) -> None:
        """An informational line (dropped by libqi's level in ``serve``, cheaply)."""
        self._emit(qi.logging.INFO, message)

    def warning(self, key: str, message: str) -> None:
        """A warning, at most one per period for ``key``."""
        self._limited(qi.logging.WARNING, key, message)

    def error(self, key: str, message: str) -> None:
        """An error, at most one per period for ``key``."""
        self._limited(qi.logging.ERROR, key, message)

    def _limited(self, level: object, key: str, message: str) -> None:
        now = time.monotonic()
        with self._lock:
            last, skipped = self._last.get(key, (-float("inf"), 0))
            if now - last < self._period:
                self._last[key] = (last, skipped + 1)
                return
            self._last[key] = (now, 0)
            if len(self._last) > 1000:  # keys are method names and kinds; keep the table bounded anyway
                self._last = {key: (now, 0)}
        if skipped:
            message += f" ({skipped} similar line{'s' if skipped > 1 else ''} left out since the last one)"
        self._emit(level, message)

    def _emit(self, level: object, message: str) -> None:
        qi.logging.pylog(level, self._category, message, __file__, "NaoArmIK", 0)
