// SPDX-License-Identifier: MIT
// nft's evaluation checks on a rule as a whole, shared by the text parser and the JSON reader (nft runs
// the same evaluation on `nft -f` text and on `nft -j -f` JSON input). See rule_check.hpp.
#include "nft/rule_check.hpp"

#include <nflens/net.hpp>
#include <nflens/nft_types.hpp>

#include "nft/datatype.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <ctime>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace nflens::nft {

namespace {

// The checks throw the first rule_problem they find; `check_rule` returns it.

// What nft's evaluation refuses in a constant: a number wider than the field it is compared with or
// stored into ("Value 70000 exceeds valid range 0-65535" for `tcp dport 70000`), and a dotted quad
// with a part over 255 for an IPv4 address (nft would look it up as a host name, and fail), or any
// other concatenation where the left is one value (nft: datatype mismatch). The right
// side is checked as far as its shape follows the left's: a number, a range, a set's keys, a list, and
// a concatenation item by item.
void check_constant(type_info want, const expr& e, std::string_view text);
// Two elements of an interval set or map that share keys (defined with the element checks below).
void check_overlaps(std::string_view what, type_info key, std::span<const element> elements, std::string_view note = {});
// Types whose every name nft knows from its own tables (datatype.c, ct.c, meta.c, ...): a bare word that
// is none of them is an error. Names nft looks up in the system (protocols, services, users, groups,
// realms, device groups, interfaces) are not judged offline.
bool closed_symbols(datatype t) noexcept {
  switch (t) {
    case datatype::nf_proto: case datatype::ether_type: case datatype::arp_op: case datatype::icmp_type:
    case datatype::icmpv6_type: case datatype::igmp_type: case datatype::tcp_flag: case datatype::dccp_pkttype:
    case datatype::mh_type: case datatype::boolean: case datatype::pkt_type: case datatype::ct_state:
    case datatype::ct_dir: case datatype::ct_status: case datatype::ct_event: case datatype::fib_addrtype:
    case datatype::dscp: case datatype::ecn: case datatype::day:
      return true;
    default:
      return false;
  }
}
void check_constant_pair(const expr& left, const expr& right, std::string_view text) {
  if (const auto* lc = left.get<concat_expr>()) {
    if (const auto* rc = right.get<concat_expr>(); rc != nullptr && rc->items.size() == lc->items.size()) {
      for (std::size_t i = 0; i < lc->items.size(); ++i) check_constant_pair(lc->items[i], rc->items[i], text);
      return;
    }
    if (const auto* set = right.get<set_expr>()) {
      for (const auto& el : set->elements)
        if (el.key != nullptr) check_constant_pair(left, *el.key, text);
    }
    return;
  }
  // `ip dscp & 0x4f == 0`: the mask is a value of the selector's type
  if (const auto* b = left.get<binop_expr>(); b != nullptr && b->op != binop::lshift && b->op != binop::rshift) {
    const type_info inner = type_of(*b->left());
    if (inner.type != datatype::invalid) check_constant(inner, *b->right(), text);
  }
  const type_info want = type_of(left);
  if (want.type != datatype::invalid) check_constant(want, right, text);
}

/// What nft's evaluation refuses of a string for a fixed-size string field (an interface name: IFNAMSIZ,
/// 16 bytes with its NUL): empty, only the wildcard `*`, or not leaving room for the NUL.
void check_string(type_info want, std::string_view text, span where) {
  if (want.type != datatype::ifname && want.type != datatype::string) return;
  if (text.empty())
    throw rule_problem{where, error_code::invalid_value,
                       "an empty string (nft: \"Empty string is not allowed\")"};
  if (text == "*")
    throw rule_problem{where, error_code::invalid_value,
                       "a string that is only the wildcard `*` (nft: \"All-wildcard strings are not supported\")"};
  if (want.bits != 0 && text.size() >= want.bits / 8u)
    throw rule_problem{where, error_code::number_out_of_range,
                       fmt::format("`{}` is {} bytes; {} takes at most {} (nft: \"String exceeds maximum length of "
                                   "{}\")",
                                   text, text.size(), name(want.type), want.bits / 8u - 1, want.bits / 8u)};
}

/// What nft's relative time parser (datatype.c time_parse) refuses in `t`, in its words: digits and the
/// units `d`, `h`, `m`, `s` and a final `ms`, each unit once, at most 8 digits in a row (a unit without digits
/// is 0, no unit at all a number of seconds). Nothing when it takes `t`.
std::optional<std::string_view> relative_time_problem(std::string_view t) noexcept {
  unsigned seen = 0;
  std::size_t digits = 0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    unsigned unit = 0;
    std::string_view twice;
    switch (t[i]) {
      case 'd': unit = 1, twice = "Day has been specified twice"; break;
      case 'h': unit = 2, twice = "Hour has been specified twice"; break;
      case 'm':
        if (t.substr(i) == "ms") unit = 16, twice = "Millisecond has been specified twice", ++i;
        else unit = 4, twice = "Minute has been specified twice";
        break;
      case 's': unit = 8, twice = "Second has been specified twice"; break;
      default:
        if (t[i] < '0' || t[i] > '9') return "wrong time format";
        if (digits++ >= 8) return "value too large";
        continue;
    }
    if ((seen & unit) != 0) return twice;
    seen |= unit;
    digits = 0;
  }
  return std::nullopt;
}

/// The quoted forms of `meta day`, `meta hour` and `meta time` (meta.c), as nft 1.0.6 reads them, with the
/// same C library calls on a NUL-terminated copy (the strings are short and rare):
/// - a day: its English name (`"Monday"`);
/// - an hour (hour_type_parse): a number of seconds strtoul(3) reads whole (`"86400"`, `"-5"`); else
///   strptime(3)'s `%H:%M:%S` or `%H:%M` with nothing after it, and when `%H:%M` leaves text, "Can't parse
///   trailing input"; else a relative time (`"1h30m"`, `""`);
/// - a date: strptime's `%Y-%m-%d`, whatever follows it, else a number of seconds that strtoul reads whole.
void check_time_string(datatype t, std::string_view text, span where) {
  const auto refuse = [&](std::string_view what, std::string_view nft) {
    throw rule_problem{where, error_code::invalid_value, fmt::format("`\"{}\"` is not {} (nft: \"{}\")", text, what, nft)};
  };
  if (t == datatype::day && !types::symbol_value(text, t))
    refuse("a day of the week (Sunday to Saturday, capitalised)", "Could not parse Day of week of packet reception");
  if (t != datatype::hour && t != datatype::date) return;
  const std::string copy(text);
  const auto strptime_rest = [&](const char* format) -> const char* {
    std::tm tm{};
    return ::strptime(copy.c_str(), format, &tm);
  };
  const auto seconds = [&] {
    char* end = nullptr;
    (void)std::strtoul(copy.c_str(), &end, 10);
    return !copy.empty() && *end == '\0';
  };
  if (t == datatype::hour) {
    if (seconds()) return;
    if (const char* r = strptime_rest("%H:%M:%S"); r != nullptr && *r == '\0') return;
    const char* rest = strptime_rest("%H:%M");
    if (rest != nullptr && *rest == '\0') return;
    if (rest != nullptr)
      refuse(fmt::format("a time of day (\"{}\" follows it)", rest), fmt::format("Can't parse trailing input: \"{}\"", rest));
    if (const auto problem = relative_time_problem(text))
      refuse("a time of day (H:M or H:M:S), a number of seconds or a time like 1h30m", *problem);
  } else if (strptime_rest("%Y-%m-%d") == nullptr && !seconds()) {
    refuse("a date (\"YYYY-MM-DD\" and anything after it) or a number of seconds", "Cannot parse date");
  }
}

/// The selector under a chain of binary operators (`meta mark & 0x1 | 0x2 ...` nests to the left as deep as
/// it is long: walked in a loop, never by recursion); `e` itself when it is no operator.
const expr& left_operand(const expr& e) noexcept {
  const expr* cur = &e;
  while (const auto* b = cur->get<binop_expr>()) {
    if (b->left() == nullptr) break;
    cur = b->left();
  }
  return *cur;
}

void check_constant(type_info want, const expr& e, std::string_view text) {
  if (const auto* str = e.get<string_expr>()) {
    check_string(want, str->text, e.where);
    check_time_string(want.type, str->text, e.where);
  } else if (const auto* a = e.get<address_expr>()) {
    const bool v6 = a->v6 != nullptr;
    if ((want.type == datatype::ipv4_addr && v6) || (want.type == datatype::ipv6_addr && !v6))
      throw rule_problem{e.where, error_code::invalid_address,
                         fmt::format("`{}` is an {} address where an {} one is expected (nft: \"Address family for "
                                     "hostname not supported\")",
                                     to_string(a->address()), v6 ? "IPv6" : "IPv4", v6 ? "IPv4" : "IPv6")};
  } else if (e.is<binop_expr>()) {
    // `ip dscp set ip dscp & 0x4f`, `ct event set new or foobar`: the constants of &, | and ^ are values of
    // the type; a shift's right side is a count. A chain of operators nests to the left as deep as it is
    // long (`1 | 2 | ... | 100000`): its left spine is walked in a loop, not by recursion, and the operands
    // are checked left to right.
    std::vector<const expr*> rights;
    const expr* leftmost = &e;
    while (const auto* b = leftmost->get<binop_expr>()) {
      if (b->op != binop::lshift && b->op != binop::rshift) rights.push_back(b->right());
      leftmost = b->left();
    }
    check_constant(want, *leftmost, text);
    for (auto it = rights.rbegin(); it != rights.rend(); ++it) check_constant(want, **it, text);
  } else if (const auto* n = e.get<integer_expr>()) {
    switch (want.type) {
      // (an IPv4 address may be one number, as inet_aton reads `1`: it is checked against 32 bits below)
      case datatype::ipv6_addr: case datatype::lladdr: case datatype::ether_addr: case datatype::string:
      case datatype::ifname: case datatype::time: case datatype::date: case datatype::hour: case datatype::verdict:
        return;
      default: break;
    }
    // a day of the week is 0 (Sunday) to 6; a ct label is a bit number, 0 to 127 (ct.c ct_label_type_parse)
    if (want.type == datatype::day && n->value > 6)
      throw rule_problem{e.where, error_code::number_out_of_range,
                         fmt::format("value {} is out of range for day (0 to 6)", n->value)};
    if (want.type == datatype::ct_label && n->value > 127)
      throw rule_problem{e.where, error_code::number_out_of_range,
                         fmt::format("ct label bit {} is out of range (0 to 127; nft: \"bit {} out of range\")",
                                     n->value, n->value)};
    if (want.bits == 0 || want.bits >= 64) return;
    const std::uint64_t max = (std::uint64_t{1} << want.bits) - 1;
    if (n->value > max)
      throw rule_problem{e.where, error_code::number_out_of_range,
                         fmt::format("value {} is out of range for {} (0 to {}{})", n->value, name(want.type), max,
                                     want.type == datatype::classid
                                         ? "; nft cuts a wider class id to its low 32 bits without a word" : "")};
  } else if (const auto* r = e.get<range_expr>()) {
    check_constant(want, *r->low(), text);
    check_constant(want, *r->high(), text);
    const auto* lo = r->low()->get<integer_expr>();
    const auto* hi = r->high()->get<integer_expr>();
    if (lo != nullptr && hi != nullptr && lo->value > hi->value)
      throw rule_problem{e.where, error_code::invalid_value,
                         fmt::format("range {}-{} has zero or negative size (nft: \"Range has zero or negative "
                                     "size\")",
                                     lo->value, hi->value)};
    const auto* tlo = r->low()->get<time_expr>();
    const auto* thi = r->high()->get<time_expr>();
    if (tlo != nullptr && thi != nullptr && tlo->milliseconds > thi->milliseconds)
      throw rule_problem{e.where, error_code::invalid_value,
                         "a range of durations that goes down (nft: \"Range has zero or negative size\")"};
    // addresses compare as the big-endian numbers they are
    const auto* alo = r->low()->get<address_expr>();
    const auto* ahi = r->high()->get<address_expr>();
    const auto* elo = r->low()->get<ether_address_expr>();
    const auto* ehi = r->high()->get<ether_address_expr>();
    if ((alo != nullptr && ahi != nullptr && alo->address().family == ahi->address().family &&
         alo->address().bytes > ahi->address().bytes) ||
        (elo != nullptr && ehi != nullptr && elo->bytes > ehi->bytes))
      throw rule_problem{e.where, error_code::invalid_value,
                         fmt::format("range {} goes down (nft: \"Range has zero or negative size\")",
                                     e.where.length == 0 || std::size_t{e.where.offset} + e.where.length > text.size()
                                         ? std::string_view("of addresses")
                                         : text.substr(e.where.offset, e.where.length))};
    if (want.type == datatype::ifname)
      throw rule_problem{e.where, error_code::invalid_value,
                         "a range of interface names (nft: \"Range expression is undefined for network interface name "
                         "types\")"};
    if (want.type == datatype::string)
      throw rule_problem{e.where, error_code::invalid_value,
                         "a range of strings (nft: \"Range expression is undefined for string types\")"};
  } else if (const auto* sym = e.get<symbol_expr>()) {
    check_string(want, sym->name, e.where);
    // A number too large for nft's scanner (2^64 or more) reaches the evaluation as a word, and no type
    // of at most 64 bits takes a word of digits ("Service out of range", "Could not resolve hostname").
    const std::string_view w = sym->name;
    // A name made of numbers (JSON's `"1.2"`, `"0x01020304"`) is read as inet_aton reads it, where nft's
    // getaddrinfo starts.
    if (want.type == datatype::ipv4_addr && is_numeric_host(w)) {
      if (!parse_ipv4_inet_aton(w))
        throw rule_problem{e.where, error_code::invalid_address,
                           fmt::format("`{}` is not an IPv4 address (one to four numbers, the last filling the bytes "
                                       "left; nft: \"Could not resolve hostname\")",
                                       w)};
      return;
    }
    // nft's scanner leaves `080` (no octal number) a word, which a port reads as a decimal service number;
    // past 65535 nft keeps its low 16 bits without a word (`099999` loads as 34463): refused, as a class id
    if (want.type == datatype::inet_service && w.size() > 1 && w.front() == '0' &&
        w.find_first_not_of("0123456789") == std::string_view::npos) {
      const std::size_t digits = w.size() - std::min(w.find_first_not_of('0'), w.size());
      std::uint64_t port = 0;
      for (const char c : w) port = digits > 5 ? port : port * 10 + static_cast<unsigned>(c - '0');
      if (digits > 5 || port > 65535)
        throw rule_problem{e.where, error_code::number_out_of_range,
                           fmt::format("port {} is out of range (0 to 65535; nft cuts it to its low 16 bits without "
                                       "a word)",
                                       w)};
      return;
    }
    const bool hex = w.size() > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X');
    const bool number = !w.empty() && (hex ? w.find_first_not_of("0123456789abcdefABCDEF", 2)
                                           : w.find_first_not_of("0123456789")) == std::string_view::npos;
    if (number && want.bits != 0 && want.bits <= 64 && want.type != datatype::string && want.type != datatype::ifname)
      throw rule_problem{e.where, error_code::number_out_of_range,
                         fmt::format("value {} is out of range for {} (it does not fit 64 bits)", w, name(want.type))};
    if (closed_symbols(want.type) && !types::symbol_value(sym->name, want.type))
      throw rule_problem{e.where, error_code::invalid_value,
                         fmt::format("`{}` is not a {} value (nft: \"Could not parse {}\")", sym->name,
                                     name(want.type), name(want.type))};
  } else if (const auto* p = e.get<prefix_expr>()) {
    if (p->value != nullptr) check_constant(want, *p->value, text);
  } else if (const auto* set = e.get<set_expr>()) {
    for (const auto& el : set->elements)
      if (el.key != nullptr) check_constant(want, *el.key, text);
  } else if (const auto* list = e.get<list_expr>()) {
    for (const auto& item : list->items) check_constant(want, item, text);
  } else if (e.is<concat_expr>()) {
    // `ip saddr 1.2.3.256` reads as the numbers 1 . 2 . 3 . 256: no address, and no concatenation
    // where one value is expected
    const std::string_view t = e.where.offset <= text.size() ? text.substr(e.where.offset, e.where.length) : "";
    if (want.type == datatype::ipv4_addr && !t.empty() && t.find_first_not_of("0123456789.") == std::string_view::npos)
      throw rule_problem{e.where, error_code::invalid_address,
                         fmt::format("`{}` is not an IPv4 address (four parts of at most 255; a part with a leading 0 is "
                                     "octal, as nft reads it)",
                                     t)};
    throw rule_problem{e.where, error_code::invalid_value,
                       fmt::format("a concatenation where one {} value is expected", name(want.type))};
  }
}


