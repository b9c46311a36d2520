#!/usr/bin/env python3
"""A job with process groups of its own (the way FSDP's or tensor parallelism's groups are made):
four ranks in two pairs, {0, 1} and {2, 3}, each step an all_reduce in its pair only. Rank
--hold-rank stays in its forward for --hold-s seconds at step --hold-step, so that its partner waits
in the pair's all_reduce: only the members the client sends with the wait let the supervisor name
the holder (no plan names these groups).

usage: pair_groups.py [--steps N] [--hold-rank R] [--hold-step S] [--hold-s SECONDS]"""
import argparse
import os
import time

import torch
import torch.distributed as dist

import trellis_telemetry

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=12)
p.add_argument("--hold-rank", type=int, default=1)
p.add_argument("--hold-step", type=int, default=4)
p.add_argument("--hold-s", type=float, default=5.0)
a = p.parse_args()

run = trellis_telemetry.init()
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
pairs = [dist.new_group([0, 1]), dist.new_group([2, 3])]  # every rank makes every group, as torch asks
mine = pairs[rank // 2]
value = torch.ones(1024)
for step in range(1, a.steps + 1):
    with run.phase("forward"):
        time.sleep(0.02)
        if rank == a.hold_rank and step == a.hold_step:
            time.sleep(a.hold_s)
    dist.all_reduce(value, group=mine)
    value /= 2
    run.step(step, loss=float(value[0]), tokens=64, total_steps=a.steps)
dist.barrier()
run.close(0)
dist.destroy_process_group()
