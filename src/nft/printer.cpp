// SPDX-License-Identifier: MIT
// The canonical printer: a ruleset in the form `nft list ruleset` of nft 1.1 prints it (nftables
// rule.c table_print/chain_print/set_print/obj_print, statement.c, expression.c and the selector
// printers). Layout rules that are easy to get wrong, all from nft:
//  - blocks inside a table are separated by a blank line; a table's `flags` line is followed by one;
//  - a relation prints `==` only when its left side is a binary operation or its right side is a single
//    flag value (`tcp flags == syn`), otherwise a space (`tcp dport 22`);
//  - binary operands are parenthesised when their operator binds less tightly than the parent's;
//  - a named set's elements wrap after 5 (integer-like types) or 2 (addresses, ct state) per line, or
//    one per line for maps, concatenations, sets with timeouts, comments or statements; continuation
//    lines start with three tabs and five spaces; anonymous sets stay on one line;
//  - constants are spelled through the datatype of what they are compared with or assigned to.

#include <nflens/nft.hpp>

#include "nft/datatype.hpp"
#include "nft/spelling.hpp"
#include "nft/vocabulary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace nflens::nft {

namespace {

using types::dtype;
using types::value_type;

constexpr value_type of(dtype t) noexcept { return value_type{t}; }

/// nft's operator precedence for parenthesising binary operands (expression.c).
int precedence(binop op) noexcept {
  switch (op) {
    case binop::lshift:
    case binop::rshift:
      return 1;
    case binop::and_:
      return 2;
    case binop::xor_:
      return 3;
    case binop::or_:
      return 4;
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------------
// Priorities (rule.c prio2str)

struct std_prio {
  std::int32_t value;
  priority_name name;
};
constexpr std_prio inet_prios[] = {{-300, priority_name::raw},    {-150, priority_name::mangle},
                                   {-100, priority_name::dstnat}, {0, priority_name::filter},
                                   {50, priority_name::security}, {100, priority_name::srcnat}};
constexpr std_prio bridge_prios[] = {{-300, priority_name::dstnat},
                                     {-200, priority_name::filter},
                                     {100, priority_name::out},
                                     {300, priority_name::srcnat}};

void append_priority(std::string& out, const priority& p, family f, hook h, bool old) {
  const auto value = priority_value(p, f);
  if (!value) {  // a name this family does not know: keep it as written
    out += name(p.name);
    if (p.offset > 0) fmt::format_to(std::back_inserter(out), " + {}", p.offset);
    if (p.offset < 0) fmt::format_to(std::back_inserter(out), " - {}", -static_cast<std::int64_t>(p.offset));
    return;
  }
  const std::span<const std_prio> table =
      f == family::bridge ? std::span<const std_prio>(bridge_prios) : std::span<const std_prio>(inet_prios);
  for (const auto& s : table) {
    const std::int64_t offset = std::int64_t{*value} - s.value;
    if (offset < -10 || offset > 10) continue;
    if (!vocab::priority_name_fits(s.name, f, h, old)) break;
    out += name(s.name);
    if (offset > 0) fmt::format_to(std::back_inserter(out), " + {}", offset);
    if (offset < 0) fmt::format_to(std::back_inserter(out), " - {}", -offset);
    return;
  }
  fmt::format_to(std::back_inserter(out), "{}", *value);
}

// ---------------------------------------------------------------------------------------------------
// Byte and rate units (statement.c get_rate)

std::pair<std::uint64_t, std::string_view> byte_unit(std::uint64_t bytes) noexcept {
  static constexpr std::string_view units[] = {"bytes", "kbytes", "mbytes"};
  if (bytes == 0) return {0, units[0]};
  std::size_t i = 0;
  for (; i + 1 < std::size(units); ++i) {
    if (bytes % 1024 != 0) break;
    bytes /= 1024;
  }
  return {bytes, units[i]};
}

std::string_view protocol_word(std::string_view p) noexcept { return p; }

// ---------------------------------------------------------------------------------------------------
// Element order (nftables mergesort.c): a listing shows a set's elements sorted by their value, the
// value of a concatenation being its parts' bytes one after the other, a range or prefix sorting by
// its start and the catch-all element `*` last. Each part is encoded here as 32 big-endian bytes
// (strings left-aligned, as the kernel stores them), so comparing keys byte-wise compares values.

constexpr std::size_t key_width = 32;

std::optional<std::uint64_t> constant_value(const expr& e, dtype t) {
  if (const auto* i = e.get<integer_expr>()) return i->value;
  if (const auto* s = e.get<symbol_expr>()) return types::symbol_value(s->name, t);
  if (const auto* b = e.get<boolean_expr>()) return b->value ? 1 : 0;
  if (const auto* m = e.get<time_expr>()) return m->milliseconds;
  // A combination of flags is listed as `a | b` and sorts by its first (lowest) flag, as nft sorts
  // the binary operation by its left operand.
  if (const auto* b = e.get<binop_expr>()) return constant_value(*b->left(), t);
  return std::nullopt;
}

void append_key_part(std::string& key, const expr& e, dtype t) {
  std::array<unsigned char, key_width> part{};
  if (const auto* p = e.get<prefix_expr>()) return append_key_part(key, *p->value, t);
  if (const auto* r = e.get<range_expr>()) return append_key_part(key, *r->low(), t);
  if (e.is<wildcard_expr>()) {
    part.fill(0xff);
  } else if (const auto* a = e.get<address_expr>()) {
    const std::size_t n = a->address().family == ip_family::ipv4 ? 4 : 16;
    std::copy_n(a->address().bytes.begin(), n, part.end() - static_cast<std::ptrdiff_t>(n));
  } else if (const auto* m = e.get<ether_address_expr>()) {
    std::copy(m->bytes.begin(), m->bytes.end(), part.end() - 6);
  } else if (const auto* s = e.get<string_expr>()) {
    std::copy_n(s->text.begin(), std::min(s->text.size(), key_width), part.begin());
  } else if (const auto* y = e.get<symbol_expr>(); y != nullptr && types::is_string_type(t)) {
    std::copy_n(y->name.begin(), std::min(y->name.size(), key_width), part.begin());
  } else if (auto v = constant_value(e, t)) {
    if (types::is_bitmask_type(t) && *v != 0) *v &= ~(*v - 1);
    for (std::size_t i = 0; i < 8; ++i) part[key_width - 1 - i] = static_cast<unsigned char>(*v >> (8 * i));
  }
  key.append(reinterpret_cast<const char*>(part.data()), part.size());
}

/// The order in which nft lists `els`: sorted by key, except the elements of a concatenation with
/// intervals, which the kernel keeps as they were added.
template <class Elements>  // a script's span of elements or a ruleset's vector of ruleset_element
std::vector<std::uint32_t> listing_order(const Elements& els, const value_type& kt, bool concat_intervals) {
  std::vector<std::uint32_t> order(els.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  if (concat_intervals || els.size() < 2) return order;
  std::vector<std::string> keys(els.size());
  for (std::size_t i = 0; i < els.size(); ++i) {
    const expr& k = *els[i].key;
    if (const auto* c = k.get<concat_expr>()) {
      for (std::size_t j = 0; j < c->items.size(); ++j) append_key_part(keys[i], c->items[j], kt.part(j).base);
    } else {
      append_key_part(keys[i], k, kt.base);
    }
  }
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
  return order;
}

// ---------------------------------------------------------------------------------------------------
// The printer

struct printer {
  printer(std::string& o, const print_options& p, family f = family::ip) : out(o), opt(p), fam(f) {}

  std::string& out;
  const print_options& opt;
  family fam = family::ip;

  template <class... A>
  void put(fmt::format_string<A...> f, A&&... a) {
    fmt::format_to(std::back_inserter(out), f, std::forward<A>(a)...);
  }

  // --- selectors -----------------------------------------------------------------------------------

  void payload(const payload_expr& p) {
    if (p.inner != tunnel::none) put("{} ", name(p.inner));
    switch (p.protocol) {
      case header::raw:
        put("@{},{},{}", name(p.base), p.offset, p.length);
        return;
      case header::tcp_option: {
        const auto kind = option_name(header::tcp_option, p.option);
        if (p.length != 0 || (p.field == header_field::none && p.offset != 0)) {
          // `tcp option @kind,offset,length`
          if (kind.empty())
            put("tcp option @{},{},{}", p.option, p.offset, p.length);
          else
            put("tcp option @{},{},{}", kind, p.offset, p.length);
          return;
        }
        if (kind.empty()) {
          put("tcp option {}", p.option);
          if (p.field != header_field::none) put(" {}", field_name(header::tcp_option, p.field));
          return;
        }
        put("tcp option {}", kind);
        if (p.field == header_field::none) return;
        if (p.option == 5 && p.index != 0) put("{}", p.index);
        put(" {}", field_name(header::tcp_option, p.field));
        return;
      }
      case header::ip_option:
        put("ip option {}", option_name(header::ip_option, p.option));
        if (p.field != header_field::none) put(" {}", field_name(header::ip_option, p.field));
        return;
      case header::sctp_chunk:
        put("sctp chunk {}", option_name(header::sctp_chunk, p.option));
        if (p.field != header_field::none) put(" {}", field_name(header::sctp_chunk, p.field));
        return;
      case header::dccp_option:
        put("dccp option {}", p.option);
        return;
      case header::exthdr:
        put("exthdr {}", name(static_cast<header>(p.option)));
        return;
      case header::rt0:
        if (p.field == header_field::addr) {
          put("rt0 addr[{}]", p.index);
          return;
        }
        break;
      case header::srh:
        if (p.field == header_field::sid) {
          put("srh sid[{}]", p.index);
          return;
        }
        break;
      default:
        break;
    }
    put("{} {}", name(p.protocol), field_name(p.protocol, p.field));
  }

  void meta(meta_key k) {
    switch (k) {
      case meta_key::iif:
      case meta_key::oif:
      case meta_key::iifname:
      case meta_key::oifname:
      case meta_key::iifgroup:
      case meta_key::oifgroup:
        out += name(k);
        return;
      default:
        put("meta {}", name(k));
    }
  }

  void ct(const ct_expr& c) {
    out += "ct ";
    if (c.direction != ct_direction::none) put("{} ", name(c.direction));
    if ((c.key == ct_key::saddr || c.key == ct_key::daddr) && c.protocol != nfproto::none) put("{} ", name(c.protocol));
    out += name(c.key);
  }

  void fib(const fib_expr& f) {
    out += "fib ";
    static constexpr std::pair<fib_flag, std::string_view> flags[] = {{fib_flag::saddr, "saddr"},
                                                                      {fib_flag::daddr, "daddr"},
                                                                      {fib_flag::mark, "mark"},
                                                                      {fib_flag::iif, "iif"},
                                                                      {fib_flag::oif, "oif"}};
    unsigned rest = f.flags;
    for (const auto& [bit, word] : flags) {
      const auto b = static_cast<unsigned>(bit);
      if ((rest & b) == 0) continue;
      out += word;
      rest &= ~b;
      if (rest != 0) out += " . ";
    }
    if (rest != 0) put("0x{:x}", rest);
    // (nft 1.0.6 has no `check`: its presence test is `oif exists|missing`)
    put(" {}", f.result == fib_result::check && opt.nft_1_0_6 ? std::string_view{"oif"} : name(f.result));
  }

  // --- constants -----------------------------------------------------------------------------------

  void integer(std::uint64_t v, const value_type& t, bool numeric) {
    if (numeric) {
      // ranges print their ends numerically (expression.c range_expr_print: NUMERIC_ALL)
      switch (t.base) {
        case dtype::mark:
        case dtype::bitmask:
        case dtype::xinteger:
        case dtype::dscp:
        case dtype::ecn:
        case dtype::ether_type:
        case dtype::time:
        case dtype::classid:
          break;
        default:
          if (types::is_bitmask_type(t.base)) break;
          put("{}", v);
          return;
      }
    }
    types::append_integer(out, v, t.base);
  }

  void symbol(std::string_view s, const value_type& t, bool numeric) {
    if (types::is_string_type(t.base)) {
      put("\"{}\"", s);
      return;
    }
    if (const auto v = types::symbol_value(s, t.base)) {
      integer(*v, t, numeric);
      return;
    }
    if (spelling::is_bare_value(s)) {
      out += s;
    } else {  // a value that would not read back as one token (from JSON): quoted, see nft/spelling.hpp
      put("\"{}\"", s);
    }
  }

  void address(const ip_address& a) { out += to_string(a); }

  // --- expressions ---------------------------------------------------------------------------------

  /// Any expression; `t` is the datatype constants in it take (the other side of the relation, the
  /// target of the assignment, the key of the lookup).
  void expr(const nft::expr& e, const value_type& t, bool numeric = false) {
    std::visit([&](const auto& v) { node(v, e, t, numeric); }, e.value);
  }

  void node(const integer_expr& v, const nft::expr&, const value_type& t, bool numeric) {
    integer(v.value, t, numeric);
  }
  void node(const address_expr& v, const nft::expr&, const value_type&, bool) { address(v.address()); }
  void node(const ether_address_expr& v, const nft::expr&, const value_type&, bool) {
    put("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", v.bytes[0], v.bytes[1], v.bytes[2], v.bytes[3], v.bytes[4],
        v.bytes[5]);
  }
  void node(const time_expr& v, const nft::expr&, const value_type&, bool) { types::append_time(out, v.milliseconds); }
  void node(const symbol_expr& v, const nft::expr&, const value_type& t, bool numeric) { symbol(v.name, t, numeric); }
  void node(const string_expr& v, const nft::expr&, const value_type&, bool) { put("\"{}\"", v.text); }
  void node(const boolean_expr& v, const nft::expr&, const value_type&, bool) { out += v.value ? "exists" : "missing"; }
  void node(const wildcard_expr&, const nft::expr&, const value_type&, bool) { out += '*'; }
  void node(const prefix_expr& v, const nft::expr&, const value_type& t, bool numeric) {
    expr(*v.value, t, numeric);
    put("/{}", v.length);
  }
  void node(const range_expr& v, const nft::expr&, const value_type& t, bool) {
    expr(*v.low(), t, true);
    out += '-';
    expr(*v.high(), t, true);
  }
  // Every operator is left-associative: a left operand needs parentheses when it binds more loosely, a
  // right one also when it binds as tightly (`1 << (2 << 3)`). nft parenthesises only by precedence,
  // but its evaluation folds constant right operands, so its listings never hold the second case;
  // a script's tree can, and must print to text that reads back to the same tree.
  void binop_operand(binop op, const nft::expr& arg, const value_type& t, bool right) {
    const auto* b = arg.get<binop_expr>();
    const bool paren = b != nullptr && (precedence(op) < precedence(b->op) ||
                                        (right && precedence(op) == precedence(b->op)));
    if (paren) out += '(';
    expr(arg, t);
    if (paren) out += ')';
  }
  void node(const binop_expr& v, const nft::expr&, const value_type& t, bool) {
    // The left side has its own type (a selector) or the context's (a constant flag combination); the
    // right side takes the left's type, except a shift count (an integer).
    value_type lt = types::type_of(*v.left(), fam);
    if (lt.base == dtype::invalid && !lt.is_concat()) lt = t;
    binop_operand(v.op, *v.left(), lt, false);
    put(" {} ", name(v.op));
    const bool shift = v.op == binop::lshift || v.op == binop::rshift;
    binop_operand(v.op, *v.right(), shift ? of(dtype::integer) : lt, true);
  }
  void node(const concat_expr& v, const nft::expr&, const value_type& t, bool numeric) {
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      if (i != 0) out += " . ";
      const auto& item = v.items[i];
      value_type it = t.part(i);
      if (!t.is_concat() && t.base == dtype::invalid) it = types::type_of(item, fam);
      expr(item, it, numeric);
    }
  }
  void node(const list_expr& v, const nft::expr&, const value_type& t, bool numeric) {
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      if (i != 0) out += ',';
      expr(v.items[i], t, numeric);
    }
  }
  void node(const set_expr& v, const nft::expr&, const value_type& t, bool) { anonymous_set(v, t, {}); }
  void node(const set_ref_expr& v, const nft::expr&, const value_type&, bool) {
    out += '@';
    spelling::append_name(out, v.name);
  }
  void node(const map_expr& v, const nft::expr&, const value_type& t, bool) {
    const value_type kt = types::type_of(*v.key(), fam);
    expr(*v.key(), kt);
    out += " map ";
    if (const auto* s = v.mapping()->get<set_expr>())
      anonymous_set(*s, kt, t);
    else
      expr(*v.mapping(), t);
  }
  void node(const verdict_expr& v, const nft::expr&, const value_type&, bool) { verdict_words(v.kind, v.chain); }
  void node(const payload_expr& v, const nft::expr&, const value_type&, bool) { payload(v); }
  void node(const meta_expr& v, const nft::expr&, const value_type&, bool) { meta(v.key); }
  void node(const ct_expr& v, const nft::expr&, const value_type&, bool) { ct(v); }
  void node(const fib_expr& v, const nft::expr&, const value_type&, bool) { fib(v); }
  void node(const rt_expr& v, const nft::expr&, const value_type&, bool) {
    out += "rt ";
    if (v.key == rt_key::nexthop && v.protocol != nfproto::none) put("{} ", name(v.protocol));
    out += name(v.key);
  }
  void node(const socket_expr& v, const nft::expr&, const value_type&, bool) {
    put("socket {}", name(v.key));
    if (v.key == socket_key::cgroupv2) put(" level {}", v.level);
  }
  void node(const osf_expr& v, const nft::expr&, const value_type&, bool) {
    out += "osf ";
    if (v.ttl == osf_ttl::loose) out += "ttl loose ";
    if (v.ttl == osf_ttl::skip) out += "ttl skip ";
    out += name(v.key);
  }
  void node(const ipsec_expr& v, const nft::expr&, const value_type&, bool) {
    out += v.direction == ipsec_direction::in ? "ipsec in" : "ipsec out";
    if (v.spnum != 0) put(" spnum {}", v.spnum);
    if ((v.key == ipsec_key::saddr || v.key == ipsec_key::daddr) && v.protocol != nfproto::none)
      put(" {}", name(v.protocol));
    put(" {}", name(v.key));
  }
  void node(const numgen_expr& v, const nft::expr&, const value_type&, bool) {
    put("numgen {} mod {}", name(v.type), v.modulus);
    if (v.offset != 0) put(" offset {}", v.offset);
  }
  void node(const hash_expr& v, const nft::expr&, const value_type&, bool) {
    if (v.spec->kind == hash_kind::symhash) {
      out += "symhash";
    } else {
      out += "jhash ";
      if (v.spec->key != nullptr) expr(*v.spec->key, types::type_of(*v.spec->key, fam));
    }
    put(" mod {}", v.spec->modulus);
    if (v.spec->has_seed) put(" seed 0x{:x}", v.spec->seed);
    if (v.spec->offset != 0) put(" offset {}", v.spec->offset);
  }
  void node(const tunnel_expr& v, const nft::expr&, const value_type&, bool) {
    out += v.key == tunnel_key::path ? "tunnel path" : "tunnel id";
  }

  void verdict_words(verdict k, std::string_view chain) {
    out += name(k);
    if (k == verdict::jump || k == verdict::goto_) {
      out += ' ';
      spelling::append_name(out, chain);
    }
  }

  // --- sets and elements ---------------------------------------------------------------------------

  /// The options and data of an element, after its key (expression.c set_elem_expr_print).
  void element(const nft::element& el, const value_type& kt, const value_type& dt, bool stateless_stmts) {
    expr(*el.key, kt);
    if (const auto* o = el.options) {
      for (const auto& s : o->stmts) {
        out += ' ';
        stmt(s, stateless_stmts);
      }
      if (o->has_timeout) {
        out += " timeout ";
        types::append_time(out, o->timeout_ms);
      }
      if (o->has_expires && !opt.stateless) {
        out += " expires ";
        types::append_time(out, o->expires_ms);
      }
      if (!o->comment.empty()) put(" comment \"{}\"", o->comment);
    }
    if (el.data != nullptr) {
      out += " : ";
      expr(*el.data, dt);
    }
  }

  void anonymous_set(const set_expr& s, const value_type& kt, const value_type& dt) {
    out += "{ ";
    bool ranges = false;
    for (const auto& el : s.elements)
      if (const auto* c = el.key->get<concat_expr>())
        for (const auto& i : c->items) ranges |= i.is<range_expr>() || i.is<prefix_expr>();
    const auto order = listing_order(s.elements, kt, ranges);
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (i != 0) out += ", ";
      element(s.elements[order[i]], kt, dt, false);
    }
    out += " }";
  }

  // --- statements ----------------------------------------------------------------------------------

  void relation(const match_stmt& m) {
    const nft::expr& left = *m.left;
    const value_type lt = types::type_of(left, fam);
    expr(left, lt);
    const bool left_binop = left.is<binop_expr>();
    switch (m.op) {
      case relational_op::implicit:
        out += left_binop ? " == " : " ";
        break;
      case relational_op::eq: {
        const nft::expr& r = *m.right;
        // nft prints `==` before a single flag (`tcp flags == syn`); a value with several flags is
        // listed as their `|` and takes no operator (expression.c must_print_eq_op).
        const auto* i = r.get<integer_expr>();
        const bool single_flag =
            types::is_bitmask_type(lt.base) && (r.is<symbol_expr>() || (i != nullptr && std::popcount(i->value.get()) <= 1));
        out += left_binop || single_flag ? " == " : " ";
        break;
      }
      default:
        put(" {} ", name(m.op));
    }
    expr(*m.right, lt);
  }

  void stmt(const nft::stmt& s, bool stateless = false) {
    std::visit([&](const auto& v) { statement(v, stateless || opt.stateless); }, s.value);
  }

  void statement(const match_stmt& v, bool) { relation(v); }
  void statement(const verdict_stmt& v, bool) { verdict_words(v.kind, v.chain); }
  void statement(const anonymous_chain_stmt& v, bool) {
    put("{} {{\n", name(v.kind));
    ++depth;
    if (v.body != nullptr)
      for (const auto& r : v.body->rules) {
        indent(depth + 2);
        rule_line(r);
        out += '\n';
      }
    --depth;
    indent(depth + 2);
    out += '}';
  }
  void statement(const verdict_map_stmt& v, bool) {
    const value_type kt = types::type_of(*v.key, fam);
    expr(*v.key, kt);
    out += " vmap ";
    if (const auto* s = v.mapping->get<set_expr>())
      anonymous_set(*s, kt, of(dtype::verdict));
    else
      expr(*v.mapping, {});
  }
  void statement(const mangle_stmt& v, bool) {
    const value_type tt = types::type_of(*v.target, fam);
    expr(*v.target, tt);
    out += " set ";
    expr(*v.value, tt);
  }
  void statement(const counter_stmt& v, bool stateless) {
    out += "counter";
    if (!stateless) put(" packets {} bytes {}", v.packets, v.bytes);
  }
  void limit(const limit_stmt& v, bool object) {
    out += object ? "rate " : "limit rate ";
    if (v.over) out += "over ";
    if (!v.bytes) {
      put("{}/{}", v.rate, name(v.unit));
      // A packet limit without a burst has nft's default of 5, which nft 1.1 lists.
      const std::uint32_t burst = v.has_burst ? v.burst.get() : 5;
      if (!object)
        put(" burst {} packets", burst);
      else if (burst > 0 && burst != 5)
        put(" burst {} packets", burst);
      return;
    }
    const auto [rate, unit] = byte_unit(v.rate);
    put("{} {}/{}", rate, unit, name(v.unit));
    if (v.burst != 0) {
      const auto [burst, bunit] = byte_unit(v.burst);
      put(" burst {} {}", burst, bunit);
    }
  }
  void statement(const limit_stmt& v, bool) { limit(v, false); }
  void quota(const quota_stmt& v, bool stateless) {
    if (v.over) out += "over ";
    const auto [bytes, unit] = byte_unit(v.bytes);
    put("{} {}", bytes, unit);
    if (!stateless && v.used != 0) {
      const auto [used, uunit] = byte_unit(v.used);
      put(" used {} {}", used, uunit);
    }
  }
  void statement(const quota_stmt& v, bool stateless) {
    out += "quota ";
    quota(v, stateless);
  }
  void statement(const connlimit_stmt& v, bool) { put("ct count {}{}", v.over ? "over " : "", v.count); }
  void statement(const last_stmt& v, bool stateless) {
    out += "last";
    if (stateless) return;
    out += " used ";
    if (v.has_used)
      types::append_time(out, v.used_ms);
    else
      out += "never";
  }
  void statement(const log_stmt& v, bool) {
    out += "log";
    if (v.prefix != nullptr) {
      out += " prefix ";
      expr(*v.prefix, of(dtype::string));
    }
    if (v.present & 2) put(" group {}", v.group);
    if (v.present & 4) put(" snaplen {}", v.snaplen);
    if (v.present & 8) put(" queue-threshold {}", v.queue_threshold);
    if ((v.present & 1) && v.level != log_level::warn) put(" level {}", name(v.level));
    const auto all = static_cast<std::uint8_t>(log_flag::all);
    if ((v.flags & all) == all) {
      out += " flags all";
      return;
    }
    const auto seq = static_cast<std::uint8_t>(log_flag::tcp_sequence);
    const auto opts = static_cast<std::uint8_t>(log_flag::tcp_options);
    if (v.flags & (seq | opts)) {
      out += " flags tcp";
      const char* delim = " ";
      if (v.flags & seq) {
        out += " sequence";
        delim = ",";
      }
      if (v.flags & opts) put("{}options", delim);
    }
    if (v.flags & static_cast<std::uint8_t>(log_flag::ip_options)) out += " flags ip options";
    if (v.flags & static_cast<std::uint8_t>(log_flag::skuid)) out += " flags skuid";
    if (v.flags & static_cast<std::uint8_t>(log_flag::ether)) out += " flags ether";
  }
  void statement(const reject_stmt& v, bool) {
    // statement.c reject_stmt_print: the default code (port unreachable) is not listed, except in the
    // inet, bridge and netdev families for icmp and icmpv6, where the family would be lost.
    out += "reject";
    const bool verbose = fam == family::inet || fam == family::bridge || fam == family::netdev;
    switch (v.type) {
      case reject_type::unspecified:
        return;
      case reject_type::tcp_reset:
        out += " with tcp reset";
        return;
      case reject_type::icmpx:
        if (reject_code(v) == 1) return;
        out += " with icmpx ";
        break;
      case reject_type::icmp:
        if (reject_code(v) == 3 && !verbose) return;
        out += " with icmp ";
        break;
      case reject_type::icmpv6:
        if (reject_code(v) == 4 && !verbose) return;
        out += " with icmpv6 ";
        break;
    }
    if (const auto code = reject_code(v))
      types::append_reject_code(out, *code, v.type);
    else
      expr(*v.code, {});
  }
  /// The code of a reject statement as a number (its default when none was written).
  static std::optional<std::uint64_t> reject_code(const reject_stmt& v) {
    if (v.code == nullptr) return v.type == reject_type::icmpv6 ? 4 : v.type == reject_type::icmpx ? 1 : 3;
    if (const auto* i = v.code->get<integer_expr>()) return i->value;
    if (const auto* s = v.code->get<symbol_expr>()) return types::reject_code_value(s->name, v.type);
    return std::nullopt;
  }
  void statement(const nat_stmt& v, bool) {
    out += name(v.kind);
    if (v.address != nullptr || v.port != nullptr) {
      if (v.protocol != nfproto::none) put(" {}", name(v.protocol));
      if (v.mode == nat_mode::prefix) out += " prefix";
      if (v.mode == nat_mode::interval) out += " interval";
      out += " to";
    }
    const value_type at = nat_address_type(v);
    if (v.address != nullptr) {
      out += ' ';
      const bool v6 = at.base == dtype::ipv6_addr;
      if (v.port != nullptr && v6 && v.address->is<address_expr>()) {
        out += '[';
        expr(*v.address, at);
        out += ']';
      } else if (const auto* r = v.address->get<range_expr>(); r != nullptr && v.port != nullptr && v6) {
        out += '[';
        expr(*r->low(), at, true);
        out += "]-[";
        expr(*r->high(), at, true);
        out += ']';
      } else {
        expr(*v.address, at);
      }
    }
    if (v.port != nullptr) {
      if (v.address == nullptr) out += ' ';
      out += ':';
      expr(*v.port, of(dtype::inet_service));
    }
    nat_flags(v.flags);
  }
  value_type nat_address_type(const nat_stmt& v) const {
    if (v.mode == nat_mode::addr_port) {
      value_type t;
      t.count = 2;
      t.parts[0] = v.protocol == nfproto::ip6 || (v.protocol == nfproto::none && fam == family::ip6) ? dtype::ipv6_addr
                                                                                                     : dtype::ipv4_addr;
      t.parts[1] = dtype::inet_service;
      return t;
    }
    if (v.protocol == nfproto::ip6 || (v.protocol == nfproto::none && fam == family::ip6)) return of(dtype::ipv6_addr);
    if (v.protocol == nfproto::ip || fam == family::ip) return of(dtype::ipv4_addr);
    if (v.address != nullptr) {
      const auto t = types::type_of(*v.address, fam);
      if (t.base == dtype::ipv6_addr) return of(dtype::ipv6_addr);
    }
    return of(dtype::ipv4_addr);
  }
  void nat_flags(std::uint8_t flags) {
    const char* delim = " ";
    if (flags & static_cast<std::uint8_t>(nat_flag::random)) {
      put("{}random", delim);
      delim = ",";
    }
    if (flags & static_cast<std::uint8_t>(nat_flag::fully_random)) {
      put("{}fully-random", delim);
      delim = ",";
    }
    if (flags & static_cast<std::uint8_t>(nat_flag::persistent)) put("{}persistent", delim);
  }
  void statement(const tproxy_stmt& v, bool) {
    out += "tproxy";
    if (fam == family::inet && v.protocol != nfproto::none) put(" {}", name(v.protocol));
    out += " to";
    const value_type at =
        v.protocol == nfproto::ip6 || fam == family::ip6 ? of(dtype::ipv6_addr) : of(dtype::ipv4_addr);
    if (v.address != nullptr) {
      out += ' ';
      if (at.base == dtype::ipv6_addr && v.address->is<address_expr>()) {
        out += '[';
        expr(*v.address, at);
        out += ']';
      } else {
        expr(*v.address, at);
      }
    }
    if (v.port != nullptr) {
      if (v.address == nullptr) out += ' ';
      out += ':';
      expr(*v.port, of(dtype::inet_service));
    }
  }
  void statement(const queue_stmt& v, bool) {
    out += "queue";
    const char* delim = " flags ";
    if (v.flags & static_cast<std::uint8_t>(queue_flag::bypass)) {
      put("{}bypass", delim);
      delim = ",";
    }
    if (v.flags & static_cast<std::uint8_t>(queue_flag::fanout)) put("{}fanout", delim);
    out += " to ";
    if (v.number != nullptr)
      expr(*v.number, of(dtype::integer));
    else
      out += '0';
  }
  void statement(const dup_stmt& v, bool) {
    out += "dup";
    if (v.address != nullptr) {
      out += " to ";
      expr(*v.address, types::type_of(*v.address, fam));
      if (v.device != nullptr) {
        out += " device ";
        expr(*v.device, of(dtype::ifname));
      }
    }
  }
  void statement(const fwd_stmt& v, bool) {
    if (v.address != nullptr) {
      put("fwd {} to ", v.protocol == nfproto::ip6 ? "ip6" : "ip");
      expr(*v.address, types::type_of(*v.address, fam));
      out += " device ";
      expr(*v.device, of(dtype::ifname));
    } else {
      out += "fwd to ";
      expr(*v.device, of(dtype::ifname));
    }
  }
  void statement(const notrack_stmt&, bool) { out += "notrack"; }
  /// The set or map a statement names, when the printer knows the table.
  const ruleset_set* named_set(const nft::expr& ref) {
    const auto* r = ref.get<set_ref_expr>();
    if (r == nullptr || table_ == nullptr) return nullptr;
    if (set_names_.empty() && !table_->sets.empty())
      for (const auto& s : table_->sets) set_names_.emplace(s.name, &s);
    const auto it = set_names_.find(r->name);
    return it == set_names_.end() ? nullptr : it->second;
  }

  /// What follows the key of the element of a set or meter statement: timeout, expires, comment, then
  /// its stateful statements.
  void element_inline_options(const nft::element& el) {
    if (el.options == nullptr) return;
    if (el.options->has_timeout) {
      out += " timeout ";
      types::append_time(out, el.options->timeout_ms);
    }
    if (el.options->has_expires && !opt.stateless) {
      out += " expires ";
      types::append_time(out, el.options->expires_ms);
    }
    if (!el.options->comment.empty()) put(" comment \"{}\"", el.options->comment);
    for (const auto& s : el.options->stmts) {
      out += ' ';
      stmt(s, true);
    }
  }

  void statement(const set_stmt& v, bool) {
    // statement.c set_stmt_print/map_stmt_print: the element (key, timeout, expires, comment), then the
    // statement's stateful statements, then the data.
    put("{} ", name(v.op));
    expr(*v.set_ref, {});
    out += " { ";
    const nft::element& el = *v.elem;
    const ruleset_set* target = named_set(*v.set_ref);
    value_type kt = types::type_of(*el.key, fam);
    if (target != nullptr && kt.base == dtype::invalid && !kt.is_concat()) kt = types::declared_type(target->key);
    expr(*el.key, kt);
    element_inline_options(el);
    if (el.data != nullptr) {
      out += " : ";
      value_type dt = types::type_of(*el.data, fam);
      if (target != nullptr && target->is_map && !target->data.object) dt = types::declared_type(target->data);
      expr(*el.data, dt);
    }
    out += " }";
  }
  void statement(const meter_stmt& v, bool) {
    out += "meter ";
    if (v.name() != nullptr) {
      expr(*v.name(), {});
      out += ' ';
    }
    put("size {} {{ ", v.size() != 0 ? v.size() : meter_stmt::default_size);
    const nft::element& el = *v.elem();
    expr(*el.key, types::type_of(*el.key, fam));
    element_inline_options(el);
    out += " }";
  }
  void statement(const flow_offload_stmt& v, bool) {
    out += "flow add @";
    spelling::append_name(out, v.flowtable);
  }
  void statement(const objref_stmt& v, bool) {
    switch (v.type) {
      case object_type::ct_helper:
        out += "ct helper set ";
        break;
      case object_type::ct_timeout:
        out += "ct timeout set ";
        break;
      case object_type::ct_expectation:
        out += "ct expectation set ";
        break;
      case object_type::secmark:
        out += "meta secmark set ";
        break;
      default:
        put("{} name ", name(v.type));
    }
    expr(*v.name, of(dtype::string));
  }
  void statement(const synproxy_stmt& v, bool) {
    const char* ts = (v.flags & static_cast<std::uint8_t>(synproxy_flag::timestamp)) ? " timestamp" : "";
    const char* sack = (v.flags & static_cast<std::uint8_t>(synproxy_flag::sack_perm)) ? " sack-perm" : "";
    if ((v.present & 1) && (v.present & 2))
      put("synproxy mss {} wscale {}{}{}", v.mss, v.wscale, ts, sack);
    else if (v.present & 1)
      put("synproxy mss {}{}{}", v.mss, ts, sack);
    else if (v.present & 2)
      put("synproxy wscale {}{}{}", v.wscale, ts, sack);
    else
      put("synproxy{}{}", ts, sack);
  }
  void statement(const optstrip_stmt& v, bool) {
    out += "reset ";
    expr(*v.option, {});
  }
  void statement(const xt_stmt& v, bool) { put("xt {} \"{}\"", name(v.kind), v.name); }
  void statement(const unknown_stmt& v, bool) { out += v.text; }

  // --- rules, chains, sets, objects, tables ---------------------------------------------------------

  int depth = 0;
  void indent(int n) { out.append(static_cast<std::size_t>(n), '\t'); }

  void rule_line(const nft::rule& r) {
    for (std::size_t i = 0; i < r.stmts.size(); ++i) {
      if (i != 0) out += ' ';
      stmt(r.stmts[i]);
    }
    if (!r.comment.empty()) put(" comment \"{}\"", r.comment);
    if (opt.handles && r.handle != 0) put(" # handle {}", r.handle);
  }

  void handle_comment(std::uint64_t h) {
    if (opt.handles && h != 0) put(" # handle {}", h);
  }

  void chain(const ruleset_chain& c) {
    out += "\tchain ";
    spelling::append_name(out, c.name);
    out += " {";
    handle_comment(c.handle);
    if (!c.comment.empty()) put("\n\t\tcomment \"{}\"", c.comment);
    out += '\n';
    if (c.base != nullptr) {
      const base_chain& b = *c.base;
      put("\t\ttype {} hook {}", name(b.type), name(b.hook_point));
      if (b.devices.size() == 1) {
        put(" device \"{}\"", b.devices.front());
      } else if (b.devices.size() > 1) {
        out += " devices = { ";
        device_list(b.devices);
        out += " }";
      }
      out += " priority ";
      append_priority(out, b.prio, fam, b.hook_point, opt.nft_1_0_6);
      out += ';';
      put(" policy {};", c.policy == chain_policy::drop ? "drop" : "accept");
      if (c.offload) out += " flags offload;";
      out += '\n';
    }
    for (const auto& r : c.rules) {
      out += "\t\t";
      rule_line(r);
      out += '\n';
    }
    out += "\t}\n";
  }

  void set_type_clause(const set_type& t, bool use_typeof) {
    if (use_typeof) {
      expr(*t.typeof_expr, {});
      return;
    }
    for (std::size_t i = 0; i < t.names.size(); ++i) {
      if (i != 0) out += " . ";
      out += t.names[i];
    }
  }

  void set_block(const ruleset_set& s) {
    out += s.is_map ? "\tmap " : "\tset ";
    spelling::append_name(out, s.name);
    out += " {";
    handle_comment(s.handle);
    out += "\n\t\t";
    const bool use_typeof = s.key.typeof_expr != nullptr;
    out += use_typeof ? "typeof " : "type ";
    set_type_clause(s.key, use_typeof);
    if (s.is_map) {
      if (s.data.object) {
        put(" : {}", name(*s.data.object));
      } else {
        out += " : ";
        if (s.data.interval) out += "interval ";
        set_type_clause(s.data, s.data.typeof_expr != nullptr);
      }
    }
    out += '\n';
    const auto flag = [&](set_flag f) { return (s.flags & static_cast<std::uint8_t>(f)) != 0; };
    if (!flag(set_flag::constant)) {
      if (s.policy == set_policy::memory) out += "\t\tpolicy memory\n";
      if (s.size > 0) {
        put("\t\tsize {}", s.size);
        if (!s.elements.empty()) put("\t# count {}", s.elements.size());
        out += '\n';
      }
    }
    std::uint8_t shown = s.flags;
    if (s.has_timeout && s.timeout_ms != 0)
      shown &= static_cast<std::uint8_t>(~static_cast<std::uint8_t>(set_flag::timeout));
    if (shown != 0) {
      out += "\t\tflags ";
      const char* delim = "";
      for (const auto& [f, w] : {std::pair{set_flag::constant, "constant"}, std::pair{set_flag::dynamic, "dynamic"},
                                 std::pair{set_flag::interval, "interval"}, std::pair{set_flag::timeout, "timeout"}}) {
        if (!flag(f)) continue;
        put("{}{}", delim, w);
        delim = ",";
      }
      out += '\n';
    }
    if (!s.stmts.empty()) {
      out += "\t\t";
      for (std::size_t i = 0; i < s.stmts.size(); ++i) {
        if (i != 0) out += ' ';
        stmt(s.stmts[i], true);
      }
      out += '\n';
    }
    if (s.auto_merge) out += "\t\tauto-merge\n";
    if (s.has_timeout && s.timeout_ms != 0) {
      out += "\t\ttimeout ";
      types::append_time(out, s.timeout_ms);
      out += '\n';
    }
    if (s.has_gc_interval && s.gc_interval_ms != 0) {
      out += "\t\tgc-interval ";
      types::append_time(out, s.gc_interval_ms);
      out += '\n';
    }
    if (!s.comment.empty()) put("\t\tcomment \"{}\"\n", s.comment);
    if (!s.elements.empty()) elements(s);
    out += "\t}\n";
  }

  void elements(const ruleset_set& s) {
    const value_type kt = types::declared_type(s.key);
    value_type dt;
    if (s.is_map && !s.data.object) dt = types::declared_type(s.data);
    if (s.is_map && s.data.object) dt = of(dtype::string);
    const auto flag = [&](set_flag f) { return (s.flags & static_cast<std::uint8_t>(f)) != 0; };
    bool force = (s.has_timeout && s.timeout_ms != 0) || s.is_map || flag(set_flag::timeout) || !s.stmts.empty() ||
                 (flag(set_flag::interval) && kt.is_concat());
    if (!force)
      for (const auto& e : s.elements)
        if (e.options != nullptr && !e.options->comment.empty()) {
          force = true;
          break;
        }
    const int per_line = force || kt.is_concat() ? 1 : types::elements_per_line(kt.base);
    out += "\t\telements = { ";
    int count = 0;
    const auto order = listing_order(s.elements, kt,
                                     flag(set_flag::interval) && kt.is_concat());
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (i != 0) {
        if (per_line > 1 && count < per_line) {
          out += ", ";
        } else {
          out += ",\n\t\t\t     ";
          count = 0;
        }
      }
      element(s.elements[order[i]], kt, dt, false);
      ++count;
    }
    out += " }\n";
  }

