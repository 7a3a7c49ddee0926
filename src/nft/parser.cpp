// SPDX-License-Identifier: MIT
// The nft parser: the only translation unit that instantiates the nft grammar (grammars/nft_*.hpp).
//
// Actions build the AST directly into the source's arena. Expressions are built on a value stack
// (`state::exprs`), statements, elements, rules and declarations on their own stacks; a rule that
// collects items records the stack sizes when it starts (a "mark", see `traits`), and a marked rule
// that fails restores them, so backtracking never leaves half-built nodes behind. Scratch fields in
// the state hold the parts of one statement or selector while it is parsed; they are reset when the
// statement (or the selector's keyword) starts.
//
// Errors: semantic problems found by actions (a port out of range, an unknown hook, an undefined
// variable) and `must` failures throw `syntax_error`; a failed item is re-parsed once in "diagnose"
// mode, which records the farthest position the grammar reached and what it expected there. The
// `recoverable` rule reports the error and skips to the end of the item.

#include "nft_errors.hpp"

#include <nflens/nft.hpp>
#include <nflens/nft_types.hpp>

#include "nft/datatype.hpp"
#include "nft/rule_check.hpp"
#include "nft/vocabulary.hpp"
#include "tree_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace nflens::nft {

namespace g = grammar;
namespace pegtl = tao::pegtl;

namespace {

// ---------------------------------------------------------------------------------------------------
// Errors

/// A located error raised by an action or a `must`; caught by `recoverable`.
struct syntax_error {
  std::uint32_t offset = 0;
  std::uint32_t length = 0;
  error_code code = error_code::syntax;
  std::string message;
};
/// Thrown when the error cap is reached: unwinds the whole parse.
struct stop_parsing {};

// ---------------------------------------------------------------------------------------------------
// Decoding helpers

/// nft's reading of a number: `0x` hex, a leading `0` octal, otherwise decimal; nothing on overflow or
/// a bad digit (nft then takes the word as a string).
std::optional<std::uint64_t> decode_uint(std::string_view t) noexcept {
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    base = 16;
    t.remove_prefix(2);
  } else if (t.size() > 1 && t[0] == '0') {
    base = 8;
    t.remove_prefix(1);
  }
  std::uint64_t v = 0;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (r.ec != std::errc{} || r.ptr != t.data() + t.size()) return std::nullopt;
  return v;
}

std::optional<std::uint64_t> decode_time(std::string_view t) noexcept;
/// A `time_spec`: a number of seconds or a time string, in milliseconds.
std::optional<std::uint64_t> seconds_or_time(std::string_view t) noexcept {
  if (t.empty()) return std::nullopt;
  if (g::is_digit(t.back())) {
    const auto v = decode_uint(t);
    if (!v || *v > UINT64_MAX / 1000) return std::nullopt;
    return *v * 1000;
  }
  return decode_time(t);
}
/// `1d2h3m4s5ms` in milliseconds (the grammar guarantees the shape); nothing on overflow.
std::optional<std::uint64_t> decode_time(std::string_view t) noexcept {
  std::uint64_t total = 0;
  std::size_t i = 0;
  while (i < t.size()) {
    std::uint64_t n = 0;
    const auto r = std::from_chars(t.data() + i, t.data() + t.size(), n);
    if (r.ec != std::errc{}) return std::nullopt;
    i = static_cast<std::size_t>(r.ptr - t.data());
    if (i == t.size()) return std::nullopt;
    std::uint64_t unit = 0;
    if (t.substr(i, 2) == "ms")
      unit = 1, i += 2;
    else if (t[i] == 'd')
      unit = 86400000, ++i;
    else if (t[i] == 'h')
      unit = 3600000, ++i;
    else if (t[i] == 'm')
      unit = 60000, ++i;
    else if (t[i] == 's')
      unit = 1000, ++i;
    else
      return std::nullopt;
    if (n > (UINT64_MAX - total) / unit) return std::nullopt;
    total += n * unit;
  }
  return total;
}

std::string quote_token(std::string_view rest) {
  if (rest.empty()) return "end of input";
  if (rest.front() == '\n' || rest.front() == '\r') return "end of line";
  std::size_t n = 1;
  if (g::is_ident_first(rest.front()) || g::is_digit(rest.front())) {
    while (n < rest.size() && (g::is_ident_other(rest[n]) || rest[n] == ':')) ++n;
  } else if (rest.front() == '"') {
    const auto close = rest.find_first_of("\"\n", 1);
    n = close == std::string_view::npos ? rest.size() : close + 1;
  }
  n = std::min<std::size_t>(n, 40);
  return fmt::format("'{}'", rest.substr(0, n));
}

// ---------------------------------------------------------------------------------------------------
// The state

/// Allocator of the chain and set stacks: storage in the source's arena, never given back, so that the
/// chains and sets of a table block stay where they were built instead of being copied into the arena
/// when the table ends (a listing's chains are a tenth of its AST; the copy doubled them at the peak).
template <class T>
struct arena_allocator {
  using value_type = T;
  source* src;
  explicit arena_allocator(source& s) noexcept : src(&s) {}
  template <class U>
  explicit arena_allocator(const arena_allocator<U>& other) noexcept : src(other.src) {}
  [[nodiscard]] T* allocate(std::size_t n) { return static_cast<T*>(src->allocate(n * sizeof(T), alignof(T))); }
  void deallocate(T*, std::size_t) noexcept {}
  friend bool operator==(const arena_allocator& a, const arena_allocator& b) noexcept { return a.src == b.src; }
};
using chain_stack_type = std::vector<chain, arena_allocator<chain>>;
using set_stack_type = std::vector<set, arena_allocator<set>>;

using detail::node_stack;

/// How many chains and sets (or maps) a table block declares, counted from its lines.
struct table_counts {
  std::size_t chains = 0;
  std::size_t sets = 0;
};
/// The declarations of a table block: lines whose first word is `chain`, or `set` or `map`, up to the
/// first line that starts with `}` (as in a listing), so that the table's chains and sets can be reserved
/// once. `budget` bounds the bytes all such scans of one parse read (a hostile input of many unclosed
/// tables must not make them quadratic); an exhausted budget counts nothing.
/// The first `\n` at or after `p`, or `end`. Sixteen bytes at a time: a listing's lines are short, and a
/// call to memchr for each cost more than the search itself.
const char* next_newline(const char* p, const char* end) noexcept {
#ifdef __SSE2__
  const __m128i nl = _mm_set1_epi8('\n');
  for (; end - p >= 16; p += 16) {
    const auto m = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), nl)));
    if (m != 0) return p + std::countr_zero(m);
  }
#endif
  while (p != end && *p != '\n') ++p;
  return p;
}

table_counts count_table_lines(std::string_view rest, std::size_t& budget) noexcept {
  table_counts n;
  if (rest.size() > budget) return n;
  const char* const begin = rest.data();
  const char* const end = begin + rest.size();
  // `w` at `q` (the line's first word), followed by a blank of the same line.
  const auto word = [end](const char* q, std::string_view w) {
    if (static_cast<std::size_t>(end - q) <= w.size()) return false;
    for (std::size_t k = 0; k < w.size(); ++k)
      if (q[k] != w[k]) return false;
    return q[w.size()] == ' ' || q[w.size()] == '\t';
  };
  for (const char* p = begin; p < end;) {
    if (p != begin && *p == '}') {
      budget -= static_cast<std::size_t>(p - begin);
      return n;
    }
    const char* q = p;
    while (q != end && (*q == ' ' || *q == '\t')) ++q;
    // The first letter first: most lines (rules, braces) differ there.
    if (q != end) {
      if (*q == 'c') {
        if (word(q, "chain")) ++n.chains;
      } else if (*q == 's' || *q == 'm') {
        if (word(q, "set") || word(q, "map")) ++n.sets;
      }
    }
    const char* const nl = next_newline(q, end);
    if (nl == end) break;
    p = nl + 1;
  }
  budget -= std::min(budget, rest.size());
  return n;
}

struct mark {
  std::uint32_t exprs, stmts, elems, binops, rules, chains, sets, flowtables, objects, names, timeout_states, chain_ctx;
};

/// A chain whose block is being parsed (a stack: `jump { ... }` nests anonymous chains).
struct chain_ctx {
  chain decl;
  std::uint32_t rules_mark = 0;
  bool policy_given = false;
};

/// Parts of the statement being parsed.
struct stmt_scratch {
  counter_stmt counter;
  limit_stmt limit;
  quota_stmt quota;
  connlimit_stmt connlimit;
  last_stmt last;
  log_stmt log;
  reject_stmt reject;
  nat_stmt nat;
  queue_stmt queue;
  dup_stmt dup;
  fwd_stmt fwd;
  synproxy_stmt synproxy;
  set_op op = set_op::add;
  std::string_view meter_name;
  std::uint32_t meter_size = 0;
  xt_kind xt = xt_kind::match;
  bool limit_mode_over = false;
  bool limit_mode_until = false;
  std::string_view limit_burst;  ///< `burst N UNIT` as written, for the error on a packet burst of 0
  bool tail_mangle = false;
  bool tail_vmap = false;
  nfproto tproxy_family = nfproto::none;
};

/// Parts of the selector expression being parsed.
struct selector_scratch {
  payload_expr payload;
  meta_key meta = meta_key::mark;
  ct_expr ct;
  fib_expr fib;
  rt_expr rt;
  socket_expr socket;
  osf_expr osf;
  ipsec_expr ipsec;
  numgen_expr numgen;
  hash_spec hash;
  nfproto proto = nfproto::none;
};

/// The `define`d variables (nft(8) VARIABLES) of the blocks open so far and of the files that included
/// this one: found by name in constant time (a file of 100,000 defines took 26 s with a list searched
/// end to end), each block's dropped when it closes, in nft's scopes (below).
class variable_table {
 public:
  // nft's scopes (rule.c `symbol_bind`, `symbol_unbind`, `symbol_lookup`): the top level, each table
  // block and each chain block has its own; a name is looked up from the innermost scope outwards.
  // `scope` below is the depth of the block the statement is in (0: the top level).

  [[nodiscard]] const expr* find(std::string_view name) const noexcept {
    const auto it = index_.find(name);
    return it == index_.end() ? nullptr : entries_[it->second].value;
  }
  /// `define`: adds a variable to `scope`; false (and nothing changes) when one of that name is visible
  /// from it, in it or around it ("redefinition of symbol").
  bool define(std::string_view name, const expr* value, std::uint32_t scope) {
    if (index_.contains(name)) return false;
    index_.emplace(name, entries_.size());
    entries_.push_back({name, value, scope, none, true});
    return true;
  }
  /// `redefine`: sets the variable of that name in `scope`, or adds one there that hides any of an
  /// enclosing scope until the block closes. True when it added one.
  bool redefine(std::string_view name, const expr* value, std::uint32_t scope) {
    const auto it = index_.find(name);
    if (it == index_.end()) return define(name, value, scope);
    if (entries_[it->second].scope == scope) {
      entries_[it->second].value = value;
      return false;
    }
    entries_.push_back({name, value, scope, it->second, true});
    it->second = entries_.size() - 1;
    return true;
  }
  /// `undefine`: removes the variable of that name in `scope`, which uncovers any of an enclosing scope;
  /// false when `scope` has none (nft then does nothing: a variable of an enclosing scope stays).
  bool undefine(std::string_view name, std::uint32_t scope) {
    const auto it = index_.find(name);
    if (it == index_.end() || entries_[it->second].scope != scope) return false;
    entry& e = entries_[it->second];
    e.live = false;
    uncover(it, e.hides);
    return true;
  }
  /// What a variable takes in the table, about: its entry and its node in the index (for the tree cap).
  static constexpr std::size_t entry_bytes = 96;
  /// A mark for `drop_to`: where a block's variables begin.
  [[nodiscard]] std::size_t mark() const noexcept { return entries_.size(); }
  /// Drops the variables defined since `mark` (a block closed); those they hid are visible again.
  void drop_to(std::size_t mark) {
    for (; entries_.size() > mark; entries_.pop_back()) {
      const entry& e = entries_.back();
      if (e.live) uncover(index_.find(e.name), e.hides);
    }
  }

 private:
  static constexpr std::size_t none = static_cast<std::size_t>(-1);
  struct entry {
    std::string_view name;
    const expr* value;
    std::uint32_t scope;
    std::size_t hides;  // the entry of an enclosing scope this one hides, or `none`
    bool live;          // false once undefined (the entry stays until its block closes: marks stay valid)
  };
  void uncover(std::unordered_map<std::string_view, std::size_t>::iterator at, std::size_t hidden) {
    if (hidden == none)
      index_.erase(at);
    else
      at->second = hidden;
  }
  std::vector<entry> entries_;
  std::unordered_map<std::string_view, std::size_t> index_;  // name -> its visible entry
};

struct state {
  state(source& s, const parse_options& o, diagnostic_sink& d, std::vector<source_ptr>& srcs)
      : src(s), base(s.text().data()), options(o), sink(d), sources(srcs) {}

  source& src;
  const char* base;
  const parse_options& options;
  diagnostic_sink& sink;
  std::vector<source_ptr>& sources;

  // Stacks
  node_stack<expr> exprs;
  std::vector<binop> binops;
  node_stack<stmt> stmts;
  node_stack<element> elems;
  node_stack<rule> rules;
  chain_stack_type chains{arena_allocator<chain>(src)};
  set_stack_type sets{arena_allocator<set>(src)};
  node_stack<flowtable> flowtables;
  node_stack<object> objects;
  node_stack<std::string_view> names;
  node_stack<ct_timeout_state> timeout_states;
  std::vector<chain_ctx> chain_stack;  // (as deep as the blocks: limits::max_depth)
  node_stack<mark> marks;
  node_stack<command> commands;
  /// Charges every stack's large storage to the source's tree cap (see node_stack).
  void charge_stacks() noexcept {
    exprs.charge_to(src);
    stmts.charge_to(src);
    elems.charge_to(src);
    rules.charge_to(src);
    flowtables.charge_to(src);
    objects.charge_to(src);
    names.charge_to(src);
    timeout_states.charge_to(src);
    marks.charge_to(src);
    commands.charge_to(src);
  }

  // Scratch
  stmt_scratch sx;
  selector_scratch sel;
  relational_op relop = relational_op::implicit;
  const expr* flag_mask = nullptr;
  element_options elem_opts;
  bool elem_has_opts = false;
  std::string_view chain_target;
  std::string_view rule_comment;
  std::uint64_t rule_handle = 0;
  std::uint64_t number = 0;
  priority prio;
  std::optional<std::string_view> prio_variable;
  std::optional<chain_policy> policy;
  const base_chain* base_spec = nullptr;
  std::span<const std::string_view> device_names;
  std::span<const std::string_view> key_names;
  std::span<const std::string_view> data_names;
  table_info table;
  set cur_set;
  span set_elements_at{};  ///< the set block's `elements =` so far (empty: none)
  std::uint8_t set_flags_line = 0;  ///< the flags of the `flags` line being read
  flowtable cur_flowtable;
  object cur_object;
  std::uint32_t table_marks[4] = {};
  command cmd;
  bool has_cmd = false;
  // Names of the spec being parsed (`table_spec`, `chain_spec`, ...).
  family fam = family::ip;
  bool fam_written = false;
  std::string_view table_name, chain_name, set_name, obj_name;
  std::uint64_t handle = 0;
  rule_position pos_kind = rule_position::none;
  std::uint64_t pos_value = 0;

  // Variables (`define`), innermost scope last.
  variable_table variables;
  std::vector<std::size_t> scopes;  // variables.mark() where each open block began
  std::uint32_t scope_base = 0;      // the includer's scope depth, in an included file
  /// The depth of the scope a statement is in (0: the top level of the main file).
  [[nodiscard]] std::uint32_t scope() const noexcept { return scope_base + static_cast<std::uint32_t>(scopes.size()); }
  /// Closes the scopes from the `n`th on: their variables are no longer visible.
  void close_scopes(std::size_t n) {
    if (n >= scopes.size()) return;
    variables.drop_to(scopes[n]);
    scopes.resize(n);
  }

  // Limits and diagnose mode
  std::uint32_t depth = 0;
  /// Elements copied into sets from other sets (`define a = { $b, $b }`, `{ { ... } }`): bounded, as a
  /// few lines of nested defines double them at every level.
  std::size_t merged_elements = 0;
  void merge_elements(std::span<const element> inner, span where) {
    count_merged(inner.size(), where);
    elems.append(inner);
  }
  void count_merged(std::size_t n, span where) {
    merged_elements += n;
    const std::size_t cap = 1'000'000 + src.text().size();
    if (merged_elements > cap)
      throw syntax_error{where.offset, where.length, error_code::input_too_large,
                         fmt::format("sets merged into sets (nested `$variables`, `{{ {{ ... }} }}`) grow past {} "
                                     "elements, more than the input can mean",
                                     cap)};
  }
  /// Pushes the device names a variable holds, one name or a set of names (each use copies the set, so
  /// the copies count as merged elements); false when it holds anything else.
  bool push_device_names(const expr& e, span where) {
    const auto name_of = [](const expr& x) -> std::optional<std::string_view> {
      if (const auto* s = x.get<string_expr>()) return s->text;
      if (const auto* y = x.get<symbol_expr>()) return y->name;
      return std::nullopt;
    };
    if (const auto* set = e.get<set_expr>()) {
      count_merged(set->elements.size(), where);
      const std::size_t mark = names.size();
      for (const auto& el : set->elements) {
        const auto name = el.data == nullptr && el.options == nullptr ? name_of(*el.key) : std::nullopt;
        if (!name) {
          names.resize(mark);  // none of a set that is not all names
          return false;
        }
        names.push_back(*name);
      }
      return true;
    }
    const auto name = name_of(e);
    if (name) names.push_back(*name);
    return name.has_value();
  }
  std::uint32_t lookahead = 0;
  std::size_t table_scan_budget = src.text().size();  ///< see count_table_lines
  std::uint32_t include_depth = 0;
  std::vector<diagnostic>* extra = nullptr;
  bool diagnose = false;
  const char* farthest = nullptr;
  std::vector<std::string> expected;

  [[nodiscard]] std::uint32_t offset(const char* p) const noexcept { return static_cast<std::uint32_t>(p - base); }
  template <class In>
  [[nodiscard]] span span_of(const In& in) const noexcept {
    return {offset(in.begin()), static_cast<std::uint32_t>(in.size())};
  }

  [[nodiscard]] mark current() const noexcept {
    const auto n = [](const auto& v) { return static_cast<std::uint32_t>(v.size()); };
    return {n(exprs), n(stmts),      n(elems),   n(binops), n(rules),          n(chains),
            n(sets),  n(flowtables), n(objects), n(names),  n(timeout_states), n(chain_stack)};
  }
  [[nodiscard]] mark current_light() const noexcept {
    constexpr std::uint32_t never = UINT32_MAX;
    const auto n = [](const auto& v) { return static_cast<std::uint32_t>(v.size()); };
    return {n(exprs), n(stmts), n(elems), n(binops), never, never, never, never, never, never, never, never};
  }
  void rewind(const mark& m) {
    // Only what grew since the mark (most failures leave every stack as it was).
    if (exprs.size() > m.exprs) exprs.resize(m.exprs);
    if (stmts.size() > m.stmts) stmts.resize(m.stmts);
    if (elems.size() > m.elems) elems.resize(m.elems);
    if (binops.size() > m.binops) binops.resize(m.binops);
    if (rules.size() > m.rules) rules.resize(m.rules);
    if (chains.size() > m.chains) chains.resize(m.chains);
    if (sets.size() > m.sets) sets.resize(m.sets);
    if (flowtables.size() > m.flowtables) flowtables.resize(m.flowtables);
    if (objects.size() > m.objects) objects.resize(m.objects);
    if (names.size() > m.names) names.resize(m.names);
    if (timeout_states.size() > m.timeout_states) timeout_states.resize(m.timeout_states);
    if (chain_stack.size() > m.chain_ctx) chain_stack.resize(m.chain_ctx);
  }

