#!/usr/bin/env bash
# The GPU proof in one prepared call (docs/gpu.md).
#
#   scripts/gpu/verify.sh prepare [DIR]    here, on the build machine: builds the CUDA programs (sm_80
#                                          and sm_90) in build/, writes the parity plans, trains the
#                                          CPU references, downloads pyzmq for the Python client, and
#                                          packs it all into DIR (default .gpu-carry, git-ignored)
#   bash DIR/verify.sh [STEP...]           there, on the GPU machine, from the repository root: every
#                                          step under its own timeout, logs under $OUT (or DIR/logs),
#                                          one "N passed, N failed" line and a table at the end
#   scripts/gpu/verify.sh --list           the steps and what each proves
#
# A device run:  carry [".gpu-carry"], command "bash .gpu-carry/verify.sh", timeout_s 590 (VERIFY_BUDGET_S,
# default 520, bounds the whole; steps it leaves out are counted failed).
# Exit 0 only when every step passed. A step that cannot run (no GPU, no NCCL, no PyTorch with
# CUDA) fails, naming why: nothing is skipped quietly.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)

STEPS=(gpu no-device kernels bf16 gpt conformance-1 conformance-2-staged conformance-2-nccl-hostid
       quickstart-fp32 quickstart-bf16 parity-fp32 parity-bf16 pytorch-ddp pytorch-fsdp bench)
describe() {
  case $1 in
    gpu) echo "the GPU, driver and libraries are there (nvidia-smi, NCCL and cuDNN found)";;
    no-device) echo "with CUDA_VISIBLE_DEVICES empty every op family fails with a device error within 10 s, the trainer exits 13";;
    kernels) echo "tst_cuda_kernels: every CUDA kernel against the CPU reference (fp32)";;
    bf16) echo "tst_cuda_bf16: bf16 kernels, cuBLASLt and cuDNN attention against fp32 references";;
    gpt) echo "tst_gpt_cuda: the GPT and llama models' forward and backward on the GPU against the CPU";;
    conformance-1) echo "communicator conformance at world size 1: nccl and staged-cuda";;
    conformance-2-staged) echo "communicator conformance at 2 ranks sharing the GPU: staged-cuda";;
    conformance-2-nccl-hostid) echo "NCCL at 2 ranks on one GPU with a distinct NCCL_HOSTID each (smoke test: unsupported by NVIDIA)";;
    quickstart-fp32) echo "the GPU quick start (200 steps, fp32): losses against the CPU's (1e-3 relative, final 1e-3)";;
    quickstart-bf16) echo "the GPU quick start in bf16: final loss against the CPU bf16 run's (3e-2 relative)";;
    parity-fp32) echo "every layout at 2 ranks sharing the GPU (staged) against the 1-rank GPU run, fp32: losses 1e-4, params 1e-4";;
    parity-bf16) echo "dp2, tp2+SP, pp2 1f1b, ZeRO-3 in bf16 against the 1-rank GPU run: losses 5e-3";;
    pytorch-ddp) echo "examples/pytorch DDP over NCCL at world size 1, watched by trellis-cli with cuda_events";;
    pytorch-fsdp) echo "examples/pytorch FSDP over NCCL at world size 1, watched by trellis-cli";;
    bench) echo "GPT-2 124M bf16 batch 32: trellis against torch.compile (tokens/s ratio, reported, not asserted)";;
  esac
}

if [[ ${1:-} == --help || ${1:-} == -h ]]; then sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0; fi
if [[ ${1:-} == --list ]]; then for s in "${STEPS[@]}"; do printf '%-26s %s\n' "$s" "$(describe "$s")"; done; exit 0; fi

