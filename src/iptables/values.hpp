// SPDX-License-Identifier: MIT
#pragma once

// Private: option arguments to typed values, as libxtables reads them (xtables_strtoui,
// xtables_numeric_to_ipaddr, xtables_parse_port, ...), and the name tables they use (protocols as
// /etc/protocols of Debian's netbase has them, well-known services, ICMP types). Backed by the value
// grammars in grammars/iptables_values.hpp (src/iptables/values.cpp is their only user).

#include <nflens/iptables.hpp>

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace nflens::iptables::detail {

/// strtoul(s, NULL, 0) of the whole text (decimal, 0x hex, leading-0 octal), at most `max`.
[[nodiscard]] std::optional<std::uint64_t> parse_number(std::string_view text, std::uint64_t max) noexcept;

/// A numeric address of `family`: IPv4 as xtables_numeric_to_ipaddr (octets in any strtoul base, and
/// the network shorthands `10` = 10.0.0.0, `10.1` = 10.1.0.0), IPv6 as inet_pton. No host names.
[[nodiscard]] std::optional<ip_address> parse_host(std::string_view text, ip_family family) noexcept;

/// `address[/length|/mask]`; a missing mask is the full length. The address is ANDed with the mask as
/// iptables does before it reaches the kernel.
[[nodiscard]] std::optional<address_mask> parse_address_mask(std::string_view text, ip_family family) noexcept;

/// A port number or a well-known service name (tcp/udp/sctp/dccp).
[[nodiscard]] std::optional<std::uint16_t> parse_port(std::string_view text) noexcept;
/// `port`, `first:last`, `first:`, `:last`, `:` (the full range); first must not exceed last.
[[nodiscard]] std::optional<port_range> parse_port_range(std::string_view text) noexcept;
/// `port[,port|,first:last]...` (multiport), at most `max_items` items (ranges count twice).
[[nodiscard]] bool parse_port_list(std::string_view text, std::vector<port_range>& out) noexcept;

/// `value[/mask]`, both 32-bit; a missing mask is 0xffffffff.
struct mark_and_mask {
  std::uint32_t value = 0;
  std::uint32_t mask = 0xffffffff;
  bool has_mask = false;
};
[[nodiscard]] std::optional<mark_and_mask> parse_mark(std::string_view text) noexcept;

/// DNAT/SNAT `[ipaddr[-ipaddr]][:port[-port[/base]]]` (IPv6 addresses with ports in brackets).
[[nodiscard]] std::optional<nat_range> parse_nat_range(std::string_view text, ip_family family) noexcept;
/// MASQUERADE/REDIRECT `--to-ports port[-port]`.
[[nodiscard]] std::optional<nat_range> parse_nat_ports(std::string_view text) noexcept;

/// Splits `a,b,c` into names; false when an item is empty.
[[nodiscard]] bool split_names(std::string_view text, std::vector<std::string_view>& out);

/// `N[/second|/minute|/hour|/day]` (with the prefixes libxt_limit accepts: `s`, `sec`, `m`, `min`,
/// `h`, `d`, ...), as the kernel's average in units of 1/10000 second (XT_LIMIT_SCALE) per packet.
[[nodiscard]] std::optional<std::uint32_t> parse_limit_rate(std::string_view text) noexcept;

/// An ICMP (IPv4) or ICMPv6 type as `name`, `type` or `type/code[:code]`; `any` for IPv4.
struct icmp_spec {
  std::uint8_t type = 0;
  std::uint8_t code_min = 0;
  std::uint8_t code_max = 0xff;
  bool any = false;  ///< IPv4 `any` (type 0xff)
};
[[nodiscard]] std::optional<icmp_spec> parse_icmp_type(std::string_view text, bool ipv6) noexcept;

/// Protocol number of a name as `-p` takes it (lower case): /etc/protocols names and aliases, plus
/// iptables' own `all`, `icmpv6`, `mh`, `ipv6-mh`; or a number 0-255.
[[nodiscard]] std::optional<std::uint8_t> parse_protocol_number(std::string_view text) noexcept;
/// The name getprotobynumber(3) gives on Debian 12 (what iptables-save prints), or empty.
[[nodiscard]] std::string_view protocol_print_name(std::uint8_t number) noexcept;

/// Interface names: 1-15 bytes (IFNAMSIZ - 1), a trailing `+` is a wildcard.
[[nodiscard]] bool valid_interface_name(std::string_view name) noexcept;

}  // namespace nflens::iptables::detail
