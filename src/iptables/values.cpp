// SPDX-License-Identifier: MIT
// Option arguments to values. The grammars decide the shape; the actions collect the pieces into a
// small state; the conversions check ranges the way libxtables does.
#include "values.hpp"

#include "iptables_values.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>

namespace nflens::iptables::detail {

namespace pegtl = tao::pegtl;
namespace vg = values_grammar;

namespace {

// strtoul(s, NULL, 0) over digits the grammar already accepted.
std::optional<std::uint64_t> convert_number(std::string_view s, std::uint64_t max) noexcept {
  unsigned base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8;
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    unsigned d = 0;
    if (c >= '0' && c <= '9')
      d = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f')
      d = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F')
      d = static_cast<unsigned>(c - 'A' + 10);
    else
      return std::nullopt;
    if (d >= base) return std::nullopt;
    if (v > (max - d) / base) return std::nullopt;
    v = v * base + d;
  }
  return v;
}

// Plain decimal without a leading zero: the common case, read without the grammar.
std::optional<std::uint64_t> fast_decimal(std::string_view text, std::uint64_t max) noexcept {
  if (text.empty() || text.size() > 19 || text[0] == '0') return std::nullopt;
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
  }
  if (v > max) return std::nullopt;
  return v;
}

// A dotted quad of plain decimal octets (`10.244.3.7`), read without the grammar; nothing for any
// other form (octal or hex octets, short forms), which the grammar handles.
std::optional<ip_address> fast_ipv4(std::string_view text) noexcept {
  ip_address a;
  a.family = ip_family::ipv4;
  unsigned part = 0, value = 0, digits = 0;
  for (char c : text) {
    if (c >= '0' && c <= '9') {
      if (digits == 1 && value == 0) return std::nullopt;  // leading zero: octal in iptables
      value = value * 10 + static_cast<unsigned>(c - '0');
      if (++digits > 3 || value > 255) return std::nullopt;
    } else if (c == '.' && digits > 0 && part < 3) {
      a.bytes[part++] = static_cast<std::uint8_t>(value);
      value = digits = 0;
    } else {
      return std::nullopt;
    }
  }
  if (part != 3 || digits == 0) return std::nullopt;
  a.bytes[3] = static_cast<std::uint8_t>(value);
  return a;
}

template <typename Rule, template <typename...> class Action = pegtl::nothing, typename State>
bool parse_whole(std::string_view text, State& st) noexcept {
  try {
    pegtl::memory_input<pegtl::tracking_mode::lazy, pegtl::eol::lf_crlf, const char*> in(text.data(),
                                                                                         text.data() + text.size(), "");
    return pegtl::parse<Rule, Action>(in, st);
  } catch (...) {
    return false;
  }
}

struct empty_state {};

// ---- addresses ---------------------------------------------------------------------------------
struct ipv4_state {
  std::array<std::string_view, 4> parts{};
  unsigned count = 0;
};
template <typename Rule>
struct ipv4_action : pegtl::nothing<Rule> {};
template <>
struct ipv4_action<vg::ipv4_part> {
  template <typename Input>
  static void apply(const Input& in, ipv4_state& st) {
    if (st.count < 4) st.parts[st.count] = in.string_view();
    ++st.count;
  }
};

std::optional<ip_address> convert_ipv4(const ipv4_state& st, bool allow_short) noexcept {
  if (st.count == 0 || st.count > 4 || (!allow_short && st.count != 4)) return std::nullopt;
  ip_address a;
  a.family = ip_family::ipv4;
  for (unsigned i = 0; i < st.count; ++i) {
    const auto v = convert_number(st.parts[i], 255);
    if (!v) return std::nullopt;
    a.bytes[i] = static_cast<std::uint8_t>(*v);
  }
  return a;
}

std::optional<ip_address> parse_ipv4(std::string_view text, bool allow_short) noexcept {
  if (auto a = fast_ipv4(text)) return a;
  ipv4_state st;
  if (!parse_whole<pegtl::seq<vg::ipv4_address, pegtl::eof>, ipv4_action>(text, st)) return std::nullopt;
  return convert_ipv4(st, allow_short);
}

std::optional<ip_address> parse_ipv6(std::string_view text) noexcept {
  empty_state st;
  if (!parse_whole<pegtl::seq<vg::ipv6_address, pegtl::eof>>(text, st)) return std::nullopt;
  auto a = parse_ip_address(text);
  if (!a || a->family != ip_family::ipv6) return std::nullopt;
  return a;
}

