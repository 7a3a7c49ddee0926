// SPDX-License-Identifier: MIT
#pragma once

// The messages of the iptables grammar's `must<>` points (PEGTL's must_if idiom: a rule that can
// raise without a message here fails to compile). The parser appends where it happened ("after `-A`")
// and what it saw ("saw end of line").

#include "iptables.hpp"

#include <nflens/diagnostic.hpp>

namespace nflens::iptables::grammar {

/// The message for a rule that failed after the token that decided the parse; null for rules that
/// never raise.
template <typename Rule>
inline constexpr const char* error_message = nullptr;
/// The stable code of that error.
template <typename Rule>
inline constexpr error_code error_code_of = error_code::syntax;

// clang-format off
template <> inline constexpr const char* error_message<close_quote> = "unterminated quoted string: expected `\"`";
template <> inline constexpr error_code error_code_of<close_quote> = error_code::unterminated_string;
template <> inline constexpr const char* error_message<packets> = "expected the packet count of `[packets:bytes]`";
template <> inline constexpr const char* error_message<counters_colon> = "expected `:` between packets and bytes in `[packets:bytes]`";
template <> inline constexpr const char* error_message<bytes> = "expected the byte count of `[packets:bytes]`";
template <> inline constexpr const char* error_message<counters_close> = "expected `]` to close `[packets:bytes]`";
template <> inline constexpr const char* error_message<table_name> = "expected a table name after `*`";
template <> inline constexpr const char* error_message<chain_name> = "expected a chain name after `:`";
template <> inline constexpr const char* error_message<chain_argument> = "expected a chain name";
template <> inline constexpr error_code error_code_of<chain_argument> = error_code::missing_argument;
template <> inline constexpr const char* error_message<number_argument> = "expected a rule number";
template <> inline constexpr error_code error_code_of<number_argument> = error_code::missing_argument;
template <> inline constexpr const char* error_message<policy_argument> = "expected a policy (ACCEPT or DROP)";
template <> inline constexpr error_code error_code_of<policy_argument> = error_code::missing_argument;
template <> inline constexpr const char* error_message<new_name_argument> = "expected the new chain name";
template <> inline constexpr error_code error_code_of<new_name_argument> = error_code::missing_argument;
template <> inline constexpr const char* error_message<match_value> = "expected an argument";
template <> inline constexpr error_code error_code_of<match_value> = error_code::missing_argument;
template <> inline constexpr const char* error_message<module_argument> = "expected a match module name";
template <> inline constexpr error_code error_code_of<module_argument> = error_code::missing_argument;
template <> inline constexpr const char* error_message<target_argument> = "expected a target or chain name";
template <> inline constexpr error_code error_code_of<target_argument> = error_code::missing_argument;
template <> inline constexpr const char* error_message<packets_argument> = "expected the packet count";
template <> inline constexpr const char* error_message<counter_pair> = "expected the packet count";
template <> inline constexpr error_code error_code_of<counter_pair> = error_code::missing_argument;
template <> inline constexpr const char* error_message<command_chain> = "expected a chain name";
template <> inline constexpr error_code error_code_of<command_chain> = error_code::missing_argument;
template <> inline constexpr const char* error_message<match_argument> = "expected an argument";
template <> inline constexpr error_code error_code_of<match_argument> = error_code::missing_argument;
template <> inline constexpr const char* error_message<module_name> = "expected a match module name";
template <> inline constexpr error_code error_code_of<module_name> = error_code::missing_argument;
template <> inline constexpr const char* error_message<target_name> = "expected a target or chain name";
template <> inline constexpr error_code error_code_of<target_name> = error_code::missing_argument;
template <> inline constexpr error_code error_code_of<packets_argument> = error_code::missing_argument;
template <> inline constexpr const char* error_message<bytes_argument> = "expected the byte count";
template <> inline constexpr error_code error_code_of<bytes_argument> = error_code::missing_argument;
template <> inline constexpr const char* error_message<argument_separator> = "expected an argument";
template <> inline constexpr error_code error_code_of<argument_separator> = error_code::missing_argument;
template <> inline constexpr const char* error_message<option_argument> = "expected an argument";
template <> inline constexpr error_code error_code_of<option_argument> = error_code::missing_argument;
template <> inline constexpr const char* error_message<line_end> = "expected end of line";
template <> inline constexpr const char* error_message<glued_to_quote> = "an argument goes on after its closing quote: iptables-restore ends it at the quote and refuses the rest (\"Bad argument\")";
// clang-format on

}  // namespace nflens::iptables::grammar
