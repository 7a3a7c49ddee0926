// SPDX-License-Identifier: MIT
// The canonical printer: what iptables-save 1.8.9 (nf_tables backend) prints. Each typed module
// prints in its own save form (the libxt_*_save functions of iptables 1.8.9: option order, defaults,
// number formats), from the decoded values; generic modules print their options as written.
#include <nflens/iptables.hpp>
#include <nflens/iptables_modules.hpp>

#include "modules.hpp"
#include "print.hpp"
#include "values.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>

namespace nflens::iptables {

namespace {

using out_t = std::string;

template <typename... Args>
void putf(out_t& out, fmt::format_string<Args...> f, Args&&... args) {
  fmt::format_to(std::back_inserter(out), f, std::forward<Args>(args)...);
}

// xtables_save_string: a space, then the word bare when it is only [A-Za-z0-9_-], else double-quoted
// with `"`, `\` and `'` escaped.
void save_string(out_t& out, std::string_view s) {
  out += ' ';
  const bool bare = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
  if (bare) {
    out.append(s);
    return;
  }
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\' || c == '\'') out += '\\';
    out += c;
  }
  out += '"';
}

// An interface name as iptables-save writes it (bare), except one that would not read back as one word:
// iptables takes `-i "a b"` (warning that the kernel has no such name) and saves it unquoted.
void interface_name(out_t& out, std::string_view s) {
  if (s.find_first_of(" \t\"'\\") != std::string_view::npos) return save_string(out, s);
  out += ' ';
  out.append(s);
}

void negation(out_t& out, bool negated) {
  if (negated) out += " !";
}

void address(out_t& out, const ip_address& a) { out += to_string(a); }

// address/length, or address/mask when the mask has holes (save_ipv4_addr, save_ipv6_addr).
void address_and_mask(out_t& out, const address_mask& m) {
  address(out, m.address);
  if (const auto len = prefix_length(m))
    putf(out, "/{}", *len);
  else {
    out += '/';
    address(out, m.mask);
  }
}

// -s/-d: nothing for a bare 0/0, which iptables-save leaves out.
void base_address(out_t& out, char letter, const address_match& m) {
  const auto len = prefix_length(m.value);
  if (len && *len == 0 && !m.negated) return;
  negation(out, m.negated);
  putf(out, " -{} ", letter);
  address_and_mask(out, m.value);
}

// A parsed (unapplied) `-s a,b`: one option with the addresses comma-joined, as written, since
// iptables-restore refuses the option twice. Every address prints, `/0` too: each is a rule to come.
void base_address_list(out_t& out, char letter, std::span<const address_match> list) {
  if (list.size() == 1) {
    base_address(out, letter, list.front());
    return;
  }
  if (list.empty()) return;
  negation(out, list.front().negated);
  putf(out, " -{} ", letter);
  bool first = true;
  for (const auto& m : list) {
    if (!first) out += ',';
    first = false;
    address_and_mask(out, m.value);
  }
}

void port_range_text(out_t& out, port_range r) {
  if (r.first == r.last)
    putf(out, "{}", r.first);
  else
    putf(out, "{}:{}", r.first, r.last);
}

struct named_bit {
  std::string_view name;
  std::uint16_t bit;
};
void bits(out_t& out, std::uint64_t value, std::span<const named_bit> names, std::string_view none = {}) {
  bool first = true;
  for (const auto& n : names) {
    if (n.bit != 0 && (value & n.bit) != 0) {
      out += first ? "" : ",";
      out.append(n.name);
      first = false;
    }
  }
  if (first) out.append(none);
}

constexpr std::array<named_bit, 7> ct_state_names{{{"INVALID", ct_invalid},
                                                   {"NEW", ct_new},
                                                   {"RELATED", ct_related},
                                                   {"ESTABLISHED", ct_established},
                                                   {"UNTRACKED", ct_untracked},
                                                   {"SNAT", ct_snat},
                                                   {"DNAT", ct_dnat}}};
constexpr std::array<named_bit, 4> ct_status_names{
    {{"EXPECTED", ct_expected}, {"SEEN_REPLY", ct_seen_reply}, {"ASSURED", ct_assured}, {"CONFIRMED", ct_confirmed}}};
