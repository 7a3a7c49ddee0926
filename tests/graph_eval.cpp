// SPDX-License-Identifier: MIT
// The evaluator and assembler on hand-built dispatch programs: the shapes kube-proxy writes in iptables
// mode (ClusterIP, NodePort with its localhost twin, external and LoadBalancer IPs, Local policy without
// local endpoints, source ranges, affinity, no endpoints), in nftables mode (verdict maps, numgen, affinity
// sets, pre-DNAT firewall), Docker's DNAT, and dangling references.

#include <doctest/doctest.h>

#include "graph_builder.hpp"
#include "kernel_support.hpp"
#include "support.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <nflens/compare.hpp>
#include <nflens/graph.hpp>
#include <nflens/iptables.hpp>
#include <nflens/nft.hpp>

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace nflens;
using namespace nflens::test;
using d::action_kind;
using d::field;
using d::hook;
using d::stage;
using d::table_kind;

namespace {

const auto tcp = l4_protocol::tcp;

/// kube-proxy's TestOverallIPTablesRules cluster, reduced to the rules that decide dispatch.
/// `lb_ip_admitted`: KUBE-FW-5 also admits the LoadBalancer IP itself, as kube-proxy writes when a source
/// range holds the node's IP.
d::program overall_iptables(bool lb_ip_admitted = false) {
  program_builder b;
  for (const char* c : {"KUBE-SERVICES", "KUBE-NODEPORTS", "KUBE-MARK-MASQ", "KUBE-POSTROUTING", "KUBE-SVC-1",
                        "KUBE-SEP-1", "KUBE-SVC-2", "KUBE-SEP-2", "KUBE-EXT-2", "KUBE-SVC-4", "KUBE-SEP-4A",
                        "KUBE-SEP-4B", "KUBE-SVC-5", "KUBE-SEP-5", "KUBE-FW-5", "KUBE-EXT-5"})
    b.chain(c);
  for (const char* c : {"F-KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES", "KUBE-PROXY-FIREWALL"})
    b.chain(c, table_kind::filter);
  auto svc = [&](const char* ip, const char* target, const char* comment) {
    b.rule("KUBE-SERVICES", {proto(tcp), daddr(ip), dport(80)}, jump(target), comment);
  };
  svc("172.30.0.41", "KUBE-SVC-1", "ns1/svc1:p80 cluster IP");
  svc("172.30.0.42", "KUBE-SVC-2", "ns2/svc2:p80 cluster IP");
  svc("192.168.99.22", "KUBE-EXT-2", "ns2/svc2:p80 external IP");
  svc("1.2.3.4", "KUBE-EXT-2", "ns2/svc2:p80 loadbalancer IP");
  svc("172.30.0.44", "KUBE-SVC-4", "ns4/svc4:p80 cluster IP");
  svc("172.30.0.45", "KUBE-SVC-5", "ns5/svc5:p80 cluster IP");
  svc("5.6.7.8", "KUBE-FW-5", "ns5/svc5:p80 loadbalancer IP");
  b.rule("KUBE-SERVICES", {dst_local()}, jump("KUBE-NODEPORTS"), "kubernetes service nodeports");
  b.rule("KUBE-NODEPORTS", {daddr("127.0.0.0/8"), proto(tcp), dport(3001)}, jump("KUBE-EXT-2"), "ns2/svc2:p80");
  b.rule("KUBE-NODEPORTS", {proto(tcp), dport(3001)}, jump("KUBE-EXT-2"), "ns2/svc2:p80");
  b.rule("KUBE-NODEPORTS", {proto(tcp), dport(3002)}, jump("KUBE-EXT-5"), "ns5/svc5:p80");
  b.rule("KUBE-MARK-MASQ", {}, mark(0x4000));
  b.rule("KUBE-POSTROUTING", {}, verdict(action_kind::masquerade));
  auto svc_chain = [&](const char* chain, const char* cip) {
    b.rule(chain, {saddr("10.0.0.0/8", true), daddr(cip), proto(tcp), dport(80)}, jump("KUBE-MARK-MASQ"));
  };
  auto sep = [&](const char* chain, const char* ip) {
    b.rule(chain, {saddr(std::string(ip) + "/32")}, jump("KUBE-MARK-MASQ"));
    b.rule(chain, {proto(tcp)}, dnat(ip, 80));
  };
  svc_chain("KUBE-SVC-1", "172.30.0.41");
  b.rule("KUBE-SVC-1", {}, jump("KUBE-SEP-1"), "ns1/svc1:p80 -> 10.180.0.1:80");
  sep("KUBE-SEP-1", "10.180.0.1");
  svc_chain("KUBE-SVC-2", "172.30.0.42");
  b.rule("KUBE-SVC-2", {}, jump("KUBE-SEP-2"));
  sep("KUBE-SEP-2", "10.180.0.2");
  b.rule("KUBE-EXT-2", {saddr("10.0.0.0/8")}, jump("KUBE-SVC-2"));
  b.rule("KUBE-EXT-2", {src_local()}, jump("KUBE-MARK-MASQ"));
  b.rule("KUBE-EXT-2", {src_local()}, jump("KUBE-SVC-2"));
  svc_chain("KUBE-SVC-4", "172.30.0.44");
  b.rule("KUBE-SVC-4", {random(0.5)}, jump("KUBE-SEP-4A"));
  b.rule("KUBE-SVC-4", {}, jump("KUBE-SEP-4B"));
  sep("KUBE-SEP-4A", "10.180.0.4");
  sep("KUBE-SEP-4B", "10.180.0.5");
  svc_chain("KUBE-SVC-5", "172.30.0.45");
  b.rule("KUBE-SVC-5", {recent_check("KUBE-SEP-5", 10800)}, jump("KUBE-SEP-5"));
  b.rule("KUBE-SVC-5", {}, jump("KUBE-SEP-5"));
  b.rule("KUBE-SEP-5", {recent_set("KUBE-SEP-5")}, verdict(action_kind::none));  // kube-proxy: on the DNAT rule
  sep("KUBE-SEP-5", "10.180.0.3");
  b.rule("KUBE-FW-5", {saddr("203.0.113.0/25")}, jump("KUBE-EXT-5"), "ns5/svc5:p80 loadbalancer IP");
  if (lb_ip_admitted) b.rule("KUBE-FW-5", {saddr("5.6.7.8/32")}, jump("KUBE-EXT-5"), "ns5/svc5:p80 loadbalancer IP");
  b.rule("KUBE-FW-5", {}, verdict(action_kind::none), "other traffic to ns5/svc5:p80 will be dropped");
  b.rule("KUBE-EXT-5", {}, jump("KUBE-MARK-MASQ"));
  b.rule("KUBE-EXT-5", {}, jump("KUBE-SVC-5"));
  b.rule("F-KUBE-SERVICES", {proto(tcp), daddr("172.30.0.46"), dport(80)}, verdict(action_kind::reject),
         "ns6/svc6:p80 has no endpoints");
  b.rule("KUBE-EXTERNAL-SERVICES", {proto(tcp), daddr("192.168.99.22"), dport(80)}, verdict(action_kind::drop),
         "ns2/svc2:p80 has no local endpoints");
  b.rule("KUBE-EXTERNAL-SERVICES", {proto(tcp), daddr("1.2.3.4"), dport(80)}, verdict(action_kind::drop),
         "ns2/svc2:p80 has no local endpoints");
  b.rule("KUBE-EXTERNAL-SERVICES", {dst_local(), proto(tcp), dport(3001)}, verdict(action_kind::drop),
         "ns2/svc2:p80 has no local endpoints");
  b.rule("KUBE-PROXY-FIREWALL", {proto(tcp), daddr("5.6.7.8"), dport(80)}, verdict(action_kind::drop),
         "ns5/svc5:p80 traffic not accepted by KUBE-FW-5");
  b.entry("KUBE-SERVICES", stage::nat, true);
  b.entry("F-KUBE-SERVICES", stage::post_dnat, true);
  b.entry("KUBE-EXTERNAL-SERVICES", stage::post_dnat, true);
  b.entry("KUBE-PROXY-FIREWALL", stage::post_dnat, true);
  b.cluster_ip_chain("F-KUBE-SERVICES");
  return b.build();
}

dispatch_graph build(const d::program& p, std::vector<diagnostic>* diags = nullptr) {
  std::vector<diagnostic> out;
  auto g = d::build(p, out);
  if (diags != nullptr) *diags = std::move(out);
  return g;
}

}  // namespace

TEST_CASE("iptables-shaped dispatch: services, frontends and endpoints") {
  const auto p = overall_iptables();
  std::vector<diagnostic> diags;
  const auto g = build(p, &diags);
  CHECK(diags.empty());
  REQUIRE(g.services.size() == 5);
  CHECK(g.services[0].label() == "ns1/svc1:p80");
  CHECK(g.services[4].label() == "ns6/svc6:p80");

  const auto* s1 = g.find("ns1/svc1:p80");
  REQUIRE(s1 != nullptr);
  REQUIRE(s1->frontends.size() == 1);
  const auto& f1 = s1->frontends[0];
  CHECK(f1.kind == frontend_kind::cluster_ip);
  CHECK(to_string(f1.address.address) == "172.30.0.41");
  CHECK(f1.port == port_range{80, 80});
  CHECK(f1.protocol == tcp);
  CHECK(f1.result == outcome::dispatch);
  CHECK(f1.rules_evaluated == 1);
  REQUIRE(f1.masquerades.size() == 1);
  CHECK(f1.masquerades[0].when == masquerade_when::source_outside);
  CHECK(to_string(f1.masquerades[0].prefix) == "10.0.0.0/8");
  REQUIRE(s1->endpoints.size() == 1);
  CHECK(to_string(s1->endpoints[0].address) == "10.180.0.1");
  CHECK(s1->endpoints[0].port == 80);
  CHECK(s1->endpoints[0].probability == 1.0);
  CHECK(s1->endpoints[0].mechanism == selection::single);
  REQUIRE(s1->endpoints[0].masquerades.size() == 1);
  CHECK(s1->endpoints[0].masquerades[0].when == masquerade_when::source_inside);
  CHECK_FALSE(s1->external_traffic_local);
  CHECK(s1->unknown == 0);
}

TEST_CASE("iptables-shaped dispatch: Local policy without local endpoints drops external traffic") {
  const auto g = build(overall_iptables());
  const auto* s2 = g.find("ns2/svc2:p80");
  REQUIRE(s2 != nullptr);
  REQUIRE(s2->frontends.size() == 4);
  const auto* cip = s2->find(frontend_kind::cluster_ip);
  const auto* np = s2->find(frontend_kind::node_port);
  const auto* ext = s2->find(frontend_kind::external_ip);
  const auto* lb = s2->find(frontend_kind::load_balancer_ip);
  REQUIRE(cip != nullptr);
  REQUIRE(np != nullptr);
  REQUIRE(ext != nullptr);
  REQUIRE(lb != nullptr);
  CHECK(cip->result == outcome::dispatch);
  CHECK(np->any_local);
  CHECK_FALSE(np->has_address);  // the 127.0.0.0/8 twin folded into it
  CHECK(np->port.first == 3001);
  CHECK(np->result == outcome::drop);
  CHECK(ext->result == outcome::drop);
  CHECK(to_string(lb->address.address) == "1.2.3.4");
  CHECK(lb->result == outcome::drop);
  REQUIRE(ext->short_circuit_sources.size() == 1);
  CHECK(to_string(ext->short_circuit_sources[0]) == "10.0.0.0/8");
  CHECK(ext->short_circuit_local);
  CHECK(s2->external_traffic_local);
  REQUIRE(s2->endpoints.size() == 1);
  CHECK(to_string(s2->endpoints[0].address) == "10.180.0.2");
  CHECK_FALSE(s2->endpoints[0].local_probability.has_value());
  CHECK(s2->no_endpoints == outcome::none);
}

TEST_CASE("iptables-shaped dispatch: ladder, affinity and source ranges") {
  const auto g = build(overall_iptables());
  const auto* s4 = g.find("ns4/svc4:p80");
  REQUIRE(s4 != nullptr);
  REQUIRE(s4->endpoints.size() == 2);
  CHECK(s4->endpoints[0].probability == 0.5);
  CHECK(s4->endpoints[1].probability == 0.5);
  CHECK(s4->endpoints[0].mechanism == selection::statistic_ladder);
  CHECK(s4->endpoints[0].threshold == 0x40000000u);
  CHECK(s4->endpoints[1].threshold == 0x80000000u);
  CHECK(deviation_from_uniform(*s4) == 0.0);

  const auto* s5 = g.find("ns5/svc5:p80");
  REQUIRE(s5 != nullptr);
  REQUIRE(s5->affinity_timeout_s.has_value());
  CHECK(*s5->affinity_timeout_s == 10800);
  REQUIRE(s5->endpoints.size() == 1);
  CHECK(s5->endpoints[0].affinity);
  const auto* lb = s5->find(frontend_kind::load_balancer_ip);
  REQUIRE(lb != nullptr);
  CHECK(lb->result == outcome::dispatch);
  REQUIRE(lb->source_ranges.size() == 1);
  CHECK(to_string(lb->source_ranges[0]) == "203.0.113.0/25");
  REQUIRE(s5->load_balancer_source_ranges.size() == 1);
  const auto* np = s5->find(frontend_kind::node_port);
  REQUIRE(np != nullptr);
  CHECK(np->result == outcome::dispatch);
  CHECK(np->port.first == 3002);
  REQUIRE(np->masquerades.size() == 1);
  CHECK(np->masquerades[0].when == masquerade_when::always);
  CHECK_FALSE(s5->external_traffic_local);
}

TEST_CASE("iptables-shaped dispatch: a service without endpoints") {
  const auto g = build(overall_iptables());
  const auto* s6 = g.find("ns6/svc6:p80");
  REQUIRE(s6 != nullptr);
  CHECK(s6->endpoints.empty());
  CHECK(s6->no_endpoints == outcome::reject);
  REQUIRE(s6->frontends.size() == 1);
  CHECK(s6->frontends[0].kind == frontend_kind::cluster_ip);
  CHECK(s6->frontends[0].result == outcome::reject);
  CHECK(s6->is_unknown(unknown_fact::affinity));
  CHECK(s6->is_unknown(unknown_fact::traffic_policy));
  CHECK_FALSE(s6->is_unknown(unknown_fact::source_ranges));  // no external frontend at all
}