void apply_mask(address_mask& m) noexcept { m.address = masked(m.address, m.mask); }

// ---- ports -------------------------------------------------------------------------------------
struct service {
  std::string_view name;
  std::uint16_t port;
};
// Well-known services (IANA names as Debian's /etc/services spells them) for port arguments given by
// name; iptables-save always prints numbers.
constexpr std::array<service, 64> services{{
    {"bgp", 179},          {"bootpc", 68},        {"bootps", 67},
    {"chargen", 19},       {"daytime", 13},       {"discard", 9},
    {"domain", 53},        {"echo", 7},           {"finger", 79},
    {"ftp", 21},           {"ftp-data", 20},      {"ftps", 990},
    {"git", 9418},         {"gopher", 70},        {"http", 80},
    {"http-alt", 8080},    {"https", 443},        {"imap2", 143},
    {"imaps", 993},        {"ipp", 631},          {"irc", 194},
    {"isakmp", 500},       {"kerberos", 88},      {"ldap", 389},
    {"ldaps", 636},        {"microsoft-ds", 445}, {"ms-sql-s", 1433},
    {"mysql", 3306},       {"netbios-dgm", 138},  {"netbios-ns", 137},
    {"netbios-ssn", 139},  {"nfs", 2049},         {"ntp", 123},
    {"openvpn", 1194},     {"pop3", 110},         {"pop3s", 995},
    {"postgresql", 5432},  {"pptp", 1723},        {"printer", 515},
    {"radius", 1812},      {"radius-acct", 1813}, {"rdp", 3389},
    {"rsync", 873},        {"rtsp", 554},         {"sip", 5060},
    {"sip-tls", 5061},     {"smtp", 25},          {"snmp", 161},
    {"snmp-trap", 162},    {"socks", 1080},       {"ssh", 22},
    {"submission", 587},   {"sunrpc", 111},       {"syslog", 514},
    {"telnet", 23},        {"tftp", 69},          {"time", 37},
    {"ipsec-nat-t", 4500}, {"www", 80},           {"x11", 6000},
    {"xmpp-client", 5222}, {"xmpp-server", 5269}, {"zabbix-agent", 10050},
    {"l2tp", 1701},
}};

std::optional<std::uint16_t> convert_port(std::string_view s) noexcept {
  if (auto v = fast_decimal(s, 65535)) return static_cast<std::uint16_t>(*v);
  if (!s.empty() && s[0] >= '0' && s[0] <= '9') {
    const auto v = convert_number(s, 65535);
    if (!v) return std::nullopt;
    return static_cast<std::uint16_t>(*v);
  }
  for (const auto& sv : services)
    if (sv.name == s) return sv.port;
  return std::nullopt;
}

struct port_state {
  std::string_view first, last;
  bool colon = false;
  bool ok = true;
  std::vector<port_range>* list = nullptr;
};
template <typename Rule>
struct port_action : pegtl::nothing<Rule> {};
template <>
struct port_action<vg::first_port> {
  template <typename Input>
  static void apply(const Input& in, port_state& st) {
    st.first = in.string_view();
  }
};
template <>
struct port_action<vg::last_port> {
  template <typename Input>
  static void apply(const Input& in, port_state& st) {
    st.last = in.string_view();
  }
};
template <>
struct port_action<vg::port_list_item> {
  template <typename Input>
  static void apply(const Input&, port_state& st) {
    const auto a = convert_port(st.first);
    const auto b = st.last.empty() ? a : convert_port(st.last);
    if (!a || !b || *a > *b)
      st.ok = false;
    else
      st.list->push_back({*a, *b});
    st.first = st.last = {};
  }
};

// ---- NAT ranges --------------------------------------------------------------------------------
struct nat_state {
  std::string_view min_address, max_address, first_port, last_port, base_port;
};
template <typename Rule>
struct nat_action : pegtl::nothing<Rule> {};
#define NFLENS_NAT_FIELD(rule, field)                   \
  template <>                                           \
  struct nat_action<vg::rule> {                         \
    template <typename Input>                           \
    static void apply(const Input& in, nat_state& st) { \
      st.field = in.string_view();                      \
    }                                                   \
  };