constexpr std::array<named_bit, 12> address_type_names{{{"UNSPEC", addr_unspec},
                                                        {"UNICAST", addr_unicast},
                                                        {"LOCAL", addr_local},
                                                        {"BROADCAST", addr_broadcast},
                                                        {"ANYCAST", addr_anycast},
                                                        {"MULTICAST", addr_multicast},
                                                        {"BLACKHOLE", addr_blackhole},
                                                        {"UNREACHABLE", addr_unreachable},
                                                        {"PROHIBIT", addr_prohibit},
                                                        {"THROW", addr_throw},
                                                        {"NAT", addr_nat},
                                                        {"XRESOLVE", addr_xresolve}}};
constexpr std::array<named_bit, 6> tcp_flag_names{
    {{"FIN", tcp_fin}, {"SYN", tcp_syn}, {"RST", tcp_rst}, {"PSH", tcp_psh}, {"ACK", tcp_ack}, {"URG", tcp_urg}}};

const option* find(std::span<const option> opts, option_id id) noexcept {
  for (const auto& o : opts)
    if (o.id == id) return &o;
  return nullptr;
}

// conntrack_dump_addr: the address, then nothing for a full mask or /len. A mask with holes does not
// survive iptables-nft 1.8.9's round trip through nftables: iptables-save prints the address alone.
void ct_address(out_t& out, const address_mask& m) {
  out += ' ';
  address(out, m.address);
  const auto len = prefix_length(m);
  if (len && *len != max_prefix_length(m.address.family)) putf(out, "/{}", *len);
}

// ---- match modules ---------------------------------------------------------------------------

void save_generic_options(out_t& out, std::span<const option> opts) {
  for (const auto& o : opts) {
    negation(out, o.negated);
    const auto& g = o.generic_value();
    putf(out, " --{}", g.name);
    for (std::size_t i = 0; i < g.arguments.size(); ++i) {
      // an argument that starts with `-` was written `--name=-x` (apart it would read as an option)
      out += i == 0 && g.arguments[i].raw.starts_with('-') ? '=' : ' ';
      out.append(g.arguments[i].raw);
    }
  }
}

void save_addrtype(out_t& out, const match& m) {
  const auto a = *as_addrtype(m);
  if (a.source_types != 0) {
    negation(out, a.source_negated);
    out += " --src-type ";
    bits(out, a.source_types, address_type_names);
  }
  if (a.destination_types != 0) {
    negation(out, a.destination_negated);
    out += " --dst-type ";
    bits(out, a.destination_types, address_type_names);
  }
  if (a.limit_iface_in) out += " --limit-iface-in";
  if (a.limit_iface_out) out += " --limit-iface-out";
}

void save_mark_value(out_t& out, std::uint32_t value, std::uint32_t mask) {
  putf(out, " 0x{:x}", value);
  if (mask != 0xffffffff) putf(out, "/0x{:x}", mask);
}

void save_conntrack(out_t& out, const match& m) {
  const auto c = *as_conntrack(m);
  if (c.state) {
    negation(out, c.state_negated);
    out += " --ctstate ";
    bits(out, *c.state, ct_state_names);
  }
  if (c.protocol) {
    negation(out, c.protocol_negated);
    putf(out, " --ctproto {}", *c.protocol);
  }
  auto addr = [&](const std::optional<conntrack_match::addresses>& a, std::string_view name) {
    if (!a) return;
    negation(out, a->negated);
    putf(out, " --{}", name);
    ct_address(out, a->value);
  };
  addr(c.orig_source, "ctorigsrc");
  addr(c.orig_destination, "ctorigdst");
  addr(c.reply_source, "ctreplsrc");
  addr(c.reply_destination, "ctrepldst");
  auto ports = [&](const std::optional<conntrack_match::ports>& p, std::string_view name) {
    if (!p) return;
    negation(out, p->negated);
    putf(out, " --{} ", name);
    port_range_text(out, p->value);
  };
  ports(c.orig_source_port, "ctorigsrcport");
  ports(c.orig_destination_port, "ctorigdstport");
  ports(c.reply_source_port, "ctreplsrcport");
  ports(c.reply_destination_port, "ctrepldstport");
  if (c.status) {
    negation(out, c.status_negated);
    out += " --ctstatus ";
    bits(out, *c.status, ct_status_names, "NONE");
  }
  if (c.expire) {
    negation(out, c.expire_negated);
    if (c.expire->first == c.expire->second)
      putf(out, " --ctexpire {}", c.expire->first);
    else
      putf(out, " --ctexpire {}:{}", c.expire->first, c.expire->second);
  }
  if (c.direction_reply) out += *c.direction_reply ? " --ctdir REPLY" : " --ctdir ORIGINAL";
}

