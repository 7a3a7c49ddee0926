// SPDX-License-Identifier: MIT
#pragma once

// The grammar of iptables-save / ip6tables-save output and iptables-restore input (iptables-save(8),
// iptables-restore(8); the rule syntax of iptables(8) and iptables-extensions(8)). Private: included
// only by src/iptables/parse.cpp.
//
// A file is lines. A line is a `#` comment, a `*table` header, a `:CHAIN POLICY [p:b]` declaration,
// `COMMIT`, or a rule line: an optional `[packets:bytes]` prefix and clauses separated by blanks, as
// iptables-restore splits them into words (double quotes group words and take backslash escapes) and
// hands them to getopt. Clauses are the command (`-A CHAIN`, ...), the base matches (`-s -d -i -o -p
// -f`), `!`, `-m MODULE`, `-j TARGET` / `-g CHAIN`, `-c P B`, `-4`/`-6`, and module or target options
// (`--name [argument...]`).
//
// How many arguments an option takes depends on the module that owns it, which is known only once the
// option's name has been read: the predicates `argument_required` and `argument_optional` ask the
// parser state (see `parser_state_concept` below), which the action on `option_name` has set.
//
// Errors: `if_must<>` after the token that decides the parse; every rule that can raise has a message in
// iptables_errors.hpp. Recovery is per line (`checked_line`): a line with an error is skipped to its end.

#include <tao/pegtl.hpp>
#include <tao/pegtl/contrib/analyze_traits.hpp>

#include <array>
#include <cstdint>
#include <string_view>

