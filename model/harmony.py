"""The harmony chat format of gpt-oss: render OpenAI-style conversations into a prompt, and
parse the generated tokens back into reasoning, answer text and tool calls.

The renderer reproduces openai-harmony's ``render_conversation_for_completion`` (v0.0.8)
byte for byte, including its TypeScript rendering of JSON-schema tool parameters.
"""
from __future__ import annotations

import codecs
import datetime
import json
from dataclasses import dataclass, field
from typing import NamedTuple

from model.tokenizer import N_BASE

DEFAULT_IDENTITY = "You are ChatGPT, a large language model trained by OpenAI."
START, END, MESSAGE, CHANNEL = "<|start|>", "<|end|>", "<|message|>", "<|channel|>"
CONSTRAIN, CALL, RETURN = "<|constrain|>", "<|call|>", "<|return|>"
CHANNELS_LINE = "# Valid channels: analysis, commentary, final. Channel must be included for every message."
FUNCTIONS_LINE = "Calls to these tools must go to the commentary channel: 'functions'."


class _Special(str):
    """A special-token piece of a rendered prompt; plain ``str`` pieces are ordinary text, so
    special-token look-alikes inside user content are never turned into control tokens."""


def stop_token_ids() -> list[int]:
    """Ids that end an assistant turn: <|return|> (done) and <|call|> (tool call)."""
    return [200002, 200012]


# ----------------------------------------------------------------- rendering

@dataclass(frozen=True)
class _Msg:
    author: str  # "user", "assistant", or "functions.NAME" for a tool result
    body: str
    channel: str | None = None
    recipient: str | None = None
    content_type: str | None = None

    def parts(self) -> list[str]:
        out = [_Special(START), self.author]
        if self.recipient:
            out.append(f" to={self.recipient}")
        if self.channel:
            out += [_Special(CHANNEL), self.channel]
        if self.content_type:  # harmony writes " <|constrain|>json" with the marker as a real token
            out += [" ", _Special(CONSTRAIN), self.content_type]
        # In history an assistant message with a recipient is a tool call, closed by <|call|>.
        end = CALL if self.author == "assistant" and self.recipient else END
        return out + [_Special(MESSAGE), self.body, _Special(end)]


def _text(content) -> str:
    """Message content as text; OpenAI content-part lists are joined."""
    if content is None:
        return ""
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def _lines(s: str) -> list[str]:
    """Rust's str::lines: split on \\n, drop one trailing empty line, strip \\r."""
    parts = s.split("\n")
    if parts[-1] == "":
        parts.pop()
    return [p.removesuffix("\r") for p in parts]


def _json(v) -> str:
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))


def _get(schema, key):
    return schema.get(key) if isinstance(schema, dict) else None


def _has(schema, key) -> bool:  # key present, even with a null value (serde's get() is then Some)
    return isinstance(schema, dict) and key in schema


def _is_enum(schema) -> bool:
    return isinstance(_get(schema, "enum"), list) and bool(schema["enum"])


def _default(schema, quote_enum: bool = False) -> str:
    """A default as harmony prints it: bare strings are quoted unless they are enum members."""
    d = schema["default"]
    if isinstance(d, str) and not _is_enum(schema):
        return f'"{d}"'
    return _json(d) if quote_enum or not isinstance(d, str) else d


def _nullable(schema, ts: str) -> str:
    return f"{ts} | null" if _get(schema, "nullable") is True and "null" not in ts else ts


def _ts(schema, indent: str) -> str:
    """JSON schema -> TypeScript-ish type, following openai-harmony's json_schema_to_typescript."""
    if isinstance(_get(schema, "oneOf"), list):
        out = ""
        for v in schema["oneOf"]:
            out += f"\n{indent} | " + _nullable(v, _ts(v, indent + "   "))
            notes = [v["description"]] if isinstance(_get(v, "description"), str) else []
            notes += [f"default: {_default(v, quote_enum=True)}"] if _has(v, "default") else []
            out += f" // {' '.join(notes)}" if notes else ""
        return out
    ty = _get(schema, "type")
    if isinstance(ty, list) and any(isinstance(t, str) for t in ty):
        return " | ".join("number" if t == "integer" else t for t in ty if isinstance(t, str))
    if ty == "object":
        return _ts_object(schema, indent)
    if ty == "string":
        enum = schema.get("enum")
        names = [f'"{s}"' for s in enum if isinstance(s, str)] if isinstance(enum, list) else []
        return " | ".join(names) or "string"
    if ty == "array":
        return _ts(schema["items"], indent) + "[]" if "items" in schema else "Array<any>"
    return {"number": "number", "integer": "number", "boolean": "boolean"}.get(ty, "any") if isinstance(ty, str) else "any"


