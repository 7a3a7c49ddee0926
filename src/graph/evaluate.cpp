// SPDX-License-Identifier: MIT
// Symbolic evaluation of a dispatch program (see evaluate.hpp for the model).
//
// Flows are processed chain by chain, rule by rule, as a set: every flow active at a rule is matched
// against it; the matching part takes the rule's action (a jump runs the callee and brings back what
// returns), the rest goes on to the next rule. Destinations that are only partly matched fork: the
// matching part is a narrower flow, the rest continues unchanged (an over-approximation that later rules
// of kube-proxy's disjoint dispatch never notice; a duplicate frontend is merged by the assembler).

#include "evaluate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <optional>
#include <unordered_map>
#include <unordered_set>

namespace nflens::dispatch {
namespace {

bool prefix_contains(const ip_prefix& outer, const ip_prefix& inner) noexcept {
  return outer.address.family == inner.address.family && outer.length <= inner.length && contains(outer, inner.address);
}

/// The smallest prefix covering an address range (for range keys, which kube-proxy never writes).
ip_prefix covering(const ip_address& lo, const ip_address& hi) {
  const std::uint8_t max = max_prefix_length(lo.family);
  std::uint8_t len = 0;
  while (len < max) {
    const auto byte = len / 8;
    const auto bit = 7 - len % 8;
    if (((lo.bytes[byte] >> bit) & 1) != ((hi.bytes[byte] >> bit) & 1)) break;
    ++len;
  }
  return ip_prefix{lo, len};
}

ip_prefix as_prefix(const value& v) {
  return v.k == value::kind::range ? covering(v.prefix.address, v.last) : v.prefix;
}

bool dest_equal(const dest& a, const dest& b) noexcept {
  if (a.has_addr != b.has_addr || a.local != b.local || a.has_proto != b.has_proto || a.has_port != b.has_port ||
      a.n_excl != b.n_excl)
    return false;
  if (a.has_addr && !(a.addr == b.addr)) return false;
  if (a.has_proto && a.proto != b.proto) return false;
  if (a.has_port && !(a.port == b.port)) return false;
  for (std::uint8_t i = 0; i < a.n_excl; ++i)
    if (!(a.excl[i] == b.excl[i])) return false;
  return true;
}

enum class refine { implied, narrowed, contradiction };

/// Destination address ∈ p.
refine refine_addr(dest& d, const ip_prefix& p) {
  if (d.has_addr) {
    if (prefix_contains(p, d.addr)) return refine::implied;
    if (prefix_contains(d.addr, p)) {
      d.addr = p;
      return refine::narrowed;
    }
    return refine::contradiction;
  }
  for (std::uint8_t i = 0; i < d.n_excl; ++i)
    if (prefix_contains(d.excl[i], p)) return refine::contradiction;
  if (p.length == 0) return refine::implied;
  d.has_addr = true;
  d.addr = p;
  return refine::narrowed;
}

refine refine_proto(dest& d, l4_protocol p) {
  if (p == l4_protocol::any) return refine::implied;
  if (d.has_proto) return d.proto == p ? refine::implied : refine::contradiction;
  d.has_proto = true;
  d.proto = p;
  return refine::narrowed;
}

refine refine_port(dest& d, const port_range& r) {
  if (r.first == 0 && r.last == 65535) return refine::implied;
  if (d.has_port) {
    if (r.first <= d.port.first && d.port.last <= r.last) return refine::implied;
    if (r.last < d.port.first || d.port.last < r.first) return refine::contradiction;
    d.port = {std::max(r.first, d.port.first), std::min(r.last, d.port.last)};
    return refine::narrowed;
  }
  d.has_port = true;
  d.port = r;
  return refine::narrowed;
}

/// The parts of `within` outside every port range of `vals[0..n)`, in order; nothing when there would be
/// more than 8 (a negated list that long is not split into flows).
std::optional<std::vector<port_range>> complement(port_range within, const value* vals, index n) {
  std::vector<port_range> taken;
  taken.reserve(n);
  for (index i = 0; i < n; ++i) taken.push_back(vals[i].ports);
  std::sort(taken.begin(), taken.end());
  std::vector<port_range> out;
  std::uint32_t from = within.first;  // the first port not yet placed
  for (const auto& t : taken) {
    if (t.last < from) continue;
    if (t.first > within.last) break;
    if (t.first > from) out.push_back({static_cast<std::uint16_t>(from), static_cast<std::uint16_t>(t.first - 1)});
    from = std::uint32_t{t.last} + 1;
    if (from > within.last) break;
  }
  if (from <= within.last) out.push_back({static_cast<std::uint16_t>(from), within.last});
  if (out.size() > 8) return std::nullopt;
  return out;
}

/// Destination field `k` has value `v` (a map key part or a tuple element part); other fields do not
/// decide the destination.
refine refine_field(dest& d, field k, const value& v) {
  switch (k) {
    case field::daddr:
      return refine_addr(d, as_prefix(v));
    case field::l4proto:
      return refine_proto(d, v.proto);
    case field::dport:
      return refine_port(d, v.ports);
    default:
      return refine::implied;
  }
}

terminal make_terminal(terminal::kind k) {
  terminal t;
  t.k = k;
  return t;
}

/// Hash of the parts of an exact destination that `dest_equal` compares.
std::size_t dest_hash(const dest& d) noexcept {
  std::size_t h = (d.has_addr ? 1U : 0U) | (d.local ? 2U : 0U) | (d.has_proto ? 4U : 0U) | (d.has_port ? 8U : 0U);
  const auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  if (d.has_addr) {
    for (const auto b : d.addr.address.bytes) mix(b);
    mix(d.addr.length);
  }
  mix(static_cast<std::size_t>(d.proto));
  mix(d.port.first);
  mix(d.port.last);
  return h;
}

/// Whether every connection to `inner` is a connection to `outer` (`inner` ⊆ `outer`). Conservative:
/// false when the model cannot tell (a local destination against an address, an overlapping exclusion).
bool dest_covers(const dest& outer, const dest& inner) noexcept {
  if (outer.local && !inner.local) return false;
  if (outer.has_addr && !(inner.has_addr && prefix_contains(outer.addr, inner.addr))) return false;
  if (outer.has_proto && !(inner.has_proto && inner.proto == outer.proto)) return false;
  if (outer.has_port && !(inner.has_port && outer.port.first <= inner.port.first && inner.port.last <= outer.port.last))
    return false;
  for (std::uint8_t i = 0; i < outer.n_excl; ++i) {
    const auto& e = outer.excl[i];
    const bool outside = inner.has_addr && !prefix_contains(e, inner.addr) && !prefix_contains(inner.addr, e);
    const bool excluded_too = std::any_of(inner.excl.begin(), inner.excl.begin() + inner.n_excl,
                                          [&](const ip_prefix& x) { return prefix_contains(x, e); });
    if (!outside && !excluded_too) return false;
  }
  return true;
}

/// Destinations whose connections a chain has already ended (accepted, dropped, translated, returned)
/// before the rest of the traffic goes on: a later rule that singles out one of them again, or a part
/// of one (a port of an address an earlier rule dropped), is never reached by it. Shared by the copies
/// of one generic flow; copied before a change when shared.
struct ended_set {
  std::unordered_multimap<std::size_t, dest> by_hash;
  /// Destinations without an address that ended but for the one prefix they exclude (`! -d P -p tcp
  /// --dport 80 -j DNAT ...`): what is left of them is their traffic to P. Few; searched in order.
  std::vector<dest> all_but_one;
  /// Inexact destinations that ended as a whole (`ip daddr 10.96.0.10 drop`, `-d P -j ACCEPT`): every
  /// destination they cover ended with them. Few (rules before the dispatch); searched in order.
  std::vector<dest> wider;
  [[nodiscard]] bool contains(const dest& d) const {
    const auto covers = [&](const dest& w) { return dest_covers(w, d); };
    // (a destination outside the one excluded prefix ended too: `ip daddr != P drop` ends 10.96.0.1:443)
    if (std::any_of(wider.begin(), wider.end(), covers) || std::any_of(all_but_one.begin(), all_but_one.end(), covers))
      return true;
    if (!d.exact()) return false;
    const auto [lo, hi] = by_hash.equal_range(dest_hash(d));
    return std::any_of(lo, hi, [&](const auto& kv) { return dest_equal(kv.second, d); });
  }
  [[nodiscard]] bool empty() const noexcept { return by_hash.empty() && all_but_one.empty() && wider.empty(); }
  /// The prefix that is all that is left of `d` (a destination without address), if an earlier rule
  /// ended the rest of it.
  [[nodiscard]] const ip_prefix* left_of(const dest& d) const {
    if (d.has_addr || d.local || d.n_excl != 0) return nullptr;
    for (const auto& e : all_but_one) {
      dest plain = e;
      plain.n_excl = 0;
      if (dest_equal(plain, d)) return &e.excl[0];
    }
    return nullptr;
  }
};

struct flow {
  dest d;
  std::shared_ptr<ended_set> ended;  // only on flows whose destination is not exact
  source_class src;
  double mass = 1;
  index fe = none;
  std::int32_t br = -1;  // branch of records[fe], -1 for the generic client
  std::uint32_t evaluated = 0, lookups = 0;
  std::uint32_t mark = 0;
  std::uint32_t depth = 0;    // chains entered since the frontend was recorded
  std::vector<index> prefix;  // origins met before the frontend was recorded
  bool seed = false;          // a translated destination run again before NAT, for verdicts only
  bool probe = false;         // an endpoint run through the chains after NAT: only how it ends is kept
};

/// Who entered the chain being run: the chain and the rule or element that jumped, and how it chose.
struct frame {
  index chain = none;
  index origin = none;
  selection mech = selection::single;
  std::uint32_t threshold = 0, modulus = 0, slots = 0;
};

struct match_result {
  std::vector<flow> matched;
  bool has_rest = false;
  flow rest;
  bool spawn = false;  // the rule applies to a source class only; the generic client does not match
  source_class cls;
  double probability = 1;  // random / nth share taken by the rule
  std::uint32_t threshold = 0;
  bool random = false;
  bool nth = false;
  bool full = false;  // every destination condition holds for the whole flow
  // The matched flows' destinations are exactly what the rule matches of the flow's (no negation or
  // large set left unencoded), so what ends there can be taken from the rest of the traffic.
  bool precise = true;
  // A condition the graph does not decide (an interface, a source port, an opaque match) was assumed.
  bool assumed = false;
  std::string assumed_what;  // such a condition (the last met), for reports
};

class evaluator {
 public:
  evaluator(const program& p, std::vector<diagnostic>& out, std::vector<dangling_reference>& dangling,
            const graph_options& opt)
      : p_(p),
        out_(out),
        dangling_(dangling),
        lim_(opt.lim),
        budget_(opt.budget.base + opt.budget.per_item * (std::uint64_t{p.rules.size()} + p.elements.size())),
        cheap_budget_(opt.budget.cheap_base +
                      opt.budget.cheap_per_item * (std::uint64_t{p.rules.size()} + p.elements.size())) {
    reported_.assign(p.rules.size() + p.elements.size() + p.maps.size() + 1, false);
    local_reported_.assign(p.rules.size(), 0);
    on_stack_.assign(p.chains.size(), 0);
    walked_.assign(p.chains.size(), 0);
    walk_records_.assign(p.chains.size(), {0, 0});
    visited_.assign(p.chains.size(), 0);
    ev_.mark_chain.assign(p.chains.size(), false);
    // A filter chain at NAT's own priority (nft `priority dstnat` on prerouting or output) runs before or
    // after NAT by the order the kernel registered the two, which a dump does not show. At conntrack's own
    // priority the same holds for conntrack: the graph takes it as run first.
    for (const auto& ch : p.chains)
      if (ch.table == table_kind::filter && (ch.at == hook::prerouting || ch.at == hook::output) && ch.count > 0) {
        if (ch.priority == nat_priority)
          warn(ch.origin, error_code::unsupported_dispatch,
               fmt::format("a filter chain at the NAT priority ({}): the kernel runs it before or after NAT in the "
                           "order the chains were registered, which the dump does not show; the graph does not "
                           "evaluate it",
                           nat_priority));
        if (ch.priority == conntrack_priority)
          warn(ch.origin, error_code::unsupported_dispatch,
               fmt::format("a filter chain at conntrack's priority ({}): the kernel runs it before or after conntrack "
                           "in the order the two were registered, which the dump does not show; the graph takes "
                           "conntrack as run first (`ct state new` matches)",
                           conntrack_priority));
      }
    // A mark set before NAT (raw/mangle tables, nft chains before dstnat) reaches the NAT chains' mark
    // matches; the stages are evaluated apart, so a mark match in NAT is then not decided here.
    {
      std::vector<index> pre;
      for (const auto& e : p.entries)
        if (e.when == stage::pre_dnat) pre.push_back(e.chain);
      const auto reached = reach(pre);
      // the first such rule in the program's order names it in the warning (rules are stored chain by
      // chain, in the order of the dump)
      for (index c = 0; c < p.chains.size() && premark_ == none; ++c)
        for (index i = p.chains[c].first; i < p.chains[c].first + p.chains[c].count && reached[c]; ++i) {
          const auto& r = p.rules[i];
          if (r.act.kind == action_kind::mark_set ||
              (r.act.kind == action_kind::other && r.act.effect == other_effect::conntrack_mark)) {
            premark_ = r.origin;
            break;
          }
        }
    }
    // An entry chain is a fallback only for input without the jumps into it (kube-proxy's restore input
    // lacks the hook chains' jumps): one that a rule or element jumps to but the hooks did not reach is
    // unreachable (an earlier rule ended its traffic), not an entry.
    jumped_to_.assign(p.chains.size(), 0);
    auto jumps = [&](action_kind k, index target) {
      if ((k == action_kind::jump || k == action_kind::go_to) && target < p.chains.size()) jumped_to_[target] = 1;
    };
    for (const auto& r : p.rules) jumps(r.act.kind, r.act.target);
    for (const auto& e : p.elements) jumps(e.result.kind, e.result.target);
    // A dump with the hooks' jumps into kube-proxy's chains (iptables-save, nft) starts at the hooks only:
    // a fallback entry the hooks do not reach is unhooked there. Only a dump without them (kube-proxy's
    // restore input and its kernel re-listing) starts at the fallback entries.
    {
      std::vector<index> starts;
      for (const auto& e : p.entries) starts.push_back(e.chain);
      const auto reached = reach(starts);
      bool any = false;
      for (const auto& e : p.fallback_entries)
        any = any || (e.chain < p.chains.size() && reached[e.chain]);
      // A dump has the hooks' jumps in every table or in none: kube-proxy's restore input has none, a
      // node's iptables-save has them in each table it saves. So a table without them, in a dump whose other
      // tables have them, is unhooked (its chains never run), not restore input.
      hooked_ = any;
    }
    // Masquerade rules count where a postrouting hook reaches them; without the hooks' jumps, everywhere.
    std::vector<char> masq_reached(p.chains.size(), 1);
    if (hooked_) {
      std::vector<index> post;
      for (index c = 0; c < p.chains.size(); ++c)
        if (p.chains[c].at == hook::postrouting) post.push_back(c);
      masq_reached = reach(post);
    }
    bool masq = false;
    for (index c = 0; c < p.chains.size(); ++c)
      for (index i = p.chains[c].first; i < p.chains[c].first + p.chains[c].count && masq_reached[c]; ++i)
        masq = masq || p.rules[i].act.kind == action_kind::masquerade;
    masq_mark_chain_.assign(p.chains.size(), false);
    if (masq) find_masquerade_guards(masq_reached);
    // mark chains are told where the ruleset masquerades at all: a jump to one only sets the mark (with no
    // masquerade rule hooked, for nothing), however its rule singles out sources
    const bool masq_anywhere =
        std::any_of(p.rules.begin(), p.rules.end(), [](const rule& r) { return r.act.kind == action_kind::masquerade; });
    for (index c = 0; masq_anywhere && c < p.chains.size(); ++c) {
      const auto& ch = p.chains[c];
      if (ch.count == 0 || ch.at != hook::none) continue;
      // unconditional mark rules, up to the end or to an unconditional return (what follows it never runs:
      // `-A KUBE-MARK-MASQ -j RETURN` after the MARK rule changes nothing); a return when bits are set
      // already changes nothing either where the chain sets them (`-m mark --mark 0x4000/0x4000 -j RETURN`)
      bool only_marks = true;
      std::uint32_t mark = 0;         // what the chain leaves on a connection without a mark
      std::uint32_t return_when = 0;  // the bits whose presence returns early
      for (index i = ch.first; i < ch.first + ch.count && only_marks; ++i) {
        const auto& r = p.rules[i];
        bool always = true;
        for (index k = r.first; k < r.first + r.count && always; ++k) always = p.conditions[k].kind == cond_kind::always;
        if (always && r.act.kind == action_kind::ret) break;
        if (const auto* m = r.count == 1 ? &p.conditions[r.first] : nullptr;
            r.act.kind == action_kind::ret && m != nullptr && m->kind == cond_kind::mark && !m->negated && m->a == m->b) {
          return_when |= m->b;
          continue;
        }
        only_marks = always && r.act.kind == action_kind::mark_set;
        if (only_marks) mark = (mark & ~r.act.mark_mask) ^ r.act.mark;  // xt_mark, nft meta mark set
      }
      only_marks = only_marks && (return_when & ~mark) == 0;
      ev_.mark_chain[c] = only_marks;
      masq_mark_chain_[c] = only_marks && mark != 0 && marks_for_masquerade(mark);
    }
  }

