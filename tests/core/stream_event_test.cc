// Streams and events on the CPU device: default and created streams, the
// per-thread current stream, StreamGuard, events (record, query,
// synchronize, block, elapsed time) and the order of work on a stream.
#include <catch2/catch.hpp>

#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/ops/ops.h"
#include "runtime/stream/event.h"
#include "runtime/stream/stream.h"
#include "tests/ops/reference.h"

using namespace tessera;
using tessera::testing::make_tensor;

namespace {
Device cpu() { return host_device(); }
}  // namespace

TEST_CASE("streams: default stream and created streams", "[stream]") {
  Stream d = Stream::default_stream(cpu());
  CHECK(d.id() == 0);
  CHECK(d.is_default());
  CHECK(d.device() == cpu());
  CHECK(current_stream(cpu()) == d);
  CHECK(d.native() != nullptr);
  CHECK(d.native() == Stream::default_stream(cpu()).native());
  CHECK(d.query());
  d.synchronize();
  CHECK(d.to_string().find("cpu:0") != std::string::npos);

  std::set<uint32_t> ids;
  std::set<void*> natives;
  for (int i = 0; i < 5; ++i) {
    Stream s = Stream::create(cpu());
    CHECK(s.id() != 0);
    CHECK_FALSE(s.is_default());
    CHECK(s.device() == cpu());
    ids.insert(s.id());
    natives.insert(s.native());
    CHECK(s.query());
  }
  CHECK(ids.size() == 5);
  CHECK(natives.size() == 5);
  CHECK(natives.count(d.native()) == 0);

  Stream a = Stream::create(cpu());
  Stream a_copy = a;
  CHECK(a_copy == a);
  CHECK(std::hash<Stream>()(a_copy) == std::hash<Stream>()(a));
  CHECK_FALSE(a == d);

  // A stream id that was never created.
  CHECK_THROWS_AS(set_current_stream(Stream(cpu(), 1000000)), ValueError);
  CHECK(current_stream(cpu()) == d);
}

TEST_CASE("streams: the current stream is per thread", "[stream]") {
  Stream s1 = Stream::create(cpu());
  Stream s2 = Stream::create(cpu());
  set_current_stream(s1);
  CHECK(current_stream(cpu()) == s1);

  Stream seen_in_thread = s1;
  Stream set_in_thread = s1;
  std::thread th([&] {
    seen_in_thread = current_stream(cpu());
    set_current_stream(s2);
    set_in_thread = current_stream(cpu());
  });
  th.join();
  CHECK(seen_in_thread.is_default());
  CHECK(set_in_thread == s2);
  CHECK(current_stream(cpu()) == s1);  // untouched by the other thread

  set_current_stream(Stream::default_stream(cpu()));
  CHECK(current_stream(cpu()).is_default());
}

TEST_CASE("streams: StreamGuard restores the previous stream", "[stream]") {
  Stream s1 = Stream::create(cpu());
  Stream s2 = Stream::create(cpu());
  REQUIRE(current_stream(cpu()).is_default());
  {
    StreamGuard g1(s1);
    CHECK(current_stream(cpu()) == s1);
    {
      StreamGuard g2(s2);
      CHECK(current_stream(cpu()) == s2);
    }
    CHECK(current_stream(cpu()) == s1);
    {
      StreamGuard g3(s1);
      CHECK(current_stream(cpu()) == s1);
    }
    CHECK(current_stream(cpu()) == s1);
  }
  CHECK(current_stream(cpu()).is_default());

  // Restores a stream set without a guard, too.
  set_current_stream(s2);
  {
    StreamGuard g(s1);
    CHECK(current_stream(cpu()) == s1);
  }
  CHECK(current_stream(cpu()) == s2);
  set_current_stream(Stream::default_stream(cpu()));

  // Restores on unwinding.
  try {
    StreamGuard g(s1);
    throw ValueError("boom");
  } catch (const ValueError&) {
  }
  CHECK(current_stream(cpu()).is_default());
}

