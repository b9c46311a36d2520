#!/usr/bin/env bash
# Test hosts on this machine: each a network namespace with its own address on a private bridge
# and a real sshd (its own host key, key-only login for one generated client key).
#   netns_hosts.sh up DIR N     -> DIR/hosts (one "NAME ADDRESS" line per host), DIR/client_key,
#                                  DIR/known_hosts (every host's key), DIR/ssh_port, DIR/resolv.conf
#                                  (the hosts' resolver: a lookup fails at once instead of timing out)
#   netns_hosts.sh down DIR     -> stops what DIR/state recorded (PIDs, namespaces, links)
#   netns_hosts.sh check        -> exit 0 when namespaces, sshd and ssh are usable here, else says why
# Everything created is recorded in DIR/state as it is created, so `down` removes it even after a
# half-finished `up`. Needs root (ip netns).
set -euo pipefail

cmd=${1:-}
sshd_bin=/usr/sbin/sshd

check() {
  [ "$(id -u)" -eq 0 ] || { echo "needs root (ip netns)"; return 1; }
  command -v ip >/dev/null || { echo "no 'ip' command (iproute2)"; return 1; }
  [ -x "$sshd_bin" ] || { echo "no $sshd_bin (openssh-server)"; return 1; }
  command -v ssh >/dev/null && command -v ssh-keygen >/dev/null || { echo "no ssh client"; return 1; }
  local probe="trlchk$$"
  ip netns add "$probe" 2>/dev/null || { echo "cannot create network namespaces here"; return 1; }
  ip netns del "$probe"
}

up() {
  local dir=$1 n=$2
  mkdir -p "$dir"
  chmod 700 "$dir"
  : > "$dir/state"
  local tag
  tag=$(printf '%04x' $(( ($$ + RANDOM) % 65536 )))
  local subnet="10.$(( 200 + RANDOM % 50 )).$(( RANDOM % 250 )).0"
  local prefix=${subnet%.0}
  local bridge="trb$tag"
  ip link add "$bridge" type bridge
  echo "link $bridge" >> "$dir/state"
  ip addr add "$prefix.1/24" dev "$bridge"
  ip link set "$bridge" up
  echo "$prefix.1" > "$dir/gateway"
  echo 2222 > "$dir/ssh_port"
  ssh-keygen -q -t ed25519 -N '' -f "$dir/client_key" -C trellis-test
  : > "$dir/hosts"
  : > "$dir/known_hosts"
  mkdir -p /run/sshd
  # The hosts' own resolver: a namespace reaches nothing beyond the bridge, so the machine's name
  # server would be asked for every name Open MPI, Slurm and the job scripts look up (the test
  # hosts' names among them) and each lookup would wait out its 20 s of time-outs. Here it answers
  # at once that it knows no such name, as a cluster's DNS would for names it does not hold. Bind-
  # mounted over /etc/resolv.conf in each host's own mount namespace; the machine's is untouched.
  printf '# netns_hosts.sh: no name server reachable from the test hosts; lookups fail at once\nnameserver 127.0.0.1\n' > "$dir/resolv.conf"
  for i in $(seq 1 "$n"); do
    local ns="trn${tag}h$i" veth="trv${tag}h$i" addr="$prefix.$(( i + 1 ))" home="$dir/h$i"
    mkdir -p "$home"
    chmod 700 "$home"
    ip netns add "$ns"
    echo "netns $ns" >> "$dir/state"
    ip link add "$veth" type veth peer name eth0 netns "$ns"
    echo "link $veth" >> "$dir/state"
    ip link set "$veth" master "$bridge" up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" route add default via "$prefix.1"
    ssh-keygen -q -t ed25519 -N '' -f "$home/host_key" -C "host$i"
    cp "$dir/client_key.pub" "$home/authorized_keys"
    chmod 600 "$home/authorized_keys"
    cat > "$home/sshd_config" <<CONF
Port 2222
ListenAddress $addr
HostKey $home/host_key
PidFile $home/sshd.pid
AuthorizedKeysFile $home/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
AllowTcpForwarding yes
AllowStreamLocalForwarding yes
LogLevel ERROR
CONF
    # Its own host name too (a UTS namespace): Open MPI names its session folders and shared-memory
    # segments by host name, and real hosts do not share one. `ip netns exec` gives it a mount
    # namespace of its own, where DIR/resolv.conf replaces the machine's.
    ip netns exec "$ns" unshare --uts sh -c 'hostname "$1" && mount --bind "$5" /etc/resolv.conf && exec "$2" -f "$3" -E "$4"' \
      sh "host$i" "$sshd_bin" "$home/sshd_config" "$home/sshd.log" "$dir/resolv.conf"
    for _ in $(seq 50); do [ -s "$home/sshd.pid" ] && break; sleep 0.1; done
    echo "pid $(cat "$home/sshd.pid")" >> "$dir/state"
    echo "[$addr]:2222 $(cut -d' ' -f1,2 "$home/host_key.pub")" >> "$dir/known_hosts"
    echo "host$i $addr $ns" >> "$dir/hosts"
  done
}

down() {
  local dir=$1
  [ -f "$dir/state" ] || return 0
  # PIDs first (sshd and whatever the namespaces still run), then namespaces, then links.
  while read -r kind name; do
    [ "$kind" = pid ] && kill "$name" 2>/dev/null || true
  done < "$dir/state"
  while read -r kind name; do
    if [ "$kind" = netns ]; then
      for p in $(ip netns pids "$name" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
      ip netns del "$name" 2>/dev/null || true
    fi
  done < "$dir/state"
  while read -r kind name; do
    [ "$kind" = link ] && ip link del "$name" 2>/dev/null || true
  done < "$dir/state"
  rm -f "$dir/state"
}

case "$cmd" in
  check) check ;;
  up) [ $# -eq 3 ] || { echo "usage: $0 up DIR N" >&2; exit 2; }
      if ! up "$2" "$3"; then down "$2"; exit 1; fi ;;
  down) [ $# -eq 2 ] || { echo "usage: $0 down DIR" >&2; exit 2; }; down "$2" ;;
  --help|-h) sed -n '2,11p' "$0"; exit 0 ;;
  *) echo "usage: $0 check | up DIR N | down DIR" >&2; exit 2 ;;
esac