  evaluation run() {
    for (const stage st : {stage::nat, stage::pre_dnat, stage::post_dnat}) {
      stage_ = st;
      std::fill(walked_.begin(), walked_.end(), 0);
      std::fill(visited_.begin(), visited_.end(), 0);
      // Before NAT, rules may name a destination more widely than its frontend (`ip daddr 10.96.0.10 drop`
      // for a ClusterIP's every port): the chains also run for each frontend NAT translates, exactly.
      std::vector<flow> seeds;
      if (st == stage::pre_dnat) {
        std::unordered_multimap<std::size_t, dest> seen;
        for (const auto& rec : ev_.frontends) {
          if (rec.when != stage::nat || !rec.d.exact()) continue;
          const auto h = dest_hash(rec.d);
          const auto [lo, hi] = seen.equal_range(h);
          if (std::any_of(lo, hi, [&](const auto& kv) { return dest_equal(kv.second, rec.d); })) continue;
          seen.emplace(h, rec.d);
          flow f;
          f.d = rec.d;
          f.seed = true;
          seeds.push_back(std::move(f));
        }
      }
      auto start = [&](index c) {
        if (c == none || c >= p_.chains.size() || visited_[c]) return;
        inexact_.clear();
        hooks_ = hook_bits(p_.chains[c].at, st);
        before_conntrack_ = runs_before_conntrack(p_.chains[c]);
        std::vector<flow> flows(1);
        flows.insert(flows.end(), seeds.begin(), seeds.end());
        // What comes back from an entry chain is not translated here: record it for its frontend.
        for (auto& f : run_chain(c, std::move(flows), frame{}, 0)) {
          if (f.fe == none) continue;
          terminal t;
          t.k = terminal::kind::fall;
          t.mass = f.mass;
          auto& rec = ev_.frontends[f.fe];
          if (f.br >= 0)
            rec.branches[static_cast<std::size_t>(f.br)].results.push_back(t);
          else
            rec.results.push_back(t);
        }
      };
      for (const auto& e : p_.entries)
        if (e.when == st) start(e.chain);
      for (const auto& e : p_.fallback_entries)
        if (e.when == st && !jumped_to_[e.chain] && !hooked_) start(e.chain);
    }
    probe_endpoints();
    return std::move(ev_);
  }

