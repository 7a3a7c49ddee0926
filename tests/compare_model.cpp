// SPDX-License-Identifier: MIT
// compare() on hand-built graphs: equivalence, each kind of difference, what is noted instead of compared,
// the reports, and the update cost model.

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <nflens/compare.hpp>

#include <nlohmann/json.hpp>

using namespace nflens;

namespace {

ip_prefix host(const char* a) { return ip_prefix{*parse_ip_address(a), 32}; }

frontend fe(frontend_kind k, const char* a, std::uint16_t port, outcome r = outcome::dispatch) {
  frontend f;
  f.kind = k;
  if (a != nullptr) {
    f.has_address = true;
    f.address = host(a);
  } else {
    f.any_local = true;
  }
  f.protocol = l4_protocol::tcp;
  f.port = {port, port};
  f.result = r;
  return f;
}

endpoint ep(const char* a, std::uint16_t port, double p) {
  endpoint e;
  e.address = *parse_ip_address(a);
  e.has_port = true;
  e.port = port;
  e.probability = p;
  return e;
}

/// Two services: one with a ClusterIP, a NodePort and an external address over 3 endpoints; one without endpoints.
dispatch_graph cluster(const char* backend) {
  dispatch_graph g;
  g.backend = backend;
  g.structure.backend = backend;
  service web;
  web.name = parse_service_name("shop/web:http");
  web.protocol = l4_protocol::tcp;
  web.frontends = {fe(frontend_kind::cluster_ip, "10.96.0.20", 80), fe(frontend_kind::node_port, nullptr, 30080),
                   fe(frontend_kind::external_ip, "198.19.0.7", 80)};
  web.endpoints = {ep("10.244.1.5", 8080, 1.0 / 3), ep("10.244.2.6", 8080, 1.0 / 3), ep("10.244.3.7", 8080, 1.0 / 3)};
  web.affinity_timeout_s = 10800;
  service gone;
  gone.name = parse_service_name("shop/gone:http");
  gone.protocol = l4_protocol::tcp;
  gone.frontends = {fe(frontend_kind::cluster_ip, "10.96.0.21", 80, outcome::reject)};
  gone.no_endpoints = outcome::reject;
  gone.unknown =
      static_cast<std::uint8_t>(unknown_fact::affinity) | static_cast<std::uint8_t>(unknown_fact::traffic_policy);
  g.services = {gone, web};
  g.ownership.resize(2);
  return g;
}

}  // namespace

TEST_CASE("identical graphs are equivalent") {
  const auto a = cluster("iptables");
  const auto b = cluster("nftables");
  const auto c = compare(a, b);
  CHECK(c.equivalent);
  CHECK(c.matched == 2);
  CHECK(c.differences.empty());
  const auto text = to_text(c, "a.rules", "b.nft");
  CHECK(text.find("EQUIVALENT: 2 services") != std::string::npos);
  const auto j = nlohmann::json::parse(to_json(c, "a.rules", "b.nft"));
  CHECK(j["equivalent"] == true);
  CHECK(j["matched"] == 2);
  CHECK(j["structure"]["a"]["backend"] == "iptables");
}

TEST_CASE("shares within the tolerance are equal, beyond it they differ") {
  auto a = cluster("iptables");
  auto b = cluster("nftables");
  b.services[1].endpoints[0].probability += 5e-7;
  b.services[1].endpoints[1].probability -= 5e-7;
  CHECK(compare(a, b).equivalent);
  b.services[1].endpoints[0].probability = 0.5;
  b.services[1].endpoints[1].probability = 1.0 / 6;
  const auto c = compare(a, b);
  CHECK_FALSE(c.equivalent);
  REQUIRE(c.differences.size() == 1);
  CHECK(c.differences[0].kind == difference_kind::different);
  CHECK(c.differences[0].service == "shop/web:http");
  REQUIRE(c.differences[0].details.size() == 2);
  CHECK(c.differences[0].details[0] == "endpoint 10.244.1.5:8080: share 0.333333333 in A, 0.5 in B");
  // with no tolerance, a difference below the 9 digits is written with the digits that show it (found by
  // a new user: "share 0.25 in A, 0.25 in B")
  auto e = cluster("nftables");
  e.services[1].endpoints[0].probability += 1e-12;
  const auto z = compare(a, e, {.tolerance = 0});
  REQUIRE(z.differences.size() == 1);
  REQUIRE(!z.differences[0].details.empty());
  CHECK(z.differences[0].details[0] ==
        fmt::format("endpoint 10.244.1.5:8080: share {} in A, {} in B", a.services[1].endpoints[0].probability,
                    e.services[1].endpoints[0].probability));
  CHECK(z.differences[0].details[0] != "endpoint 10.244.1.5:8080: share 0.333333333 in A, 0.333333333 in B");
}

