// SPDX-License-Identifier: MIT
// The graph of every iptables dump of the kube-proxy corpus equals its ground truth: the restore inputs,
// the kernel re-dumps, and the partial-sync sequence applied onto repeated_1_initial as
// `iptables-restore --noflush` would; kpgen clusters equal their --truth except for what the graph itself
// marks unknown; the update cost model matches kube-proxy's own partial-sync input and kpgen's payloads.

#include <doctest/doctest.h>

#include "graph_corpus_support.hpp"

#include <nflens/compare.hpp>
#include <nflens/graph.hpp>
#include <nflens/iptables.hpp>

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace nflens;
using namespace nflens::test;
namespace fs = std::filesystem;

namespace {

fs::path kp_dir() { return shared_root() / "corpus" / "kube-proxy" / "iptables"; }

dispatch_graph graph_of(const fs::path& p) {
  auto r = iptables::parse(p.string(), slurp(p));
  REQUIRE_MESSAGE(r.ok(), render(r.diagnostics));
  auto g = build_graph(r.value);
  CHECK_MESSAGE(g.diagnostics.empty(), render(g.diagnostics));
  return std::move(g.value);
}

json truth(const fs::path& p) { return json::parse(slurp(p)); }

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

}  // namespace

TEST_CASE("kube-proxy iptables corpus: every dump's graph equals its expected.json") {
  int checked = 0;
  for (const auto& e : fs::directory_iterator(kp_dir())) {
    const auto name = e.path().filename().string();
    const bool kernel = name.ends_with(".kernel.rules");
    const bool input = name.ends_with(".rules") && !kernel && name.find(".partial") == std::string::npos;
    if (!kernel && !input) continue;
    const auto stem = name.substr(0, name.size() - (kernel ? 13 : 6));
    CAPTURE(name);
    const auto g = graph_of(e.path());
    const auto diff = truth_diff(json::parse(to_json(g, false)), truth(kp_dir() / (stem + ".expected.json")), false);
    CHECK_MESSAGE(diff.empty(), fmt::format("{}", fmt::join(diff, "\n")));
    ++checked;
  }
  CHECK(checked == 15);
}

TEST_CASE("kube-proxy iptables corpus: partial syncs applied in sequence give each step's state") {
  const std::vector<std::string> steps{"repeated_2_add_svc3",
                                       "repeated_3_delete_svc2",
                                       "repeated_4_add_svc4_no_endpoints",
                                       "repeated_5_svc4_endpoints",
                                       "repeated_6_change_endpoint",
                                       "repeated_7_add_endpoint",
                                       "repeated_8_noop"};
  const auto first = kp_dir() / "repeated_1_initial.rules";
  auto base = iptables::load(first.string(), slurp(first));
  REQUIRE(base.ok());
  iptables::ruleset state = std::move(base.value);
  for (const auto& step : steps) {
    CAPTURE(step);
    const auto path = kp_dir() / (step + ".partial.rules");
    auto input = iptables::parse(path.string(), slurp(path));
    REQUIRE(input.ok());
    iptables::apply_options noflush;
    noflush.noflush = true;
    const auto ds = iptables::apply(state, input.value, noflush);
    REQUIRE_MESSAGE(ds.empty(), render(ds));
    auto g = build_graph(state);
    CHECK(g.diagnostics.empty());
    const auto diff =
        truth_diff(json::parse(to_json(g.value, false)), truth(kp_dir() / (step + ".partial.expected.json")), false);
    CHECK_MESSAGE(diff.empty(), fmt::format("{}", fmt::join(diff, "\n")));
    if (step == "repeated_6_change_endpoint") {
      // kube-proxy's next input adds one endpoint to svc3: 36 lines (filter 12, fixed nat 14, svc3 10).
      const auto* svc3 = g.value.find("ns3/svc3:p80");
      REQUIRE(svc3 != nullptr);
      const auto cost = add_endpoint_cost(g.value, static_cast<std::size_t>(svc3 - g.value.services.data()));
      const auto next = slurp(kp_dir() / "repeated_7_add_endpoint.partial.rules");
      CHECK(cost.partial_lines == count_lines(next));
      CHECK(cost.partial_lines == 36);
    }
  }
}

