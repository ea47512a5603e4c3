# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A stand-in for ``llamafactory-cli train CONFIG.yaml`` (copied onto PATH by the ``fake_cli`` fixture).

Reads the runner's YAML (one ``key: <JSON scalar>`` per line), then behaves like LLaMA-Factory's SFT
from the runner's point of view: appends trainer_log.jsonl lines, writes checkpoint-<N>/trainer_state.json
every save_steps, resumes from resume_from_checkpoint, and at the end writes the adapter files and
trainer_state.json. Environment knobs:

FAKE_LF_STATE          directory for calls.jsonl (one line per invocation) and trainer.pid
FAKE_LF_STEPS          total steps (default 6)
FAKE_LF_SLEEP          seconds per step (default 0)
FAKE_LF_FAIL_ATTN      comma list of flash_attn values that die with "HIP error: invalid device function"
FAKE_LF_OOM_ABOVE      die with a HIP OOM when per_device_train_batch_size is above this
FAKE_LF_FAIL_OTHER     die with this message (every time)
FAKE_LF_NO_ADAPTER     exit 0 without writing the adapter
FAKE_LF_USE_TORCH      import torch and initialise the GPU, as LLaMA-Factory does on a GPU (the fake torch on PYTHONPATH)
FAKE_LF_TOKENS_SEEN    num_input_tokens_seen in the final trainer_state.json (default 0: not counted)
FAKE_LF_RESULTS        JSON object merged into all_results.json (default: train_runtime 2.0, train_samples_per_second 4.0)
FAKE_LF_FAIL_PEER      die as a torchrun worker whose gloo peer went away

calls.jsonl also records the tracker variables the trainer got (TRACKER_ENV, those set only).

With NODE_RANK > 0 (another node of a multi-node job) the final trainer_state.json and all_results.json are not
written, as LLaMA-Factory writes them on the job's first process only. calls.jsonl records the torchrun variables.

Run directly or through ``python -m radeonlab_lora.launch`` (as the runner does): both run it as ``__main__``.
"""

import json
import os
import sys
import time

TRACKER_ENV = ("TENSORBOARD_LOGGING_DIR", "MLFLOW_EXPERIMENT_NAME", "MLFLOW_TRACKING_URI", "MLFLOW_DISABLE_TELEMETRY")
TORCHRUN_ENV = ("FORCE_TORCHRUN", "ACCELERATE_TORCH_DEVICE", "NPROC_PER_NODE", "NNODES", "NODE_RANK", "MASTER_ADDR", "MASTER_PORT",
                "GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME")


def read_config(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)  # the runner's configs are JSON text (test_render checks LLaMA-Factory's reader)


def export(config):
    """As ``llamafactory-cli export``: the merged model's files in export_dir (FAKE_LF_FAIL_EXPORT: a failure)."""
    with open(os.path.join(os.environ["FAKE_LF_STATE"], "exports.jsonl"), "a", encoding="utf-8") as handle:
        handle.write(json.dumps(config) + "\n")
    if os.environ.get("FAKE_LF_FAIL_EXPORT"):
        print("RuntimeError: fake export failed", file=sys.stderr)
        return 1
    os.makedirs(config["export_dir"], exist_ok=True)
    for name, text in (("model.safetensors", "weights"), ("config.json", "{}"), ("tokenizer.json", "{}")):
        with open(os.path.join(config["export_dir"], name), "w", encoding="utf-8") as handle:
            handle.write(text)
    return 0