TEST_CASE("nftables-shaped dispatch: verdict maps, numgen, affinity set, pre-DNAT firewall") {
  program_builder b("nftables");
  b.chain("nat-prerouting", table_kind::nat, hook::prerouting, -100);
  b.chain("nat-output", table_kind::nat, hook::output, -100);
  b.chain("filter-prerouting-pre-dnat", table_kind::filter, hook::prerouting, -110);
  b.chain("filter-output-pre-dnat", table_kind::filter, hook::output, -110);
  // kube-proxy checks for endpoints at input, forward and output
  for (const auto& [name, h] : {std::pair{"filter-input", hook::input}, std::pair{"filter-forward", hook::forward},
                                std::pair{"filter-output", hook::output}})
    b.chain(name, table_kind::filter, h, 0);
  for (const char* c :
       {"services", "mark-for-masquerade", "masquerading", "firewall-check", "reject-chain", "service-endpoints-check",
        "service-AAAAAAAA-ns1/svc1/tcp/p80", "endpoint-BBBBBBBB-ns1/svc1/tcp/p80__10.0.1.1/80",
        "endpoint-CCCCCCCC-ns1/svc1/tcp/p80__10.0.1.2/80", "endpoint-DDDDDDDD-ns1/svc1/tcp/p80__10.0.1.3/80",
        "external-AAAAAAAA-ns1/svc1/tcp/p80", "firewall-AAAAAAAA-ns1/svc1/tcp/p80"})
    b.chain(c);
  b.set("cluster-ips", {"172.30.0.41", "172.30.0.46"});
  b.set("nodeport-ips", {"192.168.0.2"});
  b.set("affinity-BBBBBBBB-ns1/svc1/tcp/p80__10.0.1.1/80", {}, true, 300);
  b.map("service-ips", {field::daddr, field::l4proto, field::dport},
        {{{kaddr("172.30.0.41"), kproto(tcp), kport(80)}, "goto service-AAAAAAAA-ns1/svc1/tcp/p80", ""},
         {{kaddr("5.6.7.8"), kproto(tcp), kport(80)}, "goto external-AAAAAAAA-ns1/svc1/tcp/p80", ""}});
  b.map("service-nodeports", {field::l4proto, field::dport},
        {{{kproto(tcp), kport(30080)}, "goto external-AAAAAAAA-ns1/svc1/tcp/p80", ""}});
  b.map("firewall-ips", {field::daddr, field::l4proto, field::dport},
        {{{kaddr("5.6.7.8"), kproto(tcp), kport(80)}, "goto firewall-AAAAAAAA-ns1/svc1/tcp/p80", ""}});
  b.map("no-endpoint-services", {field::daddr, field::l4proto, field::dport},
        {{{kaddr("172.30.0.46"), kproto(tcp), kport(80)}, "goto reject-chain", "ns6/svc6:p80"}});
  // numgen with 3 slots over 3 endpoints, one of them twice as likely (slots 0 and 3 of mod 4)
  b.map("", {field::number},
        {{{knum(0, 0)}, "goto endpoint-BBBBBBBB-ns1/svc1/tcp/p80__10.0.1.1/80", ""},
         {{knum(1, 1)}, "goto endpoint-CCCCCCCC-ns1/svc1/tcp/p80__10.0.1.2/80", ""},
         {{knum(2, 2)}, "goto endpoint-DDDDDDDD-ns1/svc1/tcp/p80__10.0.1.3/80", ""},
         {{knum(3, 3)}, "goto endpoint-BBBBBBBB-ns1/svc1/tcp/p80__10.0.1.1/80", ""}});
  b.rule("nat-prerouting", {}, jump("services"));
  b.rule("nat-output", {}, jump("services"));
  b.rule("services", {}, vmap("service-ips", {field::daddr, field::l4proto, field::dport}));
  b.rule("services", {in_set(field::daddr, "nodeport-ips")}, vmap("service-nodeports", {field::l4proto, field::dport}));
  b.rule("mark-for-masquerade", {}, mark(0x4000));
  b.rule("masquerading", {}, verdict(action_kind::masquerade));
  b.rule("service-AAAAAAAA-ns1/svc1/tcp/p80", {daddr("172.30.0.41"), saddr("10.0.0.0/8", true)},
         jump("mark-for-masquerade"));
  b.rule("service-AAAAAAAA-ns1/svc1/tcp/p80", {in_set(field::saddr, "affinity-BBBBBBBB-ns1/svc1/tcp/p80__10.0.1.1/80")},
         go_to("endpoint-BBBBBBBB-ns1/svc1/tcp/p80__10.0.1.1/80"));
  b.rule("service-AAAAAAAA-ns1/svc1/tcp/p80", {}, numgen("", 4));
  for (auto [c, ip] : {std::pair{"endpoint-BBBBBBBB-ns1/svc1/tcp/p80__10.0.1.1/80", "10.0.1.1"},
                       std::pair{"endpoint-CCCCCCCC-ns1/svc1/tcp/p80__10.0.1.2/80", "10.0.1.2"},
                       std::pair{"endpoint-DDDDDDDD-ns1/svc1/tcp/p80__10.0.1.3/80", "10.0.1.3"}}) {
    b.rule(c, {saddr(ip)}, jump("mark-for-masquerade"));
    if (std::string_view(ip) == "10.0.1.1") b.rule(c, {}, set_update("affinity-BBBBBBBB-ns1/svc1/tcp/p80__10.0.1.1/80"));
    b.rule(c, {proto(tcp)}, dnat(ip, 80));
  }
  b.rule("external-AAAAAAAA-ns1/svc1/tcp/p80", {}, jump("mark-for-masquerade"));
  b.rule("external-AAAAAAAA-ns1/svc1/tcp/p80", {}, go_to("service-AAAAAAAA-ns1/svc1/tcp/p80"));
  b.rule("filter-prerouting-pre-dnat", {ct_state(d::ct_new)}, jump("firewall-check"));
  b.rule("filter-output-pre-dnat", {ct_state(d::ct_new)}, jump("firewall-check"));
  b.rule("firewall-check", {}, vmap("firewall-ips", {field::daddr, field::l4proto, field::dport}));
  b.rule("firewall-AAAAAAAA-ns1/svc1/tcp/p80", {saddr("203.0.113.0/25", true)}, verdict(action_kind::drop));
  for (const char* c : {"filter-input", "filter-forward", "filter-output"}) {
    b.rule(c, {ct_state(d::ct_new)}, jump("service-endpoints-check"));
    b.entry(c, stage::post_dnat);
  }
  b.rule("service-endpoints-check", {}, vmap("no-endpoint-services", {field::daddr, field::l4proto, field::dport}));
  b.rule("reject-chain", {}, verdict(action_kind::reject));
  b.entry("nat-prerouting").entry("nat-output");
  b.entry("filter-prerouting-pre-dnat", stage::pre_dnat).entry("filter-output-pre-dnat", stage::pre_dnat);
  b.cluster_ip_set("cluster-ips");
  const auto p = b.build();
  std::vector<diagnostic> diags;
  const auto g = build(p, &diags);
  CHECK_MESSAGE(diags.empty(), (diags.empty() ? std::string() : diags[0].message));
  REQUIRE(g.services.size() == 2);
  const auto* s1 = g.find("ns1/svc1:p80");
  REQUIRE(s1 != nullptr);
  CHECK(s1->protocol == tcp);
  REQUIRE(s1->frontends.size() == 3);
  const auto* cip = s1->find(frontend_kind::cluster_ip);
  REQUIRE(cip != nullptr);
  CHECK(cip->rules_evaluated == 2);  // nat-prerouting's jump, then the vmap rule
  CHECK(cip->lookups == 1);
  const auto* np = s1->find(frontend_kind::node_port);
  REQUIRE(np != nullptr);
  CHECK(to_string(np->address.address) == "192.168.0.2");
  CHECK(np->port.first == 30080);
  const auto* lb = s1->find(frontend_kind::load_balancer_ip);  // a firewall gate tells it is a LoadBalancer IP
  REQUIRE(lb != nullptr);
  CHECK(lb->result == outcome::dispatch);
  REQUIRE(lb->source_ranges.size() == 1);
  CHECK(to_string(lb->source_ranges[0]) == "203.0.113.0/25");
  REQUIRE(s1->endpoints.size() == 3);
  CHECK(to_string(s1->endpoints[0].address) == "10.0.1.1");
  CHECK(s1->endpoints[0].probability == 0.5);  // slots 0 and 3 of 4 add up
  CHECK(s1->endpoints[0].threshold == 2);
  CHECK(s1->endpoints[0].modulus == 4);
  CHECK(s1->endpoints[1].probability == 0.25);
  CHECK(s1->endpoints[2].probability == 0.25);
  CHECK(s1->endpoints[0].mechanism == selection::numgen_random);
  CHECK(s1->endpoints[0].affinity);
  CHECK_FALSE(s1->endpoints[1].affinity);
  REQUIRE(s1->affinity_timeout_s.has_value());
  CHECK(*s1->affinity_timeout_s == 300);
  CHECK(deviation_from_uniform(*s1) == doctest::Approx(0.5 - 1.0 / 3));
  const auto* s6 = g.find("ns6/svc6:p80");
  REQUIRE(s6 != nullptr);
  CHECK(s6->no_endpoints == outcome::reject);
  REQUIRE(s6->frontends.size() == 1);
  CHECK(s6->frontends[0].kind == frontend_kind::cluster_ip);  // in the cluster-ips set
}

TEST_CASE("Docker-style DNAT frontends without identity") {
  program_builder b;
  b.chain("PREROUTING", table_kind::nat, hook::prerouting).chain("OUTPUT", table_kind::nat, hook::output);
  b.chain("DOCKER");
  b.rule("PREROUTING", {dst_local()}, jump("DOCKER"));
  b.rule("OUTPUT", {daddr("127.0.0.0/8", true), dst_local()}, jump("DOCKER"));
  cond in_docker0;
  in_docker0.c.kind = d::cond_kind::iface;
  in_docker0.c.what = field::iif;
  in_docker0.c.name = "docker0";
  auto not_docker0 = in_docker0;
  not_docker0.c.negated = true;
  b.rule("DOCKER", {in_docker0}, verdict(action_kind::ret));
  b.rule("DOCKER", {not_docker0, proto(tcp), dport(8080)}, dnat("172.17.0.2", 80));
  b.rule("DOCKER", {not_docker0, proto(tcp), dport(5432)}, dnat("172.17.0.3", 5432));
  b.entry("PREROUTING").entry("OUTPUT");
  const auto g = build(b.build());
  REQUIRE(g.services.size() == 2);
  for (const auto& s : g.services) {
    CHECK_FALSE(s.name.has_value());
    REQUIRE(s.frontends.size() == 1);
    CHECK(s.frontends[0].kind == frontend_kind::dnat);
    CHECK(s.frontends[0].any_local);
    REQUIRE(s.endpoints.size() == 1);
    CHECK(s.endpoints[0].probability == 1.0);
  }
  CHECK(g.services[0].label() == "dnat tcp local:5432");
  CHECK(to_string(g.services[0].endpoints[0].address) == "172.17.0.3");
  CHECK(g.services[1].endpoints[0].port == 80);
}

TEST_CASE("dangling references are reported with their location and the rest is built") {
  program_builder b;
  b.chain("KUBE-SERVICES").chain("KUBE-SVC-1").chain("KUBE-SEP-1");
  b.rule("KUBE-SERVICES", {proto(tcp), daddr("10.96.0.1"), dport(443)}, jump("KUBE-SVC-1"),
         "default/kubernetes:https cluster IP");
  b.rule("KUBE-SERVICES", {proto(tcp), daddr("10.96.0.2"), dport(443)}, jump("KUBE-SVC-MISSING"),
         "default/gone:https cluster IP");
  b.rule("KUBE-SVC-1", {}, jump("KUBE-SEP-1"));
  b.rule("KUBE-SEP-1", {proto(tcp)}, dnat("192.168.0.2", 6443));
  b.entry("KUBE-SERVICES", stage::nat, true);
  std::vector<diagnostic> diags;
  const auto g = build(b.build(), &diags);
  REQUIRE(diags.size() == 1);
  CHECK(diags[0].code == error_code::dangling_reference);
  CHECK(diags[0].level == severity::warning);
  CHECK(diags[0].file->locate(diags[0].where).line == 3);  // the second rule of the first chain
  REQUIRE(g.dangling.size() == 1);
  CHECK(g.dangling[0].target == "KUBE-SVC-MISSING");
  const auto* k = g.find("default/kubernetes:https");
  REQUIRE(k != nullptr);
  CHECK(k->endpoints.size() == 1);
  const auto* gone = g.find("default/gone:https");
  REQUIRE(gone != nullptr);
  CHECK(gone->endpoints.empty());
}

TEST_CASE("graph outputs: ground-truth JSON, DOT that Graphviz renders, text, quoted paths") {
  const auto g = build(overall_iptables());
  const auto j = nlohmann::json::parse(to_json(g));
  REQUIRE(j["services"].size() == 5);
  const auto& s2 = j["services"][1];
  CHECK(s2["service"] == "ns2/svc2:p80");
  CHECK(s2["protocol"] == "tcp");
  CHECK(s2["cluster_ip"] == "172.30.0.42");
  CHECK(s2["port"] == 80);
  CHECK(s2["node_port"] == 3001);
  CHECK(s2["external_ips"] == nlohmann::json::array({"192.168.99.22"}));
  CHECK(s2["load_balancer_ips"] == nlohmann::json::array({"1.2.3.4"}));
  CHECK(s2["external_traffic_local"] == true);
  CHECK(s2["affinity_timeout_s"].is_null());
  CHECK(s2["endpoints"][0]["ip"] == "10.180.0.2");
  CHECK(s2["endpoints"][0]["port"] == 80);
  CHECK(s2["endpoints"][0]["local"] == false);
  const auto& s5 = j["services"][3];
  CHECK(s5["affinity_timeout_s"] == 10800);
  CHECK(s5["load_balancer_source_ranges"] == nlohmann::json::array({"203.0.113.0/25"}));
  const auto& s4 = j["services"][2];
  CHECK(s4["endpoints"][0]["probability"] == 0.5);
  CHECK(s4["endpoints"][0]["mechanism"] == "statistic-ladder");
  CHECK(s4["endpoints"][0]["threshold"] == 1073741824);
  CHECK(s4["max_deviation_from_uniform"] == 0.0);
  const auto& s6 = j["services"][4];
  CHECK(s6["no_endpoints"] == "reject");
  CHECK(s6["frontends"][0]["outcome"] == "reject");
  CHECK(s6["frontends"][0]["reject_with"] == "icmp port-unreachable");
  CHECK_FALSE(j["services"][0]["frontends"][0].contains("reject_with"));  // a dispatch
  CHECK(s6["unknown"] == nlohmann::json::array({"affinity_timeout_s", "external_traffic_local"}));
  // Origins point at the generated source: the ClusterIP rule of svc1 is line 2 of "test.rules".
  const auto& o = j["services"][0]["frontends"][0]["origins"][0];
  CHECK(o["file"] == "test.rules");
  CHECK(o["line"] == 2);
  CHECK(o["kind"] == "rule");

  const auto text = to_text(g);
  CHECK(text.find("ns4/svc4:p80 (tcp)\n  cluster-ip                   tcp 172.30.0.44:80 -> dispatch\n") !=
        std::string::npos);
  CHECK(text.find("  no endpoints: reject\n") != std::string::npos);

  const auto quote = quote_service(g, *g.find("ns4/svc4:p80"));
  CHECK(quote.find("test.rules:6:1: rule: -A KUBE-SERVICES rule 5\n") != std::string::npos);  // the ClusterIP rule
  CHECK(quote.find("rule: -A KUBE-SEP-4A rule 2") != std::string::npos);                      // a DNAT rule

  const auto dot = to_dot(g);
  CHECK(dot.rfind("digraph nflens {", 0) == 0);
  CHECK(dot.find("s2 -> e2_0 [label=\"0.5\"];") != std::string::npos);
  if (run_command("command -v dot >/dev/null 2>&1").status == 0) {
    const auto r = run_command("dot -Tsvg", &dot);
    CHECK(r.status == 0);
    CHECK(r.output.find("<svg") != std::string::npos);
  } else {
    MESSAGE("Graphviz 'dot' is not installed: the DOT text was checked, not its rendering");
  }
}

TEST_CASE("a chain walked once for any connection answers the same when entered again from another hook") {
  // X accepts every connection: the DNAT after the jump in OUTPUT is never reached, from either hook.
  program_builder b;
  b.chain("PREROUTING", table_kind::nat, hook::prerouting).chain("OUTPUT", table_kind::nat, hook::output).chain("X");
  b.rule("PREROUTING", {}, jump("X"));
  b.rule("OUTPUT", {}, jump("X"));
  b.rule("OUTPUT", {proto(tcp), dport(99)}, dnat("10.1.1.1", 99));
  b.rule("X", {}, verdict(action_kind::accept));
  b.entry("PREROUTING").entry("OUTPUT");
  CHECK(build(b.build()).services.empty());
  // When X returns, the connection goes on to the DNAT after it.
  program_builder c;
  c.chain("PREROUTING", table_kind::nat, hook::prerouting).chain("OUTPUT", table_kind::nat, hook::output).chain("X");
  c.rule("PREROUTING", {}, jump("X"));
  c.rule("OUTPUT", {}, jump("X"));
  c.rule("OUTPUT", {proto(tcp), dport(99)}, dnat("10.1.1.1", 99));
  c.rule("X", {proto(l4_protocol::udp)}, verdict(action_kind::accept));
  c.entry("PREROUTING").entry("OUTPUT");
  const auto g = build(c.build());
  REQUIRE(g.services.size() == 1);
  CHECK(g.services[0].endpoints.at(0).port == 99);
}

TEST_CASE("statistic nth: every 3rd connection to the first endpoint, the rest to the second") {
  program_builder b;
  b.chain("PREROUTING", table_kind::nat, hook::prerouting).chain("LB").chain("A").chain("B");
  b.rule("PREROUTING", {daddr("192.0.2.1"), proto(tcp), dport(443)}, jump("LB"));
  cond nth;
  nth.c.kind = d::cond_kind::nth;
  nth.c.a = 3;
  b.rule("LB", {nth}, jump("A"));
  b.rule("LB", {}, jump("B"));
  b.rule("A", {}, dnat("10.0.0.1", 443));
  b.rule("B", {}, dnat("10.0.0.2", 443));
  b.entry("PREROUTING");
  const auto g = build(b.build());
  REQUIRE(g.services.size() == 1);
  REQUIRE(g.services[0].endpoints.size() == 2);
  CHECK(g.services[0].endpoints[0].mechanism == selection::statistic_nth);
  CHECK(g.services[0].endpoints[0].probability == doctest::Approx(1.0 / 3));
  CHECK(g.services[0].endpoints[1].probability == doctest::Approx(2.0 / 3));
  CHECK(deviation_from_uniform(g.services[0]) == doctest::Approx(1.0 / 6));
}

