"""The ``NaoArmIK`` qi service: what runs between a caller on the robot's service directory and ALMotion.

One module per concern:

- :mod:`~nao_ik.service.surface`: the qi class ``NaoArmIK`` (binding, decoding, submitting the work) and
  :func:`register`;
- :mod:`~nao_ik.service.args`: the one decoder of every method's arguments;
- the calls' work: :mod:`~nao_ik.service.reach` (one arm, one posture), :mod:`~nao_ik.service.paths`
  (``trackPath``), :mod:`~nao_ik.service.both` (``reachBoth``), :mod:`~nao_ik.service.hands` (hands, grasp);
- :mod:`~nao_ik.service.engine`: the command engine (the arms' state and model, check, route, send, arrive);
- :mod:`~nao_ik.service.answers`: the answers, one function per kind;
- :mod:`~nao_ik.service.jobs` (who commands an arm), :mod:`~nao_ik.service.link` (ALMotion, each call with a
  budget), :mod:`~nao_ik.service.sensed` (the robot's readings), :mod:`~nao_ik.service.log`,
  :mod:`~nao_ik.service.methods` (how a method is published over qi, shared with the robot runtime);
- :mod:`~nao_ik.service.serve` (``nao-ik serve`` and ``nao-ik sim``), :mod:`~nao_ik.service.supervisor`
  (the watchdog that replaces a crashed serving process) and :mod:`~nao_ik.service.forker` (the process that
  forks them);
- :mod:`~nao_ik.service.client`: a caller's session that reconnects (the ``nao-ik`` programs call through it).

The names below load on first use: the supervisor runs without libqi, and the robot runtime imports
:mod:`~nao_ik.service.methods` alone, so importing a part of the package does not load the whole service
(numpy, the solvers, libqi).
"""

from __future__ import annotations

import importlib
from typing import Any

#: The public names, and the module that defines each.
_EXPORTS = {
    "NaoArmIK": "surface",
    "register": "surface",
    "DEFAULT_METHOD": "reach",
    "DEFAULT_SPEED": "surface",
    "CALL_BUDGET": "surface",
    "CYCLE": "engine",
    "ROBOT_PROTECTION": "engine",
    "RobotProtection": "engine",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
