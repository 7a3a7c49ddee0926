// SPDX-License-Identifier: MIT
// From evaluated frontends to services: merging what NAT and the filter hooks do to each destination,
// telling gates (LoadBalancer source ranges) from short-circuits (Local policy), grouping frontends by
// the identity the ruleset records (or by the endpoint selection they reach), and reading endpoint
// shares off the selection.

#include "dispatch.hpp"
#include "evaluate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <cmath>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

namespace nflens::dispatch {
namespace {

using terminal_kind = terminal::kind;

struct dest_key {
  bool has_addr = false, local = false;
  ip_prefix addr;
  l4_protocol proto = l4_protocol::any;
  port_range port;
  friend auto operator<=>(const dest_key&, const dest_key&) = default;
};

dest_key key_of(const dest& d) {
  dest_key k;
  k.has_addr = d.has_addr;
  k.local = d.local;
  if (d.has_addr) k.addr = d.addr;
  k.proto = d.proto;
  k.port = d.has_port ? d.port : port_range{0, 65535};
  return k;
}

/// `ns/name:port` at the start of a kube-proxy comment, and the words after it.
struct comment_identity {
  service_name name;
  std::string_view suffix;
};

std::optional<comment_identity> identity_from_comment(std::string_view c) {
  if (c.empty()) return std::nullopt;
  const auto sp = c.find(' ');
  auto n = parse_service_name(c.substr(0, sp));
  if (!n) return std::nullopt;
  comment_identity id{std::move(*n), sp == std::string_view::npos ? std::string_view{} : c.substr(sp + 1)};
  return id;
}

/// kube-proxy nftables chain names: `service-HASH8-ns/name/proto/port`, likewise `local-`, `external-`,
/// `firewall-`, `endpoint-` (with `__ip/port`). Truncated names (ending in "...") give nothing.
std::optional<std::pair<service_name, l4_protocol>> identity_from_chain(std::string_view name) {
  for (std::string_view pre : {"service-", "local-", "external-", "firewall-", "endpoint-"}) {
    if (name.substr(0, pre.size()) != pre) continue;
    auto rest = name.substr(pre.size());
    if (rest.size() < 10 || rest[8] != '-') return std::nullopt;
    rest = rest.substr(9);
    if (rest.size() >= 3 && rest.substr(rest.size() - 3) == "...") return std::nullopt;
    if (const auto u = rest.find("__"); u != std::string_view::npos) rest = rest.substr(0, u);
    std::string_view parts[4];
    for (int i = 0; i < 3; ++i) {
      const auto s = rest.find('/');
      if (s == std::string_view::npos) return std::nullopt;
      parts[i] = rest.substr(0, s);
      rest = rest.substr(s + 1);
    }
    if (rest.find('/') != std::string_view::npos) return std::nullopt;
    parts[3] = rest;
    auto proto = parse_protocol(parts[2]);
    if (!proto || parts[0].empty() || parts[1].empty()) return std::nullopt;
    return std::make_pair(service_name{std::string(parts[0]), std::string(parts[1]), std::string(parts[3])}, *proto);
  }
  return std::nullopt;
}

/// A frontend being assembled from what NAT (rec), the post-DNAT filter (filter_rec) and the pre-DNAT
/// filter (gate_rec) do to one destination.
struct fe_work {
  index rec = none;
  index filter_rec = none;
  std::uint8_t filter_hooks = 0;  // after_nat_hook bits of the hooks where filter_rec's verdict is met
  index gate_rec = none;
  bool dead = false;  // folded into another
  dest d;
  std::optional<service_name> name;
  std::string_view suffix;  // comment words after the identity ("cluster IP", "has no endpoints", ...)
  l4_protocol name_proto = l4_protocol::any;
  std::vector<const terminal*> dispatch;  // DNAT results for admitted traffic
  index selection = none;                 // their selection chain (none: a direct DNAT rule)
  index direct_rule = none;
  bool has_dispatch = false;
  bool direct_first = false;  // the selection is the first chain entered
  outcome verdict = outcome::none;
  bool verdict_after_nat = false;  // `verdict` is filter_rec's (the chains after NAT, NAT left them untranslated)
  std::vector<ip_prefix> ranges;
  bool gated_before_nat = false;  // `ranges` come from a filter before NAT (nft firewall-check)
  outcome others = outcome::none;  // with `ranges`: what connections from other sources get
  outcome pre_dnat_verdict = outcome::none;  // every new connection dropped or rejected before NAT
  const terminal* reject_at = nullptr;        // the reject that gives `verdict` or `pre_dnat_verdict` its answer
  std::vector<ip_prefix> short_prefixes;
  bool short_local = false;
  std::vector<const branch*> affinity;
  std::vector<const branch*> shorts;  // the short-circuits (short_prefixes, short_local)
  std::vector<index> recs;  // every record that contributes (for origins and chains)
};

/// Endpoint shares of DNAT results, by address and port.
std::vector<endpoint_share> shares_of(const std::vector<const terminal*>& ts) {
  std::vector<endpoint_share> out;
  for (const auto* t : ts) {
    const auto it = std::find_if(out.begin(), out.end(), [&](const endpoint_share& x) {
      return x.address == t->addr && x.has_port == t->has_port && x.port == t->port;
    });
    if (it != out.end())
      it->probability += t->mass;
    else
      out.push_back({t->addr, t->has_port, t->port, t->mass});
  }
  std::sort(out.begin(), out.end(), [](const endpoint_share& a, const endpoint_share& b) {
    return std::tie(a.address, a.has_port, a.port) < std::tie(b.address, b.has_port, b.port);
  });
  return out;
}
/// The service's shares: cluster-wide, or those of the Local selection.
std::vector<endpoint_share> shares_of(const service& s, bool local) {
  std::vector<endpoint_share> out;
  for (const auto& e : s.endpoints) {
    const double p = local ? e.local_probability.value_or(0) : e.probability;
    if (p > 0) out.push_back({e.address, e.has_port, e.port, p});
  }
  std::sort(out.begin(), out.end(), [](const endpoint_share& a, const endpoint_share& b) {
    return std::tie(a.address, a.has_port, a.port) < std::tie(b.address, b.has_port, b.port);
  });
  return out;
}
bool same_shares(const std::vector<endpoint_share>& a, const std::vector<endpoint_share>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const endpoint_share& x, const endpoint_share& y) {
    return x.address == y.address && x.has_port == y.has_port && x.port == y.port &&
           std::abs(x.probability - y.probability) <= 1e-9;
  });
}

