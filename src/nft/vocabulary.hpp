// SPDX-License-Identifier: MIT
#pragma once

// The words of nft's closed vocabularies and the enum values they stand for, as nft(8) and nftables'
// scanner.l / proto.c / meta.c / ct.c spell them. One table per vocabulary, shared by the parser (word →
// value) and by the public name() functions (value → word). Private to the library.

#include <nflens/nft.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace nflens::nft::vocab {

/// Whether nft takes, and lists, priority name `n` in family `f` at hook `h` (rule.c
/// std_prio_family_hook_compat): filter in every family but netdev's and arp's own names, raw, mangle and
/// security in ip, ip6 and inet, dstnat at prerouting and srcnat at postrouting (nft 1.1 also dstnat at
/// output and srcnat at input; 1.0.6 refuses those: `old`), bridge's dstnat, filter, out and srcnat at
/// prerouting, any, output and postrouting. Elsewhere nft says "invalid priority expression value in this
/// context".
[[nodiscard]] bool priority_name_fits(priority_name n, family f, hook h, bool old = false) noexcept;

/// Why the kernel refuses limit `l` (net/netfilter/nft_limit.c nft_limit_init), or nothing when it takes
/// it: a rate of 0 (EINVAL), or a token bucket that overflows 64 bits of nanoseconds (EOVERFLOW: the
/// unit's nanoseconds times the burst over the rate for packets, times rate + burst for bytes).
[[nodiscard]] std::optional<std::string_view> limit_refusal(const limit_stmt& l) noexcept;
/// Why the kernel refuses quota `q` (net/netfilter/nft_quota.c nft_quota_do_init), or nothing: a quota past
/// 2^63 - 1 bytes (EOVERFLOW), or more bytes used than the quota (EINVAL).
[[nodiscard]] std::optional<std::string_view> quota_refusal(const quota_stmt& q) noexcept;

/// The protocol of a ct helper, ct timeout or ct expectation object: nft's grammar takes `tcp` and `udp`
/// only (`ct_l4protoname`: "expecting udp or tcp"), and its JSON parser only those strings.
[[nodiscard]] constexpr bool ct_object_protocol(std::string_view p) noexcept { return p == "tcp" || p == "udp"; }
/// What nft refuses in the settings of ct objects, in a message that quotes nft; nothing when it takes them. The
/// text parser and the JSON reader share them.
/// - a helper name (`type "ftp"`) of 16 bytes or more: the kernel's names are 16 bytes with their NUL;
[[nodiscard]] std::optional<std::string> ct_helper_name_problem(std::string_view type);
/// - a ct timeout policy's state that is not `protocol`'s (ct.c's names of the kernel's cttimeout attributes:
///   eleven for tcp, two for udp; lower case);
[[nodiscard]] std::optional<std::string> ct_timeout_state_problem(std::string_view protocol, std::string_view state);
/// - an expectation without a dport, a timeout or a size, or with one of them 0 ("missing options").
[[nodiscard]] std::optional<std::string> ct_expectation_problem(const ct_expectation_object& x, std::string_view name);

template <class E>
struct word {
  std::string_view text;
  E value;
};

/// Finds `text` in a table (tables are small; a linear scan beats hashing here).
template <class E, std::size_t N>
[[nodiscard]] constexpr std::optional<E> lookup(const word<E> (&table)[N], std::string_view text) noexcept {
  for (const auto& w : table)
    if (w.text == text) return w.value;
  return std::nullopt;
}
/// The first word of `value` in a table (the spelling nft prints).
template <class E, std::size_t N>
[[nodiscard]] constexpr std::string_view spelling(const word<E> (&table)[N], E value) noexcept {
  for (const auto& w : table)
    if (w.value == value) return w.text;
  return {};
}

inline constexpr word<family> families[] = {
    {"ip", family::ip},   {"ip6", family::ip6},       {"inet", family::inet},
    {"arp", family::arp}, {"bridge", family::bridge}, {"netdev", family::netdev},
};

