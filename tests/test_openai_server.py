"""The cookbook's OpenAI-compatible server, driven by the official openai client, on the tiny checkpoint."""
import json
import socket
import sys
import threading
import time
from pathlib import Path

import pytest
import torch

from helpers import TIKTOKEN, needs_data

pytestmark = needs_data
openai = pytest.importorskip("openai", reason="setup.sh installs openai, fastapi and uvicorn for this test")
uvicorn = pytest.importorskip("uvicorn")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cookbook"))


@pytest.fixture(scope="module")
def served(tiny_dir):
    import openai_server
    from llm import LLM
    engine = LLM(tiny_dir, dtype=torch.float32, tokenizer=TIKTOKEN, page_size=16, max_slots=4, num_pages=64)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(openai_server.build_app(engine), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    yield engine, openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", timeout=600)
    server.should_exit = True
    thread.join()
    engine.stop()


@pytest.fixture(scope="module")
def client(served):
    return served[1]


def test_chat_completions(client):
    messages = [{"role": "user", "content": "Hi"}]
    r = client.chat.completions.create(model="gpt-oss", messages=messages, max_tokens=3, temperature=0)
    assert r.choices[0].finish_reason in ("stop", "length", "tool_calls") and r.usage.completion_tokens <= 3
    chunks = list(client.chat.completions.create(model="gpt-oss", messages=messages, max_tokens=3, stream=True))
    assert chunks[-1].choices[0].finish_reason is not None
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert [m.id for m in client.models.list()] == ["gpt-oss"]


def test_completions_and_streaming(client):
    r = client.completions.create(model="gpt-oss", prompt="Hello", max_tokens=3, temperature=0)
    streamed = list(client.completions.create(model="gpt-oss", prompt="Hello", max_tokens=3, temperature=0,
                                              stream=True))
    assert "".join(c.choices[0].text for c in streamed) == r.choices[0].text
    assert streamed[-1].choices[0].finish_reason == r.choices[0].finish_reason == "length"


def test_bad_request_is_a_400(client):
    with pytest.raises(openai.BadRequestError, match="temperature"):
        client.completions.create(model="gpt-oss", prompt="Hello", max_tokens=3, temperature=-1)
    with pytest.raises(openai.BadRequestError, match="role"):
        client.chat.completions.create(model="gpt-oss", messages=[{"role": "wizard", "content": "x"}], stream=True)


def test_tool_calls_have_openai_shape():
    import openai_server
    from llm import ChatOutput, RequestOutput
    out = ChatOutput(1, "think", "", [{"name": "get_weather", "arguments": '{"city": "Paris"}'}], "tool_calls",
                     RequestOutput(1, [1, 2], [3, 4], "", "stop"))
    r = openai.types.chat.ChatCompletion.model_validate(openai_server.chat_response([out], "gpt-oss", "chatcmpl-1"))
    call = r.choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather" and call.function.arguments == '{"city": "Paris"}'
    assert r.choices[0].finish_reason == "tool_calls"


def test_stream_shapes_usage_and_created(client):
    """Chat streams open with the role; include_usage adds a last chunk with the usage and no choices; completion
    chunks carry created; completions report usage."""
    kw = dict(model="gpt-oss", max_tokens=3, temperature=0, stream=True, stream_options={"include_usage": True})
    chunks = list(client.chat.completions.create(messages=[{"role": "user", "content": "Hi"}], **kw))
    assert chunks[0].choices[0].delta.role == "assistant" and chunks[-2].choices[0].finish_reason is not None
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens <= 3 and chunks[-1].usage.prompt_tokens > 10
    chunks = list(client.completions.create(prompt="Hello", **kw))
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens == 3
    assert all(c.created > 0 for c in chunks)
    r = client.completions.create(model="gpt-oss", prompt="Hello", max_tokens=2, temperature=0)
    assert r.usage.completion_tokens == 2 and r.usage.total_tokens == r.usage.prompt_tokens + 2


def test_completions_take_a_list_of_prompts(client):
    r = client.completions.create(model="gpt-oss", prompt=["Hello", [1, 2, 3]], max_tokens=2, temperature=0)
    one = client.completions.create(model="gpt-oss", prompt=[1, 2, 3], max_tokens=2, temperature=0)
    assert [c.index for c in r.choices] == [0, 1] and r.choices[1].text == one.choices[0].text
    assert r.usage.completion_tokens == 4


@pytest.mark.parametrize("kw, match", [
    (dict(max_tokens=0), "max_tokens"),  # not the default 256
    (dict(max_tokens=10**6, stream=True), "context length"),  # a 400 before the stream starts
    (dict(n=2, stream=True), "n: must be an int in"), (dict(n=0), "n: must be an int in"),
    (dict(logprobs=True), "logprobs: not supported by this server .* /v1/completions takes logprobs"),
    (dict(top_logprobs=2), "top_logprobs: not supported"), (dict(extra_body={"echo": True}), "echo: not supported"),
    (dict(top_p="0.5"), "top_p"), (dict(tool_choice="required"), "tool_choice"),
    (dict(stream=True, stream_options=5), "stream_options"),  # was a 500
    (dict(frequency_penalty=1.5), r"frequency_penalty: not supported by this server \(only 0\)$"),  # these four
    # were ignored (audit, s62); the $: no hint about /v1/completions' logprobs (audit, s66)
    (dict(logit_bias={"1": 5}), "logit_bias: not supported"),
    (dict(response_format={"type": "json_object"}), "response_format: not supported"),
    (dict(extra_body={"stream": "false"}), "stream: must be true or false"),  # a truthy string: it streamed
    (dict(extra_body={"repetition_penalty": 1.5}), "repetition_penalty: not supported"),  # vLLM's extras were
    (dict(extra_body={"min_tokens": 2, "guided_json": {}}), "guided_json: not supported"),  # 200s (audit, s63)
    (dict(extra_body={"prompt": "Hi"}), "prompt: not supported"),  # the other endpoint's field
])
def test_bad_chat_requests_are_400s_naming_the_field(client, kw, match):
    with pytest.raises(openai.BadRequestError, match=match) as e:
        client.chat.completions.create(model="gpt-oss", messages=[{"role": "user", "content": "Hi"}], **kw)
    assert e.value.body["param"] == match.split(":")[0] or match == "context length"


@pytest.mark.parametrize("messages", [[[{"role": "user", "content": "Hi"}]],  # a list of conversations
                                      [{"role": "assistant", "tool_calls": ["f"]}, {"role": "user", "content": "Hi"}]])
def test_malformed_messages_are_400s(client, messages):  # both were 500s, the first after generating
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model="gpt-oss", messages=messages, max_tokens=2)