TEST_CASE("a connection an earlier rule ended never meets a later rule for the same destination") {
  // found by a new user: `-d 1.2.3.4 -p tcp --dport 80 -j ACCEPT` before the DNAT rule for the same
  // destination made the graph show the DNAT as reached (the ACCEPT ends the nat chain for it)
  program_builder b;
  b.chain("PREROUTING", table_kind::nat, hook::prerouting).chain("SVC");
  b.rule("PREROUTING", {daddr("1.2.3.4"), proto(tcp), dport(80)}, verdict(action_kind::accept));
  b.rule("PREROUTING", {daddr("1.2.3.4"), proto(tcp), dport(80)}, dnat("10.0.0.1", 80));
  b.rule("PREROUTING", {daddr("1.2.3.5"), proto(tcp), dport(80)}, jump("SVC"));
  b.rule("PREROUTING", {daddr("1.2.3.5"), proto(tcp), dport(80)}, dnat("10.0.0.9", 80));  // SVC ends it first
  b.rule("PREROUTING", {daddr("1.2.3.6"), proto(tcp), dport(80)}, jump("SVC-EMPTY"));
  b.rule("PREROUTING", {daddr("1.2.3.6"), proto(tcp), dport(80)}, dnat("10.0.0.3", 80));  // SVC-EMPTY returns
  b.chain("SVC-EMPTY");
  b.rule("SVC", {}, dnat("10.0.0.2", 80));
  b.entry("PREROUTING");
  const auto g = build(b.build());
  REQUIRE(g.services.size() == 2);
  CHECK(g.services[0].label() == "dnat tcp 1.2.3.5:80");
  REQUIRE(g.services[0].endpoints.size() == 1);
  CHECK(to_string(g.services[0].endpoints[0].address) == "10.0.0.2");
  CHECK(g.services[1].label() == "dnat tcp 1.2.3.6:80");
  REQUIRE(g.services[1].endpoints.size() == 1);
  CHECK(to_string(g.services[1].endpoints[0].address) == "10.0.0.3");
}

TEST_CASE("an interface match on a dispatch path is counted as unevaluated, and compare says so") {
  // found by a new user: `-i eth0 -j DNAT` before a fallback DNAT hid the fallback without a word
  const auto program = [](bool with_iface) {
    program_builder b;
    b.chain("PREROUTING", table_kind::nat, hook::prerouting).chain("S");
    b.rule("PREROUTING", {daddr("1.2.3.4"), proto(tcp), dport(80)}, jump("S"));
    cond eth0;
    eth0.c.kind = d::cond_kind::iface;
    eth0.c.what = field::iif;
    eth0.c.name = "eth0";
    if (with_iface) b.rule("S", {eth0}, dnat("10.0.0.1", 80));
    b.rule("S", {}, dnat("10.0.0.1", 80));
    b.entry("PREROUTING");
    return b.build();
  };
  std::vector<diagnostic> ds;
  const auto g = build(program(true), &ds);
  CHECK(g.unevaluated == 1);
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].code == error_code::unsupported_dispatch);
  CHECK(ds[0].message.find("interface match 'eth0'") != std::string::npos);
  const auto plain = build(program(false));
  CHECK(plain.unevaluated == 0);
  const auto c = compare(g, plain);
  CHECK(c.equivalent);
  REQUIRE_FALSE(c.notes.empty());
  CHECK(c.notes.back() ==
        "constructs on dispatch paths not evaluated (see the warnings): 1 in A, 0 in B; the verdict holds under "
        "what those warnings assume");
}

namespace {

/// The graph of iptables-save text (a nat table of the test's own).
result<dispatch_graph> graph_of_rules(std::string text) {
  auto r = iptables::parse("test.rules", std::move(text));
  REQUIRE_MESSAGE(r.ok(), render(r.diagnostics));
  return build_graph(r.value);
}

/// The graph of nft text, with its diagnostics (the text must parse and apply).
result<dispatch_graph> graph_result_of_nft(const std::string& text) {
  auto parsed = nft::parse("test.nft", text);
  REQUIRE_MESSAGE(parsed.ok(), render(parsed.diagnostics));
  auto rs = nft::to_ruleset(parsed.value);
  REQUIRE_MESSAGE(rs.ok(), render(rs.diagnostics));
  auto g = build_graph(rs.value);
  REQUIRE_MESSAGE(g.ok(), render(g.diagnostics));
  return g;
}

/// The graph of nft listing text.
dispatch_graph graph_of_nft(const std::string& text) { return std::move(graph_result_of_nft(text).value); }

/// kube-proxy's nftables table for one LoadBalancer IP with a source range: its firewall checked before NAT
/// at prerouting and output, at these priorities.
result<dispatch_graph> firewalled_lb(const std::string& prerouting_priority, const std::string& output_priority) {
  return graph_result_of_nft(
      "table ip kube-proxy {\n"
      "\tmap firewall-ips {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict\n"
      "\t\telements = { 5.6.7.8 . tcp . 80 : goto firewall-AAAAAAAA-ns1/svc1/tcp/p80 }\n\t}\n"
      "\tmap service-ips {\n\t\ttype ipv4_addr . inet_proto . inet_service : verdict\n"
      "\t\telements = { 5.6.7.8 . tcp . 80 : goto external-AAAAAAAA-ns1/svc1/tcp/p80 }\n\t}\n"
      "\tchain filter-prerouting-pre-dnat {\n\t\ttype filter hook prerouting priority " +
      prerouting_priority +
      "; policy accept;\n\t\tct state new jump firewall-check\n\t}\n"
      "\tchain filter-output-pre-dnat {\n\t\ttype filter hook output priority " +
      output_priority +
      "; policy accept;\n\t\tct state new jump firewall-check\n\t}\n"
      "\tchain nat-prerouting {\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n\t\tjump services\n\t}\n"
      "\tchain nat-output {\n\t\ttype nat hook output priority -100; policy accept;\n\t\tjump services\n\t}\n"
      "\tchain firewall-check {\n\t\tip daddr . meta l4proto . th dport vmap @firewall-ips\n\t}\n"
      "\tchain services {\n\t\tip daddr . meta l4proto . th dport vmap @service-ips\n\t}\n"
      "\tchain firewall-AAAAAAAA-ns1/svc1/tcp/p80 {\n\t\tip saddr != { 203.0.113.0/25 } drop\n\t}\n"
      "\tchain endpoint-BBBBBBBB-ns1/svc1/tcp/p80__10.0.1.1/80 {\n\t\tmeta l4proto tcp dnat to 10.0.1.1:80\n\t}\n"
      "\tchain service-AAAAAAAA-ns1/svc1/tcp/p80 {\n\t\tnumgen random mod 1 vmap { 0 : goto "
      "endpoint-BBBBBBBB-ns1/svc1/tcp/p80__10.0.1.1/80 }\n\t}\n"
      "\tchain external-AAAAAAAA-ns1/svc1/tcp/p80 {\n\t\tgoto service-AAAAAAAA-ns1/svc1/tcp/p80\n\t}\n}\n");
}

/// kube-proxy's iptables rules for one LoadBalancer IP with a source range: KUBE-FW-* leaves other sources
/// untranslated for the filter KUBE-PROXY-FIREWALL to drop (the drop with `drop_match` before `-j DROP`),
/// which the filter hooks `filter_hooks` jump to; the nat hooks' jumps when `nat_hooks`.
result<dispatch_graph> firewalled_lb_rules(const std::vector<std::string>& filter_hooks,
                                           const std::string& drop_match = "", bool nat_hooks = true) {
  std::string text =
      "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:KUBE-PROXY-FIREWALL - [0:0]\n";
  for (const auto& h : filter_hooks) text += "-A " + h + " -m conntrack --ctstate NEW -j KUBE-PROXY-FIREWALL\n";
  text += "-A KUBE-PROXY-FIREWALL -d 5.6.7.8/32 -p tcp -m tcp --dport 80 " + drop_match + "-j DROP\nCOMMIT\n";
  text +=
      "*nat\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-FW-WEB0000000000000 - [0:0]\n"
      ":KUBE-EXT-WEB0000000000000 - [0:0]\n:KUBE-SVC-WEB0000000000000 - [0:0]\n:KUBE-SEP-WEB0000000000001 - [0:0]\n";
  if (nat_hooks) text += "-A PREROUTING -j KUBE-SERVICES\n-A OUTPUT -j KUBE-SERVICES\n";
  text +=
      "-A KUBE-SERVICES -d 5.6.7.8/32 -p tcp -m comment --comment \"ns/web:http loadbalancer IP\" -m tcp --dport 80 "
      "-j KUBE-FW-WEB0000000000000\n"
      "-A KUBE-FW-WEB0000000000000 -s 203.0.113.0/25 -j KUBE-EXT-WEB0000000000000\n"
      "-A KUBE-EXT-WEB0000000000000 -j KUBE-SVC-WEB0000000000000\n"
      "-A KUBE-SVC-WEB0000000000000 -j KUBE-SEP-WEB0000000000001\n"
      "-A KUBE-SEP-WEB0000000000001 -p tcp -m tcp -j DNAT --to-destination 10.0.1.1:80\nCOMMIT\n";
  return graph_of_rules(text);
}


}  // namespace

TEST_CASE("a negated statistic match takes the complement share, as xt_statistic inverts it") {
  // found by a new user: `! --probability 0.25` was assumed to match always (10.0.0.1 at 1.0)
  const auto g = graph_of_rules(R"(*nat
:PREROUTING ACCEPT [0:0]
:S - [0:0]
:S2 - [0:0]
-A PREROUTING -d 1.2.3.4/32 -p tcp -m tcp --dport 80 -j S
-A S -p tcp -m statistic --mode random ! --probability 0.25 -j DNAT --to-destination 10.0.0.1:80
-A S -p tcp -j DNAT --to-destination 10.0.0.2:80
-A PREROUTING -d 1.2.3.5/32 -p tcp -m tcp --dport 80 -j S2
-A S2 -p tcp -m statistic --mode nth ! --every 4 --packet 0 -j DNAT --to-destination 10.0.0.3:80
-A S2 -p tcp -j DNAT --to-destination 10.0.0.4:80
COMMIT
)");
  CHECK_MESSAGE(g.diagnostics.empty(), render(g.diagnostics));
  REQUIRE(g.value.services.size() == 2);
  const auto& s = g.value.services[0];
  REQUIRE(s.endpoints.size() == 2);
  CHECK(to_string(s.endpoints[0].address) == "10.0.0.1");
  // the kernel's threshold for 0.25 is 2^29 exactly: the complement is 0.75 exactly
  CHECK(s.endpoints[0].probability == 0.75);
  CHECK(s.endpoints[1].probability == 0.25);
  const auto& n = g.value.services[1];
  REQUIRE(n.endpoints.size() == 2);
  CHECK(n.endpoints[0].probability == doctest::Approx(0.75));
  CHECK(n.endpoints[1].probability == doctest::Approx(0.25));
}

TEST_CASE("iptables-nft's statistic matches, as nft lists them, give the shares xt_statistic gives") {
  // found by a new user: `nft list ruleset` of a kube-proxy node in iptables mode (iptables-nft) shows
  // `-m statistic` as `meta random & 2147483647 < T` and `numgen inc mod N P`, which were assumed to match
  auto parsed = nft::parse("listed.nft", R"(table ip nat {
	chain PREROUTING {
		type nat hook prerouting priority dstnat; policy accept;
		ip daddr 1.2.3.4 tcp dport 80 jump S
		ip daddr 1.2.3.5 tcp dport 80 jump S2
		ip daddr 1.2.3.6 tcp dport 80 jump S3
	}

	chain S {
		meta l4proto tcp meta random & 2147483647 < 536870912 dnat to 10.0.0.1:80
		meta l4proto tcp dnat to 10.0.0.2:80
	}

	chain S2 {
		meta l4proto tcp meta random & 2147483647 >= 536870912 dnat to 10.0.0.3:80
		meta l4proto tcp dnat to 10.0.0.4:80
	}

	chain S3 {
		meta l4proto tcp numgen inc mod 3 0 dnat to 10.0.0.5:80
		meta l4proto tcp dnat to 10.0.0.6:80
	}
}
)");
  REQUIRE_MESSAGE(parsed.ok(), render(parsed.diagnostics));
  auto rs = nft::to_ruleset(parsed.value);
  REQUIRE(rs.ok());
  const auto g = build_graph(rs.value);
  CHECK_MESSAGE(g.diagnostics.empty(), render(g.diagnostics));
  REQUIRE(g.value.services.size() == 3);
  const auto share = [&](std::size_t s, std::size_t e) { return g.value.services[s].endpoints.at(e).probability; };
  CHECK(to_string(g.value.services[0].endpoints.at(0).address) == "10.0.0.1");
  CHECK(share(0, 0) == 0.25);  // 2^29 of 2^31
  CHECK(share(0, 1) == 0.75);
  CHECK(share(1, 0) == 0.75);
  CHECK(share(1, 1) == 0.25);
  CHECK(share(2, 0) == doctest::Approx(1.0 / 3));
  CHECK(share(2, 1) == doctest::Approx(2.0 / 3));
}

TEST_CASE("an entry chain that a rule jumps to but the hooks never reach is not a fallback entry") {
  // found by a new user: `-A KUBE-SERVICES -j ACCEPT` first made KUBE-NODEPORTS unreachable, yet the
  // fallback for restore input (no hook jumps) started it and showed an unnamed half of its ladder
  const std::string shadowed = R"(*nat
:PREROUTING ACCEPT [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-SEP-A - [0:0]
:KUBE-SEP-B - [0:0]
:KUBE-SVC-X - [0:0]
-A PREROUTING -j KUBE-SERVICES
-A KUBE-NODEPORTS -p tcp -m comment --comment "ns/web:http" -m tcp --dport 30080 -j KUBE-SVC-X
-A KUBE-SEP-A -p tcp -m comment --comment "ns/web:http" -m tcp -j DNAT --to-destination 10.244.1.1:8080
-A KUBE-SEP-B -p tcp -m comment --comment "ns/web:http" -m tcp -j DNAT --to-destination 10.244.1.2:8080
-A KUBE-SERVICES -j ACCEPT
-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
-A KUBE-SVC-X -m comment --comment "ns/web:http -> 10.244.1.1:8080" -m statistic --mode random --probability 0.5 -j KUBE-SEP-A
-A KUBE-SVC-X -m comment --comment "ns/web:http -> 10.244.1.2:8080" -j KUBE-SEP-B
COMMIT
)";
  const auto g = graph_of_rules(shadowed);
  CHECK(g.value.services.empty());
  // without the ACCEPT the same chains give the named NodePort service with both endpoints
  std::string reached = shadowed;
  reached.erase(reached.find("-A KUBE-SERVICES -j ACCEPT\n"), std::string_view("-A KUBE-SERVICES -j ACCEPT\n").size());
  const auto h = graph_of_rules(reached);
  REQUIRE(h.value.services.size() == 1);
  CHECK(h.value.services[0].label() == "ns/web:http");
  REQUIRE(h.value.services[0].endpoints.size() == 2);
  CHECK(h.value.services[0].endpoints[1].probability == doctest::Approx(0.5));
  // kube-proxy's restore input has no PREROUTING jump: KUBE-SERVICES is the fallback entry there
  std::string restore_input = reached;
  restore_input.erase(restore_input.find("-A PREROUTING -j KUBE-SERVICES\n"),
                      std::string_view("-A PREROUTING -j KUBE-SERVICES\n").size());
  const auto k = graph_of_rules(restore_input);
  REQUIRE(k.value.services.size() == 1);
  CHECK(k.value.services[0].endpoints.size() == 2);
}

TEST_CASE("a second translation of an inexact destination is reported, and text shows the untranslated share") {
  // a ladder split before any rule gives the destination an address: the graph keeps the first record
  const auto g = graph_of_rules(R"(*nat
:PREROUTING ACCEPT [0:0]
:S - [0:0]
:A - [0:0]
:B - [0:0]
-A PREROUTING -p tcp -m tcp --dport 80 -j S
-A S -m statistic --mode random --probability 0.5 -j A
-A S -j B
-A A -p tcp -j DNAT --to-destination 10.0.0.1:80
-A B -p tcp -j DNAT --to-destination 10.0.0.2:80
COMMIT
)");
  REQUIRE(g.diagnostics.size() == 1);
  CHECK(g.diagnostics[0].code == error_code::unsupported_dispatch);
  CHECK(g.diagnostics[0].file->locate(g.diagnostics[0].where).line == 10);
  CHECK(g.value.unevaluated == 1);
  REQUIRE(g.value.services.size() == 1);
  CHECK(g.value.services[0].untranslated == doctest::Approx(0.5));
  CHECK(to_text(g.value).find("  not translated 0.500000  (new connections no rule sends to an endpoint)\n") !=
        std::string::npos);
}

