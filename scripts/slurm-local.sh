#!/usr/bin/env bash
# A real one-node Slurm on this machine, for the tests (Tests/BlurfarmCLITests/SlurmTests.swift)
# and for trying `blurfarm slurm` by hand (docs/cluster.md). Debian's packages (scripts/setup.sh
# installs them), no systemd, nothing outside FOLDER:
#
#   scripts/slurm-local.sh up [FOLDER]     start munged, slurmctld and slurmd; print SLURM_CONF=...
#   scripts/slurm-local.sh down [FOLDER]   stop them and remove FOLDER
#
# FOLDER defaults to /tmp/blurfarm-slurm (the same for `up` and `down`); a link, another user's
# folder or one writable by others is refused (someone could have planted it). It (created by `up`,
# removed by `down`) holds the configuration, the munge key and socket,
# state, spool, logs and pid files. The daemons listen on free ports picked at start, below the
# range of outgoing connections' ports, so several clusters (several test processes) never meet;
# a port taken between the pick and the daemon's bind is picked again. Run as root: slurmd starts jobs as their users,
# munged is started as the user munge. Clients find the cluster through SLURM_CONF:
#   export SLURM_CONF=FOLDER/slurm.conf; sbatch ...
#
# Exit status: 0 up (the node idle) or down; 1 with the reason on standard error (and the
# daemons' logs) when the cluster cannot start; `up` then stops what it started.
set -euo pipefail