@pytest.mark.parametrize("kw, field, why", [
    (dict(suffix="END"), "suffix", "not supported"), (dict(extra_body={"tools": []}), "tools", "not supported"),
    (dict(logprobs=2, stream=True), "logprobs", "not supported in a stream"),
    (dict(echo=True, stream=True), "echo", "not supported in a stream"),
    (dict(logprobs=True), "logprobs", "must be None or an int"), (dict(logprobs=21), "logprobs", "must be None"),
    (dict(echo="yes"), "echo", "must be true or false"), (dict(n=65), "n", "must be an int in"),
    (dict(extra_body={"top_logprobs": 2}), "top_logprobs", "not supported")])  # a chat field
def test_completion_fields_it_cannot_apply_are_400s(client, kw, field, why):
    with pytest.raises(openai.BadRequestError, match=f"{field}: {why}") as e:
        client.completions.create(model="gpt-oss", prompt="Hello", max_tokens=2, **kw)
    assert e.value.body["param"] == field


def test_n_choices_are_requests_with_seeds_seed_plus_j(served):
    """n choices a prompt, prompt-major; with a seed, choice j is the engine's output at seed + j; the prompt's
    tokens are counted once for its n choices (as OpenAI's usage)."""
    engine, client = served
    kw = dict(model="gpt-oss", max_tokens=3, temperature=1.0, seed=5, extra_body={"ignore_eos": True})
    r = client.completions.create(prompt=["Hello", [1, 2, 3]], n=3, **kw)
    own = [engine.generate(p, max_tokens=3, temperature=1.0, seed=5 + j, ignore_eos=True).result().text
           for p in ("Hello", [1, 2, 3]) for j in range(3)]
    assert [c.index for c in r.choices] == list(range(6)) and [c.text for c in r.choices] == own
    assert len(set(own[:3])) > 1 and r.usage.completion_tokens == 18
    assert r.usage.prompt_tokens == len(engine.tokenizer.encode("Hello")) + 3
    msgs = [{"role": "user", "content": "Hi"}]
    one = client.chat.completions.create(messages=msgs, **kw)
    two = client.chat.completions.create(messages=msgs, n=2, **kw)
    assert [c.index for c in two.choices] == [0, 1] and two.usage.prompt_tokens == one.usage.prompt_tokens
    assert two.choices[0].message == one.choices[0].message and two.usage.completion_tokens == 6
    edge = client.completions.create(prompt="Hello", n=2, **{**kw, "seed": 2**63 - 1})  # j = 1 wraps to 1 - 2**63
    assert edge.choices[1].text == engine.generate("Hello", max_tokens=3, temperature=1.0, seed=1 - 2**63,
                                                   ignore_eos=True).result().text


