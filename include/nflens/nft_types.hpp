// SPDX-License-Identifier: MIT
#pragma once

/// @file
/// nftables datatypes: what the value on the other side of a relation (or in a set of that key) means,
/// so that a printer writes it as nft does (`meta mark 0x00004000`, `tcp dport 22`, `ct state
/// established,related`, `meta l4proto tcp`) and JSON output uses the right form. The table follows the
/// templates of nftables' src/proto.c, meta.c, ct.c, exthdr.c, fib.c, rt.c and the datatype names of
/// src/datatype.c (the names `type ...` in a set declaration takes).

#include <nflens/nft_expr.hpp>

#include <cstdint>
#include <optional>
#include <string_view>

namespace nflens::nft {

/// nft's datatypes by their `type` names (datatype.c, proto.c, meta.c, ct.c, fib.c, rt.c, exthdr.c).
enum class datatype : std::uint8_t {
  invalid,
  verdict,
  nf_proto,  ///< `meta nfproto`: ipv4, ipv6
  bitmask,
  integer,
  string,
  lladdr,  ///< `ll_addr`
  ipv4_addr,
  ipv6_addr,
  ether_addr,
  ether_type,  ///< `ether type`, `meta protocol`: ip, ip6, arp, vlan, 8021q, ...
  arp_op,
  inet_proto,    ///< `ip protocol`, `meta l4proto`: tcp, udp, icmp, ...
  inet_service,  ///< ports (printed as numbers)
  icmp_type,
  icmp_code,
  icmpv6_type,
  icmpv6_code,
  icmpx_code,
  igmp_type,
  tcp_flag,
  dccp_pkttype,
  mh_type,
  time,
  boolean,
  mark,     ///< printed in hex, 8 digits
  classid,  ///< `tc_handle` / class ids `1:2`
  iface_index,
  iface_type,  ///< `arphrd` names: ether, ppp, loopback, ...
  realm,
  uid,
  gid,
  pkt_type,  ///< host, broadcast, multicast, other
  devgroup,
  ifname,
  day,
  hour,
  date,  ///< `meta time`
  ct_state,
  ct_dir,
  ct_status,
  ct_event,
  ct_label,
  fib_addrtype,  ///< `fib ... type`: local, unicast, ...
  dscp,
  ecn,
  cgroupsv2,
  queue,
  xinteger,       ///< an integer nft prints in hex (`ip frag-off`, raw payloads)
  mptcp_subtype,  ///< `tcp option mptcp subtype` (an integer with names: mp-capable, mp-join, ...)
};

/// The width in bits of a value of a datatype where the type fixes it (datatype.c `size`): 16 for
/// `inet_service`, 32 for `ipv4_addr` and `mark`, 128 for `ifname`, 6 for `dscp`, ...; 0 where the
/// selector decides (`integer`, `bitmask`, `string`, raw payloads) or nothing is fixed (`verdict`).
[[nodiscard]] std::uint16_t width(datatype t) noexcept;
/// The `type` name of a datatype (`ipv4_addr`, `inet_service`, ...); empty for invalid.
[[nodiscard]] std::string_view name(datatype t) noexcept;
/// The datatype a `type NAME` in a set or map declaration names; nothing for an unknown name.
[[nodiscard]] std::optional<datatype> parse_datatype(std::string_view name) noexcept;

/// The datatype of what a selector reads, and its width in bits (0 when it depends on the context, as
/// for `ct saddr` without `ip`/`ip6`, or on the length written, as for raw payloads).
struct type_info {
  datatype type = datatype::invalid;
  std::uint16_t bits = 0;
  friend constexpr bool operator==(const type_info&, const type_info&) noexcept = default;
};

[[nodiscard]] type_info type_of(const payload_expr& e) noexcept;
[[nodiscard]] type_info type_of(meta_key k) noexcept;
[[nodiscard]] type_info type_of(const ct_expr& e) noexcept;
[[nodiscard]] type_info type_of(const fib_expr& e) noexcept;
[[nodiscard]] type_info type_of(const rt_expr& e) noexcept;
/// The datatype of a selector expression (payload, meta, ct, fib, rt, socket, osf, ipsec, numgen,
/// hash, tunnel); `invalid` for constants, concatenations and operators (see `type_of` of their parts).
[[nodiscard]] type_info type_of(const expr& e) noexcept;

}  // namespace nflens::nft