NFLENS_NAT_FIELD(nat_ipv4_min, min_address)
NFLENS_NAT_FIELD(nat_ipv4_max, max_address)
NFLENS_NAT_FIELD(nat_ipv6_min, min_address)
NFLENS_NAT_FIELD(nat_ipv6_max, max_address)
NFLENS_NAT_FIELD(nat_port_first, first_port)
NFLENS_NAT_FIELD(nat_port_last, last_port)
NFLENS_NAT_FIELD(nat_base_port, base_port)
#undef NFLENS_NAT_FIELD

std::optional<nat_range> convert_nat(const nat_state& st, ip_family family) noexcept {
  nat_range r;
  if (!st.min_address.empty()) {
    const auto a = family == ip_family::ipv4 ? parse_ipv4(st.min_address, true) : parse_ipv6(st.min_address);
    if (!a) return std::nullopt;
    r.min_address = r.max_address = *a;
    if (!st.max_address.empty()) {
      const auto b = family == ip_family::ipv4 ? parse_ipv4(st.max_address, true) : parse_ipv6(st.max_address);
      if (!b || *b < *a) return std::nullopt;
      r.max_address = *b;
    }
    r.has_address = true;
  }
  if (!st.first_port.empty()) {
    const auto p = convert_port(st.first_port);
    if (!p) return std::nullopt;
    r.ports = {*p, *p};
    if (!st.last_port.empty()) {
      const auto q = convert_port(st.last_port);
      if (!q || *q < *p) return std::nullopt;
      r.ports.last = *q;
    }
    if (!st.base_port.empty()) {
      const auto b = convert_port(st.base_port);
      if (!b) return std::nullopt;
      r.base_port = *b;
    }
    r.has_ports = true;
  }
  if (!r.has_address && !r.has_ports) return std::nullopt;
  return r;
}

// ---- ICMP types --------------------------------------------------------------------------------
struct icmp_name {
  std::string_view name;
  std::uint8_t type;
  std::uint8_t code_min;
  std::uint8_t code_max;
};
// libipt_icmp / libip6t_icmp6 names (aliases included).
constexpr std::array<icmp_name, 40> icmp_names{{
    {"any", 0xff, 0, 0xff},
    {"echo-reply", 0, 0, 0xff},
    {"pong", 0, 0, 0xff},
    {"destination-unreachable", 3, 0, 0xff},
    {"network-unreachable", 3, 0, 0},
    {"host-unreachable", 3, 1, 1},
    {"protocol-unreachable", 3, 2, 2},
    {"port-unreachable", 3, 3, 3},
    {"fragmentation-needed", 3, 4, 4},
    {"source-route-failed", 3, 5, 5},
    {"network-unknown", 3, 6, 6},
    {"host-unknown", 3, 7, 7},
    {"network-prohibited", 3, 9, 9},
    {"host-prohibited", 3, 10, 10},
    {"TOS-network-unreachable", 3, 11, 11},
    {"TOS-host-unreachable", 3, 12, 12},
    {"communication-prohibited", 3, 13, 13},
    {"host-precedence-violation", 3, 14, 14},
    {"precedence-cutoff", 3, 15, 15},
    {"source-quench", 4, 0, 0xff},
    {"redirect", 5, 0, 0xff},
    {"network-redirect", 5, 0, 0},
    {"host-redirect", 5, 1, 1},
    {"TOS-network-redirect", 5, 2, 2},
    {"TOS-host-redirect", 5, 3, 3},
    {"echo-request", 8, 0, 0xff},
    {"ping", 8, 0, 0xff},
    {"router-advertisement", 9, 0, 0xff},
    {"router-solicitation", 10, 0, 0xff},
    {"time-exceeded", 11, 0, 0xff},
    {"ttl-exceeded", 11, 0, 0xff},
    {"ttl-zero-during-transit", 11, 0, 0},
    {"ttl-zero-during-reassembly", 11, 1, 1},
    {"parameter-problem", 12, 0, 0xff},
    {"ip-header-bad", 12, 0, 0},
    {"required-option-missing", 12, 1, 1},
    {"timestamp-request", 13, 0, 0xff},
    {"timestamp-reply", 14, 0, 0xff},
    {"address-mask-request", 17, 0, 0xff},
    {"address-mask-reply", 18, 0, 0xff},
}};
constexpr std::array<icmp_name, 29> icmp6_names{{
    {"destination-unreachable", 1, 0, 0xff},
    {"no-route", 1, 0, 0},
    {"communication-prohibited", 1, 1, 1},
    {"beyond-scope", 1, 2, 2},
    {"address-unreachable", 1, 3, 3},
    {"port-unreachable", 1, 4, 4},
    {"failed-policy", 1, 5, 5},
    {"reject-route", 1, 6, 6},
    {"packet-too-big", 2, 0, 0xff},
    {"time-exceeded", 3, 0, 0xff},
    {"ttl-exceeded", 3, 0, 0xff},
    {"ttl-zero-during-transit", 3, 0, 0},
    {"ttl-zero-during-reassembly", 3, 1, 1},
    {"parameter-problem", 4, 0, 0xff},
    {"bad-header", 4, 0, 0},
    {"unknown-header-type", 4, 1, 1},
    {"unknown-option", 4, 2, 2},
    {"echo-request", 128, 0, 0xff},
    {"ping", 128, 0, 0xff},
    {"echo-reply", 129, 0, 0xff},
    {"pong", 129, 0, 0xff},
    {"mld-listener-query", 130, 0, 0xff},
    {"mld-listener-report", 131, 0, 0xff},
    {"mld-listener-done", 132, 0, 0xff},
    {"mld-listener-reduction", 132, 0, 0xff},
    {"router-solicitation", 133, 0, 0xff},
    {"router-advertisement", 134, 0, 0xff},
    {"neighbour-solicitation", 135, 0, 0xff},
    {"neighbor-solicitation", 135, 0, 0xff},
}};
constexpr std::array<icmp_name, 3> icmp6_more_names{{
    {"neighbour-advertisement", 136, 0, 0xff},
    {"neighbor-advertisement", 136, 0, 0xff},
    {"redirect", 137, 0, 0xff},
}};

