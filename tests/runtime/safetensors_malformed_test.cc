// Malformed safetensors files, one test case per defect: each is a
// ValueError that names the file and says what is wrong, found before any
// size from the file is used (never a crash or an out-of-bounds read).
// The bytes are built here by hand.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <string>

#include "runtime/core/error.h"
#include "runtime/io/safetensors.h"
#include "tests/runtime/safetensors_test_util.h"

namespace tessera {
namespace {

using Catch::Matchers::Contains;
using namespace safetensors_testing;

// Opening the file of `bytes` throws a ValueError naming it and saying
// `expected`; load_safetensors does the same.
#define REQUIRE_OPEN_FAILS(bytes, expected)                                          \
  do {                                                                               \
    const std::string bad_path = temp_file(bytes, "malformed");                      \
    REQUIRE_THROWS_AS(SafetensorsFile::open(bad_path), ValueError);                  \
    REQUIRE_THROWS_WITH(SafetensorsFile::open(bad_path),                             \
                        Contains("safetensors file '" + bad_path + "'") &&           \
                            Contains(expected));                                     \
    REQUIRE_THROWS_WITH(load_safetensors(bad_path, host_device()), Contains(expected)); \
  } while (false)

// A header with one entry named "t", its JSON given whole.
std::string one_entry(const std::string& entry_json) { return R"({"t":)" + entry_json + "}"; }

TEST_CASE("safetensors malformed: a file shorter than the 8-byte header length") {
  REQUIRE_OPEN_FAILS(std::string(), "the file is 0 bytes, too short");
  REQUIRE_OPEN_FAILS(std::string("\x02\0\0\0\0", 5), "the file is 5 bytes, too short");
}

TEST_CASE("safetensors malformed: a header length past the end of the file") {
  REQUIRE_OPEN_FAILS(length_prefix(64) + "{}", "header length 64 runs past the end of the file");
  REQUIRE_OPEN_FAILS(length_prefix(3), "header length 3 runs past the end of the file");
}

TEST_CASE("safetensors malformed: an absurd header length (beyond 100 MB)") {
  REQUIRE_OPEN_FAILS(length_prefix(100'000'001) + "{}", "beyond the limit of 100000000 bytes");
  REQUIRE_OPEN_FAILS(length_prefix(~uint64_t{0}) + "{}",
                     "header length 18446744073709551615 is beyond the limit");
}

TEST_CASE("safetensors malformed: a header that is not JSON") {
  REQUIRE_OPEN_FAILS(file_bytes(R"({"t":{"dtype":"F32",)"), "the header is not valid JSON");
  REQUIRE_OPEN_FAILS(file_bytes(""), "the header is not valid JSON");
  REQUIRE_OPEN_FAILS(file_bytes(std::string("{}\0\0\0\0\0\0", 8)), "the header is not valid JSON");
}

TEST_CASE("safetensors malformed: a header that is not UTF-8") {
  // The offending byte is spelled out, so that the message stays text.
  REQUIRE_OPEN_FAILS(file_bytes("{\"t\xff\":{}}"),
                     "ill-formed UTF-8 byte; last read: '\"t\\xff'");
}

TEST_CASE("safetensors malformed: a header that is not a JSON object") {
  REQUIRE_OPEN_FAILS(file_bytes("[1, 2]"), "the header must be a JSON object, not a JSON array");
  REQUIRE_OPEN_FAILS(file_bytes("\"text\""), "must be a JSON object, not a JSON string");
}

TEST_CASE("safetensors malformed: a tensor entry that is not an object") {
  REQUIRE_OPEN_FAILS(file_bytes(one_entry("[0, 4]")),
                     "tensor 't' must be a JSON object with dtype, shape and data_offsets");
}

TEST_CASE("safetensors malformed: an entry without dtype, shape or data_offsets") {
  REQUIRE_OPEN_FAILS(file_bytes(one_entry(R"({"shape":[1],"data_offsets":[0,4]})")),
                     "tensor 't' has no \"dtype\"");
  REQUIRE_OPEN_FAILS(file_bytes(one_entry(R"({"dtype":"F32","data_offsets":[0,4]})"), "1234"),
                     "tensor 't' has no \"shape\"");
  REQUIRE_OPEN_FAILS(file_bytes(one_entry(R"({"dtype":"F32","shape":[1]})"), "1234"),
                     "tensor 't' has no \"data_offsets\"");
}

TEST_CASE("safetensors malformed: entry fields of the wrong JSON type") {
  REQUIRE_OPEN_FAILS(file_bytes(one_entry(R"({"dtype":4,"shape":[1],"data_offsets":[0,4]})")),
                     "\"dtype\" must be a string, not the number 4");
  REQUIRE_OPEN_FAILS(
      file_bytes(one_entry(R"({"dtype":"F32","shape":"1","data_offsets":[0,4]})"), "1234"),
      "\"shape\" must be an array of sizes, not a JSON string");
  REQUIRE_OPEN_FAILS(
      file_bytes(one_entry(R"({"dtype":"F32","shape":[1.5],"data_offsets":[0,4]})"), "1234"),
      "shape sizes must be non-negative integers, got the number 1.5");
  REQUIRE_OPEN_FAILS(
      file_bytes(one_entry(R"({"dtype":"F32","shape":[1],"data_offsets":{"b":0}})"), "1234"),
      "\"data_offsets\" must be [begin, end], not a JSON object");
}

TEST_CASE("safetensors malformed: an unknown dtype") {
  REQUIRE_OPEN_FAILS(file_bytes(one_entry(R"({"dtype":"F17","shape":[1],"data_offsets":[0,4]})"),
                                "1234"),
                     "tensor 't' has unknown dtype 'F17'");
}

TEST_CASE("safetensors malformed: dtypes of the format that tessera has no dtype for") {
  const std::pair<const char*, const char*> cases[] = {
      {"U16", "uint16"},         {"U32", "uint32"}, {"U64", "uint64"},
      {"F8_E4M3", "float8 e4m3fn"}, {"F8_E5M2", "float8 e5m2"}, {"C64", "complex64"},
  };
  for (const auto& [format_name, what] : cases) {
    INFO(format_name);
    const std::string entry =
        std::string(R"({"dtype":")") + format_name + R"(","shape":[1],"data_offsets":[0,1]})";
    REQUIRE_OPEN_FAILS(file_bytes(one_entry(entry), "x"),
                       std::string("dtype ") + format_name + " (" + what +
                           "), which tessera has no dtype for");
  }
}

TEST_CASE("safetensors malformed: a negative size") {
  REQUIRE_OPEN_FAILS(
      file_bytes(one_entry(R"({"dtype":"F32","shape":[2,-3],"data_offsets":[0,0]})")),
      "shape sizes must be non-negative integers, got the number -3");
}

TEST_CASE("safetensors malformed: an absurd rank") {
  std::string shape = "[1";
  for (int i = 1; i < 65; ++i) shape += ",1";
  shape += "]";
  REQUIRE_OPEN_FAILS(
      file_bytes(one_entry(R"({"dtype":"U8","shape":)" + shape + R"(,"data_offsets":[0,1]})"), "x"),
      "tensor 't' has rank 65, beyond the limit of 64");
}

TEST_CASE("safetensors malformed: a shape whose byte size overflows") {
  // 2^62 elements fit in int64, their bytes as F32 do not fit in 64 bits.
  REQUIRE_OPEN_FAILS(
      file_bytes(one_entry(
          R"({"dtype":"F32","shape":[4611686018427387904],"data_offsets":[0,0]})")),
      "overflow");
  REQUIRE_OPEN_FAILS(file_bytes(one_entry(
                         R"({"dtype":"U8","shape":[4294967296,4294967296],"data_offsets":[0,0]})")),
                     "integer overflow");
  REQUIRE_OPEN_FAILS(
      file_bytes(one_entry(
          R"({"dtype":"U8","shape":[18446744073709551615],"data_offsets":[0,0]})")),
      "shape size 18446744073709551615 is too large");
}

TEST_CASE("safetensors malformed: data_offsets that are not [begin, end]") {
  REQUIRE_OPEN_FAILS(file_bytes(one_entry(R"({"dtype":"U8","shape":[1],"data_offsets":[0]})"), "x"),
                     "\"data_offsets\" must be [begin, end], not an array of 1 values");
  REQUIRE_OPEN_FAILS(
      file_bytes(one_entry(R"({"dtype":"U8","shape":[1],"data_offsets":[0,1,2]})"), "x"),
      "not an array of 3 values");
  REQUIRE_OPEN_FAILS(
      file_bytes(one_entry(R"({"dtype":"U8","shape":[1],"data_offsets":[-1,0]})"), "x"),
      "data offsets must be non-negative integers, got the number -1");
  REQUIRE_OPEN_FAILS(
      file_bytes(one_entry(R"({"dtype":"U8","shape":[1],"data_offsets":["0",1]})"), "x"),
      "data offsets must be non-negative integers, got a JSON string");
}

TEST_CASE("safetensors malformed: data_offsets that begin after they end") {
  REQUIRE_OPEN_FAILS(
      file_bytes(one_entry(R"({"dtype":"U8","shape":[1],"data_offsets":[1,0]})"), "x"),
      "data_offsets [1, 0] begin after they end");
}

TEST_CASE("safetensors malformed: data_offsets past the end of the data section") {
  REQUIRE_OPEN_FAILS(
      file_bytes(one_entry(R"({"dtype":"F32","shape":[4],"data_offsets":[0,16]})"), "12345678"),
      "data_offsets [0, 16] run past the end of the data section (8 bytes)");
  REQUIRE_OPEN_FAILS(
      file_bytes(one_entry(R"({"dtype":"U8","shape":[0],)"
                           R"("data_offsets":[18446744073709551615,18446744073709551615]})")),
      "data_offsets [18446744073709551615, 18446744073709551615] run past the end of the data "
      "section (0 bytes)");
}

TEST_CASE("safetensors malformed: a byte length other than the shape's") {
  REQUIRE_OPEN_FAILS(
      file_bytes(one_entry(R"({"dtype":"F32","shape":[3],"data_offsets":[0,8]})"), "12345678"),
      "data_offsets [0, 8] hold 8 bytes, but F32 [3] needs 12");
}

TEST_CASE("safetensors malformed: overlapping tensors") {
  REQUIRE_OPEN_FAILS(file_bytes(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                                R"("b":{"dtype":"U8","shape":[4],"data_offsets":[2,6]}})",
                                "123456"),
                     "tensors 'a' [0, 4) and 'b' [2, 6) overlap in the data section");
  // The same bytes named twice.
  REQUIRE_OPEN_FAILS(file_bytes(R"({"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]},)"
                                R"("b":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}})",
                                "1234"),
                     "overlap in the data section");
}

