// Caching allocator benchmark on the host device ("cpu").
//
// (a) Hot path: the median time of one allocate+free pair served from the
//     cache, for a few sizes. Goal: <= 100 ns.
// (b) Fragmentation: a synthetic trace shaped like training a 12-layer
//     transformer (GPT-2 small widths) for a few steps: weights once,
//     forward activations saved and freed in reverse during backward,
//     gradients, odd-sized temporaries, Adam states. Reported as peak
//     reserved / peak allocated. Goal: <= 1.3.
//
// Prints a table; with TESSERA_BENCH_JSON set, appends one JSON object (one
// line) to that file, so several benchmarks can share it.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "runtime/alloc/caching_allocator.h"
#include "runtime/core/device.h"
#include "runtime/stream/stream.h"

namespace tessera {
namespace {

constexpr size_t KiB = size_t{1} << 10;
constexpr size_t MiB = size_t{1} << 20;

struct PairResult {
  size_t bytes;
  double median_ns;
  double min_ns;
};

// Median ns per allocate+free pair over `batches` batches of `pairs` pairs.
PairResult time_pairs(CachingAllocator& alloc, Stream stream, size_t bytes, int batches,
                      int pairs) {
  // Warm: the segment is obtained once and then cached; a few unmeasured
  // pairs bring the code and the CPU clock up to speed.
  for (int i = 0; i < 10 * pairs; ++i) alloc.deallocate(alloc.allocate(bytes, stream));
  std::vector<double> per_pair;
  per_pair.reserve(batches);
  for (int b = 0; b < batches; ++b) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < pairs; ++i) {
      void* p = alloc.allocate(bytes, stream);
      // Keep the compiler from reasoning the pair away.
      asm volatile("" : : "r"(p) : "memory");
      alloc.deallocate(p);
    }
    const auto t1 = std::chrono::steady_clock::now();
    per_pair.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / pairs);
  }
  std::sort(per_pair.begin(), per_pair.end());
  return PairResult{bytes, per_pair[per_pair.size() / 2], per_pair.front()};
}

// -- The synthetic training trace.

struct TraceResult {
  int steps;
  int64_t peak_allocated;
  int64_t peak_reserved;
  int64_t allocations;
  int64_t device_allocs;
  double ratio;
};

class TraceRunner {
 public:
  TraceRunner(CachingAllocator& alloc, Stream stream) : alloc_(alloc), stream_(stream) {}

  void* alloc(size_t bytes) {
    ++allocations_;
    return alloc_.allocate(bytes, stream_);
  }
  void free(void*& p) {
    alloc_.deallocate(p);
    p = nullptr;
  }
  // An odd-sized scratch buffer used and dropped at once (reductions,
  // index tensors, small casts), as eager kernels produce all the time.
  void scratch(size_t typical) {
    const size_t bytes = 1 + rng_() % (2 * typical);
    void* p = alloc(bytes);
    free(p);
  }
  int64_t allocations() const { return allocations_; }

 private:
  CachingAllocator& alloc_;
  Stream stream_;
  std::mt19937_64 rng_{42};
  int64_t allocations_ = 0;
};

// GPT-2 small widths, batch 4 x 512 tokens, a reduced vocabulary; f32.
struct ModelShape {
  size_t layers = 12, d = 768, heads = 12, seq = 512, batch = 4, vocab = 8192;
  size_t tokens() const { return batch * seq; }
};

struct Layer {
  // Parameters (bytes): ln1 w/b, qkv w/b, proj w/b, ln2 w/b, fc1 w/b, fc2 w/b.
  std::vector<size_t> param_bytes;
  std::vector<void*> params, grads, exp_avg, exp_avg_sq;
  // Saved for backward.
  void *ln1_out = nullptr, *ln1_stats = nullptr, *qkv = nullptr, *probs = nullptr,
       *attn = nullptr, *h1 = nullptr, *ln2_out = nullptr, *ln2_stats = nullptr,
       *fc1 = nullptr, *gelu = nullptr, *out = nullptr;
};