// The state of the checks along one rule's statements.
struct rule_context {
  family table_family = family::ip;
  const expr* ether_type_at = nullptr;  // an `ether type` match for a protocol other than a VLAN's
  // the first `ether type ip|ip6` match, or in the bridge and netdev families `meta protocol ip|ip6` (nft's
  // meta protocol tells the network protocol only where the link layer is the base, meta.c): a header of
  // the other network protocol after it conflicts
  const expr* link_protocol_at = nullptr;
  nfproto link_protocol = nfproto::none;
  bool several_families = false;  // the table's family holds packets of ip and ip6 (inet, bridge, netdev)
  // an earlier match may tell the network protocol (icmp, ether type, ct l3proto, ip options, ip6
  // extension headers, ...): the ct address check then stays silent rather than refuse what nft takes
  bool family_maybe_known = false;
  bool transport = false;
  std::optional<std::uint8_t> l4;  // the transport protocol the rule is for so far (IANA number)
  // a match of the protocol key (`meta l4proto`, `ip protocol`, `ip6 nexthdr`) on a set of two or more: nft
  // then refuses any header of one transport protocol after it
  const expr* l4_set_at = nullptr;
  const expr* l4_at = nullptr;
  nfproto nfproto_value = nfproto::none;  // `meta nfproto ipv4` (or ipv6): the rule is for one family
  bool ip = false, ip6 = false;
  const expr* ip_at = nullptr;
  const expr* ip6_at = nullptr;
  const expr* nfproto_at = nullptr;
  const expr* nfproto_value_at = nullptr;  // the match that set nfproto_value
  const expr* network_set_at = nullptr;      // a set of several network protocols matched
  nfproto network_set_last = nfproto::none;  // its last element, the protocol nft keeps
  // a match that implies the network protocol by its dependency (icmp and igmp: ip, icmpv6: ip6, `ether
  // type ip|ip6`): none until one is seen
  nfproto implied = nfproto::none;
  // in the inet, bridge and netdev families, an icmp or igmp header (ip) or an icmpv6 one (ip6) before
  // anything told the network protocol: nft's dependency makes the rule that protocol's
  const expr* icmp_at = nullptr;
  nfproto icmp_family = nfproto::none;
  nfproto ether = nfproto::none;  // the first `ether type ip|ip6` match
  const expr* ip6_exthdr_at = nullptr;  // the first IPv6 extension header (`hbh`, `frag`, `exthdr hbh`, ...)
  const expr* ip_option_at = nullptr;   // the first IPv4 option (`ip option rr`)
  const expr* ct_ip_at = nullptr;   // `ct [dir] ip saddr|daddr`
  const expr* ct_ip6_at = nullptr;  // `ct [dir] ip6 saddr|daddr`
  // a link-layer type match (`ether type`, `vlan type`, not `!=`) came earlier: the network header is the one
  // it names (in an arp table, `ether type ip ip saddr 1.2.3.4` loads; `ether type arp arp operation request`
  // in an ip table)
  bool link_type_told = false;
  // a link-layer type match for ARP (`ether type arp`, `vlan type arp`, in the bridge and netdev families
  // `meta protocol arp`): no IP or transport header may follow it (nft: "conflicting protocols specified:
  // arp vs. ip")
  const expr* link_arp_at = nullptr;
  // an earlier link-layer expression (an ether or vlan header, `meta iiftype`): in an inet table the ARP
  // header may follow it
  bool link_seen = false;
  /// The network protocol the rule's matches so far are for: an ip or ip6 header, `meta nfproto`, or a
  /// match that implies one; none when nothing tells.
  [[nodiscard]] nfproto known() const noexcept {
    if (nfproto_value != nfproto::none) return nfproto_value;
    if (ip_at != nullptr) return nfproto::ip;
    if (ip6_at != nullptr) return nfproto::ip6;
    return implied;
  }
};
/// The protocol number of a transport header, as nft's payload dependency matches it; 0 for the others.
std::uint8_t transport_number(header h) noexcept {
  switch (h) {
    case header::icmp: return 1;
    case header::igmp: return 2;
    case header::tcp: return 6;
    case header::udp: return 17;
    case header::dccp: return 33;
    case header::esp: return 50;
    case header::ah: return 51;
    case header::icmpv6: return 58;
    case header::comp: return 108;
    case header::sctp: return 132;
    case header::udplite: return 136;
    default: return 0;
  }
}
/// The headers `transport_number` knows.
constexpr header transport_headers[] = {header::icmp, header::igmp, header::tcp,    header::udp,
                                        header::dccp, header::esp,  header::ah,     header::icmpv6,
                                        header::comp, header::sctp, header::udplite};