TEST_CASE("safetensors malformed: a data section with holes or bytes after the last tensor") {
  REQUIRE_OPEN_FAILS(file_bytes(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                                R"("b":{"dtype":"U8","shape":[2],"data_offsets":[4,6]}})",
                                "123456"),
                     "bytes [2, 4) of the data section belong to no tensor");
  REQUIRE_OPEN_FAILS(file_bytes(one_entry(R"({"dtype":"U8","shape":[2],"data_offsets":[0,2]})"),
                                "1234"),
                     "bytes [2, 4) of the data section belong to no tensor");
  REQUIRE_OPEN_FAILS(file_bytes(one_entry(R"({"dtype":"U8","shape":[2],"data_offsets":[2,4]})"),
                                "1234"),
                     "bytes [0, 2) of the data section belong to no tensor");
}

TEST_CASE("safetensors malformed: a tensor named twice") {
  REQUIRE_OPEN_FAILS(file_bytes(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                                R"("a":{"dtype":"U8","shape":[2],"data_offsets":[2,4]}})",
                                "1234"),
                     "the header lists tensor 'a' twice");
  REQUIRE_OPEN_FAILS(
      file_bytes(one_entry(R"({"dtype":"U8","shape":[2],"shape":[1],"data_offsets":[0,2]})"), "12"),
      "key \"shape\" appears twice in one object of the header");
}

