"""The package as users install it: a wheel built from the tree, installed into a fresh virtual environment
(not editable, not this checkout), runs the simulated robot, the service and a reach."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

from nao_ik.evidence.loadtest import free_port, start

ROOT = Path(__file__).resolve().parents[2]
#: What a checkout may hold beside its sources.
JUNK = (".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", "demo_out")

pytest.importorskip("qi", reason="libqi (the 'qi' package) is needed to run the installed service")
pytest.importorskip("build", reason="the 'build' package (extra 'dev') builds the wheel")


def _packages(root: Path) -> set[str]:
    """Every Python package in the tree under nao_ik and sim_stub (folders with an __init__.py)."""
    return {
        str(p.parent.relative_to(root)).replace(os.sep, ".")
        for top in ("nao_ik", "sim_stub")
        for p in (root / top).rglob("__init__.py")
    }


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # From a copy of the sources: a build/ folder left in the checkout would lend the wheel its stale files.
    src = tmp_path_factory.mktemp("src") / "nao-ik"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(*JUNK))
    # Without isolation: the build backend the project asks for (setuptools>=77) must be in this venv.
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(src)],
        check=True,
        capture_output=True,
        text=True,
    )
    (path,) = out.glob("nao_ik-*.whl")
    return path


def test_the_wheel_carries_every_package_and_the_data(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {n.rsplit("/", 1)[0].replace("/", ".") for n in names if n.endswith("/__init__.py")}
    assert _packages(ROOT) <= shipped, sorted(_packages(ROOT) - shipped)
    data = {Path(n).name for n in names if n.startswith("nao_ik/data/")}
    assert {p.name for p in (ROOT / "nao_ik" / "data").iterdir() if p.suffix in (".npz", ".json", ".urdf")} <= data
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert not any(n.startswith("tests/") for n in names)


def test_the_installed_wheel_serves_a_reach(wheel, tmp_path, monkeypatch):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    subprocess.run(
        [str(bin_dir / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(wheel)],
        check=True,
        cwd=tmp_path,
    )
    nao_ik = [str(bin_dir / "nao-ik")]
    # Away from the checkout, with nothing of it on the path: only the installed package can answer.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    monkeypatch.chdir(tmp_path)
    url = f"tcp://127.0.0.1:{free_port()}"
    sim = start(["sim", "--listen", url], "listening", nao_ik)
    try:
        serve = start(["serve", "--qi-url", url], "registered", nao_ik)
        try:
            check = subprocess.run([*nao_ik, "check", "--qi-url", url], capture_output=True, text=True, env=env)
            assert check.returncode == 0 and "NaoArmIK is up" in check.stdout, check
            reach = subprocess.run(
                [*nao_ik, "reach", "0.15", "0.10", "0.05", "--wake-up", "--qi-url", url],
                capture_output=True,
                text=True,
                env=env,
                timeout=60,
            )
            assert reach.returncode == 0, reach.stderr
            answer = json.loads(reach.stdout)
            assert answer["reached"] and answer["moved"] and answer["method"] == "analytic"
            where = subprocess.run(
                [str(bin_dir / "python"), "-c", "import nao_ik; print(nao_ik.__file__)"],
                capture_output=True,
                text=True,
                env=env,
            )
            assert str(env_dir) in where.stdout and str(ROOT) not in where.stdout
        finally:
            serve.terminate()
            serve.wait(timeout=10)
    finally:
        sim.terminate()
        sim.wait(timeout=10)
