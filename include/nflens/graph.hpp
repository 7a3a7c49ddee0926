// SPDX-License-Identifier: MIT
#pragma once

/// @file
/// The backend-independent service dispatch graph: frontend → service → endpoints, with exact selection
/// probabilities, built by evaluating a ruleset's NAT dispatch (iptables or nftables), and the exact
/// probability arithmetic both backends use.
///
/// A *frontend* is what a client addresses (an address or "any local address", a protocol, a port). A
/// *service* groups the frontends that lead to one endpoint selection; it carries the Kubernetes identity
/// (`namespace/name:port`) when the ruleset records it (kube-proxy comments, chain and element names).
/// An *endpoint* is a DNAT destination with the share of new connections it receives.
///
/// Every element points back to the rules, map elements and chains that produced it (`origin`), so a
/// report can quote them with file:line. Facts a dump cannot show (see `service::unknown`) are marked as
/// such instead of being guessed.

#include <nflens/diagnostic.hpp>
#include <nflens/net.hpp>
#include <nflens/source.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nflens {

/// What kind of ruleset element an `origin` points at.
enum class origin_kind : std::uint8_t {
  rule,         ///< an iptables rule line or an nft rule
  map_element,  ///< an element of an nft map or verdict map (`172.30.0.41 . tcp . 80 : goto X`)
  set_element,  ///< an element of an nft set
  chain,        ///< a chain declaration
  set,          ///< an nft set declaration
  map,          ///< an nft map declaration
};

/// `"rule"`, `"map-element"`, `"set-element"`, `"chain"`, `"set"`, `"map"`.
[[nodiscard]] std::string_view origin_kind_name(origin_kind k) noexcept;

/// A ruleset element that produced part of the graph: an index into `dispatch_graph::sources`, the span
/// of the element's text in that source, and what the element is. 16 bytes.
struct origin {
  std::uint32_t source = 0;
  span where;
  origin_kind kind = origin_kind::rule;
  friend constexpr bool operator==(const origin&, const origin&) noexcept = default;
};

/// How a frontend is reached. kube-proxy writes ClusterIP, NodePort, external IP and LoadBalancer IP
/// frontends; any other DNAT (Docker's published ports, hand-written rules) is `dnat`.
enum class frontend_kind : std::uint8_t {
  cluster_ip,
  node_port,
  external_ip,
  load_balancer_ip,
  /// An external IP or a LoadBalancer IP: the dump writes both the same way and does not say which (kube-proxy
  /// nftables mode for a LoadBalancer IP without source ranges; both modes for services without endpoints).
  external_or_load_balancer_ip,
  dnat,  ///< a DNAT frontend without kube-proxy identity
};

/// `"cluster-ip"`, `"node-port"`, `"external-ip"`, `"load-balancer-ip"`, `"external-or-load-balancer-ip"`, `"dnat"`.
[[nodiscard]] std::string_view frontend_kind_name(frontend_kind k) noexcept;

/// What new connections to a frontend get, for a client that no source-specific rule singles out.
enum class outcome : std::uint8_t {
  dispatch,        ///< DNAT to the service's endpoints (cluster-wide selection)
  dispatch_local,  ///< DNAT to the node-local endpoints only (externalTrafficPolicy: Local)
  reject,          ///< rejected (kube-proxy: the service has no endpoints)
  drop,            ///< dropped (kube-proxy: no local endpoints under the Local policy)
  none,            ///< not translated and not refused: the packet goes on untouched
};

/// `"dispatch"`, `"dispatch-local"`, `"reject"`, `"drop"`, `"none"`.
[[nodiscard]] std::string_view outcome_name(outcome o) noexcept;
/// The words of the text outputs (graph and compare) for what a connection gets: `outcome_name`, except
/// `"not ended"` for `none` (no rule decides: the packet goes on untouched).
[[nodiscard]] std::string_view outcome_text(outcome o) noexcept;