  /// The chains after NAT see a translated connection's endpoint, not its frontend. The generic walk
  /// there already made a record for each endpoint a rule names exactly (`ip daddr 10.244.1.11 tcp dport
  /// 8080 drop`); an endpoint that a rule could name otherwise (its address or a prefix of it, its port
  /// without an address, or anything but some address) runs through those chains once, alone. Drops and
  /// rejects are kept in `after_nat`. (kube-proxy's own rules there name ClusterIPs, load-balancer IPs
  /// and node ports: its pods' endpoints are not run.)
  void probe_endpoints() {
    using key = std::tuple<ip_address, l4_protocol, std::uint16_t>;
    std::set<key> endpoints;
    const auto collect = [&](const frontend_record& rec, const std::vector<terminal>& ts) {
      for (const auto& t : ts)
        if (t.k == terminal::kind::dnat && t.has_port && rec.d.has_proto) endpoints.insert({t.addr, rec.d.proto, t.port});
    };
    for (const auto& rec : ev_.frontends) {
      if (rec.when != stage::nat) continue;
      collect(rec, rec.results);
      for (const auto& b : rec.branches) collect(rec, b.results);
    }
    // what the chains after NAT name: prefixes wider than one address, ports on rules without an address
    std::vector<char> reach(p_.chains.size(), 0);
    std::vector<index> todo;
    for (const auto& e : p_.entries)
      if (e.when == stage::post_dnat && e.chain < p_.chains.size() && !reach[e.chain]) reach[e.chain] = 1, todo.push_back(e.chain);
    std::vector<ip_prefix> prefixes;
    std::vector<port_range> ports;
    const auto go = [&](index c) {
      if (c < p_.chains.size() && !reach[c]) reach[c] = 1, todo.push_back(c);
    };
    while (!todo.empty()) {
      const auto& ch = p_.chains[todo.back()];
      todo.pop_back();
      for (index ri = ch.first; ri < ch.first + ch.count; ++ri) {
        const auto& r = p_.rules[ri];
        // an address condition names what it lists (a negated one: everything else, so its ports name)
        bool names_address = false, negated_address = false, has_ports = false;
        for (index k = r.first; k < r.first + r.count; ++k) {
          const auto& c = p_.conditions[k];
          has_ports = has_ports || (c.kind == cond_kind::port && c.what == field::dport);
          if (c.what != field::daddr) continue;
          if (c.negated && c.kind == cond_kind::addr) {
            negated_address = true;
            continue;
          }
          names_address = true;
          if (c.kind == cond_kind::addr)
            for (index v = c.first; v < c.first + c.count; ++v) prefixes.push_back(as_prefix(p_.values[v]));
        }
        if (!names_address) {
          for (index k = r.first; k < r.first + r.count; ++k)
            if (const auto& c = p_.conditions[k]; c.kind == cond_kind::port && c.what == field::dport)
              for (index v = c.first; v < c.first + c.count; ++v) ports.push_back(p_.values[v].ports);
          if (negated_address && !has_ports) ports.push_back({0, 65535});
        }
        go(r.act.target);
        if (r.act.map < p_.maps.size())
          for (index e = p_.maps[r.act.map].first; e < p_.maps[r.act.map].first + p_.maps[r.act.map].count; ++e)
            go(p_.elements[e].result.target);
      }
    }
    const auto named = [&](const key& k) {
      const ip_address& addr = std::get<0>(k);
      const std::uint16_t port = std::get<2>(k);
      return std::any_of(prefixes.begin(), prefixes.end(), [&](const ip_prefix& pr) { return contains(pr, addr); }) ||
             std::any_of(ports.begin(), ports.end(), [&](const port_range& pr) { return pr.first <= port && port <= pr.last; });
    };
    // records the generic walk made for endpoints, exactly
    std::map<key, terminal> ends;
    for (const auto& rec : ev_.frontends) {
      if (rec.when != stage::post_dnat || !rec.d.has_addr || !rec.d.has_proto || !rec.d.has_port ||
          rec.d.port.first != rec.d.port.last || rec.d.addr.length != max_prefix_length(rec.d.addr.address.family))
        continue;
      const key k{rec.d.addr.address, rec.d.proto, rec.d.port.first};
      if (!endpoints.count(k)) continue;
      for (const auto& t : rec.results)
        if (t.k == terminal::kind::drop || t.k == terminal::kind::reject) {
          ends.emplace(k, t);
          break;
        }
    }
    stage_ = stage::post_dnat;
    for (const auto& k : endpoints) {
      if (ends.count(k) || !named(k) || exhausted_) continue;
      const auto& [addr, proto, port] = k;
      flow f;
      f.probe = true;
      f.d.has_addr = f.d.has_proto = f.d.has_port = true;
      f.d.addr = ip_prefix{addr, max_prefix_length(addr.family)};
      f.d.proto = proto;
      f.d.port = {port, port};
      probe_end_.reset();
      for (const auto& e : p_.entries) {
        if (e.when != stage::post_dnat || e.chain >= p_.chains.size() || probe_end_) continue;
        std::fill(visited_.begin(), visited_.end(), 0);
        hooks_ = hook_bits(p_.chains[e.chain].at, stage::post_dnat);
        before_conntrack_ = false;
        run_chain(e.chain, std::vector<flow>{f}, frame{}, 0);
      }
      if (probe_end_) ends.emplace(k, *probe_end_);
    }
    for (const auto& [k, t] : ends) ev_.after_nat.push_back({std::get<0>(k), std::get<1>(k), std::get<2>(k), t});
  }


 private:
  // ---- diagnostics ----------------------------------------------------------------------------

  void warn(index origin_index, error_code code, std::string message) {
    diagnostic d;
    d.level = severity::warning;
    d.code = code;
    d.message = std::move(message);
    if (origin_index != none) {
      const auto& o = p_.origins[origin_index];
      d.file = p_.sources[o.source];
      d.where = o.where;
    }
    out_.push_back(std::move(d));
  }

  /// One step of evaluation (a flow meets a rule or a map element), against `evaluation_budget` (whose
  /// docstring gives the figures). Jumps and splits can multiply the paths a connection takes
  /// exponentially in the ruleset's depth (chains that jump twice to the next one, n deep). A `cheap`
  /// step (a rule that cannot match the flow, rejected at once) has a budget of its own: an exact
  /// frontend that returns from its chain meets every later rule of the chain, as a packet does in the
  /// kernel, so those grow with frontends x rules. Past a budget the evaluation stops with an error at
  /// `origin`: the graph is then incomplete, never silently so.
  bool spend(index origin, bool cheap = false) {
    if (exhausted_) return false;
    if (cheap ? ++cheap_steps_ <= cheap_budget_ : ++steps_ <= budget_) return true;
    exhausted_ = true;
    warn(origin, error_code::unsupported_dispatch,
         fmt::format("the ruleset's jumps and splits multiply the paths a connection can take beyond {} evaluation "
                     "steps; evaluation stopped here and the graph is incomplete",
                     cheap ? cheap_budget_ : budget_));
    out_.back().level = severity::error;
    return false;
  }

  /// The first report of a rule (its slot is its index).
  bool first_report(const rule& r) { return first_report(static_cast<std::size_t>(&r - p_.rules.data())); }
  bool first_report(std::size_t slot) {
    if (slot >= reported_.size() || reported_[slot]) return false;
    reported_[slot] = true;
    return true;
  }

  void report_dangling(index rule_or_elem_origin, std::size_t slot, std::string_view name, origin_kind what) {
    if (!first_report(slot)) return;
    const char* kind = what == origin_kind::chain ? "chain" : what == origin_kind::map ? "map" : "set";
    warn(rule_or_elem_origin, error_code::dangling_reference,
         fmt::format("reference to {} '{}', which is not in the ruleset; the rest of the graph is still built", kind,
                     name));
    dangling_reference dr;
    if (rule_or_elem_origin != none) dr.where = p_.origins[rule_or_elem_origin];
    dr.target = std::string(name);
    dr.target_kind = what;
    dangling_.push_back(std::move(dr));
  }

  // ---- recording --------------------------------------------------------------------------------

  frontend_record* record_of(const flow& f) { return f.fe == none ? nullptr : &ev_.frontends[f.fe]; }

  void note_origin(flow& f, index origin) {
    if (origin == none) return;
    if (auto* r = record_of(f))
      r->origins.push_back(origin);
    else
      f.prefix.push_back(origin);
  }

  /// Records a new frontend when a flow's destination became exact or narrower than its frontend's.
  void maybe_create(flow& f, index origin, index chain, std::string_view comment) {
    if (f.br >= 0 || !f.d.exact() || f.probe) return;
    if (f.fe != none && dest_equal(ev_.frontends[f.fe].d, f.d)) return;
    frontend_record rec;
    rec.d = f.d;
    rec.when = stage_;
    rec.hooks = hooks_;
    rec.parent = f.fe;
    rec.entry_origin = origin;
    rec.entry_chain = chain;
    rec.evaluated = f.evaluated;
    rec.lookups = f.lookups;
    rec.comment = comment;
    if (f.fe != none)
      rec.origins = ev_.frontends[f.fe].origins;
    else
      rec.origins = std::move(f.prefix);
    f.prefix.clear();
    f.fe = static_cast<index>(ev_.frontends.size());
    f.depth = 0;
    ev_.frontends.push_back(std::move(rec));
  }

