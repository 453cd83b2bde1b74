"""The benchmark protocol every bench shares: its targets, its interleaved timing, the machine line, a tee.

Targets: the hand positions of uniformly random in-limit configurations (ShoulderPitch..ElbowRoll uniform,
WristYaw at the neutral posture's value), fixed seed. Timing: the callables take turns on slices of the targets,
so that a slow spell of a shared machine falls on all of them alike and their ratios hold.
"""

from __future__ import annotations

import platform
import sys
import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..kinematics.chain import forward_batch
from ..model.arm import arm_model
from ..nn.data import random_configurations


def sample_targets(arm: str, n: int, seed: int = 0) -> np.ndarray:
    """The benchmark's reachable targets: FK of uniform random in-limit configurations."""
    model = arm_model(arm)
    return forward_batch(model, random_configurations(model, n, np.random.default_rng(seed), model.neutral[4]))


def interleaved_times(
    calls: Mapping[str, Callable[[Any], object]], targets: Sequence[Any], rounds: int = 10
) -> dict[str, np.ndarray]:
    """Seconds per call of each callable on each target, the callables taking turns.

    Args:
        calls: name -> one call on one target.
        targets: what the calls take, one at a time.
        rounds: the targets are cut into this many slices; in each round every
            callable does the same slice, in turn.

    Returns:
        name -> (len(targets),) times.
    """
    times = {name: np.empty(len(targets)) for name in calls}
    bounds = np.linspace(0, len(targets), rounds + 1).astype(int)
    for a, b in zip(bounds[:-1], bounds[1:]):
        for name, call in calls.items():
            out = times[name]
            for i in range(a, b):
                t = targets[i]
                t0 = time.perf_counter()
                call(t)
                out[i] = time.perf_counter() - t0
    return times


def machine() -> str:
    """One line on where the numbers came from: CPU model, cores, Python, numpy."""
    import os

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            cpu = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), cpu)
    except OSError:
        pass
    return f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}"


class Tee:
    """Standard output that also keeps what was written (to save a command's tables to a file)."""

    def __init__(self) -> None:
        self._parts: list[str] = []

    def write(self, s: str) -> None:
        sys.stdout.write(s)
        self._parts.append(s)

    def flush(self) -> None:
        sys.stdout.flush()

    def text(self) -> str:
        """Everything written so far."""
        return "".join(self._parts)
