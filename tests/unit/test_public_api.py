"""The flat public API of ``import nao_ik``: every name it lists is there, ``nao_ik.frames`` included."""

import pytest

import nao_ik


def test_from_nao_ik_import_frames_as_docs_library_md_writes_it():
    from nao_ik import frames
    from nao_ik.kinematics import frames as kinematics_frames

    assert frames is kinematics_frames
    assert (frames.FRAME_TORSO, frames.FRAME_WORLD, frames.FRAME_ROBOT) == (0, 1, 2)
    torso = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.33], [0.0, 0.0, 0.0, 1.0]]
    assert frames.point_to_torso([0.15, 0.1, 0.38], frames.check_transform(sum(torso, []))) == pytest.approx(
        (0.15, 0.1, 0.05)
    )


def test_every_listed_name_is_there():
    missing = [name for name in nao_ik.__all__ if not hasattr(nao_ik, name)]
    assert missing == []
