#!/usr/bin/env bash
# deploy.sh: put nao-ik on a NAO.
#
# 1. builds the Choregraphe package: the boxes of behaviors/ and, with
#    --on-robot, the robot runtime (nao_ik/robot, Python 2.7/3 without numpy),
#    its manifest declaring the NaoArmIK service (nao_ik/robot_pkg.py;
#    docs/robot-runtime.md),
# 2. copies it to the robot with scp and installs it with PackageManager.install
#    over qi (what `qipkg deploy-package` does), or unpacks it into the
#    PackageManager apps folder when the robot has no PackageManager,
# 3. with --on-robot: NAOqi's ServiceManager starts the runtime on the robot
#    (an autorun service, NAOqi >= 2.3); otherwise it starts the full NaoArmIK
#    service (every method, Python 3 + numpy) for that robot on this computer:
#    a systemd user unit where systemd runs, else a background process with a
#    log and a pid file,
# 4. checks that NaoArmIK is listed on the robot and answers getMethods.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: ./deploy.sh --robot HOST|USER@HOST [options]
       ./deploy.sh --stop [--state-dir DIR]

Deploy nao-ik to a NAO: install the Choregraphe package (the boxes and the
robot runtime), start the NaoArmIK service (on the robot with --on-robot, else
on this computer), check that it answers.

options:
  --robot HOST|USER@HOST  the robot (user defaults to nao), e.g. 192.168.1.12 or nao@nao.local
  --ssh-port N            ssh port (default 22)
  --qi-port N             NAOqi port (default 9559)
  --listen URL            where the service listens for the robot (default tcp://0.0.0.0:0)
  --remote-dir DIR        folder on the robot for the .pkg (default: the user's home there)
  --state-dir DIR         where the service's log and pid file go (default ~/.cache/nao-ik)
  --ssh-option OPT        extra option for ssh and scp, repeatable (e.g. --ssh-option -i --ssh-option key)
  --on-robot              serve NaoArmIK on the robot itself (the package's service, NAOqi >= 2.3;
                          the analytic method only): no computer needed afterwards
  --no-service            install the package only
  --dry-run               print every command instead of running it
  --stop                  stop the service that a previous deploy started
  -h, --help              this help

example, a NAO6 on the local network:
  ./deploy.sh --robot nao@192.168.1.12
EOF
}

die() { echo "deploy.sh: $*" >&2; exit 1; }

ROBOT=""
SSH_PORT=22
QI_PORT=9559
LISTEN="tcp://0.0.0.0:0"
REMOTE_DIR=""
STATE_DIR="${HOME}/.cache/nao-ik"
SSH_OPTS=()
SERVICE=1
ON_ROBOT=0
DRY=0
STOP=0
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

while [ $# -gt 0 ]; do
  case "$1" in
    --robot) ROBOT="${2:?--robot needs a value}"; shift 2 ;;
    --ssh-port) SSH_PORT="${2:?--ssh-port needs a value}"; shift 2 ;;
    --qi-port) QI_PORT="${2:?--qi-port needs a value}"; shift 2 ;;
    --listen) LISTEN="${2:?--listen needs a value}"; shift 2 ;;
    --remote-dir) REMOTE_DIR="${2:?--remote-dir needs a value}"; shift 2 ;;
    --state-dir) STATE_DIR="${2:?--state-dir needs a value}"; shift 2 ;;
    --ssh-option) SSH_OPTS+=("${2:?--ssh-option needs a value}"); shift 2 ;;
    --on-robot) ON_ROBOT=1; shift ;;
    --no-service) SERVICE=0; shift ;;
    --dry-run) DRY=1; shift ;;
    --stop) STOP=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
  esac
done

# One word for the remote shell: single-quoted, embedded quotes escaped.
remote_word() {
  local q="'\\''"
  printf "'%s'" "${1//\'/$q}"
}

# Print a command (dry run) or run it.
run() {
  if [ "$DRY" = 1 ]; then
    printf '+'; printf ' %q' "$@"; printf '\n'
  else
    "$@"
  fi
}

PID_FILE="$STATE_DIR/serve.pid"
LOG_FILE="$STATE_DIR/serve.log"
UNIT="nao-ik-serve.service"

have_systemd_user() {
  command -v systemctl >/dev/null 2>&1 && systemctl --user show-environment >/dev/null 2>&1
}

# The pid file's process, if it is nao-ik's serve (checked against its command
# line: a stale file may hold a reused pid, and -1 would signal every process).
serve_pid() {
  local pid args
  pid="$(head -c 32 "$PID_FILE" 2>/dev/null | tr -d '[:space:]')"
  if ! [[ "$pid" =~ ^[1-9][0-9]{0,9}$ ]] || [ "$pid" -le 1 ]; then
    echo "deploy.sh: the pid file $PID_FILE holds '$pid', not a process id: not signalling anything (remove the file)" >&2
    return 2
  fi
  args="$(ps -o args= -p "$pid" 2>/dev/null || true)"
  if [ -z "$args" ]; then
    echo "the service (pid $pid) was not running"
    return 1
  fi
  case "$args" in
    *nao-ik*serve*|*nao_ik*serve*) echo "$pid" ;;
    *)
      echo "deploy.sh: pid $pid in $PID_FILE is not nao-ik serve (it runs: ${args:0:80}): not stopping it (remove the file)" >&2
      return 2 ;;
  esac
}

