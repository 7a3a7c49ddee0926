// SPDX-License-Identifier: MIT
// Structural equality of nft ASTs: spans and sources never count; handles, element order and counter
// values as equality_options say. Element lists are compared as multisets through a structural hash,
// so comparing two 30,000-element maps stays linear.

#include <nflens/nft.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <type_traits>

namespace nflens::nft {

namespace {

// ---------------------------------------------------------------------------------------------------
// Hashing (consistent with equality under the same options)

void mix(std::size_t& h, std::size_t v) noexcept { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }
std::size_t hash_sv(std::string_view s) noexcept { return std::hash<std::string_view>{}(s); }

std::size_t hash_of(const expr* e, const equality_options& o);
std::size_t hash_element(const element& e, const equality_options& o);

std::size_t hash_of(const expr* e, const equality_options& o) {
  if (e == nullptr) return 0;
  if (o.singleton_sets_as_values) {
    // Consistent with equality: a one-element anonymous set hashes as its element.
    if (const auto* s = e->get<set_expr>();
        s != nullptr && s->elements.size() == 1 && s->elements[0].data == nullptr && s->elements[0].options == nullptr)
      return hash_of(s->elements[0].key, o);
  }
  std::size_t h = e->value.index();
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, integer_expr>)
          mix(h, v.value);
        else if constexpr (std::is_same_v<T, address_expr>)
          mix(h, std::hash<ip_address>{}(v.address()));
        else if constexpr (std::is_same_v<T, symbol_expr>)
          mix(h, hash_sv(v.name));
        else if constexpr (std::is_same_v<T, string_expr>)
          mix(h, hash_sv(v.text));
        else if constexpr (std::is_same_v<T, time_expr>)
          mix(h, v.milliseconds);
        else if constexpr (std::is_same_v<T, prefix_expr>) {
          mix(h, hash_of(v.value, o));
          mix(h, v.length);
        } else if constexpr (std::is_same_v<T, range_expr>) {
          mix(h, hash_of(v.low(), o));
          mix(h, hash_of(v.high(), o));
        } else if constexpr (std::is_same_v<T, binop_expr>) {
          mix(h, static_cast<std::size_t>(v.op));
          mix(h, hash_of(v.left(), o));
          mix(h, hash_of(v.right(), o));
        } else if constexpr (std::is_same_v<T, concat_expr> || std::is_same_v<T, list_expr>) {
          for (const auto& i : v.items) mix(h, hash_of(&i, o));
        } else if constexpr (std::is_same_v<T, set_expr>) {
          std::size_t acc = 0;  // order-independent
          for (const auto& el : v.elements) acc += hash_element(el, o);
          mix(h, acc);
        } else if constexpr (std::is_same_v<T, set_ref_expr>)
          mix(h, hash_sv(v.name));
        else if constexpr (std::is_same_v<T, verdict_expr>) {
          mix(h, static_cast<std::size_t>(v.kind));
          mix(h, hash_sv(v.chain));
        } else if constexpr (std::is_same_v<T, payload_expr>) {
          mix(h, static_cast<std::size_t>(v.protocol) << 8 | static_cast<std::size_t>(v.field));
          mix(h, v.option);
        } else if constexpr (std::is_same_v<T, meta_expr>)
          mix(h, static_cast<std::size_t>(v.key));
        else if constexpr (std::is_same_v<T, ct_expr>)
          mix(h, static_cast<std::size_t>(v.key));
        else if constexpr (std::is_same_v<T, map_expr>) {
          mix(h, hash_of(v.key(), o));
          mix(h, hash_of(v.mapping(), o));
        }
      },
      e->value);
  return h;
}

std::size_t hash_element(const element& e, const equality_options& o) {
  std::size_t h = hash_of(e.key, o);
  mix(h, hash_of(e.data, o));
  if (e.options != nullptr) mix(h, hash_sv(e.options->comment));
  return h;
}

// ---------------------------------------------------------------------------------------------------
// Equality