void save_icmp(out_t& out, const match& m, bool v6) {
  const auto i = v6 ? *as_icmp6(m) : *as_icmp(m);
  negation(out, i.negated);
  if (!v6 && i.type == 0xff) {
    out += " --icmp-type any";
    return;
  }
  putf(out, " --{} {}", v6 ? "icmpv6-type" : "icmp-type", i.type);
  if (i.code_min != 0 || i.code_max != 0xff) putf(out, "/{}", i.code_min);
}

// libxt_limit print_rate: the largest unit that expresses the average exactly enough.
void limit_rate(out_t& out, std::uint32_t period) {
  struct rate {
    std::string_view name;
    std::uint32_t mult;
  };
  static constexpr std::array<rate, 4> rates{
      {{"day", 10000u * 24 * 60 * 60}, {"hour", 10000u * 60 * 60}, {"min", 10000u * 60}, {"sec", 10000u}}};
  if (period == 0) {
    out += " inf";
    return;
  }
  std::size_t i = 1;
  for (; i < rates.size(); ++i)
    if (period > rates[i].mult || rates[i].mult / period < rates[i].mult % period) break;
  putf(out, " {}/{}", rates[i - 1].mult / period, rates[i - 1].name);
}

void save_limit(out_t& out, const match& m) {
  const auto l = *as_limit(m);
  out += " --limit";
  limit_rate(out, l.average);
  if (l.burst != 5) putf(out, " --limit-burst {}", l.burst);
}

void save_multiport(out_t& out, const match& m) {
  const auto mp = *as_multiport(m);
  negation(out, mp.negated);
  switch (mp.direction) {
    case multiport_direction::source:
      out += " --sports ";
      break;
    case multiport_direction::destination:
      out += " --dports ";
      break;
    case multiport_direction::either:
      out += " --ports ";
      break;
  }
  bool first = true;
  for (const auto& r : mp.ports) {
    if (!first) out += ',';
    first = false;
    port_range_text(out, r);
  }
}

void save_physdev(out_t& out, const match& m) {
  const auto p = *as_physdev(m);
  if (p.is_in) putf(out, "{} --physdev-is-in", *p.is_in ? "" : " !");
  if (p.in) putf(out, "{} --physdev-in {}", p.in_negated ? " !" : "", *p.in);
  if (p.is_out) putf(out, "{} --physdev-is-out", *p.is_out ? "" : " !");
  if (p.out) putf(out, "{} --physdev-out {}", p.out_negated ? " !" : "", *p.out);
  if (p.is_bridged) putf(out, "{} --physdev-is-bridged", *p.is_bridged ? "" : " !");
}

void save_recent(out_t& out, const match& m, ip_family family) {
  const auto r = *as_recent(m, family);
  negation(out, r.negated);
  switch (r.command) {
    case recent_command::set:
      out += " --set";
      break;
    case recent_command::rcheck:
      out += " --rcheck";
      break;
    case recent_command::update:
      out += " --update";
      break;
    case recent_command::remove:
      out += " --remove";
      break;
  }
  if (r.seconds != 0) putf(out, " --seconds {}", r.seconds);
  if (r.reap) out += " --reap";
  if (r.hitcount != 0) putf(out, " --hitcount {}", r.hitcount);
  if (r.rttl) out += " --rttl";
  putf(out, " --name {}", r.name);
  out += " --mask ";
  address(out, r.mask);
  out += r.rsource ? " --rsource" : " --rdest";
}

// SCTP chunk types print in the order of their type numbers.
std::uint16_t chunk_number(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, std::uint16_t>, 22> chunks{{
      {"DATA", 0},
      {"INIT", 1},
      {"INIT_ACK", 2},
      {"SACK", 3},
      {"HEARTBEAT", 4},
      {"HEARTBEAT_ACK", 5},
      {"ABORT", 6},
      {"SHUTDOWN", 7},
      {"SHUTDOWN_ACK", 8},
      {"ERROR", 9},
      {"COOKIE_ECHO", 10},
      {"COOKIE_ACK", 11},
      {"ECN_ECNE", 12},
      {"ECN_CWR", 13},
      {"SHUTDOWN_COMPLETE", 14},
      {"I_DATA", 64},
      {"ASCONF_ACK", 128},
      {"RE_CONFIG", 130},
      {"PAD", 132},
      {"FORWARD_TSN", 192},
      {"ASCONF", 193},
      {"I_FORWARD_TSN", 194},
  }};
  const auto colon = name.find(':');
  const auto base = name.substr(0, colon);
  for (const auto& [n, v] : chunks)
    if (n == base) return v;
  return 0xffff;
}

