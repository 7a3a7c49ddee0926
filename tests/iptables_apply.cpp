// SPDX-License-Identifier: MIT
// iptables-restore's refusals that `apply` models beyond missing chains and rule numbers, each checked
// against iptables-restore 1.8.9 (nf_tables backend) in a network namespace: DROP in the nat table,
// REJECT outside the filter table, a target reached from a hook it does not run in, and jump paths of
// more than 15 jumps (loops) from a built-in chain. Each is a located error and its block changes nothing.
#include <nflens/iptables.hpp>

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace ipt = nflens::iptables;
using nflens::error_code;

namespace {

struct loaded {
  ipt::ruleset state;
  std::vector<nflens::diagnostic> diagnostics;
};

loaded load(const std::string& text) {
  auto r = ipt::load("t.rules", text);
  return {std::move(r.value), std::move(r.diagnostics)};
}

// The `n`th diagnostic is an error of `code` at line:column whose message holds `says`.
void check_error(const loaded& l, std::size_t n, error_code code, std::uint32_t line, std::uint32_t column,
                 const std::string& says) {
  INFO(nflens::render(l.diagnostics));
  REQUIRE(l.diagnostics.size() > n);
  const auto& d = l.diagnostics[n];
  CHECK(d.level == nflens::severity::error);
  CHECK(d.code == code);
  REQUIRE(d.file != nullptr);
  const auto at = d.file->locate(d.where);
  CHECK(at.line == line);
  CHECK(at.column == column);
  CHECK(d.message.find(says) != std::string::npos);
}

void check_clean(const loaded& l) {
  INFO(nflens::render(l.diagnostics));
  CHECK(nflens::error_count(l.diagnostics) == 0);
}

const std::string nat_head = "*nat\n:PREROUTING ACCEPT [0:0]\n:X - [0:0]\n:Y - [0:0]\n";  // rules from line 5
const std::string dnat = "-j DNAT --to-destination 1.2.3.4";
const std::string invalid = "failed (Invalid argument)\"";
const std::string too_many_links = "RULE_APPEND failed (Too many links)\"";

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("iptables apply: DROP is refused in the nat table, by every command that names it") {
    const std::string says = "The \"nat\" table is not intended for filtering, the use of DROP is therefore inhibited.";
    for (const char* line : {"-A PREROUTING -j DROP", "-I X -j DROP", "-C X -j DROP", "-D X -j DROP",
                             "-A NOSUCH -j DROP",  // before the chain is looked up
                             "-A X -s 10.0.0.1 -p tcp --dport 22 -j DROP"}) {
      CAPTURE(line);
      const std::string text(line);
      const auto l = load(nat_head + text + "\nCOMMIT\n");
      REQUIRE(l.diagnostics.size() == 1);
      check_error(l, 0, error_code::invalid_value, 5, static_cast<std::uint32_t>(text.find("-j DROP")) + 1, says);
      CHECK(l.state.tables.empty());  // the block changed nothing
    }
    // -P CHAIN DROP too, but not the policy of a `:CHAIN` declaration
    auto l = load(nat_head + "COMMIT\n*nat\n-P PREROUTING DROP\nCOMMIT\n");
    REQUIRE(l.diagnostics.size() == 1);
    check_error(l, 0, error_code::invalid_value, 7, 1, says);
    REQUIRE(l.state.tables.size() == 1);  // the first block
    CHECK(ipt::find_chain(l.state.tables[0], "X") != nullptr);
    l = load("*nat\n:PREROUTING DROP [0:0]\nCOMMIT\n");
    check_clean(l);
    CHECK(ipt::print(l.state).find(":PREROUTING DROP [0:0]\n") != std::string::npos);
    check_clean(load("*filter\n-A INPUT -j DROP\n-P INPUT DROP\nCOMMIT\n*mangle\n-A PREROUTING -j DROP\nCOMMIT\n"));
  }