usage() {
  echo "usage: $0 up|down [FOLDER]   (FOLDER defaults to /tmp/blurfarm-slurm)" >&2
  exit 2
}
(($# == 1 || $# == 2)) || usage
action=$1
folder=${2:-/tmp/blurfarm-slurm}

fail() {
  echo "slurm-local: $*" >&2
  exit 1
}

# Refuses a folder root did not make for itself: as root in a shared /tmp, a link or a folder
# another user planted at FOLDER would have root write (up) or delete (down) where they chose.
check_folder() {
  [[ -e $folder || -L $folder ]] || return 0
  [[ ! -L $folder ]] || fail "$folder is a symbolic link: refusing to use it (give another FOLDER)"
  [[ -d $folder ]] || fail "$folder is not a folder"
  [[ $(stat -c %u "$folder") -eq 0 ]] || fail "$folder belongs to another user: refusing to use it (give another FOLDER)"
  (( (8#$(stat -c %a "$folder") & 8#022) == 0 )) || fail "$folder is writable by others: refusing to use it"
}

# Whether process $1 is alive (a zombie nobody reaps is not).
alive() {
  [[ -r /proc/$1/stat ]] && [[ $(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) != Z ]]
}

# Stops the daemons whose pid files (given, or all three) are in the folder: each by its pid, all
# at once, waited for (5 s, then SIGKILL).
stop_daemons() {
  local file pid pids=() files=("$@")
  ((${#files[@]})) || files=(run/slurmd.pid run/slurmctld.pid munge/munged.pid)
  for file in "${files[@]}"; do
    [[ -f $folder/$file ]] || continue
    pid=$(cat "$folder/$file" 2>/dev/null || true)
    [[ $pid =~ ^[0-9]+$ ]] && kill -TERM "$pid" 2>/dev/null && pids+=("$pid")
  done
  for _ in $(seq 50); do
    local left=0
    for pid in "${pids[@]}"; do alive "$pid" && left=1; done
    ((left)) || return 0
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
}

case $action in
down)
  [[ -e $folder || -L $folder ]] || exit 0
  check_folder
  [[ -f $folder/slurm.conf ]] || fail "$folder: not a cluster of this script (no slurm.conf): left alone"
  stop_daemons
  rm -rf -- "$folder"
  exit 0
  ;;
up) ;;
*) usage ;;
esac

check_folder
[[ $(id -u) -eq 0 ]] || fail "must run as root (slurmd starts jobs as their users; munged runs as user munge)"
for tool in munged slurmctld slurmd scontrol sinfo; do
  command -v "$tool" >/dev/null || fail "$tool is not installed: run scripts/setup.sh"
done
id munge >/dev/null 2>&1 || fail "there is no user munge: run scripts/setup.sh (the munge package creates it)"
[[ ! -e $folder/slurm.conf ]] || fail "$folder: a cluster is there already (scripts/slurm-local.sh down $folder)"

mkdir -p -m 755 "$folder"
folder=$(cd "$folder" && pwd -P)
started=0
trap '((started)) && { echo "slurm-local: logs in $folder/log:" >&2; tail -n 20 "$folder"/log/*.log "$folder"/munge/*.log >&2 2>/dev/null || true; stop_daemons; }' EXIT
started=1

mkdir -p "$folder"/{run,log,state,spool}
chmod 755 "$folder"
# munged's own folder (key, socket, seed, log, pid file) belongs to munge; others only pass
# through it to the socket.
install -d -o munge -g munge -m 711 "$folder/munge"
dd if=/dev/urandom of="$folder/munge/munge.key" bs=1024 count=1 status=none
chown munge:munge "$folder/munge/munge.key"
chmod 400 "$folder/munge/munge.key"
socket=$folder/munge/munge.socket
runuser -u munge -- munged --force --socket="$socket" --key-file="$folder/munge/munge.key" \
  --pid-file="$folder/munge/munged.pid" --log-file="$folder/munge/munged.log" --seed-file="$folder/munge/munged.seed" \
  </dev/null >>"$folder/log/daemons.log" 2>&1 || fail "munged did not start (see $folder/munge/munged.log)"

node=$(slurmd -C | head -n 1)
[[ $node == NodeName=* ]] || fail "slurmd -C did not describe this node: $node"
node_name=${node%% *}
node_name=${node_name#NodeName=}
host=$(hostname -s)
export SLURM_CONF=$folder/slurm.conf

# Two free TCP ports for slurmctld and slurmd, below the kernel's range for outgoing connections:
# a port from that range, free now, can be taken by any client's connection (the tests make
# hundreds) before the daemon binds it. Another cluster starting at the same time can still pick
# the same port; the start is then tried again on others.
pick_ports() {
  python3 -c '
import random, socket
low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
ports = []
while len(ports) < 2:
    port = random.randrange(10000, low)
    if port in ports:
        continue
    s = socket.socket()
    try:
        s.bind(("", port))
        ports.append(port)
    except OSError:
        pass
    finally:
        s.close()
print(*ports)'
}

# slurm.conf for ports $1 (slurmctld) and $2 (slurmd).
write_configuration() {
  local ctld_port=$1 node_port=$2
cat >"$folder/slurm.conf" <<EOF
# A one-node cluster of scripts/slurm-local.sh: everything under $folder.
ClusterName=blurfarm-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$node_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$folder/state
SlurmdSpoolDir=$folder/spool
SlurmctldPidFile=$folder/run/slurmctld.pid
SlurmdPidFile=$folder/run/slurmd.pid
SlurmctldLogFile=$folder/log/slurmctld.log
SlurmdLogFile=$folder/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
ReturnToService=2
# scancel: SIGTERM, then SIGKILL after 5 s (not 30): a run stops in well under that.
KillWait=5
MpiDefault=none
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=local Nodes=$node_name Default=YES MaxTime=INFINITE State=UP
EOF
}

# Starts slurmctld and slurmd on new ports: 0 once the node is idle (slurmd registered with the
# controller); 1 when a daemon could not bind its port, after stopping both and setting their
# logs aside. Fails the script otherwise.
start_cluster() {
  local ports state= log
  ports=$(pick_ports)
  write_configuration $ports
  # The daemons' standard streams go to a file: a caller reading this script's output to its end
  # (a test) must not wait for the daemons.
  slurmctld -f "$SLURM_CONF" -i </dev/null >>"$folder/log/daemons.log" 2>&1 || fail "slurmctld did not start"
  slurmd -f "$SLURM_CONF" -N "$node_name" </dev/null >>"$folder/log/daemons.log" 2>&1 || fail "slurmd did not start"
  for _ in $(seq 150); do
    state=$(sinfo -h -n "$node_name" -o %T 2>/dev/null || true)
    [[ $state == idle ]] && return 0
    if grep -qs -e "Unable to bind listen port" -e "Address already in use" "$folder"/log/slurmctld.log "$folder"/log/slurmd.log; then
      echo "slurm-local: a port of $ports was taken; starting again on others" >&2
      stop_daemons run/slurmd.pid run/slurmctld.pid
      for log in slurmctld slurmd; do
        [[ -f $folder/log/$log.log ]] && mv "$folder/log/$log.log" "$folder/log/$log.log.$attempt"
      done
      rm -f "$folder"/run/slurm*.pid
      return 1
    fi
    sleep 0.1
  done
  fail "the node did not become idle in 15 s (state: ${state:-unknown})"
}

for attempt in 1 2 3; do
  if start_cluster; then
    started=0
    trap - EXIT
    echo "SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
done
fail "the daemons found no free ports in 3 tries"
