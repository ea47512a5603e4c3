# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pure checks behind playbooks/validate.yml: the site's inputs and hosts, before anything changes.

No Ansible import; Python 3.8+. Every check returns a list of problems, each one sentence that names
the variable and the fix, so the play can report them all at once. The roles' own preflight asserts
(which validate.yml runs too) stay where they are; this module holds what no role can check alone:
the types of values as the user gave them, misspelt names, shell-safe paths, accounts against the host's
password database, the served OpenPGP key, a data set file's shape and a listening port.
"""

from __future__ import annotations

import ast
import base64
import difflib
import hashlib
import json
import math
import re
from urllib.parse import urlsplit

from ansible_collections.radeonlab.llm.plugins.module_utils.free_space import space_problems
from ansible_collections.radeonlab.llm.plugins.module_utils.gfx import torch_for
from ansible_collections.radeonlab.llm.plugins.module_utils.job_datasets import problems as job_dataset_problems
from ansible_collections.radeonlab.llm.plugins.module_utils.support_matrix import LLAMAFACTORY_TEMPLATES, TORCH_INDEX_BASE, TORCH_WHEELS, VOCABULARY
from ansible_collections.radeonlab.llm.plugins.module_utils.variable_names import name_problems

PATH_RE = re.compile(r"^/[A-Za-z0-9._+@/-]*$")
NAME_RE = re.compile(r"^[a-z_][a-z0-9_-]*[$]?$")
LIST_HINT = """write a YAML list, or on the command line -e '{"%s": [%s]}'"""


def spec_options(argument_specs, entry="main"):
    """The options of one entry point of a role's argument_specs, without defaults (only given values are checked)."""
    options = ((argument_specs or {}).get("argument_specs", {}).get(entry) or {}).get("options") or {}
    return dict((name, _without_default(option)) for name, option in options.items())


def _without_default(option):
    result = dict((key, value) for key, value in option.items() if key != "default")
    if isinstance(result.get("options"), dict):
        result["options"] = dict((name, _without_default(sub)) for name, sub in result["options"].items())
    return result


def _kind(value):
    if isinstance(value, str):
        return "the string"
    if isinstance(value, dict):
        return "the dict"
    if isinstance(value, (list, tuple)):
        return "the list"
    return "the value"


def type_problems(options, values):
    """Lists and dicts given as something else (``-e gpu_groups_users=trainer`` is a string, not a list).

    ansible.builtin.validate_argument_spec accepts a string for a list (it splits on commas), but the roles
    would walk that string letter by letter, so a string is refused here.
    """
    problems = []
    for name in sorted(values):
        if name not in options:
            continue
        kind, value = options[name].get("type", "str"), values[name]
        if kind == "list" and not isinstance(value, (list, tuple)):
            items = ", ".join(json.dumps(v.strip()) for v in str(value).split(",") if v.strip())
            problems.append("%s must be a list, got %s %r: %s." % (name, _kind(value), str(value), LIST_HINT % (name, items)))
        elif kind == "dict" and not isinstance(value, dict):
            problems.append("%s must be a dict (a YAML mapping, or JSON with -e '{\"%s\": {...}}'), got %s %r."
                            % (name, name, _kind(value), value if isinstance(value, (list, tuple)) else str(value)))
    return problems


def path_problems(paths):
    """Absolute paths the roles pass to shells and unit files: letters, digits and ``._+@/-`` only, no ``..``."""
    problems = []
    for name in sorted(paths):
        value = paths[name]
        if not isinstance(value, str) or not PATH_RE.match(value) or "/../" in value + "/":
            problems.append(
                "%s must be an absolute path of letters, digits and ._+@/- (no spaces, ';', quotes or '..'), got %r: "
                "choose such a path." % (name, value))
    return problems


def positive_problems(numbers):
    """Counts and sizes that must be > 0 (batch, epochs, rank, ...)."""
    problems = []
    for name in sorted(numbers):
        value = numbers[name]
        try:
            ok = not isinstance(value, bool) and float(value) > 0
        except (TypeError, ValueError):
            ok = False
        if not ok:
            problems.append("%s must be a number greater than 0, got %r." % (name, value))
    return problems


def _number(value):
    """``value`` as a float, None for a bool or anything that is no number."""
    if isinstance(value, bool):
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def count_problems(counts):
    """Counts and sizes where 0 means "all", "none" or "the estimate" (``{variable: {"value", "zero"}}``, ``zero`` what 0
    means): the roles test them with ``> 0``, so a negative one would silently mean the same as 0. Refused instead."""
    problems = []
    for name in sorted(counts):
        value, zero = counts[name].get("value"), counts[name].get("zero") or "the default"
        number = _number(value)
        if number is None or number < 0:
            problems.append("%s is %r, but it must be 0 (%s) or a positive number: a negative value is no count (the role "
                            "reads anything not above 0 as 0, %s, or the job fails only when it starts). Set 0 for that, or "
                            "the count you meant." % (name, value, zero, zero))
    return problems