void save_sctp(out_t& out, const match& m) {
  const auto s = *as_sctp(m);
  if (s.source) {
    negation(out, s.source_negated);
    out += " --sport ";
    port_range_text(out, *s.source);
  }
  if (s.destination) {
    negation(out, s.destination_negated);
    out += " --dport ";
    port_range_text(out, *s.destination);
  }
  if (!s.chunk_types.empty()) {
    negation(out, s.chunk_types_negated);
    const auto space = s.chunk_types.find(' ');
    putf(out, " --chunk-types {} ", s.chunk_types.substr(0, space));
    std::vector<std::string_view> names;
    if (detail::split_names(s.chunk_types.substr(space + 1), names)) {
      std::stable_sort(names.begin(), names.end(),
                       [](std::string_view a, std::string_view b) { return chunk_number(a) < chunk_number(b); });
      for (std::size_t i = 0; i < names.size(); ++i) {
        if (i) out += ',';
        out.append(names[i]);
      }
    }
  }
}

void save_set(out_t& out, const match& m) {
  const auto s = *as_set(m);
  negation(out, s.negated);
  putf(out, " --match-set {}", s.set.name);
  for (unsigned i = 0; i < s.set.dimensions; ++i)
    putf(out, "{}{}", i == 0 ? " " : ",", (s.set.source_flags & (1u << i)) ? "src" : "dst");
  if (s.return_nomatch) out += " --return-nomatch";
  if (!s.update_counters) out += " ! --update-counters";
  if (!s.update_subcounters) out += " ! --update-subcounters";
  for (const auto& o : m.options()) {
    std::string_view n;
    switch (o.id) {
      case option_id::set_packets_eq:
        n = "packets-eq";
        break;
      case option_id::set_packets_lt:
        n = "packets-lt";
        break;
      case option_id::set_packets_gt:
        n = "packets-gt";
        break;
      case option_id::set_bytes_eq:
        n = "bytes-eq";
        break;
      case option_id::set_bytes_lt:
        n = "bytes-lt";
        break;
      case option_id::set_bytes_gt:
        n = "bytes-gt";
        break;
      default:
        continue;
    }
    negation(out, o.negated);
    putf(out, " --{} {}", n, o.number());
  }
}

void save_statistic(out_t& out, const match& m) {
  const auto s = *as_statistic(m);
  if (s.mode == statistic_mode::random) {
    putf(out, " --mode random{} --probability {:.11f}", s.negated ? " !" : "", s.probability());
  } else {
    putf(out, " --mode nth{} --every {} --packet {}", s.negated ? " !" : "", s.every, s.packet);
  }
}

void save_ports(out_t& out, const port_match& p) {
  auto one = [&](const std::optional<port_range>& r, bool negated, std::string_view name) {
    if (!r || (r->first == 0 && r->last == 0xffff && !negated)) return;
    negation(out, negated);
    putf(out, " --{} ", name);
    port_range_text(out, *r);
  };
  one(p.source, p.source_negated, "sport");
  one(p.destination, p.destination_negated, "dport");
}

void save_tcp(out_t& out, const match& m) {
  const auto t = *as_tcp(m);
  save_ports(out, t);
  if (t.tcp_option) {
    negation(out, t.tcp_option_negated);
    putf(out, " --tcp-option {}", *t.tcp_option);
  }
  if (t.tcp_flags && (t.tcp_flags->mask != 0 || t.tcp_flags->negated)) {
    negation(out, t.tcp_flags->negated);
    out += " --tcp-flags ";
    bits(out, t.tcp_flags->mask, tcp_flag_names, "NONE");
    out += ' ';
    bits(out, t.tcp_flags->comparison, tcp_flag_names, "NONE");
  }
}

