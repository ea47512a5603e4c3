"""The bad-input table of issue 20 and 51, and how a case is replayed against a converged lab host.

Used by molecule/site_bad_input (every row on a host that has only the ROCm repository and the stand-in ROCm:
tests/test_bad_input.py). A row is one run of the scenario's converge (the whole site.yml,
no tags) with one bad input; it must fail in playbooks/validate.yml with a message naming the variable, before the
site's main play starts, and a snapshot of the host taken before the first row and after each must be equal.

Test infrastructure only; stdlib only. Nothing runs at import (the unit tests read the table).
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
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
# the table's data set and inventory files (the rows name them in docs/reliability.md)
FILES = os.path.join(PROJECT, "molecule", "site_bad_input", "files")
EPHEMERAL = os.environ.get("MOLECULE_EPHEMERAL_DIRECTORY", "/tmp")
MAIN_PLAY = "PLAY [ROCm, GPU access, PyTorch for ROCm, LLaMA-Factory and the LoRA job]"
AMD_FPR = "CA8BB4727A47B4D09B4EE8969386B48A1A693C5C"
ROCKY = 'NAME="Rocky Linux"\nID="rocky"\nID_LIKE="rhel centos fedora"\nVERSION_ID="9.4"\nPRETTY_NAME="Rocky Linux 9.4"\n'
OS_RELEASE = "os-release"  # a row's input that is the host's /etc/os-release, not a variable
HOST = "{host}"  # in a row's expected text: the inventory name of the host the row runs on

# A stand-in of the Hugging Face hub's resolve/ path for the hub-sized rows (tests/fixtures/hub/README.md), on the loopback
# the controller shares with the lab host, on a port of the scenario's own (serve_hub); the controller's hub config cache
# of the scenario's own.
HUB = os.path.join(PROJECT, "tests", "fixtures", "hub")
HUB_CACHE = os.path.join(EPHEMERAL, "hub-configs")
HUB_MODEL = {"lora_job_model_src": "", "lora_job_model": "Qwen/Qwen2.5-72B-Instruct", "lora_job_hub_config_cache": HUB_CACHE,
             "lora_job_model_cache": False}
# The lab downloads its model through the mirror's stand-in hub (lora_job_model_cache); these rows use the fixture hub
# and a model cache of the scenario's own, one folder per row (the download of one must not be found by another).
MODEL_CACHE = os.path.join(EPHEMERAL, "model-cache")


def table(hub_port):
    """The rows: (id, what is wrong, extra vars (JSON) or raw -e / -i arguments, text the refusal must contain).

    hub_port: where the scenario serves the fixture hub (serve_hub). A row's expected text may hold HOST.
    """
    hub = "http://127.0.0.1:%d" % hub_port
    return [
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
        ("distro-unknown", "unknown distribution (Rocky Linux 9)", OS_RELEASE, "rocm_repo supports amd64 Debian-family hosts"),
        ("user-missing", "training user that does not exist (creation off)",
         {"pytorch_rocm_user": "ghost", "lora_job_user": "ghost", "radeonlab_training_user_create": False},
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
        ("webui-password-short", "WebUI password under 12 characters",
         {"llamafactory_webui_bind": "0.0.0.0", "llamafactory_webui_auth_user": "owner", "llamafactory_webui_auth_password": "short"},
         "at least 12 characters"),
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
         {**HUB_MODEL, "lora_job_hf_endpoint": hub}, "a 72.71 B-parameter model at cutoff_len"),
        ("hub-config-unreachable", "a hub model without params_b whose config.json cannot be fetched",
         {**HUB_MODEL, "lora_job_hf_endpoint": "http://127.0.0.1:9"}, "its config.json (which sizes the job) did not come from"),
        ("model-cache-unreachable", "lora_job_model_cache with a hub the controller cannot reach",
         {"lora_job_hf_endpoint": "http://127.0.0.1:9", "lora_job_model_cache_dir": MODEL_CACHE + "-unreachable"},
         "lora_job_model_cache: the files of 'radeonlab-lab/tiny-qwen2' at revision 'main' could not be listed from http://127.0.0.1:9"),
        ("model-cache-tampered", "lora_job_model_cache from a hub serving a file other than the one it lists (LFS sha256)",
         {"lora_job_model": "radeonlab-lab/tampered", "lora_job_hf_endpoint": hub, "lora_job_model_cache_dir": MODEL_CACHE + "-tampered"},
         "lora_job_model_cache: 1 file(s) of 'radeonlab-lab/tampered' did not come from %s: config.json (The checksum" % hub),
        ("model-cache-escaping", "lora_job_model_cache from a hub listing a file named ../../.bashrc",
         {"lora_job_model": "radeonlab-lab/escaping", "lora_job_hf_endpoint": hub, "lora_job_model_cache_dir": MODEL_CACHE + "-escaping"},
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
         {"lora_job_save_steps": 100000, "lora_job_lora_rank": 0}, "WARNING: " + HOST + ": lora_job_save_steps 100000 is as long as the run"),
        ("save-steps-few-samples", "max_samples that leaves fewer steps than save_steps (warned; rank 0)",
         {"lora_job_max_samples": 16, "lora_job_lora_rank": 0}, "lora_job_save_steps 16 is as long as the run or longer (about 12 optimizer steps"),
        ("save-steps-big-batch", "a batch so big the run is shorter than save_steps (warned; rank 0)",
         {"lora_job_effective_batch_size": 128, "lora_job_lora_rank": 0}, "lora_job_save_steps 16 is as long as the run or longer (about 6 optimizer steps"),
    ]


# The value classes of issue 51, each with at least three rows (tests/unit/tools/test_bad_inputs_table.py).
ISSUE_51_CLASSES = {
    "URL without a scheme": ["base-url-no-scheme", "hf-endpoint-no-scheme", "index-url-no-scheme", "extra-index-no-scheme",
                             "git-url-no-scheme"],
    "negative count read as 'all'": ["max-samples-negative", "val-size-negative", "params-b-negative", "min-free-negative"],
    "divide-by-zero value": ["poll-zero-torch", "poll-zero-job", "poll-zero-llamafactory", "poll-negative-llamafactory",
                             "poll-negative-torch"],
    "unknown chat template": ["template-unknown", "template-hyphen", "template-case", "template-empty"],
    "lora_job_extra_args keys the runner manages": ["extra-args-template", "extra-args-output-dir", "extra-args-batch"],
    "apt pin string": ["pin-misspelt", "pin-priority", "pin-newline", "pin-bad-key"],
    "checkpoint interval longer than the run (a warning)": ["save-steps-beyond-run", "save-steps-few-samples",
                                                            "save-steps-big-batch"],
}
# A small tmpfs mounted for one row's run only (row: (mount point, size)); outside the snapshot's folders, so the
# snapshot still reads the real /opt/radeonlab and /var/lib/radeonlab, and it must still be empty when the run ends.
SMALL_DISKS = {"disk-full-venv": ("/srv/radeonlab-full", "64m"), "disk-full-model": ("/srv/radeonlab-jobs", "256k")}
WORKERS = 4  # the runs only read the host, so they can overlap; most of a run is waiting on connections

# What a row must leave as it found it: every file (mode, owner, size, md5) of these trees, and the accounts.
TREES = ("/etc/apt", "/etc/systemd", "/etc/radeonlab", "/etc/llamafactory", "/opt/radeonlab", "/var/lib/radeonlab",
         "/var/lib/llamafactory")
SECTION = "\n== "  # the snapshot's extra sections (listed trees, venvs, units) each start with a line "== <what>"


def snapshot_script(listed=(), venvs=(), units=()):
    """One shell script for one `docker exec`: what a row must leave unchanged.

    The TREES file by file with their md5, then the accounts; a tree in ``listed`` (a venv of gigabytes) is only
    listed, with each file's size and mtime instead of its md5, after each venv's `pip freeze` (no bytecode written by
    it); each systemd unit in ``units`` by its state, main pid, start time and restarts (a restart shows). Each extra
    section starts with a line of SECTION.
    """
    script = ("for d in %s; do [ -e $d ] || { echo \"absent $d\"; continue; }; find $d -xdev -printf '%%p %%y %%m %%u %%g %%s\\n' | sort; "
              "find $d -xdev -type f -exec md5sum {} + | sort; done; getent passwd; getent group"
              % " ".join(tree for tree in TREES if tree not in listed))
    for venv in venvs:
        script += "; echo '%spip freeze %s'; PYTHONDONTWRITEBYTECODE=1 %s/bin/python -m pip freeze --all --disable-pip-version-check 2>&1" % (
            SECTION.strip("\n"), venv, shlex.quote(venv))
    for tree in listed:
        script += "; echo '%slisted %s'; find %s -xdev -printf '%%p %%y %%m %%u %%g %%s %%T@\\n' | sort" % (SECTION.strip("\n"), tree, shlex.quote(tree))
    for unit in units:
        script += ("; echo '%sunit %s'; systemctl show -p ActiveState -p SubState -p MainPID -p ActiveEnterTimestampMonotonic "
                   "-p ExecMainStartTimestampMonotonic -p NRestarts %s" % (SECTION.strip("\n"), unit, shlex.quote(unit)))
    return script


def docker(host, command):
    return subprocess.run(["docker", "exec", host, "sh", "-c", command], capture_output=True, text=True, check=True).stdout


def serve_hub(port):
    """The fixture hub on 127.0.0.1:port for the rest of this process (a daemon thread), once per port."""
    return _hub_server(port)


@functools.lru_cache(maxsize=None)
def _hub_server(port):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(http.server.SimpleHTTPRequestHandler, directory=HUB))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def args(given):
    """A row's input as ansible-playbook arguments (its /etc/os-release row has none)."""
    if isinstance(given, dict):
        return ["-e", json.dumps(given)]
    return list(given) if isinstance(given, list) else []