TraceResult run_transformer_trace(CachingAllocator& alloc, Stream stream, int steps) {
  const ModelShape m;
  const size_t f = sizeof(float);
  const size_t T = m.tokens(), d = m.d;
  const size_t act = T * d * f;                              // one hidden state
  const size_t scores = m.batch * m.heads * m.seq * m.seq * f;  // attention matrix
  const size_t stats = T * 2 * f;                            // layer-norm mean/rstd

  TraceRunner r(alloc, stream);
  alloc.empty_cache();
  alloc.reset_peak_stats();
  const AllocatorStats before = alloc.stats();

  // Weights: embeddings, then each layer's.
  std::vector<size_t> top_bytes = {m.vocab * d * f, m.seq * d * f, d * f, d * f};
  std::vector<void*> top(top_bytes.size()), top_grads(top_bytes.size(), nullptr),
      top_avg(top_bytes.size(), nullptr), top_sq(top_bytes.size(), nullptr);
  for (size_t i = 0; i < top.size(); ++i) top[i] = r.alloc(top_bytes[i]);
  std::vector<Layer> layers(m.layers);
  for (Layer& L : layers) {
    L.param_bytes = {d * f,         d * f,     d * 3 * d * f, 3 * d * f, d * d * f, d * f,
                     d * f,         d * f,     d * 4 * d * f, 4 * d * f, 4 * d * d * f, d * f};
    for (size_t b : L.param_bytes) L.params.push_back(r.alloc(b));
    L.grads.assign(L.param_bytes.size(), nullptr);
    L.exp_avg.assign(L.param_bytes.size(), nullptr);
    L.exp_avg_sq.assign(L.param_bytes.size(), nullptr);
  }
  // Weight gradients appear during backward (set_to_none zeroing).
  auto grad_for = [&](std::vector<void*>& grads, const std::vector<size_t>& bytes, size_t i) {
    if (grads[i] == nullptr) grads[i] = r.alloc(bytes[i]);
  };

  for (int step = 0; step < steps; ++step) {
    // ---- Forward.
    void* emb = r.alloc(act);  // embedding lookup output, layer 0's input
    r.scratch(T * 8);          // token ids
    for (Layer& L : layers) {
      L.ln1_out = r.alloc(act);
      L.ln1_stats = r.alloc(stats);
      void* qkv = r.alloc(T * 3 * d * f);
      L.qkv = qkv;
      void* q_t = r.alloc(act);  // head-major copies for bmm
      void* k_t = r.alloc(act);
      void* raw = r.alloc(scores);
      r.free(k_t);
      L.probs = r.alloc(scores);  // softmax(scores / sqrt(d_head) + mask)
      r.scratch(m.seq * m.seq);   // causal mask
      r.free(raw);
      void* ctx = r.alloc(act);
      r.free(q_t);
      L.attn = r.alloc(act);  // ctx back to token-major
      r.free(ctx);
      void* proj = r.alloc(act);
      L.h1 = r.alloc(act);  // x + proj
      r.free(proj);
      L.ln2_out = r.alloc(act);
      L.ln2_stats = r.alloc(stats);
      L.fc1 = r.alloc(T * 4 * d * f);
      L.gelu = r.alloc(T * 4 * d * f);
      void* fc2 = r.alloc(act);
      L.out = r.alloc(act);  // h1 + fc2: the next layer's input, saved by its ln1
      r.free(fc2);
    }
    void* lnf = r.alloc(act);
    void* logits = r.alloc(T * m.vocab * f);
    void* lse = r.alloc(T * f);  // log-sum-exp per token
    void* loss = r.alloc(4);
    r.scratch(T * f);

    // ---- Backward.
    void* g_logits = r.alloc(T * m.vocab * f);
    r.free(lse);
    r.free(loss);
    grad_for(top_grads, top_bytes, 0);  // tied LM head / embedding
    void* g = r.alloc(act);             // grad of lnf
    r.free(g_logits);
    r.free(logits);
    grad_for(top_grads, top_bytes, 2);
    grad_for(top_grads, top_bytes, 3);
    void* g_x = r.alloc(act);
    r.free(g);
    r.free(lnf);
    for (size_t li = layers.size(); li-- > 0;) {
      Layer& L = layers[li];
      // MLP.
      void* g_gelu = r.alloc(T * 4 * d * f);
      grad_for(L.grads, L.param_bytes, 10);
      grad_for(L.grads, L.param_bytes, 11);
      r.scratch(4 * d * f);  // bias-grad reduction
      void* g_fc1 = r.alloc(T * 4 * d * f);
      r.free(g_gelu);
      r.free(L.gelu);
      grad_for(L.grads, L.param_bytes, 8);
      grad_for(L.grads, L.param_bytes, 9);
      void* g_ln2 = r.alloc(act);
      r.free(g_fc1);
      r.free(L.fc1);
      grad_for(L.grads, L.param_bytes, 6);
      grad_for(L.grads, L.param_bytes, 7);
      void* g_h1 = r.alloc(act);  // layer-norm backward + residual
      r.scratch(T * f * 3);
      r.free(g_ln2);
      r.free(L.ln2_out);
      r.free(L.ln2_stats);
      r.free(L.out);
      // Attention.
      grad_for(L.grads, L.param_bytes, 4);
      grad_for(L.grads, L.param_bytes, 5);
      void* g_attn = r.alloc(act);
      void* g_ctx = r.alloc(act);
      r.free(g_attn);
      r.free(L.attn);
      void* g_probs = r.alloc(scores);
      void* g_v = r.alloc(act);
      void* g_scores = r.alloc(scores);  // softmax backward
      r.free(g_probs);
      r.free(L.probs);
      void* g_q = r.alloc(act);
      void* g_k = r.alloc(act);
      r.free(g_scores);
      r.free(g_ctx);
      void* g_qkv = r.alloc(T * 3 * d * f);  // cat of q, k, v grads
      r.free(g_q);
      r.free(g_k);
      r.free(g_v);
      grad_for(L.grads, L.param_bytes, 2);
      grad_for(L.grads, L.param_bytes, 3);
      void* g_ln1 = r.alloc(act);
      r.free(g_qkv);
      r.free(L.qkv);
      grad_for(L.grads, L.param_bytes, 0);
      grad_for(L.grads, L.param_bytes, 1);
      void* g_in = r.alloc(act);  // layer-norm backward + residual into x
      r.scratch(T * f * 3);
      r.free(g_ln1);
      r.free(L.ln1_out);
      r.free(L.ln1_stats);
      r.free(L.h1);
      r.free(g_h1);
      r.free(g_x);
      g_x = g_in;
    }
    grad_for(top_grads, top_bytes, 1);
    r.scratch(T * 8);  // embedding backward indices
    r.free(g_x);
    r.free(emb);

    // ---- Adam step, then zero_grad(set_to_none=True).
    auto adam = [&](std::vector<void*>& p, std::vector<void*>& gr, std::vector<void*>& avg,
                    std::vector<void*>& sq, const std::vector<size_t>& bytes) {
      for (size_t i = 0; i < p.size(); ++i) {
        if (avg[i] == nullptr) avg[i] = r.alloc(bytes[i]);
        if (sq[i] == nullptr) sq[i] = r.alloc(bytes[i]);
        void* denom = r.alloc(bytes[i]);  // sqrt(v) + eps
        r.free(denom);
        r.free(gr[i]);
      }
    };
    adam(top, top_grads, top_avg, top_sq, top_bytes);
    for (Layer& L : layers) adam(L.params, L.grads, L.exp_avg, L.exp_avg_sq, L.param_bytes);
  }
  // Peaks are taken before the model is torn down.
  const AllocatorStats after = alloc.stats();
  for (void*& p : top) r.free(p);
  for (void*& p : top_avg) r.free(p);
  for (void*& p : top_sq) r.free(p);
  for (Layer& L : layers) {
    for (auto* v : {&L.params, &L.exp_avg, &L.exp_avg_sq}) {
      for (void*& p : *v) r.free(p);
    }
  }

  TraceResult res;
  res.steps = steps;
  res.peak_allocated = after.allocated_bytes.peak;
  res.peak_reserved = after.reserved_bytes.peak;
  res.allocations = r.allocations();
  res.device_allocs = after.num_device_allocs - before.num_device_allocs;
  res.ratio = static_cast<double>(res.peak_reserved) / static_cast<double>(res.peak_allocated);
  return res;
}

