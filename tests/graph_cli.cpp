// SPDX-License-Identifier: MIT
// `nflens graph` and `nflens compare` as a user runs them: outputs and exit statuses (0 equivalent, 1 not,
// 2 usage or input errors; graph 1 on input errors, with diagnostics and no report).

#include <doctest/doctest.h>

#include "kernel_support.hpp"
#include "support.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <tuple>

using namespace nflens::test;

namespace {

std::string nflens_cmd() { return std::string(NFLENS_BUILD_ROOT) + "/nflens"; }
std::string example(const char* name) { return (source_root() / "examples" / "cluster" / name).string(); }

}  // namespace

TEST_CASE("nflens graph: text, JSON, DOT and quoted paths of the example dump") {
  auto r = run_command(nflens_cmd() + " graph " + example("cluster.iptables"));
  CHECK(r.status == 0);
  CHECK(r.output.find("shop/web:http (tcp)\n") != std::string::npos);
  r = run_command(nflens_cmd() + " graph --json " + example("cluster.iptables"));
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.output);
  CHECK(j["backend"] == "iptables");
  CHECK(j["services"].size() == 4);
  CHECK(j["services"][3]["service"] == "shop/web:http");
  CHECK(j["services"][3]["node_port"] == 30080);
  r = run_command(nflens_cmd() + " graph --dot " + example("cluster.iptables"));
  CHECK(r.status == 0);
  CHECK(r.output.rfind("digraph nflens {", 0) == 0);
  r = run_command(nflens_cmd() + " graph --service shop/cache:redis " + example("cluster.iptables"));
  CHECK(r.status == 0);
  CHECK(r.output.find("cluster.iptables:") != std::string::npos);
  CHECK(r.output.find("-j DNAT --to-destination 10.244.2.22:6379") != std::string::npos);
  r = run_command(nflens_cmd() + " graph --service no/such:svc " + example("cluster.iptables") + " 2>/dev/null");
  CHECK(r.status == 1);
  r = run_command(nflens_cmd() + " graph --json --dot " + example("cluster.iptables") + " 2>/dev/null");
  CHECK(r.status == 2);
}

