// SPDX-License-Identifier: MIT
// Runs a fuzz target without libFuzzer: every file named on the command line, and every regular file
// in each directory named (sorted, not recursive), is passed once to LLVMFuzzerTestOneInput. This is
// how `meson test --suite fuzz` replays the seeds and the minimised findings in fuzz/corpus/<target>/
// under the normal (and the sanitizer) build. A target that fails aborts, which fails the test.
// Arguments starting with `-` are libFuzzer flags and are ignored, so the same command line works for
// both builds.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

bool read_file(const std::filesystem::path& p, std::vector<std::uint8_t>& out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  if (LLVMFuzzerInitialize != nullptr) LLVMFuzzerInitialize(&argc, &argv);
  namespace fs = std::filesystem;
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.starts_with("-")) continue;
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(arg, ec))
        if (entry.is_regular_file(ec) && entry.path().filename() != "README.md") files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      inputs.insert(inputs.end(), files.begin(), files.end());
    } else if (fs::is_regular_file(arg, ec)) {
      inputs.emplace_back(arg);
    } else {
      std::fprintf(stderr, "replay: %s: no such file or directory\n", arg.c_str());
      return 1;
    }
  }
  // A replay that runs nothing cannot fail; an empty or missing seed folder is a mistake.
  if (inputs.empty()) {
    std::fprintf(stderr, "replay: no inputs (usage: %s FILE|DIR...)\n", argv[0]);
    return 1;
  }
  std::vector<std::uint8_t> data;
  for (const auto& p : inputs) {
    if (!read_file(p, data)) {
      std::fprintf(stderr, "replay: %s: cannot read\n", p.c_str());
      return 1;
    }
    std::fprintf(stderr, "replay: %s (%zu bytes)\n", p.c_str(), data.size());
    // A heap block of exactly the input's size, so ASan sees a read past its end as it does under
    // libFuzzer (a vector's spare capacity would hide it).
    const auto exact = std::make_unique<std::uint8_t[]>(data.size());
    std::copy(data.begin(), data.end(), exact.get());
    LLVMFuzzerTestOneInput(exact.get(), data.size());
  }
  std::fprintf(stderr, "replay: %zu inputs ran\n", inputs.size());
  return 0;
}