struct cmp {
  const equality_options& o;

  bool ex(const expr* a, const expr* b) const {
    if (a == nullptr || b == nullptr) return a == b;
    return ex(*a, *b);
  }
  /// The element of a one-element anonymous set without options, when `singleton_sets_as_values` is on.
  const expr* singleton(const expr& e) const {
    if (!o.singleton_sets_as_values) return nullptr;
    const auto* s = e.get<set_expr>();
    if (s == nullptr || s->elements.size() != 1 || s->elements[0].data != nullptr || s->elements[0].options != nullptr)
      return nullptr;
    return s->elements[0].key;
  }
  bool stmt_list(std::span<const stmt> a, std::span<const stmt> b) const {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(), [&](const stmt& x, const stmt& y) { return st(x, y); });
  }

  bool options(const element_options* a, const element_options* b) const {
    static const element_options none{};
    const element_options& x = a ? *a : none;
    const element_options& y = b ? *b : none;
    return x.has_timeout == y.has_timeout && x.timeout_ms == y.timeout_ms && x.has_expires == y.has_expires &&
           (x.expires_ms == y.expires_ms || o.ignore_counter_values) && x.comment == y.comment &&
           stmt_list(x.stmts, y.stmts);
  }
  bool element_eq(const element& a, const element& b) const {
    return ex(a.key, b.key) && ex(a.data, b.data) && options(a.options, b.options);
  }
  /// Element lists: spans of a script's elements or a ruleset's `ruleset_element` vectors.
  template <class EA, class EB>
  bool elements(const EA& a, const EB& b) const {
    if (a.size() != b.size()) return false;
    if (!o.ignore_element_order)
      return std::equal(a.begin(), a.end(), b.begin(),
                        [&](const element& x, const element& y) { return element_eq(x, y); });
    std::vector<std::pair<std::size_t, std::size_t>> ha, hb;
    ha.reserve(a.size());
    hb.reserve(b.size());
    for (std::size_t i = 0; i < a.size(); ++i) ha.emplace_back(hash_element(a[i], o), i);
    for (std::size_t i = 0; i < b.size(); ++i) hb.emplace_back(hash_element(b[i], o), i);
    std::sort(ha.begin(), ha.end());
    std::sort(hb.begin(), hb.end());
    // Equal multisets have equal sorted hash lists; then match within each group of equal hashes.
    for (std::size_t k = 0; k < ha.size(); ++k)
      if (ha[k].first != hb[k].first) return false;
    std::size_t i = 0;
    while (i < ha.size()) {
      std::size_t j = i;
      while (j < ha.size() && ha[j].first == ha[i].first) ++j;
      std::vector<bool> used(j - i, false);
      for (std::size_t x = i; x < j; ++x) {
        bool found = false;
        for (std::size_t y = i; y < j && !found; ++y)
          if (!used[y - i] && element_eq(a[ha[x].second], b[hb[y].second])) used[y - i] = found = true;
        if (!found) return false;
      }
      i = j;
    }
    return true;
  }

  bool ex(const expr& a, const expr& b) const {
    if (a.value.index() != b.value.index()) {
      if (const expr* x = singleton(a)) return ex(*x, b);
      if (const expr* y = singleton(b)) return ex(a, *y);
      return false;
    }
    return std::visit(
        [&](const auto& x) -> bool {
          using T = std::decay_t<decltype(x)>;
          const T& y = std::get<T>(b.value);
          if constexpr (std::is_same_v<T, integer_expr>)
            return x.value == y.value;
          else if constexpr (std::is_same_v<T, address_expr>)
            return x.address() == y.address();
          else if constexpr (std::is_same_v<T, ether_address_expr>)
            return x.bytes == y.bytes;
          else if constexpr (std::is_same_v<T, time_expr>)
            return x.milliseconds == y.milliseconds;
          else if constexpr (std::is_same_v<T, symbol_expr>)
            return x.name == y.name;
          else if constexpr (std::is_same_v<T, string_expr>)
            return x.text == y.text;
          else if constexpr (std::is_same_v<T, boolean_expr>)
            return x.value == y.value;
          else if constexpr (std::is_same_v<T, wildcard_expr>)
            return true;
          else if constexpr (std::is_same_v<T, prefix_expr>)
            return x.length == y.length && ex(x.value, y.value);
          else if constexpr (std::is_same_v<T, range_expr>)
            return ex(x.low(), y.low()) && ex(x.high(), y.high());
          else if constexpr (std::is_same_v<T, binop_expr>)
            return x.op == y.op && ex(x.left(), y.left()) && ex(x.right(), y.right());
          else if constexpr (std::is_same_v<T, concat_expr> || std::is_same_v<T, list_expr>)
            return std::equal(x.items.begin(), x.items.end(), y.items.begin(), y.items.end(),
                              [&](const expr& i, const expr& j) { return ex(i, j); });
          else if constexpr (std::is_same_v<T, set_expr>)
            return elements(x.elements, y.elements);
          else if constexpr (std::is_same_v<T, set_ref_expr>)
            return x.name == y.name;
          else if constexpr (std::is_same_v<T, map_expr>)
            return ex(x.key(), y.key()) && ex(x.mapping(), y.mapping());
          else if constexpr (std::is_same_v<T, verdict_expr>)
            return x.kind == y.kind && x.chain == y.chain;
          else if constexpr (std::is_same_v<T, payload_expr>)
            return x.protocol == y.protocol && x.field == y.field && x.option == y.option && x.index == y.index &&
                   x.inner == y.inner && x.base == y.base && x.offset == y.offset && x.length == y.length;
          else if constexpr (std::is_same_v<T, meta_expr>)
            return x.key == y.key;
          else if constexpr (std::is_same_v<T, ct_expr>)
            return x.key == y.key && x.direction == y.direction && x.protocol == y.protocol;
          else if constexpr (std::is_same_v<T, fib_expr>)
            return x.flags == y.flags && x.result == y.result;
          else if constexpr (std::is_same_v<T, rt_expr>)
            return x.key == y.key && x.protocol == y.protocol;
          else if constexpr (std::is_same_v<T, socket_expr>)
            return x.key == y.key && x.level == y.level;
          else if constexpr (std::is_same_v<T, osf_expr>)
            return x.key == y.key && x.ttl == y.ttl;
          else if constexpr (std::is_same_v<T, ipsec_expr>)
            return x.direction == y.direction && x.key == y.key && x.protocol == y.protocol && x.spnum == y.spnum;
          else if constexpr (std::is_same_v<T, numgen_expr>)
            return x.type == y.type && x.modulus == y.modulus && x.offset == y.offset;
          else if constexpr (std::is_same_v<T, hash_expr>)
            return x.spec->kind == y.spec->kind && x.spec->has_seed == y.spec->has_seed && ex(x.spec->key, y.spec->key) && x.spec->modulus == y.spec->modulus &&
                   x.spec->seed == y.spec->seed && x.spec->offset == y.spec->offset;
          else if constexpr (std::is_same_v<T, tunnel_expr>)
            return x.key == y.key;
          else
            static_assert(!sizeof(T), "every expression kind is compared");
        },
        a.value);
  }

  bool st(const stmt& a, const stmt& b) const {
    if (a.value.index() != b.value.index()) return false;
    return std::visit(
        [&](const auto& x) -> bool {
          using T = std::decay_t<decltype(x)>;
          const T& y = std::get<T>(b.value);
          if constexpr (std::is_same_v<T, match_stmt>)
            return x.op == y.op && ex(x.left, y.left) && ex(x.right, y.right);
          else if constexpr (std::is_same_v<T, verdict_stmt>)
            return x.kind == y.kind && x.chain == y.chain;
          else if constexpr (std::is_same_v<T, anonymous_chain_stmt>)
            return x.kind == y.kind && (x.body == nullptr) == (y.body == nullptr) &&
                   (x.body == nullptr || rule_list(x.body->rules, y.body->rules));
          else if constexpr (std::is_same_v<T, verdict_map_stmt>)
            return ex(x.key, y.key) && ex(x.mapping, y.mapping);
          else if constexpr (std::is_same_v<T, mangle_stmt>)
            return ex(x.target, y.target) && ex(x.value, y.value);
          else if constexpr (std::is_same_v<T, counter_stmt>)
            return o.ignore_counter_values || (x.packets == y.packets && x.bytes == y.bytes);
          else if constexpr (std::is_same_v<T, limit_stmt>)
            return x.rate == y.rate && x.unit == y.unit && x.bytes == y.bytes && x.over == y.over &&
                   x.burst == y.burst;  // written or nft's default: the same burst
          else if constexpr (std::is_same_v<T, quota_stmt>)
            return x.bytes == y.bytes && x.over == y.over && (o.ignore_counter_values || x.used == y.used);
          else if constexpr (std::is_same_v<T, connlimit_stmt>)
            return x.count == y.count && x.over == y.over;
          else if constexpr (std::is_same_v<T, last_stmt>)
            return o.ignore_counter_values || (x.has_used == y.has_used && x.used_ms == y.used_ms);
          else if constexpr (std::is_same_v<T, log_stmt>)
            return ex(x.prefix, y.prefix) && x.snaplen == y.snaplen && x.group == y.group &&
                   x.queue_threshold == y.queue_threshold && x.level == y.level && x.flags == y.flags &&
                   x.present == y.present;
          else if constexpr (std::is_same_v<T, reject_stmt>)
            return x.type == y.type && ex(x.code, y.code);
          else if constexpr (std::is_same_v<T, nat_stmt>)
            return x.kind == y.kind && x.protocol == y.protocol && x.mode == y.mode && x.flags == y.flags &&
                   ex(x.address, y.address) && ex(x.port, y.port);
          else if constexpr (std::is_same_v<T, tproxy_stmt>)
            return x.protocol == y.protocol && ex(x.address, y.address) && ex(x.port, y.port);
          else if constexpr (std::is_same_v<T, queue_stmt>)
            return x.flags == y.flags && ex(x.number, y.number);
          else if constexpr (std::is_same_v<T, dup_stmt>)
            return ex(x.address, y.address) && ex(x.device, y.device);
          else if constexpr (std::is_same_v<T, fwd_stmt>)
            return x.protocol == y.protocol && ex(x.address, y.address) && ex(x.device, y.device);
          else if constexpr (std::is_same_v<T, notrack_stmt>)
            return true;
          else if constexpr (std::is_same_v<T, set_stmt>)
            return x.op == y.op && ex(x.set_ref, y.set_ref) && element_eq(*x.elem, *y.elem);
          else if constexpr (std::is_same_v<T, meter_stmt>)
            return ex(x.name(), y.name()) && x.size() == y.size() && element_eq(*x.elem(), *y.elem());
          else if constexpr (std::is_same_v<T, flow_offload_stmt>)
            return x.flowtable == y.flowtable;
          else if constexpr (std::is_same_v<T, objref_stmt>)
            return x.type == y.type && ex(x.name, y.name);
          else if constexpr (std::is_same_v<T, synproxy_stmt>)
            return x.mss == y.mss && x.wscale == y.wscale && x.flags == y.flags && x.present == y.present;
          else if constexpr (std::is_same_v<T, optstrip_stmt>)
            return ex(x.option, y.option);
          else if constexpr (std::is_same_v<T, xt_stmt>)
            return x.kind == y.kind && x.name == y.name;
          else if constexpr (std::is_same_v<T, unknown_stmt>)
            return x.text == y.text;
          else
            static_assert(!sizeof(T), "every statement kind is compared");
        },
        a.value);
  }

  bool rule_eq(const rule& a, const rule& b) const {
    return a.comment == b.comment && (o.ignore_handles || a.handle == b.handle) && stmt_list(a.stmts, b.stmts);
  }
  bool rule_list(std::span<const rule> a, std::span<const rule> b) const {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [&](const rule& x, const rule& y) { return rule_eq(x, y); });
  }
};