def divisor_problems(divisors):
    """Values a task divides by (a poll interval: async retries = timeout / interval): a whole number >= 1, or the
    template ends in a ZeroDivisionError (or, below 1 after ``| int``, divides by 0) instead of naming the variable."""
    problems = []
    for name in sorted(divisors):
        value = divisors[name]
        number = _number(value)
        if number is None or number < 1 or number != int(number):
            problems.append("%s must be a number greater than 0 - a whole number of seconds, at least 1 - got %r: the play "
                            "divides its timeout by it to count its progress polls. Set it to 1-30 (the default is 15)."
                            % (name, value))
    return problems


URL_FIXES = {"http": "http://", "https": "https://", "file": "file://", "ssh": "ssh://", "git": "git://"}
SCP_LIKE = re.compile(r"^[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:[^/\s]")  # git's user@host:path form


def url_problems(entries):
    """URL-valued variables (an index, a mirror, an endpoint, a repository) without a scheme or with one the tool cannot use.

    ``entries``: a list of {variable, value (a string or a list of strings), schemes (allowed, e.g. ["http", "https"]),
    optional (an empty value means "none"/"the default"), scp (git also takes user@host:path)}. A bare host name such as
    ``hf-mirror.com`` is what a user writes for a mirror; the tools would read it as a relative path or refuse it late.
    """
    problems = []
    for entry in entries or []:
        name, schemes = entry["variable"], list(entry.get("schemes") or ["http", "https"])
        values = entry.get("value")
        listed = isinstance(values, (list, tuple))
        for index, value in enumerate(values if listed else [values]):
            where = "%s[%d]" % (name, index) if listed else name
            text = "" if value is None else str(value)
            if not text.strip() and entry.get("optional") and not listed:
                continue
            if entry.get("scp") and SCP_LIKE.match(text):
                continue
            parts = urlsplit(text) if "://" in text else None
            kinds = " or ".join(URL_FIXES.get(scheme, scheme + "://") for scheme in schemes)
            # without a scheme, user:password@host is still a credential (redact_url knows URLs only)
            shown = redact_url(text) if parts is not None else redact_url("x://" + text)[len("x://"):]
            if parts is None:
                fix = URL_FIXES.get(schemes[0], schemes[0] + "://") + shown.lstrip("/")
                problems.append("%s %r has no scheme: a mirror, index or endpoint is a URL (%s), so write %r." % (where, shown, kinds, fix))
            elif parts.scheme.lower() not in schemes or re.search(r"\s", text) or not (parts.netloc or parts.scheme.lower() == "file"):
                problems.append("%s must be a %s URL with a host and no spaces, got %r." % (where, kinds, shown))
    return problems


APT_PIN_RELEASE_KEYS = ("a", "n", "v", "o", "l", "c", "b")


def apt_pin_problems(pins):
    """apt_preferences(5) ``Pin:`` expressions (``{variable: expression}``): ``release`` with comma-separated key=value
    pairs (a, n, v, o, l, c, b; a bare version also works), ``version <version>`` or ``origin <host>``. Its priority is
    a separate ``Pin-Priority:`` line (an integer) that the role writes; a newline would start a stanza of its own."""
    problems = []
    for name in sorted(pins):
        value = "" if pins[name] is None else str(pins[name])
        form, rest = (value.strip().split(None, 1) + ["", ""])[:2]
        rest = rest.strip()
        why = ""
        if re.search(r"[\x00-\x1f\x7f]", value):
            why = "it holds a newline or another control character, which would end the Pin: line (and could add a stanza)"
        elif re.match(r"^-?\d+$", value.strip()):
            why = "that is a priority; the Pin-Priority: line is the role's own, this is the expression that selects the packages"
        elif form not in ("release", "version", "origin"):
            why = "it must start with release, version or origin"
        elif not rest:
            why = "%s needs a value" % form
        elif form == "release" and "=" in rest:
            pairs = [pair.strip() for pair in rest.split(",")]
            bad = [pair for pair in pairs if not re.match(r"^[%s]=\S" % "".join(APT_PIN_RELEASE_KEYS), pair)]
            if bad:
                why = "release takes comma-separated key=value pairs with the keys %s, not %s" % (
                    ", ".join(APT_PIN_RELEASE_KEYS), ", ".join(repr(pair) for pair in bad))
        elif form in ("version", "origin") and re.search(r"\s", rest) and not re.match(r'^"[^"]*"$', rest):
            why = "%s takes one word (quote an empty origin as \"\")" % form
        if why:
            problems.append("%s %r is not an apt_preferences(5) Pin: expression: %s. Write e.g. 'release o=repo.radeon.com' "
                            "(the default), 'release o=repo.radeon.com,n=noble' or 'version 6.4*'." % (name, value, why))
    return problems


