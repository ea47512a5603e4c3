"""Each bad input is refused by playbooks/validate.yml before site.yml changes anything.

Every case runs this scenario's converge (the whole site.yml, no tags) with one bad input, and must fail in the
validation play, with a message naming the variable, before the site's main play starts; a snapshot of /etc/apt,
/etc/systemd, /etc/radeonlab, the venv, the job folder and the accounts taken before and after must be equal. A
validation that did nothing would let the site run on: it would start the main play, change files and pass no case.
The results table is written to build/results/reliability.md (`make results-to-docs` copies it to docs/).
"""

import concurrent.futures
import functools
import glob
import http.server
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time

import pytest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROJECT = os.path.dirname(os.path.dirname(HERE))
CONVERGE = os.path.join(HERE, "converge.yml")
FILES = os.path.join(HERE, "files")
sys.path.insert(0, os.path.join(PROJECT, "tests", "lab", "faults"))
import faultlab  # noqa: E402  results_page, generated_by: where the generated pages go

PAGE = "reliability.md"
FACT_CACHE = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/tmp"), "bad_input_facts")
SNAPSHOT = (
    "for d in /etc/apt /etc/systemd /etc/radeonlab /etc/llamafactory /opt/radeonlab /var/lib/radeonlab /var/lib/llamafactory; do "
    "[ -e $d ] || { echo \"absent $d\"; continue; }; find $d -xdev -printf '%p %y %m %u %g %s\\n' | sort; "
    "find $d -xdev -type f -exec md5sum {} + | sort; done; getent passwd; getent group"
)
MAIN_PLAY = "PLAY [ROCm, GPU access, PyTorch for ROCm, LLaMA-Factory and the LoRA job]"
AMD_FPR = "CA8BB4727A47B4D09B4EE8969386B48A1A693C5C"
ROCKY = 'NAME="Rocky Linux"\nID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.4"\nPRETTY_NAME="Rocky Linux 9.4"\n'

# A stand-in of the Hugging Face hub's resolve/ path for the hub-sized cases (tests/fixtures/hub/README.md), on the loopback
# the controller shares with the lab host; the controller's hub config cache of this scenario's own.
HUB = os.path.join(PROJECT, "tests", "fixtures", "hub")
HUB_PORT = 8890
HUB_CACHE = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/tmp"), "hub-configs")
HUB_SERVER = http.server.ThreadingHTTPServer(("127.0.0.1", HUB_PORT), functools.partial(http.server.SimpleHTTPRequestHandler, directory=HUB))
threading.Thread(target=HUB_SERVER.serve_forever, daemon=True).start()
HUB_MODEL = {"lora_job_model_src": "", "lora_job_model": "Qwen/Qwen2.5-72B-Instruct", "lora_job_hub_config_cache": HUB_CACHE,
             "lora_job_model_cache": False}
