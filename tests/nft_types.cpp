// SPDX-License-Identifier: MIT
// The datatype table: what a selector reads decides how its values are printed.
#include <nflens/nft.hpp>
#include <nflens/nft_types.hpp>

#include <doctest/doctest.h>

using namespace nflens::nft;

namespace {
/// The type of the left side of the first statement of a one-rule chain.
type_info left_type(const std::string& rule_text, const std::string& family = "inet") {
  auto r = parse("t.nft", "table " + family + " t {\n\tchain c {\n\t\t" + rule_text + "\n\t}\n}\n");
  REQUIRE(r.ok());
  const auto* t = std::get<const table*>(r.value.commands[0].body);
  const auto& s = t->chains[0].rules[0].stmts[0];
  if (const auto* m = s.get<match_stmt>()) return type_of(*m->left);
  if (const auto* m = s.get<mangle_stmt>()) return type_of(*m->target);
  return {};
}
}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("nft types: selectors read typed values") {
    CHECK(left_type("meta mark 0x4000") == type_info{datatype::mark, 32});
    CHECK(left_type("mark 0x4000") == type_info{datatype::mark, 32});
    CHECK(left_type("tcp dport 22") == type_info{datatype::inet_service, 16});
    CHECK(left_type("th dport 22") == type_info{datatype::inet_service, 16});
    CHECK(left_type("ip protocol tcp") == type_info{datatype::inet_proto, 8});
    CHECK(left_type("meta l4proto tcp") == type_info{datatype::inet_proto, 8});
    CHECK(left_type("ip saddr 1.2.3.4") == type_info{datatype::ipv4_addr, 32});
    CHECK(left_type("ip6 daddr ::1") == type_info{datatype::ipv6_addr, 128});
    CHECK(left_type("ether saddr aa:bb:cc:dd:ee:ff") == type_info{datatype::ether_addr, 48});
    CHECK(left_type("ct state established") == type_info{datatype::ct_state, 32});
    CHECK(left_type("ct original ip saddr 1.2.3.4") == type_info{datatype::ipv4_addr, 32});
    CHECK(left_type("ct original saddr 1.2.3.4", "ip").type == datatype::invalid);  // depends on the table's family
    CHECK(left_type("iifname \"eth0\"") == type_info{datatype::ifname, 128});
    CHECK(left_type("tcp flags syn") == type_info{datatype::tcp_flag, 8});
    CHECK(left_type("ip dscp cs1") == type_info{datatype::dscp, 6});
    CHECK(left_type("icmp type echo-request") == type_info{datatype::icmp_type, 8});
    CHECK(left_type("fib daddr type local") == type_info{datatype::fib_addrtype, 32});
    CHECK(left_type("meta nfproto ipv4") == type_info{datatype::nf_proto, 8});
    CHECK(left_type("tcp option maxseg size 1460") == type_info{datatype::integer, 16});
    // a presence test loads a byte (nft takes `exthdr hbh 2` and lists it so; 256 is out of range)
    CHECK(left_type("tcp option sack-perm exists") == type_info{datatype::boolean, 8});
    CHECK(left_type("exthdr hbh missing") == type_info{datatype::boolean, 8});
    CHECK(left_type("rt ipsec exists") == type_info{datatype::boolean, 8});
    CHECK(left_type("@nh,8,16 0x1") == type_info{datatype::xinteger, 16});
    CHECK(left_type("ip frag-off 0x1") == type_info{datatype::xinteger, 16});
  }

  TEST_CASE("nft types: type names of set declarations") {
    CHECK(parse_datatype("ipv4_addr") == datatype::ipv4_addr);
    CHECK(parse_datatype("inet_service") == datatype::inet_service);
    CHECK(parse_datatype("verdict") == datatype::verdict);
    CHECK(parse_datatype("mark") == datatype::mark);
    CHECK_FALSE(parse_datatype("nonsense"));
    CHECK(name(datatype::inet_proto) == "inet_proto");
    CHECK(name(datatype::ct_state) == "ct_state");
  }
}