def managed_extra_args(job):
    """The LLaMA-Factory arguments the runner writes itself for a job of these settings (``job``: max_samples, val_size,
    model_revision, distributed), from support_matrix.VOCABULARY; the plan's own (QLoRA, a paged optimizer, the CPU) are
    left to the runner, which knows the plan."""
    keys = set(VOCABULARY["runner_managed_keys"])
    when = VOCABULARY["runner_managed_keys_when"]
    if (_number(job.get("max_samples")) or 0) > 0:
        keys.update(when["max_samples"])
    if (_number(job.get("val_size")) or 0) > 0:
        keys.update(when["val_size"])
    if job.get("model_revision"):
        keys.update(when["model_revision"])
    if job.get("distributed"):
        keys.update(when["distributed"])
    return keys


def extra_args_problems(extra_args, job, options=()):
    """lora_job_extra_args keys that the runner manages (it would refuse them only after the job spec was written).
    ``options``: the role's variable names, to name the one that sets such a key (lora_rank -> lora_job_lora_rank)."""
    if not isinstance(extra_args, dict):
        return []
    clashes = sorted(set(extra_args) & managed_extra_args(job or {}))
    if not clashes:
        return []
    instead = ["%s -> lora_job_%s" % (key, key) for key in clashes if "lora_job_" + key in set(options)]
    return ["lora_job_extra_args sets %s, which the LoRA runner manages itself (it would refuse the job after writing its "
            "spec): remove %s from lora_job_extra_args%s." % (
                ", ".join(clashes), "them" if len(clashes) > 1 else "it",
                "; set the role's variable instead (%s)" % ", ".join(instead) if instead else
                " (the runner sizes the batch, writes the paths and resumes from its own checkpoints)")]


def template_names(source):
    """The chat template names LLaMA-Factory's data/template.py registers (``register_template(name=...)`` at module
    level), from its text; None when it cannot be parsed."""
    try:
        tree = ast.parse(source or "")
    except (SyntaxError, ValueError):
        return None
    names = set()
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "register_template":
            names.update(kw.value.value for kw in call.keywords
                         if kw.arg == "name" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str))
    return names or None


def installed_llamafactory(found):
    """The version of the LLaMA-Factory whose files ``found`` lists (``llamafactory-0.9.5.dist-info`` among them), or ''."""
    for path in found or []:
        match = re.search(r"/llamafactory-([^/]+)\.dist-info/?$", str(path))
        if match:
            return match.group(1)
    return ""


def template_problems(name, found=(), source="", wanted=""):
    """lora_job_template against LLaMA-Factory's chat templates: those of the venv's template.py (``source``, its files
    ``found``) when the venv has the release ``wanted`` (or ``wanted`` is empty: the venv is what runs), else those
    support_matrix.LLAMAFACTORY_TEMPLATES records for ``wanted``; no list, no check."""
    installed = installed_llamafactory(found)
    known, where = None, ""
    if source and (not wanted or installed == str(wanted)):
        known, where = template_names(source), "LLaMA-Factory %s in the venv" % (installed or "(version unknown)")
    if known is None and str(wanted) in LLAMAFACTORY_TEMPLATES:
        known, where = set(LLAMAFACTORY_TEMPLATES[str(wanted)]), "LLaMA-Factory %s (llamafactory_version)" % wanted
    if known is None or str(name) in known:
        return []
    near = difflib.get_close_matches(str(name).lower(), sorted(known), n=3, cutoff=0.5)
    return ["lora_job_template %r is not a chat template of %s, which would stop at start-up (\"Template %s does not "
            "exist.\") after the job spec was written: %s (its templates are the names of LLaMA-Factory's "
            "data/template.py, e.g. qwen, qwen3, llama3, mistral)." % (
                name, where, name, "did you mean %s?" % " or ".join(near) if near else "name the model family's template")]


def _steps(records, job):
    """Optimizer steps of a run of ``records`` samples: LLaMA-Factory holds out val_size, then ceil(train / batch) per epoch."""
    val = _number(job.get("val_size")) or 0
    held = (math.ceil(records * val) if val < 1 else int(val)) if val > 0 else 0
    train = max(records - held, 0)
    per_epoch = math.ceil(train / max(int(_number(job.get("effective_batch_size")) or 1), 1))
    return math.ceil(per_epoch * (_number(job.get("num_train_epochs")) or 0)), train


