// SPDX-License-Identifier: MIT
// The iptables parser: the grammar of grammars/iptables.hpp with the actions that build the AST. The
// only translation unit that includes that grammar.
//
// One pass over the text with a PEGTL memory_input (lazy position tracking: positions are computed
// from byte offsets only for diagnostics). Words are views into the text; only quoted words that
// differ from their source (escapes, glued quotes) are copied, into the source's arena. A rule line's
// clauses are collected in scratch vectors that live as long as the parse; at the end of the line the
// rule's arrays (addresses, matches, options) are copied once into the arena.
#include <nflens/iptables.hpp>

#include "iptables.hpp"
#include "iptables_errors.hpp"
#include "modules.hpp"
#include "tree_memory.hpp"
#include "values.hpp"

#include <fmt/format.h>

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstddef>
#include <memory>
#include <unordered_map>

namespace nflens::iptables {

namespace {

namespace pegtl = tao::pegtl;
namespace g = grammar;
using detail::argument;
using detail::module_spec;
using detail::option_spec;
using detail::value_error;

/// Thrown when the error cap is reached: the parse stops.
struct stop_parsing {};

static_assert(static_cast<int>(option_id::tproxy_mark) < 256, "seen_options_ is indexed by option_id");

enum class line_kind : std::uint8_t { none, comment, table, chain, commit, rule };

struct pending_option {
  const option_spec* spec = nullptr;  // null: generic module or target
  std::string_view name;              // as written, without dashes
  int owner = -1;                     // index into matches, or -1 for the target
  bool negated = false;
  std::uint32_t begin = 0;  // offset of `!` or `--`
  std::uint32_t end = 0;    // end of the last argument
  std::uint32_t first_arg = 0;
  std::uint32_t arg_count = 0;
};

struct pending_match {
  const module_spec* spec = nullptr;  // null: generic
  std::string_view name;
  span where{};
  bool implicit = false;
};

struct base_clause {
  bool present = false;
  bool negated = false;
  std::string_view text;  // decoded argument
  span where{};           // the argument as written
  span option{};          // from `!`/`-x` to the end of the argument
};

struct generic_use {
  span first{};  // where the warning points
  std::size_t count = 0;
};
/// An unmodelled match module or target, by name (a view into the source or a static table).
struct generic_key {
  std::string_view name;
  bool is_target = false;
  friend bool operator==(const generic_key&, const generic_key&) = default;
};
struct generic_key_hash {
  std::size_t operator()(const generic_key& k) const noexcept {
    return std::hash<std::string_view>{}(k.name) * 2 + (k.is_target ? 1 : 0);
  }
};

class parser {
 public:
  parser(source& src, diagnostic_sink& sink, const parse_options& opts, ruleset& out)
      : src_(src),
        base_(src.text().data()),
        sink_(sink),
        opts_(opts),
        out_(out),
        generic_uses_(nflens::detail::charged_allocator<char>(src)),
        generic_keys_(nflens::detail::charged_allocator<char>(src)) {
    if (opts.family) {
      family_ = *opts.family;
      family_known_ = true;
    }
  }

  // ---- helpers used by actions ----------------------------------------------------------------
  std::uint32_t offset(const char* p) const noexcept { return static_cast<std::uint32_t>(p - base_); }
  span span_of(std::string_view raw) const noexcept {
    return {offset(raw.data()), static_cast<std::uint32_t>(raw.size())};
  }

  /// Records an error and abandons the line.
  [[noreturn]] void fail(error_code code, span where, std::string message) {
    if (!sink_.error(code, where, std::move(message))) throw stop_parsing{};
    if (sink_.full()) throw stop_parsing{};
    throw g::line_abandoned{};
  }
  void warn(error_code code, span where, std::string message) { sink_.warning(code, where, std::move(message)); }

  /// The word as iptables-restore passes it on: quotes removed, escapes resolved.
  std::string_view decode_word(std::string_view raw) {
    if (raw.find('"') == std::string_view::npos) return raw;
    // `"text"` without escapes is its inside, a view into the source like an unquoted word
    if (raw.size() >= 2 && raw.front() == '"' && raw.back() == '"') {
      const std::string_view inside = raw.substr(1, raw.size() - 2);
      if (inside.find_first_of("\"\\") == std::string_view::npos) return inside;
    }
    // Measured first, then written straight into the arena: a token of any size is copied once.
    const auto unquote = [raw](auto&& emit) {
      bool quoted = false;
      for (std::size_t i = 0; i < raw.size(); ++i) {
        const char c = raw[i];
        if (c == '"')
          quoted = !quoted;
        else if (quoted && c == '\\' && i + 1 < raw.size())
          emit(raw[++i]);
        else
          emit(c);
      }
    };
    std::size_t length = 0;
    unquote([&length](char) { ++length; });
    if (length == 0) return {};
    char* const out = static_cast<char*>(src_.allocate(length, 1));
    std::size_t at = 0;
    unquote([out, &at](char c) { out[at++] = c; });
    return {out, length};
  }

  // ---- predicates for the grammar -------------------------------------------------------------
  bool argument_required() const noexcept { return required_ > 0; }
  bool argument_optional() const noexcept { return optional_; }

  // ---- line events ----------------------------------------------------------------------------
  void indent(span s) noexcept { indent_ = s; }
  void trail(span s) noexcept { trail_ = s; }
  /// What iptables-restore refuses about a line's blanks (see grammars/iptables.hpp `line`); not in
  /// lenient mode, which reads hand-written `iptables -S` lines.
  void check_blanks() {
    if (opts_.lenient) return;
    const char* what = nullptr;
    span where = indent_;
    if (indent_.length != 0) {
      switch (kind_) {
        case line_kind::none:
          what = "a line of blanks only: iptables-restore reads it as a rule without a command (\"no command "
                 "specified\")";
          break;
        case line_kind::comment:
        case line_kind::table:
        case line_kind::chain:
        case line_kind::commit:
          what = "blanks before a `#`, `*`, `:` or COMMIT line: iptables-restore reads the line as a rule and "
                 "refuses it (\"Bad argument\")";
          break;
        case line_kind::rule:
          break;
      }
    }
    if (what == nullptr && kind_ == line_kind::commit && trail_.length != 0) {
      what = "blanks after COMMIT: iptables-restore reads the line as a rule and refuses it (\"Bad argument\")";
      where = trail_;
    }
    if (what == nullptr) return;
    sink_.error(error_code::syntax, where, what);
    if (sink_.full()) throw stop_parsing{};
  }

  /// Offset of the line being parsed (where an error about the line as a whole is reported).
  [[nodiscard]] std::uint32_t line_begin() const noexcept { return line_begin_; }

  void start_line(const char* at) {
    ++line_number_;
    kind_ = line_kind::none;
    words_ = 0;
    words_from_ = nullptr;
    words_counted_ = false;
    last_keyword_ = {};
    word_quoted_ = false;
    line_begin_ = offset(at);
    content_begin_ = content_end_ = line_begin_;
    indent_ = trail_ = {};
    has_counters_ = false;
    word_ = {};
    chain_word_ = {};
    number_ = 0;
    has_number_ = false;
    policy_word_ = {};
    new_name_ = {};
    command_set_ = false;
    command_where_ = {};
    pending_negation_ = false;
    inner_negation_ = false;
    for (auto* b : {&source_, &destination_, &in_iface_, &out_iface_, &protocol_}) *b = {};
    fragment_ = {};
    matches_.clear();
    latest_.fill(-1);
    loaded_typed_.clear();
    implicit_generic_.clear();
    options_.clear();
    args_.clear();
    target_name_ = {};
    target_where_ = {};
    target_spec_ = nullptr;
    target_at_ = 0;
    target_id_ = target_id::none;
    target_goto_ = false;
    only_ = family_filter::any;
    set_counters_ = false;
    required_ = 0;
    optional_ = false;
    current_option_ = -1;
  }

  void content(const char* begin, const char* end) {
    content_begin_ = offset(begin);
    content_end_ = offset(end);
  }

  void comment(std::string_view text) {
    kind_ = line_kind::comment;
    // `# Generated by ip6tables-save v1.8.9 ...` tells the family of a dump.
    if (!family_known_ && text.rfind("# Generated by ", 0) == 0) {
      if (text.find("ip6tables-") != std::string_view::npos) {  // ip6tables-save, ip6tables-nft-save
        family_ = ip_family::ipv6;
        family_known_ = true;
      } else if (text.find("iptables-save") != std::string_view::npos) {
        family_ = ip_family::ipv4;
        family_known_ = true;
      }
    }
  }

