"""ChatModel as LLaMA-Factory's: built from its arguments, ``chat(messages)`` returns responses with ``response_text``.

Deterministic: the answer names the model, whether an adapter is loaded, and the prompt. FAKE_CHAT_FAIL=1 raises, and
every construction is appended to $FAKE_LF_STATE/chat.jsonl when that is set.
"""

import collections
import json
import os

Response = collections.namedtuple("Response", "response_text response_length prompt_length finish_reason")


class ChatModel:
    def __init__(self, args):
        if os.environ.get("FAKE_CHAT_FAIL"):
            raise RuntimeError("fake ChatModel: cannot load the model")
        self.args = dict(args)
        if os.environ.get("FAKE_LF_STATE"):
            with open(os.path.join(os.environ["FAKE_LF_STATE"], "chat.jsonl"), "a", encoding="utf-8") as handle:
                handle.write(json.dumps(self.args) + "\n")

    def chat(self, messages):
        who = "adapter" if self.args.get("adapter_name_or_path") else "base"
        text = "%s says %s\nwithin %d tokens" % (who, messages[-1]["content"][::-1], self.args["max_new_tokens"])
        return [Response(text, len(text.split()), 1, "stop")]