/// nft's name of a protocol number in "conflicting protocols specified" (its proto-ctx descriptions).
std::string transport_name(std::uint8_t n) {
  for (const header h : transport_headers)
    if (transport_number(h) == n) return std::string(name(h));
  return std::to_string(n);
}
/// The protocol a `meta l4proto` / `ip protocol` / `ip6 nexthdr` value names; nothing when it is not one
/// constant (a set, a range, `$var` left unresolved) or not a protocol name nflens knows.
std::optional<std::uint8_t> protocol_value(const expr& e) {
  if (const auto* i = e.get<integer_expr>())
    return i->value <= 255 ? std::optional(static_cast<std::uint8_t>(i->value)) : std::nullopt;
  const auto* sy = e.get<symbol_expr>();
  if (sy == nullptr) return std::nullopt;
  // also igmp and comp, which l4_protocol has no name for; the names once (a rule of a dump has
  // `meta l4proto tcp` or `ip protocol udp` more often than not)
  static const auto transports = [] {
    std::array<std::pair<std::string_view, std::uint8_t>, std::size(transport_headers)> t{};
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = {name(transport_headers[i]), transport_number(transport_headers[i])};
    return t;
  }();
  for (const auto& [word, number] : transports)
    if (word == sy->name) return number;
  if (const auto p = parse_protocol(sy->name))
    if (const auto n = protocol_number(*p)) return *n;
  return std::nullopt;
}
/// Whether a match `left == right` leaves nft's protocol context a transport protocol, as nft 1.0.6 sets
/// it, for the protocol selectors: `meta l4proto` with any one constant (a number nft has no header for
/// is still a protocol), `ip protocol`, `ip6 nexthdr` and `ct protocol` with one it has a header for (the
/// `transport_headers`); an anonymous set when one of its elements does. A range names none; a named set
/// counts as one. So `ip protocol gre dnat to 1.2.3.4:80` and `meta l4proto 6-17 dnat to 1.2.3.4:80` are
/// refused ("transport protocol mapping is only valid after transport protocol match"), and `meta l4proto
/// gre dnat to 1.2.3.4:80` loads. True for any other selector.
bool sets_transport(const expr& left, const expr& right) {
  const auto* mk = left.get<meta_expr>();
  const auto* pk = left.get<payload_expr>();
  const auto* ck = left.get<ct_expr>();
  const bool meta = mk != nullptr && mk->key == meta_key::l4proto;
  const bool field = (pk != nullptr && pk->inner == tunnel::none &&
                      ((pk->protocol == header::ip && pk->field == header_field::protocol) ||
                       (pk->protocol == header::ip6 && pk->field == header_field::nexthdr))) ||
                     (ck != nullptr && ck->key == ct_key::protocol);
  if (!meta && !field) return true;
  const auto names = [&](const expr& e) {
    if (!e.is<integer_expr>() && !e.is<symbol_expr>()) return false;
    if (meta) return true;
    const auto n = protocol_value(e);
    return n && std::any_of(std::begin(transport_headers), std::end(transport_headers),
                            [&](header h) { return transport_number(h) == *n; });
  };
  if (const auto* set = right.get<set_expr>())
    return std::any_of(set->elements.begin(), set->elements.end(),
                       [&](const auto& el) { return el.key != nullptr && names(*el.key); });
  if (right.is<range_expr>()) return false;
  // a named set (`meta l4proto @protos tproxy to :1088`, which nft 1.1 takes) and the rest: as nft
  // takes them
  return (!right.is<integer_expr>() && !right.is<symbol_expr>()) || names(right);
}
/// The one protocol every element of `set` names (`{ tcp, 6, 6-6 }`); nothing when they name several or one
/// is no protocol constant.
std::optional<std::uint8_t> single_protocol(const set_expr& set) {
  std::optional<std::uint8_t> one;
  for (const auto& el : set.elements) {
    if (el.key == nullptr) return std::nullopt;
    const expr* k = el.key;
    if (const auto* r = k->get<range_expr>()) {
      const auto lo = protocol_value(*r->low());
      if (!lo || lo != protocol_value(*r->high())) return std::nullopt;
      k = r->low();
    }
    const auto v = protocol_value(*k);
    if (!v || (one && *one != *v)) return std::nullopt;
    one = v;
  }
  return one;
}
/// Refuses a header nft cannot read above ARP (an IP, icmp or transport header, an IPv4 option, an IPv6
/// extension header) at `e`, `where` being how the rule came to ARP packets.
void refuse_above_arp(header h, const expr& e, std::string_view where) {
  switch (h) {
    case header::ip: case header::ip6: case header::icmp: case header::igmp: case header::icmpv6: case header::ah:
    case header::esp: case header::comp: case header::udp: case header::udplite: case header::tcp:
    case header::dccp: case header::sctp:
      throw rule_problem{e.where, error_code::invalid_value,
                         fmt::format("a header of {} {} (nft: \"conflicting protocols specified: arp vs. {}\")",
                                     name(h), where, name(h))};
    case header::hbh: case header::rt: case header::rt0: case header::rt2: case header::srh: case header::frag:
    case header::dst: case header::mh: case header::exthdr: case header::ip_option:
      throw rule_problem{e.where, error_code::invalid_value,
                         fmt::format("{} {} (nft: \"cannot use exthdr with arp\")",
                                     h == header::ip_option ? "an IPv4 option" : "an IPv6 extension header", where)};
    default:
      break;
  }
}
void scan_selectors(const expr& whole, bool equal, rule_context& c) {
  const expr& e = left_operand(whole);
  if (const auto* p = e.get<payload_expr>()) {
    if (p->inner != tunnel::none) return;  // a tunnelled packet's headers, not this packet's
    // the arp family's packets are ARP: nothing of IP above the link layer (an IPv4 option and the IPv6
    // extension headers are nft's exthdr expressions); the ARP header is not in an ip, ip6 or inet table
    // (an earlier `ether type` or `vlan type` names the network header; an earlier `meta l4proto` the
    // transport one)
    const bool network = p->protocol == header::ip || p->protocol == header::ip6;
    if (c.table_family == family::arp && !c.link_type_told && (network || !c.l4))
      refuse_above_arp(p->protocol, e, "in a table of family arp");
    if (c.link_arp_at != nullptr) refuse_above_arp(p->protocol, e, "after a match on ARP packets");
    if (p->protocol == header::arp && !c.link_type_told && !(c.table_family == family::inet && c.link_seen) &&
        (c.table_family == family::ip || c.table_family == family::ip6 || c.table_family == family::inet))
      throw rule_problem{e.where, error_code::invalid_value,
                         fmt::format("an arp header in a table of family {} (nft: \"conflicting protocols specified: {} "
                                     "vs. arp\")",
                                     name(c.table_family), name(c.table_family))};
    if (p->protocol == header::ether || p->protocol == header::vlan) c.link_seen = true;
    if (const std::uint8_t n = transport_number(p->protocol)) {
      if (c.l4 && *c.l4 != n)
        throw rule_problem{e.where, error_code::invalid_value,
                           fmt::format("a header of {} after a match on {} (nft: \"conflicting protocols "
                                       "specified: {} vs. {}\")",
                                       name(p->protocol), transport_name(*c.l4), transport_name(*c.l4), name(p->protocol))};
      if (!c.l4 && c.l4_set_at != nullptr)
        throw rule_problem{e.where, error_code::invalid_value,
                           fmt::format("a header of {} after a match on a set of protocols (nft: \"conflicting "
                                       "protocols specified\"; `th` reads the ports of any of them)",
                                       name(p->protocol))};
      if (!c.l4) c.l4 = n;
    }
    // (a tcp option or an sctp chunk is not a transport protocol match for nft: `tcp option maxseg size
    // 1400 redirect to :80` is refused)
    // a VLAN header follows an ether type of 802.1Q (nft adds that dependency): not one of ip, arp, ...
    if (p->protocol == header::vlan && c.ether_type_at != nullptr)
      throw rule_problem{e.where, error_code::invalid_value,
                         "a vlan header after an ether type match for another protocol (nft: \"conflicting protocols "
                         "specified: ether vs. vlan\")"};
    switch (p->protocol) {
      case header::icmp: case header::igmp: case header::icmpv6:
        if (c.several_families && c.icmp_at == nullptr && c.known() == nfproto::none &&
            c.link_protocol == nfproto::none) {
          c.icmp_at = &e;
          c.icmp_family = p->protocol == header::icmpv6 ? nfproto::ip6 : nfproto::ip;
        }
        if (c.implied == nfproto::none) c.implied = p->protocol == header::icmpv6 ? nfproto::ip6 : nfproto::ip;
        c.transport = true;
        break;
      // (nft takes the IPsec headers as the transport protocol too: `esp spi 1 dnat to 1.2.3.4:80` loads)
      case header::udp: case header::udplite: case header::tcp: case header::dccp: case header::sctp:
      case header::esp: case header::ah: case header::comp:
        c.transport = true;
        break;
      case header::ip:
        if (!c.ip_at) c.ip_at = &e;
        c.transport = c.transport || (equal && p->field == header_field::protocol);
        break;
      case header::ip6:
        if (!c.ip6_at) c.ip6_at = &e;
        c.transport = c.transport || (equal && p->field == header_field::nexthdr);
        break;
      case header::hbh: case header::rt: case header::rt0: case header::rt2: case header::srh: case header::frag:
      case header::dst: case header::mh: case header::exthdr:
        if (!c.ip6_exthdr_at) c.ip6_exthdr_at = &e;
        break;
      case header::ip_option:
        if (!c.ip_option_at) c.ip_option_at = &e;
        break;
      default:
        break;
    }
  } else if (const auto* ct = e.get<ct_expr>()) {
    // a conntrack port takes its type from the transport protocol an earlier match tells; nft has none
    // to give it otherwise (`th dport`, a tcp option or `ip protocol != tcp` tell none)
    if ((ct->key == ct_key::proto_src || ct->key == ct_key::proto_dst) && !c.transport)
      throw rule_problem{e.where, error_code::invalid_value,
                         fmt::format("ct {} needs a transport protocol match earlier in the rule, such as `meta l4proto "
                                     "tcp` or `tcp dport` (nft: \"Can't parse symbolic invalid expressions\")",
                                     name(ct->key))};
    if ((ct->key == ct_key::saddr || ct->key == ct_key::daddr) && ct->protocol == nfproto::ip && !c.ct_ip_at)
      c.ct_ip_at = &e;
    if ((ct->key == ct_key::saddr || ct->key == ct_key::daddr) && ct->protocol == nfproto::ip6 && !c.ct_ip6_at)
      c.ct_ip6_at = &e;
    if ((ct->key == ct_key::saddr || ct->key == ct_key::daddr) && ct->protocol == nfproto::none &&
        c.several_families && !c.family_maybe_known && c.ip_at == nullptr && c.ip6_at == nullptr &&
        c.nfproto_value == nfproto::none) {
      const std::string_view which = ct->key == ct_key::saddr ? "saddr" : "daddr";
      throw rule_problem{e.where, error_code::invalid_value,
                         fmt::format("a ct address in a table of ip and ip6 packets needs `ip {0}` or `ip6 {0}` in it, "
                                     "or a match on ip, ip6 or meta nfproto before it (nft: \"cannot determine ip "
                                     "protocol version, use \"ip {0}\" or \"ip6 {0}\" instead\")",
                                     which)};
    }
    // the kernel reads a conntrack address or port for one direction only (nft_ct_get_init)
    if ((ct->key == ct_key::saddr || ct->key == ct_key::daddr || ct->key == ct_key::proto_src ||
         ct->key == ct_key::proto_dst) &&
        ct->direction == ct_direction::none)
      throw rule_problem{e.where, error_code::invalid_value,
                         fmt::format("ct {0} without a direction: write `ct original {0}` or `ct reply {0}` (the "
                                     "kernel: \"Invalid argument\")",
                                     name(ct->key))};
  } else if (const auto* m = e.get<meta_expr>()) {
    if (m->key == meta_key::iiftype) c.link_seen = true;
    c.transport = c.transport || (equal && m->key == meta_key::l4proto);
    if (m->key == meta_key::nfproto && !c.nfproto_at) c.nfproto_at = &e;
    // the bridge port keys come from the kernel's bridge meta module, which only the bridge family has
    const bool bridge_only = m->key == meta_key::ibrname || m->key == meta_key::obrname ||
                             m->key == meta_key::ibrpvid || m->key == meta_key::ibrvproto;
    if (bridge_only && c.table_family != family::bridge)
      throw rule_problem{e.where, error_code::invalid_value,
                         fmt::format("meta {} in a table of family {}: bridge port keys exist in the bridge family only "
                                     "(the kernel: \"Operation not supported\")",
                                     name(m->key), name(c.table_family))};
  } else if (const auto* f = e.get<fib_expr>()) {
    // fib.c fib_expr_evaluate / the kernel's nft_fib_init
    const auto has = [&](fib_flag x) { return (f->flags & static_cast<std::uint8_t>(x)) != 0; };
    const auto refuse = [&](std::string_view what) {
      throw rule_problem{e.where, error_code::invalid_value, fmt::format("fib: {} (nft: \"fib: {}\")", what, what)};
    };
    if (has(fib_flag::saddr) && has(fib_flag::daddr)) refuse("saddr and daddr are mutually exclusive");
    if (has(fib_flag::iif) && has(fib_flag::oif)) refuse("iif and oif are mutually exclusive");
    if (!has(fib_flag::saddr) && !has(fib_flag::daddr)) refuse("need either saddr or daddr");
  } else if (const auto* rt = e.get<rt_expr>()) {
    if (rt->key == rt_key::nexthop) {
      // (an IPv4 option, an IPv6 extension header or a link-layer type match tells nft the family too)
      if (rt->protocol == nfproto::none && c.table_family != family::ip && c.table_family != family::ip6 &&
          c.known() == nfproto::none && !c.link_type_told && c.ip_option_at == nullptr && c.ip6_exthdr_at == nullptr)
        throw rule_problem{e.where, error_code::invalid_value,
                           fmt::format("rt nexthop in a table of family {} needs `rt ip nexthop` or `rt ip6 nexthop`, or "
                                       "a match that tells the family before it (nft: \"cannot determine ip protocol "
                                       "version\")",
                                       name(c.table_family))};
      if ((rt->protocol == nfproto::ip6 && c.table_family == family::ip) ||
          (rt->protocol == nfproto::ip && c.table_family == family::ip6))
        throw rule_problem{e.where, error_code::invalid_value,
                           fmt::format("rt {} nexthop in a table of family {} (nft: \"{} nexthop will not match\")",
                                       rt->protocol == nfproto::ip ? "ip" : "ip6", name(c.table_family),
                                       rt->protocol == nfproto::ip ? "ip" : "ip6")};
    }

  } else if (e.is<ipsec_expr>()) {
    if (c.table_family != family::ip && c.table_family != family::ip6 && c.table_family != family::inet)
      throw rule_problem{e.where, error_code::invalid_value,
                         fmt::format("ipsec in a table of family {} (nft: \"ipsec expression is only valid in "
                                     "ip/ip6/inet tables\")",
                                     name(c.table_family))};
  } else if (const auto* cc = e.get<concat_expr>()) {
    for (const auto& item : cc->items) scan_selectors(item, equal, c);
  } else if (const auto* mp = e.get<map_expr>()) {
    scan_selectors(*mp->key(), equal, c);
  } else if (const auto* h = e.get<hash_expr>(); h != nullptr && h->spec->key != nullptr) {
    scan_selectors(*h->spec->key, equal, c);  // nft adds the dependencies of what it hashes: `jhash ip saddr`
  }
}
// The address family a NAT or tproxy statement works in: the table's (ip, ip6), the statement's `ip` /
// `ip6`, or in an inet table what the rule matched before (an ip or ip6 header, `meta nfproto`). nft:
// "specify `dnat ip` or `dnat ip6` in inet table to disambiguate", "conflicting protocols specified",
// and for an address of the other family "Address family for hostname not supported".
void check_family(family table_family, const rule_context& c, nfproto written, const expr* address, const stmt& s,
                  std::string_view what) {
  const auto fail = [](const expr* at, const stmt& s, std::string message) {
    const span w = at != nullptr ? at->where : s.where;
    throw rule_problem{w, error_code::invalid_address, std::move(message)};
  };
  nfproto fam = table_family == family::ip ? nfproto::ip : table_family == family::ip6 ? nfproto::ip6 : nfproto::none;
  const auto family_word = [](nfproto p) { return p == nfproto::ip ? "ip" : "ip6"; };
  if (written != nfproto::none) {
    if (fam != nfproto::none && fam != written)
      fail(nullptr, s, fmt::format("{} {} in a table of family {} (nft: \"conflicting protocols specified\")", what,
                                   family_word(written), name(table_family)));
    if (table_family == family::inet && c.known() != nfproto::none && c.known() != written)
      fail(nullptr, s, fmt::format("{} {} after a match on {} (nft: \"conflicting protocols specified: {} vs. {}\")", what,
                                   family_word(written), family_word(c.known()), family_word(c.known()),
                                   family_word(written)));
    fam = written;
  }
  if (fam == nfproto::none && table_family == family::inet) {
    fam = c.known();
    // nft's tproxy takes its family only as written once the rule's matches tell one
    if (fam != nfproto::none && what == "tproxy")
      fail(nullptr, s, fmt::format("tproxy in an inet table after a match on {0} needs `tproxy {0}` (nft: "
                                   "\"conflicting protocols specified: {0} vs. unknown. You must specify ip or ip6 "
                                   "family in tproxy statement\")",
                                   family_word(fam)));
  }
  if (address == nullptr) return;
  // in an ip or ip6 table, an address after `ether type` of the other family (nft takes icmpv6 there)
  if (written == nfproto::none && fam != nfproto::none && c.ether != nfproto::none && c.ether != fam)
    fail(nullptr, s, fmt::format("{} to an address after `ether type {}` in a table of family {} (nft: \"conflicting "
                                 "protocols specified: {} vs. {}\")",
                                 what, family_word(c.ether), name(table_family), family_word(c.ether),
                                 family_word(fam)));
  if (fam == nfproto::none && table_family == family::inet)
    fail(nullptr, s, fmt::format("an address of a {} statement in an inet table needs `ip` or `ip6` after the "
                                 "statement's name, or a match on ip or ip6 before it (nft: \"ip or ip6 must be "
                                 "specified with address for inet tables\")",
                                 what));
  if (fam == nfproto::none) return;
  // an address, a range or prefix of them, or the address part of `address . port`
  const auto check_address = [&](const expr& at) {
    const expr* e = &at;
    if (const auto* cc = e->get<concat_expr>(); cc != nullptr && !cc->items.empty()) e = &cc->items[0];
    const auto* a = e->get<address_expr>();
    if (const auto* r = e->get<range_expr>()) a = r->low()->get<address_expr>();
    if (const auto* p = e->get<prefix_expr>()) a = p->value->get<address_expr>();
    if (a == nullptr) return;
    const nfproto af = a->address().family == ip_family::ipv4 ? nfproto::ip : nfproto::ip6;
    if (af != fam)
      fail(e, s, fmt::format("an {} address where the {} statement works on {} (nft: \"Address family for "
                             "hostname not supported\")",
                             af == nfproto::ip ? "IPv4" : "IPv6", what, fam == nfproto::ip ? "ip" : "ip6"));
  };
  if (!address->is<concat_expr>()) check_address(*address);
  // the data of an anonymous map: `dnat ip6 to ip daddr map { 1.1.1.1 : 1.2.3.4 }` is refused
  const auto* mp = address->get<map_expr>();
  if (const auto* set = mp != nullptr && mp->mapping() != nullptr ? mp->mapping()->get<set_expr>() : nullptr)
    for (const auto& el : set->elements)
      if (el.data != nullptr) check_address(*el.data);
}

