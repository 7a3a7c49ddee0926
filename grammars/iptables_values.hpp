// SPDX-License-Identifier: MIT
#pragma once

// The grammars of option arguments: numbers, IPv4/IPv6 addresses with masks, ports and port ranges,
// port lists, marks, NAT ranges, rates and name lists, as iptables(8) and iptables-extensions(8) read
// them (libxtables: xtables_strtoui, xtables_numeric_to_ipaddr, xtables_parse_port, ...). Each is
// parsed over one argument, after iptables-restore's quoting has been removed. Private: included only
// by src/iptables/values.cpp.

#include <tao/pegtl.hpp>

namespace nflens::iptables::values_grammar {

using namespace tao::pegtl;

// clang-format off

// ---- numbers: what strtoul(s, NULL, 0) reads whole: 0x1f, 017, 42 -------------------------------
struct hex_number : seq<one<'0'>, one<'x', 'X'>, plus<xdigit>> {};
struct decimal_number : plus<digit> {};  // a leading 0 makes it octal; the conversion checks the digits
struct number : sor<hex_number, decimal_number> {};
struct number_value : seq<number, eof> {};

// ---- addresses ----------------------------------------------------------------------------------
// 10.0.0.1, and the network shorthand 10.1 (= 10.1.0.0) that xtables_numeric_to_ipaddr accepts
struct ipv4_part : number {};
struct ipv4_address : seq<ipv4_part, rep_max<3, seq<one<'.'>, ipv4_part>>> {};
// fe80::1, ::ffff:1.2.3.4 (validated by inet_pton)
struct ipv6_address : seq<star<sor<xdigit, one<'.'>>>, one<':'>, star<sor<xdigit, one<':', '.'>>>> {};
struct prefix_length : plus<digit> {};
struct ipv4_mask : seq<ipv4_part, one<'.'>, ipv4_part, one<'.'>, ipv4_part, one<'.'>, ipv4_part> {};
// 10.0.0.0/8   10.0.0.0/255.0.255.0   fd00::/64   feed:babe::/ffff::
struct ipv4_address_mask : seq<ipv4_address, opt<one<'/'>, sor<seq<ipv4_mask, eof>, seq<prefix_length, eof>>>, eof> {};
struct ipv6_address_mask : seq<ipv6_address, opt<one<'/'>, sor<seq<prefix_length, eof>, seq<ipv6_address, eof>>>, eof> {};

// ---- ports --------------------------------------------------------------------------------------
// 80, http (a service name, resolved from the built-in services table)
struct service_name : seq<alpha, star<sor<alnum, one<'-', '_', '.'>>>> {};
struct port : sor<number, service_name> {};
struct first_port : port {};
struct last_port : port {};
// 80   1024:65535   1024:   :1023   :   (tcp, udp, conntrack; `-` also accepted as separator by multiport)
struct port_range : seq<opt<first_port>, opt<one<':'>, opt<last_port>>, eof> {};
// 22,80:90,443 (multiport)
struct port_list_item : seq<first_port, opt<one<':'>, last_port>> {};
struct port_list : seq<list<port_list_item, one<','>>, eof> {};

// ---- marks: 0x4000/0x4000 -----------------------------------------------------------------------
struct mark_value : number {};
struct mark_mask : number {};
struct mark : seq<mark_value, opt<one<'/'>, mark_mask>, eof> {};

// ---- NAT ranges (DNAT/SNAT --to-destination/--to-source, MASQUERADE/REDIRECT --to-ports) ----------
struct nat_port_first : port {};
struct nat_port_last : number {};  // a range ends in a number (`10-ssh` is refused, `ssh` alone is not)
struct nat_base_port : port {};
// 80   80-90   1000-2000/3000
struct nat_ports : seq<nat_port_first, opt<one<'-'>, nat_port_last, opt<one<'/'>, nat_base_port>>> {};
struct nat_ipv4_min : ipv4_address {};
struct nat_ipv4_max : ipv4_address {};
struct nat_ipv6_min : ipv6_address {};
struct nat_ipv6_max : ipv6_address {};
// 10.0.0.1   10.0.0.1-10.0.0.9:80-90   :80
struct nat_ipv4_range : seq<opt<nat_ipv4_min, opt<one<'-'>, nat_ipv4_max>>, opt<one<':'>, nat_ports>, eof> {};
// [fd00::1]:80   fd00::1-fd00::9   [fd00::1-fd00::9]:80-90
struct nat_ipv6_bracketed : seq<one<'['>, nat_ipv6_min, opt<one<'-'>, nat_ipv6_max>, one<']'>, opt<one<':'>, nat_ports>> {};
struct nat_ipv6_range : seq<sor<nat_ipv6_bracketed, seq<nat_ipv6_min, opt<one<'-'>, nat_ipv6_max>>, seq<one<':'>, nat_ports>>, eof> {};
struct nat_port_range : seq<nat_ports, eof> {};

// ---- name lists: NEW,ESTABLISHED   FIN,SYN,RST,ACK   LOCAL ---------------------------------------
struct list_name : plus<not_one<','>> {};
struct name_list : seq<list<list_name, one<','>>, eof> {};

// ---- rates: 5/second 3/min 1000/hour (limit) ----------------------------------------------------
struct rate_count : plus<digit> {};
struct rate_unit : plus<alpha> {};
struct rate : seq<rate_count, opt<one<'/'>, rate_unit>, eof> {};

// ---- ICMP types: echo-request   8   3/4   any -------------------------------------------------------
struct icmp_type_number : plus<digit> {};
struct icmp_code_first : plus<digit> {};
struct icmp_code_last : plus<digit> {};
struct icmp_type_numeric : seq<icmp_type_number, opt<one<'/'>, icmp_code_first, opt<one<':'>, icmp_code_last>>, eof> {};

// clang-format on

}  // namespace nflens::iptables::values_grammar
