// SPDX-License-Identifier: MIT
// The typed modules and targets: option tables, argument decoders and final checks (from the option
// tables of iptables 1.8.9's libxt_*/libipt_*/libip6t_* extensions and iptables-extensions(8)), and
// the typed accessors of iptables_modules.hpp.
#include "modules.hpp"

#include "values.hpp"

#include <nflens/iptables_modules.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <vector>

namespace nflens::iptables {

namespace detail {
namespace {

// ---- helpers -----------------------------------------------------------------------------------

[[noreturn]] void fail(const argument& a, std::string message, error_code code = error_code::invalid_value) {
  throw value_error{code, a.where, std::move(message)};
}

bool iequals(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::toupper(static_cast<unsigned char>(a[i])) != std::toupper(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

void set_number(option& out, std::uint64_t v) {
  out.kind = value_kind::number;
  out.value.number = v;
}
void set_pair(option& out, std::uint32_t a, std::uint32_t b) {
  out.kind = value_kind::pair;
  out.value.pair[0] = a;
  out.value.pair[1] = b;
}
void set_text(option& out, std::string_view t) {
  out.kind = value_kind::text;
  out.value.text = t.data();
  out.size = static_cast<std::uint32_t>(t.size());
}
void set_address(option& out, const address_mask& m, module_context& ctx) {
  out.kind = value_kind::address;
  out.value.address = ctx.file->store_one(m);
}

/// A string option of libxtables (xtopt_parse_string): shorter than `Min` is refused ("Argument must
/// have a minimum length"); longer than `Max` is cut to its first `Max` bytes, as iptables 1.8.9 stores
/// it and iptables-save then prints it, with a warning.
template <std::size_t Max, std::size_t Min = 0>
void decode_text(std::span<const argument> args, option& out, module_context& ctx) {
  std::string_view t = args[0].text;
  if (t.size() < Min)
    fail(args[0], fmt::format("must be at least {} byte{} long", Min, Min == 1 ? "" : "s"), error_code::invalid_value);
  if (t.size() > Max) {
    if (ctx.sink != nullptr)
      ctx.sink->warning(error_code::number_out_of_range, args[0].where,
                        fmt::format("--{}: `{}` is longer than {} bytes; iptables keeps the first {}", ctx.option,
                                    clip(t), Max, Max));
    t = t.substr(0, Max);
  }
  set_text(out, t);
}

template <std::uint64_t Max, std::uint64_t Min = 0>
void decode_uint(std::span<const argument> args, option& out, module_context&) {
  const auto v = parse_number(args[0].text, Max);
  if (!v || *v < Min)
    fail(args[0], fmt::format("expected a number from {} to {}, saw `{}`", Min, Max, clip(args[0].text)),
         error_code::invalid_number);
  set_number(out, *v);
}

void decode_port_range(std::span<const argument> args, option& out, module_context&) {
  const auto r = parse_port_range(args[0].text);
  if (!r)
    fail(args[0], fmt::format("expected a port or port range (PORT, FIRST:LAST), saw `{}`", clip(args[0].text)),
         error_code::invalid_port);
  out.kind = value_kind::ports;
  out.value.ports = *r;
}

void decode_port_list(std::span<const argument> args, option& out, module_context& ctx) {
  std::vector<port_range> list;
  if (!parse_port_list(args[0].text, list))
    fail(args[0], fmt::format("expected up to 15 comma-separated ports or ranges, saw `{}`", clip(args[0].text)),
         error_code::invalid_port);
  const auto stored = ctx.file->store(std::span<const port_range>(list));
  out.kind = value_kind::port_list;
  out.value.port_list = stored.data();
  out.size = static_cast<std::uint32_t>(stored.size());
}

void decode_mark(std::span<const argument> args, option& out, module_context&) {
  const auto m = parse_mark(args[0].text);
  if (!m) fail(args[0], fmt::format("expected VALUE[/MASK] (32-bit numbers), saw `{}`", clip(args[0].text)));
  set_pair(out, m->value, m->mask);
}

void decode_address(std::span<const argument> args, option& out, module_context& ctx) {
  const auto m = parse_address_mask(args[0].text, ctx.family);
  if (!m)
    fail(args[0],
         fmt::format("expected an {} address[/mask], saw `{}`", ctx.family == ip_family::ipv4 ? "IPv4" : "IPv6",
                     clip(args[0].text)),
         error_code::invalid_address);
  set_address(out, *m, ctx);
}

void decode_host(std::span<const argument> args, option& out, module_context& ctx) {
  const auto a = parse_host(args[0].text, ctx.family);
  if (!a)
    fail(args[0],
         fmt::format("expected an {} address, saw `{}`", ctx.family == ip_family::ipv4 ? "IPv4" : "IPv6",
                     clip(args[0].text)),
         error_code::invalid_address);
  set_address(out, address_mask{*a, mask_of(ctx.family, max_prefix_length(ctx.family))}, ctx);
}

struct named_bit {
  std::string_view name;
  std::uint16_t bit;
};

template <const auto& Table>
void decode_bits(std::span<const argument> args, option& out, module_context&) {
  std::vector<std::string_view> names;
  if (!split_names(args[0].text, names))
    fail(args[0], fmt::format("expected a comma-separated list, saw `{}`", clip(args[0].text)));
  std::uint64_t bits = 0;
  for (auto n : names) {
    bool found = false;
    for (const auto& e : Table)
      if (iequals(e.name, n)) {
        bits |= e.bit;
        found = true;
      }
    if (!found) {
      std::string known;
      for (const auto& e : Table) known += (known.empty() ? "" : ", ") + std::string(e.name);
      fail(args[0], fmt::format("unknown value `{}` (expected {})", clip(n), known));
    }
  }
  set_number(out, bits);
}

constexpr std::array<named_bit, 7> ct_states{{{"INVALID", ct_invalid},
                                              {"NEW", ct_new},
                                              {"RELATED", ct_related},
                                              {"ESTABLISHED", ct_established},
                                              {"UNTRACKED", ct_untracked},
                                              {"SNAT", ct_snat},
                                              {"DNAT", ct_dnat}}};
constexpr std::array<named_bit, 5> plain_states{{{"INVALID", ct_invalid},
                                                 {"NEW", ct_new},
                                                 {"RELATED", ct_related},
                                                 {"ESTABLISHED", ct_established},
                                                 {"UNTRACKED", ct_untracked}}};
constexpr std::array<named_bit, 5> ct_statuses{{{"NONE", 0},
                                                {"EXPECTED", ct_expected},
                                                {"SEEN_REPLY", ct_seen_reply},
                                                {"ASSURED", ct_assured},
                                                {"CONFIRMED", ct_confirmed}}};
constexpr std::array<named_bit, 12> address_types{{{"UNSPEC", addr_unspec},
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
constexpr std::array<named_bit, 8> tcp_flag_names{{{"FIN", tcp_fin},
                                                   {"SYN", tcp_syn},
                                                   {"RST", tcp_rst},
                                                   {"PSH", tcp_psh},
                                                   {"ACK", tcp_ack},
                                                   {"URG", tcp_urg},
                                                   {"ALL", 0x3f},
                                                   {"NONE", 0}}};

void decode_ctproto(std::span<const argument> args, option& out, module_context&) {
  const auto p = parse_protocol_number(args[0].text);
  if (!p || *p == 0) fail(args[0], fmt::format("expected a protocol other than 0/all, saw `{}`", clip(args[0].text)));
  set_number(out, *p);
}

void decode_expire(std::span<const argument> args, option& out, module_context&) {
  const std::string_view t = args[0].text;
  const auto colon = t.find(':');
  const auto a = parse_number(t.substr(0, colon), 0xffffffff);
  const auto b = colon == std::string_view::npos ? a : parse_number(t.substr(colon + 1), 0xffffffff);
  if (!a || !b || *a > *b)
    fail(args[0], fmt::format("expected SECONDS[:SECONDS] (32-bit), saw `{}`", clip(t)), error_code::invalid_number);
  set_pair(out, static_cast<std::uint32_t>(*a), static_cast<std::uint32_t>(*b));
}

void decode_ctdir(std::span<const argument> args, option& out, module_context&) {
  if (iequals(args[0].text, "ORIGINAL"))
    set_number(out, 0);
  else if (iequals(args[0].text, "REPLY"))
    set_number(out, 1);
  else
    fail(args[0], fmt::format("expected ORIGINAL or REPLY, saw `{}`", clip(args[0].text)));
}

void decode_tcp_flags(std::span<const argument> args, option& out, module_context& ctx) {
  option mask, comp;
  decode_bits<tcp_flag_names>(args.subspan(0, 1), mask, ctx);
  decode_bits<tcp_flag_names>(args.subspan(1, 1), comp, ctx);
  set_pair(out, static_cast<std::uint32_t>(mask.number()), static_cast<std::uint32_t>(comp.number()));
}

void decode_syn(std::span<const argument>, option& out, module_context&) {
  set_pair(out, tcp_fin | tcp_syn | tcp_rst | tcp_ack, tcp_syn);
}

void decode_statistic_mode(std::span<const argument> args, option& out, module_context&) {
  if (args[0].text == "random")
    set_number(out, 0);
  else if (args[0].text == "nth")
    set_number(out, 1);
  else
    fail(args[0], fmt::format("expected random or nth, saw `{}`", clip(args[0].text)));
}

void decode_probability(std::span<const argument> args, option& out, module_context&) {
  const std::string_view t = args[0].text;
  double p = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), p);
  if (t.empty() || ec != std::errc{} || end != t.data() + t.size() || !(p >= 0.0 && p <= 1.0))
    fail(args[0], fmt::format("expected a probability from 0 to 1, saw `{}`", clip(t)), error_code::invalid_number);
  // libxt_statistic: lround(0x80000000 * p), the fixed-point value the kernel compares.
  set_number(out, static_cast<std::uint64_t>(std::lround(2147483648.0 * p)));
}

void decode_limit_rate(std::span<const argument> args, option& out, module_context&) {
  const auto r = parse_limit_rate(args[0].text);
  if (!r) fail(args[0], fmt::format("expected a rate N[/second|/minute|/hour|/day], saw `{}`", clip(args[0].text)));
  set_number(out, *r);
}

void decode_icmp(std::span<const argument> args, option& out, module_context& ctx) {
  const bool v6 = out.id == option_id::icmp6_type;
  (void)ctx;
  const auto s = parse_icmp_type(args[0].text, v6);
  if (!s) fail(args[0], fmt::format("unknown {} type `{}`", v6 ? "ICMPv6" : "ICMP", clip(args[0].text)));
  set_number(out, std::uint64_t{s->type} | std::uint64_t{s->code_min} << 8 | std::uint64_t{s->code_max} << 16 |
                      std::uint64_t{s->any} << 24);
}

void decode_set(std::span<const argument> args, option& out, module_context& ctx) {
  if (args[0].text.empty() || args[0].text.size() > 31)
    fail(args[0], "expected a set name of 1 to 31 bytes", error_code::invalid_value);
  std::vector<std::string_view> flags;
  if (!split_names(args[1].text, flags) || flags.size() > 6)
    fail(args[1], fmt::format("expected up to six of src and dst, comma-separated, saw `{}`", clip(args[1].text)));
  set_reference r;
  r.name = args[0].text;
  r.dimensions = static_cast<std::uint8_t>(flags.size());
  for (std::size_t i = 0; i < flags.size(); ++i) {
    if (flags[i] == "src")
      r.source_flags = static_cast<std::uint8_t>(r.source_flags | 1u << i);
    else if (flags[i] != "dst")
      fail(args[1], fmt::format("expected src or dst, saw `{}`", clip(flags[i])));
  }
  out.kind = value_kind::set;
  out.value.set = ctx.file->store_one(r);
}

constexpr std::array<std::string_view, 23> sctp_chunks{
    "DATA",          "INIT",          "INIT_ACK",    "SACK",         "HEARTBEAT",
    "HEARTBEAT_ACK", "ABORT",         "SHUTDOWN",    "SHUTDOWN_ACK", "ERROR",
    "COOKIE_ECHO",   "COOKIE_ACK",    "ECN_ECNE",    "ECN_CWR",      "SHUTDOWN_COMPLETE",
    "ASCONF",        "ASCONF_ACK",    "FORWARD_TSN", "I_DATA",       "RE_CONFIG",
    "PAD",           "I_FORWARD_TSN", "ALL"};

void decode_chunk_types(std::span<const argument> args, option& out, module_context& ctx) {
  const std::string_view scope = args[0].text;
  if (scope != "all" && scope != "any" && scope != "only")
    fail(args[0], fmt::format("expected all, any or only, saw `{}`", clip(scope)));
  std::vector<std::string_view> chunks;
  if (!split_names(args[1].text, chunks)) fail(args[1], "expected a comma-separated list of chunk types");
  for (auto c : chunks) {
    const auto colon = c.find(':');
    const auto name = c.substr(0, colon);
    if (std::find(sctp_chunks.begin(), sctp_chunks.end(), name) == sctp_chunks.end() && name != "NONE")
      fail(args[1], fmt::format("unknown SCTP chunk type `{}`", clip(name)));
  }
  const std::string joined = std::string(scope) + ' ' + std::string(args[1].text);
  set_text(out, ctx.file->store(std::string_view(joined)));
}

void decode_nat_to(std::span<const argument> args, option& out, module_context& ctx) {
  const auto r = parse_nat_range(args[0].text, ctx.family);
  if (!r)
    fail(args[0],
         fmt::format("expected {}, saw `{}`",
                     ctx.family == ip_family::ipv4 ? "ADDRESS[-ADDRESS][:PORT[-PORT[/BASE]]]"
                                                   : "ADDRESS[-ADDRESS] or [ADDRESS[-ADDRESS]]:PORT[-PORT[/BASE]]",
                     clip(args[0].text)),
         error_code::invalid_value);
  if (r->has_ports && r->base_port == 0 && args[0].text.find('/') != std::string_view::npos)
    fail(args[0], "the base port of a shifted range must not be 0", error_code::invalid_port);
  out.kind = value_kind::nat_range;
  out.value.nat = ctx.file->store_one(*r);
}

void decode_nat_ports(std::span<const argument> args, option& out, module_context& ctx) {
  const auto r = parse_nat_ports(args[0].text);
  if (!r || r->base_port != 0 || args[0].text.find('/') != std::string_view::npos)
    fail(args[0], fmt::format("expected PORT[-PORT], saw `{}`", clip(args[0].text)), error_code::invalid_port);
  out.kind = value_kind::nat_range;
  out.value.nat = ctx.file->store_one(*r);
}

// MARK and CONNMARK spellings all reduce to xmark: new = (old & ~mask) ^ value.
void decode_set_xmark(std::span<const argument> args, option& out, module_context& ctx) { decode_mark(args, out, ctx); }
void decode_set_mark(std::span<const argument> args, option& out, module_context& ctx) {
  decode_mark(args, out, ctx);
  set_pair(out, out.first(), out.first() | out.second());
}
void decode_and_mark(std::span<const argument> args, option& out, module_context& ctx) {
  decode_uint<0xffffffff>(args, out, ctx);
  set_pair(out, 0, ~static_cast<std::uint32_t>(out.number()));
}
void decode_or_mark(std::span<const argument> args, option& out, module_context& ctx) {
  decode_uint<0xffffffff>(args, out, ctx);
  const auto v = static_cast<std::uint32_t>(out.number());
  set_pair(out, v, v);
}
void decode_xor_mark(std::span<const argument> args, option& out, module_context& ctx) {
  decode_uint<0xffffffff>(args, out, ctx);
  set_pair(out, static_cast<std::uint32_t>(out.number()), 0);
}

struct reject_name {
  std::string_view name;
  std::string_view alias;
  bool ipv6;
  std::uint8_t code;  // the ICMP / ICMPv6 destination-unreachable code ipt_REJECT / ip6t_REJECT send
};
constexpr std::uint8_t tcp_reset_code = 0xff;
// libipt_REJECT / libip6t_REJECT, canonical name first.
constexpr std::array<reject_name, 15> reject_names{{
    {"icmp-net-unreachable", "net-unreach", false, 0},
    {"icmp-host-unreachable", "host-unreach", false, 1},
    {"icmp-port-unreachable", "port-unreach", false, 3},
    {"icmp-proto-unreachable", "proto-unreach", false, 2},
    {"icmp-net-prohibited", "net-prohib", false, 9},
    {"icmp-host-prohibited", "host-prohib", false, 10},
    {"tcp-reset", "tcp-rst", false, tcp_reset_code},
    {"icmp-admin-prohibited", "admin-prohib", false, 13},
    {"icmp6-no-route", "no-route", true, 0},
    {"icmp6-adm-prohibited", "adm-prohibited", true, 1},
    {"icmp6-addr-unreachable", "addr-unreach", true, 3},
    {"icmp6-port-unreachable", "port-unreach", true, 4},
    {"tcp-reset", "tcp-rst", true, tcp_reset_code},
    {"icmp6-policy-fail", "policy-fail", true, 5},
    {"icmp6-reject-route", "reject-route", true, 6},
}};

void decode_reject_with(std::span<const argument> args, option& out, module_context& ctx) {
  const bool v6 = ctx.family == ip_family::ipv6;
  for (std::size_t i = 0; i < reject_names.size(); ++i) {
    const auto& r = reject_names[i];
    if (r.ipv6 == v6 && (r.name == args[0].text || r.alias == args[0].text)) {
      set_number(out, i);
      return;
    }
  }
  fail(args[0], fmt::format("unknown reject type `{}` for {}", clip(args[0].text), v6 ? "ip6tables" : "iptables"));
}

constexpr std::array<std::pair<std::string_view, std::uint8_t>, 11> log_levels{{{"emerg", 0},
                                                                                {"panic", 0},
                                                                                {"alert", 1},
                                                                                {"crit", 2},
                                                                                {"err", 3},
                                                                                {"error", 3},
                                                                                {"warning", 4},
                                                                                {"warn", 4},
                                                                                {"notice", 5},
                                                                                {"info", 6},
                                                                                {"debug", 7}}};

void decode_log_level(std::span<const argument> args, option& out, module_context&) {
  for (const auto& [name, level] : log_levels)
    if (name == args[0].text) {
      set_number(out, level);
      return;
    }
  const auto v = parse_number(args[0].text, 7);
  if (!v) fail(args[0], fmt::format("expected a syslog level (0-7, emerg ... debug), saw `{}`", clip(args[0].text)));
  set_number(out, *v);
}

void decode_port(std::span<const argument> args, option& out, module_context&) {
  const auto p = parse_port(args[0].text);
  if (!p) fail(args[0], fmt::format("expected a port, saw `{}`", clip(args[0].text)), error_code::invalid_port);
  set_number(out, *p);
}

void decode_interface(std::span<const argument> args, option& out, module_context&) {
  if (!valid_interface_name(args[0].text))
    fail(args[0], fmt::format("interface name `{}` must be 1 to 15 bytes", clip(args[0].text)));
  set_text(out, args[0].text);
}

// ---- option tables -----------------------------------------------------------------------------
// name, id, required arguments, negatable, repeatable, decoder

using O = option_id;

constexpr option_spec addrtype_options[] = {
    {"src-type", O::addrtype_src_type, 1, true, false, decode_bits<address_types>},
    {"dst-type", O::addrtype_dst_type, 1, true, false, decode_bits<address_types>},
    {"limit-iface-in", O::addrtype_limit_iface_in, 0, false, false, nullptr},
    {"limit-iface-out", O::addrtype_limit_iface_out, 0, false, false, nullptr},
};
constexpr option_spec comment_options[] = {
    {"comment", O::comment_comment, 1, false, false, decode_text<255>},
};
constexpr option_spec connmark_options[] = {
    {"mark", O::connmark_mark, 1, true, false, decode_mark},
};
constexpr option_spec conntrack_options[] = {
    {"ctstate", O::conntrack_ctstate, 1, true, false, decode_bits<ct_states>},
    {"ctproto", O::conntrack_ctproto, 1, true, false, decode_ctproto},
    {"ctorigsrc", O::conntrack_ctorigsrc, 1, true, false, decode_address},
    {"ctorigdst", O::conntrack_ctorigdst, 1, true, false, decode_address},
    {"ctreplsrc", O::conntrack_ctreplsrc, 1, true, false, decode_address},
    {"ctrepldst", O::conntrack_ctrepldst, 1, true, false, decode_address},
    {"ctorigsrcport", O::conntrack_ctorigsrcport, 1, true, false, decode_port_range},
    {"ctorigdstport", O::conntrack_ctorigdstport, 1, true, false, decode_port_range},
    {"ctreplsrcport", O::conntrack_ctreplsrcport, 1, true, false, decode_port_range},
    {"ctrepldstport", O::conntrack_ctrepldstport, 1, true, false, decode_port_range},
    {"ctstatus", O::conntrack_ctstatus, 1, true, false, decode_bits<ct_statuses>},
    {"ctexpire", O::conntrack_ctexpire, 1, true, false, decode_expire},
    {"ctdir", O::conntrack_ctdir, 1, false, false, decode_ctdir},
};
constexpr option_spec icmp_options[] = {
    {"icmp-type", O::icmp_type, 1, true, false, decode_icmp},
};
constexpr option_spec icmp6_options[] = {
    {"icmpv6-type", O::icmp6_type, 1, true, false, decode_icmp},
};
constexpr option_spec limit_options[] = {
    {"limit", O::limit_limit, 1, false, false, decode_limit_rate},
    {"limit-burst", O::limit_burst, 1, false, false, decode_uint<10000>},
};
constexpr option_spec mark_options[] = {
    {"mark", O::mark_mark, 1, true, false, decode_mark},
};
constexpr option_spec multiport_options[] = {
    {"source-ports", O::multiport_sports, 1, true, false, decode_port_list},
    {"sports", O::multiport_sports, 1, true, false, decode_port_list},
    {"destination-ports", O::multiport_dports, 1, true, false, decode_port_list},
    {"dports", O::multiport_dports, 1, true, false, decode_port_list},
    {"ports", O::multiport_ports, 1, true, false, decode_port_list},
};
constexpr option_spec nfacct_options[] = {
    {"nfacct-name", O::nfacct_name, 1, false, false, decode_text<31, 1>},
};
constexpr option_spec physdev_options[] = {
    {"physdev-in", O::physdev_in, 1, true, false, decode_interface},
    {"physdev-out", O::physdev_out, 1, true, false, decode_interface},
    {"physdev-is-in", O::physdev_is_in, 0, true, false, nullptr},
    {"physdev-is-out", O::physdev_is_out, 0, true, false, nullptr},
    {"physdev-is-bridged", O::physdev_is_bridged, 0, true, false, nullptr},
};
constexpr option_spec recent_options[] = {
    {"set", O::recent_set, 0, true, false, nullptr},
    {"rcheck", O::recent_rcheck, 0, true, false, nullptr},
    {"update", O::recent_update, 0, true, false, nullptr},
    {"remove", O::recent_remove, 0, true, false, nullptr},
    {"seconds", O::recent_seconds, 1, false, false, decode_uint<0xffffffff, 1>},
    {"reap", O::recent_reap, 0, false, false, nullptr},
    // xt_recent refuses a hit count of XT_RECENT_MAX_NSTAMPS (65536) or more
    {"hitcount", O::recent_hitcount, 1, false, false, decode_uint<65535, 1>},
    {"rttl", O::recent_rttl, 0, false, false, nullptr},
    {"name", O::recent_name, 1, false, false, decode_text<199, 1>},
    {"mask", O::recent_mask, 1, false, false, decode_host},
    {"rsource", O::recent_rsource, 0, false, false, nullptr},
    {"rdest", O::recent_rdest, 0, false, false, nullptr},
};
constexpr option_spec sctp_options[] = {
    {"source-port", O::sctp_sport, 1, true, false, decode_port_range},
    {"sport", O::sctp_sport, 1, true, false, decode_port_range},
    {"destination-port", O::sctp_dport, 1, true, false, decode_port_range},
    {"dport", O::sctp_dport, 1, true, false, decode_port_range},
    {"chunk-types", O::sctp_chunk_types, 2, true, false, decode_chunk_types},
};
constexpr option_spec set_options[] = {
    {"match-set", O::set_match_set, 2, true, false, decode_set},
    {"set", O::set_match_set, 2, true, false, decode_set},
    {"return-nomatch", O::set_return_nomatch, 0, false, false, nullptr},
    {"update-counters", O::set_update_counters, 0, true, false, nullptr},
    {"update-subcounters", O::set_update_subcounters, 0, true, false, nullptr},
    {"packets-eq", O::set_packets_eq, 1, true, false, decode_uint<~std::uint64_t{0}>},
    {"packets-lt", O::set_packets_lt, 1, false, false, decode_uint<~std::uint64_t{0}>},
    {"packets-gt", O::set_packets_gt, 1, false, false, decode_uint<~std::uint64_t{0}>},
    {"bytes-eq", O::set_bytes_eq, 1, true, false, decode_uint<~std::uint64_t{0}>},
    {"bytes-lt", O::set_bytes_lt, 1, false, false, decode_uint<~std::uint64_t{0}>},
    {"bytes-gt", O::set_bytes_gt, 1, false, false, decode_uint<~std::uint64_t{0}>},
};
constexpr option_spec state_options[] = {
    {"state", O::state_state, 1, true, false, decode_bits<plain_states>},
};
constexpr option_spec statistic_options[] = {
    {"mode", O::statistic_mode, 1, false, false, decode_statistic_mode},
    {"probability", O::statistic_probability, 1, true, false, decode_probability},
    {"every", O::statistic_every, 1, true, false, decode_uint<0xffffffff, 1>},
    {"packet", O::statistic_packet, 1, false, false, decode_uint<0xffffffff>},
};
constexpr option_spec tcp_options[] = {
    {"source-port", O::tcp_sport, 1, true, false, decode_port_range},
    {"sport", O::tcp_sport, 1, true, false, decode_port_range},
    {"destination-port", O::tcp_dport, 1, true, false, decode_port_range},
    {"dport", O::tcp_dport, 1, true, false, decode_port_range},
    {"tcp-flags", O::tcp_flags, 2, true, false, decode_tcp_flags},
    {"syn", O::tcp_flags, 0, true, false, decode_syn},
    {"tcp-option", O::tcp_option, 1, true, false, decode_uint<255>},
};
constexpr option_spec udp_options[] = {
    {"source-port", O::udp_sport, 1, true, false, decode_port_range},
    {"sport", O::udp_sport, 1, true, false, decode_port_range},
    {"destination-port", O::udp_dport, 1, true, false, decode_port_range},
    {"dport", O::udp_dport, 1, true, false, decode_port_range},
};

constexpr option_spec connmark_target_options[] = {
    {"set-xmark", O::connmark_set_xmark, 1, false, false, decode_set_xmark},
    {"set-mark", O::connmark_set_mark, 1, false, false, decode_set_mark},
    {"and-mark", O::connmark_and_mark, 1, false, false, decode_and_mark},
    {"or-mark", O::connmark_or_mark, 1, false, false, decode_or_mark},
    {"xor-mark", O::connmark_xor_mark, 1, false, false, decode_xor_mark},
    {"save-mark", O::connmark_save_mark, 0, false, false, nullptr},
    {"restore-mark", O::connmark_restore_mark, 0, false, false, nullptr},
    {"left-shift-mark", O::connmark_left_shift_mark, 1, false, false, decode_uint<31>},
    {"right-shift-mark", O::connmark_right_shift_mark, 1, false, false, decode_uint<31>},
    {"mask", O::connmark_mask, 1, false, false, decode_uint<0xffffffff>},
    {"nfmask", O::connmark_nfmask, 1, false, false, decode_uint<0xffffffff>},
    {"ctmask", O::connmark_ctmask, 1, false, false, decode_uint<0xffffffff>},
};
constexpr option_spec dnat_options[] = {
    {"to-destination", O::nat_to_destination, 1, false, false, decode_nat_to},
    {"random", O::nat_random, 0, false, false, nullptr},
    {"persistent", O::nat_persistent, 0, false, false, nullptr},
};
constexpr option_spec snat_options[] = {
    {"to-source", O::nat_to_source, 1, false, false, decode_nat_to},
    {"random", O::nat_random, 0, false, false, nullptr},
    {"random-fully", O::nat_random_fully, 0, false, false, nullptr},
    {"persistent", O::nat_persistent, 0, false, false, nullptr},
};
constexpr option_spec masquerade_options[] = {
    {"to-ports", O::nat_to_ports, 1, false, false, decode_nat_ports},
    {"random", O::nat_random, 0, false, false, nullptr},
    {"random-fully", O::nat_random_fully, 0, false, false, nullptr},
};
constexpr option_spec redirect_options[] = {
    {"to-ports", O::nat_to_ports, 1, false, false, decode_nat_ports},
    {"random", O::nat_random, 0, false, false, nullptr},
};
constexpr option_spec log_options[] = {
    {"log-level", O::log_level, 1, false, false, decode_log_level},
    {"log-prefix", O::log_prefix, 1, false, false, decode_text<29, 1>},
    {"log-tcp-sequence", O::log_tcp_sequence, 0, false, false, nullptr},
    {"log-tcp-options", O::log_tcp_options, 0, false, false, nullptr},
    {"log-ip-options", O::log_ip_options, 0, false, false, nullptr},
    {"log-uid", O::log_uid, 0, false, false, nullptr},
    {"log-macdecode", O::log_macdecode, 0, false, false, nullptr},
};
constexpr option_spec mark_target_options[] = {
    {"set-xmark", O::mark_set_xmark, 1, false, false, decode_set_xmark},
    {"set-mark", O::mark_set_mark, 1, false, false, decode_set_mark},
    {"and-mark", O::mark_and_mark, 1, false, false, decode_and_mark},
    {"or-mark", O::mark_or_mark, 1, false, false, decode_or_mark},
    {"xor-mark", O::mark_xor_mark, 1, false, false, decode_xor_mark},
};
constexpr option_spec nflog_options[] = {
    {"nflog-group", O::nflog_group, 1, false, false, decode_uint<65535>},
    {"nflog-prefix", O::nflog_prefix, 1, false, false, decode_text<127, 1>},
    {"nflog-range", O::nflog_range, 1, false, false, decode_uint<0xffffffff>},
    {"nflog-size", O::nflog_size, 1, false, false, decode_uint<0xffffffff>},
    {"nflog-threshold", O::nflog_threshold, 1, false, false, decode_uint<65535, 1>},
};
constexpr option_spec reject_options[] = {
    {"reject-with", O::reject_with, 1, false, false, decode_reject_with},
};
constexpr option_spec tproxy_options[] = {
    {"on-port", O::tproxy_on_port, 1, false, false, decode_port},
    {"on-ip", O::tproxy_on_ip, 1, false, false, decode_host},
    {"tproxy-mark", O::tproxy_mark, 1, false, false, decode_mark},
};

// ---- final checks ------------------------------------------------------------------------------

const option* find(std::span<const option> opts, option_id id) noexcept {
  for (const auto& o : opts)
    if (o.id == id) return &o;
  return nullptr;
}
bool has(std::span<const option> opts, option_id id) noexcept { return find(opts, id) != nullptr; }

[[noreturn]] void check_fail(const check_input& in, std::string message,
                             error_code code = error_code::missing_argument) {
  throw value_error{code, in.where, std::move(message)};
}

void require(const check_input& in, option_id id, std::string_view what) {
  if (!has(in.options, id)) check_fail(in, fmt::format("{} needs {}", what, "--" + std::string(option_name(id))));
}

void require_protocol(const check_input& in, std::string_view module, std::initializer_list<std::uint8_t> protocols) {
  const auto& c = *in.context;
  bool ok = !c.protocol_negated && std::find(protocols.begin(), protocols.end(), c.protocol) != protocols.end();
  if (!ok)
    check_fail(in, fmt::format("{} is valid only with a matching `-p` protocol (not negated)", module),
               error_code::invalid_value);
}

void check_comment(const check_input& in) { require(in, O::comment_comment, "-m comment"); }
void check_mark(const check_input& in) { require(in, O::mark_mark, "-m mark"); }
void check_connmark(const check_input& in) { require(in, O::connmark_mark, "-m connmark"); }
void check_state(const check_input& in) { require(in, O::state_state, "-m state"); }
void check_nfacct(const check_input& in) { require(in, O::nfacct_name, "-m nfacct"); }
void check_set(const check_input& in) { require(in, O::set_match_set, "-m set"); }
void check_not_empty(const check_input& in) {
  if (in.options.empty()) check_fail(in, "this match needs at least one option");
}
void check_addrtype(const check_input& in) {
  if (!has(in.options, O::addrtype_src_type) && !has(in.options, O::addrtype_dst_type))
    check_fail(in, "-m addrtype needs --src-type or --dst-type");
  if (has(in.options, O::addrtype_limit_iface_in) && has(in.options, O::addrtype_limit_iface_out))
    check_fail(in, "--limit-iface-in and --limit-iface-out exclude each other", error_code::invalid_value);
}
void check_statistic(const check_input& in) {
  const option* mode = find(in.options, O::statistic_mode);
  if (mode == nullptr) check_fail(in, "-m statistic needs --mode");
  if (mode->number() == 0) {
    require(in, O::statistic_probability, "--mode random");
    if (has(in.options, O::statistic_every) || has(in.options, O::statistic_packet))
      check_fail(in, "--every and --packet belong to --mode nth", error_code::invalid_value);
  } else {
    require(in, O::statistic_every, "--mode nth");
    require(in, O::statistic_packet, "--every");  // iptables 1.8.9: "--every" also requires "--packet"
    if (has(in.options, O::statistic_probability))
      check_fail(in, "--probability belongs to --mode random", error_code::invalid_value);
    const option* packet = find(in.options, O::statistic_packet);
    if (packet != nullptr && packet->number() >= find(in.options, O::statistic_every)->number())
      check_fail(in, "--packet must be smaller than --every", error_code::invalid_value);
  }
}
void check_recent(const check_input& in) {
  int commands = 0;
  for (auto id : {O::recent_set, O::recent_rcheck, O::recent_update, O::recent_remove}) commands += has(in.options, id);
  if (commands != 1) check_fail(in, "-m recent needs exactly one of --set, --rcheck, --update, --remove");
  if ((has(in.options, O::recent_rttl) || has(in.options, O::recent_seconds) || has(in.options, O::recent_hitcount)) &&
      !has(in.options, O::recent_rcheck) && !has(in.options, O::recent_update))
    check_fail(in, "--seconds, --hitcount and --rttl work only with --rcheck or --update", error_code::invalid_value);
  if (has(in.options, O::recent_reap) && !has(in.options, O::recent_seconds))
    check_fail(in, "--reap needs --seconds", error_code::invalid_value);
  if (has(in.options, O::recent_rsource) && has(in.options, O::recent_rdest))
    check_fail(in, "--rsource and --rdest exclude each other", error_code::invalid_value);
}
void check_multiport(const check_input& in) {
  int given =
      has(in.options, O::multiport_sports) + has(in.options, O::multiport_dports) + has(in.options, O::multiport_ports);
  if (given != 1) check_fail(in, "-m multiport needs one of --sports, --dports, --ports");
  require_protocol(in, "-m multiport", {6, 17, 132, 33, 136});
}
void check_tcp(const check_input& in) { require_protocol(in, "-m tcp", {6}); }
void check_udp(const check_input& in) { require_protocol(in, "-m udp", {17}); }
void check_sctp(const check_input& in) { require_protocol(in, "-m sctp", {132}); }
void check_icmp(const check_input& in) { require_protocol(in, "-m icmp", {1}); }
void check_icmp6(const check_input& in) { require_protocol(in, "-m icmp6", {58}); }

bool nat_has_ports(std::span<const option> opts) {
  for (const auto& o : opts)
    if (o.kind == value_kind::nat_range && o.nat().has_ports) return true;
  return false;
}
void check_nat_protocol(const check_input& in, std::string_view what) {
  if (nat_has_ports(in.options)) require_protocol(in, what, {6, 17, 132, 33, 136});
}
void check_dnat(const check_input& in) {
  require(in, O::nat_to_destination, "-j DNAT");
  check_nat_protocol(in, "-j DNAT with ports");
}
void check_snat(const check_input& in) {
  require(in, O::nat_to_source, "-j SNAT");
  check_nat_protocol(in, "-j SNAT with ports");
}
void check_masquerade(const check_input& in) { check_nat_protocol(in, "-j MASQUERADE with ports"); }
void check_redirect(const check_input& in) { check_nat_protocol(in, "-j REDIRECT with ports"); }
void check_mark_target(const check_input& in) {
  if (in.options.empty())
    check_fail(in, "-j MARK needs one of --set-xmark, --set-mark, --and-mark, --or-mark, --xor-mark");
  if (in.options.size() > 1) check_fail(in, "-j MARK takes one of its options", error_code::invalid_value);
}
void check_connmark_target(const check_input& in) {
  int modes = 0;
  for (auto id : {O::connmark_set_xmark, O::connmark_set_mark, O::connmark_and_mark, O::connmark_or_mark,
                  O::connmark_xor_mark, O::connmark_save_mark, O::connmark_restore_mark})
    modes += has(in.options, id);
  if (modes != 1)
    check_fail(in, "-j CONNMARK needs exactly one of --set-xmark, --set-mark, --save-mark, --restore-mark, ...");
}
void check_reject(const check_input& in) {
  const option* with = find(in.options, O::reject_with);
  if (with != nullptr && reject_names[with->number()].name == "tcp-reset")
    require_protocol(in, "--reject-with tcp-reset", {6});
}
void check_tproxy(const check_input& in) {
  require(in, O::tproxy_on_port, "-j TPROXY");
  require_protocol(in, "-j TPROXY", {6, 17});
}

constexpr module_spec match_modules[] = {
    {"addrtype", module_id::addrtype, target_id::generic, addrtype_options, check_addrtype},
    {"comment", module_id::comment, target_id::generic, comment_options, check_comment},
    {"connmark", module_id::connmark, target_id::generic, connmark_options, check_connmark},
    {"conntrack", module_id::conntrack, target_id::generic, conntrack_options, check_not_empty},
    {"icmp", module_id::icmp, target_id::generic, icmp_options, check_icmp},
    {"icmp6", module_id::icmp6, target_id::generic, icmp6_options, check_icmp6},
    {"limit", module_id::limit, target_id::generic, limit_options, nullptr},
    {"mark", module_id::mark, target_id::generic, mark_options, check_mark},
    {"multiport", module_id::multiport, target_id::generic, multiport_options, check_multiport},
    {"nfacct", module_id::nfacct, target_id::generic, nfacct_options, check_nfacct},
    {"physdev", module_id::physdev, target_id::generic, physdev_options, check_not_empty},
    {"recent", module_id::recent, target_id::generic, recent_options, check_recent},
    {"sctp", module_id::sctp, target_id::generic, sctp_options, check_sctp},
    {"set", module_id::set, target_id::generic, set_options, check_set},
    {"state", module_id::state, target_id::generic, state_options, check_state},
    {"statistic", module_id::statistic, target_id::generic, statistic_options, check_statistic},
    {"tcp", module_id::tcp, target_id::generic, tcp_options, check_tcp},
    {"udp", module_id::udp, target_id::generic, udp_options, check_udp},
};

constexpr module_spec target_modules[] = {
    {"ACCEPT", module_id::generic, target_id::accept, {}, nullptr},
    {"DROP", module_id::generic, target_id::drop, {}, nullptr},
    {"RETURN", module_id::generic, target_id::return_, {}, nullptr},
    {"QUEUE", module_id::generic, target_id::queue, {}, nullptr},
    {"CONNMARK", module_id::generic, target_id::connmark, connmark_target_options, check_connmark_target},
    {"DNAT", module_id::generic, target_id::dnat, dnat_options, check_dnat},
    {"LOG", module_id::generic, target_id::log, log_options, nullptr},
    {"MARK", module_id::generic, target_id::mark, mark_target_options, check_mark_target},
    {"MASQUERADE", module_id::generic, target_id::masquerade, masquerade_options, check_masquerade},
    {"NFLOG", module_id::generic, target_id::nflog, nflog_options, nullptr},
    {"REDIRECT", module_id::generic, target_id::redirect, redirect_options, check_redirect},
    {"REJECT", module_id::generic, target_id::reject, reject_options, check_reject},
    {"SNAT", module_id::generic, target_id::snat, snat_options, check_snat},
    {"TPROXY", module_id::generic, target_id::tproxy, tproxy_options, check_tproxy},
};

// Extensions iptables 1.8.9 ships (libxt_*, libipt_*, libip6t_*) that nflens keeps generically.
constexpr std::string_view other_target_names[] = {
    "AUDIT", "CHECKSUM", "CLASSIFY",  "CLUSTERIP", "CONNSECMARK", "CT",       "DNPT",     "DSCP",    "ECN",
    "HL",    "HMARK",    "IDLETIMER", "LED",       "NETMAP",      "NFQUEUE",  "NOTRACK",  "RATEEST", "SECMARK",
    "SET",   "SNPT",     "SYNPROXY",  "TCPMSS",    "TCPOPTSTRIP", "TEE",      "TOS",      "TRACE",   "TTL",
    "ULOG",  "CONTINUE", "mark",      "snat",      "dnat",        "redirect", "arpreply", "mangle",  "classify",
};
constexpr std::string_view other_match_names[] = {
    "ah",     "bpf",     "cgroup",     "cluster", "connbytes", "connlabel", "connlimit",   "cpu", "dccp",   "devgroup",
    "dscp",   "dst",     "ecn",        "esp",     "eui64",     "frag",      "hashlimit",   "hbh", "helper", "hl",
    "ipcomp", "iprange", "ipv6header", "ipvs",    "length",    "mac",       "mh",          "osf", "owner",  "pkttype",
    "policy", "quota",   "rateest",    "realm",   "rpfilter",  "rt",        "socket",      "srh", "string", "tcpmss",
    "time",   "tos",     "ttl",        "u32",     "udplite",   "l2tp",      "ipv4options",
};

}  // namespace

namespace {

// Name lookups happen for every -m, -j and option of every rule: hash tables built once.
struct name_tables {
  std::unordered_map<std::string_view, const module_spec*> matches, targets;
  std::unordered_map<std::string_view, bool> other_targets, other_matches;
  name_tables() {
    for (const auto& m : match_modules) matches.emplace(m.name, &m);
    for (const auto& m : target_modules) targets.emplace(m.name, &m);
    for (auto n : other_target_names) other_targets.emplace(n, true);
    for (auto n : other_match_names) other_matches.emplace(n, true);
  }
};
const name_tables& names() {
  static const name_tables tables;
  return tables;
}

}  // namespace

std::string clip(std::string_view text) {
  if (text.size() <= 64) return std::string(text);
  return std::string(text.substr(0, 60)) + "...";
}

const module_spec* find_match_module(std::string_view name) noexcept {
  const auto& t = names().matches;
  const auto it = t.find(canonical_module_name(name));
  return it == t.end() ? nullptr : it->second;
}

const module_spec* find_target_module(std::string_view name) noexcept {
  if (name.size() > 12) return nullptr;
  const auto& t = names().targets;
  const auto it = t.find(name);
  return it == t.end() ? nullptr : it->second;
}

const option_spec* find_option(const module_spec& m, std::string_view name) noexcept {
  for (const auto& o : m.options)
    if (o.name.size() == name.size() && o.name == name) return &o;
  // getopt_long, which iptables parses with, takes a unique prefix of a long option (`--to` for
  // `--to-destination`, `--prob`); prefixes of two aliases of one option are one option
  const option_spec* found = nullptr;
  if (name.empty()) return nullptr;
  for (const auto& o : m.options) {
    if (!o.name.starts_with(name)) continue;
    if (found != nullptr && (found->id != o.id || found->arguments != o.arguments)) return nullptr;  // ambiguous
    if (found == nullptr) found = &o;
  }
  return found;
}

std::string_view implicit_module_name(std::uint8_t protocol) noexcept {
  switch (protocol) {
    case 6:
      return "tcp";
    case 17:
      return "udp";
    case 132:
      return "sctp";
    case 33:
      return "dccp";
    case 1:
      return "icmp";
    case 58:
      return "icmp6";
    case 136:
      return "udplite";
    case 50:
      return "esp";
    case 51:
      return "ah";
    case 135:
      return "mh";
    default:
      return {};
  }
}

std::string_view canonical_module_name(std::string_view name) noexcept {
  if (name == "icmpv6" || name == "ipv6-icmp") return "icmp6";
  return name;
}

bool is_known_target_extension(std::string_view name) noexcept {
  if (name.size() > 12) return false;  // the longest extension name is 11 bytes: most chains are longer
  return find_target_module(name) != nullptr || names().other_targets.count(name) != 0;
}

bool is_known_match_module(std::string_view name) noexcept {
  return find_match_module(name) != nullptr || names().other_matches.count(name) != 0;
}

}  // namespace detail

// ---------------------------------------------------------------------------------------------------
// Names

std::string_view option_name(option_id id) noexcept {
  using O = option_id;
  switch (id) {
    case O::generic:
      return {};
    case O::addrtype_src_type:
      return "src-type";
    case O::addrtype_dst_type:
      return "dst-type";
    case O::addrtype_limit_iface_in:
      return "limit-iface-in";
    case O::addrtype_limit_iface_out:
      return "limit-iface-out";
    case O::comment_comment:
      return "comment";
    case O::connmark_mark:
      return "mark";
    case O::conntrack_ctstate:
      return "ctstate";
    case O::conntrack_ctproto:
      return "ctproto";
    case O::conntrack_ctorigsrc:
      return "ctorigsrc";
    case O::conntrack_ctorigdst:
      return "ctorigdst";
    case O::conntrack_ctreplsrc:
      return "ctreplsrc";
    case O::conntrack_ctrepldst:
      return "ctrepldst";
    case O::conntrack_ctorigsrcport:
      return "ctorigsrcport";
    case O::conntrack_ctorigdstport:
      return "ctorigdstport";
    case O::conntrack_ctreplsrcport:
      return "ctreplsrcport";
    case O::conntrack_ctrepldstport:
      return "ctrepldstport";
    case O::conntrack_ctstatus:
      return "ctstatus";
    case O::conntrack_ctexpire:
      return "ctexpire";
    case O::conntrack_ctdir:
      return "ctdir";
    case O::icmp_type:
      return "icmp-type";
    case O::icmp6_type:
      return "icmpv6-type";
    case O::limit_limit:
      return "limit";
    case O::limit_burst:
      return "limit-burst";
    case O::mark_mark:
      return "mark";
    case O::multiport_sports:
      return "sports";
    case O::multiport_dports:
      return "dports";
    case O::multiport_ports:
      return "ports";
    case O::nfacct_name:
      return "nfacct-name";
    case O::physdev_in:
      return "physdev-in";
    case O::physdev_out:
      return "physdev-out";
    case O::physdev_is_in:
      return "physdev-is-in";
    case O::physdev_is_out:
      return "physdev-is-out";
    case O::physdev_is_bridged:
      return "physdev-is-bridged";
    case O::recent_set:
      return "set";
    case O::recent_rcheck:
      return "rcheck";
    case O::recent_update:
      return "update";
    case O::recent_remove:
      return "remove";
    case O::recent_seconds:
      return "seconds";
    case O::recent_reap:
      return "reap";
    case O::recent_hitcount:
      return "hitcount";
    case O::recent_rttl:
      return "rttl";
    case O::recent_name:
      return "name";
    case O::recent_mask:
      return "mask";
    case O::recent_rsource:
      return "rsource";
    case O::recent_rdest:
      return "rdest";
    case O::sctp_sport:
      return "sport";
    case O::sctp_dport:
      return "dport";
    case O::sctp_chunk_types:
      return "chunk-types";
    case O::set_match_set:
      return "match-set";
    case O::set_return_nomatch:
      return "return-nomatch";
    case O::set_update_counters:
      return "update-counters";
    case O::set_update_subcounters:
      return "update-subcounters";
    case O::set_packets_eq:
      return "packets-eq";
    case O::set_packets_lt:
      return "packets-lt";
    case O::set_packets_gt:
      return "packets-gt";
    case O::set_bytes_eq:
      return "bytes-eq";
    case O::set_bytes_lt:
      return "bytes-lt";
    case O::set_bytes_gt:
      return "bytes-gt";
    case O::state_state:
      return "state";
    case O::statistic_mode:
      return "mode";
    case O::statistic_probability:
      return "probability";
    case O::statistic_every:
      return "every";
    case O::statistic_packet:
      return "packet";
    case O::tcp_sport:
      return "sport";
    case O::tcp_dport:
      return "dport";
    case O::tcp_flags:
      return "tcp-flags";
    case O::tcp_option:
      return "tcp-option";
    case O::udp_sport:
      return "sport";
    case O::udp_dport:
      return "dport";
    case O::connmark_set_xmark:
      return "set-xmark";
    case O::connmark_set_mark:
      return "set-mark";
    case O::connmark_save_mark:
      return "save-mark";
    case O::connmark_restore_mark:
      return "restore-mark";
    case O::connmark_and_mark:
      return "and-mark";
    case O::connmark_or_mark:
      return "or-mark";
    case O::connmark_xor_mark:
      return "xor-mark";
    case O::connmark_left_shift_mark:
      return "left-shift-mark";
    case O::connmark_right_shift_mark:
      return "right-shift-mark";
    case O::connmark_mask:
      return "mask";
    case O::connmark_nfmask:
      return "nfmask";
    case O::connmark_ctmask:
      return "ctmask";
    case O::nat_to_destination:
      return "to-destination";
    case O::nat_to_source:
      return "to-source";
    case O::nat_to_ports:
      return "to-ports";
    case O::nat_random:
      return "random";
    case O::nat_random_fully:
      return "random-fully";
    case O::nat_persistent:
      return "persistent";
    case O::log_level:
      return "log-level";
    case O::log_prefix:
      return "log-prefix";
    case O::log_tcp_sequence:
      return "log-tcp-sequence";
    case O::log_tcp_options:
      return "log-tcp-options";
    case O::log_ip_options:
      return "log-ip-options";
    case O::log_uid:
      return "log-uid";
    case O::log_macdecode:
      return "log-macdecode";
    case O::mark_set_xmark:
      return "set-xmark";
    case O::mark_set_mark:
      return "set-mark";
    case O::mark_and_mark:
      return "and-mark";
    case O::mark_or_mark:
      return "or-mark";
    case O::mark_xor_mark:
      return "xor-mark";
    case O::nflog_group:
      return "nflog-group";
    case O::nflog_prefix:
      return "nflog-prefix";
    case O::nflog_range:
      return "nflog-range";
    case O::nflog_size:
      return "nflog-size";
    case O::nflog_threshold:
      return "nflog-threshold";
    case O::reject_with:
      return "reject-with";
    case O::tproxy_on_port:
      return "on-port";
    case O::tproxy_on_ip:
      return "on-ip";
    case O::tproxy_mark:
      return "tproxy-mark";
  }
  return {};
}

std::string_view name(const option& o) noexcept {
  return o.id == option_id::generic ? o.generic_value().name : option_name(o.id);
}

// ---------------------------------------------------------------------------------------------------
// Typed accessors

namespace {

template <typename F>
void each(std::span<const option> opts, F&& f) {
  for (const auto& o : opts) f(o);
}

}  // namespace

std::optional<comment_match> as_comment(const match& m) noexcept {
  if (m.id != module_id::comment) return std::nullopt;
  comment_match r;
  each(m.options(), [&](const option& o) {
    if (o.id == option_id::comment_comment) r.text = o.text();
  });
  return r;
}

std::optional<statistic_match> as_statistic(const match& m) noexcept {
  if (m.id != module_id::statistic) return std::nullopt;
  statistic_match r;
  each(m.options(), [&](const option& o) {
    switch (o.id) {
      case option_id::statistic_mode:
        r.mode = o.number() ? statistic_mode::nth : statistic_mode::random;
        break;
      case option_id::statistic_probability:
        r.probability_fixed = static_cast<std::uint32_t>(o.number());
        r.negated = r.negated || o.negated;
        break;
      case option_id::statistic_every:
        r.every = static_cast<std::uint32_t>(o.number());
        r.negated = r.negated || o.negated;
        break;
      case option_id::statistic_packet:
        r.packet = static_cast<std::uint32_t>(o.number());
        break;
      default:
        break;
    }
  });
  return r;
}

std::optional<recent_match> as_recent(const match& m, ip_family family) noexcept {
  if (m.id != module_id::recent) return std::nullopt;
  recent_match r;
  r.mask = mask_of(family, max_prefix_length(family));
  each(m.options(), [&](const option& o) {
    switch (o.id) {
      case option_id::recent_set:
        r.command = recent_command::set;
        r.negated = o.negated;
        break;
      case option_id::recent_rcheck:
        r.command = recent_command::rcheck;
        r.negated = o.negated;
        break;
      case option_id::recent_update:
        r.command = recent_command::update;
        r.negated = o.negated;
        break;
      case option_id::recent_remove:
        r.command = recent_command::remove;
        r.negated = o.negated;
        break;
      case option_id::recent_seconds:
        r.seconds = static_cast<std::uint32_t>(o.number());
        break;
      case option_id::recent_reap:
        r.reap = true;
        break;
      case option_id::recent_hitcount:
        r.hitcount = static_cast<std::uint32_t>(o.number());
        break;
      case option_id::recent_rttl:
        r.rttl = true;
        break;
      case option_id::recent_name:
        r.name = o.text();
        break;
      case option_id::recent_mask:
        r.mask = o.address().address;
        break;
      case option_id::recent_rsource:
        r.rsource = true;
        break;
      case option_id::recent_rdest:
        r.rsource = false;
        break;
      default:
        break;
    }
  });
  return r;
}

namespace {
std::optional<mark_match> mark_of(const match& m, module_id id, option_id opt) noexcept {
  if (m.id != id) return std::nullopt;
  mark_match r;
  each(m.options(), [&](const option& o) {
    if (o.id == opt) {
      r.value = o.first();
      r.mask = o.second();
      r.negated = o.negated;
    }
  });
  return r;
}
}  // namespace

std::optional<mark_match> as_mark(const match& m) noexcept { return mark_of(m, module_id::mark, option_id::mark_mark); }
std::optional<mark_match> as_connmark(const match& m) noexcept {
  return mark_of(m, module_id::connmark, option_id::connmark_mark);
}

std::optional<state_match> as_state(const match& m) noexcept {
  if (m.id != module_id::state) return std::nullopt;
  state_match r;
  each(m.options(), [&](const option& o) {
    if (o.id == option_id::state_state) {
      r.states = static_cast<std::uint16_t>(o.number());
      r.negated = o.negated;
    }
  });
  return r;
}

std::optional<conntrack_match> as_conntrack(const match& m) noexcept {
  if (m.id != module_id::conntrack) return std::nullopt;
  conntrack_match r;
  each(m.options(), [&](const option& o) {
    using O = option_id;
    switch (o.id) {
      case O::conntrack_ctstate:
        r.state = static_cast<std::uint16_t>(o.number());
        r.state_negated = o.negated;
        break;
      case O::conntrack_ctproto:
        r.protocol = static_cast<std::uint8_t>(o.number());
        r.protocol_negated = o.negated;
        break;
      case O::conntrack_ctorigsrc:
        r.orig_source = {o.address(), o.negated};
        break;
      case O::conntrack_ctorigdst:
        r.orig_destination = {o.address(), o.negated};
        break;
      case O::conntrack_ctreplsrc:
        r.reply_source = {o.address(), o.negated};
        break;
      case O::conntrack_ctrepldst:
        r.reply_destination = {o.address(), o.negated};
        break;
      case O::conntrack_ctorigsrcport:
        r.orig_source_port = {o.ports(), o.negated};
        break;
      case O::conntrack_ctorigdstport:
        r.orig_destination_port = {o.ports(), o.negated};
        break;
      case O::conntrack_ctreplsrcport:
        r.reply_source_port = {o.ports(), o.negated};
        break;
      case O::conntrack_ctrepldstport:
        r.reply_destination_port = {o.ports(), o.negated};
        break;
      case O::conntrack_ctstatus:
        r.status = static_cast<std::uint16_t>(o.number());
        r.status_negated = o.negated;
        break;
      case O::conntrack_ctexpire:
        r.expire = std::pair{o.first(), o.second()};
        r.expire_negated = o.negated;
        break;
      case O::conntrack_ctdir:
        r.direction_reply = o.number() != 0;
        break;
      default:
        break;
    }
  });
  return r;
}

std::optional<multiport_match> as_multiport(const match& m) noexcept {
  if (m.id != module_id::multiport) return std::nullopt;
  multiport_match r;
  each(m.options(), [&](const option& o) {
    switch (o.id) {
      case option_id::multiport_sports:
        r.direction = multiport_direction::source;
        break;
      case option_id::multiport_dports:
        r.direction = multiport_direction::destination;
        break;
      case option_id::multiport_ports:
        r.direction = multiport_direction::either;
        break;
      default:
        return;
    }
    r.ports = o.port_list();
    r.negated = o.negated;
  });
  return r;
}

std::optional<addrtype_match> as_addrtype(const match& m) noexcept {
  if (m.id != module_id::addrtype) return std::nullopt;
  addrtype_match r;
  each(m.options(), [&](const option& o) {
    switch (o.id) {
      case option_id::addrtype_src_type:
        r.source_types = static_cast<std::uint16_t>(o.number());
        r.source_negated = o.negated;
        break;
      case option_id::addrtype_dst_type:
        r.destination_types = static_cast<std::uint16_t>(o.number());
        r.destination_negated = o.negated;
        break;
      case option_id::addrtype_limit_iface_in:
        r.limit_iface_in = true;
        break;
      case option_id::addrtype_limit_iface_out:
        r.limit_iface_out = true;
        break;
      default:
        break;
    }
  });
  return r;
}

namespace {
void fill_ports(port_match& r, const option& o, option_id sport, option_id dport) {
  if (o.id == sport) {
    r.source = o.ports();
    r.source_negated = o.negated;
  } else if (o.id == dport) {
    r.destination = o.ports();
    r.destination_negated = o.negated;
  }
}
}  // namespace

std::optional<tcp_match> as_tcp(const match& m) noexcept {
  if (m.id != module_id::tcp) return std::nullopt;
  tcp_match r;
  each(m.options(), [&](const option& o) {
    fill_ports(r, o, option_id::tcp_sport, option_id::tcp_dport);
    if (o.id == option_id::tcp_flags)
      r.tcp_flags =
          tcp_match::flags{static_cast<std::uint8_t>(o.first()), static_cast<std::uint8_t>(o.second()), o.negated};
    if (o.id == option_id::tcp_option) {
      r.tcp_option = static_cast<std::uint8_t>(o.number());
      r.tcp_option_negated = o.negated;
    }
  });
  return r;
}

std::optional<port_match> as_udp(const match& m) noexcept {
  if (m.id != module_id::udp) return std::nullopt;
  port_match r;
  each(m.options(), [&](const option& o) { fill_ports(r, o, option_id::udp_sport, option_id::udp_dport); });
  return r;
}

std::optional<sctp_match> as_sctp(const match& m) noexcept {
  if (m.id != module_id::sctp) return std::nullopt;
  sctp_match r;
  each(m.options(), [&](const option& o) {
    fill_ports(r, o, option_id::sctp_sport, option_id::sctp_dport);
    if (o.id == option_id::sctp_chunk_types) {
      r.chunk_types = o.text();
      r.chunk_types_negated = o.negated;
    }
  });
  return r;
}

namespace {
std::optional<icmp_match> icmp_of(const match& m, module_id id) noexcept {
  if (m.id != id) return std::nullopt;
  icmp_match r;
  each(m.options(), [&](const option& o) {
    if (o.id == option_id::icmp_type || o.id == option_id::icmp6_type) {
      const auto v = o.number();
      r.type = static_cast<std::uint8_t>(v);
      r.code_min = static_cast<std::uint8_t>(v >> 8);
      r.code_max = static_cast<std::uint8_t>(v >> 16);
      r.any = ((v >> 24) & 1) != 0;
      r.negated = o.negated;
    }
  });
  return r;
}
}  // namespace

std::optional<icmp_match> as_icmp(const match& m) noexcept { return icmp_of(m, module_id::icmp); }
std::optional<icmp_match> as_icmp6(const match& m) noexcept { return icmp_of(m, module_id::icmp6); }

std::optional<set_match> as_set(const match& m) noexcept {
  if (m.id != module_id::set) return std::nullopt;
  set_match r;
  each(m.options(), [&](const option& o) {
    switch (o.id) {
      case option_id::set_match_set:
        r.set = o.set();
        r.negated = o.negated;
        break;
      case option_id::set_return_nomatch:
        r.return_nomatch = true;
        break;
      case option_id::set_update_counters:
        r.update_counters = !o.negated;
        break;
      case option_id::set_update_subcounters:
        r.update_subcounters = !o.negated;
        break;
      default:
        break;
    }
  });
  return r;
}

std::optional<limit_match> as_limit(const match& m) noexcept {
  if (m.id != module_id::limit) return std::nullopt;
  limit_match r;
  each(m.options(), [&](const option& o) {
    if (o.id == option_id::limit_limit) r.average = static_cast<std::uint32_t>(o.number());
    if (o.id == option_id::limit_burst) r.burst = static_cast<std::uint32_t>(o.number());
  });
  // iptables-nft makes the limit an nft limit, and the kernel (nft_limit_init) gives a burst of 0 the
  // default of 5, which iptables-save leaves out (xt_limit of iptables-legacy refuses 0)
  if (r.burst == 0) r.burst = 5;
  return r;
}

std::optional<physdev_match> as_physdev(const match& m) noexcept {
  if (m.id != module_id::physdev) return std::nullopt;
  physdev_match r;
  each(m.options(), [&](const option& o) {
    switch (o.id) {
      case option_id::physdev_in:
        r.in = o.text();
        r.in_negated = o.negated;
        break;
      case option_id::physdev_out:
        r.out = o.text();
        r.out_negated = o.negated;
        break;
      case option_id::physdev_is_in:
        r.is_in = !o.negated;
        break;
      case option_id::physdev_is_out:
        r.is_out = !o.negated;
        break;
      case option_id::physdev_is_bridged:
        r.is_bridged = !o.negated;
        break;
      default:
        break;
    }
  });
  return r;
}

std::optional<nfacct_match> as_nfacct(const match& m) noexcept {
  if (m.id != module_id::nfacct) return std::nullopt;
  nfacct_match r;
  each(m.options(), [&](const option& o) {
    if (o.id == option_id::nfacct_name) r.name = o.text();
  });
  return r;
}

std::optional<nat_target> as_nat(const target& t) noexcept {
  if (t.id != target_id::dnat && t.id != target_id::snat && t.id != target_id::masquerade &&
      t.id != target_id::redirect)
    return std::nullopt;
  nat_target r;
  each(t.options, [&](const option& o) {
    switch (o.id) {
      case option_id::nat_to_destination:
      case option_id::nat_to_source:
      case option_id::nat_to_ports:
        r.range = o.nat();
        break;
      case option_id::nat_random:
        r.random = true;
        break;
      case option_id::nat_random_fully:
        r.random_fully = true;
        break;
      case option_id::nat_persistent:
        r.persistent = true;
        break;
      default:
        break;
    }
  });
  return r;
}

std::optional<mark_target> as_mark(const target& t) noexcept {
  if (t.id != target_id::mark) return std::nullopt;
  mark_target r;
  each(t.options, [&](const option& o) {
    if (o.kind == value_kind::pair) {
      r.value = o.first();
      r.mask = o.second();
    }
  });
  return r;
}

std::optional<connmark_target> as_connmark(const target& t) noexcept {
  if (t.id != target_id::connmark) return std::nullopt;
  connmark_target r;
  each(t.options, [&](const option& o) {
    using O = option_id;
    switch (o.id) {
      case O::connmark_set_xmark:
      case O::connmark_set_mark:
      case O::connmark_and_mark:
      case O::connmark_or_mark:
      case O::connmark_xor_mark:
        r.mode = connmark_mode::set;
        r.value = o.first();
        r.mask = o.second();
        break;
      case O::connmark_save_mark:
        r.mode = connmark_mode::save;
        break;
      case O::connmark_restore_mark:
        r.mode = connmark_mode::restore;
        break;
      case O::connmark_mask:
        r.nfmask = r.ctmask = static_cast<std::uint32_t>(o.number());
        break;
      case O::connmark_nfmask:
        r.nfmask = static_cast<std::uint32_t>(o.number());
        break;
      case O::connmark_ctmask:
        r.ctmask = static_cast<std::uint32_t>(o.number());
        break;
      case O::connmark_left_shift_mark:
        r.left_shift = static_cast<std::uint8_t>(o.number());
        break;
      case O::connmark_right_shift_mark:
        r.right_shift = static_cast<std::uint8_t>(o.number());
        break;
      default:
        break;
    }
  });
  return r;
}

std::optional<reject_target> as_reject(const target& t, ip_family family) noexcept {
  if (t.id != target_id::reject) return std::nullopt;
  reject_target r;
  r.with = family == ip_family::ipv4 ? "icmp-port-unreachable" : "icmp6-port-unreachable";
  r.code = family == ip_family::ipv4 ? 3 : 4;
  each(t.options, [&](const option& o) {
    if (o.id != option_id::reject_with || o.number() >= detail::reject_names.size()) return;
    const auto& n = detail::reject_names[o.number()];
    r.with = n.name;
    r.tcp_reset = n.code == detail::tcp_reset_code;
    r.code = r.tcp_reset ? 0 : n.code;
  });
  return r;
}

std::optional<log_target> as_log(const target& t) noexcept {
  if (t.id != target_id::log) return std::nullopt;
  log_target r;
  each(t.options, [&](const option& o) {
    using O = option_id;
    switch (o.id) {
      case O::log_level:
        r.level = static_cast<std::uint8_t>(o.number());
        break;
      case O::log_prefix:
        r.prefix = o.text();
        break;
      case O::log_tcp_sequence:
        r.tcp_sequence = true;
        break;
      case O::log_tcp_options:
        r.tcp_options = true;
        break;
      case O::log_ip_options:
        r.ip_options = true;
        break;
      case O::log_uid:
        r.uid = true;
        break;
      case O::log_macdecode:
        r.macdecode = true;
        break;
      default:
        break;
    }
  });
  return r;
}

std::optional<nflog_target> as_nflog(const target& t) noexcept {
  if (t.id != target_id::nflog) return std::nullopt;
  nflog_target r;
  each(t.options, [&](const option& o) {
    using O = option_id;
    switch (o.id) {
      case O::nflog_group:
        r.group = static_cast<std::uint16_t>(o.number());
        break;
      case O::nflog_prefix:
        r.prefix = o.text();
        break;
      case O::nflog_range:
      case O::nflog_size:
        r.size = static_cast<std::uint32_t>(o.number());
        break;
      case O::nflog_threshold:
        r.threshold = static_cast<std::uint16_t>(o.number());
        break;
      default:
        break;
    }
  });
  return r;
}

std::optional<tproxy_target> as_tproxy(const target& t) noexcept {
  if (t.id != target_id::tproxy) return std::nullopt;
  tproxy_target r;
  each(t.options, [&](const option& o) {
    using O = option_id;
    switch (o.id) {
      case O::tproxy_on_port:
        r.port = static_cast<std::uint16_t>(o.number());
        break;
      case O::tproxy_on_ip:
        r.address = o.address().address;
        break;
      case O::tproxy_mark:
        r.mark = o.first();
        r.mask = o.second();
        break;
      default:
        break;
    }
  });
  return r;
}

}  // namespace nflens::iptables