struct icmp_state {
  std::string_view type, code_first, code_last;
};
template <typename Rule>
struct icmp_action : pegtl::nothing<Rule> {};
template <>
struct icmp_action<vg::icmp_type_number> {
  template <typename Input>
  static void apply(const Input& in, icmp_state& st) {
    st.type = in.string_view();
  }
};
template <>
struct icmp_action<vg::icmp_code_first> {
  template <typename Input>
  static void apply(const Input& in, icmp_state& st) {
    st.code_first = in.string_view();
  }
};
template <>
struct icmp_action<vg::icmp_code_last> {
  template <typename Input>
  static void apply(const Input& in, icmp_state& st) {
    st.code_last = in.string_view();
  }
};

// ---- protocols ---------------------------------------------------------------------------------
struct protocol_entry {
  std::uint8_t number;
  std::string_view name;
};
// Debian 12 netbase /etc/protocols (first name of each number): what getprotobynumber(3) returns
// there, and so what iptables-save prints after `-p`.
constexpr std::array<protocol_entry, 58> protocols{{
    {0, "ip"},
    {1, "icmp"},
    {2, "igmp"},
    {3, "ggp"},
    {4, "ipencap"},
    {5, "st"},
    {6, "tcp"},
    {8, "egp"},
    {9, "igp"},
    {12, "pup"},
    {17, "udp"},
    {20, "hmp"},
    {22, "xns-idp"},
    {27, "rdp"},
    {29, "iso-tp4"},
    {33, "dccp"},
    {36, "xtp"},
    {37, "ddp"},
    {38, "idpr-cmtp"},
    {41, "ipv6"},
    {43, "ipv6-route"},
    {44, "ipv6-frag"},
    {45, "idrp"},
    {46, "rsvp"},
    {47, "gre"},
    {50, "esp"},
    {51, "ah"},
    {57, "skip"},
    {58, "ipv6-icmp"},
    {59, "ipv6-nonxt"},
    {60, "ipv6-opts"},
    {73, "rspf"},
    {81, "vmtp"},
    {88, "eigrp"},
    {89, "ospf"},
    {93, "ax.25"},
    {94, "ipip"},
    {97, "etherip"},
    {98, "encap"},
    {103, "pim"},
    {108, "ipcomp"},
    {112, "vrrp"},
    {115, "l2tp"},
    {124, "isis"},
    {132, "sctp"},
    {133, "fc"},
    {135, "mobility-header"},
    {136, "udplite"},
    {137, "mpls-in-ip"},
    {138, "manet"},
    {139, "hip"},
    {140, "shim6"},
    {141, "wesp"},
    {142, "rohc"},
    {143, "ethernet"},
    {0, "hopopt"},
    {0, "all"},
    {58, "icmpv6"},
}};

}  // namespace

std::optional<std::uint64_t> parse_number(std::string_view text, std::uint64_t max) noexcept {
  if (text.size() == 1 && text[0] == '0') return 0;
  if (auto v = fast_decimal(text, max)) return v;
  empty_state st;
  if (!parse_whole<vg::number_value>(text, st)) return std::nullopt;
  return convert_number(text, max);
}

