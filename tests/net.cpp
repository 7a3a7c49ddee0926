// SPDX-License-Identifier: MIT
#include <nflens/net.hpp>

#include <doctest/doctest.h>

using namespace nflens;

TEST_SUITE("unit") {
  TEST_CASE("net: IPv4 and IPv6 addresses parse and print as inet_ntop does") {
    auto a = parse_ip_address("10.96.0.1");
    REQUIRE(a);
    CHECK(a->family == ip_family::ipv4);
    CHECK(a->bytes[0] == 10);
    CHECK(a->bytes[3] == 1);
    CHECK(to_string(*a) == "10.96.0.1");
    CHECK(*a == ipv4(0x0a600001));

    auto b = parse_ip_address("fd00:10:96:0:0:0:0:1");
    REQUIRE(b);
    CHECK(b->family == ip_family::ipv6);
    CHECK(to_string(*b) == "fd00:10:96::1");
    CHECK(to_string(*parse_ip_address("::ffff:1.2.3.4")) == "::ffff:1.2.3.4");
    CHECK(to_string(*parse_ip_address("2001:db8:0:1:0:0:0:1")) == "2001:db8:0:1::1");
  }

  TEST_CASE("net: malformed addresses are refused") {
    for (const char* bad : {"", "10.0.0", "10.0.0.256", "1.2.3.4.5", "10.0.0.1/8", "::g", "1:2:3:4:5:6:7:8:9",
                            "[::1]", " 10.0.0.1", "fe80::1%eth0"})
      CHECK_MESSAGE(!parse_ip_address(bad), bad);
  }

  TEST_CASE("net: inet_aton's forms of an IPv4 address, as getaddrinfo reads a numeric host") {
    const std::pair<const char*, const char*> good[] = {
        {"1.2.3.4", "1.2.3.4"},      {"1.2", "1.0.0.2"},       {"1", "0.0.0.1"},           {"0x01020304", "1.2.3.4"},
        {"1.2.3.0377", "1.2.3.255"}, {"010.1", "8.0.0.1"},     {"1.16777215", "1.255.255.255"},
        {"1.2.65535", "1.2.255.255"}, {"4294967295", "255.255.255.255"}, {"0xA.0Xb.0.0", "10.11.0.0"}};
    for (const auto& [text, address] : good) {
      CAPTURE(text);
      const auto a = parse_ipv4_inet_aton(text);
      REQUIRE(a.has_value());
      CHECK(to_string(*a) == address);
    }
    for (const char* bad : {"", ".", "1.", ".1", "1..2", "08.1.1.1", "1.2.3.256", "1.2.65536", "1.16777216",
                            "4294967296", "1.2.3.4.5", "256.1", "0x1g", "1.2.3.4 ", "a.b", "-1", "0x", "1.0X"}) {
      CAPTURE(bad);
      CHECK_FALSE(parse_ipv4_inet_aton(bad).has_value());
    }
    // numbers that make no address are still no host name; a name has other characters (or starts with one)
    for (const char* numeric : {"1.2.3.4", "1.2", "08.1.1.1", "1.2.3.256", "1.2.3.4.5", "0x1f.0", "99999999999999999999"})
      CHECK_MESSAGE(is_numeric_host(numeric), numeric);
    for (const char* name : {"", "a.b", "1.a", "1..2", "1.", "0x", "0x1g", "1.2.3.4 ", "-1", ".1", "1e5"})
      CHECK_MESSAGE(!is_numeric_host(name), name);
  }

  TEST_CASE("net: prefixes, containment, masks") {
    auto p = parse_ip_prefix("10.244.0.0/19");
    REQUIRE(p);
    CHECK(p->length == 19);
    CHECK(to_string(*p) == "10.244.0.0/19");
    CHECK(contains(*p, *parse_ip_address("10.244.31.255")));
    CHECK_FALSE(contains(*p, *parse_ip_address("10.244.32.0")));
    CHECK_FALSE(contains(*p, *parse_ip_address("::1")));
    CHECK(parse_ip_prefix("10.0.0.1")->length == 32);
    CHECK(parse_ip_prefix("::1")->length == 128);
    CHECK_FALSE(parse_ip_prefix("10.0.0.0/33"));
    CHECK_FALSE(parse_ip_prefix("10.0.0.0/"));
    CHECK_FALSE(parse_ip_prefix("10.0.0.0/8x"));
    CHECK(contains(*parse_ip_prefix("0.0.0.0/0"), *parse_ip_address("1.2.3.4")));

    CHECK(mask_length(*parse_ip_address("255.255.255.0")) == 24);
    CHECK(mask_length(*parse_ip_address("255.255.255.255")) == 32);
    CHECK(mask_length(*parse_ip_address("0.0.0.0")) == 0);
    CHECK_FALSE(mask_length(*parse_ip_address("255.0.255.0")));
    CHECK_FALSE(mask_length(*parse_ip_address("255.255.254.1")));
    CHECK(to_string(mask_of(ip_family::ipv4, 20)) == "255.255.240.0");
    CHECK(to_string(mask_of(ip_family::ipv6, 64)) == "ffff:ffff:ffff:ffff::");
    CHECK(mask_length(mask_of(ip_family::ipv6, 127)) == 127);
  }

  TEST_CASE("net: masking clears the host bits") {
    const auto prefix = [](std::string_view t) { return masked(*parse_ip_prefix(t)); };
    CHECK(to_string(prefix("1.2.3.4/24")) == "1.2.3.0/24");
    CHECK(to_string(prefix("10.255.1.1/9")) == "10.128.0.0/9");
    CHECK(to_string(prefix("10.0.0.1/32")) == "10.0.0.1/32");
    CHECK(to_string(prefix("10.0.0.1/0")) == "0.0.0.0/0");
    CHECK(to_string(prefix("2001:db8::1/64")) == "2001:db8::/64");
    CHECK(to_string(prefix("2001:db8::ff/127")) == "2001:db8::fe/127");
    // an over-long length (a hand-made prefix) is the full length
    CHECK(masked(ip_prefix{*parse_ip_address("1.2.3.4"), 40}) == *parse_ip_prefix("1.2.3.4/32"));
    // any mask, as iptables -s address/mask takes it
    CHECK(to_string(masked(*parse_ip_address("10.1.2.3"), *parse_ip_address("255.0.255.0"))) == "10.0.2.0");
  }

  TEST_CASE("net: protocols") {
    CHECK(parse_protocol("tcp") == l4_protocol::tcp);
    CHECK(parse_protocol("6") == l4_protocol::tcp);
    CHECK(parse_protocol("ipv6-icmp") == l4_protocol::icmpv6);
    CHECK_FALSE(parse_protocol("bogus"));
    CHECK(protocol_number(l4_protocol::sctp) == 132);
    CHECK(protocol_name(l4_protocol::udp) == "udp");
  }

  TEST_CASE("net: hash and order distinguish families") {
    const auto v4 = *parse_ip_address("0.0.0.1");
    auto v6 = v4;
    v6.family = ip_family::ipv6;
    CHECK(v4 != v6);
    CHECK(v4 < v6);
    CHECK(std::hash<ip_address>{}(v4) != std::hash<ip_address>{}(v6));
  }
}
