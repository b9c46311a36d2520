"""Trellis against Hugging Face transformers (ctest label interop), fp32 on the CPU.

For a small random GPT-2 and a small random Llama with grouped-query attention:
  (b) weights saved by transformers (save_pretrained, safetensors) start a trellis-trainer run
      (training.init.from): its first step's loss equals the transformers model's on the same
      batch, and every pre-clip gradient (dumped in transformers' layout) equals PyTorch autograd's;
  (a) a checkpoint written by a multi-rank run (tp 2) exported with trellis-trainer --export-model
      loads into transformers with no missing or unexpected tensor (checked with the safetensors
      package too) and gives the loss trellis-trainer computes when it resumes from that checkpoint;
  (c) a bf16 run's checkpoint exports as bf16 (its fp32 masters rounded to nearest even, the weights
      its model computed with): transformers loads every tensor as bfloat16, bit for bit the file's
      and bit for bit the same checkpoint exported as fp32 then rounded by torch;
  and a c_proj / o_proj weight transposed on purpose (a square matrix, so the shapes still fit)
      makes the losses differ: the comparison can fail.
Usage: hf_reference.py TRELLIS_TRAINER CORPUS
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from safetensors.numpy import load_file
from transformers import GPT2Config, GPT2LMHeadModel, LlamaConfig, LlamaForCausalLM

TRAINER, CORPUS = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
B, T, V, C, L, H, F = 2, 32, 256, 32, 2, 4, 64
LOSS_BOUND = 2e-6   # relative: the same fp32 arithmetic in another order
GRAD_BOUND = 2e-5   # relative L2 per tensor
failures = []
CHECKS = []


def check(what, ok, detail):
    print(("ok   " if ok else "FAIL ") + what + ": " + detail, flush=True)
    CHECKS.append(what)
    if not ok:
        failures.append(what)


def model_json(arch):
    m = {"arch": arch, "layers": L, "hidden": C, "heads": H, "ffn": F, "seq_len": T, "vocab": V}
    if arch == "llama":
        m["kv_heads"] = 2
    return m


def write_plan(path, arch, ranks, parallel, extra_training):
    training = {"steps": 1, "lr": 0.001, "min_lr": 0.0001, "warmup_steps": 0, "seed": 5, "grad_clip": 0,
                "data": {"source": "text", "path": CORPUS}}
    training.update(extra_training)
    plan = {"schema": "trellis.plan/1", "name": "hf-" + arch, "model": model_json(arch),
            "cluster": {"nodes": [{"host": "localhost", "slots": ranks}]},
            "parallel": dict({"micro_batch_size": B, "micro_batches": 1}, **parallel), "training": training}
    with open(path, "w") as f:
        json.dump(plan, f)


def trainer(ranks, args):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OPENBLAS_NUM_THREADS="1")
    cmd = ["mpirun", "-np", str(ranks), "--oversubscribe", "--allow-run-as-root", "--mca",
           "btl_vader_single_copy_mechanism", "none", TRAINER, "--quiet"] + args
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        raise SystemExit("trellis-trainer failed (%d): %s\n%s" % (r.returncode, " ".join(cmd), r.stdout + r.stderr))
    return r


def read_batch(path):
    raw = np.fromfile(path, dtype=np.int32)
    tokens, targets = raw[: B * T].reshape(B, T), raw[B * T:].reshape(B, T)
    return torch.from_numpy(tokens.astype(np.int64)), torch.from_numpy(targets.astype(np.int64))


def hf_model(arch):
    torch.manual_seed(1 if arch == "gpt" else 2)
    if arch == "gpt":
        cfg = GPT2Config(vocab_size=V, n_positions=T, n_embd=C, n_layer=L, n_head=H, n_inner=F, activation_function="gelu_new",
                         resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, layer_norm_epsilon=1e-5)
        model = GPT2LMHeadModel(cfg)
    else:
        cfg = LlamaConfig(vocab_size=V, hidden_size=C, intermediate_size=F, num_hidden_layers=L, num_attention_heads=H,
                          num_key_value_heads=2, max_position_embeddings=T, rms_norm_eps=1e-5, rope_theta=10000.0,
                          tie_word_embeddings=False)
        model = LlamaForCausalLM(cfg)
    with torch.no_grad():  # off the initialisation's special points (zero biases, unit gains)
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    return model.float().eval()


def hf_loss(model, tokens, targets):
    logits = model(tokens).logits
    return torch.nn.functional.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))


def relative(a, b):
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


def import_check(arch, work):
    model = hf_model(arch)
    src = os.path.join(work, arch + "-hf")
    model.save_pretrained(src, safe_serialization=True)
    plan = os.path.join(work, arch + "-import.json")
    write_plan(plan, arch, 1, {"dp": 1}, {"init": {"from": src}})
    batch, losses, grads = (os.path.join(work, arch + n) for n in ("-batch.bin", "-loss.bin", "-grads.safetensors"))
    trainer(1, ["--plan", plan, "--dump-batch", batch, "--dump-losses", losses, "--dump-grads", grads])
    tokens, targets = read_batch(batch)
    ours = float(np.fromfile(losses, dtype=np.float64)[0])
    model.zero_grad()
    loss = hf_loss(model, tokens, targets)
    loss.backward()
    theirs = float(loss)
    check(arch + " (b) loss from transformers weights", abs(ours - theirs) <= LOSS_BOUND * abs(theirs),
          "trellis %.9f, transformers %.9f (%.2g relative)" % (ours, theirs, abs(ours - theirs) / abs(theirs)))
    dumped = load_file(grads)
    worst, worst_name = 0.0, ""
    for name, p in model.named_parameters():
        if name not in dumped:
            check(arch + " (c) gradient " + name, False, "not in trellis' dump")
            continue
        err = relative(dumped[name], p.grad.numpy())
        if err > worst:
            worst, worst_name = err, name
    check(arch + " (c) every gradient equals autograd's", worst <= GRAD_BOUND,
          "%d tensors, worst %.2g relative (%s)" % (len(dumped), worst, worst_name))

    # The same weights cut onto tp 2 × pp 2 at load (dp 1: the same batch): the same loss, to the
    # rounding of tensor parallelism's split sums.
    write_plan(plan, arch, 4, {"dp": 1, "tp": 2, "pp": 2, "micro_batches": 2, "micro_batch_size": 1}, {"init": {"from": src}})
    trainer(4, ["--plan", plan, "--dump-losses", losses])
    sliced = float(np.fromfile(losses, dtype=np.float64)[0])
    check(arch + " (b) the same weights at tp 2 x pp 2", abs(sliced - theirs) <= 1e-5 * abs(theirs),
          "trellis %.9f, transformers %.9f (%.2g relative)" % (sliced, theirs, abs(sliced - theirs) / abs(theirs)))

    # The comparison can fail: a square projection transposed.
    broken = os.path.join(work, arch + "-broken")
    model.save_pretrained(broken, safe_serialization=True)
    tensors = load_file(os.path.join(broken, "model.safetensors"))
    key = "transformer.h.0.attn.c_proj.weight" if arch == "gpt" else "model.layers.0.self_attn.o_proj.weight"
    tensors[key] = np.ascontiguousarray(tensors[key].T)
    from safetensors.numpy import save_file
    save_file(tensors, os.path.join(broken, "model.safetensors"), metadata={"format": "pt"})
    write_plan(plan, arch, 1, {"dp": 1}, {"init": {"from": broken}})
    trainer(1, ["--plan", plan, "--dump-losses", losses])
    wrong = float(np.fromfile(losses, dtype=np.float64)[0])
    check(arch + " a transposed " + key + " is caught", abs(wrong - theirs) > LOSS_BOUND * abs(theirs),
          "loss %.9f against %.9f" % (wrong, theirs))


def export_check(arch, work):
    ckpt = os.path.join(work, arch + "-ckpt")
    plan = os.path.join(work, arch + "-export.json")
    # tp 2: the checkpoint holds each rank's shards; 3 steps, checkpoints at steps 2 and 3 (the end).
    write_plan(plan, arch, 2, {"dp": 1, "tp": 2}, {"steps": 3, "checkpoint": {"every": 2, "dir": ckpt, "keep": 2}})
    trainer(2, ["--plan", plan])
    out = os.path.join(work, arch + "-exported")
    r = subprocess.run([TRAINER, "--export-model", ckpt, "--out", out], capture_output=True, text=True, timeout=120)
    check(arch + " (a) export", r.returncode == 0, (r.stdout + r.stderr).strip())
    if r.returncode != 0:
        return
    load_file(os.path.join(out, "model.safetensors"))  # the safetensors package reads it
    cls = GPT2LMHeadModel if arch == "gpt" else LlamaForCausalLM
    model, info = cls.from_pretrained(out, output_loading_info=True)
    missing = [k for k in info["missing_keys"] if not k.endswith("attn.bias") and not k.endswith("masked_bias")]
    check(arch + " (a) loads into transformers", not missing and not info["unexpected_keys"] and not info["mismatched_keys"],
          "missing %s, unexpected %s, mismatched %s" % (missing, info["unexpected_keys"], info["mismatched_keys"]))
    model = model.float().eval()
    # trellis-trainer's own forward on the checkpoint's weights: resume from it for a fourth step.
    batch, losses = os.path.join(work, arch + "-b4.bin"), os.path.join(work, arch + "-l4.bin")
    more = os.path.join(work, arch + "-export-more.json")
    write_plan(more, arch, 2, {"dp": 1, "tp": 2}, {"steps": 4, "checkpoint": {"every": 2, "dir": ckpt, "keep": 2}})
    trainer(2, ["--plan", more, "--resume", "--dump-batch", batch, "--dump-losses", losses])
    tokens, targets = read_batch(batch)
    ours = float(np.fromfile(losses, dtype=np.float64)[0])
    with torch.no_grad():
        theirs = float(hf_loss(model, tokens, targets))
    check(arch + " (a) exported weights give trellis' loss", abs(ours - theirs) <= LOSS_BOUND * abs(theirs),
          "trellis %.9f, transformers %.9f (%.2g relative)" % (ours, theirs, abs(ours - theirs) / abs(theirs)))


def bf16_export_check(arch, work):
    from safetensors.torch import load_file as load_torch
    ckpt = os.path.join(work, arch + "-bf16-ckpt")
    plan = os.path.join(work, arch + "-bf16.json")
    write_plan(plan, arch, 2, {"dp": 2, "precision": "bf16", "zero": 1}, {"steps": 2, "checkpoint": {"every": 2, "dir": ckpt}})
    trainer(2, ["--plan", plan])
    out16, out32 = os.path.join(work, arch + "-bf16-exported"), os.path.join(work, arch + "-fp32-exported")
    r = subprocess.run([TRAINER, "--export-model", ckpt, "--out", out16], capture_output=True, text=True, timeout=120)
    check(arch + " (c) bf16 export", r.returncode == 0 and "bf16" in r.stdout, (r.stdout + r.stderr).strip())
    r = subprocess.run([TRAINER, "--export-model", ckpt, "--out", out32, "--dtype", "fp32"], capture_output=True, text=True,
                       timeout=120)
    check(arch + " (c) fp32 export of the same checkpoint", r.returncode == 0, (r.stdout + r.stderr).strip())
    if not os.path.exists(os.path.join(out16, "model.safetensors")):
        return
    with open(os.path.join(out16, "config.json")) as f:
        check(arch + " (c) config says bfloat16", json.load(f).get("torch_dtype") == "bfloat16", "torch_dtype")
    file16, file32 = load_torch(os.path.join(out16, "model.safetensors")), load_torch(os.path.join(out32, "model.safetensors"))
    check(arch + " (c) tensors stored as bf16", all(t.dtype == torch.bfloat16 for t in file16.values()),
          str(sorted({str(t.dtype) for t in file16.values()})))
    cls = GPT2LMHeadModel if arch == "gpt" else LlamaForCausalLM
    model = cls.from_pretrained(out16, torch_dtype="auto")
    state = model.state_dict()
    differ = [k for k, t in file16.items() if k not in state or state[k].dtype != torch.bfloat16
              or not torch.equal(state[k].view(torch.int16), t.view(torch.int16))]
    check(arch + " (c) transformers holds the file's bf16 bits", not differ, "differing: %s" % differ[:3])
    rounded = [k for k, t in file16.items() if not torch.equal(file32[k].to(torch.bfloat16).view(torch.int16), t.view(torch.int16))]
    check(arch + " (c) bf16 = the fp32 masters rounded to nearest even", not rounded, "differing: %s" % rounded[:3])


torch.set_num_threads(1)
with tempfile.TemporaryDirectory() as work:
    for arch in ("gpt", "llama"):
        import_check(arch, work)
        export_check(arch, work)
        bf16_export_check(arch, work)
checks = sum(1 for _ in CHECKS)
print("%d passed, %d failed" % (checks - len(failures), len(failures)))
sys.exit(1 if failures else 0)
