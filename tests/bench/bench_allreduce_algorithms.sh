#!/usr/bin/env bash
# parallel.allreduce side by side: trellis-trainer --bench-collectives --ops all_reduce once per
# algorithm (auto, ring, recursive_doubling, hierarchical) in one invocation, the same sizes and
# ranks, and a table of their bus bandwidths per size. Ring and recursive doubling are forced in
# Open MPI's coll/tuned (the blocking all-reduce this measures); the header of each run shows the
# parameters MPI read back. Hierarchical treats every NODE_SIZE consecutive ranks as a node.
#   tests/bench/bench_allreduce_algorithms.sh [RANKS] [NODE_SIZE] [MAX_BYTES]
#   tests/bench/bench_allreduce_algorithms.sh --ssh [RANKS_PER_HOST] [MAX_BYTES]
#     the same over two SSH hosts (network namespaces with sshd, tests/support/netns_hosts.sh;
#     root): RANKS_PER_HOST ranks on each, the hosts' own nodes for hierarchical.
set -euo pipefail
cd "$(dirname "$0")/../.."
trainer=$(pwd)/build/bin/trellis-trainer
ssh_mode=0
if [ "${1:-}" = "--ssh" ]; then ssh_mode=1; shift; fi
if [ $ssh_mode -eq 1 ]; then
  per_host="${1:-2}"; max="${2:-16777216}"; ranks=$((2 * per_host)); node_size=$per_host
else
  ranks="${1:-4}"; node_size="${2:-2}"; max="${3:-16777216}"
fi
mpi=(mpirun -np "$ranks" --oversubscribe --bind-to none --mca btl_vader_single_copy_mechanism none -x OPENBLAS_NUM_THREADS=1)
[ "$(id -u)" -eq 0 ] && mpi+=(--allow-run-as-root)
work=$(mktemp -d)
cleanup() {
  [ $ssh_mode -eq 1 ] && bash tests/support/netns_hosts.sh down "$work/hosts" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
if [ $ssh_mode -eq 1 ]; then
  bash tests/support/netns_hosts.sh up "$work/hosts" 2 >/dev/null
  port=$(cat "$work/hosts/ssh_port")
  : > "$work/ssh_config"
  hostlist=""
  while read -r name address _; do
    printf 'Host %s\n  HostName %s\n  Port %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n  BatchMode yes\n' \
      "$name" "$address" "$port" "$work/hosts/client_key" "$work/hosts/known_hosts" >> "$work/ssh_config"
    hostlist="${hostlist:+$hostlist,}$name:$per_host"
  done < "$work/hosts/hosts"
  net=$(awk 'NR == 1 { split($2, a, "."); print a[1] "." a[2] "." a[3] ".0/24" }' "$work/hosts/hosts")
  mpi+=(--host "$hostlist" --mca plm_rsh_agent ssh --mca plm_rsh_args "-F $work/ssh_config" --mca plm_rsh_no_tree_spawn 1
        --mca oob_tcp_if_include "$net" --mca btl_tcp_if_include "$net")
  where="over 2 SSH hosts, $per_host ranks each"
else
  where="on this machine, nodes of $node_size ranks for hierarchical"
fi
algorithms=(auto ring recursive_doubling hierarchical)
for a in "${algorithms[@]}"; do
  extra=()
  [ "$a" = hierarchical ] && extra=(--node-size "$node_size")
  "${mpi[@]}" "$trainer" --bench-collectives --ops all_reduce --max-bytes "$max" --allreduce "$a" "${extra[@]}" > "$work/$a.out"
  grep '^# all-reduce' "$work/$a.out" || true
  grep '^all_reduce' "$work/$a.out" | awk '{ print $2, $6 }' > "$work/$a.bw"
done
echo "all-reduce bus bandwidth (GB/s), $ranks ranks $where"
printf "%12s" "size(B)"; for a in "${algorithms[@]}"; do printf " %19s" "$a"; done; echo
paste "$work/auto.bw" "$work/ring.bw" "$work/recursive_doubling.bw" "$work/hierarchical.bw" |
  awk '{ printf "%12d %19.3f %19.3f %19.3f %19.3f\n", $1, $2, $4, $6, $8 }'
