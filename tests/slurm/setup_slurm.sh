#!/usr/bin/env bash
# Install and start a one-node Slurm cluster on this machine (Debian's slurm-wlm), idempotently.
# Used by the Slurm tests and by CI before them. Needs root. Re-running it on a machine where the
# cluster is already up only checks that it still answers.
#
#   bash tests/slurm/setup_slurm.sh          # exit 0: `sinfo` shows node localhost idle
#
# The cluster: controller and node daemon on localhost, NodeName=localhost with as many CPUs as
# this machine has, select/cons_tres with CR_CPU (jobs are sized in CPUs), no accounting, no cgroups
# (proctrack/linuxproc, task/none), so it also runs inside containers.
set -euo pipefail

log() { echo "setup_slurm: $*" >&2; }
fail() { log "$*"; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "needs root (installs packages and starts daemons)"

conf_dir=/etc/slurm
conf="$conf_dir/slurm.conf"
cpus=$(nproc --all)

cluster_up() {
    scontrol ping 2>/dev/null | grep -q "is UP" &&
        sinfo -h -n localhost -o %T 2>/dev/null | grep -Eq '^(idle|mixed|allocated|completing)'
}

if command -v sinfo >/dev/null 2>&1 && [ -f "$conf" ] && cluster_up; then
    log "cluster already up"
    exit 0
fi

if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
    log "installing slurm-wlm"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq || fail "apt-get update failed"
    apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null || fail "apt-get install slurm-wlm failed"
fi

# munge: authenticates the daemons and the client commands to each other.
if [ ! -s /etc/munge/munge.key ]; then
    log "creating the munge key"
    mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null ||
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 400 /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge
chmod 755 /run/munge
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    log "starting munged"
    runuser -u munge -- /usr/sbin/munged --force
    for _ in $(seq 50); do munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break; sleep 0.1; done
    munge -n | unmunge >/dev/null || fail "munged does not answer"
fi

mkdir -p "$conf_dir" /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/slurm
wanted=$(cat <<CONF
# Written by tests/slurm/setup_slurm.sh: a one-node cluster for autotune's tests.
ClusterName=autotune
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurm/slurmctld.pid
SlurmdPidFile=/run/slurm/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
ReturnToService=2
SlurmdTimeout=300
InactiveLimit=0
MinJobAge=300
KillWait=10
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
)
if [ ! -f "$conf" ] || [ "$(cat "$conf")" != "$wanted" ]; then
    log "writing $conf"
    printf '%s\n' "$wanted" > "$conf"
    # A configuration change needs fresh daemons.
    stop_by_pidfile() { [ -f "$1" ] && kill "$(cat "$1")" 2>/dev/null || true; rm -f "$1"; }
    stop_by_pidfile /run/slurm/slurmctld.pid
    stop_by_pidfile /run/slurm/slurmd.pid
    sleep 1
fi

daemon_running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
if ! daemon_running /run/slurm/slurmctld.pid; then
    log "starting slurmctld"
    /usr/sbin/slurmctld
fi
for _ in $(seq 100); do scontrol ping 2>/dev/null | grep -q "is UP" && break; sleep 0.2; done
scontrol ping | grep -q "is UP" || fail "slurmctld does not answer (see /var/log/slurm/slurmctld.log)"
if ! daemon_running /run/slurm/slurmd.pid; then
    log "starting slurmd"
    /usr/sbin/slurmd -N localhost
fi

for _ in $(seq 100); do
    state=$(sinfo -h -n localhost -o %T 2>/dev/null || true)
    case "$state" in
        idle*|mixed*|allocated*|completing*) log "cluster up: node localhost $state, $cpus CPUs"; exit 0 ;;
        down*|drain*) scontrol update NodeName=localhost State=RESUME 2>/dev/null || true ;;
    esac
    sleep 0.2
done
fail "node localhost did not become idle (state: ${state:-unknown}; see /var/log/slurm/slurmd.log)"