# The lab downloads its model through the mirror's stand-in hub (lora_job_model_cache); these cases use the fixture hub
# and a model cache of this scenario's own, one folder per case (the download of one must not be found by another).
MODEL_CACHE = os.path.join(os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/tmp"), "model-cache")
FIXTURE_HUB = "http://127.0.0.1:%d" % HUB_PORT

# (id, what is wrong, extra vars (JSON) or raw -e / -i arguments, text the refusal must contain)
CASES = [
    ("rocm-line-unknown", "unknown ROCm line", {"rocm_repo_rocm_version": "5.9"}, "rocm_repo_rocm_version is '5.9'"),
    ("torch-rocm-pair", "a torch/ROCm pair without wheels", {"pytorch_rocm_rocm_version": "6.2", "pytorch_rocm_torch_version": "2.9.1"},
     "pytorch_rocm_torch_version '2.9.1' on ROCm 6.2"),
    ("fingerprint-malformed", "malformed fingerprint", {"rocm_repo_key_fingerprint": "CA8B-B472-NOT-HEX"},
     "rocm_repo_key_fingerprint must be a full 40-hex-digit"),
    ("fingerprint-short", "fingerprint too short", {"rocm_repo_key_fingerprint": "9386B48A1A693C5C"},
     "rocm_repo_key_fingerprint must be a full 40-hex-digit"),
    ("fingerprint-mismatch", "fingerprint of another key (AMD's, the mirror serves the lab's)",
     {"rocm_repo_key_fingerprint": AMD_FPR}, "rocm_repo_key_fingerprint pins " + AMD_FPR),
    ("base-url-no-scheme", "base URL without a scheme", {"rocm_repo_base_url": "127.0.0.1:8765"}, "rocm_repo_base_url ('127.0.0.1:8765')"),
    ("key-url-not-a-key", "key URL that serves no key", {"rocm_repo_key_url": "http://127.0.0.1:8765/"},
     "rocm_repo_key_url http://127.0.0.1:8765/"),
    ("gfx-garbage", "a gfx name where the override wants a version", {"gpu_environment_hsa_override": "gfx1031"},
     "gpu_environment_hsa_override must be auto, off or major.minor.stepping"),
    ("override-not-xyz", "override not x.y.z", {"gpu_environment_hsa_override": "10.3"},
     "gpu_environment_hsa_override must be auto, off or major.minor.stepping"),
    ("distro-unknown", "unknown distribution (Rocky Linux 9)", "os-release", "rocm_repo supports amd64 Debian-family hosts"),
    ("user-missing", "training user that does not exist (creation off)", {"pytorch_rocm_user": "ghost", "lora_job_user": "ghost",
                                                                         "radeonlab_training_user_create": False},
     "pytorch_rocm_user: user 'ghost' does not exist"),
    ("group-member-missing", "GPU group member that does not exist", {"gpu_groups_users": ["trainer", "ghost"]},
     "gpu_groups_users: user 'ghost' does not exist"),
    ("user-root", "training as root", {"lora_job_user": "root"}, "lora_job_user: 'root' is root (uid 0)"),
    ("user-system", "training as a system account", {"pytorch_rocm_user": "daemon"}, "pytorch_rocm_user: 'daemon' is a system account"),
    ("string-for-list", "-e gpu_groups_users=trainer (a string for a list)", ["-e", "gpu_groups_users=trainer"],
     "gpu_groups_users must be a list, got the string 'trainer'"),
    ("string-for-list-pip", "a string for pytorch_rocm_pip_options", ["-e", "pytorch_rocm_pip_options=--no-cache-dir"],
     "pytorch_rocm_pip_options must be a list"),
    ("string-for-dict", "a string for lora_job_dataset", ["-e", "lora_job_dataset=tiny_alpaca"], "lora_job_dataset must be a dict"),
    ("name-misspelt", "a misspelt variable (Ansible would ignore it)", ["-e", "rocm_driver_rebot=true"],
     "rocm_driver_rebot (did you mean rocm_driver_reboot?)"),
    ("hosts-empty-group", "an empty host group", ["-i", os.path.join(FILES, "empty_group.yml"), "-e", "radeonlab_hosts=empty_fleet"],
     "radeonlab_hosts 'empty_fleet' matches no host"),
    ("hosts-no-match", "radeonlab_hosts that matches nothing", ["-e", "radeonlab_hosts=lab_workstaions"],
     "radeonlab_hosts 'lab_workstaions' matches no host"),
    ("job-name-slash", "job name with /", {"lora_job_name": "../../etc/x"}, "lora_job_name of letters"),
    ("job-name-dotdot", "job name ..", {"lora_job_name": ".."}, "lora_job_name of letters"),
    ("rank-zero", "LoRA rank 0", {"lora_job_lora_rank": 0}, "lora_job_lora_rank must be a number greater than 0"),
    ("epochs-negative", "negative epochs", {"lora_job_num_train_epochs": -1}, "lora_job_num_train_epochs must be a number greater than 0"),
    ("batch-zero", "batch size 0", {"lora_job_effective_batch_size": 0}, "lora_job_effective_batch_size must be a number greater than 0"),
    ("rank-not-int", "rank that is no number", {"lora_job_lora_rank": "eight"}, "lora_job_lora_rank"),
    ("attention-unknown", "attention backend that does not exist", {"lora_job_attention": "flash3"},
     "value of lora_job_attention must be one of"),
    ("dataset-missing", "missing data set file", {"lora_job_dataset_src": "/nonexistent/tiny.json"}, "lora_job_dataset_src ('/nonexistent/tiny.json')"),
    ("dataset-sharegpt", "a ShareGPT data set given as alpaca (no formatting: sharegpt)",
     {"lora_job_dataset_src": os.path.join(FILES, "sharegpt.json")}, "is in ShareGPT shape"),
    ("dataset-sharegpt-unanswered", "a ShareGPT data set whose last record has no answer (LLaMA-Factory would skip it)",
     {"lora_job_dataset": {"name": "chats", "formatting": "sharegpt"}, "lora_job_dataset_src": os.path.join(FILES, "sharegpt_unanswered.json")},
     "record 1 ends without an answer"),
    ("dataset-not-alpaca", "data set of other records", {"lora_job_dataset_src": os.path.join(FILES, "not_alpaca.json")},
     "record 0 is not an alpaca record"),
    ("model-path-missing", "host model path that does not exist", {"lora_job_model_src": "", "lora_job_model": "/srv/models/missing"},
     "lora_job_model '/srv/models/missing' is not a directory"),
    ("model-src-missing", "controller model directory that does not exist", {"lora_job_model": "", "lora_job_model_src": "/nonexistent/model"},
     "lora_job_model_src ('/nonexistent/model') must be a directory"),
    ("cutoff-too-long", "cutoff that cannot fit the 24 GiB card", {"lora_job_cutoff_len": 100000},
     "lora_job_cutoff_len 100000 / the model does not fit the GPU"),
    ("webui-port-taken", "WebUI port taken (the lab mirror listens on 8765)", {"llamafactory_webui_port": 8765}, "port 8765 is already in use"),
    ("webui-exposed-no-auth", "WebUI on 0.0.0.0 without a login", {"llamafactory_webui_bind": "0.0.0.0"}, "exposes the WebUI beyond loopback"),
    ("webui-password-short", "WebUI password under 12 characters", {"llamafactory_webui_bind": "0.0.0.0", "llamafactory_webui_auth_user": "owner",
                                                                   "llamafactory_webui_auth_password": "short"}, "at least 12 characters"),
    ("webui-password-newline", "WebUI password with a newline (systemd cannot carry it)",
     {"llamafactory_webui_auth_user": "owner", "llamafactory_webui_auth_password": "line one\nline two"},
     "llamafactory_webui_auth_password contains a control character"),
    ("api-exposed-no-key", "the job's API on 0.0.0.0 without a key", {"lora_job_serve_bind": "0.0.0.0"},
     "binding it to anything but loopback requires lora_job_serve_api_key"),
    ("api-key-short", "an API key under 12 characters", {"lora_job_serve_bind": "0.0.0.0", "lora_job_serve_api_key": "short"},
     "at least 12 characters, no spaces or control characters"),
    ("api-port-taken", "the job's API on a port taken (the lab mirror listens on 8765)", {"lora_job_serve_port": 8765},
     "lora_job_serve_port: port 8765 is already in use"),
    ("hub-model-too-big", "a hub model too big for the card, sized from its config.json through the mirror (no params_b)",
     {**HUB_MODEL, "lora_job_hf_endpoint": "http://127.0.0.1:%d" % HUB_PORT}, "a 72.71 B-parameter model at cutoff_len"),
    ("hub-config-unreachable", "a hub model without params_b whose config.json cannot be fetched",
     {**HUB_MODEL, "lora_job_hf_endpoint": "http://127.0.0.1:9"}, "its config.json (which sizes the job) did not come from"),
    ("model-cache-unreachable", "lora_job_model_cache with a hub the controller cannot reach",
     {"lora_job_hf_endpoint": "http://127.0.0.1:9", "lora_job_model_cache_dir": MODEL_CACHE + "-unreachable"},
     "lora_job_model_cache: the files of 'radeonlab-lab/tiny-qwen2' at revision 'main' could not be listed from http://127.0.0.1:9"),
    ("model-cache-tampered", "lora_job_model_cache from a hub serving a file other than the one it lists (LFS sha256)",
     {"lora_job_model": "radeonlab-lab/tampered", "lora_job_hf_endpoint": FIXTURE_HUB, "lora_job_model_cache_dir": MODEL_CACHE + "-tampered"},
     "lora_job_model_cache: 1 file(s) of 'radeonlab-lab/tampered' did not come from %s: config.json (The checksum" % FIXTURE_HUB),
    ("model-cache-escaping", "lora_job_model_cache from a hub listing a file named ../../.bashrc",
     {"lora_job_model": "radeonlab-lab/escaping", "lora_job_hf_endpoint": FIXTURE_HUB, "lora_job_model_cache_dir": MODEL_CACHE + "-escaping"},
     "the hub lists file names that are not plain relative paths: '../../.bashrc'"),
    ("model-cache-modelscope", "lora_job_model_cache with a ModelScope model", {"lora_job_use_modelscope": True, "lora_job_model_params_b": 0.5},
     "ModelScope (lora_job_use_modelscope) has no such API here"),
    ("venv-space", "venv path with a space", {"pytorch_rocm_venv": "/opt/my venv"}, "pytorch_rocm_venv must be an absolute path of letters"),
    ("venv-semicolon", "venv path with ;", {"lora_job_venv": "/opt/venv;reboot"}, "lora_job_venv must be an absolute path of letters"),
    ("prefix-semicolon", "ROCm prefix with ;", {"rocm_driver_prefix": "/opt/rocm;reboot"}, "rocm_driver_prefix must be an absolute path of letters"),
    ("poll-zero-torch", "pytorch_rocm poll interval 0", {"pytorch_rocm_poll_interval": 0}, "pytorch_rocm_poll_interval must be a number greater than 0"),
    ("poll-zero-job", "lora_job poll interval 0", {"lora_job_poll_interval": 0}, "lora_job_poll_interval between 1 and 30"),
    ("disk-full-venv", "a venv on a file system with 64 MiB free (a tmpfs at /srv/radeonlab-full for this run)",
     {"pytorch_rocm_venv": "/srv/radeonlab-full/venv"},
     "the file system at /srv/radeonlab-full (tmpfs) has 0.06 GiB (64.0 MiB) free, 16.00 GiB is needed"),
    ("disk-full-model", "a job root on a file system with 256 KiB free, smaller than the lab model (a tmpfs at /srv/radeonlab-jobs)",
     {"lora_job_root": "/srv/radeonlab-jobs/lora"},
     "the file system at /srv/radeonlab-jobs (tmpfs) has 0.00 GiB (0.2 MiB) free, 0.01 GiB ("),
    ("trusted-https-index", "an https index given --trusted-host (pip would skip its certificate check)",
     {"llamafactory_index_url": "https://mirrors.aliyun.com/pypi/simple", "llamafactory_trusted_hosts": ["mirrors.aliyun.com"]},
     "llamafactory_trusted_hosts names mirrors.aliyun.com, which llamafactory_index_url or llamafactory_extra_index_urls reach over https"),
    # issue 51: the value classes, each refused in validate.yml before the host is read (rocm_driver's pin and
    # lora_job_extra_args in the roles' own input checks, which validate.yml runs first)
    ("hf-endpoint-no-scheme", "a Hugging Face mirror written as a bare host name", {"lora_job_hf_endpoint": "hf-mirror.com"},
     "lora_job_hf_endpoint 'hf-mirror.com' has no scheme"),
    ("index-url-no-scheme", "LLaMA-Factory's package index without a scheme", {"llamafactory_index_url": "pypi.org/simple"},
     "llamafactory_index_url 'pypi.org/simple' has no scheme"),
    ("extra-index-no-scheme", "an extra PyTorch index without a scheme", {"pytorch_rocm_extra_index_urls": ["mirrors.aliyun.com/pypi/simple/"]},
     "pytorch_rocm_extra_index_urls[0] 'mirrors.aliyun.com/pypi/simple/' has no scheme"),
    ("git-url-no-scheme", "LLaMA-Factory's git URL without a scheme", {"llamafactory_git_url": "github.com/hiyouga/LLaMA-Factory.git"},
     "llamafactory_git_url 'github.com/hiyouga/LLaMA-Factory.git' has no scheme"),
    ("max-samples-negative", "a negative max_samples (read as 'all')", {"lora_job_max_samples": -5},
     "lora_job_max_samples is -5, but it must be 0 (all samples) or a positive number"),
    ("val-size-negative", "a negative evaluation split (read as 'none')", {"lora_job_val_size": -0.1},
     "lora_job_val_size is -0.1, but it must be 0 (no evaluation split) or a positive number"),
    ("params-b-negative", "a negative model size (read as 'from config.json')", {"lora_job_model_params_b": -7.0},
     "lora_job_model_params_b is -7.0, but it must be 0"),
    ("min-free-negative", "a negative free-space override (read as 'the estimate')", {"pytorch_rocm_min_free_gib": -1},
     "pytorch_rocm_min_free_gib is -1, but it must be 0"),
    ("poll-zero-llamafactory", "llamafactory poll interval 0 (the play divides by it)", {"llamafactory_poll_interval": 0},
     "llamafactory_poll_interval must be a number greater than 0"),
    ("poll-negative-llamafactory", "a negative llamafactory poll interval", {"llamafactory_poll_interval": -15},
     "llamafactory_poll_interval must be a number greater than 0"),
    ("poll-negative-torch", "a negative pytorch_rocm poll interval", {"pytorch_rocm_poll_interval": -15},
     "pytorch_rocm_poll_interval must be a number greater than 0"),
    ("template-unknown", "a chat template LLaMA-Factory 0.9.5 does not have", {"lora_job_template": "qwen35"},
     "lora_job_template 'qwen35' is not a chat template of LLaMA-Factory 0.9.5"),
    ("template-hyphen", "a chat template name with a hyphen for an underscore", {"lora_job_template": "qwen3-vl"},
     "lora_job_template 'qwen3-vl' is not a chat template"),
    ("template-case", "a chat template name in capitals", {"lora_job_template": "Qwen"}, "lora_job_template 'Qwen' is not a chat template"),
    ("template-empty", "an empty chat template name", {"lora_job_template": ""}, "lora_job_template '' is not a chat template"),
    ("extra-args-template", "lora_job_extra_args setting the template the runner writes", {"lora_job_extra_args": {"template": "llama3"}},
     "lora_job_extra_args sets template, which the LoRA runner manages itself"),
    ("extra-args-output-dir", "lora_job_extra_args setting the output folder", {"lora_job_extra_args": {"output_dir": "/tmp/elsewhere"}},
     "lora_job_extra_args sets output_dir, which the LoRA runner manages itself"),
    ("extra-args-batch", "lora_job_extra_args setting the batch the runner sizes", {"lora_job_extra_args": {"per_device_train_batch_size": 64}},
     "lora_job_extra_args sets per_device_train_batch_size, which the LoRA runner manages itself"),
    ("pin-misspelt", "an amdgpu pin with a misspelt keyword", {"rocm_driver_amdgpu_pin": "relase o=repo.radeon.com"},
     "rocm_driver_amdgpu_pin 'relase o=repo.radeon.com' is not an apt_preferences(5) Pin: expression"),
    ("pin-priority", "a priority where the pin expression is due", {"rocm_driver_amdgpu_pin": "1001"},
     "rocm_driver_amdgpu_pin '1001' is not an apt_preferences(5) Pin: expression"),
    ("pin-newline", "a pin expression with a newline (a stanza of its own)", {"rocm_driver_amdgpu_pin": "release o=repo.radeon.com\nPin-Priority: -1"},
     "it holds a newline or another control character"),
    ("pin-bad-key", "a release pin with a key apt does not know", {"rocm_driver_amdgpu_pin": "release origin=repo.radeon.com"},
     "release takes comma-separated key=value pairs"),
    # A checkpoint interval longer than the run is a warning, not a refusal: each row adds lora_job_lora_rank 0 so that
    # the run is refused (after the warning) before any change; the row checks the warning was shown.
    ("save-steps-beyond-run", "save_steps longer than the run (warned; with rank 0 to stop the run)",
     {"lora_job_save_steps": 100000, "lora_job_lora_rank": 0}, "WARNING: site_bad_input-navi31: lora_job_save_steps 100000 is as long as the run"),
    ("save-steps-few-samples", "max_samples that leaves fewer steps than save_steps (warned; rank 0)",
     {"lora_job_max_samples": 16, "lora_job_lora_rank": 0}, "lora_job_save_steps 16 is as long as the run or longer (about 12 optimizer steps"),
    ("save-steps-big-batch", "a batch so big the run is shorter than save_steps (warned; rank 0)",
     {"lora_job_effective_batch_size": 128, "lora_job_lora_rank": 0}, "lora_job_save_steps 16 is as long as the run or longer (about 6 optimizer steps"),
]
# A small tmpfs mounted for one case's run only (case: (mount point, size)); outside the snapshot's folders, so the
# snapshot still reads the real /opt/radeonlab and /var/lib/radeonlab, and it must still be empty when the run ends.
SMALL_DISKS = {"disk-full-venv": ("/srv/radeonlab-full", "64m"), "disk-full-model": ("/srv/radeonlab-jobs", "256k")}
RESULTS = {}
# Rows whose check another row of the same class already runs in make test: left to make test-full, which runs every row
# (tests/tools/pytest_full_only.py; make test's 45-minute budget, issue 46). make test keeps one row per validator.
FULL_ONLY = {
    "fingerprint-short", "override-not-xyz", "user-missing", "user-system", "string-for-list-pip", "epochs-negative", "batch-zero",
    "dataset-sharegpt", "dataset-sharegpt-unanswered", "webui-password-newline", "api-port-taken", "model-cache-unreachable",
    "model-cache-escaping", "venv-space", "prefix-semicolon", "poll-zero-torch", "poll-zero-llamafactory", "poll-negative-llamafactory",
    "poll-negative-torch", "disk-full-model", "hf-endpoint-no-scheme", "extra-index-no-scheme", "git-url-no-scheme",
    "val-size-negative", "params-b-negative", "min-free-negative", "template-hyphen", "template-case", "template-empty",
    "extra-args-template", "extra-args-batch", "pin-misspelt", "pin-priority", "pin-newline", "save-steps-few-samples",
    "save-steps-big-batch",
}
WORKERS = 4  # the runs only read the host, so they can overlap; most of a run is waiting on connections


def _docker(host, command):
    return subprocess.run(["docker", "exec", host, "sh", "-c", command], capture_output=True, text=True, check=True).stdout


def _site(args, cache):
    env = dict(os.environ, ANSIBLE_CACHE_PLUGIN="jsonfile", ANSIBLE_CACHE_PLUGIN_CONNECTION=cache, ANSIBLE_GATHERING="smart",
               ANSIBLE_PIPELINING="true")
    argv = ["ansible-playbook", "-i", os.environ["MOLECULE_INVENTORY_FILE"], CONVERGE] + args
    start = time.monotonic()
    run = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env, check=False)
    return run.returncode, run.stdout + run.stderr, time.monotonic() - start