  // Expression stack
  void push(span s, expr::value_type v) { exprs.push_back(expr{s, v}); }
  expr pop() {
    expr e = exprs.back();
    exprs.pop_back();
    return e;
  }
  const expr* keep(const expr& e) { return src.store_one(e); }
  const expr* pop_keep() { return keep(pop()); }
  template <class T, class A>
  std::span<const T> keep_range(std::vector<T, A>& v, std::size_t from) {
    const auto out = src.store(std::span<const T>(v.data() + from, v.size() - from));
    v.resize(from);
    return out;
  }
  template <class T>
  std::span<const T> keep_range(node_stack<T>& v, std::size_t from) {
    return v.keep(src, from);
  }
  [[nodiscard]] const mark& top_mark() const noexcept { return marks.back(); }

  [[noreturn]] void fail(const char* at, std::size_t length, error_code code, std::string message) const {
    throw syntax_error{offset(at), static_cast<std::uint32_t>(length), code, std::move(message)};
  }
  template <class In>
  [[noreturn]] void fail(const In& in, error_code code, std::string message) const {
    fail(in.begin(), in.size(), code, std::move(message));
  }

  void note_failure(const char* at, std::string what) {
    if (farthest == nullptr || at > farthest) {
      farthest = at;
      expected.clear();
    }
    if (at == farthest && std::find(expected.begin(), expected.end(), what) == expected.end())
      expected.push_back(std::move(what));
  }

};

template <class In>
std::string_view text(const In& in) noexcept {
  return {in.begin(), in.size()};
}

template <class In>
std::uint64_t number_of(const In& in, state& st, std::uint64_t max = UINT64_MAX) {
  const auto v = decode_uint(text(in));
  if (!v) st.fail(in, error_code::invalid_number, fmt::format("'{}' is not a number nft accepts", text(in)));
  if (*v > max) st.fail(in, error_code::number_out_of_range, fmt::format("{} is out of range (at most {})", *v, max));
  return *v;
}

template <class In>
std::uint64_t time_of(const In& in, state& st) {
  const std::string_view t = text(in);
  if (!t.empty() && g::is_digit(t.back())) return number_of(in, st, UINT64_MAX / 1000) * 1000;
  const auto v = decode_time(t);
  if (!v) st.fail(in, error_code::invalid_value, fmt::format("'{}' is not a time nft accepts", t));
  return *v;
}

/// The text of a quoted string or a word (`string` in parser_bison.y).
std::string_view unquote(std::string_view t) noexcept {
  if (t.size() >= 2 && t.front() == '"' && t.back() == '"') return t.substr(1, t.size() - 2);
  return t;
}

// ---------------------------------------------------------------------------------------------------
// Control: marks, nesting depth, begin hooks, diagnose-mode expectations, must messages

template <class Rule>
struct traits {
  static constexpr bool marked = false;  // records stack sizes; restores them on failure
  static constexpr bool nested = false;  // counts towards limits::max_depth
  static constexpr bool begins = false;  // runs on_begin<Rule> when it starts
};
#define NFLENS_TRAITS(R, M, N, B)     \
  template <>                         \
  struct traits<R> {                  \
    static constexpr bool marked = M; \
    static constexpr bool nested = N; \
    static constexpr bool begins = B; \
  };
// clang-format off
NFLENS_TRAITS(g::expr_stmt, true, false, false)
NFLENS_TRAITS(g::set_expr, true, true, false)
NFLENS_TRAITS(g::set_stmt_element, true, true, false)
NFLENS_TRAITS(g::set_stmt_legacy_element, true, false, false)
NFLENS_TRAITS(g::set_elem_expr, true, false, false)
NFLENS_TRAITS(g::jhash_expr, true, true, false)
NFLENS_TRAITS(g::paren_expr, true, true, false)
NFLENS_TRAITS(g::paren_rhs_expr, true, true, false)
NFLENS_TRAITS(g::paren_stmt_expr, true, true, false)
NFLENS_TRAITS(g::subchain_block, true, true, false)
NFLENS_TRAITS(g::concat_expr, true, false, false)
NFLENS_TRAITS(g::concat_rhs_expr, true, false, false)
NFLENS_TRAITS(g::rhs_sequence, true, false, false)
NFLENS_TRAITS(g::stmt_expr, true, false, false)
NFLENS_TRAITS(g::flag_mask, true, false, false)
NFLENS_TRAITS(g::rule, true, false, false)
NFLENS_TRAITS(g::typeof_expr, true, false, false)
NFLENS_TRAITS(g::basic_expr, true, false, false)
NFLENS_TRAITS(g::basic_rhs_expr, true, false, false)
NFLENS_TRAITS(g::basic_stmt_expr, true, false, false)
NFLENS_TRAITS(g::data_type_expr, true, false, false)
NFLENS_TRAITS(g::map_data_type, true, false, false)
NFLENS_TRAITS(g::hook_spec, true, false, true)
NFLENS_TRAITS(g::flowtable_expr, true, false, false)
NFLENS_TRAITS(g::dev_spec_single, true, false, false)
NFLENS_TRAITS(g::add_counter, true, false, false)
NFLENS_TRAITS(g::add_quota, true, false, false)
NFLENS_TRAITS(g::add_limit, true, false, false)
NFLENS_TRAITS(g::add_ct_helper, true, false, false)
NFLENS_TRAITS(g::add_ct_timeout, true, false, false)
NFLENS_TRAITS(g::add_ct_expectation, true, false, false)
NFLENS_TRAITS(g::add_secmark, true, false, false)
NFLENS_TRAITS(g::add_synproxy, true, false, false)
NFLENS_TRAITS(g::add_tunnel, true, false, false)
NFLENS_TRAITS(g::obj_spec, false, false, true)
NFLENS_TRAITS(g::tableid_spec, false, false, true)
NFLENS_TRAITS(g::timeout_policy, true, false, false)
NFLENS_TRAITS(g::table_block, true, false, false)
NFLENS_TRAITS(g::stmt, false, false, true)
NFLENS_TRAITS(g::counter_stmt, false, false, true)
NFLENS_TRAITS(g::limit_stmt, false, false, true)
NFLENS_TRAITS(g::quota_stmt, false, false, true)
NFLENS_TRAITS(g::connlimit_stmt, false, false, true)
NFLENS_TRAITS(g::last_stmt, false, false, true)
NFLENS_TRAITS(g::log_stmt, false, false, true)
NFLENS_TRAITS(g::reject_stmt, false, false, true)
NFLENS_TRAITS(g::nat_stmt, false, false, true)
NFLENS_TRAITS(g::masq_stmt, false, false, true)
NFLENS_TRAITS(g::redir_stmt, false, false, true)
NFLENS_TRAITS(g::tproxy_stmt, false, false, true)
NFLENS_TRAITS(g::queue_stmt, false, false, true)
NFLENS_TRAITS(g::dup_stmt, false, false, true)
NFLENS_TRAITS(g::fwd_stmt, false, false, true)
NFLENS_TRAITS(g::synproxy_stmt, false, false, true)
NFLENS_TRAITS(g::meter_stmt, false, false, true)
NFLENS_TRAITS(g::set_elem_stmt, false, false, true)
NFLENS_TRAITS(g::set_stateful, true, false, true)
NFLENS_TRAITS(g::counter_config, false, false, true)
NFLENS_TRAITS(g::quota_config, false, false, true)
NFLENS_TRAITS(g::limit_config, false, false, true)
NFLENS_TRAITS(g::synproxy_config, false, false, true)
NFLENS_TRAITS(g::line, false, false, true)
NFLENS_TRAITS(g::table_spec, false, false, true)
NFLENS_TRAITS(g::extended_prio_spec, false, false, true)
NFLENS_TRAITS(g::rule_position, false, false, true)
// clang-format on
#undef NFLENS_TRAITS

/// Marked rules that can only grow the expression, statement and element stacks: their mark records
/// those three (the others as "never rewind"), which keeps the hot expression rules cheap.
template <class Rule>
inline constexpr bool light_mark = false;
#define NFLENS_LIGHT(R) \
  template <>           \
  inline constexpr bool light_mark<R> = true;
NFLENS_LIGHT(g::expr_stmt)
NFLENS_LIGHT(g::set_expr)
NFLENS_LIGHT(g::set_stmt_element)
NFLENS_LIGHT(g::set_stmt_legacy_element)
NFLENS_LIGHT(g::set_elem_expr)
NFLENS_LIGHT(g::jhash_expr)
NFLENS_LIGHT(g::paren_expr)
NFLENS_LIGHT(g::paren_rhs_expr)
NFLENS_LIGHT(g::paren_stmt_expr)
NFLENS_LIGHT(g::concat_expr)
NFLENS_LIGHT(g::concat_rhs_expr)
NFLENS_LIGHT(g::rhs_sequence)
NFLENS_LIGHT(g::stmt_expr)
NFLENS_LIGHT(g::flag_mask)
NFLENS_LIGHT(g::rule)
NFLENS_LIGHT(g::typeof_expr)
NFLENS_LIGHT(g::basic_expr)
NFLENS_LIGHT(g::basic_rhs_expr)
NFLENS_LIGHT(g::basic_stmt_expr)
#undef NFLENS_LIGHT

template <class Rule>
void on_begin(state& st);
template <>
void on_begin<g::stmt>(state& st) {
  // The parts of each statement kind are reset when that kind starts (below); here only what every
  // expression-led statement reads.
  st.sx.tail_mangle = st.sx.tail_vmap = false;
  st.sx.limit_mode_over = st.sx.limit_mode_until = false;
}
template <>
void on_begin<g::counter_stmt>(state& st) {
  st.sx.counter = {};
}
template <>
void on_begin<g::limit_stmt>(state& st) {
  st.sx.limit = {};
  st.sx.limit_burst = {};
}
template <>
void on_begin<g::quota_stmt>(state& st) {
  st.sx.quota = {};
}
template <>
void on_begin<g::connlimit_stmt>(state& st) {
  st.sx.connlimit = {};
}
template <>
void on_begin<g::last_stmt>(state& st) {
  st.sx.last = {};
}
template <>
void on_begin<g::log_stmt>(state& st) {
  st.sx.log = {};
}
template <>
void on_begin<g::reject_stmt>(state& st) {
  st.sx.reject = {};
}
template <>
void on_begin<g::nat_stmt>(state& st) {
  st.sx.nat = nat_stmt{};
}
template <>
void on_begin<g::masq_stmt>(state& st) {
  st.sx.nat = nat_stmt{};
}
template <>
void on_begin<g::redir_stmt>(state& st) {
  st.sx.nat = nat_stmt{};
}
template <>
void on_begin<g::tproxy_stmt>(state& st) {
  st.sx.nat = nat_stmt{};
  st.sx.tproxy_family = nfproto::none;
}
template <>
void on_begin<g::queue_stmt>(state& st) {
  st.sx.queue = {};
}
template <>
void on_begin<g::dup_stmt>(state& st) {
  st.sx.dup = {};
}
template <>
void on_begin<g::fwd_stmt>(state& st) {
  st.sx.dup = {};
  st.sx.fwd = {};
}
template <>
void on_begin<g::synproxy_stmt>(state& st) {
  st.sx.synproxy = {};
}
template <>
void on_begin<g::meter_stmt>(state& st) {
  st.sx.meter_name = {};
  st.sx.meter_size = 0;
}
template <>
void on_begin<g::set_elem_stmt>(state& st) {
  // Only the stateful parts: an element's statements sit inside an enclosing statement (meter, set).
  st.sx.counter = {};
  st.sx.limit = {};
  st.sx.quota = {};
  st.sx.connlimit = {};
  st.sx.last = {};
  st.sx.limit_mode_over = st.sx.limit_mode_until = false;
}
template <>
void on_begin<g::set_stateful>(state& st) {
  st.sx = stmt_scratch{};
}
template <>
void on_begin<g::counter_config>(state& st) {
  st.sx = stmt_scratch{};
}
template <>
void on_begin<g::quota_config>(state& st) {
  st.sx = stmt_scratch{};
}
template <>
void on_begin<g::limit_config>(state& st) {
  st.sx = stmt_scratch{};
}
template <>
void on_begin<g::synproxy_config>(state& st) {
  st.sx = stmt_scratch{};
}
template <>
void on_begin<g::line>(state& st) {
  st.cmd = command{};
  st.has_cmd = false;
}
template <>
void on_begin<g::table_spec>(state& st) {
  st.fam = family::ip;
  st.fam_written = false;
  st.handle = 0;
}
template <>
void on_begin<g::tableid_spec>(state& st) {
  st.fam = family::ip;
  st.fam_written = false;
  st.handle = 0;
}
template <>
void on_begin<g::obj_spec>(state& st) {
  st.cur_object = object{};
}
template <>
void on_begin<g::hook_spec>(state& st) {
  st.device_names = {};
}
template <>
void on_begin<g::extended_prio_spec>(state& st) {
  st.prio = priority{};
  st.prio_variable.reset();
}
template <>
void on_begin<g::rule_position>(state& st) {
  st.pos_kind = rule_position::none;
  st.pos_value = 0;
}

/// Rules whose failure says nothing useful to a reader (listing-only forms).
template <class Rule>
inline constexpr bool quiet = false;
template <>
inline constexpr bool quiet<g::invalid_type_note> = true;

/// What the grammar expected, for diagnose-mode messages; empty for rules that say nothing useful.
template <class Rule>
struct expectation {
  static std::string what() { return {}; }
};
template <bool S, char... Cs>
struct expectation<g::keyword_rule<S, Cs...>> {
  static std::string what() {
    return fmt::format("'{}'", std::string_view(g::keyword_rule<S, Cs...>::chars, sizeof...(Cs)));
  }
};
template <char... Cs>
struct expectation<g::keyword<Cs...>> : expectation<g::keyword_rule<false, Cs...>> {};
template <char... Cs>
struct expectation<pegtl::ascii::one<Cs...>> {
  static std::string what() {
    const char c[] = {Cs...};
    if (c[0] == '\n' || c[0] == ' ' || c[0] == '\\' || c[0] == '#') return {};
    return fmt::format("'{}'", std::string_view(c, 1));
  }
};
template <char... Cs>
struct expectation<pegtl::ascii::string<Cs...>> {
  static std::string what() {
    const char c[] = {Cs...};
    return fmt::format("'{}'", std::string_view(c, sizeof...(Cs)));
  }
};
template <header H>
struct expectation<g::hdr_field<H>> {
  static std::string what() {
    std::string out = fmt::format("a {} field (", name(H));
    bool first = true;
    for (const auto& w : vocab::fields_of(H)) {
      if (!first) out += ", ";
      out += w.text;
      first = false;
    }
    return out + ")";
  }
};
template <const auto& Table>
struct expectation<g::table_word<Table>> {
  static std::string what() {
    std::string out = "one of (";
    bool first = true;
    for (const auto& w : Table) {
      if (!first) out += ", ";
      out += w.text;
      first = false;
    }
    return out + ")";
  }
};
#define NFLENS_EXPECT(R, TEXT)                 \
  template <>                                  \
  struct expectation<R> {                      \
    static std::string what() { return TEXT; } \
  };
NFLENS_EXPECT(g::identifier, "a name")
NFLENS_EXPECT(g::number, "a number")
NFLENS_EXPECT(g::unit_number, "a number")
NFLENS_EXPECT(g::value_token, "a value")
NFLENS_EXPECT(g::quoted_string, "a quoted string")
NFLENS_EXPECT(g::string_word, "a string")
NFLENS_EXPECT(g::stmt, "a statement")
NFLENS_EXPECT(g::selector_expr, "an expression")
NFLENS_EXPECT(g::line_end, "end of line")
NFLENS_EXPECT(g::base_cmd, "a command")
NFLENS_EXPECT(g::hook_name, "a hook name")
#undef NFLENS_EXPECT

template <class Rule>
inline constexpr bool is_lookahead = false;
template <class... R>
inline constexpr bool is_lookahead<pegtl::not_at<R...>> = true;
template <class... R>
inline constexpr bool is_lookahead<pegtl::at<R...>> = true;

/// The expectation of a rule, or else of the rule it derives from (`struct kw_ip : keyword<...>`).
template <class Rule>
std::string expected_of() {
  if constexpr (quiet<Rule>) {
    return {};
  } else {
    std::string what = expectation<Rule>::what();
    if constexpr (!std::is_same_v<Rule, typename Rule::rule_t>)
      if (what.empty()) what = expectation<typename Rule::rule_t>::what();
    return what;
  }
}

/// The blocks that open a scope for `define` (nft's table and chain blocks): what is defined inside is
/// not visible after them.
template <class Rule>
inline constexpr bool opens_scope = std::is_same_v<Rule, g::table_block> || std::is_same_v<Rule, g::chain_block>;

template <class Rule>
struct control : pegtl::normal<Rule> {
  template <class Input>
  static void start(const Input& in, state& st) {
    if constexpr (is_lookahead<Rule>) ++st.lookahead;
    if constexpr (traits<Rule>::nested) {
      if (++st.depth > st.options.limits.depth()) [[unlikely]]
        too_deep(in.current(), st);
    }
    if constexpr (traits<Rule>::marked) st.marks.push_back(light_mark<Rule> ? st.current_light() : st.current());
    if constexpr (traits<Rule>::begins) on_begin<Rule>(st);
    if constexpr (opens_scope<Rule>) st.scopes.push_back(st.variables.mark());
  }
  template <class Input>
  static void success(const Input&, state& st) {
    if constexpr (opens_scope<Rule>) st.close_scopes(st.scopes.size() - 1);
    if constexpr (is_lookahead<Rule>) --st.lookahead;
    if constexpr (traits<Rule>::marked) st.marks.pop_back();
    if constexpr (traits<Rule>::nested) --st.depth;
  }
  template <class Input>
  static void failure(const Input& in, state& st) {
    if constexpr (opens_scope<Rule>) st.close_scopes(st.scopes.size() - 1);
    if constexpr (is_lookahead<Rule>) --st.lookahead;
    if constexpr (traits<Rule>::marked) {
      st.rewind(st.marks.back());
      st.marks.pop_back();
    }
    if constexpr (traits<Rule>::nested) --st.depth;
    if (st.diagnose && st.lookahead == 0) [[unlikely]]
      note_expected(in, st);
  }
  /// The nesting error, out of line: `start` runs at every rule and is inlined where it is small.
  [[noreturn, gnu::cold, gnu::noinline]] static void too_deep(const char* at, state& st) {
    --st.depth;
    throw syntax_error{st.offset(at), 1, error_code::nesting_too_deep,
                       fmt::format("nesting deeper than {} levels", st.options.limits.depth())};
  }
  /// Diagnose mode's record of what was expected, out of line: `failure` runs at every rule that fails
  /// (millions of times in a large dump) and stays a few inlined instructions outside diagnose mode.
  template <class Input>
  [[gnu::cold, gnu::noinline]] static void note_expected(const Input& in, state& st) {
    std::string what = expected_of<Rule>();
    if (!what.empty()) st.note_failure(in.current(), std::move(what));
  }
  template <class Input>
  [[noreturn]] static void raise(const Input& in, state& st) {
    static_assert(g::error_message<Rule> != nullptr, "a rule used in must<> needs an error_message");
    const std::string_view rest(in.current(), static_cast<std::size_t>(in.end() - in.current()));
    throw syntax_error{st.offset(in.current()), 1, error_code::syntax,
                       fmt::format("{}, saw {}", g::error_message<Rule>, quote_token(rest))};
  }
};

// ---------------------------------------------------------------------------------------------------
// Actions

template <class Rule>
struct action : pegtl::nothing<Rule> {};

// Value tokens ---------------------------------------------------------------------------------------

