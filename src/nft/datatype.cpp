// SPDX-License-Identifier: MIT
// nft's datatypes and their spelling (see datatype.hpp). The symbol tables hold the values the kernel
// sees (ICMP type numbers, conntrack state bits, ...) under the words nft(8) prints for them; protocol
// names follow netbase's /etc/protocols, which is what nft resolves them with on Debian.

#include "nft/datatype.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>

namespace nflens::nft::types {

namespace {

struct symbol {
  std::string_view name;
  std::uint64_t value;
};

constexpr symbol nfproto_symbols[] = {{"ipv4", 2}, {"ipv6", 10}};
constexpr symbol ether_type_symbols[] = {{"ip", 0x0800},    {"arp", 0x0806},    {"ip6", 0x86dd},
                                         {"8021q", 0x8100}, {"8021ad", 0x88a8}, {"vlan", 0x8100}};
constexpr symbol arp_op_symbols[] = {{"request", 1},   {"reply", 2},   {"rrequest", 3}, {"rreply", 4},
                                     {"inrequest", 8}, {"inreply", 9}, {"nak", 10}};
constexpr symbol icmp_type_symbols[] = {
    {"echo-reply", 0},         {"destination-unreachable", 3}, {"source-quench", 4},        {"redirect", 5},
    {"echo-request", 8},       {"router-advertisement", 9},    {"router-solicitation", 10}, {"time-exceeded", 11},
    {"parameter-problem", 12}, {"timestamp-request", 13},      {"timestamp-reply", 14},     {"info-request", 15},
    {"info-reply", 16},        {"address-mask-request", 17},   {"address-mask-reply", 18}};
constexpr symbol igmp_type_symbols[] = {{"membership-query", 0x11},
                                        {"membership-report-v1", 0x12},
                                        {"membership-report-v2", 0x16},
                                        {"membership-report-v3", 0x22},
                                        {"leave-group", 0x17}};
constexpr symbol icmpv6_type_symbols[] = {
    {"destination-unreachable", 1},  {"packet-too-big", 2},         {"time-exceeded", 3},
    {"parameter-problem", 4},        {"echo-request", 128},         {"echo-reply", 129},
    {"mld-listener-query", 130},     {"mld-listener-report", 131},  {"mld-listener-done", 132},
    {"mld-listener-reduction", 132}, {"nd-router-solicit", 133},    {"nd-router-advert", 134},
    {"nd-neighbor-solicit", 135},    {"nd-neighbor-advert", 136},   {"nd-redirect", 137},
    {"router-renumbering", 138},     {"ind-neighbor-solicit", 141}, {"ind-neighbor-advert", 142},
    {"mld2-listener-report", 143}};
constexpr symbol tcp_flag_symbols[] = {{"fin", 0x01}, {"syn", 0x02}, {"rst", 0x04}, {"psh", 0x08},
                                       {"ack", 0x10}, {"urg", 0x20}, {"ecn", 0x40}, {"cwr", 0x80}};
constexpr symbol dccp_pkttype_symbols[] = {{"request", 0},  {"response", 1}, {"data", 2},  {"ack", 3},  {"dataack", 4},
                                           {"closereq", 5}, {"close", 6},    {"reset", 7}, {"sync", 8}, {"syncack", 9}};
constexpr symbol mh_type_symbols[] = {{"binding-refresh-request", 0},
                                      {"home-test-init", 1},
                                      {"careof-test-init", 2},
                                      {"home-test", 3},
                                      {"careof-test", 4},
                                      {"binding-update", 5},
                                      {"binding-acknowledgement", 6},
                                      {"binding-error", 7},
                                      {"fast-binding-update", 8},
                                      {"fast-binding-acknowledgement", 9},
                                      {"fast-binding-advertisement", 10},
                                      {"experimental-mobility-header", 11},
                                      {"home-agent-switch-message", 12}};
// Conntrack state bits: invalid is bit 0, then 1 << (ctinfo + 1), untracked bit 6.
constexpr symbol ct_state_symbols[] = {
    {"invalid", 0x01}, {"new", 0x08}, {"established", 0x02}, {"related", 0x04}, {"untracked", 0x40}};
constexpr symbol ct_dir_symbols[] = {{"original", 0}, {"reply", 1}};
// As nft's table has them: the last three are bit numbers, not masks.
constexpr symbol ct_status_symbols[] = {
    {"expected", 0x1},        {"seen-reply", 0x2},  {"assured", 0x4},    {"confirmed", 0x8},   {"snat", 0x10},
    {"dnat", 0x20},           {"seq-adjust", 0x40}, {"snat-done", 0x80}, {"dnat-done", 0x100}, {"dying", 0x200},
    {"fixed-timeout", 0x400}, {"helper", 13},       {"offload", 14},     {"hw-offload", 15}};
constexpr symbol ct_event_symbols[] = {{"new", 1},      {"related", 2},    {"destroy", 4}, {"reply", 8},
                                       {"assured", 16}, {"protoinfo", 32}, {"helper", 64}, {"mark", 128},
                                       {"seqadj", 256}, {"secmark", 512},  {"label", 1024}};
constexpr symbol pkt_type_symbols[] = {{"host", 0}, {"unicast", 0}, {"broadcast", 1}, {"multicast", 2}, {"other", 3}};
constexpr symbol dscp_symbols[] = {{"cs0", 0x00},   {"cs1", 0x08},  {"cs2", 0x10},  {"cs3", 0x18},  {"cs4", 0x20},
                                   {"cs5", 0x28},   {"cs6", 0x30},  {"cs7", 0x38},  {"df", 0x00},   {"be", 0x00},
                                   {"lephb", 0x01}, {"af11", 0x0a}, {"af12", 0x0c}, {"af13", 0x0e}, {"af21", 0x12},
                                   {"af22", 0x14},  {"af23", 0x16}, {"af31", 0x1a}, {"af32", 0x1c}, {"af33", 0x1e},
                                   {"af41", 0x22},  {"af42", 0x24}, {"af43", 0x26}, {"va", 0x2c},   {"ef", 0x2e}};
constexpr symbol ecn_symbols[] = {{"not-ect", 0}, {"ect1", 1}, {"ect0", 2}, {"ce", 3}};
constexpr symbol fib_addrtype_symbols[] = {{"unspec", 0},    {"unicast", 1},     {"local", 2},
                                           {"broadcast", 3}, {"anycast", 4},     {"multicast", 5},
                                           {"blackhole", 6}, {"unreachable", 7}, {"prohibit", 8}};
constexpr symbol boolean_symbols[] = {{"exists", 1}, {"missing", 0}};
constexpr symbol iface_type_symbols[] = {{"ether", 1},      {"ppp", 512}, {"ipip", 768}, {"ipip6", 769},
                                         {"loopback", 772}, {"sit", 776}, {"ipgre", 778}};
constexpr symbol day_symbols[] = {{"Sunday", 0},   {"Monday", 1}, {"Tuesday", 2}, {"Wednesday", 3},
                                  {"Thursday", 4}, {"Friday", 5}, {"Saturday", 6}};
constexpr symbol reject_icmp_symbols[] = {{"net-unreachable", 0},   {"host-unreachable", 1}, {"prot-unreachable", 2},
                                          {"port-unreachable", 3},  {"net-prohibited", 9},   {"host-prohibited", 10},
                                          {"admin-prohibited", 13}, {"frag-needed", 4}};
constexpr symbol reject_icmpv6_symbols[] = {{"no-route", 0},         {"admin-prohibited", 1}, {"addr-unreachable", 3},
                                            {"port-unreachable", 4}, {"policy-fail", 5},      {"reject-route", 6}};
constexpr symbol reject_icmpx_symbols[] = {
    {"port-unreachable", 1}, {"admin-prohibited", 3}, {"no-route", 0}, {"host-unreachable", 2}};
constexpr symbol mptcp_subtype_symbols[] = {{"mp-capable", 0}, {"mp-join", 1},      {"dss", 2},
                                            {"add-addr", 3},   {"remove-addr", 4},  {"mp-prio", 5},
                                            {"mp-fail", 6},    {"mp-fastclose", 7}, {"mp-tcprst", 8}};
// netbase's /etc/protocols, first name of each number.
constexpr symbol protocol_symbols[] = {{"ip", 0},
                                       {"icmp", 1},
                                       {"igmp", 2},
                                       {"ggp", 3},
                                       {"ipencap", 4},
                                       {"st", 5},
                                       {"tcp", 6},
                                       {"egp", 8},
                                       {"igp", 9},
                                       {"pup", 12},
                                       {"udp", 17},
                                       {"hmp", 20},
                                       {"xns-idp", 22},
                                       {"rdp", 27},
                                       {"iso-tp4", 29},
                                       {"dccp", 33},
                                       {"xtp", 36},
                                       {"ddp", 37},
                                       {"idpr-cmtp", 38},
                                       {"ipv6", 41},
                                       {"ipv6-route", 43},
                                       {"ipv6-frag", 44},
                                       {"idrp", 45},
                                       {"rsvp", 46},
                                       {"gre", 47},
                                       {"esp", 50},
                                       {"ah", 51},
                                       {"skip", 57},
                                       {"ipv6-icmp", 58},
                                       {"ipv6-nonxt", 59},
                                       {"ipv6-opts", 60},
                                       {"rspf", 73},
                                       {"vmtp", 81},
                                       {"eigrp", 88},
                                       {"ospf", 89},
                                       {"ax.25", 93},
                                       {"ipip", 94},
                                       {"etherip", 97},
                                       {"encap", 98},
                                       {"pim", 103},
                                       {"ipcomp", 108},
                                       {"vrrp", 112},
                                       {"l2tp", 115},
                                       {"isis", 124},
                                       {"sctp", 132},
                                       {"fc", 133},
                                       {"mobility-header", 135},
                                       {"udplite", 136},
                                       {"mpls-in-ip", 137},
                                       {"manet", 138},
                                       {"hip", 139},
                                       {"shim6", 140},
                                       {"wesp", 141},
                                       {"rohc", 142},
                                       {"ethernet", 143},
                                       // aliases nft accepts as input (getprotobyname)
                                       {"hopopt", 0},
                                       {"icmpv6", 58},
                                       {"udp-lite", 136}};
// A few of netbase's /etc/services, for reading service names in scripts (listings print numbers).
constexpr symbol service_symbols[] = {
    {"ftp-data", 20},   {"ftp", 21},         {"ssh", 22},         {"telnet", 23},      {"smtp", 25},
    {"domain", 53},     {"bootps", 67},      {"bootpc", 68},      {"tftp", 69},        {"http", 80},
    {"www", 80},        {"kerberos", 88},    {"pop3", 110},       {"sunrpc", 111},     {"auth", 113},
    {"ntp", 123},       {"netbios-ns", 137}, {"imap2", 143},      {"imap", 143},       {"snmp", 161},
    {"snmp-trap", 162}, {"bgp", 179},        {"ldap", 389},       {"https", 443},      {"microsoft-ds", 445},
    {"isakmp", 500},    {"syslog", 514},     {"submission", 587}, {"ldaps", 636},      {"imaps", 993},
    {"pop3s", 995},     {"openvpn", 1194},   {"mysql", 3306},     {"postgresql", 5432}};

struct table_ref {
  const symbol* begin = nullptr;
  const symbol* end = nullptr;
};
template <std::size_t N>
constexpr table_ref ref(const symbol (&t)[N]) noexcept {
  return {t, t + N};
}

table_ref symbols_of(dtype t) noexcept {
  switch (t) {
    case dtype::nf_proto:
      return ref(nfproto_symbols);
    case dtype::ether_type:
      return ref(ether_type_symbols);
    case dtype::arp_op:
      return ref(arp_op_symbols);
    case dtype::icmp_type:
      return ref(icmp_type_symbols);
    case dtype::igmp_type:
      return ref(igmp_type_symbols);
    case dtype::icmpv6_type:
      return ref(icmpv6_type_symbols);
    case dtype::tcp_flag:
      return ref(tcp_flag_symbols);
    case dtype::dccp_pkttype:
      return ref(dccp_pkttype_symbols);
    case dtype::mh_type:
      return ref(mh_type_symbols);
    case dtype::ct_state:
      return ref(ct_state_symbols);
    case dtype::ct_dir:
      return ref(ct_dir_symbols);
    case dtype::ct_status:
      return ref(ct_status_symbols);
    case dtype::ct_event:
      return ref(ct_event_symbols);
    case dtype::pkt_type:
      return ref(pkt_type_symbols);
    case dtype::dscp:
      return ref(dscp_symbols);
    case dtype::ecn:
      return ref(ecn_symbols);
    case dtype::fib_addrtype:
      return ref(fib_addrtype_symbols);
    case dtype::boolean:
      return ref(boolean_symbols);
    case dtype::iface_type:
      return ref(iface_type_symbols);
    case dtype::day:
      return ref(day_symbols);
    case dtype::mptcp_subtype:
      return ref(mptcp_subtype_symbols);
    case dtype::inet_proto:
      return ref(protocol_symbols);
    case dtype::inet_service:
      return ref(service_symbols);
    default:
      return {};
  }
}

void append_hex(std::string& out, std::uint64_t v, int width) {
  fmt::format_to(std::back_inserter(out), "0x{:0{}x}", v, width);
}

bool append_symbol(std::string& out, std::uint64_t v, dtype t, bool quote) {
  const auto tbl = symbols_of(t);
  for (auto* s = tbl.begin; s != tbl.end; ++s)
    if (s->value == v) {
      if (quote) out += '"';
      out += s->name;
      if (quote) out += '"';
      return true;
    }
  return false;
}

}  // namespace

value_type declared_type(const set_type& t) noexcept {
  if (t.typeof_expr != nullptr) return type_of(*t.typeof_expr, family::inet);
  value_type v;
  if (t.names.size() == 1) {
    v.base = parse_datatype(t.names.front()).value_or(dtype::invalid);
    return v;
  }
  for (const auto n : t.names) {
    if (v.count == v.parts.size()) break;
    v.parts[v.count++] = parse_datatype(n).value_or(dtype::invalid);
  }
  return v;
}

namespace {
/// nft's datatype behind one of nflens's (nflens tells apart integers that nft prints in other bases).
dtype identity(dtype t) noexcept { return t == dtype::xinteger || t == dtype::mptcp_subtype ? dtype::integer : t; }
}  // namespace

value_type key_type(const expr& key, family f) noexcept {
  if (const auto* b = key.get<binop_expr>()) return b->left() != nullptr ? key_type(*b->left(), f) : value_type{};
  if (const auto* c = key.get<concat_expr>()) {
    value_type out;
    for (const auto& item : c->items) {
      if (out.count == out.parts.size()) break;
      const value_type t = key_type(item, f);
      for (std::size_t i = 0; i < std::max<std::size_t>(t.count, 1) && out.count < out.parts.size(); ++i)
        out.parts[out.count++] = t.part(i).base;
    }
    return out;
  }
  const bool selector = key.is<payload_expr>() || key.is<meta_expr>() || key.is<ct_expr>() || key.is<fib_expr>() ||
                        key.is<rt_expr>() || key.is<socket_expr>() || key.is<osf_expr>() || key.is<ipsec_expr>() ||
                        key.is<numgen_expr>() || key.is<hash_expr>() || key.is<tunnel_expr>();
  // a raw payload nft may read as the header field at its place (`@th,16,16` is `th dport`)
  if (const auto* p = key.get<payload_expr>(); p != nullptr && p->protocol == header::raw) return {};
  return selector ? type_of(key, f) : value_type{};
}

bool mismatched(const value_type& key, const value_type& elements) noexcept {
  if (key.count != elements.count) return true;  // parts, each known or not, are counted alike
  for (std::size_t i = 0; i < std::max<std::size_t>(key.count, 1); ++i) {
    const dtype a = key.part(i).base;
    const dtype b = elements.part(i).base;
    if (a != dtype::invalid && b != dtype::invalid && identity(a) != identity(b)) return true;
  }
  return false;
}

std::string spelling(const value_type& t) {
  std::string out;
  for (std::size_t i = 0; i < std::max<std::size_t>(t.count, 1); ++i) {
    if (i > 0) out += " . ";
    const std::string_view n = name(t.part(i).base);
    out += n.empty() ? std::string_view("?") : n;
  }
  return out;
}

bool is_string_type(dtype t) noexcept { return t == dtype::string || t == dtype::ifname || t == dtype::cgroupsv2; }

bool is_bitmask_type(dtype t) noexcept {
  return t == dtype::bitmask || t == dtype::tcp_flag || t == dtype::ct_state || t == dtype::ct_status ||
         t == dtype::ct_event;
}

int elements_per_line(dtype t) noexcept {
  switch (t) {
    case dtype::nf_proto:
    case dtype::integer:
    case dtype::xinteger:
    case dtype::mptcp_subtype:
    case dtype::queue:
    case dtype::arp_op:
    case dtype::inet_proto:
    case dtype::inet_service:
    case dtype::tcp_flag:
    case dtype::dccp_pkttype:
    case dtype::mark:
    case dtype::iface_index:
    case dtype::classid:
    case dtype::uid:
    case dtype::gid:
    case dtype::ct_dir:
      return 5;
    case dtype::ipv4_addr:
    case dtype::ct_state:
    case dtype::ct_status:
    case dtype::pkt_type:
      return 2;
    default:
      return 1;
  }
}

namespace {
dtype address_of(nfproto p, family f) noexcept {
  if (p == nfproto::ip) return dtype::ipv4_addr;
  if (p == nfproto::ip6) return dtype::ipv6_addr;
  if (f == family::ip) return dtype::ipv4_addr;
  if (f == family::ip6) return dtype::ipv6_addr;
  return dtype::invalid;
}
}  // namespace

value_type type_of(const expr& e, family f) noexcept {
  if (const type_info ti = nft::type_of(e); ti.type != dtype::invalid) return {ti.type};
  // selectors whose address family the table decides (`ct saddr`, `rt nexthop` without ip/ip6)
  if (const auto* c = e.get<ct_expr>()) return {address_of(c->protocol, f)};
  if (const auto* r = e.get<rt_expr>()) return {address_of(r->protocol, f)};
  return std::visit(
      [&](const auto& v) -> value_type {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, binop_expr>) {
          if (v.op == binop::lshift || v.op == binop::rshift) return {dtype::xinteger};
          return v.left() != nullptr ? type_of(*v.left(), f) : value_type{};
        } else if constexpr (std::is_same_v<T, concat_expr>) {
          value_type out;
          for (const auto& item : v.items) {
            if (out.count == out.parts.size()) break;
            const auto t = type_of(item, f);
            if (t.is_concat()) {
              for (std::size_t i = 0; i < t.count && out.count < out.parts.size(); ++i)
                out.parts[out.count++] = t.parts[i];
            } else {
              out.parts[out.count++] = t.base;
            }
          }
          return out;
        } else if constexpr (std::is_same_v<T, address_expr>)
          return {v.address().family == ip_family::ipv4 ? dtype::ipv4_addr : dtype::ipv6_addr};
        else if constexpr (std::is_same_v<T, ether_address_expr>)
          return {dtype::ether_addr};
        else if constexpr (std::is_same_v<T, time_expr>)
          return {dtype::time};
        else if constexpr (std::is_same_v<T, string_expr>)
          return {dtype::string};
        else if constexpr (std::is_same_v<T, boolean_expr>)
          return {dtype::boolean};
        else if constexpr (std::is_same_v<T, verdict_expr>)
          return {dtype::verdict};
        else if constexpr (std::is_same_v<T, prefix_expr>)
          return v.value != nullptr ? type_of(*v.value, f) : value_type{};
        else if constexpr (std::is_same_v<T, range_expr>)
          return v.low() != nullptr ? type_of(*v.low(), f) : value_type{};
        else
          return {};
      },
      e.value);
}

