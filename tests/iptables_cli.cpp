// SPDX-License-Identifier: MIT
// `nflens parse` on iptables input as a user runs it: the summary, --print, --json, --lenient, --base,
// standard input, and the exit statuses (0 clean, 1 input errors with diagnostics on stderr and nothing
// on stdout for --print/--json, 2 usage).
#include <doctest/doctest.h>

#include "kernel_support.hpp"
#include "support.hpp"

#include <nlohmann/json.hpp>

#include <string>

using namespace nflens::test;

namespace {

std::string nflens_cmd() { return std::string(NFLENS_BUILD_ROOT) + "/nflens"; }
std::string golden(const char* name) { return (source_root() / "tests/golden/iptables" / name).string(); }

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("nflens parse, iptables: summary, --print and --json of a clean input") {
    auto r = run_command(nflens_cmd() + " parse " + golden("kube_proxy.rules"));
    CHECK(r.status == 0);
    CHECK(r.output.find("format: iptables (IPv4)\n") != std::string::npos);
    CHECK(r.output.find("tables: filter nat\n") != std::string::npos);
    CHECK(r.output.find("rules: 16\n") != std::string::npos);
    CHECK(r.output.find(" statistic 1 ") != std::string::npos);
    CHECK(r.output.find("DNAT 2") != std::string::npos);
    CHECK(r.output.find("not modelled: 0 match uses, 0 target uses\n") != std::string::npos);

    r = run_command(nflens_cmd() + " parse --print " + golden("kube_proxy.rules"));
    CHECK(r.status == 0);
    CHECK(r.output == slurp(golden("kube_proxy.save")));

    r = run_command(nflens_cmd() + " parse --json " + golden("kube_proxy.rules"));
    REQUIRE(r.status == 0);
    const auto j = nlohmann::json::parse(r.output);
    CHECK(j["family"] == "ipv4");
    CHECK(j["applied"] == false);
    REQUIRE(j["tables"].size() == 2);
    CHECK(j["tables"][1]["table"] == "nat");
    const auto& dnat = j["tables"][1]["rules"][10];
    CHECK(dnat["target"]["kind"] == "dnat");
    CHECK(dnat["target"]["options"][0]["value"]["min_address"] == "10.244.1.5");
    CHECK(dnat["target"]["options"][0]["value"]["min_port"] == 8080);
    CHECK(dnat["target"]["options"][0]["raw"] == "--to-destination 10.244.1.5:8080");
  }

  TEST_CASE("nflens parse, iptables: errors exit 1 with located diagnostics and no --print or --json output") {
    auto r = run_command(nflens_cmd() + " parse --print " + golden("errors.rules") + " 2>/dev/null");
    CHECK(r.status == 1);
    CHECK(r.output.empty());
    r = run_command(nflens_cmd() + " parse --json " + golden("errors.rules") + " 2>/dev/null");
    CHECK(r.status == 1);
    CHECK(r.output.empty());
    r = run_command("cd " + golden("") + " && " + nflens_cmd() + " parse errors.rules 2>&1 >/dev/null");
    CHECK(r.status == 1);
    CHECK(r.output == slurp(golden("errors.diag")));
    r = run_command(nflens_cmd() + " parse " + golden("errors.rules") + " 2>/dev/null");
    CHECK(r.status == 1);
    CHECK(r.output.find("INCOMPLETE") != std::string::npos);
  }

  TEST_CASE("nflens parse, iptables: --print of `iptables-save -c` output keeps the rule counters") {
    // found by a new user: the [p:b] prefixes were left out, so such a dump did not round-trip
    const std::string saved = "*filter\n:INPUT DROP [5:6]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n"
                              "[7:8] -A INPUT -j ACCEPT\n[9:10] -A INPUT -s 1.1.1.1/32 -j ACCEPT\nCOMMIT\n";
    auto r = run_command(nflens_cmd() + " parse --print -", &saved);
    CHECK(r.status == 0);
    CHECK(r.output == saved);
    // without rule counters, as iptables-save without -c: none are printed
    const std::string plain = "*filter\n:INPUT DROP [5:6]\n-A INPUT -j ACCEPT\nCOMMIT\n";
    r = run_command(nflens_cmd() + " parse --print -", &plain);
    CHECK(r.status == 0);
    CHECK(r.output == "*filter\n:INPUT DROP [5:6]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -j ACCEPT\nCOMMIT\n");
  }

