// SPDX-License-Identifier: MIT
// `nflens convert` and `nflens parse` on libnftables JSON as a user runs them, checked against the
// library calls they stand for: `convert --to nft-json` is nft::write_json of the parsed text,
// `convert --to nft` of JSON is nft::write_text of nft::parse_json (nft::print of nft::to_ruleset when
// all can be said in nft text), `parse --format auto` recognises JSON, and bad input gives located
// errors, exit 1 and nothing on stdout.
#include <nflens/nft.hpp>
#include <nflens/nft_json.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernel_support.hpp"
#include "support.hpp"

#include <string>

using namespace nflens::test;
namespace nft = nflens::nft;

namespace {

std::string nflens_cmd() { return std::string(NFLENS_BUILD_ROOT) + "/nflens"; }
std::string fixture(const char* name) { return (source_root() / "tests/fixtures/nft_json" / name).string(); }

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("nflens convert: nft text to JSON and back to text, as the library does it") {
    const std::string text = slurp(fixture("nat.nft"));
    auto to_json = run_command(nflens_cmd() + " convert --to nft-json " + fixture("nat.nft"));
    REQUIRE(to_json.status == 0);
    const auto parsed = nft::parse("nat.nft", text);
    REQUIRE(parsed.ok());
    CHECK(to_json.output == nft::write_json(parsed.value).value);
    const auto doc = nlohmann::json::parse(to_json.output);
    CHECK(doc["nftables"][0]["metainfo"]["json_schema_version"] == 1);
    CHECK(doc["nftables"][1]["table"]["name"] == "nat");

    // and back: standard input, format recognised as JSON
    auto to_text = run_command(nflens_cmd() + " convert --to nft -", &to_json.output);
    REQUIRE(to_text.status == 0);
    const auto from_json = nft::parse_json("-", to_json.output);
    REQUIRE(from_json.ok());
    const auto applied = nft::to_ruleset(from_json.value);
    REQUIRE(applied.ok());
    CHECK(to_text.output == nft::print(applied.value));
    CHECK(to_text.output == nft::write_text(from_json.value).value);
    // the listing nft 1.0.6 printed, as nft 1.1 prints it: the output-hook chain's priority is named
    CHECK(to_text.output.find("type nat hook output priority dstnat - 10; policy accept;") != std::string::npos);
    CHECK(to_text.output.find("dnat to ip daddr . tcp dport map @dnat_targets") != std::string::npos);
    // the text again gives the same JSON
    auto again = run_command(nflens_cmd() + " convert --to nft-json -", &to_text.output);
    REQUIRE(again.status == 0);
    CHECK(again.output == to_json.output);

    // --pretty is the same value; --commands is the command form nft -j -f reads
    auto pretty = run_command(nflens_cmd() + " convert --to nft-json --pretty " + fixture("nat.nft"));
    REQUIRE(pretty.status == 0);
    CHECK(nlohmann::json::parse(pretty.output) == doc);
    auto commands = run_command(nflens_cmd() + " convert --to nft-json --commands " + fixture("nat.nft"));
    REQUIRE(commands.status == 0);
    CHECK(nlohmann::json::parse(commands.output)["nftables"][1].contains("add"));
  }

  TEST_CASE("nflens convert --to nft: JSON commands give the ruleset they build") {
    const std::string commands =
        R"({"nftables": [{"add": {"table": {"family": "ip", "name": "t"}}}, )"
        R"({"add": {"chain": {"family": "ip", "table": "t", "name": "c", "type": "filter", "hook": "input", "prio": 0, "policy": "drop"}}}, )"
        R"({"add": {"rule": {"family": "ip", "table": "t", "chain": "c", "expr": [{"match": {"op": "==", "left": {"payload": {"protocol": "tcp", "field": "dport"}}, "right": 22}}, {"accept": null}]}}}, )"
        R"({"insert": {"rule": {"family": "ip", "table": "t", "chain": "c", "expr": [{"match": {"op": "==", "left": {"meta": {"key": "iifname"}}, "right": "lo"}}, {"accept": null}]}}}]})";
    auto r = run_command(nflens_cmd() + " convert --to nft -", &commands);
    REQUIRE(r.status == 0);
    CHECK(r.output ==
          "table ip t {\n\tchain c {\n\t\ttype filter hook input priority filter; policy drop;\n"
          "\t\tiifname \"lo\" accept\n\t\ttcp dport 22 accept\n\t}\n}\n");
    r = run_command(nflens_cmd() + " convert --to nft --handles -", &commands);
    REQUIRE(r.status == 0);
    CHECK(r.output.find("table ip t { # handle 1\n") == 0);

    // a command that cannot be applied: located error, exit 1, nothing written
    const std::string dangling =
        R"({"nftables": [{"add": {"chain": {"family": "ip", "table": "nope", "name": "c"}}}]})";
    r = run_command(nflens_cmd() + " convert --to nft - 2>/dev/null", &dangling);
    CHECK(r.status == 1);
    CHECK(r.output.empty());
  }

