"""The harmony chat format of gpt-oss: render OpenAI-style conversations into a prompt, and parse generated tokens
back into reasoning, answer text and tool calls.

``render`` reproduces openai-harmony's ``render_conversation_for_completion`` (v0.0.8) byte for byte, including its
TypeScript rendering of JSON-schema tool parameters and its rule for dropping earlier chain-of-thought."""
from __future__ import annotations

import codecs
import datetime
import json
from dataclasses import dataclass, field
from typing import NamedTuple

from model.tokenizer import N_BASE  # ids >= N_BASE are special tokens

DEFAULT_IDENTITY = "You are ChatGPT, a large language model trained by OpenAI."
START, END, MESSAGE, CHANNEL = "<|start|>", "<|end|>", "<|message|>", "<|channel|>"
CONSTRAIN, CALL = "<|constrain|>", "<|call|>"
CHANNELS_LINE = "# Valid channels: analysis, commentary, final. Channel must be included for every message."
FUNCTIONS_LINE = "Calls to these tools must go to the commentary channel: 'functions'."


class _Special(str):
    """A special-token piece of a prompt. Plain ``str`` pieces are ordinary text, so a user
    typing "<|end|>" cannot inject a control token through ``render_ids``."""


@dataclass(frozen=True)
class _Msg:
    author: str  # "user", "assistant", "system", "developer" or "functions.NAME" (tool result)
    body: str
    channel: str | None = None
    recipient: str | None = None
    content_type: str | None = None  # "json" means " <|constrain|>json"

    def parts(self) -> list[str]:
        out = [_Special(START), self.author] + ([f" to={self.recipient}"] if self.recipient else [])
        out += [_Special(CHANNEL), self.channel] if self.channel else []
        out += [" ", _Special(CONSTRAIN), self.content_type] if self.content_type else []
        # In history an assistant message with a recipient is a tool call, closed by <|call|>.
        end = CALL if self.author == "assistant" and self.recipient else END
        return out + [_Special(MESSAGE), self.body, _Special(end)]


# ---------------------------------------------- JSON schema -> TypeScript (as harmony does it)

def _get(schema, key):
    return schema.get(key) if isinstance(schema, dict) else None


def _has(schema, key) -> bool:  # present even when null: serde's get() is Some(Null) then
    return isinstance(schema, dict) and key in schema


def _json(v) -> str:  # serde_json's compact Display
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def _default(schema, quote_enum: bool = False) -> str:
    """harmony quotes string defaults by hand, except enum members (written bare or as JSON)."""
    d, is_enum = schema["default"], isinstance(schema.get("enum"), list) and bool(schema["enum"])
    if isinstance(d, str) and not is_enum:
        return f'"{d}"'
    return _json(d) if quote_enum or not isinstance(d, str) else d


def _typed(schema, indent: str) -> str:
    ts = _ts(schema, indent)
    return f"{ts} | null" if _get(schema, "nullable") is True and "null" not in ts else ts


def _ts(schema, indent: str) -> str:
    if isinstance(_get(schema, "oneOf"), list):
        out = ""
        for v in schema["oneOf"]:
            notes = [v["description"]] if isinstance(_get(v, "description"), str) else []
            notes += [f"default: {_default(v, quote_enum=True)}"] if _has(v, "default") else []
            out += f"\n{indent} | " + _typed(v, indent + "   ") + (f" // {' '.join(notes)}" if notes else "")
        return out
    ty = _get(schema, "type")
    if isinstance(ty, list) and any(isinstance(t, str) for t in ty):
        return " | ".join("number" if t == "integer" else t for t in ty if isinstance(t, str))
    if ty == "object":
        return _ts_object(schema, indent)
    if ty == "string":
        enum = schema["enum"] if isinstance(schema.get("enum"), list) else []
        return " | ".join(f'"{s}"' for s in enum if isinstance(s, str)) or "string"
    if ty == "array":
        return _ts(schema["items"], indent) + "[]" if "items" in schema else "Array<any>"
    return {"number": "number", "integer": "number", "boolean": "boolean"}.get(ty if isinstance(ty, str) else "", "any")