def _play(converge, extra, row_args, cache, env):
    env = dict(env, ANSIBLE_CACHE_PLUGIN="jsonfile", ANSIBLE_CACHE_PLUGIN_CONNECTION=cache, ANSIBLE_GATHERING="smart",
               ANSIBLE_PIPELINING="true")
    argv = ["ansible-playbook", "-i", os.environ["MOLECULE_INVENTORY_FILE"], converge] + list(extra) + row_args
    start = time.monotonic()
    run = subprocess.run(argv, capture_output=True, text=True, timeout=600, env=env, check=False)
    return run.returncode, run.stdout + run.stderr, time.monotonic() - start


def _run_case(replay, case, cache):
    name, what, given, expected = case
    target = replay["target"]
    expected = expected.replace(HOST, target)
    disk, left = SMALL_DISKS.get(name), ""
    if disk:
        docker(target, "mkdir -p %s && mount -t tmpfs -o size=%s,mode=0755 radeonlab-small %s" % (disk[0], disk[1], disk[0]))
    try:
        rc, output, seconds = _play(replay["converge"], replay["extra"], args(given), cache, replay["env"])
    finally:
        if disk:
            left = docker(target, "ls -A %s; umount %s && rmdir %s" % (disk[0], disk[0], disk[0]))
    after = replay["snapshot"]()
    words = " ".join(output.split())  # a warning is a debug task's msg, which the callback wraps over lines
    at = words.find(" ".join(expected.split()))
    return name, {"what": what, "given": given if given != OS_RELEASE else "/etc/os-release of Rocky Linux 9.4", "rc": rc,
                  "output": output, "expected": expected, "seconds": seconds, "after": after, "left": left.strip(),
                  "unchanged": after == replay["baseline"] and not left.strip(),
                  "message": words[at:at + 400].split(" Origin: ")[0] if at >= 0 else "",
                  "refused": rc != 0 and at >= 0 and MAIN_PLAY not in output and "changed: [" not in output}


