// SPDX-License-Identifier: MIT
// libnftables JSON → nft AST. Follows the input side of libnftables-json(5) (nftables' parser_json.c
// accepts the same objects), and types values the way the nft text parser does so that a JSON listing
// and its text listing give equal ASTs: strings become quoted strings where nft prints them quoted
// (interface names, helpers), addresses where the type is an address, symbols otherwise; numbers
// become durations for time types. Every node's span is the JSON value it came from.
#include <nflens/nft_json.hpp>

#include "nft/rule_check.hpp"
#include "nft/spelling.hpp"
#include "nft/vocabulary.hpp"
#include "nft_json/dom.hpp"
#include "nft_json/types.hpp"
#include "tree_memory.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace nflens::nft {

namespace {

using json_detail::datatype;
using json_detail::default_l3proto;
using json_detail::jdoc;
using json_detail::jkind;
using json_detail::jnode;
using json_detail::value_kind;

/// Thrown after a schema error was reported; the item being read is then left out.
struct schema_error {};
/// Thrown after a JSON syntax error in an item was reported: the rest of the document is not read.
struct syntax_failure {};

/// The datatype of a type name as sets and maps declare it (`type ipv4_addr . inet_service`); unknown
/// for a name nft does not know.
datatype type_named(std::string_view n) noexcept {
  const auto t = parse_datatype(n);
  return t ? json_detail::json_type(*t) : datatype{};
}

/// A type hint: one datatype per concatenation item (one for a plain value), none when unknown.
struct hint {
  std::array<datatype, 16> types{};
  std::size_t size = 0;
  static hint of(datatype t) {
    hint h;
    h.types[0] = t;
    h.size = 1;
    return h;
  }
  [[nodiscard]] datatype one() const noexcept { return size == 1 ? types[0] : datatype{}; }
};

std::optional<std::uint64_t> decode_time(std::string_view t) noexcept {
  if (t.empty()) return std::nullopt;
  std::uint64_t total = 0;
  std::size_t i = 0;
  while (i < t.size()) {
    std::uint64_t n = 0;
    const auto r = std::from_chars(t.data() + i, t.data() + t.size(), n);
    if (r.ec != std::errc{}) return std::nullopt;
    i = static_cast<std::size_t>(r.ptr - t.data());
    if (i == t.size())
      return total == 0 && n <= UINT64_MAX / 1000 ? std::optional<std::uint64_t>(n * 1000) : std::nullopt;
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

std::optional<std::array<std::uint8_t, 6>> parse_ether(std::string_view t) noexcept {
  if (t.size() != 17) return std::nullopt;
  std::array<std::uint8_t, 6> b{};
  for (std::size_t k = 0; k < 6; ++k) {
    if (k > 0 && t[k * 3 - 1] != ':') return std::nullopt;
    unsigned v = 0;
    const auto r = std::from_chars(t.data() + k * 3, t.data() + k * 3 + 2, v, 16);
    if (r.ptr != t.data() + k * 3 + 2) return std::nullopt;
    b[k] = static_cast<std::uint8_t>(v);
  }
  return b;
}

std::optional<std::uint64_t> parse_uint(std::string_view t) noexcept {
  int base = 10;
  if (t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
    t.remove_prefix(2);
    base = 16;
  }
  std::uint64_t v = 0;
  if (t.empty()) return std::nullopt;
  const auto r = std::from_chars(t.data(), t.data() + t.size(), v, base);
  if (r.ec != std::errc{} || r.ptr != t.data() + t.size()) return std::nullopt;
  return v;
}

/// The priority as nft lists it (rule.c prio2str): the first standard priority within 10 of the value,
/// written with its offset, when that name fits the family and hook; the number otherwise. nft 1.0.6
/// (`old`) named dstnat only in prerouting and srcnat only in postrouting.
priority listed_priority(std::int32_t v, family fam, hook h, bool old = false) noexcept {
  struct std_prio {
    std::int32_t value;
    priority_name name;
  };
  static constexpr std_prio inet[] = {{-300, priority_name::raw},    {-150, priority_name::mangle},
                                      {-100, priority_name::dstnat}, {0, priority_name::filter},
                                      {50, priority_name::security}, {100, priority_name::srcnat}};
  static constexpr std_prio bridge[] = {{-300, priority_name::dstnat},
                                        {-200, priority_name::filter},
                                        {100, priority_name::out},
                                        {300, priority_name::srcnat}};
  const std::span<const std_prio> table = fam == family::bridge ? std::span<const std_prio>(bridge) : inet;
  for (const auto& p : table) {
    const std::int64_t offset = std::int64_t{v} - p.value;
    if (std::llabs(offset) > 10) continue;
    bool ok = false;
    if (fam == family::bridge) {
      ok = (p.name == priority_name::dstnat && h == hook::prerouting) || p.name == priority_name::filter ||
           (p.name == priority_name::out && h == hook::output) ||
           (p.name == priority_name::srcnat && h == hook::postrouting);
    } else {
      const bool ip = fam == family::inet || fam == family::ip || fam == family::ip6;
      switch (p.name) {
        case priority_name::filter:
          ok = ip || fam == family::arp || fam == family::netdev;
          break;
        case priority_name::raw:
        case priority_name::mangle:
        case priority_name::security:
          ok = ip;
          break;
        case priority_name::dstnat:
          ok = ip && (h == hook::prerouting || (h == hook::output && !old));
          break;
        case priority_name::srcnat:
          ok = ip && ((h == hook::input && !old) || h == hook::postrouting);
          break;
        default:
          break;
      }
    }
    if (!ok) break;
    return priority{p.name, static_cast<std::int32_t>(offset)};
  }
  return priority{priority_name::numeric, v};
}

class reader {
 public:
  reader(source& src, const jdoc& top, diagnostic_sink& sink, std::uint32_t max_depth)
      : src_(src), top_(top), d_(&top), sink_(sink), max_depth_(max_depth), set_keys_(charged(src)) {}

  void document(script& out);
  /// Gives back what `add` charged: the parse is over.
  void release_commands() noexcept {
    src_.release(commands_charged_);
    commands_charged_ = 0;
  }
  /// Where the item being read (the last one materialised) starts.
  [[nodiscard]] span item_at() const noexcept { return {item_at_.offset, item_at_.length == 0 ? 0U : 1U}; }

 private:
  // --- reporting
  [[noreturn]] void fail(const jnode& at, error_code code, std::string message) {
    sink_.error(code, at.where, std::move(message));
    throw schema_error{};
  }
  [[noreturn]] void fail(const jnode& at, std::string message) { fail(at, error_code::syntax, std::move(message)); }
  void warn(const jnode& at, error_code code, std::string message) {
    sink_.warning(code, at.where, std::move(message));
  }

  // --- access
  std::string_view text(const jnode& n) const { return d_->text(n); }
  const jnode& node(std::uint32_t i) const { return d_->node(i); }

  const jnode& need_object(const jnode& n, std::string_view what) {
    if (n.kind != jkind::object) fail(n, fmt::format("expected {} (an object), saw {}", what, kind_name(n.kind)));
    return n;
  }
  /// The single key of a `{"key": value}` object (statements, expressions, commands).
  std::pair<std::string_view, const jnode*> single(const jnode& n, std::string_view what) {
    need_object(n, what);
    if (n.count != 2)
      fail(n, fmt::format("expected {}: an object with exactly one member, saw {} members", what, n.count / 2));
    const auto k = d_->kids(n);
    return {text(node(k[0])), &node(k[1])};
  }
  const jnode* opt(const jnode& obj, std::string_view key) const { return d_->member(obj, key); }
  const jnode& need(const jnode& obj, std::string_view key, std::string_view what) {
    const jnode* v = d_->member(obj, key);
    if (v == nullptr) fail(obj, fmt::format("expected member \"{}\" in this {} object", key, what));
    return *v;
  }
  std::string_view string_of(const jnode& n, std::string_view what) {
    if (n.kind != jkind::string) fail(n, fmt::format("expected {} (a string), saw {}", what, kind_name(n.kind)));
    return text(n);
  }
  std::string_view need_string(const jnode& obj, std::string_view key, std::string_view what) {
    return string_of(need(obj, key, what), key);
  }
  std::string_view opt_string(const jnode& obj, std::string_view key) {
    const jnode* v = opt(obj, key);
    return v != nullptr ? string_of(*v, key) : std::string_view{};
  }
  /// Fails with the error for a number `unsigned_value` does not take: negative, fractional, or 2^64
  /// and more.
  [[noreturn]] void not_unsigned(const jnode& n, std::string_view what) {
    if (n.kind == jkind::number && n.integral && !n.negative)
      fail(n, error_code::number_out_of_range, fmt::format("{} {} does not fit 64 bits", what, text(n)));
    fail(n, error_code::invalid_number, fmt::format("expected {} (a whole number that is not negative), saw {}", what,
                                                    n.kind == jkind::number ? text(n) : kind_name(n.kind)));
  }
  std::uint64_t number_of(const jnode& n, std::string_view what, std::uint64_t max = UINT64_MAX) {
    const auto v = d_->unsigned_value(n);
    if (!v) not_unsigned(n, what);
    if (*v > max) fail(n, error_code::number_out_of_range, fmt::format("{} {} is larger than {}", what, *v, max));
    return *v;
  }
  std::uint64_t opt_number(const jnode& obj, std::string_view key, std::uint64_t dflt, std::uint64_t max = UINT64_MAX) {
    const jnode* v = opt(obj, key);
    return v != nullptr ? number_of(*v, key, max) : dflt;
  }
  bool opt_bool(const jnode& obj, std::string_view key) {
    const jnode* v = opt(obj, key);
    if (v == nullptr) return false;
    if (v->kind != jkind::boolean) fail(*v, fmt::format("expected \"{}\" to be true or false", key));
    return v->boolean;
  }
  /// A string or an array of strings (nft writes one flag as a bare string in some releases).
  std::vector<std::pair<std::string_view, const jnode*>> words(const jnode& n, std::string_view what) {
    std::vector<std::pair<std::string_view, const jnode*>> out;
    if (n.kind == jkind::string) {
      out.emplace_back(text(n), &n);
      return out;
    }
    if (n.kind != jkind::array) fail(n, fmt::format("expected {} (a string or an array of strings)", what));
    for (auto k : d_->kids(n)) out.emplace_back(string_of(node(k), what), &node(k));
    return out;
  }
  family family_of(const jnode& obj) {
    const jnode& f = need(obj, "family", "named");
    const auto fam = parse_family(string_of(f, "family"));
    if (!fam)
      fail(f, error_code::unknown_family,
           fmt::format("unknown family '{}'; expected ip, ip6, inet, arp, bridge or netdev", text(f)));
    return *fam;
  }

  /// A constant must fit the selector it is compared with or assigned to, as nft checks it (`tcp dport
  /// 70000`: "Value 70000 exceeds valid range 0-65535").
  void fits(const jnode& at, std::uint64_t v, const datatype& t) {
    if (t.bits == 0 || t.bits >= 64 || (v >> t.bits) == 0) return;
    fail(at, error_code::number_out_of_range,
         fmt::format("value {} is out of range for {} (0 to {})", v, t.name.empty() ? "its selector" : t.name,
                     (std::uint64_t{1} << t.bits) - 1));
  }
  /// A priority: a whole number of 32 bits (the kernel's NFTA_HOOK_PRIORITY).
  std::int32_t priority_of(const jnode& prio) {
    const auto pv = d_->signed_value(prio);
    if (!pv)
      fail(prio, error_code::invalid_number,
           fmt::format("expected prio: a whole number, saw {}", kind_name(prio.kind)));
    if (*pv < INT32_MIN || *pv > INT32_MAX)
      fail(prio, error_code::number_out_of_range,
           fmt::format("prio {} is out of range ({} to {})", *pv, INT32_MIN, INT32_MAX));
    return static_cast<std::int32_t>(*pv);
  }

  // --- arena
  template <class T>
  const expr* keep(const jnode& at, T value) {
    return src_.store_one(expr{at.where, value});
  }
  template <class T, class A>
  std::span<const T> keep_all(const std::vector<T, A>& v) {
    return src_.store(std::span<const T>(v));
  }
  /// The items of an array, each `item(node, items before it)`, built straight into the arena: a list on
  /// the side would hold them twice at the peak (ten million set elements: 240 MB more, outside the cap).
  template <class T, class F>
  std::span<const T> array_in_arena(const jnode& list, F item) {
    if (list.count == 0) return {};
    auto* out = static_cast<T*>(src_.allocate(sizeof(T) * list.count, alignof(T)));
    std::size_t n = 0;
    for (auto k : d_->kids(list)) {
      std::construct_at(out + n, item(node(k), std::span<const T>(out, n)));
      ++n;
    }
    return {out, n};
  }
  std::string_view keep_text(std::string_view t) {
    return src_.store(t);  // views into the JSON text are stable already; only composed text needs this
  }

  // --- expressions (below)
  const expr* expr_of(const jnode& n, const hint& h);
  const expr* scalar_string(const jnode& n, datatype t);
  const expr* payload_of(const jnode& at, const jnode& v);
  const expr* exthdr_of(const jnode& at, const jnode& v, std::string_view kind);
  const expr* set_of(const jnode& at, const jnode& v, const hint& key, const hint& data);
  element element_of(const jnode& n, const hint& key, const hint& data, bool stmts_in_options);
  const expr* binop_of(const jnode& at, binop op, const jnode& v, const hint& h);
  hint hint_of(const expr& e) const {
    hint h;
    if (const auto* c = e.get<concat_expr>()) {
      for (const auto& i : c->items) {
        if (h.size == h.types.size()) break;
        h.types[h.size++] = json_detail::type_of(i, fam_);
      }
      return h;
    }
    return hint::of(json_detail::type_of(e, fam_));
  }
  hint hint_of_names(std::span<const std::string_view> names) const {
    hint h;
    for (auto n : names) {
      if (h.size == h.types.size()) break;
      h.types[h.size++] = type_named(n);
    }
    return h;
  }

  // --- statements
  stmt stmt_of(const jnode& n, std::span<const stmt> before);
  stmt match_of(const jnode& at, const jnode& v);
  counter_stmt counter_of(const jnode& v);
  limit_stmt limit_of(const jnode& v, bool object);
  quota_stmt quota_of(const jnode& v, bool object);
  stmt nat_of(const jnode& at, nat_kind kind, const jnode& v);
  stmt log_of(const jnode& at, const jnode& v);
  stmt set_stmt_of(const jnode& at, const jnode& v, bool map);
  std::span<const stmt> stmt_array(const jnode& n, std::string_view what);

  // --- top-level objects
  table_info table_of(const jnode& v);
  chain chain_of(const jnode& v, std::string_view& table_name);
  rule rule_of(const jnode& v);
  set set_of_object(const jnode& v, bool is_map);
  flowtable flowtable_of(const jnode& v);
  object object_of(const jnode& v, object_type type);
  std::span<const element> elements_of(const jnode& list, const hint& key, const hint& data);

  // --- documents
  /// An item of "nftables" (deferred in `top_` when an object or array) and its key.
  struct item_ref {
    std::string_view key;
    const jnode* item;
  };
  /// The key of an item without reading it: the first string of its text when that has no escapes.
  std::optional<std::string_view> peek_key(const jnode& item) const {
    const std::string_view t = src_.text(item.where);
    std::size_t i = 1;
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) ++i;
    if (t.empty() || t[0] != '{' || i >= t.size() || t[i] != '"') return std::nullopt;
    const auto end = t.find_first_of("\"\\", i + 1);
    if (end == std::string_view::npos || t[end] != '"') return std::nullopt;
    return t.substr(i + 1, end - i - 1);
  }
  /// An item, parsed when it was deferred; `d_` then points to where its nodes live. Throws
  /// `syntax_failure` after a syntax error was reported.
  const jnode& materialise(const jnode& item) {
    item_at_ = item.where;
    d_ = &top_;
    if (item.kind != jkind::deferred) return item;
    if (!item_.parse_value(src_, sink_, max_depth_, item.where, 2)) throw syntax_failure{};
    d_ = &item_;
    return item_.root();
  }
  bool listing(std::span<const item_ref> items, script& out);
  /// Appends a command to `out`; the list counts against the tree cap while the reader reads (nft's
  /// parser counts its commands so too).
  void add(script& out, const command& c) {
    auto& list = out.commands;
    if (list.size() == list.capacity()) {  // the old and the new storage, while one is copied to the other
      const std::size_t old = list.capacity() * sizeof(command);
      const std::size_t grown = std::max<std::size_t>(list.capacity() * 2, 16);
      src_.charge(grown * sizeof(command));
      list.reserve(grown);
      src_.release(old);
      commands_charged_ += grown * sizeof(command) - old;
    }
    list.push_back(c);
  }
  /// The allocator of the reader's side lists (counted against the tree cap).
  static detail::charged_allocator<char> charged(source& s) noexcept { return detail::charged_allocator<char>(s); }
  void command_of(std::string_view key, const jnode& v, const jnode& item, script& out);
  void add_command(command_verb verb, std::string_view what, const jnode& v, const jnode& item, script& out);

  source& src_;
  const jdoc& top_;  ///< the document, each item's value deferred (jdoc::parse)
  jdoc item_;        ///< the value of the item being read
  span item_at_{};   ///< that item's text
  const jdoc* d_;    ///< where the nodes being read live: `top_` or `item_`
  diagnostic_sink& sink_;
  std::uint32_t max_depth_;
  family fam_ = family::ip;
  /// Key types of the named sets read so far (family, set name), for constants in a lookup's key
  /// (`ip saddr . "lo" @s`).
  std::map<std::pair<family, std::string_view>, hint, std::less<>,
           detail::charged_allocator<std::pair<const std::pair<family, std::string_view>, hint>>>
      set_keys_;
  std::size_t commands_charged_ = 0;  ///< bytes of the commands' list charged by `add`
  /// The document says it was written by nft 1.0.x (its metainfo), whose listing conventions differ.
  bool old_ = false;
};

// ---------------------------------------------------------------------------------------------------
// Expressions

const expr* reader::scalar_string(const jnode& n, datatype t) {
  const std::string_view s = text(n);
  if (!s.empty() && s.front() == '@') return keep(n, set_ref_expr{s.substr(1)});
  if (s == "*") return keep(n, wildcard_expr{});
  switch (t.kind) {
    case value_kind::string:
      // an interface index nft could not name is listed as a number
      if (t.name == "iface_index" && !s.empty() &&
          std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
        if (const auto v = parse_uint(s)) return keep(n, integer_expr{*v});
      return keep(n, string_expr{s});
    case value_kind::time:
      if (const auto ms = decode_time(s)) return keep(n, time_expr{*ms});
      return keep(n, symbol_expr{s});
    case value_kind::ether:
      if (const auto b = parse_ether(s)) return keep(n, ether_address_expr{*b});
      return keep(n, symbol_expr{s});
    default:
      break;
  }
  if (t.kind == value_kind::address || t.kind == value_kind::unknown) {
    if (const auto a = parse_ip_address(s)) return keep(n, address_expr{*a, src_});
    // nft resolves an IPv4 address with getaddrinfo, which takes inet_aton's short forms (`"1.2"`)
    if (t.name == "ipv4_addr")
      if (const auto a = parse_ipv4_inet_aton(s)) return keep(n, address_expr{*a, src_});
  }
  if (t.kind == value_kind::unknown) {
    if (const auto b = parse_ether(s)) return keep(n, ether_address_expr{*b});
  }
  if (t.kind == value_kind::integer || t.kind == value_kind::bitmask || t.kind == value_kind::unknown) {
    // numbers written as strings (nft writes values wider than 64 bits as "0x..." strings; those stay
    // symbols, as in the text)
    if (const auto v = parse_uint(s); v && !s.empty() && s.front() >= '0' && s.front() <= '9') {
      fits(n, *v, t);
      return keep(n, integer_expr{*v});
    }
  }
  return keep(n, symbol_expr{s});
}

const expr* reader::expr_of(const jnode& n, const hint& h) {
  switch (n.kind) {
    case jkind::number: {
      const auto v = d_->unsigned_value(n);
      if (!v) not_unsigned(n, "number");
      if (h.one().kind == value_kind::time) {
        if (*v > UINT64_MAX / 1000)
          fail(n, error_code::number_out_of_range, fmt::format("{} seconds is too long a time", *v));
        return keep(n, time_expr{*v * 1000});
      }
      fits(n, *v, h.one());
      return keep(n, integer_expr{*v});
    }
    case jkind::string:
      return scalar_string(n, h.one());
    case jkind::boolean:
      return keep(n, boolean_expr{n.boolean});
    case jkind::null:
      fail(n, "expected an expression, saw null");
    case jkind::array: {
      std::vector<expr> items;
      for (auto k : d_->kids(n)) items.push_back(*expr_of(node(k), h));
      return keep(n, list_expr{keep_all(items)});
    }
    case jkind::deferred:  // only items are deferred, and those are read through materialise()
      fail(n, error_code::internal_error, "a JSON value was not read");
    case jkind::object:
      break;
  }
  const auto [key, vp] = single(n, "an expression");
  const jnode& v = *vp;
  auto u32 = [&](const jnode& obj, std::string_view k, std::uint64_t dflt) {
    return static_cast<std::uint32_t>(opt_number(obj, k, dflt, UINT32_MAX));
  };

  if (key == "concat") {
    if (v.kind != jkind::array) fail(v, "expected the items of a concatenation (an array)");
    std::vector<expr> items;
    std::size_t i = 0;
    for (auto k : d_->kids(v)) {
      const hint item = h.size > 1 && i < h.size ? hint::of(h.types[i]) : hint{};
      items.push_back(*expr_of(node(k), item));
      ++i;
    }
    return keep(n, concat_expr{keep_all(items)});
  }
  if (key == "set") return set_of(n, v, h, hint{});
  if (key == "map") {
    need_object(v, "a map lookup");
    const expr* k = expr_of(need(v, "key", "map"), hint{});
    const jnode& data = need(v, "data", "map");
    const expr* mapping = data.kind == jkind::string ? expr_of(data, hint{}) : set_of(data, data, hint_of(*k), h);
    return keep(n, map_expr{store_pair(src_, *k, *mapping)});
  }
  if (key == "prefix") {
    need_object(v, "a prefix");
    const expr* a = expr_of(need(v, "addr", "prefix"), h);
    const auto* ip = a->get<address_expr>();
    const bool v4 = ip != nullptr && ip->address().family == ip_family::ipv4;
    const auto len = number_of(need(v, "len", "prefix"), "len", v4 ? 32 : 128);
    return keep(n, prefix_expr{a, static_cast<std::uint8_t>(len)});
  }
  if (key == "range") {
    if (v.kind != jkind::array || v.count != 2) fail(v, "expected a range: an array of two values");
    const auto k = d_->kids(v);
    const expr* lo = expr_of(node(k[0]), h);
    const expr* hi = expr_of(node(k[1]), h);
    return keep(n, range_expr{store_pair(src_, *lo, *hi)});
  }
  if (key == "payload") return payload_of(n, v);
  if (key == "exthdr" || key == "tcp option" || key == "ip option" || key == "sctp chunk" || key == "dccp option")
    return exthdr_of(n, v, key);
  if (key == "meta") {
    const auto k = need_string(need_object(v, "a meta expression"), "key", "meta");
    const auto mk = parse_meta_key(k);
    if (!mk) fail(v, error_code::unknown_keyword, fmt::format("unknown meta key '{}'", k));
    return keep(n, meta_expr{*mk});
  }
  if (key == "ct") {
    need_object(v, "a ct expression");
    std::string_view k = need_string(v, "key", "ct");
    ct_expr c;
    if (k.starts_with("ip ") || k.starts_with("ip6 ")) {
      c.protocol = k.starts_with("ip6") ? nfproto::ip6 : nfproto::ip;
      k = k.substr(k.find(' ') + 1);
    }
    const auto ck = parse_ct_key(k);
    if (!ck) fail(v, error_code::unknown_keyword, fmt::format("unknown ct key '{}'", k));
    c.key = *ck;
    if (const auto dir = opt_string(v, "dir"); !dir.empty()) {
      if (dir == "original")
        c.direction = ct_direction::original;
      else if (dir == "reply")
        c.direction = ct_direction::reply;
      else
        fail(*opt(v, "dir"), error_code::invalid_value, fmt::format("unknown ct direction '{}'", dir));
    }
    return keep(n, c);
  }
  if (key == "fib") {
    need_object(v, "a fib expression");
    fib_expr f;
    const auto r = need_string(v, "result", "fib");
    if (r == "oif")
      f.result = fib_result::oif;
    else if (r == "oifname")
      f.result = fib_result::oifname;
    else if (r == "type")
      f.result = fib_result::type;
    else if (r == "check")
      f.result = fib_result::check;
    else
      fail(need(v, "result", "fib"), error_code::invalid_value, fmt::format("unknown fib result '{}'", r));
    if (const jnode* fl = opt(v, "flags")) {
      static constexpr std::string_view names[] = {"saddr", "daddr", "mark", "iif", "oif"};
      for (const auto& [w, at] : words(*fl, "fib flags")) {
        const auto it = std::find(std::begin(names), std::end(names), w);
        if (it == std::end(names)) fail(*at, error_code::invalid_value, fmt::format("unknown fib flag '{}'", w));
        f.flags |= static_cast<std::uint8_t>(1u << (it - std::begin(names)));
      }
    }
    return keep(n, f);
  }
  if (key == "rt") {
    need_object(v, "an rt expression");
    rt_expr r;
    const auto k = need_string(v, "key", "rt");
    if (k == "classid")
      r.key = rt_key::classid;
    else if (k == "nexthop")
      r.key = rt_key::nexthop;
    else if (k == "mtu")
      r.key = rt_key::mtu;
    else if (k == "ipsec")
      r.key = rt_key::ipsec;
    else
      fail(v, error_code::unknown_keyword, fmt::format("unknown rt key '{}'", k));
    const auto f = opt_string(v, "family");
    // nft lists the protocol only where the table does not imply it (`rt ip nexthop` in inet)
    if (!f.empty() && fam_ != family::ip && fam_ != family::ip6) r.protocol = f == "ip6" ? nfproto::ip6 : nfproto::ip;
    return keep(n, r);
  }
  if (key == "socket") {
    const auto k = need_string(need_object(v, "a socket expression"), "key", "socket");
    socket_expr s;
    if (k == "transparent")
      s.key = socket_key::transparent;
    else if (k == "mark")
      s.key = socket_key::mark;
    else if (k == "wildcard")
      s.key = socket_key::wildcard;
    else if (k == "cgroupv2")
      s.key = socket_key::cgroupv2;
    else
      fail(v, error_code::unknown_keyword, fmt::format("unknown socket key '{}'", k));
    return keep(n, s);
  }
  if (key == "osf") {
    need_object(v, "an osf expression");
    osf_expr o;
    o.key = need_string(v, "key", "osf") == "version" ? osf_key::version : osf_key::name;
    const auto ttl = opt_string(v, "ttl");
    if (ttl == "loose") o.ttl = osf_ttl::loose;
    if (ttl == "skip") o.ttl = osf_ttl::skip;
    return keep(n, o);
  }
  if (key == "ipsec") {
    need_object(v, "an ipsec expression");
    ipsec_expr x;
    const auto k = need_string(v, "key", "ipsec");
    if (k == "reqid")
      x.key = ipsec_key::reqid;
    else if (k == "spi")
      x.key = ipsec_key::spi;
    else if (k == "saddr")
      x.key = ipsec_key::saddr;
    else if (k == "daddr")
      x.key = ipsec_key::daddr;
    else
      fail(v, error_code::unknown_keyword, fmt::format("unknown ipsec key '{}'", k));
    const auto f = opt_string(v, "family");
    if (!f.empty()) x.protocol = f == "ip6" ? nfproto::ip6 : nfproto::ip;
    x.direction = opt_string(v, "dir") == "out" ? ipsec_direction::out : ipsec_direction::in;
    x.spnum = u32(v, "spnum", 0);
    return keep(n, x);
  }
  if (key == "numgen") {
    need_object(v, "a numgen expression");
    numgen_expr g;
    const auto mode = need_string(v, "mode", "numgen");
    if (mode != "inc" && mode != "random")
      fail(v, error_code::invalid_value, fmt::format("unknown numgen mode '{}'", mode));
    g.type = mode == "inc" ? numgen_type::inc : numgen_type::random;
    g.modulus = static_cast<std::uint32_t>(number_of(need(v, "mod", "numgen"), "mod", UINT32_MAX));
    g.offset = u32(v, "offset", 0);
    return keep(n, g);
  }
  if (key == "jhash" || key == "symhash") {
    need_object(v, "a hash expression");
    hash_spec x;
    x.kind = key == "jhash" ? hash_kind::jhash : hash_kind::symhash;
    x.modulus = static_cast<std::uint32_t>(number_of(need(v, "mod", key), "mod", UINT32_MAX));
    if (const jnode* s = opt(v, "seed")) {
      x.seed = static_cast<std::uint32_t>(number_of(*s, "seed", UINT32_MAX));
      x.has_seed = true;
    }
    x.offset = u32(v, "offset", 0);
    if (x.kind == hash_kind::jhash) x.key = expr_of(need(v, "expr", "jhash"), hint{});
    return keep(n, hash_expr{src_.store_one(x)});
  }
  if (key == "tunnel") {
    const auto k = need_string(need_object(v, "a tunnel expression"), "key", "tunnel");
    return keep(n, tunnel_expr{k == "path" ? tunnel_key::path : tunnel_key::id});
  }
  if (key == "|") return binop_of(n, binop::or_, v, h);
  if (key == "&") return binop_of(n, binop::and_, v, h);
  if (key == "^") return binop_of(n, binop::xor_, v, h);
  if (key == "<<") return binop_of(n, binop::lshift, v, h);
  if (key == ">>") return binop_of(n, binop::rshift, v, h);
  if (key == "accept" || key == "drop" || key == "continue" || key == "return" || key == "jump" || key == "goto") {
    verdict_expr ve;
    if (key == "accept") ve.kind = verdict::accept;
    if (key == "drop") ve.kind = verdict::drop;
    if (key == "continue") ve.kind = verdict::continue_;
    if (key == "return") ve.kind = verdict::return_;
    if (key == "jump" || key == "goto") {
      ve.kind = key == "jump" ? verdict::jump : verdict::goto_;
      ve.chain = need_string(need_object(v, "a verdict"), "target", key);
    }
    return keep(n, ve);
  }
  if (key == "elem") fail(n, "an element ({\"elem\": ...}) belongs in a set, not here");
  fail(n, error_code::unknown_keyword, fmt::format("unknown expression '{}'", key));
}

const expr* reader::binop_of(const jnode& at, binop op, const jnode& v, const hint& h) {
  if (v.kind != jkind::array || v.count < 2)
    fail(v, fmt::format("expected the operands of '{}' (an array of two or more)", name(op)));
  // `{"|": [a, {"|": [b, c]}]}` is `a | b | c`: nft writes a chain of one operator flat, whatever its
  // nesting, so for the operators where grouping does not change the value (|, & and ^) a nested chain
  // reads as the flat one, and what is written reads back to the same tree
  std::vector<const jnode*> k;
  const bool associative = op == binop::or_ || op == binop::and_ || op == binop::xor_;
  const auto gather = [&](const auto& self, const jnode& list) -> void {
    for (auto kid : d_->kids(list)) {
      const jnode& x = node(kid);
      if (associative && x.kind == jkind::object && x.count == 2) {  // one member
        const auto member = d_->kids(x);
        const jnode& inner = node(member[1]);
        if (text(node(member[0])) == name(op) && inner.kind == jkind::array && inner.count >= 2) {
          self(self, inner);
          continue;
        }
      }
      k.push_back(&x);
    }
  };
  gather(gather, v);
  // every operand past the first is a level of the tree (`a | b | c` is `(a | b) | c`), and every walk
  // of it recurses: as in text, a chain past limits::max_depth operators is refused (300,000 operands
  // overflowed the stack of the checks after the read)
  if (k.size() - 1 > max_depth_)
    fail(*k[max_depth_ + 1], error_code::nesting_too_deep,
         fmt::format("an expression of {} operators nests deeper than {} levels", k.size() - 1, max_depth_));
  const expr* left = expr_of(*k[0], h);
  // the other operands are of the first one's type (`meta mark & 0xff`, `tcp flags & (syn | ack)`)
  // (not of its width: nft widens the operation to what it is assigned to, `meta mark set ip dscp | 0x40`)
  hint rh = op == binop::lshift || op == binop::rshift ? hint::of({"integer", value_kind::integer, 0}) : hint_of(*left);
  for (std::size_t i = 0; i < rh.size; ++i) rh.types[i].bits = 0;
  for (std::size_t i = 1; i < k.size(); ++i) {
    const expr* right = expr_of(*k[i], rh);
    const jnode& r = *k[i];
    span s{at.where.offset, r.where.offset + r.where.length - at.where.offset};
    left = src_.store_one(expr{i + 1 == k.size() ? at.where : s, binop_expr{op, store_pair(src_, *left, *right)}});
  }
  return left;
}

const expr* reader::payload_of(const jnode& at, const jnode& v) {
  need_object(v, "a payload expression");
  payload_expr p;
  if (const jnode* base = opt(v, "base")) {
    const auto b = string_of(*base, "base");
    if (b == "ll")
      p.base = payload_base::ll;
    else if (b == "nh")
      p.base = payload_base::nh;
    else if (b == "th")
      p.base = payload_base::th;
    else if (b == "ih")
      p.base = payload_base::ih;
    else
      fail(*base, error_code::invalid_value, fmt::format("unknown payload base '{}'; expected ll, nh, th or ih", b));
    p.protocol = header::raw;
    p.offset = static_cast<std::uint32_t>(number_of(need(v, "offset", "payload"), "offset", UINT32_MAX));
    p.length = static_cast<std::uint32_t>(number_of(need(v, "len", "payload"), "len", UINT32_MAX));
    return keep(at, p);
  }
  const jnode& proto = need(v, "protocol", "payload");
  const auto pn = string_of(proto, "protocol");
  bool found = false;
  for (auto h :
       {header::ether,  header::vlan, header::arp, header::ip,    header::icmp,   header::igmp,    header::ip6,
        header::icmpv6, header::ah,   header::esp, header::comp,  header::udp,    header::udplite, header::tcp,
        header::dccp,   header::sctp, header::th,  header::vxlan, header::geneve, header::gre,     header::gretap})
    if (name(h) == pn) {
      p.protocol = h;
      found = true;
    }
  if (!found) fail(proto, error_code::unknown_keyword, fmt::format("unknown payload protocol '{}'", pn));
  const jnode& field = need(v, "field", "payload");
  const auto fn = string_of(field, "field");
  found = false;
  for (int f = 1; f <= static_cast<int>(header_field::new_cum_tsn); ++f)
    if (field_name(p.protocol, static_cast<header_field>(f)) == fn) {
      p.field = static_cast<header_field>(f);
      found = true;
      break;
    }
  if (!found) fail(field, error_code::unknown_keyword, fmt::format("{} has no field '{}'", pn, fn));
  if (const auto t = opt_string(v, "tunnel"); !t.empty() && t != pn) {
    if (t == "vxlan")
      p.inner = tunnel::vxlan;
    else if (t == "geneve")
      p.inner = tunnel::geneve;
    else if (t == "gre")
      p.inner = tunnel::gre;
    else if (t == "gretap")
      p.inner = tunnel::gretap;
    else
      fail(*opt(v, "tunnel"), error_code::unknown_keyword, fmt::format("unknown tunnel '{}'", t));
  }
  return keep(at, p);
}

const expr* reader::exthdr_of(const jnode& at, const jnode& v, std::string_view kind) {
  need_object(v, "an extension header expression");
  payload_expr p;
  auto field_of = [&](header h) {
    const jnode* f = opt(v, "field");
    if (f == nullptr) return;
    std::string_view fn = string_of(*f, "field");
    if (const auto b = fn.find('['); b != std::string_view::npos && fn.back() == ']') {
      // `sid[1]`, `addr[2]`
      const auto idx = parse_uint(fn.substr(b + 1, fn.size() - b - 2));
      if (!idx || *idx > 255) fail(*f, error_code::invalid_value, fmt::format("bad field index in '{}'", fn));
      p.index = static_cast<std::uint8_t>(*idx);
      fn = fn.substr(0, b);
    }
    for (int k = 1; k <= static_cast<int>(header_field::new_cum_tsn); ++k)
      if (field_name(h, static_cast<header_field>(k)) == fn) {
        p.field = static_cast<header_field>(k);
        return;
      }
    fail(*f, error_code::unknown_keyword, fmt::format("{} has no field '{}'", kind, fn));
  };
  if (kind == "dccp option") {
    p.protocol = header::dccp_option;
    p.option = static_cast<std::uint8_t>(number_of(need(v, "type", "dccp option"), "type", 255));
    return keep(at, p);
  }
  if (kind == "tcp option") {
    p.protocol = header::tcp_option;
    if (const jnode* base = opt(v, "base")) {
      p.option = static_cast<std::uint8_t>(number_of(*base, "base", 255));
      p.offset = static_cast<std::uint32_t>(opt_number(v, "offset", 0, UINT32_MAX));
      p.length = static_cast<std::uint32_t>(opt_number(v, "len", 0, UINT32_MAX));
      // an unnamed kind's presence (8 bits) or removal (0): the text says just the number
      if (option_name(header::tcp_option, p.option).empty() && p.offset == 0 && (p.length == 8 || p.length == 0))
        p.length = 0;
      return keep(at, p);
    }
    std::string_view n = need_string(v, "name", "tcp option");
    if (n.size() == 5 && n.starts_with("sack") && n[4] >= '0' && n[4] <= '3') {
      p.index = static_cast<std::uint8_t>(n[4] - '0');
      n = "sack";
    }
    bool found = false;
    for (int k = 0; k < 256 && !found; ++k)
      if (option_name(header::tcp_option, static_cast<std::uint8_t>(k)) == n) {
        p.option = static_cast<std::uint8_t>(k);
        found = true;
      }
    if (!found) {
      if (const auto num = parse_uint(n); num && *num < 256) {
        p.option = static_cast<std::uint8_t>(*num);
      } else {
        fail(need(v, "name", "tcp option"), error_code::unknown_keyword, fmt::format("unknown tcp option '{}'", n));
      }
    }
    field_of(header::tcp_option);
    return keep(at, p);
  }
  if (kind == "ip option" || kind == "sctp chunk") {
    p.protocol = kind == "ip option" ? header::ip_option : header::sctp_chunk;
    const auto n = need_string(v, "name", kind);
    bool found = false;
    for (int k = 0; k < 256 && !found; ++k)
      if (option_name(p.protocol, static_cast<std::uint8_t>(k)) == n) {
        p.option = static_cast<std::uint8_t>(k);
        found = true;
      }
    if (!found) fail(need(v, "name", kind), error_code::unknown_keyword, fmt::format("unknown {} '{}'", kind, n));
    field_of(p.protocol);
    return keep(at, p);
  }
  // IPv6 extension headers
  const auto n = need_string(v, "name", "exthdr");
  header h = header::hbh;
  bool found = false;
  for (auto x : {header::hbh, header::rt, header::rt0, header::rt2, header::srh, header::frag, header::dst, header::mh})
    if (name(x) == n) {
      h = x;
      found = true;
    }
  if (!found)
    fail(need(v, "name", "exthdr"), error_code::unknown_keyword, fmt::format("unknown extension header '{}'", n));
  if (opt(v, "field") == nullptr) {
    p.protocol = header::exthdr;  // `exthdr hbh exists`
    p.option = static_cast<std::uint8_t>(h);
    return keep(at, p);
  }
  p.protocol = h;
  field_of(h);
  return keep(at, p);
}

element reader::element_of(const jnode& n, const hint& key, const hint& data, bool stmts_in_options) {
  element el;
  el.where = n.where;
  const jnode* k = &n;
  if (n.kind == jkind::array) {
    if (n.count != 2) fail(n, "expected a map element: an array of key and value");
    k = &node(d_->kids(n)[0]);
    el.data = expr_of(node(d_->kids(n)[1]), data);
  }
  if (k->kind == jkind::object && k->count == 2 && text(node(d_->kids(*k)[0])) == "elem") {
    const jnode& e = need_object(node(d_->kids(*k)[1]), "an element");
    el.key = expr_of(need(e, "val", "elem"), key);
    element_options o;
    bool any = false;
    // A timeout or expiry of 0 is none: nft's JSON parser stores 0 and its printers leave 0 out
    // (parser_json.c json_parse_set_elem_expr_stmt, netlink.c), so `"timeout": 0` writes back as nothing.
    if (const jnode* t = opt(e, "timeout")) {
      o.timeout_ms = number_of(*t, "timeout", UINT64_MAX / 1000) * 1000;
      o.has_timeout = o.timeout_ms != 0;
      any = any || o.has_timeout;
    }
    if (const jnode* t = opt(e, "expires")) {
      o.expires_ms = number_of(*t, "expires", UINT64_MAX / 1000) * 1000;
      o.has_expires = o.expires_ms != 0;
      any = any || o.has_expires;
    }
    o.comment = opt_string(e, "comment");
    any = any || !o.comment.empty();
    if (stmts_in_options) {
      std::vector<stmt> stmts;
      const auto kids = d_->kids(e);
      for (std::size_t i = 0; i + 1 < kids.size(); i += 2) {
        const auto name = text(node(kids[i]));
        if (name == "val" || name == "timeout" || name == "expires" || name == "comment") continue;
        // the element's statements are its other members, each `"counter": {...}` as a statement
        const jnode& value = node(kids[i + 1]);
        if (name == "counter")
          stmts.push_back(stmt{value.where, counter_of(value)});
        else if (name == "limit")
          stmts.push_back(stmt{value.where, limit_of(value, false)});
        else if (name == "quota")
          stmts.push_back(stmt{value.where, quota_of(value, false)});
        else if (name == "ct count") {
          connlimit_stmt c;
          c.count = static_cast<std::uint32_t>(number_of(need(value, "val", "ct count"), "val", UINT32_MAX));
          c.over = opt_bool(value, "inv");
          stmts.push_back(stmt{value.where, c});
        } else if (name == "last") {
          last_stmt l;
          if (value.kind == jkind::object) {
            l.used_ms = opt_number(value, "used", 0);
            l.has_used = true;
          }
          stmts.push_back(stmt{value.where, l});
        } else {
          fail(node(kids[i]), error_code::unknown_keyword, fmt::format("unknown element member '{}'", name));
        }
      }
      o.stmts = keep_all(stmts);
      any = any || !stmts.empty();
    }
    if (any) el.options = src_.store_one(o);
    return el;
  }
  el.key = expr_of(*k, key);
  return el;
}

std::span<const element> reader::elements_of(const jnode& list, const hint& key, const hint& data) {
  if (list.kind != jkind::array) fail(list, "expected the elements (an array)");
  return array_in_arena<element>(
      list, [&](const jnode& n, std::span<const element>) { return element_of(n, key, data, true); });
}

const expr* reader::set_of(const jnode& at, const jnode& v, const hint& key, const hint& data) {
  if (v.kind == jkind::string) return expr_of(v, hint{});  // "@name"
  if (v.kind != jkind::array) {
    // {"set": [...]} given where the value itself is expected
    if (v.kind == jkind::object && v.count == 2 && text(node(d_->kids(v)[0])) == "set")
      return set_of(v, node(d_->kids(v)[1]), key, data);
    fail(v, "expected the elements of an anonymous set (an array)");
  }
  const auto elements = elements_of(v, key, data);
  // a set inside a set gives its elements to the enclosing one, as nft merges them: `{"set": [{"set":
  // [1, 2]}, 3]}` is `{ 1, 2, 3 }` (an inner set's own inner sets were merged when it was read)
  const auto nested = [](const element& el) {
    return el.data == nullptr && el.options == nullptr && el.key->is<set_expr>();
  };
  if (std::none_of(elements.begin(), elements.end(), nested)) return keep(at, set_expr{elements});
  std::vector<element> flat;
  for (const element& el : elements) {
    if (!nested(el)) {
      flat.push_back(el);
      continue;
    }
    const auto inner = el.key->get<set_expr>()->elements;
    flat.insert(flat.end(), inner.begin(), inner.end());
  }
  return keep(at, set_expr{keep_all(flat)});
}

// ---------------------------------------------------------------------------------------------------
// Statements

counter_stmt reader::counter_of(const jnode& v) {
  counter_stmt c;
  if (v.kind == jkind::null) return c;
  need_object(v, "a counter");
  c.packets = opt_number(v, "packets", 0);
  c.bytes = opt_number(v, "bytes", 0);
  c.has_values = true;
  return c;
}

namespace {
std::uint64_t unit_bytes(std::string_view u) {
  if (u == "kbytes") return 1024;
  if (u == "mbytes") return 1024 * 1024;
  return 1;
}
std::optional<time_unit> per_unit(std::string_view u) {
  for (auto t : {time_unit::second, time_unit::minute, time_unit::hour, time_unit::day, time_unit::week})
    if (name(t) == u) return t;
  return std::nullopt;
}
}  // namespace

limit_stmt reader::limit_of(const jnode& v, bool object_form) {
  need_object(v, "a limit");
  limit_stmt l;
  const auto rate_unit = opt_string(v, "rate_unit");
  l.bytes = !rate_unit.empty() && rate_unit != "packets";
  l.rate = number_of(need(v, "rate", "limit"), "rate") * (l.bytes ? unit_bytes(rate_unit) : 1);
  if (const jnode* p = opt(v, "per")) {
    const auto u = per_unit(string_of(*p, "per"));
    if (!u)
      fail(*p, error_code::invalid_value,
           fmt::format("unknown time unit '{}'; expected second, minute, hour, day or week", text(*p)));
    l.unit = *u;
  }
  l.over = opt_bool(v, "inv");
  if (const jnode* b = opt(v, "burst")) {
    const auto burst_unit = opt_string(v, "burst_unit");
    const std::uint64_t bytes = number_of(*b, "burst") * (l.bytes ? unit_bytes(burst_unit) : 1);
    if (bytes > UINT32_MAX) fail(*b, error_code::number_out_of_range, "burst too large");
    l.burst = static_cast<std::uint32_t>(bytes);
    // nft lists a packet burst always (1.1) and a byte burst when it is not zero; an object's default
    // burst of 5 packets is not listed, nor, by nft 1.0.6, a statement's. A packet burst of 0, which
    // nft's JSON parser takes (its text parser refuses it in a statement), is the kernel's default of 5.
    l.has_burst = l.burst != 0 && (l.bytes || !((object_form || old_) && l.burst == 5));
  }
  if (!l.has_burst) l.burst = l.bytes ? 0 : 5;  // nft's default, as the text parser gives it
  if (const auto why = vocab::limit_refusal(l)) fail(v, error_code::number_out_of_range, std::string(*why));
  return l;
}

quota_stmt reader::quota_of(const jnode& v, bool object_form) {
  need_object(v, "a quota");
  quota_stmt q;
  if (object_form) {
    q.bytes = opt_number(v, "bytes", 0);
    q.used = opt_number(v, "used", 0);
    q.has_used = true;
  } else {
    q.bytes = number_of(need(v, "val", "quota"), "val") * unit_bytes(opt_string(v, "val_unit"));
    if (const jnode* u = opt(v, "used")) {
      q.used = number_of(*u, "used") * unit_bytes(opt_string(v, "used_unit"));
      q.has_used = true;
    }
  }
  q.over = opt_bool(v, "inv");
  if (const auto why = vocab::quota_refusal(q)) fail(v, error_code::number_out_of_range, std::string(*why));
  return q;
}

std::span<const stmt> reader::stmt_array(const jnode& n, std::string_view what) {
  if (n.kind != jkind::array) fail(n, fmt::format("expected {} (an array of statements)", what));
  return array_in_arena<stmt>(n, [&](const jnode& s, std::span<const stmt> before) { return stmt_of(s, before); });
}

stmt reader::match_of(const jnode& at, const jnode& v) {
  need_object(v, "a match");
  const jnode& rn = need(v, "right", "match");
  hint lh;
  if (rn.kind == jkind::string && text(rn).starts_with("@"))
    if (const auto it = set_keys_.find({fam_, text(rn).substr(1)}); it != set_keys_.end()) lh = it->second;
  const expr* left = expr_of(need(v, "left", "match"), lh);
  const std::string_view op = need_string(v, "op", "match");
  match_stmt m;
  m.left = left;
  // `fib saddr . iif oif` compared with true/false is the presence test nft 1.1 lists as `check`
  if (const auto* f = left->get<fib_expr>(); f != nullptr && rn.kind == jkind::boolean && f->result == fib_result::oif)
    m.left = keep(need(v, "left", "match"), fib_expr{f->flags, fib_result::check});
  // 1.0.6 writes `tcp flags syn / fin,syn,rst,ack` as `&` with an array mask
  const auto* masked = left->get<binop_expr>();
  bool flagcmp = false;
  if (masked != nullptr && masked->op == binop::and_ && masked->right()->is<list_expr>()) {
    flagcmp = true;
    const auto& items = masked->right()->get<list_expr>()->items;
    const expr* chain = &items[0];
    for (std::size_t i = 1; i < items.size(); ++i)
      chain = src_.store_one(expr{masked->right()->where, binop_expr{binop::or_, store_pair(src_, *chain, items[i])}});
    m.left = src_.store_one(expr{left->where, binop_expr{binop::and_, store_pair(src_, *masked->left(), *chain)}});
  }
  const hint rh = hint_of(*m.left);
  m.right = expr_of(rn, rh);
  if (flagcmp) {
    // the `/` form is how nft 1.0.x lists it; a 1.1 document that uses the array form means the same
    // comparison, which 1.1 lists with `&` (and writes with `|`)
    m.flag_syntax = old_;
    if (const auto* l = m.right->get<list_expr>(); l != nullptr && !l->items.empty()) {
      const expr* chain = &l->items[0];
      for (std::size_t i = 1; i < l->items.size(); ++i)
        chain = src_.store_one(expr{m.right->where, binop_expr{binop::or_, store_pair(src_, *chain, l->items[i])}});
      m.right = chain;
    }
  }
  if (op == "==") {
    // nft lists `==` only where it must (relational_expr_print: a binop on the left, or one value of a
    // bitmask type on the right); otherwise the match has no operator
    const bool bitmask_value = rh.one().kind == value_kind::bitmask && !m.right->is<list_expr>() &&
                               !m.right->is<set_expr>() && !m.right->is<set_ref_expr>() && !m.right->is<range_expr>() &&
                               !m.right->is<prefix_expr>();
    m.op = !flagcmp && (m.left->is<binop_expr>() || bitmask_value) ? relational_op::eq : relational_op::implicit;
  } else if (op == "in") {
    m.op = relational_op::implicit;
  } else if (op == "!=") {
    m.op = relational_op::neq;
  } else if (op == "<") {
    m.op = relational_op::lt;
  } else if (op == ">") {
    m.op = relational_op::gt;
  } else if (op == "<=") {
    m.op = relational_op::lte;
  } else if (op == ">=") {
    m.op = relational_op::gte;
  } else if (op == "!") {
    m.op = relational_op::neg;
  } else {
    fail(need(v, "op", "match"), error_code::invalid_value,
         fmt::format("unknown match operator '{}'; expected ==, !=, <, >, <=, >=, in or !", op));
  }
  return stmt{at.where, m};
}

stmt reader::nat_of(const jnode& at, nat_kind kind, const jnode& v) {
  nat_stmt s;
  s.kind = kind;
  if (v.kind == jkind::null) return stmt{at.where, s};
  need_object(v, "a nat statement");
  if (const auto f = opt_string(v, "family"); !f.empty()) s.protocol = f == "ip6" ? nfproto::ip6 : nfproto::ip;
  const datatype addr_type{"", value_kind::address};
  if (const jnode* a = opt(v, "addr")) s.address = expr_of(*a, hint::of(addr_type));
  if (const jnode* p = opt(v, "port"))
    s.port = expr_of(*p, hint::of(json_detail::json_type(nft::datatype::inet_service)));
  bool netmap = false;
  if (const jnode* fl = opt(v, "flags")) {
    for (const auto& [w, node_at] : words(*fl, "nat flags")) {
      if (w == "random")
        s.flags |= static_cast<std::uint8_t>(nat_flag::random);
      else if (w == "fully-random")
        s.flags |= static_cast<std::uint8_t>(nat_flag::fully_random);
      else if (w == "persistent")
        s.flags |= static_cast<std::uint8_t>(nat_flag::persistent);
      else if (w == "netmap")
        netmap = true;
      else
        fail(*node_at, error_code::invalid_value, fmt::format("unknown nat flag '{}'", w));
    }
  }
  if (const jnode* tf = opt(v, "type_flags")) {
    for (const auto& [w, node_at] : words(*tf, "nat type flags")) {
      if (w != "prefix") fail(*node_at, error_code::invalid_value, fmt::format("unknown nat type flag '{}'", w));
      s.mode = nat_mode::prefix;
    }
  }
  (void)netmap;  // implied by `prefix to`
  return stmt{at.where, s};
}

stmt reader::log_of(const jnode& at, const jnode& v) {
  log_stmt l;
  if (v.kind == jkind::null) return stmt{at.where, l};
  need_object(v, "a log statement");
  if (const jnode* p = opt(v, "prefix")) l.prefix = keep(*p, string_expr{string_of(*p, "prefix")});
  if (const jnode* g = opt(v, "group")) {
    l.group = static_cast<std::uint16_t>(number_of(*g, "group", UINT16_MAX));
    l.present |= 2;
  }
  if (const jnode* s = opt(v, "snaplen")) {
    l.snaplen = static_cast<std::uint32_t>(number_of(*s, "snaplen", UINT32_MAX));
    l.present |= 4;
  }
  if (const jnode* q = opt(v, "queue-threshold")) {
    l.queue_threshold = static_cast<std::uint16_t>(number_of(*q, "queue-threshold", UINT16_MAX));
    l.present |= 8;
  }
  if (const jnode* lv = opt(v, "level")) {
    const auto w = string_of(*lv, "level");
    bool found = false;
    for (auto x : {log_level::emerg, log_level::alert, log_level::crit, log_level::err, log_level::warn,
                   log_level::notice, log_level::info, log_level::debug, log_level::audit})
      if (name(x) == w || (w == "warning" && x == log_level::warn)) {
        l.level = x;
        found = true;
      }
    if (!found) fail(*lv, error_code::invalid_value, fmt::format("unknown log level '{}'", w));
    l.present |= 1;
  }
  if (const jnode* fl = opt(v, "flags")) {
    for (const auto& [w, node_at] : words(*fl, "log flags")) {
      if (w == "all")
        l.flags |= static_cast<std::uint8_t>(log_flag::all);
      else if (w == "tcp sequence")
        l.flags |= static_cast<std::uint8_t>(log_flag::tcp_sequence);
      else if (w == "tcp options")
        l.flags |= static_cast<std::uint8_t>(log_flag::tcp_options);
      else if (w == "ip options")
        l.flags |= static_cast<std::uint8_t>(log_flag::ip_options);
      else if (w == "skuid")
        l.flags |= static_cast<std::uint8_t>(log_flag::skuid);
      else if (w == "ether")
        l.flags |= static_cast<std::uint8_t>(log_flag::ether);
      else
        fail(*node_at, error_code::invalid_value, fmt::format("unknown log flag '{}'", w));
    }
  }
  return stmt{at.where, l};
}

stmt reader::set_stmt_of(const jnode& at, const jnode& v, bool map) {
  need_object(v, map ? "a map statement" : "a set statement");
  set_stmt s;
  const auto op = need_string(v, "op", "set");
  if (op == "add")
    s.op = set_op::add;
  else if (op == "update")
    s.op = set_op::update;
  else if (op == "delete")
    s.op = set_op::delete_;
  else
    fail(need(v, "op", "set"), error_code::invalid_value, fmt::format("unknown set operation '{}'", op));
  const jnode& ref = need(v, map ? "map" : "set", map ? "map" : "set");
  const auto r = string_of(ref, "set");
  if (r.empty() || r.front() != '@') fail(ref, fmt::format("expected a set reference \"@name\", saw \"{}\"", r));
  s.set_ref = keep(ref, set_ref_expr{r.substr(1)});
  element el = element_of(need(v, "elem", "set"), hint{}, hint{}, false);
  el.where = at.where;
  if (map) el.data = expr_of(need(v, "data", "map"), hint{});
  if (const jnode* st = opt(v, "stmt")) {
    element_options o = el.options != nullptr ? *el.options : element_options{};
    o.stmts = stmt_array(*st, "the statements of a set statement");
    el.options = src_.store_one(o);
  }
  s.elem = src_.store_one(el);
  return stmt{at.where, s};
}

stmt reader::stmt_of(const jnode& n, std::span<const stmt> before) {
  if (n.kind == jkind::string) {
    // nft writes a statement it has no JSON form for as its text
    warn(n, error_code::not_modelled,
         fmt::format("statement given as text (\"{}\"): nflens keeps it as text, unparsed", text(n)));
    return stmt{n.where, unknown_stmt{text(n)}};
  }
  const auto [key, vp] = single(n, "a statement");
  const jnode& v = *vp;
  const hint none{};
  if (key == "match") return match_of(n, v);
  if (key == "accept" || key == "drop" || key == "continue" || key == "return" || key == "jump" || key == "goto") {
    const auto* ve = expr_of(n, none)->get<verdict_expr>();
    return stmt{n.where, verdict_stmt{ve->kind, ve->chain}};
  }
  if (key == "counter") {
    if (v.kind == jkind::null || (v.kind == jkind::object && (opt(v, "packets") || opt(v, "bytes") || v.count == 0)))
      return stmt{n.where, counter_of(v)};
    return stmt{n.where, objref_stmt{object_type::counter, expr_of(v, hint::of({"string", value_kind::string}))}};
  }
  if (key == "quota" || key == "limit" || key == "synproxy" || key == "tunnel") {
    const bool inline_form =
        v.kind == jkind::null || (v.kind == jkind::object && (key == "quota"      ? opt(v, "val") != nullptr
                                                              : key == "limit"    ? opt(v, "rate") != nullptr
                                                              : key == "synproxy" ? !opt(v, "map")
                                                                                  : false));
    if (!inline_form) {
      const object_type t = key == "quota"      ? object_type::quota
                            : key == "limit"    ? object_type::limit
                            : key == "synproxy" ? object_type::synproxy
                                                : object_type::tunnel;
      return stmt{n.where, objref_stmt{t, expr_of(v, hint::of({"string", value_kind::string}))}};
    }
    if (key == "quota") return stmt{n.where, quota_of(v, false)};
    if (key == "limit") return stmt{n.where, limit_of(v, false)};
    synproxy_stmt s;
    if (v.kind == jkind::object) {
      if (const jnode* m = opt(v, "mss")) {
        s.mss = static_cast<std::uint16_t>(number_of(*m, "mss", UINT16_MAX));
        s.present |= 1;
      }
      if (const jnode* w = opt(v, "wscale")) {
        s.wscale = static_cast<std::uint8_t>(number_of(*w, "wscale", 255));  // a byte, as in the text form
        s.present |= 2;
      }
      if (const jnode* fl = opt(v, "flags"))
        for (const auto& [w, node_at] : words(*fl, "synproxy flags")) {
          if (w == "timestamp")
            s.flags |= static_cast<std::uint8_t>(synproxy_flag::timestamp);
          else if (w == "sack-perm")
            s.flags |= static_cast<std::uint8_t>(synproxy_flag::sack_perm);
          else
            fail(*node_at, error_code::invalid_value, fmt::format("unknown synproxy flag '{}'", w));
        }
    }
    return stmt{n.where, s};
  }
  if (key == "mangle") {
    need_object(v, "a mangle statement");
    const expr* target = expr_of(need(v, "key", "mangle"), none);
    return stmt{n.where, mangle_stmt{target, expr_of(need(v, "value", "mangle"), hint_of(*target))}};
  }
  if (key == "ct helper" || key == "ct timeout" || key == "ct expectation") {
    const ct_key k = key == "ct helper" ? ct_key::helper : key == "ct timeout" ? ct_key::timeout : ct_key::expectation;
    const expr* target = keep(n, ct_expr{k, ct_direction::none, nfproto::none});
    return stmt{n.where, mangle_stmt{target, expr_of(v, hint::of({"string", value_kind::string}))}};
  }
  if (key == "secmark") {
    const expr* target = keep(n, meta_expr{meta_key::secmark});
    return stmt{n.where, mangle_stmt{target, expr_of(v, hint::of({"string", value_kind::string}))}};
  }
  if (key == "vmap") {
    need_object(v, "a verdict map statement");
    const expr* k = expr_of(need(v, "key", "vmap"), none);
    const jnode& data = need(v, "data", "vmap");
    const expr* mapping = data.kind == jkind::string ? expr_of(data, none) : set_of(data, data, hint_of(*k), none);
    return stmt{n.where, verdict_map_stmt{k, mapping}};
  }
  if (key == "snat") return nat_of(n, nat_kind::snat, v);
  if (key == "dnat") return nat_of(n, nat_kind::dnat, v);
  if (key == "masquerade") return nat_of(n, nat_kind::masquerade, v);
  if (key == "redirect") return nat_of(n, nat_kind::redirect, v);
  if (key == "log") return log_of(n, v);
  if (key == "reject") {
    reject_stmt r;
    if (v.kind == jkind::object) {
      const auto t = opt_string(v, "type");
      if (t == "icmp")
        r.type = reject_type::icmp;
      else if (t == "icmpv6")
        r.type = reject_type::icmpv6;
      else if (t == "icmpx")
        r.type = reject_type::icmpx;
      else if (t == "tcp reset")
        r.type = reject_type::tcp_reset;
      else if (!t.empty())
        fail(*opt(v, "type"), error_code::invalid_value, fmt::format("unknown reject type '{}'", t));
      // nft reads the code only with a type (json_parse_reject_stmt): `{"expr": ...}` alone is a bare reject
      if (const jnode* e = opt(v, "expr"); e != nullptr && !t.empty()) r.code = expr_of(*e, hint{{}, 0});
      // and a type without a code has code 0: `reject with icmp net-unreachable`, `... icmpv6 no-route`
      // (nft 1.0.6 lists them so)
      if (r.code == nullptr && (r.type == reject_type::icmp || r.type == reject_type::icmpv6 ||
                                r.type == reject_type::icmpx))
        r.code = keep(v, symbol_expr{r.type == reject_type::icmp ? "net-unreachable" : "no-route"});
    }
    // What nft lists as a bare `reject`: port unreachable of the rule's network protocol (see the writer)
    if (r.code != nullptr && r.code->is<symbol_expr>() && r.code->get<symbol_expr>()->name == "port-unreachable") {
      nfproto net = fam_ == family::ip ? nfproto::ip : fam_ == family::ip6 ? nfproto::ip6 : nfproto::none;
      if (net == nfproto::none) {
        for (const auto& s : before) {
          const auto* m = s.get<match_stmt>();
          if (m == nullptr) continue;
          auto look = [&](const expr& e, auto&& self) -> void {
            if (const auto* p = e.get<payload_expr>()) {
              if (p->inner != tunnel::none) return;
              if (p->protocol == header::ip || p->protocol == header::icmp || p->protocol == header::igmp)
                net = nfproto::ip;
              if (p->protocol == header::ip6 || p->protocol == header::icmpv6) net = nfproto::ip6;
            } else if (const auto* c = e.get<concat_expr>()) {
              for (const auto& i : c->items) self(i, self);
            } else if (const auto* b = e.get<binop_expr>()) {
              self(*b->left(), self);
            }
          };
          look(*m->left, look);
          if (const auto* mk = m->left->get<meta_expr>(); mk != nullptr && mk->key == meta_key::nfproto)
            if (const auto* sym = m->right->get<symbol_expr>()) {
              if (sym->name == "ipv4") net = nfproto::ip;
              if (sym->name == "ipv6") net = nfproto::ip6;
            }
        }
      }
      const reject_type dflt = net == nfproto::ip    ? reject_type::icmp
                               : net == nfproto::ip6 ? reject_type::icmpv6
                                                     : reject_type::icmpx;
      if (r.type == dflt) r = reject_stmt{};
    }
    return stmt{n.where, r};
  }
  if (key == "set") return set_stmt_of(n, v, false);
  if (key == "map") return set_stmt_of(n, v, true);
  if (key == "meter") {
    need_object(v, "a meter statement");
    meter_spec m;
    element el = element_of(need(v, "key", "meter"), none, none, false);
    const auto stmts = std::vector<stmt>{stmt_of(need(v, "stmt", "meter"), {})};
    element_options o = el.options != nullptr ? *el.options : element_options{};
    o.stmts = keep_all(stmts);
    el.options = src_.store_one(o);
    el.where = n.where;
    m.elem = src_.store_one(el);
    m.size = static_cast<std::uint32_t>(opt_number(v, "size", 0, UINT32_MAX));
    if (m.size == 0) m.size = meter_stmt::default_size;  // as nft sets it
    if (const jnode* nm = opt(v, "name")) m.name = keep(*nm, symbol_expr{string_of(*nm, "name")});
    return stmt{n.where, meter_stmt{src_.store_one(m)}};
  }
  if (key == "queue") {
    queue_stmt q;
    if (v.kind == jkind::object) {
      if (const jnode* num = opt(v, "num"))
        q.number = expr_of(*num, hint::of(json_detail::json_type(nft::datatype::queue)));
      if (const jnode* fl = opt(v, "flags"))
        for (const auto& [w, node_at] : words(*fl, "queue flags")) {
          if (w == "bypass")
            q.flags |= static_cast<std::uint8_t>(queue_flag::bypass);
          else if (w == "fanout")
            q.flags |= static_cast<std::uint8_t>(queue_flag::fanout);
          else
            fail(*node_at, error_code::invalid_value, fmt::format("unknown queue flag '{}'", w));
        }
    }
    return stmt{n.where, q};
  }
  if (key == "ct count") {
    need_object(v, "a ct count statement");
    connlimit_stmt c;
    c.count = static_cast<std::uint32_t>(number_of(need(v, "val", "ct count"), "val", UINT32_MAX));
    c.over = opt_bool(v, "inv");
    return stmt{n.where, c};
  }
  if (key == "last") {
    last_stmt l;
    if (v.kind == jkind::object) {
      l.used_ms = opt_number(v, "used", 0);
      l.has_used = true;
    }
    return stmt{n.where, l};
  }
  if (key == "tproxy") {
    need_object(v, "a tproxy statement");
    tproxy_stmt t;
    if (const auto f = opt_string(v, "family"); !f.empty()) t.protocol = f == "ip6" ? nfproto::ip6 : nfproto::ip;
    if (const jnode* a = opt(v, "addr")) t.address = expr_of(*a, hint::of({"", value_kind::address}));
    if (const jnode* p = opt(v, "port"))
      t.port = expr_of(*p, hint::of(json_detail::json_type(nft::datatype::inet_service)));
    return stmt{n.where, t};
  }
  if (key == "fwd") {
    need_object(v, "a fwd statement");
    fwd_stmt f;
    f.device = expr_of(need(v, "dev", "fwd"), hint::of({"ifname", value_kind::string}));
    if (const jnode* a = opt(v, "addr")) {
      f.address = expr_of(*a, hint::of({"", value_kind::address}));
      f.protocol = opt_string(v, "family") == "ip6" ? nfproto::ip6 : nfproto::ip;
    }
    return stmt{n.where, f};
  }
  if (key == "dup") {
    dup_stmt d;
    if (v.kind == jkind::object) {
      if (const jnode* a = opt(v, "addr")) d.address = expr_of(*a, hint::of({"", value_kind::address}));
      if (const jnode* dev = opt(v, "dev")) d.device = expr_of(*dev, hint::of({"ifname", value_kind::string}));
    }
    return stmt{n.where, d};
  }
  if (key == "notrack") return stmt{n.where, notrack_stmt{}};
  if (key == "flow") {
    need_object(v, "a flow statement");
    const auto ft = need_string(v, "flowtable", "flow");
    if (ft.empty() || ft.front() != '@') fail(need(v, "flowtable", "flow"), "expected a flowtable reference \"@name\"");
    return stmt{n.where, flow_offload_stmt{ft.substr(1)}};
  }
  if (key == "reset") {
    const expr* e = expr_of(v, none);
    return stmt{n.where, optstrip_stmt{e}};
  }
  if (key == "xt") {
    need_object(v, "an xt statement");
    xt_stmt x;
    const auto t = opt_string(v, "type");
    x.kind = t == "target" ? xt_kind::target : t == "watcher" ? xt_kind::watcher : xt_kind::match;
    x.name = need_string(v, "name", "xt");
    warn(n, error_code::not_translatable,
         fmt::format("xt {} \"{}\" is an iptables-nft extension that nft cannot express in its own syntax",
                     name(x.kind), x.name));
    return stmt{n.where, x};
  }
  fail(n, error_code::unknown_keyword, fmt::format("unknown statement '{}'", key));
}

// ---------------------------------------------------------------------------------------------------
// Tables, chains, rules, sets, flowtables, objects

table_info reader::table_of(const jnode& v) {
  need_object(v, "a table");
  table_info t;
  t.file = &src_;
  t.where = v.where;
  t.fam = family_of(v);
  fam_ = t.fam;
  t.name = need_string(v, "name", "table");
  t.handle = opt_number(v, "handle", 0);
  t.comment = opt_string(v, "comment");
  if (const jnode* fl = opt(v, "flags")) {
    for (const auto& [w, at] : words(*fl, "table flags")) {
      if (w == "dormant")
        t.flags |= static_cast<std::uint8_t>(table_flag::dormant);
      else if (w == "owner")
        t.flags |= static_cast<std::uint8_t>(table_flag::owner);
      else if (w == "persist")
        t.flags |= static_cast<std::uint8_t>(table_flag::persist);
      else if (w == t.name && fl->kind == jkind::string)
        t.flags |= static_cast<std::uint8_t>(table_flag::dormant);  // nft 1.0.6 wrote the name for the flag
      else
        fail(*at, error_code::invalid_value, fmt::format("unknown table flag '{}'", w));
    }
  }
  return t;
}

chain reader::chain_of(const jnode& v, std::string_view& table_name) {
  need_object(v, "a chain");
  chain c;
  c.where = v.where;
  fam_ = family_of(v);
  table_name = need_string(v, "table", "chain");
  c.name = need_string(v, "name", "chain");
  c.handle = opt_number(v, "handle", 0);
  c.comment = opt_string(v, "comment");
  if (const jnode* type = opt(v, "type")) {
    base_chain b;
    const auto t = string_of(*type, "type");
    if (t == "filter")
      b.type = chain_type::filter;
    else if (t == "nat")
      b.type = chain_type::nat;
    else if (t == "route")
      b.type = chain_type::route;
    else
      fail(*type, error_code::invalid_value, fmt::format("unknown chain type '{}'; expected filter, nat or route", t));
    const jnode& hk = need(v, "hook", "base chain");
    const auto h = parse_hook(string_of(hk, "hook"));
    if (!h) fail(hk, error_code::invalid_value, fmt::format("unknown hook '{}'", text(hk)));
    b.hook_point = *h;
    b.prio = listed_priority(priority_of(need(v, "prio", "base chain")), fam_, b.hook_point, old_);
    if (const jnode* dev = opt(v, "dev")) {
      std::vector<std::string_view> devs;
      for (const auto& [w, at] : words(*dev, "devices")) devs.push_back(w);
      b.devices = keep_all(devs);
      b.devices_block = devs.size() > 1;
    }
    c.base = src_.store_one(b);
    c.policy = chain_policy::accept;
    if (const auto p = opt_string(v, "policy"); !p.empty()) {
      if (p == "drop")
        c.policy = chain_policy::drop;
      else if (p != "accept")
        fail(*opt(v, "policy"), error_code::invalid_value,
             fmt::format("unknown policy '{}'; expected accept or drop", p));
    }
  }
  return c;
}

rule reader::rule_of(const jnode& v) {
  need_object(v, "a rule");
  rule r;
  r.where = v.where;
  fam_ = family_of(v);
  r.handle = opt_number(v, "handle", 0);
  r.comment = opt_string(v, "comment");
  r.stmts = stmt_array(need(v, "expr", "rule"), "the rule's statements (\"expr\")");
  // nft evaluates JSON input as it does text: the same rules are refused
  auto refused = check_constants(r.stmts);
  if (!refused) refused = check_rule(fam_, r.stmts);
  if (refused) {
    sink_.error(refused->code, refused->where, std::move(refused->message));
    throw schema_error{};
  }
  return r;
}

set reader::set_of_object(const jnode& v, bool is_map) {
  need_object(v, is_map ? "a map" : "a set");
  set s;
  s.file = &src_;
  s.where = v.where;
  s.is_map = is_map;
  fam_ = family_of(v);
  s.name = need_string(v, "name", is_map ? "map" : "set");
  s.handle = opt_number(v, "handle", 0);
  s.comment = opt_string(v, "comment");
  const jnode& type = need(v, "type", is_map ? "map" : "set");
  auto type_list = [&](const jnode& t, std::string_view what) {
    std::vector<std::string_view> names;
    for (const auto& [w, at] : words(t, what)) {
      // nft 1.0.6 wrote concatenated map data as one string, "ipv4_addr . inet_service"
      std::string_view rest = w;
      do {
        const auto dot = rest.find(" . ");
        names.push_back(rest.substr(0, dot));
        if (!parse_datatype(names.back()))
          fail(*at, error_code::unknown_keyword, fmt::format("unknown datatype '{}' in {}", names.back(), what));
        rest = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 3);
      } while (!rest.empty());
    }
    return keep_all(names);
  };
  if (type.kind == jkind::object) {
    const auto [k, tv] = single(type, "a set type");
    if (k != "typeof") fail(type, fmt::format("expected {{\"typeof\": expression}}, saw key '{}'", k));
    s.key.typeof_expr = expr_of(*tv, hint{});
  } else {
    s.key.names = type_list(type, "the set's key type");
  }
  if (is_map) {
    const jnode& data = need(v, "map", "map");
    bool object_data = false;
    if (data.kind == jkind::string)
      for (auto t : {object_type::counter, object_type::quota, object_type::limit, object_type::ct_helper,
                     object_type::ct_timeout, object_type::ct_expectation, object_type::secmark, object_type::synproxy,
                     object_type::tunnel})
        if (name(t) == text(data)) {
          s.data.object = t;
          object_data = true;
        }
    if (!object_data) s.data.names = type_list(data, "the map's data type");
  }
  if (const auto p = opt_string(v, "policy"); !p.empty()) {
    if (p == "memory")
      s.policy = set_policy::memory;
    else if (p == "performance")
      s.policy = set_policy::performance;
    else
      fail(*opt(v, "policy"), error_code::invalid_value, fmt::format("unknown set policy '{}'", p));
  }
  s.size = static_cast<std::uint32_t>(opt_number(v, "size", 0, UINT32_MAX));
  if (const jnode* t = opt(v, "timeout")) {
    s.timeout_ms = number_of(*t, "timeout", UINT64_MAX / 1000) * 1000;
    s.has_timeout = s.timeout_ms != 0;
  }
  if (const jnode* g = opt(v, "gc-interval")) {
    s.gc_interval_ms = number_of(*g, "gc-interval", UINT64_MAX / 1000) * 1000;
    s.has_gc_interval = s.gc_interval_ms != 0;
  }
  s.auto_merge = opt_bool(v, "auto-merge");
  if (const jnode* fl = opt(v, "flags")) {
    for (const auto& [w, at] : words(*fl, "set flags")) {
      if (w == "constant")
        s.flags |= static_cast<std::uint8_t>(set_flag::constant);
      else if (w == "interval")
        s.flags |= static_cast<std::uint8_t>(set_flag::interval);
      else if (w == "timeout")
        s.flags |= static_cast<std::uint8_t>(set_flag::timeout);
      else if (w == "dynamic")
        s.flags |= static_cast<std::uint8_t>(set_flag::dynamic);
      else
        fail(*at, error_code::invalid_value, fmt::format("unknown set flag '{}'", w));
    }
  }
  // nft leaves out a flags line that would say only `timeout` when the set has a default timeout
  // (rule.c set_print_declaration); with other flags, it lists timeout among them
  if (s.has_timeout && s.flags == static_cast<std::uint8_t>(set_flag::timeout)) s.flags = 0;
  if (const jnode* st = opt(v, "stmt")) s.stmts = stmt_array(*st, "the set's statements");
  if (const jnode* el = opt(v, "elem")) {
    const hint key = s.key.typeof_expr != nullptr ? hint_of(*s.key.typeof_expr) : hint_of_names(s.key.names);
    // an object map's data are object names, which nft lists quoted
    const hint data = s.data.object ? hint::of({"string", value_kind::string}) : hint_of_names(s.data.names);
    s.elements = elements_of(*el, key, data);
    // nft 1.0.6's JSON leaves out the dynamic flag; a set whose elements carry statements it does not
    // declare holds them only as a dynamic set (evaluate.c: "missing statement in set declaration")
    if (old_ && s.stmts.empty() &&
        std::any_of(s.elements.begin(), s.elements.end(),
                    [](const element& e) { return e.options != nullptr && !e.options->stmts.empty(); }))
      s.flags |= static_cast<std::uint8_t>(set_flag::dynamic);
    // nft's JSON has no `interval` for a map's data type (`type ipv4_addr : interval ipv4_addr`); a map
    // holds ranges or prefixes as data only when declared so
    if (is_map && !s.data.object &&
        std::any_of(s.elements.begin(), s.elements.end(),
                    [](const element& e) { return e.data != nullptr && interval_part(*e.data) != nullptr; }))
      s.data.interval = true;
    // nft evaluates a JSON declaration's elements as it does text ones
    if (auto refused = check_elements(s, s.elements, {})) {
      sink_.error(refused->code, refused->where, std::move(refused->message));
      throw schema_error{};
    }
  }
  set_keys_[{fam_, s.name}] = s.key.typeof_expr != nullptr ? hint_of(*s.key.typeof_expr) : hint_of_names(s.key.names);
  return s;
}

flowtable reader::flowtable_of(const jnode& v) {
  need_object(v, "a flowtable");
  flowtable f;
  f.file = &src_;
  f.where = v.where;
  fam_ = family_of(v);
  f.name = need_string(v, "name", "flowtable");
  f.handle = opt_number(v, "handle", 0);
  if (const jnode* hk = opt(v, "hook")) {
    const auto h = parse_hook(string_of(*hk, "hook"));
    if (!h) fail(*hk, error_code::invalid_value, fmt::format("unknown hook '{}'", text(*hk)));
    f.has_hook = true;
    f.hook_point = *h;
    f.prio = listed_priority(priority_of(need(v, "prio", "flowtable")), family::netdev, f.hook_point, old_);
  }
  if (const jnode* dev = opt(v, "dev")) {
    std::vector<std::string_view> devs;
    for (const auto& [w, at] : words(*dev, "devices")) devs.push_back(w);
    f.devices = keep_all(devs);
  }
  return f;
}

object reader::object_of(const jnode& v, object_type type) {
  need_object(v, "an object");
  nft::object o;
  o.file = &src_;
  o.where = v.where;
  o.type = type;
  fam_ = family_of(v);
  o.name = need_string(v, "name", name(type));
  o.handle = opt_number(v, "handle", 0);
  o.comment = opt_string(v, "comment");
  auto l3 = [&]() -> std::optional<family> {
    const auto l = opt_string(v, "l3proto");
    if (l.empty()) return default_l3proto(fam_);  // as write_json writes it: read back, it is equal
    const auto f = parse_family(l);
    if (!f) fail(*opt(v, "l3proto"), error_code::unknown_family, fmt::format("unknown l3proto '{}'", l));
    return f;
  };
  auto protocol = [&]() -> std::string_view {  // nft's JSON parser takes the strings "tcp" and "udp" only
    const jnode& p = need(v, "protocol", name(type));
    const std::string_view t = string_of(p, "protocol");
    if (!vocab::ct_object_protocol(t))
      fail(p, error_code::invalid_value, fmt::format("invalid {} protocol '{}' (nft takes tcp or udp)", name(type), t));
    return t;
  };
  switch (type) {
    case object_type::counter:
      if (opt(v, "packets") || opt(v, "bytes")) o.body = counter_of(v);
      break;
    case object_type::quota:
      o.body = quota_of(v, true);
      break;
    case object_type::limit:
      o.body = limit_of(v, true);
      break;
    case object_type::ct_helper: {
      ct_helper_object h;
      h.type = need_string(v, "type", "ct helper");
      if (auto why = vocab::ct_helper_name_problem(h.type)) fail(*opt(v, "type"), error_code::number_out_of_range, *why);
      h.protocol = protocol();
      h.l3proto = l3();
      o.body = h;
      break;
    }
    case object_type::ct_timeout: {
      ct_timeout_object t;
      t.protocol = protocol();
      t.l3proto = l3();
      std::vector<ct_timeout_state> states;
      if (const jnode* p = opt(v, "policy"); p != nullptr && p->kind == jkind::object) {
        const auto kids = d_->kids(*p);
        for (std::size_t i = 0; i + 1 < kids.size(); i += 2) {
          const std::string_view state = text(node(kids[i]));
          if (auto why = vocab::ct_timeout_state_problem(t.protocol, state))
            fail(node(kids[i]), error_code::invalid_value, *why);
          states.push_back({state, number_of(node(kids[i + 1]), "timeout", UINT64_MAX / 1000) * 1000});
        }
      }
      t.policy = keep_all(states);
      o.body = t;
      break;
    }
    case object_type::ct_expectation: {
      ct_expectation_object x;
      x.protocol = protocol();
      x.l3proto = l3();
      x.dport = static_cast<std::uint16_t>(opt_number(v, "dport", 0, UINT16_MAX));
      x.timeout_ms = opt_number(v, "timeout", 0);
      x.size = static_cast<std::uint32_t>(opt_number(v, "size", 0, 255));
      if (auto why = vocab::ct_expectation_problem(x, o.name)) fail(v, error_code::missing_argument, *why);
      o.body = x;
      break;
    }
    case object_type::secmark:
      o.body = secmark_object{need_string(v, "context", "secmark")};
      break;
    case object_type::synproxy: {
      synproxy_stmt s;
      s.mss = static_cast<std::uint16_t>(opt_number(v, "mss", 0, UINT16_MAX));
      s.wscale = static_cast<std::uint8_t>(opt_number(v, "wscale", 0, 255));
      s.present = 3;  // an object always has both (nft's grammar asks for both; its JSON always lists both)
      if (const jnode* fl = opt(v, "flags"))
        for (const auto& [w, at] : words(*fl, "synproxy flags")) {
          if (w == "timestamp")
            s.flags |= static_cast<std::uint8_t>(synproxy_flag::timestamp);
          else if (w == "sack-perm")
            s.flags |= static_cast<std::uint8_t>(synproxy_flag::sack_perm);
          else
            fail(*at, error_code::invalid_value, fmt::format("unknown synproxy flag '{}'", w));
        }
      o.body = s;
      break;
    }
    case object_type::tunnel: {
      // nflens keeps tunnel bodies as text. Its writer gives a body it cannot spell as fields as
      // `"text"`: that text is the body.
      if (const auto text = opt_string(v, "text"); !text.empty()) {
        warn(v, error_code::not_modelled,
             fmt::format("tunnel object '{}' is kept as text: nflens does not model tunnel objects", o.name));
        o.body = unknown_object{keep_text(text)};
        break;
      }
      // otherwise compose the body nft would list
      std::string body = "{\n";
      auto line = [&](std::string l) { body += "\t\t" + l + "\n"; };
      line(fmt::format("id {}", opt_number(v, "id", 0)));
      for (const auto* key : {"src-ipv4", "dst-ipv4", "src-ipv6", "dst-ipv6"}) {
        const auto a = opt_string(v, key);
        if (a.empty()) continue;
        const auto ip = parse_ip_address(a);
        if (!ip || (ip->family == ip_family::ipv4) != std::string_view(key).ends_with("4"))
          fail(*opt(v, key), error_code::invalid_address,
               fmt::format("expected an IPv{} address for \"{}\"", std::string_view(key).back(), key));
        const std::string_view k(key);
        line(fmt::format("{} {} {}", k.ends_with("6") ? "ip6" : "ip", k.starts_with("src") ? "saddr" : "daddr", a));
      }
      for (const auto* key : {"sport", "dport", "tos", "ttl"}) line(fmt::format("{} {}", key, opt_number(v, key, 0)));
      const auto kind = opt_string(v, "type");
      if (!kind.empty() && kind != "geneve" && kind != "vxlan" && kind != "erspan")
        fail(*opt(v, "type"), error_code::invalid_value,
             fmt::format("unknown tunnel type '{}'; expected geneve, vxlan or erspan", kind));
      if (const jnode* t = opt(v, "tunnel"); t != nullptr && !kind.empty()) {
        body += fmt::format("\t\t{} {{\n", kind);
        if (kind == "geneve" && t->kind == jkind::array) {
          for (auto k : d_->kids(*t)) {
            const jnode& g = need_object(node(k), "a geneve option");
            const auto data = opt_string(g, "data");
            if (!spelling::is_quotable(data))
              fail(*opt(g, "data"), error_code::invalid_value,
                   "a geneve option's data cannot hold a '\"' or a line break in nft text");
            body += fmt::format("\t\t\tclass 0x{:x} opt-type 0x{:x} data \"{}\"\n", opt_number(g, "class", 0),
                                opt_number(g, "opt-type", 0), data);
          }
        } else if (kind == "vxlan") {
          body += fmt::format("\t\t\tgbp {}\n", opt_number(*t, "gbp", 0));
        } else if (kind == "erspan") {
          const auto version = opt_number(*t, "version", 0);
          body += fmt::format("\t\t\tversion {}\n", version);
          if (version == 1)
            body += fmt::format("\t\t\tindex {}\n", opt_number(*t, "index", 0));
          else {
            const auto dir = opt_string(*t, "dir");
            if (dir != "ingress" && dir != "egress")
              fail(opt(*t, "dir") != nullptr ? *opt(*t, "dir") : *t, error_code::invalid_value,
                   "expected \"dir\": ingress or egress");
            body += fmt::format("\t\t\tdirection {}\n\t\t\tid {}\n", dir, opt_number(*t, "hwid", 0));
          }
        }
        body += "\t\t}\n";
      }
      body += "\t}";
      warn(v, error_code::not_modelled,
           fmt::format("tunnel object '{}' is kept as text: nflens does not model tunnel objects", o.name));
      o.body = unknown_object{keep_text(body)};
      break;
    }
  }
  return o;
}

// ---------------------------------------------------------------------------------------------------
// Documents

std::optional<object_type> object_key(std::string_view k) {
  for (auto t :
       {object_type::counter, object_type::quota, object_type::limit, object_type::ct_helper, object_type::ct_timeout,
        object_type::ct_expectation, object_type::secmark, object_type::synproxy, object_type::tunnel})
    if (name(t) == k) return t;
  return std::nullopt;
}

bool is_command_key(std::string_view k) {
  return k == "add" || k == "create" || k == "insert" || k == "replace" || k == "delete" || k == "destroy" ||
         k == "flush" || k == "reset" || k == "rename" || k == "list";
}

/// Builds table blocks from a listing (bare objects only, each table before its contents). False when
/// the document does not have that shape (an item of another kind, or of a table it does not hold);
/// nothing is reported then, and the caller reads it as commands. A rule of a chain the table does not
/// hold is reported where it is; a table given again changes nothing.
bool reader::listing(std::span<const item_ref> items, script& out) {
  // Memory: a listing's rules come grouped by chain (nft lists them chain by chain), so each run of
  // rules of one chain goes to the arena when the run ends, and only rules of a chain given in several
  // runs are collected on the side; the other vectors are reserved from the item counts. All of them
  // count against the tree cap.
  using detail::charged_map;
  using detail::charged_vector;
  struct block {
    explicit block(const table_info& t, source& s)
        : info(t), chains(charged(s)), rules(charged(s)), scattered(charged(s)), sets(charged(s)),
          flowtables(charged(s)), objects(charged(s)), chain_at(charged(s)) {}
    table_info info;
    charged_vector<chain> chains;
    charged_vector<std::span<const rule>> rules;                    ///< per chain, in the arena
    charged_map<std::size_t, charged_vector<rule>> scattered;  ///< chains whose rules came in several runs
    charged_vector<set> sets;
    charged_vector<flowtable> flowtables;
    charged_vector<nft::object> objects;
    charged_map<std::string_view, std::size_t> chain_at;  ///< chain name → index (rules find theirs)
  };
  std::size_t chains = 0, sets = 0;
  for (const auto& ref : items) {
    chains += ref.key == "chain";
    sets += ref.key == "set" || ref.key == "map";
  }
  charged_vector<block> blocks(charged(src_));
  std::map<std::pair<family, std::string_view>, std::size_t, std::less<>,
           detail::charged_allocator<std::pair<const std::pair<family, std::string_view>, std::size_t>>>
      index(charged(src_));
  auto find = [&](family f, std::string_view t) -> block* {
    const auto it = index.find({f, t});
    return it == index.end() ? nullptr : &blocks[it->second];
  };
  auto peek = [&](const jnode& v) -> std::pair<family, std::string_view> {
    const auto fam = parse_family(opt_string(need_object(v, "an object"), "family"));
    return {fam.value_or(family::ip), opt_string(v, "table")};
  };
  charged_vector<rule> run(charged(src_));  // the rules of the current run
  block* run_block = nullptr;
  std::size_t run_chain = 0;
  auto flush = [&] {
    if (run_block == nullptr || run.empty()) return;
    auto& placed = run_block->rules[run_chain];
    const auto side = run_block->scattered.find(run_chain);
    if (placed.empty() && side == run_block->scattered.end()) {
      placed = keep_all(run);
    } else {
      auto& v = run_block->scattered.try_emplace(run_chain, charged(src_)).first->second;
      v.insert(v.end(), placed.begin(), placed.end());
      placed = {};
      v.insert(v.end(), run.begin(), run.end());
    }
    run.clear();
  };
  for (const auto& ref : items) {
    const auto [key, v] = single(materialise(*ref.item), "an item of \"nftables\"");
    if (key == "table") {
      const auto t = table_of(*v);
      flush();
      if (find(t.fam, t.name) != nullptr) {  // given again: nft adds it again, which changes nothing
        run_block = nullptr;
        continue;
      }
      run_block = nullptr;
      index[{t.fam, t.name}] = blocks.size();
      blocks.emplace_back(t, src_);
      auto& b = blocks.back();
      if (blocks.size() == 1) {  // the usual listing has one table (reserved space is not touched)
        b.chains.reserve(chains);
        b.rules.reserve(chains);
        b.chain_at.reserve(chains);
        b.sets.reserve(sets);
      }
      continue;
    }
    const auto [f, tname] = peek(*v);
    block* b = find(f, tname);
    // objects of a table the document does not hold: it is read as commands (to a table loaded before)
    if (b == nullptr) return false;
    if (key == "chain") {
      std::string_view table_name;
      b->chains.push_back(chain_of(*v, table_name));
      b->chain_at.emplace(b->chains.back().name, b->chains.size() - 1);
      b->rules.emplace_back();
    } else if (key == "rule") {
      const auto cname = opt_string(*v, "chain");
      const auto at = b->chain_at.find(cname);
      if (at == b->chain_at.end()) {
        // refused where it is, as nft refuses it (read again as commands, it was reported nowhere useful)
        sink_.error(error_code::object_not_found, v->where,
                    fmt::format("chain {} in table {} {} does not exist (nft: \"No such file or directory\")", cname,
                                name(f), tname));
        if (sink_.full()) throw schema_error{};
        continue;
      }
      if (b != run_block || at->second != run_chain) {
        flush();
        run_block = b;
        run_chain = at->second;
      }
      // A rule that nft refuses is reported and the listing read on, so that every refused rule is
      // reported (as nft does); the errors keep the result from being taken as complete.
      try {
        run.push_back(rule_of(*v));
      } catch (const schema_error&) {
        if (sink_.full()) throw;
      }
    } else if (key == "set" || key == "map") {
      b->sets.push_back(set_of_object(*v, key == "map"));
    } else if (key == "flowtable") {
      b->flowtables.push_back(flowtable_of(*v));
    } else if (const auto t = object_key(key)) {
      b->objects.push_back(object_of(*v, *t));
    } else {
      return false;
    }
  }
  flush();
  for (auto& b : blocks) {
    for (std::size_t i = 0; i < b.chains.size(); ++i) {
      const auto side = b.scattered.find(i);
      b.chains[i].rules = side != b.scattered.end() ? keep_all(side->second) : b.rules[i];
    }
    table t;
    static_cast<table_info&>(t) = b.info;
    t.chains = keep_all(b.chains);
    t.sets = keep_all(b.sets);
    t.flowtables = keep_all(b.flowtables);
    t.objects = keep_all(b.objects);
    command c;
    c.file = &src_;
    c.where = b.info.where;
    c.verb = command_verb::add;
    c.what = command_object::table;
    c.fam = b.info.fam;
    c.family_written = true;
    c.table_name = b.info.name;
    c.body = src_.store_one(t);
    add(out, c);
  }
  return true;
}

void reader::add_command(command_verb verb, std::string_view what, const jnode& v, const jnode& item, script& out) {
  command c;
  c.file = &src_;
  c.where = item.where;
  c.verb = verb;
  c.family_written = true;
  const bool adds = verb == command_verb::add || verb == command_verb::create || verb == command_verb::insert ||
                    verb == command_verb::replace;
  if (what == "ruleset") {
    c.what = command_object::ruleset;
    add(out, c);
    return;
  }
  need_object(v, what);
  c.fam = family_of(v);
  if (what == "table") {
    c.what = command_object::table;
    c.table_name = opt_string(v, "name");
    c.handle = opt_number(v, "handle", 0);
    if (adds) {
      table t;
      static_cast<table_info&>(t) = table_of(v);
      c.body = src_.store_one(t);
    } else if (c.table_name.empty() && c.handle == 0) {
      need(v, "name", "table");
    }
    add(out, c);
    return;
  }
  c.table_name = need_string(v, "table", what);
  if (what == "chain") {
    c.what = command_object::chain;
    c.name = opt_string(v, "name");
    c.handle = adds ? 0 : opt_number(v, "handle", 0);
    c.new_name = opt_string(v, "newname");
    if (adds) {
      std::string_view table_name;
      c.body = src_.store_one(chain_of(v, table_name));
    } else if (c.name.empty() && c.handle == 0) {
      need(v, "name", "chain");
    }
  } else if (what == "rule") {
    c.what = command_object::rule;
    c.name = need_string(v, "chain", "rule");
    if (adds) {
      const rule r = rule_of(v);
      if (verb == command_verb::replace) {
        c.handle = number_of(need(v, "handle", "rule"), "handle");
      } else if (const jnode* h = opt(v, "handle")) {
        c.position_kind = rule_position::position;
        c.position = number_of(*h, "handle");
      } else if (const jnode* i = opt(v, "index")) {
        c.position_kind = rule_position::index;
        c.position = number_of(*i, "index");
      }
      rule stored = r;
      stored.handle = 0;
      c.body = src_.store_one(stored);
    } else {
      c.handle = opt_number(v, "handle", 0);
    }
  } else if (what == "set" || what == "map" || what == "meter") {
    c.what = what == "map" ? command_object::map : command_object::set;
    c.name = opt_string(v, "name");
    c.handle = adds ? 0 : opt_number(v, "handle", 0);
    if (adds) c.body = src_.store_one(set_of_object(v, what == "map"));
  } else if (what == "element") {
    c.what = command_object::element;
    c.name = need_string(v, "name", "element");
    c.body = elements_of(need(v, "elem", "element"), hint{}, hint{});
  } else if (what == "flowtable") {
    c.what = command_object::flowtable;
    c.name = opt_string(v, "name");
    c.handle = adds ? 0 : opt_number(v, "handle", 0);
    if (adds) c.body = src_.store_one(flowtable_of(v));
  } else if (const auto t = object_key(what)) {
    c.what = command_object::object;
    c.obj = *t;
    c.name = opt_string(v, "name");
    c.handle = adds ? 0 : opt_number(v, "handle", 0);
    if (adds) c.body = src_.store_one(object_of(v, *t));
  } else {
    fail(item, error_code::unknown_keyword, fmt::format("unknown object '{}' in a {} command", what, name(verb)));
  }
  add(out, c);
}

void reader::command_of(std::string_view key, const jnode& v, const jnode& item, script& out) {
  static constexpr std::pair<std::string_view, command_verb> verbs[] = {
      {"add", command_verb::add},         {"create", command_verb::create},  {"insert", command_verb::insert},
      {"replace", command_verb::replace}, {"delete", command_verb::delete_}, {"destroy", command_verb::destroy},
      {"flush", command_verb::flush},     {"reset", command_verb::reset},    {"rename", command_verb::rename},
      {"list", command_verb::list}};
  for (const auto& [word, verb] : verbs) {
    if (key != word) continue;
    const auto [what, body] = single(v, fmt::format("the object of a {} command", word));
    if (verb == command_verb::list && (what.ends_with("s") || what == "ruleset")) {
      // `{"list": {"tables": {...}}}` and the like: a listing request; the word is kept (as `name`), and
      // the family when one is given, so that it is written back as read
      command c;
      c.file = &src_;
      c.where = item.where;
      c.verb = verb;
      c.what = what == "ruleset" ? command_object::ruleset : command_object::other;
      if (c.what == command_object::other) {
        c.name = what;
        if (body->kind == jkind::object && opt(*body, "family") != nullptr) {
          c.fam = family_of(*body);
          c.family_written = true;
        }
      }
      add(out, c);
      return;
    }
    add_command(verb, what, *body, item, out);
    return;
  }
  // a bare object is an `add`, as `nft -j -f` reads it
  add_command(command_verb::add, key, v, item, out);
}

void reader::document(script& out) {
  const jnode& root = top_.root();
  try {
    if (root.kind != jkind::object)
      fail(root,
           fmt::format("expected the libnftables JSON document {{\"nftables\": [...]}}, saw {}", kind_name(root.kind)));
    const jnode* list = opt(root, "nftables");
    if (list == nullptr) fail(root, "expected member \"nftables\" (the array of objects and commands)");
    if (list->kind != jkind::array) fail(*list, "expected \"nftables\" to be an array");
    detail::charged_vector<item_ref> items(charged(src_));
    items.reserve(list->count);
    bool commands = false;
    for (auto k : top_.kids(*list)) {
      const jnode& item = top_.node(k);
      try {
        const auto peeked = peek_key(item);
        if (peeked && *peeked != "metainfo") {
          if (is_command_key(*peeked)) commands = true;
          items.push_back({*peeked, &item});
          continue;
        }
        // metainfo, or a key with escapes, or not an object: read the item to know
        const auto [key, v] = single(materialise(item), "an item of \"nftables\"");
        if (key == "metainfo") {
          const jnode& m = *v;
          need_object(m, "metainfo");
          if (const jnode* sv = opt(m, "json_schema_version");
              sv != nullptr && number_of(*sv, "json_schema_version") > 1)
            fail(*sv, error_code::invalid_value,
                 fmt::format("JSON schema version {} is newer than the version 1 nflens reads", text(*sv)));
          if (const jnode* ver = opt(m, "version"); ver != nullptr && ver->kind == jkind::string)
            old_ = text(*ver).starts_with("1.0.") || text(*ver).starts_with("0.");
          continue;
        }
        if (is_command_key(key)) commands = true;
        items.push_back({key, &item});
      } catch (const schema_error&) {
        if (sink_.full()) return;
      }
    }
    if (!commands) {
      try {
        script blocks;
        if (listing(items, blocks)) {
          out.commands = std::move(blocks.commands);
          return;
        }
      } catch (const schema_error&) {
        return;  // errors inside a listing: reported; the listing is not complete
      }
    }
    for (const auto& ref : items) {
      try {
        const jnode& item = materialise(*ref.item);
        const auto [key, v] = single(item, "an item of \"nftables\"");
        command_of(key, *v, item, out);
      } catch (const schema_error&) {
        if (sink_.full()) return;
      }
    }
  } catch (const schema_error&) {
  } catch (const syntax_failure&) {
  }
}

}  // namespace

result<script> parse_json(std::string name, std::string text, const json_parse_options& o) {
  result<script> r;
  const std::size_t size = text.size();
  auto src = std::make_shared<source>(std::move(name), std::move(text));
  diagnostic_sink sink(src, o.limits);
  if (size > o.limits.max_input_bytes) {
    sink.error(error_code::input_too_large, span{},
               fmt::format("input is larger than the limit of {} bytes", o.limits.max_input_bytes));
    r.diagnostics = sink.take();
    return r;
  }
  src->limit_tree(o.limits.max_tree_bytes);
  json_detail::jdoc doc;
  std::optional<reader> rd;
  try {
    if (doc.parse(*src, sink, o.limits.depth(), true)) {
      rd.emplace(*src, doc, sink, o.limits.depth());
      rd->document(r.value);
    }
  } catch (const arena_exhausted&) {
    sink.error(error_code::tree_too_large, rd ? rd->item_at() : span{static_cast<std::uint32_t>(doc.reached()), 1},
               fmt::format("the syntax tree outgrew the limit of {} bytes (limits::max_tree_bytes) {}; the rest of "
                           "the input was not read",
                           o.limits.max_tree_bytes, rd ? "in this item" : "while the document was read"));
  } catch (const std::bad_alloc&) {
    sink.error(error_code::internal_error, span{}, "out of memory while reading the JSON input");
  }
  if (rd) rd->release_commands();
  r.value.sources.push_back(src);
  r.diagnostics = sink.take();
  return r;
}

script parse_json_or_throw(std::string name, std::string text, const json_parse_options& o) {
  auto r = parse_json(std::move(name), std::move(text), o);
  if (!r.ok()) throw parse_error(std::move(r.diagnostics));
  return std::move(r.value);
}

}  // namespace nflens::nft
