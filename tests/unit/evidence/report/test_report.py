"""nao-ik report --quick: it runs and writes its files with the expected tables (timings are not checked);
the report's statistics and its section 5.3 check on cases with known answers."""

import importlib.util
import math
import re

import numpy as np
import pytest

from nao_ik.evidence.alternatives import ALMOTION, IKPY
from nao_ik.evidence.report import alone as report_alone
from nao_ik.evidence.report import build as report
from nao_ik.evidence.report import fig3 as report_fig3
from nao_ik.evidence.report import peers as report_peers
from nao_ik.evidence.report import sec53 as report_sec53
from nao_ik.evidence.report import stats as report_stats
from nao_ik.evidence.report import tables
from nao_ik.evidence.report.size import QUICK


def _rows(section: str) -> list[list[str]]:
    """The body rows of the markdown tables in a section, as lists of stripped cells."""
    return [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| ") and "---" not in line
    ]


def _section(text: str, start: str, end: str) -> str:
    return text.split(start)[1].split(end)[0]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    assert report.main(["--quick", "--out", str(out)]) == 0
    return out, (out / "report.md").read_text()


def test_quick_report_writes_its_sections_and_figures(quick):
    out, text = quick
    headings = [
        "## Headline",
        "## Table 1 of the paper: each algorithm alone",
        "## The paper's claim tested",
        "## Table 1 with every nao-ik method",
        "## Figure 3 of the paper, down to tolerance 0",
        "## Section 5.3 of the paper, checked",
        "## Table 2 of the paper",
        "## Peers: TRAC-IK, pinocchio and ikpy",
        "## Oyama & Tachi at NAO's scale",
        "## Kim & Tarokh: the on-line time of the lookup alone",
        "## Kim & Tarokh: the whole posture (eq. 7) and the network cells (eqs. 8-12)",
        "## What could not be reproduced",
        "## Where each method fails",
        "## Continuity along paths",
        "## The body",
        "### What the check costs",
        "### The body model",
        "#### The body model against the real robot's measured shape",
        "## The motion profiles",
        "### Moves entering the body under each profile, before and after",
        "## Paths: greedy per step against the whole-path plan",
    ]
    found = [line for line in text.splitlines() if line.startswith("## ")]
    expected = [h for h in headings if h.startswith("## ")]
    assert len(found) == len(expected) and all(f.startswith(h) for f, h in zip(found, expected)), found  # in order
    for heading in headings:
        assert heading in text, heading
    for png in ("figure3.png", "workspace.png", "planar.png"):
        data = (out / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    assert "machine:" in text and "cores" in text
    assert "{" not in text.split("## Table 2")[0] and "{" not in text.split("## Kim & Tarokh: the on-line")[1]
    assert "`nao-ik report --quick`" in text.splitlines()[2]  # the command that made every figure


def test_headline_has_every_production_method_analytic_first(quick):
    from nao_ik import METHODS
    from nao_ik.solvers import ALIASES

    _, text = quick
    rows = [r for r in _rows(_section(text, "## Headline", "## Table 1 of the paper")) if r[0] != "method"]
    names = [r[0] for r in rows]
    production = [m for m in METHODS if m not in ALIASES]
    assert names[0] == "analytic" and set(production) <= set(names)
    assert all(r[6].replace(",", "").isdigit() for r in rows if r[0] in production)  # batch targets/s, with the body


def test_ikpy_is_timed_in_the_methods_turns_on_their_targets():
    got = []

    class _Ikpy:
        def solve(self, target):
            got.append(np.array(target))

    targets = np.array([[0.10, 0.12, 0.08], [0.12, 0.14, 0.05], [0.15, 0.10, 0.02]])
    times = tables.timed_turns(tables.method_calls(["dls"], 1e-4, _Ikpy()), targets, QUICK)
    assert set(times) == {"dls", ALMOTION, IKPY}  # the speed-up column divides medians of one set of turns
    assert np.array_equal(np.array(got), np.tile(targets, (QUICK.repeats, 1)))


def test_body_profiles_and_paths_sections_have_their_tables(quick):
    from nao_ik.evidence.report.body import REAL_SHAPE

    _, text = quick
    body = text.split("\n## The body\n")[1].split("## The motion profiles")[0]
    assert "| arm | torso | head | hips | thighs | total |" in body and "| LArm | ALMotion-style pinv |" in body
    assert len([r for r in _rows(body.split("#### The body model against")[1]) if r[0] != "part"]) == len(REAL_SHAPE)
    profiles = _section(text, "## The motion profiles", "## Paths")
    assert sum(r[0] in ("linear", "smooth", "synchronised") for r in _rows(profiles)) == 3 * 3 * 2
    paths = text.split("## Paths: greedy per step")[1]
    rules = [r[2] for r in _rows(paths) if r[0] != "paths"]
    assert rules.count("planned") == 2 and "greedy analytic" in rules
    continuity = _section(text, "## Continuity along paths", "\n## The body\n")
    assert "use `dls` or `fabrik`" not in continuity and "nao_ik.plan_path" in continuity


def test_table1_has_each_algorithm_alone_beside_the_papers_row(quick):
    _, text = quick
    part = _section(text, "## Table 1 of the paper: each algorithm alone", "## The paper's claim")
    rows = [r for r in _rows(part) if r[0] != "method"]
    assert len(rows) == 2 * 2 * len(report_alone.METHODS)  # two tolerances, two variants
    assert "success (1 mm)" in part and "success (0.1 mm)" in part
    alone = {r[0]: r for r in rows if r[1] == "**alone**"}
    prod = {r[0]: r for r in rows if r[1].startswith("nao-ik production")}
    assert set(alone) == set(prod) == set(report_alone.METHODS)
    # The paper's figures stand beside the alone rows only.
    assert alone["fabrik"][-2:] == ["0.78", "7.26 ± 7.38"] and alone["jacobian-transpose"][-1] == "141.8 ± 176.4"
    assert all(r[-1] == "" for r in prod.values()) and prod["fabrik"][1] == "nao-ik production (restarts, Aitken)"
    # Production never does worse than the algorithm alone (it only adds restarts).
    for m in report_alone.METHODS:
        assert float(prod[m][2].rstrip(" %")) >= float(alone[m][2].rstrip(" %"))


def test_significance_table_compares_fabrik_with_every_other_method(quick):
    _, text = quick
    part = _section(text, "## The paper's claim tested", "## Table 1 with every")
    rows = [r for r in _rows(part) if r[0] != "FABRIK against"]
    assert len(rows) == 2 * 3 * (len(report_alone.METHODS) - 1)
    for r in rows:
        assert r[1] in ("time per solve (ms)", "iterations", "success")
        assert r[7] in ("FABRIK better", "FABRIK worse", "no clear difference")
        p = r[6]
        assert p == "< 1e-300" or 0.0 <= float(p) <= 1.0
        assert re.match(r"[+-]\d+\.\d+ \[[+-]\d+\.\d+, [+-]\d+\.\d+\]", r[4]), r[4]
    assert part.count("The paper's claim that FABRIK beats") == 2


def test_production_table_and_figure3(quick):
    _, text = quick
    table = _section(text, "## Table 1 with every nao-ik method", "## Figure 3")
    rows = [r for r in _rows(table) if r[0] != "method"]
    for method in tables.OURS + [ALMOTION]:
        assert sum(r[0] == method for r in rows) == 2, method
    assert f"| fabrik | {QUICK.targets} | 100.00 % |" in table
    # nao-ik's methods never answer outside the limits; the ALMotion-style baseline does.
    oob = {r[0]: int(r[8]) for r in rows}
    assert all(oob[m] == 0 for m in tables.OURS) and oob[ALMOTION] > 0
    fig = _section(text, "## Figure 3 of the paper", "## Section 5.3")
    assert "| 0 (floor) |" in fig
    rows = _rows(fig.split("Mean iterations")[0])
    assert len([r for r in rows if r[0] != "method"]) == 2 * len(report_alone.METHODS)
    assert all(re.search(r"err \d(\.\d)?e[+-]\d+ m", r[-1]) for r in rows if r[0] != "method")


def test_peers_are_measured_or_reported_missing(quick):
    _, text = quick
    part = _section(text, "## Peers", "## Oyama & Tachi")
    names = {r[0]: r for r in _rows(part)}
    ours = ["nao-ik analytic", "nao-ik dls", "nao-ik solve_pose analytic", "nao-ik solve_pose dls"]
    assert set(ours) <= set(names)
    assert names["nao-ik analytic"][1] == "position" and names["nao-ik solve_pose analytic"][1] == "6-D pose"
    for module, name, problem in (("pinocchio", "pinocchio DLS", "position"), ("pytracik", "TRAC-IK", "6-D pose"),
                                  ("ikpy", "ikpy", "position")):  # fmt: skip
        if importlib.util.find_spec(module):
            assert name in names and names[name][1] == problem
            assert names[name][2] == str(min(QUICK.peers, QUICK.ikpy) if name == "ikpy" else QUICK.peers)
        else:
            assert name in part.split("Missing here")[1]
    assert names["nao-ik analytic"][-1] == names["nao-ik solve_pose analytic"][-1] == "1.00 x"
    assert names["nao-ik solve_pose analytic"][3] == "100.00 %"  # consistent poses: the closed form reaches them all
    assert "cannot take an orientation" not in part and "NAOKinematics" in part


def test_other_sections_have_their_figures(quick):
    _, text = quick
    sec = _section(text, "## Section 5.3", "## Table 2")
    assert "| eq. 16 as printed gives the wrong elbow point | 100.0 % of configurations |" in sec
    ot = _section(text, "## Oyama & Tachi", "## Kim & Tarokh")
    assert "% of reach" in ot and "12.5 mm" in ot and "| untrained (0 trials) |" in ot
    planar = _rows(ot.split("### The paper's planar 2-DOF arm")[1])
    assert planar[1][0] == "0" and planar[-2][0] == f"{QUICK.planar:,}" and planar[-1][0] == "the paper"
    track = _rows(_section(ot, "### Learning during tracking", "### Expert selection"))
    assert track[1][0] == "0" and track[-1][0] == f"{QUICK.ot_track:,}" and all(len(r) == 7 for r in track)
    fm = _rows(_section(ot, "### Expert selection with a learned forward model", "### The paper's planar"))
    assert [r[0] for r in fm[1:]] == ["exact forward kinematics", "learned forward model"]
    kt = _section(text, "## Kim & Tarokh: the on-line", "## Kim & Tarokh: the whole")
    assert "| the lookup alone, one query in Python |" in kt and "| the paper (Table 8" in kt
    pose = [r for r in _rows(_section(text, "## Kim & Tarokh: the whole", "## What could not")) if "model" not in r[0]]
    names = ["poly position", "poly orientation", "net position", "net orientation"]
    assert [r[0] for r in pose[:4]] == names and all(len(r) == 9 for r in pose[:4])
    assert [r[0] for r in pose[4:]] == ["poly", "net"] and all(len(r) == 4 for r in pose[4:])


# ---------------------------------------------------------------- statistics


def test_wilcoxon_matches_a_hand_computed_case():
    # d = 1..5, all positive: W+ = 15, mean 7.5, variance 5*6*11/24 = 13.75.
    w = report_stats.wilcoxon(np.arange(1.0, 6.0), np.zeros(5))
    assert w.n == 5 and w.w_plus == 15.0
    assert w.z == pytest.approx(7.5 / math.sqrt(13.75)) and w.p == pytest.approx(0.04311, abs=1e-4)
    # Zero differences are dropped; identical samples give p = 1.
    assert report_stats.wilcoxon(np.ones(4), np.ones(4)).p == 1.0
    # Ties share their mean rank: |d| = 1, 1, 2 -> ranks 1.5, 1.5, 3.
    assert report_stats.wilcoxon(np.array([1.0, -1.0, 2.0]), np.zeros(3)).w_plus == 4.5


def test_mcnemar_is_the_exact_binomial_on_discordant_pairs():
    a = np.array([False] * 10 + [True] * 5)
    b = np.array([True] * 10 + [True] * 5)
    m = report_stats.mcnemar(a, b)
    assert (m.only_a, m.only_b) == (0, 10) and m.p == pytest.approx(2 * 0.5**10)
    assert report_stats.mcnemar(a, a).p == 1.0
    big = report_stats.mcnemar(np.r_[np.ones(3000, bool), np.zeros(3000, bool)], np.zeros(6000, bool))
    assert 0.0 <= big.p < 1e-300 or big.p == 0.0


def test_bootstrap_interval_covers_a_shift():
    rng = np.random.default_rng(0)
    a = rng.exponential(1.0, 500)
    lo, hi = report_stats.bootstrap_ci(lambda x, y: float(np.median(x - y)), (a + 0.3, a), reps=200)
    assert lo == pytest.approx(0.3) and hi == pytest.approx(0.3)
    lo, hi = report_stats.bootstrap_ci(lambda x: float(np.mean(x)), (a,), reps=300)
    assert lo < a.mean() < hi


# ---------------------------------------------------------- section 5.3, Figure 3


def test_section53_equations_as_printed_fail_and_atan2_recovers():
    c = report_sec53.check(2000, seed=3)
    assert c.eq16_wrong == 1.0
    assert c.printed_median > 1.0 and c.printed_within == 0.0
    assert c.exact_worst < 1e-9
    assert c.past90 > 0.2 and c.corrected_within_past90 < 0.1 and c.corrected_within > 0.3


def test_figure3_explanation_reads_its_own_measurements():
    pt = report_fig3.Point
    data = {(m, v): {10: pt(1.0, 1.0, 3.0, 1e-3), 0.001: pt(4.0, 1.0, 9.0, 1e-7), 0: pt(5.0, 0.0, 12.0, 2e-9)}
            for m in report_alone.METHODS for v in ("alone", "production")}  # fmt: skip
    text = report_fig3.explain(data)
    assert "1.000 ms at 10 mm and 4.000 ms at 0.001 mm (4.0 x)" in text and "2e-09 m for FABRIK" in text


def test_a_peer_that_does_not_import_is_reported_missing(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pinocchio", None)  # import pinocchio now raises ImportError
    monkeypatch.setitem(sys.modules, "pytracik", None)
    monkeypatch.setitem(sys.modules, "ikpy", None)
    monkeypatch.setitem(sys.modules, "ikpy.chain", None)
    from nao_ik.kinematics.chain import forward_batch
    from nao_ik.model.arm import arm_model

    configs = np.array([arm_model("LArm").neutral, [0.3, 0.4, -1.0, -0.8, 0.0]])
    rows, missing = report_peers.measure(forward_batch(arm_model("LArm"), configs), configs, 1e-4, rounds=1)
    assert missing == ["pinocchio DLS", "ikpy", "TRAC-IK"] and [r.name for r in rows] == [
        "nao-ik analytic", "nao-ik dls", "nao-ik solve_pose analytic", "nao-ik solve_pose dls"]  # fmt: skip


def test_the_alone_variant_is_the_loop_alone():
    """Alone means none of the driver's rules: no exact-solution seed after a failed start, no closest pose.

    Through the whole driver call FABRIK alone reached 100 % (the continuity rule seeded its failures with
    the exact nearest solution); the loop alone misses some targets from the neutral posture."""
    from nao_ik.evidence.protocol import sample_targets

    m = report_alone.measure(sample_targets("LArm", 150, 0), 5, 1, 1e-4, "LArm", ["fabrik"])
    alone, production = m[("fabrik", "alone")], m[("fabrik", "production")]
    assert 0.5 < alone.reached.mean() < 1.0 and production.reached.all()
    assert (alone.iterations[~alone.reached] > 0).all()  # the failures ran the loop, to its limit or a stall