  TEST_CASE("iptables apply: REJECT is valid only in the filter table") {
    for (const char* table : {"nat", "mangle", "raw", "security"}) {
      CAPTURE(table);
      const std::string chain = std::string(table) == "nat" || std::string(table) == "raw" ? "PREROUTING" : "INPUT";
      const auto l =
          load(std::string("*") + table + "\n:U - [0:0]\n-A U -j ACCEPT\n-A " + chain + " -j REJECT\nCOMMIT\n");
      REQUIRE(l.diagnostics.size() == 1);
      check_error(l, 0, error_code::invalid_value, 4, static_cast<std::uint32_t>(chain.size()) + 5,
                  std::string("REJECT target: only valid in filter table, not ") + table);
      CHECK(l.diagnostics[0].message.find("RULE_APPEND " + invalid) != std::string::npos);
      CHECK(l.state.tables.empty());
    }
    // in a user chain of the filter table, whatever reaches it (filter has only INPUT, FORWARD, OUTPUT)
    check_clean(load("*filter\n:X - [0:0]\n-A X -j REJECT\n-A FORWARD -j X\n-A OUTPUT -g X\nCOMMIT\n"));
  }

  TEST_CASE("iptables apply: a hook-bound target in a built-in chain of another hook is refused as it is added") {
    struct row {
      const char* table;
      const char* chain;
      const char* target;
      bool valid;
    };
    // every row checked with iptables-restore 1.8.9
    const row rows[] = {
        {"nat", "PREROUTING", "-j DNAT --to-destination 1.2.3.4", true},
        {"nat", "INPUT", "-j DNAT --to-destination 1.2.3.4", false},
        {"nat", "OUTPUT", "-j DNAT --to-destination 1.2.3.4", true},
        {"nat", "POSTROUTING", "-j DNAT --to-destination 1.2.3.4", false},
        {"nat", "PREROUTING", "-p tcp -j REDIRECT --to-ports 80", true},
        {"nat", "INPUT", "-p tcp -j REDIRECT --to-ports 80", false},
        {"nat", "OUTPUT", "-p tcp -j REDIRECT --to-ports 80", true},
        {"nat", "POSTROUTING", "-p tcp -j REDIRECT --to-ports 80", false},
        {"nat", "PREROUTING", "-j SNAT --to-source 1.2.3.4", false},
        {"nat", "INPUT", "-j SNAT --to-source 1.2.3.4", true},
        {"nat", "OUTPUT", "-j SNAT --to-source 1.2.3.4", false},
        {"nat", "POSTROUTING", "-j SNAT --to-source 1.2.3.4", true},
        {"nat", "PREROUTING", "-j MASQUERADE", false},
        {"nat", "INPUT", "-j MASQUERADE", false},
        {"nat", "OUTPUT", "-j MASQUERADE", false},
        {"nat", "POSTROUTING", "-j MASQUERADE", true},
        {"mangle", "PREROUTING", "-p tcp -j TPROXY --on-port 80", true},
        {"mangle", "INPUT", "-p tcp -j TPROXY --on-port 80", false},
        {"mangle", "FORWARD", "-p tcp -j TPROXY --on-port 80", false},
        {"mangle", "OUTPUT", "-p tcp -j TPROXY --on-port 80", false},
        {"mangle", "POSTROUTING", "-p tcp -j TPROXY --on-port 80", false},
    };
    for (const auto& r : rows) {
      const std::string line = std::string("-A ") + r.chain + " " + r.target;
      CAPTURE(r.table);
      CAPTURE(line);
      const auto l = load(std::string("*") + r.table + "\n" + line + "\nCOMMIT\n");
      if (r.valid) {
        check_clean(l);
        continue;
      }
      REQUIRE(l.diagnostics.size() == 1);
      check_error(l, 0, error_code::invalid_value, 2, static_cast<std::uint32_t>(line.find(" -j ")) + 2,
                  std::string("not in ") + r.chain + " (iptables-restore: \"RULE_APPEND " + invalid);
      CHECK(l.state.tables.empty());
    }
    // the rule is not added: deleting it again in the block does not help
    const auto l = load(nat_head + "-A INPUT " + dnat + "\n-D INPUT " + dnat + "\nCOMMIT\n");
    REQUIRE(l.diagnostics.size() == 2);
    check_error(l, 0, error_code::invalid_value, 5, 10, "valid only in PREROUTING and OUTPUT, not in INPUT");
    CHECK(l.diagnostics[1].code == error_code::rule_not_found);
    // -I and -R say so in iptables-restore's words
    auto ins = load(nat_head + "-I POSTROUTING -j REDIRECT\nCOMMIT\n");
    check_error(ins, 0, error_code::invalid_value, 5, 16, "\"RULE_INSERT " + invalid);
    ipt::ruleset state;
    state.applied = true;
    auto base = ipt::parse("base.rules", "*nat\n-A INPUT -j ACCEPT\nCOMMIT\n");
    REQUIRE(ipt::apply(state, base.value).empty());
    auto replace = ipt::parse("r.rules", "*nat\n-R INPUT 1 " + dnat + "\nCOMMIT\n");
    const auto ds = ipt::apply(state, replace.value, {.noflush = true});
    REQUIRE(ds.size() == 1);
    CHECK(ds[0].message.find("\"RULE_REPLACE " + invalid) != std::string::npos);
    CHECK(ds[0].file->locate(ds[0].where).line == 2);
    CHECK(ipt::print(state).find("-A INPUT -j ACCEPT\n") != std::string::npos);
  }

