// A deliberate data race, for sanitizer_canary_test: under the tsan config
// ThreadSanitizer must report it. Never run by itself.
#include <cstdio>
#include <thread>

int shared_counter = 0;

int main() {
  std::thread writer([] { ++shared_counter; });
  ++shared_counter;
  writer.join();
  std::printf("%d\n", shared_counter);
  return 0;
}
