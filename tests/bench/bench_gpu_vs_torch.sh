#!/usr/bin/env bash
# GPT-2 124M on one GPU, trellis against PyTorch side by side in one invocation (issue #36): bf16
# at micro-batch 32 and 64, tokens/s, MFU and peak memory; trellis's per-op table (CUDA events) of
# one step at batch 32; torch.compile and eager; then a 1.1B llama (GQA) against torch.compile.
# Usage: tests/bench/bench_gpu_vs_torch.sh [OUT_DIR], with BENCH (the command that runs
# bench_gpu_gpt, e.g. "bash .gpu-carry/run.sh bin/bench_gpu_gpt" for a packed one) and PY (a Python
# with PyTorch and CUDA); BATCHES (default "32 64"), EAGER=0 (no PyTorch eager), LLAMA_TIMEOUT.
# Prints the RESULT lines and the per-op table; each log goes to OUT_DIR.
set -uo pipefail
out=${1:-.}
here=$(cd "$(dirname "$0")" && pwd)
BENCH=${BENCH:-bench_gpu_gpt}
PY=${PY:-python3}
BATCHES=${BATCHES:-32 64}
mkdir -p "$out"
for b in $BATCHES; do
  extra=(); [[ $b == 32 ]] && extra=(--op-table)
  timeout 240 $BENCH --precision bf16 --batch "$b" --steps 8 "${extra[@]}" > "$out/trellis_bf16_b$b.txt" 2>&1
  timeout 240 "$PY" "$here/torch_gpt_gpu.py" --precision bf16 --compile --batch "$b" --steps 10 > "$out/torch_compile_bf16_b$b.txt" 2>&1
done
[[ ${EAGER:-1} == 1 ]] &&
  timeout 120 "$PY" "$here/torch_gpt_gpu.py" --precision bf16 --batch 32 --steps 6 > "$out/torch_eager_bf16_b32.txt" 2>&1
# A llama of TinyLlama's shape (1.1B, GQA 32 over 4, sequence 2048), micro-batch 4.
timeout 240 $BENCH --model llama-1b --precision bf16 --batch 4 --steps 6 > "$out/trellis_llama_bf16_b4.txt" 2>&1
timeout ${LLAMA_TIMEOUT:-300} "$PY" "$here/torch_gpt_gpu.py" --model llama-1b --precision bf16 --compile --batch 4 --steps 8 > "$out/torch_llama_compile_bf16_b4.txt" 2>&1
grep -h "^RESULT" "$out"/*.txt
sed -n '/per-op time/,$p' "$out/trellis_bf16_b32.txt"