  TEST_CASE("nflens parse of nft input: every verb reports what applying the input finds") {
    // found by a new user: the summary said "0 errors" for input `--print` refused
    const std::string twice = "create table ip t\ncreate table ip t\n";
    auto r = run_command(nflens_cmd() + " parse - 2>&1", &twice);
    CHECK(r.status == 1);
    CHECK(r.output.find("-:2:1: error[object-exists]") != std::string::npos);
    r = run_command(nflens_cmd() + " parse --json - 2>/dev/null", &twice);
    CHECK(r.status == 1);
    CHECK(r.output.empty());
    // a fragment's reference to a chain it does not define: a warning when describing it, an error when
    // building the ruleset nft -f would
    const std::string fragment = "table ip t {\n\tchain c {\n\t\tjump elsewhere\n\t}\n}\n";
    r = run_command(nflens_cmd() + " parse - 2>&1", &fragment);
    CHECK(r.status == 0);
    CHECK(r.output.find("-:3:3: warning[dangling-reference]: jump or goto to chain elsewhere") !=
          std::string::npos);
    r = run_command(nflens_cmd() + " parse --print - 2>&1", &fragment);
    CHECK(r.status == 1);
    CHECK(r.output.find("error[chain-not-found]") != std::string::npos);
  }

  TEST_CASE("nflens convert: input nft -f would refuse is refused, with nothing written") {
    // found by a new user: convert wrote JSON for input every other verb refuses
    const std::string inputs[] = {
        "add rule ip t c accept\n",                                                       // no such table
        "table ip t {\n\tchain c {\n\t\tjump nowhere\n\t}\n}\n",                        // no such chain
        "table ip t {\n\tchain c {\n\t\tip saddr @nos accept\n\t}\n}\n",                // no such set
        "table ip t {\n\tchain c {\n\t}\n}\ncreate chain ip t c\n",                      // exists
        "table ip t {\n\tchain c {\n\t}\n}\ndelete chain ip t d\n",                      // does not exist
    };
    const char* codes[] = {"object-not-found", "chain-not-found", "object-not-found", "chain-exists",
                           "chain-not-found"};
    for (std::size_t i = 0; i < std::size(inputs); ++i) {
      CAPTURE(inputs[i]);
      for (const char* to : {"nft-json", "nft"}) {
        const auto out = run_command(nflens_cmd() + " convert --to " + to + " - 2>/dev/null", &inputs[i]);
        CHECK(out.status == 1);
        CHECK(out.output.empty());
      }
      const auto err = run_command(nflens_cmd() + " convert --to nft-json - 2>&1", &inputs[i]);
      CHECK(err.output.find(fmt::format("error[{}]", codes[i])) != std::string::npos);
    }
    // what loads still converts
    const std::string fine = "table ip t {\n\tchain c {\n\t\tjump d\n\t}\n\tchain d {\n\t}\n}\n";
    const auto ok = run_command(nflens_cmd() + " convert --to nft-json - 2>&1", &fine);
    CHECK(ok.status == 0);
    CHECK(ok.output.find(R"({"jump": {"target": "d"}})") != std::string::npos);
  }

