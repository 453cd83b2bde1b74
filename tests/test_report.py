"""nao-ik report --quick: it runs and writes its files with the expected tables (timings are not checked)."""

import re

from nao_ik import report


def test_quick_report_writes_its_tables_and_figures(tmp_path, capsys):
    assert report.main(["--quick", "--out", str(tmp_path)]) == 0
    assert f"report: {tmp_path / 'report.md'}" in capsys.readouterr().out
    text = (tmp_path / "report.md").read_text()
    for heading in ("## Headline", "## Table 1 of the paper, reproduced", "## Figure 3 of the paper, reproduced",
                    "## Table 2 of the paper", "## Where each method fails", "## Continuity along paths"):  # fmt: skip
        assert heading in text, heading
    for png in ("figure3.png", "workspace.png"):
        data = (tmp_path / png).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
    # Every method has its rows, and the paper's published row stands beside ours.
    for method in report.OURS + [report.ALMOTION]:
        assert len(re.findall(rf"^\| {re.escape(method)} \|", text, re.M)) >= 3, method
    assert "| fabrik | 500 | 100.00 % |" in text
    assert "| 0.78 | 7.26 ± 7.38 |" in text and "| 27.65 | 141.8 ± 176.4 |" in text
    # nao-ik's methods never answer outside the limits; the ALMotion-style baseline does.
    table = text.split("## Table 1")[1].split("## Figure 3")[0]
    rows = [line.split("|") for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    oob = {r[1].strip(): int(r[9]) for r in rows if r[1].strip() != "method"}
    assert all(oob[m] == 0 for m in report.OURS) and oob[report.ALMOTION] > 0
    assert "machine:" in text and "cores" in text
