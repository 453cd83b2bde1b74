#!/usr/bin/env bash
# deploy.sh: put nao-ik on a NAO.
#
# 1. builds the Choregraphe package: the boxes of behaviors/ and, with
#    --on-robot, the robot runtime (nao_ik/robot, Python 2.7/3 without numpy),
#    its manifest declaring the NaoArmIK service (nao_ik/robot/package.py;
#    docs/robot-runtime.md),
# 2. copies it to the robot with scp and installs it with PackageManager.install
#    over qi (what `qipkg deploy-package` does), or unpacks it into the
#    PackageManager apps folder when the robot has no PackageManager,
# 3. with --on-robot: NAOqi's ServiceManager starts the runtime on the robot
#    (an autorun service, NAOqi >= 2.3); otherwise it starts the full NaoArmIK
#    service (every method, Python 3 + numpy) for that robot on this computer:
#    a systemd user unit where systemd runs (enabled, and the user's lingering
#    turned on, so that it starts at boot and runs without a login), else a
#    background process with a log and a pid file (until the computer stops);
#    one unit, or one pid file and log, per robot,
# 4. checks that NaoArmIK is listed on the robot and answers getMethods.
#
# --stop stops one robot's service started here (and disables its unit), and
# only the process this script started: the pid file records its pid and its
# start time, and a pid now held by another process (a later one, started at
# another time) is never signalled.
set -euo pipefail

usage() {
  cat <<'EOF'
usage: ./deploy.sh --robot HOST|USER@HOST [options]
       ./deploy.sh --robot HOST|USER@HOST [--qi-port N] [--state-dir DIR] --stop
       ./deploy.sh --stop [--all] [--state-dir DIR]

Deploy nao-ik to a NAO: install the Choregraphe package (the boxes and the
robot runtime), start the NaoArmIK service (on the robot with --on-robot, else
on this computer), check that it answers.

options:
  --robot HOST|USER@HOST  the robot (user defaults to nao), e.g. 192.168.1.12 or nao@nao.local
  --ssh-port N            ssh port (default 22)
  --qi-port N             NAOqi port (default 9559)
  --listen URL            where the service listens for the robot: tcp://HOST:PORT or tcps://HOST:PORT
                          (default tcp://0.0.0.0:0: a new port at every start; behind a firewall give
                          a fixed one, e.g. tcp://0.0.0.0:9560, and let it in)
  --remote-dir DIR        folder on the robot for the .pkg (default: the user's home there)
  --state-dir DIR         where each robot's service log and pid file go (default ~/.cache/nao-ik)
  --ssh-option OPT        extra option for ssh and scp, repeatable (e.g. --ssh-option -i --ssh-option key)
  --on-robot              serve NaoArmIK on the robot itself (the package's service, NAOqi >= 2.3;
                          the analytic method only): no computer needed afterwards
  --no-service            install the package only
  --dry-run               print every command instead of running it
  --stop                  with --robot: stop the service a previous deploy started on this computer
                          for that robot (and --qi-port), and disable its unit; alone: list the robots
                          whose services run, stop none
  --all                   with --stop: stop every robot's service that deploy.sh started on this computer
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
ALL=0
STATE_DIR_GIVEN=0
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

while [ $# -gt 0 ]; do
  case "$1" in
    --robot) ROBOT="${2:?--robot needs a value}"; shift 2 ;;
    --ssh-port) SSH_PORT="${2:?--ssh-port needs a value}"; shift 2 ;;
    --qi-port) QI_PORT="${2:?--qi-port needs a value}"; shift 2 ;;
    --listen) LISTEN="${2:?--listen needs a value}"; shift 2 ;;
    --remote-dir) REMOTE_DIR="${2:?--remote-dir needs a value}"; shift 2 ;;
    --state-dir) STATE_DIR="${2:?--state-dir needs a value}"; STATE_DIR_GIVEN=1; shift 2 ;;
    --ssh-option) SSH_OPTS+=("${2:?--ssh-option needs a value}"); shift 2 ;;
    --on-robot) ON_ROBOT=1; shift ;;
    --no-service) SERVICE=0; shift ;;
    --dry-run) DRY=1; shift ;;
    --stop) STOP=1; shift ;;
    --all) ALL=1; shift ;;
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

