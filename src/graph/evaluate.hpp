// SPDX-License-Identifier: MIT
#pragma once

// Symbolic evaluation of a dispatch program: new connections are followed from the hooks through jumps,
// gotos, verdict maps, numgen and statistic splits, down to DNAT, drop, reject or "no translation".
//
// A connection is a *flow*: what is known about its destination (address or "local", protocol, port),
// which source it stands for (a generic external client, or a specific class singled out by a rule), and
// its share of the traffic. Rules narrow destinations; once a destination is exact (address or "local",
// protocol and port) the flow is a *frontend*, recorded with everything that happens to it. Rules that
// single out sources (pod CIDR short-circuits, LoadBalancer source ranges, affinity lookups) do not apply
// to the generic client; they are followed as *branches* of the frontend and recorded with their results.

#include "dispatch.hpp"

#include <vector>

namespace nflens::dispatch {

/// What is known about a flow's destination.
struct dest {
  bool has_addr = false;
  bool local = false;
  bool has_proto = false;
  bool has_port = false;
  std::uint8_t n_excl = 0;
  l4_protocol proto = l4_protocol::any;
  ip_prefix addr;
  port_range port{0, 65535};
  std::array<ip_prefix, 3> excl{};
  index addr_set = none;  // the named set the address was taken from

  [[nodiscard]] bool exact() const noexcept { return (has_addr || local) && has_proto && has_port; }
  [[nodiscard]] bool any() const noexcept { return !has_addr && !local && !has_proto && !has_port && n_excl == 0; }
};

/// Which source a flow stands for.
struct source_class {
  enum class kind : std::uint8_t { generic, prefix, local, affinity } k = kind::generic;
  ip_prefix prefix;
  std::string_view list;  // affinity: recent list or set name
  std::uint32_t timeout_s = 0;
};

/// Where a flow ended.
struct terminal {
  enum class kind : std::uint8_t { dnat, redirect, drop, reject, accept, fall } k = kind::fall;
  double mass = 0;
  index rule = none;              // the rule that ended it
  index endpoint_chain = none;    // chain of the DNAT rule
  index selection_chain = none;   // first chain above the DNAT chain (the service's selection)
  index selection_origin = none;  // rule or vmap element that picked the endpoint chain
  selection mech = selection::single;
  std::uint32_t threshold = 0, modulus = 0, slots = 0;
  ip_address addr;
  bool has_port = false;
  std::uint16_t port = 0;
  std::uint32_t depth = 0;  // chains between the frontend's creation and this end
  reject_reply reject4, reject6{reject_reply::kind::icmpv6, 4};  // kind::reject: the answer (see action)
};

/// A masquerade condition met on a path, and the chain it was met in.
struct masq_event {
  masquerade m;
  index chain = none;
};

/// A source-specific branch of a frontend.
struct branch {
  source_class cls;
  index origin = none;  // the rule (or element) that singles the source out
  index in_chain = none;
  index target = none;  // chain entered, none when the rule itself ended it
  std::vector<terminal> results;
};

/// Everything recorded about one frontend (a flow with an exact destination).
struct frontend_record {
  dest d;
  stage when = stage::nat;
  index parent = none;        // a wider frontend this one was narrowed from
  index entry_origin = none;  // the rule or element that made the destination exact
  index entry_chain = none;
  std::uint32_t evaluated = 0, lookups = 0;
  std::vector<terminal> results;  // the generic client
  std::vector<branch> branches;
  std::vector<masq_event> masq;
  std::vector<index> origins;  // rules and elements met, in order (entry path first)
  std::vector<index> chains;   // chains entered
  std::string_view comment;    // the entry rule's or element's comment
  /// The hooks of the base chains the evaluations that reached it started from: `frontend_hook` bits
  /// (before NAT and in NAT), or `after_nat_hook` bits (stage::post_dnat). 0 for a fallback entry.
  std::uint8_t hooks = 0;
};

/// Where a chain after NAT runs (`frontend_record::hooks` of stage::post_dnat): connections NAT left
/// untranslated reach input (to a local address) or forward (to any other) when they arrived, output when
/// this node made them (netfilter's hook order: prerouting, then routing picks input or forward).
namespace after_nat_hook {
inline constexpr std::uint8_t input = 1, forward = 2, output = 4;
/// The hooks after NAT that connections NAT saw at `hooks` (frontend_hook bits) go on to: input and
/// forward for prerouting (routing alone picks one), output for output.
constexpr std::uint8_t after(std::uint8_t frontend_hooks) noexcept {
  return static_cast<std::uint8_t>(
      ((frontend_hooks & static_cast<std::uint8_t>(frontend_hook::prerouting)) != 0 ? input | forward : 0) |
      ((frontend_hooks & static_cast<std::uint8_t>(frontend_hook::output)) != 0 ? output : 0));
}
}  // namespace after_nat_hook

/// What the chains after NAT (filter forward, input, output) do to new connections NAT translated to an
/// endpoint: they see the endpoint's address and port, not the frontend's. Only drops and rejects are kept.
struct endpoint_verdict {
  ip_address addr;
  l4_protocol proto = l4_protocol::any;
  std::uint16_t port = 0;
  terminal end;  // kind drop or reject, the rule, the answer
};

/// The evaluation of a whole program.
struct evaluation {
  std::vector<endpoint_verdict> after_nat;
  std::vector<frontend_record> frontends;
  std::vector<bool> mark_chain;  // chains that only set a (masquerade) mark
};

/// Evaluates every entry of `p`; dangling references and constructs that cannot be evaluated are reported
/// to `out` (once per rule) and to `dangling`.
evaluation evaluate(const program& p, std::vector<diagnostic>& out, std::vector<dangling_reference>& dangling,
                    const graph_options& opt);

}  // namespace nflens::dispatch