/// Builds `difference` records while walking two trees.
struct walker {
  cmp c;
  std::optional<difference> diff;

  bool differ(std::string what, const source* lf, span l, const source* rf, span r) {
    diff = difference{std::move(what), lf, l, rf, r};
    return false;
  }

  bool base(const base_chain* a, const base_chain* b) const {
    if (a == nullptr || b == nullptr) return a == b;
    return a->type == b->type && a->hook_point == b->hook_point && a->prio == b->prio &&
           std::equal(a->devices.begin(), a->devices.end(), b->devices.begin(), b->devices.end());
  }
  template <class A, class B>
  bool chain_info_eq(const A& a, const B& b) const {
    return a.name == b.name && (c.o.ignore_handles || a.handle == b.handle) && base(a.base, b.base) &&
           a.policy == b.policy && a.comment == b.comment && a.offload == b.offload;
  }
  bool type_eq(const set_type& a, const set_type& b) const {
    return std::equal(a.names.begin(), a.names.end(), b.names.begin(), b.names.end()) &&
           c.ex(a.typeof_expr, b.typeof_expr) && a.interval == b.interval && a.object == b.object;
  }
  template <class A, class B>
  bool set_info_eq(const A& a, const B& b) const {
    return a.name == b.name && a.is_map == b.is_map && (c.o.ignore_handles || a.handle == b.handle) &&
           type_eq(a.key, b.key) && type_eq(a.data, b.data) && a.flags == b.flags && a.timeout_ms == b.timeout_ms &&
           a.has_timeout == b.has_timeout && a.gc_interval_ms == b.gc_interval_ms &&
           a.has_gc_interval == b.has_gc_interval && a.size == b.size && a.policy == b.policy &&
           a.auto_merge == b.auto_merge && a.comment == b.comment && c.stmt_list(a.stmts, b.stmts);
  }
  bool flowtable_eq(const flowtable& a, const flowtable& b) const {
    return a.name == b.name && (c.o.ignore_handles || a.handle == b.handle) && a.has_hook == b.has_hook &&
           a.hook_point == b.hook_point && a.prio == b.prio &&
           std::equal(a.devices.begin(), a.devices.end(), b.devices.begin(), b.devices.end()) &&
           a.counter == b.counter && a.offload == b.offload;
  }
  bool object_eq(const object& a, const object& b) const {
    if (a.type != b.type || a.name != b.name || a.comment != b.comment || a.body.index() != b.body.index())
      return false;
    if (!c.o.ignore_handles && a.handle != b.handle) return false;
    return std::visit(
        [&](const auto& x) -> bool {
          using T = std::decay_t<decltype(x)>;
          const T& y = std::get<T>(b.body);
          if constexpr (std::is_same_v<T, std::monostate>)
            return true;
          else if constexpr (std::is_same_v<T, counter_stmt> || std::is_same_v<T, quota_stmt> ||
                             std::is_same_v<T, limit_stmt> || std::is_same_v<T, synproxy_stmt>)
            return c.st(stmt{{}, x}, stmt{{}, y});
          else if constexpr (std::is_same_v<T, ct_helper_object>)
            return x.type == y.type && x.protocol == y.protocol && x.l3proto == y.l3proto;
          else if constexpr (std::is_same_v<T, ct_timeout_object>)
            return x.protocol == y.protocol && x.l3proto == y.l3proto &&
                   std::equal(x.policy.begin(), x.policy.end(), y.policy.begin(), y.policy.end(),
                              [](const ct_timeout_state& p, const ct_timeout_state& q) {
                                return p.state == q.state && p.value_ms == q.value_ms;
                              });
          else if constexpr (std::is_same_v<T, ct_expectation_object>)
            return x.protocol == y.protocol && x.l3proto == y.l3proto && x.dport == y.dport &&
                   x.timeout_ms == y.timeout_ms && x.size == y.size;
          else if constexpr (std::is_same_v<T, secmark_object>)
            return x.context == y.context;
          else if constexpr (std::is_same_v<T, unknown_object>)
            return x.text == y.text;
          else
            static_assert(!sizeof(T), "every object kind is compared");
        },
        a.body);
  }