# One word of a systemd command line (systemd.service(5), "Command lines"):
# double-quoted, with '\' and '"' escaped and '%' written '%%' (a specifier
# otherwise); in an argument '$' is written '$$' (systemd expands $VAR and
# ${VAR} in arguments), in the executable's path not (systemd takes that path
# as it is: '$$' would stay '$$'). A control character (a newline would end
# the line) is refused: status 1.
systemd_word() {
  local w="$1" bs="\\"
  [[ "$w" != *[[:cntrl:]]* ]] || return 1
  w="${w//"$bs"/"$bs$bs"}"
  w="${w//\"/"$bs\""}"
  w="${w//%/%%}"
  [ "${2:-}" = executable ] || w="${w//\$/\$\$}"
  printf '"%s"' "$w"
}

# A URL nao-ik serve listens on: tcp:// or tcps://, a host (an IPv4 address,
# a bracketed IPv6 address or a host name) and a port (0: a new one at every
# start), nothing else.
listen_ok() {
  local rest host port n
  case "$1" in
    tcp://*) rest="${1#tcp://}" ;;
    tcps://*) rest="${1#tcps://}" ;;
    *) return 1 ;;
  esac
  host="${rest%:*}"; port="${rest##*:}"
  [ "$host" != "$rest" ] && [[ "$port" =~ ^(0|[1-9][0-9]{0,4})$ ]] && [ "$port" -le 65535 ] || return 1
  if [[ "$host" =~ ^\[[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*\]$ ]]; then
    return 0
  elif [[ "$host" =~ ^[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}$ ]]; then
    for n in ${host//./ }; do [ "$((10#$n))" -le 255 ] || return 1; done
  elif [[ "$host" =~ ^[0-9.]*$ ]]; then
    return 1
  else
    [[ "$host" =~ ^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$ ]]
  fi
}

UNIT_DIR="${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user"
# What an older deploy.sh used for every robot: its pid file (no start time) is
# reported, never signalled; its unit is stopped, through systemd, for the
# robot its description names or with --stop --all.
OLD_PID_FILE="$STATE_DIR/serve.pid"
OLD_UNIT="nao-ik-serve.service"

have_systemd_user() {
  command -v systemctl >/dev/null 2>&1 && systemctl --user show-environment >/dev/null 2>&1
}

# One robot's service on this computer is named by its NAOqi: the host as
# checked below (letters, digits, '.', '-', lower-cased: safe in a file name
# and a systemd unit name; it has no '_') and the qi port, joined by '_'.
robot_key() { printf '%s_%s' "$(printf '%s' "$1" | tr '[:upper:]' '[:lower:]')" "$2"; }
KEY_RE='^[a-z0-9]([a-z0-9.-]*[a-z0-9])?_[1-9][0-9]{0,4}$'
pid_file_of() { printf '%s/serve-%s.pid' "$STATE_DIR" "$1"; }
log_file_of() { printf '%s/serve-%s.log' "$STATE_DIR" "$1"; }
unit_of() { printf 'nao-ik-serve-%s.service' "$1"; }
url_of() { printf 'tcp://%s:%s' "${1%_*}" "${1##*_}"; }
# The command that stops the service of KEY.
stop_command_of() {
  local host="${1%_*}" port="${1##*_}"
  printf './deploy.sh --robot %q' "$host"
  [ "$port" = 9559 ] || printf ' --qi-port %q' "$port"
  [ "$STATE_DIR_GIVEN" = 0 ] || printf ' --state-dir %q' "$STATE_DIR"
  printf ' --stop'
}

# A process's start time, which tells it from a later process given the same
# pid: "proc:" and field 22 of /proc/PID/stat (clock ticks after boot) where
# /proc is, else "ps:" and ps's lstart. Nothing if there is no such process.
start_time() {
  local pid="$1" stat fields=() lstart
  if [ -r /proc/self/stat ]; then
    stat="$(cat "/proc/$pid/stat" 2>/dev/null)" || return 0
    # Field 2, the command name in parentheses, may hold spaces and ')': fields 3.. follow its last ')'.
    read -r -a fields <<< "${stat##*)}"
    if [[ "${fields[19]:-}" =~ ^[0-9]+$ ]]; then
      printf 'proc:%s\n' "${fields[19]}"
    fi
  else
    lstart="$(LC_ALL=C ps -o lstart= -p "$pid" 2>/dev/null | tr -s ' ' | sed 's/^ //; s/ $//')" || return 0
    if [ -n "$lstart" ]; then
      printf 'ps:%s\n' "$lstart"
    fi
  fi
  return 0
}

# Records the process PID (just started) in FILE: its pid and its start time.
record_pid() {
  local pid="$1" file="$2" start
  start="$(start_time "$pid")"
  if [ -z "$start" ]; then
    echo "deploy.sh: the service (pid $pid) exited at once: no pid file written" >&2
    return 0
  fi
  printf 'pid=%s\nstart=%s\n' "$pid" "$start" > "$file"
}

# The pid in FILE if the very process a deploy started still runs: the pid,
# and the start time recorded with it, must both match (a pid is reused by
# later processes; -1 would signal every process of the user), and it must
# run nao-ik serve. Status 1 (a line said on stdout) when that process is
# gone, 2 (said on stderr) when the file is not one deploy.sh wrote or its
# process is not nao-ik serve.
recorded_pid() {
  local file="$1" line pid="" start="" now args
  local start_re='^(proc:[0-9]+|ps:[A-Za-z0-9 :]+)$'
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
      pid=*) pid="${line#pid=}" ;;
      start=*) start="${line#start=}" ;;
    esac
  done <<< "$(head -c 512 "$file" 2>/dev/null)"
  if ! [[ "$pid" =~ ^[1-9][0-9]{0,9}$ ]] || [ "$pid" -le 1 ]; then
    echo "deploy.sh: the pid file $file holds '${pid:0:40}', not a process id: not signalling anything (remove the file)" >&2
    return 2
  fi
  if ! [[ "$start" =~ $start_re ]]; then
    echo "deploy.sh: the pid file $file records no start time for pid $pid: not signalling it (remove the file)" >&2
    return 2
  fi
  now="$(start_time "$pid")"
  if [ -z "$now" ]; then
    echo "the service (pid $pid) was not running"
    return 1
  fi
  if [ "$now" != "$start" ]; then
    echo "the service (pid $pid) was not running: pid $pid is now another process (started at another time), not signalled"
    return 1
  fi
  # The same process: still, it must run the command deploy.sh starts.
  args="$(ps -ww -o args= -p "$pid" 2>/dev/null || true)"
  case "$args" in
    *nao-ik\ serve\ --qi-url\ *) echo "$pid" ;;
    *)
      echo "deploy.sh: pid $pid in $file is not nao-ik serve (it runs: ${args:0:80}): not stopping it (remove the file)" >&2
      return 2 ;;
  esac
}