/// What the kernel answers a rejected connection with: an ICMP (IPv4) or ICMPv6 destination-unreachable
/// code, or a TCP reset. iptables-extensions(8) REJECT `--reject-with` (default icmp-port-unreachable,
/// icmp6-port-unreachable); nft(8) `reject [with icmp|icmpv6|icmpx CODE | with tcp reset]`, whose bare
/// form and icmpx codes the kernel turns into the code of the packet's family (nft_reject: icmpx no-route
/// is IPv4 net-unreachable and IPv6 no-route, host-unreachable is IPv6 addr-unreachable).
struct reject_reply {
  enum class kind : std::uint8_t { icmp, icmpv6, tcp_reset } type = kind::icmp;
  std::uint8_t code = 3;  ///< ICMP code (3: port-unreachable) or ICMPv6 code (4: port-unreachable); 0 for tcp_reset
  friend constexpr bool operator==(const reject_reply&, const reject_reply&) noexcept = default;
};
/// nft's spelling: `"icmp port-unreachable"`, `"icmpv6 no-route"`, `"tcp reset"`; `"icmp 7"` for a code
/// without a name.
[[nodiscard]] std::string reject_reply_name(const reject_reply& r);

/// When a connection through a frontend is masqueraded (source NAT to the node's address). kube-proxy
/// marks such packets (mark 0x4000) and masquerades marked packets in POSTROUTING; nflens follows the mark.
enum class masquerade_when : std::uint8_t {
  always,          ///< every connection (kube-proxy: external traffic under the Cluster policy)
  source_outside,  ///< when the source is outside `prefix` (kube-proxy: ClusterIP traffic from outside the pod CIDR)
  source_inside,   ///< when the source is inside `prefix` (kube-proxy: an endpoint reaching itself, "hairpin")
  source_local,    ///< when the source is a local address of the node (kube-proxy: Local policy, node-originated)
};

/// `"always"`, `"source-outside"`, `"source-inside"`, `"source-local"`.
[[nodiscard]] std::string_view masquerade_when_name(masquerade_when w) noexcept;

/// One masquerade condition on a path.
struct masquerade {
  masquerade_when when = masquerade_when::always;
  ip_prefix prefix;  ///< for `source_outside` / `source_inside`
  friend constexpr auto operator<=>(const masquerade&, const masquerade&) noexcept = default;
  friend constexpr bool operator==(const masquerade&, const masquerade&) noexcept = default;
};

/// One endpoint's share of a frontend's new connections (`frontend::shares`).
struct endpoint_share {
  ip_address address;
  bool has_port = false;
  std::uint16_t port = 0;
  double probability = 0;  ///< in [0, 1]; what the shares leave of 1 is not translated
  friend constexpr bool operator==(const endpoint_share&, const endpoint_share&) noexcept = default;
};

