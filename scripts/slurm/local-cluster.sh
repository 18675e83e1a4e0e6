#!/usr/bin/env bash
# A one-node Slurm on this machine, for testing the job-array scripts: munge + slurmctld + slurmd on
# localhost, no cgroups, no accounting. Needs root and Debian's packages slurm-wlm and munge
# (apt-get install -y slurm-wlm munge).
#
#   scripts/slurm/local-cluster.sh start    configure and start; prints `export SLURM_CONF=...`
#   scripts/slurm/local-cluster.sh stop     stop the daemons started here
#   scripts/slurm/local-cluster.sh status   sinfo
#
# Everything it writes is under $RFX_SLURM_DIR (default /tmp/rfx-slurm): slurm.conf, state, spool, logs,
# pid files. Clients find the configuration through SLURM_CONF (the daemons get it with -f).
set -euo pipefail
STATE="${RFX_SLURM_DIR:-/tmp/rfx-slurm}"
CONF="$STATE/slurm.conf"

die() { echo "local-cluster.sh: $*" >&2; exit 1; }

start() {
  for cmd in slurmctld slurmd munged sinfo; do
    command -v "$cmd" >/dev/null || [ -x "/usr/sbin/$cmd" ] \
      || die "$cmd not found: apt-get install -y slurm-wlm munge"
  done
  [ "$(id -u)" = 0 ] || die "needs root (slurmd runs jobs as their users)"
  mkdir -p "$STATE/state" "$STATE/spool" "$STATE/log"
  local host cpus mem
  host="$(hostname -s)"
  cpus="$(nproc)"
  mem="$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)"
  cat > "$CONF" <<CONF
ClusterName=rfx-local
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/pgid
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
MpiDefault=none
SchedulerType=sched/backfill
StateSaveLocation=$STATE/state
SlurmdSpoolDir=$STATE/spool
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/log/slurmctld.log
SlurmdLogFile=$STATE/log/slurmd.log
SlurmctldPort=6817
SlurmdPort=6818
KillWait=5
MinJobAge=300
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  # munge: the package made the key; the daemon runs as its own user with its socket under /run/munge.
  if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    mkdir -p /run/munge
    chown munge:munge /run/munge
    chmod 0755 /run/munge
    su -s /bin/sh munge -c "/usr/sbin/munged --force"
    for _ in $(seq 50); do
      munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
      sleep 0.1
    done
    munge -n | unmunge >/dev/null || die "munged did not start"
  fi
  stop_daemons
  if pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null; then
    die "a slurmctld or slurmd not started from $STATE is running (pids $(pgrep -d ' ' -x 'slurmctld|slurmd')); stop it first"
  fi
  /usr/sbin/slurmctld -f "$CONF"
  /usr/sbin/slurmd -f "$CONF"
  export SLURM_CONF="$CONF"
  for _ in $(seq 100); do
    if sinfo -h -o %t 2>/dev/null | grep -q '^idle' \
      && kill -0 "$(cat "$STATE/slurmctld.pid" 2>/dev/null)" 2>/dev/null \
      && kill -0 "$(cat "$STATE/slurmd.pid" 2>/dev/null)" 2>/dev/null; then
      echo "export SLURM_CONF=$CONF"
      return 0
    fi
    sleep 0.2
  done
  sinfo >&2 || true
  tail -n 20 "$STATE/log/slurmctld.log" "$STATE/log/slurmd.log" >&2 || true
  die "the node did not become idle within 20 s (logs above)"
}

stop_daemons() {
  local pidfile pid
  for pidfile in "$STATE/slurmd.pid" "$STATE/slurmctld.pid"; do
    [ -f "$pidfile" ] || continue
    pid="$(cat "$pidfile")"
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null || true
    fi
    rm -f "$pidfile"
  done
}

case "${1:-}" in
  start) start ;;
  stop) stop_daemons ;;
  status) SLURM_CONF="$CONF" sinfo ;;
  *) die "usage: $0 start|stop|status" ;;
esac