# Stops the service of KEY: its systemd unit if active (and disables it if
# enabled: it would start again at the next boot), the process of its pid file
# if that very process runs. Status 1 if its pid file is not one deploy.sh
# wrote (nothing signalled).
stop_one() {
  local key="$1" unit pid_file url pid status=0 found=0
  unit="$(unit_of "$key")"; pid_file="$(pid_file_of "$key")"; url="$(url_of "$key")"
  if have_systemd_user && systemctl --user is-active --quiet "$unit" 2>/dev/null; then
    run systemctl --user stop "$unit"
    echo "stopped $unit (the NaoArmIK service for $url)"
    found=1
  fi
  if have_systemd_user && [ "$(systemctl --user is-enabled "$unit" 2>/dev/null)" = enabled ]; then
    run systemctl --user disable "$unit"
    echo "disabled $unit: it no longer starts at boot or login"
    found=1
  fi
  if [ -f "$pid_file" ]; then
    found=1
    pid="$(recorded_pid "$pid_file")" || status=$?
    if [ "$status" = 2 ]; then
      return 1
    elif [ "$status" = 0 ]; then
      run kill -TERM "$pid"
      echo "stopped the NaoArmIK service for $url (pid $pid)"
    else
      echo "$pid"
    fi
    [ "$DRY" = 1 ] || rm -f "$pid_file"
  fi
  [ "$found" = 1 ] || echo "no NaoArmIK service started by deploy.sh for $url is running"
}