void append_json(const std::string& path, const std::vector<PairResult>& pairs,
                 const TraceResult& t, const Device& dev) {
  std::FILE* out = std::fopen(path.c_str(), "a");
  if (out == nullptr) {
    std::fprintf(stderr, "allocator_bench: cannot open %s for appending\n", path.c_str());
    return;
  }
  std::fprintf(out, "{\"bench\": \"allocator\", \"device\": \"%s\", \"pair_ns\": [",
               dev.to_string().c_str());
  for (size_t i = 0; i < pairs.size(); ++i) {
    std::fprintf(out, "%s{\"bytes\": %zu, \"median_ns\": %.2f, \"min_ns\": %.2f}",
                 i ? ", " : "", pairs[i].bytes, pairs[i].median_ns, pairs[i].min_ns);
  }
  std::fprintf(out,
               "], \"pair_ns_goal\": 100, \"trace\": {\"name\": \"transformer_12l_train\", "
               "\"steps\": %d, \"allocations\": %lld, \"device_allocs\": %lld, "
               "\"peak_allocated_bytes\": %lld, \"peak_reserved_bytes\": %lld, "
               "\"reserved_over_allocated\": %.4f, \"goal\": 1.3}}\n",
               t.steps, static_cast<long long>(t.allocations),
               static_cast<long long>(t.device_allocs),
               static_cast<long long>(t.peak_allocated), static_cast<long long>(t.peak_reserved),
               t.ratio);
  std::fclose(out);
}

