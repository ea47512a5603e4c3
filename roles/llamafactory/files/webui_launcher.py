# -*- coding: utf-8 -*-
# Copyright: radeonlab.llm contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""LLaMA-Factory WebUI with Gradio authentication (radeonlab.llm.llamafactory).

`llamafactory-cli webui` has no authentication option. When the WebUI is exposed beyond localhost the
role runs this instead: the same UI (llamafactory.webui.interface.create_ui) launched the way
run_web_ui does, plus Gradio's auth=(user, password). The credentials come from
LLAMAFACTORY_WEBUI_AUTH_USER / LLAMAFACTORY_WEBUI_AUTH_PASSWORD, which systemd reads from a root-only
EnvironmentFile; they are removed from the environment before the UI starts, so training processes
the WebUI spawns never inherit them. Address and port: GRADIO_SERVER_NAME / GRADIO_SERVER_PORT.
"""
import os
import sys


def main():
    user = os.environ.pop("LLAMAFACTORY_WEBUI_AUTH_USER", "")
    password = os.environ.pop("LLAMAFACTORY_WEBUI_AUTH_PASSWORD", "")
    if not user or not password:
        sys.stderr.write("llamafactory webui launcher: LLAMAFACTORY_WEBUI_AUTH_USER/PASSWORD are not set; refusing "
                         "to serve the WebUI without authentication\n")
        return 78  # EX_CONFIG: systemd's Restart=on-failure will not hide a misconfiguration for long
    from llamafactory.extras.misc import fix_proxy, is_env_enabled  # pylint: disable=import-outside-toplevel
    from llamafactory.webui.interface import create_ui  # pylint: disable=import-outside-toplevel

    ipv6 = is_env_enabled("GRADIO_IPV6")
    server_name = os.environ.get("GRADIO_SERVER_NAME", "[::]" if ipv6 else "127.0.0.1")
    fix_proxy(ipv6_enabled=ipv6)
    create_ui().queue().launch(share=False, server_name=server_name, inbrowser=False, auth=(user, password),
                               auth_message="LLaMA-Factory (radeonlab.llm)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