# The keys of the robots with a pid file or a unit file that deploy.sh wrote.
known_keys() {
  local f key
  {
    for f in "$STATE_DIR"/serve-*.pid; do
      [ -e "$f" ] || continue
      key="${f##*/serve-}"; printf '%s\n' "${key%.pid}"
    done
    for f in "$UNIT_DIR"/nao-ik-serve-*.service; do
      [ -e "$f" ] || continue
      key="${f##*/nao-ik-serve-}"; printf '%s\n' "${key%.service}"
    done
  } | LC_ALL=C sort -u | grep -E "$KEY_RE" || true
}

# What an older deploy.sh left: a pid file without a start time (never
# signalled) and a unit shared by every robot.
report_old() {
  local pid
  if [ -f "$OLD_PID_FILE" ]; then
    pid="$(head -c 32 "$OLD_PID_FILE" 2>/dev/null | tr -d '[:space:]')"
    [[ "$pid" =~ ^[1-9][0-9]{0,9}$ ]] || pid="no process id"
    echo "deploy.sh: $OLD_PID_FILE is an older deploy.sh's pid file ($pid) without a start time: not signalling it; if that process is nao-ik serve, stop it yourself, then remove the file" >&2
  fi
  if have_systemd_user && systemctl --user is-active --quiet "$OLD_UNIT" 2>/dev/null; then
    if [ "$ALL" = 1 ]; then
      run systemctl --user stop "$OLD_UNIT"
      echo "stopped $OLD_UNIT (an older deploy.sh's unit)"
    else
      echo "deploy.sh: $OLD_UNIT (an older deploy.sh's unit, one for every robot) is active; ./deploy.sh --stop --all stops it" >&2
    fi
  fi
}

# An older deploy.sh's unit, if it serves URL (its description names it):
# stopped, as systemd knows its process.
stop_old_unit_of() {
  if have_systemd_user && systemctl --user is-active --quiet "$OLD_UNIT" 2>/dev/null \
      && grep -qxF "Description=nao-ik NaoArmIK service for $1" "$UNIT_DIR/$OLD_UNIT" 2>/dev/null; then
    run systemctl --user stop "$OLD_UNIT"
    echo "stopped $OLD_UNIT (an older deploy.sh's unit, for $1)"
  fi
}

# --stop without --robot: the robots whose services run, stopped with --all only.
stop_listed() {
  local key pid status running=0 failed=0
  while IFS= read -r key; do
    [ -n "$key" ] || continue
    if [ "$ALL" = 1 ]; then
      stop_one "$key" || failed=1
      continue
    fi
    if have_systemd_user && systemctl --user is-active --quiet "$(unit_of "$key")" 2>/dev/null; then
      echo "running: the NaoArmIK service for $(url_of "$key"), unit $(unit_of "$key"); stop it with $(stop_command_of "$key")"
      running=1
    fi
    if [ -f "$(pid_file_of "$key")" ]; then
      status=0
      pid="$(recorded_pid "$(pid_file_of "$key")" 2>/dev/null)" || status=$?
      if [ "$status" = 0 ]; then
        echo "running: the NaoArmIK service for $(url_of "$key"), pid $pid; stop it with $(stop_command_of "$key")"
        running=1
      elif [ "$status" = 2 ]; then
        echo "deploy.sh: $(pid_file_of "$key") is not a pid file deploy.sh wrote: not signalling anything (remove the file)" >&2
      fi
    fi
  done <<< "$(known_keys)"
  report_old
  if [ "$ALL" = 1 ]; then
    return "$failed"
  elif [ "$running" = 1 ]; then
    echo "deploy.sh: --stop without --robot stops none: name the robot as above, or stop them all with ./deploy.sh --stop --all" >&2
    return 1
  fi
  echo "no NaoArmIK service started by deploy.sh is running"
}

[ "$ALL" = 0 ] || [ "$STOP" = 1 ] || die "--all goes with --stop"
[ "$ALL" = 0 ] || [ -z "$ROBOT" ] || die "--stop --all stops every robot's service: give it without --robot"
[[ "$SSH_PORT" =~ ^[0-9]+$ ]] && [[ "$QI_PORT" =~ ^[0-9]+$ ]] || die "--ssh-port and --qi-port must be numbers"
# The qi port names the service's files: one spelling per port.
[[ "$QI_PORT" =~ ^[0-9]{1,5}$ ]] && [ "$((10#$QI_PORT))" -ge 1 ] && [ "$((10#$QI_PORT))" -le 65535 ] \
  || die "--qi-port must be a port number (1-65535), got '$QI_PORT'"