  TEST_CASE("iptables apply: a hook-bound target reached through user chains from another hook") {
    // the DNAT rule completes the path: reported there
    auto l = load(nat_head + "-A INPUT -j X\n-A X " + dnat + "\nCOMMIT\n");
    REQUIRE(l.diagnostics.size() == 1);
    check_error(l, 0, error_code::invalid_value, 6, 6,
                "target DNAT is valid only in PREROUTING and OUTPUT, and chain `X` is reached from INPUT (INPUT -> X)");
    CHECK(l.diagnostics[0].message.find("\"RULE_APPEND " + invalid) != std::string::npos);
    CHECK(l.state.tables.empty());
    // the last jump completes it: reported at the jump, with a note at the target
    l = load(nat_head + "-A X " + dnat + "\n-A INPUT -j Y\n-A Y -j X\nCOMMIT\n");
    REQUIRE(l.diagnostics.size() == 1);
    check_error(l, 0, error_code::invalid_value, 7, 6,
                "this jump lets INPUT reach target DNAT in chain `X` (INPUT -> Y -> X)");
    REQUIRE(l.diagnostics[0].notes.size() == 1);
    CHECK(l.diagnostics[0].notes[0].file->locate(l.diagnostics[0].notes[0].where).line == 5);
    // -g goes there as -j does; -I is named
    l = load(nat_head + "-A X -j MASQUERADE\n-I OUTPUT -g X\nCOMMIT\n");
    check_error(l, 0, error_code::invalid_value, 6, 11, "this jump lets OUTPUT reach target MASQUERADE");
    CHECK(l.diagnostics[0].message.find("\"RULE_INSERT " + invalid) != std::string::npos);
    // mangle: TPROXY only from PREROUTING
    l = load("*mangle\n:T - [0:0]\n-A T -p tcp -j TPROXY --on-port 80\n-A PREROUTING -j T\n-A FORWARD -j T\nCOMMIT\n");
    check_error(l, 0, error_code::invalid_value, 5, 12, "this jump lets FORWARD reach target TPROXY in chain `T`");
    // accepted: reached only from hooks it runs in, or not reached at all
    check_clean(load(nat_head + "-A OUTPUT -j X\n-A PREROUTING -j Y\n-A Y -j X\n-A X " + dnat + "\nCOMMIT\n"));
    check_clean(load(nat_head + "-A X " + dnat + "\n-A Y -j SNAT --to-source 1.2.3.4\n-A X -j Y\nCOMMIT\n"));
    // the table is checked as the block leaves it: a path undone before COMMIT passes
    l = load(nat_head + "-A INPUT -j X\n-A X " + dnat + "\n-D INPUT -j X\nCOMMIT\n");
    check_clean(l);
    CHECK(ipt::print(l.state).find("-A X " + dnat + "\n") != std::string::npos);
    check_clean(load(nat_head + "-A INPUT -j X\n-A X " + dnat + "\n-F X\nCOMMIT\n"));
  }

