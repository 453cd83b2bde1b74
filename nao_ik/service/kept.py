# -*- coding: utf-8 -*-
# ruff: noqa: UP004, UP009, UP010, UP024, UP031  (the common subset of Python 2.7 and 3: the robot runtime ships this file)
"""What a service keeps across its own restarts, for the robot it serves: the default speed callers set.

A caller's ``setSpeed(0.05)`` holds for every later call, also after the service restarts: its worker restarted
by the supervisor, ``nao-ik serve`` registering again after its connection to the robot dropped, the on-robot
runtime restarted by ALServiceManager, or the service started again by hand on the same robot. It does not
survive a reboot of the computer the service runs on (the robot's, for the runtime): the file lives in the
user's runtime directory (``$XDG_RUNTIME_DIR``, a tmpfs that logging out for good or rebooting empties), else in
a folder of the temporary directory, which the systems nao-ik runs on empty at boot.

One file per robot (its ServiceDirectory's machine id, else its URL) and service name, so that two instances of
the service and two robots keep their own. A start with another configured speed than the one the kept value
was set over (``nao-ik serve --speed 0.4`` after a ``--speed 0.2`` start) takes the configured one: the user
changed the configuration since.

Written in the common subset of Python 2.7 and 3, standard library only.
"""

from __future__ import division

import hashlib
import json
import os
import tempfile

try:  # the type comments' names (typing is not in every Python 2.7)
    from typing import Any, Optional  # noqa: F401
except ImportError:  # pragma: no cover
    pass


def folder():
    # type: () -> str
    """Where the kept files are: ``$XDG_RUNTIME_DIR/nao-ik``, else ``<temporary directory>/nao-ik-<uid>``."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isdir(runtime):
        return os.path.join(runtime, "nao-ik")
    uid = os.getuid() if hasattr(os, "getuid") else 0
    return os.path.join(tempfile.gettempdir(), "nao-ik-%d" % uid)


def robot(session, timeout):
    # type: (Any, float) -> str
    """What identifies the robot a qi session is connected to: its service directory's URL and its machine id
    (where it answers within ``timeout`` seconds; else the URL alone)."""
    try:
        machine = session.service("ServiceDirectory", _async=True).value(int(timeout * 1000)).machineId()
    except Exception:  # noqa: BLE001 (any failure of libqi's: the URL alone then)
        machine = ""
    return "%s %s" % (session.url(), machine)


class Kept(object):
    """The kept state of the service named ``name`` on the robot ``robot`` (its machine id or URL).

    Args:
        robot: what identifies the robot (:func:`robot`).
        name: the name the service registers under.
        where: the folder (default :func:`folder`).
    """

    def __init__(self, robot, name, where=None):
        # type: (str, str, Optional[str]) -> None
        key = hashlib.sha1(("%s\n%s" % (robot, name)).encode("utf-8")).hexdigest()[:20]
        self.path = os.path.join(where or folder(), key + ".json")

    def speed(self, configured):
        # type: (float) -> float
        """The default speed: the one a caller set, where it was set over this ``configured`` speed; else that."""
        kept = self._read()
        try:
            if float(kept["configured"]) == float(configured):
                speed = float(kept["speed"])
                if 0.0 < speed <= 1.0:
                    return speed
        except (KeyError, TypeError, ValueError):
            pass
        return configured

    def set_speed(self, configured, speed):
        # type: (float, float) -> None
        """Keep ``speed``, set over the ``configured`` one; a file that cannot be written leaves the speed to this
        run (the caller is not refused for it)."""
        try:
            self._write({"configured": float(configured), "speed": float(speed)})
        except (OSError, IOError):
            pass

    def _read(self):
        # type: () -> Any
        try:
            with open(self.path) as f:
                return json.load(f)
        except (OSError, IOError, ValueError):
            return {}

    def _write(self, data):
        # type: (Any) -> None
        where = os.path.dirname(self.path)
        if not os.path.isdir(where):
            os.makedirs(where, 0o700)
        new = self.path + ".%d.new" % os.getpid()
        with open(new, "w") as f:
            json.dump(data, f)
        os.rename(new, self.path)  # atomic on POSIX: a reader sees the old file or the new one