QI_PORT="$((10#$QI_PORT))"
# --listen becomes one argument of nao-ik serve (and of its unit's command line).
listen_ok "$LISTEN" \
  || die "invalid --listen '${LISTEN//[[:cntrl:]]/?}': expected tcp://HOST:PORT or tcps://HOST:PORT (HOST an IPv4 address, a [bracketed] IPv6 address or a host name; PORT 0-65535), e.g. tcp://0.0.0.0:9560"

if [ "$STOP" = 1 ] && [ -z "$ROBOT" ]; then
  stop_listed || exit 1
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
# The host names the unit and the pid file, which a file system and systemd cap at 255 characters.
[ "${#HOST}" -le 200 ] || die "invalid robot host: ${#HOST} characters (at most 200)"
TARGET="$USER_NAME@$HOST"
# The folder on the robot travels as an argument of a fixed remote script,
# never pasted into a command; it must still be a plain absolute path.
if [ -n "$REMOTE_DIR" ] && ! [[ "$REMOTE_DIR" =~ ^/[A-Za-z0-9._/+-]*$ ]]; then
  die "invalid --remote-dir '$REMOTE_DIR': expected an absolute path of letters, digits and . _ / + - only"
fi
QI_URL="tcp://$HOST:$QI_PORT"
KEY="$(robot_key "$HOST" "$QI_PORT")"
[[ "$KEY" =~ $KEY_RE ]] || die "internal error: service name '$KEY'"
PID_FILE="$(pid_file_of "$KEY")"
LOG_FILE="$(log_file_of "$KEY")"
UNIT="$(unit_of "$KEY")"

if [ "$STOP" = 1 ]; then
  status=0
  stop_one "$KEY" || status=1
  stop_old_unit_of "$QI_URL"
  report_old
  exit "$status"
fi

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