inline constexpr word<hook> hooks[] = {
    {"prerouting", hook::prerouting},   {"input", hook::input},
    {"forward", hook::forward},         {"output", hook::output},
    {"postrouting", hook::postrouting}, {"ingress", hook::ingress},
    {"egress", hook::egress},
};

inline constexpr word<chain_type> chain_types[] = {
    {"filter", chain_type::filter}, {"nat", chain_type::nat}, {"route", chain_type::route}};

inline constexpr word<priority_name> priority_names[] = {
    {"raw", priority_name::raw},       {"mangle", priority_name::mangle},     {"dstnat", priority_name::dstnat},
    {"filter", priority_name::filter}, {"security", priority_name::security}, {"srcnat", priority_name::srcnat},
    {"out", priority_name::out},
};

/// Meta keys nft accepts without `meta` (`meta_key_unqualified`), first spelling printed.
inline constexpr word<meta_key> meta_keys_unqualified[] = {
    {"mark", meta_key::mark},
    {"iif", meta_key::iif},
    {"iifname", meta_key::iifname},
    {"iiftype", meta_key::iiftype},
    {"oif", meta_key::oif},
    {"oifname", meta_key::oifname},
    {"oiftype", meta_key::oiftype},
    {"skuid", meta_key::skuid},
    {"skgid", meta_key::skgid},
    {"nftrace", meta_key::nftrace},
    {"rtclassid", meta_key::rtclassid},
    {"ibrname", meta_key::ibrname},
    {"ibriport", meta_key::ibrname},
    {"obrname", meta_key::obrname},
    {"obriport", meta_key::obrname},
    {"pkttype", meta_key::pkttype},
    {"cpu", meta_key::cpu},
    {"iifgroup", meta_key::iifgroup},
    {"oifgroup", meta_key::oifgroup},
    {"cgroup", meta_key::cgroup},
    {"ipsec", meta_key::ipsec},
    {"time", meta_key::time},
    {"day", meta_key::day},
    {"hour", meta_key::hour},
};
/// Meta keys that need `meta` (`meta_key_qualified`); `secpath` is the old name of `ipsec`.
inline constexpr word<meta_key> meta_keys_qualified[] = {
    {"length", meta_key::length},     {"protocol", meta_key::protocol},   {"priority", meta_key::priority},
    {"random", meta_key::random},     {"secmark", meta_key::secmark},     {"nfproto", meta_key::nfproto},
    {"l4proto", meta_key::l4proto},   {"iifkind", meta_key::iifkind},     {"oifkind", meta_key::oifkind},
    {"ibrpvid", meta_key::ibrpvid},   {"ibrvproto", meta_key::ibrvproto}, {"sdif", meta_key::sdif},
    {"sdifname", meta_key::sdifname}, {"broute", meta_key::broute},       {"ibrhwaddr", meta_key::ibrhwaddr},
    {"secpath", meta_key::ipsec},
};

/// ct keys (`ct_key`, `ct_key_dir`, `ct_key_dir_optional`).
inline constexpr word<ct_key> ct_keys[] = {
    {"l3proto", ct_key::l3proto},
    {"protocol", ct_key::protocol},
    {"mark", ct_key::mark},
    {"state", ct_key::state},
    {"direction", ct_key::direction},
    {"status", ct_key::status},
    {"expiration", ct_key::expiration},
    {"helper", ct_key::helper},
    {"saddr", ct_key::saddr},
    {"daddr", ct_key::daddr},
    {"proto-src", ct_key::proto_src},
    {"proto-dst", ct_key::proto_dst},
    {"label", ct_key::label},
    {"event", ct_key::event},
    {"secmark", ct_key::secmark},
    {"id", ct_key::id},
    {"bytes", ct_key::bytes},
    {"packets", ct_key::packets},
    {"avgpkt", ct_key::avgpkt},
    {"zone", ct_key::zone},
    {"timeout", ct_key::timeout},
    {"expectation", ct_key::expectation},
};
/// Keys allowed after a direction (`ct original KEY`).
[[nodiscard]] constexpr bool ct_key_takes_direction(ct_key k) noexcept {
  switch (k) {
    case ct_key::saddr:
    case ct_key::daddr:
    case ct_key::l3proto:
    case ct_key::protocol:
    case ct_key::proto_src:
    case ct_key::proto_dst:
    case ct_key::bytes:
    case ct_key::packets:
    case ct_key::avgpkt:
    case ct_key::zone:
      return true;
    default:
      return false;
  }
}