/// `ip daddr map { 1.2.3.4 : 10.0.0.1 . 80 }`: an anonymous map whose data are address . port, which
/// nft takes as a mapping to address and port (STMT_NAT_F_CONCAT) whether or not the statement says so.
bool maps_to_address_and_port(const expr* address) noexcept {
  const auto* mp = address != nullptr ? address->get<map_expr>() : nullptr;
  const auto* set = mp != nullptr && mp->mapping() != nullptr ? mp->mapping()->get<set_expr>() : nullptr;
  if (set == nullptr) return false;
  return std::any_of(set->elements.begin(), set->elements.end(),
                     [](const element& el) { return el.data != nullptr && el.data->is<concat_expr>(); });
}

/// A selector that cannot tell nft ip from ip6: transport headers, meta keys other than nfproto (even
/// `meta protocol ip`, checked against nft 1.0.6), ct keys other than l3proto and the addresses.
bool neutral_for_family(const expr& whole) noexcept {
  const expr& e = left_operand(whole);
  if (const auto* p = e.get<payload_expr>()) {
    switch (p->protocol) {
      case header::tcp: case header::udp: case header::udplite: case header::sctp: case header::dccp:
      case header::th:
        return p->inner == tunnel::none;
      default:
        return false;
    }
  }
  if (const auto* m = e.get<meta_expr>()) return m->key != meta_key::nfproto;  // `meta protocol ip` does not tell nft
  if (const auto* ct = e.get<ct_expr>())
    return ct->key != ct_key::l3proto && ct->key != ct_key::saddr && ct->key != ct_key::daddr;
  return false;
}

/// The first address a match value names: an address, a prefix, a range or a set of them; null otherwise.
const address_expr* first_address(const expr& e) noexcept {
  if (const auto* a = e.get<address_expr>()) return a;
  if (const auto* p = e.get<prefix_expr>()) return p->value != nullptr ? first_address(*p->value) : nullptr;
  if (const auto* r = e.get<range_expr>()) return r->low() != nullptr ? first_address(*r->low()) : nullptr;
  if (const auto* s = e.get<set_expr>())
    return !s->elements.empty() && s->elements.front().key != nullptr ? first_address(*s->elements.front().key) : nullptr;
  return nullptr;
}

/// The network protocol a value names: of `meta nfproto` (`nfproto_key`: `ipv4`, 2, `ipv6`, 10), or of an ether
/// type (`ether type`, `vlan type`, `meta protocol`: `ip`, 0x0800, `ip6`, 0x86dd); none for another protocol or a
/// value that is no constant.
nfproto network_value(const expr& v, bool nfproto_key) noexcept {
  if (const auto* sy = v.get<symbol_expr>())
    return sy->name == (nfproto_key ? "ipv4" : "ip") ? nfproto::ip : sy->name == (nfproto_key ? "ipv6" : "ip6") ? nfproto::ip6 : nfproto::none;
  if (const auto* i = v.get<integer_expr>())
    return i->value == (nfproto_key ? 2u : 0x0800u) ? nfproto::ip : i->value == (nfproto_key ? 10u : 0x86ddu) ? nfproto::ip6 : nfproto::none;
  return nfproto::none;
}

/// `ether type X` or `vlan type X` (not `!=`): a match that names the network header above the link layer.
bool link_type_match(const match_stmt& m) noexcept {
  const auto* p = m.left->get<payload_expr>();
  return p != nullptr && (p->protocol == header::ether || p->protocol == header::vlan) && p->inner == tunnel::none &&
         p->field == header_field::type && m.op != relational_op::neq;
}
/// A value as nft's evaluation takes it for the protocol it tells: a set of one element is that element
/// (`ether type { ip }`, `meta protocol { ip }`, `meta nfproto { ipv6 }`).
const expr& one_value(const expr& v) noexcept {
  if (const auto* one = v.get<set_expr>(); one != nullptr && one->elements.size() == 1 && one->elements[0].key != nullptr)
    return *one->elements[0].key;
  return v;
}
/// `ether type ip|ip6` or `vlan type ip|ip6` (or 0x0800 / 0x86dd): the network protocol it tells, none otherwise.
nfproto ether_type_family(const match_stmt& m) noexcept {
  if (!link_type_match(m)) return nfproto::none;
  return network_value(one_value(*m.right), false);
}

/// Whether an `ether type` value is a VLAN tag's (802.1Q or 802.1ad), which a vlan header follows.
bool vlan_ether_type(const expr& v) noexcept {
  if (const auto* sy = v.get<symbol_expr>()) return sy->name == "8021q" || sy->name == "8021ad" || sy->name == "vlan";
  if (const auto* i = v.get<integer_expr>()) return i->value == 0x8100 || i->value == 0x88a8;
  return true;  // a set or anything else: not judged
}

/// A selector's value given where a value of type `want` goes, as nft's evaluation asks (evaluate.c,
/// `__stmt_evaluate_arg`): one of an integer type fits, except a header field of another width (`meta
/// priority set ip id`, 16 bits for 32); any other type must be `want` (`ip dscp set meta mark`, `dnat to
/// tcp dport`: "datatype mismatch"). Constants, operations, hashes and maps are not judged here.
void check_selector_value(type_info want, const expr& value) {
  const type_info have = type_of(value);
  if (want.type == datatype::invalid || have.type == datatype::invalid) return;
  const bool integer =
      have.type == datatype::integer || have.type == datatype::xinteger || have.type == datatype::mptcp_subtype;
  std::string why;
  if (integer && value.is<payload_expr>() && have.bits != 0 && want.bits != 0 && have.bits != want.bits)
    why = fmt::format("a header field of {} bits given to {} ({} bits)", have.bits, name(want.type), want.bits);
  else if (!integer && have.type != want.type)
    why = fmt::format("a value of type {} given to {}", name(have.type), name(want.type));
  if (!why.empty())
    throw rule_problem{value.where, error_code::invalid_value, fmt::format("{} (nft: \"datatype mismatch\")", why)};
}
/// `check_selector_value` for `TARGET set VALUE`. A mark target is not judged: nft 1.1 takes other
/// integer-based types there (`meta mark set ip dscp`, which 1.0.6 refuses).
void check_set_value(const expr& target, const expr& value) {
  const type_info want = type_of(target);
  if (want.type != datatype::mark) check_selector_value(want, value);
}

/// Whether an `ether type` or `meta protocol` value is ARP's (`arp`, 0x0806).
bool names_arp(const expr& v) noexcept {
  if (const auto* sy = v.get<symbol_expr>()) return sy->name == "arp";
  if (const auto* i = v.get<integer_expr>()) return i->value == 0x0806;
  return false;
}

// What the kernel writes where nft's grammar takes `TARGET set VALUE` (nft_meta_set_init, nft_ct_set_init,
// nft_exthdr_tcp_set_init): a meta mark, priority, pkttype, nftrace, secmark (or broute); a ct mark, label,
// zone, event mask or secmark, and the helper, timeout and expectation objects; a TCP option field of 16 or
// 32 bits. Any other meta or ct key, an IPv4 option, an SCTP chunk field, and the kernel refuses the rule
// ("Operation not supported").
void check_settable(const expr& target) {
  // (nft text stops at `set` with a syntax error; nft's JSON reader takes no such key either)
  if (const auto not_a_target = unsettable(target))
    throw rule_problem{target.where, error_code::invalid_value,
                       fmt::format("{} cannot be set (nft: \"Invalid mangle statement key\")", *not_a_target)};
  std::string what;
  if (const auto* m = target.get<meta_expr>()) {
    switch (m->key) {
      case meta_key::mark: case meta_key::priority: case meta_key::pkttype: case meta_key::nftrace:
      case meta_key::secmark: case meta_key::broute:
        return;
      default:
        what = fmt::format("meta {}", name(m->key));
    }
  } else if (const auto* c = target.get<ct_expr>()) {
    switch (c->key) {
      case ct_key::mark: case ct_key::label: case ct_key::zone: case ct_key::event: case ct_key::secmark:
      case ct_key::helper: case ct_key::timeout: case ct_key::expectation:
      // (an address or port without a direction: nft's evaluation refuses it in words of its own)
      case ct_key::saddr: case ct_key::daddr: case ct_key::proto_src: case ct_key::proto_dst:
        return;
      default:
        what = fmt::format("ct {}", name(c->key));
    }
  } else if (const auto* p = target.get<payload_expr>()) {
    if (p->protocol == header::ip_option) {
      what = "an IPv4 option";
    } else if (p->protocol == header::sctp_chunk) {
      what = "an SCTP chunk field";
    } else if (p->protocol == header::tcp_option) {
      const auto bits = type_of(*p).bits;
      if (bits == 16 || bits == 32) return;
      what = fmt::format("a TCP option field of {} bits", bits);
    } else {
      return;
    }
  } else {
    return;
  }
  throw rule_problem{target.where, error_code::invalid_value,
                     fmt::format("{} cannot be set: the kernel writes only a meta mark, priority, pkttype, nftrace or "
                                 "secmark, a ct mark, label, zone, event or secmark, and TCP option fields of 16 or 32 "
                                 "bits (the kernel: \"Operation not supported\")",
                                 what)};
}