/// What a client addresses.
struct frontend {
  frontend_kind kind = frontend_kind::dnat;
  /// True: any local address of the node (iptables `-m addrtype --dst-type LOCAL`, nft `fib daddr type
  /// local`), optionally narrowed by `address` (e.g. 127.0.0.0/8 for localhost NodePorts).
  bool any_local = false;
  bool has_address = false;         ///< false with `any_local` alone
  ip_prefix address;                ///< the destination (a full-length prefix for one address)
  std::vector<ip_prefix> excluded;  ///< destinations excluded (`! -d 127.0.0.0/8`, `ip daddr != ::1`)
  l4_protocol protocol = l4_protocol::any;
  port_range port;  ///< destination port; {0, 65535} when any
  outcome result = outcome::none;
  reject_reply reject_with;  ///< the answer to new connections when `result` is `reject`
  /// When not empty, only these sources reach the service (LoadBalancer source ranges: iptables KUBE-FW-*
  /// chains, nft `firewall-ips` → `ip saddr != { ... } drop`); `other_sources` says what the rest gets.
  std::vector<ip_prefix> source_ranges;
  /// With `source_ranges`: what new connections from other sources get. `drop` or `reject` by the gate
  /// before NAT (nft) or by the filter chains after it (iptables KUBE-PROXY-FIREWALL); `none` when nothing
  /// ends them (they pass on untranslated).
  outcome other_sources = outcome::none;
  /// Sources that bypass the default outcome and reach the cluster-wide selection (kube-proxy, Local
  /// policy: pod traffic and node-local traffic are "short-circuited").
  std::vector<ip_prefix> short_circuit_sources;
  bool short_circuit_local = false;     ///< node-local sources are short-circuited too
  /// This frontend's own endpoint shares, when its connections are not split as the service's selection
  /// says (`endpoint::probability` for `dispatch`, `endpoint::local_probability` for `dispatch_local`): a
  /// rule on its way that singles out its destination, a selection that returns for it alone. Sorted by
  /// address and port; empty when the service's shares hold.
  std::vector<endpoint_share> shares;
  /// The same for short-circuited clients, when they do not reach the service's cluster-wide shares (a
  /// short-circuit into another service's selection, or into the Local one).
  std::vector<endpoint_share> short_circuit_shares;
  std::vector<masquerade> masquerades;  ///< masquerade conditions on the way to the service
  std::uint32_t rules_evaluated = 0;    ///< rules a new connection evaluates from the hook until its service
  std::uint32_t lookups = 0;            ///< set or map lookups on that way
  std::vector<origin> origins;          ///< rules and map elements that define it, entry first
  /// Where NAT translates these connections: `frontend_hook` bits — arriving ones (prerouting), the
  /// node's own (output). 0 when the dump has no hook chains to tell (kube-proxy's restore input).
  std::uint8_t hooks = 0;
};

/// Bits of `frontend::hooks`.
enum class frontend_hook : std::uint8_t { prerouting = 1, output = 2 };

/// How an endpoint is chosen among the others.
enum class selection : std::uint8_t {
  single,            ///< the only destination (probability 1)
  statistic_ladder,  ///< iptables `-m statistic --mode random --probability p` rules in sequence
  statistic_nth,     ///< iptables `-m statistic --mode nth --every n --packet p`
  numgen_random,     ///< nft `numgen random mod N vmap { ... }`
  numgen_inc,        ///< nft `numgen inc mod N vmap { ... }` (round robin)
  hash,              ///< nft `jhash` / `symhash ... mod N vmap` (per flow; uniform over hash values)
};

/// `"single"`, `"statistic-ladder"`, `"statistic-nth"`, `"numgen-random"`, `"numgen-inc"`, `"hash"`.
[[nodiscard]] std::string_view selection_name(selection s) noexcept;

/// A DNAT destination of a service.
struct endpoint {
  ip_address address;
  bool has_port = false;  ///< false: the destination port is left as the client sent it
  std::uint16_t port = 0;
  /// Share of new connections (cluster-wide selection), exact as the kernel applies the rules: the product of
  /// the ladder's 31-bit fixed-point probabilities, or slots/N for numgen. In [0, 1].
  double probability = 0;
  /// Share under the selection external frontends use when it is not the ClusterIP's (kube-proxy:
  /// externalTrafficPolicy Local, node-local endpoints), when this endpoint is in it. An endpoint only
  /// that selection reaches is listed too, with `probability` 0.
  std::optional<double> local_probability;
  selection mechanism = selection::single;
  /// For `statistic_ladder`: the kernel's threshold of the rule that picks this endpoint (probability =
  /// threshold / 2^31), or 2^31 for the final rule without `-m statistic`. For numgen: the number of slots.
  std::uint32_t threshold = 0;
  std::uint32_t position = 0;           ///< 0-based position in the ladder or first numgen slot
  std::uint32_t modulus = 0;            ///< numgen: N
  bool affinity = false;                ///< a ClientIP affinity rule leads to this endpoint
  /// With `affinity`: how long a client is remembered for this endpoint, in seconds (the `recent
  /// --seconds` of its rule, or its nft affinity set's `timeout`); 0: no timeout (`--rcheck` without
  /// `--seconds`, a set without `timeout`). The service's `affinity_timeout_s` is the longest of its
  /// endpoints'.
  std::uint32_t affinity_timeout_s = 0;
  std::vector<masquerade> masquerades;  ///< masquerade conditions in the endpoint's own rules (hairpin)
  /// `drop` or `reject` when the chains after NAT (filter forward, input, output: they see the endpoint's
  /// address and port, not the frontend's) end the new connections translated to it; `none` when they pass.
  outcome after_nat = outcome::none;
  std::vector<origin> origins;          ///< the selecting rule or vmap element, then the endpoint's rules
};

