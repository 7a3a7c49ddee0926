// SPDX-License-Identifier: MIT
// Comparing two dispatch graphs, measuring dumps, and the update cost model.

#include <nflens/compare.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace nflens {

std::string_view difference_kind_name(difference_kind k) noexcept {
  switch (k) {
    case difference_kind::missing:
      return "missing";
    case difference_kind::extra:
      return "extra";
    case difference_kind::different:
      return "different";
  }
  return "different";
}

namespace {

bool is_iptables(const dispatch_graph& g) { return g.backend == "iptables"; }


/// The addresses a list of prefixes covers, as the fewest prefixes in order: host bits cleared, prefixes
/// inside another dropped, two halves of one prefix joined. Two lists cover the same addresses exactly
/// when their covers are equal (`10.0.0.0/9, 10.128.0.0/9` and `10.0.0.0/8`).
std::vector<ip_prefix> cover(std::vector<ip_prefix> ps) {
  const auto bit = [](const ip_address& a, unsigned i) { return (a.bytes[i / 8] >> (7 - i % 8)) & 1u; };
  for (auto& p : ps) p = masked(p);
  std::sort(ps.begin(), ps.end());
  std::vector<ip_prefix> out;
  for (const auto& p : ps) {
    if (!out.empty() && out.back().length <= p.length && contains(out.back(), p.address)) continue;
    out.push_back(p);
    // the two halves of one prefix sit side by side in this order: join them, and again upwards
    while (out.size() >= 2) {
      const auto& hi = out[out.size() - 1];
      const auto& lo = out[out.size() - 2];
      if (hi.length != lo.length || hi.length == 0 || hi.address.family != lo.address.family ||
          bit(hi.address, hi.length - 1u) == 0 ||
          masked(ip_prefix{hi.address, static_cast<std::uint8_t>(hi.length - 1)}) !=
              ip_prefix{lo.address, static_cast<std::uint8_t>(lo.length - 1)})
        break;
      const ip_prefix parent{lo.address, static_cast<std::uint8_t>(lo.length - 1)};
      out.pop_back();
      out.back() = parent;
    }
  }
  return out;
}

std::string prefix_list(const std::vector<ip_prefix>& ps) {
  std::vector<std::string> s;
  for (const auto& p : ps) s.push_back(to_string(p));
  return s.empty() ? std::string("none") : fmt::format("{}", fmt::join(s, ", "));
}

std::string masq_list(const std::vector<masquerade>& ms) {
  std::vector<std::string> s;
  for (const auto& m : ms)
    s.push_back(m.when == masquerade_when::source_outside || m.when == masquerade_when::source_inside
                    ? fmt::format("{} {}", masquerade_when_name(m.when), to_string(m.prefix))
                    : std::string(masquerade_when_name(m.when)));
  return s.empty() ? std::string("never") : fmt::format("{}", fmt::join(s, ", "));
}

/// The class a frontend is compared in: ClusterIP, NodePort, external address (external IP or LoadBalancer
/// IP, which one dump may not tell), plain DNAT.
int frontend_class(frontend_kind k) {
  switch (k) {
    case frontend_kind::cluster_ip:
      return 0;
    case frontend_kind::node_port:
      return 1;
    case frontend_kind::external_ip:
    case frontend_kind::load_balancer_ip:
    case frontend_kind::external_or_load_balancer_ip:
      return 2;
    case frontend_kind::dnat:
      return 3;
  }
  return 3;
}

using fkey = std::tuple<int, bool, ip_prefix, l4_protocol, port_range>;

fkey key_of(const frontend& f) {
  const int cls = frontend_class(f.kind);
  // A NodePort is a port on the node; which local addresses accept it is a setting, noted apart.
  if (cls == 1) return {cls, true, ip_prefix{}, f.protocol, f.port};
  return {cls, f.any_local, f.has_address ? f.address : ip_prefix{}, f.protocol, f.port};
}

/// Where a frontend is, as `key_of` tells frontends apart: `node` for NodePorts, `local` or `local PREFIX`
/// for the node's own addresses (narrowed), the address or prefix, `*` for any.
std::string frontend_where(const frontend& f) {
  if (frontend_class(f.kind) == 1) return "node";
  if (!f.has_address) return f.any_local ? "local" : "*";
  const auto a = f.address.length == max_prefix_length(f.address.address.family) ? to_string(f.address.address)
                                                                                 : to_string(f.address);
  return f.any_local ? "local " + a : a;
}

std::string port_text(port_range p) {
  return p.first == p.last ? fmt::format("{}", p.first) : fmt::format("{}-{}", p.first, p.last);
}

std::string frontend_text(const frontend& f) {
  return fmt::format("{} {} {}:{}", frontend_kind_name(f.kind), protocol_name(f.protocol), frontend_where(f),
                     port_text(f.port));
}

/// `frontend_text` without the kind, so that it names exactly the `key_of` class of the frontend.
std::string frontend_key_text(const frontend& f) {
  static constexpr std::string_view classes[] = {"cluster-ip", "node-port", "external", "dnat"};
  return fmt::format("{} {} {}:{}", classes[frontend_class(f.kind)], protocol_name(f.protocol), frontend_where(f),
                     port_text(f.port));
}

std::string nodeport_scope(const frontend& f) {
  std::string s = f.any_local ? "any local address" : (f.has_address ? to_string(f.address.address) : "*");
  for (const auto& x : f.excluded) s += fmt::format(" except {}", to_string(x));
  return s;
}

struct notes_acc {
  std::size_t ambiguous = 0;
  std::size_t unknown_affinity = 0, unknown_policy = 0, unknown_ranges = 0;
  std::set<std::string> nodeport_scopes;
};

/// Pairs the members of two groups keyed alike: for every key, the i-th of A (in `order`) with the i-th
/// of B. A key written several times is so compared as a multiset, never one member against another's
/// twin; members left over are only in A or only in B.
template <typename Key, typename T, typename Order, typename Pair, typename Only>
void pair_groups(std::map<Key, std::vector<const T*>>& ga, std::map<Key, std::vector<const T*>>& gb, Order order,
                 Pair pair, Only only) {
  for (auto& [k, v] : ga) std::stable_sort(v.begin(), v.end(), order);
  for (auto& [k, v] : gb) std::stable_sort(v.begin(), v.end(), order);
  for (const auto& [k, xs] : ga) {
    auto it = gb.find(k);
    const std::size_t n = it == gb.end() ? 0 : std::min(xs.size(), it->second.size());
    for (std::size_t i = 0; i < n; ++i) pair(*xs[i], *it->second[i]);
    for (std::size_t i = n; i < xs.size(); ++i) only(*xs[i], true);
  }
  for (const auto& [k, ys] : gb) {
    auto it = ga.find(k);
    const std::size_t n = it == ga.end() ? 0 : std::min(ys.size(), it->second.size());
    for (std::size_t i = n; i < ys.size(); ++i) only(*ys[i], false);
  }
}

void compare_frontend(const frontend& f, const frontend& g, const service& a, const service& b, service_difference& d,
                      notes_acc& notes) {
  if (f.kind != g.kind) {
    if (f.kind == frontend_kind::external_or_load_balancer_ip || g.kind == frontend_kind::external_or_load_balancer_ip)
      ++notes.ambiguous;
    else
      d.details.push_back(fmt::format("frontend {}: {} in A, {} in B", frontend_text(f), frontend_kind_name(f.kind),
                                      frontend_kind_name(g.kind)));
  }
  if (f.result != g.result)
    d.details.push_back(fmt::format("frontend {}: {} in A, {} in B", frontend_text(f), outcome_name(f.result),
                                    outcome_name(g.result)));
  else if (f.result == outcome::reject && f.reject_with != g.reject_with)
    d.details.push_back(fmt::format("frontend {}: rejected with {} in A, with {} in B", frontend_text(f),
                                    reject_reply_name(f.reject_with), reject_reply_name(g.reject_with)));
  // where NAT translates them: arriving connections, the node's own, or both (unknown on one side: not
  // compared)
  if (f.hooks != 0 && g.hooks != 0 && f.hooks != g.hooks) {
    const auto where = [](std::uint8_t h) {
      const bool pre = (h & static_cast<std::uint8_t>(frontend_hook::prerouting)) != 0;
      const bool out = (h & static_cast<std::uint8_t>(frontend_hook::output)) != 0;
      return pre && out ? "arriving and local connections" : pre ? "arriving connections only" : "local connections only";
    };
    d.details.push_back(fmt::format("frontend {}: translated for {} in A, {} in B", frontend_text(f), where(f.hooks),
                                    where(g.hooks)));
  }
  if (!a.is_unknown(unknown_fact::source_ranges) && !b.is_unknown(unknown_fact::source_ranges) &&
      cover(f.source_ranges) != cover(g.source_ranges))
    d.details.push_back(fmt::format("frontend {}: source ranges {} in A, {} in B", frontend_text(f),
                                    prefix_list(f.source_ranges), prefix_list(g.source_ranges)));
  // what a gate does to the sources it does not admit (a firewall's drop)
  if (!f.source_ranges.empty() && !g.source_ranges.empty() && f.other_sources != g.other_sources) {
    d.details.push_back(fmt::format("frontend {}: connections from other sources: {} in A, {} in B", frontend_text(f),
                                    outcome_text(f.other_sources), outcome_text(g.other_sources)));
  }
  // a frontend split unlike its service's selection, and where short-circuited clients go
  const auto same = [](const std::vector<endpoint_share>& x, const std::vector<endpoint_share>& y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end(), [](const endpoint_share& p, const endpoint_share& q) {
      return p.address == q.address && p.has_port == q.has_port && p.port == q.port &&
             std::abs(p.probability - q.probability) <= 1e-6;
    });
  };
  if (f.result == g.result && !same(f.shares, g.shares))
    d.details.push_back(fmt::format("frontend {}: its own shares {} in A, {} in B (none: the service's)",
                                    frontend_text(f), shares_text(f.shares), shares_text(g.shares)));
  const auto short_list = [](const frontend& x) {
    std::vector<std::string> out;
    for (const auto& p : x.short_circuit_sources) out.push_back(to_string(p));
    std::sort(out.begin(), out.end());
    if (x.short_circuit_local) out.push_back("local");
    return out;
  };
  // (behind a source-range gate iptables' KUBE-FW-* chain takes the sources first: its short-circuits in
  // KUBE-EXT-* are not told apart from the gate's admitted ranges, so gated frontends are not compared here)
  const bool gated = !f.source_ranges.empty() || !g.source_ranges.empty();
  if (gated) {
  } else if (short_list(f) != short_list(g))
    d.details.push_back(fmt::format("frontend {}: short-circuited clients {} in A, {} in B", frontend_text(f),
                                    short_list(f).empty() ? "none" : fmt::format("{}", fmt::join(short_list(f), ", ")),
                                    short_list(g).empty() ? "none" : fmt::format("{}", fmt::join(short_list(g), ", "))));
  else if (!same(f.short_circuit_shares, g.short_circuit_shares))
    d.details.push_back(fmt::format("frontend {}: short-circuited clients reach {} in A, {} in B (none: the service's "
                                    "cluster-wide shares)",
                                    frontend_text(f), shares_text(f.short_circuit_shares),
                                    shares_text(g.short_circuit_shares)));
  if (f.result != outcome::drop && f.result != outcome::reject && f.masquerades != g.masquerades)
    d.details.push_back(fmt::format("frontend {}: masquerade {} in A, {} in B", frontend_text(f),
                                    masq_list(f.masquerades), masq_list(g.masquerades)));
  // "any local address" against a list of addresses is kube-proxy's --nodeport-addresses setting (nftables
  // mode lists the node's); two different lists are different NodePort frontends
  if (frontend_class(f.kind) == 1 && nodeport_scope(f) != nodeport_scope(g)) {
    if (!f.any_local && !g.any_local)
      d.details.push_back(fmt::format("frontend {}: NodePort connections to {} in A, to {} in B", frontend_text(f),
                                      nodeport_scope(f), nodeport_scope(g)));
    else
      notes.nodeport_scopes.insert(
          fmt::format("NodePorts accept {} in A, {} in B", nodeport_scope(f), nodeport_scope(g)));
  }
}

