// SPDX-License-Identifier: MIT
#include <nflens/format.hpp>

#include <array>

namespace nflens {

std::string_view format_name(input_format f) noexcept {
  switch (f) {
    case input_format::iptables: return "iptables";
    case input_format::nft: return "nft";
    case input_format::nft_json: return "nft-json";
  }
  return "unknown";
}

namespace {

bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

std::string_view first_word(std::string_view s) noexcept {
  std::size_t n = 0;
  while (n < s.size() && !is_space(s[n]) && s[n] != ';' && s[n] != '{') ++n;
  return s.substr(0, n);
}

bool is_counter_prefix(std::string_view s) noexcept {
  // "[123:456]" as iptables-save -c writes before a rule
  std::size_t i = 1;
  auto digits = [&] {
    const std::size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i > from;
  };
  return s.size() > 1 && s[0] == '[' && digits() && i < s.size() && s[i++] == ':' && digits() && i < s.size() &&
         s[i] == ']';
}

}  // namespace

std::optional<input_format> detect_format(std::string_view text) noexcept {
  static constexpr std::array<std::string_view, 21> nft_words{
      "table",   "add",     "create",  "insert", "replace", "delete",   "destroy",  "flush",  "reset",  "rename", "define",
      "include", "list",    "chain",   "redefine", "undefine", "get",   "describe", "monitor", "import", "export"};
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    std::size_t i = 0;
    while (i < line.size() && is_space(line[i])) ++i;
    line.remove_prefix(i);
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (line.find("tables-save") != std::string_view::npos || line.find("tables-restore") != std::string_view::npos)
        return input_format::iptables;
      continue;
    }
    if (line[0] == '*' || line[0] == ':' || line[0] == '-') return input_format::iptables;
    if (line[0] == '[') return is_counter_prefix(line) ? input_format::iptables : input_format::nft_json;
    if (line[0] == '{') return input_format::nft_json;
    const std::string_view word = first_word(line);
    if (word == "COMMIT") return input_format::iptables;
    for (auto w : nft_words)
      if (word == w) return input_format::nft;
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace nflens