/// An endpoint as text: `10.244.1.11:8080`, `[fd00:10:244::5]:53`, or the address alone when DNAT keeps
/// the client's port (an IPv6 one still in brackets, so that its last group is not read as a port).
[[nodiscard]] std::string endpoint_text(const endpoint& e);
[[nodiscard]] std::string endpoint_text(const endpoint_share& e);
/// Shares as text, `10.244.1.11:8080 0.500000, 10.244.2.12:8080 0.500000` (`none` when empty).
[[nodiscard]] std::string shares_text(const std::vector<endpoint_share>& shares);

/// Facts about a service that the dump cannot show (bit flags for `service::unknown`).
enum class unknown_fact : std::uint8_t {
  affinity = 1,        ///< no endpoint rules are written, so no affinity rules either
  traffic_policy = 2,  ///< the external traffic policy leaves no trace (no endpoints at all)
  source_ranges = 4,   ///< LoadBalancer source ranges leave no trace (iptables mode without endpoints)
  external_kind = 8,   ///< some external addresses may be external IPs or LoadBalancer IPs
};

/// `namespace/name:port`, kube-proxy's ServicePortName (`ns/name:` when the port has no name).
struct service_name {
  std::string name_space;
  std::string name;
  std::string port;
  [[nodiscard]] std::string str() const { return name_space + "/" + name + ":" + port; }
  friend auto operator<=>(const service_name&, const service_name&) = default;
  friend bool operator==(const service_name&, const service_name&) = default;
};

/// Parses `ns/name:port`; nothing when the text has another shape.
[[nodiscard]] std::optional<service_name> parse_service_name(std::string_view text);

/// A service: one Kubernetes service port, or one DNAT target without identity.
struct service {
  std::optional<service_name> name;  ///< kube-proxy identity, when the ruleset records it
  l4_protocol protocol = l4_protocol::any;
  std::vector<frontend> frontends;
  std::vector<endpoint> endpoints;  ///< in the ruleset's order (kube-proxy's: the ladder / numgen order)
  std::optional<std::uint32_t> affinity_timeout_s;  ///< ClientIP session affinity timeout in seconds; 0: none
  bool external_traffic_local = false;              ///< external frontends reach node-local endpoints only
  /// What new connections get when the service has no endpoints: `reject`, `drop`, or `none` when it has
  /// endpoints.
  outcome no_endpoints = outcome::none;
  std::vector<ip_prefix> load_balancer_source_ranges;
  std::uint8_t unknown = 0;  ///< `unknown_fact` bits
  /// Share of connections that no rule translates (a ladder without a final rule); 0 for kube-proxy.
  double untranslated = 0;
  std::vector<origin> origins;  ///< the service's own chains and rules (selection chain, masquerade rule)

  [[nodiscard]] bool is_unknown(unknown_fact f) const noexcept { return (unknown & static_cast<std::uint8_t>(f)) != 0; }
  /// The first frontend of a kind, or null.
  [[nodiscard]] const frontend* find(frontend_kind k) const noexcept;
  /// `ns/name:port`, or a label built from the first frontend (`dnat tcp/8080`) when there is no identity.
  [[nodiscard]] std::string label() const;
};

/// A jump, goto, map or set reference whose target is not in the ruleset.
struct dangling_reference {
  origin where;        ///< the referencing rule
  std::string target;  ///< the missing chain, set or map name
  origin_kind target_kind = origin_kind::chain;
};