def _args(given):
    if isinstance(given, dict):
        return ["-e", json.dumps(given)]
    return list(given) if isinstance(given, list) else []


def _run_case(target, baseline, case, cache):
    name, what, given, expected = case
    disk, left = SMALL_DISKS.get(name), ""
    if disk:
        _docker(target, "mkdir -p %s && mount -t tmpfs -o size=%s,mode=0755 radeonlab-small %s" % (disk[0], disk[1], disk[0]))
    try:
        rc, output, seconds = _site(_args(given), cache)
    finally:
        if disk:
            left = _docker(target, "ls -A %s; umount %s && rmdir %s" % (disk[0], disk[0], disk[0]))
    after = _docker(target, SNAPSHOT)
    words = " ".join(output.split())  # a warning is a debug task's msg, which the callback wraps over lines
    at = words.find(" ".join(expected.split()))
    return name, {"what": what, "given": given if given != "os-release" else "/etc/os-release of Rocky Linux 9.4", "rc": rc,
                  "output": output, "expected": expected, "seconds": seconds, "unchanged": after == baseline and not left.strip(),
                  "message": words[at:at + 400].split(" Origin: ")[0] if at >= 0 else "",
                  "refused": rc != 0 and at >= 0 and MAIN_PLAY not in output and "changed: [" not in output}


