// SPDX-License-Identifier: MIT
#pragma once

// Value tokens of the nft grammar (scanner.l `addrstring`, `ip6addr_rfc2732`, `timestring`, `hexstring`,
// `decstring`, `classid`, `quotedstring`, `asteriskstring`, `string`), as custom PEGTL leaf rules that only
// recognise; the parser's actions decode what they matched.

#include "nft_lexical.hpp"

#include <nflens/net.hpp>

#include <cstdint>
#include <string_view>

namespace nflens::nft::grammar {

namespace detail {
inline std::size_t scan(const char* p, const char* end, bool (*cls)(char)) noexcept {
  const char* q = p;
  while (q != end && cls(*q)) ++q;
  return static_cast<std::size_t>(q - p);
}
constexpr bool is_ip6_char(char c) noexcept { return is_hex(c) || c == ':' || c == '.'; }
/// True when a value token may end before `c` (no word character continues it).
constexpr bool ends_value(char c) noexcept { return !(is_alpha(c) || is_digit(c) || c == '_'); }
}  // namespace detail

/// An IPv6 address: the longest prefix of the run of hex digits, `:` and `.` (at most 45 characters, the
/// longest IPv6 text) that contains a `:` and that inet_pton(3) accepts, not followed by a word character
/// — as scanner.l's longest match reads `aaaa:::accept` as `aaaa::` then `:accept`, and `fe11::-fe22::`
/// as two addresses and a dash. MAC addresses and class ids are not valid IPv6 and fall through.
struct ip6addr : leaf<ip6addr> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const char* p = in.current();
    const char* end = in.end();
    const char* limit = end - p > 45 ? p + 45 : end;
    std::size_t n = detail::scan(p, limit, detail::is_ip6_char);
    const std::string_view all(p, n);
    // An IPv6 address never has a '.' before its first ':' (`10.0.0.1:80` is an address and a port).
    if (all.find('.') < all.find(':')) return false;
    while (n >= 2) {
      const std::string_view run(p, n);
      if (run.find(':') == std::string_view::npos) return false;
      if ((p + n == end || detail::ends_value(p[n])) && run.front() != '.' && parse_ip_address(run)) {
        in.bump_in_this_line(n);
        return true;
      }
      --n;
    }
    return false;
  }
};
/// `[` IPv6 `]`.
struct ip6addr_bracketed : leaf<ip6addr_bracketed> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const char* p = in.current();
    const char* end = in.end();
    if (p == end || *p != '[') return false;
    const std::size_t n = detail::scan(p + 1, end, detail::is_ip6_char);
    if (p + 1 + n == end || p[1 + n] != ']') return false;
    const auto a = parse_ip_address(std::string_view(p + 1, n));
    if (!a || a->family != ip_family::ipv6) return false;
    in.bump_in_this_line(n + 2);
    return true;
  }
};
/// Reads a dotted quad at `p` as nft does: its scanner takes four parts of 1 to 3 digits, inet_pton(3)
/// reads them, and what inet_pton refuses (a leading zero) getaddrinfo(3) reads as inet_aton(3) does, a
/// part with a leading 0 in octal (`010.0.0.1` is 8.0.0.1; `08` is no address). Each part at most 255.
/// Returns its length, and the address in `out`; 0 when there is none.
inline std::size_t ipv4_length(const char* p, const char* end, std::uint32_t* out = nullptr) noexcept {
  const char* q = p;
  std::uint32_t value = 0;
  for (int part = 0; part < 4; ++part) {
    if (part > 0) {
      if (q == end || *q != '.') return 0;
      ++q;
    }
    const std::size_t d = detail::scan(q, end, is_digit);
    if (d == 0 || d > 3) return 0;
    const std::uint32_t radix = d > 1 && *q == '0' ? 8 : 10;
    std::uint32_t n = 0;
    for (std::size_t i = 0; i < d; ++i) {
      const auto digit = static_cast<std::uint32_t>(q[i] - '0');
      if (digit >= radix) return 0;
      n = n * radix + digit;
    }
    if (n > 255) return 0;
    value = value << 8 | n;
    q += d;
  }
  if (out != nullptr) *out = value;
  return static_cast<std::size_t>(q - p);
}
/// A dotted quad, not followed by a word character or another `.digit`.
struct ip4addr : leaf<ip4addr> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const char* end = in.end();
    const std::size_t n = ipv4_length(in.current(), end);
    if (n == 0) return false;
    const char* q = in.current() + n;
    if (q != end && (!detail::ends_value(*q) || (*q == '.' && q + 1 != end && is_digit(q[1])))) return false;
    in.bump_in_this_line(n);
    return true;
  }
};
/// `aa:bb:cc:dd:ee:ff` (1-2 hex digits per part).
struct macaddr : leaf<macaddr> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const char* p = in.current();
    const char* end = in.end();
    const char* q = p;
    for (int part = 0; part < 6; ++part) {
      if (part > 0) {
        if (q == end || *q != ':') return false;
        ++q;
      }
      const std::size_t d = detail::scan(q, end, is_hex);
      if (d == 0 || d > 2) return false;
      q += d;
    }
    if (q != end && (!detail::ends_value(*q) || *q == ':')) return false;
    in.bump_in_this_line(static_cast<std::size_t>(q - p));
    return true;
  }
};
/// `major:minor` in hex, 1-4 digits each, followed by a blank, newline, `:`, `-`, `}` or `,`.
struct classid : leaf<classid> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const char* p = in.current();
    const char* end = in.end();
    const std::size_t a = detail::scan(p, end, is_hex);
    if (a == 0 || a > 4 || p + a == end || p[a] != ':') return false;
    const std::size_t b = detail::scan(p + a + 1, end, is_hex);
    if (b == 0 || b > 4) return false;
    const char* q = p + a + 1 + b;
    if (q != end && std::string_view(" \t\r\n:-},").find(*q) == std::string_view::npos) return false;
    in.bump_in_this_line(static_cast<std::size_t>(q - p));
    return true;
  }
};
/// `[Nd][Nh][Nm][Ns][Nms]`, at least one part, in that order.
struct timestring : leaf<timestring> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const char* p = in.current();
    const char* end = in.end();
    const char* q = p;
    int last = -1;  // index of the last unit used: d=0 h=1 m=2 s=3 ms=4
    while (q != end && is_digit(*q)) {
      const std::size_t d = detail::scan(q, end, is_digit);
      const char* u = q + d;
      int unit = -1;
      std::size_t ulen = 1;
      if (u != end) {
        if (*u == 'd')
          unit = 0;
        else if (*u == 'h')
          unit = 1;
        else if (*u == 'm' && u + 1 != end && u[1] == 's')
          unit = 4, ulen = 2;
        else if (*u == 'm')
          unit = 2;
        else if (*u == 's')
          unit = 3;
      }
      if (unit <= last) break;
      last = unit;
      q = u + ulen;
    }
    if (last < 0) return false;
    if (q != end && !detail::ends_value(*q)) return false;
    in.bump_in_this_line(static_cast<std::size_t>(q - p));
    return true;
  }
};
/// A word that may carry `*` wildcards or `\*` (`eth*`, `foo\*`), or `8021q`/`8021ad` (scanner.l's
/// special strings), or a plain word.
struct symbol_word : leaf<symbol_word> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const char* p = in.current();
    const char* end = in.end();
    const std::string_view rest(p, static_cast<std::size_t>(end - p));
    // scanner.l's special strings; both start with `8` (looked at first: few values do).
    if (rest.starts_with('8')) {
      for (std::string_view special : {std::string_view("8021q"), std::string_view("8021ad")}) {
        if (rest.substr(0, special.size()) == special &&
            (rest.size() == special.size() || !is_ident_other(rest[special.size()]))) {
          in.bump_in_this_line(special.size());
          return true;
        }
      }
    }
    const char* q = p;
    if (q != end && (is_ident_first(*q) || *q == '\\')) {
      while (q != end) {
        if (is_ident_other(*q) || *q == '*')
          ++q;
        else if (*q == '\\' && q + 1 != end && q[1] == '*')
          q += 2;
        else
          break;
      }
    }
    if (q == p || (*p == '\\' && q == p + 1)) return false;
    if (is_reserved(std::string_view(p, static_cast<std::size_t>(q - p)))) return false;
    in.bump_in_this_line(static_cast<std::size_t>(q - p));
    return true;
  }
  /// Words nft's scanner always reads as statement or command keywords, never as a value.
  static bool is_reserved(std::string_view w) noexcept {
    if (w.size() < 2 || w.size() > 10 || std::string_view("acdfgjlmnqrstuvx").find(w[0]) == std::string_view::npos)
      return false;
    // `words` compares length and first letter before the rest, without a call to memcmp per word.
    using reserved = words<"accept", "add", "comment", "continue", "counter", "delete", "drop", "dup", "flow", "fwd",
                           "goto", "jump", "limit", "log", "map", "masquerade", "meter", "notrack", "queue", "quota",
                           "reject", "return", "set", "synproxy", "tproxy", "update", "vmap", "xt">;
    return reserved::contain(w);
  }
};

}  // namespace nflens::nft::grammar

namespace tao::pegtl {
#define NFLENS_NFT_LEAF(R) \
  template <class Name>    \
  struct analyze_traits<Name, nflens::nft::grammar::R> : analyze_any_traits<> {};
NFLENS_NFT_LEAF(ip6addr)
NFLENS_NFT_LEAF(ip6addr_bracketed)
NFLENS_NFT_LEAF(ip4addr)
NFLENS_NFT_LEAF(macaddr)
NFLENS_NFT_LEAF(classid)
NFLENS_NFT_LEAF(timestring)
NFLENS_NFT_LEAF(symbol_word)
#undef NFLENS_NFT_LEAF
}  // namespace tao::pegtl