TEST_CASE("nflens compare: exit 0 when equivalent, 1 when not, 2 for usage and input errors") {
  auto r = run_command(nflens_cmd() + " compare " + example("cluster.iptables") + " " + example("cluster.iptables"));
  CHECK(r.status == 0);
  CHECK(r.output.find("EQUIVALENT: 4 services") != std::string::npos);
  // A changed copy: one endpoint moved.
  char tmpl[] = "/tmp/nflens-cli-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::filesystem::path dir = tmpl;
  auto text = slurp(example("cluster.iptables"));
  for (std::size_t at; (at = text.find("10.244.2.22:6379")) != std::string::npos;)
    text.replace(at, 16, "10.244.2.99:6379");
  std::ofstream(dir / "changed.rules") << text;
  r = run_command(nflens_cmd() + " compare --json " + example("cluster.iptables") + " " +
                  (dir / "changed.rules").string());
  CHECK(r.status == 1);
  const auto j = nlohmann::json::parse(r.output);
  CHECK(j["equivalent"] == false);
  REQUIRE(j["differences"].size() == 1);
  CHECK(j["differences"][0]["service"] == "shop/cache:redis");
  // The no-endpoints service answered with a TCP reset instead of ICMP port-unreachable (nft `reject`):
  // not equivalent; icmp-admin-prohibited against nft's icmp admin-prohibited: the same ICMP code 13.
  const auto with_reject = [&](const std::string& name, const std::string& iptables_type, const std::string& nft_with) {
    auto ipt = slurp(example("cluster.iptables"));
    const std::string from = "--reject-with icmp-port-unreachable";
    REQUIRE(ipt.find(from) != std::string::npos);
    ipt.replace(ipt.find(from), from.size(), "--reject-with " + iptables_type);
    std::ofstream(dir / (name + ".rules")) << ipt;
    auto nf = slurp(example("cluster.nft"));
    const std::string bare = "\t\treject\n";
    REQUIRE(nf.find(bare) != std::string::npos);
    nf.replace(nf.find(bare), bare.size(), "\t\treject" + nft_with + "\n");
    std::ofstream(dir / (name + ".nft")) << nf;
    return run_command(nflens_cmd() + " compare " + (dir / (name + ".rules")).string() + " " +
                       (dir / (name + ".nft")).string());
  };
  r = with_reject("reset", "tcp-reset", "");
  CHECK(r.status == 1);
  CHECK(r.output.find("frontend cluster-ip tcp 10.96.50.5:80: rejected with tcp reset in A, with icmp "
                      "port-unreachable in B") != std::string::npos);
  r = with_reject("admin", "icmp-admin-prohibited", " with icmp admin-prohibited");
  CHECK(r.status == 0);
  r = with_reject("host", "icmp-host-unreachable", " with icmp admin-prohibited");
  CHECK(r.status == 1);
  CHECK(r.output.find("rejected with icmp host-unreachable in A, with icmp admin-prohibited in B") != std::string::npos);
  std::ofstream(dir / "broken.rules") << "*nat\n-A FOO -j\nCOMMIT\n";
  r = run_command(nflens_cmd() + " compare " + example("cluster.iptables") + " " + (dir / "broken.rules").string() +
                  " 2>/dev/null");
  CHECK(r.status == 2);
  CHECK(r.output.empty());
  r = run_command(nflens_cmd() + " compare " + example("cluster.iptables") + " 2>/dev/null");
  CHECK(r.status == 2);
  // a share difference is from 0 to 1; NaN, negative and words are usage errors, not "not equivalent"
  for (const std::string bad : {"-1", "nan", "1.5", "abc"}) {
    CAPTURE(bad);
    r = run_command(nflens_cmd().append(" compare --tolerance ").append(bad).append(" ") +
                    example("cluster.iptables") + " " + example("cluster.nft") + " 2>&1");
    CHECK(r.status == 2);
    CHECK(r.output.find("--tolerance") != std::string::npos);
  }
  // an equivalence that rests on an unevaluated construct says so; --strict makes it a failure
  text = slurp(example("cluster.iptables"));
  const auto at = text.find("-A KUBE-SERVICES ");
  REQUIRE(at != std::string::npos);
  text.insert(at, "-A KUBE-SERVICES -i eth9 -p tcp -m tcp --dport 1 -j KUBE-MARK-MASQ\n"
                  "-A KUBE-SERVICES -m string --string x --algo bm -d 10.96.0.10/32 -p udp -m udp --dport 53 "
                  "-j KUBE-MARK-MASQ\n");
  std::ofstream(dir / "assumed.rules") << text;
  const std::string assumed = example("cluster.nft") + " " + (dir / "assumed.rules").string();
  r = run_command(nflens_cmd() + " compare " + assumed + " 2>/dev/null");
  CHECK(r.status == 0);
  CHECK(r.output.find("EQUIVALENT (ASSUMING what the warnings say of 0 construct(s) not evaluated in A, 2 in B): 4 "
                      "services, the same frontends, endpoints and shares (within 1e-06)") != std::string::npos);
  r = run_command(nflens_cmd() + " compare --strict " + assumed + " 2>/dev/null");
  CHECK(r.status == 1);
  r = run_command(nflens_cmd() + " compare --json --tolerance 0.01 " + assumed + " 2>/dev/null");
  CHECK(r.status == 0);
  const auto k = nlohmann::json::parse(r.output);
  CHECK(k["unevaluated"]["b"] == 2);
  CHECK(k["tolerance"] == 0.01);
  r = run_command(nflens_cmd() + " compare --strict " + example("cluster.iptables") + " " + example("cluster.nft"));
  CHECK(r.status == 0);
  // standard input can be read once
  r = run_command(nflens_cmd() + " compare - - </dev/null 2>&1");
  CHECK(r.status == 2);
  CHECK(r.output.find("only one of the two dumps can be standard input") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("nflens graph: what iptables-restore would refuse is said, and an empty graph says so") {
  char tmpl[] = "/tmp/nflens-cli-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::filesystem::path dir = tmpl;
  std::ofstream(dir / "undeclared.rules") << "*nat\n:PREROUTING ACCEPT [0:0]\n-A FOO -j ACCEPT\nCOMMIT\n";
  auto r = run_command(nflens_cmd() + " graph " + (dir / "undeclared.rules").string() + " 2>&1");
  CHECK(r.status == 1);
  CHECK(r.output.find("undeclared.rules:3:1: error[chain-not-found]: chain `FOO` does not exist in table nat") !=
        std::string::npos);
  // what iptables-restore refuses is an error of graph and compare too (compare: exit 2)
  std::ofstream(dir / "drop.rules") << "*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j DROP\nCOMMIT\n";
  r = run_command(nflens_cmd() + " graph " + (dir / "drop.rules").string() + " 2>&1");
  CHECK(r.status == 1);
  CHECK(r.output.find("drop.rules:3:") != std::string::npos);
  CHECK(r.output.find("DROP is refused in the nat table") != std::string::npos);
  r = run_command(nflens_cmd() + " compare " + (dir / "drop.rules").string() + " " + example("cluster.nft") +
                  " 2>/dev/null");
  CHECK(r.status == 2);
  // a jump to a chain the dump lacks is a dangling reference: reported, and the rest is built
  std::ofstream(dir / "dangling.rules") << "*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j NOWHERE\n"
                                           "-A PREROUTING -d 1.2.3.4/32 -p tcp -m tcp --dport 80 -j DNAT "
                                           "--to-destination 10.0.0.1:80\nCOMMIT\n";
  r = run_command(nflens_cmd() + " graph " + (dir / "dangling.rules").string() + " 2>&1");
  CHECK(r.status == 0);
  CHECK(r.output.find("dangling-reference") != std::string::npos);
  CHECK(r.output.find("endpoint 10.0.0.1:80  1.000000") != std::string::npos);
  std::ofstream(dir / "empty.rules") << "*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j ACCEPT\nCOMMIT\n";
  r = run_command(nflens_cmd() + " graph " + (dir / "empty.rules").string() + " 2>&1");
  CHECK(r.status == 0);
  CHECK(r.output.find("no services: no rule on a NAT path translates a destination") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("nflens: output that cannot be written is an error, not a result") {
  REQUIRE(std::filesystem::exists("/dev/full"));  // Linux: every write fails with ENOSPC
  for (const std::string verb : {"graph", "parse --print", "compare"}) {
    CAPTURE(verb);
    std::string cmd = nflens_cmd();
    cmd.append(" ").append(verb).append(" ").append(example("cluster.nft"));
    if (verb == "compare") cmd.append(" ").append(example("cluster.iptables"));
    const auto r = run_command(cmd.append(" 2>&1 >/dev/full"));
    CHECK(r.status == 2);
    CHECK(r.output.find("could not write the output") != std::string::npos);
  }
}

TEST_CASE("nflens graph FILE UPDATE: an nft transaction with flushes and deletes applied onto the dump") {
  const auto fixture = [](const char* name) {
    return (source_root() / "tests" / "fixtures" / "graph" / name).string();
  };
  // cluster-after-update.nft is what the kernel lists after `nft -f cluster.nft; nft -f cluster-update.nft`.
  auto r = run_command(nflens_cmd() + " graph --json --no-origins " + example("cluster.nft") + " " +
                       fixture("cluster-update.nft"));
  REQUIRE(r.status == 0);
  const auto updated = nlohmann::json::parse(r.output);
  r = run_command(nflens_cmd() + " graph --json --no-origins " + fixture("cluster-after-update.nft"));
  REQUIRE(r.status == 0);
  const auto kernel = nlohmann::json::parse(r.output);
  CHECK(updated["services"] == kernel["services"]);
  REQUIRE(updated["services"].size() == 3);  // shop/legacy is gone
  CHECK(updated["services"][2]["service"] == "shop/web:http");
  CHECK(updated["services"][2]["endpoints"].size() == 2);
  CHECK(updated["services"][2]["endpoints"][1]["probability"] == 0.5);
  // Without the update the dump has shop/legacy and three endpoints for shop/web.
  r = run_command(nflens_cmd() + " graph --json --no-origins " + example("cluster.nft"));
  REQUIRE(r.status == 0);
  CHECK(nlohmann::json::parse(r.output)["services"].size() == 4);
  // An update of another format, and an update that cannot apply (the chain is gone): errors, no graph.
  r = run_command(nflens_cmd() + " graph " + example("cluster.nft") + " " + example("cluster.iptables") + " 2>&1");
  CHECK(r.status == 1);
  CHECK(r.output.find("must have the format") != std::string::npos);
  r = run_command(nflens_cmd() + " graph " + fixture("cluster-after-update.nft") + " " + fixture("cluster-update.nft") +
                  " 2>&1");
  CHECK(r.status == 1);
  CHECK(r.output.find("cluster-update.nft:") != std::string::npos);
}

TEST_CASE("nflens graph FILE UPDATE: an iptables partial sync applied with --noflush semantics") {
  const auto fixture = [](const char* name) {
    return (source_root() / "tests" / "fixtures" / "graph" / name).string();
  };
  // cluster-after-update.rules is what iptables-save lists after `iptables-restore cluster.iptables;
  // iptables-restore --noflush cluster-update.rules` in a fresh network namespace.
  auto r = run_command(nflens_cmd() + " graph --json --no-origins " + example("cluster.iptables") + " " +
                       fixture("cluster-update.rules"));
  REQUIRE(r.status == 0);
  const auto updated = nlohmann::json::parse(r.output);
  r = run_command(nflens_cmd() + " graph --json --no-origins " + fixture("cluster-after-update.rules"));
  REQUIRE(r.status == 0);
  CHECK(updated["services"] == nlohmann::json::parse(r.output)["services"]);
  REQUIRE(updated["services"].size() == 3);
  CHECK(updated["services"][2]["endpoints"].size() == 2);
  // The same change in both backends gives the same dispatch.
  r = run_command(nflens_cmd() + " compare " + fixture("cluster-after-update.rules") + " " +
                  fixture("cluster-after-update.nft"));
  CHECK(r.status == 0);
}

TEST_CASE("nflens compare: session affinity per endpoint and the masquerade mark are compared") {
  char tmpl[] = "/tmp/nflens-cli-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::filesystem::path dir = tmpl;
  const auto changed = [&](const char* example_name, const std::string& from, const std::string& to) {
    auto text = slurp(example(example_name));
    const auto at = text.find(from);
    REQUIRE_MESSAGE(at != std::string::npos, from);
    text.replace(at, from.size(), to);
    const auto path = dir / (std::string("changed-") + example_name);
    std::ofstream(path) << text;
    return path.string();
  };
  const auto compare_with = [&](const char* example_name, const std::string& other) {
    return run_command(nflens_cmd() + " compare " + example(example_name) + " " + other + " 2>/dev/null");
  };
  // one endpoint's affinity rule dropped (found by a new user: the comparison called it equivalent)
  const std::string rcheck =
      "-A KUBE-SVC-PIBUVRUNQKGJCXFG -m comment --comment \"shop/cache:redis -> 10.244.1.21:6379\" -m recent "
      "--rcheck --seconds 10800 --reap --name KUBE-SEP-2PBPZ74KPAI5UY3O --mask 255.255.255.255 --rsource -j "
      "KUBE-SEP-2PBPZ74KPAI5UY3O\n";
  auto r = compare_with("cluster.iptables", changed("cluster.iptables", rcheck, ""));
  CHECK(r.status == 1);
  CHECK(r.output.find("endpoint 10.244.1.21:6379: session affinity 10800 s in A, no session affinity in B") !=
        std::string::npos);
  CHECK(r.output.find("10.244.2.22:6379: session") == std::string::npos);
  // one endpoint's affinity set with a shorter timeout (the service's longest timeout is unchanged)
  r = compare_with("cluster.nft", changed("cluster.nft", "timeout 3h", "timeout 2h"));
  CHECK(r.status == 1);
  CHECK(r.output.find("endpoint 10.244.1.21:6379: session affinity 10800 s in A, session affinity 7200 s in B") !=
        std::string::npos);
  // the masquerade chain sets a mark that the masquerade rule does not look for: nothing is masqueraded
  for (const auto& [name, from, to] :
       {std::tuple{"cluster.iptables", "-A KUBE-MARK-MASQ -j MARK --set-xmark 0x4000/0x4000",
                   "-A KUBE-MARK-MASQ -j MARK --set-xmark 0x8000/0x8000"},
        std::tuple{"cluster.nft", "meta mark set meta mark | 0x00004000", "meta mark set meta mark | 0x00008000"}}) {
    CAPTURE(name);
    r = compare_with(name, changed(name, from, to));
    CHECK(r.status == 1);
    CHECK(r.output.find("masquerade source-outside 10.244.0.0/16 in A, never in B") != std::string::npos);
    // and a mark the masquerade rule does look for, set with other bits too, still masquerades
    std::string more(to);
    more.replace(more.find("8000"), 4, "c000");
    r = compare_with(name, changed(name, from, more));
    CHECK(r.status == 0);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("nflens graph and compare read nft's JSON as they read its text") {
  // found by a new user: "the graph of nft JSON input is not built yet"
  char tmpl[] = "/tmp/nflens-cli-XXXXXX";
  REQUIRE(::mkdtemp(tmpl) != nullptr);
  const std::filesystem::path dir = tmpl;
  const auto json_path = (dir / "cluster.json").string();
  auto r = run_command(nflens_cmd() + " convert --to nft-json " + example("cluster.nft") + " > " + json_path);
  REQUIRE(r.status == 0);
  r = run_command(nflens_cmd() + " compare " + example("cluster.iptables") + " " + json_path);
  CHECK(r.status == 0);
  CHECK(r.output.find("B: " + json_path + " (nftables)") != std::string::npos);
  CHECK(r.output.find("EQUIVALENT: 4 services") != std::string::npos);
  const auto text_graph = run_command(nflens_cmd() + " graph --json " + example("cluster.nft"));
  const auto json_graph = run_command(nflens_cmd() + " graph --json " + json_path);
  REQUIRE(text_graph.status == 0);
  REQUIRE(json_graph.status == 0);
  auto a = nlohmann::json::parse(text_graph.output), b = nlohmann::json::parse(json_graph.output);
  REQUIRE(a["services"].size() == 4);
  REQUIRE(b["services"].size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    const auto& x = a["services"][i];
    const auto& y = b["services"][i];
    CHECK(x["service"] == y["service"]);
    REQUIRE(x["endpoints"].size() == y["endpoints"].size());
    for (std::size_t k = 0; k < x["endpoints"].size(); ++k) {
      CHECK(x["endpoints"][k]["ip"] == y["endpoints"][k]["ip"]);
      CHECK(x["endpoints"][k]["probability"] == y["endpoints"][k]["probability"]);
    }
  }
  // an update must have the format of its dump
  r = run_command(nflens_cmd() + " graph " + json_path + " " + example("cluster.nft") + " 2>&1");
  CHECK(r.status != 0);
  CHECK(r.output.find("an update must have the format of the dump it is applied to") != std::string::npos);
  std::filesystem::remove_all(dir);
}