TEST_CASE("an endpoint only external traffic reaches is in the graph, so compare sees it") {
  // found by a new user: a NodePort whose chain jumped to an endpoint outside the ClusterIP's ladder was
  // read as Local policy and the endpoint dropped, so two dumps with different NodePort endpoints compared
  // equivalent
  const auto dump = [](const char* nodeport_endpoint) {
    return fmt::format(R"(*nat
:PREROUTING ACCEPT [0:0]
:KUBE-SERVICES - [0:0]
:KUBE-NODEPORTS - [0:0]
:KUBE-SVC-W - [0:0]
:KUBE-EXT-W - [0:0]
:KUBE-SEP-A - [0:0]
:KUBE-SEP-Z - [0:0]
-A PREROUTING -j KUBE-SERVICES
-A KUBE-SERVICES -d 10.96.0.5/32 -p tcp -m comment --comment "ns/web:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-W
-A KUBE-SERVICES -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS
-A KUBE-NODEPORTS -p tcp -m comment --comment "ns/web:http" -m tcp --dport 30080 -j KUBE-EXT-W
-A KUBE-EXT-W -j KUBE-SEP-Z
-A KUBE-SVC-W -m comment --comment "ns/web:http -> 10.244.1.1:8080" -j KUBE-SEP-A
-A KUBE-SEP-A -p tcp -m comment --comment "ns/web:http" -m tcp -j DNAT --to-destination 10.244.1.1:8080
-A KUBE-SEP-Z -p tcp -m comment --comment "ns/web:http" -m tcp -j DNAT --to-destination {}:8080
COMMIT
)",
                       nodeport_endpoint);
  };
  const auto a = graph_of_rules(dump("10.244.9.9"));
  const auto b = graph_of_rules(dump("10.244.8.8"));
  REQUIRE(a.value.services.size() == 1);
  const auto& s = a.value.services[0];
  REQUIRE(s.endpoints.size() == 2);
  CHECK(to_string(s.endpoints[0].address) == "10.244.1.1");
  CHECK(s.endpoints[0].probability == 1.0);
  CHECK(to_string(s.endpoints[1].address) == "10.244.9.9");
  CHECK(s.endpoints[1].probability == 0.0);
  REQUIRE(s.endpoints[1].local_probability.has_value());
  CHECK(*s.endpoints[1].local_probability == 1.0);
  const auto c = compare(a.value, b.value);
  CHECK_FALSE(c.equivalent);
  CHECK(compare(a.value, a.value).equivalent);
}

TEST_CASE("a rule that sends one source range elsewhere is reported, and compare says it assumed") {
  // found by a new user: `-s 10.5.0.0/16 -j RETURN` before the service jump, or a jump of those clients
  // to one endpoint, compared equivalent without a word
  const std::string base = R"(*nat
:PREROUTING ACCEPT [0:0]
:SVC - [0:0]
:SEP1 - [0:0]
:SEP2 - [0:0]
{}-A PREROUTING -d 10.96.0.1/32 -p tcp -m tcp --dport 80 -j SVC
{}-A SVC -m statistic --mode random --probability 0.50000000000 -j SEP1
-A SVC -j SEP2
-A SEP1 -p tcp -j DNAT --to-destination 10.1.0.1:80
-A SEP2 -p tcp -j DNAT --to-destination 10.1.0.2:80
COMMIT
)";
  const auto plain = graph_of_rules(fmt::format(fmt::runtime(base), "", ""));
  CHECK(plain.diagnostics.empty());
  const auto before = graph_of_rules(fmt::format(fmt::runtime(base), "-A PREROUTING -s 10.5.0.0/16 -j RETURN\n", ""));
  REQUIRE(before.diagnostics.size() == 1);
  CHECK(before.diagnostics[0].code == error_code::unsupported_dispatch);
  CHECK(before.diagnostics[0].file->locate(before.diagnostics[0].where).line == 6);
  CHECK(before.diagnostics[0].message.find("from 10.5.0.0/16 before their destination is known") != std::string::npos);
  const auto inside = graph_of_rules(fmt::format(fmt::runtime(base), "", "-A SVC -s 10.5.0.0/16 -j SEP1\n"));
  REQUIRE(inside.diagnostics.size() == 1);
  CHECK(inside.diagnostics[0].file->locate(inside.diagnostics[0].where).line == 7);
  CHECK(inside.diagnostics[0].message.find("connections from 10.5.0.0/16 are sent elsewhere") != std::string::npos);
  for (const auto* g : {&before.value, &inside.value}) {
    CHECK(g->unevaluated == 1);
    const auto c = compare(plain.value, *g);
    CHECK(c.equivalent);  // for the other clients
    CHECK(c.unevaluated_b == 1);
  }
}

TEST_CASE("what a negated destination leaves goes on to the next rule as that destination") {
  // found by a new user: `! -d 10.0.0.1 ... -j SEP1` then `-j SEP2` lost 10.0.0.1's own endpoint, so it
  // compared equivalent to a ruleset that sends every address to SEP1
  const auto g = graph_of_rules(R"(*nat
:PREROUTING ACCEPT [0:0]
:SEP1 - [0:0]
:SEP2 - [0:0]
-A SEP1 -p tcp -j DNAT --to-destination 10.1.0.1:8080
-A SEP2 -p tcp -j DNAT --to-destination 10.1.0.2:8080
-A PREROUTING ! -d 10.0.0.1/32 -p tcp -m tcp --dport 80 -j SEP1
-A PREROUTING -p tcp -m tcp --dport 80 -j SEP2
COMMIT
)");
  CHECK(g.diagnostics.empty());
  REQUIRE(g.value.services.size() == 2);
  CHECK(g.value.services[0].label() == "dnat tcp *:80");
  REQUIRE(g.value.services[0].frontends.size() == 1);
  REQUIRE(g.value.services[0].frontends[0].excluded.size() == 1);
  CHECK(to_string(g.value.services[0].frontends[0].excluded[0]) == "10.0.0.1/32");
  CHECK(g.value.services[1].label() == "dnat tcp 10.0.0.1:80");
  REQUIRE(g.value.services[1].endpoints.size() == 1);
  CHECK(to_string(g.value.services[1].endpoints[0].address) == "10.1.0.2");
  CHECK(to_text(g.value).find("tcp *:80 -> dispatch (not to 10.0.0.1/32)") != std::string::npos);
  // the same dispatch written the other way round compares equivalent
  const auto h = graph_of_rules(R"(*nat
:PREROUTING ACCEPT [0:0]
:SEP1 - [0:0]
:SEP2 - [0:0]
-A SEP1 -p tcp -j DNAT --to-destination 10.1.0.1:8080
-A SEP2 -p tcp -j DNAT --to-destination 10.1.0.2:8080
-A PREROUTING -d 10.0.0.1/32 -p tcp -m tcp --dport 80 -j SEP2
-A PREROUTING -p tcp -m tcp --dport 80 -j SEP1
COMMIT
)");
  CHECK(compare(g.value, h.value).equivalent);
}

TEST_CASE("a destination a path already excludes is wholly outside it when a rule excludes it again") {
  // fuzz finding (dispatch): the second `! -d 10.0.0.1` split the frontend into a part that matched and
  // a part that did not, both the whole frontend, and its shares summed to 2
  const auto g = graph_of_rules(R"(*nat
:PREROUTING ACCEPT [0:0]
:SVC - [0:0]
:SEP - [0:0]
-A PREROUTING ! -d 10.0.0.1/32 -j SVC
-A SVC -d 10.0.0.0/8 -p tcp -m tcp --dport 80 -j SEP
-A SVC -p tcp -j DNAT --to-destination 10.244.0.2:80
-A SEP ! -d 10.0.0.1/32 -j RETURN
-A SEP -p tcp -j DNAT --to-destination 10.244.0.1:80
COMMIT
)");
  CHECK(g.diagnostics.empty());
  // SEP returns every connection to 10.0.0.0/8:80 (none is to 10.0.0.1): SVC's own DNAT takes them, as it
  // takes the other TCP connections; before, 10.0.0.0/8:80 was a service of its own with SEP's endpoint
  REQUIRE(g.value.services.size() == 1);
  const auto& s = g.value.services[0];
  CHECK(s.frontends.size() == 2);
  CHECK(to_text(g.value).find("tcp 10.0.0.0/8:80 -> dispatch (not to 10.0.0.1/32)") != std::string::npos);
  REQUIRE(s.endpoints.size() == 1);
  CHECK(to_string(s.endpoints[0].address) == "10.244.0.2");
  CHECK(s.endpoints[0].probability == 1.0);
}

TEST_CASE("a path that excludes more destination prefixes than a frontend holds is reported, not followed") {
  const auto g = graph_of_rules(R"(*nat
:PREROUTING ACCEPT [0:0]
:A - [0:0]
:B - [0:0]
:C - [0:0]
-A PREROUTING ! -d 10.0.0.1/32 -j A
-A A ! -d 10.0.0.2/32 -j B
-A B ! -d 10.0.0.3/32 -j C
-A C ! -d 10.0.0.4/32 -p tcp -j DNAT --to-destination 10.244.0.1:80
-A C -p tcp -j DNAT --to-destination 10.244.0.2:80
COMMIT
)");
  REQUIRE(g.diagnostics.size() == 1);
  CHECK(g.diagnostics[0].code == error_code::unsupported_dispatch);
  CHECK(g.diagnostics[0].message.find("more than 3 destination prefixes excluded on one path") == 0);
  CHECK(g.diagnostics[0].file->locate(g.diagnostics[0].where).line == 9);
  for (const auto& s : g.value.services)
    for (const auto& e : s.endpoints) CHECK(to_string(e.address) != "10.244.0.1");
}

TEST_CASE("a statistic threshold from 2^31 up matches every connection") {
  // xt_statistic compares (random & 0x7FFFFFFF) with the threshold: 2^31 and more always match
  CHECK(statistic_probability(0x80000000u) == 1.0);
  CHECK(statistic_probability(0xFFFFFFFFu) == 1.0);
  CHECK(statistic_probability(0x40000000u) == 0.5);
}

TEST_CASE("a drop before NAT, or notrack, decides a frontend's connections before NAT can") {
  // found by a new user: a mangle-table DROP of a ClusterIP, an nft prerouting filter chain dropping a
  // ClusterIP (any port), and a raw-table `CT --notrack` all compared equivalent to the plain dump
  const std::string nat = R"(*nat
:PREROUTING ACCEPT [0:0]
:SEP1 - [0:0]
-A PREROUTING -d 10.96.0.1/32 -p tcp -m tcp --dport 80 -j SEP1
-A SEP1 -p tcp -j DNAT --to-destination 10.1.0.1:80
COMMIT
)";
  const auto plain = graph_of_rules(nat);
  const auto dropped = graph_of_rules(nat + "*mangle\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -d 10.96.0.1/32 -j DROP\nCOMMIT\n");
  CHECK(dropped.diagnostics.empty());
  REQUIRE(dropped.value.services.size() == 1);
  REQUIRE(dropped.value.services[0].frontends.size() == 1);
  CHECK(dropped.value.services[0].frontends[0].result == outcome::drop);
  CHECK_FALSE(compare(plain.value, dropped.value).equivalent);
  const auto untracked = graph_of_rules(
      nat + "*raw\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -d 10.96.0.1/32 -j CT --notrack\nCOMMIT\n");
  CHECK(untracked.value.unevaluated == 1);
  bool said = false;
  for (const auto& d : untracked.diagnostics)
    said = said || (d.code == error_code::unsupported_dispatch && d.message.find("not tracked") != std::string::npos);
  CHECK(said);

  const auto nft_graph = graph_of_nft;
  const std::string table = "table ip t {{\n\tchain pre {{\n\t\ttype filter hook prerouting priority mangle; policy accept;\n"
                            "{}\t}}\n\tchain nat {{\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n"
                            "\t\tip daddr 10.96.0.1 tcp dport 80 dnat to 10.1.0.1:80\n\t}}\n}}\n";
  const auto open = nft_graph(fmt::format(fmt::runtime(table), ""));
  const auto closed = nft_graph(fmt::format(fmt::runtime(table), "\t\tip daddr 10.96.0.1 drop\n"));
  REQUIRE(closed.services.size() == 1);
  REQUIRE(closed.services[0].frontends.size() == 1);
  CHECK(closed.services[0].frontends[0].result == outcome::drop);
  CHECK(open.services[0].frontends[0].result == outcome::dispatch);
  CHECK_FALSE(compare(open, closed).equivalent);
}

TEST_CASE("a mark target sets, clears and toggles bits as xt_mark and nft meta mark set do") {
  // the first DNAT is taken when the mark has bit 0x4000 after the two mark rules, the second otherwise
  const auto endpoint = [](const std::string& first, const std::string& second) {
    const auto g = graph_of_rules("*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j MARK " + first +
                                  "\n-A PREROUTING -j MARK " + second +
                                  "\n-A PREROUTING -d 10.96.0.1/32 -p tcp -m mark --mark 0x4000/0x4000 -m tcp --dport 80 "
                                  "-j DNAT --to-destination 10.1.0.1:80\n-A PREROUTING -d 10.96.0.1/32 -p tcp -m tcp "
                                  "--dport 80 -j DNAT --to-destination 10.1.0.2:80\nCOMMIT\n");
    REQUIRE(g.value.services.size() == 1);
    REQUIRE(g.value.services[0].endpoints.size() == 1);
    return to_string(g.value.services[0].endpoints[0].address);
  };
  CHECK(endpoint("--or-mark 0x4000", "--or-mark 0x1") == "10.1.0.1");
  CHECK(endpoint("--or-mark 0x4000", "--set-xmark 0x1/0xffffffff") == "10.1.0.2");  // cleared
  CHECK(endpoint("--xor-mark 0x4000", "--xor-mark 0x4000") == "10.1.0.2");          // toggled back
  CHECK(endpoint("--set-mark 0x4001", "--and-mark 0x4000") == "10.1.0.1");
  CHECK(endpoint("--set-mark 0x4001", "--and-mark 0x1") == "10.1.0.2");

  const auto nft_endpoint = [](const std::string& first, const std::string& second) {
    const auto g = graph_of_nft("table ip t {\n\tchain pre {\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n"
                                "\t\tmeta mark set " + first + "\n\t\tmeta mark set " + second +
                                "\n\t\tip daddr 10.96.0.1 meta mark & 0x00004000 == 0x00004000 tcp dport 80 dnat to "
                                "10.1.0.1:80\n\t\tip daddr 10.96.0.1 tcp dport 80 dnat to 10.1.0.2:80\n\t}\n}\n");
    REQUIRE(g.services.size() == 1);
    REQUIRE(g.services[0].endpoints.size() == 1);
    return to_string(g.services[0].endpoints[0].address);
  };
  CHECK(nft_endpoint("meta mark | 0x00004000", "meta mark | 0x00000001") == "10.1.0.1");
  CHECK(nft_endpoint("meta mark | 0x00004000", "0x00000001") == "10.1.0.2");
  CHECK(nft_endpoint("meta mark ^ 0x00004000", "meta mark ^ 0x00004000") == "10.1.0.2");
  CHECK(nft_endpoint("0x00004001", "meta mark & 0x00004000") == "10.1.0.1");
  CHECK(nft_endpoint("0x00004001", "meta mark & 0x00000001") == "10.1.0.2");
}

TEST_CASE("a rejected frontend carries the kernel's answer for its family, and compare tells answers apart") {
  // (nft_reject: a bare reject and the icmpx codes become the packet family's own ICMP or ICMPv6 code)
  // (icmpx only in inet tables, where nft takes it; the NAT statement then names its family)
  const auto answer = [](const char* family, const char* addr, const std::string& reject, bool inet = false) {
    const auto g = graph_of_nft(fmt::format(
        "table {4} t {{\n\tchain pre {{\n\t\ttype filter hook prerouting priority mangle; policy accept;\n"
        "\t\t{0} daddr {1} {2}\n\t}}\n\tchain nat {{\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n"
        "\t\t{0} daddr {1} tcp dport 80 dnat {5}to {3}\n\t}}\n}}\n",
        family, addr, reject, family == std::string("ip") ? "10.1.0.1:80" : "[fd00::2]:80", inet ? "inet" : family,
        inet ? std::string(family) + " " : std::string()));
    REQUIRE(g.services.size() == 1);
    REQUIRE(g.services[0].frontends.size() == 1);
    const auto& f = g.services[0].frontends[0];
    CHECK(f.result == outcome::reject);
    return std::pair{reject_reply_name(f.reject_with), g};
  };
  CHECK(answer("ip", "10.96.0.1", "reject").first == "icmp port-unreachable");
  CHECK(answer("ip6", "fd00::1", "reject").first == "icmpv6 port-unreachable");
  CHECK(answer("ip", "10.96.0.1", "reject with icmpx no-route", true).first == "icmp net-unreachable");
  CHECK(answer("ip6", "fd00::1", "reject with icmpx no-route", true).first == "icmpv6 no-route");
  CHECK(answer("ip6", "fd00::1", "reject with icmpx host-unreachable", true).first == "icmpv6 addr-unreachable");
  CHECK(answer("ip", "10.96.0.1", "reject with icmpx admin-prohibited", true).first == "icmp admin-prohibited");
  CHECK(answer("ip", "10.96.0.1", "reject with icmp host-prohibited").first == "icmp host-prohibited");
  CHECK(answer("ip", "10.96.0.1", "tcp dport 80 reject with tcp reset").first == "tcp reset");

  const auto bare = answer("ip", "10.96.0.1", "reject").second;
  const auto icmpx = answer("ip", "10.96.0.1", "reject with icmpx port-unreachable", true).second;
  const auto reset = answer("ip", "10.96.0.1", "tcp dport 80 reject with tcp reset").second;
  CHECK(compare(bare, icmpx).equivalent);  // the same answer, written two ways
  const auto c = compare(bare, reset);
  CHECK_FALSE(c.equivalent);
  REQUIRE(c.differences.size() == 1);
  REQUIRE(c.differences[0].details.size() == 1);
  CHECK(c.differences[0].details[0] ==
        "frontend dnat tcp 10.96.0.1:80: rejected with icmp port-unreachable in A, with tcp reset in B");
}

