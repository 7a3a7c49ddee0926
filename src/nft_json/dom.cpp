// SPDX-License-Identifier: MIT
// JSON text (RFC 8259) → a flat tree of spanned values.
#include "nft_json/dom.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <string>

namespace nflens::nft::json_detail {

std::string_view kind_name(jkind k) noexcept {
  switch (k) {
    case jkind::null:
      return "null";
    case jkind::boolean:
      return "a boolean";
    case jkind::number:
      return "a number";
    case jkind::string:
      return "a string";
    case jkind::array:
      return "an array";
    case jkind::object:
      return "an object";
    case jkind::deferred:
      return "a value";
  }
  return "a value";
}

std::string_view jdoc::text(const jnode& n) const noexcept {
  if (n.kind == jkind::string) {
    if (n.escaped) return decoded_[n.first];
    const auto t = src_->text(n.where);
    return t.size() >= 2 ? t.substr(1, t.size() - 2) : std::string_view{};
  }
  return src_->text(n.where);
}

const jnode* jdoc::member(const jnode& object, std::string_view key) const noexcept {
  if (object.kind != jkind::object) return nullptr;
  const auto k = kids(object);
  for (std::size_t i = 0; i + 1 < k.size(); i += 2)
    if (text(nodes_[k[i]]) == key) return &nodes_[k[i + 1]];
  return nullptr;
}

std::optional<std::uint64_t> jdoc::unsigned_value(const jnode& n) const noexcept {
  if (n.kind != jkind::number || !n.integral || n.negative) return std::nullopt;
  const auto t = text(n);
  std::uint64_t v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (r.ec != std::errc{} || r.ptr != t.data() + t.size()) return std::nullopt;  // 2^64 and more too
  return v;
}

std::optional<std::int64_t> jdoc::signed_value(const jnode& n) const noexcept {
  if (n.kind != jkind::number || !n.integral) return std::nullopt;
  const auto t = text(n);
  std::int64_t v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v);
  if (r.ec != std::errc{} || r.ptr != t.data() + t.size()) return std::nullopt;
  return v;
}

namespace {

std::string shown(std::string_view text, std::size_t at) {
  if (at >= text.size()) return "the end of the input";
  const unsigned char c = static_cast<unsigned char>(text[at]);
  if (c < 0x20 || c >= 0x7f) return fmt::format("byte 0x{:02x}", c);
  return fmt::format("'{}'", text[at]);
}

// Length of the UTF-8 sequence at `s[i]`, 0 when it is not a valid one (overlongs and surrogates too).
std::size_t utf8_length(std::string_view s, std::size_t i) noexcept {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  std::size_t n = 0;
  if (c >= 0xc2 && c <= 0xdf)
    n = 2;
  else if (c >= 0xe0 && c <= 0xef)
    n = 3;
  else if (c >= 0xf0 && c <= 0xf4)
    n = 4;
  else
    return 0;
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((b(k) & 0xc0) != 0x80) return 0;
  if (c == 0xe0 && b(1) < 0xa0) return 0;   // overlong
  if (c == 0xed && b(1) >= 0xa0) return 0;  // surrogate
  if (c == 0xf0 && b(1) < 0x90) return 0;   // overlong
  if (c == 0xf4 && b(1) >= 0x90) return 0;  // past U+10FFFF
  return n;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

}  // namespace

class jparser {
 public:
  jparser(jdoc& d, source& src, diagnostic_sink& sink, std::uint32_t max_depth, bool defer_items = false)
      : d_(d), src_(src), t_(src.text()), sink_(sink), max_depth_(max_depth), defer_items_(defer_items) {}

  bool run() {
    reset();
    ws();
    if (!value(0, 0)) return false;
    ws();
    if (i_ != t_.size())
      return fail(error_code::syntax, i_, 1,
                  "expected the end of the input after the JSON value, saw " + shown(t_, i_));
    return true;
  }

  /// Where the parse is in the text.
  [[nodiscard]] std::size_t position() const noexcept { return i_; }

  bool run_at(span where, std::uint32_t depth) {
    reset();
    i_ = where.offset;
    if (!value(0, depth)) return false;
    if (i_ != std::size_t{where.offset} + where.length)
      return fail(error_code::syntax, i_, 1, "expected the end of this value, saw " + shown(t_, i_));
    return true;
  }

 private:
  bool fail(error_code code, std::size_t at, std::size_t len, std::string message) {
    if (at > t_.size()) at = t_.size();
    if (at + len > t_.size()) len = t_.size() - at;
    sink_.error(code, span{static_cast<std::uint32_t>(at), static_cast<std::uint32_t>(len)}, std::move(message));
    return false;
  }

