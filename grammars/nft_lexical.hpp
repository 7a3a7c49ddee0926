// SPDX-License-Identifier: MIT
#pragma once

// The lexical layer of the nft grammar: blanks, comments, separators, keywords and value tokens, as
// nftables' scanner (src/scanner.l) defines them. Private: included only by src/nft/parser.cpp (through
// nft.hpp in this directory) and by the grammar unit tests.
//
// nft's words: an identifier (`string` in scanner.l) starts with a letter or `_` and continues with
// letters, digits and `/ - _ .` — so `echo-request`, `ipv4_addr` and kube-proxy's chain name
// `endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80` are single words, and a keyword only matches when no
// such character follows (`ip` never matches the start of `ip6` or `ip-foo`).

#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/analyze_traits.hpp>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <utility>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace nflens::nft::grammar {

namespace pegtl = tao::pegtl;
using pegtl::at;
using pegtl::eof;
using pegtl::eol;
using pegtl::if_must;
using pegtl::list;
using pegtl::must;
using pegtl::not_at;
using pegtl::one;
using pegtl::opt;
using pegtl::plus;
using pegtl::seq;
using pegtl::sor;
using pegtl::star;
using pegtl::string;

// ---------------------------------------------------------------------------------------------------
// Character classes

constexpr bool is_alpha(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
constexpr bool is_hex(char c) noexcept { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
/// First character of an nft word.
constexpr bool is_ident_first(char c) noexcept { return is_alpha(c) || c == '_'; }
/// Later characters of an nft word (scanner.l `string`).
constexpr bool is_ident_other(char c) noexcept {
  return is_alpha(c) || is_digit(c) || c == '_' || c == '/' || c == '-' || c == '.';
}
/// `is_ident_other` as a table: one load per character in the scanners below.
struct word_chars {
  bool table[256]{};
  constexpr word_chars() noexcept {
    for (int c = 0; c < 256; ++c) table[c] = is_ident_other(static_cast<char>(c));
  }
  [[nodiscard]] constexpr bool operator()(char c) const noexcept { return table[static_cast<unsigned char>(c)]; }
};
inline constexpr word_chars is_word_char{};
#ifdef __SSE2__
/// Bit i set when `p[i]` is a word character (`is_ident_other`), for the 16 bytes at `p`: the ranges
/// `-./0-9` (0x2d-0x39), `A-Z`, `a-z`, and `_`.
[[gnu::always_inline]] inline unsigned word_char_mask16(const char* p) noexcept {
  const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  // c in [lo, hi] when (c - lo) <= (hi - lo) as unsigned bytes, that is when min(c - lo, hi - lo) == c - lo.
  const auto in_range = [c](char lo, char hi) {
    const __m128i d = _mm_sub_epi8(c, _mm_set1_epi8(lo));
    return _mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(static_cast<char>(hi - lo))), d);
  };
  const __m128i word = _mm_or_si128(_mm_or_si128(in_range('-', '9'), in_range('A', 'Z')),
                                    _mm_or_si128(in_range('a', 'z'), _mm_cmpeq_epi8(c, _mm_set1_epi8('_'))));
  return static_cast<unsigned>(_mm_movemask_epi8(word));
}
#endif
/// Length of the nft word at `p` (0 when none starts there).
[[gnu::always_inline]] inline std::size_t word_length(const char* p, const char* end) noexcept {
  if (p == end || !is_ident_first(*p)) return 0;
  const char* q = p + 1;
#ifdef __SSE2__
  // Sixteen characters at a time while they last (kube-proxy's chain and set names run to 70), then
  // one at a time.
  for (; end - q >= 16; q += 16) {
    const unsigned mask = word_char_mask16(q);
    if (mask != 0xffff) return static_cast<std::size_t>(q - p) + static_cast<std::size_t>(std::countr_one(mask));
  }
#endif
  while (q != end && is_word_char(*q)) ++q;
  return static_cast<std::size_t>(q - p);
}

/// Custom PEGTL rules below are leaves: analysis treats them as "consumes on success".
template <class Self>
struct leaf {
  using rule_t = Self;
  using subs_t = pegtl::empty_list;
};