void save_match(out_t& out, const match& m, ip_family family) {
  putf(out, " -m {}", m.name());
  switch (m.id) {
    case module_id::generic:
      save_generic_options(out, m.options());
      break;
    case module_id::addrtype:
      save_addrtype(out, m);
      break;
    case module_id::comment:
      out += " --comment";
      save_string(out, as_comment(m)->text);
      break;
    case module_id::connmark: {
      const auto c = *as_connmark(m);
      negation(out, c.negated);
      out += " --mark";
      save_mark_value(out, c.value, c.mask);
      break;
    }
    case module_id::mark: {
      const auto c = *as_mark(m);
      negation(out, c.negated);
      out += " --mark";
      save_mark_value(out, c.value, c.mask);
      break;
    }
    case module_id::conntrack:
      save_conntrack(out, m);
      break;
    case module_id::icmp:
      save_icmp(out, m, false);
      break;
    case module_id::icmp6:
      save_icmp(out, m, true);
      break;
    case module_id::limit:
      save_limit(out, m);
      break;
    case module_id::multiport:
      save_multiport(out, m);
      break;
    case module_id::nfacct:
      // libxt_nfacct 1.8.9 prints the option's space and save_string's own: two spaces.
      out += " --nfacct-name ";
      save_string(out, as_nfacct(m)->name);
      break;
    case module_id::physdev:
      save_physdev(out, m);
      break;
    case module_id::recent:
      save_recent(out, m, family);
      break;
    case module_id::sctp:
      save_sctp(out, m);
      break;
    case module_id::set:
      save_set(out, m);
      break;
    case module_id::state: {
      const auto s = *as_state(m);
      negation(out, s.negated);
      out += " --state ";
      bits(out, s.states, std::span<const named_bit>(ct_state_names).first(5));
      break;
    }
    case module_id::statistic:
      save_statistic(out, m);
      break;
    case module_id::tcp:
      save_tcp(out, m);
      break;
    case module_id::udp:
      save_ports(out, *as_udp(m));
      break;
  }
}

// ---- targets ---------------------------------------------------------------------------------

void nat_range_text(out_t& out, const nat_range& r, ip_family family) {
  if (r.has_address) {
    const bool brackets = family == ip_family::ipv6 && r.has_ports;
    if (brackets) out += '[';
    address(out, r.min_address);
    if (r.max_address != r.min_address) {
      out += '-';
      address(out, r.max_address);
    }
    if (brackets) out += ']';
  }
  if (r.has_ports) {
    putf(out, ":{}", r.ports.first);
    if (r.ports.last != r.ports.first) putf(out, "-{}", r.ports.last);
    if (r.base_port != 0) putf(out, "/{}", r.base_port);
  }
}

void save_target(out_t& out, const target& t, ip_family family) {
  if (t.id == target_id::none) return;
  putf(out, " -{} {}", t.is_goto ? 'g' : 'j', t.name);
  switch (t.id) {
    case target_id::none:
    case target_id::chain:
    case target_id::accept:
    case target_id::drop:
    case target_id::return_:
    case target_id::queue:
      return;
    case target_id::generic:
      save_generic_options(out, t.options);
      return;
    case target_id::dnat:
    case target_id::snat: {
      const auto n = *as_nat(t);
      if (n.range) {
        out += t.id == target_id::dnat ? " --to-destination " : " --to-source ";
        nat_range_text(out, *n.range, family);
      }
      if (n.random) out += " --random";
      if (n.random_fully) out += " --random-fully";
      if (n.persistent) out += " --persistent";
      return;
    }
    case target_id::masquerade:
    case target_id::redirect: {
      const auto n = *as_nat(t);
      if (n.range && n.range->has_ports) {
        putf(out, " --to-ports {}", n.range->ports.first);
        if (n.range->ports.last != n.range->ports.first) putf(out, "-{}", n.range->ports.last);
      }
      if (n.random) out += " --random";
      if (n.random_fully) out += " --random-fully";
      return;
    }
    case target_id::mark: {
      const auto mk = *as_mark(t);
      putf(out, " --set-xmark 0x{:x}/0x{:x}", mk.value, mk.mask);
      return;
    }
    case target_id::connmark: {
      const auto c = *as_connmark(t);
      switch (c.mode) {
        case connmark_mode::set:
          putf(out, " --set-xmark 0x{:x}/0x{:x}", c.value, c.mask);
          break;
        case connmark_mode::save:
          putf(out, " --save-mark --nfmask 0x{:x} --ctmask 0x{:x}", c.nfmask, c.ctmask);
          break;
        case connmark_mode::restore:
          putf(out, " --restore-mark --nfmask 0x{:x} --ctmask 0x{:x}", c.nfmask, c.ctmask);
          break;
      }
      if (c.left_shift) putf(out, " --left-shift-mark {}", c.left_shift);
      if (c.right_shift) putf(out, " --right-shift-mark {}", c.right_shift);
      return;
    }
    case target_id::reject:
      putf(out, " --reject-with {}", as_reject(t, family)->with);
      return;
    case target_id::log: {
      const auto l = *as_log(t);
      if (!l.prefix.empty()) {
        out += " --log-prefix";
        save_string(out, l.prefix);
      }
      if (l.level != 4) putf(out, " --log-level {}", l.level);
      if (l.tcp_sequence) out += " --log-tcp-sequence";
      if (l.tcp_options) out += " --log-tcp-options";
      if (l.ip_options) out += " --log-ip-options";
      if (l.uid) out += " --log-uid";
      if (l.macdecode) out += " --log-macdecode";
      return;
    }
    case target_id::nflog: {
      const auto n = *as_nflog(t);
      if (!n.prefix.empty()) {
        out += " --nflog-prefix";
        save_string(out, n.prefix);
      }
      if (n.group != 0) putf(out, " --nflog-group {}", n.group);
      // --nflog-range "has never worked": iptables 1.8.9 drops it, only --nflog-size reaches the kernel
      if (const option* size = find(t.options, option_id::nflog_size)) putf(out, " --nflog-size {}", size->number());
      // nftables keeps whether a threshold was given: iptables-nft 1.8.9 prints it then, even the default 1
      if (find(t.options, option_id::nflog_threshold) != nullptr) putf(out, " --nflog-threshold {}", n.threshold);
      return;
    }
    case target_id::tproxy: {
      const auto p = *as_tproxy(t);
      putf(out, " --on-port {} --on-ip ", p.port);
      address(out, p.address.value_or(mask_of(family, 0)));
      putf(out, " --tproxy-mark 0x{:x}/0x{:x}", p.mark, p.mask);
      return;
    }
  }
}