  void end(flow& f, terminal t, index rule_index, index chain, const frame& fr) {
    // a seed is there for what rules before NAT drop; its translations are the generic flow's already
    if (f.seed && (t.k == terminal::kind::dnat || t.k == terminal::kind::redirect)) return;
    if (f.probe) {
      if ((t.k == terminal::kind::drop || t.k == terminal::kind::reject) && !probe_end_) {
        t.rule = rule_index;
        probe_end_ = t;
      }
      return;
    }
    t.mass = f.mass;
    t.rule = rule_index;
    t.depth = f.depth;
    if (t.k == terminal::kind::dnat || t.k == terminal::kind::redirect) {
      t.endpoint_chain = chain;
      if (f.depth >= 2) {
        t.selection_chain = fr.chain;
        t.selection_origin = fr.origin;
        t.mech = fr.mech;
        t.threshold = fr.threshold;
        t.modulus = fr.modulus;
        t.slots = fr.slots;
      } else if (f.depth == 1) {
        t.selection_chain = chain;
      }
    }
    if (f.fe == none) {
      // A translation reached before the destination was exact: record what is known. Verdicts on
      // inexact destinations (`ip daddr @cluster-ips reject`) make no frontend.
      if (t.k != terminal::kind::dnat && t.k != terminal::kind::redirect) return;
      // A second translation of connections to the same inexact destination in this run (a ladder or
      // numgen split before the destination has an address and port): the graph keeps the first
      // frontend record only, so the later shares are not in it. Say so.
      // One entry per destination: the first record is what later translations are told apart from
      // (one per record made the search quadratic in the translations of one destination).
      const std::size_t h = dest_hash(f.d);
      const auto [lo, hi] = inexact_.equal_range(h);
      const bool again =
          std::any_of(lo, hi, [&](const auto& kv) { return dest_equal(ev_.frontends[kv.second].d, f.d); });
      if (again && rule_index != none && first_report(rule_index))
        warn(p_.rules[rule_index].origin, error_code::unsupported_dispatch,
             "a second translation of connections whose destination has no exact address, protocol and port "
             "here (split before the rules narrow it): its share is not in the graph");
      frontend_record rec;
      rec.d = f.d;
      rec.when = stage_;
      rec.hooks = hooks_;
      rec.entry_origin = rule_index == none ? none : p_.rules[rule_index].origin;
      rec.entry_chain = chain;
      rec.evaluated = f.evaluated;
      rec.lookups = f.lookups;
      rec.origins = std::move(f.prefix);
      f.fe = static_cast<index>(ev_.frontends.size());
      if (!again) inexact_.emplace(h, f.fe);
      ev_.frontends.push_back(std::move(rec));
      t.selection_chain = none;
    }
    auto& rec = ev_.frontends[f.fe];
    if (f.br >= 0)
      rec.branches[static_cast<std::size_t>(f.br)].results.push_back(t);
    else
      rec.results.push_back(t);
  }

  // ---- matching -------------------------------------------------------------------------------

  /// Does a source-side condition hold for a source class? nothing: the generic client does not match
  /// and the rule singles out `cls`.
  struct source_answer {
    bool yes = false;
    bool spawn = false;
    source_class cls;
  };

  source_answer source_prefix(const source_class& s, const condition& c) {
    source_answer a;
    // data() + first, not &values[first]: a condition on an empty set has no values at all.
    const value* vals = p_.values.data() + c.first;
    switch (s.k) {
      case source_class::kind::prefix: {
        bool inside = false, disjoint = true;
        for (index i = 0; i < c.count; ++i) {
          const auto pv = as_prefix(vals[i]);
          if (prefix_contains(pv, s.prefix)) inside = true;
          if (prefix_contains(pv, s.prefix) || prefix_contains(s.prefix, pv)) disjoint = false;
        }
        a.yes = c.negated ? disjoint : inside;
        return a;
      }
      case source_class::kind::generic:
      case source_class::kind::local:
      case source_class::kind::affinity:
        // A generic client is outside every prefix a rule names; so is a node-local address here.
        if (c.negated) {
          a.yes = true;
        } else if (s.k == source_class::kind::generic && c.count > 0) {
          a.spawn = true;
          a.cls.k = source_class::kind::prefix;
          a.cls.prefix = as_prefix(vals[0]);
        }
        return a;
    }
    return a;
  }

  /// Whether `d` already excludes all of `p`.
  static bool excluded(const dest& d, const ip_prefix& p) {
    return std::any_of(d.excl.begin(), d.excl.begin() + d.n_excl,
                       [&](const ip_prefix& e) { return prefix_contains(e, p); });
  }

  /// Adds to `d`'s exclusions the prefixes of `vals` that overlap it and are not excluded yet; false
  /// when they do not fit.
  static bool exclude(dest& d, const value* vals, index n) {
    for (index i = 0; i < n; ++i) {
      const auto pv = as_prefix(vals[i]);
      if (d.has_addr && !prefix_contains(d.addr, pv)) continue;  // outside it: nothing to exclude
      if (excluded(d, pv)) continue;
      if (d.n_excl == d.excl.size()) return false;
      d.excl[d.n_excl++] = pv;
    }
    return true;
  }

