"""The nao-ik command: sim, serve and reach as separate processes; demo and bench in-process."""

import io
import json
import os
import re
import socket
import subprocess
import sys
import time

import pytest

from nao_ik import cli
from nao_ik.evidence import bench, protocol

pytest.importorskip("qi")

PY = [sys.executable, "-m", "nao_ik.cli"]
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_line(proc, text, timeout=20.0):
    end = time.monotonic() + timeout
    lines = []
    while time.monotonic() < end:
        line = proc.stdout.readline()
        if line:
            lines.append(line)
            if text in line:
                return line
        elif proc.poll() is not None:
            break
    raise AssertionError(f"{text!r} not printed; got {lines!r}")


@pytest.fixture
def sim_and_service():
    url = f"tcp://127.0.0.1:{free_port()}"
    procs = []
    try:
        sim = subprocess.Popen(PY + ["sim", "--listen", url], stdout=subprocess.PIPE, text=True, env=ENV)
        procs.append(sim)
        wait_for_line(sim, "simulated robot listening at")
        srv = subprocess.Popen(PY + ["serve", "--qi-url", url], stdout=subprocess.PIPE, text=True, env=ENV)
        procs.append(srv)
        wait_for_line(srv, "NaoArmIK registered")
        yield url
    finally:
        for p in reversed(procs):
            p.terminate()
            p.wait(timeout=10)


def run(args, **kw):
    return subprocess.run(PY + args, capture_output=True, text=True, env=ENV, timeout=60, **kw)


def test_sim_serve_reach_as_separate_processes(sim_and_service):
    url = sim_and_service
    off = run(["reach", "0.15", "0.12", "0.08", "--qi-url", url])
    assert off.returncode == 1 and "motors are off" in off.stderr
    out = run(["reach", "0.15", "0.12", "0.08", "--method", "fabrik", "--qi-url", url, "--wake-up"])
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["reached"] and result["arm"] == "LArm" and result["method"] == "fabrik"
    right = run(["reach", "0.15", "-0.12", "0.08", "--arm", "RArm", "--compute-only", "--qi-url", url])
    assert json.loads(right.stdout)["moved"] is False
    bad = run(["reach", "0.15", "0.12", "0.08", "--method", "ccd", "--qi-url", url])
    assert bad.returncode == 1 and "unknown method 'ccd'" in bad.stderr


def test_reach_without_a_robot_says_so():
    out = run(["reach", "0.1", "0.1", "0.1", "--qi-url", f"tcp://127.0.0.1:{free_port()}"])
    assert out.returncode == 1 and "nao-ik reach:" in out.stderr


@pytest.mark.parametrize("command", ["demo", "sim", "serve", "reach", "bench", "loadtest"])
def test_every_command_has_help_with_an_example(command):
    out = run([command, "--help"])
    assert out.returncode == 0 and "example" in out.stdout


def test_unknown_command():
    assert cli.main(["fly"]) == 2


def test_demo_prints_the_table_and_draws(tmp_path, capsys):
    cli.main(["demo", "--out", str(tmp_path), "--methods", "fabrik", "dls", "--rounds", "20"])
    out = capsys.readouterr().out
    assert "| method | target |" in out and "| fabrik | in front, left | LArm |" in out
    assert "median reachTo round trip over qi" in out
    assert "| ALMotion.getAngles |" in out and re.search(r"reachTo / getAngles ratio \(worst method\): \d", out)
    png = tmp_path / "demo.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 20_000


def test_bench_prints_a_table(tmp_path, capsys):
    out_file = tmp_path / "bench.md"
    args = ["--targets", "60", "--single", "20", "--methods", "fabrik", "dls", "--paths", "1", "--unreachable", "1",
            "--body", "5", "--out", str(out_file)]  # fmt: skip
    assert bench.main(args) == 0
    text, body = out_file.read_text().split("Through the body:")
    # The body tables: the pseudoinverse on 5 targets, one row per arm of per-part counts and of the check's cost.
    assert "| LArm | ALMotion-style pinv | 5 |" in body and body.count("| RArm |") == 2
    main, continuity = text.split("Continuity:")
    assert main.count("| LArm |") == 2 and main.count("| RArm |") == 2
    assert "| out of limits |" in main
    # Every row reports zero out-of-limit answers and none through the body.
    assert all(
        line.rstrip().endswith("| 0 | 0 |")
        for line in main.splitlines()
        if line.startswith("| LArm") or line.startswith("| RArm")
    )
    # The continuity table: one row per arm and method, 59 steps on one line of 60 points;
    # the unreachable table: one row per arm and method, 3 targets each.
    continuity, unreachable = continuity.split("Unreachable:")
    rows = [line for line in continuity.splitlines() if line.startswith("| LArm") or line.startswith("| RArm")]
    assert len(rows) == 4 and all("| 59 |" in r for r in rows)
    rows = [line for line in unreachable.splitlines() if line.startswith("| LArm") or line.startswith("| RArm")]
    assert len(rows) == 4 and all(r.endswith("/ 3 |") for r in rows)


