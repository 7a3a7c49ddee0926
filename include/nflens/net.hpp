// SPDX-License-Identifier: MIT
#pragma once

/// @file
/// Typed leaves shared by both formats: IP addresses, prefixes, port ranges. Numeric forms only:
/// nflens never resolves host or service names (iptables(8) would, at load time, on a live system).

#include <array>
#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace nflens {

/// Address family of an `ip_address`.
enum class ip_family : std::uint8_t { ipv4 = 4, ipv6 = 6 };

/// An IPv4 or IPv6 address in network byte order; an IPv4 address uses `bytes[0..3]`, the rest is zero.
/// 17 bytes, trivially copyable, totally ordered (family first, then bytes).
struct ip_address {
  std::array<std::uint8_t, 16> bytes{};
  ip_family family = ip_family::ipv4;
  friend constexpr auto operator<=>(const ip_address&, const ip_address&) noexcept = default;
  friend constexpr bool operator==(const ip_address&, const ip_address&) noexcept = default;
};

/// Parses a numeric address with inet_pton(3) semantics: dotted quad for IPv4 (no leading zeros, no
/// short forms), RFC 4291 text for IPv6 (including `::ffff:1.2.3.4`). No brackets, no zone ids.
[[nodiscard]] std::optional<ip_address> parse_ip_address(std::string_view text) noexcept;
/// Formats as inet_ntop(3) does, which is what iptables-save and nft print (RFC 5952 for IPv6).
[[nodiscard]] std::string to_string(const ip_address& a);
/// Parses an IPv4 address in the forms inet_aton(3) takes, which is how getaddrinfo(3), and so nft, reads
/// a numeric host name: one to four numbers joined by dots, each decimal, octal after a leading 0 or hex
/// after 0x, the last filling the bytes left (`1.2` is 1.0.0.2, `0x0a000001` is 10.0.0.1, `010.1` is
/// 8.0.0.1). Nothing for any other text, a number too wide for its bytes included (`1.2.65536`).
[[nodiscard]] std::optional<ip_address> parse_ipv4_inet_aton(std::string_view text) noexcept;
/// Whether `text` is made only of numbers in those forms joined by dots, whether or not they make an address
/// (`1.2`, `0x0a.1`, `08`, `1.2.3.256`): what getaddrinfo(3) takes for an address and never looks up as a
/// host name, so that one parse_ipv4_inet_aton refuses is no address at all.
[[nodiscard]] bool is_numeric_host(std::string_view text) noexcept;
/// Builds an IPv4 address from a host-order integer (`0x0a000001` is 10.0.0.1).
[[nodiscard]] ip_address ipv4(std::uint32_t host_order) noexcept;

/// A CIDR prefix: `address/length`. `length` is 0-32 (IPv4) or 0-128 (IPv6).
struct ip_prefix {
  ip_address address;
  std::uint8_t length = 0;
  friend constexpr auto operator<=>(const ip_prefix&, const ip_prefix&) noexcept = default;
  friend constexpr bool operator==(const ip_prefix&, const ip_prefix&) noexcept = default;
};

/// Parses `address` (a full-length prefix) or `address/length`. Host bits are kept as written.
[[nodiscard]] std::optional<ip_prefix> parse_ip_prefix(std::string_view text) noexcept;
/// `address/length`, always with the length.
[[nodiscard]] std::string to_string(const ip_prefix& p);
/// Full length of the family: 32 or 128.
[[nodiscard]] constexpr std::uint8_t max_prefix_length(ip_family f) noexcept { return f == ip_family::ipv4 ? 32 : 128; }
/// True when `a` is of the prefix's family and its first `length` bits equal the prefix's.
[[nodiscard]] bool contains(const ip_prefix& p, const ip_address& a) noexcept;
/// The prefix length of a contiguous netmask (255.255.255.0 gives 24), or nothing when the mask has
/// holes (iptables(8) accepts such masks and prints them in dotted form).
[[nodiscard]] std::optional<std::uint8_t> mask_length(const ip_address& mask) noexcept;
/// The netmask of a prefix length (24 gives 255.255.255.0).
[[nodiscard]] ip_address mask_of(ip_family f, std::uint8_t length) noexcept;
/// `a` AND `mask`, byte by byte (any mask, contiguous or not, as iptables(8) `-s address/mask`).
[[nodiscard]] ip_address masked(const ip_address& a, const ip_address& mask) noexcept;
/// The prefix with the bits past its length cleared: `1.2.3.4/24` gives `1.2.3.0/24`, as the kernel
/// stores and lists a prefix. A length past the family's full length is taken as the full length.
[[nodiscard]] ip_prefix masked(const ip_prefix& p) noexcept;

/// An inclusive port range; a single port has `first == last`.
struct port_range {
  std::uint16_t first = 0;
  std::uint16_t last = 0;
  friend constexpr auto operator<=>(const port_range&, const port_range&) noexcept = default;
  friend constexpr bool operator==(const port_range&, const port_range&) noexcept = default;
};

/// Transport protocols named by both formats. `other` keeps the number in the owning node.
enum class l4_protocol : std::uint8_t { any, tcp, udp, sctp, icmp, icmpv6, udplite, dccp, esp, ah, gre, other };
/// The protocol number (IANA), or nothing for `any`/`other`.
[[nodiscard]] std::optional<std::uint8_t> protocol_number(l4_protocol p) noexcept;
/// `tcp`, `udp`, ... as iptables-save and nft print them (`ipv6-icmp` is nft's name for icmpv6 in
/// `meta l4proto`; this returns `icmpv6`, format printers choose their spelling).
[[nodiscard]] std::string_view protocol_name(l4_protocol p) noexcept;
/// Parses a protocol name or number as /etc/protocols spells them; unknown names give nothing.
[[nodiscard]] std::optional<l4_protocol> parse_protocol(std::string_view name) noexcept;

}  // namespace nflens

template <>
struct std::hash<nflens::ip_address> {
  std::size_t operator()(const nflens::ip_address& a) const noexcept;
};