  TEST_CASE("iptables apply: at most 15 nested jumps from a built-in chain, so a loop it reaches is refused") {
    auto ladder = [](int chains, const char* how) {
      std::string text = "*filter\n";
      for (int i = 1; i <= chains; ++i) text += ":C" + std::to_string(i) + " - [0:0]\n";
      text += "-A INPUT -j C1\n";
      for (int i = 1; i < chains; ++i)
        text += "-A C" + std::to_string(i) + " " + how + " C" + std::to_string(i + 1) + "\n";
      return text + "COMMIT\n";
    };
    check_clean(load(ladder(15, "-j")));  // INPUT -> C1 ... -> C15: 15 jumps
    for (const char* how : {"-j", "-g"}) {
      CAPTURE(how);
      const auto l = load(ladder(16, how));
      REQUIRE(l.diagnostics.size() == 1);
      // line 33, `-A C15 -j C16`, as iptables-restore reports it
      check_error(l, 0, error_code::invalid_value, 33, 8, "a path of 16 jumps from INPUT (INPUT -> C1 -> C2");
      CHECK(l.diagnostics[0].message.find(too_many_links) != std::string::npos);
      CHECK(l.state.tables.empty());
    }
    // a loop nothing reaches is accepted; the jump that reaches it is refused
    auto l = load(nat_head + "-A X -j Y\n-A Y -j X\nCOMMIT\n");
    check_clean(l);
    CHECK(ipt::print(l.state).find("-A X -j Y\n-A Y -j X\n") != std::string::npos);
    l = load(nat_head + "-A PREROUTING -j X\n-A X -j Y\n-A Y -j X\nCOMMIT\n");
    REQUIRE(l.diagnostics.size() == 1);
    check_error(l, 0, error_code::invalid_value, 7, 6,
                "a loop of jumps is reached from PREROUTING (PREROUTING -> X -> Y -> X)");
    CHECK(l.diagnostics[0].message.find(too_many_links) != std::string::npos);
    l = load("*filter\n:X - [0:0]\n-A INPUT -j X\n-A X -j X\nCOMMIT\n");
    check_error(l, 0, error_code::invalid_value, 4, 6, "(INPUT -> X -> X)");
    // onto a running ruleset (--noflush): the loop is there, the block reaches it
    ipt::ruleset state;
    state.applied = true;
    auto first = ipt::parse("first.rules", nat_head + "-A X -j Y\n-A Y -j X\nCOMMIT\n");
    REQUIRE(ipt::apply(state, first.value).empty());
    const std::string before = ipt::print(state);
    auto second = ipt::parse("second.rules", "*nat\n-A OUTPUT -j ACCEPT\n-A OUTPUT -j Y\nCOMMIT\n");
    const auto ds = ipt::apply(state, second.value, {.noflush = true});
    REQUIRE(ds.size() == 1);
    CHECK(ds[0].file->name() == "second.rules");
    CHECK(ds[0].file->locate(ds[0].where).line == 3);
    CHECK(ds[0].message.find("(OUTPUT -> Y -> X -> Y)") != std::string::npos);
    CHECK(ipt::print(state) == before);
    // a loop broken again before COMMIT passes
    check_clean(load(nat_head + "-A INPUT -j X\n-A X -j Y\n-A Y -j X\n-D Y -j X\nCOMMIT\n"));
  }

