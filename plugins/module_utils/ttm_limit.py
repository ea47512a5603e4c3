# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The TTM page limit of an APU's GPU (the GTT it may map): the current one, and the one a user asks for. Pure.

An APU's GPU allocates from GTT, system RAM the kernel lets it map; the limit is the TTM module's ``pages_limit``, in
pages of 4096 bytes, about half the RAM when nothing sets it (``support_matrix.APU_TTM`` and the sources it names). AMD
documents one way to raise it, the ``amd-ttm`` tool: ``options ttm pages_limit=<pages>`` in ``/etc/modprobe.d/ttm.conf``,
effective at the next boot. :func:`plan` takes what the host shows and what the user asked for and says whether to leave
the limit, write that line, or refuse the request (before anything changes) with a message that says why.

The OS keeps :data:`OS_RESERVE_GIB`: the CPU side of a LoRA job as the lora_job runner plans it on unified memory
(``roles/lora_job/files/radeonlab_lora/unified.py``: the trainer's own host memory and the default host reserve). That
package ships to hosts on its own and is not importable here; tests/unit/plugins/module_utils/test_ttm_limit.py keeps the
two equal. No Ansible import; Python 3.8 compatible.
"""

from __future__ import annotations

from ansible_collections.radeonlab.llm.plugins.module_utils import support_matrix as sm

# unified.py: HOST_TRAINER_GIB (3.2) + DEFAULT_HOST_RESERVE_GIB (4.0)
OS_RESERVE_GIB = 7.2
VERDICTS = ("leave", "apply", "refuse")


def parse_pages(text):
    """The page count a sysfs or modprobe value holds (``"16469033\\n"``); None when absent or not a count."""
    value = str(text if text is not None else "").strip()
    return int(value) if value.isdigit() else None


def configured_pages(text, module="ttm"):
    """The ``pages_limit`` an ``/etc/modprobe.d`` file gives ``module`` (the last ``options`` line wins), or None."""
    found = None
    for line in str(text or "").splitlines():
        words = line.split("#", 1)[0].split()
        if len(words) < 3 or words[0] != "options" or words[1] != module:
            continue
        for word in words[2:]:
            name, sep, value = word.partition("=")
            if sep and name == "pages_limit" and value.isdigit():
                found = int(value)
    return found


def where(driver="inbox"):
    """The module, sysfs file, modprobe file and option line template for ``driver`` (inbox: ttm, dkms: amdttm)."""
    module = sm.APU_TTM["module"]["dkms" if driver == "dkms" else "inbox"]
    return {"module": module, "sysfs": sm.APU_TTM["sysfs"].format(module=module),
            "file": sm.APU_TTM["modprobe_file"].format(module=module)}


def pages_for(gib):
    """Pages for ``gib`` GiB, as amd-ttm counts them: int(GiB x 1024^3 / 4096)."""
    return int(float(gib) * sm.APU_TTM["gib_bytes"] / sm.APU_TTM["page_bytes"])


def gib_of(pages):
    return None if pages is None else round(pages * sm.APU_TTM["page_bytes"] / sm.APU_TTM["gib_bytes"], 2)


def _number(value):
    if value is None or isinstance(value, bool) or str(value).strip() == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def plan(ram_bytes, current=None, request_gib=None, reserve_gib=OS_RESERVE_GIB, driver="inbox", configured=None, gttsize=None):
    """What to do with the TTM limit.

    ``ram_bytes``: the RAM the OS sees (MemTotal; the firmware carve-out is not in it). ``current``: the live
    ``pages_limit`` (sysfs text or int; None when the module is not loaded). ``request_gib``: the GPU share the user asks
    for, in GiB; None or 0 asks for nothing (check and report only). ``reserve_gib``: RAM the OS must keep beside the
    GPU's share. ``configured``: the pages the modprobe file gives for the next boot, when known. ``gttsize``: amdgpu's
    ``gttsize`` parameter (MiB; -1 = unset), reported as deprecated when set.

    Returns ``{verdict, message, notes, ram_gib, current_pages, current_gib, default_gib, configured_pages,
    configured_gib, request_gib, pages, gib, reserve_gib, max_gib, module, sysfs, file, line, source}``; ``pages`` and
    ``line`` are what to configure (None unless the verdict is apply or the request is already in effect).
    """
    loc = where(driver)
    ram = _number(ram_bytes)
    ram_gib = None if not ram or ram <= 0 else round(ram / sm.APU_TTM["gib_bytes"], 2)
    current_pages = current if isinstance(current, int) and not isinstance(current, bool) else parse_pages(current)
    request = _number(request_gib)
    reserve = _number(reserve_gib)
    reserve = OS_RESERVE_GIB if reserve is None else reserve
    max_gib = None if ram_gib is None else round(max(0.0, ram_gib - reserve), 2)
    result = dict(loc, verdict="leave", message="", notes=[], ram_gib=ram_gib, current_pages=current_pages,
                  current_gib=gib_of(current_pages),
                  default_gib=None if ram_gib is None else round(ram_gib * sm.APU_TTM["default_share"], 2),
                  configured_pages=configured, configured_gib=gib_of(configured), request_gib=request, pages=None, gib=None,
                  reserve_gib=reserve, max_gib=max_gib, line=None, source=", ".join(sm.APU_TTM["sources"]))
    now = ("%s GiB (%d pages, %s)" % (result["current_gib"], current_pages, loc["sysfs"]) if current_pages is not None
           else "not known (no %s: the %s module is not loaded here)" % (loc["sysfs"], loc["module"]))
    of_ram = " of %s GiB RAM" % ram_gib if ram_gib is not None else ""
    gtt = _number(gttsize)
    if gtt is not None and gtt >= 0:
        result["notes"].append("amdgpu.gttsize=%d is set: deprecated and to be removed (kernel docs); the TTM limit is the "
                               "setting of record" % gtt)
    if configured is not None and configured != current_pages:
        result["notes"].append("%s gives %s GiB (%d pages) from %s" % (
            loc["file"], result["configured_gib"], configured, sm.APU_TTM["applies_at"]))
    if request is None and request_gib not in (None, ""):
        return _refuse(result, "a GPU share of %r GiB is not a size" % (request_gib,))
    if request is None or request == 0:
        result["message"] = ("TTM limit %s%s; left as it is (rocm_driver_apu_gtt_gib sets it, at most %s GiB here)"
                             % (now, of_ram, max_gib if max_gib is not None else "?"))
        return result
    if request < 0:
        return _refuse(result, "a GPU share of %s GiB is not a size" % request_gib)
    if ram_gib is None:
        return _refuse(result, "the RAM of the host is not known, so a GPU share of %s GiB cannot be checked" % request_gib)
    if request > ram_gib:
        return _refuse(result, "a GPU share of %s GiB is more than the %s GiB RAM the OS sees (MemTotal)" % (request_gib, ram_gib))
    if ram_gib - request < reserve:
        return _refuse(result, "a GPU share of %s GiB leaves the OS %.2f GiB of its %s GiB RAM, less than the %s GiB it "
                       "keeps (the CPU side of a LoRA job); at most %s GiB" % (request_gib, ram_gib - request, ram_gib, reserve, max_gib))
    pages = pages_for(request)
    result.update(pages=pages, gib=gib_of(pages), line=sm.APU_TTM["option_line"].format(module=loc["module"], pages=pages))
    if request > ram_gib * sm.APU_TTM["warn_share"]:
        result["notes"].append("above %d %% of the RAM, where AMD's amd-ttm asks first ('could cause system instability')"
                               % (sm.APU_TTM["warn_share"] * 100))
    if pages == current_pages:
        result["message"] = "TTM limit %s%s: the %s GiB asked for is in effect" % (now, of_ram, request_gib)
        return result
    result["verdict"] = "apply"
    result["message"] = ("TTM limit %s%s; %s GiB (%d pages) asked for: '%s' in %s, in effect from %s"
                         % (now, of_ram, request_gib, pages, result["line"], loc["file"], sm.APU_TTM["applies_at"]))
    return result


def _refuse(result, why):
    result["verdict"] = "refuse"
    result["message"] = "%s. Nothing was changed." % why
    return result