  void table_header(std::string_view name, span where) {
    kind_ = line_kind::table;
    const auto id = parse_table_name(name);
    if (!id)
      fail(error_code::unknown_table, where,
           fmt::format("unknown table `{}` (expected filter, nat, mangle, raw or security)", detail::clip(name)));
    table_id_ = *id;
  }

  void chain_declaration(std::string_view name, span name_where) {
    kind_ = line_kind::chain;
    validate_chain_name(name, name_where, true, clash::verdicts);
    decl_name_ = name;
    decl_where_ = name_where;
  }

  void commit() { kind_ = line_kind::commit; }

  // counters of `[p:b]` and `:CHAIN POLICY [p:b]`
  void packets(std::string_view digits) { counters_.packets = parse_count(digits); }
  void bytes(std::string_view digits) {
    counters_.bytes = parse_count(digits);
    has_counters_ = true;
  }

  // rule line clauses
  /// A `word` (which may hold quotes) as iptables-restore passes it on.
  std::string_view take_word(std::string_view raw) {
    if (!word_quoted_) return raw;
    word_quoted_ = false;
    return decode_word(raw);
  }
  void saw_quote() noexcept { word_quoted_ = true; }
  void word(std::string_view raw) { word_ = {take_word(raw), span_of(raw)}; }
  // plain words (no quotes in the grammar): chain, module, target and policy names
  // A command's words are decoded as iptables-restore decodes every word (quotes off, escapes resolved).
  void chain_word(std::string_view raw) { chain_word_ = {decode_word(raw), span_of(raw)}; }
  void rule_number(std::string_view digits) {
    if (digits.size() >= 2 && digits.front() == '"') digits = digits.substr(1, digits.size() - 2);
    const auto v = detail::parse_number(digits, 0xffffffff);
    if (!v || *v == 0)
      fail(error_code::invalid_number, span_of(digits), fmt::format("invalid rule number `{}`", detail::clip(digits)));
    number_ = static_cast<std::uint32_t>(*v);
    has_number_ = true;
  }
  void policy_word(std::string_view raw) { policy_word_ = {decode_word(raw), span_of(raw)}; }
  void new_name(std::string_view raw) { new_name_ = {decode_word(raw), span_of(raw)}; }

  void set_command(command_kind c, std::string_view keyword_text, const char* begin) {
    if (!chain_word_.text.empty()) validate_chain_name(chain_word_.text, chain_word_.where, false);
    if (command_set_)
      fail(error_code::duplicate_option, {offset(begin), static_cast<std::uint32_t>(keyword_text.size())},
           "only one command per line");
    no_negation(offset(begin));
    command_set_ = true;
    command_ = c;
    command_where_ = {offset(begin), static_cast<std::uint32_t>(keyword_text.size())};
    command_chain_ = chain_word_;
    command_number_ = has_number_ ? number_ : 0;
    command_policy_ = policy_word_;
    command_new_name_ = new_name_;
    chain_word_ = {};
    has_number_ = false;
  }

  void negation(const char* at) {
    if (pending_negation_) fail(error_code::misplaced_negation, {offset(at), 1}, "multiple `!` flags are not allowed");
    pending_negation_ = true;
    negation_at_ = offset(at);
  }
  void inner_negation(const char* at) {
    inner_negation_ = true;
    inner_negation_at_ = offset(at);
  }

  void base_match(base_clause& b, std::string_view option_text, const char* begin, const char* end) {
    const std::uint32_t start = pending_negation_ ? negation_at_ : offset(begin);
    if (b.present)
      fail(error_code::duplicate_option, {offset(begin), static_cast<std::uint32_t>(end - begin)},
           fmt::format("{} may be given only once", option_text));
    // `-s ! 1.2.3.4`, the form iptables 1.4 read: 1.8 takes the `!` as the option's argument and then
    // refuses the word after it (or, for -p, the protocol `!`), checked with iptables-restore 1.8.9
    if (inner_negation_) {
      const bool protocol = &b == &protocol_;
      fail(error_code::misplaced_negation, {inner_negation_at_, 1},
           fmt::format("`!` after {0} is the old negation form, which iptables 1.8 does not read: write `! {0} {1}` "
                       "(iptables-restore: \"{2}\")",
                       option_text, detail::clip(word_.text),
                       protocol ? std::string("unknown protocol \"!\" specified")
                                : fmt::format("Bad argument `{}'", detail::clip(word_.text))));
    }
    b.present = true;
    b.negated = pending_negation_;
    b.text = word_.text;
    b.where = word_.where;
    b.option = {start, offset(end) - start};
    pending_negation_ = false;
  }
  base_clause& source_clause() { return source_; }
  base_clause& destination_clause() { return destination_; }
  base_clause& in_clause() { return in_iface_; }
  base_clause& out_clause() { return out_iface_; }
  base_clause& protocol_clause() { return protocol_; }

  void fragment(const char* begin, const char* end) {
    const std::uint32_t start = pending_negation_ ? negation_at_ : offset(begin);
    if (fragment_.present) fail(error_code::duplicate_option, {offset(begin), 2}, "-f may be given only once");
    fragment_.present = true;
    fragment_.negated = pending_negation_;
    fragment_.where = {start, offset(end) - start};
    pending_negation_ = false;
  }

  void family_only(family_filter f, const char* at) {
    no_negation(offset(at));
    only_ = f;
  }

  void set_counters_clause(std::string_view packets_text, std::string_view bytes_text, span where) {
    no_negation(where.offset);
    if (set_counters_ || has_counters_) fail(error_code::duplicate_option, where, "counters given twice");
    counters_.packets = parse_count(packets_text);
    counters_.bytes = parse_count(bytes_text);
    set_counters_ = true;
  }
  void counter_packets(std::string_view digits) { counter_packets_ = digits; }
  void counter_bytes(std::string_view text) { counter_bytes_ = text; }
  std::string_view counter_packets_text() const { return counter_packets_; }
  std::string_view counter_bytes_text() const { return counter_bytes_; }

  void table_option(span where) {
    fail(error_code::unknown_option, where, "the -t option cannot be used in iptables-restore input (use `*table`)");
  }

  void list_command(span where) {
    fail(error_code::unknown_option, where, "-L and -S list the kernel's rules; they are not iptables-restore input");
  }

  void match_module(std::string_view raw_name, const char* begin) {
    const std::string_view name = decode_word(raw_name);
    const span where{offset(begin), offset(raw_name.data() + raw_name.size()) - offset(begin)};
    if (pending_negation_) fail(error_code::misplaced_negation, {negation_at_, 1}, "`!` cannot be used before -m");
    if (name.size() > 28)  // XT_EXTENSION_MAXNAMELEN
      fail(error_code::invalid_value, word_span(raw_name),
           fmt::format("module name `{}` is longer than 28 bytes", detail::clip(name)));
    const module_spec* spec = detail::find_match_module(name);
    const std::string_view canonical = spec ? spec->name : detail::canonical_module_name(name);
    add_match({spec, canonical, where, false});
    if (spec == nullptr) note_generic(canonical, where, false);
  }

  void jump(std::string_view raw_name, const char* begin, bool is_goto) {
    const std::string_view name = decode_word(raw_name);
    const span where{offset(begin), offset(raw_name.data() + raw_name.size()) - offset(begin)};
    if (pending_negation_)
      fail(error_code::misplaced_negation, {negation_at_, 1}, "`!` cannot be used before -j or -g");
    if (target_id_ != target_id::none) fail(error_code::duplicate_option, where, "only one -j or -g per rule");
    target_name_ = name;
    target_where_ = where;
    target_goto_ = is_goto;
    target_spec_ = detail::find_target_module(name);
    target_at_ = matches_.size();
    if (target_spec_ != nullptr) {
      target_id_ = target_spec_->target;
    } else if (detail::is_known_target_extension(name)) {
      target_id_ = target_id::generic;
      note_generic(name, where, true);
    } else {
      target_id_ = target_id::chain;
      validate_chain_name(name, word_span(raw_name), false);
    }
    if (is_goto && target_id_ != target_id::chain)
      fail(error_code::invalid_value, where, fmt::format("-g needs a user-defined chain, `{}` is a target", name));
  }