/// nft's checks of a log statement's options (evaluate.c stmt_evaluate_log): `group`, `snaplen` and
/// `queue-threshold` log through nflog, which has no level and no flags; `level audit` takes no other
/// option.
void check_log(const log_stmt& l, const stmt& s) {
  const auto refuse = [&s](std::string_view message) { throw rule_problem{s.where, error_code::invalid_value, std::string(message)}; };
  const bool nflog = (l.present & (2 | 4 | 8)) != 0;
  if (nflog && (l.present & 1) != 0)
    refuse("log level with group, snaplen or queue-threshold (nft: \"level and group are mutually exclusive\")");
  if (nflog && l.flags != 0)
    refuse("log flags with group, snaplen or queue-threshold (nft: \"flags and group are mutually exclusive\")");
  if ((l.present & 1) != 0 && l.level == log_level::audit && (l.prefix != nullptr || l.flags != 0))
    refuse("log level audit with another option (nft: \"log level audit doesn't support any further options\")");
}

/// nft's checks of a reject statement against the table's family and the rule's matches.
void check_reject(family table_family, const rule_context& c, const reject_stmt& r, const stmt& s) {
  const auto refuse = [&s](std::string message) { throw rule_problem{s.where, error_code::invalid_value, std::move(message)}; };
  if (r.type == reject_type::tcp_reset && c.l4 && *c.l4 != 6)
    refuse(fmt::format("reject with tcp reset after a match on {} (nft: \"you cannot use tcp reset with this protocol\")",
                       transport_name(*c.l4)));
  if (r.type == reject_type::icmpx && (table_family == family::ip || table_family == family::ip6))
    refuse(fmt::format("reject with icmpx in a table of family {}: use icmp or icmpv6 (nft: \"abstracted ICMP "
                       "unreachable not supported\")",
                       name(table_family)));
  if (r.code != nullptr && r.type != reject_type::unspecified && r.type != reject_type::tcp_reset)
    if (const auto* sy = r.code->get<symbol_expr>(); sy != nullptr && !types::reject_code_value(sy->name, r.type))
      throw rule_problem{r.code->where, error_code::invalid_value,
                         fmt::format("`{}` is not an {} code (nft: \"Could not parse {} code\")", sy->name, name(r.type),
                                     name(r.type))};
  // in the bridge and netdev families a reject answers ip and ip6 packets only
  if ((table_family == family::bridge || table_family == family::netdev) && c.ether_type_at != nullptr &&
      c.ether == nfproto::none)
    refuse("reject after an ether type match for a protocol other than ip and ip6 (nft: \"cannot reject this network "
           "family\")");
  const nfproto fam = table_family == family::ip    ? nfproto::ip
                      : table_family == family::ip6 ? nfproto::ip6
                                                    : c.known();
  if ((r.type == reject_type::icmp && fam == nfproto::ip6) || (r.type == reject_type::icmpv6 && fam == nfproto::ip))
    refuse(fmt::format("reject with {} for {} packets (nft: \"conflicting protocols specified: ip vs ip6\")",
                       r.type == reject_type::icmp ? "icmp" : "icmpv6", fam == nfproto::ip ? "ip" : "ip6"));
}

bool is_terminal(const stmt& s) noexcept {
  if (const auto* v = s.get<verdict_stmt>()) return v->kind != verdict::continue_;
  return s.is<reject_stmt>() || s.is<nat_stmt>() || s.is<queue_stmt>();
}
/// An anonymous set of no elements where a rule looks a value up (`ip saddr $empty`, `vmap $empty`,
/// `map $empty`): only a `define` can make one, and nft refuses it ("Set is empty").
void check_not_empty(const expr* e) {
  if (e == nullptr) return;
  if (const auto* m = e->get<map_expr>()) e = m->mapping();
  if (const auto* set = e != nullptr ? e->get<set_expr>() : nullptr; set != nullptr && set->elements.empty())
    throw rule_problem{e->where, error_code::invalid_value, "an empty set (nft: \"Set is empty\")"};
}

// The maps a statement holds at its top: a verdict map, or a map as a mangle value, a NAT address or port, a
// queue number or an object name. Calls `f(key, mapping)` for each.
template <class F>
void for_each_top_map(const stmt& s, F&& f) {
  const auto top = [&](const expr* e) {
    if (const auto* m = e != nullptr ? e->get<map_expr>() : nullptr) f(m->key(), m->mapping());
  };
  if (const auto* v = s.get<verdict_map_stmt>()) {
    f(v->key, v->mapping);
  } else if (const auto* g = s.get<mangle_stmt>()) {
    top(g->value);
  } else if (const auto* n = s.get<nat_stmt>()) {
    top(n->address);
    top(n->port);
  } else if (const auto* q = s.get<queue_stmt>()) {
    top(q->number);
  } else if (const auto* o = s.get<objref_stmt>()) {
    top(o->name);
  }
}

// An anonymous map (`tcp dport vmap { 20-30 : accept, 25 : drop }`) holds intervals as a named interval map
// does, and nft never merges a map's: two of its elements that share keys are refused. (An anonymous set is
// merged.)
void check_anonymous_map(const expr* key, const expr* mapping) {
  if (key == nullptr || mapping == nullptr || key->is<concat_expr>()) return;
  const auto* set = mapping->get<set_expr>();
  if (set == nullptr || std::none_of(set->elements.begin(), set->elements.end(), [](const element& el) {
        return el.key != nullptr && interval_part(*el.key) != nullptr;
      }))
    return;
  check_overlaps("this anonymous map", type_of(*key), set->elements);
}

// `ct [original|reply] saddr` without `ip` or `ip6` has a type only where a constant beside it tells it
// (`ct original saddr 1.2.3.4`, also a prefix, a range or a set of one element, which nft makes a compare).
// As a key of a set or map, or a part of a concatenation, nft cannot type it: "specify either ip or ip6 for
// address matching".
void check_typed_key(const expr& key) {
  if (const auto* cc = key.get<concat_expr>()) {
    for (const auto& item : cc->items) check_typed_key(item);
    return;
  }
  const auto* ct = key.get<ct_expr>();
  if (ct == nullptr || ct->protocol != nfproto::none || (ct->key != ct_key::saddr && ct->key != ct_key::daddr)) return;
  throw rule_problem{key.where, error_code::invalid_value,
                     fmt::format("ct {}{}{} without `ip` or `ip6` as the key of a set or map or as part of a "
                                 "concatenation: nft cannot tell its type (nft: \"specify either ip or ip6 for address "
                                 "matching\")",
                                 ct->direction == ct_direction::none ? "" : name(ct->direction),
                                 ct->direction == ct_direction::none ? "" : " ", name(ct->key))};
}
// The keys of a statement's lookups and of the maps at its top.
void check_typed_keys(const stmt& s) {
  if (const auto* m = s.get<match_stmt>()) {
    const auto* set = m->right->get<set_expr>();
    if (m->left->is<concat_expr>() || m->right->is<set_ref_expr>() || (set != nullptr && set->elements.size() >= 2))
      check_typed_key(*m->left);
  }
  for_each_top_map(s, [](const expr* key, const expr*) {
    if (key != nullptr) check_typed_key(*key);
  });
}