/// Size and shape of the ruleset, measured while building the graph (for `compare`'s side-by-side report).
struct ruleset_structure {
  std::string backend;  ///< "iptables" or "nftables"
  std::uint64_t lines = 0, bytes = 0;
  std::uint32_t tables = 0, chains = 0, rules = 0, sets = 0, maps = 0, elements = 0;
  /// Rules / elements / chains written once per sync, once per service port, once per endpoint.
  struct share {
    std::uint32_t rules = 0, elements = 0, chains = 0;
  } per_sync, per_service, per_endpoint;
  /// Restore input lines (iptables) or transaction operations (nft) kube-proxy writes on a full sync of
  /// the ruleset as it is (see `add_endpoint_cost`).
  std::uint64_t full_sync_lines = 0;
  /// iptables partial sync: lines written every time (filter table, top-level nat chains) before the
  /// changed services' chains.
  std::uint64_t partial_sync_fixed_lines = 0;
};

/// The dispatch graph of one ruleset.
struct dispatch_graph {
  std::string backend;  ///< "iptables" or "nftables"
  ip_family family = ip_family::ipv4;
  std::vector<source_ptr> sources;  ///< what `origin::source` indexes
  std::vector<service> services;    ///< sorted: named services by name, then the others by first frontend
  std::vector<dangling_reference> dangling;
  /// Constructs on dispatch paths the evaluator could not decide (an opaque match, an address range
  /// DNAT, ...): each is an `unsupported_dispatch` warning saying what was assumed. The graph, and a
  /// comparison of it, hold under those assumptions.
  std::uint32_t unevaluated = 0;
  ruleset_structure structure;
  /// Per-service chain sizes for the update cost model: for each service (same index), the chains that
  /// belong to it alone and their rule counts, and the affinity sets.
  struct owned {
    std::uint32_t chains = 0, rules = 0, sets = 0, elements = 0;
  };
  std::vector<owned> ownership;

  /// Line and column of an origin.
  [[nodiscard]] location locate(const origin& o) const;
  /// The text an origin covers.
  [[nodiscard]] std::string_view text(const origin& o) const;
  /// The source's name (file path) of an origin.
  [[nodiscard]] std::string_view file(const origin& o) const;
  /// The service with this identity, or null.
  [[nodiscard]] const service* find(std::string_view ns_name_port) const;
};

// ---- exact probability arithmetic -------------------------------------------------------------------

/// The kernel's 31-bit threshold for a printed `--probability` (libxt_statistic: round(p · 2^31); the
/// kernel's xt_statistic matches when `(random_u32 & 0x7FFFFFFF) < threshold`). p is clamped to [0, 1].
[[nodiscard]] std::uint32_t statistic_threshold(double printed) noexcept;

/// The probability a threshold gives: threshold / 2^31, and 1 from 2^31 up (every masked random value is
/// below such a threshold).
[[nodiscard]] constexpr double statistic_probability(std::uint32_t threshold) noexcept {
  return threshold >= 0x80000000u ? 1.0 : static_cast<double>(threshold) / 2147483648.0;
}

/// Shares of a ladder of rules tried in order: rule i is taken with p_i = thresholds[i] / 2^31 of what the
/// earlier rules left, share_i = p_i · Π_{j<i} (1 − p_j). A final rule without `-m statistic` is given as
/// threshold 2^31 (p = 1). The shares sum to at most 1 (exactly 1 when the last p is 1).
[[nodiscard]] std::vector<double> ladder_shares(std::span<const std::uint32_t> thresholds);

/// Shares of `numgen ... mod N` slots: slot_targets[k] is the target index of slot k (slots missing from
/// the vmap are given as -1 and select nothing); each target gets (its slots) / N.
[[nodiscard]] std::vector<double> numgen_shares(std::span<const int> slot_targets, std::size_t targets);

/// The largest |share − 1/n| over the service's n endpoints (0 for a uniform or empty selection).
[[nodiscard]] double deviation_from_uniform(const service& s) noexcept;

// ---- building --------------------------------------------------------------------------------------

