// SPDX-License-Identifier: MIT
// The words of nft's vocabularies (value → word), priority resolution, and the kernel's and nft's limits on
// limits, quotas and ct objects.

#include <nflens/nft.hpp>

#include "nft/vocabulary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <span>

namespace nflens::nft {

std::string_view name(family v) noexcept { return vocab::spelling(vocab::families, v); }
std::string_view name(hook v) noexcept { return vocab::spelling(vocab::hooks, v); }
std::string_view name(chain_type v) noexcept { return vocab::spelling(vocab::chain_types, v); }
std::string_view name(priority_name v) noexcept { return vocab::spelling(vocab::priority_names, v); }
std::string_view name(chain_policy v) noexcept {
  switch (v) {
    case chain_policy::accept:
      return "accept";
    case chain_policy::drop:
      return "drop";
    case chain_policy::unspecified:
      break;
  }
  return {};
}
std::string_view name(verdict v) noexcept {
  switch (v) {
    case verdict::accept:
      return "accept";
    case verdict::drop:
      return "drop";
    case verdict::continue_:
      return "continue";
    case verdict::return_:
      return "return";
    case verdict::jump:
      return "jump";
    case verdict::goto_:
      return "goto";
  }
  return {};
}
std::string_view name(relational_op v) noexcept {
  switch (v) {
    case relational_op::implicit:
      return {};
    case relational_op::eq:
      return "==";
    case relational_op::neq:
      return "!=";
    case relational_op::lt:
      return "<";
    case relational_op::gt:
      return ">";
    case relational_op::lte:
      return "<=";
    case relational_op::gte:
      return ">=";
    case relational_op::neg:
      return "!";
  }
  return {};
}
std::string_view name(binop v) noexcept {
  switch (v) {
    case binop::and_:
      return "&";
    case binop::or_:
      return "|";
    case binop::xor_:
      return "^";
    case binop::lshift:
      return "<<";
    case binop::rshift:
      return ">>";
  }
  return {};
}
std::string_view name(header v) noexcept { return vocab::spelling(vocab::header_names, v); }
std::string_view name(meta_key v) noexcept {
  const auto u = vocab::spelling(vocab::meta_keys_unqualified, v);
  return u.empty() ? vocab::spelling(vocab::meta_keys_qualified, v) : u;
}
std::string_view name(ct_key v) noexcept { return vocab::spelling(vocab::ct_keys, v); }
std::string_view name(ct_direction v) noexcept {
  switch (v) {
    case ct_direction::original:
      return "original";
    case ct_direction::reply:
      return "reply";
    case ct_direction::none:
      break;
  }
  return {};
}
std::string_view name(nfproto v) noexcept {
  switch (v) {
    case nfproto::ip:
      return "ip";
    case nfproto::ip6:
      return "ip6";
    case nfproto::none:
      break;
  }
  return {};
}
std::string_view name(fib_result v) noexcept { return vocab::spelling(vocab::fib_results, v); }
std::string_view name(rt_key v) noexcept { return vocab::spelling(vocab::rt_keys, v); }
std::string_view name(socket_key v) noexcept { return vocab::spelling(vocab::socket_keys, v); }
std::string_view name(osf_key v) noexcept { return v == osf_key::name ? "name" : "version"; }
std::string_view name(ipsec_key v) noexcept {
  switch (v) {
    case ipsec_key::reqid:
      return "reqid";
    case ipsec_key::spi:
      return "spi";
    case ipsec_key::saddr:
      return "saddr";
    case ipsec_key::daddr:
      return "daddr";
  }
  return {};
}
std::string_view name(numgen_type v) noexcept { return v == numgen_type::inc ? "inc" : "random"; }
std::string_view name(hash_kind v) noexcept { return v == hash_kind::jhash ? "jhash" : "symhash"; }
std::string_view name(tunnel v) noexcept {
  switch (v) {
    case tunnel::vxlan:
      return "vxlan";
    case tunnel::geneve:
      return "geneve";
    case tunnel::gre:
      return "gre";
    case tunnel::gretap:
      return "gretap";
    case tunnel::none:
      break;
  }
  return {};
}
std::string_view name(payload_base v) noexcept {
  switch (v) {
    case payload_base::ll:
      return "ll";
    case payload_base::nh:
      return "nh";
    case payload_base::th:
      return "th";
    case payload_base::ih:
      return "ih";
  }
  return {};
}
std::string_view name(time_unit v) noexcept { return vocab::spelling(vocab::time_units, v); }
std::string_view name(log_level v) noexcept { return vocab::spelling(vocab::log_levels, v); }
std::string_view name(reject_type v) noexcept {
  switch (v) {
    case reject_type::icmp:
      return "icmp";
    case reject_type::icmpv6:
      return "icmpv6";
    case reject_type::icmpx:
      return "icmpx";
    case reject_type::tcp_reset:
      return "tcp reset";
    case reject_type::unspecified:
      break;
  }
  return {};
}
std::string_view name(nat_kind v) noexcept {
  switch (v) {
    case nat_kind::snat:
      return "snat";
    case nat_kind::dnat:
      return "dnat";
    case nat_kind::masquerade:
      return "masquerade";
    case nat_kind::redirect:
      return "redirect";
  }
  return {};
}
std::string_view name(set_op v) noexcept {
  switch (v) {
    case set_op::add:
      return "add";
    case set_op::update:
      return "update";
    case set_op::delete_:
      return "delete";
  }
  return {};
}
std::string_view name(object_type v) noexcept { return vocab::spelling(vocab::object_types, v); }
std::string_view name(set_policy v) noexcept {
  switch (v) {
    case set_policy::performance:
      return "performance";
    case set_policy::memory:
      return "memory";
    case set_policy::unspecified:
      break;
  }
  return {};
}
std::string_view name(command_verb v) noexcept {
  switch (v) {
    case command_verb::add:
      return "add";
    case command_verb::create:
      return "create";
    case command_verb::insert:
      return "insert";
    case command_verb::replace:
      return "replace";
    case command_verb::delete_:
      return "delete";
    case command_verb::destroy:
      return "destroy";
    case command_verb::flush:
      return "flush";
    case command_verb::reset:
      return "reset";
    case command_verb::rename:
      return "rename";
    case command_verb::list:
      return "list";
    case command_verb::get:
      return "get";
    case command_verb::describe:
      return "describe";
    case command_verb::monitor:
      return "monitor";
    case command_verb::import:
      return "import";
    case command_verb::export_:
      return "export";
  }
  return {};
}
std::string_view name(command_object v) noexcept {
  switch (v) {
    case command_object::table:
      return "table";
    case command_object::chain:
      return "chain";
    case command_object::rule:
      return "rule";
    case command_object::set:
      return "set";
    case command_object::map:
      return "map";
    case command_object::element:
      return "element";
    case command_object::flowtable:
      return "flowtable";
    case command_object::object:
      return "object";
    case command_object::ruleset:
      return "ruleset";
    case command_object::other:
      return "other";
  }
  return {};
}
std::string_view name(xt_kind v) noexcept {
  switch (v) {
    case xt_kind::match:
      return "match";
    case xt_kind::target:
      return "target";
    case xt_kind::watcher:
      return "watcher";
  }
  return {};
}

std::string_view field_name(header h, header_field f) noexcept {
  if (f == header_field::none) return {};
  for (const auto& w : vocab::fields_of(h))
    if (w.value == f) return w.text;
  return {};
}

std::string_view option_name(header h, std::uint8_t option) noexcept {
  switch (h) {
    case header::tcp_option:
      return vocab::spelling(vocab::tcp_option_kinds, option);
    case header::ip_option:
      return vocab::spelling(vocab::ip_option_types, option);
    case header::sctp_chunk:
      return vocab::spelling(vocab::sctp_chunk_types, option);
    case header::exthdr:
      return vocab::spelling(vocab::exthdr_keys, static_cast<header>(option));
    default:
      return {};
  }
}

std::optional<family> parse_family(std::string_view word) noexcept { return vocab::lookup(vocab::families, word); }
std::optional<hook> parse_hook(std::string_view word) noexcept { return vocab::lookup(vocab::hooks, word); }
std::optional<meta_key> parse_meta_key(std::string_view word) noexcept {
  if (auto k = vocab::lookup(vocab::meta_keys_unqualified, word)) return k;
  return vocab::lookup(vocab::meta_keys_qualified, word);
}
std::optional<ct_key> parse_ct_key(std::string_view word) noexcept { return vocab::lookup(vocab::ct_keys, word); }

namespace vocab {
std::optional<std::string_view> limit_refusal(const limit_stmt& l) noexcept {
  if (l.rate == 0) return "a limit rate of 0 is refused by the kernel (nft_limit_init: EINVAL)";
  static constexpr std::uint64_t seconds[] = {1, 60, 3600, 86400, 604800};
  const std::uint64_t unit = seconds[static_cast<std::size_t>(l.unit)];
  constexpr std::uint64_t max = UINT64_MAX;
  constexpr std::uint64_t nsec = 1000000000;
  constexpr std::string_view overflow =
      "the kernel refuses this limit: its token bucket overflows 64 bits of nanoseconds (nft_limit_init: EOVERFLOW)";
  const std::uint64_t nsecs = unit * nsec;  // at most a week: no overflow
  const std::uint64_t burst = !l.bytes && l.burst == 0 ? 5 : l.burst.get();
  if (l.rate + burst < l.rate) return overflow;
  if (!l.bytes) {
    const std::uint64_t per = nsecs / l.rate;
    if (burst != 0 && per > max / burst) return overflow;
  } else if (nsecs > max / (l.rate + burst)) {
    return overflow;
  }
  return std::nullopt;
}
std::optional<std::string_view> quota_refusal(const quota_stmt& q) noexcept {
  if (q.bytes > std::uint64_t{INT64_MAX})
    return "a quota over 9223372036854775807 bytes is refused by the kernel (nft_quota_do_init: EOVERFLOW)";
  if (q.used > q.bytes)
    return "a quota that has used more than its bytes is refused by the kernel (nft_quota_do_init: EINVAL)";
  return std::nullopt;
}

std::optional<std::string> ct_helper_name_problem(std::string_view type) {
  if (type.size() <= 15) return std::nullopt;
  return fmt::format("the helper name '{}' is {} bytes; at most 15 (nft: \"invalid name '{}', max length is 16\")", type,
                     type.size(), type);
}
std::optional<std::string> ct_timeout_state_problem(std::string_view protocol, std::string_view state) {
  static constexpr std::string_view tcp[] = {"syn_sent",  "syn_recv", "established", "fin_wait", "close_wait", "last_ack",
                                             "time_wait", "close",    "syn_sent2",   "retrans",  "unack"};
  static constexpr std::string_view udp[] = {"unreplied", "replied"};
  const std::span<const std::string_view> names = protocol == "tcp"   ? std::span(tcp)
                                                  : protocol == "udp" ? std::span(udp)
                                                                      : std::span<const std::string_view>();
  if (std::find(names.begin(), names.end(), state) != names.end()) return std::nullopt;
  return fmt::format("`{}` is no {} state of a ct timeout policy (nft: \"invalid state for this protocol\")", state,
                     protocol);
}
std::optional<std::string> ct_expectation_problem(const ct_expectation_object& x, std::string_view name) {
  if (!x.protocol.empty() && x.dport != 0 && x.timeout_ms != 0 && x.size != 0) return std::nullopt;
  return fmt::format("ct expectation object '{}' needs a protocol, and a dport, a timeout and a size that are not 0 "
                     "(nft: \"missing options\")",
                     name);
}

bool priority_name_fits(priority_name n, family f, hook h, bool old) noexcept {
  if (n == priority_name::numeric) return true;
  if (f == family::bridge) {
    switch (n) {
      case priority_name::dstnat:
        return h == hook::prerouting;
      case priority_name::filter:
        return true;
      case priority_name::out:
        return h == hook::output;
      case priority_name::srcnat:
        return h == hook::postrouting;
      default:
        return false;
    }
  }
  const bool inet_like = f == family::inet || f == family::ip || f == family::ip6;
  switch (n) {
    case priority_name::filter:
      return inet_like || f == family::arp || f == family::netdev;
    case priority_name::raw:
    case priority_name::mangle:
    case priority_name::security:
      return inet_like;
    case priority_name::dstnat:
      return inet_like && (h == hook::prerouting || (h == hook::output && !old));
    case priority_name::srcnat:
      return inet_like && ((h == hook::input && !old) || h == hook::postrouting);
    default:
      return false;
  }
}
}  // namespace vocab

std::optional<std::int32_t> priority_value(const priority& p, family f) noexcept {
  // nft(8) "table 6. Standard priority names, family and hook compatibility matrix" and the bridge table.
  const bool bridge = f == family::bridge;
  std::int32_t base = 0;
  switch (p.name) {
    case priority_name::numeric:
      return p.offset;
    case priority_name::raw:
      if (bridge) return std::nullopt;
      base = -300;
      break;
    case priority_name::mangle:
      if (bridge) return std::nullopt;
      base = -150;
      break;
    case priority_name::dstnat:
      base = bridge ? -300 : -100;
      break;
    case priority_name::filter:
      base = bridge ? -200 : 0;
      break;
    case priority_name::security:
      if (bridge) return std::nullopt;
      base = 50;
      break;
    case priority_name::srcnat:
      base = bridge ? 300 : 100;
      break;
    case priority_name::out:
      if (!bridge) return std::nullopt;
      base = 100;
      break;
  }
  const std::int64_t v = std::int64_t{base} + p.offset;
  if (v < INT32_MIN || v > INT32_MAX) return std::nullopt;
  return static_cast<std::int32_t>(v);
}

}  // namespace nflens::nft