void check_all(family table_family, std::span<const stmt> stmts) {
  rule_context c;
  c.table_family = table_family;
  c.several_families = table_family == family::inet || table_family == family::bridge || table_family == family::netdev;
  // nft's `meta protocol` tells the network protocol where the link layer is the base (meta.c)
  const bool link_base = table_family == family::bridge || table_family == family::netdev;
  for (std::size_t i = 0; i < stmts.size(); ++i) {
    const stmt& s = stmts[i];
    if (const auto* m = s.get<match_stmt>()) {
      check_not_empty(m->left);
      check_not_empty(m->right);
    } else if (const auto* v = s.get<verdict_map_stmt>()) {
      check_not_empty(v->mapping);
    } else if (const auto* g = s.get<mangle_stmt>()) {
      check_not_empty(g->value);
    }
    if (i > 0 && is_terminal(stmts[i - 1]))
      throw rule_problem{s.where, error_code::invalid_value,
                         "a statement after a terminal statement has no effect (nft: \"Statement after terminal "
                         "statement has no effect\")"};
    for_each_top_map(s, check_anonymous_map);
    check_typed_keys(s);
    if (const auto* m = s.get<match_stmt>()) {
      if (m->op == relational_op::neg && m->left->is<binop_expr>())
        throw rule_problem{s.where, error_code::invalid_value,
                           "`!` on a masked value; write `!=` (nft: \"cannot combine negation with binary expression\")"};
      // a raw payload of no bits holds only 0
      if (const auto* raw = m->left->get<payload_expr>(); raw != nullptr && raw->protocol == header::raw &&
                                                            raw->length == 0)
        if (const auto* v = m->right->get<integer_expr>(); v != nullptr && v->value != 0)
          throw rule_problem{m->right->where, error_code::number_out_of_range,
                             fmt::format("value {} is out of range for a payload of 0 bits (nft: \"Value {} exceeds "
                                         "valid range 0-0\")",
                                         v->value, v->value)};
      // an order (`<`, `>`, `<=`, `>=`) is defined for single values only
      if (m->op == relational_op::lt || m->op == relational_op::gt || m->op == relational_op::lte ||
          m->op == relational_op::gte) {
        const char* kind = m->right->is<range_expr>()     ? "range"
                           : m->right->is<set_expr>()     ? "set"
                           : m->right->is<prefix_expr>()  ? "prefix"
                           : m->right->is<set_ref_expr>() ? "set reference"
                                                          : nullptr;
        if (kind != nullptr)
          throw rule_problem{m->right->where, error_code::invalid_value,
                             fmt::format("`{}` compares with a {}, which has no order (nft: \"Relational expression "
                                         "({}) is undefined for {} expressions\")",
                                         name(m->op), kind, name(m->op), kind)};
      }
      const bool transport_before = c.transport;
      scan_selectors(*m->left, m->op != relational_op::neq, c);
      // `rt nexthop` without ip/ip6 is an address of the table's family, or of the one earlier matches tell
      if (const auto* rt = m->left->get<rt_expr>(); rt != nullptr && rt->key == rt_key::nexthop &&
                                                    rt->protocol == nfproto::none) {
        const nfproto f = table_family == family::ip ? nfproto::ip : table_family == family::ip6 ? nfproto::ip6 : c.known();
        if (f != nfproto::none)
          check_constant(f == nfproto::ip ? type_info{datatype::ipv4_addr, 32} : type_info{datatype::ipv6_addr, 128},
                         *m->right, {});
      }
      if (const auto* p = m->left->get<payload_expr>(); p != nullptr && p->protocol == header::ether &&
                                                          p->field == header_field::type && m->op != relational_op::neq &&
                                                          c.ether_type_at == nullptr && !vlan_ether_type(*m->right))
        c.ether_type_at = m->left;
      if (!neutral_for_family(*m->left)) c.family_maybe_known = true;
      // in an ip or ip6 table nft takes `ct [original|reply] protocol P` as the transport protocol
      // (in an inet table once the rule's matches tell the family)
      if (const auto* ck = m->left->get<ct_expr>();
          ck != nullptr && ck->key == ct_key::protocol && m->op != relational_op::neq &&
          (table_family == family::ip || table_family == family::ip6 ||
           (table_family == family::inet && c.known() != nfproto::none))) {
        c.transport = true;
        if (!c.l4) c.l4 = protocol_value(*m->right);
      }
      if (!transport_before && c.transport && !sets_transport(*m->left, *m->right)) c.transport = false;
      if (c.ether == nfproto::none) c.ether = ether_type_family(*m);
      c.link_type_told = c.link_type_told || link_type_match(*m);
      if (c.link_arp_at == nullptr && m->op != relational_op::neq && names_arp(one_value(*m->right))) {
        const auto* mk = m->left->get<meta_expr>();
        if (link_type_match(*m) || (mk != nullptr && mk->key == meta_key::protocol && link_base)) c.link_arp_at = m->left;
      }
      // `meta nfproto`, `ether type` or `meta protocol` against a set of several: nft keeps the set's last
      // element as the network protocol (`meta nfproto { ipv4, ipv6 } ip saddr 1.2.3.4` conflicts)
      if (const auto* set = m->right->get<set_expr>(); set != nullptr && set->elements.size() >= 2 &&
                                                       m->op != relational_op::neq && c.network_set_at == nullptr) {
        const auto* mk = m->left->get<meta_expr>();
        const auto* pk = m->left->get<payload_expr>();
        if ((mk != nullptr && (mk->key == meta_key::nfproto || (mk->key == meta_key::protocol && link_base))) ||
            (pk != nullptr && (pk->protocol == header::ether || pk->protocol == header::vlan) &&
             pk->field == header_field::type && pk->inner == tunnel::none)) {
          c.network_set_at = m->right;
          // (a VLAN tag in the set is a link-layer protocol: the network protocol is the last other element)
          const std::span<const element> els = set->elements;
          for (auto it = els.rbegin(); it != els.rend(); ++it) {
            const expr* k = it->key;
            if (k == nullptr) break;
            if (pk != nullptr && (k->is<symbol_expr>() || k->is<integer_expr>()) && vlan_ether_type(*k)) continue;
            c.network_set_last = network_value(*k, mk != nullptr && mk->key == meta_key::nfproto);
            break;
          }
        }
      }
      if (const auto* mk = m->left->get<meta_expr>(); mk != nullptr && mk->key == meta_key::protocol && link_base &&
                                                      m->op != relational_op::neq && c.link_protocol_at == nullptr) {
        c.link_protocol = network_value(one_value(*m->right), false);
        if (c.link_protocol != nfproto::none) c.link_protocol_at = m->left;
        if (c.implied == nfproto::none) c.implied = c.link_protocol;
      }
      if (c.link_protocol_at == nullptr && c.ether != nfproto::none) {
        c.link_protocol = c.ether;
        c.link_protocol_at = m->left;
      }
      if (c.implied == nfproto::none) c.implied = c.ether;
      // `ct saddr 1.2.3.4` in an ip6 table (and an IPv6 address in an ip table): the address is read as
      // the table's family, or as the one an earlier `ether type` tells
      if (const auto* ck = m->left->get<ct_expr>();
          ck != nullptr && (ck->key == ct_key::saddr || ck->key == ct_key::daddr) && ck->protocol == nfproto::none &&
          (table_family == family::ip || table_family == family::ip6))
        if (const auto* a = first_address(*m->right);
            a != nullptr && (a->address().family == ip_family::ipv4) !=
                                (c.ether != nfproto::none ? c.ether == nfproto::ip : table_family == family::ip))
          throw rule_problem{m->right->where, error_code::invalid_address,
                             fmt::format("an {} address for a ct address {} (nft: \"Address family for hostname not "
                                         "supported\")",
                                         a->address().family == ip_family::ipv4 ? "IPv4" : "IPv6",
                                         c.ether != nfproto::none
                                             ? fmt::format("after `ether type {}`", c.ether == nfproto::ip ? "ip" : "ip6")
                                             : fmt::format("in a table of family {}", name(table_family)))};
      if (m->op != relational_op::neq && !c.l4) {
        const auto* mk = m->left->get<meta_expr>();
        const auto* pk = m->left->get<payload_expr>();
        const bool meta = mk != nullptr && mk->key == meta_key::l4proto;
        const bool field = pk != nullptr && pk->inner == tunnel::none &&
                           ((pk->protocol == header::ip && pk->field == header_field::protocol) ||
                            (pk->protocol == header::ip6 && pk->field == header_field::nexthdr));
        // nft's protocol context, as nft 1.0.6 sets it: a number it has no header for leaves it open after
        // `ip protocol` / `ip6 nexthdr`, but not after `meta l4proto` (`ip protocol 255 tcp dport 22` loads;
        // `meta l4proto 255 tcp dport 22` does not)
        const auto n = meta || field ? protocol_value(*m->right) : std::nullopt;
        const bool known = n && std::any_of(std::begin(transport_headers), std::end(transport_headers),
                                            [&](header h) { return transport_number(h) == *n; });
        if ((meta && n) || (field && known)) c.l4 = n;
        // a set of several protocols; one whose elements all name one protocol (`{ tcp, 6 }`) nft merges into
        // that protocol
        if (const auto* set = m->right->get<set_expr>(); (meta || field) && set != nullptr && c.l4_set_at == nullptr) {
          if (const auto one = single_protocol(*set)) {
            const bool known_one = std::any_of(std::begin(transport_headers), std::end(transport_headers),
                                               [&](header h) { return transport_number(h) == *one; });
            if (meta || known_one) c.l4 = one;
          } else if (set->elements.size() >= 2) {
            c.l4_set_at = m->right;
          }
        }
      }
      // `meta nfproto ipv4` or its number (NFPROTO_IPV4 is 2, NFPROTO_IPV6 10)
      if (const auto* key = m->left->get<meta_expr>();
          key != nullptr && key->key == meta_key::nfproto && m->op != relational_op::neq) {
        std::optional<std::uint64_t> v;
        const expr& value = one_value(*m->right);
        if (const auto* n = value.get<integer_expr>()) v = n->value;
        if (const auto* w = value.get<symbol_expr>()) v = types::symbol_value(w->name, datatype::nf_proto);
        if (v && c.nfproto_value == nfproto::none) {
          c.nfproto_value = *v == 2 ? nfproto::ip : *v == 10 ? nfproto::ip6 : nfproto::none;
          c.nfproto_value_at = m->left;
        }
      }
    } else if (const auto* vm = s.get<verdict_map_stmt>(); vm != nullptr && vm->key != nullptr) {
      scan_selectors(*vm->key, true, c);
    } else if (const auto* mg = s.get<mangle_stmt>()) {
      // nft adds the dependencies of the header it writes (`tcp dport set 1 udp dport 1` conflicts) and of
      // what the value reads: a header, a hash, a map's key (`meta mark set tcp dport map { 22 : 1 }`)
      check_settable(*mg->target);
      if (!neutral_for_family(*mg->target)) c.family_maybe_known = true;
      // the ct secmark comes from the packet's (`ct secmark set meta secmark`); a constant is a secmark object's job
      if (const auto* ck = mg->target->get<ct_expr>(); ck != nullptr && ck->key == ct_key::secmark &&
                                                       mg->value != nullptr &&
                                                       (mg->value->is<integer_expr>() || mg->value->is<symbol_expr>() ||
                                                        mg->value->is<string_expr>()))
        throw rule_problem{mg->value->where, error_code::invalid_value,
                           "ct secmark set to a constant: it takes the packet's (`ct secmark set meta secmark`) (nft: "
                           "\"ct secmark must not be set to constant value\")"};
      if (mg->value != nullptr) check_set_value(*mg->target, *mg->value);
      scan_selectors(*mg->target, true, c);
      if (mg->value != nullptr) scan_selectors(*mg->value, true, c);
    } else if (const auto* rj = s.get<reject_stmt>()) {
      check_reject(table_family, c, *rj, s);
    } else if (const auto* lg = s.get<log_stmt>()) {
      check_log(*lg, s);
    } else if (const auto* t = s.get<tproxy_stmt>()) {
      if (table_family != family::ip && table_family != family::ip6 && table_family != family::inet)
        throw rule_problem{s.where, error_code::invalid_value,
                           fmt::format("tproxy in a table of family {} (nft: \"tproxy is only supported for "
                                       "IPv4/IPv6/INET\")",
                                       name(table_family))};
      check_family(table_family, c, t->protocol, t->address, s, "tproxy");
      if (!c.transport)
        throw rule_problem{s.where, error_code::invalid_value,
                           "tproxy needs a transport protocol match earlier in the rule, such as `meta l4proto tcp` "
                           "(nft: \"Transparent proxy support requires transport protocol match\")"};
    } else if (const auto* q = s.get<queue_stmt>(); q != nullptr && q->number != nullptr) {
      scan_selectors(*q->number, true, c);  // what a hash or map key reads: `queue to jhash ip saddr mod 2`
      // queue numbers are 16 bits; a range goes up; fanout needs one
      const expr* hi = q->number;
      const auto* range = hi->get<range_expr>();
      if (range != nullptr) hi = range->high();
      if ((q->flags & static_cast<std::uint8_t>(queue_flag::fanout)) != 0 && range == nullptr)
        throw rule_problem{q->number->where, error_code::invalid_value,
                           "queue fanout needs a range of queue numbers (nft: \"fanout requires a range to be "
                           "specified\")"};
      if (range != nullptr)
        if (const auto* lo = range->low() != nullptr ? range->low()->get<integer_expr>() : nullptr,
                       *h = range->high() != nullptr ? range->high()->get<integer_expr>() : nullptr;
            lo != nullptr && h != nullptr && lo->value > h->value)
          throw rule_problem{q->number->where, error_code::invalid_value,
                             fmt::format("queue numbers {}-{} go down (nft: \"Range has zero or negative size\")",
                                         lo->value, h->value)};
      if (const auto* n = hi->get<integer_expr>(); n != nullptr && n->value > 65535)
        throw rule_problem{hi->where, error_code::number_out_of_range,
                           fmt::format("queue number {} is out of range (0 to 65535)", n->value)};
      // a queue number from numgen or a hash: offset + modulus - 1 at most
      std::uint64_t top = 0;
      if (const auto* g = q->number->get<numgen_expr>()) top = std::uint64_t{g->offset} + g->modulus;
      if (const auto* h = q->number->get<hash_expr>()) top = std::uint64_t{h->spec->offset} + h->spec->modulus;
      if (top > 65536)
        throw rule_problem{q->number->where, error_code::number_out_of_range,
                           fmt::format("the queue numbers this gives go up to {}, past 65535 (nft: \"queue expression "
                                       "max value exceeds 65535\")",
                                       top - 1)};
    } else if (const auto* n = s.get<nat_stmt>()) {
      // the kernel's NAT is for IPv4 and IPv6 only
      if (table_family != family::ip && table_family != family::ip6 && table_family != family::inet)
        throw rule_problem{s.where, error_code::invalid_value,
                           fmt::format("NAT in a table of family {} (nft: \"NAT is only supported for IPv4/IPv6\")",
                                       name(table_family))};
      // (the family comes from what the rule matched before, not from a map's key; a transport protocol
      // does: `redirect to :tcp dport map { ... }`)
      check_family(table_family, c, n->protocol, n->address, s, "NAT");
      // an address read from the packet is an address of the NAT's family (`dnat to tcp dport` is not)
      if (const nfproto f = table_family == family::ip    ? nfproto::ip
                            : table_family == family::ip6 ? nfproto::ip6
                                                          : n->protocol;
          f != nfproto::none && n->address != nullptr && n->mode != nat_mode::addr_port)
        check_selector_value(type_info{f == nfproto::ip ? datatype::ipv4_addr : datatype::ipv6_addr,
                                       static_cast<std::uint16_t>(f == nfproto::ip ? 32 : 128)},
                             *n->address);
      for (const expr* e : {n->address, n->port})
        if (e != nullptr) scan_selectors(*e, true, c);
      if ((n->port != nullptr || n->mode == nat_mode::addr_port || maps_to_address_and_port(n->address)) &&
          !c.transport)
        throw rule_problem{s.where, error_code::invalid_value,
                           "a NAT port needs a transport protocol match earlier in the rule, such as `tcp dport` "
                           "or `meta l4proto tcp` (nft: \"transport protocol mapping is only valid after "
                           "transport protocol match\")"};
    }
  }
  const auto conflict = [](const expr* at, std::string_view msg) {
    throw rule_problem{at->where, error_code::invalid_value, std::string(msg)};
  };
  // the table's family is the network protocol, unless an `ether type` match for the other came first
  // (`ether type`, or `vlan type`, which sets `ether` and the link protocol's place but no ether_type_at)
  const expr* const link_told_at = c.ether_type_at != nullptr ? c.ether_type_at : c.link_protocol_at;
  const auto switched_before = [&](const expr* at, nfproto to) {
    return (c.ether == to && link_told_at != nullptr && link_told_at->where.offset < at->where.offset) ||
           (c.network_set_last == to && c.network_set_at != nullptr && c.network_set_at->where.offset < at->where.offset);
  };
  if (table_family == family::ip && c.ip6_at && !switched_before(c.ip6_at, nfproto::ip6))
    conflict(c.ip6_at, "an ip6 header in a table of family ip (nft: \"conflicting protocols specified: ip vs. ip6\")");
  if (table_family == family::ip6 && c.ip_at && !switched_before(c.ip_at, nfproto::ip))
    conflict(c.ip_at, "an ip header in a table of family ip6 (nft: \"conflicting protocols specified: ip6 vs. ip\")");
  if (table_family == family::ip && c.ip6_exthdr_at && !switched_before(c.ip6_exthdr_at, nfproto::ip6))
    conflict(c.ip6_exthdr_at, "an IPv6 extension header in a table of family ip (nft: \"cannot use exthdr with ip\")");
  if (table_family == family::ip6 && c.ip_option_at && !switched_before(c.ip_option_at, nfproto::ip))
    conflict(c.ip_option_at, "an IPv4 option in a table of family ip6 (nft: \"cannot use exthdr with ip6\")");
  if (table_family == family::ip && c.ct_ip6_at)
    conflict(c.ct_ip6_at, "a ct ip6 address in a table of family ip (nft: \"conflicting protocols specified: ip vs. ip6\")");
  if (table_family == family::ip6 && c.ct_ip_at)
    conflict(c.ct_ip_at, "a ct ip address in a table of family ip6 (nft: \"conflicting protocols specified: ip6 vs. ip\")");
  // a ct address of the other family after an ip or ip6 header (before it, nft takes both)
  if (c.ip_at && c.ct_ip6_at && c.ip_at->where.offset < c.ct_ip6_at->where.offset)
    conflict(c.ct_ip6_at, "a ct ip6 address after an ip header (nft: \"conflicting protocols specified: ip vs. ip6\")");
  if (c.ip6_at && c.ct_ip_at && c.ip6_at->where.offset < c.ct_ip_at->where.offset)
    conflict(c.ct_ip_at, "a ct ip address after an ip6 header (nft: \"conflicting protocols specified: ip6 vs. ip\")");
  if (c.ip_at && c.ip6_at)
    conflict(c.ip_at->where.offset > c.ip6_at->where.offset ? c.ip_at : c.ip6_at,
             "ip and ip6 headers in one rule (nft: \"conflicting protocols specified\")");
  // a header after `ether type` (in the bridge and netdev families also `meta protocol`) of the other protocol
  {
    const auto after_link = [&](const expr* at) {
      return at != nullptr && c.link_protocol_at != nullptr && c.link_protocol_at->where.offset < at->where.offset;
    };
    if (c.link_protocol == nfproto::ip && after_link(c.ip6_at))
      conflict(c.ip6_at, "an ip6 header after a match on ip packets (nft: \"conflicting protocols specified: ip vs. "
                         "ip6\")");
    if (c.link_protocol == nfproto::ip6 && after_link(c.ip_at))
      conflict(c.ip_at, "an ip header after a match on ip6 packets (nft: \"conflicting protocols specified: ip6 vs. "
                        "ip\")");
  }
  // the other network protocol's header after an icmp, igmp or icmpv6 header that told it (inet, bridge,
  // netdev; before it, nft takes both: `ip saddr 1.2.3.4 icmpv6 type echo-request`)
  if (c.icmp_at != nullptr) {
    const auto after_icmp = [&](const expr* at) { return at != nullptr && at->where.offset > c.icmp_at->where.offset; };
    const bool v4 = c.icmp_family == nfproto::ip;
    const std::string_view told = v4 ? "ip" : "ip6", other = v4 ? "ip6" : "ip";
    const std::string_view header_name = name(c.icmp_at->get<payload_expr>()->protocol);
    if (const expr* at = v4 ? c.ip6_at : c.ip_at; after_icmp(at))
      conflict(at, fmt::format("an {} header after an {} header, which is {}'s (nft: \"conflicting protocols specified: "
                               "{} vs. {}\")",
                               other, header_name, told, told, other));
    if (const expr* at = v4 ? c.ct_ip6_at : c.ct_ip_at; after_icmp(at))
      conflict(at, fmt::format("a ct {} address after an {} header, which is {}'s (nft: \"conflicting protocols "
                               "specified: {} vs. {}\")",
                               other, header_name, told, told, other));
    if (const expr* at = v4 ? c.ip6_exthdr_at : c.ip_option_at; after_icmp(at))
      conflict(at, fmt::format("an {} after an {} header, which is {}'s (nft: \"cannot use exthdr with {}\")",
                               v4 ? "IPv6 extension header" : "IPv4 option", header_name, told, told));
  }
  // an IPv4 option and an IPv6 extension header (or the other family's header) in one rule: the later one
  // is refused, in the words nft has for it
  const auto first = [](const expr* a, const expr* b) {
    return a == nullptr ? b : b == nullptr ? a : a->where.offset < b->where.offset ? a : b;
  };
  if (const expr *v4 = first(c.ip_at, c.ip_option_at), *v6 = first(c.ip6_at, c.ip6_exthdr_at);
      v4 != nullptr && v6 != nullptr && (c.ip_option_at != nullptr || c.ip6_exthdr_at != nullptr)) {
    const bool v6_later = v6->where.offset > v4->where.offset;
    const expr* later = v6_later ? v6 : v4;
    const bool extension = later == c.ip_option_at || later == c.ip6_exthdr_at;
    conflict(later, extension ? fmt::format("an {} after an {} match (nft: \"cannot use exthdr with {}\")",
                                            v6_later ? "IPv6 extension header" : "IPv4 option",
                                            v6_later ? "IPv4" : "IPv6", v6_later ? "ip" : "ip6")
                              : fmt::format("an {} header after an {} match (nft: \"conflicting protocols specified: {} "
                                            "vs. {}\")",
                                            v6_later ? "ip6" : "ip", v6_later ? "IPv4 option" : "IPv6 extension header",
                                            v6_later ? "ip" : "ip6", v6_later ? "ip6" : "ip"));
  }
  // an ip or ip6 header after a match on a set of network protocols whose last is the other
  const auto after_set = [&](const expr* at) {
    return at != nullptr && c.network_set_at != nullptr && at->where.offset > c.network_set_at->where.offset;
  };
  if (after_set(c.ip_at) && c.network_set_last != nfproto::ip)
    conflict(c.ip_at, "an ip header after a match on a set of network protocols whose last is not ip (nft keeps the "
                      "last: \"conflicting protocols specified\")");
  if (after_set(c.ip6_at) && c.network_set_last != nfproto::ip6)
    conflict(c.ip6_at, "an ip6 header after a match on a set of network protocols whose last is not ip6 (nft keeps "
                       "the last: \"conflicting protocols specified\")");
  // `meta nfproto ipv6` and then an ip header (the other way round nft takes it)
  const auto after_nfproto = [&](const expr* at) {
    return at != nullptr && c.nfproto_value_at != nullptr && at->where.offset > c.nfproto_value_at->where.offset;
  };
  if (c.nfproto_value == nfproto::ip6 && after_nfproto(c.ip_at))
    conflict(c.ip_at, "an ip header after meta nfproto ipv6 (nft: \"conflicting protocols specified: ip6 vs. ip\")");
  if (c.nfproto_value == nfproto::ip && after_nfproto(c.ip6_at))
    conflict(c.ip6_at, "an ip6 header after meta nfproto ipv4 (nft: \"conflicting protocols specified: ip vs. ip6\")");
  if (c.nfproto_value == nfproto::ip6 && after_nfproto(c.ct_ip_at))
    conflict(c.ct_ip_at,
             "a ct ip address after meta nfproto ipv6 (nft: \"conflicting protocols specified: ip6 vs. ip\")");
  if (c.nfproto_value == nfproto::ip && after_nfproto(c.ct_ip6_at))
    conflict(c.ct_ip6_at,
             "a ct ip6 address after meta nfproto ipv4 (nft: \"conflicting protocols specified: ip vs. ip6\")");
  if (table_family != family::inet && c.nfproto_at)
    conflict(c.nfproto_at, "meta nfproto outside an inet table (nft: \"meta nfproto is only useful in the inet family\")");
}