TEST_CASE("constructs the graph cannot follow on a dispatch path are warnings, not silence") {
  // found by a new user: `-m limit`, `--sport`, a DNAT port range and nft's `dnat to numgen ... map`
  // were taken silently (the last one even gave "no services")
  const auto warned = [](const result<dispatch_graph>& g, std::string_view what) {
    bool found = false;
    for (const auto& d : g.diagnostics)
      found = found || (d.code == error_code::unsupported_dispatch && d.message.find(what) != std::string::npos);
    CHECK_MESSAGE(found, what, "\n", render(g.diagnostics));
    CHECK(g.value.unevaluated >= 1);
  };
  const std::string head = "*nat\n:PREROUTING ACCEPT [0:0]\n";
  warned(graph_of_rules(head + "-A PREROUTING -d 10.96.0.1/32 -p tcp -m tcp --dport 80 -m limit --limit 1/sec -j DNAT "
                               "--to-destination 10.1.0.1:80\nCOMMIT\n"),
         "'-m limit'");
  warned(graph_of_rules(head + "-A PREROUTING -d 10.96.0.1/32 -p tcp -m tcp --sport 1000 --dport 80 -j DNAT "
                               "--to-destination 10.1.0.1:80\nCOMMIT\n"),
         "source port");
  warned(graph_of_rules(head + "-A PREROUTING -d 10.96.0.1/32 -p tcp -m tcp --dport 80 -j DNAT "
                               "--to-destination 10.1.0.1:8080-8090\nCOMMIT\n"),
         "a port range");
  auto parsed = nft::parse("t.nft", "table ip t {\n\tchain pre {\n\t\ttype nat hook prerouting priority dstnat;\n"
                                    "\t\tip daddr 10.0.0.1 tcp dport 80 dnat to numgen random mod 2 map { 0 : 10.1.0.1, "
                                    "1 : 10.1.0.2 } : 8080\n\t}\n}\n");
  REQUIRE_MESSAGE(parsed.ok(), render(parsed.diagnostics));
  auto rs = nft::to_ruleset(parsed.value);
  REQUIRE(rs.ok());
  warned(build_graph(rs.value), "a translation the graph does not model");
}

TEST_CASE("a mark match in NAT when a rule before NAT sets marks is reported") {
  // found by a new user: a mangle-table MARK decided which endpoint a NAT rule picked, unseen
  const std::string nat = R"(*nat
:PREROUTING ACCEPT [0:0]
:SEP1 - [0:0]
:SEP2 - [0:0]
-A PREROUTING -d 10.96.0.1/32 -p tcp -m tcp --dport 80 -m mark --mark 0x1 -j SEP1
-A PREROUTING -d 10.96.0.1/32 -p tcp -m tcp --dport 80 -j SEP2
-A SEP1 -p tcp -j DNAT --to-destination 10.1.0.1:80
-A SEP2 -p tcp -j DNAT --to-destination 10.1.0.2:80
COMMIT
)";
  const auto alone = graph_of_rules(nat);
  CHECK(alone.diagnostics.empty());  // nothing sets the mark: the first rule never matches a new connection
  REQUIRE(alone.value.services.size() == 1);
  REQUIRE(alone.value.services[0].endpoints.size() == 1);
  CHECK(to_string(alone.value.services[0].endpoints[0].address) == "10.1.0.2");
  const auto marked = graph_of_rules(
      nat + "*mangle\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -s 10.5.0.0/16 -j MARK --set-xmark 0x1/0xffffffff\nCOMMIT\n");
  REQUIRE(marked.diagnostics.size() == 1);
  CHECK(marked.diagnostics[0].code == error_code::unsupported_dispatch);
  CHECK(marked.diagnostics[0].file->locate(marked.diagnostics[0].where).line == 5);
  CHECK(marked.diagnostics[0].message.find("a rule before NAT sets marks (at test.rules:12)") != std::string::npos);
  CHECK(marked.value.unevaluated == 1);
}

TEST_CASE("session affinity whose check leads to an endpoint that does not record the client is reported") {
  // found by a new user: a missing `--set`, a wrong list name or crossed lists compared equivalent
  const auto dump = [](const char* set_list) {
    return fmt::format(R"(*nat
:PREROUTING ACCEPT [0:0]
:KUBE-SVC-A - [0:0]
:KUBE-SEP-1 - [0:0]
:KUBE-SEP-2 - [0:0]
-A PREROUTING -d 10.96.0.1/32 -p tcp -m comment --comment "ns/a:http cluster IP" -m tcp --dport 80 -j KUBE-SVC-A
-A KUBE-SVC-A -m comment --comment "ns/a:http -> 10.1.0.1:80" -m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-1 --mask 255.255.255.255 --rsource -j KUBE-SEP-1
-A KUBE-SVC-A -m comment --comment "ns/a:http -> 10.1.0.2:80" -m recent --rcheck --seconds 10800 --reap --name KUBE-SEP-2 --mask 255.255.255.255 --rsource -j KUBE-SEP-2
-A KUBE-SVC-A -m comment --comment "ns/a:http -> 10.1.0.1:80" -m statistic --mode random --probability 0.50000000000 -j KUBE-SEP-1
-A KUBE-SVC-A -m comment --comment "ns/a:http -> 10.1.0.2:80" -j KUBE-SEP-2
-A KUBE-SEP-1 -p tcp -m comment --comment "ns/a:http" -m recent --set --name {} --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 10.1.0.1:80
-A KUBE-SEP-2 -p tcp -m comment --comment "ns/a:http" -m recent --set --name KUBE-SEP-2 --mask 255.255.255.255 --rsource -m tcp -j DNAT --to-destination 10.1.0.2:80
COMMIT
)",
                       set_list);
  };
  const auto good = graph_of_rules(dump("KUBE-SEP-1"));
  CHECK_MESSAGE(good.diagnostics.empty(), render(good.diagnostics));
  REQUIRE(good.value.services.size() == 1);
  CHECK(good.value.services[0].affinity_timeout_s == 10800u);
  const auto crossed = graph_of_rules(dump("KUBE-SEP-2"));
  REQUIRE(crossed.diagnostics.size() == 1);
  CHECK(crossed.diagnostics[0].code == error_code::unsupported_dispatch);
  CHECK(crossed.diagnostics[0].file->locate(crossed.diagnostics[0].where).line == 7);
  CHECK(crossed.diagnostics[0].message.find("clients found in 'KUBE-SEP-1' are sent to 10.1.0.1") != std::string::npos);
  CHECK(crossed.value.unevaluated == 1);
}

TEST_CASE("where NAT translates a frontend (arriving or local connections) is compared") {
  // found by a new user: a DNAT only in OUTPUT compared equivalent to the same DNAT only in PREROUTING
  const auto dump = [](const char* hook) {
    return fmt::format(
        "*nat\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
        "-A {} -d 10.0.0.1/32 -p tcp -m tcp --dport 80 -j DNAT --to-destination 10.1.0.1:80\nCOMMIT\n",
        hook);
  };
  const auto pre = graph_of_rules(dump("PREROUTING"));
  const auto out = graph_of_rules(dump("OUTPUT"));
  REQUIRE(pre.value.services.size() == 1);
  CHECK(pre.value.services[0].frontends.at(0).hooks == static_cast<std::uint8_t>(frontend_hook::prerouting));
  CHECK(out.value.services.at(0).frontends.at(0).hooks == static_cast<std::uint8_t>(frontend_hook::output));
  const auto c = compare(pre.value, out.value);
  CHECK_FALSE(c.equivalent);
  REQUIRE(c.differences.size() == 1);
  CHECK(c.differences[0].details.at(0) ==
        "frontend dnat tcp 10.0.0.1:80: translated for arriving connections only in A, local connections only in B");
  const auto both = graph_of_rules("*nat\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:S - [0:0]\n"
                                   "-A PREROUTING -j S\n-A OUTPUT -j S\n"
                                   "-A S -d 10.0.0.1/32 -p tcp -m tcp --dport 80 -j DNAT --to-destination 10.1.0.1:80\n"
                                   "COMMIT\n");
  CHECK(both.value.services.at(0).frontends.at(0).hooks == 3);
}

namespace {

/// The bundled example cluster with `line` inserted after line `after` (1-based) of `name`.
std::string example_with(const char* name, std::size_t after, const std::string& line) {
  const auto text = slurp(source_root() / "examples" / "cluster" / name);
  std::size_t at = 0;
  for (std::size_t n = 0; n < after; ++n) {
    at = text.find('\n', at);
    REQUIRE(at != std::string::npos);
    ++at;
  }
  return text.substr(0, at) + line + "\n" + text.substr(at);
}

/// Hooks of every frontend, by "address:port" (a NodePort as "node:port", whatever addresses it names).
std::map<std::string, int> hooks_of(const dispatch_graph& g) {
  std::map<std::string, int> out;
  for (const auto& s : g.services)
    for (const auto& f : s.frontends)
      out[fmt::format("{}:{}", f.kind == frontend_kind::node_port ? "node" : to_string(f.address.address),
                      f.port.first)] = f.hooks;
  return out;
}

dispatch_graph graph_of_iptables(std::string text) {
  auto g = graph_of_rules(std::move(text));
  REQUIRE_MESSAGE(g.ok(), render(g.diagnostics));
  CHECK_MESSAGE(g.diagnostics.empty(), render(g.diagnostics));
  return std::move(g.value);
}

const std::map<std::string, int> all_hooks{{"10.96.0.1:443", 3},
                                           {"10.96.12.34:80", 3},
                                           {"10.96.40.2:6379", 3},
                                           {"10.96.50.5:80", 0},  // no endpoints: rejected in filter
                                           {"node:30080", 3}};

}  // namespace

TEST_CASE("a rule before the dispatch that ends one ClusterIP's connections at one hook: nft") {
  // found by a tester: `ip daddr 10.96.12.34 drop` first in nat-prerouting left 10.96.12.34:80 translated
  // at prerouting (only exact destinations were taken from the rest of the traffic), and compare said
  // EQUIVALENT
  const auto original = graph_of_nft(slurp(source_root() / "examples" / "cluster" / "cluster.nft"));
  CHECK(hooks_of(original) == all_hooks);
  auto only_output = all_hooks;
  only_output["10.96.12.34:80"] = static_cast<int>(frontend_hook::output);
  const std::string drop_chain = "\tchain drop-it {\n\t\tdrop\n\t}\n";
  for (const std::string rule :
       {"ip daddr 10.96.12.34 drop", "ip daddr 10.96.12.34 accept", "ip daddr 10.96.12.34 return",
        "ip daddr 10.96.12.34 jump drop-it", "ip daddr 10.96.12.34 tcp dport 80 drop",
        "ip daddr 10.96.0.0/16 tcp dport 80 accept", "ip daddr . tcp dport { 10.96.12.34 . 80 } drop",
        "ip daddr . meta l4proto . th dport { 10.96.12.34 . tcp . 80, 10.96.1.1 . udp . 53 } drop"}) {
    CAPTURE(rule);
    // line 51 is nat-prerouting's `type nat hook prerouting ...`
    auto text = example_with("cluster.nft", 51, "\t\t" + rule);
    text.insert(text.rfind('}'), drop_chain);
    const auto g = graph_of_nft(text);
    CHECK(g.unevaluated == 0);
    CHECK(hooks_of(g) == only_output);
    const auto c = compare(original, g);
    CHECK_FALSE(c.equivalent);
    REQUIRE(c.differences.size() == 1);
    CHECK(c.differences[0].details.at(0) ==
          "frontend cluster-ip tcp 10.96.12.34:80: translated for arriving and local connections in A, local "
          "connections only in B");
  }
  // decided for the frontend, and not it: nothing changes
  for (const std::string rule :
       {"ip daddr 10.96.12.34 tcp dport 81 drop", "ip daddr 10.96.12.35 drop",
        "ip daddr . tcp dport { 10.96.12.34 . 81 } drop", "ip daddr 10.96.12.34 udp dport 80 drop"}) {
    CAPTURE(rule);
    const auto g = graph_of_nft(example_with("cluster.nft", 51, "\t\t" + rule));
    CHECK(hooks_of(g) == all_hooks);
    CHECK(compare(original, g).equivalent);
  }
  // at the other hook: the output walk is not the prerouting walk's answer again
  auto only_prerouting = all_hooks;
  only_prerouting["10.96.12.34:80"] = static_cast<int>(frontend_hook::prerouting);
  CHECK(hooks_of(graph_of_nft(example_with("cluster.nft", 56, "\t\tip daddr 10.96.12.34 drop"))) == only_prerouting);
}

TEST_CASE("a rule that would end every connection on a condition the graph does not decide ends none") {
  // found by a tester: `meta skuid 0 accept` before `jump services` in nat-output was taken as ending every
  // local connection (only root's skip NAT there); the graph assumes they go on, and says so
  const auto original = graph_of_nft(slurp(source_root() / "examples" / "cluster" / "cluster.nft"));
  for (const std::string rule : {"meta skuid 0 accept", "meta skuid 0 drop", "meta cpu 1 return"}) {
    CAPTURE(rule);
    const auto g = graph_result_of_nft(example_with("cluster.nft", 56, "\t\t" + rule));
    CHECK(hooks_of(g.value) == all_hooks);
    REQUIRE(g.diagnostics.size() == 1);
    CHECK(g.diagnostics[0].message.find("on a rule that ends connections to any address is not evaluated") !=
          std::string::npos);
    const auto c = compare(original, g.value);
    CHECK(c.equivalent);
    CHECK(c.unevaluated_b == 1);
  }
}

TEST_CASE("a rule that would end one ClusterIP's connections on a condition the graph does not decide is reported") {
  // an interface or an opaque match on a verdict rule: the graph does not decide it for the frontend, and says so
  const auto original = graph_of_nft(slurp(source_root() / "examples" / "cluster" / "cluster.nft"));
  for (const std::string rule :
       {"ip daddr 10.96.12.34 iifname \"eth0\" drop", "ip daddr 10.96.12.34 meta skuid 0 drop",
        // accepted or returned on an interface: whether the clients arrive there is not known (a tester found
        // these taken as never met, with no word)
        "ip daddr 10.96.12.34 iifname \"eth0\" accept", "ip daddr 10.96.12.34 iifname \"eth0\" return"}) {
    CAPTURE(rule);
    const auto g = graph_result_of_nft(example_with("cluster.nft", 51, "\t\t" + rule));
    CHECK(hooks_of(g.value) == all_hooks);
    CHECK(g.value.unevaluated == 1);
    REQUIRE(g.diagnostics.size() == 1);
    CHECK(g.diagnostics[0].code == error_code::unsupported_dispatch);
    CHECK(g.diagnostics[0].file->locate(g.diagnostics[0].where).line == 52);
    CHECK(g.diagnostics[0].message.find("on a rule that ends connections to 10.96.12.34/32 is not evaluated: the graph "
                                        "assumes the connections it would end go on past it") != std::string::npos);
    const auto c = compare(original, g.value);
    CHECK(c.equivalent);
    CHECK(c.unevaluated_b == 1);
  }
}

TEST_CASE("a rule before the dispatch that ends one ClusterIP's connections at one hook: iptables") {
  // the same as nft: `-A PREROUTING -d 10.96.12.34/32 -j ACCEPT` before `-j KUBE-SERVICES`
  const auto text = slurp(source_root() / "examples" / "cluster" / "cluster.iptables");
  const auto original = graph_of_iptables(text);
  CHECK(hooks_of(original) == all_hooks);
  auto only_output = all_hooks;
  only_output["10.96.12.34:80"] = static_cast<int>(frontend_hook::output);
  const auto nft_dropped = graph_of_nft(example_with("cluster.nft", 51, "\t\tip daddr 10.96.12.34 drop"));
  // line 31 is the last of the nat table's chain declarations; line 32 `-A PREROUTING ... -j KUBE-SERVICES`
  for (const std::string rule :
       {"-A PREROUTING -d 10.96.12.34/32 -j ACCEPT", "-A PREROUTING -d 10.96.12.34/32 -j RETURN",
        "-A PREROUTING -d 10.96.12.34/32 -j ACCEPT-IT",
        "-A PREROUTING -d 10.96.12.34/32 -p tcp -m tcp --dport 80 -j ACCEPT",
        "-A PREROUTING -d 10.96.0.0/16 -p tcp -m tcp --dport 80 -j RETURN"}) {
    CAPTURE(rule);
    const auto g = graph_of_iptables(
        example_with("cluster.iptables", 31, ":ACCEPT-IT - [0:0]\n" + rule + "\n-A ACCEPT-IT -j ACCEPT"));
    CHECK(g.unevaluated == 0);
    CHECK(hooks_of(g) == only_output);
    const auto c = compare(original, g);
    CHECK_FALSE(c.equivalent);
    REQUIRE(c.differences.size() == 1);
    CHECK(c.differences[0].details.at(0) ==
          "frontend cluster-ip tcp 10.96.12.34:80: translated for arriving and local connections in A, local "
          "connections only in B");
    // and the same cluster with nft's drop of it at prerouting: the same dispatch
    CHECK(compare(g, nft_dropped).equivalent);
  }
  for (const std::string rule : {"-A PREROUTING -d 10.96.12.34/32 -p tcp -m tcp --dport 81 -j ACCEPT",
                                 "-A PREROUTING -d 10.96.12.35/32 -j ACCEPT"}) {
    CAPTURE(rule);
    const auto g = graph_of_iptables(example_with("cluster.iptables", 31, rule));
    CHECK(hooks_of(g) == all_hooks);
    CHECK(compare(original, g).equivalent);
  }
}