/// What the chains after NAT do to an endpoint's new connections, as a past participle.
std::string_view fate(outcome o) {
  return o == outcome::drop ? "dropped" : o == outcome::reject ? "rejected" : "passed";
}

/// An endpoint's shares summed over every entry of one destination (a ruleset may list one twice: two
/// slots of a numgen map, two ladder rules).
struct endpoint_sum {
  const endpoint* first = nullptr;
  double probability = 0;
  std::optional<double> local_probability;
  bool affinity = true;  // every entry has an affinity rule
  std::uint32_t affinity_timeout_s = 0;
  outcome after_nat = outcome::none;
  std::vector<masquerade> masquerades;  // the conditions of every entry, sorted and once each
};

using ekey = std::tuple<ip_address, bool, std::uint16_t>;

std::map<ekey, endpoint_sum> endpoint_shares(const service& s) {
  std::map<ekey, endpoint_sum> m;
  for (const auto& e : s.endpoints) {
    auto& x = m[ekey{e.address, e.has_port, e.port}];
    if (!x.first) x.first = &e;
    x.probability += e.probability;
    if (e.local_probability) x.local_probability = x.local_probability.value_or(0) + *e.local_probability;
    x.affinity = x.affinity && e.affinity;
    x.affinity_timeout_s = std::max(x.affinity_timeout_s, e.affinity_timeout_s);
    if (e.after_nat != outcome::none) x.after_nat = e.after_nat;
    x.masquerades.insert(x.masquerades.end(), e.masquerades.begin(), e.masquerades.end());
  }
  for (auto& [k, x] : m) {
    std::sort(x.masquerades.begin(), x.masquerades.end());
    x.masquerades.erase(std::unique(x.masquerades.begin(), x.masquerades.end()), x.masquerades.end());
  }
  return m;
}