// iptables-nft 1.8.9 turns a tcp or udp match that only compares ports into nftables payload
// expressions, and iptables-save rebuilds matches from those: every such match of a rule folds into the
// first one that compares anything (a later port replaces an earlier one), full ranges `0:65535` vanish
// even when negated, and a match left with nothing vanishes. A tcp match with flags or an option, or a
// match that compares nothing at all (`-m tcp`, `--sport 0:65535`), stays an xtables match and prints
// as given. (Observed with iptables-restore/-save 1.8.9 in a network namespace.)
struct native_ports {
  const match* anchor = nullptr;  // where the folded match prints
  port_match ports;
};

bool full_range(const std::optional<port_range>& r) { return !r || (r->first == 0 && r->last == 0xffff); }

bool is_native(const match& m, port_match& ports) {
  if (m.id == module_id::tcp) {
    const auto t = *as_tcp(m);
    if ((t.tcp_flags && (t.tcp_flags->mask != 0 || t.tcp_flags->negated)) || t.tcp_option) return false;
    ports = t;
  } else if (m.id == module_id::udp) {
    ports = *as_udp(m);
  } else {
    return false;
  }
  const bool compares = !full_range(ports.source) || !full_range(ports.destination);
  const bool negates = ports.source_negated || ports.destination_negated;
  return compares || negates;
}

void fold(native_ports& n, const match& m, const port_match& p) {
  auto take = [](std::optional<port_range>& slot, bool& negated, const std::optional<port_range>& r, bool neg) {
    if (full_range(r)) return;
    slot = r;
    negated = neg;
  };
  port_match& into = n.ports;
  const bool before = !full_range(into.source) || !full_range(into.destination);
  take(into.source, into.source_negated, p.source, p.source_negated);
  take(into.destination, into.destination_negated, p.destination, p.destination_negated);
  if (!before && (!full_range(into.source) || !full_range(into.destination))) n.anchor = &m;
}