  match_result match(const rule& r, const flow& f, bool ignore_source = false) {
    match_result m;
    std::vector<flow> cur;
    cur.push_back(f);
    bool full = true;
    bool fail = false;
    for (index k = r.first; k < r.first + r.count && !fail && !cur.empty(); ++k) {
      const condition& c = p_.conditions[k];
      switch (c.kind) {
        case cond_kind::always:
        case cond_kind::recent_set:
          break;
        case cond_kind::addr:
        case cond_kind::addr_set: {
          const value* vals = nullptr;
          index n = 0;
          if (c.kind == cond_kind::addr_set) {
            if (c.set == none) {
              report_dangling(r.origin, static_cast<std::size_t>(&r - p_.rules.data()), c.name, origin_kind::set);
              fail = true;
              break;
            }
            const auto& s = p_.sets[c.set];
            vals = p_.values.data() + s.first;
            n = s.count;
            if (c.what == field::saddr) {
              if (ignore_source) break;
              if (s.dynamic) {
                if (f.src.k == source_class::kind::affinity && f.src.list == s.name) break;
                if (f.src.k == source_class::kind::generic && !c.negated) {
                  m.spawn = true;
                  m.cls.k = source_class::kind::affinity;
                  m.cls.list = s.name;
                  m.cls.timeout_s = s.timeout_s;
                }
                fail = !c.negated;
                break;
              }
              condition tmp = c;
              tmp.first = s.first;
              tmp.count = s.count;
              const auto a = source_prefix(f.src, tmp);
              if (a.spawn) m.spawn = true, m.cls = a.cls;
              fail = !a.yes;
              break;
            }
          } else {
            vals = p_.values.data() + c.first;
            n = c.count;
            if (c.what == field::saddr) {
              if (ignore_source) break;
              const auto a = source_prefix(f.src, c);
              if (a.spawn) m.spawn = true, m.cls = a.cls;
              fail = !a.yes;
              break;
            }
          }
          if (c.what != field::daddr) break;  // other address fields do not decide dispatch
          if (c.negated) {
            // ! -d P: drop flows inside P, narrow flows that overlap it.
            std::vector<flow> next;
            for (auto& fl : cur) {
              bool inside = false, overlap = false;
              for (index i = 0; i < n; ++i) {
                const auto pv = as_prefix(vals[i]);
                if (fl.d.has_addr && prefix_contains(pv, fl.d.addr))
                  inside = true;
                else if ((!fl.d.has_addr || prefix_contains(fl.d.addr, pv)) && !excluded(fl.d, pv))
                  overlap = true;  // (a prefix it already excludes is no overlap: it is outside that one)
              }
              if (inside) continue;
              if (overlap) {
                full = false;
                if (!exclude(fl.d, vals, n)) {
                  // more excluded prefixes than a destination holds: followed on, these connections would
                  // meet the excluded ones' rules too (their shares counted twice); they are not followed
                  if (leads_somewhere(r) && first_report(r))
                    warn(r.origin, error_code::unsupported_dispatch,
                         fmt::format("more than {} destination prefixes excluded on one path: the connections "
                                     "this rule matches are not followed",
                                     fl.d.excl.size()));
                  continue;
                }
              }
              next.push_back(std::move(fl));
            }
            if (next.size() != cur.size()) full = false;
            cur = std::move(next);
            break;
          }
          // Large sets of addresses in a filter verdict rule (nft `ip daddr @cluster-ips reject`) make no
          // exact frontend: they are not split into one flow per address.
          const bool split = splits_set(r, n);
          if (!split) {
            full = false;
            m.precise = false;
            break;
          }
          std::vector<flow> next;
          for (auto& fl : cur) {
            bool implied = false;
            std::vector<flow> forks;
            for (index i = 0; i < n && !implied; ++i) {
              flow g = fl;
              const auto res = refine_addr(g.d, as_prefix(vals[i]));
              if (res == refine::implied)
                implied = true;
              else if (res == refine::narrowed) {
                if (c.kind == cond_kind::addr_set) g.d.addr_set = c.set;
                forks.push_back(std::move(g));
              }
            }
            if (implied) {
              next.push_back(std::move(fl));
            } else {
              full = false;
              for (auto& g : forks) next.push_back(std::move(g));
            }
          }
          cur = std::move(next);
          break;
        }
        case cond_kind::tuple: {
          if (c.set >= p_.maps.size()) {
            m.assumed = true, m.assumed_what = "a concatenated set match";
            break;
          }
          const auto& mp = p_.maps[c.set];
          const bool split = splits_set(r, mp.count);
          if (!split) {  // as for large address sets: not one flow per element
            full = false;
            m.precise = false;
            break;
          }
          // How element `e` relates to destination `d`: its every part holds for all of `d` (implied), for a
          // part of it (narrowed, into `into`), or for none (contradiction).
          auto relate = [&](const dest& d, index e, dest& into) {
            const auto& el = p_.elements[e];
            into = d;
            refine out = refine::implied;
            for (std::size_t k = 0; k < mp.key.size() && k < el.count; ++k) {
              const auto res = refine_field(into, mp.key[k], p_.values[el.first + k]);
              if (res == refine::contradiction) return refine::contradiction;
              if (res == refine::narrowed) out = refine::narrowed;
            }
            return out;
          };
          std::vector<flow> next;
          for (auto& fl : cur) {
            bool implied = false, partly = false;
            std::vector<flow> forks;
            for (index e = mp.first; e < mp.first + mp.count && !implied; ++e) {
              dest nd;
              const auto res = relate(fl.d, e, nd);
              if (res == refine::implied) {
                implied = true;
              } else if (res == refine::narrowed) {
                partly = true;
                if (!c.negated) {
                  flow g = fl;
                  g.d = nd;
                  forks.push_back(std::move(g));
                }
              }
            }
            if (c.negated) {
              // != { ... }: out when an element holds for all of it; when one holds for a part only, what is
              // left is not a destination the graph can write: kept whole
              if (implied) {
                full = false;
                continue;
              }
              if (partly) full = false, m.precise = false;
              next.push_back(std::move(fl));
              continue;
            }
            if (implied) {
              next.push_back(std::move(fl));
            } else {
              full = false;
              for (auto& g : forks) next.push_back(std::move(g));
            }
          }
          cur = std::move(next);
          break;
        }
        case cond_kind::addr_local: {
          if (c.what == field::saddr) {
            if (ignore_source) break;
            const bool is_local = f.src.k == source_class::kind::local;
            if (c.negated) {
              fail = is_local;
            } else if (!is_local) {
              if (f.src.k == source_class::kind::generic) {
                m.spawn = true;
                m.cls.k = source_class::kind::local;
              }
              fail = true;
            }
            break;
          }
          if (c.what != field::daddr) break;
          // Whether an address is one of the node's own is not in the dump. A ClusterIP or another address
          // a rule names is taken as not local (ClusterIPs never are, in the iptables and nftables modes);
          // one taken from a set (`ip daddr @nodeport-ips`) as possibly local: its connections are
          // followed both ways. On a rule that ends connections (a drop, reject or accept before the
          // dispatch) the assumption decides whether a frontend's connections end there: it is reported,
          // once per rule and kind. On a jump or goto (kube-proxy's own `addrtype --dst-type LOCAL -j
          // KUBE-NODEPORTS`) it is kube-proxy's: load-balancer and external IPs are not the node's.
          std::string named, from_set;
          std::vector<flow> next;
          for (auto& fl : cur) {
            const bool concrete = !fl.d.local && fl.d.has_addr && fl.d.addr_set == none;
            if (!fl.d.local && fl.d.has_addr && (concrete ? named : from_set).empty())
              (concrete ? named : from_set) = host_or_prefix(fl.d.addr);
            if (c.negated) {
              if (fl.d.local) continue;
              if (!fl.d.has_addr) full = false, m.precise = false;  // "not local" is not in a destination
              next.push_back(std::move(fl));
            } else {
              if (fl.d.local) {
                next.push_back(std::move(fl));
              } else if (concrete) {
                // taken as not local: the connection does not match
              } else {
                fl.d.local = true;
                full = false;
                next.push_back(std::move(fl));
              }
            }
          }
          const auto report = [&](const std::string& addr, std::uint8_t bit, std::string_view taken) {
            auto& done = local_reported_[static_cast<std::size_t>(&r - p_.rules.data())];
            if (addr.empty() || (done & bit) != 0 || leads_somewhere(r)) return;
            done |= bit;
            warn(r.origin, error_code::unsupported_dispatch,
                 fmt::format("fib daddr type {}local: whether {} is an address of the node is not known from the "
                             "dump; {}",
                             c.negated ? "!= " : "", addr, taken));
          };
          report(named, 1, "taken as not local");
          report(from_set, 2, "an address from a set is taken as possibly local: its connections are followed both ways");
          if (next.size() != cur.size()) full = false;
          cur = std::move(next);
          break;
        }
        case cond_kind::protocol: {
          const value* vals = p_.values.data() + c.first;
          std::vector<flow> next;
          for (auto& fl : cur) {
            if (c.negated) {
              const auto listed = [&](l4_protocol p) {
                for (index i = 0; i < c.count; ++i)
                  if (vals[i].proto == p) return true;
                return false;
              };
              if (fl.d.has_proto) {
                if (listed(fl.d.proto))
                  full = false;
                else
                  next.push_back(std::move(fl));
                continue;
              }
              // `meta l4proto != udp`: of the protocols with ports (the only ones a frontend has), a flow
              // for each that is not listed, so that a drop before the dispatch ends exactly those
              full = false;
              for (const auto p : {l4_protocol::tcp, l4_protocol::udp, l4_protocol::sctp, l4_protocol::udplite,
                                   l4_protocol::dccp}) {
                if (listed(p)) continue;
                flow g = fl;
                refine_proto(g.d, p);
                next.push_back(std::move(g));
              }
              continue;
            }
            bool implied = false;
            std::vector<flow> forks;
            for (index i = 0; i < c.count && !implied; ++i) {
              flow g = fl;
              const auto res = refine_proto(g.d, vals[i].proto);
              if (res == refine::implied)
                implied = true;
              else if (res == refine::narrowed)
                forks.push_back(std::move(g));
            }
            if (implied) {
              next.push_back(std::move(fl));
            } else {
              full = false;
              for (auto& g : forks) next.push_back(std::move(g));
            }
          }
          cur = std::move(next);
          break;
        }
        case cond_kind::port: {
          if (c.what != field::dport) {
            // a client's source port is its own choice: the graph follows every client, as if it matched
            if (c.what == field::sport) m.assumed = true, m.assumed_what = "a source port match";
            if (c.what == field::sport && leads_somewhere(r) && first_report(r))
              warn(r.origin, error_code::unsupported_dispatch,
                   "a source port match on a dispatch path is not evaluated; assumed to match");
            break;
          }
          const value* vals = p_.values.data() + c.first;
          std::vector<flow> next;
          for (auto& fl : cur) {
            if (c.negated) {
              // `dport != { 80, 443 }` holds for the ports of the flow's range outside the values: at most
              // one range more than there are values, each a flow of its own (so that a drop before the
              // dispatch ends exactly those destinations). More ranges than a rule can mean stay one
              // imprecise flow.
              const auto outside = complement(fl.d.has_port ? fl.d.port : port_range{0, 65535}, vals, c.count);
              if (!outside) {
                full = false, m.precise = false;
                next.push_back(std::move(fl));
              } else if (outside->empty()) {
                full = false;  // every port of the flow is a listed one
              } else if (outside->size() == 1 && fl.d.has_port && outside->front() == fl.d.port) {
                next.push_back(std::move(fl));  // none is
              } else {
                full = false;
                for (const auto& range : *outside) {
                  flow g = fl;
                  refine_port(g.d, range);
                  next.push_back(std::move(g));
                }
              }
              continue;
            }
            bool implied = false;
            std::vector<flow> forks;
            for (index i = 0; i < c.count && !implied; ++i) {
              flow g = fl;
              const auto res = refine_port(g.d, vals[i].ports);
              if (res == refine::implied)
                implied = true;
              else if (res == refine::narrowed)
                forks.push_back(std::move(g));
            }
            if (implied) {
              next.push_back(std::move(fl));
            } else {
              full = false;
              for (auto& g : forks) next.push_back(std::move(g));
            }
          }
          cur = std::move(next);
          break;
        }
        case cond_kind::random:
        case cond_kind::nth:
          // Outside NAT a share is no endpoint selection: a filter rule that ends or sends on only some of a
          // frontend's connections is reported, as any condition the graph does not evaluate.
          if (stage_ != stage::nat) {
            m.assumed = true;
            m.assumed_what = "a random or every-Nth match (statistic, numgen)";
            if (leads_somewhere(r) && first_report(r))
              warn(r.origin, error_code::unsupported_dispatch,
                   "a random or every-Nth match outside NAT, on a path to the dispatch or a verdict, is not "
                   "evaluated; assumed to match");
            break;
          }
          if (c.kind == cond_kind::nth) {
            // every N-th packet, or (`! --every N`) all the others
            if (c.a != 0) m.probability *= c.negated ? 1.0 - 1.0 / c.a : 1.0 / c.a;
            m.nth = true;
            break;
          }
          m.random = true;
          m.threshold = c.threshold;
          m.probability *= statistic_probability(c.threshold);
          break;
        case cond_kind::recent_check:
          if (ignore_source) break;
          if (c.what != field::saddr) {
            // not a list of clients: the graph follows the connections the check does not send back
            if (first_report(r))
              warn(r.origin, error_code::unsupported_dispatch,
                   fmt::format("-m recent --name {} keyed by destination (--rdest) or by network (--mask) is not "
                               "ClientIP affinity and is not modelled: the graph shows the connections it does "
                               "not send back",
                               c.name));
            fail = true;
            break;
          }
          if (f.src.k == source_class::kind::affinity && f.src.list == c.name) break;
          if (f.src.k == source_class::kind::generic && !c.negated) {
            m.spawn = true;
            m.cls.k = source_class::kind::affinity;
            m.cls.list = c.name;
            m.cls.timeout_s = c.a;
          }
          // `--hitcount N`: only a client seen N times or more is sent back, so affinity starts later
          if (c.b != 0 && leads_somewhere(r) && first_report(r))
            warn(r.origin, error_code::unsupported_dispatch,
                 fmt::format("--hitcount {} on an affinity check: a client is sent back to its endpoint only once "
                             "seen {} times; taken as from its first connection",
                             c.b, c.b));
          fail = !c.negated;
          break;
        case cond_kind::ct_state: {
          // A new connection's first packet: NEW; after NAT, an endpoint's (a probe) is also DNAT. Before
          // conntrack has seen it, INVALID (nft_ct_get_eval without a conntrack entry).
          const bool hit = before_conntrack_ ? (c.a & ct_invalid) != 0
                                             : (c.a & ct_new) != 0 || (f.probe && (c.a & ct_dnat) != 0);
          fail = hit == c.negated;
          break;
        }
        case cond_kind::mark: {
          const bool hit = (f.mark & c.a) == c.b;
          fail = hit == c.negated;
          if (stage_ == stage::nat && premark_ != none && !ignore_source)
            m.assumed = true, m.assumed_what = "a mark match (a rule before NAT sets marks)";
          if (stage_ == stage::nat && premark_ != none && !ignore_source && leads_somewhere(r) && first_report(r))
            warn(r.origin, error_code::unsupported_dispatch,
                 fmt::format("a mark match in NAT, and a rule before NAT sets marks (at {}): the graph takes the mark "
                             "NAT sees as the one NAT's own rules set",
                             describe(premark_)));
          break;
        }
        case cond_kind::iface:
          // The generic client arrives on an interface the DNAT rules name, never on one a rule excludes; a
          // rule that accepts or returns what arrives on a named one is assumed, as any interface match, and
          // reported below: the graph cannot tell whether the clients arrive there.
          if (!c.negated) m.assumed = true, m.assumed_what = fmt::format("interface match '{}'", c.name);
          if (!c.negated && leads_somewhere(r) && first_report(r)) {
            // (an excluded interface is the bridge or loopback a rule before singled out: not the client's)
            warn(r.origin, error_code::unsupported_dispatch,
                 fmt::format("interface match '{}' on a dispatch path: connections are assumed to arrive on it; "
                             "those that arrive elsewhere are not followed past this rule",
                             c.name));
          }
          break;
        case cond_kind::never:
          fail = true;
          break;
        case cond_kind::opaque:
          m.assumed = true;
          m.assumed_what = fmt::format("condition '{}'", c.name);
          if (leads_somewhere(r) && first_report(r))
            warn(r.origin, error_code::unsupported_dispatch,
                 fmt::format("condition '{}' on a dispatch path is not evaluated; assumed to match", c.name));
          break;
      }
    }
    // A condition the graph assumed (an interface, a socket owner, an opaque match) on a rule that ends
    // connections (accept, drop, reject, return): the graph does not end them on an assumption; it takes
    // the connections as going on past the rule, and says so.
    if (!fail && !cur.empty() && m.assumed && !leads_somewhere(r) && changes_path(r)) {
      if (first_report(r))
        warn(r.origin, error_code::unsupported_dispatch,
             fmt::format("{} on a rule that ends connections to {} is not evaluated: the graph assumes the "
                         "connections it would end go on past it",
                         m.assumed_what, describe_dest(cur.front().d)));
      fail = true;
    }
    m.full = full && !fail && !cur.empty();
    if (fail || cur.empty()) {
      m.matched.clear();
      m.has_rest = true;
      m.rest = f;
      return m;
    }
    m.matched = std::move(cur);
    if (m.probability < 1) {
      for (auto& fl : m.matched) fl.mass *= m.probability;
    }
    if (full && m.probability >= 1) return m;
    m.has_rest = true;
    m.rest = f;
    if (full) m.rest.mass = f.mass * (1 - m.probability);
    return m;
  }