/// Two shares that differ, as "X in A, Y in B": 9 significant digits, or as many as tell them apart
/// (`--tolerance 0` reports differences far below 1e-9).
std::string shares_text(double x, double y) {
  auto a = fmt::format("{:.9g}", x), b = fmt::format("{:.9g}", y);
  if (a == b) {
    a = fmt::format("{}", x);
    b = fmt::format("{}", y);
  }
  return fmt::format("{} in A, {} in B", a, b);
}

void compare_endpoints(const service& a, const service& b, const compare_options& opt, service_difference& d) {
  const auto ea = endpoint_shares(a), eb = endpoint_shares(b);
  for (const auto& [k, x] : ea) {
    auto it = eb.find(k);
    const auto name = endpoint_text(*x.first);
    if (it == eb.end()) {
      d.details.push_back(fmt::format("endpoint {} only in A", name));
      continue;
    }
    const endpoint_sum& y = it->second;
    if (!(std::abs(x.probability - y.probability) <= opt.tolerance))
      d.details.push_back(fmt::format("endpoint {}: share {}", name, shares_text(x.probability, y.probability)));
    if (x.local_probability.has_value() != y.local_probability.has_value())
      d.details.push_back(fmt::format("endpoint {}: {} in A, {} in B", name,
                                      x.local_probability ? "node-local" : "not node-local",
                                      y.local_probability ? "node-local" : "not node-local"));
    else if (x.local_probability && !(std::abs(*x.local_probability - *y.local_probability) <= opt.tolerance))
      d.details.push_back(
          fmt::format("endpoint {}: local share {}", name, shares_text(*x.local_probability, *y.local_probability)));
    if (x.after_nat != y.after_nat)
      d.details.push_back(fmt::format("endpoint {}: its new connections {} after NAT in A, {} in B", name,
                                      fate(x.after_nat), fate(y.after_nat)));
    // the endpoint's own masquerade (kube-proxy's hairpin rule: a pod reaching itself through the service)
    if (x.masquerades != y.masquerades)
      d.details.push_back(fmt::format("endpoint {}: masquerade {} in A, {} in B", name, masq_list(x.masquerades),
                                      masq_list(y.masquerades)));
    // per endpoint, when the service has affinity on both sides (else the service-level check says it)
    if (a.affinity_timeout_s && b.affinity_timeout_s && !a.is_unknown(unknown_fact::affinity) &&
        !b.is_unknown(unknown_fact::affinity)) {
      const auto t = [](const endpoint_sum& s) {
        return s.affinity ? fmt::format("session affinity {} s", s.affinity_timeout_s) : std::string("no session affinity");
      };
      if (x.affinity != y.affinity || (x.affinity && x.affinity_timeout_s != y.affinity_timeout_s))
        d.details.push_back(fmt::format("endpoint {}: {} in A, {} in B", name, t(x), t(y)));
    }
  }
  for (const auto& [k, y] : eb)
    if (!ea.count(k)) d.details.push_back(fmt::format("endpoint {} only in B", endpoint_text(*y.first)));
}

