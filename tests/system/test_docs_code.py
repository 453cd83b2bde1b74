"""Every code block of README.md and docs/*.md, run: what a reader copies works.

A block's fence names what it is, and each kind is checked:

- ``python``: run, the blocks of one file in order in one namespace (a later snippet goes on from an earlier
  one, as the text reads), against the simulated robot: a robot's address in the text (``tcp://ROBOT_IP:9559``,
  ``tcp://<robot-ip>:9559``) is the simulated robot's, which has ``NaoArmIK`` registered and an ``ALTracker``
  that sees a point the left hand reaches;
- ``sh``, ``bash``, ``console`` (its ``$`` lines): each command's ``--help`` (``nao-ik`` and its subcommand,
  ``deploy.sh``, ``python -m pytest``, ``python -m nao_ik.<module>``) runs, and every ``--option`` the line
  gives is one the help lists;
  ``make TARGET`` must be a Makefile target (``make -n``);
- ``text``: output shown (a run's printout, a table), not run.

A fence without one of these kinds fails the test. A block that cannot run here (a real robot's hardware,
Choregraphe) is marked on the line before its fence with ``<!-- docs: not run: <why> -->``; the test lists
those it leaves out, with their reasons, and fails on a marker without one.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
import shlex
import subprocess
import sys
import time
import traceback
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pytest

import nao_ik
from nao_ik.kinematics import frames
from tests.qi_fixtures import Stack

ROOT = Path(__file__).resolve().parents[2]
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PYTHON, SHELL, OUTPUT = {"python"}, {"sh", "bash", "console"}, {"text"}
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
NOT_RUN = re.compile(r"^\s*<!-- docs: not run:(.*)-->\s*$")
#: A robot's address as the docs write it: the simulated robot's in the run.
ROBOT_URL = re.compile(r"tcp://(ROBOT_IP|<robot-ip>):9559")
#: A posture of the left arm whose hand the stub ALTracker reports (FRAME_ROBOT): clear of the body, reachable.
SEEN_POSTURE = [0.2, 0.3, -1.0, -0.8, 0.0]


class Block(NamedTuple):
    path: Path
    line: int  # of the opening fence, from 1
    kind: str
    code: str
    not_run: str | None  # the marker's reason, if marked

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line} ({self.kind or 'no kind'})"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of a markdown file, dedented by their fence's indentation (a block in a list item)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, kind, start = m.group(1), m.group(2), i
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        marker = NOT_RUN.match(lines[start - 1]) if start else None
        found.append(Block(path, start + 1, kind, "\n".join(body) + "\n", marker and marker.group(1).strip()))
        i += 1
    return found


ALL = [b for path in FILES for b in blocks(path)]


def test_every_block_says_what_it_is():
    unknown = [str(b) for b in ALL if b.kind not in PYTHON | SHELL | OUTPUT]
    assert unknown == [], "fence each block as python, sh (bash, console) or text (output shown)"
    unexplained = [str(b) for b in ALL if b.not_run is not None and not b.not_run]
    assert unexplained == [], "a block not run says why: <!-- docs: not run: <why> -->"


def test_the_docs_have_code_to_check():
    """The extraction finds what is there (a broken pattern would pass every other test here vacuously)."""
    kinds = [b.kind for b in ALL]
    assert kinds.count("python") >= 6 and kinds.count("sh") >= 8 and kinds.count("text") >= 2


def test_fences_markers_and_list_items_are_read(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(
        "1. a step:\n\n   ```sh\n   nao-ik sim \\\n     --view   # a comment\n   ```\n\n"
        "<!-- docs: not run: needs Choregraphe -->\n```python\nimport naoqi\n```\n\n```\n$ out\n```\n",
        encoding="utf-8",
    )
    got = blocks(page)
    assert [(b.line, b.kind, b.not_run) for b in got] == [(3, "sh", None), (9, "python", "needs Choregraphe"),
                                                          (13, "", None)]  # fmt: skip
    assert commands(got[0]) == [["nao-ik", "sim", "--view"]]


def test_blocks_not_run_are_listed(capsys):
    with capsys.disabled():
        for b in ALL:
            if b.not_run:
                print(f"\n{b}: not run: {b.not_run}")


# ----------------------------------------------------------------------------------------------- python


class Tracker:
    """ALTracker's getTargetPosition: the hand of :data:`SEEN_POSTURE` (left arm), in the frame asked for."""

    def __init__(self, motion):
        self._motion = motion

    def getTargetPosition(self, frame):  # noqa: N802 (ALTracker's name)
        torso = np.array(self._motion.getTransform("Torso", frame, True)).reshape(4, 4)
        return list(frames.point_from_torso(nao_ik.forward(SEEN_POSTURE, "LArm"), torso))