  // ---- options ----------------------------------------------------------------------------------
  void option_name(std::string_view text, const char* begin) {
    const std::string_view name = text.substr(2);
    const std::uint32_t start = pending_negation_ ? negation_at_ : offset(begin);
    const bool negated = pending_negation_;
    pending_negation_ = false;

    pending_option opt;
    opt.name = name;
    opt.negated = negated;
    opt.begin = start;
    opt.end = offset(begin) + static_cast<std::uint32_t>(text.size());
    opt.first_arg = static_cast<std::uint32_t>(args_.size());

    if (!resolve_owner(opt)) {
      // `-p PROTO` loads the protocol's module for an option nothing else takes.
      if (!load_implicit(opt))
        fail(error_code::unknown_option, {offset(begin), static_cast<std::uint32_t>(text.size())},
             fmt::format("unknown option `{}`: no module of this rule takes it{}", detail::clip(text),
                         protocol_.present ? "" : " (a protocol match needs `-p` first)"));
    }
    if (opt.spec != nullptr) {
      if (negated && !opt.spec->negatable)
        fail(error_code::misplaced_negation, {start, 1},
             fmt::format("`{}` cannot be negated with `!`", detail::clip(text)));
      required_ = opt.spec->arguments;
      optional_ = false;
    } else {
      required_ = 0;
      optional_ = true;
    }
    options_.push_back(opt);
    current_option_ = static_cast<int>(options_.size()) - 1;
  }

  void option_argument(std::string_view raw) {
    if (args_.size() >= max_words) too_many_words(span_of(raw));  // before a clause's end: see max_words
    const std::string_view text = take_word(raw);  // `""` is an empty argument
    args_.push_back({text, span_of(raw)});
    if (current_option_ >= 0) {
      auto& o = options_[static_cast<std::size_t>(current_option_)];
      ++o.arg_count;
      o.end = offset(raw.data() + raw.size());
    }
    if (required_ > 0) --required_;
  }

  void end_option() {
    required_ = 0;
    optional_ = false;
    current_option_ = -1;
  }

  void unexpected(std::string_view raw) {
    const span where = span_of(raw);
    if (!raw.empty() && raw[0] == '-')
      fail(error_code::unknown_option, where, fmt::format("unknown option `{}`", detail::clip(raw)));
    fail(error_code::syntax, where,
         fmt::format("unexpected argument `{}` (iptables-restore: \"Bad argument\")", detail::clip(take_word(raw))));
  }

  void bad_glued(span where) { fail(error_code::syntax, where, "unexpected text"); }

  /// iptables-restore (1.8.9, xshared.c) splits a line after its `[packets:bytes]` into at most 251 words
  /// (blank-separated, a quoted part with its blanks one word) and refuses longer lines ("Parser cannot
  /// handle more arguments"); so does this, which also bounds the per-rule work (options are matched
  /// against the modules loaded before them, which would otherwise grow with the square of the line's
  /// length) and the arguments kept (`option_argument` stops a clause with more arguments than that).
  static constexpr std::uint32_t max_words = 251;
  /// `iptables-restore -c` turns a `[packets:bytes]` prefix into three words (`-c P B`) of the 251: a line
  /// with one reads at most 248 more. Without `-c` the prefix is dropped and 251 are read, so more than
  /// 248 is a warning, not an error.
  static constexpr std::uint32_t max_words_with_counters = max_words - 3;
  /// Counting is skipped while the line's clauses take at most 2 x the limit in bytes: 249 words need at
  /// least 497 (kube-proxy's lines are shorter, and counting every line cost a fifth of the parse).
  void clause(const char* begin, const char* end) {
    const std::uint32_t limit = has_counters_ ? max_words_with_counters : max_words;
    if (!words_counted_) {
      if (words_from_ == nullptr) words_from_ = begin;
      if (end - words_from_ <= 2 * static_cast<std::ptrdiff_t>(limit)) return;
      words_counted_ = true;  // from the line's first clause on, once
    } else {
      words_from_ = begin;
    }
    const std::uint32_t before = words_;
    words_ += count_words(words_from_, end);
    if (words_ <= limit) return;
    const span where{offset(begin), offset(end) - offset(begin)};
    if (words_ > max_words) too_many_words(where);
    if (before <= limit)
      warn(error_code::input_too_large, where,
           fmt::format("more than {} words after a `[packets:bytes]` prefix: `iptables-restore -c` reads at most {} "
                       "(the counters take three of its {}); without -c it reads them",
                       max_words_with_counters, max_words_with_counters, max_words));
  }
  [[noreturn]] void too_many_words(span where) {
    fail(error_code::input_too_large, where,
         fmt::format("more than {} words on one line; iptables-restore reads at most {}", max_words, max_words));
  }
  /// Words in `[p, end)` as iptables-restore splits them: blanks outside double quotes separate, a
  /// backslash inside quotes escapes the next character.
  static std::uint32_t count_words(const char* p, const char* end) noexcept {
    std::uint32_t n = 0;
    bool in_word = false;
    bool quoted = false;
    for (; p != end; ++p) {
      const char c = *p;
      if (!quoted && (c == ' ' || c == '\t')) {
        in_word = false;
        continue;
      }
      if (!in_word) {
        in_word = true;
        ++n;
      }
      if (c == '"')
        quoted = !quoted;
      else if (quoted && c == '\\' && p + 1 != end)
        ++p;
    }
    return n;
  }

  // ---- the end of a rule line: decode, check, build -----------------------------------------------
  void rule_line_end();

  // ---- the end of a line: commit what it built ------------------------------------------------------
  void line_end();
  void end_of_input();

  // ---- control: errors raised by must<> ------------------------------------------------------------
  template <typename Rule>
  [[noreturn]] void raise(const char* at, const char* end) {
    static_assert(g::error_message<Rule> != nullptr, "every rule that can raise needs an error message");
    std::string message = g::error_message<Rule>;
    if (!last_keyword_.empty()) message += fmt::format(" after `{}`", detail::clip(last_keyword_));
    // what was there instead
    const char* p = at;
    while (p < end && (*p == ' ' || *p == '\t')) ++p;
    const char* q = p;
    while (q < end && *q != ' ' && *q != '\t' && *q != '\n' && *q != '\r') ++q;
    if (p == end || *p == '\n' || (*p == '\r' && p + 1 < end && p[1] == '\n'))
      message += ", saw end of line";
    else if (*p == '\0')
      message += ", saw a NUL byte";
    else if (*p == '\r')
      message += ", saw a carriage return";
    else
      message +=
          fmt::format(", saw `{}`", std::string_view(p, static_cast<std::size_t>(std::min<std::ptrdiff_t>(q - p, 40))));
    // At the end of the input there is no byte to mark: an empty span, not one past the text.
    const std::uint32_t length = p == end ? 0 : std::max<std::uint32_t>(1, static_cast<std::uint32_t>(q - p));
    error_code code = g::error_code_of<Rule>;
    if (p < end && *p == '\0') code = error_code::invalid_character;
    fail(code, {offset(p), length}, std::move(message));
  }

  void keyword(std::string_view text) { last_keyword_ = text; }

  [[nodiscard]] ip_family family() const noexcept { return family_; }
  /// Appends to each not_modelled warning how often the module or target was used.
  void count_generic_uses(std::vector<diagnostic>& ds) const {
    for (const auto& key : generic_keys_) {
      const auto& use = generic_uses_.find(key)->second;
      if (use.count < 2) continue;
      for (auto& d : ds)
        if (d.code == error_code::not_modelled && d.where == use.first) {
          d.message += fmt::format(" ({} uses)", use.count);
          break;
        }
    }
  }
  void reserve_for(std::size_t lines) { reserve_lines_ = lines; }
  void raw(std::string_view r) { last_raw_ = r; }
  std::string_view last_raw() const noexcept { return last_raw_; }
  [[nodiscard]] bool family_known() const noexcept { return family_known_; }

 private:
  std::uint64_t parse_count(std::string_view digits) {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc{} || end != digits.data() + digits.size())
      fail(error_code::number_out_of_range, span_of(digits),
           fmt::format("counter `{}` does not fit 64 bits", detail::clip(digits)));
    return v;
  }

  span word_span(std::string_view raw) const noexcept { return span_of(raw); }

  void no_negation(std::uint32_t at) {
    (void)at;
    if (pending_negation_)
      fail(error_code::misplaced_negation, {negation_at_, 1}, "`!` must come before a match option");
  }

  /// Which target names a new chain may not take: `:NAME` lines and `-E` refuse the standard verdicts
  /// (ACCEPT, DROP, RETURN, QUEUE), `-N` also every target extension iptables can load (LOG, DNAT, ...),
  /// as iptables-restore 1.8.9 does ("chain name may not clash with target name").
  enum class clash { none, verdicts, targets };