def main():
    assert sys.argv[1] in ("train", "export"), sys.argv
    config = read_config(sys.argv[2])
    if sys.argv[1] == "export":
        return export(config)
    state_dir = os.environ["FAKE_LF_STATE"]
    with open(os.path.join(state_dir, "calls.jsonl"), "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"config": config, "pid": os.getpid(), "env_secret": os.environ.get("FAKE_SECRET"),
                                 "torchrun": {name: os.environ.get(name) for name in TORCHRUN_ENV}, "path": os.environ.get("PATH"),
                                 "trackers": {name: os.environ[name] for name in TRACKER_ENV if name in os.environ}}) + "\n")
    with open(os.path.join(state_dir, "trainer.pid"), "w", encoding="utf-8") as handle:
        handle.write(str(os.getpid()))
    print("[INFO] fake LLaMA-Factory starting", flush=True)
    if os.environ.get("FAKE_LF_USE_TORCH"):
        import torch  # pylint: disable=import-outside-toplevel
        torch.cuda.init()

    if os.environ.get("FAKE_LF_FAIL_PEER"):
        print("[rank0]: RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:13482",
              file=sys.stderr)
        return 1
    if os.environ.get("FAKE_LF_FAIL_OTHER"):
        print("Traceback (most recent call last):\n  File \"x.py\", line 1\n" + os.environ["FAKE_LF_FAIL_OTHER"], file=sys.stderr)
        return 1
    if config["flash_attn"] in os.environ.get("FAKE_LF_FAIL_ATTN", "").split(","):
        print("RuntimeError: HIP error: invalid device function\nHIP kernel errors might be asynchronously reported", file=sys.stderr)
        return 1
    oom_above = os.environ.get("FAKE_LF_OOM_ABOVE")
    if oom_above and config["per_device_train_batch_size"] > int(oom_above):
        print("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB.", file=sys.stderr)
        return 1

    out = config["output_dir"]
    os.makedirs(out, exist_ok=True)
    total = int(os.environ.get("FAKE_LF_STEPS", "6"))
    start = 0
    if config.get("resume_from_checkpoint"):
        with open(os.path.join(config["resume_from_checkpoint"], "trainer_state.json"), encoding="utf-8") as handle:
            start = json.load(handle)["global_step"]
    history = []
    for step in range(start + 1, total + 1):
        time.sleep(float(os.environ.get("FAKE_LF_SLEEP", "0")))
        loss = round(3.0 - 2.0 * step / total, 4)
        history.append({"step": step, "loss": loss})
        record = {"current_steps": step, "total_steps": total, "loss": loss, "lr": 1e-4, "epoch": step / total,
                  "percentage": round(step / total * 100, 2), "elapsed_time": f"0:00:{step:02d}", "remaining_time": f"0:00:{total - step:02d}"}
        with open(os.path.join(out, "trainer_log.jsonl"), "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        if step % config["save_steps"] == 0:
            ckpt = os.path.join(out, f"checkpoint-{step}")
            os.makedirs(ckpt, exist_ok=True)
            with open(os.path.join(ckpt, "trainer_state.json"), "w", encoding="utf-8") as handle:
                json.dump({"global_step": step, "max_steps": total, "log_history": history}, handle)
    if os.environ.get("FAKE_LF_NO_ADAPTER"):
        return 0
    for name in ("adapter_model.safetensors", "adapter_config.json"):
        with open(os.path.join(out, name), "w", encoding="utf-8") as handle:
            handle.write("{}")
    if int(os.environ.get("NODE_RANK") or 0) > 0:
        print("[INFO] fake training done (not the first node: no final state)", flush=True)
        return 0
    results = {"epoch": 1.0, "train_runtime": 2.0, "train_samples_per_second": 4.0, "train_steps_per_second": 3.0, "train_loss": 2.0}
    results.update(json.loads(os.environ.get("FAKE_LF_RESULTS") or "{}"))
    history = [{"loss": 3.0 - 2.0 * s / total, "step": s} for s in range(1, total + 1)]
    if config.get("do_eval"):  # as LLaMA-Factory: eval every eval_steps into the history, the last one after training
        history += [{"eval_loss": 3.5 - 2.0 * s / total, "step": s} for s in range(config["eval_steps"], total + 1, config["eval_steps"])]
        with open(os.path.join(out, "eval_results.json"), "w", encoding="utf-8") as handle:
            json.dump({"epoch": 1.0, "eval_loss": 1.25}, handle)
    history.append({"step": total, "train_runtime": results["train_runtime"], "train_samples_per_second": results["train_samples_per_second"]})
    with open(os.path.join(out, "trainer_state.json"), "w", encoding="utf-8") as handle:
        json.dump({"global_step": total, "max_steps": total, "num_input_tokens_seen": int(os.environ.get("FAKE_LF_TOKENS_SEEN", "0")),
                   "log_history": history}, handle)
    with open(os.path.join(out, "all_results.json"), "w", encoding="utf-8") as handle:
        json.dump(results, handle)
    print("[INFO] fake training done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