  /// The source a node's spans refer to: its own `file` (a ruleset's chains, rules and elements), else
  /// that of what holds it (a script's).
  template <class N>
  static const source* file_of(const N& n, const source* outer) noexcept {
    if constexpr (requires { n.file; })
      return n.file;
    else
      return outer;
  }
  template <class RA, class RB>
  bool rules(const std::string& where, const RA& a, const RB& b, const source* fa, const source* fb) {
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i) {
      if (!c.rule_eq(a[i], b[i])) {
        std::size_t k = 0;
        const auto& sa = a[i].stmts;
        const auto& sb = b[i].stmts;
        while (k < sa.size() && k < sb.size() && c.st(sa[k], sb[k])) ++k;
        if (k < sa.size() && k < sb.size())
          return differ(fmt::format("{}: rule {}: statement {} differs", where, i + 1, k + 1), file_of(a[i], fa),
                        sa[k].where, file_of(b[i], fb), sb[k].where);
        return differ(fmt::format("{}: rule {} differs", where, i + 1), file_of(a[i], fa), a[i].where, file_of(b[i], fb),
                      b[i].where);
      }
    }
    if (a.size() != b.size())
      return differ(fmt::format("{}: {} rules against {}", where, a.size(), b.size()), nullptr, {}, nullptr, {});
    return true;
  }
  /// `fa`, `fb`: the sources of what holds the chains (the table or command).
  template <class CA, class CB>
  bool chain(const std::string& where, const CA& a, const CB& b, const source* fa, const source* fb) {
    const std::string here = fmt::format("{}: chain {}", where, a.name);
    fa = file_of(a, fa);
    fb = file_of(b, fb);
    if (!chain_info_eq(a, b)) return differ(here + " differs in its properties", fa, a.where, fb, b.where);
    return rules(here, a.rules, b.rules, fa, fb);
  }
  template <class SA, class SB>
  bool set(const std::string& where, const SA& a, const SB& b) {
    const std::string here = fmt::format("{}: {} {}", where, a.is_map ? "map" : "set", a.name);
    if (!set_info_eq(a, b)) return differ(here + " differs in its properties", a.file, a.where, b.file, b.where);
    if (!c.elements(a.elements, b.elements))
      return differ(here + ": elements differ", a.file, a.where, b.file, b.where);
    return true;
  }
  template <class VA, class VB, class F>
  bool each(const std::string& what, const VA& a, const VB& b, F&& f) {
    const std::size_t n = std::min(a.size(), b.size());
    for (std::size_t i = 0; i < n; ++i)
      if (!f(a[i], b[i])) return false;
    if (a.size() != b.size())
      return differ(fmt::format("{}: {} against {}", what, a.size(), b.size()), nullptr, {}, nullptr, {});
    return true;
  }
  template <class TA, class TB>
  bool table(const TA& a, const TB& b) {
    const std::string here = fmt::format("table {} {}", name(a.fam), a.name);
    if (a.fam != b.fam || a.name != b.name || a.flags != b.flags || a.comment != b.comment ||
        (!c.o.ignore_handles && a.handle != b.handle))
      return differ(here + " differs in its properties", a.file, a.where, b.file, b.where);
    return each(here + ": sets and maps", a.sets, b.sets,
                [&](const auto& x, const auto& y) { return set(here, x, y); }) &&
           each(here + ": flowtables", a.flowtables, b.flowtables,
                [&](const auto& x, const auto& y) {
                  return flowtable_eq(x, y) || differ(here + ": flowtable " + std::string(x.name) + " differs", x.file,
                                                      x.where, y.file, y.where);
                }) &&
           each(here + ": objects", a.objects, b.objects,
                [&](const auto& x, const auto& y) {
                  return object_eq(x, y) || differ(here + ": object " + std::string(x.name) + " differs", x.file,
                                                   x.where, y.file, y.where);
                }) &&
           each(here + ": chains", a.chains, b.chains,
                [&](const auto& x, const auto& y) { return chain(here, x, y, a.file, b.file); });
  }

  bool command(std::size_t index, const nft::command& a, const nft::command& b) {
    const std::string here = fmt::format("command {} ({} {})", index + 1, name(a.verb), name(a.what));
    if (a.verb != b.verb || a.what != b.what || a.obj != b.obj || a.fam != b.fam || a.table_name != b.table_name ||
        a.name != b.name || a.new_name != b.new_name || a.position_kind != b.position_kind ||
        (!c.o.ignore_handles && (a.handle != b.handle || a.position != b.position)) || a.body.index() != b.body.index())
      return differ(here + " differs", a.file, a.where, b.file, b.where);
    return std::visit(
        [&](const auto& x) -> bool {
          using T = std::decay_t<decltype(x)>;
          const T& y = std::get<T>(b.body);
          if constexpr (std::is_same_v<T, std::monostate>)
            return true;
          else if constexpr (std::is_same_v<T, const nft::table*>)
            return table(*x, *y);
          else if constexpr (std::is_same_v<T, const nft::chain*>)
            return chain(here, *x, *y, a.file, b.file);
          else if constexpr (std::is_same_v<T, const nft::rule*>)
            return c.rule_eq(*x, *y) || differ(here + ": rule differs", a.file, x->where, b.file, y->where);
          else if constexpr (std::is_same_v<T, const nft::set*>)
            return set(here, *x, *y);
          else if constexpr (std::is_same_v<T, std::span<const element>>)
            return c.elements(x, y) || differ(here + ": elements differ", a.file, a.where, b.file, b.where);
          else if constexpr (std::is_same_v<T, const nft::flowtable*>)
            return flowtable_eq(*x, *y) || differ(here + ": flowtable differs", a.file, a.where, b.file, b.where);
          else if constexpr (std::is_same_v<T, const nft::object*>)
            return object_eq(*x, *y) || differ(here + ": object differs", a.file, a.where, b.file, b.where);
          else
            static_assert(!sizeof(T), "every command body is compared");
        },
        a.body);
  }
};

}  // namespace