  void validate_chain_name(std::string_view name, span where, bool declaration, clash refused = clash::none) {
    if (name.empty())  // only a quoted word can be empty (`-N ""`)
      fail(error_code::invalid_value, where, "empty chain name");
    if (name.find_first_of(" \t") != std::string_view::npos)  // a quoted word (`-N "a b"`)
      fail(error_code::invalid_value, where,
           fmt::format("chain name `{}` has a blank (iptables-restore: \"Invalid chain name\")", detail::clip(name)));
    if (name.size() > 28)
      fail(error_code::invalid_value, where,
           fmt::format("chain name `{}` is longer than 28 bytes (iptables' limit)", detail::clip(name)));
    if (declaration && (name[0] == '-' || name[0] == '!'))
      fail(error_code::invalid_value, where,
           fmt::format("chain name `{}` must not start with `-` or `!`", detail::clip(name)));
    const bool verdict = name == "ACCEPT" || name == "DROP" || name == "RETURN" || name == "QUEUE";
    // (the lowercase extension names and CONTINUE are ebtables', arptables' and nft's, not loaded here)
    const bool extension = detail::is_known_target_extension(name) && name != "CONTINUE" &&
                           !(name[0] >= 'a' && name[0] <= 'z');
    if ((refused != clash::none && verdict) || (refused == clash::targets && extension))
      fail(error_code::invalid_value, where,
           fmt::format("chain name `{}` clashes with the target of that name", name));
  }

  bool owns(const module_spec* spec, pending_option& opt) const {
    if (spec == nullptr) return false;
    if (const option_spec* o = detail::find_option(*spec, opt.name)) {
      opt.spec = o;
      return true;
    }
    return false;
  }

  // Which loaded module takes `--name`. iptables merges each extension's options in front of the
  // ones loaded before it (xtables_merge_options), so getopt_long gives an option to the extension
  // loaded last that has it: the latest module or target first, then the earlier ones, latest first.
  // nflens does not know the options of a generic extension. When one is the latest, a typed match of
  // the rule (or the `-p` protocol's, loaded as iptables loads it for an option nothing else takes)
  // that has an option of exactly this name and was not given it yet takes it
  // (`-p tcp -j TCPMSS --set-mss 1400 --dport 22`, `-j CLASSIFY --set-class 1:1 -m mark --mark 1`); the
  // generic one takes the rest.
  bool resolve_owner(pending_option& opt) {
    const bool has_target = target_id_ != target_id::none && target_id_ != target_id::chain;
    const bool target_latest = has_target && matches_.size() == target_at_;
    const bool generic_latest = target_latest ? target_spec_ == nullptr
                                              : !matches_.empty() && matches_.back().spec == nullptr;
    if (generic_latest) {
      if (has_target && target_spec_ != nullptr && owns_exactly(target_spec_, opt) && !given(-1, opt)) {
        opt.owner = -1;
        return true;
      }
      for (std::size_t k = loaded_typed_.size(); k-- > 0;) {
        const int index = latest_[static_cast<std::size_t>(loaded_typed_[k])];
        if (owns_exactly(matches_[static_cast<std::size_t>(index)].spec, opt) && !given(index, opt)) {
          opt.owner = index;
          return true;
        }
      }
      if (load_implicit(opt, true)) return true;
      opt.spec = nullptr;
      opt.owner = target_latest ? -1 : static_cast<int>(matches_.size()) - 1;
      return true;
    }
    if (has_target && target_spec_ != nullptr && owns(target_spec_, opt)) {
      opt.owner = -1;
      return true;
    }
    // the typed modules, the latest loaded first; a module loaded again (`-m recent ... -m recent`)
    // takes the options from then on
    for (std::size_t k = loaded_typed_.size(); k-- > 0;) {
      const int index = latest_[static_cast<std::size_t>(loaded_typed_[k])];
      if (owns(matches_[static_cast<std::size_t>(index)].spec, opt)) {
        opt.owner = index;
        return true;
      }
    }
    // an option of exactly that name of the `-p` protocol's module goes to that module, as when a generic
    // extension is the latest (above): otherwise the same rule, printed with the option after the generic
    // module's own, would be read back with it in the protocol's
    if (load_implicit(opt, true)) return true;
    // a generic target or module loaded before the typed ones may have it: the one loaded last (the
    // target was loaded after the first `target_at_` matches)
    const bool generic_target = has_target && target_spec_ == nullptr;
    for (std::size_t k = matches_.size() + 1; k-- > 0;) {
      opt.spec = nullptr;
      if (generic_target && k == target_at_) {
        opt.owner = -1;
        return true;
      }
      if (k > 0 && matches_[k - 1].spec == nullptr) {
        opt.owner = static_cast<int>(k - 1);
        return true;
      }
    }
    return false;
  }

  // `owns` without getopt's abbreviations: an abbreviation may as well be a generic extension's option.
  bool owns_exactly(const module_spec* spec, pending_option& opt) const {
    if (spec == nullptr) return false;
    for (const auto& o : spec->options)
      if (o.name == opt.name) {
        opt.spec = &o;
        return true;
      }
    return false;
  }
  // whether the option was given to that owner already (one that may be given once only)
  bool given(int owner, const pending_option& opt) const {
    if (opt.spec == nullptr || opt.spec->repeatable) return false;
    return std::any_of(options_.begin(), options_.end(), [&](const pending_option& p) {
      return p.owner == owner && p.spec != nullptr && p.spec->id == opt.spec->id;
    });
  }

  bool load_implicit(pending_option& opt, bool exactly = false) {
    if (!protocol_.present || protocol_.negated) return false;
    const auto proto = detail::parse_protocol_number(protocol_.text);
    if (!proto) return false;
    const std::string_view name = detail::implicit_module_name(*proto);
    if (name.empty()) return false;
    const module_spec* spec = detail::find_match_module(name);
    if (spec != nullptr) {
      if (latest_[static_cast<std::size_t>(spec->module)] >= 0 || !(exactly ? owns_exactly(spec, opt) : owns(spec, opt)))
        return false;
    } else if (exactly) {
      return false;  // a generic protocol module: the generic extension loaded last may as well have it
    } else if (std::find(implicit_generic_.begin(), implicit_generic_.end(), name) != implicit_generic_.end()) {
      return false;  // loaded already and does not take it
    } else {
      implicit_generic_.push_back(name);
    }
    const span where{opt.begin, opt.end - opt.begin};
    add_match({spec, spec ? spec->name : name, where, true});
    if (spec == nullptr) note_generic(name, where, false);
    opt.owner = static_cast<int>(matches_.size()) - 1;
    return true;
  }

  void add_match(const pending_match& m) {
    matches_.push_back(m);
    if (m.spec != nullptr) {
      const auto id = m.spec->module;
      latest_[static_cast<std::size_t>(id)] = static_cast<int>(matches_.size()) - 1;
      std::erase(loaded_typed_, id);
      loaded_typed_.push_back(id);
    }
  }

  void note_generic(std::string_view name, span where, bool is_target) {
    const generic_key key{name, is_target};
    auto [it, inserted] = generic_uses_.try_emplace(key);
    ++it->second.count;
    if (inserted) {
      it->second.first = where;
      warn(error_code::not_modelled, where,
           fmt::format("{} `{}` is not modelled: kept with its options as written",
                       is_target ? "target" : "match module", detail::clip(name)));
      generic_keys_.push_back(key);
    }
  }

  table* open_table();
  /// Starts a table block (`*name`, or the implicit one of lenient input) and makes it the current one.
  table& add_table(table_id id, span where, bool implicit) {
    src_.charge(sizeof(table));  // the table list is part of the tree (limits::max_tree_bytes)
    table t;
    t.id = id;
    t.file = &src_;
    t.where = where;
    reserve(t);
    out_.tables.push_back(std::move(t));
    table_ = static_cast<int>(out_.tables.size()) - 1;
    implicit_table_ = implicit;
    return out_.tables.back();
  }
  // Room for the rest of the input: untouched capacity costs address space, not memory. Large
  // vectors ask for transparent huge pages (fewer page faults while they fill). Only the first block of
  // each table gets it (at most five reservations): a file of 40,000 `*filter` blocks reserved the rest
  // of the input for each, quadratic in time and address space, until the reservation failed.
  void reserve(table& t) {
    const auto bit = 1u << static_cast<unsigned>(t.id);
    if ((reserved_tables_ & bit) != 0) return;
    reserved_tables_ |= bit;
    const std::size_t rest = reserve_lines_ > line_number_ ? reserve_lines_ - line_number_ : 0;
    t.rules.reserve(rest);
    t.chains.reserve(rest);
    advise_huge_pages(t.rules.data(), t.rules.capacity() * sizeof(rule));
    advise_huge_pages(t.chains.data(), t.chains.capacity() * sizeof(chain));
  }
  static void advise_huge_pages(const void* data, std::size_t bytes) noexcept {
#ifdef MADV_HUGEPAGE
    constexpr std::uintptr_t huge = std::uintptr_t{2} << 20;
    const auto begin = (reinterpret_cast<std::uintptr_t>(data) + huge - 1) & ~(huge - 1);
    const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(huge - 1);
    if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
    (void)data;
    (void)bytes;
#endif
  }
  // whether an option may be given more than once in one module
  bool repeatable(option_id id) const {
    for (const auto& p : options_)
      if (p.spec != nullptr && p.spec->id == id) return p.spec->repeatable;
    return false;
  }
  ip_family line_family();
  std::optional<ip_family> family_hint() const;
  void decode_addresses(const base_clause& b, ip_family family, std::vector<address_match>& out);
  void build_rule();

