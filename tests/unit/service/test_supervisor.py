"""`nao-ik serve` survives what kills libqi: a value nested thousands of lists deep crashes the service process in
libqi's network thread (SIGSEGV, before any Python code sees the call); the supervisor restarts it at once."""

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from nao_ik.service import serve as server
from nao_ik.service import supervisor
from sim_stub.robot import SimulatedRobot
from tests import report
from tests.qi_fixtures import qi

#: A caller that sends reachTo(x nested DEPTH lists deep, ...); its own qi client recurses too (hence the stack).
NESTED_CALLER = textwrap.dedent(
    """
    import resource, sys, threading
    import qi
    sys.setrecursionlimit(1000000)
    threading.stack_size(512 << 20)
    def call():
        s = qi.Session()
        s.connect(sys.argv[1])
        v = 0.1
        for _ in range(int(sys.argv[2])):
            v = [v]
        try:
            print("answered", s.service("NaoArmIK").reachTo(v, 0.1, 0.1, ""))
        except Exception as e:
            print("error", str(e).splitlines()[0])
    t = threading.Thread(target=call)
    t.start()
    t.join()
    """
)


def _serve(url):
    return subprocess.Popen([sys.executable, "-m", "nao_ik.cli", "serve", "--qi-url", url],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def _answers(url, timeout):
    """Whether NaoArmIK answers a new caller within ``timeout`` s."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        user = qi.Session()
        try:
            user.connect(url)
            return user.service("NaoArmIK").computeAngles("LArm", 0.15, 0.12, 0.08)["reached"]
        except RuntimeError:
            time.sleep(0.1)
        finally:
            user.close()
    return False


def _service(url, use):
    """``use(NaoArmIK)`` from a new caller."""
    user = qi.Session()
    try:
        user.connect(url)
        return use(user.service("NaoArmIK"))
    finally:
        user.close()


def test_the_stop_grace_outlasts_the_workers_own_deadline():
    assert supervisor.STOP_GRACE > server.STOP_DEADLINE


@pytest.mark.parametrize("depth", [1500, 6000])
def test_a_deeply_nested_argument_leaves_the_service_answering(depth):
    with SimulatedRobot() as robot:
        serve = _serve(robot.url)
        try:
            assert "registered" in serve.stdout.readline()
            workers = [p for p in supervisor.process_tree(serve.pid) if p != serve.pid]
            _service(robot.url, lambda ik: ik.setSpeed(0.05))  # a caller's speed, which the restart keeps
            caller = subprocess.run([sys.executable, "-c", NESTED_CALLER, robot.url, str(depth)],
                                    capture_output=True, text=True, timeout=60)  # fmt: skip
            # The caller's last line of its own, after libqi's notices ("[W] ..." lines, which may come later).
            said = [ln for ln in caller.stdout.strip().splitlines() if not ln.startswith("[")][-1]
            assert said.startswith("error"), caller.stdout + caller.stderr  # refused, or cut off
            if depth <= 2000:  # libqi decodes it: a clear refusal, not a RecursionError
                assert said == "error ValueError: target x must be a finite number, got [[[[...]]]]", said
            t0 = time.monotonic()
            assert _answers(robot.url, 20), "NaoArmIK did not come back"
            back = time.monotonic() - t0
            assert serve.poll() is None  # the supervisor stays
            now = [p for p in supervisor.process_tree(serve.pid) if p != serve.pid]
            if depth > 2000:
                assert now != workers  # the worker died in libqi and was replaced
                assert back < 10, back
            assert _service(robot.url, lambda ik: ik.getSpeed()) == 0.05
            report.lines.append(f"nao-ik serve, a value nested {depth} deep: the caller got {said[:60]!r}; the "
                                f"service answered again {back:.2f} s later")  # fmt: skip
            assert robot.motion.getViolations() == []
        finally:
            serve.send_signal(signal.SIGTERM)
            code = serve.wait(timeout=20)
            err = serve.stderr.read()
        assert code == 0, err
        if depth > 2000:
            assert "the service process died (signal 11 (SIGSEGV)); restarting it" in err, err


def test_a_crashing_worker_is_restarted_and_a_crash_loop_backs_off(tmp_path):
    """A worker that dies at once, again and again: restarted each time, then after a growing pause."""
    starts = tmp_path / "starts"
    crash = f"import os, signal; open({str(starts)!r}, 'a').write('x'); os.kill(os.getpid(), signal.SIGSEGV)"
    proc = subprocess.Popen(
        [sys.executable, "-c", "from nao_ik.service import supervisor; "
                               f"supervisor.supervise([{sys.executable!r}, '-c', {crash!r}])"],  # fmt: skip
        stderr=subprocess.PIPE, text=True, env=dict(os.environ),
    )  # fmt: skip
    time.sleep(3.0)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    err = proc.stderr.read()
    n = len(starts.read_text())
    assert 4 <= n <= 8, (n, err)  # BURST at once, then 0.5, 1, 2 s apart
    assert "times in 10 s; restarting it in" in err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_a_worker_still_starting_stops_it_as_asked(tmp_path, signum):
    """A worker the forwarded signal ends before it set its handlers (still importing, on a busy machine): the
    supervisor stops with status 0 (it was asked to stop, and did), as it does with a worker that handles it."""
    started = tmp_path / "started"
    worker = f"import time; open({str(started)!r}, 'w').close(); time.sleep(30)"  # Python's default handlers
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from nao_ik.service import supervisor; "
                               f"sys.exit(supervisor.supervise([{sys.executable!r}, '-c', {worker!r}]))"],  # fmt: skip
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    end = time.monotonic() + 20
    while not started.exists() and time.monotonic() < end:
        time.sleep(0.02)
    proc.send_signal(signum)
    assert proc.wait(timeout=20) == 0, proc.stderr.read()
