# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP031  (the common subset of Python 2.7 and 3: the robot runtime uses it too)
"""How a service's methods are published over qi: any number of arguments, refused in one line.

libqi resolves a call by its name and its arguments' signature: a method
published with a fixed number of arguments answers a call with another
number with libqi's own message of four lines ("Arguments types did not
match for reachTo (resolved to '(ff)'): / Candidate: / reachTo::(mmmm)
..."). :func:`publish` publishes every bound method whose arguments are all
``qi.Dynamic`` once, taking any number of arguments (``qi.AnyArguments``,
signature ``m``; in libqi-python since 2013, so on NAOqi 2.x robots too),
and counts them itself: a method whose last arguments have a default
(:data:`OPTIONAL`: the method, the frame) may be called without them
(``reachTo(x, y, z)`` is ``reachTo(x, y, z, "")``, ``pointAt(arm, x, y, z)``
is ``pointAt(arm, x, y, z, FRAME_TORSO)``), and any other count is refused
in one line that names the method and the counts it takes (``TypeError:
reachTo takes 3 or 4 arguments (x, y, z[, method]), got 2``). The
arguments arrive as the caller sent them, as with ``qi.Dynamic`` each.

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


def arity(name, names, fewest):
    # type: (str, list, int) -> str
    """What ``name`` takes, in words: ``reachTo takes 3 or 4 arguments (x, y, z[, method])``."""
    most = len(names)
    if most == 0:
        return "%s takes no arguments" % name
    form = (
        ", ".join(names[:fewest])
        + "".join("%s%s" % ("[, " if k else "[", n) for k, n in enumerate(names[fewest:], start=fewest))
        + "]" * (most - fewest)
    )
    if fewest == most:
        count = "%d argument%s" % (most, "" if most == 1 else "s")
    elif most - fewest == 1:
        count = "%d or %d arguments" % (fewest, most)
    else:
        count = "%d to %d arguments" % (fewest, most)
    return "%s takes %s (%s)" % (name, count, form)


def _any_count(f, name, names):
    """``f`` published once, with any number of arguments: the trailing OPTIONAL ones filled in, any other count
    refused in one line."""
    fewest = len(names)
    while fewest and names[fewest - 1] in OPTIONAL:
        fewest -= 1
    takes = arity(name, names, fewest)

    def call(self, *args):
        if not fewest <= len(args) <= len(names):
            return failed("TypeError: %s, got %d" % (takes, len(args)))
        return f(self, *(args + tuple(OPTIONAL[n] for n in names[len(args) :])))

    call.__name__ = f.__name__
    call.__doc__ = "%s. %s" % (takes, f.__doc__ or "")
    call.__qi_name__ = getattr(f, "__qi_name__", None)
    call.__qi_signature__ = "m"
    call.__qi_return_signature__ = f.__qi_return_signature__
    return call


def publish(cls):
    """Class decorator: every qi method of ``cls`` refuses in one line; one taking dynamic arguments takes any
    number of them, and counts them itself."""
    seen = set()
    # The class and its bases (a surface in parts), the nearest definition first.
    for klass in [k for k in getattr(cls, "__mro__", (cls,)) if k is not object]:
        for attr, f in list(vars(klass).items()):
            if attr in seen:
                continue
            seen.add(attr)
            if not callable(f) or attr.startswith("_") or getattr(f, "__qi_signature__", None) in _NOT_BOUND:
                continue
            wrapped = one_line(f)
            names = _argspec(f).args[1:]
            if f.__qi_signature__ == "(" + "m" * len(names) + ")":  # dynamic arguments by position
                wrapped = _any_count(wrapped, getattr(f, "__qi_name__", None) or attr, names)
            setattr(cls, attr, wrapped)
    return cls