  source& src_;
  const char* base_;
  diagnostic_sink& sink_;
  const parse_options& opts_;
  ruleset& out_;

  ip_family family_ = ip_family::ipv4;
  bool family_known_ = false;
  int table_ = -1;  // the open table block
  bool implicit_table_ = false;

  // line state
  line_kind kind_ = line_kind::none;
  std::uint32_t line_begin_ = 0, content_begin_ = 0, content_end_ = 0;
  span indent_{}, trail_{};  // the line's blanks before and after its content
  struct counters counters_ {};
  bool has_counters_ = false;
  bool set_counters_ = false;
  std::string_view counter_packets_, counter_bytes_;
  argument word_{}, chain_word_{}, policy_word_{}, new_name_{};
  std::uint32_t number_ = 0;
  bool has_number_ = false;
  table_id table_id_ = table_id::filter;
  std::string_view decl_name_;
  span decl_where_{};
  bool command_set_ = false;
  command_kind command_ = command_kind::append;
  span command_where_{};
  argument command_chain_{}, command_policy_{}, command_new_name_{};
  std::uint32_t command_number_ = 0;
  bool pending_negation_ = false;
  bool word_quoted_ = false;
  std::uint32_t negation_at_ = 0;
  bool inner_negation_ = false;  // `-s ! ADDR`, refused in base_match
  std::uint32_t inner_negation_at_ = 0;
  base_clause source_, destination_, in_iface_, out_iface_, protocol_;
  fragment_match fragment_;
  family_filter only_ = family_filter::any;
  std::vector<pending_match> matches_;
  std::array<int, 32> latest_{};         // index in matches_ of the latest instance of each typed module
  std::vector<module_id> loaded_typed_;  // typed modules of the rule, the latest loaded last
  std::vector<std::string_view> implicit_generic_;
  std::vector<pending_option> options_;
  std::uint32_t words_ = 0;  // words of the rule line counted so far (see max_words, clause)
  const char* words_from_ = nullptr;  // where the line's first clause began
  bool words_counted_ = false;        // whether the line is long enough to count its words
  std::vector<argument> args_;
  std::string_view target_name_;
  span target_where_{};
  const module_spec* target_spec_ = nullptr;
  std::size_t target_at_ = 0;  // matches loaded before the target (a match after it is loaded later)
  target_id target_id_ = target_id::none;
  bool target_goto_ = false;
  std::uint8_t required_ = 0;
  bool optional_ = false;
  int current_option_ = -1;
  std::string_view last_keyword_;
  std::string_view last_raw_;
  std::size_t reserve_lines_ = 0;
  unsigned reserved_tables_ = 0;  // bits of the table ids that `reserve` gave room (see there)
  std::size_t line_number_ = 0;  // of the line being read, 1-based
  rule pending_rule_;
  rule_builder::parts parts_;
  detail::module_context module_context_;

  // scratch reused across lines
  std::vector<address_match> scratch_sources_, scratch_destinations_;
  std::vector<option> scratch_options_;
  std::vector<match> scratch_matches_;
  std::vector<std::size_t> scratch_starts_, scratch_fill_;
  std::array<std::uint64_t, 256> seen_options_{};
  std::uint64_t duplicate_stamp_ = 0;
  std::vector<generic_argument> scratch_generic_;