bool is_dnat(const terminal& t) { return t.k == terminal_kind::dnat || t.k == terminal_kind::redirect; }

bool dispatches(const frontend_record& r) { return std::any_of(r.results.begin(), r.results.end(), is_dnat); }

index selection_of(const std::vector<terminal>& ts) {
  for (const auto& t : ts)
    if (is_dnat(t)) return t.selection_chain;
  return none;
}

outcome verdict_of(const std::vector<terminal>& ts) {
  double drop = 0, reject = 0;
  for (const auto& t : ts) {
    if (t.k == terminal_kind::drop) drop += t.mass;
    if (t.k == terminal_kind::reject) reject += t.mass;
  }
  if (drop == 0 && reject == 0) return outcome::none;
  return reject >= drop ? outcome::reject : outcome::drop;
}

/// The reject end of `ts` that most connections meet (its answer is the frontend's), or null.
const terminal* heaviest_reject(const std::vector<terminal>& ts) {
  const terminal* best = nullptr;
  for (const auto& t : ts)
    if (t.k == terminal_kind::reject && (best == nullptr || t.mass > best->mass)) best = &t;
  return best;
}

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

class assembler {
 public:
  assembler(const program& p, evaluation& ev, std::vector<diagnostic>& out) : p_(p), ev_(ev), out_(out) {
    origin_chain_.assign(p.origins.size(), none);
    for (index c = 0; c < p.chains.size(); ++c)
      for (index r = p.chains[c].first; r < p.chains[c].first + p.chains[c].count; ++r)
        if (p.rules[r].origin != none) origin_chain_[p.rules[r].origin] = c;
    if (p.cluster_ip_set != none) {
      const auto& s = p.sets[p.cluster_ip_set];
      for (index i = s.first; i < s.first + s.count; ++i) cluster_ips_.insert(p.values[i].prefix.address);
    }
    for (const auto& s : p.sets) set_names_.insert(s.name);
  }

  dispatch_graph run() {
    dispatch_graph g;
    g.backend = p_.backend;
    g.family = p_.family;
    g.sources = p_.sources;
    g.structure = p_.structure;
    collect();
    group(g);
    return g;
  }

 private:
  // ---- frontends ------------------------------------------------------------------------------

  void set_identity(fe_work& w, const frontend_record& r) const {
    if (w.name) return;
    if (auto id = identity_from_comment(r.comment)) {
      w.name = std::move(id->name);
      w.suffix = id->suffix;
      return;
    }
    for (const index c : r.chains)
      if (auto id = identity_from_chain(p_.chains[c].name)) {
        w.name = std::move(id->first);
        w.name_proto = id->second;
        return;
      }
  }

  bool has_identity(const frontend_record& r) const {
    fe_work w;
    set_identity(w, r);
    return w.name.has_value();
  }

  /// A pre-DNAT record that drops every source but some prefixes (nft `ip saddr != { ... } drop`).
  std::optional<std::vector<ip_prefix>> gate_of(const frontend_record& r) const {
    std::vector<ip_prefix> allowed;
    bool dropped = false;
    for (const auto& t : r.results) {
      if (t.k != terminal_kind::drop && t.k != terminal_kind::reject) continue;
      dropped = true;
      if (t.rule == none) continue;
      const auto& ru = p_.rules[t.rule];
      for (index k = ru.first; k < ru.first + ru.count; ++k) {
        const auto& c = p_.conditions[k];
        if (c.what != field::saddr || !c.negated) continue;
        index first = c.first, count = c.count;
        if (c.kind == cond_kind::addr_set) {
          if (c.set == none) continue;
          first = p_.sets[c.set].first;
          count = p_.sets[c.set].count;
        } else if (c.kind != cond_kind::addr) {
          continue;
        }
        for (index v = first; v < first + count; ++v) allowed.push_back(p_.values[v].prefix);
      }
    }
    if (!dropped) return std::nullopt;
    // sources a rule singles out before the drop and lets through (`ip saddr 203.0.113.0/25 accept`)
    for (const auto& b : r.branches)
      if (b.cls.k == source_class::kind::prefix &&
          std::none_of(b.results.begin(), b.results.end(), [](const terminal& t) {
            return t.k == terminal_kind::drop || t.k == terminal_kind::reject;
          }))
        allowed.push_back(b.cls.prefix);
    return allowed;
  }

  void collect() {
    const auto& fr = ev_.frontends;
    std::map<dest_key, index> nat_by_key, post_by_key, pre_by_key;
    std::map<dest_key, std::uint8_t> post_hooks;  // after_nat_hook bits where the chains after NAT end them
    std::map<index, std::vector<index>> extra;  // records folded into a kept one
    for (index i = 0; i < fr.size(); ++i) {
      const auto& r = fr[i];
      const auto k = key_of(r.d);
      if (r.when == stage::nat) {
        const bool useful = dispatches(r) || !r.branches.empty() || has_identity(r);
        if (!useful) continue;  // a destination some rule names but nothing translates
        auto [it, fresh] = nat_by_key.emplace(k, i);
        if (!fresh) {
          // The same destination met twice (several hooks, or a shadowed rule): the first that translates wins.
          if (!dispatches(fr[it->second]) && dispatches(r)) {
            extra[i].push_back(it->second);
            for (auto x : extra[it->second]) extra[i].push_back(x);
            it->second = i;
          } else {
            extra[it->second].push_back(i);
          }
        }
      } else if (r.when == stage::post_dnat) {
        if (verdict_of(r.results) != outcome::none) {
          post_by_key.emplace(k, i);
          post_hooks[k] |= r.hooks;  // one destination's drop met from several hooks, in several records
        }
      } else if (gate_of(r)) {
        pre_by_key.emplace(k, i);
      }
    }
    auto take = [](std::map<dest_key, index>& m, const dest_key& k) {
      auto it = m.find(k);
      if (it == m.end()) return none;
      const index v = it->second;
      m.erase(it);
      return v;
    };
    for (auto& [k, i] : nat_by_key) {
      fe_work w;
      w.rec = i;
      w.d = fr[i].d;
      w.recs.push_back(i);
      for (auto x : extra[i]) w.recs.push_back(x);
      w.filter_rec = take(post_by_key, k);
      w.filter_hooks = post_hooks[k];
      w.gate_rec = take(pre_by_key, k);
      work_.push_back(std::move(w));
    }
    for (auto& [k, i] : post_by_key) {
      fe_work w;
      w.filter_rec = i;
      w.filter_hooks = post_hooks[k];
      w.d = fr[i].d;
      w.gate_rec = take(pre_by_key, k);
      work_.push_back(std::move(w));
    }
    for (auto& [k, i] : pre_by_key) {
      fe_work w;
      w.gate_rec = i;
      w.d = fr[i].d;
      work_.push_back(std::move(w));
    }
    for (auto& w : work_) {
      if (w.filter_rec != none) w.recs.push_back(w.filter_rec);
      if (w.gate_rec != none) w.recs.push_back(w.gate_rec);
      analyse(w);
    }
    fold_narrower();
  }

