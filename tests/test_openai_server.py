"""The cookbook's OpenAI-compatible server, driven by the official openai client, on the tiny checkpoint."""
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
def client(tiny_dir):
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
    yield openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="none", timeout=600)
    server.should_exit = True
    thread.join()
    engine.stop()


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
    r = openai.types.chat.ChatCompletion.model_validate(openai_server.chat_response(out, "gpt-oss", "chatcmpl-1"))
    call = r.choices[0].message.tool_calls[0]
    assert call.function.name == "get_weather" and call.function.arguments == '{"city": "Paris"}'
    assert r.choices[0].finish_reason == "tool_calls"
