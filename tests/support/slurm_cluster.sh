#!/usr/bin/env bash
# A real Slurm cluster on this machine for tests: munged, slurmctld on the bridge's address, and
# one slurmd per test host (tests/support/netns_hosts.sh: a network namespace with its own address
# and host name), all from Debian's packages, configured here, nothing outside DIR touched.
#   slurm_cluster.sh up DIR N   -> DIR/slurm.conf (export SLURM_CONF=DIR/slurm.conf), nodes host1..hostN
#                                  with 2 CPUs each in partition "debug"; waits until they are idle
#   slurm_cluster.sh down DIR   -> stops every daemon by the PID it recorded, then the hosts
#   slurm_cluster.sh check      -> exit 0 when namespaces and the Slurm and munge programs are here
# Needs root.
set -euo pipefail

cmd=${1:-}
here=$(cd "$(dirname "$0")" && pwd)

check() {
  "$here/netns_hosts.sh" check || return 1
  for p in /usr/sbin/munged /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/sbatch /usr/bin/squeue /usr/bin/scontrol /usr/bin/scancel /usr/bin/sinfo; do
    [ -x "$p" ] || { echo "no $p (packages munge, slurmctld, slurmd, slurm-client)"; return 1; }
  done
}

free_port() {
  python3 - <<'PY' 2>/dev/null || echo $(( 20000 + RANDOM % 20000 ))
import socket
s = socket.socket(); s.bind(("0.0.0.0", 0)); print(s.getsockname()[1]); s.close()
PY
}

up() {
  local dir=$1 n=$2
  "$here/netns_hosts.sh" up "$dir" "$n"
  local gw
  gw=$(cat "$dir/gateway")
  mkdir -p "$dir/munge" "$dir/ctld" "$dir/spool" "$dir/log"
  chmod 700 "$dir/munge"
  head -c 1024 /dev/urandom > "$dir/munge/munge.key"
  chmod 600 "$dir/munge/munge.key"
  /usr/sbin/munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munge.seed"
  for _ in $(seq 50); do [ -s "$dir/munge/munged.pid" ] && break; sleep 0.1; done
  echo "pid $(cat "$dir/munge/munged.pid")" >> "$dir/state"

  local ctld_port slurmd_port
  ctld_port=$(free_port)
  slurmd_port=6818
  local ctl_host
  ctl_host=$(hostname -s)
  {
    echo "ClusterName=trellistest"
    echo "SlurmctldHost=$ctl_host($gw)"
    echo "SlurmctldPort=$ctld_port"
    echo "SlurmdPort=$slurmd_port"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "AuthInfo=socket=$dir/munge/munge.socket"
    echo "StateSaveLocation=$dir/ctld"
    echo "SlurmdSpoolDir=$dir/spool/%n"
    echo "SlurmctldPidFile=$dir/slurmctld.pid"
    echo "SlurmdPidFile=$dir/spool/slurmd-%n.pid"
    echo "SlurmctldLogFile=$dir/log/slurmctld.log"
    echo "SlurmdLogFile=$dir/log/slurmd-%n.log"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_CPU"
    echo "MpiDefault=none"
    echo "ReturnToService=2"
    echo "SchedulerType=sched/backfill"
    echo "MinJobAge=600"
    echo "KillWait=5"
    echo "JobCompType=jobcomp/filetxt"
    echo "JobCompLoc=$dir/log/jobcomp.txt"
    echo "SlurmctldTimeout=30"
    echo "SlurmdTimeout=30"
    while read -r name addr _ns; do
      echo "NodeName=$name NodeAddr=$addr CPUs=2 State=UNKNOWN"
    done < "$dir/hosts"
    echo "PartitionName=debug Nodes=$(cut -d' ' -f1 "$dir/hosts" | paste -sd,) Default=YES MaxTime=INFINITE State=UP"
  } > "$dir/slurm.conf"
  export SLURM_CONF="$dir/slurm.conf"

  /usr/sbin/slurmctld -D -i -f "$dir/slurm.conf" > "$dir/log/slurmctld.out" 2>&1 &
  echo "pid $!" >> "$dir/state"
  while read -r name _addr ns; do
    mkdir -p "$dir/spool/$name"
    # Its own host name, as the node's sshd has: Open MPI and slurmd name things by it. nsenter, not
    # `ip netns exec`: that remounts /sys, and slurmd needs the cgroup mounts under it. Its own mount
    # namespace for the hosts' resolver (netns_hosts.sh: without it every batch job's mpirun waited
    # 20 s for the machine's unreachable name server).
    nsenter --net="/run/netns/$ns" unshare --uts --mount \
      sh -c 'hostname "$1" && mount --bind "$3" /etc/resolv.conf && exec /usr/sbin/slurmd -D -N "$1" -f "$2"' \
      sh "$name" "$dir/slurm.conf" "$dir/resolv.conf" > "$dir/log/slurmd-$name.out" 2>&1 &
    echo "pid $!" >> "$dir/state"
  done < "$dir/hosts"

  # Ready when every node is idle.
  for _ in $(seq 150); do
    local idle
    idle=$(sinfo -h -N -t idle -o '%N' 2>/dev/null | sort -u | wc -l)
    [ "$idle" -ge "$n" ] && return 0
    sleep 0.2
  done
  echo "the Slurm nodes did not become idle in 30 s:" >&2
  sinfo -N >&2 || true
  tail -n 20 "$dir/log/slurmctld.log" >&2 || true
  return 1
}

down() {
  local dir=$1
  [ -f "$dir/state" ] || return 0
  # The daemons first, by the PIDs recorded, so their jobs end with them; then the hosts.
  while read -r kind name; do
    [ "$kind" = pid ] && kill "$name" 2>/dev/null || true
  done < "$dir/state"
  for _ in $(seq 30); do
    local alive=0
    while read -r kind name; do
      [ "$kind" = pid ] && kill -0 "$name" 2>/dev/null && alive=1
    done < "$dir/state"
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
  "$here/netns_hosts.sh" down "$dir"
}

case "$cmd" in
  check) check ;;
  up) [ $# -eq 3 ] || { echo "usage: $0 up DIR N" >&2; exit 2; }
      if ! up "$2" "$3"; then down "$2"; exit 1; fi ;;
  down) [ $# -eq 2 ] || { echo "usage: $0 down DIR" >&2; exit 2; }; down "$2" ;;
  --help|-h) sed -n '2,10p' "$0"; exit 0 ;;
  *) echo "usage: $0 check | up DIR N | down DIR" >&2; exit 2 ;;
esac