def _ts_object(schema, indent: str) -> str:
    out = f"{indent}// {schema['description']}\n" if isinstance(schema.get("description"), str) else ""
    out += "{\n"
    props = schema.get("properties")
    req = schema.get("required")
    required = {r for r in req if isinstance(r, str)} if isinstance(req, list) else set()
    for key, val in (props.items() if isinstance(props, dict) else []):
        opt = "" if key in required else "?"
        if isinstance(_get(val, "title"), str):
            out += f"{indent}// {val['title']}\n{indent}//\n"
        if not _has(val, "oneOf") and isinstance(_get(val, "description"), str):
            out += f"{indent}// {val['description']}\n"
        if isinstance(_get(val, "examples"), list) and val["examples"]:
            out += f"{indent}// Examples:\n" + "".join(f'{indent}// - "{e}"\n' for e in val["examples"] if isinstance(e, str))
        if isinstance(_get(val, "oneOf"), list):
            out += _ts_one_of_prop(key + opt, val, indent)
            continue
        out += f"{indent}{key}{opt}: " + _nullable(val, _ts(val, indent + "    ")) + ","
        if _has(val, "default") and not _has(val, "oneOf"):
            out += f" // default: {_default(val)}"
        out += "\n"
    return out + f"{indent}}}"


def _ts_one_of_prop(key: str, val: dict, indent: str) -> str:
    """A property whose schema is a oneOf: one ` | variant` line per alternative."""
    desc = val["description"] if isinstance(val.get("description"), str) else None
    first = val["oneOf"][0] if val["oneOf"] else None
    above = desc is not None and _get(first, "description") != desc  # else the first variant says it
    out = f"{indent}// {desc}\n" if above else ""
    out += f"{indent}// default: {_default(val)}\n" if "default" in val else ""
    out += f"{indent}{key}:\n"
    for i, v in enumerate(val["oneOf"]):
        out += f"{indent} | " + _nullable(v, _ts(v, indent + "   "))
        vdesc = _get(v, "description")
        notes = [vdesc] if isinstance(vdesc, str) and vdesc != desc and not (i == 0 and above) else []
        notes += [f"default: {_default(v)}"] if _has(v, "default") else []
        out += (f" // {' '.join(notes)}" if notes else "") + "\n"
    return out + f"{indent},\n"


def _tool(tool) -> tuple[str, str, object]:
    """(name, description, parameters) of an OpenAI-style or bare function tool."""
    fn = tool.get("function", tool) if isinstance(tool, dict) else None
    if not isinstance(fn, dict) or tool.get("type", "function") != "function":
        raise ValueError(f"unsupported tool (expected a function tool): {tool!r}")
    name = fn.get("name")
    if not name or not isinstance(name, str):
        raise ValueError(f"tool without a name: {tool!r}")
    try:  # the round trip is also what harmony sees: tuples become lists, keys become strings
        params = json.loads(json.dumps(fn.get("parameters"), allow_nan=False))
    except (TypeError, ValueError) as e:
        raise ValueError(f"tool {name!r}: parameters schema is not JSON-serializable: {e}") from None
    return name, fn.get("description") or "", params


def _tools_section(tools) -> str:
    lines = ["## functions\n", "namespace functions {\n"]
    for name, desc, params in tools:
        lines += [f"// {line}" for line in _lines(desc)]
        sig = f"(_: {_ts(params, '')})" if params is not None else "()"
        lines.append(f"type {name} = {sig} => any;\n")
    lines.append("} // namespace functions")
    return "# Tools\n\n" + "\n".join(lines)


def _system_text(effort, identity, cutoff, date, has_functions: bool) -> str:
    top = [identity] if identity else []
    top += [f"Knowledge cutoff: {cutoff}"] if cutoff else []
    top += [f"Current date: {date}"] if date else []
    channels = CHANNELS_LINE + (f"\n{FUNCTIONS_LINE}" if has_functions else "")
    return "\n\n".join(([ "\n".join(top)] if top else []) + [f"Reasoning: {effort}", channels])


