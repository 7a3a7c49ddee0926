// SPDX-License-Identifier: MIT
// JSON value kinds over the datatype table of nft_types.hpp (see types.hpp).
#include "nft_json/types.hpp"

#include "nft/datatype.hpp"

#include <string>

namespace nflens::nft::json_detail {

value_kind kind_of(nft::datatype t) noexcept {
  using dt = nft::datatype;
  switch (t) {
    case dt::invalid:
      return value_kind::unknown;
    case dt::ipv4_addr:
    case dt::ipv6_addr:
      return value_kind::address;
    case dt::ether_addr:
    case dt::lladdr:
      return value_kind::ether;
    case dt::string:
    case dt::ifname:
    case dt::iface_index:  // a name in JSON; a number only where nft could not resolve it
    case dt::hour:
    case dt::date:
    case dt::cgroupsv2:
      return value_kind::string;
    case dt::time:
      return value_kind::time;
    // types whose base type is bitmask_type (`bitmask` itself, `comp flags`, is an integer: nft's JSON
    // writes `==` for it, `in` for these)
    case dt::tcp_flag:
    case dt::ct_state:
    case dt::ct_status:
    case dt::ct_event:
    case dt::ct_label:
      return value_kind::bitmask;
    case dt::boolean:
      return value_kind::boolean;
    default:
      return value_kind::integer;
  }
}

datatype json_type(nft::datatype t, std::uint16_t bits) noexcept {
  if (t == nft::datatype::invalid) return {};
  return {name(t), kind_of(t), bits != 0 ? bits : width(t)};
}

datatype type_of(const expr& e, family fam) noexcept {
  if (const auto* b = e.get<binop_expr>()) return b->left() != nullptr ? type_of(*b->left(), fam) : datatype{};
  const type_info ti = nft::type_of(e);
  if (ti.type != nft::datatype::invalid) return json_type(ti.type, ti.bits);
  // selectors whose address family the table decides
  const auto* c = e.get<ct_expr>();
  const auto* r = e.get<rt_expr>();
  if ((c != nullptr && (c->key == ct_key::saddr || c->key == ct_key::daddr)) ||
      (r != nullptr && r->key == rt_key::nexthop)) {
    if (fam == family::ip) return json_type(nft::datatype::ipv4_addr, 32);
    if (fam == family::ip6) return json_type(nft::datatype::ipv6_addr, 128);
    return {"", value_kind::address, 0};
  }
  return {};
}

std::size_t type_names_of(const expr& e, family fam, std::string_view* out, std::size_t room) noexcept {
  if (const auto* c = e.get<concat_expr>()) {
    std::size_t n = 0;
    for (const auto& item : c->items) {
      if (n == room) break;
      n += type_names_of(item, fam, out + n, room - n);
    }
    return n;
  }
  if (room == 0) return 0;
  out[0] = type_of(e, fam).name;
  return 1;
}

std::string symbol_name(std::string_view type, std::uint64_t value) {
  const auto t = parse_datatype(type);
  if (!t) return {};
  switch (*t) {
    case nft::datatype::arp_op:
    case nft::datatype::icmp_type:
    case nft::datatype::icmpv6_type:
    case nft::datatype::dccp_pkttype:
    case nft::datatype::ecn:
      break;
    default:
      return {};
  }
  // the symbol tables are nft/datatype.cpp's; a value without a name is spelled as a number there
  std::string spelled;
  types::append_integer(spelled, value, *t);
  if (spelled.empty() || !((spelled[0] >= 'a' && spelled[0] <= 'z') || (spelled[0] >= 'A' && spelled[0] <= 'Z')))
    return {};
  return spelled;
}

}  // namespace nflens::nft::json_detail
