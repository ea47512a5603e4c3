# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""radeonlab_lora: the LoRA job runner installed on each workstation by the ``lora_job`` role.

Standard library only (Python >= 3.11): it runs inside the training venv next to LLaMA-Factory
and must not add anything to it. Modules, each a small set of pure functions unless stated:

- ``spec``       load and validate a job spec (JSON), fill defaults
- ``modelshape`` parameter count and layer shape from ``config.json`` or a bare size in billions
- ``sizing``     the memory model (calibrated on H200 measurements) and the batch/checkpointing/QLoRA plan
- ``render``     LLaMA-Factory training config (JSON text), ``dataset_info.json`` entry, the config hash
- ``failures``   log-tail classification and the retry policy (attention fallback, OOM)
- ``progress``   ``trainer_log.jsonl`` -> one-line progress
- ``state``      status file, checkpoints, "already done", the job lock (filesystem)
- ``devices``    what torch sees (a child-process probe) against the GPU facts: GPU, CPU or refuse
- ``launch``     ``python -m radeonlab_lora.launch``: runs ``llamafactory-cli`` in-process, records its peak memory
- ``measurements`` peak memory per attempt and tokens/s from the trainer's output
- ``trainer``    one attempt as a subprocess: find the CLI, signals, log tail
- ``runner``     ``run``: the whole job with retries and resume
- ``samples``    ``python -m radeonlab_lora.samples``: base-vs-adapter answers to the sample prompts (LLaMA-Factory's ChatModel)
- ``report``     the fleet report over the fetched results (controller side)
- ``digest``     ``python -m radeonlab_lora.digest``: one sha256 over the package, to copy it only when it changed
- ``cli``        ``python -m radeonlab_lora render|plan|run|status|check``
"""

__version__ = "1.0.0"
