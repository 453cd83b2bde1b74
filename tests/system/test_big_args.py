"""A huge argument costs `nao-ik serve` neither memory nor time: libqi drops it by its header (QI_MAX_MESSAGE_PAYLOAD).

200,000 points here (about ten times the 1 MB cap, 100 times the 2000-point maximum);
1,000,000 under ``make soak`` (the caller's own libqi then needs about 20 s
to build the message; the service's side does not change).
"""

import os
import subprocess
import sys
import time

from sim_stub.robot import SimulatedRobot
from tests import report
from tests.qi_fixtures import qi
from tests.serving import cpu_s, rss_mb

POINTS = 1_000_000 if os.environ.get("NAO_IK_SOAK") else 200_000


def test_a_huge_path_is_dropped_before_it_is_converted():
    with SimulatedRobot() as robot:
        robot.motion.wakeUp()
        serve = subprocess.Popen([sys.executable, "-m", "nao_ik.cli", "serve", "--qi-url", robot.url],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
        try:
            assert "registered" in serve.stdout.readline()
            user = qi.Session()
            user.connect(robot.url)
            ik = user.service("NaoArmIK")
            ik.computeAngles("LArm", 0.15, 0.12, 0.08, "dls")  # warm: models loaded, threads started
            path = [[0.15, 0.12, 0.08] for _ in range(POINTS)]
            rss0, cpu0 = rss_mb(serve.pid), cpu_s(serve.pid)
            t0 = time.monotonic()
            try:
                ik.trackPath("LArm", path, "dls")
                raise AssertionError("a path of that size was taken")
            except RuntimeError as e:
                refusal = str(e)
            wall = time.monotonic() - t0
            grew, spent = rss_mb(serve.pid) - rss0, cpu_s(serve.pid) - cpu0
            other = qi.Session()
            other.connect(robot.url)
            t1 = time.perf_counter()
            assert "dls" in other.service("NaoArmIK").getMethods()  # the service is up for everyone else
            answered = time.perf_counter() - t1
            other.close()
            user.close()
        finally:
            serve.terminate()
            out, err = serve.communicate(timeout=20)
        report.lines.append(
            f"trackPath of {POINTS:,} points: serve RSS +{grew:.1f} MB, serve CPU {spent:.2f} s, "
            f"caller's wall time {wall:.1f} s (building the message), next caller answered in {answered * 1e3:.1f} ms"
        )
        assert "Disconnected" in refusal or "disconnected" in refusal, refusal
        assert grew < 50 and spent < 1.0, (grew, spent)
        assert "maximum configured payload size" in out + err, out + err  # libqi's log says why
        assert robot.motion.getRecordedCommands()[-1]["method"] == "wakeUp"  # nothing was sent
