# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP031  (the common subset of Python 2.7 and 3: the robot runtime uses it too)
"""How a service's methods are published over qi: shorter overloads and one-line refusals.

libqi resolves a call by its name and its arguments' signature, so a method
may be published several times under one name with different numbers of
arguments. :func:`publish` adds, for every bound method whose last arguments
have a default (:data:`OPTIONAL`: the method, the frame), the shorter
variants: ``reachTo(x, y, z)`` is ``reachTo(x, y, z, "")``, ``pointAt(arm,
x, y, z)`` is ``pointAt(arm, x, y, z, FRAME_TORSO)``.

qi-python sends an exception raised by a bound method as its type, message
and the server's Python stack. :func:`publish` turns every exception of a
method into a failed future whose error is one line (``"ValueError: target x
must be ..."``); the stack of a failure that is not a refusal goes to the
object's ``_log`` where it has one (a :class:`nao_ik.service.log.ServiceLog`).

Used by the computer-side service (:mod:`nao_ik.service.surface`) and the robot
runtime (:mod:`nao_ik.robot.service`): written in the common subset of
Python 2.7 and 3.
"""

from __future__ import division

import functools
import inspect
import traceback

import qi

#: The arguments a caller may leave out at the end of a call, and what they then are: the service's default
#: method, and FRAME_TORSO.
OPTIONAL = {"method": "", "frame": 0}

_NOT_BOUND = (None, "DONOTBIND")
_argspec = getattr(inspect, "getfullargspec", None) or inspect.getargspec  # Python 3, Python 2


def failed(message):
    # type: (str) -> object
    """A qi future that failed with ``message``: the caller's ``RuntimeError`` says exactly that."""
    promise = qi.Promise()
    promise.setError(message)
    return promise.future()


def one_line(f):
    """``f`` answering a failed future of one line instead of raising."""

    @functools.wraps(f)
    def call(self, *args):
        try:
            return f(self, *args)
        except Exception as e:  # every refusal and failure reaches the caller as one line
            lines = str(e).strip().splitlines()
            message = "%s: %s" % (type(e).__name__, lines[0]) if lines else type(e).__name__
            log = getattr(self, "_log", None)
            if log is not None and not isinstance(e, ValueError):  # a refusal was logged where it was decided
                log.error(f.__name__ + " failed", "%s: %s\n%s" % (f.__name__, message, traceback.format_exc()))
            return failed(message)

    return call


def _shorter(full, name, values, keep, returns):
    """``name`` with its first ``keep`` arguments; the rest are ``values``."""

    def call(self, *args):
        return full(self, *(args + values))

    call.__name__ = "%s_%d" % (name, keep)
    call.__doc__ = "``%s`` without its last %d argument(s): %s." % (name, len(values), ", ".join(map(repr, values)))
    call.__qi_name__ = name
    call.__qi_signature__ = "(" + "m" * keep + ")"
    call.__qi_return_signature__ = returns
    return call


def publish(cls):
    """Class decorator: every qi method of ``cls`` refuses in one line and has its shorter overloads."""
    for attr, f in list(vars(cls).items()):
        if not callable(f) or attr.startswith("_") or getattr(f, "__qi_signature__", None) in _NOT_BOUND:
            continue
        wrapped = one_line(f)
        setattr(cls, attr, wrapped)
        names = _argspec(f).args[1:]
        if f.__qi_signature__ != "(" + "m" * len(names) + ")":
            continue  # only methods taking dynamic arguments by position
        keep = len(names)
        while keep and names[keep - 1] in OPTIONAL:
            keep -= 1
            values = tuple(OPTIONAL[n] for n in names[keep:])
            short = _shorter(wrapped, attr, values, keep, f.__qi_return_signature__)
            setattr(cls, short.__name__, short)
    return cls