inline constexpr word<header> header_names[] = {
    {"ether", header::ether},
    {"vlan", header::vlan},
    {"arp", header::arp},
    {"ip", header::ip},
    {"icmp", header::icmp},
    {"igmp", header::igmp},
    {"ip6", header::ip6},
    {"icmpv6", header::icmpv6},
    {"ah", header::ah},
    {"esp", header::esp},
    {"comp", header::comp},
    {"udp", header::udp},
    {"udplite", header::udplite},
    {"tcp", header::tcp},
    {"dccp", header::dccp},
    {"sctp", header::sctp},
    {"th", header::th},
    {"vxlan", header::vxlan},
    {"geneve", header::geneve},
    {"gre", header::gre},
    {"gretap", header::gretap},
    {"hbh", header::hbh},
    {"rt", header::rt},
    {"rt0", header::rt0},
    {"rt2", header::rt2},
    {"srh", header::srh},
    {"frag", header::frag},
    {"dst", header::dst},
    {"mh", header::mh},
    {"tcp option", header::tcp_option},
    {"ip option", header::ip_option},
    {"sctp chunk", header::sctp_chunk},
    {"dccp option", header::dccp_option},
    {"@", header::raw},
    {"exthdr", header::exthdr},
};

using hf = header_field;
// Fields per header, in the order of parser_bison.y's *_hdr_field rules; the first spelling is printed.
inline constexpr word<hf> ether_fields[] = {{"saddr", hf::saddr}, {"daddr", hf::daddr}, {"type", hf::type}};
inline constexpr word<hf> vlan_fields[] = {
    {"id", hf::id}, {"cfi", hf::cfi}, {"dei", hf::dei}, {"pcp", hf::pcp}, {"type", hf::type}};
inline constexpr word<hf> arp_fields[] = {{"htype", hf::htype},
                                          {"ptype", hf::ptype},
                                          {"hlen", hf::hlen},
                                          {"plen", hf::plen},
                                          {"operation", hf::operation},
                                          {"saddr ether", hf::saddr_ether},
                                          {"daddr ether", hf::daddr_ether},
                                          {"saddr ip", hf::saddr_ip},
                                          {"daddr ip", hf::daddr_ip}};
inline constexpr word<hf> ip_fields[] = {{"version", hf::version},   {"hdrlength", hf::hdrlength},
                                         {"dscp", hf::dscp},         {"ecn", hf::ecn},
                                         {"length", hf::length},     {"id", hf::id},
                                         {"frag-off", hf::frag_off}, {"ttl", hf::ttl},
                                         {"protocol", hf::protocol}, {"checksum", hf::checksum},
                                         {"saddr", hf::saddr},       {"daddr", hf::daddr}};
inline constexpr word<hf> icmp_fields[] = {{"type", hf::type}, {"code", hf::code},         {"checksum", hf::checksum},
                                           {"id", hf::id},     {"sequence", hf::sequence}, {"gateway", hf::gateway},
                                           {"mtu", hf::mtu}};
inline constexpr word<hf> igmp_fields[] = {
    {"type", hf::type}, {"checksum", hf::checksum}, {"mrt", hf::mrt}, {"group", hf::group}};