  void ws() noexcept {
    while (i_ < t_.size() && (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r')) ++i_;
  }

  span from(std::size_t begin) const noexcept {
    return span{static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(i_ - begin)};
  }

  void reset() {
    d_.src_ = &src_;
    d_.nodes_.charge_to(src_);
    d_.kids_.charge_to(src_);
    d_.decoded_.charge_to(src_);
    stack_.charge_to(src_);
    sorted_.charge_to(src_);
    d_.nodes_.resize(0);
    d_.kids_.resize(0);
    d_.decoded_.resize(0);
    d_.nodes_.push_back({});  // the root's slot
  }

  // Parses the value at i_ into node `slot`.
  bool value(std::uint32_t slot, std::uint32_t depth) {
    if (i_ >= t_.size())
      return fail(error_code::unexpected_end, i_, 0, "expected a JSON value, saw the end of the input");
    const char c = t_[i_];
    if (in_items_ && depth == 2 && (c == '{' || c == '[')) return skip(slot, depth);
    switch (c) {
      case '{':
        return container(slot, depth, true);
      case '[':
        return container(slot, depth, false);
      case '"':
        return string(slot);
      case 't':
        return literal(slot, "true", jkind::boolean, true);
      case 'f':
        return literal(slot, "false", jkind::boolean, false);
      case 'n':
        return literal(slot, "null", jkind::null, false);
      default:
        if (c == '-' || (c >= '0' && c <= '9')) return number(slot);
        return fail(error_code::syntax, i_, 1,
                    "expected a JSON value (object, array, string, number, true, false or null), saw " + shown(t_, i_));
    }
  }

  bool literal(std::uint32_t slot, std::string_view word, jkind kind, bool b) {
    if (t_.substr(i_, word.size()) != word)
      return fail(error_code::syntax, i_, 1, fmt::format("expected '{}', saw {}", word, shown(t_, i_)));
    const std::size_t begin = i_;
    i_ += word.size();
    auto& n = d_.nodes_[slot];
    n.kind = kind;
    n.boolean = b;
    n.where = from(begin);
    return true;
  }

  bool number(std::uint32_t slot) {
    const std::size_t begin = i_;
    auto digits = [&] {
      const std::size_t s = i_;
      while (i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '9') ++i_;
      return i_ > s;
    };
    bool negative = false;
    if (t_[i_] == '-') {
      negative = true;
      ++i_;
    }
    if (i_ < t_.size() && t_[i_] == '0') {
      ++i_;
    } else if (!digits()) {
      return fail(error_code::invalid_number, begin, 1, "expected digits after '-'");
    }
    bool integral = true;
    if (i_ < t_.size() && t_[i_] == '.') {
      ++i_;
      integral = false;
      if (!digits()) return fail(error_code::invalid_number, i_, 1, "expected digits after the decimal point");
    }
    if (i_ < t_.size() && (t_[i_] == 'e' || t_[i_] == 'E')) {
      ++i_;
      integral = false;
      if (i_ < t_.size() && (t_[i_] == '+' || t_[i_] == '-')) ++i_;
      if (!digits()) return fail(error_code::invalid_number, i_, 1, "expected digits in the exponent");
    }
    auto& n = d_.nodes_[slot];
    n.kind = jkind::number;
    n.integral = integral;
    n.negative = negative;
    n.where = from(begin);
    return true;
  }

  bool hex4(std::size_t at, std::uint32_t& out) {
    if (at + 4 > t_.size()) return false;
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < 4; ++k) {
      const char c = t_[at + k];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<std::uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<std::uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<std::uint32_t>(c - 'A' + 10);
      else
        return false;
    }
    out = v;
    return true;
  }

  bool string(std::uint32_t slot) {
    const std::size_t begin = i_++;
    std::string decoded;
    bool escaped = false;
    std::size_t run = i_;
    while (true) {
      if (i_ >= t_.size()) return fail(error_code::unterminated_string, begin, 1, "this string is not closed by '\"'");
      const auto c = static_cast<unsigned char>(t_[i_]);
      if (c == '"') break;
      if (c < 0x20)
        return fail(error_code::invalid_character, i_, 1,
                    fmt::format("control character 0x{:02x} in a string (write it as \\u{:04x})", c, c));
      if (c >= 0x80) {
        const auto n = utf8_length(t_, i_);
        if (n == 0)
          return fail(error_code::invalid_character, i_, 1, fmt::format("invalid UTF-8 byte 0x{:02x} in a string", c));
        i_ += n;
        continue;
      }
      if (c != '\\') {
        ++i_;
        continue;
      }
      if (!escaped) {
        escaped = true;
        decoded.reserve(64);
      }
      decoded.append(t_.data() + run, i_ - run);
      const std::size_t esc = i_;
      if (i_ + 1 >= t_.size())
        return fail(error_code::unterminated_string, begin, 1, "this string is not closed by '\"'");
      const char e = t_[i_ + 1];
      i_ += 2;
      switch (e) {
        case '"':
          decoded += '"';
          break;
        case '\\':
          decoded += '\\';
          break;
        case '/':
          decoded += '/';
          break;
        case 'b':
          decoded += '\b';
          break;
        case 'f':
          decoded += '\f';
          break;
        case 'n':
          decoded += '\n';
          break;
        case 'r':
          decoded += '\r';
          break;
        case 't':
          decoded += '\t';
          break;
        case 'u': {
          std::uint32_t cp = 0;
          if (!hex4(i_, cp)) return fail(error_code::syntax, esc, 2, "expected four hex digits after \\u");
          i_ += 4;
          if (cp >= 0xd800 && cp <= 0xdbff) {
            std::uint32_t lo = 0;
            if (i_ + 1 < t_.size() && t_[i_] == '\\' && t_[i_ + 1] == 'u' && hex4(i_ + 2, lo) && lo >= 0xdc00 &&
                lo <= 0xdfff) {
              i_ += 6;
              cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            } else {
              return fail(error_code::invalid_character, esc, 6, "a high surrogate \\u escape without its low half");
            }
          } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            return fail(error_code::invalid_character, esc, 6, "a low surrogate \\u escape without its high half");
          }
          if (cp == 0) return fail(error_code::invalid_character, esc, 6, "\\u0000: nft strings cannot hold NUL");
          append_utf8(decoded, cp);
          break;
        }
        default:
          return fail(error_code::syntax, esc, 2, fmt::format("invalid escape '\\{}' in a string", e));
      }
      run = i_;
    }
    auto& n = d_.nodes_[slot];
    n.kind = jkind::string;
    if (escaped) {
      decoded.append(t_.data() + run, i_ - run);
      n.escaped = true;
      n.first = static_cast<std::uint32_t>(d_.decoded_.size());
      d_.decoded_.push_back(src_.store(std::string_view(decoded)));
    }
    ++i_;  // closing quote
    n.where = from(begin);
    return true;
  }