TEST_CASE("a match on every interface is always met: `-i +`") {
  // (nft refuses the all-wildcard name `iifname "*"`; its unconditional `accept` is the same rule)
  const auto ipt = graph_of_iptables(slurp(source_root() / "examples" / "cluster" / "cluster.iptables"));
  // accepted at prerouting whatever the interface: every frontend is translated for local connections only
  auto only_output = all_hooks;
  for (auto& [fe, hooks] : only_output)
    if (hooks != 0) hooks = static_cast<int>(frontend_hook::output);
  const auto ipt_all = graph_of_iptables(example_with("cluster.iptables", 31, "-A PREROUTING -i + -j ACCEPT"));
  const auto nft_all = graph_of_nft(example_with("cluster.nft", 51, "\t\taccept"));
  CHECK(ipt_all.unevaluated == 0);
  CHECK(nft_all.unevaluated == 0);
  CHECK(hooks_of(ipt_all) == only_output);
  CHECK(hooks_of(nft_all) == only_output);
  CHECK_FALSE(compare(ipt, ipt_all).equivalent);
  CHECK(compare(ipt_all, nft_all).equivalent);
  // and on none: no effect
  const auto ipt_none = graph_of_iptables(example_with("cluster.iptables", 31, "-A PREROUTING ! -i + -j ACCEPT"));
  CHECK(ipt_none.unevaluated == 0);
  CHECK(compare(ipt, ipt_none).equivalent);
}

TEST_CASE("a negated match before the dispatch ends the connections to every other port, protocol or address") {
  // found by a tester: `tcp dport != 80 drop` first in nat-prerouting kept every frontend translated at
  // prerouting ("not port 80" was no destination the graph could take from the rest), and compare said
  // EQUIVALENT; so did `meta l4proto != udp drop` and `ip daddr != 10.96.12.34 drop`
  const auto original = graph_of_nft(slurp(source_root() / "examples" / "cluster" / "cluster.nft"));
  const int output = static_cast<int>(frontend_hook::output);
  auto not_80 = all_hooks;  // 443, 6379 and 30080 are translated for local connections only
  not_80["10.96.0.1:443"] = not_80["10.96.40.2:6379"] = not_80["node:30080"] = output;
  auto only_443 = all_hooks;
  only_443["10.96.12.34:80"] = only_443["10.96.40.2:6379"] = only_443["node:30080"] = output;
  auto above_1024 = all_hooks;
  above_1024["10.96.40.2:6379"] = above_1024["node:30080"] = output;
  auto only_12_34 = not_80;  // every address but 10.96.12.34 (10.96.50.5:80 is not translated at all)
  only_12_34["10.96.12.34:80"] = all_hooks.at("10.96.12.34:80");
  auto outside_service_cidr = all_hooks;  // the NodePort's node address
  outside_service_cidr["node:30080"] = output;
  auto every_tcp = not_80;
  every_tcp["10.96.12.34:80"] = output;
  const std::vector<std::pair<std::string, const std::map<std::string, int>*>> cases{
      {"tcp dport != 80 drop", &not_80},
      {"tcp dport != { 443 } drop", &only_443},
      {"tcp dport != { 1-1024, 8080 } drop", &above_1024},
      {"udp dport != 53 drop", &all_hooks},  // no UDP frontend
      {"tcp dport != 0-65535 drop", &all_hooks},
      {"ip daddr != 10.96.12.34 drop", &only_12_34},
      {"ip daddr != 10.96.0.0/12 drop", &outside_service_cidr},
      {"meta l4proto != udp drop", &every_tcp},
      {"ip protocol != { udp, sctp } drop", &every_tcp},
      {"meta l4proto != tcp drop", &all_hooks}};
  for (const auto& [rule, want] : cases) {
    CAPTURE(rule);
    const auto g = graph_of_nft(example_with("cluster.nft", 51, "\t\t" + rule));
    CHECK(g.unevaluated == 0);
    CHECK(hooks_of(g) == *want);
    CHECK(compare(original, g).equivalent == (want == &all_hooks));
  }
  // iptables: the same rule before the jump to KUBE-SERVICES gives the same graph
  const auto ipt = graph_of_iptables(
      example_with("cluster.iptables", 31, "-A PREROUTING -p tcp -m tcp ! --dport 80 -j ACCEPT"));
  CHECK(hooks_of(ipt) == not_80);
  CHECK(compare(ipt, graph_of_nft(example_with("cluster.nft", 51, "\t\ttcp dport != 80 drop"))).equivalent);
}

TEST_CASE("fib daddr type local on a rule that ends connections says what it assumed of the addresses") {
  // found by a tester: `fib daddr type local drop` in a service chain decided the NodePort's node IP (from
  // `@nodeport-ips`) and the ClusterIP silently; whether an address is the node's is not in the dump
  const std::string text = slurp(source_root() / "examples" / "cluster" / "cluster.nft");
  const std::string chain = "\tchain service-KHN6ECMT-shop/web/tcp/http {\n";
  const auto at = text.find(chain);
  REQUIRE(at != std::string::npos);
  auto changed = text;
  changed.insert(at + chain.size(), "\t\tfib daddr type local drop\n");
  const auto g = graph_result_of_nft(changed);
  REQUIRE(g.diagnostics.size() == 2);
  CHECK(g.value.unevaluated == 2);
  std::set<std::string> messages;
  for (const auto& d : g.diagnostics) {
    CHECK(d.code == error_code::unsupported_dispatch);
    CHECK(d.file->text(d.where) == "fib daddr type local drop");
    messages.insert(d.message);
  }
  CHECK(messages == std::set<std::string>{
                        "fib daddr type local: whether 10.96.12.34 is an address of the node is not known from the "
                        "dump; taken as not local",
                        "fib daddr type local: whether 192.168.122.10 is an address of the node is not known from the "
                        "dump; an address from a set is taken as possibly local: its connections are followed both "
                        "ways"});
  // kube-proxy's own jump on a local destination (the last rule of KUBE-SERVICES) assumes nothing to report
  CHECK(graph_of_iptables(slurp(source_root() / "examples" / "cluster" / "cluster.iptables")).unevaluated == 0);
}