def _selected(request):
    """The cases whose row this pytest run selected (all of them, unless make test left some to make test-full)."""
    return {item.callspec.params["case"][0] for item in request.session.items
            if getattr(item, "originalname", "") == "test_bad_input_refused_before_any_change" and hasattr(item, "callspec")}


@pytest.fixture(scope="module")
def runs(host, request):
    """Every case, each its own ansible-playbook run, compared with one snapshot taken before the first.

    The distribution case runs alone first (it rewrites /etc/os-release and needs fresh facts), one more case warms the
    fact cache, the rest overlap on copies of it. A case that changed anything would show in its own snapshot and in
    those of every case that finished after it.
    """
    target = host.backend.get_hostname()
    for old in glob.glob(FACT_CACHE + "*"):
        shutil.rmtree(old)
    baseline = _docker(target, SNAPSHOT)
    results = {}
    selected = [c for c in CASES if c[0] in _selected(request)]
    distro = [c for c in selected if c[2] == "os-release"]
    others = [c for c in selected if c[2] != "os-release"]
    _docker(target, "cp /etc/os-release /root/os-release.orig && printf %s %s > /etc/os-release" % ("'%s'", shlex.quote(ROCKY)))
    try:
        for case in distro:
            name, row = _run_case(target, baseline, case, FACT_CACHE + "-distro")
            results[name] = row
    finally:
        _docker(target, "cp /root/os-release.orig /etc/os-release && rm /root/os-release.orig")
    name, row = _run_case(target, baseline, others[0], FACT_CACHE)
    results[name] = row
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        futures = []
        for index, case in enumerate(others[1:]):
            cache = "%s-%d" % (FACT_CACHE, index)
            shutil.copytree(FACT_CACHE, cache)
            futures.append(pool.submit(_run_case, target, baseline, case, cache))
        for future in futures:
            name, row = future.result()
            results[name] = row
    RESULTS.update(results)
    return results


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0], marks=[pytest.mark.full_only] if c[0] in FULL_ONLY else [])
                                  for c in CASES])
