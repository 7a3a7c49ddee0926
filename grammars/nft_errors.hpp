// SPDX-License-Identifier: MIT
#pragma once

// Messages for the places where the nft grammar commits (`if_must` after a deciding keyword). Every rule
// that can be the argument of a `must` has one: the parser's control `static_assert`s that, PEGTL's
// `must_if` idiom. Elsewhere errors are reported at the farthest point the parse reached, with the words
// that were expected there.

#include "nft_blocks.hpp"

namespace nflens::nft::grammar {

/// The message when `Rule` was required and not found. `nullptr` means "no message" and does not
/// compile in a `must`.
template <class Rule>
inline constexpr const char* error_message = nullptr;

// clang-format off
template <> inline constexpr const char* error_message<sp> = "expected a blank";
template <> inline constexpr const char* error_message<sp1> = "expected a blank";
template <> inline constexpr const char* error_message<block_close> = "expected '}' to close the block";
template <> inline constexpr const char* error_message<table_spec> = "expected a table name (optionally after a family: ip, ip6, inet, arp, bridge, netdev) after 'table'";
template <> inline constexpr const char* error_message<opt<sp, table_block>> = "expected a table block";
template <> inline constexpr const char* error_message<chain_identifier> = "expected a chain name after 'chain'";
template <> inline constexpr const char* error_message<chain_block> = "expected '{' to open the chain block";
template <> inline constexpr const char* error_message<set_identifier> = "expected a name";
template <> inline constexpr const char* error_message<set_block> = "expected '{' to open the set block";
template <> inline constexpr const char* error_message<map_block> = "expected '{' to open the map block";
template <> inline constexpr const char* error_message<flowtable_block> = "expected '{' to open the flowtable block";
template <> inline constexpr const char* error_message<chain_type_word> = "expected a chain type (filter, nat, route) after 'type'";
template <> inline constexpr const char* error_message<kw_hook> = "expected 'hook' after the chain type";
template <> inline constexpr const char* error_message<hook_name> = "expected a hook name after 'hook'";
template <> inline constexpr const char* error_message<opt<sp1, dev_spec>> = "expected a device";
template <> inline constexpr const char* error_message<prio_spec> = "expected 'priority' and a priority (a number, or filter, raw, mangle, dstnat, srcnat, security, out with an optional +/- offset)";
template <> inline constexpr const char* error_message<include_path> = "expected a quoted file name after 'include'";
template <> inline constexpr const char* error_message<variable_name> = "expected a variable name after 'define'";
template <> inline constexpr const char* error_message<define_equals> = "expected '=' after the variable name";
template <> inline constexpr const char* error_message<initializer_expr> = "expected a value after '='";
// clang-format on

}  // namespace nflens::nft::grammar