  TEST_CASE("iptables apply: outside_targets takes a jump to a chain the block never names as the running ruleset's") {
    // a kube-proxy partial sync: KUBE-SVC-B is rewritten, KUBE-SVC-A is left alone in the running ruleset
    const std::string text =
        "*nat\n:KUBE-SERVICES - [0:0]\n:KUBE-SVC-B - [0:0]\n-A KUBE-SERVICES -d 10.0.0.1/32 -j KUBE-SVC-A\n"
        "-A KUBE-SERVICES -d 10.0.0.2/32 -j KUBE-SVC-B\n-A KUBE-SVC-B -j DNAT --to-destination 10.1.0.1\nCOMMIT\n";
    auto parsed = ipt::parse("partial.rules", text);
    REQUIRE(parsed.ok());
    ipt::ruleset strict;
    strict.applied = true;
    const auto refused = ipt::apply(strict, parsed.value);
    REQUIRE(refused.size() == 1);
    CHECK(refused[0].code == error_code::chain_not_found);
    ipt::ruleset described;
    described.applied = true;
    const auto ds = ipt::apply(described, parsed.value, {.outside_targets = true});
    REQUIRE(ds.size() == 1);
    CHECK(ds[0].level == nflens::severity::warning);
    CHECK(ds[0].code == error_code::dangling_reference);
    CHECK(ds[0].file->locate(ds[0].where).line == 4);
    CHECK(ds[0].file->locate(ds[0].where).column == 33);
    // only jump targets: a rule in a chain that does not exist, or a jump to a chain the block declares
    // later, is still an error
    auto more = ipt::parse("more.rules", "*nat\n-A FOO -j ACCEPT\n-A PREROUTING -j LATER\n:LATER - [0:0]\nCOMMIT\n");
    REQUIRE(more.ok());
    ipt::ruleset state;
    state.applied = true;
    const auto errors = ipt::apply(state, more.value, {.outside_targets = true});
    REQUIRE(errors.size() == 2);
    CHECK(errors[0].code == error_code::chain_not_found);
    CHECK(errors[0].file->locate(errors[0].where).line == 2);
    CHECK(errors[1].code == error_code::chain_not_found);
    CHECK(errors[1].file->locate(errors[1].where).line == 3);
  }

  TEST_CASE("iptables apply: a rule derived by -E or an address list keeps its own line, the new names come along") {
    // base dump, then a --noflush restore that renames the chain B (its rules and the jump to it follow)
    auto base = ipt::load("base.rules",
                          "*filter\n:INPUT ACCEPT [0:0]\n:B - [0:0]\n-A INPUT -s 10.0.0.1,10.0.0.2 -j B\n"
                          "-A B -p tcp -m tcp --dport 22 -j ACCEPT\nCOMMIT\n");
    REQUIRE(base.ok());
    auto update = ipt::parse("update.rules", "*filter\n-E B RENAMED\nCOMMIT\n");
    REQUIRE(update.ok());
    ipt::ruleset state = std::move(base.value);
    REQUIRE(ipt::apply(state, update.value, {.noflush = true}).empty());
    CHECK(ipt::print(state) ==
          "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:RENAMED - [0:0]\n"
          "-A INPUT -s 10.0.0.1/32 -j RENAMED\n"
          "-A INPUT -s 10.0.0.2/32 -j RENAMED\n-A RENAMED -p tcp -m tcp --dport 22 -j ACCEPT\nCOMMIT\n");
    const auto& t = state.tables.at(0);
    REQUIRE(t.rules.size() == 3);
    // the renamed rule is still located in the dump it came from, at its own line
    CHECK(t.rules[2].chain() == "RENAMED");
    CHECK(t.rules[2].file->name() == "base.rules");
    CHECK(t.rules[2].file->locate(t.rules[2].where).line == 5);
    CHECK(t.rules[2].matches().size() == 1);
    CHECK(t.rules[2].matches()[0].options().size() == 1);
    // one rule per address of the list, each with the jump, renamed, and the address's own span
    CHECK(t.rules[0].target().name == "RENAMED");
    REQUIRE(t.rules[0].source().size() == 1);
    REQUIRE(t.rules[1].source().size() == 1);
    CHECK(t.rules[0].file->text(t.rules[0].source()[0].where) == "10.0.0.1");
    CHECK(t.rules[1].file->text(t.rules[1].source()[0].where) == "10.0.0.2");
    CHECK(t.rules[1].file->text(t.rules[1].target().where) == "-j B");  // as written, before the rename
  }