def test_completion_logprobs_and_echo_are_the_engines(served):
    """logprobs=N: per token its text, logprob, the top N with it, and its offset; echo puts the prompt's tokens
    first (the first without a logprob), as lm-eval's loglikelihood requests ask (echo, logprobs, max_tokens 1)."""
    engine, client = served
    r = client.completions.create(model="gpt-oss", prompt=[1, 2, 3], max_tokens=2, temperature=0, logprobs=2,
                                  echo=True, extra_body={"ignore_eos": True})
    out = engine.generate([1, 2, 3], max_tokens=2, temperature=0, ignore_eos=True, logprobs=2,
                          prompt_logprobs=2).result()
    lp, ids = r.choices[0].logprobs, [1, 2, 3] + out.token_ids
    assert r.choices[0].text == engine.tokenizer.decode([1, 2, 3]) + out.text and lp.tokens[:3] == ['"', "#", "$"]
    assert lp.token_logprobs[0] is None and lp.top_logprobs[0] is None
    want = [d[t] for t, d in zip(ids[1:], out.prompt_logprobs[1:] + out.logprobs)]
    assert lp.token_logprobs[1:] == pytest.approx(want, abs=1e-6)
    assert all(2 <= len(d) <= 3 for d in lp.top_logprobs[1:])  # the top 2, and the chosen token where it is not
    assert lp.token_logprobs[-1] == pytest.approx(max(lp.top_logprobs[-1].values()), abs=1e-6)  # greedy: the top one
    assert lp.text_offset == [sum(len(t) for t in lp.tokens[:i]) for i in range(len(ids))]
    plain = client.completions.create(model="gpt-oss", prompt=[1, 2, 3], max_tokens=2, temperature=0, logprobs=0,
                                      extra_body={"ignore_eos": True}).choices[0]
    assert plain.text == out.text and plain.logprobs.token_logprobs == pytest.approx(want[2:], abs=1e-6)
    assert plain.logprobs.top_logprobs == [{t: v} for t, v in zip(plain.logprobs.tokens, plain.logprobs.token_logprobs)]
    assert client.completions.create(model="gpt-oss", prompt="Hi", max_tokens=2).choices[0].logprobs is None
    only = client.completions.create(model="gpt-oss", prompt=[1, 2, 3], max_tokens=0, temperature=0, logprobs=2,
                                     echo=True).choices[0]  # a prompt scored, nothing generated (OpenAI's, vLLM's)
    assert only.text == engine.tokenizer.decode([1, 2, 3]) and only.logprobs.tokens == lp.tokens[:3]
    assert only.logprobs.token_logprobs[1:] == pytest.approx(want[:2], abs=1e-6) and only.finish_reason == "length"


def test_token_texts_stay_distinct_and_offsets_count_characters():
    """A token that is no whole UTF-8 text reads "bytes:\\x.." (else every such token is one U+FFFD key and
    overwrites the others in top_logprobs); offsets count the characters of the decoded text."""
    import openai_server
    from llm import RequestOutput
    from model.tokenizer import Tokenizer
    tok = Tokenizer.from_tiktoken_file(TIKTOKEN)
    ids = tok.encode("日本語🎉 ok")  # the emoji is split over two tokens: b"\xf0\x9f\x8e", b"\x89"
    per = [{t: -0.1, 95: -2.0, 96: -3.0} for t in ids]  # 95, 96: the single bytes \xa2, \xa3
    lp = openai_server.completion_logprobs(tok, RequestOutput(0, [1], ids, "", "length", logprobs=per), False)
    assert lp["tokens"][2:] == ["bytes:\\xf0\\x9f\\x8e", "bytes:\\x89", " ok"] and lp["text_offset"] == [0, 2, 3, 3, 4]
    assert lp["top_logprobs"][3] == {"bytes:\\x89": -0.1, "bytes:\\xa2": -2.0, "bytes:\\xa3": -3.0}


def test_the_command_line_refuses_unknown_flags_and_missing_checkpoints(tmp_path):  # --host was read as the model
    import subprocess
    server = Path(__file__).resolve().parents[1] / "cookbook" / "openai_server.py"
    run = lambda *a: subprocess.run([sys.executable, str(server), *a], capture_output=True, text=True, timeout=300)
    bad = run("--hots", "0.0.0.0")
    assert bad.returncode == 2 and "unrecognized arguments: --hots" in bad.stderr
    missing = run(str(tmp_path / "gpt-oss-20b"), "--port", "1")
    assert missing.returncode == 1 and "no config.json there" in missing.stderr and "TINY" not in missing.stdout