def _assistant(m: dict, call_names: dict) -> list[_Msg]:
    out = []
    reasoning = m.get("reasoning") or m.get("reasoning_content") or m.get("thinking")
    if reasoning:
        out.append(_Msg("assistant", _text(reasoning), "analysis"))
    calls, content = m.get("tool_calls") or [], _text(m.get("content"))
    if content or not (out or calls):  # text beside tool calls is a preamble, shown via commentary
        out.append(_Msg("assistant", content, "commentary" if calls else "final"))
    for call in calls:
        fn = call.get("function") or call
        if not fn.get("name"):
            raise ValueError(f"assistant tool call without a function name: {call!r}")
        args = fn.get("arguments", "{}")
        call_names[call.get("id")] = fn["name"]
        out.append(_Msg("assistant", args if isinstance(args, str) else json.dumps(args), "commentary",
                        f"functions.{fn['name']}", "json"))
    return out


def _convert(messages) -> tuple[str, list[_Msg]]:
    """OpenAI messages -> (developer instructions, harmony messages after the system/developer ones)."""
    instructions, out, call_names = [], [], {}
    for m in messages:
        role = m.get("role")
        if role in ("system", "developer"):  # OpenAI's system prompt is harmony's developer message
            instructions.append(_text(m.get("content")))
        elif role == "user":
            out.append(_Msg("user", _text(m.get("content"))))
        elif role == "assistant":
            out += _assistant(m, call_names)
        elif role == "tool":
            name = m.get("name") or call_names.get(m.get("tool_call_id"))
            if not name:
                raise ValueError(f"tool message without a name or known tool_call_id: {m!r}")
            author = name if name.startswith("functions.") else f"functions.{name}"
            out.append(_Msg(author, _text(m.get("content")), "commentary", "assistant"))
        else:
            raise ValueError(f"unknown role {role!r}")
    return "\n\n".join(i for i in instructions if i), out


def _drop_analysis(msgs: list[_Msg]) -> list[_Msg]:
    """harmony's auto_drop_analysis: only when the last assistant message is a final answer,
    drop analysis messages that precede the first final message (a tool-calling turn in
    progress keeps its reasoning)."""
    last = next((m for m in reversed(msgs) if m.author == "assistant"), None)
    if last is None or last.channel != "final":
        return msgs
    first = next(i for i, m in enumerate(msgs) if m.channel == "final")
    return [m for i, m in enumerate(msgs) if not (i < first and m.channel == "analysis")]


def _render_parts(messages, reasoning_effort="medium", tools=None, *, model_identity=DEFAULT_IDENTITY,
                  knowledge_cutoff="2024-06", current_date=None) -> list[str]:
    if reasoning_effort not in ("low", "medium", "high"):
        raise ValueError(f"reasoning_effort must be low, medium or high, got {reasoning_effort!r}")
    tool_defs = [_tool(t) for t in tools or []]
    instructions, msgs = _convert(messages)
    date = datetime.date.today().isoformat() if current_date is None else str(current_date)
    parts = _Msg("system", _system_text(reasoning_effort, model_identity, knowledge_cutoff, date,
                                        bool(tool_defs))).parts()
    dev = ["# Instructions", instructions] if instructions else []
    dev += [_tools_section(tool_defs)] if tool_defs else []
    if dev:
        parts += _Msg("developer", "\n\n".join(dev)).parts()
    for m in _drop_analysis(msgs):
        parts += m.parts()
    return parts + [_Special(START), "assistant"]


def render(messages, reasoning_effort="medium", tools=None, **kwargs) -> str:
    """The harmony prompt (special tokens written out) ending in ``<|start|>assistant``.
    kwargs: model_identity, knowledge_cutoff, current_date (None = today, "" = omit)."""
    return "".join(_render_parts(messages, reasoning_effort, tools, **kwargs))


def render_ids(tokenizer, messages, reasoning_effort="medium", tools=None, **kwargs) -> list[int]:
    """Token ids of ``render``; message text is encoded as ordinary text (as harmony does), so
    special-token strings typed by a user cannot inject control tokens."""
    ids: list[int] = []
    for part in _render_parts(messages, reasoning_effort, tools, **kwargs):
        ids += [tokenizer.special[part]] if isinstance(part, _Special) else tokenizer.encode(part)
    return ids