  /// Device names as nft lists them: quoted, in strcmp order (netlink.c qsort_device_cmp).
  void device_list(std::span<const std::string_view> devices) {
    std::vector<std::string_view> sorted(devices.begin(), devices.end());
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i) {
      if (i != 0) out += ", ";
      put("\"{}\"", sorted[i]);
    }
  }

  void flowtable(const nft::flowtable& f) {
    out += "\tflowtable ";
    spelling::append_name(out, f.name);
    out += " {";
    handle_comment(f.handle);
    out += '\n';
    if (f.has_hook) {
      put("\t\thook {} priority ", name(f.hook_point));
      append_priority(out, f.prio, family::netdev, f.hook_point, opt.nft_1_0_6);
      out += '\n';
    }
    if (!f.devices.empty()) {
      out += "\t\tdevices = { ";
      device_list(f.devices);
      out += " }\n";
    }
    if (f.offload) out += "\t\tflags offload\n";
    if (f.counter) out += "\t\tcounter\n";
    out += "\t}\n";
  }

  void object(const nft::object& o, family table_family) {
    if (std::holds_alternative<unknown_object>(o.body)) return unknown_object_block(o);
    put("\t{} ", name(o.type));
    spelling::append_name(out, o.name);
    out += " {";
    handle_comment(o.handle);
    if (!o.comment.empty()) put("\n\t\tcomment \"{}\"", o.comment);
    std::visit([&](const auto& b) { object_body(b, table_family); }, o.body);
    out += "\t}\n";
  }
  void object_body(const std::monostate&, family) { out += '\n'; }
  void object_body(const counter_stmt& c, family) {
    if (opt.stateless)
      out += '\n';
    else
      put("\n\t\tpackets {} bytes {}\n", c.packets, c.bytes);
  }
  void object_body(const quota_stmt& q, family) {
    out += "\n\t\t";
    quota(q, opt.stateless);
    out += '\n';
  }
  void object_body(const limit_stmt& l, family) {
    out += "\n\t\t";
    limit(l, true);
    out += '\n';
  }
  void object_body(const secmark_object& s, family) { put("\n\t\t\"{}\"\n", s.context); }
  void object_body(const ct_helper_object& h, family f) {
    put("\n\t\ttype \"{}\" protocol {}\n", h.type, protocol_word(h.protocol));
    put("\t\tl3proto {}\n", name(h.l3proto.value_or(f)));
  }
  void object_body(const ct_timeout_object& t, family f) {
    put("\n\t\tprotocol {}\n", protocol_word(t.protocol));
    put("\t\tl3proto {}\n", name(t.l3proto.value_or(f)));
    // nft lists a timeout without a policy as `policy = {  }`, which neither nft nor nflens reads back: left out
    if (t.policy.empty()) return;
    out += "\t\tpolicy = { ";
    for (std::size_t i = 0; i < t.policy.size(); ++i) {
      if (i != 0) out += ", ";
      put("{} : ", t.policy[i].state);
      // nft 1.0.6 lists and reads the timeouts as seconds (`established : 100`), 1.1 as times (`1m40s`)
      if (opt.nft_1_0_6)
        put("{}", t.policy[i].value_ms / 1000);
      else
        types::append_time(out, t.policy[i].value_ms);
    }
    out += " }\n";
  }
  void object_body(const ct_expectation_object& e, family f) {
    put("\n\t\tprotocol {}\n", protocol_word(e.protocol));
    put("\t\tdport {}\n", e.dport);
    out += "\t\ttimeout ";
    types::append_time(out, e.timeout_ms);
    put("\n\t\tsize {}\n", e.size);
    put("\t\tl3proto {}\n", name(e.l3proto.value_or(f)));
  }
  void object_body(const synproxy_stmt& s, family) {
    if (s.present & 1) put("\n\t\tmss {}", s.mss);
    if (s.present & 2) put("\n\t\twscale {}", s.wscale);
    if (s.flags != 0) {
      const char* ts = (s.flags & static_cast<std::uint8_t>(synproxy_flag::timestamp)) ? "timestamp" : "";
      const char* sack = (s.flags & static_cast<std::uint8_t>(synproxy_flag::sack_perm)) ? "sack-perm" : "";
      put("\n\t\t{} {}", ts, sack);
    }
    out += '\n';
  }
  void object_body(const unknown_object& u, family) { put("{}\n", u.text); }
  // An unmodelled object keeps its body as written, braces included.
  void unknown_object_block(const nft::object& o) {
    put("\t{} ", name(o.type));
    spelling::append_name(out, o.name);
    put(" {}\n", std::get<unknown_object>(o.body).text);
  }

  const ruleset_table* table_ = nullptr;
  std::unordered_map<std::string_view, const ruleset_set*> set_names_;

  void table(const ruleset_table& t) {
    fam = t.fam;
    table_ = &t;
    set_names_.clear();
    put("table {} ", name(t.fam));
    spelling::append_name(out, t.name);
    out += " {";
    const bool owner = (t.flags & static_cast<std::uint8_t>(table_flag::owner)) != 0;
    if ((opt.handles && t.handle != 0) || owner) out += " #";
    if (opt.handles && t.handle != 0) put(" handle {}", t.handle);
    if (owner) out += " progname nft";
    out += '\n';
    const char* delim = "";
    if (t.flags != 0) {
      out += "\tflags ";
      bool comma = false;
      for (const auto& [f, w] : {std::pair{table_flag::dormant, "dormant"}, std::pair{table_flag::owner, "owner"},
                                 std::pair{table_flag::persist, "persist"}}) {
        if ((t.flags & static_cast<std::uint8_t>(f)) == 0) continue;
        if (comma) out += ',';
        out += w;
        comma = true;
      }
      out += '\n';
      delim = "\n";
    }
    if (!t.comment.empty()) put("\tcomment \"{}\"\n", t.comment);
    for (const auto& o : t.objects) {
      out += delim;
      object(o, t.fam);
      delim = "\n";
    }
    for (const auto& s : t.sets) {
      out += delim;
      set_block(s);
      delim = "\n";
    }
    for (const auto& f : t.flowtables) {
      out += delim;
      flowtable(f);
      delim = "\n";
    }
    for (const auto& c : t.chains) {
      out += delim;
      chain(c);
      delim = "\n";
    }
    out += "}\n";
  }
};

}  // namespace

std::string print(const ruleset& r, const print_options& options) {
  std::string out;
  printer p{out, options};
  for (const auto& t : r.tables) p.table(t);
  return out;
}

std::string print(const rule& r, family f, const print_options& options) {
  std::string out;
  printer p{out, options, f};
  p.rule_line(r);
  return out;
}

std::string print(const rule& r, const ruleset_table& t, const print_options& options) {
  std::string out;
  printer p{out, options, t.fam};
  p.table_ = &t;
  p.rule_line(r);
  return out;
}

std::string print(const stmt& s, family f, const print_options& options) {
  std::string out;
  printer p{out, options, f};
  p.stmt(s);
  return out;
}

std::string print(const expr& e, family f) {
  std::string out;
  const print_options options;
  printer p{out, options, f};
  p.expr(e, types::type_of(e, f));
  return out;
}

}  // namespace nflens::nft
