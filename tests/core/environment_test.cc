// Settings from environment variables: integers in a range and on/off
// switches, with bad values ignored (reported on stderr), never thrown.
#include <catch2/catch.hpp>

#include <cstdlib>

#include "runtime/core/environment.h"

using namespace tessera;

namespace {
constexpr const char* kName = "TESSERA_ENVIRONMENT_TEST_SETTING";

// Sets kName for one test case and removes it afterwards.
struct ScopedSetting {
  explicit ScopedSetting(const char* value) { ::setenv(kName, value, 1); }
  ~ScopedSetting() { ::unsetenv(kName); }
};
}  // namespace

TEST_CASE("env_integer: unset and empty give the fallback", "[environment]") {
  ::unsetenv(kName);
  CHECK(env_integer(kName, 7, 1, 10) == 7);
  ScopedSetting empty("");
  CHECK(env_integer(kName, 7, 1, 10) == 7);
}

TEST_CASE("env_integer: values in range, at both ends", "[environment]") {
  {
    ScopedSetting s("1");
    CHECK(env_integer(kName, 7, 1, 10) == 1);
  }
  {
    ScopedSetting s("10");
    CHECK(env_integer(kName, 7, 1, 10) == 10);
  }
  {
    ScopedSetting s("-3");
    CHECK(env_integer(kName, 0, -5, 5) == -3);
  }
}

TEST_CASE("env_integer: bad values give the fallback", "[environment]") {
  for (const char* bad : {"0", "11", "two", "3x", "4 ", "99999999999999999999999"}) {
    ScopedSetting s(bad);
    INFO(bad);
    CHECK(env_integer(kName, 7, 1, 10) == 7);
  }
}

TEST_CASE("env_switch: unset, off and on", "[environment]") {
  ::unsetenv(kName);
  CHECK_FALSE(env_switch(kName).has_value());
  {
    ScopedSetting s("");
    CHECK_FALSE(env_switch(kName).has_value());
  }
  for (const char* off : {"0", "false", "off"}) {
    ScopedSetting s(off);
    INFO(off);
    REQUIRE(env_switch(kName).has_value());
    CHECK_FALSE(*env_switch(kName));
  }
  for (const char* on : {"1", "true", "on", "yes"}) {
    ScopedSetting s(on);
    INFO(on);
    REQUIRE(env_switch(kName).has_value());
    CHECK(*env_switch(kName));
  }
}
