// SPDX-License-Identifier: MIT
#pragma once

// A streaming JSON text writer that formats as nft's JSON printer (jansson's json_dumpf without flags):
// one line, `, ` between items and `: ` after keys, strings as UTF-8 with `"`, `\` and control
// characters escaped. Appending to one string keeps a 100 MB listing at one allocation per doubling,
// which a DOM of the same listing could not. Private to the library.

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace nflens::nft::json_detail {

class emitter {
 public:
  explicit emitter(std::string& out) : out_(out) {}

  void begin_object() {
    prefix();
    out_ += '{';
    first_ = true;
  }
  void end_object() {
    out_ += '}';
    first_ = false;
  }
  void begin_array() {
    prefix();
    out_ += '[';
    first_ = true;
  }
  void end_array() {
    out_ += ']';
    first_ = false;
  }
  void key(std::string_view k) {
    if (!first_) out_ += ", ";
    quote(k);
    out_ += ": ";
    after_key_ = true;
  }
  void string(std::string_view s) {
    prefix();
    quote(s);
    first_ = false;
  }
  void number(std::uint64_t v) {
    prefix();
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, r.ptr);
    first_ = false;
  }
  void signed_number(std::int64_t v) {
    prefix();
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, r.ptr);
    first_ = false;
  }
  void boolean(bool v) {
    prefix();
    out_ += v ? "true" : "false";
    first_ = false;
  }
  void null() {
    prefix();
    out_ += "null";
    first_ = false;
  }
  /// `{"k": null}`, nft's form of a statement without arguments.
  void null_object(std::string_view k) {
    begin_object();
    key(k);
    null();
    end_object();
  }
  void member(std::string_view k, std::string_view v) {
    key(k);
    string(v);
  }
  void member_number(std::string_view k, std::uint64_t v) {
    key(k);
    number(v);
  }

  [[nodiscard]] std::string& out() noexcept { return out_; }

 private:
  void prefix() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_) out_ += ", ";
  }
  void quote(std::string_view s);

  std::string& out_;
  bool first_ = true;
  bool after_key_ = false;
};

inline void emitter::quote(std::string_view s) {
  out_ += '"';
  std::size_t run = 0;  // start of the pending run of bytes that need no escape
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) continue;
    if (c >= 0x80) {
      // Keep valid UTF-8 sequences; a byte that cannot start or continue one becomes U+FFFD so that
      // the output is always valid JSON.
      std::size_t n = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c < 0xe0 ? 2 : 0;
      bool ok = n != 0 && i + n <= s.size();
      for (std::size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(s[i + k]) & 0xc0) == 0x80;
      if (ok) {
        i += n - 1;
        continue;
      }
      out_.append(s.data() + run, i - run);
      out_ += "\\uFFFD";
      run = i + 1;
      continue;
    }
    out_.append(s.data() + run, i - run);
    run = i + 1;
    switch (c) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\b':
        out_ += "\\b";
        break;
      case '\f':
        out_ += "\\f";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\r':
        out_ += "\\r";
        break;
      case '\t':
        out_ += "\\t";
        break;
      default: {
        static constexpr char hex[] = "0123456789ABCDEF";
        out_ += "\\u00";
        out_ += hex[c >> 4];
        out_ += hex[c & 15];
      }
    }
  }
  out_.append(s.data() + run, s.size() - run);
  out_ += '"';
}

}  // namespace nflens::nft::json_detail
