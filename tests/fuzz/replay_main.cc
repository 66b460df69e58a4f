// main() for a fuzz target outside the fuzzing build: runs
// LLVMFuzzerTestOneInput once on every file under the directories (or on
// the files) named on the command line, so that each target's seed corpus
// and the inputs of every crash found and fixed (tests/fuzz/regressions)
// run as a regression test in every build, gcc's included. A crash, a
// sanitizer report or a failed check ends the process, naming the input
// first; otherwise it prints ./dev test's summary line, one case a file.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

std::vector<std::filesystem::path> inputs_under(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_regular_file(root)) return {root};
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && entry.path().filename() != "README.md") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " CORPUS_DIR_OR_FILE...\n";
    return 2;
  }
  int64_t passed = 0;
  for (int i = 1; i < argc; ++i) {
    // A target with no regression inputs yet has no folder in the runfiles.
    if (!std::filesystem::exists(argv[i])) {
      std::cout << "no inputs under " << argv[i] << std::endl;
      continue;
    }
    for (const auto& path : inputs_under(argv[i])) {
      std::ifstream in(path, std::ios::binary);
      std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                 std::istreambuf_iterator<char>());
      // Printed before the run, so a crash's log names its input.
      std::cout << "input " << path.string() << " (" << bytes.size() << " bytes)" << std::endl;
      LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
      ++passed;
    }
  }
  std::cout << "tessera-test-summary: passed=" << passed << " failed=0 skipped=0" << std::endl;
  return 0;
}
