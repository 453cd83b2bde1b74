"""A small stand-in for NAOqi's ServiceManager: runs the services that installed packages declare.

On the robot, a package's ``manifest.xml`` may declare ``<services><service name=... execStart=...
autorun="true"/></services>``; ServiceManager runs ``execStart`` from the package's folder, at
boot and after installation for an autorun service, and restarts it if it crashes (NAOqi >= 2.3,
docs/robot-runtime.md). This stub does the same for the simulated robot: after
:class:`~sim_stub.packages.StubPackageManager` installs a package it starts the package's autorun
services (stopping the package's running ones first), with ``--qi-url`` of the simulated
NAOqi added. The robot's ``/usr/bin/python2`` is played by ``python2`` (default: this Python;
environment variable ``NAO_IK_SIM_PYTHON2``). An autorun service whose process ends other than by
:meth:`StubServiceManager.stop` with a status other than 0 (a signal, or exit 1) is started again, as
NAOqi 2.8's ServiceManager page says ("if it crashes more than 5 times during last 10 seconds, it is not
restarted anymore"): within :data:`WATCH` seconds, unless it ended so more than :data:`CRASHES` times in the
last :data:`CRASH_SECONDS`.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET

try:  # qi publishes every method of a registered object; keep helpers private
    from qi import nobind as _private
except ImportError:  # in-process use without libqi

    def _private(f):
        return f


ROBOT_PYTHON = "/usr/bin/python2"
#: Seconds between two looks at the autorun services' processes.
WATCH = 0.1
#: An autorun service that crashed more than CRASHES times in the last CRASH_SECONDS is not started again.
CRASHES, CRASH_SECONDS = 5, 10.0


class StubServiceManager:
    """Starts and stops the executables of installed packages' ``<service>`` entries.

    Args:
        url: the simulated NAOqi's address (passed as ``--qi-url``).
        python2: what plays the robot's ``/usr/bin/python2``.
    """

    def __init__(self, url: str, python2: str | None = None):
        self._url = url
        self._python2 = python2 or os.environ.get("NAO_IK_SIM_PYTHON2") or sys.executable
        self._lock = threading.Lock()
        self._declared: dict[str, tuple] = {}  # name -> (folder, argv)
        self._running: dict[str, subprocess.Popen] = {}
        self._autorun: set[str] = set()
        self._crashes: dict[str, list[float]] = {}  # name -> when its process was seen crashed, recent ones
        self._closed = threading.Event()
        threading.Thread(target=self._watch, name="stub-service-manager", daemon=True).start()

    @_private
    def installed(self, uuid: str, folder: str) -> None:
        """Read a just-installed package's services; start the autorun ones (called by the PackageManager).

        The package's services that run are stopped first (a package installed again replaces the old one).
        """
        for name in [n for n in list(self._running) if n.startswith(uuid + ".")]:
            self.stop(name)
        with self._lock:
            self._declared = {n: d for n, d in self._declared.items() if not n.startswith(uuid + ".")}
            self._autorun = {n for n in self._autorun if not n.startswith(uuid + ".")}
        root = ET.parse(os.path.join(folder, "manifest.xml")).getroot()
        for entry in root.findall("./services/service"):
            argv = shlex.split(entry.get("execStart", ""))
            if not argv:
                continue
            name = f"{uuid}.{entry.get('name')}"
            with self._lock:
                self._declared[name] = (folder, argv)
                if entry.get("autorun") == "true":
                    self._autorun.add(name)
            if entry.get("autorun") == "true":
                self.start(name)

    def start(self, name: str) -> bool:
        """Start service ``name`` (``uuid.name``) as its manifest says, with ``--qi-url`` added."""
        with self._lock:
            if name not in self._declared:
                raise RuntimeError(f"ServiceManager: no service {name!r}")
            if name in self._running and self._running[name].poll() is None:
                return True
            folder, argv = self._declared[name]
            argv = [self._python2 if a == ROBOT_PYTHON else a for a in argv] + ["--qi-url", self._url]
            log = open(os.path.join(folder, f"{name}.log"), "ab")  # noqa: SIM115 (the child keeps it)
            self._running[name] = subprocess.Popen(argv, cwd=folder, stdout=log, stderr=subprocess.STDOUT)
            log.close()
        return True

    def stop(self, name: str) -> bool:
        """Stop service ``name`` (SIGTERM, then SIGKILL after 10 s)."""
        with self._lock:
            proc = self._running.pop(name, None)
        if proc is None or proc.poll() is not None:
            return False
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        return True

    def isServiceRunning(self, name: str) -> bool:  # noqa: N802 (the qi API's name)
        """True while the service's process runs."""
        with self._lock:
            proc = self._running.get(name)
        return proc is not None and proc.poll() is None

    @_private
    def process(self, name: str) -> subprocess.Popen | None:
        """The process of a started service (stub only)."""
        with self._lock:
            return self._running.get(name)

    @_private
    def close(self) -> None:
        """Stop every service started here (and restart none)."""
        self._closed.set()
        for name in list(self._running):
            self.stop(name)

    @_private
    def _watch(self) -> None:
        """Start again each autorun service whose process crashed (ended by itself with a status other than 0)."""
        while not self._closed.wait(WATCH):
            with self._lock:
                crashed = [n for n, p in self._running.items() if n in self._autorun and p.poll() not in (None, 0)]
                now = time.monotonic()
                for name in crashed:
                    recent = [t for t in self._crashes.get(name, []) if now - t < CRASH_SECONDS] + [now]
                    self._crashes[name] = recent
                    if len(recent) > CRASHES:  # it keeps crashing: not started again
                        del self._running[name]
            for name in crashed:
                with self._lock:
                    again = name in self._running and not self._closed.is_set()
                if again:
                    self.start(name)
