// SPDX-License-Identifier: MIT
// Vocabulary of iptables(8) and lookups over a ruleset.
#include <nflens/iptables.hpp>

#include <algorithm>
#include <array>

namespace nflens::iptables {

std::string_view table_name(table_id t) noexcept {
  switch (t) {
    case table_id::filter:
      return "filter";
    case table_id::nat:
      return "nat";
    case table_id::mangle:
      return "mangle";
    case table_id::raw:
      return "raw";
    case table_id::security:
      return "security";
  }
  return "filter";
}

std::optional<table_id> parse_table_name(std::string_view name) noexcept {
  for (auto t : {table_id::mangle, table_id::security, table_id::raw, table_id::filter, table_id::nat})
    if (table_name(t) == name) return t;
  return std::nullopt;
}

namespace {
constexpr std::array<std::string_view, 3> filter_chains{"INPUT", "FORWARD", "OUTPUT"};
constexpr std::array<std::string_view, 4> nat_chains{"PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"};
constexpr std::array<std::string_view, 5> mangle_chains{"PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"};
constexpr std::array<std::string_view, 2> raw_chains{"PREROUTING", "OUTPUT"};
}  // namespace

std::span<const std::string_view> builtin_chains(table_id t) noexcept {
  switch (t) {
    case table_id::filter:
    case table_id::security:
      return filter_chains;
    case table_id::nat:
      return nat_chains;
    case table_id::mangle:
      return mangle_chains;
    case table_id::raw:
      return raw_chains;
  }
  return {};
}

bool is_builtin_chain(table_id t, std::string_view chain) noexcept {
  const auto chains = builtin_chains(t);
  return std::find(chains.begin(), chains.end(), chain) != chains.end();
}

std::string_view policy_name(chain_policy p) noexcept {
  switch (p) {
    case chain_policy::none:
      return "-";
    case chain_policy::accept:
      return "ACCEPT";
    case chain_policy::drop:
      return "DROP";
  }
  return "-";
}

std::string_view command_option(command_kind c) noexcept {
  switch (c) {
    case command_kind::append:
      return "-A";
    case command_kind::insert:
      return "-I";
    case command_kind::delete_rule:
      return "-D";
    case command_kind::replace:
      return "-R";
    case command_kind::check:
      return "-C";
    case command_kind::flush:
      return "-F";
    case command_kind::zero:
      return "-Z";
    case command_kind::new_chain:
      return "-N";
    case command_kind::delete_chain:
      return "-X";
    case command_kind::policy:
      return "-P";
    case command_kind::rename_chain:
      return "-E";
  }
  return "-A";
}

std::optional<std::uint8_t> prefix_length(const address_mask& m) noexcept { return mask_length(m.mask); }

bool contains(const address_mask& m, const ip_address& a) noexcept {
  if (a.family != m.address.family) return false;
  const std::size_t n = a.family == ip_family::ipv4 ? 4 : 16;
  for (std::size_t i = 0; i < n; ++i)
    if ((a.bytes[i] & m.mask.bytes[i]) != m.address.bytes[i]) return false;
  return true;
}

std::span<const rule> rules_of(const table& t, const chain& c) noexcept {
  if (c.first_rule + std::size_t{c.rule_count} > t.rules.size()) return {};
  return std::span<const rule>(t.rules).subspan(c.first_rule, c.rule_count);
}

const table* find_table(const ruleset& r, table_id id) noexcept {
  for (const auto& t : r.tables)
    if (t.id == id) return &t;
  return nullptr;
}

const chain* find_chain(const table& t, std::string_view name) noexcept {
  // Applied tables list built-in chains first, then user chains sorted by name (strcmp order).
  std::size_t builtins = 0;
  while (builtins < t.chains.size() && t.chains[builtins].builtin) {
    if (t.chains[builtins].name == name) return &t.chains[builtins];
    ++builtins;
  }
  const auto user = std::span<const chain>(t.chains).subspan(builtins);
  if (t.applied) {
    auto it =
        std::lower_bound(user.begin(), user.end(), name, [](const chain& c, std::string_view n) { return c.name < n; });
    return it != user.end() && it->name == name ? &*it : nullptr;
  }
  for (const auto& c : user)
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace nflens::iptables
