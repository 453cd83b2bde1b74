import os

import pytest
from hypothesis import HealthCheck, settings

# make test runs 30 examples per property wherever it runs (CI included: twice as many there doubled the
# property tests' share of the suite's five minutes, `pytest --durations`); make soak runs 2000.
settings.register_profile("test", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("soak", max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile("soak" if os.environ.get("NAO_IK_SOAK") else "test")

pytest_plugins = ["tests.qi_fixtures"]


@pytest.fixture(autouse=True)
def _kept_apart(tmp_path, monkeypatch):
    """Each test's services keep their state (the speed a caller set, nao_ik.service.kept) in a folder of its own:
    a simulated robot of another test on the same port is another robot."""
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))


def pytest_sessionfinish(session):
    """In a pytest-xdist worker: hand the figures this worker collected to the controller."""
    from tests import report

    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        out["nao_ik_report"] = {"cases": dict(report.cases), "worst": dict(report.worst), "lines": report.lines}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """In the pytest-xdist controller: gather a worker's figures for the summary."""
    from tests import report

    got = getattr(node, "workeroutput", {}).get("nao_ik_report")
    if got:
        report.cases.update(got["cases"])
        for what, (seconds, case) in got["worst"].items():
            report.slowest(what, seconds, case)
        report.lines.extend(got["lines"])


def pytest_terminal_summary(terminalreporter):
    from tests import report

    if not (report.cases or report.worst or report.lines):
        return
    tr = terminalreporter
    tr.section("reliability figures")
    for what, n in sorted(report.cases.items()):
        tr.write_line(f"cases tried: {what}: {n}")
    for what, (seconds, case) in sorted(report.worst.items()):
        tr.write_line(f"worst time: {what}: {seconds * 1e3:.1f} ms ({case})")
    for line in report.lines:
        tr.write_line(line)