TEST_CASE("kpgen iptables clusters: graph equals --truth, but for what the dump cannot show") {
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
                         "--multi-port-frac 0.3 --external-ip-frac 0.2 --no-nfacct"}};
  // The 10,000-service cluster is large mode (no comments on endpoint rules); not under the sanitizers.
  if (std::getenv("ASAN_OPTIONS") == nullptr) cfgs.push_back({5, 4, 10000, "--nodeport-frac 0.5 --lb-frac 0.05"});
  for (const auto& c : cfgs) {
    CAPTURE(c.seed);
    const auto dump = tmp.path() / fmt::format("ipt-{}.rules", c.seed);
    const auto tr = tmp.path() / fmt::format("ipt-{}.json", c.seed);
    REQUIRE(kpgen(fmt::format("--backend iptables --services {} --endpoints 5 --seed {} --family {} {}", c.services,
                              c.seed, c.family, c.extra),
                  dump, tr));
    const auto g = graph_of(dump);
    std::vector<std::string> unknown;
    const auto want = truth(tr);
    const auto diff = truth_diff(json::parse(to_json(g, false)), want, true, &unknown);
    CHECK_MESSAGE(diff.empty(), fmt::format("{}", fmt::join(diff, "\n")));
    // What the dump cannot show is confined to services without endpoints.
    for (const auto& u : unknown) {
      const auto svc = u.substr(0, u.rfind('.'));
      for (const auto& s : want["services"])
        if (s["service"] == svc) CHECK_MESSAGE(s["endpoints"].empty(), u);
    }
  }
}

TEST_CASE("kpgen --update-add-endpoint: the iptables update cost model gives kpgen's payload sizes") {
  temp_dir tmp;
  const auto dump = tmp.path() / "ipt.rules", tr = tmp.path() / "ipt.json";
  const std::string args =
      "--backend iptables --services 60 --endpoints 3 --seed 7 --nodeport-frac 0.5 --lb-frac 0.2 "
      "--affinity-frac 0.3 --local-frac 0.3 --multi-port-frac 0.3";
  REQUIRE(kpgen(args, dump, tr));
  const auto g = graph_of(dump);
  const auto want = truth(tr);
  int checked = 0;
  for (int i : {0, 1, 5, 17, 33, 50}) {
    CAPTURE(i);
    const auto name = want["services"][static_cast<std::size_t>(i)]["service"].get<std::string>();
    if (want["services"][static_cast<std::size_t>(i)]["endpoints"].empty()) continue;
    const auto prefix = tmp.path() / fmt::format("up{}", i);
    const auto tool = shared_root() / "tools" / "kpgen";
    const auto r = run_command(fmt::format("python3 '{}' {} --update-add-endpoint {} --update-out '{}' > /dev/null",
                                           tool.string(), args, i, prefix.string()));
    REQUIRE(r.status == 0);
    const auto* s = g.find(name);
    REQUIRE(s != nullptr);
    const auto cost = add_endpoint_cost(g, static_cast<std::size_t>(s - g.services.data()));
    CHECK(cost.full_lines == count_lines(slurp(prefix.string() + ".full.rules")));
    CHECK(cost.partial_lines == count_lines(slurp(prefix.string() + ".partial.rules")));
    ++checked;
  }
  CHECK(checked >= 4);
}

TEST_CASE("a dump with a jump to a missing chain: reported with its location, the rest is built") {
  // overall.kernel.rules without svc1's KUBE-SVC chain (its declaration and rules).
  std::string text;
  {
    std::istringstream in(slurp(kp_dir() / "overall.kernel.rules"));
    std::string line;
    while (std::getline(in, line)) {
      const bool mentions = line.find("KUBE-SVC-XPGD46QRK7WJZT7O") != std::string::npos;
      const bool the_jump = line.rfind("-A KUBE-SERVICES", 0) == 0;
      if (!mentions || the_jump) text += line + "\n";
    }
  }
  auto r = iptables::parse("dangling.rules", text);
  REQUIRE(r.ok());
  const auto g = build_graph(r.value);
  CHECK(g.ok());
  REQUIRE(g.diagnostics.size() == 1);
  CHECK(g.diagnostics[0].code == error_code::dangling_reference);
  CHECK(g.diagnostics[0].file->locate(g.diagnostics[0].where).line == 79);
  REQUIRE(g.value.dangling.size() == 1);
  CHECK(g.value.dangling[0].target == "KUBE-SVC-XPGD46QRK7WJZT7O");
  CHECK(g.value.locate(g.value.dangling[0].where).line == 79);
  const auto* s1 = g.value.find("ns1/svc1:p80");
  REQUIRE(s1 != nullptr);
  CHECK(s1->endpoints.empty());
  CHECK(s1->frontends.at(0).result == outcome::none);
  for (const char* other : {"ns2/svc2:p80", "ns3/svc3:p80", "ns4/svc4:p80", "ns5/svc5:p80"}) {
    const auto* s = g.value.find(other);
    REQUIRE(s != nullptr);
    CHECK_FALSE(s->endpoints.empty());
  }
}
