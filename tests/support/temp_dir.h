// A fresh, empty folder for one test, under Bazel's TEST_TMPDIR (else the
// system's temporary directory), removed with everything in it when the
// TempDir goes.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace tessera::testing {

class TempDir {
 public:
  // name: unique among the TempDirs that exist at once in a test binary.
  explicit TempDir(const std::string& name) {
    const char* bazel_tmp = std::getenv("TEST_TMPDIR");
    path_ = (bazel_tmp ? std::filesystem::path(bazel_tmp)
                       : std::filesystem::temp_directory_path()) /
            name;
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  // Writes content to file (a path relative to the folder; its parent
  // folders are created) and returns the file's full path.
  std::string write(const std::string& file, const std::string& content) const {
    const std::filesystem::path target = path_ / file;
    std::filesystem::create_directories(target.parent_path());
    std::ofstream(target, std::ios::binary) << content;
    return target.string();
  }
  void remove(const std::string& file) const { std::filesystem::remove(path_ / file); }
  std::string path() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace tessera::testing
