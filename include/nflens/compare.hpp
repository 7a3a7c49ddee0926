// SPDX-License-Identifier: MIT
#pragma once

/// @file
/// Comparing two dispatch graphs (any mix of backends): are the same services reached through the same
/// frontends, with the same endpoints and shares? And how do the two rulesets compare in size, lookup
/// cost, endpoint selection and update cost?

#include <nflens/graph.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace nflens {

/// Options of `compare`.
struct compare_options {
  double tolerance = 1e-6;  ///< largest accepted difference of an endpoint's share
};

/// How a service differs between the two graphs.
enum class difference_kind : std::uint8_t {
  missing,    ///< in A only
  extra,      ///< in B only
  different,  ///< in both, with different frontends, endpoints, shares, affinity, policy or no-endpoint verdict
};

/// `"missing"`, `"extra"`, `"different"`.
[[nodiscard]] std::string_view difference_kind_name(difference_kind k) noexcept;

/// One service that is not the same in both graphs.
struct service_difference {
  difference_kind kind = difference_kind::different;
  std::string service;               ///< `ns/name:port` (with `/proto` when needed) or a DNAT label
  std::vector<std::string> details;  ///< one line per difference ("endpoint 10.0.0.1:80: share 0.5 in A, 0.25 in B")
};

/// What one dump costs, measured from it (see `measure`).
struct dump_metrics {
  ruleset_structure structure;
  std::size_t services = 0, endpoints = 0, frontends = 0;
  /// Rules a new connection to a ClusterIP evaluates from the hook until its service's own chain or map
  /// element: the position in KUBE-SERVICES in iptables mode, the hook's jump plus the one vmap rule in nft.
  double cluster_ip_rules_mean = 0;
  std::uint32_t cluster_ip_rules_worst = 0;
  double cluster_ip_lookups_mean = 0;  ///< map or set lookups on that way (1 in nft, 0 in iptables)
  /// Rules evaluated to pick an endpoint: ladder position + 1 (expected value over the shares, averaged
  /// over services), or 1 for one numgen rule.
  double selection_rules_mean = 0;
  std::uint32_t selection_rules_worst = 0;
  /// Cost to add one endpoint to one service (the median service by endpoint count), by the model
  /// documented in README "Update cost model": iptables-restore lines of a full and of a partial sync, or
  /// the operations of an nft transaction.
  std::string cost_service;  ///< the service the estimate is for
  std::uint64_t add_endpoint_full_lines = 0;
  std::uint64_t add_endpoint_partial_lines = 0;
  std::uint64_t add_endpoint_nft_ops = 0;
};

/// Estimated cost of adding one endpoint to one Kubernetes Service (all of its ports) in a graph's backend.
struct update_cost {
  std::uint64_t full_lines = 0;     ///< iptables: `iptables-restore` lines of a full sync after the change
  std::uint64_t partial_lines = 0;  ///< iptables: lines of a partial sync (MinimizeIPTablesRestore)
  std::uint64_t nft_ops = 0;        ///< nftables: operations (lines) of the knftables transaction
};

/// The update cost model. iptables: a full sync writes `*filter`/`*nat` headers and `COMMIT`s, a `:CHAIN`
/// line and every rule of each chain kube-proxy owns; a partial sync writes the same for the filter table
/// and for the nat chains no single service owns, plus the chains of the changed Service. Adding an endpoint
/// to a Service adds, per service port: a KUBE-SEP chain line, its 2 rules (masquerade, DNAT; plus the
/// `recent --set` is on the DNAT rule), one ladder rule, and one affinity rule when affinity is on.
/// nftables: per service port, `add chain` + `flush chain` for each chain of the Service and the new
/// endpoint chain, every rule of those chains after the change (the endpoint chain has 2 rules, 3 with
/// affinity; the service chain gains an affinity rule), `add set` per affinity set; no element changes
/// when the service already had endpoints. `service_index` indexes `g.services`; every port of the same
/// Service is included.
[[nodiscard]] update_cost add_endpoint_cost(const dispatch_graph& g, std::size_t service_index);

/// Measures a graph's dump (sizes from the structure the builder recorded, lookup and selection costs from
/// the frontends and endpoints, the update cost for the median service).
[[nodiscard]] dump_metrics measure(const dispatch_graph& g);

/// The result of a comparison.
struct comparison {
  bool equivalent = false;
  std::size_t services_a = 0, services_b = 0, matched = 0;
  double tolerance = 1e-6;  ///< the `compare_options::tolerance` the shares were compared with
  /// Constructs on dispatch paths each graph could not evaluate and assumed (`dispatch_graph::unevaluated`):
  /// when either is non-zero an equivalence holds only under what their warnings say.
  std::uint32_t unevaluated_a = 0, unevaluated_b = 0;
  std::vector<service_difference> differences;  ///< in A's order, then B's extra services
  /// What one side cannot show and was therefore not compared (external IP or LoadBalancer IP, affinity of
  /// services without endpoints, ...), and differences that are not a difference in dispatch (the
  /// addresses NodePorts listen on).
  std::vector<std::string> notes;
  dump_metrics a, b;
};

/// Compares two graphs service by service (frontends, endpoint set, shares within `tolerance`, affinity,
/// traffic policy, no-endpoint verdict, source ranges), and measures both dumps.
[[nodiscard]] comparison compare(const dispatch_graph& a, const dispatch_graph& b, const compare_options& opt = {});

/// A readable report: the verdict, the differences per service, and the structure side by side.
[[nodiscard]] std::string to_text(const comparison& c, std::string_view name_a, std::string_view name_b);

/// The same as JSON.
[[nodiscard]] std::string to_json(const comparison& c, std::string_view name_a, std::string_view name_b);

}  // namespace nflens