  TEST_CASE("iptables AST: a rule is 80 bytes and a match 32, so that a dump parses into under 3 times its size") {
    CHECK(sizeof(ipt::rule) <= 80);
    CHECK(sizeof(ipt::match) <= 32);
    CHECK(sizeof(ipt::chain) <= 64);
    CHECK(sizeof(ipt::option) <= 24);
  }

  TEST_CASE("iptables apply: -I with address lists inserts the last pair first; -Z zeroes rule counters too") {
    // both checked with iptables-restore 1.8.9 in a network namespace (found by a new user's differential
    // run: nflens kept the written order, and -Z zeroed only chain counters)
    auto inserted = ipt::load("i.rules",
                              "*filter\n:X - [0:0]\n-A X -j ACCEPT\n"
                              "-I X 1 -s 7.7.7.7,8.8.8.8 -d 1.1.1.1,2.2.2.2 -j DROP\nCOMMIT\n");
    REQUIRE(inserted.ok());
    CHECK(ipt::print(inserted.value) ==
          "*filter\n:INPUT ACCEPT [0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:X - [0:0]\n"
          "-A X -s 8.8.8.8/32 -d 2.2.2.2/32 -j DROP\n-A X -s 8.8.8.8/32 -d 1.1.1.1/32 -j DROP\n"
          "-A X -s 7.7.7.7/32 -d 2.2.2.2/32 -j DROP\n-A X -s 7.7.7.7/32 -d 1.1.1.1/32 -j DROP\n-A X -j ACCEPT\n"
          "COMMIT\n");

    auto base = ipt::load("base.rules",
                          "*filter\n:INPUT ACCEPT [5:5]\n:X - [0:0]\n[3:3] -A INPUT -j ACCEPT\n[4:4] -A INPUT -j DROP\n"
                          "[6:6] -A X -j ACCEPT\nCOMMIT\n");
    REQUIRE(base.ok());
    ipt::ruleset state = std::move(base.value);
    const ipt::print_options with_counters{.counters = true};
    auto zero = [&](const std::string& line) {
      auto update = ipt::parse("zero.rules", "*filter\n" + line + "\nCOMMIT\n");
      REQUIRE(update.ok());
      REQUIRE(ipt::apply(state, update.value, {.noflush = true}).empty());
      return ipt::print(state, with_counters);
    };
    const std::string head = "*filter\n:INPUT ACCEPT ";
    CHECK(zero("-Z INPUT 2") == head +
                                   "[5:5]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:X - [0:0]\n"
                                   "[3:3] -A INPUT -j ACCEPT\n[0:0] -A INPUT -j DROP\n[6:6] -A X -j ACCEPT\nCOMMIT\n");
    CHECK(zero("-Z INPUT") == head +
                                 "[0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:X - [0:0]\n"
                                 "[0:0] -A INPUT -j ACCEPT\n[0:0] -A INPUT -j DROP\n[6:6] -A X -j ACCEPT\nCOMMIT\n");
    CHECK(zero("-Z") == head +
                           "[0:0]\n:FORWARD ACCEPT [0:0]\n:OUTPUT ACCEPT [0:0]\n:X - [0:0]\n"
                           "[0:0] -A INPUT -j ACCEPT\n[0:0] -A INPUT -j DROP\n[0:0] -A X -j ACCEPT\nCOMMIT\n");
  }
}
