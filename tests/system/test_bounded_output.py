"""Output stays bounded: refusals are logged at most once a second, and loadtest keeps reading serve's stdout."""

import subprocess
import sys
import threading
import time

from nao_ik.evidence import loadtest
from sim_stub.robot import SimulatedRobot
from tests.qi_fixtures import qi

CHATTY = "print('registered', flush=True); import sys; [sys.stdout.write('x' * 1023 + '\\n') for _ in range(1024)]"


def test_loadtest_keeps_reading_the_output_of_what_it_started():
    proc = loadtest.start(["-c", CHATTY], "registered", command=(sys.executable,))  # 1 MB after "ready"
    try:
        assert proc.wait(timeout=20) == 0  # an unread pipe would block it at 64 kB
    finally:
        proc.kill()


def test_repeated_refusals_are_rate_limited_in_the_log():
    with SimulatedRobot() as robot:
        serve = subprocess.Popen([sys.executable, "-m", "nao_ik.cli", "serve", "--qi-url", robot.url],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
        out = []
        reader = threading.Thread(target=lambda: out.extend(serve.stdout), daemon=True)
        try:
            assert "registered" in serve.stdout.readline()
            reader.start()
            user = qi.Session()
            user.connect(robot.url)
            ik = user.service("NaoArmIK")
            t0 = time.monotonic()
            for _ in range(300):
                try:
                    ik.reachTo(0.15, 0.12, 0.08, "no-such-method")
                except RuntimeError:
                    pass
            seconds = time.monotonic() - t0
            user.close()
        finally:
            serve.terminate()
            serve.wait(timeout=20)
            if reader.is_alive():
                reader.join(timeout=5)
    lines = [line for line in out if "refused" in line]
    assert 1 <= len(lines) <= seconds + 2, (len(lines), seconds)  # about one a second, not 300
    assert "similar line" in "".join(out) or len(lines) == 1