TEST_CASE("events: record, query, synchronize, elapsed time", "[event]") {
  Stream s = Stream::create(cpu());
  Event never(cpu());
  CHECK(never.device() == cpu());
  CHECK_FALSE(never.recorded());
  CHECK(never.query());  // never recorded counts as reached
  never.synchronize();

  Event start(cpu());
  Event end(cpu());
  start.record(s);
  CHECK(start.recorded());
  {
    StreamGuard g(s);
    Tensor a = ones({256, 256});
    for (int i = 0; i < 10; ++i) a = add(a, a);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  end.record(s);
  end.synchronize();
  CHECK(end.query());
  CHECK(start.query());
  double ms = start.elapsed_time(end);
  CHECK(ms >= 0.0);
  CHECK(ms >= 15.0);     // the sleep is between the two records
  CHECK(ms < 60000.0);

  // Re-recording moves the marker.
  start.record(s);
  end.record(s);
  end.synchronize();
  CHECK(start.elapsed_time(end) >= 0.0);
  CHECK(start.elapsed_time(end) < 1000.0);

  // Unrecorded events have no time.
  Event fresh(cpu());
  std::string msg;
  std::string kind = tessera::testing::thrown_kind([&] { fresh.elapsed_time(end); }, &msg);
  INFO(msg);
  CHECK(kind != "none");
  CHECK(kind.rfind("other", 0) != 0);
  CHECK(tessera::testing::lower(msg).find("record") != std::string::npos);
  kind = tessera::testing::thrown_kind([&] { end.elapsed_time(fresh); }, &msg);
  CHECK(kind != "none");
  CHECK(kind.rfind("other", 0) != 0);

  // Events move.
  Event moved = std::move(end);
  CHECK(moved.recorded());
  CHECK(moved.native() != nullptr);
  moved.synchronize();
  Event assigned(cpu());
  assigned = std::move(moved);
  CHECK(assigned.recorded());
  CHECK(start.elapsed_time(assigned) >= 0.0);
}

TEST_CASE("events: a stream blocked on an event sees the work before it",
          "[event]") {
  Stream producer = Stream::create(cpu());
  Stream consumer = Stream::create(cpu());
  Tensor x = zeros({1000, 100});
  Event ready(cpu());
  {
    StreamGuard g(producer);
    x.fill_(2.0);
    x.add_(ones({1000, 100}));
    ready.record(producer);
  }
  ready.block(consumer);
  Tensor y;
  {
    StreamGuard g(consumer);
    y = mul(x, x);
  }
  consumer.synchronize();
  CHECK(ready.query());
  std::vector<double> got = tessera::testing::read_strided(y);
  CHECK(tessera::testing::close_report(got, std::vector<double>(100000, 9.0)) == "");
}

TEST_CASE("streams: work enqueued on a stream runs in order", "[stream]") {
  Stream s = Stream::create(cpu());
  Tensor a = zeros({1 << 20});
  Tensor b = empty({1 << 20});
  Tensor c = empty({1 << 20}, DType::kF64);
  {
    StreamGuard g(s);
    for (int i = 0; i < 10; ++i) a.add_(ones({1 << 20}));  // a = 10
    b.copy_(a);                                              // b = 10
    b.mul_(full({1}, 3.0));                                  // b = 30
    c.copy_(b);                                              // c = 30 (f64)
    a.fill_(-1);                                             // a = -1 after
  }
  s.synchronize();
  CHECK(s.query());
  std::vector<double> av = tessera::testing::read_strided(a);
  std::vector<double> bv = tessera::testing::read_strided(b);
  std::vector<double> cv = tessera::testing::read_strided(c);
  CHECK(tessera::testing::close_report(av, std::vector<double>(1 << 20, -1.0)) == "");
  CHECK(tessera::testing::close_report(bv, std::vector<double>(1 << 20, 30.0)) == "");
  CHECK(tessera::testing::close_report(cv, std::vector<double>(1 << 20, 30.0)) == "");

  // Ops on several streams from several threads give the right results.
  std::vector<std::thread> threads;
  std::vector<double> sums(4, 0.0);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t, &sums] {
      Stream st = Stream::create(host_device());
      StreamGuard g(st);
      Tensor v = full({1000}, static_cast<double>(t + 1));
      for (int k = 0; k < 5; ++k) v = add(v, v);
      st.synchronize();
      sums[t] = sum(v).item<double>();
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < 4; ++t) CHECK(sums[t] == 1000.0 * (t + 1) * 32.0);
  synchronize(cpu());
}
