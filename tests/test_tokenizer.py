import json
import shutil
from pathlib import Path

import pytest
import tiktoken
import tiktoken.load

from helpers import DATA, require_data  # ../shared/data, or a git-ignored copy in shared/data on the GPU machine
from model.tokenizer import O200K_PATTERN, Tokenizer

TOKENIZER_JSON = DATA / "tokenizer.json"
TIKTOKEN_FILE = DATA / "o200k_base.tiktoken"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"


@pytest.fixture(autouse=True, scope="module")
def _data():
    require_data(TOKENIZER_JSON, TIKTOKEN_FILE)


SAMPLES = [
    "", "Hello world", "hello world", "The quick brown fox jumps over the lazy dog.",
    "I'm sure they'll say it's what we've done, isn't it? HE'S HERE.",
    "def f(x):\n    return x ** 2  # square\n\n\nprint(f(12345678))\n",
    "for (int i = 0; i < n; ++i) { a[i] += b[i] >> 1; }",
    "Größe, naïve café, Ελληνικά, русский текст, 日本語の文章, 中文, 한국어, עברית, العربية",
    "emoji: 😀🎉👍🏽 👨‍👩‍👧‍👦 🇺🇸", "numbers: 0 7 42 3.14159 1,000,000 -273.15 1e-9 2025-01-31",
    "   leading and trailing   ", "tabs\t\tand\nnewlines\r\n\r\n  \n", " " * 17, "\n" * 5, "a\u00a0b\u200bc",
    "<|start|>user<|message|>hi<|end|>", "https://example.com/path?q=1&r=two#frag",
]


@pytest.fixture(scope="module")
def hf_json():
    return json.loads(TOKENIZER_JSON.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def tok_json():
    return Tokenizer.from_tokenizer_json(TOKENIZER_JSON)


@pytest.fixture(scope="module")
def tok_tt():
    return Tokenizer.from_tiktoken_file(TIKTOKEN_FILE)


@pytest.fixture(scope="module")
def reference():
    """Plain o200k_base built directly by tiktoken's own loader (hash-checked, no cache writes)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIKTOKEN_CACHE_DIR", "")  # empty string disables tiktoken's file cache
        ranks = tiktoken.load.load_tiktoken_bpe(str(TIKTOKEN_FILE), expected_hash=O200K_SHA256)
    return tiktoken.Encoding(name="o200k_base_ref", pat_str=O200K_PATTERN, mergeable_ranks=ranks,
                             special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018})


def test_pattern_matches_tokenizer_json(hf_json):
    split = hf_json["pre_tokenizer"]["pretokenizers"][0]
    assert split["pattern"]["Regex"] == O200K_PATTERN


def test_build_paths_agree(tok_json, tok_tt):
    assert tok_json.enc._mergeable_ranks == tok_tt.enc._mergeable_ranks
    assert tok_json.enc._special_tokens == tok_tt.enc._special_tokens
    for s in SAMPLES:
        assert tok_json.encode(s) == tok_tt.encode(s), s
        assert tok_json.encode(s, allow_special=True) == tok_tt.encode(s, allow_special=True), s


def test_matches_reference_o200k_base(tok_json, reference):
    for s in SAMPLES:
        assert tok_json.encode(s) == reference.encode_ordinary(s), s
    # A few ids fixed by the reference build above (which checks the file's official sha256).
    assert tok_json.encode("Hello world") == reference.encode("Hello world") == [13225, 2375]
    assert tok_json.encode("<|endoftext|>", allow_special=True) == reference.encode(
        "<|endoftext|>", allowed_special="all") == [199999]


def test_round_trip(tok_json):
    for s in SAMPLES:
        ids = tok_json.encode(s)
        assert tok_json.decode(ids) == s
        assert tok_json.decode_bytes(ids) == s.encode("utf-8")
        assert tok_json.decode(tok_json.encode(s, allow_special=True)) == s


def test_partial_utf8_decode(tok_json):
    ids = tok_json.encode("😀")
    raw = b"".join(tok_json.decode_bytes([i]) for i in ids)
    assert raw == "😀".encode()
    assert tok_json.decode_bytes(ids)[:2] == raw[:2]
    assert "\ufffd" in tok_json.decode_bytes(ids)[:2].decode("utf-8", errors="replace")
    # decode never raises on a token that ends mid-character
    byte_tok = tok_json.enc.encode_single_token(b"\xf0")
    assert tok_json.decode([byte_tok]) == "\ufffd"


@pytest.mark.parametrize("which", ["tok_json", "tok_tt"])
def test_special_ids(which, request):
    tok = request.getfixturevalue(which)
    assert tok.n_vocab == 201088
    expected = {"<|startoftext|>": 199998, "<|endoftext|>": 199999, "<|return|>": 200002,
                "<|constrain|>": 200003, "<|channel|>": 200005, "<|start|>": 200006, "<|end|>": 200007,
                "<|message|>": 200008, "<|call|>": 200012, "<|endofprompt|>": 200018}
    assert tok.special == expected
    assert (tok.start, tok.end, tok.message, tok.channel) == (200006, 200007, 200008, 200005)
    assert (tok.return_, tok.call, tok.constrain) == (200002, 200012, 200003)
    assert set(tok.eos_ids) == {200002, 200012, 199999}
    specials = tok.enc._special_tokens
    assert len(specials) == 201088 - 199998
    assert sorted(specials.values()) == list(range(199998, 201088))
    for i in (200000, 200001, 200004, 200009, 200013, 200017, 200019, 201087):
        assert specials[f"<|reserved_{i}|>"] == i
        assert tok.decode([i]) == f"<|reserved_{i}|>"


def test_specials_follow_tokenizer_json(tok_json, hf_json):
    for t in hf_json["added_tokens"]:
        assert tok_json.enc._special_tokens[t["content"]] == t["id"]


def test_harmony_message_encoding(tok_json):
    text = "<|start|>user<|message|>hi<|end|>"
    ids = tok_json.encode(text, allow_special=True)
    assert ids[0] == 200006 and ids[-1] == 200007
    assert ids == [200006, *tok_json.encode("user"), 200008, *tok_json.encode("hi"), 200007]
    plain = tok_json.encode(text)  # no error; specials are just text
    assert not set(plain) & set(range(199998, 201088))
    assert tok_json.decode(plain) == text


def test_from_dir_with_tokenizer_json(tmp_path, tok_json):
    shutil.copy(TOKENIZER_JSON, tmp_path / "tokenizer.json")
    tok = Tokenizer.from_dir(tmp_path, tiktoken_file=tmp_path / "missing.tiktoken")
    for s in SAMPLES:
        assert tok.encode(s, allow_special=True) == tok_json.encode(s, allow_special=True)


def test_from_dir_falls_back_to_tiktoken(tmp_path, tok_json):
    tok = Tokenizer.from_dir(tmp_path, tiktoken_file=TIKTOKEN_FILE)
    assert tok.n_vocab == 201088
    for s in SAMPLES:
        assert tok.encode(s, allow_special=True) == tok_json.encode(s, allow_special=True)


@pytest.mark.parametrize("tiktoken_name", [None, "nope.tiktoken"])
def test_from_dir_missing_everything(tmp_path, tiktoken_name):
    tiktoken_file = tmp_path / tiktoken_name if tiktoken_name else None
    with pytest.raises(FileNotFoundError) as err:
        Tokenizer.from_dir(tmp_path, tiktoken_file=tiktoken_file)
    msg = str(err.value)
    assert str(tmp_path / "tokenizer.json") in msg
    assert str(tiktoken_file) in msg
