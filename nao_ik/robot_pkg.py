"""Build the Choregraphe package (.pkg) that carries nao-ik to the robot: the boxes and the robot runtime.

A .pkg is a zip with ``manifest.xml`` at its root. This one holds ``behaviors/`` (the
Choregraphe boxes) and the robot runtime (:mod:`nao_ik.robot` and the numpy-free modules it
imports, the library's own files), and its manifest declares the runtime as a service that
NAOqi's ServiceManager starts at boot and after installing, and restarts if it dies
(``autorun``, NAOqi >= 2.3; docs/robot-runtime.md)::

    <services><service name="NaoArmIK" execStart="/usr/bin/python2 nao_ik/robot/main.py --qi-url ..."
                        autorun="true"/></services>

Standard library only, so that ``deploy.sh`` can run it with any Python 3::

    python3 nao_ik/robot_pkg.py build/nao-ik.pkg               # the boxes, the runtime, the service
    python3 nao_ik/robot_pkg.py --boxes-only build/nao-ik.pkg  # the boxes alone (a computer serves NaoArmIK)
"""

from __future__ import annotations

import argparse
import os
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The robot runtime's files (paths in the repository and in the package): the runtime and the
#: numpy-free modules of the library it imports. ``tests/test_robot_runtime.py`` holds this list
#: to what the runtime imports.
RUNTIME = (
    "nao_ik/arm_data.py",
    "nao_ik/body_data.py",
    "nao_ik/geometry/scalar_swivel.py",
    "nao_ik/geometry/scalar_nearest.py",
    "nao_ik/geometry/scalar_clearance.py",
    "nao_ik/geometry/scalar_sweep.py",
    "nao_ik/geometry/intervals.py",
    "nao_ik/robot/__init__.py",
    "nao_ik/robot/arms.py",
    "nao_ik/robot/checks.py",
    "nao_ik/robot/solve.py",
    "nao_ik/robot/service.py",
    "nao_ik/robot/main.py",
    "nao_ik/robot/stop.py",
    "nao_ik/robot/bench.py",
)
#: The package's own ``__init__`` files: the library's import numpy (the whole library), these nothing.
STUBS = {
    "nao_ik/__init__.py": '"""nao-ik\'s robot runtime: nao_ik.robot (the numpy parts stay on the computer)."""\n',
    "nao_ik/geometry/__init__.py": '"""The scalar path of nao_ik.geometry (plain floats, no numpy)."""\n',
}
SERVICE_NAME = "NaoArmIK"
#: What ServiceManager runs, from the package's folder; ``--qi-url`` is NAOqi on the robot itself
#: (ServiceManager may pass its own: the last one wins).
EXEC_START = "/usr/bin/python2 nao_ik/robot/main.py --qi-url tcp://127.0.0.1:9559"
SERVICES = (
    f'    <services>\n        <service name="{SERVICE_NAME}" execStart="{EXEC_START}" autorun="true" />\n'
    "    </services>\n"
)


def manifest(behaviors: Path) -> str:
    """The boxes' manifest with the service declared (a ``<services>`` element before ``</package>``)."""
    text = (behaviors / "manifest.xml").read_text(encoding="utf-8")
    if "<services>" in text:
        raise ValueError(f"{behaviors / 'manifest.xml'} declares services already")
    head, sep, tail = text.rpartition("</package>")
    if not sep:
        raise ValueError(f"{behaviors / 'manifest.xml'} has no </package>")
    return head + SERVICES + sep + tail


def stage(dest: Path, root: Path = ROOT) -> Path:
    """Write the robot runtime's tree (as it is in the package) into ``dest``; returns ``dest``."""
    for rel in RUNTIME:
        out = dest / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes((root / rel).read_bytes())
    for rel, text in STUBS.items():
        (dest / rel).write_text(text, encoding="utf-8")
    return dest


def build(out: Path, root: Path = ROOT, service: bool = True) -> Path:
    """Build the .pkg at ``out``: behaviors/ at the archive's root, the manifest with the service, the runtime.

    Args:
        out: the .pkg to write.
        root: the repository.
        service: False: the boxes alone, as for a robot served from a computer (``deploy.sh``
            without ``--on-robot``: the robot's own NaoArmIK would take the service's name).

    Returns:
        ``out``.
    """
    behaviors = root / "behaviors"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".part")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for folder, dirs, files in os.walk(behaviors):
            dirs.sort()
            for name in sorted(files):
                path = Path(folder) / name
                rel = path.relative_to(behaviors).as_posix()
                if rel != "manifest.xml":
                    z.write(path, rel)
        if not service:
            z.write(behaviors / "manifest.xml", "manifest.xml")
        else:
            z.writestr("manifest.xml", manifest(behaviors))
            for rel in RUNTIME:
                z.write(root / rel, rel)
            for rel, text in STUBS.items():
                z.writestr(rel, text)
    tmp.replace(out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build nao-ik's .pkg (the boxes and the robot runtime).")
    parser.add_argument("out", nargs="?", default=str(ROOT / "build" / "nao-ik.pkg"), help="the .pkg to write")
    parser.add_argument("--boxes-only", action="store_true", help="no robot runtime, no service (a computer serves)")
    args = parser.parse_args(argv)
    path = build(Path(args.out), service=not args.boxes_only)
    print(f"built {path} (" + ("the boxes only)" if args.boxes_only else f"service {SERVICE_NAME}: {EXEC_START})"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