/// An nft keyword: the exact word, not followed by a word character. `Boundary` false allows a `/`
/// directly after it (rate units: `kbytes/second`).
template <bool SlashEnds, char... Cs>
struct keyword_rule : leaf<keyword_rule<SlashEnds, Cs...>> {
  static constexpr char chars[] = {Cs...};
  static constexpr std::size_t size = sizeof...(Cs);
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const std::size_t avail = in.size(size + 1);
    if (avail < size) return false;
    // Character by character, not memcmp: the compiler unrolls these few compares, where a call to
    // memcmp costs more than the compare itself (keywords are tried millions of times in a large dump).
    const char* p = in.current();
    for (std::size_t i = 0; i < size; ++i)
      if (p[i] != chars[i]) return false;
    if (avail > size) {
      const char c = p[size];
      if (is_ident_other(c) && !(SlashEnds && c == '/')) return false;
    }
    in.bump_in_this_line(size);
    return true;
  }
};
template <char... Cs>
struct keyword : keyword_rule<false, Cs...> {};
template <char... Cs>
struct unit_keyword : keyword_rule<true, Cs...> {};

#define NFLENS_NFT_KW(x) TAO_PEGTL_INTERNAL_STRING(::nflens::nft::grammar::keyword, x)
#define NFLENS_NFT_UNIT(x) TAO_PEGTL_INTERNAL_STRING(::nflens::nft::grammar::unit_keyword, x)

// ---------------------------------------------------------------------------------------------------
// Blanks, comments, separators

/// `\` at the end of a line joins it with the next (scanner.l `\\{newline}`).
struct continuation : seq<one<'\\'>, eol> {};
/// Length of the blanks (spaces, tabs, `\` line continuations) at `p`.
[[gnu::always_inline]] inline std::size_t blank_length(const char* p, const char* end) noexcept {
  const char* q = p;
  while (q != end) {
    if (*q == ' ' || *q == '\t') {
      ++q;
    } else if (*q == '\\' && q + 1 != end && (q[1] == '\n' || (q[1] == '\r' && q + 2 != end && q[2] == '\n'))) {
      q += q[1] == '\n' ? 2 : 3;
    } else {
      break;
    }
  }
  return static_cast<std::size_t>(q - p);
}
/// Horizontal space inside a line (blanks and line continuations), possibly none.
struct sp : leaf<sp> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    in.bump(blank_length(in.current(), in.end()));
    return true;
  }
};
/// Horizontal space that must be there (between two words).
struct sp1 : leaf<sp1> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const std::size_t n = blank_length(in.current(), in.end());
    in.bump(n);
    return n != 0;
  }
};
/// `# ...` to the end of the line.
struct comment : leaf<comment> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const char* p = in.current();
    if (p == in.end() || *p != '#') return false;
    const char* q = p;
    while (q != in.end() && *q != '\n') ++q;
    if (q != p + 1 && q[-1] == '\r') --q;  // the CR of a CRLF line end belongs to the end
    in.bump(static_cast<std::size_t>(q - p));
    return true;
  }
};
/// Line end, with an optional trailing comment.
struct line_end : seq<sp, opt<comment>, sor<eol, eof>> {};
/// Length of blanks, newlines, comments (and `;` when `semicolons`) at `p`.
inline std::size_t space_length(const char* p, const char* end, bool semicolons) noexcept {
  const char* q = p;
  while (q != end) {
    const char c = *q;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || (semicolons && c == ';')) {
      ++q;
    } else if (c == '#') {
      while (q != end && *q != '\n') ++q;
    } else if (c == '\\' && q + 1 != end && (q[1] == '\n' || q[1] == '\r')) {
      q += 2;
    } else {
      break;
    }
  }
  return static_cast<std::size_t>(q - p);
}
/// Space that may span lines, as inside braces of sets and blocks (`opt_newline`), with comments.
struct nl_ws : leaf<nl_ws> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    in.bump(space_length(in.current(), in.end(), false));
    return true;
  }
};
/// `stmt_separator`: a newline or `;` (with the rest of the line's comment).
struct stmt_separator : sor<seq<sp, one<';'>>, line_end> {};
/// Separators and blank lines between items of a block.
struct separators : leaf<separators> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    in.bump(space_length(in.current(), in.end(), true));
    return true;
  }
};

/// `# handle N` that `nft -a` appends to a table, chain, set, flowtable or object opener and to rules.
struct handle_comment;

// ---------------------------------------------------------------------------------------------------
// Numbers and words

/// A decimal number (leading `0` means octal, as in nft's scanner) or hex `0x...`, not followed by a
/// word character. `number` pushes nothing; actions read the decoded value from the state.
struct number : leaf<number> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const char* p = in.current();
    const char* end = in.end();
    const char* q = p;
    if (q != end && *q == '0' && q + 1 != end && (q[1] == 'x' || q[1] == 'X') && q + 2 != end && is_hex(q[2])) {
      q += 2;
      while (q != end && is_hex(*q)) ++q;
    } else {
      while (q != end && is_digit(*q)) ++q;
      if (q == p) return false;
    }
    if (q != end && (is_alpha(*q) || *q == '_')) return false;
    in.bump_in_this_line(static_cast<std::size_t>(q - p));
    return true;
  }
};
/// A number with an optional leading `-` (`int_num`: priorities).
struct signed_number : seq<opt<one<'-'>>, sp, number> {};