@pytest.fixture(scope="module")
def robot():
    """The simulated robot with NaoArmIK registered and an ALTracker, shared by every file's blocks."""
    s = Stack()
    tracker = s.robot.session.registerService("ALTracker", Tracker(s.stub))
    try:
        yield s
    finally:
        s.robot.session.unregisterService(tracker)
        s.close()


@pytest.mark.parametrize("path", [p for p in FILES if any(b.kind in PYTHON for b in blocks(p))],
                         ids=lambda p: str(p.relative_to(ROOT)))  # fmt: skip
def test_python_blocks_run(path, robot):
    namespace = {"__name__": "__docs__"}
    for b in blocks(path):
        if b.kind not in PYTHON or b.not_run:
            continue
        code = ROBOT_URL.sub(robot.robot.url, b.code)
        out = io.StringIO()
        t0 = time.monotonic()
        try:
            with contextlib.redirect_stdout(out):
                exec(compile(code, f"{b}", "exec"), namespace)  # noqa: S102 (the docs' own code)
        except Exception:
            pytest.fail(f"{b} failed:\n{traceback.format_exc(limit=-3)}\nits printout:\n{out.getvalue()}")
        assert time.monotonic() - t0 < 30, f"{b} took {time.monotonic() - t0:.0f} s"
    robot.ik.setSpeed(0.2)  # what a block may have changed, for the next file's
    robot.motion.wakeUp()


# ------------------------------------------------------------------------------------------------ shell


def commands(b: Block) -> list[list[str]]:
    """The commands of a shell block: continuation lines joined, comments and ``VAR=value`` prefixes left out;
    in a console block, the ``$`` lines only."""
    text = b.code.replace("\\\n", " ")
    out = []
    for line in text.splitlines():
        if b.kind == "console":
            if not line.startswith("$ "):
                continue
            line = line[2:]
        words = shlex.split(line, comments=True)
        while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):
            words = words[1:]
        if words:
            out.append(words)
    return out


SHELL_COMMANDS = [(b, words) for b in ALL if b.kind in SHELL and not b.not_run for words in commands(b)]


@functools.cache
def _run_help(cmd: tuple[str, ...]) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=ROOT)


def _help(words: list[str]) -> tuple[list[str], list[str]]:
    """(what runs the command's help, the options the docs' line gives it)."""
    program = Path(words[0]).name
    options = [w.split("=", 1)[0] for w in words if w.startswith("--")]
    if program == "nao-ik":
        return [sys.executable, "-m", "nao_ik.cli", words[1], "--help"], options
    if program == "deploy.sh":
        return ["bash", str(ROOT / "deploy.sh"), "--help"], options
    if program.startswith("python") and words[1:3] == ["-m", "pytest"]:
        return [sys.executable, "-m", "pytest", "--help"], options
    if program.startswith("python") and len(words) > 2 and words[1] == "-m" and words[2].startswith("nao_ik."):
        return [sys.executable, "-m", words[2], "--help"], options
    raise AssertionError(f"no check for {program!r}: teach tests/system/test_docs_code.py, or mark the block")


@pytest.mark.parametrize("block, words", SHELL_COMMANDS, ids=[f"{b}: {' '.join(w)[:60]}" for b, w in SHELL_COMMANDS])
def test_shell_commands_exist_with_their_options(block, words):
    if words[0] == "make":
        targets = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        got = subprocess.run(["make", "-n", "-C", str(ROOT), *targets], capture_output=True, text=True, timeout=30)
        assert got.returncode == 0 and "No rule to make target" not in got.stderr, f"{block}: {got.stderr}"
        return
    cmd, options = _help(words)
    got = _run_help(tuple(cmd))
    assert got.returncode == 0 and "usage" in got.stdout.lower(), f"{block}: {' '.join(cmd)}: {got.stderr}"
    unknown = [o for o in options if not re.search(rf"{re.escape(o)}(?![\w-])", got.stdout)]
    assert unknown == [], f"{block}: {' '.join(words)}: not in its --help"
