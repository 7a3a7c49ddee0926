// SPDX-License-Identifier: MIT
// The kernel as oracle for the graph: the bundled example dumps are exactly what iptables-save and nft
// print after loading our rulesets into a fresh network namespace, and their graphs say what we wrote;
// a Docker-style DNAT ruleset loaded and saved by the real tools gives services without identity.

#include <doctest/doctest.h>

#include "kernel_support.hpp"
#include "support.hpp"

#include <nflens/compare.hpp>
#include <nflens/graph.hpp>
#include <nflens/iptables.hpp>
#include <nflens/nft.hpp>

#include <fmt/format.h>

#include <filesystem>
#include <sstream>

using namespace nflens;
using namespace nflens::test;
namespace fs = std::filesystem;

namespace {

std::string without_comments(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line))
    if (line.rfind('#', 0) != 0) out += line + "\n";
  return out;
}

dispatch_graph iptables_graph(const std::string& name, std::string text) {
  auto r = iptables::parse(name, std::move(text));
  REQUIRE_MESSAGE(r.ok(), render(r.diagnostics));
  auto g = build_graph(r.value);
  CHECK_MESSAGE(g.diagnostics.empty(), render(g.diagnostics));
  return std::move(g.value);
}

}  // namespace

TEST_CASE("the bundled example dumps are what the kernel holds for our rulesets") {
  char tmpl[] = "/tmp/nflens-example-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const fs::path tmp = tmpl;
  const auto gen = source_root() / "examples" / "cluster" / "gen.py";
  REQUIRE(run_command(fmt::format("cd '{}' && python3 '{}'", tmp.string(), gen.string())).status == 0);
  const auto restore = slurp(tmp / "cluster.iptables-restore");
  const auto script = slurp(tmp / "cluster.nft-script");
  fs::remove_all(tmp);

  netns ns;
  REQUIRE(ns.exec("iptables-restore", &restore).status == 0);
  const auto saved = ns.exec("iptables-save");
  REQUIRE(saved.status == 0);
  const auto bundled_ipt = slurp(source_root() / "examples" / "cluster" / "cluster.iptables");
  CHECK(without_comments(saved.output) == bundled_ipt);

  netns ns2;
  REQUIRE(ns2.exec("nft -f -", &script).status == 0);
  const auto listed = ns2.exec("nft list ruleset");
  REQUIRE(listed.status == 0);
  CHECK(listed.output == slurp(source_root() / "examples" / "cluster" / "cluster.nft"));

  const auto g = iptables_graph("cluster.iptables", bundled_ipt);
  REQUIRE(g.services.size() == 4);
  const auto* web = g.find("shop/web:http");
  REQUIRE(web != nullptr);
  REQUIRE(web->endpoints.size() == 3);
  for (const auto& e : web->endpoints) CHECK(e.probability == doctest::Approx(1.0 / 3).epsilon(1e-9));
  REQUIRE(web->find(frontend_kind::node_port) != nullptr);
  CHECK(web->find(frontend_kind::node_port)->port.first == 30080);
  const auto* cache = g.find("shop/cache:redis");
  REQUIRE(cache != nullptr);
  CHECK(cache->affinity_timeout_s == std::optional<std::uint32_t>(10800));
  const auto* legacy = g.find("shop/legacy:http");
  REQUIRE(legacy != nullptr);
  CHECK(legacy->no_endpoints == outcome::reject);

  // The nftables re-listing gives the same dispatch.
  auto parsed = nft::parse("cluster.nft", listed.output);
  REQUIRE_MESSAGE(parsed.ok(), render(parsed.diagnostics));
  const auto gn = build_graph(parsed.value);
  REQUIRE_MESSAGE(gn.ok(), render(gn.diagnostics));
  const auto c = compare(g, gn.value);
  CHECK_MESSAGE(c.equivalent, to_text(c, "cluster.iptables", "cluster.nft"));
  CHECK(c.matched == 4);
}

TEST_CASE("Docker-style published ports, loaded and saved by the real tools") {
  const std::string rules = R"(*nat
:PREROUTING ACCEPT [0:0]
:OUTPUT ACCEPT [0:0]
:POSTROUTING ACCEPT [0:0]
:DOCKER - [0:0]
-A PREROUTING -m addrtype --dst-type LOCAL -j DOCKER
-A OUTPUT ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j DOCKER
-A POSTROUTING -s 172.17.0.0/16 ! -o docker0 -j MASQUERADE
-A DOCKER -i docker0 -j RETURN
-A DOCKER ! -i docker0 -p tcp -m tcp --dport 8080 -j DNAT --to-destination 172.17.0.2:80
-A DOCKER ! -i docker0 -p udp -m udp --dport 5353 -j DNAT --to-destination 172.17.0.3:53
COMMIT
)";
  netns ns;
  REQUIRE(ns.exec("iptables-restore", &rules).status == 0);
  const auto saved = ns.exec("iptables-save");
  REQUIRE(saved.status == 0);
  auto parsed = iptables::parse("docker.rules", saved.output);
  REQUIRE_MESSAGE(parsed.ok(), render(parsed.diagnostics));
  auto built = build_graph(parsed.value);
  // connections arriving from the bridge return before the DNAT rules: whether clients arrive there the
  // dump cannot tell, and the graph says that it shows those arriving elsewhere
  REQUIRE(built.diagnostics.size() == 1);
  CHECK(built.diagnostics[0].message.find("interface match 'docker0' on a rule that ends connections to a local "
                                          "address is not evaluated") == 0);
  CHECK(built.diagnostics[0].file->text(built.diagnostics[0].where) == "-A DOCKER -i docker0 -j RETURN");
  const auto& g = built.value;
  CHECK(g.unevaluated == 1);
  REQUIRE(g.services.size() == 2);
  for (const auto& s : g.services) {
    CHECK_FALSE(s.name.has_value());
    REQUIRE(s.frontends.size() == 1);
    CHECK(s.frontends[0].kind == frontend_kind::dnat);
    CHECK(s.frontends[0].any_local);
    REQUIRE(s.endpoints.size() == 1);
    CHECK(s.endpoints[0].probability == 1.0);
  }
  CHECK(g.services[0].label() == "dnat tcp local:8080");
  CHECK(to_string(g.services[0].endpoints[0].address) == "172.17.0.2");
  CHECK(g.services[1].label() == "dnat udp local:5353");
  CHECK(g.services[1].endpoints[0].port == 53);
}