void save_spec(out_t& out, const rule& s, ip_family family) {
  base_address_list(out, 's', s.source());
  base_address_list(out, 'd', s.destination());
  if (const interface_match* in = s.in_interface(); in != nullptr && !(in->name == "+" && !in->negated)) {
    negation(out, in->negated);
    out += " -i";
    interface_name(out, in->name);
  }
  if (const interface_match* o = s.out_interface(); o != nullptr && !(o->name == "+" && !o->negated)) {
    negation(out, o->negated);
    out += " -o";
    interface_name(out, o->name);
  }
  const protocol_match protocol = s.protocol();
  if (protocol.present && protocol.number != 0) {
    negation(out, protocol.negated);
    const auto name = detail::protocol_print_name(protocol.number);
    if (name.empty())
      putf(out, " -p {}", protocol.number);
    else
      putf(out, " -p {}", name);
  }
  if (const fragment_match fragment = s.fragment(); fragment.present) {
    negation(out, fragment.negated);
    out += " -f";
  }
  native_ports tcp, udp;
  bool any_native = false;
  for (const auto& m : s.matches()) {
    port_match p;
    if (is_native(m, p)) {
      fold(m.id == module_id::tcp ? tcp : udp, m, p);
      any_native = true;
    }
  }
  for (const auto& m : s.matches()) {
    port_match p;
    if (any_native && is_native(m, p)) {
      const native_ports& n = m.id == module_id::tcp ? tcp : udp;
      if (n.anchor != &m) continue;
      putf(out, " -m {}", m.name());
      save_ports(out, n.ports);
      continue;
    }
    save_match(out, m, family);
  }
  save_target(out, s.target(), family);
}

void print_rule(out_t& out, const rule& r, ip_family family, const print_options& options,
                bool listed = false) {
  // `iptables-save -c` gives every rule of the state its counters, [0:0] for a rule that has none
  // (`listed`); a command of restore input has them only where they were written
  if (options.counters && r.has_spec() && (listed || r.counters() != nullptr)) {
    const struct counters k = r.counters() != nullptr ? *r.counters() : counters{};
    putf(out, "[{}:{}] ", k.packets, k.bytes);
  }
  if (r.only == family_filter::ipv4) out += "-4 ";
  if (r.only == family_filter::ipv6) out += "-6 ";
  out.append(command_option(r.command));
  if (const std::string_view chain = r.chain(); !chain.empty()) {
    out += ' ';
    out.append(chain);
  }
  switch (r.command) {
    case command_kind::insert:
    case command_kind::replace:
    case command_kind::delete_rule:
    case command_kind::zero:
      if (r.position() != 0) putf(out, " {}", r.position());
      break;
    case command_kind::policy:
      putf(out, " {}", policy_name(r.policy));
      break;
    case command_kind::rename_chain:
      putf(out, " {}", r.new_name());
      break;
    default:
      break;
  }
  if (r.has_spec()) save_spec(out, r, family);
}

void print_chain_declaration(out_t& out, const chain& c, bool applied) {
  const counters k = (c.builtin || !applied) && c.has_counters ? c.counters : counters{};
  if (!applied && !c.has_counters && !c.builtin) {
    putf(out, ":{} {}\n", c.name, policy_name(c.policy));
    return;
  }
  putf(out, ":{} {} [{}:{}]\n", c.name,
       c.builtin ? policy_name(c.policy == chain_policy::none ? chain_policy::accept : c.policy) : "-", k.packets,
       k.bytes);
}

}  // namespace

std::string detail::spec_text(const rule& r, ip_family family) {
  std::string out;
  save_spec(out, r, family);
  return out;
}

std::string print(const rule& r, ip_family family, const print_options& options) {
  std::string out;
  print_rule(out, r, family, options);
  return out;
}

std::string print(const ruleset& rs, const print_options& options) {
  std::string out;
  std::size_t rules = 0;
  for (const auto& t : rs.tables) rules += t.rules.size();
  out.reserve(rules * 96 + 256);
  for (const auto& t : rs.tables) {
    putf(out, "*{}\n", table_name(t.id));
    if (t.applied) {
      for (const auto& c : t.chains) print_chain_declaration(out, c, true);
      for (const auto& r : t.rules) {
        print_rule(out, r, rs.family, options, true);
        out += '\n';
      }
    } else {
      // declarations and commands in file order (they share the block's source)
      std::size_t ci = 0, ri = 0;
      while (ci < t.chains.size() || ri < t.rules.size()) {
        const bool chain_first =
            ri == t.rules.size() || (ci < t.chains.size() && t.chains[ci].where.offset <= t.rules[ri].where.offset);
        if (chain_first) {
          print_chain_declaration(out, t.chains[ci++], false);
        } else {
          print_rule(out, t.rules[ri++], rs.family, options);
          out += '\n';
        }
      }
    }
    if (t.committed) out += "COMMIT\n";
  }
  return out;
}

}  // namespace nflens::iptables