# ---------------------------------------------------------------- here: build, references, pack
if [[ ${1:-} == prepare ]]; then
  set -e
  root=$(cd "$here/../.." && pwd)
  dir=${2:-.gpu-carry}
  cd "$root"
  grep -qx '/.gpu-carry/' .git/info/exclude 2>/dev/null || echo /.gpu-carry/ >> .git/info/exclude
  [[ -f build/CMakeCache.txt ]] || cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
  cmake -B build -DTRELLIS_CUDA_ARCHITECTURES="80;90" > /dev/null
  compgen -G 'build/CMakeFiles/*/CMakeCUDACompiler.cmake' > /dev/null ||
    { echo "verify.sh prepare: build/ was configured without a CUDA compiler (nvcc; TRELLIS_ENABLE_CUDA)" >&2; exit 1; }
  targets=(tst_cuda_kernels tst_cuda_bf16 tst_gpt_cuda tst_cuda_no_device tst_communicator_conformance_cuda
           trellis-trainer-cuda trellis-trainer trellis-cli bench_gpu_gpt)
  cmake --build build --target "${targets[@]}"
  stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
  python3 "$here/make_plans.py" "$stage/plans" resources/corpus/licenses.txt
  mkdir -p "$stage/reference"
  for q in quickstart-cuda quickstart-cuda-bf16; do # the CPU twins: what the GPU's losses are held to
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 \
      mpirun -np 1 --oversubscribe build/bin/trellis-trainer --plan "$stage/plans/$q-cpu.json" \
      --dump-losses "$stage/reference/$q.losses" > "$stage/reference/$q.log" 2>&1
  done
  mkdir -p "$stage/examples" "$stage/python" "$stage/bench"
  cp examples/pytorch/*.py examples/pytorch/*.json "$stage/examples/"
  cp -r python/trellis_telemetry "$stage/python/"
  cp tests/bench/torch_gpt_gpu.py "$stage/bench/"
  rm -rf "$dir" && mkdir -p "$dir/wheels"
  # pyzmq for the Python client (the GPU machine's Python 3.12 has protobuf but not pyzmq).
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$dir/wheels" pyzmq==26.2.0 ||
    echo "verify.sh prepare: pyzmq was not downloaded: the pytorch steps will fail there" >&2
  "$here/pack.sh" "$dir" "${targets[@]/#/build/bin/}" -- "$stage/plans" "$stage/reference" "$stage/examples" \
    "$stage/python" "$stage/bench"
  cp "$here/compare_losses.py" "$dir/"
  echo "prepared $dir: run it there with  bash $dir/verify.sh  (carry [\"$dir\"])"
  exit 0
fi

# ---------------------------------------------------------------- there: run every step
log=${OUT:-$here/logs}
mkdir -p "$log"
run="$here/run.sh"
cmp() { python3 "$here/compare_losses.py" "$@"; }
wanted=("$@"); [[ ${#wanted[@]} -gt 0 ]] || wanted=("${STEPS[@]}")
declare -A result detail
passed=0; failed=0
mpi() { "$run" mpirun --oversubscribe --bind-to none "$@"; }

budget=${VERIFY_BUDGET_S:-520} # the whole call's seconds: a device command may run 600
began=$(date +%s)
step() { # step NAME SECONDS FUNCTION: runs it under its own timeout, its output in $log/NAME.log
  local name=$1 limit=$2 fn=$3 start rc left
  [[ " ${wanted[*]} " == *" $name "* ]] || return 0
  left=$((budget - ($(date +%s) - began)))
  echo "== $name: $(describe "$name")"
  if ((left < 5)); then
    result[$name]="FAILED (not started: the ${budget} s budget ran out)"; detail[$name]=""; failed=$((failed + 1))
    echo "   ${result[$name]}"; return 0
  fi
  ((limit > left)) && limit=$left
  start=$(date +%s%N)
  timeout --kill-after=10 "$limit" bash -c "$(declare -f); run='$run' here='$here' log='$log' $fn" > "$log/$name.log" 2>&1
  rc=$?
  local took; took=$((($(date +%s%N) - start) / 100000000)); took="$((took / 10)).$((took % 10))"
  local last; last=$(grep -v -E '^\s*$|^-+$|ORTE_ERROR_LOG|MPI_ABORT|^NOTE: invoking|^You may or may not|^exactly when|^with errorcode|^in communicator' \
    "$log/$name.log" | tail -1 | cut -c1-110)
  if [[ $rc == 0 ]]; then result[$name]=passed; passed=$((passed + 1))
  elif [[ $rc == 124 || $rc == 137 ]]; then result[$name]="FAILED (timed out after ${limit} s)"; failed=$((failed + 1))
  else result[$name]="FAILED (exit $rc)"; failed=$((failed + 1)); fi
  detail[$name]="$took s  $last"
  echo "   ${result[$name]} in $took s: $last"
}

s_gpu() {
  nvidia-smi -L || exit 1
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  "$run" bash -c 'ldd bin/trellis-trainer-cuda | grep -E "nccl|cudnn|cublas|not found"; ! ldd bin/trellis-trainer-cuda | grep -q "not found"'
}
s_no_device() { CUDA_VISIBLE_DEVICES= "$run" bin/tst_cuda_no_device bin/trellis-trainer-cuda files/plans/quickstart-cuda.json; }
s_kernels() { "$run" bin/tst_cuda_kernels; }
s_bf16() { "$run" bin/tst_cuda_bf16; }
s_gpt() { "$run" bin/tst_gpt_cuda; }
s_conformance_1() { mpi -np 1 bin/tst_communicator_conformance_cuda nccl staged-cuda; }
s_conformance_2_staged() { mpi -np 2 bin/tst_communicator_conformance_cuda staged-cuda; }
s_conformance_2_nccl_hostid() {
  mpi -np 2 bash -c 'NCCL_HOSTID=trellis-verify-$OMPI_COMM_WORLD_RANK NCCL_DEBUG=WARN exec bin/tst_communicator_conformance_cuda nccl'
}
s_quickstart_fp32() {
  mpi -np 1 bin/trellis-trainer-cuda --plan files/plans/quickstart-cuda.json --dump-losses "$log/quickstart-cuda.losses" &&
    cmp losses "$log/quickstart-cuda.losses" "$here/unpacked/files/reference/quickstart-cuda.losses" 1e-3
}
s_quickstart_bf16() {
  mpi -np 1 bin/trellis-trainer-cuda --plan files/plans/quickstart-cuda-bf16.json --dump-losses "$log/quickstart-cuda-bf16.losses" &&
    cmp losses "$log/quickstart-cuda-bf16.losses" "$here/unpacked/files/reference/quickstart-cuda-bf16.losses" 3e-2 --final-only
}
parity() { # parity PRECISION LOSS_BOUND PARAM_BOUND
  local p=$1 bad=0
  mpi -np 1 bin/trellis-trainer-cuda --plan "files/plans/ref-$p.json" --dump-losses "$log/ref-$p.losses" \
    --dump-params "$log/ref-$p.params" || return 1
  for plan in "$here"/unpacked/files/plans/*-"$p".json; do
    local name; name=$(basename "$plan" .json)
    [[ $name == ref-* || $name == quickstart* ]] && continue
    echo "-- $name"
    if ! TRELLIS_SHARE_GPUS=1 mpi -np 2 bin/trellis-trainer-cuda --plan "files/plans/$name.json" \
        --dump-losses "$log/$name.losses" --dump-params "$log/$name.params" > "$log/$name.out" 2>&1; then
      tail -5 "$log/$name.out"; echo "$name: FAILED (the run)"; bad=1; continue
    fi
    cmp losses "$log/$name.losses" "$log/ref-$p.losses" "$2" || { echo "$name: FAILED (losses)"; bad=1; }
    [[ -n $3 ]] && { cmp params "$log/$name.params" "$log/ref-$p.params" "$3" || { echo "$name: FAILED (parameters)"; bad=1; }; }
  done
  [[ $bad == 0 ]] && echo "every layout within bounds"
  return $bad
}
s_parity_fp32() { parity fp32 1e-4 1e-4; }
s_parity_bf16() { parity bf16 5e-3 ""; }
pytorch() { # pytorch SCRIPT: a world-size-1 job under trellis-cli, its telemetry in a history
  local py; py=$(command -v python3)
  [[ -x /opt/torch/.venv/bin/python ]] && py=/opt/torch/.venv/bin/python
  "$py" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else "no CUDA in this PyTorch")' || return 1
  cat > "$log/$1.plan.json" <<PLAN
{"schema": "trellis.plan/1", "name": "verify $1",
 "own_trainer": {"command": ["$py", "$here/unpacked/files/examples/$1.py", "--steps", "30"], "env": {"PYTHONPATH": "$here/unpacked/site:$here/unpacked/files/python"}},
 "cluster": {"nodes": [{"host": "localhost", "slots": 1, "device": "cuda", "gpu_model": "H100-SXM"}]}}
PLAN
  "$run" bin/trellis-cli --db "$log/pytorch.sqlite" run "$log/$1.plan.json" || return 1
  "$run" bin/trellis-cli --db "$log/pytorch.sqlite" show last
}
s_pytorch_ddp() { pytorch train_ddp; }
s_pytorch_fsdp() { pytorch train_fsdp; }
s_bench() {
  local py; py=$(command -v python3); [[ -x /opt/torch/.venv/bin/python ]] && py=/opt/torch/.venv/bin/python
  timeout 150 "$run" bin/bench_gpu_gpt --precision bf16 --batch 32 --steps 8 | tee "$log/bench-trellis.txt" || return 1
  timeout 150 "$py" "$here/unpacked/files/bench/torch_gpt_gpu.py" --precision bf16 --compile --batch 32 --steps 10 | tee "$log/bench-torch.txt" || return 1
  grep -h '^RESULT' "$log"/bench-*.txt
}

[[ -f $here/pack.tar.xz ]] || { echo "verify.sh: no pack.tar.xz beside me: run  scripts/gpu/verify.sh prepare  on the build machine first" >&2; exit 2; }
"$run" true || exit 2 # unpack once, up front
echo "verify.sh on $(hostname), $(date -u +%FT%TZ); logs in $log"
step gpu 20 s_gpu
step no-device 40 s_no_device
step kernels 60 s_kernels
step bf16 60 s_bf16
step gpt 90 s_gpt
step conformance-1 40 s_conformance_1
step conformance-2-staged 40 s_conformance_2_staged
step conformance-2-nccl-hostid 40 s_conformance_2_nccl_hostid
step quickstart-fp32 40 s_quickstart_fp32
step quickstart-bf16 40 s_quickstart_bf16
step parity-fp32 120 s_parity_fp32
step parity-bf16 60 s_parity_bf16
step pytorch-ddp 60 s_pytorch_ddp
step pytorch-fsdp 60 s_pytorch_fsdp
step bench 200 s_bench
{
  echo
  printf '%-26s %-34s %s\n' step result "time, last line"
  for s in "${STEPS[@]}"; do
    [[ -n ${result[$s]:-} ]] && printf '%-26s %-34s %s\n' "$s" "${result[$s]}" "${detail[$s]}"
  done
  echo "$passed passed, $failed failed"
} | tee "$log/summary.txt"
[[ $failed == 0 ]]
