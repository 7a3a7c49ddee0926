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
}