  /// Whether a rule's action takes the connection off the path it is on (a verdict, a jump, a
  /// translation); counters, logs and marks do not.
  static bool changes_path(const rule& r) noexcept {
    switch (r.act.kind) {
      case action_kind::none:
      case action_kind::mark_set:
      case action_kind::set_update:
      case action_kind::masquerade:
      case action_kind::snat:
      case action_kind::other:
        return false;
      default:
        return true;
    }
  }

  bool leads_somewhere(const rule& r) const {
    switch (r.act.kind) {
      case action_kind::jump:
      case action_kind::go_to:
      case action_kind::dnat:
      case action_kind::redirect:
      case action_kind::vmap:
      case action_kind::numgen_vmap:
      case action_kind::hash_vmap:
        return true;
      default:
        return false;
    }
  }

  /// Quick test for flows with an exact destination: does a destination condition rule them out?
  bool quick_reject(const rule& r, const flow& f) const {
    if (!f.d.exact()) return false;
    for (index k = r.first; k < r.first + r.count; ++k) {
      const auto& c = p_.conditions[k];
      if (c.negated) continue;
      if (c.kind == cond_kind::addr && c.what == field::daddr && c.count == 1 && f.d.has_addr) {
        const auto pv = as_prefix(p_.values[c.first]);
        if (!prefix_contains(pv, f.d.addr) && !prefix_contains(f.d.addr, pv)) return true;
      } else if (c.kind == cond_kind::port && c.what == field::dport && c.count == 1) {
        const auto& pr = p_.values[c.first].ports;
        if (pr.last < f.d.port.first || f.d.port.last < pr.first) return true;
      } else if (c.kind == cond_kind::protocol && c.count == 1 && f.d.has_proto &&
                 p_.values[c.first].proto != l4_protocol::any && p_.values[c.first].proto != f.d.proto) {
        return true;
      }
    }
    return false;
  }

  masquerade masq_of(const rule& r) const {
    masquerade m;
    for (index k = r.first; k < r.first + r.count; ++k) {
      const auto& c = p_.conditions[k];
      if (c.what != field::saddr) continue;
      if (c.kind == cond_kind::addr && c.count > 0) {
        m.when = c.negated ? masquerade_when::source_outside : masquerade_when::source_inside;
        m.prefix = as_prefix(p_.values[c.first]);
      } else if (c.kind == cond_kind::addr_local && !c.negated) {
        m.when = masquerade_when::source_local;
      }
    }
    return m;
  }

  // ---- running chains -------------------------------------------------------------------------

  /// Runs `flows` through chain `c`; returns the flows that come back (end of chain or `return`).
  std::vector<flow> run_chain(index c, std::vector<flow> flows, const frame& fr, std::uint32_t depth) {
    std::vector<flow> returned;
    if (exhausted_) return returned;
    if (depth > lim_.depth()) {
      if (first_report(reported_.size() - 1))
        warn(p_.chains[c].origin, error_code::nesting_too_deep,
             fmt::format("jumps nest deeper than {} chains at '{}'; evaluation stops there", lim_.depth(),
                         p_.chains[c].name));
      return returned;
    }
    if (on_stack_[c]) {
      if (first_report(reported_.size() - 1))
        warn(p_.chains[c].origin, error_code::unsupported_dispatch,
             fmt::format("chain '{}' is reached again while it runs (a loop); that path is not followed",
                         p_.chains[c].name));
      return returned;
    }
    // kube-proxy's dispatch is entered from several hooks; a chain walked once for "any connection" is
    // not walked again (what it found is recorded; the connection comes back if it came back before).
    // A flow some of whose destinations ended before (an earlier rule of this hook dropped, accepted or
    // returned them) is not "any connection": its walk is its own.
    const bool generic_walk = flows.size() == 1 && flows[0].fe == none && flows[0].d.any() &&
                              flows[0].src.k == source_class::kind::generic &&
                              (!flows[0].ended || flows[0].ended->empty());
    if (generic_walk) {
      if (walked_[c] != 0) {
        // the same answer, and the frontends it made are reached from this hook too
        for (index i = walk_records_[c].first; i < walk_records_[c].second; ++i) ev_.frontends[i].hooks |= hooks_;
        if (walked_[c] == 2) returned.push_back(std::move(flows[0]));
        return returned;
      }
      walked_[c] = 1;
      walk_records_[c] = {static_cast<index>(ev_.frontends.size()), static_cast<index>(ev_.frontends.size())};
    }
    on_stack_[c] = 1;
    visited_[c] = 1;
    const auto& ch = p_.chains[c];
    for (auto& f : flows)
      if (auto* rec = record_of(f)) rec->chains.push_back(c);
    for (index ri = ch.first; ri < ch.first + ch.count && !flows.empty(); ++ri) {
      const rule& r = p_.rules[ri];
      std::vector<flow> next;
      next.reserve(flows.size());
      for (auto& f : flows) {
        ++f.evaluated;
        const bool rejected = quick_reject(r, f);
        if (!spend(r.origin, rejected)) return {};
        if (rejected) {
          next.push_back(std::move(f));
          continue;
        }
        // Jumps to a masquerade-mark chain (and MARK rules) set the mark and return: record when.
        // (a goto to it is not: the connection then leaves this chain for the one that jumped here, and is
        // followed as any goto is)
        const bool to_mark = r.act.kind == action_kind::jump && r.act.target != none && ev_.mark_chain[r.act.target];
        const bool marks = r.act.kind == action_kind::mark_set && !ev_.mark_chain.empty() && is_masq_program();
        if (to_mark || marks) {
          // the mark takes the connection past the masquerade rule's mark test: record when it is set
          const bool masquerades = to_mark ? masq_mark_chain_[r.act.target] : marks_for_masquerade(r.act.mark);
          auto m = match(r, f, /*ignore_source=*/true);
          if (masquerades && m.full && f.fe != none) {
            auto& rec = ev_.frontends[f.fe];
            rec.masq.push_back({masq_of(r), c});
            rec.origins.push_back(r.origin);
          }
          next.push_back(std::move(f));
          continue;
        }
        auto m = match(r, f);
        if (m.spawn && f.fe != none && f.br < 0) spawn_branch(r, ri, f, m.cls, c, fr, depth);
        // Before any frontend is known the evaluator follows the generic client only: a rule that sends
        // one source range elsewhere here is not followed for it. Say so.
        if (m.spawn && f.fe == none && f.br < 0 && changes_path(r) && first_report(ri))
          warn(r.origin, error_code::unsupported_dispatch,
               m.cls.k == source_class::kind::prefix
                   ? fmt::format("a rule for connections from {} before their destination is known: the graph "
                                 "follows the other clients only",
                                 to_string(m.cls.prefix))
                   : "a rule for some clients only (a source list or set) before their destination is known: "
                     "the graph follows the other clients only");
        const bool narrows = m.has_rest && !f.d.exact() && f.br < 0;
        f.ended.reset();  // m.rest holds it now: a change need not copy it
        for (auto& g : m.matched) {
          if (narrows && ended_before(m.rest, g.d)) continue;
          if (narrows && m.rest.ended)
            if (const ip_prefix* left = m.rest.ended->left_of(g.d)) {
              g.d.has_addr = true;  // only the excluded prefix's traffic is still here
              g.d.addr = *left;
            }
          if (g.d.exact()) g.ended.reset();
          const dest reached = g.d;
          note_origin(g, r.origin);
          maybe_create(g, r.origin, c, r.comment);
          frame callee{c,
                       r.origin,
                       m.random ? selection::statistic_ladder : m.nth ? selection::statistic_nth : selection::single,
                       m.threshold,
                       0,
                       0};
          const std::size_t n_next = next.size();
          act(r, ri, std::move(g), c, fr, callee, depth, next, returned);
          // all of it ended here or left the chain (no part continues with the next rule): the rest of the
          // traffic never has it. What returns is followed on as its own flow.
          if (narrows && m.probability >= 1 && next.size() == n_next) ended_here(m, reached);
        }
        if (m.has_rest) next.push_back(std::move(m.rest));
      }
      flows = std::move(next);
    }
    on_stack_[c] = 0;
    for (auto& f : flows) returned.push_back(std::move(f));
    if (generic_walk) {
      walk_records_[c].second = static_cast<index>(ev_.frontends.size());
      for (const auto& f : returned)
        if (f.fe == none && f.d.any()) walked_[c] = 2;
    }
    return returned;
  }

