import os

import pytest
from hypothesis import HealthCheck, settings

# make test runs 30 examples per property wherever it runs (CI included: twice as many there doubled the
# property tests' share of the suite's five minutes, `pytest --durations`); make soak runs 2000.
settings.register_profile("test", max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("soak", max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile("soak" if os.environ.get("NAO_IK_SOAK") else "test")

pytest_plugins = ["tests.qi_fixtures"]


#: The files that take longest (wall time under make test), longest first: with ``--no-loadscope-reorder`` xdist hands
#: whole files to free workers in collection order, so these start first and none runs alone at the end.
LONGEST_FIRST = (
    "tests/system/test_robot_runtime.py", "tests/unit/geometry/test_motion_body.py",
    "tests/unit/evidence/report/test_report.py", "tests/system/test_service.py", "tests/system/test_another_user.py",
    "tests/unit/api/test_same_answers.py", "tests/system/test_robot_truth.py", "tests/system/test_reliability.py",
    "tests/unit/test_cli.py", "tests/system/test_service_arms.py", "tests/system/test_demo.py",
    "tests/unit/evidence/test_continuity.py", "tests/system/test_follow.py", "tests/system/test_view.py",
)  # fmt: skip


def pytest_collection_modifyitems(config, items):
    """The longest files first (:data:`LONGEST_FIRST`), the others in their order."""
    rank = {path: k for k, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


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