TEST_CASE("what a tester found: named ports, meta protocol, hashes, --hitcount and an update's own timeout") {
  const std::string text = slurp(source_root() / "examples" / "cluster" / "cluster.nft");
  const auto original = graph_of_nft(text);
  const auto replaced = [&text](const std::string& from, const std::string& to) {
    auto t = text;
    const auto at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  const std::string web_chain = "\tchain service-KHN6ECMT-shop/web/tcp/http {\n";
  SUBCASE("a service name in a map key is its port, as the kernel holds it") {
    const auto g = graph_of_nft(replaced("10.96.12.34 . tcp . 80 :", "10.96.12.34 . tcp . http :"));
    CHECK(g.unevaluated == 0);
    CHECK(compare(original, g).equivalent);
  }
  SUBCASE("meta protocol is decided by the family of the graph's connections") {
    // (`meta nfproto` is refused outside an inet table, as nft refuses it)
    for (const std::string never : {"meta protocol ip6 return", "meta protocol != ip return"}) {
      CAPTURE(never);
      const auto g = graph_of_nft(replaced(web_chain, web_chain + "\t\t" + never + "\n"));
      CHECK(g.unevaluated == 0);
      CHECK(compare(original, g).equivalent);
    }
    for (const std::string always : {"meta protocol ip return", "meta protocol != ip6 return"}) {
      CAPTURE(always);
      const auto g = graph_of_nft(replaced(web_chain, web_chain + "\t\t" + always + "\n"));
      CHECK_FALSE(compare(original, g).equivalent);
    }
  }
  SUBCASE("meta protocol in an ip6 table is decided by the table's family, IPv6") {
    const auto ip6_table = [](const std::string& first) {
      return "table ip6 t {\n\tchain pre {\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n" + first +
             "\t\tip6 daddr fd00::10 tcp dport 80 dnat to [fd00::1]:8080\n\t}\n}\n";
    };
    const auto plain = graph_of_nft(ip6_table(""));
    REQUIRE(plain.services.size() == 1);
    CHECK(plain.services[0].endpoints.size() == 1);
    for (const std::string never : {"meta protocol ip return", "meta protocol != ip6 return"}) {
      CAPTURE(never);
      const auto g = graph_of_nft(ip6_table("\t\t" + never + "\n"));
      CHECK(g.unevaluated == 0);
      CHECK(compare(plain, g).equivalent);
    }
    for (const std::string always : {"meta protocol ip6 return", "meta protocol != ip return"}) {
      CAPTURE(always);
      const auto g = graph_of_nft(ip6_table("\t\t" + always + "\n"));
      CHECK(g.services.empty());
      CHECK_FALSE(compare(plain, g).equivalent);
    }
  }
  SUBCASE("a hash selection is taken as uniform, and says so") {
    const auto g = graph_result_of_nft(replaced("numgen random mod 3 vmap", "jhash ip daddr mod 3 vmap"));
    REQUIRE(g.diagnostics.size() == 1);
    CHECK(g.diagnostics[0].message.find("a hash (jhash, symhash) selects by the fields it hashes") != std::string::npos);
    const auto c = compare(original, g.value);
    CHECK(c.unevaluated_b == 1);
  }
  SUBCASE("an affinity update with a timeout of its own keeps its clients that long") {
    const std::string update = "update @affinity-6J65OJTM-shop/cache/tcp/redis__10.244.2.22/6379 { ip saddr";
    const auto g = graph_of_nft(replaced(update + " }", update + " timeout 1h }"));
    std::map<std::string, std::uint32_t> kept;
    for (const auto& s : g.services)
      if (s.name && s.name->str() == "shop/cache:redis")
        for (const auto& e : s.endpoints) kept[endpoint_text(e)] = e.affinity_timeout_s;
    CHECK(kept == std::map<std::string, std::uint32_t>{{"10.244.1.21:6379", 10800}, {"10.244.2.22:6379", 3600}});
    CHECK_FALSE(compare(original, g).equivalent);
  }
  SUBCASE("--hitcount on an iptables affinity check is reported") {
    const auto ipt = slurp(source_root() / "examples" / "cluster" / "cluster.iptables");
    const std::string check = "--rcheck --seconds 10800 --reap --name KUBE-SEP-2EQ6XKEKAFHWADXH";
    auto changed = ipt;
    const auto at = changed.find(check);
    REQUIRE(at != std::string::npos);
    changed.replace(at, check.size(), "--rcheck --seconds 10800 --reap --hitcount 2 --name KUBE-SEP-2EQ6XKEKAFHWADXH");
    const auto g = graph_of_rules(changed);
    REQUIRE(g.ok());
    REQUIRE(g.diagnostics.size() == 1);
    CHECK(g.diagnostics[0].message.find("--hitcount 2 on an affinity check") != std::string::npos);
  }
}

TEST_CASE("affinity that does not keep a client on its endpoint is never taken for ClientIP affinity") {
  SUBCASE("nft: an update of a destination, a masked source or with `add`") {
    const std::string text = slurp(source_root() / "examples" / "cluster" / "cluster.nft");
    const std::string update = "update @affinity-6J65OJTM-shop/cache/tcp/redis__10.244.2.22/6379 { ip saddr }";
    const auto with = [&](const std::string& to) {
      auto t = text;
      const auto at = t.find(update);
      REQUIRE(at != std::string::npos);
      return graph_result_of_nft(t.replace(at, update.size(), to));
    };
    REQUIRE(graph_result_of_nft(text).diagnostics.empty());
    for (const std::string key : {"ip daddr", "ip saddr & 255.255.255.0"}) {
      CAPTURE(key);
      const auto g = with("update @affinity-6J65OJTM-shop/cache/tcp/redis__10.244.2.22/6379 { " + key + " }");
      REQUIRE(g.diagnostics.size() == 1);
      CHECK(g.diagnostics[0].message ==
            "session affinity: clients found in 'affinity-6J65OJTM-shop/cache/tcp/redis__10.244.2.22/6379' are sent "
            "to 10.244.2.22, whose endpoint chain does not record them there, so the check never finds one: that "
            "endpoint has no session affinity");
      // and compare says so (a tester found it taken as an assumption: "EQUIVALENT (ASSUMING ...)")
      const auto c = compare(graph_result_of_nft(text).value, g.value);
      CHECK_FALSE(c.equivalent);
      REQUIRE(c.differences.size() == 1);
      const auto& d = c.differences[0].details;
      CHECK_MESSAGE(std::find(d.begin(), d.end(),
                              "endpoint 10.244.2.22:6379: session affinity 10800 s in A, no session affinity in B") !=
                        d.end(),
                    fmt::format("{}", fmt::join(d, "; ")));
    }
    const auto added = with("add @affinity-6J65OJTM-shop/cache/tcp/redis__10.244.2.22/6379 { ip saddr }");
    REQUIRE(added.diagnostics.size() == 1);
    CHECK(added.diagnostics[0].message.find("records clients in "
                                            "'affinity-6J65OJTM-shop/cache/tcp/redis__10.244.2.22/6379' with `add`") !=
          std::string::npos);
    CHECK(added.diagnostics[0].message.find("affinity ends 10800 s after its first connection") != std::string::npos);
  }
  SUBCASE("iptables: recent on the destination or on a network is not modelled") {
    const auto ipt = slurp(source_root() / "examples" / "cluster" / "cluster.iptables");
    const auto original = graph_of_rules(ipt);
    REQUIRE(original.ok());
    REQUIRE(original.value.unevaluated == 0);
    const auto with = [&](const std::string& from, const std::string& to) {
      auto changed = ipt;
      const auto at = changed.find(from);
      REQUIRE(at != std::string::npos);
      auto g = graph_of_rules(changed.replace(at, from.size(), to));
      REQUIRE(g.ok());
      return g;
    };
    const auto endpoints_of = [](const dispatch_graph& g) {
      std::map<std::string, std::pair<double, bool>> out;  // probability, affinity
      for (const auto& s : g.services)
        if (s.name && s.name->str() == "shop/cache:redis")
          for (const auto& e : s.endpoints) out[endpoint_text(e)] = {e.probability, e.affinity};
      return out;
    };
    // the endpoint chain records something else than its client: the check finds no client there
    const std::string set = "--set --name KUBE-SEP-2EQ6XKEKAFHWADXH --mask 255.255.255.255 --rsource";
    for (const std::string to : {"--set --name KUBE-SEP-2EQ6XKEKAFHWADXH --mask 255.255.255.255 --rdest",
                                 "--set --name KUBE-SEP-2EQ6XKEKAFHWADXH --mask 255.255.255.0 --rsource"}) {
      CAPTURE(to);
      const auto g = with(set, to);
      REQUIRE(g.diagnostics.size() == 1);
      CHECK(g.diagnostics[0].message.find("whose endpoint chain does not record them there") != std::string::npos);
    }
    // the check is by destination or network (a tester found the check taken as always met: every client
    // sent to the first endpoint, and made-up differences listed): the graph follows the selection and says so
    const std::string check = "--rcheck --seconds 10800 --reap --name KUBE-SEP-2EQ6XKEKAFHWADXH --mask 255.255.255.255 --rsource";
    for (const std::string to :
         {"--rcheck --seconds 10800 --reap --name KUBE-SEP-2EQ6XKEKAFHWADXH --mask 255.255.255.255 --rdest",
          "--rcheck --seconds 10800 --reap --name KUBE-SEP-2EQ6XKEKAFHWADXH --mask 255.255.255.0 --rsource"}) {
      CAPTURE(to);
      const auto g = with(check, to);
      REQUIRE(g.diagnostics.size() == 1);
      CHECK(g.diagnostics[0].message.find("-m recent --name KUBE-SEP-2EQ6XKEKAFHWADXH keyed by destination (--rdest) "
                                          "or by network (--mask) is not ClientIP affinity") == 0);
      CHECK(g.value.unevaluated == 1);
      const auto eps = endpoints_of(g.value);
      REQUIRE(eps.size() == 2);
      CHECK(eps.at("10.244.1.21:6379").first == doctest::Approx(0.5));
      CHECK(eps.at("10.244.2.22:6379").first == doctest::Approx(0.5));
      CHECK(eps.at("10.244.1.21:6379").second);  // its own check is as kube-proxy writes it
      CHECK_FALSE(eps.at("10.244.2.22:6379").second);
      CHECK(compare(original.value, g.value).unevaluated_b == 1);
    }
  }
}

TEST_CASE("an IPv6 endpoint is written in brackets, with or without its port") {
  endpoint e;
  e.address = *parse_ip_address("fd00:10:244::4:756");
  CHECK(endpoint_text(e) == "[fd00:10:244::4:756]");
  e.has_port = true;
  e.port = 53;
  CHECK(endpoint_text(e) == "[fd00:10:244::4:756]:53");
  e.address = *parse_ip_address("10.244.1.11");
  CHECK(endpoint_text(e) == "10.244.1.11:53");
}

TEST_CASE("a frontend split unlike its service's selection, or short-circuited elsewhere, is a difference") {
  // found by a tester: endpoint shares were taken once per service, from the ClusterIP, and short-circuits
  // were compared by their sources only
  const std::string text = slurp(source_root() / "examples" / "cluster" / "cluster.nft");
  const auto original = graph_of_nft(text);
  const auto edited = [](std::string t, const std::string& from, const std::string& to) {
    const auto at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  const auto web = [](const dispatch_graph& g) -> const service& {
    for (const auto& s : g.services)
      if (s.name && s.name->str() == "shop/web:http") return s;
    FAIL("no shop/web:http");
    return g.services.front();
  };
  const std::string numgen = "\t\tnumgen random mod 3 vmap { 0 : goto endpoint-FAYF65XV";
  const std::string to_first = "goto endpoint-FAYF65XV-shop/web/tcp/http__10.244.1.11/8080";
  SUBCASE("a rule in the selection that singles out the NodePort's address") {
    const auto g = graph_of_nft(edited(text, numgen, "\t\tip daddr 192.168.122.10 " + to_first + "\n" + numgen));
    const auto& s = web(g);
    REQUIRE(s.frontends.size() == 2);
    CHECK(s.frontends[0].kind == frontend_kind::cluster_ip);
    CHECK(s.frontends[0].shares.empty());  // the service's 1/3 each
    CHECK(s.frontends[1].kind == frontend_kind::node_port);
    CHECK(shares_text(s.frontends[1].shares) == "10.244.1.11:8080 1.000000");
    const auto c = compare(original, g);
    CHECK_FALSE(c.equivalent);
    REQUIRE(c.differences.size() == 1);
    CHECK(c.differences[0].details.at(0) ==
          "frontend node-port tcp node:30080: its own shares none in A, 10.244.1.11:8080 1.000000 in B (none: the "
          "service's)");
    // iptables: the same with `-m addrtype --dst-type LOCAL` in the service chain
    const auto ipt = slurp(source_root() / "examples" / "cluster" / "cluster.iptables");
    const std::string svc = "-A KUBE-SVC-67NZLRHBNDSAWJRO ";
    const auto at = ipt.find(svc);
    REQUIRE(at != std::string::npos);
    auto changed = ipt;
    changed.insert(at, svc + "-m addrtype --dst-type LOCAL -j KUBE-SEP-EPVTA2RHFPHQF37H\n");
    const auto gi = graph_of_iptables(changed);
    CHECK(shares_text(web(gi).frontends[1].shares) == "10.244.1.11:8080 1.000000");
    CHECK(compare(gi, g).equivalent);
  }
  SUBCASE("short-circuits of a Local policy: where they lead and which sources they take") {
    const std::string external = "\tchain external-KHN6ECMT-shop/web/tcp/http {\n\t\tjump mark-for-masquerade\n\t\tgoto "
                                 "service-KHN6ECMT-shop/web/tcp/http\n\t}\n";
    const auto local_policy = [&](const std::string& pods) {
      return edited(text, external,
                    "\tchain external-KHN6ECMT-shop/web/tcp/http {\n" + pods +
                        "\t\tfib saddr type local jump mark-for-masquerade\n\t\tfib saddr type local goto "
                        "service-KHN6ECMT-shop/web/tcp/http\n\t\tgoto local-KHN6ECMT-shop/web/tcp/http\n\t}\n\tchain "
                        "local-KHN6ECMT-shop/web/tcp/http {\n\t\tnumgen random mod 1 vmap { 0 : " +
                        to_first + " }\n\t}\n");
    };
    const auto local = graph_of_nft(local_policy("\t\tip saddr 10.244.0.0/16 goto service-KHN6ECMT-shop/web/tcp/http\n"));
    const auto& np = web(local).frontends[1];
    CHECK(np.result == outcome::dispatch_local);
    CHECK(np.short_circuit_local);
    CHECK(np.short_circuit_sources == std::vector<ip_prefix>{*parse_ip_prefix("10.244.0.0/16")});
    CHECK(np.short_circuit_shares.empty());  // they reach the cluster-wide shares
    // pods short-circuited into the Local selection instead
    const auto into_local =
        graph_of_nft(local_policy("\t\tip saddr 10.244.0.0/16 goto local-KHN6ECMT-shop/web/tcp/http\n"));
    CHECK(shares_text(web(into_local).frontends[1].short_circuit_shares) == "10.244.1.11:8080 1.000000");
    auto c = compare(local, into_local);
    CHECK_FALSE(c.equivalent);
    REQUIRE(c.differences.size() == 1);
    CHECK(c.differences[0].details.at(0).find("short-circuited clients reach none in A, 10.244.1.11:8080 1.000000 in B") !=
          std::string::npos);
    // no short-circuit for pods
    c = compare(local, graph_of_nft(local_policy("")));
    CHECK_FALSE(c.equivalent);
    REQUIRE(c.differences.size() == 1);
    CHECK(c.differences[0].details.at(0) ==
          "frontend node-port tcp node:30080: short-circuited clients 10.244.0.0/16, local in A, local in B");
  }
}

TEST_CASE("a LoadBalancer IP admitted as a source is the frontend's, compared, and not a loadBalancerSourceRange") {
  // found by a tester: the LoadBalancer IP in its own allow-list was dropped from the frontend's sources,
  // so adding or removing it compared EQUIVALENT
  const auto plain = build(overall_iptables());
  const auto admitted = build(overall_iptables(true));
  const auto* s5 = admitted.find("ns5/svc5:p80");
  REQUIRE(s5 != nullptr);
  const auto* lb = s5->find(frontend_kind::load_balancer_ip);
  REQUIRE(lb != nullptr);
  std::vector<std::string> ranges;
  for (const auto& p : lb->source_ranges) ranges.push_back(to_string(p));
  CHECK(ranges == std::vector<std::string>{"5.6.7.8/32", "203.0.113.0/25"});
  REQUIRE(s5->load_balancer_source_ranges.size() == 1);
  CHECK(to_string(s5->load_balancer_source_ranges[0]) == "203.0.113.0/25");
  const auto c = compare(plain, admitted);
  CHECK_FALSE(c.equivalent);
  REQUIRE(c.differences.size() == 1);
  CAPTURE(c.differences[0].details.at(0));
  CHECK(c.differences[0].details.at(0).find("source ranges 203.0.113.0/25 in A, 5.6.7.8/32, 203.0.113.0/25 in B") !=
        std::string::npos);
}

TEST_CASE("a rule after NAT that drops an endpoint's connections is on that endpoint, and compared") {
  // found by a tester: filter forward and output see the endpoint's address and port after DNAT; a drop
  // there of one endpoint of three compared EQUIVALENT
  const auto original = graph_of_nft(slurp(source_root() / "examples" / "cluster" / "cluster.nft"));
  const auto after_nat = [](const dispatch_graph& g) {
    std::map<std::string, std::string> out;
    for (const auto& s : g.services)
      for (const auto& e : s.endpoints)
        if (e.after_nat != outcome::none) out[endpoint_text(e)] = std::string(outcome_name(e.after_nat));
    return out;
  };
  CHECK(after_nat(original).empty());
  // line 71 is filter-forward's `type filter hook forward ...`
  for (const std::string rule : {"ip daddr 10.244.1.11 tcp dport 8080 drop", "ip daddr 10.244.1.8/29 drop",
                                 "ip daddr != 10.244.2.0/23 tcp dport 8080 drop", "ip daddr 10.244.1.11 reject"}) {
    CAPTURE(rule);
    const auto g = graph_of_nft(example_with("cluster.nft", 71, "\t\t" + rule));
    const std::string how = rule.ends_with("reject") ? "reject" : "drop";
    CHECK(after_nat(g) == std::map<std::string, std::string>{{"10.244.1.11:8080", how}});
    const auto c = compare(original, g);
    CHECK_FALSE(c.equivalent);
    REQUIRE(c.differences.size() == 1);
    CHECK(c.differences[0].details.at(0) == fmt::format("endpoint 10.244.1.11:8080: its new connections passed after NAT "
                                                        "in A, {} in B",
                                                        how == "drop" ? "dropped" : "rejected"));
  }
  // the port of every shop/web endpoint, from a rule without an address
  const auto g = graph_of_nft(example_with("cluster.nft", 71, "\t\ttcp dport 8080 drop"));
  CHECK(after_nat(g) == std::map<std::string, std::string>{
                            {"10.244.1.11:8080", "drop"}, {"10.244.2.12:8080", "drop"}, {"10.244.3.13:8080", "drop"}});
  // iptables: the same in filter KUBE-SERVICES (reached from FORWARD and OUTPUT on NEW connections)
  const auto ipt = graph_of_iptables(example_with(
      "cluster.iptables", 10, "-A KUBE-SERVICES -d 10.244.1.11/32 -p tcp -m tcp --dport 8080 -j DROP"));
  CHECK(after_nat(ipt) == std::map<std::string, std::string>{{"10.244.1.11:8080", "drop"}});
  // a translated connection's state is DNAT as well as NEW (a tester found `--ctstate DNAT` never met)
  for (const std::string state : {"DNAT", "NEW,DNAT"}) {
    CAPTURE(state);
    const auto dnat = graph_of_iptables(example_with(
        "cluster.iptables", 10, "-A KUBE-SERVICES -d 10.244.1.11/32 -m conntrack --ctstate " + state + " -j DROP"));
    CHECK(after_nat(dnat) == std::map<std::string, std::string>{{"10.244.1.11:8080", "drop"}});
  }
  const auto established = graph_of_iptables(example_with(
      "cluster.iptables", 10, "-A KUBE-SERVICES -d 10.244.1.11/32 -m conntrack --ctstate ESTABLISHED -j DROP"));
  CHECK(after_nat(established).empty());
  CHECK(compare(ipt, graph_of_nft(example_with("cluster.nft", 71, "\t\tip daddr 10.244.1.11 tcp dport 8080 drop")))
            .equivalent);
}

TEST_CASE("a goto to the mark chain, a RETURN after the MARK rule, and the hairpin masquerade, as the kernel has them") {
  // a tester's finds, each checked with connections through a network namespace: a goto to the mark chain
  // leaves the service chain for good (the kernel resumes after the jump to it: no DNAT), a RETURN after the
  // MARK rule changes nothing, and an endpoint's own masquerade rule is compared
  const std::string all_hooks = "-A PREROUTING -j KUBE-SERVICES\n-A OUTPUT -j KUBE-SERVICES\n-A POSTROUTING -j KUBE-POSTROUTING\n";
  std::size_t warnings = 0;  // of the last dump built
  const auto iptables = [&](const std::string& to_mark, const std::string& after_mark, bool hairpin,
                            const std::string& hooks = "", const std::string& before_mark = "") {
    std::string t =
        "*nat\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:POSTROUTING ACCEPT [0:0]\n:KUBE-MARK-MASQ - [0:0]\n"
        ":KUBE-POSTROUTING - [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-WEB0000000000000 - [0:0]\n"
        ":KUBE-SEP-WEB0000000000001 - [0:0]\n:KUBE-SEP-WEB0000000000002 - [0:0]\n" +
        (hooks.empty() ? all_hooks : hooks) + before_mark +
        "-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000\n" +
        after_mark +
        "-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN\n"
        "-A KUBE-POSTROUTING -j MARK --set-xmark 0x4000/0x0\n-A KUBE-POSTROUTING -j MASQUERADE --random-fully\n";
    if (hairpin) t += "-A KUBE-SEP-WEB0000000000001 -s 10.244.1.1/32 -m comment --comment \"ns/web:http\" -j KUBE-MARK-MASQ\n";
    t += "-A KUBE-SEP-WEB0000000000001 -p tcp -m comment --comment \"ns/web:http\" -m tcp -j DNAT --to-destination "
         "10.244.1.1:8080\n"
         "-A KUBE-SEP-WEB0000000000002 -s 10.244.1.2/32 -m comment --comment \"ns/web:http\" -j KUBE-MARK-MASQ\n"
         "-A KUBE-SEP-WEB0000000000002 -p tcp -m comment --comment \"ns/web:http\" -m tcp -j DNAT --to-destination "
         "10.244.1.2:8080\n"
         "-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment \"ns/web:http cluster IP\" -m tcp --dport 80 -j "
         "KUBE-SVC-WEB0000000000000\n"
         "-A KUBE-SVC-WEB0000000000000 ! -s 10.244.0.0/16 -d 10.96.0.20/32 -p tcp -m comment --comment \"ns/web:http "
         "cluster IP\" -m tcp --dport 80 " +
         to_mark +
         " KUBE-MARK-MASQ\n"
         "-A KUBE-SVC-WEB0000000000000 -m comment --comment \"ns/web:http -> 10.244.1.1:8080\" -m statistic --mode "
         "random --probability 0.50000000000 -j KUBE-SEP-WEB0000000000001\n"
         "-A KUBE-SVC-WEB0000000000000 -m comment --comment \"ns/web:http -> 10.244.1.2:8080\" -j "
         "KUBE-SEP-WEB0000000000002\nCOMMIT\n";
    auto g = graph_of_rules(t);
    REQUIRE(g.ok());
    REQUIRE(g.value.services.size() == 1);
    warnings = g.diagnostics.size();
    return std::move(g.value);
  };
  const auto base = iptables("-j", "", true);
  CHECK(warnings == 0);
  REQUIRE(base.services[0].frontends.size() == 1);
  CHECK(base.services[0].frontends[0].result == outcome::dispatch);
  CHECK(base.services[0].endpoints.size() == 2);
  CHECK(compare(base, base).equivalent);

  // goto: the connections the rule takes (every client outside the pod network) are never translated
  const auto gone = iptables("-g", "", true);
  CHECK(gone.services[0].frontends[0].result != outcome::dispatch);
  CHECK_FALSE(compare(base, gone).equivalent);

  // an unconditional RETURN after the MARK rule: the mark is set all the same
  const auto returns = iptables("-j", "-A KUBE-MARK-MASQ -j RETURN\n", true);
  CHECK(returns.services[0].frontends[0].masquerades == base.services[0].frontends[0].masquerades);
  const auto same = compare(base, returns);
  CHECK_MESSAGE(same.equivalent, (same.differences.empty() ? "" : fmt::format("{}", fmt::join(same.differences[0].details, "; "))));

  // a return when the bit is set already changes nothing (a second tester's find: taken as never marking);
  // a later rule that clears it does (taken as marking)
  CHECK(compare(base, iptables("-j", "", true, "", "-A KUBE-MARK-MASQ -m mark --mark 0x4000/0x4000 -j RETURN\n"))
            .equivalent);
  const auto cleared = iptables("-j", "-A KUBE-MARK-MASQ -j MARK --set-xmark 0x0/0x4000\n", true);
  CHECK(cleared.services[0].frontends[0].masquerades.empty());
  CHECK_FALSE(compare(base, cleared).equivalent);

  // the hairpin rule of one endpoint removed
  const auto no_hairpin = iptables("-j", "", false);
  const auto c = compare(base, no_hairpin);
  REQUIRE(c.differences.size() == 1);
  const auto& d = c.differences[0].details;
  CHECK_MESSAGE(std::find(d.begin(), d.end(),
                          "endpoint 10.244.1.1:8080: masquerade source-inside 10.244.1.1/32 in A, never in B") != d.end(),
                fmt::format("{}", fmt::join(d, "; ")));

  // the masquerade rule counts where a postrouting hook reaches it: with the other hooks' jumps in the
  // dump, a KUBE-POSTROUTING nothing jumps to masquerades nothing; without any (kube-proxy's restore
  // input) its rules are taken as hooked
  const auto unhooked = iptables("-j", "", true, "-A PREROUTING -j KUBE-SERVICES\n-A OUTPUT -j KUBE-SERVICES\n");
  CHECK(unhooked.services[0].frontends[0].result == outcome::dispatch);
  CHECK(unhooked.services[0].frontends[0].masquerades.empty());
  CHECK(warnings == 0);  // its jumps to the mark chain only set the mark (a second tester's find: warned of)
  CHECK_FALSE(compare(base, unhooked).equivalent);
  const auto restore_input = iptables("-j", "", true, "\n");
  CHECK(restore_input.services[0].frontends[0].masquerades == base.services[0].frontends[0].masquerades);
  CHECK(compare(base, restore_input).equivalent);

  // nft: the same RETURN (`return` after the mark rule) and goto, and a postrouting chain without its jump
  const auto nft = [](const std::string& to_mark, const std::string& after_mark,
                      const std::string& postrouting = "\t\tjump masquerading\n") {
    return graph_of_nft(
        "table ip kube-proxy {\n\tchain nat-prerouting {\n\t\ttype nat hook prerouting priority dstnat; policy accept;\n"
        "\t\tjump services\n\t}\n\tchain nat-postrouting {\n\t\ttype nat hook postrouting priority srcnat; policy "
        "accept;\n" +
        postrouting + "\t}\n\tchain masquerading {\n\t\tmeta mark & 0x00004000 == 0x00000000 return\n"
        "\t\tmeta mark set meta mark ^ 0x00004000\n\t\tmasquerade fully-random\n\t}\n"
        "\tchain mark-for-masquerade {\n\t\tmeta mark set meta mark | 0x00004000\n" +
        after_mark +
        "\t}\n\tchain services {\n\t\tip daddr 10.96.0.20 tcp dport 80 goto service-WEB00000-ns/web/tcp/http\n\t}\n"
        "\tchain endpoint-EP000001-ns/web/tcp/http__10.244.1.1/8080 {\n\t\tip saddr 10.244.1.1 jump mark-for-masquerade\n"
        "\t\tmeta l4proto tcp dnat to 10.244.1.1:8080\n\t}\n"
        "\tchain service-WEB00000-ns/web/tcp/http {\n\t\tip daddr 10.96.0.20 ip saddr != 10.244.0.0/16 " +
        to_mark +
        " mark-for-masquerade\n\t\tnumgen random mod 1 vmap { 0 : goto "
        "endpoint-EP000001-ns/web/tcp/http__10.244.1.1/8080 }\n\t}\n}\n");
  };
  const auto nft_base = nft("jump", "");
  REQUIRE(nft_base.services.size() == 1);
  CHECK(nft_base.services[0].frontends[0].result == outcome::dispatch);
  CHECK(compare(nft_base, nft("jump", "\t\treturn\n")).equivalent);
  CHECK_FALSE(compare(nft_base, nft("goto", "")).equivalent);
  const auto nft_unhooked = nft("jump", "", "");
  CHECK(nft_unhooked.services[0].frontends[0].masquerades.empty());
  CHECK_FALSE(compare(nft_base, nft_unhooked).equivalent);
}

TEST_CASE("a source-range gate before NAT holds only where it runs at every hook NAT translates the frontend at") {
  // a tester's find, checked with connections through a network namespace: filter-output-pre-dnat moved
  // after NAT (priority -90) lets this node's own connections to the LoadBalancer IP through from any source
  const auto lb = [](const std::string& output_priority) { return firewalled_lb("dstnat - 10", output_priority); };
  const auto ranges_of = [](const dispatch_graph& g) {
    REQUIRE(g.services.size() == 1);
    REQUIRE(g.services[0].frontends.size() == 1);
    return g.services[0].frontends[0].source_ranges;
  };
  const auto both = lb("-110");
  CHECK(both.diagnostics.empty());
  const auto gated = ranges_of(both.value);
  REQUIRE(gated.size() == 1);
  CHECK(to_string(gated[0]) == "203.0.113.0/25");
  const auto after = lb("-90");
  CHECK(ranges_of(after.value).empty());
  REQUIRE(after.diagnostics.size() == 1);
  CHECK(after.diagnostics[0].message ==
        "a filter before NAT ends some connections to 5.6.7.8 at prerouting only; NAT translates them at prerouting "
        "and output too, where nothing before it does: the graph takes them as not ended there");
  CHECK_FALSE(compare(both.value, after.value).equivalent);
}

TEST_CASE("KUBE-NODEPORTS reached for one node address is that address's NodePort (--nodeport-addresses)") {
  // a tester's find: iptables mode with --nodeport-addresses jumps to KUBE-NODEPORTS per node address, and
  // the NodePort was taken for an external address (nftables mode lists the addresses in nodeport-ips)
  const auto dump = [](const std::string& to_nodeports) {
    auto g = graph_of_rules(
        "*nat\n:PREROUTING ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n:KUBE-NODEPORTS - [0:0]\n"
        ":KUBE-SVC-WEB0000000000000 - [0:0]\n:KUBE-EXT-WEB0000000000000 - [0:0]\n:KUBE-SEP-WEB0000000000001 - [0:0]\n"
        "-A PREROUTING -j KUBE-SERVICES\n"
        "-A KUBE-SERVICES -d 10.96.0.20/32 -p tcp -m comment --comment \"ns/web:http cluster IP\" -m tcp --dport 80 -j "
        "KUBE-SVC-WEB0000000000000\n"
        "-A KUBE-SERVICES -m comment --comment \"kubernetes service nodeports; NOTE: this must be the last rule in this "
        "chain\" " +
        to_nodeports +
        " -j KUBE-NODEPORTS\n"
        "-A KUBE-NODEPORTS -p tcp -m comment --comment \"ns/web:http\" -m tcp --dport 30080 -j KUBE-EXT-WEB0000000000000\n"
        "-A KUBE-EXT-WEB0000000000000 -j KUBE-SVC-WEB0000000000000\n"
        "-A KUBE-SVC-WEB0000000000000 -m comment --comment \"ns/web:http -> 10.244.1.1:8080\" -j KUBE-SEP-WEB0000000000001\n"
        "-A KUBE-SEP-WEB0000000000001 -p tcp -m comment --comment \"ns/web:http\" -m tcp -j DNAT --to-destination "
        "10.244.1.1:8080\nCOMMIT\n");
    REQUIRE(g.ok());
    REQUIRE(g.value.services.size() == 1);
    REQUIRE(g.value.services[0].frontends.size() == 2);
    return std::move(g.value);
  };
  const auto listed = dump("-d 192.168.49.2/32");
  const auto& np = listed.services[0].frontends[1];
  CHECK(np.kind == frontend_kind::node_port);
  CHECK(to_string(np.address.address) == "192.168.49.2");
  const auto any = dump("-m addrtype --dst-type LOCAL");
  CHECK(any.services[0].frontends[1].kind == frontend_kind::node_port);
  CHECK(any.services[0].frontends[1].any_local);
  CHECK(compare(any, listed).equivalent);  // a kube-proxy setting, noted
}

TEST_CASE("a source-range drop after NAT holds only where it runs at every hook untranslated connections reach") {
  // iptables' twin of the gate before NAT: KUBE-FW-* leaves other sources untranslated for KUBE-PROXY-FIREWALL
  // to drop after NAT, and kube-proxy jumps to it from input, forward and output; without one of them,
  // those connections pass there
  const auto lb = [](const std::vector<std::string>& hooks, bool nat_hooks = true) {
    return firewalled_lb_rules(hooks, "", nat_hooks);
  };
  const auto frontend_of = [](const result<dispatch_graph>& g) {
    REQUIRE(g.value.services.size() == 1);
    REQUIRE(g.value.services[0].frontends.size() == 1);
    return g.value.services[0].frontends[0];
  };
  const auto all = lb({"INPUT", "FORWARD", "OUTPUT"});
  CHECK(all.diagnostics.empty());
  const auto gated = frontend_of(all);
  REQUIRE(gated.source_ranges.size() == 1);
  CHECK(to_string(gated.source_ranges[0]) == "203.0.113.0/25");
  CHECK(gated.other_sources == outcome::drop);
  // the order of the jumps does not matter, nor do repeated ones
  CHECK(frontend_of(lb({"OUTPUT", "FORWARD", "INPUT", "FORWARD"})).other_sources == outcome::drop);
  for (const auto& [hooks, missing] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"INPUT", "OUTPUT"}, "input and output only, not at forward"},
           {{"FORWARD", "OUTPUT"}, "forward and output only, not at input"},
           {{"INPUT", "FORWARD"}, "input and forward only, not at output"},
           {{"OUTPUT"}, "output only, not at input and forward"}}) {
    CAPTURE(missing);
    const auto partial = lb(hooks);
    const auto f = frontend_of(partial);
    CHECK(f.source_ranges.size() == 1);
    CHECK(f.other_sources == outcome::none);
    REQUIRE(partial.diagnostics.size() == 1);
    CHECK(partial.diagnostics[0].message ==
          "a filter after NAT ends connections NAT leaves untranslated to 5.6.7.8 port 80 at " + missing +
              ": the graph takes those from outside the allowed source ranges as not ended");
    CHECK_FALSE(compare(all.value, partial.value).equivalent);
  }
  // kube-proxy's restore input has no hook jumps: KUBE-PROXY-FIREWALL is then an entry of its own
  const auto restore = lb({}, false);
  CHECK(restore.diagnostics.empty());
  CHECK(frontend_of(restore).other_sources == outcome::drop);
  // a node's dump with the nat table's hook jumps and none in filter: KUBE-PROXY-FIREWALL never runs (a
  // tester's find: taken for restore input)
  const auto unhooked = lb({});
  CHECK(frontend_of(unhooked).source_ranges.size() == 1);
  CHECK(frontend_of(unhooked).other_sources == outcome::none);
  CHECK_FALSE(compare(all.value, unhooked.value).equivalent);
}