namespace nflens::iptables::grammar {

using namespace tao::pegtl;

// The custom predicates below call these members of the parser state:
//   bool argument_required() const;   // the current option still needs an argument
//   bool argument_optional() const;   // the current option may take one more argument

/// Succeeds without consuming when the option being read still needs an argument.
struct argument_required {
  using rule_t = argument_required;
  using subs_t = empty_list;
  template <apply_mode, rewind_mode, template <typename...> class Action, template <typename...> class Control,
            typename ParseInput, typename State>
  static bool match(ParseInput& /*in*/, State& st) noexcept {
    return st.argument_required();
  }
};

/// Succeeds without consuming when the option being read may take one more (optional) argument.
struct argument_optional {
  using rule_t = argument_optional;
  using subs_t = empty_list;
  template <apply_mode, rewind_mode, template <typename...> class Action, template <typename...> class Control,
            typename ParseInput, typename State>
  static bool match(ParseInput& /*in*/, State& st) noexcept {
    return st.argument_optional();
  }
};

/// True for the long option names of iptables itself (iptables(8) COMMANDS and PARAMETERS). Asked for
/// every `--name` word, so it looks at the first letter before comparing.
[[nodiscard]] constexpr bool is_builtin_long_name(std::string_view n) noexcept {
  if (n.size() < 3) return false;
  switch (n[0]) {
    case 'a':
      return n == "append";
    case 'c':
      return n == "check";
    case 'd':
      return n == "delete" || n == "destination" || n == "dst" || n == "delete-chain";
    case 'f':
      return n == "flush" || n == "fragment";
    case 'g':
      return n == "goto";
    case 'i':
      return n == "insert" || n == "in-interface" || n == "ipv4" || n == "ipv6";
    case 'j':
      return n == "jump";
    case 'l':
      return n == "list" || n == "list-rules";
    case 'm':
      return n == "match";
    case 'n':
      return n == "new" || n == "new-chain";
    case 'o':
      return n == "out-interface";
    case 'p':
      return n == "policy" || n == "protocol";
    case 'r':
      return n == "replace" || n == "rename-chain";
    case 's':
      return n == "source" || n == "src" || n == "set-counters";
    case 't':
      return n == "table";
    case 'z':
      return n == "zero";
    default:
      return false;
  }
}

/// The bytes of an unquoted word: anything but blanks, line ends, quotes and NUL.
[[nodiscard]] constexpr bool is_plain_char(char c) noexcept {
  return c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '"' && c != '\0';
}

/// Byte classes for the scanning loops below: one table lookup per byte instead of a chain of
/// comparisons (word scanning is most of the work of parsing a dump).
enum char_class : std::uint8_t {
  cc_plain = 1,      ///< `is_plain_char`
  cc_long_name = 2,  ///< the name of a built-in long option: `a-z 0-9 -`
  cc_name = 4,       ///< the rest of an option name: `a-z A-Z 0-9 - _`
};
inline constexpr std::array<std::uint8_t, 256> char_classes = [] {
  std::array<std::uint8_t, 256> t{};
  for (int i = 0; i < 256; ++i) {
    const char c = static_cast<char>(i);
    const bool lower = c >= 'a' && c <= 'z', upper = c >= 'A' && c <= 'Z', digit = c >= '0' && c <= '9';
    t[static_cast<std::size_t>(i)] =
        static_cast<std::uint8_t>((is_plain_char(c) ? cc_plain : 0) | (lower || digit || c == '-' ? cc_long_name : 0) |
                                  (lower || upper || digit || c == '-' || c == '_' ? cc_name : 0));
  }
  return t;
}();
/// True when byte `c` is in class `k`.
[[nodiscard]] constexpr bool in_class(char c, char_class k) noexcept {
  return (char_classes[static_cast<unsigned char>(c)] & k) != 0;
}

/// One or more `is_plain_char` bytes (what `plus<plain_char>` matches, in one loop: words are most of
/// the input).
struct plain_chars {
  using rule_t = plain_chars;
  using subs_t = empty_list;
  template <apply_mode, rewind_mode, template <typename...> class Action, template <typename...> class Control,
            typename ParseInput, typename... States>
  static bool match(ParseInput& in, States&... /*st*/) noexcept {
    const char* const p = in.current();
    const char* const e = in.end();
    const char* q = p;
    while (q < e && in_class(*q, cc_plain)) ++q;
    if (q == p) return false;
    in.bump_in_this_line(static_cast<std::size_t>(q - p));
    return true;
  }
};

/// Succeeds without consuming at a word `--NAME` (or `--NAME=...`) where NAME is one of iptables' own
/// long options; lets the grammar try those only where they can match.
struct builtin_long_option {
  using rule_t = builtin_long_option;
  using subs_t = empty_list;
  template <apply_mode, rewind_mode, template <typename...> class Action, template <typename...> class Control,
            typename ParseInput, typename... States>
  static bool match(ParseInput& in, States&... /*st*/) noexcept {
    const char* p = in.current();
    const char* const e = in.end();
    if (e - p < 3 || p[0] != '-' || p[1] != '-') return false;
    const char* q = p + 2;
    while (q < e && in_class(*q, cc_long_name)) ++q;
    if (q < e && *q != ' ' && *q != '\t' && *q != '\n' && *q != '\r' && *q != '=') return false;
    return is_builtin_long_name(std::string_view(p + 2, static_cast<std::size_t>(q - p - 2)));
  }
};

/// The inside of a double-quoted part of a word: bytes up to the closing quote, where a backslash takes
/// the next byte literally (`\"`, `\\`), as iptables-restore(8) reads them. Never crosses a line end.
/// Zero or more bytes, in one loop.
struct quoted_chars {
  using rule_t = quoted_chars;
  using subs_t = empty_list;
  template <apply_mode, rewind_mode, template <typename...> class Action, template <typename...> class Control,
            typename ParseInput, typename... States>
  static bool match(ParseInput& in, States&... /*st*/) noexcept {
    const char* const p = in.current();
    const char* const e = in.end();
    const char* q = p;
    while (q < e) {
      const char c = *q;
      if (c == '"' || c == '\n' || c == '\r' || c == '\0') break;
      if (c == '\\') {
        if (q + 1 == e || q[1] == '\n' || q[1] == '\r' || q[1] == '\0') break;
        ++q;
      }
      ++q;
    }
    in.bump_in_this_line(static_cast<std::size_t>(q - p));
    return true;
  }
};

/// Succeeds without consuming where a word went on right after its closing quote (`"a"b`): iptables-restore
/// ends the argument at the quote, so the rest is a word of its own there.
struct after_closing_quote {
  using rule_t = after_closing_quote;
  using subs_t = empty_list;
  template <apply_mode, rewind_mode, template <typename...> class Action, template <typename...> class Control,
            typename ParseInput, typename... States>
  static bool match(ParseInput& in, States&... /*st*/) noexcept {
    const char* const p = in.current();
    if (p == in.begin() || p == in.end() || p[-1] != '"') return false;
    return *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r';
  }
};
struct glued_to_quote {};

/// The rest of an option name after its first letter: letters, digits, `-` and `_` (zero or more).
struct name_chars {
  using rule_t = name_chars;
  using subs_t = empty_list;
  template <apply_mode, rewind_mode, template <typename...> class Action, template <typename...> class Control,
            typename ParseInput, typename... States>
  static bool match(ParseInput& in, States&... /*st*/) noexcept {
    const char* const p = in.current();
    const char* const e = in.end();
    const char* q = p;
    while (q < e && in_class(*q, cc_name)) ++q;
    in.bump_in_this_line(static_cast<std::size_t>(q - p));
    return true;
  }
};

// clang-format off

// ---- lexical ------------------------------------------------------------------------------------
struct blank : one<' ', '\t'> {};
struct blanks : plus<blank> {};
struct crlf : string<'\r', '\n'> {};
struct line_end : sor<one<'\n'>, crlf, eof> {};
struct word_end : at<sor<blank, one<'\n'>, crlf, eof>> {};
// A byte of an unquoted word: anything but blanks, line ends, quotes and NUL.
// Inside quotes a backslash takes the next byte literally: `\"`, `\\` (iptables-restore(8) quoting).
struct close_quote : one<'"'> {};
// "say \"hi\" \\ back" — a double-quoted part of a word; may follow plain bytes (`a"b c"`).
struct quoted : seq<one<'"'>, quoted_chars, must<close_quote>> {};
// One argument as iptables-restore splits a line into words: plain bytes, then at most one quoted part,
// whose closing quote ends the word (`"a"b` is the two words `a` and `b`, which iptables refuses).
struct word : sor<seq<plain_chars, opt<quoted>>, quoted> {};

// ---- counters: [12:345] -------------------------------------------------------------------------
struct packets : plus<digit> {};
struct bytes : plus<digit> {};
struct counters_close : one<']'> {};
struct counters_colon : one<':'> {};
struct counters : if_must<one<'['>, packets, counters_colon, bytes, counters_close> {};

// ---- comment, table header, chain declaration, COMMIT ------------------------------------------
// # Generated by iptables-save v1.8.9 (nf_tables) on ...
struct comment_line : seq<one<'#'>, star<not_one<'\n'>>> {};
struct table_name : plain_chars {};
struct trailing_comment : seq<blanks, opt<one<'#'>, star<not_one<'\n'>>>> {};
// *filter
struct table_header : seq<one<'*'>, must<table_name>, opt<trailing_comment>> {};
// `:a"b`: iptables-restore takes a declaration's name as written, quotes and all (not decoded as a
// command's words are), and iptables-save prints a chain named `a"b` so.
struct chain_name : plus<sor<plain_chars, one<'"'>>> {};
struct policy_name : plain_chars {};
// :INPUT ACCEPT [0:0]   :KUBE-SERVICES - [0:0]   (the policy of a user chain is ignored; `:foo [0:0]` loads)
struct chain_policy_and_counters : sor<seq<counters, word_end>, seq<policy_name, opt<blanks, counters>>> {};
struct chain_decl : seq<one<':'>, must<chain_name>, opt<blanks, chain_policy_and_counters>> {};
struct commit : seq<at<one<'C'>>, TAO_PEGTL_STRING("COMMIT"), word_end> {};

// ---- option words -------------------------------------------------------------------------------
// getopt(3) spellings of an option that takes an argument: `-A CHAIN`, `-ACHAIN`, `--append CHAIN`,
// `--append=CHAIN`. `Separate` is `Arg` after blanks, with its own error message.
template <char Short> struct short_option : seq<one<'-'>, one<Short>> {};
template <typename Name> struct long_option : seq<one<'-'>, one<'-'>, Name> {};
template <char Short, typename Long, typename Arg, typename Separate>
struct option_with_argument : sor<seq<short_option<Short>, sor<seq<word_end, must<Separate>>, Arg>>,
                                  seq<Long, sor<seq<word_end, must<Separate>>, seq<one<'='>, must<Arg>>>>> {};
// An option without argument, as a whole word: `-f`, `--fragment`.
template <char Short, typename Long> struct option_flag : seq<sor<short_option<Short>, Long>, word_end> {};

// ---- commands (iptables(8) COMMANDS) -------------------------------------------------------------
// iptables-restore takes the quotes off a command's words too (`-A "INPUT"`), as off any argument.
struct command_chain : word {};
struct new_chain_name : word {};
// `1` or `"1"` (quoted like any word)
struct rule_number : seq<sor<plus<digit>, seq<one<'"'>, plus<digit>, one<'"'>>>, word_end> {};
struct policy_target : word {};
// The arguments of commands after blanks, each with its own error message.
struct chain_argument : seq<blanks, command_chain> {};
struct number_argument : seq<blanks, rule_number> {};
struct policy_argument : seq<blanks, policy_target> {};
struct new_name_argument : seq<blanks, new_chain_name> {};
// A chain argument that is there only when the next word is not an option (`-F`, `-X`, `-Z`).
struct optional_chain : seq<blanks, not_at<one<'-', '!'>>, command_chain> {};

template <char Short, typename Long> struct chain_command : option_with_argument<Short, Long, command_chain, chain_argument> {};
struct append_command : chain_command<'A', long_option<TAO_PEGTL_STRING("append")>> {};
// -I CHAIN [n]
struct insert_command : seq<chain_command<'I', long_option<TAO_PEGTL_STRING("insert")>>, opt<number_argument>> {};
// -D CHAIN n   or   -D CHAIN rule-specification
struct delete_command : seq<chain_command<'D', long_option<TAO_PEGTL_STRING("delete")>>, opt<number_argument>> {};
// -R CHAIN n rule-specification
struct replace_command : seq<chain_command<'R', long_option<TAO_PEGTL_STRING("replace")>>, must<number_argument>> {};
struct check_command : chain_command<'C', long_option<TAO_PEGTL_STRING("check")>> {};
struct new_chain_command : chain_command<'N', sor<long_option<TAO_PEGTL_STRING("new-chain")>, long_option<TAO_PEGTL_STRING("new")>>> {};
// -P INPUT DROP
struct policy_command : seq<chain_command<'P', long_option<TAO_PEGTL_STRING("policy")>>, must<policy_argument>> {};
// -E OLD NEW
struct rename_command : seq<chain_command<'E', long_option<TAO_PEGTL_STRING("rename-chain")>>, must<new_name_argument>> {};
// -F [CHAIN]   -X [CHAIN]   -Z [CHAIN [n]]
struct flush_command : seq<option_flag<'F', long_option<TAO_PEGTL_STRING("flush")>>, opt<optional_chain>> {};
struct delete_chain_command : seq<option_flag<'X', long_option<TAO_PEGTL_STRING("delete-chain")>>, opt<optional_chain>> {};
struct zero_command : seq<option_flag<'Z', long_option<TAO_PEGTL_STRING("zero")>>, opt<optional_chain, opt<number_argument>>> {};
// -L / -S list the kernel's rules: not restore input.
struct list_command : sor<option_flag<'L', long_option<TAO_PEGTL_STRING("list")>>, option_flag<'S', long_option<TAO_PEGTL_STRING("list-rules")>>> {};
struct command : sor<append_command, insert_command, delete_command, replace_command, check_command,
                     new_chain_command, policy_command, rename_command, flush_command, delete_chain_command,
                     zero_command, list_command> {};

// ---- rule specification (iptables(8) PARAMETERS) --------------------------------------------------
// `!` before an option inverts it.
struct negation : seq<one<'!'>, word_end> {};
// `-s ! 1.2.3.4`: the intrapositioned form of iptables 1.4, read only to be refused with its place
// (iptables 1.8 does not take it).
struct inner_negation : seq<one<'!'>, blanks> {};
struct match_argument : word {};
struct match_value : seq<blanks, opt<inner_negation>, match_argument> {};
template <char Short, typename Long> struct base_option : option_with_argument<Short, Long, match_argument, match_value> {};
// -s 10.0.0.0/8   -s 1.2.3.4,5.6.7.8   ! -s ::1/128   --source=1.2.3.4   -s1.2.3.4
struct source_match : base_option<'s', sor<long_option<TAO_PEGTL_STRING("source")>, long_option<TAO_PEGTL_STRING("src")>>> {};
struct destination_match : base_option<'d', sor<long_option<TAO_PEGTL_STRING("destination")>, long_option<TAO_PEGTL_STRING("dst")>>> {};
// -i eth0   -o veth+
struct in_interface_match : base_option<'i', long_option<TAO_PEGTL_STRING("in-interface")>> {};
struct out_interface_match : base_option<'o', long_option<TAO_PEGTL_STRING("out-interface")>> {};
// -p tcp   -p 47   -p all
struct protocol_match : base_option<'p', long_option<TAO_PEGTL_STRING("protocol")>> {};
struct fragment_match : option_flag<'f', long_option<TAO_PEGTL_STRING("fragment")>> {};

// -m comment (iptables(8) `-m, --match`)
struct module_name : word {};
struct module_argument : seq<blanks, module_name> {};
struct match_clause : option_with_argument<'m', long_option<TAO_PEGTL_STRING("match")>, module_name, module_argument> {};
// -j DNAT   -g KUBE-SVC-XYZ
struct target_name : word {};
struct target_argument : seq<blanks, target_name> {};
struct jump_clause : option_with_argument<'j', long_option<TAO_PEGTL_STRING("jump")>, target_name, target_argument> {};
struct goto_clause : option_with_argument<'g', long_option<TAO_PEGTL_STRING("goto")>, target_name, target_argument> {};
// -c 12 345   -c 12,345 (iptables(8) `-c, --set-counters`)
struct counter_packets : plus<digit> {};
struct counter_bytes : seq<plus<digit>, word_end> {};
struct bytes_argument : seq<blanks, counter_bytes> {};
struct counter_pair : seq<counter_packets, sor<seq<one<','>, counter_bytes>, seq<word_end, must<bytes_argument>>>> {};
struct packets_argument : seq<blanks, counter_pair> {};
struct set_counters_clause : option_with_argument<'c', long_option<TAO_PEGTL_STRING("set-counters")>, counter_pair, packets_argument> {};
// -4 / -6 (iptables-restore input shared by both tools)
struct ipv4_clause : option_flag<'4', long_option<TAO_PEGTL_STRING("ipv4")>> {};
struct ipv6_clause : option_flag<'6', long_option<TAO_PEGTL_STRING("ipv6")>> {};
// -t nat: not allowed in restore input (the table comes from the `*table` header)
struct table_clause : seq<sor<short_option<'t'>, long_option<TAO_PEGTL_STRING("table")>>, opt<plain_chars>> {};

// ---- module and target options: --dport 80, --to-destination 10.0.0.1:80, --tcp-flags SYN,ACK SYN ---
struct option_name : seq<two<'-'>, alnum, name_chars> {};
struct option_argument : word {};
struct argument_separator : blanks {};
// An argument the option requires is taken whatever it looks like (getopt does so: `--comment -x`).
struct required_argument : seq<argument_required, must<argument_separator>, must<option_argument>> {};
// An optional argument (generic modules, optional values) is taken only when it does not look like
// the next option.
struct option_like : sor<seq<one<'-'>, not_at<digit>>, seq<one<'!'>, blanks, one<'-'>>> {};
struct optional_argument : seq<argument_optional, blanks, not_at<option_like>, option_argument> {};
// --dport 80   --dport=80   --tcp-flags SYN,ACK SYN   --reap
struct module_option : seq<option_name, sor<seq<one<'='>, option_argument>, word_end>, star<required_argument>,
                           star<optional_argument>> {};

// Anything else is an error (iptables-restore: "Bad argument", "unknown option").
struct unexpected_word : word {};

// The options of iptables itself (commands and PARAMETERS), as opposed to those of modules.
struct builtin_clause : sor<command, source_match, destination_match, protocol_match, in_interface_match,
                            out_interface_match, fragment_match, match_clause, jump_clause, goto_clause,
                            set_counters_clause, ipv4_clause, ipv6_clause, table_clause> {};
// clang-format on

/// `-X...`: the clause of a short option of iptables, chosen by its letter (one switch where a `sor`
/// would try every option in turn; rule lines are mostly short options).
struct short_clause {
  using rule_t = short_clause;
  using subs_t = type_list<append_command, insert_command, delete_command, replace_command, check_command,
                           new_chain_command, policy_command, rename_command, flush_command, delete_chain_command,
                           zero_command, list_command, source_match, destination_match, protocol_match,
                           in_interface_match, out_interface_match, fragment_match, match_clause, jump_clause,
                           goto_clause, set_counters_clause, ipv4_clause, ipv6_clause, table_clause>;
  template <apply_mode A, rewind_mode M, template <typename...> class Action, template <typename...> class Control,
            typename ParseInput, typename... States>
  static bool match(ParseInput& in, States&... st) {
    if (in.size(2) < 2 || in.peek_char(0) != '-') return false;
    switch (in.peek_char(1)) {
#define NFLENS_SHORT(c, rule) \
  case c:                     \
    return Control<rule>::template match<A, M, Action, Control>(in, st...);
      NFLENS_SHORT('A', append_command)
      NFLENS_SHORT('I', insert_command)
      NFLENS_SHORT('D', delete_command)
      NFLENS_SHORT('R', replace_command)
      NFLENS_SHORT('C', check_command)
      NFLENS_SHORT('N', new_chain_command)
      NFLENS_SHORT('P', policy_command)
      NFLENS_SHORT('E', rename_command)
      NFLENS_SHORT('F', flush_command)
      NFLENS_SHORT('X', delete_chain_command)
      NFLENS_SHORT('Z', zero_command)
      NFLENS_SHORT('L', list_command)
      NFLENS_SHORT('S', list_command)
      NFLENS_SHORT('s', source_match)
      NFLENS_SHORT('d', destination_match)
      NFLENS_SHORT('p', protocol_match)
      NFLENS_SHORT('i', in_interface_match)
      NFLENS_SHORT('o', out_interface_match)
      NFLENS_SHORT('f', fragment_match)
      NFLENS_SHORT('m', match_clause)
      NFLENS_SHORT('j', jump_clause)
      NFLENS_SHORT('g', goto_clause)
      NFLENS_SHORT('c', set_counters_clause)
      NFLENS_SHORT('4', ipv4_clause)
      NFLENS_SHORT('6', ipv6_clause)
      NFLENS_SHORT('t', table_clause)
#undef NFLENS_SHORT
      default:
        return false;
    }
  }
};

// clang-format off
// A clause: `!`, a short option of iptables, a long one (`--append`: told from module options such as
// `--dport` by `builtin_long_option` before any of them is tried), a module option, or an error.
struct clause : sor<negation, short_clause, seq<builtin_long_option, builtin_clause>, module_option,
                    unexpected_word> {};
// [12:345] -A INPUT -s 10.0.0.0/8 -p tcp -m tcp --dport 22 -j ACCEPT
struct rule_line : seq<opt<counters, blanks>, clause, star<blanks, clause>> {};

// ---- lines and file -------------------------------------------------------------------------------
/// Thrown (by the parser's control, after it has recorded the diagnostic) to abandon a line.
struct line_abandoned {};

struct line_start : success {};
struct line_content : sor<comment_line, table_header, chain_decl, commit, rule_line> {};
// Blanks before and after the content. iptables-restore tells `#`, `*`, `:` and `COMMIT` lines by their
// first byte (and COMMIT by the whole line): indented, or COMMIT with blanks after it, they are rule
// lines it refuses, and so is a line of blanks only; the parser reports those.
struct line_indent : star<blank> {};
struct line_trail : star<blank> {};
struct line : seq<line_start, line_indent, opt<line_content>, line_trail, opt<after_closing_quote, raise<glued_to_quote>>,
                  must<line_end>> {};
// After an error the rest of the line is skipped so that the next line is read normally.
struct skipped_line : seq<star<not_one<'\n'>>, opt<one<'\n'>>> {};
struct line_or_skip : sor<try_catch_type<line_abandoned, line>, skipped_line> {};

// clang-format on

/// One line, read or (after an error) skipped. Everywhere but at the end of the input it consumes at
/// least the line end; this rule checks that, so that `restore_file` provably advances.
struct checked_line {
  using rule_t = checked_line;
  using subs_t = type_list<line_or_skip>;
  template <apply_mode A, rewind_mode M, template <typename...> class Action, template <typename...> class Control,
            typename ParseInput, typename... States>
  static bool match(ParseInput& in, States&... st) {
    const auto* const before = in.current();
    return Control<line_or_skip>::template match<A, M, Action, Control>(in, st...) && in.current() != before;
  }
};

// clang-format off
// The whole input: lines until its end.
struct restore_file : until<eof, checked_line> {};

// clang-format on

}  // namespace nflens::iptables::grammar