  TEST_CASE("nflens convert --to nft --nft-version 1.0.6: priorities nft 1.0.6 reads") {
    // found by a new user: `nft -j list` of a nat output chain (prio -100) converted to text read
    // `priority dstnat`, as nft 1.1 lists it, which nft 1.0.6 refuses for the output hook
    const std::string doc =
        R"({"nftables": [{"table": {"family": "ip", "name": "t", "handle": 1}}, )"
        R"({"chain": {"family": "ip", "table": "t", "name": "o", "handle": 1, "type": "nat", "hook": "output", "prio": -100, "policy": "accept"}}, )"
        R"({"chain": {"family": "ip", "table": "t", "name": "i", "handle": 2, "type": "nat", "hook": "input", "prio": 100, "policy": "accept"}}, )"
        R"({"chain": {"family": "ip", "table": "t", "name": "p", "handle": 3, "type": "nat", "hook": "prerouting", "prio": -90, "policy": "accept"}}]})";
    auto r = run_command(nflens_cmd() + " convert --to nft -", &doc);
    REQUIRE(r.status == 0);
    CHECK(r.output.find("type nat hook output priority dstnat;") != std::string::npos);
    CHECK(r.output.find("type nat hook input priority srcnat;") != std::string::npos);
    r = run_command(nflens_cmd() + " convert --to nft --nft-version 1.0.6 -", &doc);
    REQUIRE(r.status == 0);
    CHECK(r.output.find("type nat hook output priority -100;") != std::string::npos);
    CHECK(r.output.find("type nat hook input priority 100;") != std::string::npos);
    CHECK(r.output.find("type nat hook prerouting priority dstnat + 10;") != std::string::npos);
    // and ct timeout policies in seconds, as 1.0.6 lists and reads them (found by a new user: `1m40s`)
    const std::string ct =
        R"({"nftables": [{"table": {"family": "ip", "name": "t", "handle": 1}}, )"
        R"({"ct timeout": {"family": "ip", "name": "c", "table": "t", "handle": 2, "protocol": "tcp", "l3proto": "ip", "policy": {"established": 100, "close": 5}}}]})";
    r = run_command(nflens_cmd() + " convert --to nft --nft-version 1.0.6 -", &ct);
    REQUIRE(r.status == 0);
    CHECK(r.output.find("policy = { established : 100, close : 5 }") != std::string::npos);
    r = run_command(nflens_cmd() + " convert --to nft -", &ct);
    REQUIRE(r.status == 0);
    CHECK(r.output.find("policy = { established : 1m40s, close : 5s }") != std::string::npos);
    // and fib's presence test as 1.0.6 lists it (`oif missing`; 1.1's `check missing` is a syntax error there)
    const std::string fib =
        R"({"nftables": [{"table": {"family": "ip", "name": "t", "handle": 1}}, )"
        R"({"chain": {"family": "ip", "table": "t", "name": "c", "handle": 1}}, )"
        R"({"rule": {"family": "ip", "table": "t", "chain": "c", "handle": 2, "expr": [{"match": {"op": "==", "left": {"fib": {"result": "oif", "flags": ["saddr", "iif"]}}, "right": false}}, {"drop": null}]}}]})";
    r = run_command(nflens_cmd() + " convert --to nft --nft-version 1.0.6 -", &fib);
    REQUIRE(r.status == 0);
    CHECK(r.output.find("\t\tfib saddr . iif oif missing drop\n") != std::string::npos);
    r = run_command(nflens_cmd() + " convert --to nft -", &fib);
    REQUIRE(r.status == 0);
    CHECK(r.output.find("\t\tfib saddr . iif check missing drop\n") != std::string::npos);
  }

  TEST_CASE("nflens convert --to nft and parse --print: a name nft text cannot hold is an error, not text") {
    const std::string doc =
        R"({"nftables": [{"table": {"family": "ip", "name": "t"}}, {"chain": {"family": "ip", "table": "t", "name": "my chain"}}]})";
    for (const char* cmd : {" convert --to nft - 2>&1 >/dev/null", " parse --print - 2>&1 >/dev/null"}) {
      CAPTURE(cmd);
      auto err = run_command(nflens_cmd() + cmd, &doc);
      CHECK(err.status == 1);
      CHECK(err.output.find("-:1:67: error[not-translatable]: chain name \"my chain\" cannot be written in nft text") ==
            0);
      auto out =
          run_command(nflens_cmd() + std::string(cmd).substr(0, std::string(cmd).find(" 2>")) + " 2>/dev/null", &doc);
      CHECK(out.output.empty());
    }
  }

  TEST_CASE("nflens parse --format auto recognises libnftables JSON") {
    auto to_json = run_command(nflens_cmd() + " convert --to nft-json " + fixture("filter.nft"));
    REQUIRE(to_json.status == 0);
    auto summary = run_command(nflens_cmd() + " parse -", &to_json.output);
    CHECK(summary.status == 0);
    auto summary_text = run_command(nflens_cmd() + " parse " + fixture("filter.nft"));
    CHECK(summary_text.status == 0);
    CHECK(summary.output.find("tables: inet filter\n") != std::string::npos);
    CHECK(summary.output == summary_text.output);
    auto printed = run_command(nflens_cmd() + " parse --print -", &to_json.output);
    REQUIRE(printed.status == 0);
    auto printed_text = run_command(nflens_cmd() + " parse --print " + fixture("filter.nft"));
    REQUIRE(printed_text.status == 0);
    CHECK(printed.output == printed_text.output);

    // broken JSON: a located error, exit 1
    const std::string bad = "{\"nftables\": [\n  {\"table\": {\"family\": \"ip\" \"name\": \"t\"}}\n]}";
    auto err = run_command(nflens_cmd() + " parse - 2>&1", &bad);
    CHECK(err.status == 1);
    CHECK(err.output.find("-:2:29: error[syntax]") != std::string::npos);
  }
}
