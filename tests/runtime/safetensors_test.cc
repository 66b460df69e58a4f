// Saving and loading safetensors files (runtime/io/safetensors.h): every
// dtype round-trips on each device, tensors on the host device borrow the
// file's mapped pages (copy-on-write, kept alive by the tensor), data the
// writer left unaligned is copied, and the writer's errors. Malformed
// files: safetensors_malformed_test.cc.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/device/device_registry.h"
#include "runtime/io/safetensors.h"
#include "runtime/ops/ops.h"
#include "tests/runtime/safetensors_test_util.h"
#include "tests/support/skip.h"

namespace tessera {
namespace {

using Catch::Matchers::Contains;
using namespace safetensors_testing;

constexpr DType kAllDTypes[] = {DType::kBool, DType::kU8,  DType::kI8,   DType::kI16,
                                DType::kI32,  DType::kI64, DType::kF16,  DType::kBF16,
                                DType::kF32,  DType::kF64};

// dtypes a device can hold (lavapipe, for one, may lack float64).
std::vector<DType> dtypes_of(Device device) {
  const DeviceProperties p = device_interface(device).properties(device.index);
  std::vector<DType> out;
  for (DType t : kAllDTypes) {
    if ((t == DType::kF64 && !p.supports_f64) || (t == DType::kI64 && !p.supports_i64) ||
        ((t == DType::kF16 || t == DType::kBF16) && !p.supports_f16)) {
      continue;
    }
    out.push_back(t);
  }
  return out;
}

std::string name_of(DType t) { return std::string(dtype_name(t)); }

// Per dtype: a 3x4 tensor of distinct values, a 0-d one and an empty one.
std::map<std::string, Tensor> sample_tensors(Device device, const std::vector<DType>& dtypes) {
  std::map<std::string, Tensor> out;
  for (DType t : dtypes) {
    const TensorOptions on(t, device);
    out[name_of(t) + ".matrix"] =
        arange(-5, 7, 1, TensorOptions(DType::kI64, host_device())).to(t).view({3, 4}).to(device);
    out[name_of(t) + ".scalar"] = full({}, 1, on);
    out[name_of(t) + ".empty"] = empty({0, 5}, on);
  }
  return out;
}

void check_round_trip(Device device) {
  const std::map<std::string, Tensor> saved = sample_tensors(device, dtypes_of(device));
  const std::string path = temp_path("round_trip_" + std::string(device.type.name()));
  save_safetensors(path, saved, {{"format", "pt"}, {"device", device.to_string()}});

  const std::map<std::string, Tensor> loaded = load_safetensors(path, device);
  REQUIRE(loaded.size() == saved.size());
  for (const auto& [name, original] : saved) {
    INFO(name);
    REQUIRE(loaded.count(name) == 1);
    const Tensor& t = loaded.at(name);
    CHECK(t.device() == device);
    CHECK(t.dtype() == original.dtype());
    CHECK(t.sizes() == original.sizes());
    CHECK(host_bytes(t) == host_bytes(original));
  }
  const SafetensorsFile file = SafetensorsFile::open(path);
  CHECK(file.metadata() == std::map<std::string, std::string>{{"device", device.to_string()},
                                                               {"format", "pt"}});
}

TEST_CASE("safetensors: every dtype, 0-d and empty, round-trips on the CPU device") {
  check_round_trip(host_device());
}

TEST_CASE("safetensors: every dtype, 0-d and empty, round-trips on vulkan") {
  DeviceInterface* vulkan = DeviceRegistry::instance().find("vulkan");
  if (vulkan == nullptr || vulkan->device_count() == 0) TESSERA_SKIP("no Vulkan device");
  check_round_trip(Device::parse("vulkan:0"));
}

TEST_CASE("safetensors: round-trips on the template device, whose memory the host cannot read") {
  check_round_trip(Device::parse("template:0"));
}

TEST_CASE("safetensors: the writer orders tensors widest dtype first, then by name, aligned") {
  const Device host = host_device();
  const std::map<std::string, Tensor> tensors = {
      {"b_flag", ones({3}, TensorOptions(DType::kBool, host))},
      {"a_byte", ones({5}, TensorOptions(DType::kU8, host))},
      {"z_double", ones({2}, TensorOptions(DType::kF64, host))},
      {"y_float", ones({3}, TensorOptions(DType::kF32, host))},
      {"x_half", ones({1}, TensorOptions(DType::kF16, host))},
      {"w_long", ones({2}, TensorOptions(DType::kI64, host))},
      {"v_long", ones({1}, TensorOptions(DType::kI64, host))},
  };
  const std::string path = temp_path("order");
  save_safetensors(path, tensors);
  const std::string bytes = read_file(path);
  const SafetensorsFile file = SafetensorsFile::open(path);
  CHECK(file.names() == std::vector<std::string>{"v_long", "w_long", "z_double", "y_float",
                                                  "x_half", "a_byte", "b_flag"});
  CHECK(file.data_start() % 8 == 0);  // the header is padded with spaces
  const std::string header = bytes.substr(8, file.data_start() - 8);
  CHECK(header.find_first_not_of(' ', header.rfind('}') + 1) == std::string::npos);
  for (const std::string& name : file.names()) {
    const SafetensorsFile::Entry& e = file.entry(name);
    CHECK((file.data_start() + e.offset) % itemsize(e.dtype) == 0);
  }
  CHECK(file.metadata().empty());
  CHECK(bytes.find("__metadata__") == std::string::npos);  // none given, none written
}

// The mapping /proc/self/maps lists for path: [begin, end), if any.
std::optional<std::pair<uintptr_t, uintptr_t>> mapping_of(const std::string& path) {
  char resolved[PATH_MAX];
  REQUIRE(realpath(path.c_str(), resolved) != nullptr);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const size_t slash = line.find('/');
    if (slash == std::string::npos || line.substr(slash) != resolved) continue;
    uintptr_t begin = 0, end = 0;
    std::sscanf(line.c_str(), "%lx-%lx", &begin, &end);
    return std::pair(begin, end);
  }
  return std::nullopt;
}

TEST_CASE("safetensors: a CPU tensor borrows the mapped file, copy-on-write, and keeps it alive") {
  const std::string path = temp_path("borrow");
  const Tensor original = arange(0, 12, 1, TensorOptions(DType::kF32, host_device())).view({3, 4});
  save_safetensors(path, {{"w", original}});
  const std::string file_before = read_file(path);

  Tensor w;
  {
    const SafetensorsFile file = SafetensorsFile::open(path);
    w = file.tensor("w", host_device());
    const auto mapped = mapping_of(path);
    REQUIRE(mapped.has_value());
    const auto address = reinterpret_cast<uintptr_t>(w.data_ptr());
    CHECK(address == mapped->first + file.data_start() + file.entry("w").offset);
    CHECK(address + w.nbytes() <= mapped->second);
  }
  // The file object is gone; the tensor still reads the mapped pages.
  REQUIRE(mapping_of(path).has_value());
  CHECK(host_bytes(w) == host_bytes(original));

  // Written in place: the process sees it, the file does not change, and a
  // new mapping of the file reads the old values.
  w.fill_(-2.5);
  CHECK(w.to_vector<float>() == std::vector<float>(12, -2.5f));
  CHECK(read_file(path) == file_before);
  CHECK(host_bytes(SafetensorsFile::open(path).tensor("w", host_device())) ==
        host_bytes(original));

  // The last tensor over the mapping releases it.
  w = Tensor();
  CHECK_FALSE(mapping_of(path).has_value());
}

TEST_CASE("safetensors: data the writer left unaligned is copied, byte data still borrowed") {
  // A header of 9 bytes + padding puts the data section at an odd address.
  const float values[3] = {1.5f, -2.0f, 3.25f};
  const std::string data = std::string("\x07\x08", 2) +
                           std::string(reinterpret_cast<const char*>(values), sizeof(values));
  std::string header =
      R"({"b":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
      R"("f":{"dtype":"F32","shape":[3],"data_offsets":[2,14]}})";
  while ((8 + header.size() + 2) % 4 != 1) header += ' ';
  const std::string path = temp_file(file_bytes(header, data), "unaligned");

  const SafetensorsFile file = SafetensorsFile::open(path);
  const auto mapped = mapping_of(path);
  REQUIRE(mapped.has_value());
  const auto inside = [&](const Tensor& t) {
    const auto a = reinterpret_cast<uintptr_t>(t.data_ptr());
    return a >= mapped->first && a < mapped->second;
  };
  const Tensor f = file.tensor("f", host_device());
  CHECK_FALSE(inside(f));
  CHECK(reinterpret_cast<uintptr_t>(f.data_ptr()) % sizeof(float) == 0);
  CHECK(f.to_vector<float>() == std::vector<float>{1.5f, -2.0f, 3.25f});
  const Tensor b = file.tensor("b", host_device());
  CHECK(inside(b));
  CHECK(b.to_vector<int64_t>() == std::vector<int64_t>{7, 8});

  DeviceInterface* vulkan = DeviceRegistry::instance().find("vulkan");
  const Device elsewhere = vulkan != nullptr && vulkan->device_count() > 0
                               ? Device::parse("vulkan:0")
                               : Device::parse("template:0");
  INFO(elsewhere.to_string());
  const std::map<std::string, Tensor> there = load_safetensors(path, elsewhere);
  CHECK(there.at("f").device() == elsewhere);
  CHECK(there.at("f").to_vector<float>() == std::vector<float>{1.5f, -2.0f, 3.25f});
  CHECK(there.at("b").to_vector<int64_t>() == std::vector<int64_t>{7, 8});
}

TEST_CASE("safetensors: saving views, and over a file whose tensors are still in use") {
  const Device host = host_device();
  const Tensor base = arange(0, 24, 1, TensorOptions(DType::kI32, host)).view({4, 6});
  const std::string path = temp_path("views");
  save_safetensors(path, {{"t", base.t()}, {"s", base.slice(1, 1, 6, 2)}});
  Tensor old_t = SafetensorsFile::open(path).tensor("t", host);
  CHECK(host_bytes(old_t) == host_bytes(base.t()));
  CHECK(host_bytes(load_safetensors(path, host).at("s")) == host_bytes(base.slice(1, 1, 6, 2)));

  // The new file is renamed over the old one: the old mapping, which the
  // tensor holds, keeps the old bytes.
  save_safetensors(path, {{"t", zeros({2}, TensorOptions(DType::kI32, host))}});
  CHECK(host_bytes(old_t) == host_bytes(base.t()));
  CHECK(SafetensorsFile::open(path).entry("t").shape == Shape{2});
  // No temporary file is left beside it.
  const std::filesystem::path written(path);
  for (const auto& entry : std::filesystem::directory_iterator(written.parent_path())) {
    const std::string name = entry.path().filename().string();
    CHECK_FALSE((name.rfind(written.filename().string() + ".", 0) == 0 &&
                 name.size() > 4 && name.substr(name.size() - 4) == ".tmp"));
  }
}

TEST_CASE("safetensors: SafetensorsFile lookups") {
  const std::string path = temp_path("lookup");
  save_safetensors(path, {{"a", ones({2}, TensorOptions(DType::kF32, host_device()))}});
  const SafetensorsFile file = SafetensorsFile::open(path);
  CHECK(file.path() == path);
  CHECK(file.contains("a"));
  CHECK_FALSE(file.contains("b"));
  CHECK(file.entry("a").nbytes == 8);
  REQUIRE_THROWS_AS(file.entry("b"), ValueError);
  REQUIRE_THROWS_WITH(file.tensor("b", host_device()),
                      Contains(path) && Contains("has no tensor named 'b'"));
}

TEST_CASE("safetensors: the writer refuses undefined tensors and bad names, naming the path") {
  const std::string path = temp_path("refused");
  const Tensor one = ones({1}, TensorOptions(DType::kF32, host_device()));
  REQUIRE_THROWS_AS(save_safetensors(path, {{"x", Tensor()}}), ValueError);
  REQUIRE_THROWS_WITH(save_safetensors(path, {{"x", Tensor()}}),
                      Contains(path) && Contains("tensor 'x' is undefined"));
  REQUIRE_THROWS_WITH(save_safetensors(path, {{"", one}}),
                      Contains(path) && Contains("empty name"));
  REQUIRE_THROWS_WITH(save_safetensors(path, {{"__metadata__", one}}),
                      Contains("not a tensor name"));
  REQUIRE_THROWS_WITH(save_safetensors(path, {{"bad\xff", one}}),
                      Contains(path) && Contains("tensor name") && Contains("not valid UTF-8"));
  REQUIRE_THROWS_WITH(save_safetensors(path, {{"x", one}}, {{"k", "\xc3"}}),
                      Contains("metadata key 'k'") && Contains("not valid UTF-8"));
  struct stat info {};
  CHECK(stat(path.c_str(), &info) != 0);  // nothing was written
}

TEST_CASE("safetensors: the writer names the path and the system's reason on I/O failure") {
  const std::string path = temp_path("no_such_dir") + "/sub/out.safetensors";
  const Tensor one = ones({1}, TensorOptions(DType::kF32, host_device()));
  REQUIRE_THROWS_AS(save_safetensors(path, {{"x", one}}), ValueError);
  REQUIRE_THROWS_WITH(save_safetensors(path, {{"x", one}}),
                      Contains(path) && Contains("No such file or directory"));
}

}  // namespace
}  // namespace tessera
