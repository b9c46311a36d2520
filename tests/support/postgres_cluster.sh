#!/usr/bin/env bash
# A private PostgreSQL server for tests, from Debian's packages: initdb into DIR, the server on a
# Unix socket in DIR and on 127.0.0.1 at a free port, nothing outside DIR touched and no server the
# machine already runs used. initdb and postgres refuse to run as root, so under root the folder is
# given to the unprivileged user `nobody` and both run as it (setpriv, no PAM, no login shell).
#   postgres_cluster.sh up DIR [--durable] [--tls]
#       -> DIR/url: the superuser's connection string (postgresql://trellis@/trellis?host=DIR/socket&port=P),
#          DIR/port: the TCP port (127.0.0.1 as "localhost"; password logins only, scram-sha-256).
#          Without --durable the server skips fsync (tests); with it, it keeps Debian's defaults
#          (benchmarks). With --tls the server speaks TLS on TCP with a certificate for localhost
#          signed by a test authority: DIR/tls/ca.crt is the root a client verifies it with.
#   postgres_cluster.sh down DIR   -> stops the server (fast, then immediate), leaves DIR
#   postgres_cluster.sh start DIR  -> starts it again, as it was made
#   postgres_cluster.sh check      -> exit 0 when the server's programs are here
set -euo pipefail

cmd=${1:-}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1 || true)

check() {
  for p in initdb pg_ctl postgres; do
    [ -n "$bin" ] && [ -x "$bin/$p" ] || { echo "no PostgreSQL server programs (package postgresql)"; return 1; }
  done
  command -v setpriv >/dev/null || { echo "no setpriv (package util-linux)"; return 1; }
}

# Runs a command as the folder's owner: itself when not root, `nobody` under root.
as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups env HOME="$1" "${@:2}"
  else
    "${@:2}"
  fi
}

free_port() {
  python3 - <<'PY' 2>/dev/null || echo $(( 20000 + RANDOM % 20000 ))
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
PY
}

up() {
  local dir=$1 durable="" tls=""
  for option in "${@:2}"; do
    case "$option" in
      --durable) durable=1 ;;
      --tls) tls=1 ;;
      "") ;;
      *) echo "unknown option $option" >&2; return 2 ;;
    esac
  done
  check
  mkdir -p "$dir/socket"
  dir=$(cd "$dir" && pwd)
  [ "$(id -u)" -eq 0 ] && chown -R nobody "$dir" && chmod 700 "$dir"
  as_owner "$dir" test -w "$dir" || { echo "$dir: the server's user cannot reach it (every folder above it must be searchable by it)" >&2; return 1; }
  local port
  port=$(free_port)
  as_owner "$dir" "$bin/initdb" -D "$dir/data" -U trellis --auth-local=trust --auth-host=scram-sha-256 \
    -E UTF8 --locale=C >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; return 1; }
  local fast=(-c fsync=off -c synchronous_commit=off -c full_page_writes=off)
  [ -n "$durable" ] && fast=()
  if [ -n "$tls" ]; then
    mkdir -p "$dir/tls"
    ( cd "$dir/tls" &&
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=trellis-test-ca \
        -keyout ca.key -out ca.crt &&
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=localhost -keyout server.key -out server.csr &&
      printf 'subjectAltName=DNS:localhost\n' >san.ext &&
      openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext -out server.crt
    ) >"$dir/tls.log" 2>&1 || { cat "$dir/tls.log" >&2; return 1; }
    chmod 600 "$dir/tls/server.key"
    [ "$(id -u)" -eq 0 ] && chown -R nobody "$dir/tls"
    fast+=(-c ssl=on -c ssl_cert_file=$dir/tls/server.crt -c ssl_key_file=$dir/tls/server.key)
  fi
  echo "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir/socket -c max_connections=200 ${fast[*]}" \
    >"$dir/server.options"
  start "$dir"
  echo "$port" >"$dir/port"
  echo "postgresql://trellis@/trellis?host=$dir/socket&port=$port" >"$dir/url"
  # The database the tests use; the superuser connects over the socket without a password.
  psql_cmd=$(command -v psql || echo "$bin/psql")
  "$psql_cmd" -X -q -h "$dir/socket" -p "$port" -U trellis -d postgres -c "CREATE DATABASE trellis" >/dev/null
}

# Starts the server of DIR again (after down), with the options it was made with.
start() {
  local dir=$1
  as_owner "$dir" "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -o "$(cat "$dir/server.options")" \
    start >/dev/null || { cat "$dir/server.log" >&2; return 1; }
}

down() {
  local dir=$1
  [ -f "$dir/data/postmaster.pid" ] || return 0
  as_owner "$dir" "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 20 stop >/dev/null 2>&1 ||
    as_owner "$dir" "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 20 stop >/dev/null 2>&1 || true
}

case "$cmd" in
  up) up "${2:?usage: postgres_cluster.sh up DIR [--durable] [--tls]}" "${@:3}" ;;
  down) down "${2:?usage: postgres_cluster.sh down DIR}" ;;
  start) start "${2:?usage: postgres_cluster.sh start DIR}" ;;
  check) check ;;
  *) echo "usage: postgres_cluster.sh up DIR [--durable] [--tls] | down DIR | start DIR | check" >&2; exit 2 ;;
esac
