// SPDX-License-Identifier: MIT
#pragma once

// Private: the table of typed match modules and target extensions — their options (names, aliases,
// arguments, negation), how each option's arguments decode into an `option` value, and the checks
// iptables makes once a rule is complete. The parser asks this table; the printer and the typed
// accessors read the decoded options. Sources: iptables-extensions(8) and the libxt_*/libipt_*
// extensions of iptables 1.8.9 (their option tables and final checks), checked against the real
// iptables-restore in a network namespace (tests/iptables_kernel.cpp).

#include <nflens/diagnostic.hpp>
#include <nflens/iptables.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace nflens::iptables::detail {

/// One argument of an option: the text iptables-restore hands over (unquoted) and where it was.
struct argument {
  std::string_view text;
  span where{};
};

/// Bad input found while decoding or checking: becomes a diagnostic at `where`.
struct value_error {
  error_code code = error_code::invalid_value;
  span where{};
  std::string message;
};

/// What decoders and checks need besides the arguments.
struct module_context {
  source* file = nullptr;  ///< arena for decoded values
  ip_family family = ip_family::ipv4;
  std::uint8_t protocol = 0;  ///< the rule's `-p` so far (0: none or all)
  bool protocol_negated = false;
  std::string_view chain;  ///< the rule's chain (checks that depend on the hook)
  std::string_view option;  ///< the option being decoded, as written without dashes (for warnings)
  diagnostic_sink* sink = nullptr;  ///< where decoders warn (a value iptables takes but changes)
};

/// Fills `out.kind`/`out.value`/`out.size` from the arguments, or throws `value_error`.
using decode_fn = void (*)(std::span<const argument> args, option& out, module_context& ctx);

/// One option a module accepts on input.
struct option_spec {
  std::string_view name;   ///< long name without dashes, as accepted (aliases have their own entry)
  option_id id;            ///< what it means
  std::uint8_t arguments;  ///< required arguments (getopt takes them whatever they look like)
  bool negatable;          ///< `! --name` accepted
  bool repeatable;         ///< may be given more than once in one match
  decode_fn decode;        ///< null for flags without argument
};

/// The matches and options of a complete rule, for a module's final check.
struct check_input {
  std::span<const option> options;  ///< this match's or target's options
  span where{};                     ///< `-m NAME` / `-j NAME`
  const module_context* context = nullptr;
};
/// Throws `value_error` when the module's options do not form a valid match or target.
using check_fn = void (*)(const check_input& in);

/// A typed module or target extension.
struct module_spec {
  std::string_view name;
  module_id module = module_id::generic;  ///< for match modules
  target_id target = target_id::generic;  ///< for target extensions
  std::span<const option_spec> options;
  check_fn check = nullptr;
};

/// Input text quoted in a message: at most 64 bytes, cut with `...` (a value can be megabytes long).
[[nodiscard]] std::string clip(std::string_view text);

/// The typed match module called `name` (as after `-m`), or null. `ipv6` selects icmp6 over icmp.
[[nodiscard]] const module_spec* find_match_module(std::string_view name) noexcept;
/// The typed target extension called `name` (as after `-j`), or null.
[[nodiscard]] const module_spec* find_target_module(std::string_view name) noexcept;
/// The option of `m` spelled `name` (without dashes), or null.
[[nodiscard]] const option_spec* find_option(const module_spec& m, std::string_view name) noexcept;
/// The module name `-p PROTO` loads implicitly for an unknown option (iptables(8) "-p ... --dport"),
/// or empty: tcp, udp, sctp, dccp, icmp, icmp6 (ipv6-icmp), udplite, esp, ah, mh.
[[nodiscard]] std::string_view implicit_module_name(std::uint8_t protocol) noexcept;
/// True for names of target extensions iptables ships (typed or not), so that `-j NAME` is not taken
/// for a user chain.
[[nodiscard]] bool is_known_target_extension(std::string_view name) noexcept;
/// True for names of match modules iptables ships (typed or not).
[[nodiscard]] bool is_known_match_module(std::string_view name) noexcept;

/// The canonical module of an implicit or explicit protocol module name (`ipv6-icmp`, `icmpv6` → icmp6).
[[nodiscard]] std::string_view canonical_module_name(std::string_view name) noexcept;

}  // namespace nflens::iptables::detail
