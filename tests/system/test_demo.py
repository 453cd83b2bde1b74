"""``nao-ik demo`` as a user runs it: its exit status, the view after the table, and its picture's legend."""

import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from matplotlib.colors import to_rgba

from nao_ik.kinematics.chain import joint_positions
from nao_ik.model.arm import arm_model
from nao_ik.tools import demo

pytest.importorskip("qi")

PY = [sys.executable, "-m", "nao_ik.cli"]
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
#: One method, no cost rounds: a few seconds a run.
SHORT = ["demo", "--methods", "dls", "--rounds", "0", "--view", "--view-port", "0"]


def run_demo(tmp_path, *extra, stdin=subprocess.DEVNULL, timeout=60):
    t0 = time.monotonic()
    out = subprocess.run(PY + SHORT + ["--out", str(tmp_path), *extra], stdin=stdin, capture_output=True, text=True,
                         env=ENV, timeout=timeout)  # fmt: skip
    return out, time.monotonic() - t0


def _in_order(text, *parts):
    at = [text.index(p) for p in parts]
    return at == sorted(at)


def test_the_view_closes_at_once_when_stdin_is_no_terminal_and_the_demo_exits_0(tmp_path):
    out, _ = run_demo(tmp_path)
    assert out.returncode == 0, out.stderr
    assert "terminate called" not in out.stderr and "libqi still holds" not in out.stderr
    assert _in_order(out.stdout, "| dls | in front, left |", "picture: ", "closes now: stdin is not a terminal",
                     "view: closed")  # fmt: skip
    assert (tmp_path / "demo.png").stat().st_size > 20_000


def test_view_seconds_keeps_the_view_up_that_long_on_a_pipe(tmp_path):
    held, seconds = run_demo(tmp_path, "--view-seconds", "2")
    assert held.returncode == 0, held.stderr
    assert "stays open 2 s (stdin is not a terminal: not waiting for Enter)" in held.stdout
    assert _in_order(held.stdout, "picture: ", "stays open 2 s", "view: closed")
    assert seconds >= 2.0


def test_enter_closes_the_view_on_a_terminal(tmp_path):
    pty = pytest.importorskip("pty")
    try:
        master, slave = pty.openpty()
    except OSError as e:
        pytest.skip(f"no pseudo-terminal here: {e}")
    proc = subprocess.Popen(PY + SHORT + ["--out", str(tmp_path)], stdin=slave, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=ENV)  # fmt: skip
    os.close(slave)
    watchdog = threading.Timer(90, proc.kill)  # a demo that hangs fails the test instead of blocking it
    watchdog.start()
    try:
        lines = []
        while True:
            line = proc.stdout.readline()
            lines.append(line)
            if "press Enter to close it" in line or not line:
                break
        assert "press Enter to close it" in lines[-1], lines
        time.sleep(1.0)
        assert proc.poll() is None  # it waits for Enter
        os.write(master, b"\n")
        rest, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        assert "view: closed" in rest
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        os.close(master)


def test_a_refusal_line_says_each_thing_once():
    error = "RuntimeError: dls for (0.34, 0.1, 0.1): collision: torso; nothing sent"  # as the service words it
    line = demo.refused("out of reach", error)
    assert line == "refused (out of reach): dls for (0.34, 0.1, 0.1): collision: torso; nothing sent"


#: ``nao-ik demo`` where matplotlib cannot be imported, as after a plain ``pip install .`` (no 'plot' extra).
WITHOUT_MATPLOTLIB = "import sys; sys.modules['matplotlib'] = None; from nao_ik.cli import main; sys.exit(main())"