/// An nft word (identifier, scanner.l `string`).
struct identifier : leaf<identifier> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const std::size_t n = word_length(in.current(), in.end());
    if (n == 0) return false;
    in.bump_in_this_line(n);
    return true;
  }
};

/// `"..."`: nft has no escapes in strings (a `\` is kept), and a string does not span lines here.
struct quoted_string : leaf<quoted_string> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const char* p = in.current();
    const char* end = in.end();
    if (p == end || *p != '"') return false;
    const char* q = p + 1;
    while (q != end && *q != '"' && *q != '\n') ++q;
    if (q == end || *q != '"') return false;
    in.bump_in_this_line(static_cast<std::size_t>(q + 1 - p));
    return true;
  }
};
/// A string where nft takes `string`: a quoted string, a word, or a word with `*` / `\*` (`eth*`).
struct string_word : leaf<string_word> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    if (quoted_string::match(in)) return true;
    const char* p = in.current();
    const char* end = in.end();
    const char* q = p;
    while (q != end && (is_ident_other(*q) || *q == '*' || *q == '\\')) {
      if (*q == '\\' && !(q + 1 != end && q[1] == '*')) break;
      q += (*q == '\\') ? 2 : 1;
    }
    if (q == p || !(is_ident_first(*p) || *p == '\\' || is_digit(*p) || *p == '*')) return false;
    in.bump_in_this_line(static_cast<std::size_t>(q - p));
    return true;
  }
};

/// `$NAME` (a `define`d variable).
struct variable_expr : seq<one<'$'>, identifier> {};

// ---------------------------------------------------------------------------------------------------
// Choice by the next word

/// A string literal as a template argument.
template <std::size_t N>
struct fixed_string {
  char text[N]{};
  constexpr fixed_string(const char (&s)[N]) noexcept {
    for (std::size_t i = 0; i < N; ++i) text[i] = s[i];
  }
  [[nodiscard]] constexpr std::string_view view() const noexcept { return {text, N - 1}; }
};
/// The words an alternative of a `word_switch` can start with.
template <fixed_string... Words>
struct words {
  [[nodiscard]] static bool contain(std::string_view w) noexcept { return (same(w, Words) || ...); }
  /// Sets `bit` in `first[c]` and `length[n]` for each word, `c` its first letter and `n` its length
  /// (`word_switch`'s filter; lengths from 31 on share the last entry).
  static constexpr void mark(std::uint64_t (&first)[256], std::uint64_t (&length)[32], std::uint64_t bit) noexcept {
    ((first[static_cast<unsigned char>(Words.text[0])] |= bit,
      length[Words.view().size() < 31 ? Words.view().size() : 31] |= bit),
     ...);
  }

 private:
  // Length and first letter first: most candidates differ there; no call to memcmp for these short words.
  template <std::size_t N>
  [[nodiscard]] static bool same(std::string_view w, const fixed_string<N>& word) noexcept {
    if (w.size() != N - 1 || w[0] != word.text[0]) return false;
    for (std::size_t i = 1; i < N - 1; ++i)
      if (w[i] != word.text[i]) return false;
    return true;
  }
};
/// An alternative of a `word_switch`: `Rule`, tried when the next word is one of `Words`.
template <class Words, class Rule>
struct when {
  using words_t = Words;
  using rule_type = Rule;
};
/// `sor<Rules of Cases..., Fallback>` when every case's rule can only start with its listed words:
/// reads the next word once and tries only the cases listed for it (in order), then `Fallback`. This
/// is what keeps a statement from being tried against thirty keywords one after the other.
template <class Fallback, class... Cases>
struct word_switch {
  using rule_t = word_switch;
  using subs_t = pegtl::type_list<typename Cases::rule_type..., Fallback>;
  template <pegtl::apply_mode A, pegtl::rewind_mode M, template <class...> class Action,
            template <class...> class Control, class Input, class... States>
  [[nodiscard]] static bool match(Input& in, States&... st) {
    const std::string_view w(in.current(), word_length(in.current(), in.end()));
    if (!w.empty()) {
      // The cases with a word of this first letter and length: most words (`ip`, `meta`, a value)
      // start no case, and are not compared with every listed word to find that out.
      const std::uint64_t candidates =
          filter.first[static_cast<unsigned char>(w[0])] & filter.length[w.size() < 31 ? w.size() : 31];
      if (candidates != 0 &&
          try_cases<A, Action, Control>(in, w, candidates, std::index_sequence_for<Cases...>{}, st...))
        return true;
    }
    if constexpr (std::is_same_v<Fallback, pegtl::failure>) {
      return false;
    } else {
      return Control<Fallback>::template match<A, M, Action, Control>(in, st...);
    }
  }