  // the modules and targets warned about, in order; these count against the tree cap (four million
  // distinct names, 35 MB, capped at 70 MB held 377 MB more when they did not)
  std::unordered_map<generic_key, generic_use, generic_key_hash, std::equal_to<>,
                     nflens::detail::charged_allocator<std::pair<const generic_key, generic_use>>>
      generic_uses_;
  nflens::detail::charged_vector<generic_key> generic_keys_;
};

// ---- decoding at the end of a rule line -----------------------------------------------------------

// Match modules and targets that exist for one family only (iptables-extensions(8): the libipt_* and
// libip6t_* extensions without a libxt_* or other-family twin).
std::optional<ip_family> family_of_extension(std::string_view name, bool is_target) noexcept {
  static constexpr std::string_view ipv6_matches[] = {"dst",   "eui64",      "frag", "hbh", "hl",
                                                      "icmp6", "ipv6header", "mh",   "rt",  "srh"};
  static constexpr std::string_view ipv4_matches[] = {"icmp", "realm", "ttl"};
  static constexpr std::string_view ipv6_targets[] = {"DNPT", "HL", "SNPT"};
  static constexpr std::string_view ipv4_targets[] = {"CLUSTERIP", "ECN", "TTL"};
  auto in = [&](const auto& names) { return std::find(std::begin(names), std::end(names), name) != std::end(names); };
  if (is_target ? in(ipv6_targets) : in(ipv6_matches)) return ip_family::ipv6;
  if (is_target ? in(ipv4_targets) : in(ipv4_matches)) return ip_family::ipv4;
  return std::nullopt;
}

// What a line tells about its family, for inputs whose family is not given and has no
// `# Generated by ip6tables-save` header (`iptables -S` lines, restore input): the first line with an
// address, a module or target of one family only (`-m icmp6`, `-m hl`, `-j TTL`), `-f` (IPv4 only),
// an ICMP protocol (`-p ipv6-icmp`, `-p icmp`), a NAT or conntrack address or a REJECT type of one
// family decides for the whole ruleset.
std::optional<ip_family> parser::family_hint() const {
  auto of_address = [](std::string_view t) -> std::optional<ip_family> {
    const auto colons = std::count(t.begin(), t.end(), ':');
    if (t.find('[') != std::string_view::npos || t.find("::") != std::string_view::npos || colons >= 2)
      return ip_family::ipv6;
    if (t.find('.') != std::string_view::npos) return ip_family::ipv4;
    return std::nullopt;
  };
  for (const base_clause* b : {&source_, &destination_})
    if (b->present) return b->text.find(':') != std::string_view::npos ? ip_family::ipv6 : ip_family::ipv4;
  for (const auto& m : matches_)
    if (auto f = family_of_extension(m.name, false)) return f;
  if (target_id_ != target_id::none)
    if (auto f = family_of_extension(target_name_, true)) return f;
  if (fragment_.present) return ip_family::ipv4;
  if (protocol_.present) {
    const auto p = detail::parse_protocol_number(protocol_.text);
    if (p == 58) return ip_family::ipv6;  // ipv6-icmp
    if (p == 1) return ip_family::ipv4;   // icmp
  }
  for (const auto& o : options_) {
    if (o.spec == nullptr || o.arg_count == 0) continue;
    const std::string_view a = args_[o.first_arg].text;
    switch (o.spec->id) {
      case option_id::nat_to_destination:
      case option_id::nat_to_source:
      case option_id::conntrack_ctorigsrc:
      case option_id::conntrack_ctorigdst:
      case option_id::conntrack_ctreplsrc:
      case option_id::conntrack_ctrepldst:
      case option_id::recent_mask:
      case option_id::tproxy_on_ip:
        if (auto f = of_address(a)) return f;
        break;
      case option_id::reject_with:
        if (a.rfind("icmp6-", 0) == 0 || a == "no-route" || a == "adm-prohibited" || a == "addr-unreach" ||
            a == "policy-fail" || a == "reject-route")
          return ip_family::ipv6;
        if (a.rfind("icmp-", 0) == 0) return ip_family::ipv4;
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

ip_family parser::line_family() {
  if (only_ == family_filter::ipv4) return ip_family::ipv4;
  if (only_ == family_filter::ipv6) return ip_family::ipv6;
  if (!family_known_) {
    if (const auto hint = family_hint()) {
      family_ = *hint;
      family_known_ = true;
    }
  }
  return family_;
}

void parser::decode_addresses(const base_clause& b, ip_family family, std::vector<address_match>& out) {
  out.clear();
  if (!b.present) return;
  std::size_t pos = 0;
  const std::string_view text = b.text;
  const bool raw_is_text = b.where.length == text.size();
  // iptables(8): a list makes one rule per address, which `!` cannot negate
  if (b.negated && text.find(',') != std::string_view::npos)
    fail(error_code::misplaced_negation, b.where, "`!` is not allowed with a list of addresses");
  while (true) {
    const auto comma = text.find(',', pos);
    const std::string_view item =
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    const span where =
        raw_is_text ? span{b.where.offset + static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(item.size())}
                    : b.where;
    const auto m = detail::parse_address_mask(item, family);
    if (!m) {
      const bool other = family == ip_family::ipv4
                             ? item.find(':') != std::string_view::npos
                             : item.find(':') == std::string_view::npos && item.find('.') != std::string_view::npos;
      fail(error_code::invalid_address, where,
           other ? fmt::format("`{}` is an {} address in an {} ruleset", detail::clip(item),
                               family == ip_family::ipv4 ? "IPv6" : "IPv4", family == ip_family::ipv4 ? "IPv4" : "IPv6")
                 : fmt::format("expected an {} address[/mask], saw `{}` (host names are not resolved)",
                               family == ip_family::ipv4 ? "IPv4" : "IPv6", detail::clip(item)));
    }
    out.push_back({*m, b.negated, where});
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
}

void parser::rule_line_end() {
  kind_ = line_kind::rule;
  if (pending_negation_)
    fail(error_code::misplaced_negation, {negation_at_, 1}, "`!` at the end of the line negates nothing");
  const span line_span{content_begin_, content_end_ - content_begin_};
  if (!command_set_)
    fail(error_code::syntax, line_span, "no command given (expected -A, -I, -D, -R, -N, -X, -F, -Z, -P or -E)");
  build_rule();
}

void parser::build_rule() {
  rule& r = pending_rule_;
  r = rule{};
  r.where = {content_begin_, content_end_ - content_begin_};
  r.command = command_;
  r.only = only_;
  // (reused: a fresh `parts` per line would be zeroed whole, every field is set here)
  rule_builder::parts& parts = parts_;
  parts.chain = command_chain_.text;
  parts.options = {};
  parts.matches = {};
  parts.sources = {};
  parts.destinations = {};
  parts.target_name = {};
  parts.target_where = {};
  parts.target_options = 0;
  parts.target = target_id::none;
  parts.is_goto = false;
  parts.protocol = {};
  parts.has_spec = false;
  parts.extras = {};
  parts.extras.position = command_number_;

  const bool takes_spec = command_ == command_kind::append || command_ == command_kind::insert ||
                          command_ == command_kind::replace || command_ == command_kind::check ||
                          (command_ == command_kind::delete_rule && command_number_ == 0);
  const bool has_spec_clauses = source_.present || destination_.present || in_iface_.present || out_iface_.present ||
                                protocol_.present || fragment_.present || !matches_.empty() ||
                                target_id_ != target_id::none || !options_.empty();
  if (!takes_spec) {
    // `-P CHAIN POLICY -c PACKETS BYTES` is what `iptables -S -v` prints; iptables-restore and
    // iptables -P (1.8.9) accept counters there (also as a `[p:b]` prefix) and ignore them, and so
    // does the AST.
    const bool policy = command_ == command_kind::policy;
    if (has_spec_clauses || (!policy && (has_counters_ || set_counters_)))
      fail(error_code::syntax, command_where_,
           fmt::format("`{}` takes no rule specification", command_option(command_)));
    if (command_ == command_kind::policy) {
      const std::string_view p = command_policy_.text;
      if (p == "ACCEPT")
        r.policy = chain_policy::accept;
      else if (p == "DROP")
        r.policy = chain_policy::drop;
      else
        fail(error_code::invalid_value, command_policy_.where,
             fmt::format("bad policy `{}` (built-in chains take ACCEPT or DROP)", detail::clip(p)));
    }
    if (command_ == command_kind::rename_chain) {
      validate_chain_name(command_new_name_.text, command_new_name_.where, true, clash::verdicts);
      parts.extras.new_name = command_new_name_.text;
    }
    if (command_ == command_kind::new_chain)
      validate_chain_name(parts.chain, command_chain_.where, true, clash::targets);
    rule_builder::build(r, src_, parts);
    return;
  }

  const ip_family family = line_family();
  module_context_.file = &src_;
  module_context_.sink = &sink_;
  module_context_.family = family;
  module_context_.chain = parts.chain;
  module_context_.protocol = 0;
  module_context_.protocol_negated = false;
  parts.has_spec = true;

  // -s, -d
  decode_addresses(source_, family, scratch_sources_);
  decode_addresses(destination_, family, scratch_destinations_);
  parts.sources = scratch_sources_;
  parts.destinations = scratch_destinations_;
  // -i, -o
  for (auto [clause, slot] : {std::pair{&in_iface_, &parts.extras.in_interface},
                              std::pair{&out_iface_, &parts.extras.out_interface}}) {
    if (!clause->present) continue;
    if (!detail::valid_interface_name(clause->text))
      fail(error_code::invalid_value, clause->where,
           fmt::format("interface name `{}` must be 1 to 15 bytes", detail::clip(clause->text)));
    if (clause->text.find_first_of("/ ") != std::string_view::npos)
      warn(error_code::invalid_value, clause->where,
           fmt::format("interface name `{}` has a '/' or ' ', which the kernel allows in no interface name (as "
                       "iptables warns): it matches none",
                       detail::clip(clause->text)));
    *slot = src_.store_one(interface_match{clause->text, clause->negated, clause->option});
  }
  // -p
  if (protocol_.present) {
    const auto p = detail::parse_protocol_number(protocol_.text);
    if (!p)
      fail(error_code::invalid_value, protocol_.where,
           fmt::format("unknown protocol `{}`", detail::clip(protocol_.text)));
    if (*p == 0 && protocol_.negated)
      fail(error_code::invalid_value, protocol_.option, "`! -p all` matches nothing and is rejected by iptables");
    parts.protocol = {protocol_.option, *p, true, protocol_.negated};
    module_context_.protocol = *p;
    module_context_.protocol_negated = protocol_.negated;
  }
  // -f
  if (fragment_.present) {
    if (family == ip_family::ipv6)
      fail(error_code::unknown_option, fragment_.where, "-f is an IPv4 option (ip6tables has none)");
    parts.extras.fragment = true;
    parts.extras.fragment_negated = fragment_.negated;
    parts.extras.fragment_where = fragment_.where;
  }
  // counters
  if (has_counters_ || set_counters_) {
    parts.extras.counters = counters_;
    parts.extras.has_counters = true;
  }

  // Options, grouped by their module: matches in order, then the target.
  scratch_options_.clear();
  scratch_matches_.clear();
  auto decode = [&](const pending_option& p) {
    option o;
    o.where = {p.begin, p.end - p.begin};
    o.negated = p.negated;
    const std::span<const argument> args(args_.data() + p.first_arg, p.arg_count);
    if (p.spec != nullptr) {
      o.id = p.spec->id;
      if (args.size() != p.spec->arguments)
        fail(error_code::missing_argument, o.where,
             fmt::format("--{} takes {} argument{}", detail::clip(p.name), p.spec->arguments,
                         p.spec->arguments == 1 ? "" : "s"));
      if (p.spec->decode != nullptr) {
        try {
          module_context_.option = p.name;
          p.spec->decode(args, o, module_context_);
        } catch (const value_error& e) {
          fail(e.code, e.where, fmt::format("--{}: {}", detail::clip(p.name), e.message));
        }
      }
    } else {
      scratch_generic_.clear();
      for (const auto& a : args) scratch_generic_.push_back({src_.text(a.where), a.text});
      generic_option gen{p.name, src_.store(std::span<const generic_argument>(scratch_generic_))};
      o.kind = value_kind::generic;
      o.value.generic = src_.store_one(gen);
    }
    return o;
  };
  // Options grouped by their module (the matches in order, then the target), each group in the order
  // written: a counting sort on the owner. Decoding goes in the order written, so errors do too.
  const std::size_t groups = matches_.size() + 1;
  auto group_of = [&](const pending_option& p) {
    return p.owner < 0 ? matches_.size() : static_cast<std::size_t>(p.owner);
  };
  scratch_starts_.assign(groups + 1, 0);
  for (const auto& p : options_) ++scratch_starts_[group_of(p) + 1];
  for (std::size_t g = 1; g <= groups; ++g) scratch_starts_[g] += scratch_starts_[g - 1];
  scratch_fill_.assign(scratch_starts_.begin(), scratch_starts_.end() - 1);
  scratch_options_.resize(options_.size());
  for (const auto& p : options_) scratch_options_[scratch_fill_[group_of(p)]++] = decode(p);
  // an option given twice in one module (unless repeatable): a stamp per group instead of clearing
  for (std::size_t g = 0; g < groups; ++g) {
    ++duplicate_stamp_;
    for (std::size_t i = scratch_starts_[g]; i < scratch_starts_[g + 1]; ++i) {
      const option& o = scratch_options_[i];
      if (o.id == option_id::generic) continue;
      auto& seen = seen_options_[static_cast<std::size_t>(o.id)];
      if (seen == duplicate_stamp_ && !repeatable(o.id))
        fail(error_code::duplicate_option, o.where,
             fmt::format("--{} may be given only once per module", iptables::option_name(o.id)));
      seen = duplicate_stamp_;
    }
  }
  const std::span<const option> all_options(scratch_options_);
  for (std::size_t mi = 0; mi < matches_.size(); ++mi) {
    const auto& pm = matches_[mi];
    scratch_matches_.emplace_back(
        pm.name, all_options.subspan(scratch_starts_[mi], scratch_starts_[mi + 1] - scratch_starts_[mi]), pm.where,
        pm.spec ? pm.spec->module : module_id::generic, pm.implicit);
  }
  const std::size_t target_first = scratch_starts_[matches_.size()];

  for (std::size_t mi = 0; mi < scratch_matches_.size(); ++mi) {
    const auto& pm = matches_[mi];
    if (pm.spec == nullptr || pm.spec->check == nullptr) continue;
    try {
      pm.spec->check({scratch_matches_[mi].options(), scratch_matches_[mi].where, &module_context_});
    } catch (const value_error& e) {
      fail(e.code, e.where, e.message);
    }
  }
  parts.options = all_options;
  parts.matches = scratch_matches_;

  if (target_id_ != target_id::none) {
    parts.target = target_id_;
    parts.target_name = target_name_;
    parts.target_where = target_where_;
    parts.is_goto = target_goto_;
    parts.target_options = all_options.size() - target_first;
    if (target_spec_ != nullptr && target_spec_->check != nullptr) {
      try {
        target_spec_->check({all_options.subspan(target_first), target_where_, &module_context_});
      } catch (const value_error& e) {
        fail(e.code, e.where, e.message);
      }
    }
  } else if (all_options.size() > target_first) {
    fail(error_code::unknown_option, all_options[target_first].where, "option without a module or target");
  }
  rule_builder::build(r, src_, parts);
}

void parser::line_end() {
  check_blanks();
  switch (kind_) {
    case line_kind::none:
    case line_kind::comment:
      return;
    case line_kind::table: {
      const span where{content_begin_, content_end_ - content_begin_};
      if (table_ >= 0 && !out_.tables[static_cast<std::size_t>(table_)].committed && !implicit_table_) {
        const auto& open = out_.tables[static_cast<std::size_t>(table_)];
        // report, then continue with the new block (iptables-restore stops here)
        sink_.error(error_code::missing_commit, open.where,
                    fmt::format("table `{}` is not ended by COMMIT before the next `*{}`", table_name(open.id),
                                table_name(table_id_)));
        if (sink_.full()) throw stop_parsing{};
      }
      add_table(table_id_, where, false);
      return;
    }
    case line_kind::commit: {
      if (table_ < 0 || out_.tables[static_cast<std::size_t>(table_)].committed || implicit_table_) {
        if (implicit_table_ && table_ >= 0) {
          out_.tables[static_cast<std::size_t>(table_)].committed = true;
          return;
        }
        sink_.error(error_code::outside_table, {content_begin_, content_end_ - content_begin_},
                    "COMMIT without a `*table` block to end");
        if (sink_.full()) throw stop_parsing{};
        return;
      }
      out_.tables[static_cast<std::size_t>(table_)].committed = true;
      return;
    }
    case line_kind::chain: {
      table* t = open_table();
      if (t == nullptr) return;
      chain c;
      c.name = decl_name_;
      c.file = &src_;
      c.where = {content_begin_, content_end_ - content_begin_};
      c.builtin = is_builtin_chain(t->id, c.name);
      const std::string_view p = policy_word_.text;
      if (p == "ACCEPT")
        c.policy = chain_policy::accept;
      else if (p == "DROP")
        c.policy = chain_policy::drop;
      else if (c.builtin && !p.empty() && p != "-") {
        sink_.error(
            error_code::invalid_value, policy_word_.where,
            fmt::format("bad policy `{}` for built-in chain {} (expected ACCEPT, DROP or -)", detail::clip(p), c.name));
        if (sink_.full()) throw stop_parsing{};
        return;
      } else if (c.builtin && p.empty()) {
        sink_.error(error_code::missing_argument, {content_end_, 0},
                    fmt::format("expected a policy for built-in chain {}", c.name));
        if (sink_.full()) throw stop_parsing{};
        return;
      }
      if (has_counters_) {
        c.counters = counters_;
        c.has_counters = true;
      }
      src_.charge(sizeof(chain));  // the tables' lists are part of the tree (limits::max_tree_bytes)
      t->chains.push_back(c);
      return;
    }
    case line_kind::rule: {
      table* t = open_table();
      if (t == nullptr) return;
      src_.charge(sizeof(rule));
      t->rules.push_back(pending_rule_);
      return;
    }
  }
}

void parser::end_of_input() {
  if (table_ >= 0 && !out_.tables[static_cast<std::size_t>(table_)].committed && !implicit_table_ && !opts_.lenient) {
    const auto& open = out_.tables[static_cast<std::size_t>(table_)];
    sink_.error(
        error_code::missing_commit, open.where,
        fmt::format("table `{}` is not ended by COMMIT (iptables-restore: \"COMMIT expected\")", table_name(open.id)));
  }
  if (implicit_table_ && table_ >= 0) out_.tables[static_cast<std::size_t>(table_)].committed = true;
}

// The table block a chain or rule line belongs to; outside any block an error (or, lenient, the
// implicit block of `iptables -S` lines).
table* parser::open_table() {
  if (table_ >= 0 && !out_.tables[static_cast<std::size_t>(table_)].committed)
    return &out_.tables[static_cast<std::size_t>(table_)];
  if (opts_.lenient) return &add_table(opts_.lenient_table, {content_begin_, 0}, true);
  sink_.error(
      error_code::outside_table, {content_begin_, content_end_ - content_begin_},
      "line outside a table block (expected `*filter`, `*nat`, ... first; --lenient reads `iptables -S` lines)");
  if (sink_.full()) throw stop_parsing{};
  return nullptr;
}

// ---- actions -------------------------------------------------------------------------------------

template <typename Rule>
struct action : pegtl::nothing<Rule> {};

template <>
struct action<g::line_start> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.start_line(in.begin());
  }
};
template <>
struct action<g::clause> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.clause(in.begin(), in.end());
  }
};
template <>
struct action<g::line> {
  template <typename Input>
  static void apply(const Input&, parser& p) {
    p.line_end();
  }
};
template <>
struct action<g::line_indent> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.indent(p.span_of(in.string_view()));
  }
};
template <>
struct action<g::line_trail> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.trail(p.span_of(in.string_view()));
  }
};
template <>
struct action<g::comment_line> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.comment(in.string_view());
  }
};
template <>
struct action<g::table_name> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.raw(in.string_view());
  }
};
template <>
struct action<g::table_header> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.content(in.begin(), in.end());
    p.table_header(p.last_raw(), p.span_of(p.last_raw()));
  }
};
template <>
struct action<g::chain_name> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.raw(in.string_view());
  }
};
template <>
struct action<g::policy_name> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.policy_word(in.string_view());
  }
};
template <>
struct action<g::chain_decl> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.content(in.begin(), in.end());
    p.chain_declaration(p.last_raw(), p.span_of(p.last_raw()));
  }
};
template <>
struct action<g::commit> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.content(in.begin(), in.end());
    p.commit();
  }
};
template <>
struct action<g::packets> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.packets(in.string_view());
  }
};
template <>
struct action<g::bytes> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.bytes(in.string_view());
  }
};

