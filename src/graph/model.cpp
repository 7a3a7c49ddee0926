// SPDX-License-Identifier: MIT
// The graph model's small functions and the exact probability arithmetic.

#include <nflens/graph.hpp>

#include "nft/datatype.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace nflens {

std::string_view origin_kind_name(origin_kind k) noexcept {
  switch (k) {
    case origin_kind::rule:
      return "rule";
    case origin_kind::map_element:
      return "map-element";
    case origin_kind::set_element:
      return "set-element";
    case origin_kind::chain:
      return "chain";
    case origin_kind::set:
      return "set";
    case origin_kind::map:
      return "map";
  }
  return "rule";
}

std::string_view frontend_kind_name(frontend_kind k) noexcept {
  switch (k) {
    case frontend_kind::cluster_ip:
      return "cluster-ip";
    case frontend_kind::node_port:
      return "node-port";
    case frontend_kind::external_ip:
      return "external-ip";
    case frontend_kind::load_balancer_ip:
      return "load-balancer-ip";
    case frontend_kind::external_or_load_balancer_ip:
      return "external-or-load-balancer-ip";
    case frontend_kind::dnat:
      return "dnat";
  }
  return "dnat";
}

std::string_view outcome_name(outcome o) noexcept {
  switch (o) {
    case outcome::dispatch:
      return "dispatch";
    case outcome::dispatch_local:
      return "dispatch-local";
    case outcome::reject:
      return "reject";
    case outcome::drop:
      return "drop";
    case outcome::none:
      return "none";
  }
  return "none";
}

std::string_view outcome_text(outcome o) noexcept { return o == outcome::none ? "not ended" : outcome_name(o); }

std::string reject_reply_name(const reject_reply& r) {
  if (r.type == reject_reply::kind::tcp_reset) return "tcp reset";
  const bool v6 = r.type == reject_reply::kind::icmpv6;
  std::string out = v6 ? "icmpv6 " : "icmp ";
  nft::types::append_reject_code(out, r.code, v6 ? nft::reject_type::icmpv6 : nft::reject_type::icmp);
  return out;
}

std::string_view masquerade_when_name(masquerade_when w) noexcept {
  switch (w) {
    case masquerade_when::always:
      return "always";
    case masquerade_when::source_outside:
      return "source-outside";
    case masquerade_when::source_inside:
      return "source-inside";
    case masquerade_when::source_local:
      return "source-local";
  }
  return "always";
}

std::string endpoint_text(const endpoint_share& e) {
  const auto a = e.address.family == ip_family::ipv6 ? fmt::format("[{}]", to_string(e.address)) : to_string(e.address);
  return e.has_port ? fmt::format("{}:{}", a, e.port) : a;
}
std::string endpoint_text(const endpoint& e) { return endpoint_text(endpoint_share{e.address, e.has_port, e.port, 0}); }

std::string shares_text(const std::vector<endpoint_share>& shares) {
  if (shares.empty()) return "none";
  std::string out;
  for (const auto& x : shares) out += fmt::format("{}{} {:.6f}", out.empty() ? "" : ", ", endpoint_text(x), x.probability);
  return out;
}

std::string_view selection_name(selection s) noexcept {
  switch (s) {
    case selection::single:
      return "single";
    case selection::statistic_ladder:
      return "statistic-ladder";
    case selection::statistic_nth:
      return "statistic-nth";
    case selection::numgen_random:
      return "numgen-random";
    case selection::numgen_inc:
      return "numgen-inc";
    case selection::hash:
      return "hash";
  }
  return "single";
}

std::optional<service_name> parse_service_name(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos || slash == 0) return std::nullopt;
  const auto colon = text.find(':', slash + 1);
  if (colon == std::string_view::npos || colon == slash + 1) return std::nullopt;
  const auto port = text.substr(colon + 1);
  auto bad = [](std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](char c) { return c == '/' || c == ':' || c == ' ' || c == '"'; });
  };
  const auto ns = text.substr(0, slash), name = text.substr(slash + 1, colon - slash - 1);
  if (bad(ns) || bad(name) || bad(port)) return std::nullopt;
  return service_name{std::string(ns), std::string(name), std::string(port)};
}

const frontend* service::find(frontend_kind k) const noexcept {
  for (const auto& f : frontends)
    if (f.kind == k) return &f;
  return nullptr;
}

namespace {
std::string frontend_label(const frontend& f) {
  std::string where;
  if (f.has_address)
    where = f.address.length == max_prefix_length(f.address.address.family) ? to_string(f.address.address)
                                                                            : to_string(f.address);
  else if (f.any_local)
    where = "local";
  else
    where = "*";
  if (f.has_address && f.address.address.family == ip_family::ipv6) where = fmt::format("[{}]", where);
  if (f.port.first == 0 && f.port.last == 65535) return fmt::format("{} {}", protocol_name(f.protocol), where);
  if (f.port.first == f.port.last) return fmt::format("{} {}:{}", protocol_name(f.protocol), where, f.port.first);
  return fmt::format("{} {}:{}-{}", protocol_name(f.protocol), where, f.port.first, f.port.last);
}
}  // namespace

std::string service::label() const {
  if (name) return name->str();
  if (frontends.empty()) return "(no frontend)";
  return fmt::format("dnat {}", frontend_label(frontends.front()));
}

location dispatch_graph::locate(const origin& o) const {
  if (o.source >= sources.size() || !sources[o.source]) return {};
  return sources[o.source]->locate(o.where);
}

std::string_view dispatch_graph::text(const origin& o) const {
  if (o.source >= sources.size() || !sources[o.source]) return {};
  return sources[o.source]->text(o.where);
}

std::string_view dispatch_graph::file(const origin& o) const {
  if (o.source >= sources.size() || !sources[o.source]) return {};
  return sources[o.source]->name();
}

const service* dispatch_graph::find(std::string_view ns_name_port) const {
  for (const auto& s : services)
    if (s.name && s.name->str() == ns_name_port) return &s;
  return nullptr;
}

std::uint32_t statistic_threshold(double printed) noexcept {
  if (!(printed > 0)) return 0;
  if (printed >= 1) return 0x80000000u;
  return static_cast<std::uint32_t>(std::llround(printed * 2147483648.0));
}

std::vector<double> ladder_shares(std::span<const std::uint32_t> thresholds) {
  std::vector<double> out;
  out.reserve(thresholds.size());
  double left = 1;
  for (const auto t : thresholds) {
    const double p = statistic_probability(std::min<std::uint32_t>(t, 0x80000000u));
    out.push_back(left * p);
    left *= 1 - p;
  }
  return out;
}

std::vector<double> numgen_shares(std::span<const int> slot_targets, std::size_t targets) {
  std::vector<double> out(targets, 0.0);
  if (slot_targets.empty()) return out;
  const double each = 1.0 / static_cast<double>(slot_targets.size());
  for (const int t : slot_targets)
    if (t >= 0 && static_cast<std::size_t>(t) < targets) out[static_cast<std::size_t>(t)] += each;
  return out;
}

double deviation_from_uniform(const service& s) noexcept {
  if (s.endpoints.empty()) return 0;
  const double u = 1.0 / static_cast<double>(s.endpoints.size());
  double worst = 0;
  for (const auto& e : s.endpoints) worst = std::max(worst, std::abs(e.probability - u));
  return worst;
}

}  // namespace nflens
