// SPDX-License-Identifier: MIT
// The graph of every nftables dump of the kube-proxy corpus (knftables scripts and `nft list` re-listings)
// equals its ground truth but for what the dump cannot show (the graph's `unknown`); kpgen clusters in
// both backends give equal graphs under `compare`, different clusters do not; the nft update cost model
// gives kube-proxy's transaction size and kpgen's payload.

#include <doctest/doctest.h>

#include "graph_corpus_support.hpp"

#include <nflens/compare.hpp>
#include <nflens/graph.hpp>
#include <nflens/iptables.hpp>
#include <nflens/nft.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>

using namespace nflens;
using namespace nflens::test;
namespace fs = std::filesystem;

namespace {

fs::path kp_dir() { return shared_root() / "corpus" / "kube-proxy" / "nftables"; }

dispatch_graph nft_graph(const fs::path& p) {
  auto s = nft::parse(p.string(), slurp(p));
  REQUIRE_MESSAGE(s.ok(), render(s.diagnostics));
  auto g = build_graph(s.value);
  CHECK_MESSAGE(g.diagnostics.empty(), render(g.diagnostics));
  return std::move(g.value);
}

dispatch_graph iptables_graph(const fs::path& p) {
  auto r = iptables::parse(p.string(), slurp(p));
  REQUIRE_MESSAGE(r.ok(), render(r.diagnostics));
  auto g = build_graph(r.value);
  CHECK_MESSAGE(g.diagnostics.empty(), render(g.diagnostics));
  return std::move(g.value);
}

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("kube-proxy nftables corpus: every dump's graph equals its expected.json") {
  int checked = 0, ambiguous = 0;
  for (const auto& e : fs::directory_iterator(kp_dir())) {
    const auto name = e.path().filename().string();
    if (!name.ends_with(".nft")) continue;
    const auto stem = name.substr(0, name.find('.'));
    CAPTURE(name);
    const auto g = nft_graph(e.path());
    std::vector<std::string> unknown;
    const auto want = json::parse(slurp(kp_dir() / (stem + ".expected.json")));
    const auto diff = truth_diff(json::parse(to_json(g, false)), want, true, &unknown);
    CHECK_MESSAGE(diff.empty(), fmt::format("{}", fmt::join(diff, "\n")));
    for (const auto& u : unknown) {
      // nftables mode writes external IPs and LoadBalancer IPs without source ranges alike.
      CHECK_MESSAGE((u.ends_with(".external_ips") || u.ends_with(".load_balancer_ips")), u);
      ++ambiguous;
    }
    ++checked;
  }
  CHECK(checked == 22);
  CHECK(ambiguous == 8);  // overall: svc2's external and LB IP, svc4's external IP; badips: svc1's external IP
}

TEST_CASE("kube-proxy nftables corpus: the update cost model gives kube-proxy's transaction size") {
  // TestSyncProxyRulesRepeated asserts 12 operations for adding 10.0.3.3 to svc3 (one endpoint before).
  const auto g = nft_graph(kp_dir() / "repeated_6_change_endpoint.kernel.nft");
  const auto* svc3 = g.find("ns3/svc3:p80");
  REQUIRE(svc3 != nullptr);
  CHECK(add_endpoint_cost(g, static_cast<std::size_t>(svc3 - g.services.data())).nft_ops == 12);
}

TEST_CASE("kpgen --update-add-endpoint: the nft update cost model gives kpgen's transaction size") {
  temp_dir tmp;
  const auto dump = tmp.path() / "nft.nft", tr = tmp.path() / "nft.json";
  const std::string args =
      "--backend nftables --services 60 --endpoints 3 --seed 7 --nodeport-frac 0.5 "
      "--lb-frac 0.2 --affinity-frac 0.3 --local-frac 0.3 --multi-port-frac 0.3";
  REQUIRE(kpgen(args, dump, tr));
  const auto g = nft_graph(dump);
  const auto want = json::parse(slurp(tr));
  int checked = 0;
  for (int i : {0, 1, 5, 17, 33, 50}) {
    CAPTURE(i);
    const auto& w = want["services"][static_cast<std::size_t>(i)];
    if (w["endpoints"].empty()) continue;
    const auto prefix = tmp.path() / fmt::format("up{}", i);
    const auto tool = shared_root() / "tools" / "kpgen";
    REQUIRE(run_command(fmt::format("python3 '{}' {} --update-add-endpoint {} --update-out '{}' > /dev/null",
                                    tool.string(), args, i, prefix.string()))
                .status == 0);
    const auto* s = g.find(w["service"].get<std::string>());
    REQUIRE(s != nullptr);
    const auto cost = add_endpoint_cost(g, static_cast<std::size_t>(s - g.services.data()));
    CHECK(cost.nft_ops == count_lines(slurp(prefix.string() + ".nft")));
    ++checked;
  }
  CHECK(checked >= 4);
}

TEST_CASE("kpgen clusters in both backends: graphs equal the truth, compare says equivalent; other seeds differ") {
  temp_dir tmp;
  struct cfg {
    int seed, family, services;
    const char* extra;
  };
  std::vector<cfg> cfgs{{1, 4, 200, "--nodeport-frac 0.4 --lb-frac 0.1 --affinity-frac 0.1 --endpoints-spread"},
                        {2, 6, 150, "--nodeport-frac 0.4 --lb-frac 0.1 --affinity-frac 0.1 --endpoints-spread"},
                        {3, 4, 1000, "--nodeport-frac 0.4 --lb-frac 0.1 --affinity-frac 0.1 --endpoints-spread"},
                        {4, 4, 300,
                         "--nodeport-frac 0.5 --lb-frac 0.3 --local-frac 0.5 --no-endpoint-frac 0.1 "
                         "--multi-port-frac 0.3 --external-ip-frac 0.2"}};
  if (std::getenv("ASAN_OPTIONS") == nullptr) cfgs.push_back({5, 4, 10000, "--nodeport-frac 0.5 --lb-frac 0.05"});
  std::vector<dispatch_graph> nft_graphs;
  for (const auto& c : cfgs) {
    CAPTURE(c.seed);
    const auto common =
        fmt::format("--services {} --endpoints 5 --seed {} --family {} {}", c.services, c.seed, c.family, c.extra);
    const auto nd = tmp.path() / fmt::format("nft-{}.nft", c.seed),
               nt = tmp.path() / fmt::format("nft-{}.json", c.seed);
    const auto id = tmp.path() / fmt::format("ipt-{}.rules", c.seed),
               it = tmp.path() / fmt::format("ipt-{}.json", c.seed);
    REQUIRE(kpgen("--backend nftables " + common, nd, nt));
    REQUIRE(kpgen("--backend iptables " + common, id, it));
    const auto gn = nft_graph(nd);
    const auto gi = iptables_graph(id);
    const auto want = json::parse(slurp(nt));
    std::vector<std::string> unknown;
    const auto diff = truth_diff(json::parse(to_json(gn, false)), want, true, &unknown);
    CHECK_MESSAGE(diff.empty(), fmt::format("{}", fmt::join(diff, "\n")));
    // What the dump cannot show: external vs LoadBalancer IPs, and facts about services without endpoints.
    for (const auto& u : unknown) {
      if (u.ends_with(".external_ips") || u.ends_with(".load_balancer_ips")) continue;
      const auto svc = u.substr(0, u.rfind('.'));
      for (const auto& s : want["services"])
        if (s["service"] == svc) CHECK_MESSAGE(s["endpoints"].empty(), u);
    }
    const auto c1 = compare(gi, gn);
    CHECK_MESSAGE(c1.equivalent, to_text(c1, "iptables", "nftables"));
    CHECK(c1.matched == want["services"].size());
    if (c.seed == 4) {
      // the dispatch entered twice from prerouting (a tester's find: the Local policy's short-circuited
      // sources were listed twice, a false difference)
      auto twice = slurp(nd);
      const auto at = twice.find("\t\tjump services\n");
      REQUIRE(at != std::string::npos);
      twice.insert(at, "\t\tjump services\n");
      auto s2 = nft::parse("twice.nft", twice);
      REQUIRE(s2.ok());
      const auto c2 = compare(gn, build_graph(s2.value).value);
      CHECK_MESSAGE(c2.equivalent, to_text(c2, "once", "twice"));
    }
    nft_graphs.push_back(std::move(gn));
  }
  // Dumps of different clusters: the differences are listed.
  const auto c = compare(nft_graphs[0], nft_graphs[2]);
  CHECK_FALSE(c.equivalent);
  CHECK(c.differences.size() > 100);
}

TEST_CASE("older kube-proxy nftables layouts: other base-chain names and priorities, no cluster-ips set") {
  // overall.kernel.nft rewritten the way kube-proxy 1.29-1.31 laid it out: filter chains named per hook at
  // -110 (`dstnat - 10`, which nft takes by that name only at prerouting), no `cluster-ips` set and no
  // `cluster-ips-check` chain.
  auto text = slurp(kp_dir() / "overall.kernel.nft");
  auto replace_all = [&](std::string_view from, std::string_view to) {
    for (std::size_t at = 0; (at = text.find(from, at)) != std::string::npos; at += to.size())
      text.replace(at, from.size(), to);
  };
  auto erase_block = [&](std::string_view head) {
    const auto a = text.find(head);
    REQUIRE(a != std::string::npos);
    const auto b = text.find("\n\t}\n\n", a);
    REQUIRE(b != std::string::npos);
    text.erase(a, b + 5 - a);
  };
  replace_all("filter-prerouting-pre-dnat", "filter-prerouting");
  replace_all("filter-output-pre-dnat", "filter-output-nat");
  replace_all("hook input priority filter;", "hook input priority -110;");
  replace_all("hook forward priority filter;", "hook forward priority -110;");
  replace_all("hook output priority filter;", "hook output priority -110;");
  replace_all("\t\tct state new jump cluster-ips-check\n", "");
  erase_block("\tset cluster-ips {");
  erase_block("\tchain cluster-ips-check {");
  REQUIRE(text.find("cluster-ips") == std::string::npos);
  temp_dir tmp;
  {
    std::ofstream out(tmp.path() / "old.nft");
    out << text;
  }
  const auto g = nft_graph(tmp.path() / "old.nft");
  std::vector<std::string> unknown;
  const auto diff = truth_diff(json::parse(to_json(g, false)), json::parse(slurp(kp_dir() / "overall.expected.json")),
                               true, &unknown);
  CHECK_MESSAGE(diff.empty(), fmt::format("{}", fmt::join(diff, "\n")));
  CHECK(unknown.size() == 3);                 // svc2's external and LB IP, svc4's external IP
  const auto* svc6 = g.find("ns6/svc6:p80");  // no endpoints: its only address is its ClusterIP
  REQUIRE(svc6 != nullptr);
  REQUIRE(svc6->find(frontend_kind::cluster_ip) != nullptr);
}

TEST_CASE("kpgen --update-add-endpoint applied: the nft transaction and both iptables syncs give the same new graph") {
  temp_dir tmp;
  const std::string cluster =
      "--services 40 --endpoints 3 --seed 11 --nodeport-frac 0.5 --lb-frac 0.2 --affinity-frac 0.3 "
      "--local-frac 0.3 --multi-port-frac 0.3";
  const auto ndump = tmp.path() / "n.nft", ntruth = tmp.path() / "n.json";
  const auto idump = tmp.path() / "i.rules", itruth = tmp.path() / "i.json";
  REQUIRE(kpgen("--backend nftables " + cluster, ndump, ntruth));
  REQUIRE(kpgen("--backend iptables " + cluster, idump, itruth));
  const auto want = json::parse(slurp(ntruth));
  const auto listing = nft::parse(ndump.string(), slurp(ndump));
  REQUIRE(listing.ok());
  const auto before = build_graph(listing.value);
  REQUIRE(before.ok());
  const auto tool = shared_root() / "tools" / "kpgen";
  int checked = 0;
  for (int i : {1, 7, 20, 31}) {
    CAPTURE(i);
    const auto& w = want["services"][static_cast<std::size_t>(i)];
    if (w["endpoints"].empty()) continue;
    const auto name = w["service"].get<std::string>();
    const auto prefix = tmp.path() / fmt::format("up{}", i);
    for (const char* backend : {"nftables", "iptables"})
      REQUIRE(
          run_command(fmt::format("python3 '{}' --backend {} {} --update-add-endpoint {} --update-out '{}' > /dev/null",
                                  tool.string(), backend, cluster, i, prefix.string()))
              .status == 0);
    // nft: the listing, then kube-proxy's transaction (add + flush of the Service's chains, new rules) on top.
    auto state = nft::to_ruleset(listing.value);
    REQUIRE(state.ok());
    const auto tx_path = prefix.string() + ".nft";
    const auto tx = nft::parse(tx_path, slurp(tx_path));
    REQUIRE_MESSAGE(tx.ok(), render(tx.diagnostics));
    const auto applied = nft::apply(state.value, tx.value);
    REQUIRE_MESSAGE(applied.empty(), render(applied));
    const auto after = build_graph(state.value);
    CHECK_MESSAGE(after.diagnostics.empty(), render(after.diagnostics));
    // The changed Service (every port of it) has one endpoint more; nothing else changed.
    const auto c = compare(before.value, after.value);
    CHECK_FALSE(c.equivalent);
    const auto* was = before.value.find(name);
    const auto* now = after.value.find(name);
    REQUIRE(was != nullptr);
    REQUIRE(now != nullptr);
    CHECK(now->endpoints.size() == was->endpoints.size() + 1);
    const auto ns_name = name.substr(0, name.find(':') + 1);
    for (const auto& d : c.differences) {
      CHECK(d.kind == difference_kind::different);
      CHECK(d.service.rfind(ns_name, 0) == 0);
    }
    // iptables: the same change as kube-proxy's partial and full restore inputs (--noflush) on the dump.
    for (const char* sync : {".partial.rules", ".full.rules"}) {
      CAPTURE(sync);
      auto ipt = iptables::load(idump.string(), slurp(idump));
      REQUIRE(ipt.ok());
      const auto in_path = prefix.string() + sync;
      const auto in = iptables::parse(in_path, slurp(in_path));
      REQUIRE_MESSAGE(in.ok(), render(in.diagnostics));
      iptables::apply_options noflush;
      noflush.noflush = true;
      const auto ds = iptables::apply(ipt.value, in.value, noflush);
      REQUIRE_MESSAGE(ds.empty(), render(ds));
      const auto gi = build_graph(ipt.value);
      CHECK_MESSAGE(gi.diagnostics.empty(), render(gi.diagnostics));
      const auto same = compare(gi.value, after.value);
      CHECK_MESSAGE(same.equivalent, to_text(same, "iptables", "nft"));
    }
    ++checked;
  }
  CHECK(checked >= 3);
}

TEST_CASE("what a LoadBalancer's gate does to other sources is read from both backends and compared") {
  // overall: ns5/svc5's LoadBalancer IP 5.6.7.8:80 admits 203.0.113.0/25; iptables drops the rest in
  // filter (KUBE-PROXY-FIREWALL, after NAT left it untranslated), nft before NAT (its firewall chain)
  const auto ipt_path = kp_dir().parent_path() / "iptables" / "overall.rules";
  const auto nft_path = kp_dir() / "overall.kernel.nft";
  const auto replaced = [](const fs::path& p, const std::string& from, const std::string& to) {
    auto text = slurp(p);
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  const auto graph_of_text = [](bool nft, const std::string& text) {
    result<dispatch_graph> g;
    if (nft) {
      auto s = nft::parse("changed.nft", text);
      REQUIRE_MESSAGE(s.ok(), render(s.diagnostics));
      g = build_graph(s.value);
    } else {
      auto r = iptables::parse("changed.rules", text);
      REQUIRE_MESSAGE(r.ok(), render(r.diagnostics));
      g = build_graph(r.value);
    }
    CHECK_MESSAGE(g.diagnostics.empty(), render(g.diagnostics));
    return std::move(g.value);
  };
  const auto lb = [](const dispatch_graph& g) -> const frontend& {
    const auto* s = g.find("ns5/svc5:p80");
    REQUIRE(s != nullptr);
    const auto it = std::find_if(s->frontends.begin(), s->frontends.end(), [](const frontend& f) {
      return f.has_address && to_string(f.address.address) == "5.6.7.8";
    });
    REQUIRE(it != s->frontends.end());
    return *it;
  };
  const auto ipt = iptables_graph(ipt_path);
  const auto nft = nft_graph(nft_path);
  for (const auto* g : {&ipt, &nft}) {
    CHECK(lb(*g).source_ranges == std::vector<ip_prefix>{*parse_ip_prefix("203.0.113.0/25")});
    CHECK(lb(*g).other_sources == outcome::drop);
  }
  CHECK(compare(ipt, nft).equivalent);

  // without KUBE-PROXY-FIREWALL's drop, other sources pass untranslated: a difference (a tester found it
  // EQUIVALENT)
  const std::string drop_rule =
      "-A KUBE-PROXY-FIREWALL -m comment --comment \"ns5/svc5:p80 traffic not accepted by KUBE-FW-NUKIZ6OKUXPJNT4C\" "
      "-m tcp -p tcp -d 5.6.7.8 --dport 80 -j DROP\n";
  const auto open = graph_of_text(false, replaced(ipt_path, drop_rule, ""));
  CHECK(lb(open).source_ranges == lb(ipt).source_ranges);
  CHECK(lb(open).other_sources == outcome::none);
  const auto c = compare(open, nft);
  CHECK_FALSE(c.equivalent);
  REQUIRE(c.differences.size() == 1);
  CHECK(c.differences[0].details ==
        std::vector<std::string>{"frontend load-balancer-ip tcp 5.6.7.8:80: connections from other sources: not ended "
                                 "in A, drop in B"});

  // nft's gate written as an accept of the range and a drop of the rest admits the same sources (a tester
  // found it read as a drop of every source)
  const auto accept_then_drop = graph_of_text(
      true, replaced(nft_path, "\t\tip saddr != 203.0.113.0/25 drop\n", "\t\tip saddr 203.0.113.0/25 accept\n\t\tdrop\n"));
  CHECK(lb(accept_then_drop).source_ranges == lb(nft).source_ranges);
  CHECK(lb(accept_then_drop).other_sources == outcome::drop);
  CHECK(compare(nft, accept_then_drop).equivalent);
}
