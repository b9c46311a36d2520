#!/usr/bin/env python3
"""GPU baseline for bench_gpu_gpt: GPT-2 124M (vocabulary 50304, sequence 1024, pre-LN, biases,
learned positions, tanh GELU, tied head), or with --model llama-1b a llama of TinyLlama's shape, in PyTorch, the same batch and AdamW (fused), as a user
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


def rotate(x, cos, sin):
    """Rotary embedding as trellis applies it: the head's first half and second half paired."""
    h = x.shape[-1] // 2
    x1, x2 = x[..., :h], x[..., h:]
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, c, heads, kv, ffn):
        super().__init__()
        self.heads, self.kv, self.hs = heads, kv, c // heads
        self.n1, self.n2 = nn.RMSNorm(c, eps=1e-5), nn.RMSNorm(c, eps=1e-5)
        self.qkv = nn.Linear(c, c + 2 * kv * self.hs, bias=False)
        self.proj = nn.Linear(c, c, bias=False)
        self.gate_up = nn.Linear(c, 2 * ffn, bias=False)
        self.down = nn.Linear(ffn, c, bias=False)

    def forward(self, x, cos, sin):
        b, t, c = x.shape
        q, k, v = self.qkv(self.n1(x)).split([c, self.kv * self.hs, self.kv * self.hs], dim=2)
        q = rotate(q.view(b, t, self.heads, self.hs).transpose(1, 2), cos, sin)
        k = rotate(k.view(b, t, self.kv, self.hs).transpose(1, 2), cos, sin)
        v = v.view(b, t, self.kv, self.hs).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        g, u = self.gate_up(self.n2(x)).chunk(2, dim=-1)
        return x + self.down(F.silu(g) * u)


class Llama(nn.Module):
    """A llama of TinyLlama's shape (1.1B): RMSNorm, rotary positions, grouped-query attention
    (32 heads over 4), SwiGLU, untied head."""

    def __init__(self, vocab=32000, seq=2048, layers=22, c=2048, heads=32, kv=4, ffn=5632):
        super().__init__()
        self.wte = nn.Embedding(vocab, c)
        self.blocks = nn.ModuleList(LlamaBlock(c, heads, kv, ffn) for _ in range(layers))
        self.norm = nn.RMSNorm(c, eps=1e-5)
        self.head = nn.Linear(c, vocab, bias=False)
        hs = c // heads
        inv = 1.0 / (10000.0 ** (torch.arange(0, hs // 2, dtype=torch.float32) * 2 / hs))
        ang = torch.outer(torch.arange(seq, dtype=torch.float32), inv)
        self.register_buffer("cos", ang.cos(), persistent=False)
        self.register_buffer("sin", ang.sin(), persistent=False)

    def forward(self, idx, targets):
        t = idx.shape[1]
        x = self.wte(idx)
        cos, sin = self.cos[:t].to(x.dtype), self.sin[:t].to(x.dtype)
        for b in self.blocks:
            x = b(x, cos, sin)
        logits = self.head(self.norm(x))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))


SHAPES = {  # model: (class, vocab, T, layers, C)
    "gpt2-124m": (Gpt, 50304, 1024, 12, 768),
    "llama-1b": (Llama, 32000, 2048, 22, 2048),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--precision", choices=["fp32", "tf32", "bf16"], default="fp32")
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--model", choices=sorted(SHAPES), default="gpt2-124m")
    a = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = a.precision == "tf32"
    torch.backends.cudnn.allow_tf32 = a.precision == "tf32"
    torch.manual_seed(1)
    dev = "cuda"
    cls, vocab, T, layers, width = SHAPES[a.model]
    model = cls().to(dev)
    n = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1, fused=True)
    step_fn = model
    if a.compile:
        step_fn = torch.compile(model)
    idx = torch.randint(0, min(vocab, 50257), (a.batch, T), device=dev)
    tgt = torch.randint(0, min(vocab, 50257), (a.batch, T), device=dev)
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
    flops = (6 * n + 12 * layers * width * T) * tps
    peak = {"fp32": 66.9e12, "tf32": 494.7e12, "bf16": 989.4e12}[a.precision]
    mode = "compile" if a.compile else "eager"
    print(f"RESULT torch {torch.__version__} {a.model} {mode} {a.precision} batch {a.batch}: {ms:.1f} ms/step, {tps:.0f} tokens/s, "
          f"{flops / 1e12:.1f} TFLOP/s, MFU {100 * flops / peak:.1f}% of {peak / 1e12:.0f} TFLOP/s, "
          f"peak memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB", flush=True)


if __name__ == "__main__":
    main()
