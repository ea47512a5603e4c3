# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Every stage of a job on an emulated card, each stage's plan beside its measured peak (issue 50): bench.py's phases plus

    stages:SHAPE:SEQ:CARD     the runner's check and run of a job with two sample prompts (one short, one of about
                              1,500 tokens), ``export: merged`` and ``serve``; then LLaMA-Factory's API started from the
                              runner's ``api-config`` under the same cap, asked one chat completion (the long prompt),
                              stopped, and its peak read (``radeonlab_lora.launch``'s peak file, written at exit).

    python3 tests/bench/after/stages.py --out OUT --plan tests/bench/plans/stages_16g_24g.txt --device-name "NVIDIA H100"
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bench  # noqa: E402  pylint: disable=wrong-import-position

LONG_PROMPT_TOKENS = 1500
API_PORT = 8011


class StagesBench(bench.Bench):
    def long_prompt(self, shape: str) -> str:
        from transformers import AutoTokenizer  # pylint: disable=import-outside-toplevel

        with open(os.path.join(self.work, "data", "bench_alpaca.json"), encoding="utf-8") as handle:
            row = json.load(handle)[0]
        tokenizer = AutoTokenizer.from_pretrained(os.path.join(self.work, f"qwen2-{shape}"))
        return tokenizer.decode(tokenizer(row["instruction"] + " " + row["output"])["input_ids"][:LONG_PROMPT_TOKENS])

    def write_job(self, shape: str, seq: int, card: str, suffix: str = "") -> tuple:
        tag, base, job_path, facts_path = super().write_job(shape, seq, card, suffix)
        with open(job_path, encoding="utf-8") as handle:
            job = json.load(handle)
        job.update(sample_prompts=["Say hi.", self.long_prompt(shape)], sample_max_new_tokens=64, export="merged", serve=True)
        with open(job_path, "w", encoding="utf-8") as handle:
            json.dump(job, handle, indent=2)
        return tag, base, job_path, facts_path

    def phase_stages(self, phase: str, shape: str, seq: int, card: str) -> None:
        self.phase_job(phase, shape, seq, card)
        tag, base, job_path, _facts = self.job_paths(shape, seq, card)
        status = bench.read_json(os.path.join(base, "status.json")) or {}
        row = {"phase": phase + " (stages)", "kind": "stages", "tag": tag, "state": status.get("state"),
               "training_plan": bench.plan_summary(status.get("plan") or {}), "training_peak": status.get("peak_memory"),
               "stages": (status.get("plan") or {}).get("stages"),
               "samples": status.get("samples"), "export": {k: (status.get("export") or {}).get(k) for k in ("state", "bytes", "peak_memory")}}
        if status.get("state") == "succeeded":
            row["api"] = self.api(tag, job_path, status["run_dir"], self.card(card)[1], shape)
        self.record(row)

    def api(self, tag: str, job_path: str, run_dir: str, cap, shape: str) -> dict:
        done = subprocess.run(self.runner("api-config", "--job", job_path, "--run-dir", run_dir), env=self.env, capture_output=True,
                              text=True, timeout=120, check=False)
        if done.returncode != 0:
            return {"error": done.stderr[-500:]}
        config = os.path.join(self.work, "jobs", f"{tag}.api.yaml")
        with open(config, "w", encoding="utf-8") as handle:
            handle.write(done.stdout)
        peak_file = os.path.join(self.work, "jobs", f"{tag}.api-peak.json")
        env = {**self.env, "API_HOST": "127.0.0.1", "API_PORT": str(API_PORT), "BENCH_TAG": f"api-{tag}",
               **({"BENCH_MEM_CAP_GIB": str(cap)} if cap else {})}
        cli = os.path.join(os.path.dirname(sys.executable), "llamafactory-cli")
        if not os.path.exists(cli):
            cli = subprocess.run(["sh", "-c", "command -v llamafactory-cli"], capture_output=True, text=True, check=False).stdout.strip()
        log = open(os.path.join(self.side, "logs", f"api_{tag}.log"), "wb")  # pylint: disable=consider-using-with
        proc = subprocess.Popen([sys.executable, "-m", "radeonlab_lora.launch", "--peak-file", peak_file, cli, "api", config], env=env,
                                stdout=log, stderr=subprocess.STDOUT, cwd=bench.REPO, start_new_session=True)
        result = {"config": json.loads(done.stdout)}
        started = time.monotonic()
        try:
            result.update(self.ask(shape, started))
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                result["rc"] = proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                result["rc"] = proc.wait()
            log.close()
        result["peak"] = bench.read_json(peak_file)
        return result

    def ask(self, shape: str, started: float) -> dict:
        base = f"http://127.0.0.1:{API_PORT}/v1"
        while time.monotonic() - started < min(300, self.left() - 30):
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=5) as reply:
                    model = json.load(reply)["data"][0]["id"]
                break
            except (OSError, ValueError, KeyError, IndexError):
                time.sleep(2)
        else:
            return {"error": "the API did not answer /v1/models"}
        serving_s = round(time.monotonic() - started, 1)
        body = json.dumps({"model": model, "messages": [{"role": "user", "content": self.long_prompt(shape)}], "max_tokens": 64,
                           "temperature": 0}).encode()
        request = urllib.request.Request(f"{base}/chat/completions", data=body, headers={"Content-Type": "application/json"})
        asked = time.monotonic()
        with urllib.request.urlopen(request, timeout=300) as reply:
            answer = json.load(reply)
        return {"serving_s": serving_s, "request_s": round(time.monotonic() - asked, 1), "usage": answer.get("usage"),
                "finish_reason": answer["choices"][0].get("finish_reason")}


if __name__ == "__main__":
    bench.Bench = StagesBench
    sys.exit(bench.main())
