#!/bin/sh
# Regenerates trellis_telemetry/telemetry_pb2.py from backend/protocol/telemetry.proto (the protocol
# the C++ side speaks). Usage: regenerate_proto.sh [OUTPUT_DIR]   (default: the package itself)
# The proto is mapped to the virtual path trellis_telemetry/telemetry.proto, so the generated
# module is named trellis_telemetry.telemetry_pb2 and its descriptor does not collide with another
# "telemetry.proto" loaded in the same process. Needs protoc >= 3.20 (the module needs protobuf >= 3.20).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
proto_dir="$here/../backend/protocol"
out=${1:-"$here/trellis_telemetry"}
[ -f "$proto_dir/telemetry.proto" ] || { echo "regenerate_proto.sh: $proto_dir/telemetry.proto not found" >&2; exit 2; }
command -v "${PROTOC:-protoc}" >/dev/null || { echo "regenerate_proto.sh: protoc not found" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"${PROTOC:-protoc}" --proto_path="trellis_telemetry=$proto_dir" --python_out="$tmp" trellis_telemetry/telemetry.proto
mkdir -p "$out"
cp "$tmp/trellis_telemetry/telemetry_pb2.py" "$out/telemetry_pb2.py"
