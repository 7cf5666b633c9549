#!/usr/bin/env bash
# Start a real one-node SLURM cluster on this machine for tests/test_slurm.py: munge, MariaDB,
# slurmdbd (accounting, so `sacct` works as on a site cluster), slurmctld and slurmd, with two fake
# GPUs (gres `gpu`, type `fake`, File=/dev/null and /dev/zero), so a job can ask for two. Debian packages, no systemd: every daemon is
# started here and leaves a pid file that .ci/slurm-down.sh uses to stop it. Idempotent: a running
# cluster with this configuration is kept (with another one, it is restarted).
#
#   bash .ci/slurm-up.sh && .venv/bin/python -m pytest tests/test_slurm.py; bash .ci/slurm-down.sh
#
# Needs root. Exits non-zero (with the reason on stderr) when the cluster could not be started.
set -euo pipefail

CLUSTER=ci
ACCOUNT=ciacct
PARTITION=debug
LOGS=/var/log/slurm
RUN=/run/olmes-slurm        # pid files of the SLURM daemons (MariaDB: /run/mysqld, munged: /run/munge)
DB_PASS=slurmci
GPU_MODEL=fake

say() { echo "slurm-up: $*" >&2; }
fail() { say "error: $*"; for f in "$LOGS"/*.log; do [ -f "$f" ] && { say "--- tail $f"; tail -n 15 "$f" >&2; }; done; exit 1; }
wait_for() {  # wait_for SECONDS DESCRIPTION COMMAND...
  local deadline=$((SECONDS + $1)) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || fail "timed out waiting for $what"
    sleep 0.3
  done
}
running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
node_idle() { sinfo -h -N -o '%T' 2>/dev/null | grep -qx 'idle'; }

[ "$(id -u)" -eq 0 ] || fail "must run as root (installs packages and starts daemons)"

# 1. Configuration: one node with this machine's CPUs, 90% of its memory and two fake GPUs of
#    model "fake" (gres type: a profile's `gpu_model: fake` asks for it, `gpu: N` takes any).
host=$(hostname -s)
cpus=$(nproc)
memory=$(awk '/MemTotal/ {printf "%d", $2 / 1024 * 0.9}' /proc/meminfo)
slurmdbd_conf="AuthType=auth/munge
DbdHost=localhost
DbdPort=6819
SlurmUser=root
LogFile=$LOGS/slurmdbd.log
PidFile=$RUN/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StoragePort=3306
StorageUser=slurm
StoragePass=$DB_PASS
StorageLoc=slurm_acct_db"
slurm_conf="# Written by .ci/slurm-up.sh: a one-node CI cluster (olmes tests/test_slurm.py).
ClusterName=$CLUSTER
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=$RUN/slurmctld.pid
SlurmdPidFile=$RUN/slurmd.pid
SlurmctldLogFile=$LOGS/slurmctld.log
SlurmdLogFile=$LOGS/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=6819
AccountingStorageTRES=gres/gpu,gres/gpu:$GPU_MODEL
AccountingStoreFlags=job_comment
AccountingStorageEnforce=associations
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=5
JobCompType=jobcomp/none
GresTypes=gpu
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory Gres=gpu:$GPU_MODEL:2 State=UNKNOWN
PartitionName=$PARTITION Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
# Without File= the gres registers 0 GPUs and the node goes INVAL (workflow/profiles/slurm/README.md,
# pitfall 10); each GPU needs a device file of its own.
gres_conf="NodeName=$host Name=gpu Type=$GPU_MODEL File=/dev/null
NodeName=$host Name=gpu Type=$GPU_MODEL File=/dev/zero"

if command -v sinfo >/dev/null && running "$RUN/slurmctld.pid" && node_idle; then
  if [ "$(cat /etc/slurm/slurm.conf)" = "$slurm_conf" ] && [ "$(cat /etc/slurm/gres.conf)" = "$gres_conf" ]; then
    say "cluster already up"; exit 0
  fi
  say "cluster up with another configuration: restarting it"
  bash "$(dirname "$0")/slurm-down.sh"
fi

# 2. Packages (lean set: the slurm-wlm metapackage would pull ~40 -dev plugin packages; pitfall 13).
packages=(munge slurmctld slurmd slurm-client slurmdbd mariadb-server)
missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || fail "apt-get update failed"
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || fail "apt-get install failed"
fi

install -d -m 755 "$RUN" "$LOGS" /var/spool/slurmctld /var/spool/slurmd /etc/slurm

# 3. munge (authentication of every SLURM message). postinst normally creates the key.
[ -s /etc/munge/munge.key ] || mungekey --create --keyfile /etc/munge/munge.key
chown munge:munge /etc/munge/munge.key && chmod 400 /etc/munge/munge.key
install -d -o munge -g munge -m 755 /run/munge
if ! running /run/munge/munged.pid; then
  runuser -u munge -- /usr/sbin/munged --force || fail "munged did not start"
fi
wait_for 120 munge bash -c 'munge -n | unmunge'

# 4. MariaDB for slurmdbd (local socket only).
install -d -o mysql -g mysql -m 755 /run/mysqld
if ! running /run/mysqld/mariadb.pid; then
  /usr/sbin/mariadbd --user=mysql --skip-networking --socket=/run/mysqld/mysqld.sock \
    --pid-file=/run/mysqld/mariadb.pid >"$LOGS/mariadb.log" 2>&1 &
fi
wait_for 120 MariaDB mariadb -e 'SELECT 1'
mariadb -e "CREATE DATABASE IF NOT EXISTS slurm_acct_db;
            CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DB_PASS';
            GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';" || fail "MariaDB setup failed"

install -d -m 755 /etc/slurm
printf '%s\n' "$slurmdbd_conf" >/etc/slurm/slurmdbd.conf
chmod 600 /etc/slurm/slurmdbd.conf      # slurmdbd refuses a readable password file (pitfall 14)
printf '%s\n' "$slurm_conf" >/etc/slurm/slurm.conf
printf '%s\n' "$gres_conf" >/etc/slurm/gres.conf

# 5. slurmdbd, then the cluster/account/user associations, then the controller and the node daemon
#    (slurmctld must start after slurmdbd is up: workflow/profiles/slurm/README.md, pitfall 11).
if ! running "$RUN/slurmdbd.pid"; then
  slurmdbd || fail "slurmdbd did not start"
fi
wait_for 120 slurmdbd sacctmgr -n list cluster
sacctmgr -i -Q add cluster "$CLUSTER" >/dev/null 2>&1 || true
sacctmgr -i -Q add account "$ACCOUNT" Cluster="$CLUSTER" Description=ci Organization=ci >/dev/null 2>&1 || true
sacctmgr -i -Q add user root Account="$ACCOUNT" DefaultAccount="$ACCOUNT" Cluster="$CLUSTER" >/dev/null 2>&1 || true
sacctmgr -n -P list association cluster="$CLUSTER" user=root format=account | grep -qx "$ACCOUNT" \
  || fail "sacctmgr: no association root/$ACCOUNT"
if ! running "$RUN/slurmctld.pid"; then
  slurmctld || fail "slurmctld did not start"
fi
wait_for 120 slurmctld scontrol ping
if ! running "$RUN/slurmd.pid"; then
  slurmd || fail "slurmd did not start"
fi
wait_for 300 "node $host to be idle" node_idle
# A job end to end, with both GPUs, before any test relies on it.
out=$(timeout 300 srun -A "$ACCOUNT" -p "$PARTITION" --gpus=2 -t 1 bash -c 'echo "gpu=$CUDA_VISIBLE_DEVICES"') \
  || fail "srun --gpus=2 failed"
[ "$out" = "gpu=0,1" ] || fail "srun --gpus=2 printed '$out', expected gpu=0,1"
say "cluster '$CLUSTER' up: node $host, $cpus CPUs, ${memory} MB, gres gpu:$GPU_MODEL:2, partition $PARTITION, account $ACCOUNT"