TEST_CASE("safetensors malformed: __metadata__ that is not a map of strings to strings") {
  REQUIRE_OPEN_FAILS(file_bytes(R"({"__metadata__":{"format":"pt","epoch":3}})"),
                     "\"__metadata__\" must map strings to strings, but \"epoch\" maps to the "
                     "number 3");
  REQUIRE_OPEN_FAILS(file_bytes(R"({"__metadata__":["pt"]})"),
                     "\"__metadata__\" must be an object mapping strings to strings, not a JSON "
                     "array");
}

TEST_CASE("safetensors malformed: a path that is no file") {
  const std::string missing = temp_path("missing");
  REQUIRE_THROWS_AS(SafetensorsFile::open(missing), ValueError);
  REQUIRE_THROWS_WITH(SafetensorsFile::open(missing),
                      Contains("cannot open '" + missing + "': No such file or directory"));
  const std::string dir = missing.substr(0, missing.rfind('/'));
  REQUIRE_THROWS_WITH(SafetensorsFile::open(dir), Contains(dir) && Contains("not a regular file"));
}

TEST_CASE("safetensors: minimal valid files (no tensors; empty tensors) open") {
  // The edge of the checks above: these are well formed.
  CHECK(SafetensorsFile::open(temp_file(file_bytes("{}"))).names().empty());
  CHECK(SafetensorsFile::open(temp_file(file_bytes(R"({"__metadata__":null})")))
            .metadata()
            .empty());
  const SafetensorsFile file = SafetensorsFile::open(temp_file(
      file_bytes(R"({"e":{"dtype":"F32","shape":[0,3],"data_offsets":[0,0]},)"
                 R"("s":{"dtype":"I16","shape":[],"data_offsets":[0,2]}}   )",
                 std::string("\x05\0", 2))));
  CHECK(file.names() == std::vector<std::string>{"e", "s"});
  CHECK(file.tensor("s", host_device()).item<int64_t>() == 5);
  CHECK(file.tensor("e", host_device()).sizes() == Shape{0, 3});
}

}  // namespace
}  // namespace tessera