std::optional<difference> compare(const script& a, const script& b, const equality_options& o) {
  walker w{cmp{o}, std::nullopt};
  const std::size_t n = std::min(a.commands.size(), b.commands.size());
  for (std::size_t i = 0; i < n; ++i)
    if (!w.command(i, a.commands[i], b.commands[i])) return w.diff;
  if (a.commands.size() != b.commands.size())
    return difference{
        fmt::format("{} commands against {}", a.commands.size(), b.commands.size()), nullptr, {}, nullptr, {}};
  return std::nullopt;
}

std::optional<difference> compare(const ruleset& a, const ruleset& b, const equality_options& o) {
  walker w{cmp{o}, std::nullopt};
  if (!w.each("tables", a.tables, b.tables, [&](const auto& x, const auto& y) { return w.table(x, y); })) return w.diff;
  return std::nullopt;
}

bool equal(const expr& a, const expr& b, const equality_options& o) { return cmp{o}.ex(a, b); }
bool equal(const stmt& a, const stmt& b, const equality_options& o) { return cmp{o}.st(a, b); }
bool equal(const rule& a, const rule& b, const equality_options& o) { return cmp{o}.rule_eq(a, b); }
bool equal(const element& a, const element& b, const equality_options& o) { return cmp{o}.element_eq(a, b); }

}  // namespace nflens::nft