  /// Whether rule `r`'s match on a set of `count` destinations splits the flow into one flow per
  /// element: small sets, NAT (each element a frontend), and rules that lead on (jump, goto, vmap).
  [[nodiscard]] bool splits_set(const rule& r, std::size_t count) const noexcept {
    return count <= 64 || stage_ == stage::nat || r.act.kind == action_kind::jump ||
           r.act.kind == action_kind::go_to || r.act.kind == action_kind::vmap;
  }

  static bool ended_before(const flow& f, const dest& d) { return f.ended && f.ended->contains(d); }

  /// A rule (matched as `m`) ended or sent out of its chain every connection of `m.rest` to `reached`, a
  /// narrower destination: later rules of the chain do not see them. (A rule whose conditions the graph
  /// only assumed does not end connections at all: see `match`.)
  static void ended_here(match_result& m, const dest& reached) {
    if (dest_equal(reached, m.rest.d)) return;
    if (!m.precise) return;
    if (reached.exact())
      mark_ended(m.rest, reached);
    else if (!reached.has_addr && !reached.local && reached.n_excl == 1)
      mark_ended_but_one(m.rest, reached);
    else
      ended_to_change(m.rest).wider.push_back(reached);
  }

  /// An address without its length when the prefix is one host (`10.96.0.1`), else `address/length`.
  static std::string host_or_prefix(const ip_prefix& p) {
    return p.length == max_prefix_length(p.address.family) ? to_string(p.address) : to_string(p);
  }

  static std::string describe_dest(const dest& d) {
    std::string s = d.local ? "a local address" : d.has_addr ? to_string(d.addr) : "any address";
    if (d.has_proto) s += fmt::format(" {}", protocol_name(d.proto));
    if (d.has_port)
      s += d.port.first == d.port.last ? fmt::format(" port {}", d.port.first)
                                       : fmt::format(" ports {}-{}", d.port.first, d.port.last);
    return s;
  }
  /// The flow's own ended set, to change (shared ones are copied first).
  static ended_set& ended_to_change(flow& f) {
    if (!f.ended)
      f.ended = std::make_shared<ended_set>();
    else if (f.ended.use_count() > 1)
      f.ended = std::make_shared<ended_set>(*f.ended);
    return *f.ended;
  }
  static void mark_ended_but_one(flow& f, const dest& d) { ended_to_change(f).all_but_one.push_back(d); }
  /// An exact destination ended; one whose address is a prefix wider than one address (`-d 10.96.0.0/16 -p
  /// tcp --dport 80 -j ACCEPT`) covers the narrower ones later rules name.
  static void mark_ended(flow& f, const dest& d) {
    auto& e = ended_to_change(f);
    e.by_hash.emplace(dest_hash(d), d);
    if (d.has_addr && d.addr.length < max_prefix_length(d.addr.address.family)) e.wider.push_back(d);
  }

  /// A mark test a masquerade rule sits behind, in its chain: kube-proxy's `-m mark ! --mark M/M -j
  /// RETURN` (iptables) and `meta mark & M == 0 return` (nft). The rule returns when `(mark & mask) ==
  /// value` is `returns_when_equal`.
  struct mark_guard {
    std::uint32_t mask = 0, value = 0;
    bool returns_when_equal = true;
  };
  /// The bits of `frontend_record::hooks` for an evaluation that starts at a base chain on hook `h`:
  /// `frontend_hook` before NAT and in NAT, `after_nat_hook` after it (a prerouting or postrouting chain
  /// after NAT stands before or after both of routing's ways). 0 for no hook (a fallback entry).
  static std::uint8_t hook_bits(hook h, stage st) noexcept {
    namespace a = after_nat_hook;
    if (st == stage::post_dnat)
      return h == hook::prerouting    ? std::uint8_t{a::input | a::forward}
             : h == hook::input       ? a::input
             : h == hook::forward     ? a::forward
             : h == hook::output      ? a::output
             : h == hook::postrouting ? std::uint8_t{a::forward | a::output}
                                      : std::uint8_t{0};
    return h == hook::prerouting ? static_cast<std::uint8_t>(frontend_hook::prerouting)
           : h == hook::output   ? static_cast<std::uint8_t>(frontend_hook::output)
                                 : std::uint8_t{0};
  }
  /// NAT's priority at prerouting and output (nft `dstnat`, NF_IP_PRI_NAT_DST).
  static constexpr std::int32_t nat_priority = -100;
  /// Conntrack's priority at prerouting and output (NF_IP_PRI_CONNTRACK).
  static constexpr std::int32_t conntrack_priority = -200;
  /// Whether a base chain runs before conntrack sees the packet: nft `priority raw` on prerouting or
  /// output. Its `ct state` matches find no conntrack entry: INVALID, never NEW.
  static bool runs_before_conntrack(const chain& ch) noexcept {
    return (ch.at == hook::prerouting || ch.at == hook::output) && ch.priority < conntrack_priority;
  }
  /// The chains reached from `starts` (included) by jumps, gotos and verdict map elements.
  std::vector<char> reach(const std::vector<index>& starts) const {
    std::vector<char> seen(p_.chains.size(), 0);
    std::vector<index> todo;
    const auto go = [&](index t) {
      if (t < p_.chains.size() && !seen[t]) {
        seen[t] = 1;
        todo.push_back(t);
      }
    };
    for (const index c : starts) go(c);
    while (!todo.empty()) {
      const auto& ch = p_.chains[todo.back()];
      todo.pop_back();
      for (index i = ch.first; i < ch.first + ch.count; ++i) {
        const auto& r = p_.rules[i];
        if (r.act.kind == action_kind::jump || r.act.kind == action_kind::go_to) go(r.act.target);
        if (r.act.map < p_.maps.size())
          for (index e = p_.maps[r.act.map].first; e < p_.maps[r.act.map].first + p_.maps[r.act.map].count; ++e)
            go(p_.elements[e].result.target);
      }
    }
    return seen;
  }

  /// For every masquerade rule in the chains `reached` marks, the mark tests before it in its chain.
  void find_masquerade_guards(const std::vector<char>& reached) {
    for (index c = 0; c < p_.chains.size(); ++c) {
      if (!reached[c]) continue;
      const auto& ch = p_.chains[c];
      std::vector<mark_guard> guards;
      for (index i = ch.first; i < ch.first + ch.count; ++i) {
        const auto& r = p_.rules[i];
        if (r.act.kind == action_kind::masquerade) masq_guards_.push_back(guards);
        if (r.act.kind == action_kind::ret && r.count == 1 && p_.conditions[r.first].kind == cond_kind::mark) {
          const auto& c = p_.conditions[r.first];
          guards.push_back({c.a, c.b, !c.negated});
        }
      }
    }
  }
  /// Whether setting mark bits `v` (on a connection without a mark) gets it past the mark tests of some
  /// masquerade rule: a mark chain whose mark no masquerade rule looks for does not masquerade.
  bool marks_for_masquerade(std::uint32_t v) const {
    return std::any_of(masq_guards_.begin(), masq_guards_.end(), [v](const std::vector<mark_guard>& gs) {
      return std::none_of(gs.begin(), gs.end(),
                          [v](const mark_guard& g) { return ((v & g.mask) == g.value) == g.returns_when_equal; });
    });
  }

  bool is_masq_program() const {
    return std::any_of(ev_.mark_chain.begin(), ev_.mark_chain.end(), [](bool b) { return b; });
  }

  void spawn_branch(const rule& r, index ri, const flow& f, const source_class& cls, index c, const frame& fr,
                    std::uint32_t depth) {
    flow b = f;
    b.src = cls;
    b.prefix.clear();
    auto m = match(r, b);
    if (m.matched.empty()) return;
    auto& rec = ev_.frontends[f.fe];
    branch br;
    br.cls = cls;
    br.origin = r.origin;
    br.in_chain = c;
    br.target = (r.act.kind == action_kind::jump || r.act.kind == action_kind::go_to) ? r.act.target : none;
    rec.branches.push_back(std::move(br));
    rec.origins.push_back(r.origin);
    const auto bi = static_cast<std::int32_t>(rec.branches.size() - 1);
    for (auto& g : m.matched) {
      g.br = bi;
      frame callee{c,
                   r.origin,
                   m.random ? selection::statistic_ladder : m.nth ? selection::statistic_nth : selection::single,
                   m.threshold,
                   0,
                   0};
      std::vector<flow> sink_next, sink_ret;  // a branch is followed to where it ends, not beyond
      act(r, ri, std::move(g), c, fr, callee, depth, sink_next, sink_ret);
    }
  }

  void enter(index target, std::string_view name, index origin_for_report, std::size_t slot, flow f,
             const frame& callee, std::uint32_t depth, std::vector<flow>& back) {
    if (target == none) {
      report_dangling(origin_for_report, slot, name, origin_kind::chain);
      back.push_back(std::move(f));  // a jump to nothing: the connection goes on
      return;
    }
    ++f.depth;
    std::vector<flow> in;
    in.push_back(std::move(f));
    auto out = run_chain(target, std::move(in), callee, depth + 1);
    for (auto& g : out) {
      g.depth = g.depth > 0 ? g.depth - 1 : 0;
      back.push_back(std::move(g));
    }
  }

  void verdict_to(const verdict& v, index origin, std::size_t slot, flow f, index c, const frame& fr,
                  const frame& callee, std::uint32_t depth, std::vector<flow>& next, std::vector<flow>& returned,
                  index rule_index) {
    switch (v.kind) {
      case action_kind::jump:
        enter(v.target, v.target_name, origin, slot, std::move(f), callee, depth, next);
        break;
      case action_kind::go_to:
        enter(v.target, v.target_name, origin, slot, std::move(f), callee, depth, returned);
        break;
      case action_kind::ret:
        returned.push_back(std::move(f));
        break;
      case action_kind::accept:
        end(f, make_terminal(terminal::kind::accept), rule_index, c, fr);
        break;
      case action_kind::drop:
        end(f, make_terminal(terminal::kind::drop), rule_index, c, fr);
        break;
      case action_kind::reject:
        end(f, make_terminal(terminal::kind::reject), rule_index, c, fr);
        break;
      default:  // continue
        next.push_back(std::move(f));
        break;
    }
  }