 private:
  static_assert(sizeof...(Cases) <= 64, "one bit per case in the filter");
  /// Bit i of `first[c]`: case i lists a word starting with `c`; of `length[n]`: a word of `n` letters.
  struct filter_tables {
    std::uint64_t first[256]{};
    std::uint64_t length[32]{};
  };
  static constexpr filter_tables filter = [] {
    filter_tables t;
    std::uint64_t bit = 1;
    ((Cases::words_t::mark(t.first, t.length, bit), bit <<= 1), ...);
    return t;
  }();
  template <pegtl::apply_mode A, template <class...> class Action, template <class...> class Control, class Input,
            std::size_t... I, class... States>
  [[nodiscard]] static bool try_cases(Input& in, std::string_view w, std::uint64_t candidates,
                                      std::index_sequence<I...>, States&... st) {
    return ((((candidates >> I) & 1) != 0 && try_case<Cases, A, Action, Control>(in, w, st...)) || ...);
  }
  template <class Case, pegtl::apply_mode A, template <class...> class Action, template <class...> class Control,
            class Input, class... States>
  [[nodiscard]] static bool try_case(Input& in, std::string_view w, States&... st) {
    return Case::words_t::contain(w) &&
           Control<typename Case::rule_type>::template match<A, pegtl::rewind_mode::required, Action, Control>(in,
                                                                                                               st...);
  }
};

/// Succeeds, consuming nothing, when the next character after blanks is one of `Cs`: a cheap guard in
/// front of optional continuations (`& mask`, `. concat`, `/len`) so that a plain value does not try
/// each of them in turn.
template <char... Cs>
struct next_is : leaf<next_is<Cs...>> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const char* p = in.current() + blank_length(in.current(), in.end());
    return p != in.end() && ((*p == Cs) || ...);
  }
};

/// `*`, the catch-all element.
struct wildcard : one<'*'> {};

}  // namespace nflens::nft::grammar

namespace tao::pegtl {
template <class Name, bool S, char... Cs>
struct analyze_traits<Name, nflens::nft::grammar::keyword_rule<S, Cs...>> : analyze_any_traits<> {};
template <class Name, char... Cs>
struct analyze_traits<Name, nflens::nft::grammar::keyword<Cs...>> : analyze_any_traits<> {};
template <class Name, char... Cs>
struct analyze_traits<Name, nflens::nft::grammar::unit_keyword<Cs...>> : analyze_any_traits<> {};
template <class Name>
struct analyze_traits<Name, nflens::nft::grammar::number> : analyze_any_traits<> {};
template <class Name>
struct analyze_traits<Name, nflens::nft::grammar::sp> : analyze_opt_traits<> {};
template <class Name>
struct analyze_traits<Name, nflens::nft::grammar::nl_ws> : analyze_opt_traits<> {};
template <class Name>
struct analyze_traits<Name, nflens::nft::grammar::comment> : analyze_any_traits<> {};
template <class Name>
struct analyze_traits<Name, nflens::nft::grammar::separators> : analyze_opt_traits<> {};
template <class Name>
struct analyze_traits<Name, nflens::nft::grammar::sp1> : analyze_any_traits<> {};
template <class Name, char... Cs>
struct analyze_traits<Name, nflens::nft::grammar::next_is<Cs...>> : analyze_opt_traits<> {};
template <class Name, class Fallback, class... Cases>
struct analyze_traits<Name, nflens::nft::grammar::word_switch<Fallback, Cases...>>
    : analyze_sor_traits<typename Cases::rule_type..., Fallback> {};
template <class Name>
struct analyze_traits<Name, nflens::nft::grammar::identifier> : analyze_any_traits<> {};
template <class Name>
struct analyze_traits<Name, nflens::nft::grammar::quoted_string> : analyze_any_traits<> {};
template <class Name>
struct analyze_traits<Name, nflens::nft::grammar::string_word> : analyze_any_traits<> {};
}  // namespace tao::pegtl