  bool container(std::uint32_t slot, std::uint32_t depth, bool object) {
    if (depth >= max_depth_)
      return fail(error_code::nesting_too_deep, i_, 1, fmt::format("JSON nesting deeper than {} levels", max_depth_));
    const std::size_t begin = i_++;
    const std::size_t mark = stack_.size();
    const char close = object ? '}' : ']';
    ws();
    if (i_ < t_.size() && t_[i_] == close) {
      ++i_;
    } else {
      while (true) {
        if (object) {
          if (i_ >= t_.size() || t_[i_] != '"')
            return fail(i_ >= t_.size() ? error_code::unexpected_end : error_code::syntax, i_, 1,
                        "expected a string (an object key), saw " + shown(t_, i_));
          const auto key = new_node();
          if (!string(key)) return false;
          stack_.push_back(key);
          ws();
          if (i_ >= t_.size() || t_[i_] != ':')
            return fail(error_code::syntax, i_, 1, "expected ':' after an object key, saw " + shown(t_, i_));
          ++i_;
          ws();
        }
        const auto v = new_node();
        // the items of the root's "nftables" are read one by one (see jdoc::parse)
        const bool items = defer_items_ && object && depth == 0 && d_.text(d_.nodes_[stack_.back()]) == "nftables";
        if (items) in_items_ = true;
        const bool parsed = value(v, depth + 1);
        if (items) in_items_ = false;
        if (!parsed) return false;
        stack_.push_back(v);
        ws();
        if (i_ < t_.size() && t_[i_] == ',') {
          ++i_;
          ws();
          continue;
        }
        if (i_ < t_.size() && t_[i_] == close) {
          ++i_;
          break;
        }
        return fail(i_ >= t_.size() ? error_code::unexpected_end : error_code::syntax, i_, 1,
                    fmt::format("expected ',' or '{}' after {}, saw {}", close,
                                object ? "an object member" : "an array item", shown(t_, i_)));
      }
    }
    if (object && !unique_keys(mark)) return false;
    auto& n = d_.nodes_[slot];
    n.kind = object ? jkind::object : jkind::array;
    n.first = static_cast<std::uint32_t>(d_.kids_.size());
    n.count = static_cast<std::uint32_t>(stack_.size() - mark);
    d_.kids_.append(std::span<const std::uint32_t>(stack_.data() + mark, stack_.size() - mark));
    stack_.resize(mark);
    n.where = from(begin);
    return true;
  }