void compare_behaviour(const service& a, const service& b, service_difference& d, notes_acc& notes) {
  const bool aff_unknown = a.is_unknown(unknown_fact::affinity) || b.is_unknown(unknown_fact::affinity);
  if (aff_unknown) ++notes.unknown_affinity;
  if (!aff_unknown && a.affinity_timeout_s != b.affinity_timeout_s) {
    auto t = [](const std::optional<std::uint32_t>& x) { return x ? fmt::format("{} s", *x) : std::string("none"); };
    d.details.push_back(
        fmt::format("session affinity {} in A, {} in B", t(a.affinity_timeout_s), t(b.affinity_timeout_s)));
  }
  const bool pol_unknown = a.is_unknown(unknown_fact::traffic_policy) || b.is_unknown(unknown_fact::traffic_policy);
  if (pol_unknown) ++notes.unknown_policy;
  if (!pol_unknown && a.external_traffic_local != b.external_traffic_local)
    d.details.push_back(fmt::format("external traffic policy {} in A, {} in B",
                                    a.external_traffic_local ? "Local" : "Cluster",
                                    b.external_traffic_local ? "Local" : "Cluster"));
  if (a.is_unknown(unknown_fact::source_ranges) || b.is_unknown(unknown_fact::source_ranges)) ++notes.unknown_ranges;
  if (a.no_endpoints != b.no_endpoints)
    d.details.push_back(
        fmt::format("without endpoints: {} in A, {} in B", outcome_name(a.no_endpoints), outcome_name(b.no_endpoints)));
}