  TEST_CASE("nflens parse, iptables: standard input, --lenient, --base and usage errors") {
    const std::string input = "*filter\n-A INPUT -s 10.0.0.1 -j DROP\nCOMMIT\n";
    auto r = run_command(nflens_cmd() + " parse --print -", &input);
    CHECK(r.status == 0);
    CHECK(r.output ==
          "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n-A INPUT -s 10.0.0.1/32 -j DROP\n"
          "COMMIT\n");

    const std::string lines = "-P INPUT DROP\n-N x\n-A INPUT -j x\n";
    r = run_command(nflens_cmd() + " parse --format iptables --lenient --print -", &lines);
    CHECK(r.status == 0);
    CHECK(
        r.output ==
        "*filter\n:INPUT DROP [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:x - [0:0]\n-A INPUT -j x\nCOMMIT\n");
    r = run_command(nflens_cmd() + " parse --format iptables --lenient --table raw --print - 2>/dev/null", &lines);
    CHECK(r.status == 1);  // the raw table has no INPUT chain
    r = run_command(nflens_cmd() + " parse --format iptables --print - 2>/dev/null", &lines);
    CHECK(r.status == 1);  // outside a table block without --lenient

    const std::string partial = "*filter\n:A - [0:0]\n-A A -j RETURN\n-A INPUT -j A\nCOMMIT\n";
    const std::string base_path = golden("restore_commands.rules");
    r = run_command(nflens_cmd() + " parse --print --base " + base_path + " -", &partial);
    CHECK(r.status == 0);
    CHECK(r.output.find(":A - [0:0]\n") != std::string::npos);
    CHECK(r.output.find("-A A -j RETURN\n") != std::string::npos);

    r = run_command(nflens_cmd() + " parse --json --print " + golden("kube_proxy.rules") + " 2>/dev/null");
    CHECK(r.status == 2);
    r = run_command(nflens_cmd() + " parse --format bogus " + golden("kube_proxy.rules") + " 2>/dev/null");
    CHECK(r.status == 2);
    r = run_command(nflens_cmd() + " parse /no/such/file 2>/dev/null");
    CHECK(r.status == 1);
  }

  TEST_CASE("nflens parse, iptables: the summary and --json report the errors of loading the input, as --print") {
    // parses cleanly, but iptables-restore refuses it: "line 2 failed: No chain/target/match by that name"
    const std::string input = "*nat\n-A FOO -j ACCEPT\nCOMMIT\n";
    const std::string located =
        "-:2:1: error[chain-not-found]: chain `FOO` does not exist in table nat (iptables-restore: \"No "
        "chain/target/match by that name\")";
    for (const char* verb : {"", " --json", " --print"}) {
      CAPTURE(verb);
      auto r = run_command(nflens_cmd() + " parse --format iptables" + verb + " - 2>&1 >/dev/null", &input);
      CHECK(r.status == 1);
      CHECK(r.output.rfind(located, 0) == 0);
    }
    auto r = run_command(nflens_cmd() + " parse --format iptables - 2>/dev/null", &input);
    CHECK(r.status == 1);
    CHECK(r.output.find("rules: 1\n") != std::string::npos);  // the file as parsed
    CHECK(r.output.find("diagnostics: 1 errors, 0 warnings (iptables-restore would refuse the input") !=
          std::string::npos);
    r = run_command(nflens_cmd() + " parse --format iptables --json - 2>/dev/null", &input);
    CHECK(r.output.empty());
    // an apply error of the new checks, in every verb
    const std::string drop = "*nat\n:PREROUTING ACCEPT [0:0]\n-A PREROUTING -j DROP\nCOMMIT\n";
    for (const char* verb : {"", " --json", " --print"}) {
      CAPTURE(verb);
      r = run_command(nflens_cmd() + " parse" + verb + " - 2>&1 >/dev/null", &drop);
      CHECK(r.status == 1);
      CHECK(r.output.rfind("-:3:15: error[invalid-value]: DROP is refused in the nat table", 0) == 0);
    }
    // --lenient: `iptables -S` lines load in the table --table names
    const std::string lines = "-P INPUT DROP\n-N x\n-A INPUT -j x\n";
    r = run_command(nflens_cmd() + " parse --format iptables --lenient - 2>&1", &lines);
    CHECK(r.status == 0);
    CHECK(r.output.find("diagnostics: 0 errors, 0 warnings\n") != std::string::npos);
    r = run_command(nflens_cmd() + " parse --format iptables --lenient --json - 2>/dev/null", &lines);
    CHECK(r.status == 0);
    CHECK(nlohmann::json::parse(r.output)["tables"][0]["table"] == "filter");
    r = run_command(nflens_cmd() + " parse --format iptables --lenient --table raw - 2>&1 >/dev/null", &lines);
    CHECK(r.status == 1);  // the raw table has no INPUT chain
    CHECK(r.output.find("error[chain-not-found]") != std::string::npos);
    // the --base files are loaded first for every verb
    const std::string partial = "*nat\n-A OUTPUT -j KUBE-SERVICES\nCOMMIT\n";
    r = run_command(nflens_cmd() + " parse --base " + golden("kube_proxy.rules") + " - 2>&1", &partial);
    CHECK(r.status == 0);
    CHECK(r.output.find("diagnostics: 0 errors") != std::string::npos);
    // without the base, the jump is to a chain of the running ruleset the input is meant for: the summary
    // and --json warn; --print, which builds the state, refuses it as iptables-restore does
    r = run_command(nflens_cmd() + " parse - 2>&1", &partial);
    CHECK(r.status == 0);
    CHECK(r.output.find("-:2:11: warning[dangling-reference]: chain `KUBE-SERVICES` is not in the input") !=
          std::string::npos);
    r = run_command(nflens_cmd() + " parse --json - 2>/dev/null", &partial);
    CHECK(r.status == 0);
    r = run_command(nflens_cmd() + " parse --print - 2>&1 >/dev/null", &partial);
    CHECK(r.status == 1);
    CHECK(r.output.find("error[chain-not-found]: chain `KUBE-SERVICES` does not exist") != std::string::npos);
  }
}