template <>
struct action<g::quoted_value> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.push(st.span_of(in), string_expr{unquote(text(in))});
  }
};
template <class Addr>
struct address_action {
  template <class In>
  static void apply(const In& in, state& st) {
    std::string_view t = text(in);
    if (!t.empty() && t.front() == '[') t = t.substr(1, t.size() - 2);
    st.push(st.span_of(in), address_expr{*parse_ip_address(t), st.src});
  }
};
template <>
struct action<g::ip4addr> {
  template <class In>
  static void apply(const In& in, state& st) {
    // The rule matched a dotted quad that `ipv4_length` accepted: four parts of digits, a part with a
    // leading 0 in octal; read it again without the checks (addresses are a quarter of a dump's values).
    std::uint32_t v = 0;
    std::uint32_t n = 0;
    std::uint32_t radix = 10;
    const char* part = in.begin();
    for (const char *p = in.begin(), *end = in.end();; ++p) {
      if (p == end || *p == '.') {
        v = v << 8 | n;
        if (p == end) break;
        n = 0;
        part = p + 1;
        continue;
      }
      if (p == part) radix = *p == '0' && p + 1 != end && p[1] != '.' ? 8 : 10;
      n = n * radix + static_cast<std::uint32_t>(*p - '0');
    }
    address_expr a;
    for (std::size_t i = 0; i < 4; ++i) a.v4_bytes[i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
    st.push(st.span_of(in), a);
  }
};
template <>
struct action<g::ip6addr> : address_action<g::ip6addr> {};
template <>
struct action<g::ip6addr_bracketed> : address_action<g::ip6addr_bracketed> {};
template <>
struct action<g::macaddr> {
  template <class In>
  static void apply(const In& in, state& st) {
    ether_address_expr e;
    std::string_view t = text(in);
    for (auto& b : e.bytes) {
      const auto colon = t.find(':');
      const auto part = t.substr(0, colon);
      unsigned v = 0;
      std::from_chars(part.data(), part.data() + part.size(), v, 16);
      b = static_cast<std::uint8_t>(v);
      t = colon == std::string_view::npos ? std::string_view{} : t.substr(colon + 1);
    }
    st.push(st.span_of(in), e);
  }
};
template <>
struct action<g::classid> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.push(st.span_of(in), symbol_expr{text(in)});
  }
};
template <>
struct action<g::timestring> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.push(st.span_of(in), time_expr{time_of(in, st)});
  }
};
struct integer_value_action {
  template <class In>
  static void apply(const In& in, state& st) {
    if (const auto v = decode_uint(text(in)))
      st.push(st.span_of(in), integer_expr{*v});
    else
      st.push(st.span_of(in), symbol_expr{text(in)});  // as nft: too long for a number, so a string
  }
};
template <>
struct action<g::hex_value> : integer_value_action {};
template <>
struct action<g::dec_value> : integer_value_action {};
template <>
struct action<g::symbol_word> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    if (t == "exists")
      st.push(st.span_of(in), boolean_expr{true});
    else if (t == "missing")
      st.push(st.span_of(in), boolean_expr{false});
    else
      st.push(st.span_of(in), symbol_expr{t});
  }
};
template <>
struct action<g::variable_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view name = text(in).substr(1);
    const expr* v = st.variables.find(name);
    if (v == nullptr) st.fail(in, error_code::undefined_variable, fmt::format("undefined variable '${}'", name));
    expr e = *v;
    e.where = st.span_of(in);
    st.exprs.push_back(e);
  }
};

template <>
struct action<g::invalid_type_note> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sink.warning(error_code::not_modelled, st.span_of(in),
                    "'[invalid type]' is how nft 1.0.6 lists a value whose datatype it lost; the value is kept as a "
                    "plain number");
  }
};

// Selectors -------------------------------------------------------------------------------------------

template <header H, class K>
struct action<g::hdr_kw<H, K>> {
  static void apply0(state& st) { st.sel.payload = payload_expr{H}; }
};
template <header H>
struct action<g::hdr_field<H>> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.payload.protocol = H;
    st.sel.payload.field = *vocab::lookup_field(H, text(in));
  }
};
template <>
struct action<g::arp_addr_field> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    const bool src = t.substr(0, 5) == "saddr";
    const bool ether = t.substr(t.size() - 5) == "ether";
    st.sel.payload.field = src ? (ether ? header_field::saddr_ether : header_field::saddr_ip)
                               : (ether ? header_field::daddr_ether : header_field::daddr_ip);
  }
};
template <>
struct action<g::ip_option_type> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.payload.protocol = header::ip_option;
    st.sel.payload.option = *vocab::lookup(vocab::ip_option_types, text(in));
  }
};
template <>
struct action<g::tcp_option_kind> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    st.sel.payload.protocol = header::tcp_option;
    if (const auto k = vocab::lookup(vocab::tcp_option_kinds, t)) {
      st.sel.payload.option = *k;
      if (t.size() == 5 && t.substr(0, 4) == "sack") st.sel.payload.index = static_cast<std::uint8_t>(t[4] - '0');
    } else {
      st.sel.payload.option = static_cast<std::uint8_t>(number_of(in, st, 255));
    }
  }
};
/// The fields nft's grammar gives each TCP option (parser_bison.y `tcp_hdr_option_kind_and_field`): a
/// length to all but eol and nop, a size to maxseg, a count to window, left and right edges to the sack
/// blocks, tsval and tsecr to timestamp, a subtype to mptcp. An option given by number takes a length only.
template <>
struct action<g::tcp_option_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    const payload_expr& p = st.sel.payload;
    if (p.protocol != header::tcp_option || p.field == header_field::none || p.field == header_field::type ||
        p.length != 0)
      return;
    // `option KIND FIELD`: the kind as written, and where the field starts
    const std::string_view t = text(in);
    std::size_t a = t.find_first_of(" \t");
    while (a < t.size() && (t[a] == ' ' || t[a] == '\t')) ++a;
    std::size_t b = t.find_first_of(" \t", a);
    const std::string_view kind = t.substr(a, b - a);
    while (b < t.size() && (t[b] == ' ' || t[b] == '\t')) ++b;
    const bool named = !kind.empty() && !g::is_digit(kind.front());
    bool fits = false;
    switch (p.field) {
      case header_field::length: fits = !named || (p.option != 0 && p.option != 1); break;
      case header_field::size: fits = named && p.option == 2; break;
      case header_field::count: fits = named && p.option == 3; break;
      case header_field::left: case header_field::right: fits = named && p.option == 5; break;
      case header_field::tsval: case header_field::tsecr: fits = named && p.option == 8; break;
      case header_field::subtype: fits = named && p.option == 30; break;
      default: fits = true;
    }
    if (fits) return;
    const std::string_view field = t.substr(b);
    throw syntax_error{st.offset(in.begin()) + static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(field.size()),
                       error_code::syntax,
                       fmt::format("unexpected '{}': tcp option {} has no field {} (nft: \"syntax error, unexpected "
                                   "{}\")",
                                   field, kind, field, field)};
  }
};
template <>
struct action<g::tcp_option_raw_offset> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.payload.offset = static_cast<std::uint32_t>(number_of(in, st, UINT32_MAX));
  }
};
template <>
struct action<g::tcp_option_raw_len> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.payload.length = static_cast<std::uint32_t>(number_of(in, st, UINT32_MAX));
  }
};
template <>
struct action<g::dccp_option_number> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.payload.protocol = header::dccp_option;
    st.sel.payload.option = static_cast<std::uint8_t>(number_of(in, st, 255));
  }
};
template <>
struct action<g::sctp_chunk_type> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.payload.protocol = header::sctp_chunk;
    st.sel.payload.option = *vocab::lookup(vocab::sctp_chunk_types, text(in));
  }
};
template <>
struct action<g::payload_raw_base> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    st.sel.payload = payload_expr{header::raw};
    st.sel.payload.base = t == "ll"   ? payload_base::ll
                          : t == "nh" ? payload_base::nh
                          : t == "th" ? payload_base::th
                                      : payload_base::ih;
  }
};
template <>
struct action<g::payload_raw_offset> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.payload.offset = static_cast<std::uint32_t>(number_of(in, st, UINT32_MAX));
  }
};
template <>
struct action<g::payload_raw_len> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.payload.length = static_cast<std::uint32_t>(number_of(in, st, UINT32_MAX));
  }
};
template <>
struct action<g::exthdr_index> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.payload.index = static_cast<std::uint8_t>(number_of(in, st, 255));
  }
};
template <>
struct action<g::rt0_hdr_expr> {
  static void apply0(state& st) { st.sel.payload.field = header_field::addr; }
};
template <>
struct action<g::srh_sid> {
  static void apply0(state& st) { st.sel.payload.field = header_field::sid; }
};
template <>
struct action<g::exthdr_key> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.payload.option = static_cast<std::uint8_t>(*vocab::lookup(vocab::exthdr_keys, text(in)));
  }
};
template <tunnel T>
struct tunnel_action {
  static void apply0(state& st) {
    if (st.sel.payload.inner == tunnel::none && st.sel.payload.protocol != static_cast<header>(0xff)) {
      const header self = T == tunnel::vxlan    ? header::vxlan
                          : T == tunnel::geneve ? header::geneve
                          : T == tunnel::gre    ? header::gre
                                                : header::gretap;
      if (st.sel.payload.protocol != self) st.sel.payload.inner = T;
    }
  }
};
template <>
struct action<g::vxlan_hdr_expr> : tunnel_action<tunnel::vxlan> {};
template <>
struct action<g::geneve_hdr_expr> : tunnel_action<tunnel::geneve> {};
template <>
struct action<g::gre_hdr_expr> : tunnel_action<tunnel::gre> {};
template <>
struct action<g::gretap_hdr_expr> : tunnel_action<tunnel::gretap> {};
struct push_payload {
  template <class In>
  static void apply(const In& in, state& st) {
    st.push(st.span_of(in), st.sel.payload);
  }
};
template <>
struct action<g::payload_expr> : push_payload {};
template <>
struct action<g::exthdr_expr> : push_payload {};
template <>
struct action<g::exthdr_exists_expr> : push_payload {};

template <>
struct action<g::meta_key_qualified> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.meta = *vocab::lookup(vocab::meta_keys_qualified, text(in));
  }
};
template <>
struct action<g::meta_key_unqualified> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.meta = *vocab::lookup(vocab::meta_keys_unqualified, text(in));
  }
};
template <>
struct action<g::meta_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.push(st.span_of(in), meta_expr{st.sel.meta});
  }
};

template <>
struct action<g::kw_ct> {
  static void apply0(state& st) {
    st.sel.ct = ct_expr{};
    st.sel.proto = nfproto::none;
  }
};
template <>
struct action<g::ct_dir> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.ct.direction = text(in) == "original" ? ct_direction::original : ct_direction::reply;
  }
};
template <>
struct action<g::ct_key_word> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.ct.key = *vocab::lookup(vocab::ct_keys, text(in));
  }
};
template <>
struct action<g::ct_key_dir> {
  template <class In>
  static void apply(const In& in, state& st) {
    const ct_key k = *vocab::lookup(vocab::ct_keys, text(in));
    if (!vocab::ct_key_takes_direction(k))
      st.fail(in, error_code::invalid_value,
              fmt::format("'ct {}' takes no direction; with original/reply nft takes saddr, daddr, l3proto, "
                          "protocol, proto-src, proto-dst, bytes, packets, avgpkt, zone",
                          text(in)));
    st.sel.ct.key = k;
  }
};
template <>
struct action<g::nf_key_proto> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.proto = text(in) == "ip" ? nfproto::ip : nfproto::ip6;
  }
};
template <>
struct action<g::ct_key_proto_field> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.ct.protocol = st.sel.proto;
    st.sel.ct.key = text(in).ends_with("saddr") ? ct_key::saddr : ct_key::daddr;
  }
};
template <>
struct action<g::ct_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.push(st.span_of(in), st.sel.ct);
  }
};

template <>
struct action<g::kw_fib> {
  static void apply0(state& st) { st.sel.fib = fib_expr{}; }
};
template <>
struct action<g::fib_flag> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.fib.flags |= *vocab::lookup(vocab::fib_flags, text(in));
  }
};
template <>
struct action<g::fib_result> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.fib.result = *vocab::lookup(vocab::fib_results, text(in));
  }
};
template <>
struct action<g::fib_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.push(st.span_of(in), st.sel.fib);
  }
};

template <>
struct action<g::kw_rt> {
  static void apply0(state& st) {
    st.sel.rt = rt_expr{};
    st.sel.proto = nfproto::none;
  }
};
template <>
struct action<g::rt_key> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.rt.key = *vocab::lookup(vocab::rt_keys, text(in));
  }
};
template <>
struct action<g::rt_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.rt.protocol = st.sel.proto;
    st.push(st.span_of(in), st.sel.rt);
  }
};

template <>
struct action<g::kw_socket> {
  static void apply0(state& st) { st.sel.socket = socket_expr{}; }
};
template <>
struct action<g::socket_level> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.socket.key = socket_key::cgroupv2;
    st.sel.socket.level = static_cast<std::uint32_t>(number_of(in, st, UINT32_MAX));
  }
};
template <>
struct action<g::socket_key> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.socket.key = *vocab::lookup(vocab::socket_keys, text(in));
  }
};
template <>
struct action<g::socket_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.push(st.span_of(in), st.sel.socket);
  }
};

template <>
struct action<g::kw_osf> {
  static void apply0(state& st) { st.sel.osf = osf_expr{}; }
};
template <>
struct action<g::osf_ttl> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.osf.ttl = text(in).ends_with("loose") ? osf_ttl::loose : osf_ttl::skip;
  }
};
template <>
struct action<g::osf_key> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.osf.key = text(in) == "name" ? osf_key::name : osf_key::version;
  }
};
template <>
struct action<g::osf_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.push(st.span_of(in), st.sel.osf);
  }
};

template <>
struct action<g::kw_ipsec> {
  static void apply0(state& st) {
    st.sel.ipsec = ipsec_expr{};
    st.sel.proto = nfproto::none;
  }
};
template <>
struct action<g::xfrm_dir> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.ipsec.direction = text(in) == "in" ? ipsec_direction::in : ipsec_direction::out;
  }
};
template <>
struct action<g::xfrm_spnum_value> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.ipsec.spnum = static_cast<std::uint32_t>(number_of(in, st, 255));
  }
};
template <>
struct action<g::xfrm_state_key> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.ipsec.key = text(in) == "reqid" ? ipsec_key::reqid : ipsec_key::spi;
  }
};
template <>
struct action<g::xfrm_proto_key> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.ipsec.protocol = st.sel.proto;
    st.sel.ipsec.key = text(in).ends_with("saddr") ? ipsec_key::saddr : ipsec_key::daddr;
  }
};
template <>
struct action<g::xfrm_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.push(st.span_of(in), st.sel.ipsec);
  }
};

template <>
struct action<g::kw_numgen> {
  static void apply0(state& st) { st.sel.numgen = numgen_expr{}; }
};
template <>
struct action<g::numgen_type> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.numgen.type = text(in) == "inc" ? numgen_type::inc : numgen_type::random;
  }
};
template <>
struct action<g::numgen_modulus> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.numgen.modulus = static_cast<std::uint32_t>(number_of(in, st, UINT32_MAX));
    // the kernel refuses it (nft: "Could not process rule: Numerical result out of range")
    if (st.sel.numgen.modulus == 0) st.fail(in, error_code::number_out_of_range, "numgen modulus 0: there is no slot");
  }
};
template <>
struct action<g::hash_offset> {
  template <class In>
  static void apply(const In& in, state& st) {
    const auto v = static_cast<std::uint32_t>(number_of(in, st, UINT32_MAX));
    st.sel.numgen.offset = v;
    st.sel.hash.offset = v;
  }
};
template <>
struct action<g::numgen_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    // numbers offset .. offset + modulus - 1 must fit 32 bits (the kernel: "Value too large for defined
    // data type")
    if (std::uint64_t{st.sel.numgen.offset} + st.sel.numgen.modulus - 1 > UINT32_MAX)
      st.fail(in, error_code::number_out_of_range,
              fmt::format("numgen offset {} + modulus {} goes past 2^32", std::uint32_t{st.sel.numgen.offset},
                          std::uint32_t{st.sel.numgen.modulus}));
    st.push(st.span_of(in), st.sel.numgen);
  }
};
template <>
struct action<g::kw_jhash> {
  static void apply0(state& st) { st.sel.hash = hash_spec{}; }
};
template <>
struct action<g::kw_symhash> {
  static void apply0(state& st) {
    st.sel.hash = hash_spec{};
    st.sel.hash.kind = hash_kind::symhash;
  }
};
template <>
struct action<g::hash_modulus> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.hash.modulus = static_cast<std::uint32_t>(number_of(in, st, UINT32_MAX));
  }
};
template <>
struct action<g::hash_seed_value> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sel.hash.seed = static_cast<std::uint32_t>(number_of(in, st, UINT32_MAX));
    st.sel.hash.has_seed = true;
  }
};
template <>
struct action<g::jhash_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    hash_spec h = st.sel.hash;
    h.kind = hash_kind::jhash;
    h.key = st.pop_keep();
    st.push(st.span_of(in), hash_expr{st.src.store_one(h)});
  }
};
template <>
struct action<g::symhash_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    hash_spec h = st.sel.hash;
    h.kind = hash_kind::symhash;
    h.key = nullptr;
    st.push(st.span_of(in), hash_expr{st.src.store_one(h)});
  }
};
template <>
struct action<g::tunnel_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.push(st.span_of(in), tunnel_expr{text(in).ends_with("path") ? tunnel_key::path : tunnel_key::id});
  }
};

// Operators, prefixes, ranges, concatenations, lists --------------------------------------------------

/// Precedence of a binary operator in nft's grammar: shifts bind tightest, then `&`, `^`, `|`.
constexpr int precedence(binop op) noexcept {
  switch (op) {
    case binop::lshift:
    case binop::rshift:
      return 4;
    case binop::and_:
      return 3;
    case binop::xor_:
      return 2;
    case binop::or_:
      return 1;
  }
  return 0;
}
template <class O>
struct action<g::binop_tail<O>> {
  template <class In>
  static void apply(const In& in, state& st) {
    const char c = *in.begin();
    binop op = binop::or_;
    if (c == '<' || c == 'l')
      op = binop::lshift;
    else if (c == '>' || (c == 'r'))
      op = binop::rshift;
    else if (c == '&' || c == 'a')
      op = binop::and_;
    else if (c == '^' || c == 'x')
      op = binop::xor_;
    st.binops.push_back(op);
  }
};
/// Refuses a chain of more than `limits::max_depth` operators (between the `n_ops + 1` operands `items`) at
/// the operand after the first operator too many.
void too_many_operators(const state& st, const expr* items, std::size_t n_ops) {
  if (n_ops <= st.options.limits.depth()) return;
  const expr& past = items[st.options.limits.depth() + 1];
  st.fail(st.base + past.where.offset, past.where.length, error_code::nesting_too_deep,
          fmt::format("an expression of {} operators nests deeper than {} levels", n_ops,
                      st.options.limits.depth()));
}