std::optional<ip_address> parse_host(std::string_view text, ip_family family) noexcept {
  return family == ip_family::ipv4 ? parse_ipv4(text, true) : parse_ipv6(text);
}

std::optional<address_mask> parse_address_mask(std::string_view text, ip_family family) noexcept {
  const auto slash = text.find('/');
  const std::string_view host = text.substr(0, slash);
  const auto address = parse_host(host, family);
  if (!address) return std::nullopt;
  address_mask m{*address, mask_of(family, max_prefix_length(family))};
  if (slash != std::string_view::npos) {
    const std::string_view mask = text.substr(slash + 1);
    if (mask.empty()) return std::nullopt;
    const bool dotted =
        family == ip_family::ipv4 ? mask.find('.') != std::string_view::npos : mask.find(':') != std::string_view::npos;
    if (dotted) {
      const auto mm = family == ip_family::ipv4 ? parse_ipv4(mask, false) : parse_ipv6(mask);
      if (!mm) return std::nullopt;
      m.mask = *mm;
    } else {
      const auto len = convert_number(mask, max_prefix_length(family));
      if (!len || mask[0] < '0' || mask[0] > '9') return std::nullopt;
      m.mask = mask_of(family, static_cast<std::uint8_t>(*len));
    }
  }
  apply_mask(m);
  return m;
}

std::optional<std::uint16_t> parse_port(std::string_view text) noexcept {
  empty_state st;
  if (!parse_whole<pegtl::seq<vg::port, pegtl::eof>>(text, st)) return std::nullopt;
  return convert_port(text);
}

std::optional<port_range> parse_port_range(std::string_view text) noexcept {
  if (text.empty()) return std::nullopt;
  port_state st;
  if (!parse_whole<vg::port_range, port_action>(text, st)) return std::nullopt;
  const bool colon = text.find(':') != std::string_view::npos;
  port_range r{0, 65535};
  if (!st.first.empty()) {
    const auto p = convert_port(st.first);
    if (!p) return std::nullopt;
    r.first = *p;
    if (!colon) r.last = *p;
  }
  if (!st.last.empty()) {
    const auto p = convert_port(st.last);
    if (!p) return std::nullopt;
    r.last = *p;
  }
  if (r.first > r.last) return std::nullopt;
  return r;
}

bool parse_port_list(std::string_view text, std::vector<port_range>& out) noexcept {
  port_state st;
  st.list = &out;
  out.clear();
  if (!parse_whole<vg::port_list, port_action>(text, st) || !st.ok) return false;
  std::size_t slots = 0;
  for (const auto& r : out) slots += r.first == r.last ? 1 : 2;
  return slots <= 15;  // XT_MULTI_PORTS
}

std::optional<mark_and_mask> parse_mark(std::string_view text) noexcept {
  empty_state st;
  if (!parse_whole<vg::mark>(text, st)) return std::nullopt;
  const auto slash = text.find('/');
  const auto v = convert_number(text.substr(0, slash), 0xffffffff);
  if (!v) return std::nullopt;
  mark_and_mask m;
  m.value = static_cast<std::uint32_t>(*v);
  if (slash != std::string_view::npos) {
    const auto k = convert_number(text.substr(slash + 1), 0xffffffff);
    if (!k) return std::nullopt;
    m.mask = static_cast<std::uint32_t>(*k);
    m.has_mask = true;
  }
  return m;
}

std::optional<nat_range> parse_nat_range(std::string_view text, ip_family family) noexcept {
  if (family == ip_family::ipv4) {  // ADDRESS:PORT, the kube-proxy form, without the grammar
    const auto colon = text.find(':');
    if (colon != std::string_view::npos) {
      const auto a = fast_ipv4(text.substr(0, colon));
      const auto p = fast_decimal(text.substr(colon + 1), 65535);
      if (a && p) {
        nat_range r;
        r.min_address = r.max_address = *a;
        r.has_address = true;
        r.ports = {static_cast<std::uint16_t>(*p), static_cast<std::uint16_t>(*p)};
        r.has_ports = true;
        return r;
      }
    }
  }
  nat_state st;
  const bool ok = family == ip_family::ipv4 ? parse_whole<vg::nat_ipv4_range, nat_action>(text, st)
                                            : parse_whole<vg::nat_ipv6_range, nat_action>(text, st);
  if (!ok) return std::nullopt;
  return convert_nat(st, family);
}

