// SPDX-License-Identifier: MIT
// Vocabulary of iptables(8) and lookups over a ruleset.
#include <nflens/iptables.hpp>

#include <algorithm>
#include <array>
#include <memory>

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

// ---- rules ----------------------------------------------------------------------------------------

namespace {
// The arrays block of a rule: options, then matches, then sources and destinations.
static_assert(alignof(option) >= alignof(match) && sizeof(option) % alignof(match) == 0 &&
              sizeof(match) % alignof(address_match) == 0);

// Copies the arrays into one arena block; the matches' options are moved along into the block (a match
// whose options lie outside `options` keeps them where they are).
const std::byte* store_arrays(source& arena, std::span<const option> options, std::span<const match> matches,
                              std::span<const address_match> sources, std::span<const address_match> destinations) {
  const std::size_t bytes = options.size() * sizeof(option) + matches.size() * sizeof(match) +
                            (sources.size() + destinations.size()) * sizeof(address_match);
  if (bytes == 0) return nullptr;
  auto* const block = static_cast<std::byte*>(arena.allocate(bytes, alignof(option)));
  auto* const o = reinterpret_cast<option*>(block);
  auto* const m = reinterpret_cast<match*>(o + options.size());
  auto* const a = reinterpret_cast<address_match*>(m + matches.size());
  std::uninitialized_copy(options.begin(), options.end(), o);
  for (std::size_t i = 0; i < matches.size(); ++i) {
    const match& x = matches[i];
    const option* first = x.options().data();
    const bool inside = !options.empty() && first >= options.data() && first < options.data() + options.size();
    const std::span<const option> moved =
        inside ? std::span<const option>(o + (first - options.data()), x.options().size()) : x.options();
    std::construct_at(m + i, x.name(), moved, x.where, x.id, x.implicit);
  }
  std::uninitialized_copy(sources.begin(), sources.end(), a);
  std::uninitialized_copy(destinations.begin(), destinations.end(), a + sources.size());
  return block;
}

bool is_default(const rule_extras& e) noexcept {
  return e.in_interface == nullptr && e.out_interface == nullptr && !e.has_counters && e.new_name.empty() &&
         e.renamed_chain.empty() && e.renamed_target.empty() && !e.fragment && e.position == 0;
}

std::uint16_t narrow16(std::size_t n) noexcept { return static_cast<std::uint16_t>(std::min<std::size_t>(n, 0xffff)); }
}  // namespace

std::string_view rule::chain() const noexcept {
  if (extras_ != nullptr && !extras_->renamed_chain.empty()) return extras_->renamed_chain;
  if (chain_length_ == 0 || file == nullptr) return {};
  return file->text().substr(chain_offset_, chain_length_);
}

std::span<const option> rule::options() const noexcept {
  return {reinterpret_cast<const option*>(arrays_), option_count_};
}

std::span<const match> rule::matches() const noexcept {
  return {reinterpret_cast<const match*>(options().data() + option_count_), match_count_};
}

std::span<const address_match> rule::source() const noexcept {
  return {reinterpret_cast<const address_match*>(matches().data() + match_count_), source_count_};
}

std::span<const address_match> rule::destination() const noexcept {
  return {source().data() + source_count_, destination_count_};
}

struct target rule::target() const noexcept {
  struct target t;
  t.id = target_id_;
  if (t.id == target_id::none) return t;
  t.where = target_where_;
  t.is_goto = (flags_ & goto_flag) != 0;
  t.options = options().last(target_option_count_);
  if (extras_ != nullptr && !extras_->renamed_target.empty())
    t.name = extras_->renamed_target;
  else if (file != nullptr)
    t.name = file->text().substr(target_offset_, target_length_);
  return t;
}

void rule_builder::build(rule& r, source& file, const parts& p) {
  const char* const text = file.text().data();
  // A name decoded from a quoted word with escapes (`-A "a\"b"`) is in the arena, not in the text.
  const auto in_text = [&](std::string_view name) {
    const auto at = reinterpret_cast<std::uintptr_t>(name.data());
    const auto begin = reinterpret_cast<std::uintptr_t>(text);
    return name.empty() || (at >= begin && at - begin + name.size() <= file.text().size() && name.size() <= 0xffff);
  };
  rule_extras extras = p.extras;
  if (!in_text(p.chain)) extras.renamed_chain = p.chain;
  if (!in_text(p.target_name)) extras.renamed_target = p.target_name;
  const std::string_view chain = extras.renamed_chain.empty() ? p.chain : std::string_view{};
  const std::string_view target_name = extras.renamed_target.empty() ? p.target_name : std::string_view{};
  r.file = &file;
  r.chain_offset_ = chain.empty() ? 0 : static_cast<std::uint32_t>(chain.data() - text);
  r.chain_length_ = narrow16(chain.size());
  r.arrays_ = store_arrays(file, p.options, p.matches, p.sources, p.destinations);
  r.option_count_ = narrow16(p.options.size());
  r.match_count_ = narrow16(p.matches.size());
  r.target_option_count_ = narrow16(p.target_options);
  r.source_count_ = static_cast<std::uint32_t>(p.sources.size());
  r.destination_count_ = static_cast<std::uint32_t>(p.destinations.size());
  r.target_id_ = p.target;
  r.target_where_ = p.target_where;
  r.target_offset_ = target_name.empty() ? 0 : static_cast<std::uint32_t>(target_name.data() - text);
  r.target_length_ = narrow16(target_name.size());
  r.protocol_where_ = p.protocol.where;
  r.protocol_ = p.protocol.number;
  r.flags_ = static_cast<std::uint8_t>((p.has_spec ? rule::has_spec_flag : 0) |
                                       (p.protocol.present ? rule::protocol_flag : 0) |
                                       (p.protocol.negated ? rule::protocol_negated_flag : 0) |
                                       (p.is_goto ? rule::goto_flag : 0));
  r.extras_ = is_default(extras) ? nullptr : file.store_one(extras);
}

rule rule_builder::with_addresses(const rule& r, source& arena, std::span<const address_match> sources,
                                  std::span<const address_match> destinations) {
  rule copy = r;
  copy.arrays_ = store_arrays(arena, r.options(), r.matches(), sources, destinations);
  copy.source_count_ = static_cast<std::uint32_t>(sources.size());
  copy.destination_count_ = static_cast<std::uint32_t>(destinations.size());
  return copy;
}

rule rule_builder::with_extras(const rule& r, source& arena, const rule_extras& extras) {
  rule copy = r;
  copy.extras_ = is_default(extras) ? nullptr : arena.store_one(extras);
  return copy;
}

}  // namespace nflens::iptables