// The types a set's `type` or `typeof` declares for its key or data, one per concatenated part; none for
// an object map's data or a declaration with more parts than nft takes.
struct declared_parts {
  std::array<type_info, 16> part{};
  std::size_t count = 0;
};
declared_parts declared_parts_of(const set_type& t) noexcept {
  declared_parts d;
  if (t.object) return d;
  const auto add = [&](type_info ti) {
    if (d.count == d.part.size()) return false;
    d.part[d.count++] = ti;
    return true;
  };
  if (t.typeof_expr != nullptr) {
    if (const auto* c = t.typeof_expr->get<concat_expr>()) {
      for (const auto& item : c->items)
        if (!add(type_of(item))) return {};
    } else {
      add(type_of(*t.typeof_expr));
    }
    return d;
  }
  for (const auto n : t.names) {
    const auto dt = parse_datatype(n);
    if (!add(dt ? type_info{*dt, width(*dt)} : type_info{})) return {};
  }
  return d;
}
std::string describe(const declared_parts& d) {
  std::string out;
  for (std::size_t i = 0; i < d.count; ++i) {
    if (i > 0) out += " . ";
    out += d.part[i].type == datatype::invalid ? std::string_view("?") : name(d.part[i].type);
  }
  return out;
}
// `"eth*"`: an interface name that ends in an unescaped wildcard matches every name it starts. Gives
// that start (`eth`), quoted or not (`eth*` unquoted is a symbol); nothing for any other expression.
std::optional<std::string_view> wildcard_stem(const expr& e) noexcept {
  std::string_view t;
  if (const auto* s = e.get<string_expr>()) t = s->text;
  else if (const auto* w = e.get<symbol_expr>()) t = w->name;
  if (t.size() < 2 || t.back() != '*' || t[t.size() - 2] == '\\') return std::nullopt;
  return t.substr(0, t.size() - 1);
}
bool wildcard_name(const expr& e) noexcept { return wildcard_stem(e).has_value(); }
// A range, a prefix or a wildcard name: what makes an element an interval one.
bool interval_like(const expr& e) noexcept {
  return e.is<range_expr>() || e.is<prefix_expr>() || wildcard_name(e);
}
// An element's timeout and expiry, as the kernel takes them (nft_set_elem_init): a timeout only in a set
// with timeouts (`flags timeout`, or a `timeout` of its own: "Invalid argument"); an expiry only with a
// timeout, the element's or the set's ("Operation not supported"), and not past it ("Numerical result out of
// range").
void check_element_times(const set_info& set, const element& el) {
  const element_options& o = *el.options;
  const bool timeouts = (set.flags & static_cast<std::uint8_t>(set_flag::timeout)) != 0 ||
                        (set.has_timeout && set.timeout_ms != 0);
  if (o.has_timeout && o.timeout_ms != 0 && !timeouts)
    throw rule_problem{el.where, error_code::invalid_value,
                       fmt::format("an element timeout in {}, which has no timeouts (`flags timeout` or a `timeout` "
                                   "of its own; the kernel says \"Invalid argument\")",
                                   set.name)};
  if (!o.has_expires || o.expires_ms == 0) return;
  const std::uint64_t timeout = o.has_timeout && o.timeout_ms != 0 ? o.timeout_ms : set.has_timeout ? set.timeout_ms : 0;
  if (timeout == 0)
    throw rule_problem{el.where, error_code::invalid_value,
                       "an element expiry without a timeout, the element's or the set's (the kernel says \"Operation "
                       "not supported\")"};
  if (o.expires_ms > timeout)
    throw rule_problem{el.where, error_code::number_out_of_range,
                       fmt::format("an element that expires in {} ms, past its timeout of {} ms (the kernel says "
                                   "\"Numerical result out of range\")",
                                   o.expires_ms, timeout)};
}
// An interval set's element as the closed interval of keys it covers, each key 16 bytes compared as a
// big-endian number: numbers and addresses right-aligned, interface names (`names`: a key of type ifname or
// string) left-aligned with a wildcard (`"eth*"`) covering every name it starts; other strings (an hour, a
// date) are values nft computes and are not compared. Nothing for a key whose value is not known offline
// (a service name, a symbol) or of no single part.
using key_bytes = std::array<std::uint8_t, 16>;
struct key_interval {
  key_bytes low{};
  key_bytes high{};
  const element* el = nullptr;
};
std::optional<key_bytes> point(const expr& e, bool names) noexcept {
  key_bytes k{};
  if (const auto* n = e.get<integer_expr>()) {
    for (std::size_t i = 0; i < 8; ++i) k[15 - i] = static_cast<std::uint8_t>(n->value >> (8 * i));
  } else if (const auto* a = e.get<address_expr>()) {
    const ip_address ip = a->address();
    const std::size_t width = ip.family == ip_family::ipv4 ? 4 : 16;
    std::copy_n(ip.bytes.begin(), width, k.end() - static_cast<std::ptrdiff_t>(width));
  } else if (const auto* m = e.get<ether_address_expr>()) {
    std::copy(m->bytes.begin(), m->bytes.end(), k.end() - 6);
  } else if (const auto* s = e.get<string_expr>(); s != nullptr && names && !wildcard_name(e)) {
    const std::string_view t = s->text;
    if (t.size() > k.size() || t.find('\\') != std::string_view::npos) return std::nullopt;
    std::copy(t.begin(), t.end(), k.begin());
  } else {
    return std::nullopt;
  }
  return k;
}
std::optional<key_interval> interval_of(const expr& e, bool names) noexcept {
  if (const auto* r = e.get<range_expr>()) {
    const auto lo = point(*r->low(), names);
    const auto hi = point(*r->high(), names);
    if (!lo || !hi) return std::nullopt;
    return key_interval{*lo, *hi};
  }
  if (const auto* p = e.get<prefix_expr>()) {
    const auto* a = p->value != nullptr ? p->value->get<address_expr>() : nullptr;
    if (a == nullptr) return std::nullopt;
    const std::size_t width = a->address().family == ip_family::ipv4 ? 4 : 16;
    if (p->length > width * 8) return std::nullopt;
    auto lo = *point(*p->value, names);
    auto hi = lo;
    for (std::size_t bit = p->length; bit < width * 8; ++bit) {
      const std::size_t byte = 16 - width + bit / 8;
      const auto mask = static_cast<std::uint8_t>(0x80u >> (bit % 8));
      lo[byte] = static_cast<std::uint8_t>(lo[byte] & ~mask);
      hi[byte] = static_cast<std::uint8_t>(hi[byte] | mask);
    }
    return key_interval{lo, hi};
  }
  if (const auto stem = names ? wildcard_stem(e) : std::nullopt) {
    if (stem->size() > 16 || stem->find('\\') != std::string_view::npos) return std::nullopt;
    key_interval i;
    std::copy(stem->begin(), stem->end(), i.low.begin());
    i.high = i.low;
    std::fill(i.high.begin() + static_cast<std::ptrdiff_t>(stem->size()), i.high.end(), std::uint8_t{0xff});
    return i;
  }
  const auto k = point(e, names);
  if (!k) return std::nullopt;
  return key_interval{*k, *k};
}
// nft's interval check of a set's elements (segtree.c, without `auto-merge`): two different elements
// that share a key conflict ("conflicting intervals specified"); the same element twice is one. Reported
// at the element that starts later, as nft does. Concatenations are the kernel's to judge, not checked here.
void check_overlaps(std::string_view what, type_info key, std::span<const element> elements, std::string_view note) {
  const bool names = key.type == datatype::ifname || key.type == datatype::string;
  std::vector<key_interval> all;
  all.reserve(elements.size());
  for (const auto& el : elements) {
    if (el.key == nullptr) continue;
    if (auto i = interval_of(*el.key, names)) {
      i->el = &el;
      all.push_back(*i);
    }
  }
  std::sort(all.begin(), all.end(), [](const key_interval& a, const key_interval& b) {
    return a.low != b.low ? a.low < b.low : a.high < b.high;
  });
  for (std::size_t i = 1; i < all.size(); ++i) {
    const key_interval& prev = all[i - 1];
    const key_interval& cur = all[i];
    if (cur.low == prev.low && cur.high == prev.high) continue;
    if (cur.low <= prev.high)
      throw rule_problem{cur.el->key->where, error_code::invalid_value,
                         fmt::format("this element shares keys with another of {} (nft: \"conflicting intervals "
                                     "specified\"{})",
                                     what, note)};
  }
}
// One part of an element against its declared type. nft holds a day to 0 (Sunday) to 6 in a rule, but an
// element of a named set only to its byte (`typeof meta day; elements = { 7 }` loads; 256 does not).
void check_part(type_info want, const expr& e, std::string_view text) {
  if (want.type == datatype::invalid) return;
  if (want.type == datatype::day && (e.is<integer_expr>() || e.is<range_expr>())) want = {datatype::integer, 8};
  check_constant(want, e, text);
}
// An element's key or data against the declared parts: a concatenation of as many parts, each a value of
// its type (check_constant), or one value of a one-part type.
void check_declared(const declared_parts& d, const expr& e, std::string_view text) {
  if (d.count == 0 || e.is<wildcard_expr>()) return;
  if (d.count == 1) {
    check_part(d.part[0], e, text);
    return;
  }
  const auto* c = e.get<concat_expr>();
  if (c == nullptr)
    throw rule_problem{e.where, error_code::invalid_value,
                       fmt::format("one value where a concatenation of {} is expected (nft: \"invalid data type, "
                                   "expected concatenation of ...\")",
                                   describe(d))};
  if (c->items.size() != d.count)
    throw rule_problem{e.where, error_code::invalid_value,
                       fmt::format("{} values where a concatenation of {} ({}) is expected (nft: \"too {} "
                                   "concatenation components\")",
                                   c->items.size(), d.count, describe(d), c->items.size() > d.count ? "many" : "few")};
  for (std::size_t i = 0; i < d.count; ++i) check_part(d.part[i], c->items[i], text);
}

}  // namespace