# Where systemd runs, the service is a unit whose command line is this one,
# every word quoted for systemd; written once the package is installed.
SERVE=("$NAO_IK" serve --qi-url "$QI_URL" --qi-listen-url "$LISTEN")
SYSTEMD=0
if [ "$SERVICE" = 1 ] && [ "$ON_ROBOT" = 0 ] && have_systemd_user && [ -z "${NAO_IK_NO_SYSTEMD:-}" ]; then
  SYSTEMD=1
  case "$NAO_IK" in
    /*) ;;
    *) NAO_IK="$(cd "$(dirname "$NAO_IK")" && pwd)/${NAO_IK##*/}"; SERVE[0]="$NAO_IK" ;;
  esac
  systemd_word "$NAO_IK" >/dev/null \
    || die "the path of nao-ik, $(printf %q "$NAO_IK"), holds a control character: a systemd unit cannot name it"
  if [[ "$NAO_IK" == *[\"\'\\]* ]]; then
    # systemd refuses an executable whose path holds a quote or a backslash
    # ("Executable name contains special characters"), as an argument it takes any.
    EXEC="$(systemd_word "$(command -v env)" executable) $(systemd_word "$NAO_IK")"
  else
    EXEC="$(systemd_word "$NAO_IK" executable)"
  fi
  for word in "${SERVE[@]:1}"; do
    EXEC+=" $(systemd_word "$word")"
  done
  UNIT_TEXT="$(printf '[Unit]\nDescription=nao-ik NaoArmIK service for %s\n\n[Service]\nExecStart=%s\nRestart=on-failure\nRestartSec=5\n\n[Install]\nWantedBy=default.target' \
    "$QI_URL" "$EXEC")"
fi

SSH=(ssh -p "$SSH_PORT" -o BatchMode=yes -o ConnectTimeout=10 "${SSH_OPTS[@]}")
SCP=(scp -P "$SSH_PORT" -o BatchMode=yes -o ConnectTimeout=10 "${SSH_OPTS[@]}")

# 1. The package: the Choregraphe project and the robot runtime, files at the archive's root.
PKG="$HERE/build/nao-ik.pkg"
echo "building $PKG"
if [ "$ON_ROBOT" = 1 ]; then
  run python3 "$HERE/nao_ik/robot/package.py" "$PKG"
else  # the boxes alone: the robot's own NaoArmIK would take the name of the one this computer serves
  run python3 "$HERE/nao_ik/robot/package.py" --boxes-only "$PKG"
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
    # a NaoArmIK served for this robot from this computer would take the name
    stop_one "$KEY" >/dev/null || die "not starting: $PID_FILE is not a pid file deploy.sh wrote (remove it)"
    stop_old_unit_of "$QI_URL" >/dev/null
  fi
  [ "$DRY" = 1 ] || report_old
  echo "waiting for the robot's own NaoArmIK (the package's service) on $QI_URL"
  if ! run "$NAO_IK" check --qi-url "$QI_URL" --timeout 60; then
    die "NaoArmIK did not come up on the robot: its log is under ~/.local/share/PackageManager/apps/nao-ik-behaviors there; ServiceManager needs NAOqi >= 2.3 (else deploy without --on-robot)"
  fi
  echo "done: NaoArmIK runs on the robot (analytic method); ServiceManager restarts it if it dies"
  exit 0
fi

# 3. The service, on this computer.
if [ "$DRY" = 0 ] && { [ -f "$PID_FILE" ] || have_systemd_user; }; then
  # this robot's service only: the other robots' keep running
  stop_one "$KEY" >/dev/null || die "not starting: $PID_FILE is not a pid file deploy.sh wrote (remove it)"
  stop_old_unit_of "$QI_URL" >/dev/null
fi
[ "$DRY" = 1 ] || report_old
run mkdir -p "$STATE_DIR"
if [ "$SYSTEMD" = 1 ]; then
  echo "starting NaoArmIK as the systemd user unit $UNIT"
  run mkdir -p "$UNIT_DIR"
  if [ "$DRY" = 1 ]; then
    printf "+ cat > %q <<'EOF'\n%s\nEOF\n" "$UNIT_DIR/$UNIT" "$UNIT_TEXT"
  else
    printf '%s\n' "$UNIT_TEXT" > "$UNIT_DIR/$UNIT"
  fi
  run systemctl --user daemon-reload
  # enabled: default.target.wants/ links it, so the user's manager starts it whenever it starts
  run systemctl --user enable "$UNIT" || die "systemctl --user enable $UNIT failed (above)"
  run systemctl --user restart "$UNIT"
  # Lingering: the user's manager, and so the unit, starts at boot and keeps
  # running without a login (else it stops at the user's last logout).
  LINGER=1
  ME="$(id -un)"
  if ! command -v loginctl >/dev/null 2>&1; then
    LINGER=0
    echo "deploy.sh: no loginctl here to turn lingering on: $UNIT runs while $ME is logged in, and starts at login, not at boot" >&2
  elif ! run loginctl --no-ask-password enable-linger "$ME" 2>/dev/null && [ ! -e "/var/lib/systemd/linger/$ME" ]; then
    LINGER=0
    echo "deploy.sh: loginctl would not turn lingering on for $ME: $UNIT stops at $ME's last logout and starts at login, not at boot; 'sudo loginctl enable-linger $ME' lets it run without a login and start at boot" >&2
  fi
else
  echo "starting NaoArmIK in the background (log: $LOG_FILE, pid file: $PID_FILE)"
  if [ "$DRY" = 1 ]; then
    printf '+'; printf ' %q' nohup "${SERVE[@]}"; printf ' > %q 2>&1 &\n' "$LOG_FILE"
  else
    nohup "${SERVE[@]}" > "$LOG_FILE" 2>&1 &
    record_pid "$!" "$PID_FILE"
  fi
fi

# 4. Check.
echo "waiting for NaoArmIK on $QI_URL"
if ! run "$NAO_IK" check --qi-url "$QI_URL" --timeout 30; then
  [ "$SYSTEMD" = 1 ] && die "NaoArmIK did not come up on $QI_URL (its log: journalctl --user -u $UNIT)"
  [ -f "$LOG_FILE" ] && tail -n 20 "$LOG_FILE" >&2
  die "NaoArmIK did not come up on $QI_URL (log above)"
fi
if [ "$SYSTEMD" = 0 ]; then
  LASTS="it runs until this computer stops (deploy again after a reboot)"
elif [ "$LINGER" = 1 ]; then
  LASTS="systemd restarts it if it fails and starts it at every boot"
else
  LASTS="systemd restarts it if it fails and starts it when $ME logs in"
fi
echo "done: call NaoArmIK from Choregraphe or Python; $LASTS; stop it with $(stop_command_of "$KEY")"