stop_service() {
  if have_systemd_user && systemctl --user is-active --quiet "$UNIT" 2>/dev/null; then
    run systemctl --user stop "$UNIT"
    echo "stopped $UNIT"
  elif [ -f "$PID_FILE" ]; then
    local pid status=0
    pid="$(serve_pid)" || status=$?
    if [ "$status" = 2 ]; then
      return 1
    elif [ "$status" = 0 ]; then
      run kill -TERM "$pid"
      echo "stopped the NaoArmIK service (pid $pid)"
    else
      echo "$pid"
    fi
    [ "$DRY" = 1 ] || rm -f "$PID_FILE"
  else
    echo "no NaoArmIK service started by deploy.sh is running"
  fi
}

if [ "$STOP" = 1 ]; then
  stop_service || exit 1
  exit 0
fi

[ -n "$ROBOT" ] || { usage >&2; die "--robot is required"; }
case "$ROBOT" in
  *@*) USER_NAME="${ROBOT%%@*}"; HOST="${ROBOT#*@}" ;;
  *) USER_NAME="nao"; HOST="$ROBOT" ;;
esac
# Host and user are checked, not just quoted: ssh and scp would take a leading
# "-" as an option (-oProxyCommand=... runs a local command).
[[ "$HOST" =~ ^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$ ]] \
  || die "invalid robot host '$HOST': expected a host name or an IPv4 address (letters, digits, '.', '-'; not starting with '-')"
[[ "$USER_NAME" =~ ^[A-Za-z_][A-Za-z0-9._-]*$ ]] \
  || die "invalid robot user '$USER_NAME': expected a login name (letters, digits, '.', '_', '-'; not starting with '-')"
TARGET="$USER_NAME@$HOST"
[[ "$SSH_PORT" =~ ^[0-9]+$ ]] && [[ "$QI_PORT" =~ ^[0-9]+$ ]] || die "--ssh-port and --qi-port must be numbers"
# The folder on the robot travels as an argument of a fixed remote script,
# never pasted into a command; it must still be a plain absolute path.
if [ -n "$REMOTE_DIR" ] && ! [[ "$REMOTE_DIR" =~ ^/[A-Za-z0-9._/+-]*$ ]]; then
  die "invalid --remote-dir '$REMOTE_DIR': expected an absolute path of letters, digits and . _ / + - only"
fi
QI_URL="tcp://$HOST:$QI_PORT"

# Dependencies.
for tool in ssh scp python3; do
  command -v "$tool" >/dev/null 2>&1 || die "missing dependency: $tool (install openssh-client and python3)"
done
if [ -x "$HERE/.venv/bin/nao-ik" ]; then
  NAO_IK="$HERE/.venv/bin/nao-ik"
elif command -v nao-ik >/dev/null 2>&1; then
  NAO_IK="$(command -v nao-ik)"
else
  die "missing dependency: nao-ik (run 'make test' or 'pip install .' in $HERE first)"
fi

SSH=(ssh -p "$SSH_PORT" -o BatchMode=yes -o ConnectTimeout=10 "${SSH_OPTS[@]}")
SCP=(scp -P "$SSH_PORT" -o BatchMode=yes -o ConnectTimeout=10 "${SSH_OPTS[@]}")

# 1. The package: the Choregraphe project and the robot runtime, files at the archive's root.
PKG="$HERE/build/nao-ik.pkg"
echo "building $PKG"
if [ "$ON_ROBOT" = 1 ]; then
  run python3 "$HERE/nao_ik/robot_pkg.py" "$PKG"
else  # the boxes alone: the robot's own NaoArmIK would take the name of the one this computer serves
  run python3 "$HERE/nao_ik/robot_pkg.py" --boxes-only "$PKG"
fi

# 2. Copy and install.
echo "checking that $TARGET answers over ssh (port $SSH_PORT)"
if ! run "${SSH[@]}" -- "$TARGET" true; then
  die "cannot reach $TARGET over ssh on port $SSH_PORT: is the robot on, on this network, and does it accept your key? (ssh-copy-id $TARGET)"
