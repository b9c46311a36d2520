#!/usr/bin/env python3
"""The tiny GPT of train_ddp.py trained with FullyShardedDataParallel (FSDP) over NCCL, one GPU per
rank (the GPU of LOCAL_RANK), with the same three lines of Trellis marked below.

NOT RUN ON A GPU YET: this script was written on a machine without a GPU and checked only there (it
compiles, and without CUDA it exits at once with status 1, saying why). It has not trained a step.

    python3 -m torch.distributed.run --nproc_per_node 2 train_fsdp.py --steps 50
    trellis-cli run --command --ranks 2 -- python3 train_fsdp.py --steps 50

It needs CUDA and a PyTorch whose FSDP imports (1.13 or 2.x built for your Python): Debian 12's
python3-torch 1.13 has no CUDA, and its torch.distributed.fsdp does not even import under Python
3.11. On CPUs use train_ddp.py.

Each transformer block is an FSDP unit of its own (transformer_auto_wrap_policy), the embeddings
and the final norm the root unit. Checkpoints are FSDP's full state dict, gathered on rank 0
(FullStateDictConfig(offload_to_cpu=True, rank0_only=True)) with the full optimizer state
(FSDP.full_optim_state_dict), written by rank 0 to --checkpoint-dir (Trellis gives
TRELLIS_CHECKPOINT_DIR) every --checkpoint-every steps. A restarted script loads the model state
into the plain model before FSDP wraps it, and shards the optimizer state with
FSDP.shard_full_optim_state_dict, so every rank must see the checkpoint folder (one machine, or a
shared filesystem); ranks that find different checkpoints stop, saying so. Torch 2.x still has the
full_optim_state_dict / shard_full_optim_state_dict pair (1.13's API), deprecated there in favour of
FSDP.optim_state_dict, so it may warn.

What Trellis sees: the step reports (loss, tokens, step time, CUDA's peak memory), heartbeats,
the checkpoint events and the loss's all_reduce. Whether FSDP's own all-gathers and
reduce-scatters are tracked as well is unverified: trellis_telemetry wraps the torch.distributed
functions FSDP calls (_all_gather_base and _reduce_scatter_base in 1.13, all_gather_into_tensor and
reduce_scatter_tensor in 2.x), but no FSDP run has been watched, and NCCL returns from a call once
it is queued, so the host times would measure the queueing (trellis_telemetry.init(cuda_events=True)
adds GPU-timed spans for run.phase() blocks; also untested).
"""
import argparse
import functools
import os
import sys

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tiny_gpt import Block, TinyGPT, batch_for  # noqa: E402

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
    p.add_argument("--checkpoint-dir", default=os.environ.get("TRELLIS_CHECKPOINT_DIR"))
    p.add_argument("--checkpoint-every", type=int, default=10)
    p.add_argument("--losses", help="rank 0 writes 'step loss' lines here")
    return p.parse_args()


def fail(text):
    print("train_fsdp.py: " + text, file=sys.stderr, flush=True)
    run = trellis_telemetry.current()
    if run is not None:
        run.close(1, text)  # atexit would report exit code 0: it cannot see sys.exit's
    sys.exit(1)


def fsdp_api():
    """FSDP's classes, or a clear exit: the import fails on torch builds whose FSDP does not load."""
    try:
        from torch.distributed.fsdp import FullStateDictConfig, StateDictType
        from torch.distributed.fsdp import FullyShardedDataParallel as FSDP
        from torch.distributed.fsdp.wrap import transformer_auto_wrap_policy
    except Exception as e:  # Debian's torch 1.13 under Python 3.11: a ValueError from a dataclass
        fail("torch %s cannot import torch.distributed.fsdp (%s: %s); install a PyTorch with CUDA built for "
             "this Python, or use train_ddp.py" % (torch.__version__, type(e).__name__, e))
    return FSDP, FullStateDictConfig, StateDictType, transformer_auto_wrap_policy


