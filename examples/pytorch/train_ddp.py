#!/usr/bin/env python3
"""A small GPT trained with DistributedDataParallel: a normal torchrun script (gloo on CPUs, NCCL on
GPUs) plus the three lines of Trellis marked below. It runs unchanged under torchrun, under
Trellis (`trellis-cli run --command`, or a plan with a `trainer` section),
or as one process:

    torchrun --nproc_per_node 4 train_ddp.py --steps 50          (Debian's torch 1.13 torchrun is broken on Python 3.11)
    trellis-cli run --command --ranks 4 -- python3 train_ddp.py --steps 50
    python3 train_ddp.py --steps 50

Checkpoints go to --checkpoint-dir (Trellis gives TRELLIS_CHECKPOINT_DIR) every --checkpoint-every
steps; a restarted script resumes from the newest. The data of a step does not depend on the
world size or on restarts (tiny_gpt.batch_for), so every way of running it trains the same model.
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tiny_gpt import TinyGPT, batch_for  # noqa: E402

import trellis_telemetry  # Trellis (1/3)

HERE = os.path.dirname(os.path.abspath(__file__))


def arguments():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--batch", type=int, default=8, help="sequences per rank and step")
    p.add_argument("--seq-len", type=int, default=64)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--data", default=os.path.join(HERE, "..", "..", "resources", "corpus", "licenses.txt"))
    p.add_argument("--backend", choices=["gloo", "nccl"], help="default: nccl with CUDA, else gloo")
    p.add_argument("--checkpoint-dir", default=os.environ.get("TRELLIS_CHECKPOINT_DIR"))
    p.add_argument("--checkpoint-every", type=int, default=10)
    p.add_argument("--losses", help="rank 0 writes 'step loss' lines here")
    p.add_argument("--step-delay-ms", type=float, default=0, help="sleep this long in every forward (a demo of a slow rank)")
    p.add_argument("--delay-rank", type=int, default=-1, help="the rank --step-delay-ms applies to (-1: all)")
    return p.parse_args()


def main():
    a = arguments()
    run = trellis_telemetry.init()  # Trellis (2/3): a no-op outside Trellis
    rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    cuda = torch.cuda.is_available() and a.backend != "gloo"
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0))) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    if world > 1:
        dist.init_process_group(a.backend or ("nccl" if cuda else "gloo"))
    torch.manual_seed(1234)
    data = torch.tensor(bytearray(open(a.data, "rb").read()), dtype=torch.uint8)
    model = TinyGPT(seq_len=a.seq_len, hidden=a.hidden, layers=a.layers).to(device)
    ddp = DDP(model) if world > 1 else model
    opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.1, betas=(0.9, 0.95))

    first = 1
    ckpt = os.path.join(a.checkpoint_dir, "checkpoint.pt") if a.checkpoint_dir else None
    if ckpt and os.path.exists(ckpt):
        state = torch.load(ckpt, map_location=device)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        first = state["step"] + 1
        if rank == 0:
            print(f"resumed from step {state['step']} ({ckpt})", flush=True)

    losses = open(a.losses, "a" if first > 1 else "w") if a.losses and rank == 0 else None
    for step in range(first, a.steps + 1):
        x, y = batch_for(data, step, a.batch * world, a.seq_len, rank, a.batch)
        x, y = x.to(device), y.to(device)
        loss = ddp(x, y)
        if a.step_delay_ms > 0 and a.delay_rank in (-1, rank):
            time.sleep(a.step_delay_ms / 1000)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        mean = loss.detach().clone()
        if world > 1:
            dist.all_reduce(mean)
            mean /= world
        run.step(step, loss=mean, tokens=x.numel(), lr=a.lr, total_steps=a.steps)  # Trellis (3/3)
        if losses:
            losses.write(f"{step} {mean.item():.9g}\n")
            losses.flush()
        if ckpt and step % a.checkpoint_every == 0:
            if rank == 0:
                os.makedirs(a.checkpoint_dir, exist_ok=True)
                torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step}, ckpt + ".tmp")
                os.replace(ckpt + ".tmp", ckpt)  # a crash mid-write leaves the previous checkpoint whole
                run.event("checkpoint", f"saved step {step}", step=step)  # optional: the run's history shows it
            if world > 1:
                dist.barrier()
    if world > 1:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