// The predicates consume nothing and may succeed: tell the grammar analysis so.
template <typename Name>
struct tao::pegtl::analyze_traits<Name, nflens::iptables::grammar::argument_required> : analyze_opt_traits<> {};
template <typename Name>
struct tao::pegtl::analyze_traits<Name, nflens::iptables::grammar::argument_optional> : analyze_opt_traits<> {};
template <typename Name>
struct tao::pegtl::analyze_traits<Name, nflens::iptables::grammar::builtin_long_option> : analyze_opt_traits<> {};
template <typename Name>
struct tao::pegtl::analyze_traits<Name, nflens::iptables::grammar::plain_chars> : analyze_any_traits<> {};
template <typename Name>
struct tao::pegtl::analyze_traits<Name, nflens::iptables::grammar::quoted_chars> : analyze_opt_traits<> {};
template <typename Name>
struct tao::pegtl::analyze_traits<Name, nflens::iptables::grammar::name_chars> : analyze_opt_traits<> {};
template <typename Name>
struct tao::pegtl::analyze_traits<Name, nflens::iptables::grammar::after_closing_quote> : analyze_opt_traits<> {};
template <typename Name>
struct tao::pegtl::analyze_traits<Name, nflens::iptables::grammar::checked_line>
    : analyze_any_traits<nflens::iptables::grammar::line_or_skip> {};
template <typename Name>
struct tao::pegtl::analyze_traits<Name, nflens::iptables::grammar::short_clause>
    : analyze_traits<Name, typename nflens::iptables::grammar::builtin_clause::rule_t> {};
