"""Build the Choregraphe package (.pkg) that carries nao-ik to the robot: the boxes and the robot runtime.

A .pkg is a zip with ``manifest.xml`` at its root. This one holds ``behaviors/`` (the
Choregraphe boxes) and the robot runtime (:mod:`nao_ik.robot` and the numpy-free modules it
imports, the library's own files), and its manifest declares the runtime as a service that
NAOqi's ServiceManager starts at boot and after installing, and restarts if it dies
(``autorun``, NAOqi >= 2.3; docs/robot-runtime.md)::

    <services><service name="NaoArmIK" execStart="/usr/bin/python2 nao_ik/robot/main.py --qi-url ..."
                        autorun="true"/></services>

The manifest's NAOqi requirement is raised to :data:`SERVICE_NAOQI` then (ServiceManager came
with NAOqi 2.3; the boxes alone, served from a computer, keep behaviors/manifest.xml's).

The runtime serves fewer calls than the computer's service (``analytic`` reaches and
``computeAngles``; no poses, paths, pointing, both arms, hands). So the package with the runtime
carries only the boxes it can serve (:func:`for_runtime`): a box stays when every NaoArmIK method
its script calls is one that ``nao_ik/robot/service.py`` binds and its ``method`` parameter's
default is one the runtime has (``""``, the service's default, or one of ``METHODS`` of
``nao_ik/robot/checks.py``); its ``method`` choices keep those alone. A box the behavior's
diagram links that the runtime cannot serve stops the build. The boxes alone (``--boxes-only``)
keep every box and choice.

Standard library only, so that ``deploy.sh`` can run it with any Python 3::

    python3 nao_ik/robot/package.py build/nao-ik.pkg               # the boxes, the runtime, the service
    python3 nao_ik/robot/package.py --boxes-only build/nao-ik.pkg  # the boxes alone (a computer serves NaoArmIK)
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: What the robot runtime ships, as globs from the repository's root: the runtime itself, the numpy-free
#: geometry it imports (the scalar twins, Python 2.7 and 3), the motion core (what the robot's readings prove,
#: the computer-side service's rule), the model's data (plain tuples), how a service's methods are published over
#: qi and what it keeps across its restarts. A module added to one of these folders ships with it.
SHIPPED = ("nao_ik/robot/*.py", "nao_ik/geometry/scalar/*.py", "nao_ik/motion/*.py", "nao_ik/model/*_data.py",
           "nao_ik/service/methods.py", "nao_ik/service/kept.py")  # fmt: skip
#: This builder: it runs on the computer (``make package``, ``deploy.sh``), never on the robot.
BUILDER = "nao_ik/robot/package.py"
#: The stubs' docstrings, where the runtime ships a part of a package whose ``__init__`` imports numpy or more.
_STUB_TEXT = {
    "nao_ik": "nao-ik's robot runtime: nao_ik.robot (the numpy parts stay on the computer).",
    "nao_ik/geometry": "The scalar path of nao_ik.geometry (plain floats, no numpy).",
    "nao_ik/model": "The arm and body data of nao_ik.model (plain tuples).",
    "nao_ik/service": "How a service's methods are published over qi and what it keeps across its restarts "
    "(nao_ik.service.methods, nao_ik.service.kept).",
}


def runtime_files(root: Path = ROOT) -> tuple:
    """The robot runtime's files (paths in the repository and in the package), from :data:`SHIPPED`.
    ``tests/system/test_robot_runtime.py`` holds them to what the runtime imports."""
    found = {p.relative_to(root).as_posix() for pattern in SHIPPED for p in root.glob(pattern)}
    return tuple(sorted(found - {BUILDER}))


def stubs(runtime: tuple) -> dict:
    """The ``__init__`` files of the packages above the shipped modules that are not shipped themselves
    (the library's import numpy), each a docstring alone."""
    folders = {str(Path(rel).parent.as_posix()) for rel in runtime}
    for folder in list(folders):
        while "/" in folder:
            folder = folder.rsplit("/", 1)[0]
            folders.add(folder)
    out = {}
    for folder in sorted(folders):
        init = f"{folder}/__init__.py"
        if init not in runtime:
            text = _STUB_TEXT.get(folder, f"The part of {folder.replace('/', '.')} the robot runtime ships.")
            out[init] = f'"""{text}"""\n'
    return out


RUNTIME = runtime_files()
STUBS = stubs(RUNTIME)
SERVICE_NAME = "NaoArmIK"
#: What ServiceManager runs, from the package's folder; ``--qi-url`` is NAOqi on the robot itself
#: (ServiceManager may pass its own: the last one wins).
EXEC_START = "/usr/bin/python2 nao_ik/robot/main.py --qi-url tcp://127.0.0.1:9559"
SERVICES = (
    f'    <services>\n        <service name="{SERVICE_NAME}" execStart="{EXEC_START}" autorun="true" />\n'
    "    </services>\n"
)
#: The NAOqi a package with the service needs: ServiceManager, which starts a manifest's services, came with 2.3.
SERVICE_NAOQI = "2.3"
_NAOQI = re.compile(r'(<naoqiRequirement\s[^>]*\bminVersion=")([^"]*)(")')
#: The robot runtime's service and checks (read as source: this module runs without qi or numpy).
RUNTIME_SERVICE = "nao_ik/robot/service.py"
RUNTIME_CHECKS = "nao_ik/robot/checks.py"
_XAR_NS = "{http://www.ald.softbankrobotics.com/schema/choregraphe/project.xsd}"


def _version(text: str) -> tuple:
    return tuple(int(part) for part in re.findall(r"\d+", text))


def manifest(behaviors: Path) -> str:
    """The boxes' manifest with the service declared (a ``<services>`` element before ``</package>``) and
    its NAOqi requirement at least :data:`SERVICE_NAOQI`."""
    text = (behaviors / "manifest.xml").read_text(encoding="utf-8")
    if "<services>" in text:
        raise ValueError(f"{behaviors / 'manifest.xml'} declares services already")
    found = _NAOQI.findall(text)
    if len(found) != 1:
        raise ValueError(f"{behaviors / 'manifest.xml'} has {len(found)} naoqiRequirement minVersion, expected one")
    if _version(found[0][1]) < _version(SERVICE_NAOQI):
        text = _NAOQI.sub(lambda m: m.group(1) + SERVICE_NAOQI + m.group(3), text)
    head, sep, tail = text.rpartition("</package>")
    if not sep:
        raise ValueError(f"{behaviors / 'manifest.xml'} has no </package>")
    return head + SERVICES + sep + tail


# ------------------------------------------------------------------ the boxes the runtime serves


def served(root: Path = ROOT) -> frozenset:
    """The qi methods the robot runtime's NaoArmIK binds (``@qi.bind`` in nao_ik/robot/service.py)."""
    tree = ast.parse((root / RUNTIME_SERVICE).read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == SERVICE_NAME)
    return frozenset(
        f.name
        for f in cls.body
        if isinstance(f, ast.FunctionDef)
        and any(isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "bind"
                for d in f.decorator_list)
    )  # fmt: skip


def runtime_methods(root: Path = ROOT) -> tuple:
    """The IK methods the robot runtime has (``METHODS`` of nao_ik/robot/checks.py)."""
    tree = ast.parse((root / RUNTIME_CHECKS).read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "METHODS" for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    raise ValueError(f"{RUNTIME_CHECKS} defines no METHODS")


def _is_service(node: ast.AST) -> bool:
    """``<anything>.service("NaoArmIK")``."""
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "service"
        and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and node.args[0].value == SERVICE_NAME
    )  # fmt: skip


def box_calls(script: str) -> frozenset:
    """The NaoArmIK methods a box script calls: on ``...service("NaoArmIK")`` itself or on a name (or
    ``self.<name>``) given its value."""
    tree = ast.parse(script)
    names, attributes = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and _is_service(node.value):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    names.add(t.id)
                elif isinstance(t, ast.Attribute):
                    attributes.add(t.attr)
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if (
                _is_service(owner) or (isinstance(owner, ast.Name) and owner.id in names)
                or (isinstance(owner, ast.Attribute) and owner.attr in attributes)
            ):  # fmt: skip
                out.add(node.func.attr)
    return frozenset(out)


def _box_span(text: str, box_id: str) -> tuple:
    """Where the diagram's box ``box_id`` is in the .xar's text: (start, end), its line included."""
    opening = re.compile(r'^<Box\s[^>]*\sid="' + re.escape(box_id) + r'"[^>]*>', re.M)
    starts = [m.start() for m in opening.finditer(text)]
    if len(starts) != 1:
        raise ValueError(f"{len(starts)} boxes with id {box_id} in the .xar (nested diagrams are not handled)")
    depth = 0
    for m in re.finditer(r"<!\[CDATA\[.*?\]\]>|<Box\s|</Box>", text[starts[0] :], re.S):
        if m.group() == "</Box>":
            depth -= 1
            if depth == 0:
                end = starts[0] + m.end()
                return starts[0], end + 1 if text[end : end + 1] == "\n" else end
        elif m.group().startswith("<Box"):
            depth += 1
    raise ValueError(f"box {box_id} has no </Box>")


def for_runtime(text: str, root: Path = ROOT) -> tuple:
    """A behavior.xar's text as the package with the robot runtime carries it.

    Returns:
        (the text, the names of the boxes left out). The boxes the runtime cannot serve are left
        out (see the module's documentation); the ``method`` choices of the others keep ``""`` and
        the runtime's methods.

    Raises:
        ValueError: the diagram links a box the runtime cannot serve (its behavior would not run).
    """
    calls, methods = served(root), runtime_methods(root)
    allowed = ("",) + methods
    tree = ET.fromstring(text.encode("utf-8"))
    out, dropped, kept = text, [], []
    for diagram in tree.iter(_XAR_NS + "Diagram"):
        links = diagram.findall(_XAR_NS + "Link")
        for box in diagram.findall(_XAR_NS + "Box"):
            content = box.find(f"{_XAR_NS}script/{_XAR_NS}content")
            script = content.text if content is not None and content.text else ""
            missing = sorted(box_calls(script) - calls) if script.strip() else []
            method = next((p for p in box.findall(_XAR_NS + "Parameter") if p.get("name") == "method"), None)
            why = ""
            if missing:
                why = "it calls " + ", ".join(missing)
            elif method is not None and method.get("value") not in allowed:
                why = f"its method parameter defaults to {method.get('value')!r}"
            if not why:
                kept.append(box.get("id"))
                continue
            ident = box.get("id")
            if any(ident in (lk.get("inputowner"), lk.get("outputowner")) for lk in links):
                raise ValueError(
                    f"the behavior's diagram links the box {box.get('name')!r}, which the robot runtime cannot serve "
                    f"({why}; it serves {', '.join(sorted(calls))} with the methods {', '.join(methods)})"
                )
            start, end = _box_span(out, ident)
            out = out[:start] + out[end:]
            dropped.append(box.get("name"))
    choice = re.compile(r'<Choice value="([^"]*)" />\r?\n')

    def prune(parameter: re.Match) -> str:  # the method choices the runtime has
        return choice.sub(lambda c: c.group() if c.group(1) in allowed else "", parameter.group())

    for ident in kept:
        start, end = _box_span(out, ident)
        box = re.sub(r'<Parameter name="method"[^>]*>.*?</Parameter>', prune, out[start:end], flags=re.S)
        out = out[:start] + box + out[end:]
    ET.fromstring(out.encode("utf-8"))  # still well-formed
    return out, dropped


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
        service: False: the boxes alone, every one of them, as for a robot served from a computer
            (``deploy.sh`` without ``--on-robot``: the robot's own NaoArmIK would take the service's
            name). True: the runtime, its service, and the boxes it serves (:func:`for_runtime`).

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
                if rel == "manifest.xml":
                    continue
                if service and rel.endswith(".xar"):  # the boxes the robot runtime serves
                    z.writestr(rel, for_runtime(path.read_text(encoding="utf-8"), root)[0])
                else:
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
    if args.boxes_only:
        print(f"built {path} (the boxes only)")
        return 0
    print(f"built {path} (service {SERVICE_NAME}: {EXEC_START}; NAOqi >= {SERVICE_NAOQI})")
    dropped = set()
    for xar in sorted((ROOT / "behaviors").rglob("*.xar")):
        dropped.update(for_runtime(xar.read_text(encoding="utf-8"))[1])
    if dropped:
        print(f"boxes left out (the robot runtime does not serve them): {', '.join(sorted(dropped))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
