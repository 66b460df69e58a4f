// Every op of the runtime's pointwise op tables
// (runtime/ops/signatures/pointwise_op_table.h) has conformance cases: a new
// row without cases fails here, before any device runs it. A case counts
// for an op when its label is the op's name or starts with it and a space
// ("pow floating", "gelu tanh").
#include <string>
#include <vector>

#include "runtime/ops/signatures/pointwise_op_table.h"
#include "tests/conformance/conformance.h"

namespace tessera::conformance {
namespace {

bool has_cases(const std::string& name) {
  for (const std::string& label : registered_case_ops()) {
    if (label == name || label.rfind(name + " ", 0) == 0) return true;
  }
  return false;
}

std::vector<std::string> ops_without_cases(const std::vector<std::string>& names) {
  std::vector<std::string> missing;
  for (const std::string& name : names) {
    if (!has_cases(name)) missing.push_back(name);
  }
  return missing;
}

#define TESSERA_ROW_NAME(Enum, name, ...) #name,

TEST_CASE("op tables: every unary op has conformance cases", "[op-table]") {
  CHECK(ops_without_cases({TESSERA_UNARY_OP_TABLE(TESSERA_ROW_NAME)}).empty());
}

TEST_CASE("op tables: every pointwise binary op has conformance cases", "[op-table]") {
  CHECK(ops_without_cases({TESSERA_POINTWISE_BINARY_OP_TABLE(TESSERA_ROW_NAME)}).empty());
}

TEST_CASE("op tables: every binary and ternary op has conformance cases", "[op-table]") {
  CHECK(ops_without_cases({TESSERA_BINARY_OP_TABLE(TESSERA_ROW_NAME)}).empty());
  CHECK(ops_without_cases({TESSERA_TERNARY_OP_TABLE(TESSERA_ROW_NAME)}).empty());
}

TEST_CASE("op tables: a name that no case covers is reported", "[op-table]") {
  CHECK(ops_without_cases({"exp", "no_such_op"}) == std::vector<std::string>{"no_such_op"});
}

#undef TESSERA_ROW_NAME

}  // namespace
}  // namespace tessera::conformance
