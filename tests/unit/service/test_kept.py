"""nao_ik.service.kept: the speed a caller set outlives the service's restarts on the same robot, and no more."""

import os

from nao_ik.service.kept import Kept, folder


def test_a_kept_speed_is_the_next_starts_default(tmp_path):
    Kept("tcp://nao.local:9559 id", "NaoArmIK", str(tmp_path)).set_speed(0.2, 0.05)
    assert Kept("tcp://nao.local:9559 id", "NaoArmIK", str(tmp_path)).speed(0.2) == 0.05
    # Another robot, another service name, another configured speed: their own.
    assert Kept("tcp://other:9559 id", "NaoArmIK", str(tmp_path)).speed(0.2) == 0.2
    assert Kept("tcp://nao.local:9559 id", "NaoArmIK2", str(tmp_path)).speed(0.2) == 0.2
    assert Kept("tcp://nao.local:9559 id", "NaoArmIK", str(tmp_path)).speed(0.4) == 0.4


def test_a_damaged_or_unwritable_file_leaves_the_configured_speed(tmp_path):
    kept = Kept("robot", "NaoArmIK", str(tmp_path))
    for text in ("not json", '{"configured": 0.2, "speed": 7}', '{"configured": "x"}', "[]"):
        with open(kept.path, "w") as f:
            f.write(text)
        assert kept.speed(0.2) == 0.2
    (tmp_path / "file").write_text("in the folder's way")
    blocked = Kept("robot", "NaoArmIK", str(tmp_path / "file" / "nao-ik"))  # no folder can be made there, even by root
    blocked.set_speed(0.2, 0.05)  # nothing raised: the speed holds for this run only
    assert blocked.speed(0.2) == 0.2


def test_the_folder_is_the_runtime_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert folder() == str(tmp_path / "nao-ik")
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert folder().endswith(f"nao-ik-{os.getuid()}")