def test_bad_input_refused_before_any_change(runs, case):
    row = runs[case[0]]
    output = row["output"]
    assert row["rc"] != 0, output[-3000:]
    assert " ".join(row["expected"].split()) in " ".join(output.split()), output[-3000:]  # word by word, as _run_case
    assert MAIN_PLAY not in output, "the site's main play started: the validation let it through"
    assert "changed: [" not in output, output[-3000:]
    assert row["unchanged"], "the host changed"


def test_write_results_reliability():
    ran = [case[0] for case in CASES if case[0] in RESULTS]
    assert ran, "run the whole module: the table is written from the cases that ran"
    refused = [n for n in RESULTS if RESULTS[n]["refused"] and RESULTS[n]["unchanged"]]
    lines = [
        "# Reliability: bad inputs refused before any change",
        "",
        faultlab.generated_by("`molecule test -s site_bad_input` (molecule/site_bad_input/tests/test_bad_input.py)", PAGE),
        "The rest of the reliability results, each generated by its own scenario: faults on a converged site (a killed",
        "job, a restarted one, a reboot mid-run, a host down) in [reliability_faults_site.md](reliability_faults_site.md),",
        "the package faults (the mirror gone during apt and pip, an interrupted pip) in",
        "[reliability_faults_packages.md](reliability_faults_packages.md), planted secrets in",
        "[reliability_secrets.md](reliability_secrets.md).",
        "",
        "Each case runs `ansible-playbook playbooks/site.yml` (through the scenario's converge.yml, no tags) on a lab",
        "workstation that has the ROCm repository and the stand-in ROCm, with one bad input. Refused: the run",
        "failed in playbooks/validate.yml with the quoted message, before the site's main play started. Unchanged: a snapshot",
        "of /etc/apt, /etc/systemd, /etc/radeonlab, /etc/llamafactory, /opt/radeonlab (the venv), /var/lib/radeonlab (the",
        "job folder), /var/lib/llamafactory and the accounts and groups, taken before the first case and after each, is",
        "identical. The same site.yml with the lab's own variables passes the validation: converge and idempotence ran it",
        "(with the ROCm repository and driver tags) before these cases.",
        "",
        "The two disk-full cases mount a small tmpfs (64 MiB at /srv/radeonlab-full, 256 KiB at /srv/radeonlab-jobs) for",
        "their own run only and point the venv or the job root into it: outside the snapshot's folders, so the snapshot",
        "still reads the real ones; unchanged also means the tmpfs was still empty when the run ended. The venv needs",
        "the support matrix's estimates (VENV_SPACE: PyTorch for ROCm 14 GiB, LLaMA-Factory 2 GiB, one venv), the job",
        "root the lab model and data set as the controller holds them.",
        "",
        "The three save-steps rows are warnings, not refusals (a checkpoint interval longer than the run still trains):",
        "each adds `lora_job_lora_rank: 0` so that the run stops before any change, and the row checks that the warning,",
        "which names what a kill would then cost, came first.",
        "",
        "A WebUI password with `\\`, `$`, quotes or spaces at either end is not refused: the credentials file quotes it",
        "for systemd (radeonlab.llm.systemd_env_quote), and `test_password_survives_systemd` reads it back through a",
        "unit's EnvironmentFile=. Only a control character (a newline) is refused.",
        "",
        "| case | bad input | refused | unchanged | seconds | message (excerpt) |",
        "|---|---|---|---|---|---|",
    ]
    for name in ran:
        row = RESULTS[name]
        given = row["given"] if isinstance(row["given"], str) else json.dumps(row["given"]) if isinstance(row["given"], dict) else " ".join(row["given"])
        given = given.replace(PROJECT + "/", "")
        message = row["message"].replace(PROJECT + "/", "").replace("|", "\\|")[:300]
        lines.append("| %s | %s: `%s` | %s | %s | %.1f | %s |" % (name, row["what"], given.replace("|", "\\|"),
                                                                 "yes" if row["refused"] else "no", "yes" if row["unchanged"] else "NO",
                                                                 row["seconds"], message))
    lines += ["", "**%d of %d bad inputs refused before any change.**" % (len(refused), len(ran)), ""]
    if len(ran) < len(CASES):
        lines += ["make test ran %d of the %d rows, one per check; `make test-full` runs every row." % (len(ran), len(CASES)), ""]
    with open(faultlab.results_page(PAGE), "w", encoding="utf-8") as handle:
        handle.write("\n".join(lines))
    assert len(refused) == len(ran)


def test_password_survives_systemd(host):
    """The quoting the llamafactory role writes (systemd_env_quote) gives a unit the password byte for byte."""
    password = "a\\b $HOME \"q\" 'x' `t`  "
    quoted = subprocess.run(
        ["ansible", "localhost", "-m", "ansible.builtin.debug", "-a", "msg={{ pw | radeonlab.llm.systemd_env_quote }}",
         "-e", json.dumps({"pw": password}), "-o"], capture_output=True, text=True, check=True).stdout
    value = json.loads(quoted.split("=>", 1)[1])["msg"]
    target = host.backend.get_hostname()
    _docker(target, "printf 'PW=%%s\\n' %s > /root/pw.env" % shlex.quote(value))
    seen = _docker(target, "systemd-run --wait --pipe --quiet -p EnvironmentFile=/root/pw.env "
                           "/usr/bin/python3 -c 'import os, json; print(json.dumps(os.environ[\"PW\"]))'; rm -f /root/pw.env")
    assert json.loads(seen) == password