// keywords, for "expected X after `-A`"
template <char C>
struct action<g::short_option<C>> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.keyword(in.string_view());
  }
};
template <typename Name>
struct action<g::long_option<Name>> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.keyword(in.string_view());
  }
};

// commands
template <>
struct action<g::command_chain> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.chain_word(in.string_view());
  }
};
template <>
struct action<g::rule_number> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.rule_number(in.string_view());
  }
};
template <>
struct action<g::policy_target> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.policy_word(in.string_view());
  }
};
template <>
struct action<g::new_chain_name> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.new_name(in.string_view());
  }
};
template <command_kind C>
struct command_action {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.set_command(C, in.string_view(), in.begin());
  }
};
template <>
struct action<g::append_command> : command_action<command_kind::append> {};
template <>
struct action<g::insert_command> : command_action<command_kind::insert> {};
template <>
struct action<g::delete_command> : command_action<command_kind::delete_rule> {};
template <>
struct action<g::replace_command> : command_action<command_kind::replace> {};
template <>
struct action<g::check_command> : command_action<command_kind::check> {};
template <>
struct action<g::flush_command> : command_action<command_kind::flush> {};
template <>
struct action<g::zero_command> : command_action<command_kind::zero> {};
template <>
struct action<g::new_chain_command> : command_action<command_kind::new_chain> {};
template <>
struct action<g::delete_chain_command> : command_action<command_kind::delete_chain> {};
template <>
struct action<g::policy_command> : command_action<command_kind::policy> {};
template <>
struct action<g::rename_command> : command_action<command_kind::rename_chain> {};
template <>
struct action<g::list_command> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.list_command(p.span_of(in.string_view()));
  }
};