TEST_CASE("a filter verdict after NAT holds only where it runs at every hook untranslated connections reach") {
  // a tester's find, checked with connections through a network namespace: without the OUTPUT jump to the
  // filter KUBE-SERVICES, this node's connections to a ClusterIP without endpoints are not rejected; without
  // the INPUT jump to KUBE-EXTERNAL-SERVICES, connections to a NodePort without endpoints are not either
  const auto svc = [](const std::vector<std::string>& jumps) {
    std::string text = "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
                       ":KUBE-SERVICES - [0:0]\n:KUBE-EXTERNAL-SERVICES - [0:0]\n";
    for (const auto& j : jumps) text += "-A " + j + "\n";
    text +=
        "-A KUBE-SERVICES -d 10.96.0.30/32 -p tcp -m comment --comment \"ns/empty:http has no endpoints\" -m tcp "
        "--dport 80 -j REJECT --reject-with icmp-port-unreachable\n"
        "-A KUBE-EXTERNAL-SERVICES -p tcp -m comment --comment \"ns/empty:http has no endpoints\" -m addrtype "
        "--dst-type LOCAL -m tcp --dport 30080 -j REJECT --reject-with icmp-port-unreachable\nCOMMIT\n"
        "*nat\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n"
        "-A PREROUTING -j KUBE-SERVICES\n-A OUTPUT -j KUBE-SERVICES\nCOMMIT\n";
    return graph_of_rules(text);
  };
  const auto results = [](const result<dispatch_graph>& g) {
    std::map<frontend_kind, outcome> out;
    for (const auto& s : g.value.services)
      for (const auto& f : s.frontends) out[f.kind] = f.result;
    return out;
  };
  const std::string services = "-j KUBE-SERVICES", external = "-j KUBE-EXTERNAL-SERVICES";
  const auto all = svc({"INPUT " + external, "FORWARD " + services, "FORWARD " + external, "OUTPUT " + services});
  CHECK(all.diagnostics.empty());
  CHECK(results(all) == std::map<frontend_kind, outcome>{{frontend_kind::cluster_ip, outcome::reject},
                                                         {frontend_kind::node_port, outcome::reject}});
  const auto no_output = svc({"INPUT " + external, "FORWARD " + services, "FORWARD " + external});
  CHECK(results(no_output).at(frontend_kind::cluster_ip) == outcome::none);
  CHECK(results(no_output).at(frontend_kind::node_port) == outcome::reject);
  REQUIRE(no_output.diagnostics.size() == 1);
  CHECK(no_output.diagnostics[0].message ==
        "a filter after NAT ends connections NAT leaves untranslated to 10.96.0.30 port 80 at forward only, not at "
        "output: the graph takes them as not ended");
  // a goto from INPUT skips the rest of INPUT (the chain's policy decides what comes back)
  const auto go_to = svc({"INPUT -g KUBE-SERVICES", "INPUT " + external, "FORWARD " + services,
                          "FORWARD " + external, "OUTPUT " + services});
  CHECK(results(go_to).at(frontend_kind::cluster_ip) == outcome::reject);
  CHECK(results(go_to).at(frontend_kind::node_port) == outcome::none);
  REQUIRE(go_to.diagnostics.size() == 1);
  CHECK(go_to.diagnostics[0].message.find("to a local address port 30080 at forward only, not at input") !=
        std::string::npos);
  CHECK_FALSE(compare(all.value, no_output.value).equivalent);
  CHECK_FALSE(compare(all.value, go_to.value).equivalent);
}

TEST_CASE("a gate before conntrack never sees a new connection; one at NAT's priority is reported") {
  // a tester's find, checked with connections through a network namespace: at `priority raw` (before
  // conntrack) `ct state new` never matches (no conntrack entry yet: INVALID), so the firewall never runs
  const auto lb = [](const std::string& prerouting_priority) { return firewalled_lb(prerouting_priority, "-110"); };
  const auto ranges_of = [](const dispatch_graph& g) {
    REQUIRE(g.services.size() == 1);
    REQUIRE(g.services[0].frontends.size() == 1);
    return g.services[0].frontends[0].source_ranges;
  };
  const auto mangle = lb("mangle");  // -150: after conntrack, before NAT
  CHECK(mangle.diagnostics.empty());
  CHECK(ranges_of(mangle.value).size() == 1);
  const auto raw = lb("raw");
  CHECK(ranges_of(raw.value).empty());
  REQUIRE(raw.diagnostics.size() == 1);
  CHECK(raw.diagnostics[0].message.find("at output only; NAT translates them at prerouting and output too") !=
        std::string::npos);
  CHECK_FALSE(compare(mangle.value, raw.value).equivalent);
  const auto same = lb("dstnat");
  REQUIRE(same.diagnostics.size() == 2);
  CHECK(same.diagnostics[0].message ==
        "a filter chain at the NAT priority (-100): the kernel runs it before or after NAT in the order the chains "
        "were registered, which the dump does not show; the graph does not evaluate it");
  // at conntrack's own priority the order is the kernel's registration too: taken as after, and said
  const auto at_conntrack = lb("-200");
  CHECK(ranges_of(at_conntrack.value).size() == 1);
  REQUIRE(at_conntrack.diagnostics.size() == 1);
  CHECK(at_conntrack.diagnostics[0].message.starts_with("a filter chain at conntrack's priority (-200)"));
}

TEST_CASE("a random match outside NAT is reported and not taken to end connections") {
  // a tester's find: `-m statistic` on the KUBE-PROXY-FIREWALL drop was taken as always matching (half the
  // connections from other sources get through)
  const auto lb = [](const std::string& drop_match) {
    return firewalled_lb_rules({"INPUT", "FORWARD", "OUTPUT"}, drop_match);
  };
  const auto other_sources = [](const result<dispatch_graph>& g) {
    REQUIRE(g.value.services.size() == 1);
    REQUIRE(g.value.services[0].frontends.size() == 1);
    return g.value.services[0].frontends[0].other_sources;
  };
  const auto always = lb("");
  CHECK(always.diagnostics.empty());
  CHECK(other_sources(always) == outcome::drop);
  for (const std::string m : {"-m statistic --mode random --probability 0.5 ", "-m statistic --mode nth --every 2 --packet 0 "}) {
    CAPTURE(m);
    const auto half = lb(m);
    CHECK(other_sources(half) == outcome::none);
    REQUIRE(half.diagnostics.size() == 1);
    CHECK(half.diagnostics[0].message.starts_with("a random or every-Nth match (statistic, numgen) on a rule that ends"));
    CHECK_FALSE(compare(always.value, half.value).equivalent);
  }
}

TEST_CASE("an address only KUBE-EXTERNAL-SERVICES names is not taken for the ClusterIP") {
  // a tester's find: with the ClusterIP's reject gone, a service's external IP was labelled cluster-ip
  const auto g = graph_of_rules(
      "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n"
      ":KUBE-EXTERNAL-SERVICES - [0:0]\n-A INPUT -j KUBE-EXTERNAL-SERVICES\n-A FORWARD -j KUBE-EXTERNAL-SERVICES\n"
      "-A FORWARD -j KUBE-SERVICES\n-A OUTPUT -j KUBE-SERVICES\n"
      "-A KUBE-EXTERNAL-SERVICES -d 198.51.100.7/32 -p tcp -m comment --comment \"ns/empty:http has no endpoints\" -m "
      "tcp --dport 80 -j REJECT --reject-with icmp-port-unreachable\nCOMMIT\n"
      "*nat\n:PREROUTING ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:KUBE-SERVICES - [0:0]\n"
      "-A PREROUTING -j KUBE-SERVICES\n-A OUTPUT -j KUBE-SERVICES\nCOMMIT\n");
  CHECK(g.diagnostics.empty());
  REQUIRE(g.value.services.size() == 1);
  REQUIRE(g.value.services[0].frontends.size() == 1);
  const auto& f = g.value.services[0].frontends[0];
  CHECK(f.kind == frontend_kind::external_or_load_balancer_ip);
  CHECK(f.result == outcome::reject);
}
