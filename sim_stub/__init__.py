"""A simulated NAO for nao-ik: a stub ALMotion and a loopback qi "robot".

:class:`StubMotion` needs only nao_ik; :class:`SimulatedRobot` needs ``qi``.
"""

from .motion import StubMotion

__all__ = ["StubMotion", "SimulatedRobot"]


def __getattr__(name: str):
    if name == "SimulatedRobot":
        from .robot import SimulatedRobot

        return SimulatedRobot
    raise AttributeError(name)