def _ts_object(schema, indent: str) -> str:
    out = (f"{indent}// {schema['description']}\n" if isinstance(schema.get("description"), str) else "") + "{\n"
    props, req = schema.get("properties"), schema.get("required")
    required = {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()
    for key, val in (props.items() if isinstance(props, dict) else []):
        key += "" if key in required else "?"
        if isinstance(_get(val, "title"), str):
            out += f"{indent}// {val['title']}\n{indent}//\n"
        if not _has(val, "oneOf") and isinstance(_get(val, "description"), str):
            out += f"{indent}// {val['description']}\n"
        if isinstance(_get(val, "examples"), list) and val["examples"]:
            out += f"{indent}// Examples:\n"
            out += "".join(f'{indent}// - "{e}"\n' for e in val["examples"] if isinstance(e, str))
        if isinstance(_get(val, "oneOf"), list):
            out += _ts_one_of_prop(key, val, indent)
            continue
        out += f"{indent}{key}: " + _typed(val, indent + "    ") + ","
        out += (f" // default: {_default(val)}" if _has(val, "default") and not _has(val, "oneOf") else "") + "\n"
    return out + f"{indent}}}"


def _ts_one_of_prop(key: str, val: dict, indent: str) -> str:
    """A oneOf property: one ` | variant` line per alternative, the description said once."""
    desc = val["description"] if isinstance(val.get("description"), str) else None
    above = desc is not None and _get(val["oneOf"][0] if val["oneOf"] else None, "description") != desc
    out = f"{indent}// {desc}\n" if above else ""
    out += f"{indent}// default: {_default(val)}\n" if "default" in val else ""
    out += f"{indent}{key}:\n"
    for i, v in enumerate(val["oneOf"]):
        vdesc = _get(v, "description")
        notes = [vdesc] if isinstance(vdesc, str) and vdesc != desc and not (i == 0 and above) else []
        notes += [f"default: {_default(v)}"] if _has(v, "default") else []
        out += f"{indent} | " + _typed(v, indent + "   ") + (f" // {' '.join(notes)}" if notes else "") + "\n"
    return out + f"{indent},\n"


# ------------------------------------------------------------------------- rendering

def _text(content) -> str:
    """Message content as text; OpenAI content-part lists are concatenated."""
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return "" if content is None else str(content)


def _tool(tool) -> tuple[str, str, object]:
    """(name, description, parameters) of an OpenAI-style or bare function tool."""
    fn = (tool.get("function") or tool) if isinstance(tool, dict) else None
    if not isinstance(fn, dict) or tool.get("type", "function") != "function":
        raise ValueError(f"tools: unsupported tool (expected a function tool): {tool!r}")
    if not isinstance(fn.get("name"), str) or not fn["name"]:
        raise ValueError(f"tools: a tool without a name: {tool!r}")
    try:  # the JSON round trip is also what harmony sees (tuples -> lists, keys -> strings)
        params = json.loads(json.dumps(fn.get("parameters"), allow_nan=False))
    except (TypeError, ValueError) as e:
        raise ValueError(f"tools: {fn['name']!r}'s parameters schema is not JSON-serializable: {e}") from None
    return fn["name"], fn.get("description") or "", params


def _lines(s: str) -> list[str]:
    """Rust's str::lines(): split on \\n, no entry after a trailing newline, \\r\\n endings stripped."""
    return [p.removesuffix("\r") for p in s.removesuffix("\n").split("\n")] if s else []


def _tools_section(tools) -> str:
    lines = ["## functions\n", "namespace functions {\n"]
    for name, desc, params in tools:
        lines += [f"// {line}" for line in _lines(desc)]
        sig = "()" if params is None else f"(_: {_ts(params, '')})"
        lines.append(f"type {name} = {sig} => any;\n")
    return "# Tools\n\n" + "\n".join(lines + ["} // namespace functions"])


def _assistant(m: dict, call_names: dict) -> list[_Msg]:
    out, reasoning = [], m.get("reasoning") or m.get("reasoning_content") or m.get("thinking")
    if reasoning:
        out.append(_Msg("assistant", _text(reasoning), "analysis"))
    calls, content = m.get("tool_calls") or [], _text(m.get("content"))
    if content or not (out or calls):  # text beside tool calls is a preamble: commentary channel
        out.append(_Msg("assistant", content, "commentary" if calls else "final"))
    for call in calls:
        fn = (call.get("function") or call) if isinstance(call, dict) else None  # OpenAI's form, or bare
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise ValueError(f"messages: an assistant tool call without a function name: {call!r}")
        args, call_names[call.get("id")] = fn.get("arguments", "{}"), fn["name"]
        args = args if isinstance(args, str) else json.dumps(args)
        out.append(_Msg("assistant", args, "commentary", f"functions.{fn['name']}", "json"))
    return out


def _convert(messages) -> tuple[str, list[_Msg]]:
    """OpenAI messages -> (developer instructions, the harmony messages of the conversation)."""
    instructions, out, call_names = [], [], {}
    if not isinstance(messages, (list, tuple)) or not messages:
        raise ValueError(f"messages: must be a non-empty list of {{'role': ..., 'content': ...}}, not {messages!r}")
    for m in messages:
        role = m.get("role") if isinstance(m, dict) else None
        if role in ("system", "developer"):  # an OpenAI system prompt is harmony's developer message
            instructions.append(_text(m.get("content")))
        elif role == "user":
            out.append(_Msg("user", _text(m.get("content"))))
        elif role == "assistant":
            out += _assistant(m, call_names)
        elif role == "tool":
            name = m.get("name") or call_names.get(m.get("tool_call_id"))
            if not isinstance(name, str) or not name:
                raise ValueError(f"messages: a tool message without a name or known tool_call_id: {m!r}")
            author = name if name.startswith("functions.") else f"functions.{name}"
            out.append(_Msg(author, _text(m.get("content")), "commentary", "assistant"))
        else:  # not a dict, or no known role
            raise ValueError(f"messages: unknown role {role!r} in message {m!r} (system/developer/user/assistant/tool)")
    return "\n\n".join(i for i in instructions if i), out


def _drop_analysis(msgs: list[_Msg]) -> list[_Msg]:
    """harmony's auto_drop_analysis: if the last assistant message is a final answer, drop the
    analysis messages before the *first* final one. A tool-calling turn in progress (last
    assistant message = a call) keeps all its reasoning, which the model needs to continue."""
    last = next((m for m in reversed(msgs) if m.author == "assistant"), None)
    if last is None or last.channel != "final":
        return msgs
    first = next(i for i, m in enumerate(msgs) if m.channel == "final")
    return [m for i, m in enumerate(msgs) if i > first or m.channel != "analysis"]


def _render_parts(messages, reasoning_effort, tools, model_identity, knowledge_cutoff, current_date):
    if reasoning_effort not in ("low", "medium", "high"):
        raise ValueError(f"reasoning_effort: must be low, medium or high, not {reasoning_effort!r}")
    tool_defs = [_tool(t) for t in tools or []]
    instructions, msgs = _convert(messages)
    date = datetime.date.today().isoformat() if current_date is None else str(current_date)
    top = "\n".join(x for x in (model_identity, knowledge_cutoff and f"Knowledge cutoff: {knowledge_cutoff}",
                                date and f"Current date: {date}") if x)
    channels = CHANNELS_LINE + (f"\n{FUNCTIONS_LINE}" if tool_defs else "")
    system = "\n\n".join(([top] if top else []) + [f"Reasoning: {reasoning_effort}", channels])
    dev = ["# Instructions", instructions] if instructions else []
    dev += [_tools_section(tool_defs)] if tool_defs else []
    msgs = [_Msg("system", system)] + ([_Msg("developer", "\n\n".join(dev))] if dev else []) + _drop_analysis(msgs)
    return [p for m in msgs for p in m.parts()] + [_Special(START), "assistant"]


def render(messages, reasoning_effort="medium", tools=None, *, model_identity=DEFAULT_IDENTITY,
           knowledge_cutoff="2024-06", current_date=None) -> str:
    """The harmony prompt, special tokens written out, ending in ``<|start|>assistant``.
    ``current_date``: "YYYY-MM-DD" or a date; None means today, "" leaves the line out."""
    return "".join(_render_parts(messages, reasoning_effort, tools, model_identity, knowledge_cutoff, current_date))


def render_ids(tokenizer, messages, reasoning_effort="medium", tools=None, *, model_identity=DEFAULT_IDENTITY,
               knowledge_cutoff="2024-06", current_date=None) -> list[int]:
    """Token ids of ``render``: each piece encoded separately, message text never as specials."""
    parts = _render_parts(messages, reasoning_effort, tools, model_identity, knowledge_cutoff, current_date)
    return [i for p in parts for i in ([tokenizer.special[p]] if isinstance(p, _Special) else tokenizer.encode(p))]


# --------------------------------------------------------------------------- parsing

class Delta(NamedTuple):
    kind: str  # "reasoning" | "text" | "tool_call_name" | "tool_call_args"
    text: str
    name: str | None = None  # the function name, on tool-call deltas


@dataclass
class ParsedOutput:
    reasoning: str = ""
    text: str = ""
    tool_calls: list[dict] = field(default_factory=list)  # {"name": str, "arguments": JSON str}
    finish: str = "length"  # "stop" | "tool_calls" | "length" | "malformed"


def _parse_header(text: str) -> tuple[str | None, str | None] | None:
    """(channel, recipient) of e.g. ``<|channel|>commentary to=functions.f <|constrain|>json``
    (the recipient may also precede the channel); None if malformed."""
    head, has_ctype, ctype = text.partition(CONSTRAIN)
    role, has_channel, chan = head.partition(CHANNEL)
    to = [w[3:] for w in role.split() + chan.split() + ctype.split() if w.startswith("to=")]
    channel = next((w for w in chan.split() if not w.startswith("to=")), None)
    role_words = [w for w in role.split() if not w.startswith("to=")]  # only "assistant" may come first
    if CONSTRAIN in ctype or CHANNEL in chan or "" in to or (has_ctype and not ctype.split()) \
            or (has_channel and channel is None) or role_words not in ([], ["assistant"]):
        return None
    return channel, (to[-1] if to else None)


class HarmonyParser:
    """Streaming parser of what the model writes after ``<|start|>assistant``. ``feed`` takes one token id, returns
    the deltas it produced and never raises. Output that breaks the format switches to a raw mode: the rest is
    decoded verbatim into ``text`` and the finish reason becomes "malformed"."""
    MAX_HEADER = 64  # a real header is a few tokens; don't silently buffer a runaway one

    def __init__(self, tokenizer):
        self.tok = tokenizer
        self._out = {"reasoning": "", "text": "", "tool_call_args": ""}
        self._calls: list[dict] = []
        self._state = "header"  # header | content | between (after <|end|>) | done | raw
        self._header: list[int] = []
        self._kind, self._name, self._finish = "text", None, None
        self._dec = codecs.getincrementaldecoder("utf-8")("replace")  # keeps split UTF-8 bytes

    def _bytes(self, ids) -> bytes:
        out = b""
        for i in ids:
            try:
                out += self.tok.decode_bytes([i])
            except (KeyError, ValueError, OverflowError, TypeError):  # an id outside the vocab
                out += f"<|invalid:{i}|>".encode()
        return out

    def _emit(self, data: bytes, final: bool = False) -> list[Delta]:
        s = self._dec.decode(data, final)
        self._out[self._kind] += s
        return [Delta(self._kind, s, self._name if self._kind == "tool_call_args" else None)] if s else []

    def _to_text(self, raw: str) -> list[Delta]:
        self._out["text"] += raw
        return [Delta("text", raw)] if raw else []

    def _fail(self, ids) -> list[Delta]:
        """Close the current message (a half tool call goes to text), then dump ``ids`` raw."""
        deltas = self._emit(b"", final=True) if self._state == "content" else []
        if self._state == "content" and self._kind == "tool_call_args":
            deltas += self._to_text(self._out["tool_call_args"])
        self._state, self._kind, self._name, self._finish = "raw", "text", None, "malformed"
        return deltas + self._emit(self._bytes(ids))

    def feed(self, token_id: int) -> list[Delta]:
        special = not 0 <= token_id < N_BASE
        if self._state == "raw":
            return self._emit(self._bytes([token_id]))
        if self._state == "between" and token_id == self.tok.start:
            self._state, self._header = "header", []
            return []
        if token_id == self.tok.endoftext and self._state in ("between", "header") and not self._header:
            self._state, self._finish = "done", self._finish or ("tool_calls" if self._calls else "stop")
            return []  # <|endoftext|> (a stop id) ends the output between messages as <|return|> would
        if self._state == "header":
            return self._feed_header(token_id, special)
        if self._state == "content":
            return self._end_message(token_id) if special else self._emit(self._bytes([token_id]))
        return self._fail([token_id])  # not <|start|> after <|end|>, or output after a stop token

    def _feed_header(self, token_id: int, special: bool) -> list[Delta]:
        if token_id != self.tok.message:
            allowed = not special or token_id in (self.tok.channel, self.tok.constrain)
            if not allowed or len(self._header) >= self.MAX_HEADER:
                return self._fail(self._header + [token_id])
            self._header.append(token_id)
            return []
        parsed = _parse_header(self._bytes(self._header).decode("utf-8", "replace"))
        if parsed is None:
            return self._fail(self._header + [token_id])
        channel, recipient = parsed
        self._state, self._dec, self._header = "content", codecs.getincrementaldecoder("utf-8")("replace"), []
        if recipient:  # a tool call to "functions.NAME"
            self._kind, self._name = "tool_call_args", recipient.removeprefix("functions.")
            self._out["tool_call_args"] = ""
            return [Delta("tool_call_name", self._name, self._name)]
        self._kind, self._name = ("reasoning" if channel == "analysis" else "text"), None
        return []

    def _end_message(self, token_id: int) -> list[Delta]:
        if token_id not in (self.tok.end, self.tok.return_, self.tok.call, self.tok.endoftext):
            return self._fail([token_id])
        deltas = self._emit(b"", final=True)
        if self._kind == "tool_call_args":
            try:
                json.loads(self._out["tool_call_args"])
                self._calls.append({"name": self._name, "arguments": self._out["tool_call_args"]})
            except (ValueError, RecursionError):  # arguments nobody can execute: show them as text
                self._finish = "malformed"
                deltas += self._to_text(self._out["tool_call_args"])
        if token_id == self.tok.end:
            self._state = "between"
            return deltas
        self._state = "done"
        if self._finish is None:  # <|call|> must close a tool call; <|return|> (or <|endoftext|>) ends an answer
            self._finish = "tool_calls" if self._calls else "stop" if token_id != self.tok.call else "malformed"
        return deltas

    def result(self, cut: int = 0) -> ParsedOutput:
        """The parse so far; may be called at any time without disturbing the stream. cut: a stop string took the
        output's last `cut` characters, so the message still open loses them (or the header still open is left out)."""
        out = ParsedOutput(self._out["reasoning"], self._out["text"], list(self._calls), self._finish or "length")
        if self._state in ("content", "raw"):  # include bytes still waiting for the rest of a character
            s = self._out[self._kind] + self._dec.getstate()[0].decode("utf-8", "replace")
            if self._kind == "tool_call_args":  # cut off mid-call: report what there is
                out.tool_calls.append({"name": self._name, "arguments": s[:max(0, len(s) - cut)]})
            else:
                setattr(out, self._kind, s[:max(0, len(s) - cut)])
        elif self._state == "header" and self._header and not (cut or any(self._out.values()) or self._calls) \
                and self.tok.channel not in self._header:  # plain text that never became a harmony message: shown
            out.text += self._bytes(self._header).decode("utf-8", "replace")
            out.finish = "malformed"
        return out