  void analyse(fe_work& w) {
    const auto& fr = ev_.frontends;
    for (const index r : w.recs) set_identity(w, fr[r]);
    // A gate before NAT holds for the frontend only where it runs at every hook NAT translates the
    // frontend at (nft's filter-prerouting-pre-dnat and filter-output-pre-dnat): a hook without it lets
    // every source through there.
    // (A filter that ends every source's connections is not judged so: where it is missing before NAT, one
    // after NAT may end them, as kube-proxy up to 1.31 rejected a service without endpoints in output's
    // filter before NAT and in forward's and input's after it.)
    const std::uint8_t nat_hooks = w.rec != none ? fr[w.rec].hooks : std::uint8_t{0};
    const auto gate = w.gate_rec != none ? gate_of(fr[w.gate_rec]) : std::nullopt;
    const bool gate_everywhere = !gate || gate->empty() || (fr[w.gate_rec].hooks & nat_hooks) == nat_hooks;
    if (!gate_everywhere && !fr[w.gate_rec].origins.empty())
      warn_once(fr[w.gate_rec].origins.front(),
                fmt::format("a filter before NAT ends some connections to {} at {} only; NAT translates them at {} too, "
                            "where nothing before it does: the graph takes them as not ended there",
                            to_string(w.d.addr.address), hook_names(fr[w.gate_rec].hooks), hook_names(nat_hooks)));
    if (gate_everywhere)
      if (auto g = gate) {
        if (g->empty()) {
          w.pre_dnat_verdict = verdict_of(fr[w.gate_rec].results);  // no source gets past it
          w.reject_at = heaviest_reject(fr[w.gate_rec].results);
        } else {
          w.ranges = std::move(*g);
          w.gated_before_nat = true;
        }
      }
    if (w.rec != none) {
      const auto& r = fr[w.rec];
      for (const auto& t : r.results)
        if (is_dnat(t)) w.dispatch.push_back(&t);
      const bool generic_dispatch = !w.dispatch.empty();
      for (const auto& b : r.branches) {
        if (b.cls.k == source_class::kind::affinity) {
          w.affinity.push_back(&b);
          continue;
        }
        const bool reaches = std::any_of(b.results.begin(), b.results.end(), is_dnat);
        const index sel = selection_of(b.results);
        if (reaches && sel != none && sel == b.target) {
          // Straight into an endpoint selection: a short-circuit for this source (Local policy).
          if (b.cls.k == source_class::kind::local)
            w.short_local = true;
          else if (std::find(w.short_prefixes.begin(), w.short_prefixes.end(), b.cls.prefix) == w.short_prefixes.end())
            w.short_prefixes.push_back(b.cls.prefix);  // once, however often the dispatch is entered
          w.shorts.push_back(&b);
        } else if (!generic_dispatch && b.cls.k == source_class::kind::prefix && b.target != none) {
          // A gate before the service's own dispatch (iptables KUBE-FW-*): only these sources get in (and
          // under the Local policy without local endpoints, even they are dropped later).
          w.ranges.push_back(b.cls.prefix);
          if (w.dispatch.empty() && reaches)
            for (const auto& t : b.results)
              if (is_dnat(t)) w.dispatch.push_back(&t);
        } else {
          // Clients from one source range go elsewhere than the others, in none of the shapes above
          // (a RETURN or verdict for them, their own endpoint): the graph shows the other clients.
          warn_once(b.origin,
                    b.cls.k == source_class::kind::local
                        ? std::string("connections from the node's own addresses are sent elsewhere here than other "
                                      "clients' (not an endpoint selection): the graph shows the other clients' "
                                      "dispatch only")
                        : fmt::format("connections from {} are sent elsewhere here than other clients' (not an "
                                      "endpoint selection or a source-range gate): the graph shows the other "
                                      "clients' dispatch only",
                                      to_string(b.cls.prefix)));
        }
      }
      if (!w.dispatch.empty()) {
        w.has_dispatch = true;
        w.selection = w.dispatch.front()->selection_chain;
        if (w.selection == none) w.direct_rule = w.dispatch.front()->rule;
        w.direct_first = w.selection != none && w.dispatch.front()->depth == 2;
      }
      w.verdict = verdict_of(r.results);
      if (w.pre_dnat_verdict == outcome::none) w.reject_at = heaviest_reject(r.results);
    }
    if (w.verdict == outcome::none && w.filter_rec != none) {
      w.verdict = verdict_of(fr[w.filter_rec].results);
      w.verdict_after_nat = w.verdict != outcome::none;
      if (w.pre_dnat_verdict == outcome::none) w.reject_at = heaviest_reject(fr[w.filter_rec].results);
    }
    if (w.verdict == outcome::none && !w.has_dispatch && w.gate_rec != none && !w.ranges.empty())
      w.verdict = outcome::drop;
    // Connections from sources outside the ranges: dropped by the gate itself (before NAT), or, gated in
    // NAT (KUBE-FW-*), left untranslated for the filter chains after it (KUBE-PROXY-FIREWALL) to drop.
    // The filter after NAT holds for them only where it runs at every hook they go on to: without its jump
    // from forward (an address the node does not own) or input (one it does), arriving connections pass.
    if (!w.ranges.empty()) {
      if (w.gated_before_nat)
        w.others = verdict_of(fr[w.gate_rec].results);
      else if (w.filter_rec != none && filter_everywhere(w, nat_hooks))
        w.others = verdict_of(fr[w.filter_rec].results);
    }
    std::sort(w.ranges.begin(), w.ranges.end());
    w.ranges.erase(std::unique(w.ranges.begin(), w.ranges.end()), w.ranges.end());
  }