void append_time(std::string& out, std::uint64_t ms) {
  const std::uint64_t days = ms / 86400000;
  ms %= 86400000;
  const std::uint64_t hours = ms / 3600000;
  ms %= 3600000;
  const std::uint64_t minutes = ms / 60000;
  ms %= 60000;
  const std::uint64_t seconds = ms / 1000;
  ms %= 1000;
  auto it = std::back_inserter(out);
  const std::size_t before = out.size();
  if (days) fmt::format_to(it, "{}d", days);
  if (hours) fmt::format_to(it, "{}h", hours);
  if (minutes) fmt::format_to(it, "{}m", minutes);
  if (seconds) fmt::format_to(it, "{}s", seconds);
  if (ms) fmt::format_to(it, "{}ms", ms);
  if (out.size() == before) out += "0s";
}

void append_integer(std::string& out, std::uint64_t v, dtype t, bool parenthesise) {
  auto it = std::back_inserter(out);
  if (is_bitmask_type(t) && std::popcount(v) > 1) {
    // A value with several flags reads as their inclusive or (netlink_delinearize's
    // bitmask_expr_to_binops), lowest bit first.
    if (parenthesise) out += '(';
    bool first = true;
    for (unsigned bit = 0; bit < 64; ++bit) {
      const std::uint64_t flag = std::uint64_t{1} << bit;
      if ((v & flag) == 0) continue;
      if (!first) out += " | ";
      first = false;
      append_integer(out, flag, t);
    }
    if (parenthesise) out += ')';
    return;
  }
  switch (t) {
    case dtype::mark:
      return append_hex(out, v, 8);
    case dtype::bitmask:
    case dtype::xinteger:
      return append_hex(out, v, 1);
    case dtype::dscp:
      if (!append_symbol(out, v, t, false)) append_hex(out, v, 2);
      return;
    case dtype::ecn:
      if (!append_symbol(out, v, t, false)) append_hex(out, v, 1);
      return;
    case dtype::ether_type:
      if (!append_symbol(out, v, t, false)) append_hex(out, v, 4);
      return;
    case dtype::tcp_flag:
    case dtype::ct_state:
    case dtype::ct_status:
    case dtype::ct_event:
      if (!append_symbol(out, v, t, false)) append_hex(out, v, 1);
      return;
    case dtype::day:
    case dtype::devgroup:
      if (!append_symbol(out, v, t, true)) fmt::format_to(it, "{}", v);
      return;
    case dtype::time:
      return append_time(out, v * 1000);
    case dtype::classid:
      if (v == 0xffffffffu)
        out += "root";
      else if (v == 0)
        out += "none";
      else
        fmt::format_to(it, "{:x}:{:x}", v >> 16, v & 0xffff);
      return;
    case dtype::inet_service:
      fmt::format_to(it, "{}", v);
      return;
    default:
      if (!append_symbol(out, v, t, false)) fmt::format_to(it, "{}", v);
      return;
  }
}

