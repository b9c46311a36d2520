"""One rank of test_collectives' 2-process gloo run (RANK, WORLD_SIZE, MASTER_* and TRELLIS_* set by
the test). Writes what it checked locally as JSON to argv[1]; the test reads the rest from its fake
supervisor.

Step 1: a synchronous all_reduce (1000 float32), an asynchronous one (256 float64, waited), a
        send/recv of 10 float32 and an all_gather_object.
Step 2: rank 1 spends 1.2 s in "forward" before an all_reduce of 100 float32 that rank 0 waits in.
Step 3: DDP of a tiny model built with tracking on (the trampoline hook) — gradients compared with a
        DDP built while tracking was off.
Step 4: DDP with a hook the user registers (wrapped by the trampoline: still called, still tracked).
Step 5: DDP with the built-in ALLREDUCE hook (mapped to the Python default hook, tracked).
"""

import copy
import json
import sys
import time

import torch
import torch.distributed as dist
from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
from torch.nn.parallel import DistributedDataParallel as DDP

import trellis_telemetry
from trellis_telemetry import _collectives


def grads(model):
    return [p.grad.detach().clone() for p in model.parameters()]


def backward(model, x):
    model(x).pow(2).sum().backward()
    return grads(model)


def main():
    out = {}
    run = trellis_telemetry.init()
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.set_num_threads(1)

    # step 1
    t = torch.full((1000,), float(rank + 1))
    dist.all_reduce(t)
    out["all_reduce_sum"] = t[0].item()
    work = dist.all_reduce(torch.ones(256, dtype=torch.float64), async_op=True)
    out["async_proxy"] = type(work).__name__
    work.wait()
    if rank == 0:
        dist.send(torch.ones(10), 1)
    else:
        dist.recv(torch.zeros(10), 0)
    objects = [None, None]
    dist.all_gather_object(objects, {"rank": rank})
    out["objects"] = objects
    run.step(1)

    # step 2
    if rank == 1:
        with run.phase("forward"):
            time.sleep(1.2)
    with run.phase("comm_wait"):
        dist.all_reduce(torch.ones(100))
    run.step(2)

    # step 3
    torch.manual_seed(0)
    base = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.Tanh(), torch.nn.Linear(4, 2))
    x = torch.randn(16, 8, generator=torch.Generator().manual_seed(100 + rank))
    _collectives._tracker.enabled = False  # the reference: DDP as it is without trellis_telemetry
    reference_model = DDP(copy.deepcopy(base))
    _collectives._tracker.enabled = True
    out["reference_has_trampoline"] = "_trellis_hook" in reference_model.__dict__
    reference = backward(reference_model, x)
    tracked_model = DDP(copy.deepcopy(base))
    out["tracked_has_trampoline"] = "_trellis_hook" in tracked_model.__dict__
    tracked = backward(tracked_model, x)
    out["tracked_grads_equal"] = all(torch.equal(a, b) for a, b in zip(reference, tracked))
    out["tracked_grads_close"] = all(torch.allclose(a, b, rtol=1e-6, atol=1e-7) for a, b in zip(reference, tracked))
    run.step(3)

    # step 4
    calls = []

    def user_hook(state, bucket):
        calls.append(bucket.buffer().numel())
        return default_hooks.allreduce_hook(state, bucket)

    user_model = DDP(copy.deepcopy(base))
    user_model.register_comm_hook(None, user_hook)
    try:
        user_model.register_comm_hook(None, user_hook)
        out["second_hook_refused"] = False
    except RuntimeError:
        out["second_hook_refused"] = True
    user = backward(user_model, x)
    out["user_hook_calls"] = calls
    out["user_grads_equal"] = all(torch.equal(a, b) for a, b in zip(reference, user))
    out["user_grads_close"] = all(torch.allclose(a, b, rtol=1e-6, atol=1e-7) for a, b in zip(reference, user))
    out["parameters"] = sum(p.numel() for p in base.parameters())
    run.step(4)

    # step 5: a built-in hook (C++ in DDP) becomes its Python equivalent behind the trampoline
    builtin_model = DDP(copy.deepcopy(base))
    builtin_model._register_builtin_comm_hook(dist.BuiltinCommHookType.ALLREDUCE)
    builtin = backward(builtin_model, x)
    out["builtin_grads_equal"] = all(torch.equal(a, b) for a, b in zip(reference, builtin))
    out["builtin_inner_hook"] = builtin_model.__dict__["_trellis_hook"].hook.__name__
    run.step(5)

    dist.barrier()
    out["stats"] = run.stats()
    run.close()
    dist.destroy_process_group()
    with open(sys.argv[1], "w") as f:
        json.dump(out, f)


if __name__ == "__main__":
    main()
