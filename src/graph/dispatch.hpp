// SPDX-License-Identifier: MIT
#pragma once

// The dispatch program: what the graph builder evaluates. Each backend lowers its AST into this small,
// flat form (chains of rules made of conditions and one action; verdict maps with typed keys), keeping
// only what decides where a new connection is translated to; everything else becomes an `opaque`
// condition or an `other` action with its origin, so nothing is dropped unseen. The evaluator
// (evaluate.cpp) and the assembler (assemble.cpp) know nothing of either syntax.
//
// Private to the library (src/graph/); tests include it to build programs by hand.

#include <nflens/graph.hpp>

#include <cstdint>
#include <string_view>
#include <optional>
#include <vector>

namespace nflens::dispatch {

using index = std::uint32_t;
inline constexpr index none = ~index{0};

/// Which packet field a condition or a map key tests.
enum class field : std::uint8_t { daddr, saddr, l4proto, dport, sport, iif, oif, number, other };

/// A typed key or match value.
struct value {
  enum class kind : std::uint8_t { prefix, range, protocol, ports, number } k = kind::prefix;
  ip_prefix prefix;  // prefix; range: first address
  ip_address last;   // range: last address
  l4_protocol proto = l4_protocol::any;
  port_range ports;              // ports; number: [first, last] as 16 bits is too small, see `lo`/`hi`
  std::uint32_t lo = 0, hi = 0;  // number ranges (numgen slots)
};

enum class cond_kind : std::uint8_t {
  always,        // no effect on matching (comment, counter, nfacct, log prefix-less statements)
  addr,          // `what` (daddr/saddr) in values[first, first+count) (prefixes or ranges)
  addr_local,    // `what` is a local address (iptables addrtype LOCAL, nft fib ... type local)
  addr_set,      // `what` in named set `set` (index into program::sets) — dangling when set == none
  tuple,         // the concatenation of the key fields of map `set` (an index into program::maps: the
                 // anonymous set's elements, verdicts unused) is one of its elements (nft `ip daddr . tcp
                 // dport { 10.96.0.10 . 53 }`); key fields are destination fields only
  protocol,      // l4 protocol in values (kind protocol)
  port,          // `what` (dport/sport) in values (kind ports)
  random,        // statistic random: `threshold` (probability threshold / 2^31)
  nth,           // statistic nth: every `a`, packet `b`
  recent_check,  // iptables recent --rcheck/--update on the source: list `name`, `a` seconds (0: none), `b`
                 // --hitcount (0: none); `what` other: keyed by destination (--rdest) or a network (--mask)
  recent_set,    // iptables recent --set: records the source in list `name` (always matches)
  ct_state,      // conntrack state in mask `a` (ct_bits)
  mark,          // (meta mark & a) == b
  iface,         // `what` (iif/oif) named `name` (iptables + wildcard when `b` != 0)
  opaque,        // anything else; `name` is its text for reports
  never,         // no connection of the program's family meets it (nft `meta nfproto ipv6` in an IPv4 graph)
};

/// Conntrack state bits for `cond_kind::ct_state`.
enum ct_bits : std::uint32_t {
  ct_new = 1,
  ct_established = 2,
  ct_related = 4,
  ct_invalid = 8,
  ct_untracked = 16,
  ct_snat = 32,
  ct_dnat = 64
};

struct condition {
  cond_kind kind = cond_kind::always;
  field what = field::other;
  bool negated = false;
  index first = 0, count = 0;  // values
  index set = none;            // addr_set
  std::uint32_t threshold = 0;
  std::uint32_t a = 0, b = 0;
  std::string_view name;  // set name (also when dangling), recent list, interface, opaque text
};

enum class action_kind : std::uint8_t {
  none,   // no verdict: continue with the next rule
  jump,   // `target`; returns
  go_to,  // `target`; does not return to this chain
  ret,    // return
  accept,
  drop,
  reject,
  dnat,      // to `addr` [..`addr_last`] [: ports]
  redirect,  // to a local port
  masquerade,
  snat,
  mark_set,     // meta mark = (mark & ~a) ^ b ... only "sets a mark" matters here
  set_update,   // nft `update @set { ip saddr }` / `add @set`: records the source (affinity)
  vmap,         // lookup of key fields[..] in `map` (or inline elements) → verdict
  numgen_vmap,  // numgen random|inc mod `modulus` offset `offset` vmap → verdict
  hash_vmap,    // jhash/symhash ... mod `modulus` vmap → verdict
  other,        // anything else, no verdict (LOG, counter-only, CT, ...)
};

/// A verdict map: key fields and elements (named map, or the inline `vmap { ... }` of one rule).
struct map {
  std::string_view name;  // empty for inline maps
  index origin = none;    // the declaration
  std::vector<field> key;
  index first = 0, count = 0;  // elements
  bool dynamic = false;
  std::uint32_t timeout_s = 0;
};

/// A verdict: accept, drop, reject, return, continue, jump or goto `target`.
struct verdict {
  action_kind kind = action_kind::none;  // none = continue
  index target = none;                   // chain, when jump / go_to (none: dangling)
  std::string_view target_name;
};

struct element {
  index first = 0;  // key values (one per key field)
  std::uint8_t count = 0;
  verdict result;
  index origin = none;
  std::string_view comment;
};

/// A named set used in lookups (`ip daddr @cluster-ips`).
struct set {
  std::string_view name;
  index origin = none;
  index first = 0, count = 0;  // values
  bool dynamic = false;
  std::uint32_t timeout_s = 0;
};

/// What an `other` action does that matters to the evaluator.
enum class other_effect : std::uint8_t {
  none,
  notrack,         // iptables `-j NOTRACK` / `-j CT --notrack`, nft `notrack`: NAT never sees the connection
  conntrack_mark,  // CONNMARK, nft `ct mark set`: later conntrack mark matches see it
  unmodelled_nat,  // a translation the lowering cannot represent (nft `dnat to numgen ... map { ... }`)
};

struct action {
  action_kind kind = action_kind::none;
  index target = none;  // jump / go_to chain (none: dangling, see target_name)
  std::string_view target_name;
  // dnat / redirect
  ip_address addr;
  bool has_addr = false;
  bool addr_range = false;
  ip_address addr_last;
  bool has_port = false;
  port_range ports;
  // vmap family
  index map = none;        // named or inline map; none: dangling named map
  std::vector<field> key;  // the looked-up key (vmap)
  std::uint32_t modulus = 0, offset = 0;
  // mark_set: the new mark is (mark & ~mark_mask) ^ mark, as xt_mark and nft `meta mark set` compute it
  std::uint32_t mark = 0, mark_mask = 0;
  // reject: the answer to an IPv4 and to an IPv6 connection
  reject_reply reject4, reject6{reject_reply::kind::icmpv6, 4};
  index set = none;        // set_update
  std::optional<std::uint32_t> set_timeout_s;  // set_update: the element's own timeout (`timeout 1h`), in s
  bool set_add = false;  // set_update written `add @S`: an element already there keeps its timer (not restarted)
  std::string_view text;   // `other`: what it is, for reports
  other_effect effect = other_effect::none;  // `other`: what of it the evaluator must know
};

struct rule {
  index origin = none;
  index first = 0, count = 0;  // conditions
  action act;
  std::string_view comment;
};

enum class table_kind : std::uint8_t { nat, filter, other };
enum class hook : std::uint8_t { none, prerouting, input, forward, output, postrouting };

struct chain {
  std::string_view name;
  index origin = none;
  table_kind table = table_kind::other;
  hook at = hook::none;       // base chains
  std::int32_t priority = 0;  // base chains
  action_kind policy = action_kind::accept;
  index first = 0, count = 0;  // rules
  bool written = false;        // kube-proxy writes it in its iptables-restore input (update cost model)
};

/// When an entry chain is evaluated.
enum class stage : std::uint8_t {
  pre_dnat,   // filter hooks before DNAT (nft prerouting/output priority < -100): source gates
  nat,        // DNAT
  post_dnat,  // filter hooks after DNAT: verdicts on what NAT left untranslated
};

struct entry {
  index chain = none;
  stage when = stage::nat;
};

/// A whole ruleset in dispatch form.
struct program {
  std::string backend;
  ip_family family = ip_family::ipv4;
  std::vector<source_ptr> sources;
  std::vector<origin> origins;
  std::vector<chain> chains;
  std::vector<rule> rules;
  std::vector<condition> conditions;
  std::vector<value> values;
  std::vector<map> maps;
  std::vector<element> elements;
  std::vector<set> sets;
  std::vector<entry> entries;  // in evaluation order within a stage
  /// Chains kube-proxy's entry points are known by, used only to start evaluation when no hook reaches
  /// them; lowered by the backend (iptables KUBE-SERVICES etc., nft `services`).
  std::vector<entry> fallback_entries;
  /// A set whose addresses are ClusterIPs (nft `cluster-ips`), when the ruleset has one.
  index cluster_ip_set = none;
  /// A filter chain whose verdict rules are for ClusterIPs (iptables filter KUBE-SERVICES).
  index cluster_ip_chain = none;
  /// A NAT chain whose dispatch is NodePorts, for whatever address jumps to it (iptables KUBE-NODEPORTS).
  index nodeport_chain = none;
  ruleset_structure structure;
};

/// Builds the graph of a program (evaluate + assemble); diagnostics are appended to `out`.
dispatch_graph build(const program& p, std::vector<diagnostic>& out, const graph_options& opt = {});

}  // namespace nflens::dispatch
