// SPDX-License-Identifier: MIT
// nft's evaluation checks on a rule as a whole, shared by the text parser and the JSON reader (nft runs
// the same evaluation on `nft -f` text and on `nft -j -f` JSON input). See rule_check.hpp.
#include "nft/rule_check.hpp"

#include <nflens/net.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace nflens::nft {

namespace {

// The checks throw the first rule_problem they find; `check_rule` returns it.

// The state of the checks along one rule's statements.
struct rule_context {
  bool several_families = false;  // the table's family holds packets of ip and ip6 (inet, bridge, netdev)
  // an earlier match may tell the network protocol (icmp, ether type, ct l3proto, ip options, ip6
  // extension headers, ...): the ct address check then stays silent rather than refuse what nft takes
  bool family_maybe_known = false;
  bool transport = false;
  std::uint8_t l4 = 0;  // the transport protocol the rule is for so far (IANA number), 0 when none
  const expr* l4_at = nullptr;
  nfproto nfproto_value = nfproto::none;  // `meta nfproto ipv4` (or ipv6): the rule is for one family
  bool ip = false, ip6 = false;
  const expr* ip_at = nullptr;
  const expr* ip6_at = nullptr;
  const expr* nfproto_at = nullptr;
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
/// The protocol a `meta l4proto` / `ip protocol` / `ip6 nexthdr` value names, or 0 when it is not one
/// constant (a set, a range, `$var` left unresolved).
std::uint8_t protocol_value(const expr& e) {
  if (const auto* i = e.get<integer_expr>()) return i->value <= 255 ? static_cast<std::uint8_t>(i->value) : 0;
  const auto* sy = e.get<symbol_expr>();
  if (sy == nullptr) return 0;
  for (const header h : transport_headers)  // also igmp and comp, which l4_protocol has no name for
    if (name(h) == sy->name) return transport_number(h);
  if (const auto p = parse_protocol(sy->name))
    if (const auto n = protocol_number(*p)) return *n;
  return 0;
}
void scan_selectors(const expr& e, bool equal, rule_context& c) {
  if (const auto* p = e.get<payload_expr>()) {
    if (p->inner != tunnel::none) return;  // a tunnelled packet's headers, not this packet's
    if (const std::uint8_t n = transport_number(p->protocol)) {
      if (c.l4 != 0 && c.l4 != n)
        throw rule_problem{e.where, error_code::invalid_value,
                           fmt::format("a header of {} after a match on {} (nft: \"conflicting protocols "
                                       "specified: {} vs. {}\")",
                                       name(p->protocol), transport_name(c.l4), transport_name(c.l4), name(p->protocol))};
      if (c.l4 == 0) c.l4 = n;
    }
    switch (p->protocol) {
      case header::icmp: case header::igmp: case header::icmpv6: case header::udp: case header::udplite:
      case header::tcp: case header::dccp: case header::sctp: case header::tcp_option: case header::sctp_chunk:
      case header::dccp_option:
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
      default:
        break;
    }
  } else if (const auto* ct = e.get<ct_expr>()) {
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
  } else if (const auto* m = e.get<meta_expr>()) {
    c.transport = c.transport || (equal && m->key == meta_key::l4proto);
    if (m->key == meta_key::nfproto && !c.nfproto_at) c.nfproto_at = &e;

  } else if (const auto* b = e.get<binop_expr>()) {
    scan_selectors(*b->left, equal, c);
  } else if (const auto* cc = e.get<concat_expr>()) {
    for (const auto& item : cc->items) scan_selectors(item, equal, c);
  } else if (const auto* mp = e.get<map_expr>()) {
    scan_selectors(*mp->key, equal, c);
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
  if (written != nfproto::none) {
    if (fam != nfproto::none && fam != written)
      fail(nullptr, s, fmt::format("{} {} in a table of family {} (nft: \"conflicting protocols specified\")", what,
                                   written == nfproto::ip ? "ip" : "ip6", name(table_family)));
    fam = written;
  }
  if (fam == nfproto::none && table_family == family::inet) {
    if (c.ip_at != nullptr) fam = nfproto::ip;
    if (c.ip6_at != nullptr) fam = nfproto::ip6;
    if (c.nfproto_value != nfproto::none) fam = c.nfproto_value;
  }
  if (address == nullptr) return;
  if (fam == nfproto::none && table_family == family::inet)
    fail(nullptr, s, fmt::format("an address of a {} statement in an inet table needs `ip` or `ip6` after the "
                                 "statement's name, or a match on ip or ip6 before it (nft: \"ip or ip6 must be "
                                 "specified with address for inet tables\")",
                                 what));
  const auto* a = address->get<address_expr>();
  if (const auto* r = address->get<range_expr>()) a = r->low->get<address_expr>();
  if (const auto* p = address->get<prefix_expr>()) a = p->value->get<address_expr>();
  if (a != nullptr) {
    const nfproto af = a->address.family == ip_family::ipv4 ? nfproto::ip : nfproto::ip6;
    if (fam != nfproto::none && af != fam)
      fail(address, s, fmt::format("an {} address where the {} statement works on {} (nft: \"Address family for "
                                   "hostname not supported\")",
                                   af == nfproto::ip ? "IPv4" : "IPv6", what, fam == nfproto::ip ? "ip" : "ip6"));
  }
}

/// `ip daddr map { 1.2.3.4 : 10.0.0.1 . 80 }`: an anonymous map whose data are address . port, which
/// nft takes as a mapping to address and port (STMT_NAT_F_CONCAT) whether or not the statement says so.
bool maps_to_address_and_port(const expr* address) noexcept {
  const auto* mp = address != nullptr ? address->get<map_expr>() : nullptr;
  const auto* set = mp != nullptr && mp->mapping != nullptr ? mp->mapping->get<set_expr>() : nullptr;
  if (set == nullptr) return false;
  return std::any_of(set->elements.begin(), set->elements.end(),
                     [](const element& el) { return el.data != nullptr && el.data->is<concat_expr>(); });
}

/// A selector that cannot tell nft ip from ip6: transport headers, meta keys other than nfproto (even
/// `meta protocol ip`, checked against nft 1.0.6), ct keys other than l3proto and the addresses.
bool neutral_for_family(const expr& e) noexcept {
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
  if (const auto* b = e.get<binop_expr>()) return b->left != nullptr && neutral_for_family(*b->left);
  return false;
}

bool is_terminal(const stmt& s) noexcept {
  if (const auto* v = s.get<verdict_stmt>()) return v->kind != verdict::continue_;
  return s.is<reject_stmt>() || s.is<nat_stmt>() || s.is<queue_stmt>();
}
void check_all(family table_family, std::span<const stmt> stmts) {
  rule_context c;
  c.several_families = table_family == family::inet || table_family == family::bridge || table_family == family::netdev;
  for (std::size_t i = 0; i < stmts.size(); ++i) {
    const stmt& s = stmts[i];
    if (i > 0 && is_terminal(stmts[i - 1]))
      throw rule_problem{s.where, error_code::invalid_value,
                         "a statement after a terminal statement has no effect (nft: \"Statement after terminal "
                         "statement has no effect\")"};
    if (const auto* m = s.get<match_stmt>()) {
      scan_selectors(*m->left, m->op != relational_op::neq, c);
      if (!neutral_for_family(*m->left)) c.family_maybe_known = true;
      // in an ip or ip6 table nft takes `ct [original|reply] protocol P` as the transport protocol
      if (const auto* ck = m->left->get<ct_expr>(); ck != nullptr && ck->key == ct_key::protocol &&
                                                    (table_family == family::ip || table_family == family::ip6) &&
                                                    m->op != relational_op::neq) {
        c.transport = true;
        if (c.l4 == 0) c.l4 = protocol_value(*m->right);
      }
      if (m->op != relational_op::neq && c.l4 == 0) {
        const auto* mk = m->left->get<meta_expr>();
        const auto* pk = m->left->get<payload_expr>();
        if ((mk != nullptr && mk->key == meta_key::l4proto) ||
            (pk != nullptr && pk->inner == tunnel::none &&
             ((pk->protocol == header::ip && pk->field == header_field::protocol) ||
              (pk->protocol == header::ip6 && pk->field == header_field::nexthdr))))
          c.l4 = protocol_value(*m->right);
      }
      const auto* key = m->left->get<meta_expr>();
      const auto* value = m->right->get<symbol_expr>();
      if (key != nullptr && key->key == meta_key::nfproto && value != nullptr && m->op != relational_op::neq)
        c.nfproto_value = value->name == "ipv4" ? nfproto::ip : value->name == "ipv6" ? nfproto::ip6 : c.nfproto_value;
    } else if (const auto* t = s.get<tproxy_stmt>()) {
      check_family(table_family, c, t->protocol, t->address, s, "tproxy");
      if (!c.transport)
        throw rule_problem{s.where, error_code::invalid_value,
                           "tproxy needs a transport protocol match earlier in the rule, such as `meta l4proto tcp` "
                           "(nft: \"Transparent proxy support requires transport protocol match\")"};
    } else if (const auto* q = s.get<queue_stmt>(); q != nullptr && q->number != nullptr) {
      // queue numbers are 16 bits
      const expr* hi = q->number;
      if (const auto* r = hi->get<range_expr>()) hi = r->high;
      if (const auto* n = hi->get<integer_expr>(); n != nullptr && n->value > 65535)
        throw rule_problem{hi->where, error_code::number_out_of_range,
                           fmt::format("queue number {} is out of range (0 to 65535)", n->value)};
    } else if (const auto* n = s.get<nat_stmt>()) {
      // (the family comes from what the rule matched before, not from a map's key; a transport protocol
      // does: `redirect to :tcp dport map { ... }`)
      check_family(table_family, c, n->protocol, n->address, s, "NAT");
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
  if (table_family == family::ip && c.ip6_at)
    conflict(c.ip6_at, "an ip6 header in a table of family ip (nft: \"conflicting protocols specified: ip vs. ip6\")");
  if (table_family == family::ip6 && c.ip_at)
    conflict(c.ip_at, "an ip header in a table of family ip6 (nft: \"conflicting protocols specified: ip6 vs. ip\")");
  if (c.ip_at && c.ip6_at)
    conflict(c.ip_at->where.offset > c.ip6_at->where.offset ? c.ip_at : c.ip6_at,
             "ip and ip6 headers in one rule (nft: \"conflicting protocols specified\")");
  if (table_family != family::inet && c.nfproto_at)
    conflict(c.nfproto_at, "meta nfproto outside an inet table (nft: \"meta nfproto is only useful in the inet family\")");
}


}  // namespace

std::optional<rule_problem> check_rule(family table_family, std::span<const stmt> stmts) {
  try {
    check_all(table_family, stmts);
  } catch (rule_problem& p) {
    return std::move(p);
  }
  return std::nullopt;
}

}  // namespace nflens::nft
