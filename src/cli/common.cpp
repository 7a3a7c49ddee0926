// SPDX-License-Identifier: MIT
#include "common.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>

namespace nflens::cli {

std::optional<input> read_input(const std::string& path, const limits& lim) {
  input in{path, {}};
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    fmt::print(stderr, "nflens: {}: {}\n", path, std::strerror(errno));
    return std::nullopt;
  }
  char buf[1 << 16];
  std::size_t n = 0;
  bool too_large = false;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
    if (in.text.size() + n > lim.max_input_bytes) {
      too_large = true;
      break;
    }
    in.text.append(buf, n);
  }
  const bool failed = std::ferror(f) != 0;
  const int err = errno;
  if (f != stdin) std::fclose(f);
  if (too_large) {
    fmt::print(stderr, "nflens: {}: error[input-too-large]: input is larger than the limit of {} bytes\n", path,
               lim.max_input_bytes);
    return std::nullopt;
  }
  if (failed) {
    fmt::print(stderr, "nflens: {}: {}\n", path, std::strerror(err));
    return std::nullopt;
  }
  return in;
}

std::optional<input_format> choose_format(const input& in, const std::string& requested) {
  if (requested == "iptables") return input_format::iptables;
  if (requested == "nft") return input_format::nft;
  if (requested == "nft-json" || requested == "json") return input_format::nft_json;
  if (requested != "auto") {
    fmt::print(stderr, "nflens: unknown format '{}' (expected auto, iptables, nft or nft-json)\n", requested);
    return std::nullopt;
  }
  if (auto f = detect_format(in.text)) return f;
  // Nothing but blank and `#` lines: what `nft list ruleset` and `iptables-save` print for an empty
  // ruleset, which reads the same in both (as nft's).
  bool blank = true;
  for (std::size_t at = 0; blank && at < in.text.size();) {
    const std::size_t end = std::min(in.text.find('\n', at), in.text.size());
    const std::size_t first = in.text.find_first_not_of(" \t\r", at);
    blank = first >= end || in.text[first] == '#';
    at = end + 1;
  }
  if (blank) return input_format::nft;
  fmt::print(stderr, "nflens: {}: cannot tell whether this is iptables or nft input; give --format\n", in.name);
  return std::nullopt;
}

void print_diagnostics(const std::vector<diagnostic>& ds) {
  const std::string text = render(ds);
  std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace nflens::cli
