#!/usr/bin/env python3
"""GPU baseline for bench_gpu_gpt: GPT-2 124M (vocabulary 50304, sequence 1024, pre-LN, biases,
learned positions, tanh GELU, tied head) in PyTorch, the same batch and AdamW (fused), as a user
would write it: F.scaled_dot_product_attention (flash attention), optionally torch.compile.
Modes: --precision fp32 (TF32 off), tf32, bf16 (autocast, fp32 master weights). Prints one RESULT
line: ms/step, tokens/s, MFU against the device's dense peak for that math, peak memory."""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(c), nn.LayerNorm(c)
        self.qkv, self.proj = nn.Linear(c, 3 * c), nn.Linear(c, c)
        self.fc, self.fc_proj = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.proj(y)
        return x + self.fc_proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, vocab=50304, seq=1024, layers=12, c=768, heads=12):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, c), nn.Embedding(seq, c)
        self.blocks = nn.ModuleList(Block(c, heads) for _ in range(layers))
        self.lnf = nn.LayerNorm(c)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for b in self.blocks:
            x = b(x)
        logits = self.lnf(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--precision", choices=["fp32", "tf32", "bf16"], default="fp32")
    ap.add_argument("--compile", action="store_true")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = a.precision == "tf32"
    torch.backends.cudnn.allow_tf32 = a.precision == "tf32"
    torch.manual_seed(1)
    dev = "cuda"
    model = Gpt().to(dev)
    n = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    step_fn = model
    if a.compile:
        step_fn = torch.compile(model)
    T = 1024
    idx = torch.randint(0, 50257, (a.batch, T), device=dev)
    tgt = torch.randint(0, 50257, (a.batch, T), device=dev)
    times = []
    for s in range(a.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=a.precision == "bf16"):
            loss = step_fn(idx, tgt)
        loss.backward()
        opt.step()
        torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1000
        print(f"step {s:2d} loss {loss.item():.4f} {ms:.1f} ms", flush=True)
        if s >= 2:
            times.append(ms)
    ms = sum(times) / max(1, len(times))
    tps = a.batch * T / (ms / 1000)
    flops = (6 * n + 12 * 12 * 768 * T) * tps
    peak = {"fp32": 66.9e12, "tf32": 494.7e12, "bf16": 989.4e12}[a.precision]
    mode = "compile" if a.compile else "eager"
    print(f"RESULT torch {torch.__version__} {mode} {a.precision} batch {a.batch}: {ms:.1f} ms/step, {tps:.0f} tokens/s, "
          f"{flops / 1e12:.1f} TFLOP/s, MFU {100 * flops / peak:.1f}% of {peak / 1e12:.0f} TFLOP/s, "
          f"peak memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB", flush=True)


if __name__ == "__main__":
    main()