def resume_warnings(resume, read=None):
    """A checkpoint interval (lora_job_save_steps) as long as the run or longer: no checkpoint before the end, so a kill
    or reboot mid-run resumes from nothing. Warnings, not problems (the job still trains).

    ``resume``: {save_steps, num_train_epochs, effective_batch_size, max_samples, val_size, files {variable: path or
    {path, dataset}} (the controller's data set files), complete (every data set of the job is one of them)}. The records
    of a hub data set or a host file are not known here: no warning then.
    """
    read = read or _read_text
    if not resume or not resume.get("complete") or not resume.get("files"):
        return []
    cap = int(_number(resume.get("max_samples")) or 0)
    records = 0
    for item in resume["files"].values():
        path = item["path"] if isinstance(item, dict) else item
        try:
            count = len(_records(read(str(path))))
        except (IOError, OSError, ValueError):
            return []
        records += min(count, cap) if cap > 0 else count
    save_steps = int(_number(resume.get("save_steps")) or 0)
    steps, train = _steps(records, resume)
    if save_steps <= 0 or steps <= 0 or save_steps < steps:
        return []
    return ["lora_job_save_steps %d is as long as the run or longer (about %d optimizer steps: %d training records, "
            "lora_job_effective_batch_size %s, lora_job_num_train_epochs %s), so no checkpoint is written before the end: a "
            "job killed or rebooted mid-run resumes from nothing and trains all %d steps again. Set lora_job_save_steps to "
            "at most %d to have a checkpoint halfway." % (
                save_steps, steps, train, resume.get("effective_batch_size"), resume.get("num_train_epochs"), steps, max(steps // 2, 1))]


def secret_problems(secrets):
    """Secrets written into systemd environment files: no control characters (a newline would end the value)."""
    return ["%s contains a control character (newline, tab, ...), which a systemd environment file cannot carry: "
            "choose another." % name for name in sorted(secrets) if re.search(r"[\x00-\x1f\x7f]", str(secrets[name]))]


def systemd_env_quote(value):
    """``"value"`` for a systemd EnvironmentFile line: backslash, double quote, dollar and backquote escaped.

    systemd reads a double-quoted value literally apart from these escapes, so spaces at either end, single
    quotes and ``\\`` survive (systemd.exec(5), EnvironmentFile=).
    """
    escaped = re.sub(r'([\\"$`])', r"\\\1", str(value))
    return '"%s"' % escaped


def redact_url(value):
    """``value`` with the password of every ``scheme://user:password@`` in it replaced by ``********``.

    For messages and facts that name an index, wheelhouse or proxy URL: the user name stays, so it is clear
    which credential is meant; a lone ``token@`` (no password part) is hidden whole. A URL without
    credentials comes back unchanged.
    """
    def hide(match):
        user, colon = match.group(2).partition(":")[:2]
        return match.group(1) + (user + ":" if colon else "") + "********@"

    return re.sub(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)([^/\s@]*)@", hide, str(value))


def user_problems(users, accounts, uid_min=1000, create=(), unprivileged=True, uid_max=60000):
    """Accounts the play trains as or adds to the GPU groups, against the host's password database.

    ``users``: ``{variable: name or list of names}``; ``accounts``: ``{name: {"uid": int}}`` of the host; ``create``:
    the names the play creates when missing. With ``unprivileged`` (the training users), root (uid 0) and existing
    system accounts (uid outside ``uid_min``..``uid_max``, as gpu_groups refuses them) are refused too.
    """
    problems = []
    for variable in sorted(users):
        names = users[variable]
        for name in names if isinstance(names, (list, tuple)) else [names]:
            entry = accounts.get(name)
            if not isinstance(name, str) or not NAME_RE.match(name):
                problems.append("%s: %r is not a user name (lower-case letters, digits, '_' or '-')." % (variable, name))
            elif entry is None and name not in create:
                problems.append(
                    "%s: user %r does not exist on this host and the play does not create it: create it first, or set "
                    "radeonlab_training_user_create: true to have the training user (pytorch_rocm_user, lora_job_user) "
                    "created." % (variable, name))
            elif entry is not None and unprivileged and int(entry["uid"]) == 0:
                problems.append("%s: %r is root (uid 0); training never runs as root: name an unprivileged user." % (variable, name))
            elif entry is not None and unprivileged and not uid_min <= int(entry["uid"]) <= uid_max:
                problems.append("%s: %r is a system account (uid %s outside UID_MIN..UID_MAX %s..%s): name a regular login user."
                                % (variable, name, entry["uid"], uid_min, uid_max))
    return problems


def file_problems(entries, stats):
    """Host paths the job reads: ``entries`` {variable: {"path", "kind": "dir"|"file"}}, ``stats`` site_probe's paths.

    An entry of a lora_job_dataset list (``lora_job_dataset[1] (chats).file``) is told to use its own src."""
    problems = []
    for variable in sorted(entries):
        item = entries[variable]
        stat = stats.get(item["path"]) or {}
        wanted = "isdir" if item["kind"] == "dir" else "isfile"
        if not stat.get(wanted):
            problems.append(
                "%s %r is not %s on this host: %s." % (
                    variable, item["path"], "a directory" if item["kind"] == "dir" else "a file",
                    "copy it there, or name it on the controller with %s" % (
                        "the entry's src" if "[" in variable else variable.split(".")[0] + "_src")))
    return problems


def plan_problems(plan):
    """The runner's ``plan`` (rc 0 fits, 2 refused with the numbers on stderr, else an invalid job)."""
    if not plan or plan.get("skipped") or plan.get("rc") == 0:
        return []
    stderr = (plan.get("stderr") or "").strip()
    if plan.get("rc") == 2 and not stderr.startswith("error:"):  # "error: ..." is an invalid spec (same exit code)
        return ["lora_job_cutoff_len %s / the model does not fit the GPU (the runner's plan): %s" % (plan.get("cutoff_len"), stderr)]
    return ["the LoRA job is invalid (the runner's plan, rc %s): %s" % (plan.get("rc"), stderr.splitlines()[-1] if stderr else "no output")]


def torch_problems(rocm_version, torch):
    """The torch / ROCm pair pytorch_rocm would install, looked up as its preflight does (gfx.torch_for)."""
    try:
        row = torch_for(str(rocm_version), str(torch) if torch else None)
    except ValueError as exc:
        row, reason = None, str(exc)
    else:
        reason = "only a nightly PyTorch index is recorded for this ROCm line" if row["torch"] is None else ""
    if not reason:
        return []
    return ["pytorch_rocm_torch_version %r on ROCm %s (rocm_repo_rocm_version / pytorch_rocm_rocm_version): no stable "
            "PyTorch wheels: %s. Set a pair that has wheels (%s)." % (torch or "(newest)", rocm_version, reason, _newest_pair())]


def _newest_pair():
    """'ROCm 7.2 with torch 2.13.0, 2.12.1 or 2.12.0 is the newest', from the verified stable rows of the support matrix."""
    def key(version):
        return tuple(int(part) for part in version.split("."))
    rows = [row for row in TORCH_WHEELS if row["verified"] and not row["nightly"]]
    line = max((row["rocm_line"] for row in rows), key=key)
    newest = sorted({row["torch"] for row in rows if row["rocm_line"] == line}, key=key, reverse=True)[:3]
    return "ROCm %s with torch %s is the newest" % (line, " or ".join([", ".join(newest[:-1]), newest[-1]] if len(newest) > 1 else newest))


def webui_problems(webui, loopback_re):
    """The WebUI's exposure rules of radeonlab.llm.llamafactory (a login beyond loopback, both halves or neither)."""
    if not webui.get("enabled"):
        return []
    problems = []
    bind, port = str(webui.get("bind") or ""), webui.get("port")
    user, password = str(webui.get("user") or ""), str(webui.get("password") or "")
    if not str(port).isdigit() or not 1024 <= int(port) <= 65535:
        problems.append("llamafactory_webui_port must be a TCP port 1024-65535, got %r." % (port,))
    if not re.match(loopback_re, bind) and not (user and password):
        problems.append(
            "llamafactory_webui_bind %r exposes the WebUI beyond loopback without a login: set llamafactory_webui_auth_user "
            "and llamafactory_webui_auth_password (at least 12 characters, in Ansible Vault), or keep 127.0.0.1 and use "
            "an SSH tunnel." % bind)
    if bool(user) != bool(password):
        problems.append("llamafactory_webui_auth_user and llamafactory_webui_auth_password: set both or neither.")
    if password and len(password) < 12:
        problems.append("llamafactory_webui_auth_password must have at least 12 characters.")
    if re.search(r"[\s:=]", user):
        problems.append("llamafactory_webui_auth_user must not contain spaces, ':' or '=', got %r." % user)
    return problems


# --- the served OpenPGP key ------------------------------------------------------------------
def _dearmor(text):
    blocks = re.findall(r"-----BEGIN PGP PUBLIC KEY BLOCK-----\r?\n(.*?)-----END PGP PUBLIC KEY BLOCK-----", text, re.S)
    if not blocks:
        raise ValueError("it is not an ASCII-armored OpenPGP public key")
    data = b""
    for block in blocks:
        body = block.split("\n\n", 1)[-1] if re.match(r"^[A-Za-z-]+: ", block) else block
        lines = [line.strip() for line in body.splitlines() if line.strip() and not line.startswith("=")]
        data += base64.b64decode("".join(lines))
    return data


def _packets(data):
    pos = 0
    while pos < len(data):
        head = data[pos]
        if not head & 0x80:
            raise ValueError("it is not an OpenPGP packet stream (byte %d)" % pos)
        if head & 0x40:  # new format
            tag, first = head & 0x3F, data[pos + 1]
            if first < 192:
                length, pos = first, pos + 2
            elif first < 224:
                length, pos = ((first - 192) << 8) + data[pos + 2] + 192, pos + 3
            elif first == 255:
                length, pos = int.from_bytes(data[pos + 2:pos + 6], "big"), pos + 6
            else:
                raise ValueError("partial packet lengths are not valid in a key")
        else:
            tag, size = (head >> 2) & 0x0F, {0: 1, 1: 2, 2: 4}.get(head & 3)
            if size is None:
                raise ValueError("indeterminate packet length")
            length, pos = int.from_bytes(data[pos + 1:pos + 1 + size], "big"), pos + 1 + size
        if pos + length > len(data):
            raise ValueError("it is truncated")
        yield tag, data[pos:pos + length]
        pos += length


def openpgp_fingerprints(armored):
    """Fingerprints (upper-case hex) of the primary keys in an ASCII-armored key block; ValueError if unreadable."""
    result = []
    for tag, body in _packets(_dearmor(armored)):
        if tag != 6:
            continue
        if body[:1] == b"\x04":
            result.append(hashlib.sha1(b"\x99" + len(body).to_bytes(2, "big") + body).hexdigest().upper())
        elif body[:1] in (b"\x05", b"\x06"):
            prefix = b"\x9a" if body[:1] == b"\x05" else b"\x9b"
            result.append(hashlib.sha256(prefix + len(body).to_bytes(4, "big") + body).hexdigest().upper())
        else:
            raise ValueError("it holds a version %d key, which apt cannot use" % body[0])
    return result


def key_problems(armored, pinned, url):
    """The key served at ``url`` against ``rocm_repo_key_fingerprint`` (``pinned``; spaces and case ignored)."""
    pinned = re.sub(r"\s", "", str(pinned)).upper()
    try:
        found = openpgp_fingerprints(armored or "")
    except (ValueError, IndexError) as exc:
        return ["rocm_repo_key_url %s: %s; point rocm_repo_key_url at an unchanged copy of AMD's key." % (url, exc)]
    if found == [pinned]:
        return []
    if len(found) != 1:
        return ["rocm_repo_key_url %s holds %d primary keys (%s); exactly one is expected: point it at AMD's key."
                % (url, len(found), ", ".join(found) or "none")]
    return ["rocm_repo_key_fingerprint pins %s but the key served at %s is %s: if AMD rotated its key, confirm the "
            "new fingerprint in AMD's documentation and set rocm_repo_key_fingerprint; with a mirror, serve AMD's key "
            "unchanged." % (pinned, url, found[0])]


# --- a data set file ---------------------------------------------------------------------------
ALPACA_COLUMNS = {"prompt": "instruction", "query": "input", "response": "output"}
# LLaMA-Factory 0.9.5's defaults for a sharegpt entry of dataset_info.json (llamafactory/data/parser.py DatasetAttr)
SHAREGPT_COLUMNS = {"messages": "conversations"}
SHAREGPT_TAGS = {"role_tag": "from", "content_tag": "value", "user_tag": "human", "assistant_tag": "gpt",
                 "observation_tag": "observation", "function_tag": "function_call", "system_tag": "system"}


def _records(text):
    stripped = text.lstrip()
    if stripped.startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def dataset_file(item, dataset=None):
    """(path, description) of a ``datasets`` value: a path read as ``dataset`` says, or {path, dataset} of its own."""
    if isinstance(item, dict):
        return str(item["path"]), item.get("dataset")
    return str(item), dataset


def dataset_problems(variable, text, path, dataset=None):
    """A data set file as the LoRA job renders it, by ``dataset['formatting']`` (alpaca unless given).

    ``text`` is the file's content (JSON array or JSON lines). alpaca: records with string instruction and output
    (optional input); a file of ShareGPT records is named as such, with the setting that trains it. sharegpt: each
    record's messages (``columns.messages``, default conversations) alternate user and assistant turns after an
    optional system turn, in the tags given (``tags``, default from/value/human/gpt), as LLaMA-Factory's converter
    reads them: it skips a record that does not, so a file of such records would train on nothing.
    """
    dataset = dataset if isinstance(dataset, dict) else {}
    formatting = dataset.get("formatting") or "alpaca"
    try:
        records = _records(text)
    except ValueError as exc:
        return ["%s (%s) is not JSON or JSON lines (%s): fix the file." % (variable, path, exc)]
    if not isinstance(records, list) or not records:
        return ["%s (%s) holds no records: it must be a JSON list of %s records." % (variable, path, formatting)]
    if formatting == "sharegpt":
        return _sharegpt_problems(variable, path, records, dataset)
    prompt, response = ALPACA_COLUMNS["prompt"], ALPACA_COLUMNS["response"]
    for index, record in enumerate(records):
        if isinstance(record, dict) and ("conversations" in record or "messages" in record):
            return ["%s (%s) is in ShareGPT shape (record %d has conversations/messages), and lora_job_dataset does not "
                    "say so: set its formatting: sharegpt (with columns/tags for messages of role/content), or convert "
                    "the file to alpaca records {\"instruction\", \"input\", \"output\"}." % (variable, path, index)]
        if not isinstance(record, dict) or not isinstance(record.get(prompt), str) or not isinstance(record.get(response), str):
            return ["%s (%s): record %d is not an alpaca record with string \"%s\" and \"%s\" (optional \"input\"): "
                    "fix the file." % (variable, path, index, prompt, response)]
    return []


def _sharegpt_problems(variable, path, records, dataset):
    column = dict(SHAREGPT_COLUMNS, **(dataset.get("columns") or {}))["messages"]
    tags = dict(SHAREGPT_TAGS, **(dataset.get("tags") or {}))
    role, content = tags["role_tag"], tags["content_tag"]
    turns = ((tags["user_tag"], tags["observation_tag"]), (tags["assistant_tag"], tags["function_tag"]))
    for index, record in enumerate(records):
        messages = record.get(column) if isinstance(record, dict) else None
        where = "%s (%s): record %d" % (variable, path, index)
        if not isinstance(messages, list) or not messages:
            return ["%s has no list of messages in \"%s\" (lora_job_dataset.columns.messages): fix the file or name the "
                    "column." % (where, column)]
        if not all(isinstance(m, dict) and isinstance(m.get(role), str) and isinstance(m.get(content), str) for m in messages):
            return ["%s: every message needs string \"%s\" and \"%s\" (lora_job_dataset.tags role_tag/content_tag; "
                    "messages of role/content need tags: {role_tag: role, content_tag: content, user_tag: user, "
                    "assistant_tag: assistant})." % (where, role, content)]
        if messages[0][role] == tags["system_tag"]:
            messages = messages[1:]
        for turn, message in enumerate(messages):
            if message[role] not in turns[turn % 2]:
                return ["%s: message %d is from '%s' where a %s turn is due (%s): LLaMA-Factory would skip the record."
                        % (where, turn, message[role], ("user", "assistant")[turn % 2], " or ".join(turns[turn % 2]))]
        if not messages or len(messages) % 2:
            return ["%s ends without an answer (%d turns after the system turn): every user turn needs the assistant's "
                    "reply, or LLaMA-Factory skips the record." % (where, len(messages))]
    return []


# --- a listening port --------------------------------------------------------------------------
def listening_ports(proc_net_tcp):
    """Local TCP ports in LISTEN state (0A) in the text of /proc/net/tcp and /proc/net/tcp6."""
    ports = set()
    for line in proc_net_tcp.splitlines():
        fields = line.split()
        if len(fields) > 3 and fields[3] == "0A" and ":" in fields[1]:
            ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return sorted(ports)


def port_problems(variable, port, listening, own_service_active):
    """A port the play's service will bind: taken by another process unless the play's own unit holds it."""
    if int(port) in listening and not own_service_active:
        return ["%s: port %s is already in use on this host by another service (a health check would get its answer): "
                "choose a free port." % (variable, port)]
    return []


def https_trusted_hosts(trusted_hosts, index_urls):
    """The names of ``trusted_hosts`` (pip's --trusted-host, ``host`` or ``host:port``) that an https:// index of
    ``index_urls`` reaches: pip would skip the certificate check for them. Only plain http:// hosts may be trusted."""
    https = {(urlsplit(str(url)).hostname or "").lower() for url in index_urls or [] if str(url).lower().startswith("https://")}
    named = [re.sub(r":\d+$", "", str(host).strip().lower()) for host in trusted_hosts or []]
    return sorted({host for host in named if host and host in https})


def trusted_problems(entries):
    """One sentence per role whose trusted hosts an https index reaches. ``entries``: a list of {role, trusted, urls},
    ``urls`` the role's index URL (empty: the PyTorch index of the support matrix) and extra index URLs."""
    problems = []
    for entry in entries or []:
        role = entry["role"]
        urls = [url for url in entry.get("urls") or [] if url] or [TORCH_INDEX_BASE]
        found = https_trusted_hosts(entry.get("trusted"), urls)
        if found:
            problems.append("%s_trusted_hosts names %s, which %s_index_url or %s_extra_index_urls reach over https: "
                            "--trusted-host would switch off pip's certificate check for it. Remove it; for a mirror with a "
                            "private CA add ['--cert', '/path/ca.pem'] to %s_pip_options. Only plain http:// hosts may be "
                            "trusted." % (role, ", ".join(found), role, role, role))
    return problems


def _read_text(path):
    with open(path, encoding="utf-8", errors="replace") as handle:
        return handle.read()


def site_problems(checks, read=_read_text):
    """Every problem of a ``checks`` dict (each key optional), in this order:

    ``types`` {options, values}; ``names`` {given, known, prefixes, own} (variable_names.name_problems); ``users``
    {accounts, uid_min, uid_max, create, training, members}; ``files`` {entries, stats}; ``plan`` (the runner's plan
    result plus cutoff_len); ``key`` {status, msg, content, pinned, url};
    ``torch`` {rocm_version, torch}; ``webui`` {enabled, bind, port, user, password, loopback_re}; ``paths``,
    ``positive``, ``secrets`` {variable: value}; ``job_datasets`` {value, dataset_src} (lora_job_dataset and
    lora_job_dataset_src, job_datasets.problems); ``datasets`` {variable: controller path, read as ``dataset`` says,
    or {path, dataset}: a data set of its own description}; ``trusted`` a list of
    {role, trusted, urls} (``trusted_problems``); ``ports`` a list of {variable, port, listening, own_active};
    ``space`` {needs, mounts} (free_space.space_problems); ``problems`` a list of sentences found elsewhere.
    The value classes: ``urls`` (url_problems), ``divisors``, ``counts`` {variable: {value, zero}}, ``apt_pins``
    {variable: expression}, ``extra_args`` {value, job, options}, ``template`` {name, found, source, wanted}. ``resume``
    (resume_warnings) gives warnings, not problems: a caller shows it on its own instead of refusing.
    """
    problems = []
    if checks.get("types"):
        problems += type_problems(checks["types"]["options"], checks["types"]["values"])
    names = checks.get("names")
    if names:
        problems += name_problems(names["given"], names["known"], names["prefixes"], names.get("own") or ())
    problems += url_problems(checks.get("urls"))
    problems += divisor_problems(checks.get("divisors") or {})
    problems += count_problems(checks.get("counts") or {})
    problems += apt_pin_problems(checks.get("apt_pins") or {})
    extra = checks.get("extra_args")
    if extra:
        problems += extra_args_problems(extra.get("value"), extra.get("job"), extra.get("options") or ())
    template = checks.get("template")
    if template:
        problems += template_problems(template.get("name"), template.get("found") or (), template.get("source") or "",
                                      template.get("wanted") or "")
    problems += path_problems(checks.get("paths") or {})
    problems += positive_problems(checks.get("positive") or {})
    problems += secret_problems(checks.get("secrets") or {})
    users = checks.get("users")
    if users:
        accounts, uid_min, create = users.get("accounts") or {}, int(users.get("uid_min") or 1000), users.get("create") or []
        uid_max = int(users.get("uid_max") or 60000)
        problems += user_problems(users.get("training") or {}, accounts, uid_min, create, unprivileged=True, uid_max=uid_max)
        problems += user_problems(users.get("members") or {}, accounts, uid_min, create, unprivileged=False)
    files = checks.get("files") or {}
    problems += file_problems(files.get("entries") or {}, files.get("stats") or {})
    problems += plan_problems(checks.get("plan"))
    if checks.get("torch"):
        problems += torch_problems(checks["torch"]["rocm_version"], checks["torch"].get("torch"))
    if checks.get("webui"):
        problems += webui_problems(checks["webui"], checks["webui"]["loopback_re"])
    key = checks.get("key")
    if key and key.get("status") != 200:
        problems.append("rocm_repo_key_url %s cannot be downloaded from this host (%s): check rocm_repo_base_url / "
                        "rocm_repo_key_url and the host's network." % (key["url"], key.get("msg") or key.get("status")))
    elif key:
        problems += key_problems(key.get("content"), key["pinned"], key["url"])
    if checks.get("job_datasets"):
        problems += job_dataset_problems(checks["job_datasets"].get("value"), checks["job_datasets"].get("dataset_src") or "")
    for variable, item in sorted((checks.get("datasets") or {}).items()):
        path, dataset = dataset_file(item, checks.get("dataset"))
        try:
            problems += dataset_problems(variable, read(path), path, dataset)
        except (IOError, OSError) as exc:
            problems.append("%s (%s) cannot be read on the controller (%s): name an existing file."
                            % (variable, path, exc.strerror))
    problems += trusted_problems(checks.get("trusted"))
    for port in checks.get("ports") or []:
        problems += port_problems(port["variable"], port["port"], port.get("listening") or [], bool(port.get("own_active")))
    if checks.get("space"):
        problems += space_problems(checks["space"].get("needs"), checks["space"].get("mounts"))
    if checks.get("resume"):
        problems += resume_warnings(checks["resume"], read)
    return problems + list(checks.get("problems") or [])