TEST_CASE("missing, extra and changed parts of services are listed") {
  auto a = cluster("iptables");
  auto b = cluster("nftables");
  b.services[1].endpoints.pop_back();
  b.services[1].endpoints[0].probability = b.services[1].endpoints[1].probability = 0.5;
  b.services[1].frontends[0].port = {81, 81};
  b.services[1].affinity_timeout_s.reset();
  b.services[1].external_traffic_local = true;
  b.services[0].name = parse_service_name("shop/other:http");
  const auto c = compare(a, b);
  CHECK_FALSE(c.equivalent);
  REQUIRE(c.differences.size() == 3);
  CHECK(c.differences[0].kind == difference_kind::missing);
  CHECK(c.differences[0].service == "shop/gone:http");
  CHECK(c.differences[1].kind == difference_kind::different);
  const auto& d = c.differences[1].details;
  auto has = [&](const std::string& s) { return std::find(d.begin(), d.end(), s) != d.end(); };
  CHECK(has("frontend cluster-ip tcp 10.96.0.20:80 only in A"));
  CHECK(has("frontend cluster-ip tcp 10.96.0.20:81 only in B"));
  CHECK(has("endpoint 10.244.3.7:8080 only in A"));
  CHECK(has("session affinity 10800 s in A, none in B"));
  CHECK(has("external traffic policy Cluster in A, Local in B"));
  CHECK(c.differences[2].kind == difference_kind::extra);
  CHECK(c.differences[2].service == "shop/other:http");
  const auto text = to_text(c, "a", "b");
  CHECK(text.find(fmt::format("NOT EQUIVALENT: {} services in A, {} in B; 1 only in A, 1 only in B, 1 in both but "
                               "different\n",
                               c.services_a, c.services_b)) != std::string::npos);
  CHECK(text.find("missing shop/gone:http") != std::string::npos);
}

TEST_CASE("what a dump cannot tell is noted, not counted as a difference") {
  auto a = cluster("iptables");
  auto b = cluster("nftables");
  // nftables mode writes an external IP like a LoadBalancer IP without source ranges.
  b.services[1].frontends[2].kind = frontend_kind::external_or_load_balancer_ip;
  // NodePorts on the node's address only (nft --nodeport-addresses primary) vs any local address.
  b.services[1].frontends[1].any_local = false;
  b.services[1].frontends[1].has_address = true;
  b.services[1].frontends[1].address = host("192.168.49.2");
  // Affinity of a service without endpoints is unknowable.
  b.services[0].affinity_timeout_s = 60;
  const auto c = compare(a, b);
  CHECK(c.equivalent);
  REQUIRE(c.notes.size() >= 3);
  CHECK(c.notes[0].find("1 external address(es)") == 0);
  bool nodeport_note = false;
  for (const auto& n : c.notes)
    nodeport_note = nodeport_note || n.find(
                                         "NodePorts accept any local address in A, "
                                         "192.168.49.2 in B") == 0;
  CHECK(nodeport_note);
  // But a definite external IP against a definite LoadBalancer IP is a difference.
  b.services[1].frontends[2].kind = frontend_kind::load_balancer_ip;
  CHECK_FALSE(compare(a, b).equivalent);
}