inline constexpr word<hf> ip6_fields[] = {
    {"version", hf::version},     {"dscp", hf::dscp},     {"ecn", hf::ecn},
    {"flowlabel", hf::flowlabel}, {"length", hf::length}, {"nexthdr", hf::nexthdr},
    {"hoplimit", hf::hoplimit},   {"saddr", hf::saddr},   {"daddr", hf::daddr}};
inline constexpr word<hf> icmpv6_fields[] = {
    {"type", hf::type},   {"code", hf::code},  {"checksum", hf::checksum}, {"param-problem", hf::param_problem},
    {"mtu", hf::mtu},     {"id", hf::id},      {"sequence", hf::sequence}, {"max-delay", hf::max_delay},
    {"taddr", hf::taddr}, {"daddr", hf::daddr}};
inline constexpr word<hf> ah_fields[] = {{"nexthdr", hf::nexthdr},
                                         {"hdrlength", hf::hdrlength},
                                         {"reserved", hf::reserved},
                                         {"spi", hf::spi},
                                         {"sequence", hf::sequence}};
inline constexpr word<hf> esp_fields[] = {{"spi", hf::spi}, {"sequence", hf::sequence}};
inline constexpr word<hf> comp_fields[] = {{"nexthdr", hf::nexthdr}, {"flags", hf::flags}, {"cpi", hf::cpi}};
inline constexpr word<hf> udp_fields[] = {
    {"sport", hf::sport}, {"dport", hf::dport}, {"length", hf::length}, {"checksum", hf::checksum}};
inline constexpr word<hf> udplite_fields[] = {
    {"sport", hf::sport}, {"dport", hf::dport}, {"csumcov", hf::csumcov}, {"checksum", hf::checksum}};
inline constexpr word<hf> tcp_fields[] = {{"sport", hf::sport},   {"dport", hf::dport},   {"sequence", hf::sequence},
                                          {"ackseq", hf::ackseq}, {"doff", hf::doff},     {"reserved", hf::reserved},
                                          {"flags", hf::flags},   {"window", hf::window}, {"checksum", hf::checksum},
                                          {"urgptr", hf::urgptr}};
inline constexpr word<hf> dccp_fields[] = {{"sport", hf::sport}, {"dport", hf::dport}, {"type", hf::type}};
inline constexpr word<hf> sctp_fields[] = {
    {"sport", hf::sport}, {"dport", hf::dport}, {"vtag", hf::vtag}, {"checksum", hf::checksum}};
inline constexpr word<hf> th_fields[] = {{"sport", hf::sport}, {"dport", hf::dport}};
inline constexpr word<hf> vxlan_fields[] = {{"vni", hf::vni}, {"flags", hf::flags}};
inline constexpr word<hf> geneve_fields[] = {{"vni", hf::vni}, {"type", hf::type}};
inline constexpr word<hf> gre_fields[] = {{"version", hf::version}, {"flags", hf::flags}, {"protocol", hf::protocol}};
inline constexpr word<hf> hbh_fields[] = {{"nexthdr", hf::nexthdr}, {"hdrlength", hf::hdrlength}};
inline constexpr word<hf> rt_fields[] = {
    {"nexthdr", hf::nexthdr}, {"hdrlength", hf::hdrlength}, {"type", hf::type}, {"seg-left", hf::seg_left}};
inline constexpr word<hf> rt0_fields[] = {{"addr", hf::addr}};
inline constexpr word<hf> rt2_fields[] = {{"addr", hf::addr}};
inline constexpr word<hf> srh_fields[] = {
    {"last-entry", hf::last_entry}, {"flags", hf::flags}, {"tag", hf::tag}, {"sid", hf::sid}};
inline constexpr word<hf> frag_fields[] = {{"nexthdr", hf::nexthdr},
                                           {"reserved", hf::reserved},
                                           {"frag-off", hf::frag_off},
                                           {"reserved2", hf::reserved2},
                                           {"more-fragments", hf::more_fragments},
                                           {"id", hf::id}};