/// Builds the tree of `a OP b OP c ...` from the flat operands (on the expression stack since the
/// rule's mark) and operators (on the operator stack), by precedence (an operator-precedence parse).
struct binop_chain_action {
  template <class In>
  static void apply(const In&, state& st) {
    const mark& m = st.top_mark();
    const std::size_t n_ops = st.binops.size() - m.binops;
    if (n_ops == 0) return;
    // In place: the operand and operator stacks double as the output and pending stacks. Both are
    // written at or below where they are read (after i steps the output holds at most i + 1
    // operands and the pending stack at most i operators), so a chain of a million operators needs
    // no copies beyond the tree it builds.
    const std::size_t base = st.exprs.size() - (n_ops + 1);
    expr* const items = st.exprs.data() + base;
    binop* const ops = st.binops.data() + m.binops;
    // the tree of a chain is as deep as it has operators (`1 | 2 | 3` is `(1 | 2) | 3`), and every walk
    // of it recurses: bounded as all nesting is
    too_many_operators(st, items, n_ops);
    std::size_t out = 1;
    std::size_t pending = 0;
    const auto reduce = [&] {
      const expr& left = items[out - 2];
      const expr& right = items[out - 1];
      const span s{left.where.offset, right.where.offset + right.where.length - left.where.offset};
      items[out - 2] = expr{s, binop_expr{ops[pending - 1], store_pair(st.src, left, right)}};
      --out;
      --pending;
    };
    for (std::size_t i = 0; i < n_ops; ++i) {
      const binop op = ops[i];
      while (pending > 0 && precedence(ops[pending - 1]) >= precedence(op)) reduce();
      ops[pending++] = op;
      items[out++] = items[i + 1];
    }
    while (pending > 0) reduce();
    st.exprs.resize(base + 1);
    st.binops.resize(m.binops);
  }
};
template <>
struct action<g::basic_expr> : binop_chain_action {};
template <>
struct action<g::basic_rhs_expr> : binop_chain_action {};
template <>
struct action<g::basic_stmt_expr> : binop_chain_action {};

template <>
struct action<g::prefix_length> {
  template <class In>
  static void apply(const In& in, state& st) {
    const expr value = st.pop();
    std::uint64_t max = 128;
    if (const auto* a = value.get<address_expr>()) max = max_prefix_length(a->address().family);
    const auto len = number_of(in, st, max);
    const span s{value.where.offset, st.offset(in.end()) - value.where.offset};
    st.push(s, prefix_expr{st.keep(value), static_cast<std::uint8_t>(len)});
  }
};
template <class O>
struct action<g::range_tail<O>> {
  template <class In>
  static void apply(const In& in, state& st) {
    const expr high = st.pop();
    const expr low = st.pop();
    const span s{low.where.offset, st.offset(in.end()) - low.where.offset};
    st.push(s, range_expr{store_pair(st.src, low, high)});
  }
};

/// Replaces the expressions pushed since the innermost mark by one concatenation (when there are two
/// or more).
template <class In>
void collapse_concat(const In& in, state& st, std::uint32_t from) {
  if (st.exprs.size() - from < 2) return;
  const span s = st.span_of(in);
  const auto items = st.keep_range(st.exprs, from);
  st.push(s, concat_expr{items});
}
struct concat_action {
  template <class In>
  static void apply(const In& in, state& st) {
    collapse_concat(in, st, st.top_mark().exprs);
  }
};
template <>
struct action<g::concat_expr> : concat_action {};
template <>
struct action<g::concat_rhs_expr> : concat_action {};
template <>
struct action<g::rhs_sequence> : concat_action {};
template <>
struct action<g::stmt_expr> : concat_action {};
template <>
struct action<g::typeof_expr> : concat_action {};

struct list_action {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::uint32_t from = st.top_mark().exprs;
    const span s{st.exprs[from].where.offset, st.offset(in.end()) - st.exprs[from].where.offset};
    const auto items = st.keep_range(st.exprs, from);
    st.push(s, list_expr{items});
  }
};
template <>
struct action<g::list_rhs_tail> : list_action {};
template <>
struct action<g::list_stmt_tail> : list_action {};

/// `a, b, c` as nft evaluates a flag list: `a | b | c`.
expr or_chain(state& st, std::span<const expr> items) {
  too_many_operators(st, items.data(), items.size() - 1);
  expr acc = items[0];
  for (std::size_t i = 1; i < items.size(); ++i) {
    const span s{acc.where.offset, items[i].where.offset + items[i].where.length - acc.where.offset};
    acc = expr{s, binop_expr{binop::or_, store_pair(st.src, acc, items[i])}};
  }
  return acc;
}
template <>
struct action<g::flag_mask> {
  template <class In>
  static void apply(const In&, state& st) {
    const std::uint32_t from = st.top_mark().exprs;
    std::vector<expr> items(st.exprs.begin() + from, st.exprs.end());
    st.exprs.resize(from);
    st.flag_mask = st.keep(or_chain(st, items));
  }
};
template <>
struct action<g::flag_tail> {
  template <class In>
  static void apply(const In&, state& st) {
    if (const auto* l = st.exprs.back().get<list_expr>()) {
      const std::vector<expr> items(l->items.begin(), l->items.end());
      st.exprs.back() = or_chain(st, items);
    }
  }
};
template <>
struct action<g::set_ref_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    std::string_view t = text(in).substr(1);
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    st.push(st.span_of(in), set_ref_expr{t});
  }
};
template <>
struct action<g::map_tail> {
  template <class In>
  static void apply(const In& in, state& st) {
    const expr mapping = st.pop();
    const expr key = st.pop();
    const span s{key.where.offset, st.offset(in.end()) - key.where.offset};
    st.push(s, map_expr{store_pair(st.src, key, mapping)});
  }
};
template <>
struct action<g::map_stmt_tail> {
  template <class In>
  static void apply(const In& in, state& st) {
    const expr mapping = st.pop();
    const std::uint32_t from = st.top_mark().exprs;
    collapse_concat(in, st, from);
    const expr key = st.pop();
    const span s{key.where.offset, st.offset(in.end()) - key.where.offset};
    st.push(s, map_expr{store_pair(st.src, key, mapping)});
  }
};

// Relations ------------------------------------------------------------------------------------------

template <relational_op Op>
struct relop_action {
  static void apply0(state& st) {
    st.relop = Op;
    st.flag_mask = nullptr;
  }
};
template <>
struct action<g::op_eq> : relop_action<relational_op::eq> {};
template <>
struct action<g::op_neq> : relop_action<relational_op::neq> {};
template <>
struct action<g::op_lt> : relop_action<relational_op::lt> {};
template <>
struct action<g::op_gt> : relop_action<relational_op::gt> {};
template <>
struct action<g::op_lte> : relop_action<relational_op::lte> {};
template <>
struct action<g::op_gte> : relop_action<relational_op::gte> {};
template <>
struct action<g::op_neg> : relop_action<relational_op::neg> {};
template <>
struct action<g::op_implicit> : relop_action<relational_op::implicit> {};
template <>
struct action<g::mangle_tail> {
  static void apply0(state& st) { st.sx.tail_mangle = true; }
};
template <>
struct action<g::vmap_tail> {
  static void apply0(state& st) { st.sx.tail_vmap = true; }
};
template <>
struct action<g::expr_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    const expr* right = st.pop_keep();
    const expr* left = st.pop_keep();
    const span s = st.span_of(in);
    if (st.sx.tail_mangle)
      if (const auto what = unsettable(*left)) {
        // the caret at `set`, where nft's parser stops
        const std::string_view text = st.src.text();
        std::uint32_t at = left->where.offset + left->where.length;
        while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
        throw syntax_error{at, 3, error_code::syntax,
                           fmt::format("unexpected 'set': `{}` is {}, which nft cannot set (nft: \"syntax error, "
                                       "unexpected set\")",
                                       text.substr(left->where.offset, left->where.length), *what)};
      }
    // `left value / mask` is `(left & mask) == value` (nft's flagcmp); `op` defaults to ==. The mask is
    // checked as a value of the left's type, as in the `&` form nft 1.1 prints.
    const expr* masked = nullptr;
    if (!st.sx.tail_mangle && !st.sx.tail_vmap && st.flag_mask != nullptr) {
      masked = st.keep(expr{left->where, binop_expr{binop::and_, store_pair(st.src, *left, *st.flag_mask)}});
      st.flag_mask = nullptr;
    }
    if (!st.sx.tail_vmap) {
      try {
        check_constant(masked != nullptr ? *masked : *left, *right, st.src.text());
      } catch (rule_problem& p) {
        throw syntax_error{p.where.offset, p.where.length, p.code, std::move(p.message)};
      }
    }
    if (st.sx.tail_mangle) {
      st.stmts.push_back(stmt{s, mangle_stmt{left, right}});
    } else if (st.sx.tail_vmap) {
      st.stmts.push_back(stmt{s, verdict_map_stmt{left, right}});
    } else if (masked != nullptr) {
      const relational_op op = st.relop == relational_op::implicit ? relational_op::eq : st.relop;
      st.stmts.push_back(stmt{s, match_stmt{masked, right, op, true}});
    } else {
      st.stmts.push_back(stmt{s, match_stmt{left, right, st.relop, false}});
    }
  }
};

// Sets and elements ----------------------------------------------------------------------------------

template <>
struct action<g::set_elem_begin> {
  static void apply0(state& st) {
    st.elem_opts = element_options{};
    st.elem_has_opts = false;
  }
};
template <>
struct action<g::wildcard_key> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.push(st.span_of(in), wildcard_expr{});
  }
};
/// The value of an element's `timeout`/`expires` is an option, not an expression of the element: drop
/// what the value's own action pushed (a `timestring` pushes a time expression).
void drop_option_value(state& st, std::string_view value) {
  if (!st.exprs.empty() && st.exprs.back().where.offset == static_cast<std::uint32_t>(value.data() - st.base))
    st.exprs.pop_back();
}
template <>
struct action<g::set_elem_timeout> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    const auto value = t.substr(t.find_last_of(" \t") + 1);
    const auto v = seconds_or_time(value);
    if (!v) st.fail(in, error_code::invalid_value, fmt::format("'{}' is not a time", value));
    drop_option_value(st, value);
    // `timeout 0s` is no timeout: nft stores 0 and lists nothing (checked against the kernel)
    st.elem_opts.timeout_ms = *v;
    st.elem_opts.has_timeout = *v != 0;
    st.elem_has_opts = st.elem_has_opts || *v != 0;
  }
};
template <>
struct action<g::set_elem_expires> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    const auto value = t.substr(t.find_last_of(" \t") + 1);
    const auto v = seconds_or_time(value);
    if (!v) st.fail(in, error_code::invalid_value, fmt::format("'{}' is not a time", value));
    drop_option_value(st, value);
    st.elem_opts.expires_ms = *v;
    st.elem_opts.has_expires = *v != 0;
    st.elem_has_opts = st.elem_has_opts || *v != 0;
  }
};
template <>
struct action<g::comment_value> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.rule_comment = unquote(text(in));
    // nft's parser (NFT_USERDATA_MAXLEN), for the comments of tables, chains, rules, sets, elements, objects
    if (st.rule_comment.size() > 128)
      st.fail(in, error_code::invalid_value,
              fmt::format("a comment of {} bytes; nft takes at most 128 (\"comment too long, 128 characters "
                          "maximum allowed\")",
                          st.rule_comment.size()));
  }
};
template <>
struct action<g::set_elem_comment> {
  template <class In>
  static void apply(const In& in, state& st) {
    if (!st.elem_opts.comment.empty())
      st.fail(in, error_code::duplicate_option, "comment given twice (nft: \"You can only specify this once\")");
    st.elem_opts.comment = st.rule_comment;
    st.rule_comment = {};
    st.elem_has_opts = true;
  }
};
template <>
struct action<g::chain_target> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    if (t.front() == '$') {
      const expr e = st.pop();
      const auto* sym = e.get<symbol_expr>();
      const auto* str = e.get<string_expr>();
      if (sym == nullptr && str == nullptr)
        st.fail(in, error_code::invalid_value, fmt::format("variable {} is not a chain name", t));
      st.chain_target = sym ? sym->name : str->text;
    } else {
      st.chain_target = unquote(t);
    }
  }
};
template <verdict V>
struct verdict_action {
  template <class In>
  static void apply(const In& in, state& st) {
    st.push(st.span_of(in),
            verdict_expr{V, (V == verdict::jump || V == verdict::goto_) ? st.chain_target : std::string_view{}});
  }
};
template <>
struct action<g::verdict_accept> : verdict_action<verdict::accept> {};
template <>
struct action<g::verdict_drop> : verdict_action<verdict::drop> {};
template <>
struct action<g::verdict_continue> : verdict_action<verdict::continue_> {};
template <>
struct action<g::verdict_return> : verdict_action<verdict::return_> {};
template <>
struct action<g::verdict_jump> : verdict_action<verdict::jump> {};
template <>
struct action<g::verdict_goto> : verdict_action<verdict::goto_> {};

/// Builds an element from what was pushed since the element's mark (key, optional data, statements)
/// and pushes it on the element stack; a key that is itself a set (a `$variable` holding `{ ... }`)
/// contributes its elements instead.
template <class In>
void finish_element(const In& in, state& st) {
  const mark& m = st.top_mark();
  const std::size_t n = st.exprs.size() - m.exprs;
  element e;
  e.where = st.span_of(in);
  if (n == 1 && !st.elem_has_opts && st.stmts.size() == m.stmts) {
    if (const auto* inner = st.exprs.back().get<set_expr>()) {
      const auto inner_elements = inner->elements;
      st.exprs.pop_back();
      st.merge_elements(inner_elements, e.where);
      return;
    }
  }
  if (n == 2) e.data = st.pop_keep();
  e.key = st.pop_keep();
  if (st.stmts.size() > m.stmts) {
    st.elem_opts.stmts = st.keep_range(st.stmts, m.stmts);
    st.elem_has_opts = true;
  }
  if (st.elem_has_opts) e.options = st.src.store_one(st.elem_opts);
  st.elems.push_back(e);
}
template <>
struct action<g::set_elem_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    finish_element(in, st);
  }
};
template <>
struct action<g::set_stmt_element> {
  template <class In>
  static void apply(const In& in, state& st) {
    finish_element(in, st);
  }
};
template <>
struct action<g::set_stmt_legacy_element> : action<g::set_stmt_element> {};
template <>
struct action<g::set_list_member_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    if (in.size() == 0 || *in.begin() != '{') return;
    // A nested anonymous set: its elements join the enclosing set (nft merges them).
    const expr nested = st.pop();
    st.merge_elements(nested.get<set_expr>()->elements, st.span_of(in));
  }
};
// A map's key given twice with different data: the kernel refuses the second ("Could not process rule:
// File exists"); the same key with the same data is one element. Keys are matched as written (a key
// spelled two ways is not caught), so the check never refuses what nft takes.
void check_map_keys(const state& st, std::span<const element> elements) {
  if (elements.size() < 2 || elements.front().data == nullptr) return;
  const auto key_text = [&](const element& el) {
    return std::string_view(st.base + el.key->where.offset, el.key->where.length);
  };
  // (hash of the key as written, position): 16 bytes an element, sorted, so that equal keys meet
  std::vector<std::pair<std::size_t, std::uint32_t>> keys;
  keys.reserve(elements.size());
  for (std::uint32_t i = 0; i < elements.size(); ++i)
    if (elements[i].key != nullptr && elements[i].data != nullptr)
      keys.emplace_back(std::hash<std::string_view>{}(key_text(elements[i])), i);
  std::sort(keys.begin(), keys.end());
  for (std::size_t i = 1; i < keys.size(); ++i) {
    if (keys[i].first != keys[i - 1].first) continue;
    const element& first = elements[keys[i - 1].second];
    const element& again = elements[keys[i].second];
    if (key_text(first) != key_text(again) || equal(*first.data, *again.data)) continue;
    throw syntax_error{again.key->where.offset, again.key->where.length, error_code::object_exists,
                       fmt::format("key {} is in this map already, with other data (the kernel: \"File exists\")",
                                   key_text(again))};
  }
}

template <>
struct action<g::set_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    const auto elements = st.keep_range(st.elems, st.top_mark().elems);
    check_map_keys(st, elements);
    st.push(st.span_of(in), set_expr{elements});
  }
};
template <>
struct action<g::empty_set_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.push(st.span_of(in), set_expr{});
  }
};

// Statements -----------------------------------------------------------------------------------------

template <class In, class S>
void push_stmt(const In& in, state& st, S s) {
  st.stmts.push_back(stmt{st.span_of(in), s});
}

template <>
struct action<g::verdict_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    const expr e = st.pop();
    const auto* v = e.get<verdict_expr>();
    push_stmt(in, st, verdict_stmt{v->kind, v->chain});
  }
};
template <>
struct action<g::counter_packets> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.counter.packets = number_of(in, st);
    st.sx.counter.has_values = true;
  }
};
template <>
struct action<g::counter_bytes> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.counter.bytes = number_of(in, st);
    st.sx.counter.has_values = true;
  }
};
template <>
struct action<g::counter_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    push_stmt(in, st, st.sx.counter);
  }
};

std::uint64_t bytes_multiplier(std::string_view unit) noexcept {
  if (unit.starts_with("kbytes")) return 1024;
  if (unit.starts_with("mbytes")) return 1024 * 1024;
  return 1;
}
template <>
struct action<g::limit_over> {
  static void apply0(state& st) { st.sx.limit_mode_over = true; }
};
template <>
struct action<g::limit_until> {
  static void apply0(state& st) { st.sx.limit_mode_until = true; }
};
template <>
struct action<g::limit_rate_value> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.limit.rate = number_of(in, st);
  }
};
template <>
struct action<g::limit_rate_unit> {
  template <class In>
  static void apply(const In& in, state& st) {
    const auto m = bytes_multiplier(text(in));
    if (st.sx.limit.rate > UINT64_MAX / m) st.fail(in, error_code::number_out_of_range, "rate too large");
    st.sx.limit.rate = st.sx.limit.rate * m;
    st.sx.limit.bytes = true;
  }
};
template <>
struct action<g::time_unit_word> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.limit.unit = *vocab::lookup(vocab::time_units, text(in));
  }
};
template <>
struct action<g::limit_burst_value> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.limit.burst = static_cast<std::uint32_t>(number_of(in, st, UINT32_MAX));
    st.sx.limit.has_burst = true;
  }
};
template <>
struct action<g::limit_burst_unit> {
  template <class In>
  static void apply(const In& in, state& st) {
    const auto m = bytes_multiplier(text(in));
    if (st.sx.limit.burst > UINT32_MAX / m) st.fail(in, error_code::number_out_of_range, "burst too large");
    st.sx.limit.burst = static_cast<std::uint32_t>(st.sx.limit.burst * m);
    if (text(in) != "packets" && !st.sx.limit.bytes)
      st.fail(in, error_code::invalid_value, "a packet rate takes a burst in packets");
    if (text(in) == "packets" && st.sx.limit.bytes)
      st.fail(in, error_code::invalid_value, "a byte rate takes a burst in bytes (nft: \"unexpected packets\")");
  }
};
template <>
struct action<g::limit_burst> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.limit_burst = text(in);
  }
};
/// nft's default burst when none is written: 5 packets for a packet rate, none for a byte rate.
void default_burst(limit_stmt& l) {
  if (!l.has_burst) l.burst = l.bytes ? 0 : 5;
}
template <>
struct action<g::limit_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    // parser_bison.y refuses a packet burst of 0 in a statement (a limit object takes it as the default)
    if (!st.sx.limit.bytes && st.sx.limit.has_burst && st.sx.limit.burst == 0)
      st.fail(st.sx.limit_burst.data(), st.sx.limit_burst.size(), error_code::invalid_value,
              "packet limit burst must be > 0");
    st.sx.limit.over = st.sx.limit_mode_over;
    default_burst(st.sx.limit);
    if (const auto why = vocab::limit_refusal(st.sx.limit)) st.fail(in, error_code::number_out_of_range, std::string(*why));
    push_stmt(in, st, st.sx.limit);
  }
};
template <>
struct action<g::quota_value> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.quota.bytes = number_of(in, st);
  }
};
template <>
struct action<g::quota_unit> {
  template <class In>
  static void apply(const In& in, state& st) {
    const auto m = bytes_multiplier(text(in));
    if (st.sx.quota.bytes > UINT64_MAX / m) st.fail(in, error_code::number_out_of_range, "quota too large");
    st.sx.quota.bytes = st.sx.quota.bytes * m;
  }
};
template <>
struct action<g::quota_used_value> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.quota.used = number_of(in, st);
    st.sx.quota.has_used = true;
  }
};
template <>
struct action<g::quota_used_unit> {
  template <class In>
  static void apply(const In& in, state& st) {
    const auto m = bytes_multiplier(text(in));
    if (st.sx.quota.used > UINT64_MAX / m) st.fail(in, error_code::number_out_of_range, "quota too large");
    st.sx.quota.used = st.sx.quota.used * m;
  }
};
template <>
struct action<g::quota_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.quota.over = st.sx.limit_mode_over;
    if (const auto why = vocab::quota_refusal(st.sx.quota)) st.fail(in, error_code::number_out_of_range, std::string(*why));
    push_stmt(in, st, st.sx.quota);
  }
};
template <>
struct action<g::connlimit_count> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.connlimit.count = static_cast<std::uint32_t>(number_of(in, st, UINT32_MAX));
  }
};
template <>
struct action<g::connlimit_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.connlimit.over = st.sx.limit_mode_over;
    push_stmt(in, st, st.sx.connlimit);
  }
};
template <>
struct action<g::last_used_time> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.last.used_ms = time_of(in, st);
    st.sx.last.has_used = true;
  }
};
template <>
struct action<g::last_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    push_stmt(in, st, st.sx.last);
  }
};