def main():
    a = arguments()
    # At once, before anything else: FSDP over NCCL needs a GPU per rank.
    if not torch.cuda.is_available():
        fail("FullyShardedDataParallel over NCCL needs CUDA and one GPU per rank, and torch %s sees no CUDA "
             "device. On CPUs use train_ddp.py (DDP over gloo)." % torch.__version__)
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    if local_rank >= torch.cuda.device_count():
        fail("LOCAL_RANK %d, but this machine has %d GPU(s): start at most one rank per GPU"
             % (local_rank, torch.cuda.device_count()))
    FSDP, FullStateDictConfig, StateDictType, transformer_auto_wrap_policy = fsdp_api()

    run = trellis_telemetry.init()  # Trellis (2/3): a no-op outside Trellis
    rank, world = int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    device = torch.device("cuda", local_rank)
    torch.cuda.set_device(device)
    # FSDP needs a process group even for one rank (torchrun-style variables; one process alone
    # gets them here).
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29500")
    dist.init_process_group("nccl", rank=rank, world_size=world)

    ckpt = os.path.join(a.checkpoint_dir, "checkpoint.pt") if a.checkpoint_dir else None
    state = torch.load(ckpt, map_location="cpu") if ckpt and os.path.exists(ckpt) else None
    found = int(state["step"]) if state is not None else 0
    steps = torch.tensor([found, -found], dtype=torch.int64, device=device)
    dist.all_reduce(steps, op=dist.ReduceOp.MAX)
    if steps[0].item() != -steps[1].item():
        fail("rank %d found the checkpoint of step %d, but the ranks disagree (newest %d, oldest %d): every rank "
             "must see the same checkpoint folder (%s)" % (rank, found, steps[0].item(), -steps[1].item(), a.checkpoint_dir))

    torch.manual_seed(1234)
    data = torch.tensor(bytearray(open(a.data, "rb").read()), dtype=torch.uint8)
    model = TinyGPT(seq_len=a.seq_len, hidden=a.hidden, layers=a.layers)
    if state is not None:
        model.load_state_dict(state["model"])  # the full state dict, into the model before it is sharded
    policy = functools.partial(transformer_auto_wrap_policy, transformer_layer_cls={Block})
    fsdp = FSDP(model.to(device), auto_wrap_policy=policy, device_id=device)
    opt = torch.optim.AdamW(fsdp.parameters(), lr=a.lr, weight_decay=0.1, betas=(0.9, 0.95))
    first = 1
    if state is not None:
        opt.load_state_dict(FSDP.shard_full_optim_state_dict(state["optimizer"], fsdp, optim=opt))
        first = state["step"] + 1
        if rank == 0:
            print(f"resumed from step {state['step']} ({ckpt})", flush=True)
        state = None

    full = FullStateDictConfig(offload_to_cpu=True, rank0_only=True)
    losses = open(a.losses, "a" if first > 1 else "w") if a.losses and rank == 0 else None
    for step in range(first, a.steps + 1):
        x, y = batch_for(data, step, a.batch * world, a.seq_len, rank, a.batch)
        x, y = x.to(device), y.to(device)
        loss = fsdp(x, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        mean = mean.item() / world  # a float: step() then needs no CUDA synchronisation of its own
        run.step(step, loss=mean, tokens=x.numel(), lr=a.lr, total_steps=a.steps)  # Trellis (3/3)
        if losses:
            losses.write(f"{step} {mean:.9g}\n")
            losses.flush()
        if ckpt and step % a.checkpoint_every == 0:
            # Both gathers are collectives: every rank takes part, rank 0 receives.
            with FSDP.state_dict_type(fsdp, StateDictType.FULL_STATE_DICT, full):
                model_state = fsdp.state_dict()
            optim_state = FSDP.full_optim_state_dict(fsdp, opt)
            if rank == 0:
                os.makedirs(a.checkpoint_dir, exist_ok=True)
                torch.save({"model": model_state, "optimizer": optim_state, "step": step}, ckpt + ".tmp")
                os.replace(ckpt + ".tmp", ckpt)  # a crash mid-write leaves the previous checkpoint whole
                run.checkpoint_saved(step)  # optional: the run's history shows it
            del model_state, optim_state
            dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
