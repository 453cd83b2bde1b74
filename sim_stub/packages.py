"""A small stand-in for NAOqi's PackageManager: ``install(path)`` unpacks a .pkg into an apps folder."""

from __future__ import annotations

import os
import threading
import xml.etree.ElementTree as ET
import zipfile

try:  # qi publishes every method of a registered object; keep helpers private
    from qi import nobind as _private
except ImportError:  # in-process use without libqi

    def _private(f):
        return f


class StubPackageManager:
    """Installs Choregraphe packages (zip files with a manifest.xml) into ``apps_dir/<uuid>``.

    Args:
        apps_dir: where installed packages go (on a NAO:
            ``/home/nao/.local/share/PackageManager/apps``).
    """

    def __init__(self, apps_dir: str, services: object | None = None):
        self._apps_dir = apps_dir
        self._services = services  # a StubServiceManager: told of each package installed
        self._lock = threading.Lock()
        self._installed: list[dict] = []

    def install(self, path: str) -> bool:
        """Install the package at ``path`` (a file on the robot)."""
        if not isinstance(path, str) or not os.path.isfile(path):
            raise RuntimeError(f"PackageManager: no package file at {path!r}")
        with self._lock, zipfile.ZipFile(path) as z:
            uuid = self._uuid(z)
            target = os.path.join(self._apps_dir, uuid)
            os.makedirs(target, exist_ok=True)
            z.extractall(target)
            self._installed.append({"uuid": uuid, "path": path, "folder": target})
        if self._services is not None:
            self._services.installed(uuid, target)
        return True

    def packages(self) -> list[dict]:
        """What was installed, oldest first (stub only)."""
        with self._lock:
            return [dict(p) for p in self._installed]

    @_private
    @staticmethod
    def _uuid(z: zipfile.ZipFile) -> str:
        try:
            root = ET.fromstring(z.read("manifest.xml"))
        except KeyError:
            raise RuntimeError("PackageManager: the package has no manifest.xml") from None
        uuid = root.get("uuid")
        if not uuid or "/" in uuid or uuid.startswith("."):
            raise RuntimeError(f"PackageManager: bad package uuid {uuid!r}")
        return uuid