int run() {
  const Device dev = host_device();
  CachingAllocator& alloc = CachingAllocator::get(dev);
  const Stream stream = Stream::default_stream(dev);
  if (alloc.caching_disabled()) {
    std::printf("note: TESSERA_DISABLE_CACHING_ALLOCATOR is set; timings are of raw allocation\n");
  }

  std::vector<PairResult> pairs;
  for (size_t bytes : {4 * KiB, 64 * KiB, 1 * MiB, 8 * MiB}) {
    pairs.push_back(time_pairs(alloc, stream, bytes, /*batches=*/51, /*pairs=*/1000));
  }
  std::printf("Caching allocator on %s\n\n", dev.to_string().c_str());
  std::printf("(a) cached allocate+free pair (51 batches x 1000 pairs)\n");
  std::printf("  %-10s %12s %12s %8s\n", "size", "median ns", "min ns", "goal");
  for (const PairResult& p : pairs) {
    std::printf("  %-10s %12.1f %12.1f %8s\n",
                (p.bytes >= MiB ? std::to_string(p.bytes / MiB) + " MiB"
                                : std::to_string(p.bytes / KiB) + " KiB")
                    .c_str(),
                p.median_ns, p.min_ns, p.median_ns <= 100.0 ? "<=100 ok" : ">100");
  }

  const TraceResult t = run_transformer_trace(alloc, stream, /*steps=*/3);
  std::printf("\n(b) synthetic training trace: 12-layer transformer, d=768, 4x512 tokens, "
              "Adam, %d steps\n",
              t.steps);
  std::printf("  allocations         %lld\n", static_cast<long long>(t.allocations));
  std::printf("  device allocations  %lld\n", static_cast<long long>(t.device_allocs));
  std::printf("  peak allocated      %.1f MiB\n", static_cast<double>(t.peak_allocated) / MiB);
  std::printf("  peak reserved       %.1f MiB\n", static_cast<double>(t.peak_reserved) / MiB);
  std::printf("  reserved/allocated  %.3f (goal <= 1.3: %s)\n", t.ratio,
              t.ratio <= 1.3 ? "ok" : "missed");
  alloc.empty_cache();

  if (const char* path = std::getenv("TESSERA_BENCH_JSON"); path != nullptr && *path) {
    append_json(path, pairs, t, dev);
  }
  return 0;
}

}  // namespace
}  // namespace tessera

int main() {
  try {
    return tessera::run();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "allocator_bench: %s\n", e.what());
    return 1;
  }
}
