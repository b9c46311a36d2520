#!/usr/bin/env python3
"""A rank of a job with its own trainer, for the launch targets' tests (ssh, slurm): writes what
it was given (torchrun's variables, the telemetry's, its host and folder) to OUT_DIR/rank-<RANK>.json
and reports STEPS steps through trellis_telemetry. No torch.distributed: the targets' tests check the
launch, not a framework.

usage: report_rank.py OUT_DIR [STEPS]"""
import json
import os
import socket
import sys
import time

import trellis_telemetry

out_dir, steps = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 5
run = trellis_telemetry.init(track_collectives=False)
names = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "TRELLIS_RUN_ID",
         "TRELLIS_TELEMETRY_ENDPOINT", "TRELLIS_TELEMETRY_KEYS", "TRELLIS_RESTART_COUNT", "TRELLIS_CHECKPOINT_DIR",
         "TRELLIS_RELAY_NAME", "TRELLIS_RELAY_UPSTREAM", "TRELLIS_RELAY_UPSTREAM_KEYS")
seen = {n: os.environ.get(n) for n in names}
seen.update(host=socket.gethostname(), cwd=os.getcwd(), active=run.active)
for step in range(1, steps + 1):
    time.sleep(0.05)
    run.step(step, loss=1.0 / step, tokens=64, total_steps=steps)
os.makedirs(out_dir, exist_ok=True)
with open(os.path.join(out_dir, f"rank-{seen['RANK']}.json"), "w") as f:
    json.dump(seen, f)
run.close(0)
