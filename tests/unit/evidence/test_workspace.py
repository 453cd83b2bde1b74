"""``nao-ik workspace`` writes its picture and data, and its volume is the data's."""

import numpy as np

from nao_ik.cli import main
from nao_ik.model.arm import arm_model
from nao_ik.recipes.reachability import is_reachable


def test_workspace_writes_picture_and_data(tmp_path, capsys):
    assert main(["workspace", "--arm", "RArm", "--out", str(tmp_path), "--step", "0.05"]) == 0
    table = capsys.readouterr().out
    for ext in ("npz", "csv", "png"):
        assert (tmp_path / f"workspace-RArm.{ext}").stat().st_size > 0
    assert (tmp_path / "workspace-RArm.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = np.load(tmp_path / "workspace-RArm.npz")
    ok, dex, pts = data["reachable"], data["dexterity"], data["points"]
    assert 0 < ok.sum() < len(ok) and np.all(dex[~ok] == 0.0)
    litres = ok.sum() * 0.05**3 * 1e3
    assert float(data["litres"]) == litres and f"| {litres:.3f} |" in table
    rows = np.loadtxt(tmp_path / "workspace-RArm.csv", delimiter=",", skiprows=1)
    assert rows.shape == (ok.sum(), 4)
    model = arm_model("RArm")
    for i in np.flatnonzero(ok)[:: max(1, ok.sum() // 10)]:  # the data is the library's answer
        assert is_reachable(pts[i], model).dexterity == dex[i]


def test_workspace_body_option_says_when_the_body_model_is_missing(tmp_path, capsys):
    try:
        import nao_ik.geometry.collision  # noqa: F401
    except ImportError:
        assert main(["workspace", "--out", str(tmp_path), "--step", "0.1", "--body"]) == 2
        assert "body model" in capsys.readouterr().err
    else:  # integrated: both volumes, the body's no larger
        assert main(["workspace", "--out", str(tmp_path), "--step", "0.05", "--body"]) == 0
        a, b = (float(np.load(tmp_path / f"workspace-LArm{s}.npz")["litres"]) for s in ("", "-body"))
        assert 0 < b <= a