void compare_service(const service& a, const service& b, const compare_options& opt, service_difference& d,
                     notes_acc& notes) {
  std::map<fkey, std::vector<const frontend*>> fa, fb;
  for (const auto& f : a.frontends) fa[key_of(f)].push_back(&f);
  for (const auto& f : b.frontends) fb[key_of(f)].push_back(&f);
  pair_groups(
      fa, fb,
      [](const frontend* x, const frontend* y) {
        return std::tie(x->kind, x->result, x->source_ranges, x->masquerades) <
               std::tie(y->kind, y->result, y->source_ranges, y->masquerades);
      },
      [&](const frontend& f, const frontend& g) { compare_frontend(f, g, a, b, d, notes); },
      [&](const frontend& f, bool in_a) {
        d.details.push_back(fmt::format("frontend {} only in {}", frontend_text(f), in_a ? "A" : "B"));
      });
  compare_endpoints(a, b, opt, d);
  compare_behaviour(a, b, d, notes);
}

/// What services are matched by: the kube-proxy identity and protocol, or else every frontend by its
/// `key_of` class (so two services keyed alike have frontends alike).
std::string service_key(const service& s) {
  if (s.name) return fmt::format("{}/{}", s.name->str(), protocol_name(s.protocol));
  std::vector<std::string> fs;
  for (const auto& f : s.frontends) fs.push_back(frontend_key_text(f));
  std::sort(fs.begin(), fs.end());
  return fmt::format("dnat {}", fmt::join(fs, ", "));
}

/// A canonical order of services that share a key: by endpoints and their shares, then frontends.
bool service_order(const service* x, const service* y) {
  auto sig = [](const service& s) {
    std::vector<std::tuple<ekey, double>> es;
    for (const auto& e : s.endpoints) es.emplace_back(ekey{e.address, e.has_port, e.port}, e.probability);
    std::sort(es.begin(), es.end());
    std::vector<std::string> fs;
    for (const auto& f : s.frontends) fs.push_back(frontend_text(f));
    std::sort(fs.begin(), fs.end());
    return std::make_tuple(es, fs, s.affinity_timeout_s, s.external_traffic_local, s.no_endpoints);
  };
  return sig(*x) < sig(*y);
}

std::string service_title(const service& s) {
  if (s.name)
    return s.protocol == l4_protocol::tcp ? s.name->str()
                                          : fmt::format("{} ({})", s.name->str(), protocol_name(s.protocol));
  return s.label();
}

}  // namespace

update_cost add_endpoint_cost(const dispatch_graph& g, std::size_t service_index) {
  update_cost c;
  if (service_index >= g.services.size()) return c;
  const auto& target = g.services[service_index];
  std::vector<std::size_t> ports;
  for (std::size_t i = 0; i < g.services.size(); ++i) {
    const auto& s = g.services[i];
    if (i == service_index ||
        (target.name && s.name && s.name->name_space == target.name->name_space && s.name->name == target.name->name))
      ports.push_back(i);
  }
  std::uint64_t delta_full = 0, partial = 0, ops = 0;
  for (const auto i : ports) {
    const auto& s = g.services[i];
    const auto& own = i < g.ownership.size() ? g.ownership[i] : dispatch_graph::owned{};
    const bool aff = s.affinity_timeout_s.has_value();
    // iptables: KUBE-SEP chain line, its masquerade and DNAT rules, one ladder rule, one affinity rule.
    const std::uint64_t added = 4 + (aff ? 1 : 0);
    delta_full += added;
    partial += own.chains + own.rules + added;
    // nftables: add+flush per chain (with the new endpoint chain), every rule after the change, affinity sets.
    ops += 2 * (own.chains + 1) + own.rules + 2 + (aff ? 2 : 0) + (aff ? own.sets + 1 : 0);
  }
  if (is_iptables(g)) {
    c.full_lines = g.structure.full_sync_lines + delta_full;
    c.partial_lines = g.structure.partial_sync_fixed_lines + partial;
  } else {
    c.nft_ops = ops;
  }
  return c;
}