template <object_type T>
struct objref_action {
  template <class In>
  static void apply(const In& in, state& st) {
    push_stmt(in, st, objref_stmt{T, st.pop_keep()});
  }
};
template <>
struct action<g::objref_counter> : objref_action<object_type::counter> {};
template <>
struct action<g::objref_limit> : objref_action<object_type::limit> {};
template <>
struct action<g::objref_quota> : objref_action<object_type::quota> {};
template <>
struct action<g::objref_synproxy> : objref_action<object_type::synproxy> {};
template <>
struct action<g::objref_tunnel> : objref_action<object_type::tunnel> {};

template <>
struct action<g::log_prefix_value> {
  template <class In>
  static void apply(const In& in, state& st) {
    if (text(in).front() == '$')
      st.sx.log.prefix = st.pop_keep();
    else
      st.sx.log.prefix = st.keep(expr{st.span_of(in), string_expr{unquote(text(in))}});
  }
};
template <>
struct action<g::log_group_value> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.log.group = static_cast<std::uint16_t>(number_of(in, st, UINT16_MAX));
    st.sx.log.present |= 2;
  }
};
template <>
struct action<g::log_snaplen_value> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.log.snaplen = static_cast<std::uint32_t>(number_of(in, st, UINT32_MAX));
    st.sx.log.present |= 4;
  }
};
template <>
struct action<g::log_queue_threshold_value> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.log.queue_threshold = static_cast<std::uint16_t>(number_of(in, st, UINT16_MAX));
    st.sx.log.present |= 8;
  }
};
template <>
struct action<g::log_level_word> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.log.level = *vocab::lookup(vocab::log_levels, text(in));
    st.sx.log.present |= 1;
  }
};
template <log_flag F>
struct log_flag_action {
  static void apply0(state& st) { st.sx.log.flags |= static_cast<std::uint8_t>(F); }
};
template <>
struct action<g::log_flag_tcp_sequence> : log_flag_action<log_flag::tcp_sequence> {};
template <>
struct action<g::log_flag_tcp_options> : log_flag_action<log_flag::tcp_options> {};
template <>
struct action<g::log_flag_ip_options> : log_flag_action<log_flag::ip_options> {};
template <>
struct action<g::log_flag_skuid> : log_flag_action<log_flag::skuid> {};
template <>
struct action<g::log_flag_ether> : log_flag_action<log_flag::ether> {};
template <>
struct action<g::log_flag_all> : log_flag_action<log_flag::all> {};
template <>
struct action<g::log_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    push_stmt(in, st, st.sx.log);
  }
};

template <>
struct action<g::reject_code> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    if (g::is_digit(t.front()))
      st.sx.reject.code = st.keep(expr{st.span_of(in), integer_expr{number_of(in, st, 255)}});
    else
      st.sx.reject.code = st.keep(expr{st.span_of(in), symbol_expr{t}});
  }
};
template <reject_type T>
struct reject_type_action {
  static void apply0(state& st) { st.sx.reject.type = T; }
};
template <>
struct action<g::reject_tcp_reset> : reject_type_action<reject_type::tcp_reset> {};
template <>
struct action<g::reject_icmp> : reject_type_action<reject_type::icmp> {};
template <>
struct action<g::reject_icmpv6> : reject_type_action<reject_type::icmpv6> {};
template <>
struct action<g::reject_icmpx> : reject_type_action<reject_type::icmpx> {};
template <>
struct action<g::reject_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    push_stmt(in, st, st.sx.reject);
  }
};

template <nat_flag F>
struct nat_flag_action {
  static void apply0(state& st) { st.sx.nat.flags |= static_cast<std::uint8_t>(F); }
};
template <>
struct action<g::nat_flags_again> {
  static void apply0(state& st) { st.sx.nat.flags = 0; }
};
template <>
struct action<g::nat_flag_random> : nat_flag_action<nat_flag::random> {};
template <>
struct action<g::nat_flag_fully_random> : nat_flag_action<nat_flag::fully_random> {};
template <>
struct action<g::nat_flag_persistent> : nat_flag_action<nat_flag::persistent> {};
template <>
struct action<g::nat_address> {
  static void apply0(state& st) {
    const expr* a = st.pop_keep();
    // `dnat to 10.0.0.1.5`, `10.0.0.300:80` read as constants joined by `.`: no address (nft takes a
    // concatenation here only as the key of a map lookup)
    if (const auto* c = a->get<concat_expr>();
        c != nullptr && std::all_of(c->items.begin(), c->items.end(), [](const expr& e) {
          return e.is<integer_expr>() || e.is<address_expr>() || e.is<symbol_expr>() || e.is<string_expr>();
        }))
      throw syntax_error{a->where.offset, a->where.length, error_code::invalid_address,
                         fmt::format("`{}` is not an address", std::string_view(st.base + a->where.offset,
                                                                                a->where.length))};
    st.sx.nat.address = a;
  }
};
template <>
struct action<g::nat_port> {
  static void apply0(state& st) { st.sx.nat.port = st.pop_keep(); }
};
template <>
struct action<g::nat_family> {
  static void apply0(state& st) { st.sx.nat.protocol = st.sel.proto; }
};
template <>
struct action<g::nat_mode_addr_port> {
  static void apply0(state& st) { st.sx.nat.mode = nat_mode::addr_port; }
};
template <>
struct action<g::nat_mode_interval> {
  static void apply0(state& st) { st.sx.nat.mode = nat_mode::interval; }
};
template <>
struct action<g::nat_mode_prefix> {
  static void apply0(state& st) { st.sx.nat.mode = nat_mode::prefix; }
};
template <>
struct action<g::nat_snat> {
  static void apply0(state& st) { st.sx.nat.kind = nat_kind::snat; }
};
template <>
struct action<g::nat_dnat> {
  static void apply0(state& st) { st.sx.nat.kind = nat_kind::dnat; }
};
template <>
struct action<g::nat_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    push_stmt(in, st, st.sx.nat);
  }
};
template <>
struct action<g::masq_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.nat.kind = nat_kind::masquerade;
    push_stmt(in, st, st.sx.nat);
  }
};
template <>
struct action<g::redir_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.nat.kind = nat_kind::redirect;
    push_stmt(in, st, st.sx.nat);
  }
};
template <>
struct action<g::tproxy_family> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.tproxy_family = text(in) == "ip" ? nfproto::ip : nfproto::ip6;
  }
};
template <>
struct action<g::tproxy_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    push_stmt(in, st, tproxy_stmt{st.sx.tproxy_family, st.sx.nat.address, st.sx.nat.port});
  }
};

template <queue_flag F>
struct queue_flag_action {
  static void apply0(state& st) { st.sx.queue.flags |= static_cast<std::uint8_t>(F); }
};
template <>
struct action<g::queue_flag_bypass> : queue_flag_action<queue_flag::bypass> {};
template <>
struct action<g::queue_flag_fanout> : queue_flag_action<queue_flag::fanout> {};
/// The queue numbers nft's grammar takes: after `num` a number or a range (`queue_stmt_expr_simple`),
/// after `to` also a numgen, a hash or a map (`queue_stmt_expr`); a bare selector is neither.
void take_queue_number(state& st, bool simple) {
  const expr* n = st.pop_keep();
  const bool number = n->is<integer_expr>() || n->is<range_expr>() || n->is<symbol_expr>();
  if (!number && (simple || !(n->is<numgen_expr>() || n->is<hash_expr>() || n->is<map_expr>())))
    throw syntax_error{n->where.offset, n->where.length, error_code::syntax,
                       fmt::format("unexpected `{}`: queue {} takes a number or a range{} (nft: \"syntax error\")",
                                   st.src.text().substr(n->where.offset, n->where.length), simple ? "num" : "to",
                                   simple ? "" : ", a numgen, a hash or a map")};
  st.sx.queue.number = n;
}
template <>
struct action<g::queue_number> {
  static void apply0(state& st) { take_queue_number(st, false); }
};
template <>
struct action<g::queue_num_number> {
  static void apply0(state& st) { take_queue_number(st, true); }
};
template <>
struct action<g::queue_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    push_stmt(in, st, st.sx.queue);
  }
};
template <>
struct action<g::dup_address> {
  static void apply0(state& st) { st.sx.dup.address = st.pop_keep(); }
};
template <>
struct action<g::dup_device> {
  static void apply0(state& st) { st.sx.dup.device = st.pop_keep(); }
};
template <>
struct action<g::dup_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    push_stmt(in, st, st.sx.dup);
  }
};
template <>
struct action<g::fwd_family> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.fwd.protocol = text(in) == "ip" ? nfproto::ip : nfproto::ip6;
  }
};
template <>
struct action<g::fwd_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    // `fwd to DEV` names a device only; `fwd ip to ADDR device DEV` both.
    fwd_stmt f{st.sx.fwd.protocol, st.sx.dup.address, st.sx.dup.device};
    if (f.device == nullptr) {
      f.device = f.address;
      f.address = nullptr;
    }
    push_stmt(in, st, f);
  }
};
template <>
struct action<g::notrack_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    push_stmt(in, st, notrack_stmt{});
  }
};
template <>
struct action<g::flow_offload_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    std::string_view t = text(in);
    t = t.substr(t.find('@') + 1);
    while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
    push_stmt(in, st, flow_offload_stmt{t});
  }
};
template <>
struct action<g::synproxy_mss> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.synproxy.mss = static_cast<std::uint16_t>(number_of(in, st, UINT16_MAX));
    st.sx.synproxy.present |= 1;
  }
};
template <>
struct action<g::synproxy_wscale> {
  template <class In>
  static void apply(const In& in, state& st) {
    // a byte, as nft keeps it (RFC 7323 shifts by at most 14, but nft and the kernel take and list up to 255)
    st.sx.synproxy.wscale = static_cast<std::uint8_t>(number_of(in, st, 255));
    st.sx.synproxy.present |= 2;
  }
};
template <>
struct action<g::synproxy_timestamp> {
  static void apply0(state& st) { st.sx.synproxy.flags |= static_cast<std::uint8_t>(synproxy_flag::timestamp); }
};
template <>
struct action<g::synproxy_sack_perm> {
  static void apply0(state& st) { st.sx.synproxy.flags |= static_cast<std::uint8_t>(synproxy_flag::sack_perm); }
};
template <>
struct action<g::synproxy_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    push_stmt(in, st, st.sx.synproxy);
  }
};
template <>
struct action<g::optstrip_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    payload_expr p = st.sel.payload;
    p.protocol = header::tcp_option;
    p.field = header_field::none;
    push_stmt(in, st, optstrip_stmt{st.keep(expr{st.span_of(in), p})});
  }
};
template <>
struct action<g::xt_kind_match> {
  static void apply0(state& st) { st.sx.xt = xt_kind::match; }
};
template <>
struct action<g::xt_kind_target> {
  static void apply0(state& st) { st.sx.xt = xt_kind::target; }
};
template <>
struct action<g::xt_kind_watcher> {
  static void apply0(state& st) { st.sx.xt = xt_kind::watcher; }
};
template <>
struct action<g::xt_name> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.meter_name = unquote(text(in));
  }
};
template <>
struct action<g::xt_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    push_stmt(in, st, xt_stmt{st.sx.xt, st.sx.meter_name});
    st.sink.warning(error_code::not_translatable, st.span_of(in),
                    fmt::format("'xt {} {}' is an iptables-nft expression that nft cannot show; it is kept "
                                "but cannot be translated",
                                name(st.sx.xt), st.sx.meter_name));
  }
};
template <set_op Op>
struct set_op_action {
  static void apply0(state& st) { st.sx.op = Op; }
};
template <>
struct action<g::set_op_add> : set_op_action<set_op::add> {};
template <>
struct action<g::set_op_update> : set_op_action<set_op::update> {};
template <>
struct action<g::set_op_delete> : set_op_action<set_op::delete_> {};
template <>
struct action<g::set_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    if (st.elems.back().options != nullptr && !st.elems.back().options->comment.empty())
      st.fail(in, error_code::invalid_value,
              "a comment on the key of a set statement (nft: \"Key expression comments are not supported\")");
    const element* e = st.src.store_one(st.elems.back());
    st.elems.pop_back();
    const expr* ref = st.pop_keep();
    push_stmt(in, st, set_stmt{st.sx.op, ref, e});
  }
};
template <>
struct action<g::set_stmt_legacy> : action<g::set_stmt> {};
template <>
struct action<g::meter_name> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.meter_name = text(in);
  }
};
template <>
struct action<g::meter_size> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.meter_size = static_cast<std::uint32_t>(number_of(in, st, UINT32_MAX));
  }
};
template <>
struct action<g::meter_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    const element* e = st.src.store_one(st.elems.back());
    st.elems.pop_back();
    const expr* name = st.keep(expr{st.span_of(in), symbol_expr{st.sx.meter_name}});
    // nft gives a meter without a size, or of size 0, its default of 65535 (and lists it)
    push_stmt(in, st,
              meter_stmt{st.src.store_one(meter_spec{
                  name, e, st.sx.meter_size != 0 ? st.sx.meter_size : meter_stmt::default_size})});
  }
};

// Rules and anonymous chains ---------------------------------------------------------------------------

template <>
struct action<g::rule_begin> {
  static void apply0(state& st) {
    st.rule_comment = {};
    st.rule_handle = 0;
  }
};
template <>
struct action<g::handle_value> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.number = number_of(in, st);
  }
};
template <>
struct action<g::rule_handle> {
  static void apply0(state& st) { st.rule_handle = st.number; }
};
template <>
struct action<g::rule_comment> {
  static void apply0(state&) {}
};
template <>
struct action<g::rule> {
  template <class In>
  static void apply(const In& in, state& st) {
    rule r;
    r.where = st.span_of(in);
    r.stmts = st.keep_range(st.stmts, st.top_mark().stmts);
    if (auto refused = check_rule(st.fam, r.stmts))
      throw syntax_error{refused->where.offset, refused->where.length, refused->code, std::move(refused->message)};
    // The rule's own comment is the last thing it matched; element comments inside were consumed.
    const std::string_view t = text(in);
    if (!st.rule_comment.empty() && st.rule_comment.data() >= t.data() &&
        st.rule_comment.data() + st.rule_comment.size() <= t.data() + t.size())
      r.comment = st.rule_comment;
    r.handle = st.rule_handle;
    st.rule_comment = {};
    st.rules.push_back(r);
  }
};
template <>
struct action<g::block_brace<g::block_items<g::rule>>> {
  template <class In>
  static void apply(const In& in, state& st) {
    chain_ctx c;
    c.decl.where = st.span_of(in);
    c.rules_mark = static_cast<std::uint32_t>(st.rules.size());
    st.chain_stack.push_back(c);
  }
};
template <>
struct action<g::subchain_block> {
  template <class In>
  static void apply(const In& in, state& st) {
    chain_ctx c = st.chain_stack.back();
    st.chain_stack.pop_back();
    c.decl.where = st.span_of(in);
    c.decl.rules = st.keep_range(st.rules, c.rules_mark);
    st.chains.push_back(c.decl);
  }
};
template <>
struct action<g::chain_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    // nft refuses an anonymous chain in an anonymous chain: "too many levels of nesting" in a table
    // block, "Operation not supported" from the kernel in `add rule`
    for (const auto& r : st.chains.back().rules)
      for (const auto& x : r.stmts)
        if (x.get<anonymous_chain_stmt>() != nullptr)
          st.fail(st.base + x.where.offset, x.where.length, error_code::nesting_too_deep,
                  "an anonymous chain inside an anonymous chain (nft: \"too many levels of nesting\")");
    const chain* body = st.src.store_one(st.chains.back());
    st.chains.pop_back();
    push_stmt(in, st, anonymous_chain_stmt{text(in).starts_with("jump") ? verdict::jump : verdict::goto_, body});
  }
};

// Chains -------------------------------------------------------------------------------------------------

template <>
struct action<g::chain_identifier> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.chain_name = text(in);
  }
};
template <>
struct action<g::block_brace<g::block_items<g::chain_block_item>>> {
  template <class In>
  static void apply(const In& in, state& st) {
    chain_ctx c;
    c.decl.where = st.span_of(in);
    c.decl.name = st.chain_name;
    c.rules_mark = static_cast<std::uint32_t>(st.rules.size());
    st.chain_stack.push_back(c);
  }
};
template <>
struct action<g::block_handle<g::block_items<g::chain_block_item>>> {
  static void apply0(state& st) { st.chain_stack.back().decl.handle = st.number; }
};
template <>
struct action<g::chain_type_word> {
  template <class In>
  static void apply(const In& in, state& st) {
    base_chain b;
    b.type = *vocab::lookup(vocab::chain_types, text(in));
    st.base_spec = st.src.store_one(b);
  }
};
template <>
struct action<g::hook_name> {
  template <class In>
  static void apply(const In& in, state& st) {
    const auto h = vocab::lookup(vocab::hooks, text(in));
    if (!h)
      st.fail(in, error_code::invalid_value,
              fmt::format("unknown hook '{}'; expected prerouting, input, forward, output, postrouting, ingress "
                          "or egress",
                          text(in)));
    base_chain b = *st.base_spec;
    b.hook_point = *h;
    st.base_spec = st.src.store_one(b);
  }
};
template <>
struct action<g::device_name> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    if (t.front() == '$') {
      if (!st.push_device_names(st.pop(), st.span_of(in)))
        st.fail(in, error_code::invalid_value, fmt::format("variable {} is not a device name", t));
    } else {
      st.names.push_back(unquote(t));
    }
  }
};
/// Collects the device names pushed since the rule's mark.
struct device_list_action {
  template <class In>
  static void apply(const In&, state& st) {
    st.device_names = st.keep_range(st.names, st.top_mark().names);
  }
};
template <>
struct action<g::flowtable_expr> {
  template <class In>
  static void apply(const In& in, state& st) {
    // A variable holding `{ "a", "b" }` was pushed as an expression.
    if (text(in).front() == '$' && !st.push_device_names(st.pop(), st.span_of(in)))
      st.fail(in, error_code::invalid_value, fmt::format("variable {} is not a device list", text(in)));
    device_list_action::apply(in, st);
  }
};
template <>
struct action<g::dev_spec_single> : device_list_action {};
// A signed 32-bit chain priority written as `[-]digits` (nft: -2147483648 to 2147483647).
std::optional<std::int32_t> numeric_priority(std::string_view t) {
  const bool negative = !t.empty() && t.front() == '-';
  if (negative) {
    const auto at = t.find_first_not_of("- \t");
    if (at == std::string_view::npos || t.find('-', 1) < at) return std::nullopt;
    t = t.substr(at);
  }
  const auto v = decode_uint(t);
  if (!v || *v > (negative ? 0x80000000U : 0x7fffffffU)) return std::nullopt;
  return negative ? static_cast<std::int32_t>(-static_cast<std::int64_t>(*v)) : static_cast<std::int32_t>(*v);
}