std::optional<std::uint64_t> symbol_value(std::string_view name, dtype t) noexcept {
  const auto tbl = symbols_of(t);
  for (auto* s = tbl.begin; s != tbl.end; ++s)
    if (s->name == name) return s->value;
  return std::nullopt;
}

}  // namespace nflens::nft::types

namespace nflens::nft::types {

namespace {
table_ref reject_symbols(reject_type t) noexcept {
  switch (t) {
    case reject_type::icmp:
      return ref(reject_icmp_symbols);
    case reject_type::icmpv6:
      return ref(reject_icmpv6_symbols);
    case reject_type::icmpx:
      return ref(reject_icmpx_symbols);
    default:
      return {};
  }
}
}  // namespace

void append_reject_code(std::string& out, std::uint64_t code, reject_type t) {
  const auto tbl = reject_symbols(t);
  for (auto* s = tbl.begin; s != tbl.end; ++s)
    if (s->value == code) {
      out += s->name;
      return;
    }
  fmt::format_to(std::back_inserter(out), "{}", code);
}

std::optional<std::uint64_t> reject_code_value(std::string_view name, reject_type t) noexcept {
  const auto tbl = reject_symbols(t);
  for (auto* s = tbl.begin; s != tbl.end; ++s)
    if (s->name == name) return s->value;
  return std::nullopt;
}

}  // namespace nflens::nft::types