dump_metrics measure(const dispatch_graph& g) {
  dump_metrics m;
  m.structure = g.structure;
  m.services = g.services.size();
  std::uint64_t cip_rules = 0, cip_lookups = 0, cips = 0;
  double sel_sum = 0;
  std::size_t sel_n = 0;
  for (const auto& s : g.services) {
    m.endpoints += s.endpoints.size();
    m.frontends += s.frontends.size();
    for (const auto& f : s.frontends)
      if (f.kind == frontend_kind::cluster_ip && f.result == outcome::dispatch) {
        ++cips;
        cip_rules += f.rules_evaluated;
        cip_lookups += f.lookups;
        m.cluster_ip_rules_worst = std::max(m.cluster_ip_rules_worst, f.rules_evaluated);
      }
    if (s.endpoints.empty()) continue;
    double expected = 0;
    std::uint32_t worst = 1;
    for (const auto& e : s.endpoints) {
      const bool ladder = e.mechanism == selection::statistic_ladder || e.mechanism == selection::statistic_nth;
      const std::uint32_t rules = ladder ? e.position + 1 : 1;
      expected += e.probability * rules;
      worst = std::max(worst, rules);
    }
    sel_sum += expected;
    ++sel_n;
    m.selection_rules_worst = std::max(m.selection_rules_worst, worst);
  }
  if (cips > 0) {
    m.cluster_ip_rules_mean = static_cast<double>(cip_rules) / static_cast<double>(cips);
    m.cluster_ip_lookups_mean = static_cast<double>(cip_lookups) / static_cast<double>(cips);
  }
  if (sel_n > 0) m.selection_rules_mean = sel_sum / static_cast<double>(sel_n);
  // The update cost of the median named service by endpoint count.
  std::vector<std::pair<std::size_t, std::size_t>> by_eps;
  for (std::size_t i = 0; i < g.services.size(); ++i)
    if (g.services[i].name && !g.services[i].endpoints.empty()) by_eps.emplace_back(g.services[i].endpoints.size(), i);
  if (!by_eps.empty()) {
    std::stable_sort(by_eps.begin(), by_eps.end());
    const auto i = by_eps[by_eps.size() / 2].second;
    const auto c = add_endpoint_cost(g, i);
    m.cost_service = g.services[i].label();
    m.add_endpoint_full_lines = c.full_lines;
    m.add_endpoint_partial_lines = c.partial_lines;
    m.add_endpoint_nft_ops = c.nft_ops;
  }
  return m;
}

comparison compare(const dispatch_graph& a, const dispatch_graph& b, const compare_options& opt) {
  comparison c;
  c.services_a = a.services.size();
  c.services_b = b.services.size();
  // Services keyed alike are paired in a canonical order (see pair_groups); the report follows A's order,
  // then B's extras in B's order.
  std::map<std::string, std::vector<const service*>> ga, gb;
  for (const auto& s : a.services) ga[service_key(s)].push_back(&s);
  for (const auto& s : b.services) gb[service_key(s)].push_back(&s);
  std::map<const service*, const service*> partner;
  std::set<const service*> only;
  pair_groups(
      ga, gb, service_order, [&](const service& x, const service& y) { partner.emplace(&x, &y); },
      [&](const service& x, bool) { only.insert(&x); });
  notes_acc notes;
  for (const auto& s : a.services) {
    auto it = partner.find(&s);
    if (it == partner.end()) {
      c.differences.push_back({difference_kind::missing, service_title(s), {"only in A"}});
      continue;
    }
    ++c.matched;
    service_difference d{difference_kind::different, service_title(s), {}};
    compare_service(s, *it->second, opt, d, notes);
    if (!d.details.empty()) c.differences.push_back(std::move(d));
  }
  for (const auto& s : b.services)
    if (only.count(&s)) c.differences.push_back({difference_kind::extra, service_title(s), {"only in B"}});
  c.equivalent = c.differences.empty();
  c.tolerance = opt.tolerance;
  c.unevaluated_a = a.unevaluated;
  c.unevaluated_b = b.unevaluated;
  if (notes.ambiguous > 0)
    c.notes.push_back(fmt::format(
        "{} external address(es) are external IPs in one dump and either external IPs or LoadBalancer IPs in the "
        "other (nftables mode writes both alike): compared as external addresses",
        notes.ambiguous));
  if (notes.unknown_affinity > 0)
    c.notes.push_back(
        fmt::format("{} service(s) have no endpoint rules in one dump, so session affinity cannot be "
                    "compared for them",
                    notes.unknown_affinity));
  if (notes.unknown_policy > 0)
    c.notes.push_back(
        fmt::format("{} service(s) have no endpoints in one dump, so the external traffic policy "
                    "cannot be compared for them",
                    notes.unknown_policy));
  if (notes.unknown_ranges > 0)
    c.notes.push_back(
        fmt::format("{} service(s) without endpoints leave no trace of LoadBalancer source ranges in "
                    "one dump: not compared",
                    notes.unknown_ranges));
  for (const auto& n : notes.nodeport_scopes)
    c.notes.push_back(n + " (a kube-proxy setting, not a difference in dispatch)");
  if (a.unevaluated > 0 || b.unevaluated > 0)
    c.notes.push_back(fmt::format("constructs on dispatch paths not evaluated (see the warnings): {} in A, {} in B; "
                                  "the verdict holds under what those warnings assume",
                                  a.unevaluated, b.unevaluated));
  if (!a.dangling.empty() || !b.dangling.empty())
    c.notes.push_back(fmt::format("dangling references: {} in A, {} in B", a.dangling.size(), b.dangling.size()));
  c.a = measure(a);
  c.b = measure(b);
  return c;
}

