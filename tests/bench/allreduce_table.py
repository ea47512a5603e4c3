# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""When data-parallel LoRA across hosts pays: the all-reduced bytes bare_lora.py --ddp measured, over a LAN.

    python3 tests/bench/allreduce_table.py docs/performance/h200_2026-12-02_allreduce.jsonl

Per optimizer step DDP all-reduces the measured bytes B once (the micro-batches before it run under no_sync). A ring
all-reduce sends 2(n-1)/n x B per node, so on a link of goodput W it takes C = 2(n-1)/n x B / W (no overlap with the
backward pass counted: a bound from above). A job of G micro-batches per optimizer step, each taking t on one card,
takes G t on one host and G t / n + C on n hosts: speed-up S = G t / (G t / n + C). The link goodputs are typical TCP
payload rates, not measured here; t is the one number a Radeon owner has to bring (the H200's is measured).
"""

import json
import sys

LINKS = {"1 GbE": 117.6e6, "10 GbE": 1176e6}  # bytes/s of TCP payload on an uncongested link (941 / 9410 Mbit/s)
MICRO_BATCHES = 8  # lora_job_effective_batch_size's default, batch 1 per card
HOSTS = (2, 4, 8)


def comm_s(nbytes, hosts, goodput):
    return 2 * (hosts - 1) / hosts * nbytes / goodput


def speedup(micro_s, nbytes, hosts, goodput, micro=MICRO_BATCHES):
    return micro * micro_s / (micro * micro_s / hosts + comm_s(nbytes, hosts, goodput))


def break_even_micro_s(nbytes, hosts, goodput, target, micro=MICRO_BATCHES):
    """The micro-step time above which n hosts reach ``target`` x (inf when n x is below it)."""
    room = 1 / target - 1 / hosts
    return comm_s(nbytes, hosts, goodput) / (micro * room) if room > 0 else float("inf")


def main(path):
    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    bare = next(r for r in rows if "allreduce_bytes_per_step" not in r)
    ddp = [r for r in rows if "allreduce_bytes_per_step" in r]
    print("| LoRA rank | trainable params | all-reduced MB / step | buckets / step | DDP step s (1 rank) |")
    print("|---|---|---|---|---|")
    for r in ddp:
        cells = (_rank(r), f"{r['trainable_params']:,}", r["allreduce_bytes_per_step"] / 1e6, r["allreduce_buckets_per_step"],
                 r["steady_step_s"])
        print("| %d | %s | %.1f | %.1f | %.3f |" % cells)
    r8 = next(r for r in ddp if _rank(r) == 8)
    nbytes, h200_t = r8["allreduce_bytes_per_step"], bare["steady_step_s"]
    print("\nr=8, %d micro-batches of 1 x %d tokens per optimizer step; H200 micro-step (bare loop) %.3f s\n"
          % (MICRO_BATCHES, int(bare["tokens_per_step"]), h200_t))
    print("| link | hosts | all-reduce s / step | pays (S > 1) when t > | S >= 0.9 n when t > | S with the H200's t |")
    print("|---|---|---|---|---|---|")
    for link, goodput in LINKS.items():
        for hosts in HOSTS:
            print("| %s | %d | %.3f | %.3f s | %.2f s | %.2f |" % (
                link, hosts, comm_s(nbytes, hosts, goodput), break_even_micro_s(nbytes, hosts, goodput, 1.0),
                break_even_micro_s(nbytes, hosts, goodput, 0.9 * hosts), speedup(h200_t, nbytes, hosts, goodput)))


def _rank(row):
    """LoRA rank from the trainable count: r=8 on the seven projections of the 7B shape is 20,185,088."""
    return round(row["trainable_params"] / 20185088 * 8)


if __name__ == "__main__":
    main(sys.argv[1])