def selected(request, test_name):
    """The rows whose check (test_name, parametrized by ``case``) this pytest run selected: all of them, unless make test
    left some to make test-full or -k chose some."""
    return {item.callspec.params["case"][0] for item in request.session.items
            if getattr(item, "originalname", "") == test_name and hasattr(item, "callspec")}


def replay(target, cases, converge, snapshot, facts, extra=(), env=None):
    """Every row of ``cases``, each its own ansible-playbook run of ``converge`` (with ``extra`` arguments), compared
    with one ``snapshot()`` taken before the first; returns {"baseline": ..., "rows": {id: row}}.

    The distribution row runs alone first (it rewrites /etc/os-release and needs fresh facts), one more row warms the
    fact cache (``facts``, a path prefix of the scenario's own), the rest overlap on copies of it. A row that changed
    anything would show in its own snapshot and in those of every row that finished after it.
    """
    for old in glob.glob(facts + "*"):
        shutil.rmtree(old)
    run = {"target": target, "converge": converge, "extra": list(extra), "env": dict(os.environ if env is None else env),
           "snapshot": snapshot, "baseline": snapshot()}
    results = {}
    distro = [c for c in cases if c[2] == OS_RELEASE]
    others = [c for c in cases if c[2] != OS_RELEASE]
    if distro:
        docker(target, "cp /etc/os-release /root/os-release.orig && printf %s %s > /etc/os-release" % ("'%s'", shlex.quote(ROCKY)))
        try:
            for case in distro:
                name, row = _run_case(run, case, facts + "-distro")
                results[name] = row
        finally:
            docker(target, "cp /root/os-release.orig /etc/os-release && rm /root/os-release.orig")
    if others:
        name, row = _run_case(run, others[0], facts)
        results[name] = row
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        futures = []
        for index, case in enumerate(others[1:]):
            cache = "%s-%d" % (facts, index)
            shutil.copytree(facts, cache)
            futures.append(pool.submit(_run_case, run, case, cache))
        for future in futures:
            name, row = future.result()
            results[name] = row
    return {"baseline": run["baseline"], "rows": results}