fi
if [ -z "$REMOTE_DIR" ]; then
  # $HOME is the robot's, expanded there: single quotes on purpose.
  # shellcheck disable=SC2016
  if [ "$DRY" = 1 ]; then
    REMOTE_DIR="/home/nao"
    run "${SSH[@]}" -- "$TARGET" 'printf %s "$HOME"'
  else
    REMOTE_DIR="$("${SSH[@]}" -- "$TARGET" 'printf %s "$HOME"')"
  fi
  [[ "$REMOTE_DIR" =~ ^/[A-Za-z0-9._/+-]*$ ]] || die "the robot's home folder '$REMOTE_DIR' is not a plain path: use --remote-dir"
fi
REMOTE_PKG="$REMOTE_DIR/nao-ik.pkg"
echo "copying the package to $TARGET:$REMOTE_PKG"
run "${SCP[@]}" -- "$PKG" "$TARGET:$REMOTE_PKG"
echo "installing it with PackageManager on $QI_URL"
status=0
run "$NAO_IK" install-package "$REMOTE_PKG" --qi-url "$QI_URL" || status=$?
if [ "$status" = 3 ]; then
  APPS=".local/share/PackageManager/apps/nao-ik-behaviors"
  echo "no PackageManager on the robot: unpacking into ~/$APPS there"
  # A fixed script; the paths are its arguments ($1, $2), each one word for the robot's shell.
  # shellcheck disable=SC2016
  UNPACK='py=$(command -v python || command -v python3) && mkdir -p "$HOME/$1" && "$py" -m zipfile -e "$2" "$HOME/$1"'
  run "${SSH[@]}" -- "$TARGET" sh -c "$(remote_word "$UNPACK")" sh "$(remote_word "$APPS")" "$(remote_word "$REMOTE_PKG")"
elif [ "$status" != 0 ]; then
  die "PackageManager.install failed on $QI_URL (is NAOqi running on the robot, on port $QI_PORT?)"
fi

[ "$SERVICE" = 1 ] || { echo "done (package only)"; exit 0; }

if [ "$ON_ROBOT" = 1 ]; then
  # 3. On the robot: ServiceManager runs the package's autorun service after installing it.
  [ "$status" = 3 ] && die "the robot has no PackageManager (NAOqi < 2.3?): nothing there starts a package's service; deploy without --on-robot to serve NaoArmIK from this computer"
  if [ "$DRY" = 0 ] && { [ -f "$PID_FILE" ] || have_systemd_user; }; then
    stop_service >/dev/null  # a NaoArmIK served from this computer would take the name
  fi
  echo "waiting for the robot's own NaoArmIK (the package's service) on $QI_URL"
  if ! run "$NAO_IK" check --qi-url "$QI_URL" --timeout 60; then
    die "NaoArmIK did not come up on the robot: its log is under ~/.local/share/PackageManager/apps/nao-ik-behaviors there; ServiceManager needs NAOqi >= 2.3 (else deploy without --on-robot)"
  fi
  echo "done: NaoArmIK runs on the robot (analytic method); ServiceManager restarts it if it dies"
  exit 0
fi

# 3. The service, on this computer.
SERVE=("$NAO_IK" serve --qi-url "$QI_URL" --qi-listen-url "$LISTEN")
if [ "$DRY" = 0 ] && { [ -f "$PID_FILE" ] || have_systemd_user; }; then
  stop_service >/dev/null
fi
run mkdir -p "$STATE_DIR"
if have_systemd_user && [ -z "${NAO_IK_NO_SYSTEMD:-}" ]; then
  UNIT_DIR="${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user"
  echo "starting NaoArmIK as the systemd user unit $UNIT"
  run mkdir -p "$UNIT_DIR"
  if [ "$DRY" = 1 ]; then
    echo "+ write $UNIT_DIR/$UNIT: ExecStart=${SERVE[*]}"
  else
    printf '[Unit]\nDescription=nao-ik NaoArmIK service for %s\n\n[Service]\nExecStart=%s\nRestart=on-failure\n\n[Install]\nWantedBy=default.target\n' \
      "$QI_URL" "$(printf '%q ' "${SERVE[@]}")" > "$UNIT_DIR/$UNIT"
  fi
  run systemctl --user daemon-reload
  run systemctl --user restart "$UNIT"
else
  echo "starting NaoArmIK in the background (log: $LOG_FILE, pid file: $PID_FILE)"
  if [ "$DRY" = 1 ]; then
    printf '+'; printf ' %q' nohup "${SERVE[@]}"; printf ' > %q 2>&1 &\n' "$LOG_FILE"
  else
    nohup "${SERVE[@]}" > "$LOG_FILE" 2>&1 &
    echo $! > "$PID_FILE"
  fi
fi

# 4. Check.
echo "waiting for NaoArmIK on $QI_URL"
if ! run "$NAO_IK" check --qi-url "$QI_URL" --timeout 30; then
  [ -f "$LOG_FILE" ] && tail -n 20 "$LOG_FILE" >&2
  die "NaoArmIK did not come up on $QI_URL (log above)"
fi
echo "done: call NaoArmIK from Choregraphe or Python; stop it with ./deploy.sh --stop"