template <>
struct action<g::prio_number> {
  template <class In>
  static void apply(const In& in, state& st) {
    std::string_view t = text(in);
    const auto p = numeric_priority(t);
    if (!p) st.fail(in, error_code::number_out_of_range, "priority out of range");
    st.prio = priority{priority_name::numeric, *p};
  }
};
template <>
struct action<g::prio_name> {
  template <class In>
  static void apply(const In& in, state& st) {
    std::string_view t = text(in);
    std::int32_t offset = 0;
    // knftables writes `dstnat-10`: one word to nft's scanner.
    if (const auto dash = t.find('-'); dash != std::string_view::npos) {
      const auto v = decode_uint(t.substr(dash + 1));
      if (!v || *v > 0x7fffffffU - 300) st.fail(in, error_code::invalid_value, fmt::format("'{}' is not a priority", t));
      offset = -static_cast<std::int32_t>(*v);
      t = t.substr(0, dash);
    }
    const auto n = vocab::lookup(vocab::priority_names, t);
    if (!n)
      st.fail(in, error_code::invalid_value,
              fmt::format("unknown priority '{}'; expected a number or raw, mangle, dstnat, filter, security, "
                          "srcnat, out",
                          t));
    st.prio = priority{*n, offset};
  }
};
template <>
struct action<g::prio_offset_plus> {
  template <class In>
  static void apply(const In& in, state& st) {
    std::string_view t = text(in);
    t = t.substr(t.find_first_not_of("+ \t"));
    const auto v = decode_uint(t);
    // the named priority plus the offset must be a 32-bit priority in every family (names are -300..300)
    if (!v || *v > 0x7fffffffU - 300) st.fail(in, error_code::number_out_of_range, "priority offset out of range");
    st.prio.offset += static_cast<std::int32_t>(*v);
  }
};
template <>
struct action<g::prio_offset_minus> {
  template <class In>
  static void apply(const In& in, state& st) {
    std::string_view t = text(in);
    t = t.substr(t.find_first_not_of("- \t"));
    const auto v = decode_uint(t);
    // the named priority plus the offset must be a 32-bit priority in every family (names are -300..300)
    if (!v || *v > 0x7fffffffU - 300) st.fail(in, error_code::number_out_of_range, "priority offset out of range");
    st.prio.offset -= static_cast<std::int32_t>(*v);
  }
};
template <>
struct action<g::extended_prio_spec> {
  template <class In>
  static void apply(const In& in, state& st) {
    if (text(in).front() != '$') return;
    const expr e = st.pop();
    if (const auto* i = e.get<integer_expr>()) {
      if (i->value > 0x7fffffffU) st.fail(in, error_code::number_out_of_range, "priority out of range");
      st.prio = priority{priority_name::numeric, static_cast<std::int32_t>(i->value)};
    } else if (const auto* n = e.get<symbol_expr>(); n != nullptr && n->name.starts_with('-')) {
      // `define base = -100`: a word to nft's scanner, a number to its priority rule
      const auto p = numeric_priority(n->name);
      if (!p) st.fail(in, error_code::invalid_value, fmt::format("variable {} is not a priority", text(in)));
      st.prio = priority{priority_name::numeric, *p};
    } else if (const auto* s = e.get<symbol_expr>(); s != nullptr && vocab::lookup(vocab::priority_names, s->name)) {
      st.prio = priority{*vocab::lookup(vocab::priority_names, s->name), 0};
    } else {
      st.fail(in, error_code::invalid_value, fmt::format("variable {} is not a priority", text(in)));
    }
  }
};
template <>
struct action<g::hook_spec> {
  template <class In>
  static void apply(const In& in, state& st) {
    base_chain b = *st.base_spec;
    b.prio = st.prio;
    b.devices_block = text(in).find("devices") != std::string_view::npos;
    b.devices = st.device_names;
    st.base_spec = st.src.store_one(b);
    if (!st.chain_stack.empty()) st.chain_stack.back().decl.base = st.base_spec;
  }
};
template <>
struct action<g::chain_devices> {
  template <class In>
  static void apply(const In& in, state& st) {
    auto& c = st.chain_stack.back().decl;
    base_chain b = c.base ? *c.base : base_chain{};
    b.devices_block = true;
    b.devices = st.device_names;
    (void)in;
    c.base = st.src.store_one(b);
  }
};
template <>
struct action<g::policy_accept> {
  static void apply0(state& st) { st.chain_stack.back().decl.policy = chain_policy::accept; }
};
template <>
struct action<g::policy_drop> {
  static void apply0(state& st) { st.chain_stack.back().decl.policy = chain_policy::drop; }
};
template <>
struct action<g::policy_spec> {
  template <class In>
  static void apply(const In& in, state& st) {
    auto& ctx = st.chain_stack.back();
    if (ctx.policy_given) st.fail(in, error_code::duplicate_option, "chain policy given twice (nft: \"you cannot set chain policy twice\")");
    ctx.policy_given = true;
    const std::string_view t = text(in);
    if (t.find('$') == std::string_view::npos) return;
    const expr e = st.pop();
    const auto* s = e.get<symbol_expr>();
    if (s != nullptr && s->name == "accept")
      st.chain_stack.back().decl.policy = chain_policy::accept;
    else if (s != nullptr && s->name == "drop")
      st.chain_stack.back().decl.policy = chain_policy::drop;
    else
      st.fail(in, error_code::invalid_value, "a chain policy is accept or drop");
  }
};
template <>
struct action<g::chain_flags_spec> {
  static void apply0(state& st) { st.chain_stack.back().decl.offload = true; }
};
/// nft takes one comment per table, chain, set, map or object ("You can only specify this once"); each
/// starts without one.
template <class In, class Text>
void set_comment_once(const In& in, state& st, Text& comment) {
  if (!comment.empty())
    st.fail(in, error_code::duplicate_option, "comment given twice (nft: \"You can only specify this once\")");
  comment = st.rule_comment;
  st.rule_comment = {};
}
template <>
struct action<g::chain_comment> {
  template <class In>
  static void apply(const In& in, state& st) {
    set_comment_once(in, st, st.chain_stack.back().decl.comment);
  }
};
template <>
struct action<g::chain_block> {
  template <class In>
  static void apply(const In& in, state& st) {
    chain_ctx c = st.chain_stack.back();
    st.chain_stack.pop_back();
    c.decl.rules = st.keep_range(st.rules, c.rules_mark);
    (void)in;
    st.chains.push_back(c.decl);
  }
};
template <>
struct action<g::chain_decl> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.chains.back().where = st.span_of(in);
  }
};

// Sets, maps ---------------------------------------------------------------------------------------------

template <>
struct action<g::set_identifier> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.set_name = text(in);
  }
};
template <class Items>
struct set_open_action {
  template <class In>
  static void apply(const In& in, state& st) {
    st.cur_set = set{};
    st.cur_set.file = &st.src;
    st.cur_set.where = st.span_of(in);
    st.cur_set.name = st.set_name;
    st.cur_set.is_map = std::is_same_v<Items, g::block_items<g::map_block_item>>;
    st.set_elements_at = {};
  }
};
template <>
struct action<g::block_brace<g::block_items<g::set_block_item>>> : set_open_action<g::block_items<g::set_block_item>> {
};
template <>
struct action<g::block_brace<g::block_items<g::map_block_item>>> : set_open_action<g::block_items<g::map_block_item>> {
};
template <>
struct action<g::block_handle<g::block_items<g::set_block_item>>> {
  static void apply0(state& st) { st.cur_set.handle = st.number; }
};
template <>
struct action<g::block_handle<g::block_items<g::map_block_item>>> {
  static void apply0(state& st) { st.cur_set.handle = st.number; }
};
template <>
struct action<g::data_type_expr> {
  template <class In>
  static void apply(const In&, state& st) {
    st.key_names = st.keep_range(st.names, st.top_mark().names);
  }
};
template <>
struct action<g::map_data_type> {
  template <class In>
  static void apply(const In&, state& st) {
    st.data_names = st.keep_range(st.names, st.top_mark().names);
  }
};
template <>
struct action<g::type_identifier> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.names.push_back(text(in));
  }
};
template <>
struct action<g::set_type_key> {
  template <class In>
  static void apply(const In&, state& st) {
    st.cur_set.key = set_type{};
    st.cur_set.key.names = st.key_names;
  }
};
template <>
struct action<g::set_typeof_key> {
  template <class In>
  static void apply(const In&, state& st) {
    st.cur_set.key = set_type{};
    st.cur_set.key.typeof_expr = st.pop_keep();
  }
};
template <>
struct action<g::map_data_interval> {
  static void apply0(state& st) { st.cur_set.data.interval = true; }
};
template <object_type T>
struct map_obj_action {
  static void apply0(state& st) { st.cur_set.data.object = T; }
};
template <>
struct action<g::map_obj_counter> : map_obj_action<object_type::counter> {};
template <>
struct action<g::map_obj_quota> : map_obj_action<object_type::quota> {};
template <>
struct action<g::map_obj_limit> : map_obj_action<object_type::limit> {};
template <>
struct action<g::map_obj_secmark> : map_obj_action<object_type::secmark> {};
template <>
struct action<g::map_obj_synproxy> : map_obj_action<object_type::synproxy> {};
template <>
struct action<g::map_obj_ct_helper> : map_obj_action<object_type::ct_helper> {};
template <>
struct action<g::map_obj_ct_timeout> : map_obj_action<object_type::ct_timeout> {};
template <>
struct action<g::map_obj_ct_expectation> : map_obj_action<object_type::ct_expectation> {};
template <>
struct action<g::map_type_key> {
  template <class In>
  static void apply(const In& in, state& st) {
    const bool interval = st.cur_set.data.interval;
    const auto object = st.cur_set.data.object;
    st.cur_set.key = set_type{};
    st.cur_set.data = set_type{};
    st.cur_set.data.interval = interval;
    st.cur_set.data.object = object;
    st.cur_set.key.names = st.key_names;
    if (!object) st.cur_set.data.names = st.data_names;
    (void)in;
  }
};
template <>
struct action<g::map_data_typeof> {
  static void apply0(state& st) { st.cur_set.data.typeof_expr = st.pop_keep(); }
};
template <>
struct action<g::map_typeof_key> {
  template <class In>
  static void apply(const In& in, state& st) {
    const bool interval = st.cur_set.data.interval;
    const auto object = st.cur_set.data.object;
    const expr* data = st.cur_set.data.typeof_expr;
    st.cur_set.data = set_type{};
    st.cur_set.data.interval = interval;
    st.cur_set.data.object = object;
    st.cur_set.data.typeof_expr = data;
    if (data == nullptr && !object && text(in).find(':') != std::string_view::npos)
      st.cur_set.data.names = st.data_names;
    st.cur_set.key = set_type{};
    st.cur_set.key.typeof_expr = st.pop_keep();
    (void)in;
  }
};
template <>
struct action<g::set_flag_word> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    set_flag f;
    if (t == "constant")
      f = set_flag::constant;
    else if (t == "interval")
      f = set_flag::interval;
    else if (t == "timeout")
      f = set_flag::timeout;
    else if (t == "dynamic")
      f = set_flag::dynamic;
    else
      st.fail(in, error_code::invalid_value,
              fmt::format("unknown set flag '{}'; expected constant, interval, timeout or dynamic", t));
    st.set_flags_line |= static_cast<std::uint8_t>(f);
  }
};
/// A second `flags` line replaces the first in a set (`set->flags = $3`) and adds to it in a map
/// (`$1->flags |= $3`), as nft reads them.
template <>
struct action<g::set_flags_spec> {
  static void apply0(state& st) {
    if (st.cur_set.is_map)
      st.cur_set.flags |= st.set_flags_line;
    else
      st.cur_set.flags = st.set_flags_line;
    st.set_flags_line = 0;
  }
};
template <>
struct action<g::set_timeout> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    const auto value = t.substr(t.find_last_of(" \t") + 1);
    const auto v = seconds_or_time(value);
    if (!v) st.fail(in, error_code::invalid_value, "bad timeout");
    drop_option_value(st, value);
    st.cur_set.timeout_ms = *v;
    st.cur_set.has_timeout = true;
  }
};
template <>
struct action<g::set_gc_interval> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    const auto value = t.substr(t.find_last_of(" \t") + 1);
    const auto v = seconds_or_time(value);
    if (!v) st.fail(in, error_code::invalid_value, "bad gc-interval");
    drop_option_value(st, value);
    st.cur_set.gc_interval_ms = *v;
    st.cur_set.has_gc_interval = true;
  }
};
template <>
struct action<g::set_size_value> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.cur_set.size = static_cast<std::uint32_t>(number_of(in, st, UINT32_MAX));
  }
};
template <>
struct action<g::set_policy_performance> {
  static void apply0(state& st) { st.cur_set.policy = set_policy::performance; }
};
template <>
struct action<g::set_policy_memory> {
  static void apply0(state& st) { st.cur_set.policy = set_policy::memory; }
};
template <>
struct action<g::set_auto_merge> {
  static void apply0(state& st) { st.cur_set.auto_merge = true; }
};
template <>
struct action<g::set_elements> {
  template <class In>
  static void apply(const In& in, state& st) {
    const expr e = st.pop();
    if (const auto* s = e.get<set_expr>()) {
      // the literal's elements are in the arena already: the set takes them as they are. Given again,
      // nft 1.0.6 keeps only the last (`set->init = ...`); nft 1.1 refuses a second in a set.
      if (st.set_elements_at.length != 0) {
        st.sink.warning(error_code::duplicate_option, st.span_of(in),
                        "`elements =` given again: nft keeps only the last (nft 1.1 refuses a second one in a set)");
        st.sink.note(st.set_elements_at, "the earlier one, dropped");
      }
      st.cur_set.elements = s->elements;
      st.set_elements_at = st.span_of(in);
    } else {
      st.fail(in, error_code::invalid_value, "elements = takes a set { ... }");
    }
  }
};
template <>
struct action<g::set_comment> {
  template <class In>
  static void apply(const In& in, state& st) {
    set_comment_once(in, st, st.cur_set.comment);
  }
};
template <>
struct action<g::set_stateful> {
  template <class In>
  static void apply(const In&, state& st) {
    st.cur_set.stmts = st.keep_range(st.stmts, st.top_mark().stmts);
  }
};
struct set_block_action {
  template <class In>
  static void apply(const In&, state& st) {
    // the elements against the declared types, once the whole block is read (nft evaluates the
    // declaration before its elements, whatever their order in the block)
    auto p = check_set_declaration(st.cur_set, st.src.text());
    if (!p) p = check_elements(st.cur_set, st.cur_set.elements, st.src.text());
    if (p) throw syntax_error{p->where.offset, p->where.length, p->code, std::move(p->message)};
    st.sets.push_back(st.cur_set);
  }
};
template <>
struct action<g::set_block> : set_block_action {};
template <>
struct action<g::map_block> : set_block_action {};
struct set_decl_action {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sets.back().where = st.span_of(in);
  }
};
template <>
struct action<g::set_decl> : set_decl_action {};
template <>
struct action<g::map_decl> : set_decl_action {};

// Flowtables ---------------------------------------------------------------------------------------------

template <>
struct action<g::block_brace<g::block_items<g::flowtable_block_item>>> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.cur_flowtable = flowtable{};
    st.cur_flowtable.file = &st.src;
    st.cur_flowtable.where = st.span_of(in);
    st.cur_flowtable.name = st.set_name;
  }
};
template <>
struct action<g::block_handle<g::block_items<g::flowtable_block_item>>> {
  static void apply0(state& st) { st.cur_flowtable.handle = st.number; }
};
template <>
struct action<g::flowtable_hook> {
  template <class In>
  static void apply(const In& in, state& st) {
    std::string_view t = text(in).substr(4);
    t = t.substr(t.find_first_not_of(" \t"));
    const auto name = t.substr(0, g::word_length(t.data(), t.data() + t.size()));
    const auto h = vocab::lookup(vocab::hooks, name);
    if (!h) st.fail(in, error_code::invalid_value, fmt::format("unknown hook '{}'", name));
    st.cur_flowtable.has_hook = true;
    st.cur_flowtable.hook_point = *h;
    st.cur_flowtable.prio = st.prio;
  }
};
template <>
struct action<g::flowtable_devices> {
  template <class In>
  static void apply(const In&, state& st) {
    st.cur_flowtable.devices = st.device_names;
  }
};
template <>
struct action<g::flowtable_counter> {
  static void apply0(state& st) { st.cur_flowtable.counter = true; }
};
template <>
struct action<g::flowtable_offload> {
  static void apply0(state& st) { st.cur_flowtable.offload = true; }
};
template <>
struct action<g::flowtable_block> {
  template <class In>
  static void apply(const In&, state& st) {
    st.flowtables.push_back(st.cur_flowtable);
  }
};
template <>
struct action<g::flowtable_decl> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.flowtables.back().where = st.span_of(in);
  }
};

// Objects ------------------------------------------------------------------------------------------------

template <>
struct action<g::obj_identifier> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.obj_name = text(in);
  }
};
template <object_type T, class Items>
struct object_open_action {
  template <class In>
  static void apply(const In& in, state& st) {
    st.cur_object = object{};
    st.cur_object.file = &st.src;
    st.cur_object.where = st.span_of(in);
    st.cur_object.type = T;
    st.cur_object.name = st.obj_name;
    switch (T) {
      case object_type::ct_helper:
        st.cur_object.body = ct_helper_object{};
        break;
      case object_type::ct_timeout:
        st.cur_object.body = ct_timeout_object{};
        break;
      case object_type::ct_expectation:
        st.cur_object.body = ct_expectation_object{};
        break;
      default:
        break;
    }
  }
};
#define NFLENS_OBJECT_BLOCK(BLOCK, TYPE)                                     \
  template <>                                                                \
  struct action<g::block_brace<BLOCK>> : object_open_action<TYPE, BLOCK> {}; \
  template <>                                                                \
  struct action<g::block_handle<BLOCK>> {                                    \
    static void apply0(state& st) { st.cur_object.handle = st.number; }      \
  };
using g::counter_items, g::quota_items, g::limit_items, g::ct_helper_items, g::ct_timeout_items, g::ct_expect_items,
    g::secmark_items, g::synproxy_items;
NFLENS_OBJECT_BLOCK(counter_items, object_type::counter)
NFLENS_OBJECT_BLOCK(quota_items, object_type::quota)
NFLENS_OBJECT_BLOCK(limit_items, object_type::limit)
NFLENS_OBJECT_BLOCK(ct_helper_items, object_type::ct_helper)
NFLENS_OBJECT_BLOCK(ct_timeout_items, object_type::ct_timeout)
NFLENS_OBJECT_BLOCK(ct_expect_items, object_type::ct_expectation)
NFLENS_OBJECT_BLOCK(secmark_items, object_type::secmark)
NFLENS_OBJECT_BLOCK(synproxy_items, object_type::synproxy)
#undef NFLENS_OBJECT_BLOCK

