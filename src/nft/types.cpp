// SPDX-License-Identifier: MIT
// The datatype table: what each selector reads, after the templates of nftables' proto.c, meta.c,
// ct.c, exthdr.c, tcpopt.c, ipopt.c, sctp_chunk.c, fib.c and rt.c.

#include <nflens/nft_types.hpp>

#include "nft/vocabulary.hpp"

namespace nflens::nft {

namespace {

using dt = datatype;
using hf = header_field;

inline constexpr vocab::word<datatype> datatype_names[] = {
    {"verdict", dt::verdict},
    {"nf_proto", dt::nf_proto},
    {"bitmask", dt::bitmask},
    {"integer", dt::integer},
    {"string", dt::string},
    {"ll_addr", dt::lladdr},
    {"ipv4_addr", dt::ipv4_addr},
    {"ipv6_addr", dt::ipv6_addr},
    {"ether_addr", dt::ether_addr},
    {"ether_type", dt::ether_type},
    {"arp_op", dt::arp_op},
    {"inet_proto", dt::inet_proto},
    {"inet_service", dt::inet_service},
    {"icmp_type", dt::icmp_type},
    {"icmp_code", dt::icmp_code},
    {"icmpv6_type", dt::icmpv6_type},
    {"icmpv6_code", dt::icmpv6_code},
    {"icmpx_code", dt::icmpx_code},
    {"igmp_type", dt::igmp_type},
    {"tcp_flag", dt::tcp_flag},
    {"dccp_pkttype", dt::dccp_pkttype},
    {"mh_type", dt::mh_type},
    {"time", dt::time},
    {"boolean", dt::boolean},
    {"mark", dt::mark},
    {"classid", dt::classid},
    {"iface_index", dt::iface_index},
    {"iface_type", dt::iface_type},
    {"realm", dt::realm},
    {"uid", dt::uid},
    {"gid", dt::gid},
    {"pkt_type", dt::pkt_type},
    {"devgroup", dt::devgroup},
    {"ifname", dt::ifname},
    {"day", dt::day},
    {"hour", dt::hour},
    {"time", dt::date},
    {"ct_state", dt::ct_state},
    {"ct_dir", dt::ct_dir},
    {"ct_status", dt::ct_status},
    {"ct_event", dt::ct_event},
    {"ct_label", dt::ct_label},
    {"fib_addrtype", dt::fib_addrtype},
    {"dscp", dt::dscp},
    {"ecn", dt::ecn},
    {"cgroupsv2", dt::cgroupsv2},
    {"queue", dt::queue},
    {"integer", dt::xinteger},
    {"integer", dt::mptcp_subtype},
};

constexpr type_info t(datatype d, std::uint16_t bits) noexcept { return {d, bits}; }

type_info header_field_type(header h, hf f) noexcept {
  switch (f) {
    case hf::sport:
    case hf::dport:
      return t(dt::inet_service, 16);
    default:
      break;
  }
  switch (h) {
    case header::ether:
      if (f == hf::type) return t(dt::ether_type, 16);
      return t(dt::ether_addr, 48);
    case header::vlan:
      switch (f) {
        case hf::id:
          return t(dt::integer, 12);
        case hf::cfi:
        case hf::dei:
          return t(dt::integer, 1);
        case hf::pcp:
          return t(dt::integer, 3);
        default:
          return t(dt::ether_type, 16);
      }
    case header::arp:
      switch (f) {
        case hf::htype:
          return t(dt::integer, 16);
        case hf::ptype:
          return t(dt::ether_type, 16);
        case hf::hlen:
        case hf::plen:
          return t(dt::integer, 8);
        case hf::operation:
          return t(dt::arp_op, 16);
        case hf::saddr_ether:
        case hf::daddr_ether:
          return t(dt::ether_addr, 48);
        default:
          return t(dt::ipv4_addr, 32);
      }
    case header::ip:
      switch (f) {
        case hf::version:
        case hf::hdrlength:
          return t(dt::integer, 4);
        case hf::dscp:
          return t(dt::dscp, 6);
        case hf::ecn:
          return t(dt::ecn, 2);
        case hf::length:
        case hf::id:
        case hf::checksum:
          return t(dt::integer, 16);
        case hf::frag_off:
          return t(dt::xinteger, 16);
        case hf::ttl:
          return t(dt::integer, 8);
        case hf::protocol:
          return t(dt::inet_proto, 8);
        default:
          return t(dt::ipv4_addr, 32);
      }
    case header::icmp:
      switch (f) {
        case hf::type:
          return t(dt::icmp_type, 8);
        case hf::code:
          return t(dt::icmp_code, 8);
        case hf::gateway:
          return t(dt::integer, 32);
        default:
          return t(dt::integer, 16);
      }
    case header::igmp:
      switch (f) {
        case hf::type:
          return t(dt::igmp_type, 8);
        case hf::mrt:
          return t(dt::integer, 8);
        case hf::group:
          return t(dt::integer, 32);
        default:
          return t(dt::integer, 16);
      }
    case header::ip6:
      switch (f) {
        case hf::version:
          return t(dt::integer, 4);
        case hf::dscp:
          return t(dt::dscp, 6);
        case hf::ecn:
          return t(dt::ecn, 2);
        case hf::flowlabel:
          return t(dt::integer, 20);
        case hf::length:
          return t(dt::integer, 16);
        case hf::nexthdr:
          return t(dt::inet_proto, 8);
        case hf::hoplimit:
          return t(dt::integer, 8);
        default:
          return t(dt::ipv6_addr, 128);
      }
    case header::icmpv6:
      switch (f) {
        case hf::type:
          return t(dt::icmpv6_type, 8);
        case hf::code:
          return t(dt::icmpv6_code, 8);
        case hf::param_problem:
        case hf::mtu:
          return t(dt::integer, 32);
        case hf::taddr:
        case hf::daddr:
          return t(dt::ipv6_addr, 128);
        default:
          return t(dt::integer, 16);
      }
    case header::ah:
      switch (f) {
        case hf::nexthdr:
          return t(dt::inet_proto, 8);
        case hf::hdrlength:
          return t(dt::integer, 8);
        case hf::reserved:
          return t(dt::integer, 16);
        default:
          return t(dt::integer, 32);
      }
    case header::esp:
      return t(dt::integer, 32);
    case header::comp:
      switch (f) {
        case hf::nexthdr:
          return t(dt::inet_proto, 8);
        case hf::flags:
          return t(dt::bitmask, 8);
        default:
          return t(dt::integer, 16);
      }
    case header::udp:
    case header::udplite:
      return t(dt::integer, 16);
    case header::tcp:
      switch (f) {
        case hf::sequence:
        case hf::ackseq:
          return t(dt::integer, 32);
        case hf::doff:
        case hf::reserved:
          return t(dt::integer, 4);
        case hf::flags:
          return t(dt::tcp_flag, 8);
        default:
          return t(dt::integer, 16);
      }
    case header::dccp:
      return t(dt::dccp_pkttype, 4);
    case header::sctp:
      return t(dt::integer, 32);
    case header::th:
      return t(dt::inet_service, 16);
    case header::vxlan:
      return f == hf::vni ? t(dt::integer, 24) : t(dt::integer, 8);
    case header::geneve:
      return f == hf::vni ? t(dt::integer, 24) : t(dt::ether_type, 16);
    case header::gre:
    case header::gretap:
      switch (f) {
        case hf::version:
          return t(dt::integer, 3);
        case hf::flags:
          return t(dt::integer, 5);
        default:
          return t(dt::ether_type, 16);
      }
    case header::hbh:
    case header::dst:
      return f == hf::nexthdr ? t(dt::inet_proto, 8) : t(dt::integer, 8);
    case header::rt:
      return f == hf::nexthdr ? t(dt::inet_proto, 8) : t(dt::integer, 8);
    case header::rt0:
    case header::rt2:
      return t(dt::ipv6_addr, 128);
    case header::srh:
      switch (f) {
        case hf::tag:
          return t(dt::integer, 16);
        case hf::sid:
          return t(dt::ipv6_addr, 128);
        default:
          return t(dt::integer, 8);
      }
    case header::frag:
      switch (f) {
        case hf::nexthdr:
          return t(dt::inet_proto, 8);
        case hf::reserved:
          return t(dt::integer, 8);
        case hf::frag_off:
          return t(dt::integer, 13);
        case hf::reserved2:
          return t(dt::integer, 2);
        case hf::more_fragments:
          return t(dt::integer, 1);
        default:
          return t(dt::integer, 32);
      }
    case header::mh:
      switch (f) {
        case hf::nexthdr:
          return t(dt::inet_proto, 8);
        case hf::type:
          return t(dt::mh_type, 8);
        case hf::checksum:
          return t(dt::integer, 16);
        default:
          return t(dt::integer, 8);
      }
    case header::tcp_option:
      switch (f) {
        case hf::none:
          return t(dt::boolean, 8);  // a presence test loads a byte: 0 to 255 (`exists` is 1, `missing` 0)
        case hf::size:
          return t(dt::integer, 16);
        case hf::left:
        case hf::right:
        case hf::tsval:
        case hf::tsecr:
          return t(dt::integer, 32);
        case hf::subtype:
          return t(dt::integer, 4);
        default:
          return t(dt::integer, 8);
      }
    case header::ip_option:
      switch (f) {
        case hf::none:
          return t(dt::boolean, 8);  // a presence test loads a byte: 0 to 255 (`exists` is 1, `missing` 0)
        case hf::value:
          return t(dt::integer, 16);
        case hf::addr:
          return t(dt::ipv4_addr, 32);
        default:
          return t(dt::integer, 8);
      }
    case header::sctp_chunk:
      switch (f) {
        case hf::none:
          return t(dt::boolean, 8);  // a presence test loads a byte: 0 to 255 (`exists` is 1, `missing` 0)
        case hf::type:
        case hf::flags:
          return t(dt::integer, 8);
        case hf::length:
        case hf::stream:
        case hf::ssn:
        case hf::num_outbound_streams:
        case hf::num_inbound_streams:
        case hf::num_gap_ack_blocks:
        case hf::num_dup_tsns:
          return t(dt::integer, 16);
        default:
          return t(dt::integer, 32);
      }
    case header::dccp_option:
    case header::exthdr:
      return t(dt::boolean, 8);
    case header::raw:
      return t(dt::integer, 0);
  }
  return {};
}

}  // namespace

std::uint16_t width(datatype d) noexcept {
  switch (d) {
    case dt::invalid:
    case dt::verdict:
    case dt::bitmask:
    case dt::integer:
    case dt::string:
    case dt::lladdr:
    case dt::xinteger:
      return 0;
    case dt::boolean:
      return 1;
    case dt::ecn:
      return 2;
    case dt::dccp_pkttype:
    case dt::mptcp_subtype:
      return 4;
    case dt::dscp:
      return 6;
    case dt::nf_proto:
    case dt::inet_proto:
    case dt::icmp_type:
    case dt::icmp_code:
    case dt::icmpv6_type:
    case dt::icmpv6_code:
    case dt::icmpx_code:
    case dt::igmp_type:
    case dt::tcp_flag:
    case dt::mh_type:
    case dt::pkt_type:
    case dt::day:
    case dt::ct_dir:
      return 8;
    case dt::ether_type:
    case dt::arp_op:
    case dt::inet_service:
    case dt::iface_type:
    case dt::queue:
      return 16;
    case dt::ipv4_addr:
    case dt::mark:
    case dt::classid:
    case dt::iface_index:
    case dt::realm:
    case dt::uid:
    case dt::gid:
    case dt::devgroup:
    case dt::hour:
    case dt::ct_state:
    case dt::ct_status:
    case dt::ct_event:
    case dt::fib_addrtype:
      return 32;
    case dt::ether_addr:
      return 48;
    case dt::time:
    case dt::date:
    case dt::cgroupsv2:
      return 64;
    case dt::ipv6_addr:
    case dt::ifname:
    case dt::ct_label:
      return 128;
  }
  return 0;
}

std::string_view name(datatype d) noexcept { return vocab::spelling(datatype_names, d); }
std::optional<datatype> parse_datatype(std::string_view n) noexcept { return vocab::lookup(datatype_names, n); }

type_info type_of(const payload_expr& e) noexcept {
  // raw payloads print in hex (payload.c: xinteger_type)
  if (e.protocol == header::raw) return {datatype::xinteger, static_cast<std::uint16_t>(e.length)};
  if (e.protocol == header::tcp_option && e.length != 0)
    return {datatype::integer, static_cast<std::uint16_t>(e.length)};
  if (e.protocol == header::tcp_option && e.option == 30 && e.field == hf::subtype) return t(dt::mptcp_subtype, 4);
  return header_field_type(e.protocol, e.field);
}

type_info type_of(meta_key k) noexcept {
  switch (k) {
    case meta_key::length:
      return t(dt::integer, 32);
    case meta_key::protocol:
      return t(dt::ether_type, 16);
    case meta_key::priority:
      return t(dt::classid, 32);
    case meta_key::random:
      return t(dt::integer, 32);
    case meta_key::secmark:
      return t(dt::integer, 32);
    case meta_key::nfproto:
      return t(dt::nf_proto, 8);
    case meta_key::l4proto:
      return t(dt::inet_proto, 8);
    case meta_key::iifkind:
    case meta_key::oifkind:
    case meta_key::sdifname:
    case meta_key::iifname:
    case meta_key::oifname:
    case meta_key::ibrname:
    case meta_key::obrname:
      return t(dt::ifname, 128);
    case meta_key::ibrpvid:
      return t(dt::integer, 16);
    case meta_key::ibrvproto:
      return t(dt::ether_type, 16);
    case meta_key::sdif:
    case meta_key::iif:
    case meta_key::oif:
      return t(dt::iface_index, 32);
    case meta_key::broute:
      return t(dt::integer, 8);
    case meta_key::ibrhwaddr:
      return t(dt::ether_addr, 48);
    case meta_key::mark:
      return t(dt::mark, 32);
    case meta_key::iiftype:
    case meta_key::oiftype:
      return t(dt::iface_type, 16);
    case meta_key::skuid:
      return t(dt::uid, 32);
    case meta_key::skgid:
      return t(dt::gid, 32);
    case meta_key::nftrace:
      return t(dt::integer, 1);
    case meta_key::rtclassid:
      return t(dt::realm, 32);
    case meta_key::pkttype:
      return t(dt::pkt_type, 8);
    case meta_key::cpu:
      return t(dt::integer, 32);
    case meta_key::iifgroup:
    case meta_key::oifgroup:
      return t(dt::devgroup, 32);
    case meta_key::cgroup:
      return t(dt::integer, 32);
    case meta_key::ipsec:
      return t(dt::boolean, 8);
    case meta_key::time:
      return t(dt::date, 64);
    case meta_key::day:
      return t(dt::day, 8);
    case meta_key::hour:
      return t(dt::hour, 32);
  }
  return {};
}

type_info type_of(const ct_expr& e) noexcept {
  switch (e.key) {
    case ct_key::state:
      return t(dt::ct_state, 32);
    case ct_key::direction:
      return t(dt::ct_dir, 8);
    case ct_key::status:
      return t(dt::ct_status, 32);
    case ct_key::mark:
      return t(dt::mark, 32);
    case ct_key::expiration:
      return t(dt::time, 32);
    case ct_key::helper:
    case ct_key::timeout:
    case ct_key::expectation:
      return t(dt::string, 128);
    case ct_key::l3proto:
      return t(dt::nf_proto, 8);
    case ct_key::saddr:
    case ct_key::daddr:
      if (e.protocol == nfproto::ip) return t(dt::ipv4_addr, 32);
      if (e.protocol == nfproto::ip6) return t(dt::ipv6_addr, 128);
      return t(dt::invalid, 0);  // depends on the family (ct.c: invalid_type until evaluated)
    case ct_key::protocol:
      return t(dt::inet_proto, 8);
    case ct_key::proto_src:
    case ct_key::proto_dst:
      return t(dt::inet_service, 16);
    case ct_key::label:
      return t(dt::ct_label, 128);
    case ct_key::bytes:
    case ct_key::packets:
    case ct_key::avgpkt:
      return t(dt::integer, 64);
    case ct_key::zone:
      return t(dt::integer, 16);
    case ct_key::event:
      return t(dt::ct_event, 32);
    case ct_key::secmark:
    case ct_key::id:
      return t(dt::integer, 32);
  }
  return {};
}

type_info type_of(const fib_expr& e) noexcept {
  switch (e.result) {
    case fib_result::oif:
      return t(dt::iface_index, 32);
    case fib_result::oifname:
      return t(dt::ifname, 128);
    case fib_result::type:
      return t(dt::fib_addrtype, 32);
    case fib_result::check:
      return t(dt::boolean, 1);
  }
  return {};
}

type_info type_of(const rt_expr& e) noexcept {
  switch (e.key) {
    case rt_key::classid:
      return t(dt::realm, 32);
    case rt_key::nexthop:
      return e.protocol == nfproto::ip6  ? t(dt::ipv6_addr, 128)
             : e.protocol == nfproto::ip ? t(dt::ipv4_addr, 32)
                                         : t(dt::invalid, 0);
    case rt_key::mtu:
      return t(dt::integer, 16);
    case rt_key::ipsec:
      return t(dt::boolean, 8);
  }
  return {};
}

type_info type_of(const expr& e) noexcept {
  if (const auto* p = e.get<payload_expr>()) return type_of(*p);
  if (const auto* m = e.get<meta_expr>()) return type_of(m->key);
  if (const auto* c = e.get<ct_expr>()) return type_of(*c);
  if (const auto* f = e.get<fib_expr>()) return type_of(*f);
  if (const auto* r = e.get<rt_expr>()) return type_of(*r);
  if (const auto* s = e.get<socket_expr>()) {
    switch (s->key) {
      case socket_key::transparent:  // socket.c: integer_type, listed `socket transparent 1`; one bit (nft
      case socket_key::wildcard:     // refuses 2: "Value 2 exceeds valid range 0-1")
        return t(dt::integer, 1);
      case socket_key::mark:
        return t(dt::mark, 32);
      case socket_key::cgroupv2:
        return t(dt::cgroupsv2, 64);
    }
  }
  if (e.is<osf_expr>()) return t(dt::string, 128);
  if (const auto* x = e.get<ipsec_expr>()) {
    if (x->key == ipsec_key::reqid || x->key == ipsec_key::spi) return t(dt::integer, 32);
    return x->protocol == nfproto::ip6 ? t(dt::ipv6_addr, 128) : t(dt::ipv4_addr, 32);
  }
  if (e.is<numgen_expr>() || e.is<hash_expr>()) return t(dt::integer, 32);
  if (const auto* tu = e.get<tunnel_expr>()) return tu->key == tunnel_key::id ? t(dt::integer, 32) : t(dt::boolean, 1);
  return {};
}

}  // namespace nflens::nft