inline constexpr word<hf> dst_fields[] = {{"nexthdr", hf::nexthdr}, {"hdrlength", hf::hdrlength}};
inline constexpr word<hf> mh_fields[] = {{"nexthdr", hf::nexthdr},
                                         {"hdrlength", hf::hdrlength},
                                         {"type", hf::type},
                                         {"reserved", hf::reserved},
                                         {"checksum", hf::checksum}};
inline constexpr word<hf> ip_option_fields[] = {
    {"type", hf::type}, {"length", hf::length}, {"value", hf::value}, {"ptr", hf::ptr}, {"addr", hf::addr}};
inline constexpr word<hf> tcp_option_fields[] = {
    {"kind", hf::type},   {"length", hf::length}, {"size", hf::size},   {"left", hf::left},      {"right", hf::right},
    {"count", hf::count}, {"tsval", hf::tsval},   {"tsecr", hf::tsecr}, {"subtype", hf::subtype}};
inline constexpr word<hf> sctp_chunk_fields[] = {{"type", hf::type},
                                                 {"flags", hf::flags},
                                                 {"length", hf::length},
                                                 {"tsn", hf::tsn},
                                                 {"stream", hf::stream},
                                                 {"ssn", hf::ssn},
                                                 {"ppid", hf::ppid},
                                                 {"init-tag", hf::init_tag},
                                                 {"a-rwnd", hf::a_rwnd},
                                                 {"num-outbound-streams", hf::num_outbound_streams},
                                                 {"num-inbound-streams", hf::num_inbound_streams},
                                                 {"initial-tsn", hf::initial_tsn},
                                                 {"cum-tsn-ack", hf::cum_tsn_ack},
                                                 {"num-gap-ack-blocks", hf::num_gap_ack_blocks},
                                                 {"num-dup-tsns", hf::num_dup_tsns},
                                                 {"lowest-tsn", hf::lowest_tsn},
                                                 {"seqno", hf::seqno},
                                                 {"new-cum-tsn", hf::new_cum_tsn}};

/// The field table of a header (empty for headers without named fields).
[[nodiscard]] constexpr std::span<const word<hf>> fields_of(header h) noexcept {
  switch (h) {
    case header::ether:
      return ether_fields;
    case header::vlan:
      return vlan_fields;
    case header::arp:
      return arp_fields;
    case header::ip:
      return ip_fields;
    case header::icmp:
      return icmp_fields;
    case header::igmp:
      return igmp_fields;
    case header::ip6:
      return ip6_fields;
    case header::icmpv6:
      return icmpv6_fields;
    case header::ah:
      return ah_fields;
    case header::esp:
      return esp_fields;
    case header::comp:
      return comp_fields;
    case header::udp:
      return udp_fields;
    case header::udplite:
      return udplite_fields;
    case header::tcp:
      return tcp_fields;
    case header::dccp:
      return dccp_fields;
    case header::sctp:
      return sctp_fields;
    case header::th:
      return th_fields;
    case header::vxlan:
      return vxlan_fields;
    case header::geneve:
      return geneve_fields;
    case header::gre:
    case header::gretap:
      return gre_fields;
    case header::hbh:
      return hbh_fields;
    case header::rt:
      return rt_fields;
    case header::rt0:
      return rt0_fields;
    case header::rt2:
      return rt2_fields;
    case header::srh:
      return srh_fields;
    case header::frag:
      return frag_fields;
    case header::dst:
      return dst_fields;
    case header::mh:
      return mh_fields;
    case header::ip_option:
      return ip_option_fields;
    case header::tcp_option:
      return tcp_option_fields;
    case header::sctp_chunk:
      return sctp_chunk_fields;
    default:
      return {};
  }
}
[[nodiscard]] constexpr std::optional<hf> lookup_field(header h, std::string_view text) noexcept {
  // Length and first letter before the compare (a call to memcmp): every payload expression looks up
  // its field, twice (the grammar and the action), among up to a score of names.
  for (const auto& w : fields_of(h))
    if (w.text.size() == text.size() && (text.empty() || w.text[0] == text[0]) && w.text == text) return w.value;
  return std::nullopt;
}

