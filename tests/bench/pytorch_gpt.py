#!/usr/bin/env python3
"""Baseline for the trainer benchmark: the same GPT-2-style decoder as trellis-trainer (pre-LN,
biases, learned positions, tanh GELU, LM head tied to the token embedding), the same batch and
AdamW, in PyTorch on the CPU with a fixed thread count. Prints the mean step time (ms) and tokens/s
over the steps after warm-up, and their median step time. Uses Debian's python3-torch (or PyTorch from PyPI if that is what is
installed); prints which version ran. --bf16: the forward under torch.autocast('cpu', bfloat16) (its
linear layers and matmuls in bf16, softmax/norms/loss in fp32 as autocast decides), the optimizer in
fp32."""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, c, heads, ffn):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(c)
        self.qkv = nn.Linear(c, 3 * c)
        self.proj = nn.Linear(c, c)
        self.ln2 = nn.LayerNorm(c)
        self.fc = nn.Linear(c, ffn)
        self.fc_proj = nn.Linear(ffn, c)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        shape = (b, t, self.heads, c // self.heads)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        mask = torch.ones(t, t, dtype=torch.bool).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        x = x + self.proj(y)
        return x + self.fc_proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Gpt(nn.Module):
    def __init__(self, vocab, seq, layers, c, heads, ffn):
        super().__init__()
        self.wte = nn.Embedding(vocab, c)
        self.wpe = nn.Embedding(seq, c)
        self.blocks = nn.ModuleList(Block(c, heads, ffn) for _ in range(layers))
        self.lnf = nn.LayerNorm(c)

    def forward(self, idx, targets):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t))
        for block in self.blocks:
            x = block(x)
        logits = self.lnf(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--ffn", type=int, default=512)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--batch", type=int, default=4)
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--bf16", action="store_true", help="forward and loss under torch.autocast('cpu', bfloat16)")
    a = p.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(a.threads)
    model = Gpt(a.vocab, a.seq, a.layers, a.hidden, a.heads, a.ffn)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
    times = []
    for step in range(a.steps):
        idx = torch.randint(0, a.vocab, (a.batch, a.seq))
        tgt = torch.randint(0, a.vocab, (a.batch, a.seq))
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=a.bf16):
            loss = model(idx, tgt)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        times.append(time.perf_counter() - start)
    measured = sorted(times[a.warmup:])
    ms = 1000 * sum(measured) / len(measured)
    n = len(measured)
    median = 1000 * (measured[n // 2] if n % 2 else (measured[n // 2 - 1] + measured[n // 2]) / 2)
    print(f"pytorch {torch.__version__} {'bf16 autocast' if a.bf16 else 'fp32'} threads {a.threads}: {ms:.2f} ms/step, {a.batch * a.seq / ms * 1000:.0f} tokens/s"
          f" (mean of steps {a.warmup + 1}-{a.steps}; median {median:.2f} ms)")


if __name__ == "__main__":
    main()