def test_unknown_model_is_a_404_and_a_bad_body_a_400(client):
    with pytest.raises(openai.NotFoundError, match="does not exist"):
        client.completions.create(model="nope", prompt="Hello", max_tokens=2)
    import json
    import urllib.error
    import urllib.request
    req = urllib.request.Request(str(client.base_url) + "completions", data=b"[1, 2",
                                 headers={"content-type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=60)
    assert e.value.code == 400 and "JSON object" in json.loads(e.value.read())["error"]["message"]



def test_vllm_sampling_fields_are_honoured(served):  # top_k, stop_token_ids (vLLM's extras) were dropped (s62)
    engine, client = served
    kw = dict(model="gpt-oss", prompt="Hello", max_tokens=3)
    greedy = client.completions.create(temperature=0, **kw).choices[0].text
    assert client.completions.create(temperature=1.0, seed=3, extra_body={"top_k": 1}, **kw).choices[0].text == greedy
    first = engine.generate("Hello", max_tokens=1, temperature=0).result().token_ids[0]
    r = client.completions.create(temperature=0, extra_body={"stop_token_ids": [first]}, **kw)
    assert r.usage.completion_tokens == 1 and r.choices[0].finish_reason == "stop" and r.choices[0].text == ""


def test_streamed_tool_calls_are_the_outputs():  # arguments that are not JSON: text, not a call (audit, s62)
    import openai_server
    from llm import ChatOutput, RequestOutput
    from model.harmony import Delta
    out = lambda calls, finish: ChatOutput(1, "", "" if calls else '{"a"', calls, finish,
                                           RequestOutput(1, [1], [2], "", "stop"))
    head = [Delta("tool_call_name", "f", "f"), Delta("tool_call_args", '{"a"', "f")]
    bad = list(openai_server.chat_chunks(head + [Delta("text", '{"a"'), out([], "malformed")], "gpt-oss", "c1"))
    good = list(openai_server.chat_chunks(head[:1] + [Delta("tool_call_args", '{"a": 1}', "f"),
                                                      out([{"name": "f", "arguments": '{"a": 1}'}], "tool_calls")],
                                          "gpt-oss", "c2"))
    parse = openai.types.chat.ChatCompletionChunk.model_validate
    bad, good = ([parse(c).choices[0] for c in x] for x in (bad, good))
    assert not any(c.delta.tool_calls for c in bad) and "".join(c.delta.content or "" for c in bad) == '{"a"'
    calls = [t for c in good for t in c.delta.tool_calls or []]
    assert [(t.index, t.type, t.function.name, t.function.arguments) for t in calls] == [(0, "function", "f",
                                                                                          '{"a": 1}')]
    assert calls[0].id.startswith("call_") and good[-1].finish_reason == "tool_calls" and bad[-1].finish_reason == "stop"


def test_an_engine_error_mid_stream_is_an_error_event():  # the connection used to break with no [DONE] (s62)
    import openai_server

    def chunks():
        yield {"a": 1}
        raise RuntimeError("CUDA error: boom")
    events = list(openai_server.sse(chunks()))
    assert events[0] == 'data: {"a": 1}\n\n' and events[-1] == "data: [DONE]\n\n"
    assert json.loads(events[1].removeprefix("data: "))["error"]["message"] == "the engine failed: CUDA error: boom"


def test_a_client_gone_ends_its_request(served):
    """A request whose client leaves before its answer is aborted (polled each second), not run to max_tokens:
    500 tokens here take minutes on the CPU (audit, s62: a 4 s client timeout left 40 tokens running to the end)."""
    import http.client
    engine, client = served
    conn = http.client.HTTPConnection(client.base_url.host, client.base_url.port, timeout=60)
    body = {"model": "gpt-oss", "prompt": "Hello", "max_tokens": 500, "temperature": 0, "ignore_eos": True}
    conn.request("POST", "/v1/completions", json.dumps(body), {"content-type": "application/json"})
    t0 = time.time()
    while not engine.running and time.time() - t0 < 60:
        time.sleep(0.05)
    assert engine.running  # admitted and decoding
    conn.sock.shutdown(socket.SHUT_RDWR)
    conn.close()
    t0 = time.time()
    while engine.running and time.time() - t0 < 60:
        time.sleep(0.1)
    assert not engine.running and time.time() - t0 < 60


def test_the_thread_pool_holds_every_slot():  # each stream waits in a worker thread; anyio's default is 40 (s62)
    import types
    import anyio
    import openai_server
    from fastapi.testclient import TestClient
    app = openai_server.build_app(types.SimpleNamespace(max_slots=300))

    @app.get("/limit")
    async def limit():
        return anyio.to_thread.current_default_thread_limiter().total_tokens
    with TestClient(app) as c:
        assert c.get("/limit").json() == 340 and c.get("/v1/models").json()["data"][0]["created"] > 0
