# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A bare transformers + PEFT LoRA loop with the settings LLaMA-Factory gets from the runner's plan.

The reference the job's throughput is compared against: no Trainer, no data pipeline (random token ids
below the tokenizer's size, every sample exactly ``--seq`` tokens, labels = inputs), the same model
files, LoRA r/alpha on all seven linear projections, trainable (LoRA) weights upcast to fp32 as
LLaMA-Factory does, bf16 autocast, fused AdamW (transformers' default optimizer), gradient checkpointing
as LLaMA-Factory enables it (reentrant, inputs requiring grad), ``--accum`` micro-batches per
optimizer step. Timing as tests/bench/site/sitecustomize.py: device synchronise at each optimizer step
end, steady tokens/s over the steps after the first ``--skip``. One ``BENCH_RESULT`` JSON line (and a
line appended to ``BENCH_RESULT_FILE``); ``BENCH_MEM_CAP_GIB`` caps memory as for the trainer.

    python tests/bench/bare_lora.py --model /tmp/bench/qwen2-7b --seq 2048 --batch 1 --accum 8 --ckpt --steps 10

``--ddp`` (under ``torchrun``, as LLaMA-Factory's FORCE_TORCHRUN launches it): the model is wrapped in
DistributedDataParallel (NCCL/RCCL on a GPU, gloo on the CPU), the micro-batches before the last of an optimizer
step run under ``no_sync`` as the Trainer's accumulation does, and a communication hook counts what DDP
all-reduces: ``allreduce_bytes_per_step`` and ``allreduce_buckets_per_step`` in the result (issue 14). With one
process the all-reduce is local, but its buckets are the ones every rank of a larger world would send.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site"))
import sitecustomize as bench_site  # noqa: E402  (the helpers; its hooks are already active when on PYTHONPATH)

TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--accum", type=int, default=1)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--skip", type=int, default=2)
    ap.add_argument("--ckpt", action="store_true")
    ap.add_argument("--mask", action="store_true", help="pass an all-ones attention_mask, as LLaMA-Factory's collator does")
    ap.add_argument("--attn", default="sdpa", choices=["sdpa", "eager"])
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--alpha", type=int, default=16)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--ddp", action="store_true", help="DistributedDataParallel under torchrun; count the all-reduced bytes")
    ap.add_argument("--tag", default=os.environ.get("BENCH_TAG", "bare"))
    a = ap.parse_args(argv)

    import torch  # pylint: disable=import-outside-toplevel
    from peft import LoraConfig, get_peft_model  # pylint: disable=import-outside-toplevel
    from transformers import AutoModelForCausalLM, AutoTokenizer  # pylint: disable=import-outside-toplevel

    dev = torch.device(a.device)
    if a.ddp and dev.type == "cuda":  # one GPU per torchrun worker
        dev = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        torch.cuda.set_device(dev)
    gpu = dev.type == "cuda"
    dtype = torch.bfloat16 if gpu else torch.float32
    model = AutoModelForCausalLM.from_pretrained(a.model, dtype=dtype, attn_implementation=a.attn).to(dev)
    model.config.use_cache = False
    vocab = len(AutoTokenizer.from_pretrained(a.model))
    model = get_peft_model(model, LoraConfig(r=a.rank, lora_alpha=a.alpha, lora_dropout=0.0, target_modules=TARGETS, task_type="CAUSAL_LM"))
    trainable = [p for p in model.parameters() if p.requires_grad]
    for param in trainable:
        param.data = param.data.float()
    if a.ckpt:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})
        model.enable_input_require_grads()
    model.train()
    comm = _wrap_ddp(torch, model, dev) if a.ddp else None
    forward = comm["model"] if comm else model
    opt = torch.optim.AdamW(trainable, lr=1e-4, fused=gpu)
    gen = torch.Generator().manual_seed(0)

    times, tokens, losses = [], [], []
    seen = 0
    if gpu:
        torch.cuda.synchronize()
    profiler = bench_site.StepProfiler(torch, a.tag)
    t0 = time.perf_counter()
    for _step in range(a.steps):
        for micro in range(a.accum):
            ids = torch.randint(3, vocab, (a.batch, a.seq), generator=gen).to(dev)
            sync = comm is None or micro == a.accum - 1
            with (contextlib.nullcontext() if sync else forward.no_sync()):
                with torch.autocast(dev.type, dtype=torch.bfloat16, enabled=gpu):
                    mask = torch.ones_like(ids) if a.mask else None
                    loss = forward(input_ids=ids, attention_mask=mask, labels=ids).loss / a.accum
                loss.backward()
            seen += ids.numel()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if gpu:
            torch.cuda.synchronize()
        times.append(time.perf_counter())
        tokens.append(seen)
        profiler.step_end(len(times))
        losses.append(float(loss) * a.accum)

    res = {"tag": a.tag, "kind": "bare", "batch": a.batch, "accumulation": a.accum, "gradient_checkpointing": a.ckpt,
           "attn_implementation": a.attn, "attention_mask": a.mask, "first_loss": losses[0], "last_loss": losses[-1],
           "trainable_params": sum(p.numel() for p in trainable), "all_params": sum(p.numel() for p in model.parameters())}
    if comm:
        res.update(ddp_world_size=comm["world"], ddp_backend=comm["backend"],
                   allreduce_bytes_per_step=comm["bytes"] // a.steps, allreduce_buckets_per_step=comm["buckets"] / a.steps,
                   trainable_grad_bytes=sum(p.numel() * p.element_size() for p in trainable))
    res.update(bench_site.steady(times, tokens, t0, a.skip))
    res.update(bench_site.memory_fields(torch))
    bench_site.result_line(res)
    return 0


def _wrap_ddp(torch, model, dev) -> dict:
    """DDP over the torchrun world, with a hook that counts each bucket's bytes before the default all-reduce."""
    import torch.distributed as dist  # pylint: disable=import-outside-toplevel

    backend = "nccl" if dev.type == "cuda" else "gloo"
    dist.init_process_group(backend)
    counts = {"bytes": 0, "buckets": 0, "world": dist.get_world_size(), "backend": backend}

    def counting_allreduce(state, bucket):
        buffer = bucket.buffer()
        state["bytes"] += buffer.numel() * buffer.element_size()
        state["buckets"] += 1
        buffer.div_(state["world"])
        return dist.all_reduce(buffer, async_op=True).get_future().then(lambda fut: fut.value()[0])

    # static_graph: reentrant checkpointing runs each layer's forward twice, which DDP's autograd hooks otherwise refuse
    wrapped = torch.nn.parallel.DistributedDataParallel(model, device_ids=[dev.index or 0] if dev.type == "cuda" else None,
                                                        static_graph=True)
    wrapped.register_comm_hook(counts, counting_allreduce)
    counts["model"] = wrapped
    return counts


if __name__ == "__main__":
    sys.exit(main())