template <>
struct action<g::counter_config> {
  static void apply0(state& st) { st.cur_object.body = st.sx.counter; }
};
template <>
struct action<g::quota_config> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.sx.quota.over = st.sx.limit_mode_over;
    if (const auto why = vocab::quota_refusal(st.sx.quota)) st.fail(in, error_code::number_out_of_range, std::string(*why));
    st.cur_object.body = st.sx.quota;
  }
};
template <>
struct action<g::limit_config> {
  template <class In>
  static void apply(const In& in, state& st) {
    // the kernel (nft_limit_init) gives a packet limit of burst 0 its default burst of 5
    if (!st.sx.limit.bytes && st.sx.limit.burst == 0) st.sx.limit.has_burst = false;
    st.sx.limit.over = st.sx.limit_mode_over;
    default_burst(st.sx.limit);
    if (const auto why = vocab::limit_refusal(st.sx.limit)) st.fail(in, error_code::number_out_of_range, std::string(*why));
    st.cur_object.body = st.sx.limit;
  }
};
template <>
struct action<g::synproxy_config> {
  // A block gives its settings on several lines (`mss 1460`, `wscale 7`, `timestamp sack-perm`):
  // each line adds to what the earlier ones set.
  static void apply0(state& st) {
    synproxy_stmt s = st.sx.synproxy;
    if (const auto* prev = std::get_if<synproxy_stmt>(&st.cur_object.body)) {
      if ((s.present & 1) == 0) s.mss = prev->mss;
      if ((s.present & 2) == 0) s.wscale = prev->wscale;
      s.present |= prev->present;
      s.flags |= prev->flags;
    }
    st.cur_object.body = s;
  }
};
template <>
struct action<g::secmark_config> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.cur_object.body = secmark_object{unquote(text(in))};
  }
};
template <>
struct action<g::obj_comment> {
  template <class In>
  static void apply(const In& in, state& st) {
    set_comment_once(in, st, st.cur_object.comment);
  }
};
template <>
struct action<g::ct_helper_type> {
  template <class In>
  static void apply(const In& in, state& st) {
    if (auto* h = std::get_if<ct_helper_object>(&st.cur_object.body)) h->type = unquote(text(in));
  }
};
template <>
struct action<g::ct_l4proto> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    if (auto* h = std::get_if<ct_helper_object>(&st.cur_object.body)) h->protocol = t;
    if (auto* h = std::get_if<ct_timeout_object>(&st.cur_object.body)) h->protocol = t;
    if (auto* h = std::get_if<ct_expectation_object>(&st.cur_object.body)) h->protocol = t;
    if (!vocab::ct_object_protocol(t))  // (after: the block's own check then finds a protocol written)
      st.fail(in, error_code::invalid_value,
              fmt::format("`{}` is no protocol of a ct helper, timeout or expectation (nft takes tcp or udp)", t));
  }
};
template <>
struct action<g::family_spec> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.fam = *vocab::lookup(vocab::families, text(in));
    st.fam_written = true;
  }
};
template <>
struct action<g::ct_l3proto_family> {
  template <class In>
  static void apply(const In& in, state& st) {
    const family f = *vocab::lookup(vocab::families, text(in));
    if (auto* h = std::get_if<ct_helper_object>(&st.cur_object.body)) h->l3proto = f;
    if (auto* h = std::get_if<ct_timeout_object>(&st.cur_object.body)) h->l3proto = f;
    if (auto* h = std::get_if<ct_expectation_object>(&st.cur_object.body)) h->l3proto = f;
  }
};
template <>
struct action<g::timeout_state> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    const auto name = t.substr(0, g::word_length(t.data(), t.data() + t.size()));
    auto value = t.substr(t.find(':') + 1);
    value = value.substr(value.find_first_not_of(" \t"));
    const auto v = seconds_or_time(value);
    if (!v) st.fail(in, error_code::invalid_value, "bad timeout value");
    st.timeout_states.push_back(ct_timeout_state{name, *v});
  }
};
template <>
struct action<g::timeout_policy> {
  template <class In>
  static void apply(const In&, state& st) {
    if (auto* h = std::get_if<ct_timeout_object>(&st.cur_object.body))
      h->policy = st.keep_range(st.timeout_states, st.top_mark().timeout_states);
  }
};
template <>
struct action<g::ct_expect_dport> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    const auto v = decode_uint(t.substr(t.find_last_of(" \t") + 1));
    if (!v || *v > 65535) st.fail(in, error_code::invalid_port, "port out of range");
    if (auto* h = std::get_if<ct_expectation_object>(&st.cur_object.body)) h->dport = static_cast<std::uint16_t>(*v);
  }
};
template <>
struct action<g::ct_expect_timeout> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    const auto value = t.substr(t.find_last_of(" \t") + 1);
    const auto v = seconds_or_time(value);
    if (!v) st.fail(in, error_code::invalid_value, "bad timeout");
    drop_option_value(st, value);
    if (auto* h = std::get_if<ct_expectation_object>(&st.cur_object.body)) h->timeout_ms = *v;
  }
};
template <>
struct action<g::ct_expect_size> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    const auto v = decode_uint(t.substr(t.find_last_of(" \t") + 1));
    if (auto* h = std::get_if<ct_expectation_object>(&st.cur_object.body); h != nullptr && v && *v <= UINT32_MAX)
      h->size = static_cast<std::uint32_t>(*v);  // (before the check: the block's own check then finds a size)
    // (nft keeps the low byte: 256 is 0, which it then refuses as missing)
    if (!v || *v > 255)
      st.fail(in, error_code::number_out_of_range, "an expectation size is 1 to 255 (nft: \"missing options\" past 255)");
  }
};
struct object_block_action {
  template <class In>
  static void apply(const In&, state& st) {
    st.objects.push_back(st.cur_object);
  }
};
template <>
struct action<g::counter_block> : object_block_action {};
template <>
struct action<g::quota_block> : object_block_action {};
template <>
struct action<g::limit_block> : object_block_action {};
// A ct helper needs its type and protocol (nft: refused without) and a name the kernel takes, a ct timeout its
// protocol (the kernel: "Operation not supported") and a policy of that protocol's states, an expectation all
// of its settings; checked against nft 1.0.6.
template <class In>
void require_ct_config(const In& in, const state& st) {
  if (const auto* h = std::get_if<ct_helper_object>(&st.cur_object.body); h != nullptr && (h->type.empty() || h->protocol.empty()))
    st.fail(in, error_code::missing_argument,
            fmt::format("ct helper object '{}' needs a type and a protocol", st.obj_name));
  if (const auto* h = std::get_if<ct_helper_object>(&st.cur_object.body))
    if (auto why = vocab::ct_helper_name_problem(h->type))
      st.fail(h->type.data(), h->type.size(), error_code::number_out_of_range, std::move(*why));
  if (const auto* x = std::get_if<ct_expectation_object>(&st.cur_object.body))
    if (auto why = vocab::ct_expectation_problem(*x, st.obj_name)) st.fail(in, error_code::missing_argument, std::move(*why));
  const auto* t = std::get_if<ct_timeout_object>(&st.cur_object.body);
  if (t == nullptr) return;
  if (t->protocol.empty())
    st.fail(in, error_code::missing_argument, fmt::format("ct timeout object '{}' needs a protocol", st.obj_name));
  // the policy's states are those of the protocol, whichever of the two is written first
  if (vocab::ct_object_protocol(t->protocol))
    for (const auto& s : t->policy)
      if (auto why = vocab::ct_timeout_state_problem(t->protocol, s.state))
        st.fail(s.state.data(), s.state.size(), error_code::invalid_value, std::move(*why));
}
struct ct_object_block_action {
  template <class In>
  static void apply(const In& in, state& st) {
    require_ct_config(in, st);
    object_block_action::apply(in, st);
  }
};
template <>
struct action<g::ct_helper_block> : ct_object_block_action {};
template <>
struct action<g::ct_timeout_block> : ct_object_block_action {};
template <>
struct action<g::ct_expect_block> : ct_object_block_action {};
template <>
struct action<g::secmark_block> : object_block_action {};
// (the grammar's `synproxy_config` has nft's order: mss and wscale together, then the flags; a block
// without settings loads, and is listed so)
template <>
struct action<g::synproxy_block> : object_block_action {};
template <>
struct action<g::tunnel_block> {
  template <class In>
  static void apply(const In& in, state& st) {
    object o;
    o.file = &st.src;
    o.where = st.span_of(in);
    o.type = object_type::tunnel;
    o.name = st.obj_name;
    o.body = unknown_object{text(in)};
    st.objects.push_back(o);
    st.sink.warning(
        error_code::not_modelled, st.span_of(in),
        fmt::format("tunnel object '{}' is kept as text: nflens does not model tunnel objects", st.obj_name));
  }
};
struct object_decl_action {
  template <class In>
  static void apply(const In& in, state& st) {
    st.objects.back().where = st.span_of(in);
  }
};
template <>
struct action<g::counter_obj_decl> : object_decl_action {};
template <>
struct action<g::quota_obj_decl> : object_decl_action {};
template <>
struct action<g::limit_obj_decl> : object_decl_action {};
template <>
struct action<g::ct_helper_obj_decl> : object_decl_action {};
template <>
struct action<g::ct_timeout_obj_decl> : object_decl_action {};
template <>
struct action<g::ct_expect_obj_decl> : object_decl_action {};
template <>
struct action<g::secmark_obj_decl> : object_decl_action {};
template <>
struct action<g::synproxy_obj_decl> : object_decl_action {};
template <>
struct action<g::tunnel_obj_decl> : object_decl_action {};

// Tables -------------------------------------------------------------------------------------------------

template <>
struct action<g::table_identifier> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.table_name = text(in);
  }
};
template <>
struct action<g::block_brace<g::block_items<g::table_block_item>>> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.table = table_info{};
    st.table.file = &st.src;
    st.table.where = st.span_of(in);
    st.table.fam = st.fam;
    st.table.name = st.table_name;
    st.table_marks[0] = static_cast<std::uint32_t>(st.chains.size());
    if (st.chains.empty() && st.sets.empty()) {
      // Reserve the listing's chains and sets where they will stay (see `arena_allocator`).
      const auto rest = st.src.text().substr(st.offset(in.end()));
      const table_counts n = count_table_lines(rest, st.table_scan_budget);
      if (n.chains > st.chains.capacity()) {
        chain_stack_type fresh{arena_allocator<chain>(st.src)};
        fresh.reserve(n.chains);
        st.chains.swap(fresh);
      }
      if (n.sets > st.sets.capacity()) {
        set_stack_type fresh{arena_allocator<set>(st.src)};
        fresh.reserve(n.sets);
        st.sets.swap(fresh);
      }
    }
    st.table_marks[1] = static_cast<std::uint32_t>(st.sets.size());
    st.table_marks[2] = static_cast<std::uint32_t>(st.flowtables.size());
    st.table_marks[3] = static_cast<std::uint32_t>(st.objects.size());
  }
};
template <>
struct action<g::block_handle<g::block_items<g::table_block_item>>> {
  static void apply0(state& st) { st.table.handle = st.number; }
};
template <>
struct action<g::table_flag> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    table_flag f;
    if (t == "dormant")
      f = table_flag::dormant;
    else if (t == "owner")
      f = table_flag::owner;
    else if (t == "persist")
      f = table_flag::persist;
    else
      st.fail(in, error_code::invalid_value,
              fmt::format("unknown table flag '{}'; expected dormant, owner or persist", t));
    st.table.flags |= static_cast<std::uint8_t>(f);
  }
};
template <>
struct action<g::table_comment> {
  template <class In>
  static void apply(const In& in, state& st) {
    set_comment_once(in, st, st.table.comment);
  }
};

// define / include -----------------------------------------------------------------------------------

template <>
struct action<g::initializer_negative> {
  template <class In>
  static void apply(const In& in, state& st) {
    // `define x = -1`: only priorities take negative numbers; kept as the symbol nft sees.
    st.push(st.span_of(in), symbol_expr{text(in)});
  }
};
template <>
struct action<g::define_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    std::string_view rest = t.substr(t.find_first_of(" \t"));
    rest = rest.substr(rest.find_first_not_of(" \t\\\n"));
    const auto name = rest.substr(0, g::word_length(rest.data(), rest.data() + rest.size()));
    const bool redefine = t.starts_with("redefine");
    const expr* value = st.pop_keep();
    const auto scope = st.scope();
    bool added = false;
    if (redefine)
      added = st.variables.redefine(name, value, scope);
    else if (!(added = st.variables.define(name, value, scope)))  // nft looks in this scope and those around it
      st.fail(in, error_code::invalid_value,
              fmt::format("redefinition of '{}', which is defined already (use `redefine` to change it)", name));
    if (added) st.src.charge(variable_table::entry_bytes);  // part of the parse's memory (max_tree_bytes)
  }
};
template <>
struct action<g::undefine_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    std::string_view t = text(in).substr(8);
    t = t.substr(t.find_first_not_of(" \t"));
    if (!st.variables.undefine(t, st.scope()))
      st.sink.warning(error_code::undefined_variable, st.span_of(in),
                      st.variables.find(t) != nullptr
                          ? fmt::format("undefine {}: the variable is defined outside this block, and stays (nft "
                                        "undefines only in the block it is in)",
                                        t)
                          : fmt::format("undefine {}: no such variable (nft ignores it)", t));
  }
};
void include_file(state& st, std::string_view path, span where);
template <>
struct action<g::include_stmt> {
  template <class In>
  static void apply(const In& in, state& st) {
    const std::string_view t = text(in);
    const auto q = t.find('"');
    include_file(st, unquote(t.substr(q)), st.span_of(in));
  }
};

// Commands -------------------------------------------------------------------------------------------

template <command_verb V>
struct verb_action {
  static void apply0(state& st) {
    st.cmd.verb = V;
    st.has_cmd = true;
  }
};
template <>
struct action<g::verb_add> : verb_action<command_verb::add> {};
template <>
struct action<g::verb_implicit_add> : verb_action<command_verb::add> {};
template <>
struct action<g::verb_create> : verb_action<command_verb::create> {};
template <>
struct action<g::verb_insert> : verb_action<command_verb::insert> {};
template <>
struct action<g::verb_replace> : verb_action<command_verb::replace> {};
template <>
struct action<g::verb_delete> : verb_action<command_verb::delete_> {};
template <>
struct action<g::verb_destroy> : verb_action<command_verb::destroy> {};
template <>
struct action<g::verb_flush> : verb_action<command_verb::flush> {};
template <>
struct action<g::verb_rename> : verb_action<command_verb::rename> {};
template <>
struct action<g::verb_get> : verb_action<command_verb::get> {};
template <>
struct action<g::verb_list> : verb_action<command_verb::list> {};
template <>
struct action<g::verb_reset> : verb_action<command_verb::reset> {};
template <>
struct action<g::verb_monitor> : verb_action<command_verb::monitor> {};
template <>
struct action<g::verb_describe> : verb_action<command_verb::describe> {};
template <>
struct action<g::verb_import> : verb_action<command_verb::import> {};
template <>
struct action<g::verb_export> : verb_action<command_verb::export_> {};

template <>
struct action<g::handle_number> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.handle = number_of(in, st);
  }
};
template <>
struct action<g::position_number> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.pos_value = number_of(in, st);
  }
};
template <>
struct action<g::position_spec> {
  static void apply0(state& st) { st.pos_kind = rule_position::position; }
};
template <>
struct action<g::position_handle> {
  static void apply0(state& st) { st.pos_kind = rule_position::handle; }
};
template <>
struct action<g::position_index> {
  static void apply0(state& st) { st.pos_kind = rule_position::index; }
};

/// Fills the command's names from the spec rules that ran.
void set_names(state& st, command_object what, bool has_name) {
  st.cmd.what = what;
  st.cmd.fam = st.fam;
  st.cmd.family_written = st.fam_written;
  st.cmd.table_name = st.table_name;
  st.cmd.handle = st.handle;
  if (has_name) {
    switch (what) {
      case command_object::chain:
      case command_object::rule:
        st.cmd.name = st.chain_name;
        break;
      case command_object::set:
      case command_object::map:
      case command_object::element:
      case command_object::flowtable:
        st.cmd.name = st.set_name;
        break;
      case command_object::object:
        st.cmd.name = st.obj_name;
        break;
      default:
        break;
    }
  }
}

template <>
struct action<g::add_table> {
  template <class In>
  static void apply(const In& in, state& st) {
    set_names(st, command_object::table, false);
    if (text(in).find('{') == std::string_view::npos) {
      table t;
      static_cast<table_info&>(t) = table_info{&st.src, st.span_of(in), st.fam, st.table_name, 0, 0, {}};
      st.cmd.body = st.src.store_one(t);
      return;
    }
    table t;
    static_cast<table_info&>(t) = st.table;
    t.where = st.span_of(in);
    t.fam = st.fam;
    // A stack the table filled from its start and mostly used: its nodes stay in the arena storage they
    // were built in, and the stack starts anew; otherwise the table's part is copied out.
    auto take = [&st](auto& stack, std::uint32_t mark) {
      using stack_type = std::remove_reference_t<decltype(stack)>;
      using node = typename stack_type::value_type;
      if (mark == 0 && stack.size() * 2 > stack.capacity()) {
        const std::span<const node> nodes(stack.data(), stack.size());
        stack_type fresh{arena_allocator<node>(st.src)};
        stack.swap(fresh);
        return nodes;
      }
      return st.keep_range(stack, mark);
    };
    t.chains = take(st.chains, st.table_marks[0]);
    t.sets = take(st.sets, st.table_marks[1]);
    t.flowtables = st.keep_range(st.flowtables, st.table_marks[2]);
    t.objects = st.keep_range(st.objects, st.table_marks[3]);
    st.cmd.body = st.src.store_one(t);
  }
};
template <>
struct action<g::add_chain> {
  template <class In>
  static void apply(const In& in, state& st) {
    set_names(st, command_object::chain, true);
    if (text(in).find('{') != std::string_view::npos) {
      chain c = st.chains.back();
      st.chains.pop_back();
      c.where = st.span_of(in);
      st.cmd.body = st.src.store_one(c);
    } else {
      chain c;
      c.where = st.span_of(in);
      c.name = st.chain_name;
      st.cmd.body = st.src.store_one(c);
    }
  }
};
struct rule_cmd_action {
  template <class In>
  static void apply(const In&, state& st) {
    set_names(st, command_object::rule, true);
    st.cmd.position_kind = st.pos_kind;
    st.cmd.position = st.pos_value;
    st.cmd.body = st.src.store_one(st.rules.back());
    st.rules.pop_back();
  }
};
template <>
struct action<g::add_rule> : rule_cmd_action {};
template <>
struct action<g::insert_cmd> : rule_cmd_action {};
template <>
struct action<g::replace_cmd> {
  template <class In>
  static void apply(const In&, state& st) {
    set_names(st, command_object::rule, true);
    st.cmd.body = st.src.store_one(st.rules.back());
    st.rules.pop_back();
  }
};
struct set_cmd_action {
  template <class In>
  static void apply(const In& in, state& st) {
    const bool is_map = text(in).starts_with("map");
    set_names(st, is_map ? command_object::map : command_object::set, true);
    set s = st.sets.back();
    st.sets.pop_back();
    s.where = st.span_of(in);
    st.cmd.body = st.src.store_one(s);
  }
};
template <>
struct action<g::add_set> : set_cmd_action {};
template <>
struct action<g::add_map> : set_cmd_action {};
template <>
struct action<g::element_list> {
  template <class In>
  static void apply(const In& in, state& st) {
    const expr e = st.pop();
    const auto* s = e.get<set_expr>();
    if (s == nullptr) st.fail(in, error_code::invalid_value, "expected elements in braces { ... }");
    st.cmd.body = s->elements;
  }
};
template <>
struct action<g::add_element> {
  static void apply0(state& st) { set_names(st, command_object::element, true); }
};
template <>
struct action<g::delete_element> {
  static void apply0(state& st) { set_names(st, command_object::element, true); }
};
template <>
struct action<g::get_cmd> {
  static void apply0(state& st) { set_names(st, command_object::element, true); }
};
template <>
struct action<g::add_flowtable> {
  template <class In>
  static void apply(const In& in, state& st) {
    set_names(st, command_object::flowtable, true);
    flowtable f = st.flowtables.back();
    st.flowtables.pop_back();
    f.where = st.span_of(in);
    st.cmd.body = st.src.store_one(f);
  }
};
template <object_type T>
struct object_cmd_action {
  template <class In>
  static void apply(const In& in, state& st) {
    set_names(st, command_object::object, true);
    st.cmd.obj = T;
    object o;
    if (st.objects.size() > st.top_mark().objects) {
      o = st.objects.back();
      st.objects.pop_back();
    } else {
      // inline config (`add counter t c packets 1 bytes 2`), or no body at all
      o = st.cur_object;
      o.type = T;
      o.name = st.obj_name;
      o.file = &st.src;
    }
    o.where = st.span_of(in);
    st.cmd.body = st.src.store_one(o);
  }
};
template <>
struct action<g::add_counter> : object_cmd_action<object_type::counter> {};
template <>
struct action<g::add_quota> : object_cmd_action<object_type::quota> {};
template <>
struct action<g::add_limit> : object_cmd_action<object_type::limit> {};
template <>
struct action<g::add_ct_helper> : object_cmd_action<object_type::ct_helper> {};
template <>
struct action<g::add_ct_timeout> : object_cmd_action<object_type::ct_timeout> {};
template <>
struct action<g::add_ct_expectation> : object_cmd_action<object_type::ct_expectation> {};
template <>
struct action<g::add_secmark> : object_cmd_action<object_type::secmark> {};
template <>
struct action<g::add_synproxy> : object_cmd_action<object_type::synproxy> {};
template <>
struct action<g::add_tunnel> : object_cmd_action<object_type::tunnel> {};

