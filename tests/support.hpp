// SPDX-License-Identifier: MIT
#pragma once

// Helpers shared by the test suites: where the repository's fixtures and ../shared live.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace nflens::test {

/// The repository root (compiled in), for the fixtures under tests/ and examples/.
inline std::filesystem::path source_root() { return NFLENS_SOURCE_ROOT; }

/// `../shared` beside the checkout, or `$NFLENS_SHARED`; empty when neither exists.
inline std::filesystem::path shared_root() {
  if (const char* env = std::getenv("NFLENS_SHARED"); env != nullptr && *env != '\0') return env;
  auto p = source_root().parent_path() / "shared";
  return std::filesystem::is_directory(p) ? p : std::filesystem::path{};
}

/// The whole content of a file; throws when it cannot be read (a test bug, not an input error).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + p.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace nflens::test