/// The work the evaluation may do, in steps (a flow meets a rule or a map element): `base + per_item *
/// (rules + map elements)` full steps, and separately `cheap_base + cheap_per_item * (...)` cheap ones (a
/// rule that cannot match the flow, passed at once). Jumps and splits can multiply the paths exponentially
/// in a ruleset's depth; the bases stop a small hostile program within a few hundred milliseconds, and the
/// per-item parts grow with the dump: kube-proxy's dispatch needs up to about 34 full steps per rule and
/// element (a 10,000-service kpgen nftables dump: 7.4 to 8.2 million of its 14.5 million) and a
/// 10,000-service iptables dump 4.7 million cheap ones (of 200 million). Past a budget the evaluation
/// stops with an error at the rule reached and the graph is incomplete, never silently so.
struct evaluation_budget {
  std::uint64_t base = 250'000;
  std::uint64_t per_item = 64;
  std::uint64_t cheap_base = 8'000'000;
  std::uint64_t cheap_per_item = 512;
};

/// Options of the graph builders.
struct graph_options {
  limits lim;  ///< `max_depth`: the deepest chain nesting followed
  evaluation_budget budget;
};

namespace iptables {
struct ruleset;
}
namespace nft {
struct ruleset;
struct script;
}

/// Builds the graph of an iptables ruleset (iptables-save output, or restore input, which is first applied
/// to empty tables as iptables-restore would) by evaluating nat PREROUTING/OUTPUT, and kube-proxy's entry
/// chains KUBE-SERVICES and KUBE-NODEPORTS when the dump lacks the hook jumps (as kube-proxy's own restore
/// input does), then the filter table for what NAT left untranslated. Diagnostics: `dangling_reference`
/// and `unsupported_dispatch` warnings; the graph is built regardless.
[[nodiscard]] result<dispatch_graph> build_graph(const iptables::ruleset& rs, const graph_options& opt = {});

/// Builds the graph of an nftables ruleset (ip, ip6 and inet tables) from its nat base chains at
/// prerouting/output (and kube-proxy's `services` chain when no base chain reaches it), filter chains
/// before DNAT (source gates: LoadBalancer source ranges) and after it (verdicts on untranslated traffic).
[[nodiscard]] result<dispatch_graph> build_graph(const nft::ruleset& rs, const graph_options& opt = {});

/// Builds the graph of a parsed nft text (an `nft list` listing or an `nft -f` script, e.g. kube-proxy's
/// knftables transactions) applied to an empty ruleset with `nft::to_ruleset`, as `nft -f` would: deletes,
/// flushes and replaces are honoured. Errors of the apply (a missing chain, ...) are returned and no graph
/// is built. To apply updates onto an existing state, use `nft::apply` and the `nft::ruleset` overload.
[[nodiscard]] result<dispatch_graph> build_graph(const nft::script& s, const graph_options& opt = {});

// ---- output ----------------------------------------------------------------------------------------

/// The graph as JSON text in the ground-truth shape of kube-proxy corpus `*.expected.json` and `kpgen
/// --truth` (`services[]` with `service`, `protocol`, `cluster_ip`, `port`, `node_port`, `external_ips`,
/// `load_balancer_ips`, `load_balancer_source_ranges`, `affinity_timeout_s`, `external_traffic_local`,
/// `endpoints[]` with `ip`, `port`), plus `external_or_load_balancer_ips`, `unknown` (facts the dump cannot
/// show), probabilities, mechanisms, frontends and origins with file:line.
[[nodiscard]] std::string to_json(const dispatch_graph& g, bool with_origins = true);

/// The graph in Graphviz DOT: frontends → services → endpoints, edges labelled with probabilities.
[[nodiscard]] std::string to_dot(const dispatch_graph& g);

/// A readable summary (one block per service).
[[nodiscard]] std::string to_text(const dispatch_graph& g);

/// Every rule and map element on one service's paths, `file:line:column: kind: text`, in source order.
[[nodiscard]] std::string quote_service(const dispatch_graph& g, const service& s);

}  // namespace nflens