template <>
struct action<g::delete_table> {
  static void apply0(state& st) { set_names(st, command_object::table, false); }
};
template <>
struct action<g::delete_chain> {
  template <class In>
  static void apply(const In& in, state& st) {
    set_names(st, command_object::chain, st.handle == 0);
    if (text(in).find('{') != std::string_view::npos) {
      st.cmd.body = st.src.store_one(st.chains.back());
      st.chains.pop_back();
    }
  }
};
template <>
struct action<g::delete_rule> {
  static void apply0(state& st) { set_names(st, command_object::rule, true); }
};
template <>
struct action<g::delete_set> {
  static void apply0(state& st) { set_names(st, command_object::set, st.handle == 0); }
};
template <>
struct action<g::delete_map> {
  static void apply0(state& st) { set_names(st, command_object::map, st.handle == 0); }
};
template <>
struct action<g::delete_flowtable> {
  template <class In>
  static void apply(const In& in, state& st) {
    set_names(st, command_object::flowtable, st.handle == 0);
    if (text(in).find('{') != std::string_view::npos) {
      st.cmd.body = st.src.store_one(st.flowtables.back());
      st.flowtables.pop_back();
    }
  }
};
template <object_type T>
struct obj_kind_action {
  static void apply0(state& st) { st.cmd.obj = T; }
};
template <>
struct action<g::obj_kind_counter> : obj_kind_action<object_type::counter> {};
template <>
struct action<g::obj_kind_quota> : obj_kind_action<object_type::quota> {};
template <>
struct action<g::obj_kind_limit> : obj_kind_action<object_type::limit> {};
template <>
struct action<g::obj_kind_secmark> : obj_kind_action<object_type::secmark> {};
template <>
struct action<g::obj_kind_synproxy> : obj_kind_action<object_type::synproxy> {};
template <>
struct action<g::obj_kind_tunnel> : obj_kind_action<object_type::tunnel> {};
template <>
struct action<g::obj_kind_ct_helper> : obj_kind_action<object_type::ct_helper> {};
template <>
struct action<g::obj_kind_ct_timeout> : obj_kind_action<object_type::ct_timeout> {};
template <>
struct action<g::obj_kind_ct_expectation> : obj_kind_action<object_type::ct_expectation> {};
template <>
struct action<g::delete_object> {
  static void apply0(state& st) {
    const auto t = st.cmd.obj;
    set_names(st, command_object::object, st.handle == 0);
    st.cmd.obj = t;
  }
};
template <>
struct action<g::flush_table> {
  static void apply0(state& st) { set_names(st, command_object::table, false); }
};
template <>
struct action<g::flush_chain> {
  static void apply0(state& st) { set_names(st, command_object::chain, true); }
};
template <>
struct action<g::flush_set> {
  static void apply0(state& st) { set_names(st, command_object::set, true); }
};
template <>
struct action<g::flush_map> {
  static void apply0(state& st) { set_names(st, command_object::map, true); }
};
template <>
struct action<g::flush_meter> {
  static void apply0(state& st) { set_names(st, command_object::set, true); }
};
template <>
struct action<g::flush_ruleset> {
  static void apply0(state& st) { set_names(st, command_object::ruleset, false); }
};
template <>
struct action<g::rename_new_name> {
  template <class In>
  static void apply(const In& in, state& st) {
    st.cmd.new_name = text(in);
  }
};
template <>
struct action<g::rename_cmd> {
  static void apply0(state& st) {
    const auto n = st.cmd.new_name;
    set_names(st, command_object::chain, true);
    st.cmd.new_name = n;
  }
};
struct query_action {
  static void apply0(state& st) { st.cmd.what = command_object::other; }
};
template <>
struct action<g::reset_element> : action<g::get_cmd> {};
template <>
struct action<g::list_cmd> : query_action {};
template <>
struct action<g::reset_cmd> : query_action {};
template <>
struct action<g::monitor_cmd> : query_action {};
template <>
struct action<g::import_cmd> : query_action {};
template <>
struct action<g::export_cmd> : query_action {};
template <>
struct action<g::describe_cmd> {
  static void apply0(state& st) {
    st.exprs.pop_back();
    st.cmd.what = command_object::other;
  }
};

template <>
struct action<g::line> {
  template <class In>
  static void apply(const In& in, state& st) {
    if (!st.has_cmd) return;
    st.cmd.file = &st.src;
    std::string_view t = text(in);
    while (!t.empty() &&
           (t.back() == '\n' || t.back() == '\r' || t.back() == ';' || t.back() == ' ' || t.back() == '\t'))
      t.remove_suffix(1);
    st.cmd.where = span{st.offset(t.data()), static_cast<std::uint32_t>(t.size())};
    st.commands.push_back(st.cmd);
    st.has_cmd = false;
  }
};

// ---------------------------------------------------------------------------------------------------
// Recovery

/// Skips from `in` (the start of a failed item) to its end: the next newline or `;` outside braces and
/// strings, or just before the `}` that closes the enclosing block. At the top level a stray `}` is
/// skipped too.
template <class Input>
void skip_item(Input& in, bool top) {
  const char* p = in.current();
  const char* end = in.end();
  const char* q = p;
  std::size_t depth = 0;
  while (q != end) {
    const char c = *q;
    if (c == '"') {
      const char* close = q + 1;
      while (close != end && *close != '"' && *close != '\n') ++close;
      q = close == end || *close == '\n' ? close : close + 1;
      continue;
    }
    if (c == '#') {
      while (q != end && *q != '\n') ++q;
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}') {
      if (depth > 0)
        --depth;
      else if (!top)
        break;  // closes the enclosing block; at the top level a stray brace is skipped
    }
    if ((c == '\n' || c == ';') && depth == 0) {
      ++q;
      break;
    }
    ++q;
  }
  if (q == p && q != end) ++q;  // always make progress
  in.bump(static_cast<std::size_t>(q - p));
}

/// Re-parses a failed item without actions, recording the farthest position reached and what was
/// expected there, and turns that into an error.
template <class Item, template <class...> class Action, template <class...> class Control, class Input>
syntax_error diagnose(Input& in, state& st) {
  const auto begin = in.iterator();
  const mark saved = st.current();
  const auto saved_marks = st.marks.size();
  const auto saved_depth = st.depth;
  const auto saved_scopes = st.scopes.size();
  const auto saved_lookahead = st.lookahead;
  st.diagnose = true;
  st.farthest = in.current();
  st.expected.clear();
  std::optional<syntax_error> thrown;
  try {
    (void)Control<Item>::template match<pegtl::apply_mode::nothing, pegtl::rewind_mode::required, Action, Control>(in,
                                                                                                                   st);
  } catch (syntax_error& e) {
    thrown = std::move(e);
  }
  st.diagnose = false;
  st.rewind(saved);
  st.marks.resize(saved_marks);
  st.depth = saved_depth;
  st.close_scopes(saved_scopes);
  st.lookahead = saved_lookahead;
  in.iterator() = begin;
  // A broad expectation covers the narrower ones that come with it.
  const auto has = [&](std::string_view w) {
    return std::find(st.expected.begin(), st.expected.end(), w) != st.expected.end();
  };
  if (has("a statement") || has("a command") || has("a value") || has("an expression")) {
    const bool statement = has("a statement") || has("a command");
    std::erase_if(st.expected, [&](const std::string& w) {
      if (w.starts_with("one of") || w.front() == '\'') return true;
      return statement && (w == "an expression" || w == "a value" || w == "a name");
    });
  }
  // Named things first ("a statement", "a tcp field (...)"), then keywords, then punctuation.
  std::stable_sort(st.expected.begin(), st.expected.end(), [](const std::string& a, const std::string& b) {
    const auto rank = [](const std::string& x) { return x.front() != '\'' ? 0 : x.size() > 3 ? 1 : 2; };
    return rank(a) < rank(b);
  });
  if (thrown && thrown->offset >= st.offset(st.farthest)) return *thrown;
  const char* at = st.farthest;
  const std::string_view rest(at, static_cast<std::size_t>(in.end() - at));
  std::string message = fmt::format("unexpected {}", quote_token(rest));
  if (!st.expected.empty()) {
    message += "; expected ";
    const std::size_t shown = std::min<std::size_t>(st.expected.size(), 5);
    for (std::size_t i = 0; i < shown; ++i) {
      if (i > 0) message += i + 1 == shown && shown == st.expected.size() ? " or " : ", ";
      message += st.expected[i];
    }
    if (shown < st.expected.size()) message += fmt::format(" (or {} more)", st.expected.size() - shown);
  }
  std::uint32_t length = 1;
  if (!rest.empty() && rest.front() != '\n') {
    const auto n = g::word_length(rest.data(), rest.data() + rest.size());
    length = static_cast<std::uint32_t>(std::max<std::size_t>(n, 1));
  }
  return syntax_error{st.offset(at), length, rest.empty() ? error_code::unexpected_end : error_code::syntax,
                      std::move(message)};
}

/// The error of a parse whose syntax tree outgrew `limits::max_tree_bytes`, at the item that starts at
/// `at`.
syntax_error tree_too_large(const state& st, const char* at, const char* end) {
  const auto length = static_cast<std::uint32_t>(std::max<std::size_t>(g::word_length(at, end), 1));
  return {st.offset(at), length, error_code::tree_too_large,
          fmt::format("the syntax tree outgrew the limit of {} bytes (limits::max_tree_bytes) in this item; the "
                      "rest of the input was not read",
                      st.options.limits.max_tree_bytes)};
}

void report(state& st, const syntax_error& e) {
  // At least one byte is marked, but never past the end of the text: at the end of the input the span
  // is empty.
  const auto size = static_cast<std::uint32_t>(st.sink.file()->text().size());
  const std::uint32_t offset = std::min(e.offset, size);
  const std::uint32_t length = std::min(std::max<std::uint32_t>(e.length, 1), size - offset);
  if (!st.sink.error(e.code, span{offset, length}, e.message)) throw stop_parsing{};
}

}  // namespace

template <class Item>
template <pegtl::apply_mode A, pegtl::rewind_mode M, template <class...> class Action,
          template <class...> class Control, class Input, class... States>
bool g::recoverable<Item>::match(Input& in, States&... sts) {
  state& st = (sts, ...);
  constexpr bool top = std::is_same_v<Item, g::line>;
  if (in.empty()) return false;
  if (!top && in.peek_char() == '}') return false;
  const auto begin = in.iterator();
  const mark saved = st.current();
  const auto saved_marks = st.marks.size();
  const auto saved_depth = st.depth;
  const auto saved_scopes = st.scopes.size();
  std::optional<command> saved_cmd;  // a command is only being built at the top level
  if constexpr (top) saved_cmd = st.cmd;
  const bool saved_has_cmd = st.has_cmd;
  std::optional<syntax_error> error;
  try {
    if (Control<Item>::template match<A, M, Action, Control>(in, st)) return true;
  } catch (syntax_error& e) {
    error = std::move(e);
  } catch (const arena_exhausted&) {
    // No recovery from this: the error is located at the item being parsed, and the parse stops.
    in.iterator() = begin;
    report(st, tree_too_large(st, begin, in.end()));
    throw stop_parsing{};
  }
  st.rewind(saved);
  st.marks.resize(saved_marks);
  st.depth = saved_depth;
  st.close_scopes(saved_scopes);
  st.lookahead = 0;
  if constexpr (top) st.cmd = *saved_cmd;
  st.has_cmd = saved_has_cmd;
  in.iterator() = begin;
  if (!st.diagnose) {
    if (!error) error = diagnose<Item, Action, Control>(in, st);
    report(st, *error);
  }
  skip_item(in, top);
  return true;
}

namespace {

/// Parses one file (the main text or an included one) into `commands`; true when it stopped at the error
/// cap. Diagnostics go to `sink` (its own) and, for included files, to `extra`. `variables` are those
/// visible where the file is read, and `scope_base` the depth of the scope it is read in (an included
/// file shares its includer's scope, as nft's scanner does).
bool parse_source(source& src, const parse_options& options, diagnostic_sink& sink, std::vector<source_ptr>& sources,
                  std::vector<command>& commands, std::vector<diagnostic>& extra,
                  variable_table& variables, std::uint32_t include_depth, std::uint32_t scope_base) {
  // nft's scanner has no rule for a carriage return: CRLF line ends are "unexpected junk" at each one.
  // Reported once, at the first; the rest of the file is still read as if its lines ended in LF.
  if (const auto cr = src.text().find("\r\n"); cr != std::string_view::npos)
    if (!sink.error(error_code::invalid_character, {static_cast<std::uint32_t>(cr), 1},
                    "CRLF line end: nft refuses the carriage return (\"unexpected junk\"); convert the file to LF "
                    "line ends (reported once, at the first)"))
      return true;  // the error cap is reached: stopped
  src.limit_tree(options.limits.max_tree_bytes);
  state st(src, options, sink, sources);
  st.charge_stacks();
  st.include_depth = include_depth;
  st.scope_base = scope_base;
  st.variables = std::move(variables);
  st.extra = &extra;
  st.exprs.reserve(64);
  st.stmts.reserve(64);
  st.elems.reserve(256);
  st.rules.reserve(256);
  pegtl::memory_input<pegtl::tracking_mode::lazy, pegtl::eol::lf_crlf> in(src.text().data(), src.text().size(),
                                                                          src.name());
  bool stopped = false;
  try {
    (void)pegtl::parse<g::input, action, control>(in, st);
  } catch (stop_parsing&) {
    stopped = true;
  } catch (const arena_exhausted&) {  // outside any item: at the place the parse had reached
    try {
      report(st, tree_too_large(st, in.current(), in.end()));
    } catch (stop_parsing&) {
    }
    stopped = true;
  } catch (syntax_error& e) {
    // Only a nesting error at the very top can get here; report it like any other.
    try {
      report(st, e);
    } catch (stop_parsing&) {
      stopped = true;
    }
  }
  st.commands.move_into(commands);
  variables = std::move(st.variables);
  return stopped;
}

void include_file(state& st, std::string_view path, span where) {
  if (!st.options.include_resolver)
    st.fail(st.base + where.offset, where.length, error_code::include_not_supported,
            fmt::format("include \"{}\": nflens reads no files by itself (offline); give an include resolver to "
                        "parse it",
                        path));
  if (st.include_depth >= 16)
    st.fail(st.base + where.offset, where.length, error_code::nesting_too_deep,
            fmt::format("include \"{}\": includes nested deeper than 16 files", path));
  // A file is parsed again at every include of it: one that includes itself twice is read 2^16 times
  // by the depth limit alone. What all includes of one parse read is bounded: at most
  // `max_included_files` files, and `limits.max_input_bytes` bytes with the main text.
  constexpr std::size_t max_included_files = 1024;
  if (st.sources.size() > max_included_files)
    st.fail(st.base + where.offset, where.length, error_code::input_too_large,
            fmt::format("include \"{}\": more than {} files included in one parse", path, max_included_files));
  auto text = st.options.include_resolver(path);
  if (!text)
    st.fail(st.base + where.offset, where.length, error_code::io_error,
            fmt::format("include \"{}\": the resolver could not supply the file", path));
  std::size_t total = text->size();
  for (const auto& s : st.sources) total += s->text().size();
  if (total > st.options.limits.max_input_bytes || text->size() > UINT32_MAX)
    st.fail(st.base + where.offset, where.length, error_code::input_too_large,
            fmt::format("include \"{}\": the included files come to more than the limit of {} bytes", path,
                        st.options.limits.max_input_bytes));
  // The included files' diagnostics count against the caps of the whole parse: an included file gets
  // what is left of them. Errors: each file's sink has what its includer left as its cap and is charged
  // with the errors of the files it includes, so the errors of the whole parse stay within the cap.
  // Warnings: an included file's sink starts charged with what its includer has kept so far, and the
  // includer is charged with what it kept, so each sink counts (and reports) the drops past the cap.
  const auto& lim = st.options.limits;
  const std::size_t errors = st.sink.errors();
  const std::uint32_t error_cap = st.sink.max_errors();
  const std::size_t warnings = st.sink.warnings();
  if (error_cap != 0 && errors >= error_cap) {
    if (st.extra->empty() || st.extra->back().code != error_code::too_many_errors)
      st.extra->push_back({severity::error, error_code::too_many_errors,
                           fmt::format("too many errors ({}); the rest of the input was not checked", lim.max_errors),
                           st.sink.file(), where, {}});
    throw stop_parsing{};
  }
  limits inner_limits = lim;
  inner_limits.max_errors = error_cap == 0 ? 0 : static_cast<std::uint32_t>(error_cap - errors);
  auto inner = std::make_shared<source>(std::string(path), std::move(*text));
  st.sources.push_back(inner);
  diagnostic_sink inner_sink(inner, inner_limits);
  inner_sink.charge_warnings(warnings);
  // Stopped at the cap in that file or in one it included (whose too_many_errors said so already).
  std::vector<command> included;
  const bool full =
      parse_source(*inner, st.options, inner_sink, st.sources, included, *st.extra, st.variables, st.include_depth + 1,
                   st.scope());
  st.commands.append(included);
  st.sink.charge_errors(inner_sink.errors());
  st.sink.charge_warnings(inner_sink.warnings() - warnings);
  for (auto& d : inner_sink.take()) st.extra->push_back(std::move(d));
  if (full) throw stop_parsing{};
}

}  // namespace

result<script> parse(std::string name, std::string text, const parse_options& options) {
  result<script> out;
  try {
    if (text.size() > options.limits.max_input_bytes || text.size() > UINT32_MAX) {
      out.diagnostics.push_back({severity::error,
                                 error_code::input_too_large,
                                 fmt::format("{}: input of {} bytes is larger than the limit of {} bytes", name,
                                             text.size(), options.limits.max_input_bytes),
                                 nullptr,
                                 {},
                                 {}});
      return out;
    }
    auto src = std::make_shared<source>(std::move(name), std::move(text));
    out.value.sources.push_back(src);
    diagnostic_sink sink(src, options.limits);
    std::vector<diagnostic> extra;
    variable_table variables;
    parse_source(*src, options, sink, out.value.sources, out.value.commands, extra, variables, 0, 0);
    out.diagnostics = sink.take();
    for (auto& d : extra) out.diagnostics.push_back(std::move(d));
  } catch (const std::bad_alloc&) {
    out.diagnostics.push_back(
        {severity::error, error_code::internal_error, "out of memory while parsing", nullptr, {}, {}});
  } catch (const std::exception& e) {
    out.diagnostics.push_back({severity::error,
                               error_code::internal_error,
                               fmt::format("internal error while parsing: {}", e.what()),
                               nullptr,
                               {},
                               {}});
  }
  return out;
}

script parse_or_throw(std::string name, std::string text, const parse_options& options) {
  auto r = parse(std::move(name), std::move(text), options);
  if (!r.ok()) throw parse_error(std::move(r.diagnostics));
  return std::move(r.value);
}

}  // namespace nflens::nft
