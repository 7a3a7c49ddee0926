// SPDX-License-Identifier: MIT
// The graph as ground-truth JSON, Graphviz DOT, readable text, and quoted paths.

#include <nflens/graph.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <tuple>

namespace nflens {
namespace {

using json = nlohmann::ordered_json;

std::string addr_text(const ip_prefix& p) {
  return p.length == max_prefix_length(p.address.family) ? to_string(p.address) : to_string(p);
}

std::string where_text(const frontend& f) {
  std::string w;
  if (f.has_address) w = addr_text(f.address);
  if (f.any_local) w = f.has_address ? fmt::format("local {}", w) : std::string("local");
  if (w.empty()) w = "*";
  return w;
}

std::string port_text(const port_range& p) {
  if (p.first == 0 && p.last == 65535) return "*";
  if (p.first == p.last) return std::to_string(p.first);
  return fmt::format("{}-{}", p.first, p.last);
}

std::string masq_text(const masquerade& m) {
  switch (m.when) {
    case masquerade_when::always:
      return "always";
    case masquerade_when::source_outside:
      return "source not in " + to_string(m.prefix);
    case masquerade_when::source_inside:
      return "source in " + to_string(m.prefix);
    case masquerade_when::source_local:
      return "source is local";
  }
  return "always";
}

json origins_json(const dispatch_graph& g, const std::vector<origin>& os) {
  json a = json::array();
  for (const auto& o : os) {
    const auto loc = g.locate(o);
    a.push_back({{"file", std::string(g.file(o))},
                 {"line", loc.line},
                 {"column", loc.column},
                 {"kind", std::string(origin_kind_name(o.kind))}});
  }
  return a;
}

std::vector<std::string> unknown_names(const service& s) {
  std::vector<std::string> u;
  if (s.is_unknown(unknown_fact::affinity)) u.emplace_back("affinity_timeout_s");
  if (s.is_unknown(unknown_fact::traffic_policy)) u.emplace_back("external_traffic_local");
  if (s.is_unknown(unknown_fact::source_ranges)) u.emplace_back("load_balancer_source_ranges");
  if (s.is_unknown(unknown_fact::external_kind)) {
    u.emplace_back("external_ips");
    u.emplace_back("load_balancer_ips");
  }
  return u;
}

json service_json(const dispatch_graph& g, const service& s, bool with_origins) {
  json j;
  j["service"] = s.name ? json(s.name->str()) : json(nullptr);
  j["protocol"] = std::string(protocol_name(s.protocol));
  const frontend* cip = s.find(frontend_kind::cluster_ip);
  const frontend* np = s.find(frontend_kind::node_port);
  const frontend* first = cip != nullptr ? cip : (s.frontends.empty() ? nullptr : &s.frontends.front());
  j["cluster_ip"] = cip != nullptr && cip->has_address ? json(to_string(cip->address.address)) : json(nullptr);
  j["port"] = first != nullptr && first->port.first == first->port.last ? json(first->port.first) : json(nullptr);
  j["node_port"] = np != nullptr ? json(np->port.first) : json(nullptr);
  json ext = json::array(), lb = json::array(), either = json::array(), ranges = json::array();
  auto add_unique = [](json& arr, const std::string& v) {
    if (std::find(arr.begin(), arr.end(), json(v)) == arr.end()) arr.push_back(v);
  };
  for (const auto& f : s.frontends) {
    if (!f.has_address) continue;
    const auto a = to_string(f.address.address);
    if (f.kind == frontend_kind::external_ip) add_unique(ext, a);
    if (f.kind == frontend_kind::load_balancer_ip) add_unique(lb, a);
    if (f.kind == frontend_kind::external_or_load_balancer_ip) add_unique(either, a);
  }
  for (const auto& r : s.load_balancer_source_ranges) ranges.push_back(to_string(r));
  j["external_ips"] = ext;
  j["load_balancer_ips"] = lb;
  j["external_or_load_balancer_ips"] = either;
  j["load_balancer_source_ranges"] = ranges;
  j["affinity_timeout_s"] = s.affinity_timeout_s ? json(*s.affinity_timeout_s) : json(nullptr);
  j["external_traffic_local"] = s.external_traffic_local;
  j["no_endpoints"] = s.no_endpoints == outcome::none ? json(nullptr) : json(std::string(outcome_name(s.no_endpoints)));
  j["unknown"] = unknown_names(s);
  j["max_deviation_from_uniform"] = deviation_from_uniform(s);
  if (s.untranslated > 0) j["untranslated"] = s.untranslated;
  json eps = json::array();
  for (const auto& e : s.endpoints) {
    json je;
    je["ip"] = to_string(e.address);
    je["port"] = e.has_port ? json(e.port) : json(nullptr);
    je["probability"] = e.probability;
    if (s.external_traffic_local) {
      je["local"] = e.local_probability.has_value();
      if (e.local_probability) je["local_probability"] = *e.local_probability;
    }
    je["mechanism"] = std::string(selection_name(e.mechanism));
    if (e.mechanism == selection::statistic_ladder) je["threshold"] = e.threshold;
    if (e.mechanism == selection::numgen_random || e.mechanism == selection::numgen_inc ||
        e.mechanism == selection::hash) {
      je["slots"] = e.threshold;
      je["modulus"] = e.modulus;
    }
    if (e.affinity) {
      je["affinity"] = true;
      je["affinity_timeout_s"] = e.affinity_timeout_s;
    }
    if (e.after_nat != outcome::none) je["after_nat"] = std::string(outcome_name(e.after_nat));
    if (!e.masquerades.empty()) {
      json m = json::array();
      for (const auto& x : e.masquerades) m.push_back(masq_text(x));
      je["masquerade"] = m;
    }
    if (with_origins) je["origins"] = origins_json(g, e.origins);
    eps.push_back(std::move(je));
  }
  j["endpoints"] = std::move(eps);
  json fes = json::array();
  for (const auto& f : s.frontends) {
    json jf;
    jf["kind"] = std::string(frontend_kind_name(f.kind));
    jf["address"] = f.has_address ? json(addr_text(f.address)) : json(nullptr);
    jf["any_local"] = f.any_local;
    if (!f.excluded.empty()) {
      json x = json::array();
      for (const auto& p : f.excluded) x.push_back(to_string(p));
      jf["excluded"] = x;
    }
    jf["protocol"] = std::string(protocol_name(f.protocol));
    jf["port"] = f.port.first == f.port.last ? json(f.port.first) : json(port_text(f.port));
    jf["outcome"] = std::string(outcome_name(f.result));
    if (f.result == outcome::reject) jf["reject_with"] = reject_reply_name(f.reject_with);
    if (!f.source_ranges.empty()) {
      json x = json::array();
      for (const auto& p : f.source_ranges) x.push_back(to_string(p));
      jf["source_ranges"] = x;
      jf["other_sources"] = std::string(outcome_name(f.other_sources));
    }
    if (!f.short_circuit_sources.empty() || f.short_circuit_local) {
      json x = json::array();
      for (const auto& p : f.short_circuit_sources) x.push_back(to_string(p));
      if (f.short_circuit_local) x.push_back("local");
      jf["short_circuit"] = x;
    }
    const auto shares_json = [](const std::vector<endpoint_share>& xs) {
      json a = json::array();
      for (const auto& x : xs) a.push_back({{"endpoint", endpoint_text(x)}, {"probability", x.probability}});
      return a;
    };
    if (!f.shares.empty()) jf["shares"] = shares_json(f.shares);
    if (!f.short_circuit_shares.empty()) jf["short_circuit_shares"] = shares_json(f.short_circuit_shares);
    if (!f.masquerades.empty()) {
      json m = json::array();
      for (const auto& x : f.masquerades) m.push_back(masq_text(x));
      jf["masquerade"] = m;
    }
    {
      auto hooks = nlohmann::json::array();
      if ((f.hooks & static_cast<std::uint8_t>(frontend_hook::prerouting)) != 0) hooks.push_back("prerouting");
      if ((f.hooks & static_cast<std::uint8_t>(frontend_hook::output)) != 0) hooks.push_back("output");
      jf["hooks"] = std::move(hooks);
    }
    jf["rules_evaluated"] = f.rules_evaluated;
    jf["lookups"] = f.lookups;
    if (with_origins) jf["origins"] = origins_json(g, f.origins);
    fes.push_back(std::move(jf));
  }
  j["frontends"] = std::move(fes);
  if (with_origins) j["origins"] = origins_json(g, s.origins);
  return j;
}

/// An affinity timeout for people: 0 is none (iptables `--rcheck` without `--seconds`, an nft set without
/// `timeout`: a client is remembered until the list drops it).
std::string timeout_text(std::uint32_t seconds) {
  return seconds == 0 ? std::string("no timeout") : fmt::format("{} s", seconds);
}

std::string dot_escape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string one_line(std::string_view t) {
  std::string out;
  bool space = false;
  for (const char c : t) {
    if (c == '\n' || c == '\r' || c == '\t' || c == ' ') {
      space = !out.empty();
      continue;
    }
    if (space) out += ' ';
    space = false;
    out += c;
  }
  return out;
}

}  // namespace

std::string to_json(const dispatch_graph& g, bool with_origins) {
  json j;
  j["backend"] = g.backend;
  j["family"] = g.family == ip_family::ipv6 ? 6 : 4;
  json svcs = json::array();
  for (const auto& s : g.services) svcs.push_back(service_json(g, s, with_origins));
  j["services"] = std::move(svcs);
  json dang = json::array();
  for (const auto& d : g.dangling) {
    const auto loc = g.locate(d.where);
    dang.push_back({{"file", std::string(g.file(d.where))},
                    {"line", loc.line},
                    {"column", loc.column},
                    {"target", d.target},
                    {"target_kind", std::string(origin_kind_name(d.target_kind))}});
  }
  j["dangling"] = std::move(dang);
  j["unevaluated"] = g.unevaluated;
  const auto& st = g.structure;
  j["structure"] = {{"lines", st.lines}, {"bytes", st.bytes}, {"tables", st.tables}, {"chains", st.chains},
                    {"rules", st.rules}, {"sets", st.sets},   {"maps", st.maps},     {"elements", st.elements}};
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string to_dot(const dispatch_graph& g) {
  std::string out = "digraph nflens {\n  rankdir=LR;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=9];\n";
  for (std::size_t i = 0; i < g.services.size(); ++i) {
    const auto& s = g.services[i];
    out += fmt::format("  s{} [shape=ellipse, style=filled, fillcolor=\"#dde8f7\", label=\"{}{}\"];\n", i,
                       dot_escape(s.label()),
                       s.affinity_timeout_s ? "\\naffinity " + timeout_text(*s.affinity_timeout_s) : std::string{});
    for (std::size_t k = 0; k < s.frontends.size(); ++k) {
      const auto& f = s.frontends[k];
      out += fmt::format("  f{}_{} [shape=box, label=\"{}\\n{} {}:{}\"];\n", i, k, frontend_kind_name(f.kind),
                         protocol_name(f.protocol), dot_escape(where_text(f)), port_text(f.port));
      std::string style = f.result == outcome::dispatch_local ? ", style=dashed, label=\"local\"" : "";
      if (f.result == outcome::drop || f.result == outcome::reject || f.result == outcome::none)
        style = fmt::format(", color=red, label=\"{}\"", outcome_name(f.result));
      out += fmt::format("  f{}_{} -> s{} [{}];\n", i, k, i, style.empty() ? "" : style.substr(2));
    }
    for (std::size_t k = 0; k < s.endpoints.size(); ++k) {
      const auto& e = s.endpoints[k];
      const auto addr =
          e.address.family == ip_family::ipv6 ? fmt::format("[{}]", to_string(e.address)) : to_string(e.address);
      out += fmt::format("  e{}_{} [shape=box, style=rounded, label=\"{}{}\"];\n", i, k, addr,
                         e.has_port ? fmt::format(":{}", e.port) : std::string{});
      out += fmt::format("  s{} -> e{}_{} [label=\"{:.6g}\"];\n", i, i, k, e.probability);
    }
    if (s.no_endpoints != outcome::none)
      out += fmt::format("  x{} [shape=plaintext, label=\"{}\"];\n  s{} -> x{} [color=red];\n", i,
                         outcome_name(s.no_endpoints), i, i);
  }
  out += "}\n";
  return out;
}

std::string to_text(const dispatch_graph& g) {
  std::string out;
  if (g.services.empty()) out += "no services: no rule on a NAT path translates a destination (DNAT, redirect)\n";
  for (const auto& s : g.services) {
    out += fmt::format("{} ({})\n", s.label(), protocol_name(s.protocol));
    for (const auto& f : s.frontends) {
      out += fmt::format("  {:<28} {} {}:{} -> {}", frontend_kind_name(f.kind), protocol_name(f.protocol),
                         where_text(f), port_text(f.port), outcome_name(f.result));
      if (f.result == outcome::reject) out += " with " + reject_reply_name(f.reject_with);
      if (!f.excluded.empty()) {
        std::vector<std::string> x;
        for (const auto& p : f.excluded) x.push_back(to_string(p));
        out += fmt::format(" (not to {})", fmt::join(x, ", "));
      }
      if (!f.source_ranges.empty()) {
        std::vector<std::string> r;
        for (const auto& p : f.source_ranges) r.push_back(to_string(p));
        out += fmt::format(" (sources {}; others: {})", fmt::join(r, ", "), outcome_text(f.other_sources));
      }
      if (!f.shares.empty()) out += fmt::format(" (its own shares: {})", shares_text(f.shares));
      if (!f.short_circuit_shares.empty())
        out += fmt::format(" (short-circuited clients: {})", shares_text(f.short_circuit_shares));
      out += "\n";
    }
    for (const auto& e : s.endpoints) {
      out += fmt::format("  endpoint {}  {:.6f}  {}", endpoint_text(e), e.probability, selection_name(e.mechanism));
      if (e.local_probability) out += fmt::format("  local {:.6f}", *e.local_probability);
      if (e.after_nat != outcome::none) out += fmt::format("  ({} after NAT)", outcome_name(e.after_nat));
      out += "\n";
    }
    if (s.untranslated > 0)
      out += fmt::format("  not translated {:.6f}  (new connections no rule sends to an endpoint)\n", s.untranslated);
    if (s.affinity_timeout_s) out += fmt::format("  affinity: ClientIP, {}\n", timeout_text(*s.affinity_timeout_s));
    if (s.external_traffic_local) out += "  external traffic policy: Local\n";
    if (s.no_endpoints != outcome::none) out += fmt::format("  no endpoints: {}\n", outcome_name(s.no_endpoints));
    if (!s.endpoints.empty())
      out += fmt::format("  largest deviation from uniform: {:.3g}\n", deviation_from_uniform(s));
    if (s.unknown != 0) out += fmt::format("  not shown by the dump: {}\n", fmt::join(unknown_names(s), ", "));
  }
  for (const auto& d : g.dangling) {
    const auto loc = g.locate(d.where);
    out += fmt::format("dangling: {}:{}:{}: {} '{}' is not in the ruleset\n", g.file(d.where), loc.line, loc.column,
                       origin_kind_name(d.target_kind), d.target);
  }
  return out;
}

std::string quote_service(const dispatch_graph& g, const service& s) {
  std::vector<origin> all;
  auto add = [&](const std::vector<origin>& os) {
    for (const auto& o : os)
      if (std::find(all.begin(), all.end(), o) == all.end()) all.push_back(o);
  };
  for (const auto& f : s.frontends) add(f.origins);
  add(s.origins);
  for (const auto& e : s.endpoints) add(e.origins);
  std::sort(all.begin(), all.end(), [](const origin& a, const origin& b) {
    return std::make_tuple(a.source, a.where.offset) < std::make_tuple(b.source, b.where.offset);
  });
  std::string out;
  for (const auto& o : all) {
    const auto loc = g.locate(o);
    out += fmt::format("{}:{}:{}: {}: {}\n", g.file(o), loc.line, loc.column, origin_kind_name(o.kind),
                       one_line(g.text(o)));
  }
  return out;
}

}  // namespace nflens
