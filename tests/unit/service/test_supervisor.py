"""`nao-ik serve` survives what kills libqi: a value nested thousands of lists deep crashes the service process in
libqi's network thread (SIGSEGV, before any Python code sees the call); a new worker is forked at once."""

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


#: Seconds a crash may keep NaoArmIK down (docs/reliability.md).
DOWNTIME = 1.0


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
            assert "the service process died (signal 11 (SIGSEGV)); a new one is forked" in err, err


def _supervise(worker, *args):
    """A supervisor whose forker forks ``worker`` (code run in each forked worker, ``args`` as sys.argv[1:])."""
    forker = f"import sys; sys.argv[1:] = {list(args)!r}\nfrom nao_ik.service import forker\nif forker.forks():\n"
    forker += textwrap.indent(textwrap.dedent(worker), "    ")
    return subprocess.Popen(
        [sys.executable, "-c", "import sys; from nao_ik.service import supervisor; "
                               f"sys.exit(supervisor.supervise([{sys.executable!r}, '-c', {forker!r}]))"],  # fmt: skip
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip


def _wait_for(path, timeout=60.0):
    end = time.monotonic() + timeout
    while not path.exists() and time.monotonic() < end:
        time.sleep(0.02)


def test_a_worker_that_cannot_start_is_forked_again_and_its_crash_loop_backs_off(tmp_path):
    """A worker that dies at once, before it registers, again and again: forked again each time, then after a
    growing pause."""
    starts = tmp_path / "starts"
    proc = _supervise("""
        import os, signal
        open(sys.argv[1], "a").write("x")
        os.kill(os.getpid(), signal.SIGSEGV)
    """, str(starts))  # fmt: skip
    _wait_for(starts)  # the forker's imports done
    time.sleep(2.5)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    err = proc.stderr.read()
    n = len(starts.read_text())
    assert 4 <= n <= 7, (n, err)  # BURST at once, then 0.5, 1, 2 s apart
    assert "died before it registered (signal 11 (SIGSEGV)), 4 times in 10 s; starting it again in 0.5 s" in err


def test_a_worker_that_dies_after_it_registered_is_replaced_at_once_every_time(tmp_path):
    """What a poison caller does: each worker crashes 0.1 s after it registered; a new one is forked at once (within
    FORK_GAP of the last fork), every time, never after a back-off."""
    log = tmp_path / "registered"
    proc = _supervise("""
        import os, signal, time
        forker.registered()
        with open(sys.argv[1], "a") as fh:
            fh.write(f"{time.monotonic()}\\n")
        time.sleep(0.1)
        os.kill(os.getpid(), signal.SIGSEGV)
    """, str(log))  # fmt: skip
    _wait_for(log)
    time.sleep(3.0)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    err = proc.stderr.read()
    times = [float(t) for t in log.read_text().split()]
    down = [b - a - 0.1 for a, b in zip(times, times[1:])]  # from one worker's crash to the next registration
    report.lines.append(f"nao-ik serve's supervisor, each worker crashing 0.1 s after it registered: {len(times)} "
                        f"registrations in 3 s, each at most {max(down):.3f} s after the crash before")  # fmt: skip
    assert len(times) >= 6 and err.count("a new one is forked") >= 5, err  # one per FORK_GAP at most
    assert "starting it again in" not in err, err
    assert max(down) < DOWNTIME, down


def _serving_worker(pid, timeout=60.0):
    """The pid of ``nao-ik serve``'s worker (the forker's child)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        tree = supervisor.process_tree(pid)
        if len(tree) == 3:
            return tree[-1]
        time.sleep(0.05)
    raise AssertionError(f"no worker: {tree}")


def test_a_crash_keeps_the_service_down_less_than_a_second():
    with SimulatedRobot() as robot:
        serve = _serve(robot.url)
        watcher = qi.Session()
        try:
            assert "registered" in serve.stdout.readline()
            watcher.connect(robot.url)
            registered = []
            watcher.serviceRegistered.connect(
                lambda _sid, name: registered.append(time.monotonic()) if name == "NaoArmIK" else None)
            worker = _serving_worker(serve.pid)
            t0 = time.monotonic()
            os.kill(worker, signal.SIGSEGV)
            assert _answers(robot.url, 20)
            answered = time.monotonic() - t0
            end = time.monotonic() + 5.0
            while not registered and time.monotonic() < end:  # the watcher's signal may come after the answer
                time.sleep(0.01)
            down = registered[0] - t0
            assert worker not in supervisor.process_tree(serve.pid)
            report.lines.append(f"nao-ik serve, its worker killed (SIGSEGV): NaoArmIK registered again {down:.3f} s "
                                f"later, answered a new caller {answered:.3f} s later")  # fmt: skip
            assert down < DOWNTIME, down
        finally:
            watcher.close()
            serve.send_signal(signal.SIGTERM)
            code = serve.wait(timeout=20)
            err = serve.stderr.read()
        assert code == 0, err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_the_whole_process_group_stops_serve_cleanly(signum):
    """Ctrl-C (SIGINT) and systemd's stop (SIGTERM) reach every process of the group at once: the forker outlives
    the worker and reports its end, and serve stops with status 0, nothing killed."""
    with SimulatedRobot() as robot:
        serve = subprocess.Popen([sys.executable, "-m", "nao_ik.cli", "serve", "--qi-url", robot.url],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 start_new_session=True)  # fmt: skip
        assert "registered" in serve.stdout.readline()
        os.killpg(serve.pid, signum)
        code = serve.wait(timeout=30)
        err = serve.stderr.read()
        assert code == 0, err
        assert "killed" not in err and "died" not in err, err
        assert _gone(serve.pid), "a process of serve outlived it"


def _gone(pgid, timeout=10.0):
    """Whether no process of the group ``pgid`` is left (within ``timeout`` s)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("forked", [False, True], ids=["forker", "worker"])
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_while_the_service_is_still_starting_stops_it_as_asked(tmp_path, signum, forked):
    """A signal while the forker imports, or while a worker has not yet set its handlers (Python's default ones end
    it; on a busy machine): the supervisor stops with status 0 (it was asked to stop, and did), as it does with a
    worker that handles the signal."""
    started = tmp_path / "started"
    code = f"import time; open({str(started)!r}, 'w').close(); time.sleep(30)"
    if forked:
        proc = _supervise(code)
    else:  # a forker that never forks: as one still importing
        command = [sys.executable, "-c", code]
        run = f"import sys; from nao_ik.service import supervisor; sys.exit(supervisor.supervise({command!r}))"
        proc = subprocess.Popen([sys.executable, "-c", run], stderr=subprocess.PIPE, text=True)
    _wait_for(started)
    proc.send_signal(signum)
    assert proc.wait(timeout=20) == 0, proc.stderr.read()
