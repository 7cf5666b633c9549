#!/usr/bin/env bash
# Stop the CI cluster of .ci/slurm-up.sh: each daemon by the PID in its pid file (never by name),
# SLURM daemons first, then slurmdbd, then MariaDB and munge. Jobs still queued or running are
# cancelled first. Safe to run twice, or when nothing was started.
set -uo pipefail

RUN=/run/olmes-slurm

say() { echo "slurm-down: $*" >&2; }

stop() {  # stop NAME=PIDFILE...: SIGTERM to each, wait up to 10 s for all, then SIGKILL
  local entry name pidfile pid pids=() names=()
  for entry in "$@"; do
    name=${entry%%=*} pidfile=${entry#*=}
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    rm -f "$pidfile"
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" && pids+=("$pid") && names+=("$name")
    fi
  done
  local i
  for i in "${!pids[@]}"; do
    for _ in $(seq 1 100); do kill -0 "${pids[$i]}" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "${pids[$i]}" 2>/dev/null; then
      say "${names[$i]} (pid ${pids[$i]}) ignored SIGTERM for 10 s: SIGKILL"
      kill -KILL "${pids[$i]}" 2>/dev/null
    fi
    say "stopped ${names[$i]} (pid ${pids[$i]})"
  done
}

if [ -f "$RUN/slurmctld.pid" ] && command -v scancel >/dev/null; then
  timeout 10 scancel --user=root 2>/dev/null || true
fi
stop slurmd="$RUN/slurmd.pid" slurmctld="$RUN/slurmctld.pid"
stop slurmdbd="$RUN/slurmdbd.pid"
stop mariadb=/run/mysqld/mariadb.pid munged=/run/munge/munged.pid
exit 0