// rule specification
template <>
struct action<g::negation> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.negation(in.begin());
  }
};
template <>
struct action<g::inner_negation> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.inner_negation(in.begin());
  }
};
template <>
struct action<g::quoted> {
  template <typename Input>
  static void apply(const Input&, parser& p) {
    p.saw_quote();
  }
};
template <>
struct action<g::match_argument> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.word(in.string_view());
  }
};
template <base_clause& (parser::*Clause)(), const char* Name>
struct base_action {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.base_match((p.*Clause)(), Name, in.begin(), in.end());
  }
};
inline constexpr char source_text[] = "-s";
inline constexpr char destination_text[] = "-d";
inline constexpr char in_text[] = "-i";
inline constexpr char out_text[] = "-o";
inline constexpr char protocol_text[] = "-p";
template <>
struct action<g::source_match> : base_action<&parser::source_clause, source_text> {};
template <>
struct action<g::destination_match> : base_action<&parser::destination_clause, destination_text> {};
template <>
struct action<g::in_interface_match> : base_action<&parser::in_clause, in_text> {};
template <>
struct action<g::out_interface_match> : base_action<&parser::out_clause, out_text> {};
template <>
struct action<g::protocol_match> : base_action<&parser::protocol_clause, protocol_text> {};
template <>
struct action<g::fragment_match> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.fragment(in.begin(), in.end());
  }
};
template <>
struct action<g::module_name> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.raw(in.string_view());
  }
};
template <>
struct action<g::match_clause> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.match_module(p.last_raw(), in.begin());
  }
};
template <>
struct action<g::target_name> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.raw(in.string_view());
  }
};
template <>
struct action<g::jump_clause> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.jump(p.last_raw(), in.begin(), false);
  }
};
template <>
struct action<g::goto_clause> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.jump(p.last_raw(), in.begin(), true);
  }
};
template <>
struct action<g::counter_packets> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.counter_packets(in.string_view());
  }
};
template <>
struct action<g::counter_bytes> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.counter_bytes(in.string_view());
  }
};
template <>
struct action<g::set_counters_clause> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.set_counters_clause(p.counter_packets_text(), p.counter_bytes_text(), p.span_of(in.string_view()));
  }
};
template <>
struct action<g::ipv4_clause> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.family_only(family_filter::ipv4, in.begin());
  }
};
template <>
struct action<g::ipv6_clause> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.family_only(family_filter::ipv6, in.begin());
  }
};
template <>
struct action<g::table_clause> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.table_option(p.span_of(in.string_view()));
  }
};
template <>
struct action<g::option_name> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.keyword(in.string_view());
    p.option_name(in.string_view(), in.begin());
  }
};
template <>
struct action<g::option_argument> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.option_argument(in.string_view());
  }
};
template <>
struct action<g::module_option> {
  template <typename Input>
  static void apply(const Input&, parser& p) {
    p.end_option();
  }
};
template <>
struct action<g::unexpected_word> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.unexpected(in.string_view());
  }
};
template <>
struct action<g::rule_line> {
  template <typename Input>
  static void apply(const Input& in, parser& p) {
    p.content(in.begin(), in.end());
    p.rule_line_end();
  }
};

// Errors raised by must<>: the parser records them with a message from iptables_errors.hpp.
template <typename Rule>
struct control : pegtl::normal<Rule> {
  template <typename ParseInput, typename... States>
  [[noreturn]] static void raise(const ParseInput& in, parser& p) {
    p.raise<Rule>(in.current(), in.end());
  }
};

}  // namespace

// ---------------------------------------------------------------------------------------------------

namespace {
// Newlines in blocks whose count fits 32 bits, which the compiler vectorizes (std::count's 64-bit
// counter it does not: 6 times slower, a tenth of the parse).
std::size_t count_newlines(std::string_view text) noexcept {
  std::size_t n = 0;
  const char* p = text.data();
  for (std::size_t left = text.size(); left != 0;) {
    const std::size_t k = std::min<std::size_t>(left, 4096);
    std::uint32_t c = 0;
    for (std::size_t i = 0; i < k; ++i) c += p[i] == '\n' ? 1u : 0u;
    n += c;
    p += k;
    left -= k;
  }
  return n;
}
}  // namespace

result<ruleset> parse(std::string name, std::string text, const parse_options& options) {
  result<ruleset> res;
  if (text.size() > options.limits.max_input_bytes || text.size() >= std::size_t{0xffffffff}) {
    res.diagnostics.push_back({severity::error,
                               error_code::input_too_large,
                               fmt::format("input of {} bytes is larger than the limit of {} bytes", text.size(),
                                           std::min<std::size_t>(options.limits.max_input_bytes, 0xfffffffe)),
                               nullptr,
                               {},
                               {}});
    return res;
  }
  auto src = std::make_shared<source>(std::move(name), std::move(text));
  src->limit_tree(options.limits.max_tree_bytes);
  diagnostic_sink sink(src, options.limits);
  ruleset& out = res.value;
  out.sources.push_back(src);
  parser p(*src, sink, options, out);
  // Room for every line (a count, without building the source's line table, which only errors need).
  p.reserve_for(count_newlines(src->text()) + 1);
  const std::string_view t = src->text();
  // iptables-restore reads a carriage return as part of the line's last word (`COMMIT\r` is no COMMIT,
  // `-j ACCEPT\r` no target): CRLF line ends are refused, once, at the first; `iptables -S` lines
  // pasted in lenient mode get a warning. The rest of the file is still read as if it had LF ends.
  if (const auto cr = t.find("\r\n"); cr != std::string_view::npos)
    sink.report(options.lenient ? severity::warning : severity::error, error_code::invalid_character,
                {static_cast<std::uint32_t>(cr), 1},
                "CRLF line end: iptables-restore reads the carriage return as part of the line and refuses it; "
                "convert the file to LF line ends (reported once, at the first)");
  try {
    pegtl::memory_input<pegtl::tracking_mode::lazy, pegtl::eol::lf_crlf, const char*> in(t.data(), t.data() + t.size(),
                                                                                         "");
    if (!pegtl::parse<g::restore_file, action, control>(in, p))  // every line advances: cannot happen
      sink.error(error_code::internal_error, {}, "internal error: the parser stopped before the end of the input");
    p.end_of_input();
  } catch (const stop_parsing&) {
    // the error cap was reached; the sink says so
  } catch (const arena_exhausted&) {
    const std::string_view rest = t.substr(p.line_begin());
    const std::size_t line = std::min(rest.find('\n'), rest.size());
    const auto length = static_cast<std::uint32_t>(std::min<std::size_t>(line, 200));
    sink.error(error_code::tree_too_large, {p.line_begin(), length},
               fmt::format("the syntax tree outgrew the limit of {} bytes (limits::max_tree_bytes) in this line; "
                           "the rest of the input was not read",
                           options.limits.max_tree_bytes));
  } catch (const std::exception& e) {
    sink.error(error_code::internal_error, {}, fmt::format("internal error while parsing: {}", e.what()));
  }
  out.family = p.family();
  res.diagnostics = sink.take();
  p.count_generic_uses(res.diagnostics);
  return res;
}

ruleset parse_or_throw(std::string name, std::string text, const parse_options& options) {
  auto r = parse(std::move(name), std::move(text), options);
  if (!r.ok()) throw parse_error(std::move(r.diagnostics));
  return std::move(r.value);
}

}  // namespace nflens::iptables