const expr* interval_part(const expr& e) noexcept {
  if (interval_like(e)) return &e;
  if (const auto* c = e.get<concat_expr>())
    for (const auto& item : c->items)
      if (interval_like(item)) return &item;
  return nullptr;
}

std::optional<rule_problem> check_set_declaration(const set_info& set, std::string_view text) {
  const auto at = [&](std::string_view part) {
    const bool inside = !text.empty() && part.data() >= text.data() && part.data() + part.size() <= text.data() + text.size();
    return inside ? span{static_cast<std::uint32_t>(part.data() - text.data()), static_cast<std::uint32_t>(part.size())}
                  : set.where;
  };
  const std::string_view what = set.is_map ? "map" : "set";
  // (nft also refuses a type without a size of its own, `type integer` ("unqualified type"), and the names
  // of types that are no base type, `ct_label`, `ct_event`. nflens takes them: nft 1.0.6's JSON writes a
  // `typeof` declaration so, and text converted from that JSON must read back)
  const auto check_names = [&](const set_type& t) -> std::optional<rule_problem> {
    for (const std::string_view n : t.names)
      if (!parse_datatype(n))
        return rule_problem{at(n), error_code::invalid_value, fmt::format("`{}` is no datatype (nft: \"unknown datatype {}\")", n, n)};
    return std::nullopt;
  };
  if (auto p = check_names(set.key)) return p;
  if (set.is_map)
    if (auto p = check_names(set.data)) return p;
  if (set.auto_merge && (set.flags & static_cast<std::uint8_t>(set_flag::interval)) == 0)
    return rule_problem{at(set.name), error_code::invalid_value,
                        fmt::format("auto-merge in {} {}, which has no `flags interval` (nft: \"auto-merge only works "
                                    "with interval sets\")",
                                    what, set.name)};
  return std::nullopt;
}

std::optional<rule_problem> check_elements(const set_info& set, std::span<const element> elements,
                                           std::string_view text) {
  if (elements.empty()) return std::nullopt;
  try {
    const declared_parts key = declared_parts_of(set.key);
    const declared_parts data = set.is_map ? declared_parts_of(set.data) : declared_parts{};
    const bool interval = (set.flags & static_cast<std::uint8_t>(set_flag::interval)) != 0;
    const bool verdict_data = set.is_map && data.count == 1 && data.part[0].type == datatype::verdict;
    const std::string_view what = set.is_map ? "map" : "set";
    for (const auto& el : elements) {
      if (el.key == nullptr) continue;
      if (!set.is_map && el.data != nullptr)
        throw rule_problem{el.data->where, error_code::invalid_value,
                           fmt::format("an element with data (`key : value`) in set {}, which is no map (nft: \"set "
                                       "is not a map\")",
                                       set.name)};
      if (set.is_map && el.data == nullptr)
        throw rule_problem{el.key->where, error_code::invalid_value,
                           fmt::format("an element of map {} without its data (`key : value`; the kernel refuses it: "
                                       "\"Invalid argument\")",
                                       set.name)};
      if (const expr* r = interval_part(*el.key); r != nullptr && !interval)
        throw rule_problem{r->where, error_code::invalid_value,
                           fmt::format("a {} element in {} {}, which has no `flags interval` (nft: \"You must add "
                                       "'flags interval' to your set declaration if you want to add {} elements\")",
                                       r->is<range_expr>() ? "range" : "prefix", what, set.name,
                                       r->is<range_expr>() ? "range" : "prefix")};
      if (el.options != nullptr) check_element_times(set, el);
      check_declared(key, *el.key, text);
      if (el.data == nullptr) continue;
      if (verdict_data) {
        if (!el.data->is<verdict_expr>())
          throw rule_problem{el.data->where, error_code::invalid_value,
                             fmt::format("map {} maps to verdicts: this is none (accept, drop, continue, return, "
                                         "jump CHAIN, goto CHAIN; nft: \"Can't parse symbolic netfilter verdict "
                                         "expressions\")",
                                         set.name)};
        continue;
      }
      if (!set.data.interval)
        if (const expr* r = interval_part(*el.data))
          throw rule_problem{r->where, error_code::invalid_value,
                             fmt::format("a {} as the data of map {}, whose data type is not `interval ...` (nft: "
                                         "\"Value must be a singleton\")",
                                         r->is<range_expr>() ? "range" : wildcard_name(*r) ? "wildcard name" : "prefix",
                                         set.name)};
      check_declared(data, *el.data, text);
    }
    if (interval && !set.auto_merge && key.count <= 1)
      check_overlaps(fmt::format("{} {}", what, set.name), key.part[0], elements, "; `auto-merge` joins them");
  } catch (rule_problem& p) {
    return std::move(p);
  }
  return std::nullopt;
}

void check_constant(const expr& left, const expr& right, std::string_view text) {
  check_constant_pair(left, right, text);
}

std::optional<rule_problem> check_constants(std::span<const stmt> stmts) {
  try {
    for (const auto& s : stmts) {
      if (const auto* m = s.get<match_stmt>()) check_constant_pair(*m->left, *m->right, {});
      else if (const auto* g = s.get<mangle_stmt>()) check_constant_pair(*g->target, *g->value, {});
    }
  } catch (rule_problem& p) {
    return std::move(p);
  }
  return std::nullopt;
}

std::optional<std::string_view> unsettable(const expr& target) noexcept {
  if (const auto* p = target.get<payload_expr>()) {
    if (p->inner != tunnel::none) return "a header of a tunnelled packet";
    switch (p->protocol) {
      case header::hbh: case header::rt: case header::rt0: case header::rt2: case header::srh: case header::frag:
      case header::dst: case header::mh: case header::exthdr:
        return "an IPv6 extension header";
      default:
        return std::nullopt;
    }
  }
  if (const auto* c = target.get<ct_expr>())
    return c->direction == ct_direction::none || c->key == ct_key::zone || c->key == ct_key::bytes ||
                   c->key == ct_key::packets || c->key == ct_key::avgpkt
               ? std::nullopt
               : std::optional<std::string_view>("a ct key of one direction other than zone, bytes, packets and avgpkt");
  if (target.is<meta_expr>()) return std::nullopt;
  return target.is<rt_expr>()       ? "a routing expression"
         : target.is<fib_expr>()    ? "a fib lookup"
         : target.is<socket_expr>() ? "a socket expression"
         : target.is<osf_expr>()    ? "an osf expression"
         : target.is<ipsec_expr>()  ? "an ipsec expression"
         : target.is<numgen_expr>() ? "a number generator"
         : target.is<hash_expr>()   ? "a hash"
         : target.is<tunnel_expr>() ? "a tunnel expression"
                                    : "this expression";
}

std::optional<rule_problem> check_rule(family table_family, std::span<const stmt> stmts) {
  try {
    check_all(table_family, stmts);
  } catch (rule_problem& p) {
    return std::move(p);
  }
  return std::nullopt;
}

}  // namespace nflens::nft
