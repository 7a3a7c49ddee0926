// SPDX-License-Identifier: MIT
// The nft grammar itself: PEGTL's analysis of the top rule, and accept/reject tables for the lexical
// token rules (recognition only, no actions).
#include "nft_errors.hpp"

#include <doctest/doctest.h>
#include <tao/pegtl/contrib/analyze.hpp>

#include <string>

namespace g = nflens::nft::grammar;
namespace pegtl = tao::pegtl;

namespace {

/// True when `Rule` matches the whole of `text`.
template <class Rule>
bool whole(const std::string& text) {
  pegtl::memory_input in(text, "test");
  return pegtl::parse<pegtl::seq<Rule, pegtl::eof>>(in);
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("nft grammar: PEGTL analysis of the top rule finds no problems") {
    CHECK(pegtl::analyze<g::input>(1) == 0);
  }

  TEST_CASE("nft grammar: keywords end at nft's word characters") {
    CHECK(whole<g::kw_ip>("ip"));
    CHECK_FALSE(whole<g::kw_ip>("ip6"));
    CHECK_FALSE(whole<pegtl::seq<g::kw_ip, pegtl::any>>("ip-"));  // `ip-foo` is one word to nft
    CHECK_FALSE(whole<pegtl::seq<g::kw_ip, pegtl::any>>("ip/"));
    CHECK(whole<pegtl::seq<g::kw_ip, pegtl::any>>("ip "));
    CHECK(whole<pegtl::seq<g::bytes_unit, pegtl::one<'/'>>>("kbytes/"));  // rate units may touch the '/'
  }

  TEST_CASE("nft grammar: identifiers are scanner.l strings") {
    for (const char* ok : {"filter", "_x", "test-ip4", "wan_input", "ipv4_addr",
                           "endpoint-5OJB2KTY-ns1/svc1/tcp/p80__10.180.0.1/80", "a.b"})
      CHECK_MESSAGE(whole<g::identifier>(ok), ok);
    for (const char* bad : {"1abc", "-x", "/x", "", "a b"}) CHECK_MESSAGE(!whole<g::identifier>(bad), bad);
  }

  TEST_CASE("nft grammar: address tokens") {
    for (const char* ok : {"10.0.0.1", "255.255.255.255", "0.0.0.0"}) CHECK_MESSAGE(whole<g::ip4addr>(ok), ok);
    for (const char* bad : {"10.0.0", "10.0.0.1.2", "256.0.0.1", "1.2.3.4x", "1234.0.0.1"})
      CHECK_MESSAGE(!whole<g::ip4addr>(bad), bad);
    for (const char* ok : {"::1", "fe80::1", "::", "2001:db8::1", "::ffff:1.2.3.4", "1:2:3:4:5:6:7:8"})
      CHECK_MESSAGE(whole<g::ip6addr>(ok), ok);
    for (const char* bad : {"aa:bb:cc:dd:ee:ff", "1:bbf8", "fe80::1x", "12345::1"})
      CHECK_MESSAGE(!whole<g::ip6addr>(bad), bad);
    CHECK(whole<g::ip6addr_bracketed>("[fe80::1]"));
    CHECK_FALSE(whole<g::ip6addr_bracketed>("[1.2.3.4]"));
    CHECK(whole<g::macaddr>("aa:bb:cc:dd:ee:ff"));
    CHECK(whole<g::macaddr>("0:1:2:3:4:5"));
    CHECK_FALSE(whole<g::macaddr>("aa:bb:cc:dd:ee"));
    CHECK_FALSE(whole<g::macaddr>("aaa:bb:cc:dd:ee:ff"));
    CHECK(whole<g::classid>("1:bbf8"));
    CHECK_FALSE(whole<g::classid>("12345:1"));
  }

  TEST_CASE("nft grammar: the longest valid IPv6 prefix is taken, as flex's longest match does") {
    // `aaaa:::accept` in a verdict map is `aaaa::` followed by `:accept`.
    CHECK(whole<pegtl::seq<g::ip6addr, pegtl::string<':', 'a'>>>("1:2:3:4:5:6:aaaa:::a"));
    CHECK(whole<pegtl::seq<g::ip6addr, pegtl::one<'-'>, g::ip6addr>>("fe11::-fe22::"));
  }

  TEST_CASE("nft grammar: numbers, time strings, strings") {
    for (const char* ok : {"0", "42", "0x4000", "0XfF", "010"}) CHECK_MESSAGE(whole<g::number>(ok), ok);
    for (const char* bad : {"0x", "12ab", "x1", ""}) CHECK_MESSAGE(!whole<g::number>(bad), bad);
    for (const char* ok : {"3h", "10800s", "1d2h3m4s5ms", "100ms", "2m"}) CHECK_MESSAGE(whole<g::timestring>(ok), ok);
    for (const char* bad : {"3", "3x", "1s2h", "h"}) CHECK_MESSAGE(!whole<g::timestring>(bad), bad);
    CHECK(whole<g::quoted_string>("\"a b: c\""));
    CHECK(whole<g::quoted_string>("\"\""));
    CHECK_FALSE(whole<g::quoted_string>("\"unterminated"));
    CHECK_FALSE(whole<g::quoted_string>("\"two\nlines\""));
    CHECK(whole<g::symbol_word>("eth*"));
    CHECK(whole<g::symbol_word>("eth\\*"));
    CHECK(whole<g::symbol_word>("8021q"));
    CHECK(whole<g::symbol_word>("echo-request"));
  }

  TEST_CASE("nft grammar: header fields come from the field tables") {
    CHECK(whole<g::ip_hdr_expr>("ip saddr"));
    CHECK(whole<g::ip_hdr_expr>("ip option rr type"));
    CHECK_FALSE(whole<g::ip_hdr_expr>("ip sport"));
    CHECK(whole<g::tcp_hdr_expr>("tcp option maxseg size"));
    CHECK(whole<g::tcp_hdr_expr>("tcp option @255,8,8"));
    CHECK(whole<g::arp_hdr_expr>("arp saddr ether"));
    CHECK(whole<g::rt0_hdr_expr>("rt0 addr[1]"));
    CHECK(whole<g::meta_expr>("meta l4proto"));
    CHECK(whole<g::meta_expr>("mark"));
    CHECK_FALSE(whole<g::meta_expr>("l4proto"));  // needs `meta`
    CHECK(whole<g::ct_expr>("ct original ip saddr"));
    CHECK(whole<g::fib_expr>("fib saddr . iif oif"));
    CHECK(whole<g::numgen_expr>("numgen random mod 2 offset 1"));
  }
}