namespace {

std::string row(std::string_view label, const std::string& a, const std::string& b) {
  return fmt::format("  {:<44} {:>18}  {:>18}\n", label, a, b);
}
std::string num(std::uint64_t v) { return fmt::format("{}", v); }
std::string share_text(const ruleset_structure::share& s) {
  return fmt::format("{}/{}/{}", s.rules, s.elements, s.chains);
}

}  // namespace

std::string to_text(const comparison& c, std::string_view name_a, std::string_view name_b) {
  std::string out;
  out += fmt::format("A: {} ({})\nB: {} ({})\n\n", name_a, c.a.structure.backend, name_b, c.b.structure.backend);
  if (c.equivalent) {
    const std::string assuming =
        c.unevaluated_a + c.unevaluated_b == 0
            ? std::string{}
            : fmt::format(" (ASSUMING what the warnings say of {} construct(s) not evaluated in A, {} in B)",
                          c.unevaluated_a, c.unevaluated_b);
    out += fmt::format(
        "EQUIVALENT{}: {} services, the same frontends, endpoints and shares (within {:g}), affinity, "
        "traffic policy and no-endpoint verdicts\n",
        assuming, c.matched, c.tolerance);
  } else {
    std::size_t only_a = 0, only_b = 0, different = 0;
    for (const auto& d : c.differences)
      (d.kind == difference_kind::missing ? only_a : d.kind == difference_kind::extra ? only_b : different) += 1;
    out += fmt::format("NOT EQUIVALENT: {} services in A, {} in B; {} only in A, {} only in B, {} in both but different\n",
                       c.services_a, c.services_b, only_a, only_b, different);
  }
  for (const auto& d : c.differences) {
    out += fmt::format("  {} {}\n", difference_kind_name(d.kind), d.service);
    for (const auto& x : d.details) out += fmt::format("      {}\n", x);
  }
  if (!c.notes.empty()) {
    out += "\nnotes:\n";
    for (const auto& n : c.notes) out += fmt::format("  - {}\n", n);
  }
  const auto& a = c.a;
  const auto& b = c.b;
  out += "\nstructure, side by side:\n";
  out += row("", "A " + a.structure.backend, "B " + b.structure.backend);
  out += row("lines", num(a.structure.lines), num(b.structure.lines));
  out += row("bytes", num(a.structure.bytes), num(b.structure.bytes));
  out += row("tables / chains", fmt::format("{} / {}", a.structure.tables, a.structure.chains),
             fmt::format("{} / {}", b.structure.tables, b.structure.chains));
  out += row("rules", num(a.structure.rules), num(b.structure.rules));
  out += row("sets / maps / elements",
             fmt::format("{} / {} / {}", a.structure.sets, a.structure.maps, a.structure.elements),
             fmt::format("{} / {} / {}", b.structure.sets, b.structure.maps, b.structure.elements));
  out += row("services / frontends / endpoints", fmt::format("{} / {} / {}", a.services, a.frontends, a.endpoints),
             fmt::format("{} / {} / {}", b.services, b.frontends, b.endpoints));
  out += row("written once per sync (rules/elements/chains)", share_text(a.structure.per_sync),
             share_text(b.structure.per_sync));
  out += row("  once per service port", share_text(a.structure.per_service), share_text(b.structure.per_service));
  out += row("  once per endpoint", share_text(a.structure.per_endpoint), share_text(b.structure.per_endpoint));
  out += row("ClusterIP lookup: rules evaluated, mean", fmt::format("{:.1f}", a.cluster_ip_rules_mean),
             fmt::format("{:.1f}", b.cluster_ip_rules_mean));
  out += row("  worst", num(a.cluster_ip_rules_worst), num(b.cluster_ip_rules_worst));
  out += row("  map lookups, mean", fmt::format("{:.1f}", a.cluster_ip_lookups_mean),
             fmt::format("{:.1f}", b.cluster_ip_lookups_mean));
  out += row("endpoint selection: rules evaluated, mean", fmt::format("{:.2f}", a.selection_rules_mean),
             fmt::format("{:.2f}", b.selection_rules_mean));
  out += row("  worst", num(a.selection_rules_worst), num(b.selection_rules_worst));
  auto cost = [](const dump_metrics& m, int which) -> std::string {
    if (m.cost_service.empty()) return "-";
    if (m.structure.backend == "iptables")
      return which == 0   ? fmt::format("{} lines", m.add_endpoint_full_lines)
             : which == 1 ? fmt::format("{} lines", m.add_endpoint_partial_lines)
                          : "-";
    return which == 2 ? fmt::format("{} ops", m.add_endpoint_nft_ops) : "-";
  };
  out += fmt::format("  add one endpoint (A: {}; B: {}):\n", a.cost_service.empty() ? "-" : a.cost_service,
                     b.cost_service.empty() ? "-" : b.cost_service);
  out += row("    iptables-restore, full sync", cost(a, 0), cost(b, 0));
  out += row("    iptables-restore, partial sync", cost(a, 1), cost(b, 1));
  out += row("    nft transaction", cost(a, 2), cost(b, 2));
  return out;
}