def test_without_matplotlib_the_demo_prints_progress_then_its_table_and_how_to_get_the_picture(tmp_path):
    """Each line as it comes (a pipe, as a user's tee or CI has it): the progress lines arrive while the reaches
    run, not all at the exit; the table and demo.md are there; the picture's absence is one line saying how."""
    cmd = [sys.executable, "-c", WITHOUT_MATPLOTLIB, "demo", "--methods", "dls", "--rounds", "0", "--out",
           str(tmp_path)]  # fmt: skip
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=ENV)  # fmt: skip
    watchdog = threading.Timer(90, proc.kill)
    watchdog.start()
    try:
        came = [(time.monotonic(), line) for line in proc.stdout]
        err = proc.stderr.read()
        proc.wait()
    finally:
        watchdog.cancel()
    out = "".join(line for _, line in came)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    assert _in_order(out, "reaching 6 targets with each of 1 method(s)", "[1/1] dls: ", "| dls | in front, left |",
                     "picture: not drawn, it needs matplotlib")  # fmt: skip
    when = {key: next(t for t, line in came if line.startswith(key)) for key in ("reaching ", "[1/1] dls: ")}
    assert when["[1/1] dls: "] - when["reaching "] > 1.0  # six reaches apart: printed as they happened
    hint = "picture: not drawn, it needs matplotlib (the 'plot' extra): pip install matplotlib"
    assert [line for _, line in came if "matplotlib" in line] == [f"{hint} (the table: {tmp_path}/demo.md)\n"]
    assert "| dls | in front, left |" in (tmp_path / "demo.md").read_text(encoding="utf-8")
    assert not (tmp_path / "demo.png").exists()


#: What the legend says of each thing drawn (written out here, not taken from the module).
LEGEND = {
    "arm reached": "arm at a reached target (within 0.1 mm)",
    "arm missed": "arm at a missed target",
    "target reached": "target, reached",
    "target missed": "target, missed",
    "torso": "torso",
    "shoulder": "shoulders",
}


def _reach(method, arm, target, reached, angles):
    return demo.Reach(method, "t", arm, target, reached, 0.0, 0.0, 1, 0.1, 1.0, list(angles))


def test_the_legend_shows_the_colours_drawn():
    import matplotlib.pyplot as plt

    left = _reach("dls", "LArm", (0.16, 0.13, 0.10), True, [0.2, 0.3, -1.0, -0.8, 0.0])
    right = _reach("dls", "RArm", (0.34, -0.10, 0.10), False, [0.1, -0.2, 1.0, 0.5, 0.0])
    fig = demo.figure([left, right], ["dls"])
    try:
        labels = LEGEND
        handles = {h.get_label(): h for h in fig.legends[0].legend_handles}
        assert set(handles) == set(labels.values())
        ax = fig.axes[0]

        def drawn(xyz):
            """The line drawn through exactly these points."""
            xyz = np.atleast_2d(xyz)
            data = [np.array(ln.get_data_3d(), dtype=float).T for ln in ax.get_lines()]
            found = [ln for ln, d in zip(ax.get_lines(), data) if d.shape == xyz.shape and np.allclose(d, xyz)]
            assert len(found) == 1, xyz
            return found[0]

        def arm_points(r):
            p = joint_positions(arm_model(r.arm), r.angles)
            return [p["shoulder"], p["elbow"], p["wrist"], p["hand"]]

        shoulders = [arm_model(a).shoulder for a in ("LArm", "RArm")]
        cases = [
            ("arm reached", arm_points(left)),
            ("arm missed", arm_points(right)),
            ("target reached", left.target),
            ("target missed", right.target),
            ("torso", [(0, 0.098, 0.1), (0, -0.098, 0.1)]),
            ("shoulder", shoulders[0]),
            ("shoulder", shoulders[1]),
        ]
        for key, xyz in cases:
            line, entry = drawn(xyz), handles[labels[key]]
            assert to_rgba(line.get_color()) == to_rgba(entry.get_color()), key
            assert line.get_marker() == entry.get_marker() and line.get_linestyle() == entry.get_linestyle(), key
        # The two outcomes look different.
        assert to_rgba(handles[labels["arm reached"]].get_color()) != to_rgba(handles[labels["arm missed"]].get_color())
        assert to_rgba(handles[labels["target reached"]].get_color()) != to_rgba(
            handles[labels["target missed"]].get_color()
        )
    finally:
        plt.close(fig)