std::optional<nat_range> parse_nat_ports(std::string_view text) noexcept {
  nat_state st;
  if (!parse_whole<vg::nat_port_range, nat_action>(text, st)) return std::nullopt;
  return convert_nat(st, ip_family::ipv4);
}

bool split_names(std::string_view text, std::vector<std::string_view>& out) {
  out.clear();
  std::size_t pos = 0;
  while (true) {
    const auto comma = text.find(',', pos);
    const auto item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    if (item.empty()) return false;
    out.push_back(item);
    if (comma == std::string_view::npos) return true;
    pos = comma + 1;
  }
}

std::optional<std::uint32_t> parse_limit_rate(std::string_view text) noexcept {
  empty_state st;
  if (!parse_whole<vg::rate>(text, st)) return std::nullopt;
  const auto slash = text.find('/');
  std::uint64_t mult = 1;
  if (slash != std::string_view::npos) {
    const std::string_view unit = text.substr(slash + 1);
    auto prefix_of = [&](std::string_view word) {
      if (unit.empty() || unit.size() > word.size()) return false;
      for (std::size_t i = 0; i < unit.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(unit[i])) != word[i]) return false;
      return true;
    };
    if (prefix_of("second"))
      mult = 1;
    else if (prefix_of("minute"))
      mult = 60;
    else if (prefix_of("hour"))
      mult = 3600;
    else if (prefix_of("day"))
      mult = 86400;
    else
      return std::nullopt;
  }
  const auto count = convert_number(text.substr(0, slash), 0xffffffff);  // atoi: decimal
  if (!count || *count == 0) return std::nullopt;
  const std::uint64_t avg = 10000 * mult / *count;
  if (avg == 0 || avg > 0xffffffff) return std::nullopt;
  return static_cast<std::uint32_t>(avg);
}

std::optional<icmp_spec> parse_icmp_type(std::string_view text, bool ipv6) noexcept {
  auto from_table = [&](const auto& table) -> std::optional<icmp_spec> {
    for (const auto& n : table)
      if (n.name == text) return icmp_spec{n.type, n.code_min, n.code_max, n.type == 0xff && !ipv6};
    return std::nullopt;
  };
  if (ipv6) {
    if (auto s = from_table(icmp6_names)) return s;
    if (auto s = from_table(icmp6_more_names)) return s;
  } else if (auto s = from_table(icmp_names)) {
    return s;
  }
  icmp_state st;
  if (!parse_whole<vg::icmp_type_numeric, icmp_action>(text, st)) return std::nullopt;
  const auto type = convert_number(st.type, 255);
  if (!type) return std::nullopt;
  icmp_spec s;
  s.type = static_cast<std::uint8_t>(*type);
  if (!st.code_first.empty()) {
    const auto a = convert_number(st.code_first, 255);
    if (!a) return std::nullopt;
    s.code_min = s.code_max = static_cast<std::uint8_t>(*a);
    if (!st.code_last.empty()) {
      const auto b = convert_number(st.code_last, 255);
      if (!b || *b < *a) return std::nullopt;
      s.code_max = static_cast<std::uint8_t>(*b);
    }
  }
  s.any = !ipv6 && s.type == 0xff && s.code_min == 0 && s.code_max == 0xff;
  return s;
}

std::optional<std::uint8_t> parse_protocol_number(std::string_view text) noexcept {
  if (text == "tcp") return 6;  // the common ones first, without the table
  if (text == "udp") return 17;
  if (text.empty() || text.size() > 32) return std::nullopt;
  std::array<char, 32> lower{};
  for (std::size_t i = 0; i < text.size(); ++i)
    lower[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  const std::string_view name(lower.data(), text.size());
  if (name[0] >= '0' && name[0] <= '9') {
    const auto v = parse_number(name, 255);
    if (!v) return std::nullopt;
    return static_cast<std::uint8_t>(*v);
  }
  for (const auto& p : protocols)
    if (p.name == name) return p.number;
  if (name == "mh" || name == "ipv6-mh") return 135;
  return std::nullopt;
}

std::string_view protocol_print_name(std::uint8_t number) noexcept {
  for (const auto& p : protocols)
    if (p.number == number) return p.name;
  return {};
}

bool valid_interface_name(std::string_view name) noexcept { return !name.empty() && name.size() <= 15; }

}  // namespace nflens::iptables::detail