std::string to_json(const comparison& c, std::string_view name_a, std::string_view name_b) {
  using json = nlohmann::ordered_json;
  json j;
  j["equivalent"] = c.equivalent;
  j["tolerance"] = c.tolerance;
  j["unevaluated"] = {{"a", c.unevaluated_a}, {"b", c.unevaluated_b}};
  j["a"] = std::string(name_a);
  j["b"] = std::string(name_b);
  j["services_a"] = c.services_a;
  j["services_b"] = c.services_b;
  j["matched"] = c.matched;
  json diffs = json::array();
  for (const auto& d : c.differences)
    diffs.push_back(
        {{"kind", std::string(difference_kind_name(d.kind))}, {"service", d.service}, {"details", d.details}});
  j["differences"] = diffs;
  j["notes"] = c.notes;
  auto metrics = [](const dump_metrics& m) {
    auto share = [](const ruleset_structure::share& s) {
      return json{{"rules", s.rules}, {"elements", s.elements}, {"chains", s.chains}};
    };
    const auto& st = m.structure;
    json x;
    x["backend"] = st.backend;
    x["lines"] = st.lines;
    x["bytes"] = st.bytes;
    x["tables"] = st.tables;
    x["chains"] = st.chains;
    x["rules"] = st.rules;
    x["sets"] = st.sets;
    x["maps"] = st.maps;
    x["elements"] = st.elements;
    x["services"] = m.services;
    x["frontends"] = m.frontends;
    x["endpoints"] = m.endpoints;
    x["per_sync"] = share(st.per_sync);
    x["per_service_port"] = share(st.per_service);
    x["per_endpoint"] = share(st.per_endpoint);
    x["cluster_ip_rules_mean"] = m.cluster_ip_rules_mean;
    x["cluster_ip_rules_worst"] = m.cluster_ip_rules_worst;
    x["cluster_ip_lookups_mean"] = m.cluster_ip_lookups_mean;
    x["selection_rules_mean"] = m.selection_rules_mean;
    x["selection_rules_worst"] = m.selection_rules_worst;
    x["add_endpoint"] = {{"service", m.cost_service},
                         {"full_sync_lines", m.add_endpoint_full_lines},
                         {"partial_sync_lines", m.add_endpoint_partial_lines},
                         {"nft_ops", m.add_endpoint_nft_ops}};
    return x;
  };
  j["structure"] = {{"a", metrics(c.a)}, {"b", metrics(c.b)}};
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace nflens