TEST_CASE("frontend outcomes, source ranges and masquerading are compared") {
  auto a = cluster("iptables");
  auto b = cluster("nftables");
  b.services[1].frontends[2].result = outcome::drop;
  b.services[1].frontends[0].masquerades.push_back(
      {masquerade_when::source_outside, *parse_ip_prefix("10.244.0.0/16")});
  const auto c = compare(a, b);
  REQUIRE(c.differences.size() == 1);
  const auto& d = c.differences[0].details;
  CHECK(std::find(d.begin(), d.end(), "frontend external-ip tcp 198.19.0.7:80: dispatch in A, drop in B") != d.end());
  CHECK(std::find(d.begin(), d.end(),
                  "frontend cluster-ip tcp 10.96.0.20:80: masquerade never in A, source-outside 10.244.0.0/16 in B") !=
        d.end());
}

TEST_CASE("NodePorts on other node addresses differ; any local address against a list is a setting, noted") {
  // a tester's find: nodeport-ips changed between two nft dumps was only noted as a kube-proxy setting
  const auto with_nodeport = [](const char* address) {
    auto g = cluster("nftables");
    auto& f = g.services[1].frontends[1];
    f.any_local = address == nullptr;
    f.has_address = address != nullptr;
    if (address != nullptr) f.address = host(address);
    return g;
  };
  const auto a = with_nodeport("192.168.49.2");
  const auto moved = compare(a, with_nodeport("192.168.49.3"));
  REQUIRE(moved.differences.size() == 1);
  CHECK(moved.differences[0].details ==
        std::vector<std::string>{"frontend node-port tcp node:30080: NodePort connections to 192.168.49.2 in A, to "
                                 "192.168.49.3 in B"});
  const auto setting = compare(with_nodeport(nullptr), a);
  CHECK(setting.equivalent);
}

TEST_CASE("source ranges are compared as the addresses they cover, not as written") {
  const auto ranges = [](std::initializer_list<const char*> list) {
    std::vector<ip_prefix> out;
    for (const char* p : list) out.push_back(*parse_ip_prefix(p));
    return out;
  };
  const auto with = [](std::vector<ip_prefix> r) {
    auto g = cluster("iptables");
    g.services[1].frontends[2].source_ranges = std::move(r);
    return g;
  };
  const auto eight = with(ranges({"10.0.0.0/8"}));
  // halves joined (and again upwards), host bits, duplicates, order and prefixes inside another do not count
  for (const auto& same : {ranges({"10.128.0.0/9", "10.0.0.0/9"}),
                           ranges({"10.0.0.0/10", "10.64.0.0/10", "10.128.0.0/9"}), ranges({"10.1.2.3/8"}),
                           ranges({"10.0.0.0/8", "10.0.0.0/8", "10.20.0.0/16"})}) {
    CAPTURE(same.size());
    CHECK(compare(eight, with(same)).equivalent);
  }
  for (const auto& other : {ranges({"10.0.0.0/9"}), ranges({"10.0.0.0/9", "10.192.0.0/10"}),
                            ranges({"10.0.0.0/9", "11.128.0.0/9"}), ranges({"10.0.0.0/7"})}) {
    CAPTURE(other.size());
    const auto c = compare(eight, with(other));
    CHECK_FALSE(c.equivalent);
    REQUIRE(c.differences.size() == 1);
    CHECK(c.differences[0].details.at(0).find("frontend external-ip tcp 198.19.0.7:80: source ranges 10.0.0.0/8 in A") ==
          0);
  }
  CHECK(compare(with(ranges({"fd00::/65", "fd00::8000:0:0:0/65"})), with(ranges({"fd00::/64"}))).equivalent);
}