  /// Folds a frontend narrowed to some local addresses (kube-proxy's NodePorts on 127.0.0.0/8) into the
  /// frontend on any local address with the same port and dispatch.
  void fold_narrower() {
    std::map<std::tuple<l4_protocol, port_range, index, std::string>, fe_work*> wide;
    for (auto& b : work_)
      if (b.d.local && !b.d.has_addr)
        wide.emplace(std::make_tuple(b.d.proto, b.d.port, b.selection, b.name ? b.name->str() : std::string{}), &b);
    for (auto& a : work_) {
      if (!a.d.local || !a.d.has_addr) continue;
      auto it = wide.find(std::make_tuple(a.d.proto, a.d.port, a.selection, a.name ? a.name->str() : std::string{}));
      if (it == wide.end()) continue;
      for (auto r : a.recs) it->second->recs.push_back(r);
      a.dead = true;
    }
  }

  // ---- services -------------------------------------------------------------------------------

  struct service_work {
    std::optional<service_name> name;
    l4_protocol proto = l4_protocol::any;
    std::vector<fe_work*> fes;
  };

  void group(dispatch_graph& g) {
    std::map<std::pair<std::string, l4_protocol>, std::size_t> by_name;
    std::map<std::pair<index, index>, std::size_t> by_selection;
    std::vector<service_work> sws;
    for (auto& w : work_) {
      if (w.dead) continue;
      const l4_protocol proto = w.d.has_proto ? w.d.proto : w.name_proto;
      std::size_t at = sws.size();
      if (w.name) {
        auto [it, fresh] = by_name.emplace(std::make_pair(w.name->str(), proto), sws.size());
        at = it->second;
        if (fresh) sws.push_back(service_work{w.name, proto, {}});
      } else if (w.has_dispatch) {
        auto [it, fresh] = by_selection.emplace(std::make_pair(w.selection, w.direct_rule), sws.size());
        at = it->second;
        if (fresh) sws.push_back(service_work{std::nullopt, proto, {}});
      } else {
        continue;  // neither identity nor translation: not a service
      }
      sws[at].fes.push_back(&w);
    }
    for (auto& sw : sws) build_service(g, sw);
    measure(g);
    // Named services sorted by name (as the ground truth is), then the others by their first frontend.
    std::vector<std::size_t> order(g.services.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto label = [&](std::size_t i) { return g.services[i].label(); };
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const auto& sa = g.services[a];
      const auto& sb = g.services[b];
      if (sa.name.has_value() != sb.name.has_value()) return sa.name.has_value();
      if (sa.name && sb.name) {
        const auto na = sa.name->str(), nb = sb.name->str();
        if (na != nb) return na < nb;
        return sa.protocol < sb.protocol;
      }
      return label(a) < label(b);
    });
    std::vector<service> sorted;
    std::vector<dispatch_graph::owned> owned;
    sorted.reserve(order.size());
    for (auto i : order) {
      sorted.push_back(std::move(g.services[i]));
      owned.push_back(g.ownership[i]);
    }
    g.services = std::move(sorted);
    g.ownership = std::move(owned);
  }

  bool in_cluster_set(const dest& d) const { return d.has_addr && cluster_ips_.count(d.addr.address) != 0; }

  const fe_work* find_cluster_ip(const service_work& sw) const {
    for (const auto* w : sw.fes)
      if (starts_with(w->suffix, "cluster IP")) return w;
    for (const auto* w : sw.fes)
      if (in_cluster_set(w->d)) return w;
    for (const auto* w : sw.fes)
      if (w->rec == none && w->filter_rec != none && p_.cluster_ip_chain != none &&
          ev_.frontends[w->filter_rec].entry_chain == p_.cluster_ip_chain)
        return w;
    if (!sw.name) return nullptr;
    for (const auto* w : sw.fes)
      if (w->has_dispatch && w->direct_first && w->d.has_addr && !w->d.local && w->d.addr_set == none) return w;
    // kube-proxy writes a ClusterIP for every service port: when only one address frontend is left
    // (a service without endpoints in a dump without a `cluster-ips` set), it is that one.
    const fe_work* only = nullptr;
    for (const auto* w : sw.fes) {
      if (!w->d.has_addr || w->d.local || (w->d.addr_set != none && w->d.addr_set != p_.cluster_ip_set)) continue;
      // not one the dump places elsewhere: an address outside the ruleset's ClusterIP set (nft
      // `cluster-ips`), or one only the filter chains name, outside the ClusterIP's chain (iptables
      // KUBE-EXTERNAL-SERVICES)
      if (!cluster_ips_.empty() && !in_cluster_set(w->d)) continue;
      if (w->rec == none && w->filter_rec != none && p_.cluster_ip_chain != none &&
          ev_.frontends[w->filter_rec].entry_chain != p_.cluster_ip_chain)
        continue;
      if (only != nullptr) return nullptr;
      only = w;
    }
    return only;
  }

  frontend_kind classify(const fe_work& w, const fe_work* cluster) const {
    if (starts_with(w.suffix, "cluster IP")) return frontend_kind::cluster_ip;
    if (starts_with(w.suffix, "external IP")) return frontend_kind::external_ip;
    if (starts_with(w.suffix, "loadbalancer IP")) return frontend_kind::load_balancer_ip;
    if (!w.name) return frontend_kind::dnat;
    if (&w == cluster) return frontend_kind::cluster_ip;
    if (w.d.local || (w.d.addr_set != none && w.d.addr_set != p_.cluster_ip_set)) return frontend_kind::node_port;
    // iptables' KUBE-NODEPORTS reached for one node address (kube-proxy's --nodeport-addresses: `-d
    // 192.168.49.2/32 -j KUBE-NODEPORTS`, where nftables mode has its nodeport-ips set)
    if (w.rec != none && p_.nodeport_chain != none) {
      const auto& r = ev_.frontends[w.rec];
      if (r.entry_chain == p_.nodeport_chain ||
          std::find(r.chains.begin(), r.chains.end(), p_.nodeport_chain) != r.chains.end())
        return frontend_kind::node_port;
    }
    if (!w.ranges.empty()) return frontend_kind::load_balancer_ip;
    return frontend_kind::external_or_load_balancer_ip;
  }

  void add_origin(std::vector<origin>& out, index o) const {
    if (o == none) return;
    const auto& x = p_.origins[o];
    for (const auto& y : out)
      if (y == x) return;
    out.push_back(x);
  }

  void add_chain_rules(std::vector<origin>& out, index c) const {
    if (c == none) return;
    const auto& ch = p_.chains[c];
    for (index r = ch.first; r < ch.first + ch.count; ++r) add_origin(out, p_.rules[r].origin);
  }

  /// Endpoints and their shares from one frontend's DNAT results.
  std::vector<endpoint> endpoints_of(const std::vector<const terminal*>& ts, const frontend_record* rec) const {
    std::vector<endpoint> eps;
    std::vector<std::tuple<ip_address, bool, std::uint16_t>> keys;
    for (const auto* t : ts) {
      const auto key = std::make_tuple(t->addr, t->has_port, t->port);
      auto it = std::find(keys.begin(), keys.end(), key);
      if (it != keys.end()) {
        auto& e = eps[static_cast<std::size_t>(it - keys.begin())];
        e.probability += t->mass;
        if (e.mechanism != selection::statistic_ladder) e.threshold += t->slots;
        continue;
      }
      keys.push_back(key);
      endpoint e;
      e.address = t->addr;
      e.has_port = t->has_port;
      e.port = t->port;
      e.probability = t->mass;
      e.mechanism = t->mech;
      e.threshold = t->mech == selection::statistic_ladder ? t->threshold : t->slots;
      e.modulus = t->modulus;
      e.position = static_cast<std::uint32_t>(eps.size());
      add_origin(e.origins, t->selection_origin);
      add_chain_rules(e.origins, t->endpoint_chain);
      if (rec != nullptr)
        for (const auto& m : rec->masq)
          if (m.chain == t->endpoint_chain && t->endpoint_chain != none &&
              std::find(e.masquerades.begin(), e.masquerades.end(), m.m) == e.masquerades.end())
            e.masquerades.push_back(m.m);
      eps.push_back(std::move(e));
    }
    // The ladder's last rule has no `-m statistic`: it takes all that is left (threshold 2^31).
    const bool ladder = std::any_of(eps.begin(), eps.end(),
                                    [](const endpoint& e) { return e.mechanism == selection::statistic_ladder; });
    if (ladder)
      for (auto& e : eps)
        if (e.mechanism == selection::single) {
          e.mechanism = selection::statistic_ladder;
          e.threshold = 0x80000000u;
        }
    return eps;
  }

  void build_service(dispatch_graph& g, service_work& sw) {
    const auto& fr = ev_.frontends;
    service s;
    s.name = sw.name;
    s.protocol = sw.proto;
    const fe_work* cluster = find_cluster_ip(sw);
    const fe_work* rep = cluster != nullptr && cluster->has_dispatch ? cluster : nullptr;
    if (rep == nullptr)
      for (const auto* w : sw.fes)
        if (w->has_dispatch) {
          rep = w;
          break;
        }
    const index cluster_sel = rep != nullptr ? rep->selection : none;
    const frontend_record* rep_rec = rep != nullptr && rep->rec != none ? &fr[rep->rec] : nullptr;
    std::set<index> endpoint_chains;
    if (rep != nullptr) {
      s.endpoints = endpoints_of(rep->dispatch, rep_rec);
      for (const auto* t : rep->dispatch) endpoint_chains.insert(t->endpoint_chain);
      double sum = 0;
      for (const auto& e : s.endpoints) sum += e.probability;
      s.untranslated = sum < 1 ? 1 - sum : 0;
      if (s.untranslated < 1e-12) s.untranslated = 0;
      add_chain_rules(s.origins, cluster_sel);
    }
    // Affinity: rules that send a known client straight to its endpoint.
    std::uint32_t timeout = 0;
    bool affinity = false;
    for (const auto* w : sw.fes)
      for (const auto* b : w->affinity) {
        affinity = true;
        for (const auto& t : b->results)
          if (is_dnat(t)) {
            const std::uint32_t kept = recorded_timeout(t.endpoint_chain, b->cls.list).value_or(b->cls.timeout_s);
            const recording how = records_client(t.endpoint_chain, b->cls.list);
            // a check that never finds a client (its endpoint chain does not record them) keeps none there
            if (how != recording::none) {
              timeout = std::max(timeout, kept);
              for (auto& e : s.endpoints)
                if (e.address == t.addr && e.port == t.port) {
                  e.affinity = true;
                  e.affinity_timeout_s = std::max(e.affinity_timeout_s, kept);
                }
            }
            switch (how) {
              case recording::none:
                report_broken_affinity(*b, t);
                break;
              case recording::first:
                warn_once(b->origin,
                          fmt::format("session affinity: the endpoint chain of {} records clients in '{}' with `add`, "
                                      "which leaves a recorded client's timer running: affinity ends {} s after its "
                                      "first connection, not its last (kube-proxy writes `update`)",
                                      to_string(t.addr), b->cls.list, kept));
                break;
              case recording::last:
                break;
            }
          }
      }
    if (affinity) s.affinity_timeout_s = timeout;
    // Frontends.
    bool local_policy = false;
    const std::vector<endpoint>* local_eps_src = nullptr;
    std::vector<endpoint> local_eps;
    bool any_external = false, any_gate = false;
    for (const auto* w : sw.fes) {
      frontend f;
      f.kind = classify(*w, cluster);
      f.any_local = w->d.local;
      f.has_address = w->d.has_addr;
      f.address = w->d.addr;
      for (std::uint8_t i = 0; i < w->d.n_excl; ++i) f.excluded.push_back(w->d.excl[i]);
      f.protocol = w->d.has_proto ? w->d.proto : l4_protocol::any;
      f.port = w->d.has_port ? w->d.port : port_range{0, 65535};
      if (w->pre_dnat_verdict != outcome::none) {
        f.result = w->pre_dnat_verdict;  // dropped before NAT could translate it
      } else if (w->has_dispatch) {
        f.result = (w->selection == cluster_sel || cluster_sel == none) ? outcome::dispatch : outcome::dispatch_local;
      } else if (w->verdict_after_nat && !filter_everywhere(*w, f.kind)) {
        f.result = outcome::none;  // let through where the filter does not run
      } else {
        f.result = w->verdict;
      }
      if (f.result == outcome::reject && w->reject_at != nullptr) {
        const ip_family fam = f.has_address ? f.address.address.family : p_.family;
        f.reject_with = fam == ip_family::ipv6 ? w->reject_at->reject6 : w->reject_at->reject4;
      }
      // kube-proxy also admits the LoadBalancer IPs themselves when a source range holds the node's IP;
      // they are admitted sources of the frontend (compared), not part of loadBalancerSourceRanges.
      std::vector<ip_prefix> own_ips;
      for (const auto& pr : w->ranges) {
        bool own = false;
        for (const auto* o : sw.fes)
          if (o->d.has_addr && pr.length == max_prefix_length(pr.address.family) && o->d.addr.address == pr.address &&
              !o->ranges.empty())
            own = true;
        f.source_ranges.push_back(pr);
        if (own) own_ips.push_back(pr);
      }
      if (!f.source_ranges.empty()) f.other_sources = w->others;
      f.short_circuit_sources = w->short_prefixes;
      f.short_circuit_local = w->short_local;
      if (w->rec != none) {
        const auto& r = fr[w->rec];
        f.rules_evaluated = r.evaluated;
        f.lookups = r.lookups;
        // Masquerading in endpoint chains is the endpoints' own (hairpin), whichever source reached them.
        std::set<index> own_eps;
        for (const auto& t : r.results) own_eps.insert(t.endpoint_chain);
        for (const auto& b : r.branches)
          for (const auto& t : b.results) own_eps.insert(t.endpoint_chain);
        for (const auto& m : r.masq)
          if (!own_eps.count(m.chain) &&
              std::find(f.masquerades.begin(), f.masquerades.end(), m.m) == f.masquerades.end())
            f.masquerades.push_back(m.m);
        std::sort(f.masquerades.begin(), f.masquerades.end());
      }
      for (const index ri : w->recs) {
        const auto& r = fr[ri];
        if (r.when == stage::nat) f.hooks |= r.hooks;
        add_origin(f.origins, r.entry_origin);
        for (const index o : r.origins) {
          const index c = o < origin_chain_.size() ? origin_chain_[o] : none;
          if (c != none && (c == w->selection || endpoint_chains.count(c))) continue;
          add_origin(f.origins, o);
        }
      }
      const bool external = f.kind != frontend_kind::cluster_ip && f.kind != frontend_kind::dnat;
      if (external) {
        any_external = true;
        if (!f.source_ranges.empty()) any_gate = true;
        if (f.result == outcome::dispatch_local) {
          local_policy = true;
          if (local_eps_src == nullptr && w->rec != none) {
            local_eps = endpoints_of(w->dispatch, &fr[w->rec]);
            local_eps_src = &local_eps;
            add_chain_rules(s.origins, w->selection);
          }
        }
        if ((f.result == outcome::drop || f.result == outcome::reject || f.result == outcome::none) &&
            !s.endpoints.empty())
          local_policy = true;
        if (f.short_circuit_local || !f.short_circuit_sources.empty()) local_policy = true;
        for (const auto& pr : f.source_ranges)
          if (std::find(own_ips.begin(), own_ips.end(), pr) == own_ips.end() &&
              std::find(s.load_balancer_source_ranges.begin(), s.load_balancer_source_ranges.end(), pr) ==
                  s.load_balancer_source_ranges.end())
            s.load_balancer_source_ranges.push_back(pr);
        if (f.kind == frontend_kind::external_or_load_balancer_ip)
          s.unknown |= static_cast<std::uint8_t>(unknown_fact::external_kind);
      }
      s.frontends.push_back(std::move(f));
    }
    s.external_traffic_local = local_policy && any_external;
    const auto own_shares_later = [&] {
      // Frontends (and their short-circuited clients) whose connections are not split as the service's
      // selection says carry their own shares (frontends are still in the order of sw.fes here).
      for (std::size_t i = 0; i < s.frontends.size() && i < sw.fes.size(); ++i) {
        auto& f = s.frontends[i];
        const auto* w = sw.fes[i];
        if ((f.result == outcome::dispatch || f.result == outcome::dispatch_local) && w->has_dispatch) {
          auto own = shares_of(w->dispatch);
          if (!same_shares(own, shares_of(s, f.result == outcome::dispatch_local))) f.shares = std::move(own);
        }
        for (const auto* b : w->shorts) {
          std::vector<const terminal*> ts;
          for (const auto& t : b->results)
            if (is_dnat(t)) ts.push_back(&t);
          auto own = shares_of(ts);
          if (!same_shares(own, shares_of(s, false))) {
            f.short_circuit_shares = std::move(own);
            break;
          }
        }
      }
    };
    if (local_eps_src != nullptr) {
      for (const auto& le : local_eps) {
        bool known = false;
        for (auto& e : s.endpoints)
          if (e.address == le.address && e.port == le.port) {
            e.local_probability = le.probability;
            known = true;
          }
        // An endpoint only external traffic reaches (the ClusterIP never does): listed with share 0
        // from the ClusterIP and its share of external traffic, so that it is seen and compared.
        if (!known) {
          endpoint e = le;
          e.probability = 0;
          e.local_probability = le.probability;
          e.position = static_cast<std::uint32_t>(s.endpoints.size());
          s.endpoints.push_back(std::move(e));
        }
      }
    }
    if (s.endpoints.empty()) {
      outcome v = outcome::none;
      for (const auto& f : s.frontends)
        if (f.result == outcome::reject || (f.result == outcome::drop && v == outcome::none)) v = f.result;
      s.no_endpoints = v;
      s.unknown |=
          static_cast<std::uint8_t>(unknown_fact::affinity) | static_cast<std::uint8_t>(unknown_fact::traffic_policy);
      if (any_external && !any_gate) s.unknown |= static_cast<std::uint8_t>(unknown_fact::source_ranges);
      s.external_traffic_local = false;
    }
    own_shares_later();
    // what the chains after NAT do to connections translated to each endpoint
    for (auto& e : s.endpoints)
      for (const auto& v : ev_.after_nat)
        if (e.has_port && v.addr == e.address && v.port == e.port && (v.proto == s.protocol || s.protocol == l4_protocol::any)) {
          e.after_nat = v.end.k == terminal::kind::reject ? outcome::reject : outcome::drop;
          add_origin(e.origins, v.end.rule < p_.rules.size() ? p_.rules[v.end.rule].origin : none);
        }
    std::sort(s.frontends.begin(), s.frontends.end(), [](const frontend& a, const frontend& b) {
      return std::make_tuple(a.kind, !a.any_local, a.address, a.protocol, a.port) <
             std::make_tuple(b.kind, !b.any_local, b.address, b.protocol, b.port);
    });
    // Ownership, for the update cost model: the chains this service alone enters.
    std::set<index> chains;
    std::set<std::string_view> aff_sets;
    dispatch_graph::owned own;
    for (const auto* w : sw.fes) {
      for (const index ri : w->recs)
        for (const index c : fr[ri].chains) chains.insert(c);
      for (const auto* b : w->affinity)
        if (b->cls.k == source_class::kind::affinity) aff_sets.insert(b->cls.list);
      for (const index ri : w->recs) {
        const index eo = fr[ri].entry_origin;
        if (eo != none && p_.origins[eo].kind == origin_kind::map_element) ++own.elements;
      }
    }
    for (const auto& sn : aff_sets) own.sets += static_cast<std::uint32_t>(set_names_.count(sn));
    service_chains_.push_back(std::vector<index>(chains.begin(), chains.end()));
    service_endpoint_chains_.push_back(std::vector<index>(endpoint_chains.begin(), endpoint_chains.end()));
    g.services.push_back(std::move(s));
    g.ownership.push_back(own);
  }

  /// Owned chains (entered by one service only) and the shares of rules per sync / service / endpoint.
  void measure(dispatch_graph& g) {
    std::vector<std::uint32_t> users(p_.chains.size(), 0);
    for (const auto& cs : service_chains_)
      for (const index c : cs) ++users[c];
    std::vector<std::uint8_t> is_endpoint_chain(p_.chains.size(), 0);
    for (const auto& cs : service_endpoint_chains_)
      for (const index c : cs)
        if (c != none) is_endpoint_chain[c] = 1;
    auto& st = g.structure;
    st.per_service = {};
    st.per_endpoint = {};
    for (index c = 0; c < p_.chains.size(); ++c) {
      if (users[c] != 1) continue;
      if (is_endpoint_chain[c]) {
        ++st.per_endpoint.chains;
        st.per_endpoint.rules += p_.chains[c].count;
      } else {
        ++st.per_service.chains;
        st.per_service.rules += p_.chains[c].count;
      }
    }
    // Rules and elements in shared chains that belong to one service: each frontend's entry.
    for (const auto& s : g.services)
      for (const auto& f : s.frontends)
        if (!f.origins.empty()) {
          if (f.origins.front().kind == origin_kind::map_element) ++st.per_service.elements;
        }
    for (const auto& w : work_) {
      if (w.dead) continue;
      for (const index ri : w.recs) {
        const index eo = ev_.frontends[ri].entry_origin;
        if (eo == none || p_.origins[eo].kind != origin_kind::rule) continue;
        const index c = origin_chain_[eo];
        if (c != none && users[c] != 1) ++st.per_service.rules;
      }
    }
    st.per_sync.rules = st.rules > st.per_service.rules + st.per_endpoint.rules
                            ? st.rules - st.per_service.rules - st.per_endpoint.rules
                            : 0;
    st.per_sync.chains = st.chains > st.per_service.chains + st.per_endpoint.chains
                             ? st.chains - st.per_service.chains - st.per_endpoint.chains
                             : 0;
    st.per_sync.elements = st.elements > st.per_service.elements ? st.elements - st.per_service.elements : 0;
    // iptables-restore lines kube-proxy writes: per table with chains of its own, `*table` and `COMMIT`,
    // then a `:CHAIN` line and the rules of each chain; a partial sync leaves out the nat chains that
    // belong to one service (they are written only for the services that changed).
    if (p_.backend == "iptables") {
      std::uint64_t full = 0, fixed = 0;
      for (const auto t : {table_kind::filter, table_kind::nat}) {
        bool any = false;
        for (index c = 0; c < p_.chains.size(); ++c) {
          const auto& ch = p_.chains[c];
          if (ch.table != t || !ch.written) continue;
          any = true;
          full += 1 + ch.count;
          if (t == table_kind::filter || users[c] != 1) fixed += 1 + ch.count;
        }
        if (any) full += 2, fixed += 2;
      }
      st.full_sync_lines = full;
      st.partial_sync_fixed_lines = fixed;
    }
    for (std::size_t i = 0; i < service_chains_.size() && i < g.ownership.size(); ++i)
      for (const index c : service_chains_[i])
        if (users[c] == 1) {
          ++g.ownership[i].chains;
          g.ownership[i].rules += p_.chains[c].count;
        }
  }

  /// How an endpoint chain records the client in `list`, so that the affinity check that leads to it finds
  /// the client again: from its last connection (iptables `-m recent --set --name LIST`, nft `update @LIST
  /// { ip saddr }`), from its first (nft `add`, which keeps an element's timer), or not at all.
  enum class recording : std::uint8_t { none, first, last };
  recording records_client(index chain, std::string_view list) const {
    if (chain == none || chain >= p_.chains.size()) return recording::last;  // a direct DNAT: nothing to check
    const auto& ch = p_.chains[chain];
    for (index i = ch.first; i < ch.first + ch.count; ++i) {
      const auto& r = p_.rules[i];
      for (index k = r.first; k < r.first + r.count; ++k)
        if (p_.conditions[k].kind == cond_kind::recent_set && p_.conditions[k].name == list) return recording::last;
      if (r.act.kind == action_kind::set_update && r.act.set < p_.sets.size() && p_.sets[r.act.set].name == list)
        return r.act.set_add ? recording::first : recording::last;
    }
    return recording::none;
  }
  /// How long the endpoint chain's own record of a client in `list` lasts, when its rule gives a timeout
  /// of its own (nft `update @LIST { ip saddr timeout 1h }`, which outlives the set's `timeout`).
  std::optional<std::uint32_t> recorded_timeout(index chain, std::string_view list) const {
    if (chain == none || chain >= p_.chains.size()) return std::nullopt;
    const auto& ch = p_.chains[chain];
    for (index i = ch.first; i < ch.first + ch.count; ++i) {
      const auto& a = p_.rules[i].act;
      if (a.kind == action_kind::set_update && a.set < p_.sets.size() && p_.sets[a.set].name == list)
        return a.set_timeout_s;
    }
    return std::nullopt;
  }
  void report_broken_affinity(const branch& b, const terminal& t) {
    warn_once(b.origin, fmt::format("session affinity: clients found in '{}' are sent to {}, whose endpoint chain "
                                    "does not record them there, so the check never finds one: that endpoint has no "
                                    "session affinity",
                                    b.cls.list, to_string(t.addr)));
  }
  /// Whether the chains after NAT end `w`'s untranslated connections at every hook after NAT they reach
  /// (`need`, after_nat_hook bits); warns where not, naming `what` is ended. A record reached from
  /// fallback entries only (no hooks: input without the hooks' jumps) counts as everywhere.
  bool filter_everywhere(const fe_work& w, std::uint8_t need, std::string_view what) {
    const std::uint8_t missing = static_cast<std::uint8_t>(need & ~w.filter_hooks);
    if (w.filter_hooks == 0 || missing == 0) return true;
    // at the rule that ends them (kube-proxy's KUBE-PROXY-FIREWALL drop)
    index at = none;
    for (const auto& t : ev_.frontends[w.filter_rec].results)
      if ((t.k == terminal_kind::drop || t.k == terminal_kind::reject) && t.rule < p_.rules.size()) {
        at = p_.rules[t.rule].origin;
        break;
      }
    if (at != none)
      warn_once(at,
                fmt::format("a filter after NAT ends connections NAT leaves untranslated to {} port {} at {} only, not "
                            "at {}: the graph takes {} as not ended",
                            w.d.local ? std::string("a local address") : to_string(w.d.addr.address), w.d.port.first,
                            after_nat_hook_names(w.filter_hooks), after_nat_hook_names(missing), what));
    return false;
  }
  /// The same for the connections from outside a frontend's source ranges, which NAT saw at `nat_hooks`
  /// (`frontend_hook` bits).
  bool filter_everywhere(const fe_work& w, std::uint8_t nat_hooks) {
    return filter_everywhere(w, after_nat_hook::after(nat_hooks), "those from outside the allowed source ranges");
  }
  /// The same for every connection to a frontend of `kind` that NAT does not translate (kube-proxy's
  /// service without endpoints, or without local ones), at the hooks they reach: a ClusterIP's at forward
  /// (no node owns it) and, made by this node, at output; a NodePort's at input; an external or
  /// LoadBalancer IP's at input or forward, as routing picks by whether the node owns it. (kube-proxy
  /// rejects at forward and output for ClusterIPs, at input and forward for the others.) A DNAT frontend
  /// without kube-proxy's identity is not judged.
  bool filter_everywhere(const fe_work& w, frontend_kind kind) {
    namespace a = after_nat_hook;
    const std::uint8_t need = kind == frontend_kind::cluster_ip ? std::uint8_t{a::forward | a::output}
                              : kind == frontend_kind::node_port ? a::input
                              : kind == frontend_kind::dnat      ? std::uint8_t{0}
                                                                 : std::uint8_t{a::input | a::forward};
    return filter_everywhere(w, need, "them");
  }
  static std::string after_nat_hook_names(std::uint8_t hooks) {
    std::string out;
    const std::pair<std::uint8_t, std::string_view> names[] = {
        {after_nat_hook::input, "input"}, {after_nat_hook::forward, "forward"}, {after_nat_hook::output, "output"}};
    for (const auto& [bit, name] : names) {
      if ((hooks & bit) == 0) continue;
      hooks = static_cast<std::uint8_t>(hooks & ~bit);
      out += out.empty() ? "" : hooks == 0 ? " and " : ", ";
      out += name;
    }
    return out;
  }
  static std::string hook_names(std::uint8_t hooks) {
    const bool pre = (hooks & static_cast<std::uint8_t>(frontend_hook::prerouting)) != 0;
    const bool out = (hooks & static_cast<std::uint8_t>(frontend_hook::output)) != 0;
    return pre && out ? "prerouting and output" : pre ? "prerouting" : out ? "output" : "no hook";
  }
  /// An unsupported-dispatch warning at a rule, once per rule.
  void warn_once(index origin, std::string message) {
    if (origin == none || !reported_branches_.insert(origin).second) return;
    diagnostic d;
    d.level = severity::warning;
    d.code = error_code::unsupported_dispatch;
    d.message = std::move(message);
    const auto& o = p_.origins[origin];
    d.file = p_.sources[o.source];
    d.where = o.where;
    out_.push_back(std::move(d));
  }

  const program& p_;
  evaluation& ev_;
  std::vector<diagnostic>& out_;
  std::set<index> reported_branches_;  // rules warn_once reported
  std::vector<fe_work> work_;
  std::vector<index> origin_chain_;
  std::unordered_set<ip_address> cluster_ips_;
  std::unordered_set<std::string_view> set_names_;
  std::vector<std::vector<index>> service_chains_;
  std::vector<std::vector<index>> service_endpoint_chains_;
};

}  // namespace

dispatch_graph build(const program& p, std::vector<diagnostic>& out, const graph_options& opt) {
  std::vector<dangling_reference> dangling;
  const auto before = out.size();
  auto ev = evaluate(p, out, dangling, opt);
  assembler a(p, ev, out);
  auto g = a.run();
  g.dangling = std::move(dangling);
  g.unevaluated = static_cast<std::uint32_t>(std::count_if(out.begin() + static_cast<std::ptrdiff_t>(before), out.end(),
                                                           [](const diagnostic& d) {
                                                             return d.code == error_code::unsupported_dispatch;
                                                           }));
  return g;
}

}  // namespace nflens::dispatch