  // A deferred container: its extent only. Brackets are matched outside strings (a `\` escapes the
  // next character in a string) and nesting is limited as `container` limits it; everything else is
  // checked when the value is parsed (`run_at`).
  bool skip(std::uint32_t slot, std::uint32_t depth) {
    const std::size_t begin = i_;
    std::uint32_t open = 0;
    const char* const text = t_.data();
    const std::size_t n = t_.size();
    while (i_ < n) {
      const char c = text[i_];
      if (c == '"') {
        const std::size_t quote = i_++;
        while (true) {
          const void* q = std::memchr(text + i_, '"', n - i_);
          if (q == nullptr) return fail(error_code::unterminated_string, quote, 1, "this string is not closed by '\"'");
          std::size_t at = static_cast<std::size_t>(static_cast<const char*>(q) - text);
          std::size_t slashes = 0;
          while (at - slashes > quote + 1 && text[at - slashes - 1] == '\\') ++slashes;
          i_ = at + 1;
          if (slashes % 2 == 0) break;  // not escaped
        }
        continue;
      }
      if (c == '{' || c == '[') {
        if (depth + open >= max_depth_)
          return fail(error_code::nesting_too_deep, i_, 1,
                      fmt::format("JSON nesting deeper than {} levels", max_depth_));
        ++open;
      } else if ((c == '}' || c == ']') && --open == 0) {
        ++i_;
        auto& node = d_.nodes_[slot];
        node.kind = jkind::deferred;
        node.where = from(begin);
        return true;
      }
      ++i_;
    }
    return fail(error_code::unexpected_end, begin, 1,
                fmt::format("this '{}' is not closed by '{}'", text[begin], text[begin] == '{' ? '}' : ']'));
  }

  // RFC 8259 leaves a repeated name to the reader; libnftables' keeps one of the values silently. Here it
  // is an error: which of two `"name"`s was meant cannot be told.
  bool unique_keys(std::size_t mark) {
    const std::size_t members = (stack_.size() - mark) / 2;
    if (members < 2) return true;
    auto key = [&](std::size_t i) -> const jnode& { return d_.nodes_[stack_[mark + 2 * i]]; };
    auto duplicate = [&](const jnode& first, const jnode& again) {
      fail(error_code::duplicate_option, again.where.offset, again.where.length,
           fmt::format("duplicate key \"{}\" in this object", d_.text(again)));
      sink_.note(first.where, "first given here");
      return false;
    };
    if (members <= 16) {
      for (std::size_t i = 1; i < members; ++i)
        for (std::size_t j = 0; j < i; ++j)
          if (d_.text(key(j)) == d_.text(key(i))) return duplicate(key(j), key(i));
      return true;
    }
    sorted_.resize(0);
    for (std::size_t i = 0; i < members; ++i) sorted_.push_back(static_cast<std::uint32_t>(i));
    std::stable_sort(sorted_.begin(), sorted_.end(),
                     [&](std::uint32_t a, std::uint32_t b) { return d_.text(key(a)) < d_.text(key(b)); });
    for (std::size_t i = 1; i < sorted_.size(); ++i)
      if (d_.text(key(sorted_[i - 1])) == d_.text(key(sorted_[i]))) {
        const auto a = std::min(sorted_[i - 1], sorted_[i]);
        const auto b = std::max(sorted_[i - 1], sorted_[i]);
        return duplicate(key(a), key(b));
      }
    return true;
  }

  std::uint32_t new_node() {
    d_.nodes_.push_back({});
    return static_cast<std::uint32_t>(d_.nodes_.size() - 1);
  }

  jdoc& d_;
  source& src_;
  std::string_view t_;
  diagnostic_sink& sink_;
  std::uint32_t max_depth_;
  std::size_t i_ = 0;
  detail::node_stack<std::uint32_t> stack_;
  detail::node_stack<std::uint32_t> sorted_;
  bool defer_items_ = false;
  bool in_items_ = false;  ///< parsing the value of the root's "nftables"
};

bool jdoc::parse(source& src, diagnostic_sink& sink, std::uint32_t max_depth, bool defer_items) {
  jparser p(*this, src, sink, max_depth, defer_items);
  bool ok = false;
  try {
    ok = p.run();
  } catch (const arena_exhausted&) {
    reached_ = p.position();
    throw;
  }
  // the document stays while its items are read into an AST that grows to about the size of the text:
  // give back what doubling reserved
  nodes_.shrink_to_fit();
  kids_.shrink_to_fit();
  return ok;
}

bool jdoc::parse_value(source& src, diagnostic_sink& sink, std::uint32_t max_depth, span where, std::uint32_t depth) {
  return jparser(*this, src, sink, max_depth).run_at(where, depth);
}

}  // namespace nflens::nft::json_detail