TEST_CASE("update cost model") {
  // kube-proxy's TestSyncProxyRulesRepeated step 7: svc3 has one endpoint (KUBE-SVC + KUBE-SEP, 4 rules); its
  // partial restore input has 26 fixed lines, so adding one endpoint writes 26 + 2 + 4 + 4 = 36 lines.
  auto g = cluster("iptables");
  g.structure.full_sync_lines = 100;
  g.structure.partial_sync_fixed_lines = 26;
  g.services[1].affinity_timeout_s.reset();
  g.ownership[1] = {2, 4, 0, 1};
  auto c = add_endpoint_cost(g, 1);
  CHECK(c.partial_lines == 36);
  CHECK(c.full_lines == 104);
  CHECK(c.nft_ops == 0);
  // nftables: service chain (2 rules) + endpoint chain (2 rules) → 3 chains added and flushed, 6 rules: 12 ops.
  g.backend = "nftables";
  c = add_endpoint_cost(g, 1);
  CHECK(c.nft_ops == 12);
  CHECK(c.partial_lines == 0);
  // With affinity: one more rule in the service chain and in the new endpoint chain, and all affinity sets.
  g.services[1].affinity_timeout_s = 10800;
  g.ownership[1] = {2, 5, 1, 1};
  CHECK(add_endpoint_cost(g, 1).nft_ops == 2 * 3 + 5 + 2 + 2 + 2);
  // Every port of the same Service is rewritten.
  g.services[0].name = parse_service_name("shop/web:https");
  g.ownership[0] = {1, 1, 0, 0};
  g.services[1].affinity_timeout_s.reset();
  g.ownership[1] = {2, 4, 0, 1};
  CHECK(add_endpoint_cost(g, 1).nft_ops == 12 + 2 * 2 + 1 + 2);
}

TEST_CASE("measure: lookup and selection costs") {
  auto g = cluster("iptables");
  g.services[1].frontends[0].rules_evaluated = 7;
  g.services[1].endpoints[0].mechanism = selection::statistic_ladder;
  g.services[1].endpoints[1].mechanism = selection::statistic_ladder;
  g.services[1].endpoints[2].mechanism = selection::statistic_ladder;
  g.services[1].endpoints[1].position = 1;
  g.services[1].endpoints[2].position = 2;
  const auto m = measure(g);
  CHECK(m.services == 2);
  CHECK(m.endpoints == 3);
  CHECK(m.cluster_ip_rules_mean == 7.0);
  CHECK(m.cluster_ip_rules_worst == 7);
  CHECK(m.selection_rules_mean == doctest::Approx(2.0));
  CHECK(m.selection_rules_worst == 3);
  CHECK(m.cost_service == "shop/web:http");
}

TEST_CASE("services and frontends keyed alike are compared as multisets") {
  // Two unnamed DNAT services whose frontends differ only in `any_local` (one address of the node's own,
  // one any address in the prefix): they must not be taken for each other.
  auto dnat_service = [](bool local, const char* to) {
    service s;
    frontend f = fe(frontend_kind::dnat, "10.244.0.0", 80);
    f.address.length = 16;
    f.any_local = local;
    s.frontends = {f};
    s.endpoints = {ep(to, 8080, 1.0)};
    return s;
  };
  dispatch_graph g = cluster("iptables");
  g.services.push_back(dnat_service(false, "10.244.9.1"));
  g.services.push_back(dnat_service(true, "10.244.9.2"));
  CHECK(compare(g, g).equivalent);

  // The same service written twice on one side and once on the other is one extra service.
  dispatch_graph twice = g;
  twice.services.push_back(dnat_service(true, "10.244.9.2"));
  auto c = compare(g, twice);
  CHECK_FALSE(c.equivalent);
  REQUIRE(c.differences.size() == 1);
  CHECK(c.differences[0].kind == difference_kind::extra);
  CHECK(compare(twice, twice).equivalent);

  // Two services keyed alike in both dumps are paired by their endpoints, whatever their order.
  dispatch_graph swapped = g;
  swapped.services.push_back(dnat_service(false, "10.244.9.3"));
  dispatch_graph reordered = swapped;
  std::swap(reordered.services[2], reordered.services[4]);
  CHECK(compare(swapped, reordered).equivalent);

  // One destination listed twice (two numgen slots) counts once, with the shares added.
  dispatch_graph split = cluster("nftables");
  auto& web = split.services[1];
  web.endpoints = {ep("10.244.1.5", 8080, 1.0 / 3), ep("10.244.2.6", 8080, 1.0 / 6), ep("10.244.2.6", 8080, 1.0 / 6),
                   ep("10.244.3.7", 8080, 1.0 / 3)};
  CHECK(compare(cluster("iptables"), split).equivalent);
  CHECK(compare(split, split).equivalent);
}