def test_bench_body_reports_the_model_the_cost_and_the_profiles(tmp_path, capsys, monkeypatch):
    """nao-ik bench --body --quick (its sizes cut further here): the four sections, in order; the body table has a
    row per shape of the body model and per arm link. ``--body N`` still goes to the main table."""
    from nao_ik.evidence import body_report
    from nao_ik.model.arm import arm_model
    from nao_ik.model.body import LINKS

    assert not cli._body_report(["--targets", "60", "--body", "5"]) and cli._body_report(["--body", "--quick"])
    for name, quick in (("TARGETS", 20), ("PAIRS", 30), ("SINGLE", 20), ("ROUNDS", 5)):
        monkeypatch.setattr(body_report, name, (getattr(body_report, name)[0], quick))
    out_file = tmp_path / "body.md"
    assert cli.main(["bench", "--body", "--quick", "--out", str(out_file)]) == 0
    text = out_file.read_text()
    assert text in capsys.readouterr().out and "`nao-ik bench --body --quick --out " in text
    heads = ["## 1. The body model", "## 2. What the check costs", "## 3. What the profile-free motion check adds",
             "## 4. Moves entering the body under each profile, before and after"]  # fmt: skip
    at = [text.index(h) for h in heads]
    assert at == sorted(at)
    rows = [line for line in text[at[0] : at[1]].splitlines() if line.startswith("| ") and "| part |" not in line]
    model = arm_model("LArm")
    assert [r.split(" | ")[0][2:] for r in rows] == [c.part for c in model.body] + [f"LArm {ln.name}" for ln in LINKS]
    assert "| LArm | " in text[at[1] : at[2]] and "| reachTo, body |" in text[at[1] : at[2]]
    assert "| neutral | 20 |" in text[at[2] : at[3]] and "| random clear | 20 |" in text[at[2] : at[3]]
    for profile in ("linear", "smooth", "synchronised"):
        assert text[at[3] :].count(f"| {profile} | ") == 6  # two fractions, three tables
    assert "Entering the simulated robot's own shapes" in text[at[3] :]


def test_bench_methods_take_turns():
    # A slow spell of a shared machine must fall on every method alike.
    order = []
    calls = {name: (lambda t, name=name: order.append((name, t))) for name in ("a", "b")}
    times = protocol.interleaved_times(calls, [0, 1, 2, 3], rounds=2)
    assert order == [("a", 0), ("a", 1), ("b", 0), ("b", 1), ("a", 2), ("a", 3), ("b", 2), ("b", 3)]
    assert set(times) == {"a", "b"} and all(t.shape == (4,) and (t >= 0).all() for t in times.values())


def test_bench_batch_table_times_both_models_in_turn(mocker):
    """--batch: solve_batch without the body model and with it, every method and model taking turns; above
    BODY_BATCH_MAX only without the body; then the parts of the body's cost, where it ran."""
    calls = []
    real = bench.api.solve_batch

    def spy(targets, arm, method, *a, **k):
        calls.append((len(targets), method, bool(arm.body)))
        return real(targets, arm, method, *a, **k)

    mocker.patch.object(bench.api, "solve_batch", side_effect=spy)
    mocker.patch.object(bench, "BODY_BATCH_MAX", 40)
    out = io.StringIO()
    rows = bench.print_batch(["LArm"], ["dls", "nn"], [30, 50], out=out)
    first = [(30, m, b) for m in ("dls", "nn") for b in (False, True)]
    parts = [(30, "analytic", False), (30, "analytic", True)]  # the body's parts every method pays, at 30 only
    assert calls == first * 3 + [(50, m, False) for m in ("dls", "nn")] * 3 + parts
    assert [(r.size, r.method, r.body_per_s is None) for r in rows] == [
        (30, "dls", False), (30, "nn", False), (50, "dls", True), (50, "nn", True)]  # fmt: skip
    assert all(r.bodiless_per_s > 0 and r.bodiless_reached == 1.0 for r in rows)  # protocol targets: all reachable
    text = out.getvalue()
    assert "| LArm | 30 | dls |" in text and "| LArm | 50 | nn |" in text and text.count("not run") == 2
    assert "LArm, 30 targets: the check " in text and "LArm, 50 targets" not in text


def test_a_python_without_libqi_is_told_why_in_one_line(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "qi", None)  # import qi raises ImportError, as where no wheel installed it
    with pytest.raises(SystemExit) as e:
        cli.main(["serve"])
    message = str(e.value.code)
    assert "needs libqi" in message and "CPython 3.8-3.12" in message and "\n" not in message


def test_reach_without_the_service_says_how_to_start_it():
    from sim_stub.robot import SimulatedRobot

    robot = SimulatedRobot()
    try:
        out = run(["reach", "0.15", "0.1", "0.05", "--qi-url", robot.url])
    finally:
        robot.close()
    assert out.returncode == 1 and f"start it with nao-ik serve --qi-url {robot.url}" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
