// SPDX-License-Identifier: MIT
#pragma once

// How names and strings are spelled in nft text, and which ones nft text can hold at all. nft's grammar
// (parser_bison.y `identifier`) takes a table, chain, set, flowtable or object name only as one word of
// scanner.l (`string`): a name with a space, a quote or a leading digit, which libnftables JSON can
// carry, has no nft spelling. Its strings (`"..."`: comments, interface names, log prefixes) have no
// escapes, so a `"` or a line break cannot be inside one. The printer spells such names quoted, so that
// its text stays unambiguous, and `check_text` (nft_json) reports them. Private to the library.

#include <string>
#include <string_view>

namespace nflens::nft::spelling {

constexpr bool is_letter(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
/// Characters after the first of an nft word.
constexpr bool is_word_char(char c) noexcept {
  return is_letter(c) || is_digit(c) || c == '_' || c == '/' || c == '-' || c == '.';
}

/// One nft word, as names are written and read: a letter or `_`, then letters, digits, `/ - _ .`.
constexpr bool is_word(std::string_view s) noexcept {
  if (s.empty() || !(is_letter(s[0]) || s[0] == '_')) return false;
  for (const char c : s)
    if (!is_word_char(c)) return false;
  return true;
}

/// Text that can stand between double quotes: no `"`, no line break, no NUL.
constexpr bool is_quotable(std::string_view s) noexcept {
  for (const char c : s)
    if (c == '"' || c == '\n' || c == '\r' || c == '\0') return false;
  return true;
}

/// A value written bare that reads back as one token: a word (with `*` or `\*` for wildcards, as in
/// `eth*`), or a run of letters, digits and `: . _ - /` that starts with a digit (numbers, wide hex
/// values, class ids, `8021q`).
constexpr bool is_bare_value(std::string_view s) noexcept {
  if (s.empty()) return false;
  if (is_digit(s[0])) {
    for (const char c : s)
      if (!(is_letter(c) || is_digit(c) || c == ':' || c == '.' || c == '_' || c == '-' || c == '/')) return false;
    return true;
  }
  if (!(is_letter(s[0]) || s[0] == '_' || s[0] == '\\')) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (is_word_char(s[i]) || s[i] == '*') continue;
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '*') {
      ++i;
      continue;
    }
    return false;
  }
  return true;
}

/// Appends a name: as is when it is a word, otherwise between double quotes.
inline void append_name(std::string& out, std::string_view name) {
  if (is_word(name)) {
    out += name;
    return;
  }
  out += '"';
  out += name;
  out += '"';
}

}  // namespace nflens::nft::spelling
