// SPDX-License-Identifier: MIT
#pragma once

/// @file
/// Opt-in JSON adapters for nlohmann::json (`nlohmann::json j = ruleset;`). Including this header pulls
/// in <nlohmann/json.hpp>; the rest of nflens does not need it. Each format's AST adds its `to_json`
/// overloads here.
///
/// Locations are written as `{"line", "column", "offset", "length"}` (1-based line and byte column,
/// byte offset and length in the node's source, see source.hpp), values in their decoded form next to
/// the raw text of the option.

#include <nflens/diagnostic.hpp>
#include <nflens/iptables.hpp>
#include <nflens/nft.hpp>

#include <nlohmann/json.hpp>

namespace nflens {

/// `{"severity", "code", "message", "file", "line", "column", "notes": [...]}`.
void to_json(nlohmann::json& j, const diagnostic& d);

}  // namespace nflens

namespace nflens::iptables {

/// The whole AST: `{"family", "applied", "tables": [{"table", "committed", "location", "chains": [...],
/// "rules": [...]}]}`. Rules give `command`, `chain`, `position`, `only`, `location`, and for rule
/// specifications `source`/`destination` (lists of `{"address", "mask"|"prefix", "negated"}`),
/// `in_interface`/`out_interface`, `protocol`, `fragment`, `counters`, `matches` (each `{"module",
/// "typed", "implicit", "location", "options": [{"name", "negated", "raw", "value"}]}`) and `target`.
void to_json(nlohmann::json& j, const ruleset& r);
/// One rule (a command line of the input, or a rule of an applied chain), as in the ruleset.
void to_json(nlohmann::json& j, const rule& r);

}  // namespace nflens::iptables

namespace nflens::nft {

/// A parsed nft file as nflens' own AST JSON (not libnftables' `nft -j` schema):
/// `{"format": "nft", "commands": [{"verb", "object", "family", "family_written", "table", "name",
/// "handle", "position", "new_name", "location", and the body: "table_block" | "chain" | "rule" | "set" |
/// "elements" | "flowtable" | "object_decl"}]}`. Every node is an object with its AST field names;
/// expressions and statements carry a "kind" (`payload`, `meta`, `ct`, `integer`, `symbol`, `set`,
/// `match`, `verdict`, `nat`, ...); values are decoded (integers as numbers, addresses as text, times
/// in milliseconds); "location" is `{"line", "column", "offset", "length"}` in the node's source.
/// Unmodelled syntax appears as `{"kind": "unknown", "text", "modelled": false}`.
void to_json(nlohmann::json& j, const script& s);
/// A ruleset (after `apply`): `{"format": "nft", "tables": [...]}`, tables as in a script's table block.
void to_json(nlohmann::json& j, const ruleset& r);
/// One rule of a ruleset's chain: `{"statements", "comment", "handle", "location"}`.
void to_json(nlohmann::json& j, const ruleset_rule& r);

}  // namespace nflens::nft