/// TCP option kinds (tcpopt.c); `sack0` is `sack`, `sack1`..`sack3` are sack with a block index.
inline constexpr word<std::uint8_t> tcp_option_kinds[] = {
    {"eol", 0},     {"nop", 1},       {"noop", 1},           {"maxseg", 2},    {"mss", 2},
    {"window", 3},  {"sack-perm", 4}, {"sack-permitted", 4}, {"sack", 5},      {"sack0", 5},
    {"sack1", 5},   {"sack2", 5},     {"sack3", 5},          {"timestamp", 8}, {"echo", 8},
    {"md5sig", 19}, {"mptcp", 30},    {"fastopen", 34},
};
/// IP option types (ipopt.c).
inline constexpr word<std::uint8_t> ip_option_types[] = {{"lsrr", 131}, {"rr", 7}, {"ssrr", 137}, {"ra", 148}};
/// SCTP chunk types (sctp_chunk.h).
inline constexpr word<std::uint8_t> sctp_chunk_types[] = {
    {"data", 0},          {"init", 1},          {"init-ack", 2}, {"sack", 3},         {"heartbeat", 4},
    {"heartbeat-ack", 5}, {"abort", 6},         {"shutdown", 7}, {"shutdown-ack", 8}, {"error", 9},
    {"cookie-echo", 10},  {"cookie-ack", 11},   {"ecne", 12},    {"cwr", 13},         {"shutdown-complete", 14},
    {"asconf-ack", 128},  {"forward-tsn", 192}, {"asconf", 193},
};
/// IPv6 extension headers a bare `exthdr` presence test names (`exthdr_key`), by header value.
inline constexpr word<header> exthdr_keys[] = {
    {"hbh", header::hbh}, {"rt", header::rt}, {"frag", header::frag}, {"dst", header::dst}, {"mh", header::mh}};

inline constexpr word<rt_key> rt_keys[] = {
    {"classid", rt_key::classid}, {"nexthop", rt_key::nexthop}, {"mtu", rt_key::mtu}, {"ipsec", rt_key::ipsec}};
inline constexpr word<socket_key> socket_keys[] = {{"transparent", socket_key::transparent},
                                                   {"mark", socket_key::mark},
                                                   {"wildcard", socket_key::wildcard},
                                                   {"cgroupv2", socket_key::cgroupv2}};
inline constexpr word<fib_result> fib_results[] = {{"oif", fib_result::oif},
                                                   {"oifname", fib_result::oifname},
                                                   {"type", fib_result::type},
                                                   {"check", fib_result::check}};
inline constexpr word<std::uint8_t> fib_flags[] = {{"saddr", 1}, {"daddr", 2}, {"mark", 4}, {"iif", 8}, {"oif", 16}};

inline constexpr word<log_level> log_levels[] = {
    {"emerg", log_level::emerg}, {"alert", log_level::alert}, {"crit", log_level::crit},
    {"err", log_level::err},     {"warn", log_level::warn},   {"notice", log_level::notice},
    {"info", log_level::info},   {"debug", log_level::debug}, {"audit", log_level::audit},
};
inline constexpr word<time_unit> time_units[] = {{"second", time_unit::second},
                                                 {"minute", time_unit::minute},
                                                 {"hour", time_unit::hour},
                                                 {"day", time_unit::day},
                                                 {"week", time_unit::week}};

inline constexpr word<object_type> object_types[] = {
    {"counter", object_type::counter},       {"quota", object_type::quota},
    {"limit", object_type::limit},           {"ct helper", object_type::ct_helper},
    {"ct timeout", object_type::ct_timeout}, {"ct expectation", object_type::ct_expectation},
    {"secmark", object_type::secmark},       {"synproxy", object_type::synproxy},
    {"tunnel", object_type::tunnel},
};

}  // namespace nflens::nft::vocab
