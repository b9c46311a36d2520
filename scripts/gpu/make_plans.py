#!/usr/bin/env python3
"""Writes the GPU parity plans verify.sh runs (docs/gpu.md): one small GPT trained on the GPU for 6
steps with clipping off, once on a single rank (the reference) and once under each parallel layout
at 2 ranks sharing the GPU (the staged communicator), in fp32 and bf16; and the CPU twins of the
GPU quick starts, whose losses the GPU's are compared with.
Usage: make_plans.py OUT_DIR CORPUS"""
import copy
import json
import os
import sys

if len(sys.argv) != 3 or sys.argv[1] in ("-h", "--help"):
    print(__doc__)
    sys.exit(0 if len(sys.argv) > 1 and sys.argv[1] in ("-h", "--help") else 2)
out, corpus = sys.argv[1], os.path.abspath(sys.argv[2])
os.makedirs(out, exist_ok=True)

MODEL = {"layers": 4, "hidden": 64, "heads": 4, "ffn": 128, "seq_len": 64, "vocab": 256, "init_std": 0.02}
# Layouts over 2 ranks, each with the global batch of the reference (micro-batch 2, 4 of them).
LAYOUTS = {
    "dp2": {"dp": 2, "micro_batches": 2},
    "dp2-zero1": {"dp": 2, "micro_batches": 2, "zero": 1},
    "dp2-zero3": {"dp": 2, "micro_batches": 2, "zero": 3},
    "tp2": {"tp": 2},
    "tp2-sp": {"tp": 2, "sequence_parallel": True},
    "pp2-gpipe": {"pp": 2, "schedule": "gpipe"},
    "pp2-1f1b": {"pp": 2, "schedule": "1f1b"},
    "cp2": {"cp": 2},
    "dp2-recompute": {"dp": 2, "micro_batches": 2, "recompute": "full"},
}


def plan(name, ranks, parallel, precision):
    p = {"dp": 1, "micro_batch_size": 2, "micro_batches": 4, "precision": precision}
    p.update(parallel)
    return {
        "schema": "trellis.plan/1", "name": name, "model": MODEL,
        "cluster": {"nodes": [{"host": "localhost", "slots": ranks, "device": "cuda", "gpu_model": "H100-SXM"}]},
        "parallel": p,
        "training": {"steps": 6, "lr": 0.003, "min_lr": 0.0003, "warmup_steps": 1, "seed": 7, "grad_clip": 0,
                     "data": {"source": "text", "path": corpus}},
    }


def write(name, body):
    with open(os.path.join(out, name + ".json"), "w") as f:
        json.dump(body, f, indent=1)


for precision in ("fp32", "bf16"):
    write("ref-" + precision, plan("ref-" + precision, 1, {}, precision))
    for layout, parallel in LAYOUTS.items():
        if precision == "bf16" and layout not in ("dp2", "tp2-sp", "pp2-1f1b", "dp2-zero3"):
            continue
        write(layout + "-" + precision, plan(layout + "-" + precision, 2, parallel, precision))

# The GPU quick starts and their CPU twins (same plan, the CPU device).
here = os.path.dirname(os.path.abspath(__file__))
plans = os.path.join(here, "..", "..", "resources", "plans", "gpu")
for name in ("quickstart-cuda", "quickstart-cuda-bf16"):
    with open(os.path.join(plans, name + ".json")) as f:
        gpu = json.load(f)
    gpu["training"]["data"]["path"] = corpus
    write(name, gpu)
    cpu = copy.deepcopy(gpu)
    for node in cpu["cluster"]["nodes"]:
        node.pop("device", None)
        node.pop("gpu_model", None)
    write(name + "-cpu", cpu)
