// SPDX-License-Identifier: MIT
// `nft -f` semantics of nft::apply on scripts of our own: what each verb does to tables, chains,
// rules, sets, elements, flowtables and objects, the handles the kernel would give, the transaction
// (a failing command leaves the ruleset as it was) and the located diagnostics of failures.
// tests/nft_kernel.cpp checks the same behaviours against the real nft in a network namespace.
#include <nflens/nft.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

namespace nft = nflens::nft;

namespace {

nft::script parse(const std::string& text, const std::string& name = "<test>") {
  auto parsed = nft::parse(name, text);
  REQUIRE_MESSAGE(parsed.ok(), nflens::render(parsed.diagnostics));
  return std::move(parsed.value);
}

/// Applies `text` to `rs`; returns the rendered diagnostics (empty when it applied cleanly).
std::string run(nft::ruleset& rs, const std::string& text, const std::string& name = "<test>") {
  return nflens::render(nft::apply(rs, parse(text, name)));
}

std::string listing(const nft::ruleset& rs, bool handles = false) { return nft::print(rs, {.handles = handles}); }

const nft::ruleset_chain& chain_of(const nft::ruleset& rs, std::string_view table, std::string_view chain) {
  for (const auto& t : rs.tables)
    if (t.name == table)
      for (const auto& c : t.chains)
        if (c.name == chain) return c;
  FAIL("no chain " << chain);
  throw 0;
}

std::string rules_of(const nft::ruleset& rs, std::string_view table, std::string_view chain) {
  std::string out;
  for (const auto& r : chain_of(rs, table, chain).rules) out += nft::print(r, nft::family::ip) + "\n";
  return out;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("nft apply: a policy needs a base chain; given to an existing base chain it changes its policy") {
    // the kernel refuses a policy on a chain without a hook ("Operation not supported"; a tester's finding)
    nft::ruleset rs;
    CHECK(run(rs, "add table ip t\nadd chain ip t c\nadd chain ip t input { type filter hook input priority 0; }\n").empty());
    CHECK(run(rs, "add chain ip t c { policy drop; }\n").find("error[invalid-value]: chain c: a policy on a chain without "
                                                                "a hook (Operation not supported)") != std::string::npos);
    CHECK(run(rs, "add chain ip t d { policy drop; }\n").find("a policy on a chain without a hook") != std::string::npos);
    CHECK(run(rs, "add chain ip t input { policy drop; }\n").empty());
    CHECK(chain_of(rs, "t", "input").policy == nft::chain_policy::drop);
    CHECK(chain_of(rs, "t", "c").policy == nft::chain_policy::unspecified);
    CHECK(listing(rs).find("\tchain d") == std::string::npos);
  }

  TEST_CASE("nft apply: add is idempotent for tables, chains and sets; create is not") {
    nft::ruleset rs;
    CHECK(run(rs, "add table ip t\nadd chain ip t c\nadd set ip t s { type ipv4_addr; }\n").empty());
    CHECK(run(rs, "add table ip t\nadd chain ip t c\nadd set ip t s { type ipv4_addr; }\n").empty());
    REQUIRE(rs.tables.size() == 1);
    CHECK(rs.tables[0].chains.size() == 1);
    CHECK(rs.tables[0].sets.size() == 1);
    const std::string before = listing(rs);
    const std::string err = run(rs, "create chain ip t c\n", "create.nft");
    CHECK(err.find("create.nft:1:8: error[chain-exists]: chain c already exists in table ip t") != std::string::npos);
    CHECK(listing(rs) == before);
    CHECK(run(rs, "create table ip t\n").find("error[object-exists]") != std::string::npos);
    CHECK(run(rs, "create set ip t s { type ipv4_addr; }\n").find("error[object-exists]") != std::string::npos);
    CHECK(run(rs, "create table ip6 t\ncreate chain ip6 t c\n").empty());
    CHECK(rs.tables.size() == 2);
  }

  TEST_CASE("nft apply: rule placement by position, handle and index, replace and delete") {
    nft::ruleset rs;
    REQUIRE(run(rs, "table ip t {\n\tchain c1 {\n\t\taccept\n\t\tdrop\n\t\treturn\n\t}\n}\n").empty());
    // handles: chain 1, rules 2, 3, 4 (as the kernel numbers them)
    REQUIRE(run(rs,
                "replace rule ip t c1 handle 3 counter\n"
                "add rule ip t c1 index 0 log\n"
                "insert rule ip t c1 index 0 meta mark 1\n"
                "add rule ip t c1 position 4 ip saddr 1.2.3.4\n"
                "insert rule ip t c1 handle 4 ip saddr 4.3.2.1\n")
                .empty());
    // The same script gave this listing from nft 1.0.6 in a network namespace.
    CHECK(listing(rs, true) ==
          "table ip t { # handle 1\n"
          "\tchain c1 { # handle 1\n"
          "\t\tmeta mark 0x00000001 # handle 6\n"
          "\t\taccept # handle 2\n"
          "\t\tlog # handle 5\n"
          "\t\tcounter packets 0 bytes 0 # handle 3\n"
          "\t\tip saddr 4.3.2.1 # handle 8\n"
          "\t\treturn # handle 4\n"
          "\t\tip saddr 1.2.3.4 # handle 7\n"
          "\t}\n"
          "}\n");
    CHECK(run(rs, "delete rule ip t c1 handle 5\ninsert rule ip t c1 drop\n").empty());
    CHECK(
        rules_of(rs, "t", "c1") ==
        "drop\nmeta mark 0x00000001\naccept\ncounter packets 0 bytes 0\nip saddr 4.3.2.1\nreturn\nip saddr 1.2.3.4\n");
    CHECK(run(rs, "delete rule ip t c1 handle 42\n").find("error[rule-not-found]: no rule with handle 42") !=
          std::string::npos);
    CHECK(run(rs, "add rule ip t c1 position 42 accept\n").find("error[rule-not-found]") != std::string::npos);
    CHECK(run(rs, "add rule ip t c1 index 7 accept\n").find("error[rule-not-found]") != std::string::npos);
    // position 0 (or handle 0) is no position: added at the end, inserted at the start (found by a new user;
    // nft 1.0.6 in a network namespace gives the same order)
    nft::ruleset zero;
    REQUIRE(run(zero, "add table ip t\nadd chain ip t c\nadd rule ip t c tcp dport 22 accept\n"
                      "insert rule ip t c position 0 udp dport 53 accept\n"
                      "add rule ip t c position 0 udp dport 54 accept\n"
                      "add rule ip t c handle 0 udp dport 55 accept\n")
                .empty());
    CHECK(rules_of(zero, "t", "c") == "udp dport 53 accept\ntcp dport 22 accept\nudp dport 54 accept\nudp dport 55 accept\n");
    CHECK(run(rs, "destroy rule ip t c1 handle 42\n").empty());
  }

  TEST_CASE("nft apply: the handles of a table block follow nft's expansion order") {
    nft::ruleset rs;
    REQUIRE(run(rs,
                "table ip t {\n"
                "  set s { type ipv4_addr; }\n"
                "  chain c1 { ip saddr { 1.1.1.1, 2.2.2.2 } accept; tcp dport { 22, 23 } drop; ip daddr @s counter; }\n"
                "  chain c2 { type filter hook input priority 0; }\n"
                "  counter k { }\n"
                "}\n"
                "table ip6 u {\n"
                "  chain x { }\n"
                "}\n")
                .empty());
    // As nft numbers them (tests/nft_kernel.cpp checks against nft itself): chains first, then
    // objects, sets, and the rules; each anonymous set takes a handle before its rule.
    CHECK(listing(rs, true) ==
          "table ip t { # handle 1\n"
          "\tcounter k { # handle 3\n"
          "\t\tpackets 0 bytes 0\n"
          "\t}\n"
          "\n"
          "\tset s { # handle 4\n"
          "\t\ttype ipv4_addr\n"
          "\t}\n"
          "\n"
          "\tchain c1 { # handle 1\n"
          "\t\tip saddr { 1.1.1.1, 2.2.2.2 } accept # handle 6\n"
          "\t\ttcp dport { 22, 23 } drop # handle 8\n"
          "\t\tip daddr @s counter packets 0 bytes 0 # handle 9\n"
          "\t}\n"
          "\n"
          "\tchain c2 { # handle 2\n"
          "\t\ttype filter hook input priority filter; policy accept;\n"
          "\t}\n"
          "}\n"
          "table ip6 u { # handle 2\n"
          "\tchain x { # handle 1\n"
          "\t}\n"
          "}\n");
  }

  TEST_CASE("nft apply: a failing command leaves the whole transaction unapplied, with a located error") {
    nft::ruleset rs;
    REQUIRE(run(rs, "add table ip t\nadd chain ip t c\n").empty());
    const std::string before = listing(rs);
    const std::string err = run(rs,
                                "add rule ip t c accept\n"
                                "add chain ip t d\n"
                                "add rule ip t c jump nowhere\n",
                                "tx.nft");
    CHECK(err.find("tx.nft:3:") != std::string::npos);
    CHECK(err.find("error[chain-not-found]: jump or goto to chain nowhere, which does not exist") != std::string::npos);
    CHECK(err.find("add rule ip t c jump nowhere") != std::string::npos);  // the source line is quoted
    CHECK(listing(rs) == before);
    CHECK(run(rs, "add rule ip t missing accept\n").find("error[chain-not-found]: chain missing does not exist") !=
          std::string::npos);
    CHECK(run(rs, "add rule ip u c accept\n").find("error[object-not-found]: table ip u does not exist") !=
          std::string::npos);
    CHECK(
        run(rs, "add rule ip t c ip saddr @nope\n").find("error[object-not-found]: set or map @nope does not exist") !=
        std::string::npos);
    CHECK(listing(rs) == before);
  }

  TEST_CASE("nft apply: NAT statements only where the kernel runs them, also through jumps and verdict maps") {
    // found by a new user; each refused by the kernel at commit ("Operation not supported"), checked in a
    // network namespace with nft 1.0.6
    const std::string tables = "add table ip t\nadd chain ip t x\nadd chain ip t y\n";
    const struct {
      const char* commands;
      const char* says;
    } bad[] = {
        {"add chain ip t c { type filter hook input priority 0; }\nadd rule ip t c tcp dport 80 dnat to 10.0.0.1\n",
         "dnat in chain c, reached from base chain c (filter hook input)"},
        {"add chain ip t c { type nat hook postrouting priority 100; }\nadd rule ip t c jump x\n"
         "add rule ip t x tcp dport 80 dnat to 10.0.0.1\n",
         "dnat in chain x, reached from base chain c (nat hook postrouting)"},
        {"add chain ip t c { type nat hook prerouting priority -100; }\nadd rule ip t c masquerade\n",
         "masquerade in chain c"},
        {"add map ip t m { type ipv4_addr : verdict; elements = { 1.2.3.4 : goto y } }\n"
         "add chain ip t c { type nat hook postrouting priority 100; }\nadd rule ip t c ip daddr vmap @m\n"
         "add rule ip t y meta l4proto tcp redirect to :80\n",
         "redirect in chain y, reached from base chain c"},
    };
    for (const auto& b : bad) {
      nft::ruleset rs;
      const std::string err = run(rs, tables + b.commands, "nat.nft");
      CHECK_MESSAGE(err.find(b.says) != std::string::npos, err);
      CHECK(err.find("error[invalid-value]") != std::string::npos);
      CHECK(rs.tables.empty());  // the transaction is not applied
    }
    nft::ruleset ok;
    CHECK(run(ok, tables +
                      "add chain ip t o { type nat hook output priority -100; }\nadd rule ip t o jump x\n"
                      "add rule ip t x meta l4proto tcp dnat to 10.0.0.1:80\n"
                      "add chain ip t i { type nat hook input priority 100; }\nadd rule ip t i snat to 10.0.0.2\n"
                      "add rule ip t y masquerade\n")  // y: no base chain reaches it
              .empty());
  }

  TEST_CASE("nft apply: reject, tproxy and synproxy only at the hooks the kernel allows them, also through jumps") {
    // a tester's finds, each refused by the kernel at commit ("Operation not supported") with nft 1.0.6 in a
    // network namespace, and each taken there at the other hooks
    const struct {
      const char* family;
      const char* hook;
      const char* rule;
      const char* says;  // empty: taken
    } cases[] = {
        {"ip", "postrouting", "reject", "reject in chain x, reached from base chain c (filter hook postrouting)"},
        {"inet", "output", "reject", ""},
        {"ip", "input", "meta l4proto tcp tproxy to 1.2.3.4:80", "tproxy in chain x, reached from base chain c"},
        {"inet", "prerouting", "meta l4proto tcp tproxy ip to 1.2.3.4:80", ""},
        {"ip6", "output", "tcp flags syn synproxy mss 1460", "the kernel allows it only at input or forward"},
        {"ip", "forward", "tcp flags syn synproxy mss 1460", ""},
    };
    for (const auto& k : cases) {
      CAPTURE(k.rule);
      nft::ruleset rs;
      const std::string err =
          run(rs, fmt::format("add table {0} t\nadd chain {0} t x\nadd chain {0} t c {{ type filter hook {1} priority 0; "
                              "}}\nadd rule {0} t c jump x\nadd rule {0} t x {2}\n",
                              k.family, k.hook, k.rule));
      if (*k.says == '\0') {
        CHECK_MESSAGE(err.empty(), err);
      } else {
        CHECK_MESSAGE(err.find(k.says) != std::string::npos, err);
        CHECK(rs.tables.empty());
      }
    }
  }

  TEST_CASE("nft apply: no jump to a base chain, at most 15 nested jumps from one, no loop reached from one") {
    // found by a new user; each checked with nft 1.0.6 in a network namespace: a jump or goto to a base
    // chain is "Operation not supported" (rule or map element), a 16th nested jump "Too many links" at that
    // jump, an unreached loop (even `jump a` in a) is accepted
    auto chain_of = [](int from, int n) {
      std::string out = "add table ip t\nadd chain ip t base { type filter hook input priority 0; }\n";
      for (int i = 0; i <= n; ++i) out += fmt::format("add chain ip t c{}\n", i);
      out += "add rule ip t base jump c0\n";
      for (int i = from; i < n; ++i) out += fmt::format("add rule ip t c{} jump c{}\n", i, i + 1);
      return out;
    };
    nft::ruleset ok;
    CHECK(run(ok, chain_of(0, 14)).empty());  // 15 jumps: base -> c0 -> ... -> c14
    nft::ruleset deep;
    std::string err = run(deep, chain_of(0, 15), "deep.nft");
    CHECK_MESSAGE(err.find("deep.nft:34:19:") != std::string::npos, err);  // at `jump c15`, as the kernel says
    CHECK(err.find("more than 15 nested jumps or gotos from base chain base (base -> c0 -> c1") != std::string::npos);
    CHECK(deep.tables.empty());
    nft::ruleset loop;
    err = run(loop, chain_of(0, 1) + "add rule ip t c1 goto c0\n", "loop.nft");
    CHECK_MESSAGE(err.find("(\"Too many links\")") != std::string::npos, err);
    CHECK(loop.tables.empty());
    nft::ruleset unreached;
    CHECK(run(unreached, "add table ip t\nadd chain ip t a\nadd chain ip t b\nadd rule ip t a jump b\n"
                         "add rule ip t b jump a\nadd rule ip t a jump a\n")
              .empty());
    for (const char* to_base : {"add rule ip t x jump base\n", "add rule ip t x meta mark vmap { 1 : goto base }\n",
                                "add map ip t m { type mark : verdict; elements = { 2 : jump base } }\n"}) {
      nft::ruleset rs;
      err = run(rs, std::string("add table ip t\nadd chain ip t base { type filter hook input priority 0; }\n"
                                "add chain ip t x\n") + to_base);
      CHECK_MESSAGE(err.find("jump or goto to base chain base: the kernel refuses it (\"Operation not supported\")") !=
                        std::string::npos,
                    to_base);
      CHECK(rs.tables.empty());
    }
  }

  TEST_CASE("nft apply: add element of a map key that is there with other data is refused") {
    // checked in a network namespace: "File exists"; the same element again is nothing new
    nft::ruleset rs;
    REQUIRE(run(rs, "add table ip t\nadd chain ip t a\nadd chain ip t b\n"
                    "add map ip t m { type ipv4_addr : verdict; elements = { 1.2.3.4 : goto a } }\n")
                .empty());
    CHECK(run(rs, "add element ip t m { 1.2.3.4 : goto a }\n").empty());
    const std::string err = run(rs, "add element ip t m { 1.2.3.4 : goto b }\n", "u.nft");
    CHECK(err.find("u.nft:1:") != std::string::npos);
    CHECK(err.find("error[object-exists]: the key is in map m already, with other data") != std::string::npos);
  }

  TEST_CASE("nft apply: add element is checked against the set's declared types, in the set's own table") {
    // checked in a network namespace: nft 1.0.6 refuses each, and nothing of the transaction is applied
    nft::ruleset rs;
    REQUIRE(run(rs, "add table ip t\nadd set ip t s { type inet_service; }\n"
                    "add map ip t m { type ipv4_addr : verdict; }\n")
                .empty());
    const std::string range = run(rs, "add element ip t s { 80 }\nadd element ip t s { 1-2 }\n", "u.nft");
    CHECK(range.find("u.nft:2:22: error[invalid-value]: a range element in set s, which has no `flags interval`") !=
          std::string::npos);
    CHECK(run(rs, "add element ip t s { 70000 }\n").find("value 70000 is out of range for inet_service") !=
          std::string::npos);
    CHECK(run(rs, "add element ip t m { 10.0.0.1 : 80 }\n").find("map m maps to verdicts: this is none") !=
          std::string::npos);
    CHECK(rs.tables[0].sets[0].elements.empty());  // the 80 of the refused transaction is not there
    CHECK(run(rs, "add element ip t s { 80, 443 }\nadd element ip t m { 10.0.0.1 : drop }\n").empty());
    CHECK(rs.tables[0].sets[0].elements.size() == 2);
  }

  TEST_CASE("nft apply: delete, destroy, flush and rename") {
    nft::ruleset rs;
    REQUIRE(run(rs,
                "table inet f {\n"
                "\tset s { type ipv4_addr; elements = { 1.1.1.1, 2.2.2.2 }; }\n"
                "\tchain a { jump b; }\n"
                "\tchain b { ip saddr @s accept; counter; }\n"
                "\tchain c { }\n"
                "}\n"
                "table ip g {\n\tchain x { accept; }\n}\n")
                .empty());
    CHECK(run(rs, "delete chain inet f b\n").find("error[chain-in-use]") != std::string::npos);
    CHECK(run(rs, "delete set inet f s\n").find("error[chain-in-use]: set s is still used by a rule") !=
          std::string::npos);
    CHECK(run(rs, "delete chain inet f nope\n").find("error[chain-not-found]") != std::string::npos);
    CHECK(run(rs, "destroy chain inet f nope\ndestroy table ip nope\n").empty());
    CHECK(run(rs, "flush chain inet f b\n").empty());
    CHECK(chain_of(rs, "f", "b").rules.empty());
    CHECK(run(rs, "delete set inet f s\n").empty());
    CHECK(run(rs, "rename chain inet f c d\n").empty());
    CHECK(chain_of(rs, "f", "d").name == "d");
    CHECK(run(rs, "rename chain inet f b e\n").find("error[chain-in-use]") != std::string::npos);
    CHECK(run(rs, "flush table inet f\n").empty());
    CHECK(chain_of(rs, "f", "a").rules.empty());
    CHECK(rs.tables[0].chains.size() == 3);  // flush keeps the chains
    CHECK(run(rs, "delete table inet f\n").empty());
    CHECK(rs.tables.size() == 1);
    CHECK(run(rs, "delete table inet f\n").find("error[object-not-found]: table inet f does not exist") !=
          std::string::npos);
    CHECK(run(rs, "add table ip6 h\nflush ruleset ip\n").empty());
    REQUIRE(rs.tables.size() == 1);
    CHECK(rs.tables[0].name == "h");
    CHECK(run(rs, "flush ruleset\n").empty());
    CHECK(rs.tables.empty());
  }

  TEST_CASE("nft apply: elements are added once, deleted when present, flushed") {
    nft::ruleset rs;
    REQUIRE(run(rs,
                "add table ip t\nadd set ip t s { type inet_service; }\nadd map ip t m { type ipv4_addr : verdict; }\n"
                "add chain ip t c\n")
                .empty());
    CHECK(run(rs, "add element ip t s { 22, 80 }\nadd element ip t s { 80, 443 }\n").empty());
    const auto& s = rs.tables[0].sets[0];
    CHECK(s.elements.size() == 3);
    CHECK(run(rs, "create element ip t s { 22 }\n").find("error[object-exists]") != std::string::npos);
    CHECK(run(rs, "delete element ip t s { 80 }\n").empty());
    CHECK(rs.tables[0].sets[0].elements.size() == 2);
    CHECK(run(rs, "delete element ip t s { 80 }\n").find("error[object-not-found]: element does not exist") !=
          std::string::npos);
    CHECK(run(rs, "destroy element ip t s { 80 }\n").empty());
    CHECK(run(rs, "add element ip t m { 10.0.0.1 : jump c, 10.0.0.2 : drop }\n").empty());
    CHECK(run(rs, "add element ip t m { 10.0.0.3 : goto nowhere }\n").find("error[chain-not-found]") !=
          std::string::npos);
    CHECK(listing(rs) ==
          "table ip t {\n"
          "\tset s {\n"
          "\t\ttype inet_service\n"
          "\t\telements = { 22, 443 }\n"
          "\t}\n"
          "\n"
          "\tmap m {\n"
          "\t\ttype ipv4_addr : verdict\n"
          "\t\telements = { 10.0.0.1 : jump c,\n"
          "\t\t\t     10.0.0.2 : drop }\n"
          "\t}\n"
          "\n"
          "\tchain c {\n"
          "\t}\n"
          "}\n");
    CHECK(run(rs, "flush set ip t s\nflush map ip t m\n").empty());
    CHECK(rs.tables[0].sets[0].elements.empty());
    CHECK(rs.tables[0].sets[1].elements.empty());
  }

  TEST_CASE("nft apply: what the kernel normalises") {
    nft::ruleset rs;
    REQUIRE(run(rs,
                "add table ip t\n"
                "add set ip t aff { type ipv4_addr ; flags dynamic,timeout ; timeout 10800s ; }\n"
                "add set ip t seen { type ipv4_addr ; }\n"
                "add chain ip t base { type nat hook output priority -100 ; }\n"
                "add rule ip t base update @aff { ip saddr } add @seen { ip saddr }\n")
                .empty());
    const auto& t = rs.tables[0];
    // policy accept, priority stored as the number, sets updated from the packet path get a size
    CHECK(t.chains[0].policy == nft::chain_policy::accept);
    REQUIRE(t.chains[0].base != nullptr);
    CHECK(t.chains[0].base->prio.name == nft::priority_name::numeric);
    CHECK(t.chains[0].base->prio.offset == -100);
    CHECK(t.sets[0].size == 65535);
    CHECK(t.sets[1].size == 65535);
    CHECK((t.sets[1].flags & static_cast<std::uint8_t>(nft::set_flag::dynamic)) != 0);
    CHECK(listing(rs).find("\t\tsize 65535\n\t\tflags dynamic,timeout\n\t\ttimeout 3h\n") != std::string::npos);
  }

  TEST_CASE("nft apply: a key looked up in a named set or map has the set's datatype") {
    nft::ruleset rs;
    REQUIRE(run(rs,
                "add table inet t\n"
                "add set inet t ports { type inet_service; }\n"
                "add set inet t hosts { typeof ip saddr; }\n"
                "add set inet t marks { type mark; }\n"
                "add map inet t svc { type ipv4_addr . inet_proto . inet_service : verdict; }\n"
                "add map inet t nat { type ipv4_addr : mark; }\n"
                "add map inet t bymark { type mark : verdict; }\n"
                "add set inet t local { type ipv4_addr . iface_index; }\n"
                "add set inet t raw { typeof @th,16,16; }\n"
                "add set inet t names { typeof osf name; }\n"
                "add set inet t ifnames { type ifname; }\n"
                "add chain inet t c\n"
                // the same types: `typeof` or `type`, a masked key keeps the type of what it masks
                "add rule inet t c tcp dport @ports ip saddr @hosts meta mark & 0xff @marks\n"
                "add rule inet t c ip daddr . meta l4proto . th dport vmap @svc\n"
                "add rule inet t c meta mark set ip daddr map @nat\n"
                // a shift keeps its operand's type (nft 1.0.6 loads it), a constant takes the set's (nft 1.1
                // lists `ip saddr . "lo" @s`, upstream's packetpath/set_lookups; 1.0.6 cannot parse it)
                "add rule inet t c meta mark >> 8 & 0xf vmap @bymark ip saddr . \"lo\" @local\n"
                // a raw payload may be the field at its place: nft reads `@th,16,16` as `th dport`
                "add rule inet t c th dport @raw\n"
                // `fib ... oifname` is a string in nft 1.0.6 (a tester's finding), an interface name in 1.1
                // (upstream's sets/0029named_ifname_dtype): either set takes it
                "add rule inet t c fib daddr oifname @names fib daddr oifname @ifnames\n"
                // a set statement takes a header field of integer type as wide as the set's type, as nft does
                "add rule inet t c add @ports { ip length }\n")
                .empty());
    CHECK(rs.tables[0].chains[0].rules.size() == 7);
    // nft: "datatype mismatch, expected internet network service, expression has type IPv4 address"
    CHECK(run(rs, "add rule inet t c tcp dport @hosts accept\n", "a.nft") ==
          "a.nft:1:29: error[invalid-value]: `tcp dport` is inet_service, but set hosts holds ipv4_addr (nft: "
          "\"datatype mismatch\")\n"
          "    1 | add rule inet t c tcp dport @hosts accept\n"
          "      |                             ^~~~~~\n");
    // a concatenation of other parts, or of another length
    CHECK(run(rs, "add rule inet t c ip daddr . tcp dport vmap @svc\n").find(
              "`ip daddr . tcp dport` is ipv4_addr . inet_service, but map svc holds ipv4_addr . inet_proto . "
              "inet_service") != std::string::npos);
    CHECK(run(rs, "add rule inet t c ip daddr . th dport . meta l4proto vmap @svc\n").find(
              "is ipv4_addr . inet_service . inet_proto, but map svc") != std::string::npos);
    CHECK(run(rs, "add rule inet t c meta mark set ip6 daddr map @nat\n").find(
              "`ip6 daddr` is ipv6_addr, but map nat holds ipv4_addr") != std::string::npos);
    CHECK(run(rs, "add rule inet t c add @hosts { tcp dport }\n").find(
              "`tcp dport` is inet_service, but set hosts holds ipv4_addr") != std::string::npos);
    CHECK(run(rs, "add rule inet t c ct mark @ports\n").find("`ct mark` is mark, but set ports holds inet_service") !=
          std::string::npos);
    // parts are counted whether their types are known or not
    CHECK(run(rs, "add rule inet t c ip saddr . @th,16,16 @hosts\n").find(
              "`ip saddr . @th,16,16` is ipv4_addr . ?, but set hosts holds ipv4_addr") != std::string::npos);
    // none of the refused rules was added
    CHECK(rs.tables[0].chains[0].rules.size() == 7);
  }

  TEST_CASE("nft apply: objects, flowtables, reset") {
    nft::ruleset rs;
    REQUIRE(run(rs,
                "add table inet t\n"
                "add counter inet t hits packets 10 bytes 1000\n"
                "add quota inet t q { over 10 mbytes used 5 mbytes }\n"
                "add flowtable inet t ft { hook ingress priority 0; devices = { lo }; }\n"
                "add chain inet t c\n"
                "add rule inet t c counter packets 7 bytes 70 counter name \"hits\" flow add @ft\n")
                .empty());
    CHECK(run(rs, "add rule inet t c counter name \"nope\"\n").find("error[object-not-found]: counter nope") !=
          std::string::npos);
    CHECK(run(rs, "add rule inet t c flow add @nope\n").find("error[object-not-found]: flowtable nope") !=
          std::string::npos);
    // objects named by a mangle's value: `ct helper set "NAME"`, ct timeout and expectation, `meta secmark set`
    // (a tester's finding; nft: "No such file or directory")
    for (const char* mangle : {"ct helper set \"nope\"", "ct timeout set \"nope\"", "ct expectation set \"nope\"",
                               "meta secmark set \"nope\""}) {
      CAPTURE(mangle);
      CHECK(run(rs, std::string("add rule inet t c ") + mangle + "\n").find("error[object-not-found]") != std::string::npos);
    }
    REQUIRE(run(rs, "add ct helper inet t ftp { type \"ftp\" protocol tcp; }\nadd rule inet t c ct helper set \"ftp\"\n")
                .empty());
    CHECK(run(rs, "create counter inet t hits\n").find("error[object-exists]") != std::string::npos);
    CHECK(run(rs, "reset counters\nreset quotas\nreset rules inet t c\n").empty());
    const std::string l = listing(rs);
    CHECK(l.find("\tcounter hits {\n\t\tpackets 0 bytes 0\n\t}\n") != std::string::npos);
    CHECK(l.find("\tquota q {\n\t\tover 10 mbytes\n\t}\n") != std::string::npos);
    CHECK(l.find("\t\tcounter packets 0 bytes 0 counter name \"hits\" flow add @ft\n") != std::string::npos);
    CHECK(l.find("\tflowtable ft {\n\t\thook ingress priority filter\n\t\tdevices = { \"lo\" }\n\t}\n") !=
          std::string::npos);
    CHECK(run(rs, "delete counter inet t hits\n").empty());
    CHECK(run(rs, "delete flowtable inet t ft\n").empty());
    CHECK(run(rs, "delete quota inet t nope\n").find("error[object-not-found]") != std::string::npos);
  }

  TEST_CASE("nft apply: listing-only commands change nothing, sources stay alive") {
    nft::ruleset rs;
    { REQUIRE(run(rs, "add table ip t\nadd chain ip t c\nadd rule ip t c tcp dport 22 accept\n").empty()); }
    CHECK(run(rs, "list ruleset\nlist table ip t\n").empty());
    nft::ruleset copy = rs;  // copying a ruleset keeps its sources, so views stay valid
    rs = nft::ruleset{};
    CHECK(rules_of(copy, "t", "c") == "tcp dport 22 accept\n");
  }
}

TEST_SUITE("unit") {
  TEST_CASE("nft apply: a new set or map needs its key type, a map its data type (nft's set_evaluate)") {
    nft::ruleset rs;
    CHECK(run(rs, "add table ip t\n").empty());
    CHECK(run(rs, "add map ip t m { elements = { 1 : 2 } }\n", "m.nft")
              .find("m.nft:1:5: error[missing-argument]: map m does not specify its key data type") != std::string::npos);
    CHECK(run(rs, "table ip t {\n\tset s {\n\t\tflags interval\n\t}\n}\n", "s.nft")
              .find("s.nft:2:2: error[missing-argument]: set s does not specify its key data type") != std::string::npos);
    CHECK(rs.tables.at(0).sets.empty());
    // Adding to a set that exists needs no type again.
    CHECK(run(rs, "add set ip t s { type ipv4_addr; }\nadd set ip t s { elements = { 10.0.0.1 } }\n").empty());
    REQUIRE(rs.tables.at(0).sets.size() == 1);
    CHECK(rs.tables[0].sets[0].elements.size() == 1);
  }

  TEST_CASE("nft apply: element statements need the set to declare statements or be dynamic") {
    // found by a new user; nft: "missing statement in set declaration"
    nft::ruleset rs;
    CHECK(run(rs, "add table ip t\n").empty());
    CHECK(run(rs, "add set ip t s { type ipv4_addr; elements = { 1.2.3.4 counter } }\n", "s.nft")
              .find("s.nft:1:55: error[invalid-value]: an element of set s has statements the set does not declare") !=
          std::string::npos);
    CHECK(rs.tables.at(0).sets.empty());
    CHECK(run(rs, "add set ip t s { type ipv4_addr; }\nadd element ip t s { 1.2.3.4 counter }\n", "e.nft")
              .find("e.nft:2:30: error[invalid-value]") != std::string::npos);
    CHECK(run(rs, "add set ip t c { type ipv4_addr; counter; elements = { 1.2.3.4 counter } }\n"
                  "add set ip t d { type ipv4_addr; flags dynamic; elements = { 1.2.3.4 counter } }\n")
              .empty());
    REQUIRE(rs.tables.at(0).sets.size() == 2);
    CHECK(rs.tables[0].sets[0].elements.size() == 1);
  }
}

TEST_SUITE("unit") {
  TEST_CASE("nft apply: base chains the kernel or nft refuses for their family, type, hook or priority") {
    auto refusal = [](const std::string& family, const std::string& spec) {
      nft::ruleset rs;
      return run(rs, "table " + family + " t {\n\tchain c {\n\t\t" + spec + "\n\t}\n}\n");
    };
    CHECK(refusal("ip", "type nat hook forward priority 0;")
              .find("the kernel has no nat chains at hook forward in family ip") != std::string::npos);
    CHECK(refusal("ip", "type route hook input priority 0;").find("no route chains at hook input") !=
          std::string::npos);
    CHECK(refusal("arp", "type filter hook forward priority 0;").find("no filter chains at hook forward") !=
          std::string::npos);
    CHECK(refusal("ip", "type nat hook output priority raw + 100;")
              .find("a nat chain needs a priority after conntrack's (-200), not -200") != std::string::npos);
    CHECK(refusal("bridge", "type filter hook input priority mangle;")
              .find("priority mangle is not one of family bridge at hook input") != std::string::npos);
    CHECK(refusal("ip", "type filter hook postrouting priority dstnat;").find("priority dstnat") != std::string::npos);
    // what the kernel takes
    CHECK(refusal("ip", "type nat hook output priority -199;").empty());
    CHECK(refusal("inet", "type filter hook ingress device \"lo\" priority mangle;").empty());
    CHECK(refusal("bridge", "type filter hook output priority out;").empty());
    CHECK(refusal("ip", "type nat hook output priority dstnat;").empty());  // nft 1.1 takes (and lists) it
  }

  TEST_CASE("nft parse: interface names nft refuses, and names defined twice") {
    auto error_of = [](const std::string& text) {
      const auto r = nft::parse("t.nft", text);
      return r.ok() ? std::string() : r.diagnostics.front().message;
    };
    auto rule = [](const std::string& r) { return "table ip t {\n\tchain c {\n\t\t" + r + "\n\t}\n}\n"; };
    CHECK(error_of(rule("iifname \"abcdefghijklmnop\" accept")) ==
          "`abcdefghijklmnop` is 16 bytes; ifname takes at most 15 (nft: \"String exceeds maximum length of 16\")");
    CHECK(error_of(rule("iifname \"abcdefghijklmno\" accept")).empty());
    CHECK(error_of(rule("iifname { \"a\", \"\" } accept")).find("an empty string") == 0);
    CHECK(error_of(rule("oifname != \"*\" accept")).find("only the wildcard") != std::string::npos);
    CHECK(error_of(rule("oifname \"eth*\" accept")).empty());
    CHECK(error_of("define a = 1\ndefine a = 2\n").find("redefinition of 'a'") == 0);
    CHECK(error_of("define a = 1\ntable ip t {\n\tdefine a = 2\n}\n").find("redefinition of 'a'") == 0);
    // a table's defines end with it; `redefine` and `undefine` change them
    CHECK(error_of("table ip t {\n\tdefine a = 2\n}\ntable ip u {\n\tdefine a = 3\n}\n").empty());
    CHECK(error_of("table ip t {\n\tdefine p = 22\n}\ntable ip u {\n\tchain c {\n\t\ttcp dport $p accept\n\t}\n}\n")
              .find("undefined variable '$p'") == 0);
    CHECK(error_of("define a = 1\nredefine a = 2\nundefine a\ndefine a = 3\n").empty());
  }
}