  void act(const rule& r, index ri, flow f, index c, const frame& fr, const frame& callee, std::uint32_t depth,
           std::vector<flow>& next, std::vector<flow>& returned) {
    const auto& a = r.act;
    switch (a.kind) {
      case action_kind::none:
      case action_kind::other:
        if (a.effect == other_effect::unmodelled_nat && stage_ == stage::nat && first_report(ri))
          warn(r.origin, error_code::unsupported_dispatch,
               "a translation the graph does not model (its address or port comes from a map or an expression): "
               "the connections it translates are not in the graph");
        // An untracked connection is never translated (NAT works on conntrack entries): a `notrack`
        // before NAT that meets a frontend's connections changes its dispatch, which is not modelled.
        if (a.effect == other_effect::notrack && stage_ == stage::pre_dnat && f.d.exact() && first_report(ri))
          warn(r.origin, error_code::unsupported_dispatch,
               "connections here are not tracked (notrack), so NAT does not translate them; the graph does not "
               "model it and shows their dispatch as if tracked");
        next.push_back(std::move(f));
        return;
      case action_kind::set_update:
        next.push_back(std::move(f));
        return;
      case action_kind::mark_set:
        f.mark = (f.mark & ~a.mark_mask) ^ a.mark;
        next.push_back(std::move(f));
        return;
      case action_kind::jump:
        enter(a.target, a.target_name, r.origin, ri, std::move(f), callee, depth, next);
        return;
      case action_kind::go_to:
        enter(a.target, a.target_name, r.origin, ri, std::move(f), callee, depth, returned);
        return;
      case action_kind::ret:
        returned.push_back(std::move(f));
        return;
      case action_kind::accept:
      case action_kind::masquerade:
      case action_kind::snat:
        end(f, make_terminal(terminal::kind::accept), ri, c, fr);
        return;
      case action_kind::drop:
        end(f, make_terminal(terminal::kind::drop), ri, c, fr);
        return;
      case action_kind::reject: {
        terminal t = make_terminal(terminal::kind::reject);
        t.reject4 = a.reject4;
        t.reject6 = a.reject6;
        end(f, std::move(t), ri, c, fr);
        return;
      }
      case action_kind::dnat:
      case action_kind::redirect: {
        terminal t;
        t.k = a.kind == action_kind::dnat ? terminal::kind::dnat : terminal::kind::redirect;
        t.addr = a.addr;
        t.has_port = a.has_port;
        t.port = a.ports.first;
        if (a.addr_range && first_report(ri))
          warn(r.origin, error_code::unsupported_dispatch,
               "DNAT to an address range: the graph keeps its first address as the endpoint");
        else if (a.has_port && a.ports.last != a.ports.first && first_report(ri))
          warn(r.origin, error_code::unsupported_dispatch,
               fmt::format("{} to a port range: the graph keeps its first port ({}) as the endpoint's",
                           a.kind == action_kind::dnat ? "DNAT" : "REDIRECT", a.ports.first));
        end(f, t, ri, c, fr);
        return;
      }
      case action_kind::vmap:
        run_vmap(r, ri, std::move(f), c, fr, depth, next, returned);
        return;
      case action_kind::numgen_vmap:
      case action_kind::hash_vmap:
        run_numgen(r, ri, std::move(f), c, fr, depth, next, returned);
        return;
    }
  }

  void run_vmap(const rule& r, index ri, flow f, index c, const frame& fr, std::uint32_t depth, std::vector<flow>& next,
                std::vector<flow>& returned) {
    const auto& a = r.act;
    ++f.lookups;
    if (a.map == none) {
      report_dangling(r.origin, ri, a.target_name, origin_kind::map);
      next.push_back(std::move(f));
      return;
    }
    const auto& mp = p_.maps[a.map];
    const auto& key = a.key.empty() ? mp.key : a.key;
    bool consumed = false;
    // the key's every field is one a destination holds (address, protocol, port): an element decides it
    const bool decided_key = std::all_of(
        key.begin(), key.end(), [](field k) { return k == field::daddr || k == field::l4proto || k == field::dport; });
    for (index e = mp.first; e < mp.first + mp.count && !consumed; ++e) {
      const auto& el = p_.elements[e];
      if (!spend(el.origin)) return;
      flow g = f;
      bool ok = true, implied = true;
      for (std::size_t k = 0; k < key.size() && k < el.count && ok; ++k) {
        const auto& v = p_.values[el.first + k];
        const refine res = refine_field(g.d, key[k], v);  // other key fields do not decide the destination
        if (res == refine::contradiction) ok = false;
        if (res == refine::narrowed) implied = false;
      }
      if (!ok) continue;
      if (implied) consumed = true;
      const bool narrows = !implied && !f.d.exact() && f.br < 0;
      if (narrows && ended_before(f, g.d)) continue;
      if (g.d.exact()) g.ended.reset();
      const dest reached = g.d;
      note_origin(g, el.origin);
      maybe_create(g, el.origin, c, el.comment);
      frame callee{c, el.origin, selection::single, 0, 0, 0};
      const std::size_t n_next = next.size();
      verdict_to(el.result, el.origin, p_.rules.size() + e, std::move(g), c, fr, callee, depth, next, returned, ri);
      // all of it ended here or left the chain: the rest of the traffic never has it (see ended_here)
      if (narrows && next.size() == n_next) {
        if (reached.exact())
          mark_ended(f, reached);
        else if (decided_key)
          ended_to_change(f).wider.push_back(reached);
      }
    }
    if (!consumed) next.push_back(std::move(f));
  }

  void run_numgen(const rule& r, index ri, flow f, index c, const frame& fr, std::uint32_t depth,
                  std::vector<flow>& next, std::vector<flow>& returned) {
    const auto& a = r.act;
    if (a.map == none) {
      report_dangling(r.origin, ri, a.target_name, origin_kind::map);
      next.push_back(std::move(f));
      return;
    }
    const auto& mp = p_.maps[a.map];
    const std::uint64_t lo = a.offset, hi = static_cast<std::uint64_t>(a.offset) + a.modulus;  // [lo, hi)
    std::uint64_t covered = 0;
    const selection mech = a.kind == action_kind::hash_vmap ? selection::hash
                           : a.text == "inc"                ? selection::numgen_inc
                                                            : selection::numgen_random;
    // A hash picks by the fields it hashes: one connection's fields always give the same slot, so the
    // shares are those of the traffic's mix of fields (all of one frontend's connections go one way when
    // the fields are its destination), not a probability the dump fixes. Taken as uniform, and said.
    if (mech == selection::hash && first_report(ri))
      warn(r.origin, error_code::unsupported_dispatch,
           "a hash (jhash, symhash) selects by the fields it hashes, so the shares depend on the connections' "
           "addresses and ports; taken as uniform over the hash values");
    for (index e = mp.first; e < mp.first + mp.count; ++e) {
      const auto& el = p_.elements[e];
      if (!spend(el.origin)) return;
      if (el.count == 0) continue;
      const auto& v = p_.values[el.first];
      const std::uint64_t s0 = std::max<std::uint64_t>(v.lo, lo), s1 = std::min<std::uint64_t>(v.hi + 1ULL, hi);
      if (s1 <= s0 || a.modulus == 0) continue;
      const auto slots = static_cast<std::uint32_t>(s1 - s0);
      covered += slots;
      flow g = f;
      g.mass = f.mass * static_cast<double>(slots) / a.modulus;
      if (auto* rec = record_of(g)) rec->origins.push_back(el.origin);
      frame callee{c, el.origin, mech, 0, a.modulus, slots};
      verdict_to(el.result, el.origin, p_.rules.size() + e, std::move(g), c, fr, callee, depth, next, returned, ri);
    }
    if (covered < a.modulus) {
      f.mass *= static_cast<double>(a.modulus - covered) / a.modulus;
      next.push_back(std::move(f));
    }
  }

  const program& p_;
  std::vector<diagnostic>& out_;
  std::vector<dangling_reference>& dangling_;
  const limits& lim_;
  evaluation ev_;
  stage stage_ = stage::nat;
  std::vector<bool> reported_;
  std::vector<std::uint8_t> local_reported_;
  std::optional<terminal> probe_end_;  // how the endpoint being probed after NAT ended (drop, reject)  // per rule: fib-local assumptions reported (1: named, 2: from a set)
  std::vector<std::uint8_t> on_stack_;
  std::vector<std::uint8_t> walked_;
  std::vector<std::pair<index, index>> walk_records_;  // per walked chain: the frontend records its walk made
  std::vector<std::uint8_t> visited_;
  std::vector<std::uint8_t> jumped_to_;  // per chain: some rule or map element jumps or goes to it
  index premark_ = none;                 // a rule before NAT that sets a (conntrack) mark, if any
  std::uint8_t hooks_ = 0;               // hook_bits of the entry being evaluated
  bool before_conntrack_ = false;        // the entry runs before conntrack (see runs_before_conntrack)
  std::string describe(index origin) const {
    const auto& o = p_.origins[origin];
    const auto& src = p_.sources[o.source];
    if (!src) return "an earlier rule";
    const auto loc = src->locate(o.where);
    return fmt::format("{}:{}", src->name(), loc.line);
  }
  /// Frontends this run recorded at a translation reached before the destination was exact, by dest_hash.
  std::unordered_multimap<std::size_t, index> inexact_;
  std::vector<std::vector<mark_guard>> masq_guards_;
  bool hooked_ = false;                // the dump has the hooks' jumps (see the constructor)
  std::vector<bool> masq_mark_chain_;  // mark chains whose mark a masquerade rule looks for
  const std::uint64_t budget_;
  const std::uint64_t cheap_budget_;
  std::uint64_t steps_ = 0;
  std::uint64_t cheap_steps_ = 0;
  bool exhausted_ = false;
};

}  // namespace

evaluation evaluate(const program& p, std::vector<diagnostic>& out, std::vector<dangling_reference>& dangling,
                    const graph_options& opt) {
  evaluator e(p, out, dangling, opt);
  return e.run();
}

}  // namespace nflens::dispatch
