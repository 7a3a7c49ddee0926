// SPDX-License-Identifier: MIT
#pragma once

// How libnftables JSON writes and reads a value of a selector's type. The types themselves come from
// the one datatype table (nft_types.hpp: what each selector reads, and its width; nft/datatype.hpp: the
// symbolic constants); this adds only what JSON needs on top: the kind of JSON value (`value_kind`) a
// type's values take. Both directions use it: the writer for `typeof` map data and the `in` operator
// of bitmask types, the reader to turn a JSON string into the node the text parser would have made (a
// quoted string for an interface name, an address, a symbol for a symbolic constant), a JSON number
// into a duration for time types, and to reject a number too wide for its selector. Private.

#include <nflens/nft_expr.hpp>
#include <nflens/nft_types.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace nflens::nft::json_detail {

/// How a value of a type is written.
enum class value_kind : std::uint8_t {
  integer,  ///< a number, or a symbolic constant of the type (`tcp`, `established`)
  bitmask,  ///< flags: a match without operator is "any of these bits" (JSON op `in`)
  address,  ///< an IPv4 or IPv6 address (or a symbolic host name)
  ether,    ///< an Ethernet address
  string,   ///< quoted text: interface names, helper names, `meta hour "17:00"`
  time,     ///< a duration: `30s` in text, seconds in JSON
  boolean,  ///< `exists` / `missing`; JSON true/false
  unknown,  ///< nothing known (a raw payload, a concatenation, a computed value)
};

/// The JSON value kind of values of datatype `t`.
[[nodiscard]] value_kind kind_of(nft::datatype t) noexcept;

struct datatype {
  std::string_view name;  ///< nft's datatype name (`ipv4_addr`); empty when unknown
  value_kind kind = value_kind::unknown;
  std::uint16_t bits = 0;  ///< width of what the selector reads; 0 when not known or not fixed
};

/// `t` as the JSON side sees it, of width `bits` (the type's own width when 0).
[[nodiscard]] datatype json_type(nft::datatype t, std::uint16_t bits = 0) noexcept;

/// The type of a selector expression in a table of family `fam` (binops take the type of their left
/// operand; a concatenation has no single type). `ct saddr` and `rt nexthop` without a protocol take
/// the table's, an address of either family in inet, bridge and netdev.
[[nodiscard]] datatype type_of(const expr& e, family fam) noexcept;

/// The datatype name list nft prints for a `typeof` expression used as map data (`"mark"`,
/// `["ipv4_addr", "inet_service"]`): one name per concatenation item; empty names where unknown.
/// `out` must have room for `room` names; returns how many it wrote.
std::size_t type_names_of(const expr& e, family fam, std::string_view* out, std::size_t room) noexcept;

/// The symbolic constant nft's JSON gives `value` of type `type` where its text prints a number (the
/// ends of a range of ARP operations, ICMP and ICMPv6 types, DCCP packet types, ECN values). Empty
/// when the type is not one of those or the value has no name.
[[nodiscard]] std::string symbol_name(std::string_view type, std::uint64_t value);

/// The l3proto of a ct helper, timeout or expectation that names none: what the kernel stores and
/// lists, the table's family (ip6 in an ip6 table, ip everywhere else, inet included).
[[nodiscard]] constexpr family default_l3proto(family table) noexcept {
  return table == family::ip6 ? family::ip6 : family::ip;
}

}  // namespace nflens::nft::json_detail
