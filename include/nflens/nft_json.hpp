// SPDX-License-Identifier: MIT
#pragma once

/// @file
/// The libnftables JSON schema (libnftables-json(5)), offline and both ways:
///  - `write_json`: an nft AST (a listing or script, or a ruleset) → what `nft -j list ruleset` prints
///    for it, `{"nftables": [{"metainfo": ...}, {"table": ...}, {"chain": ...}, ..., {"rule": ...}]}`,
///    with nft's key order and its choice of numbers and strings. A script that is more than a listing
///    (`delete`, `flush`, `insert`, ...) is written in the command form that `nft -j -f` reads,
///    `{"nftables": [{"add": {"table": ...}}, {"delete": {"rule": ...}}, ...]}`.
///  - `parse_json`: libnftables JSON (a `nft -j list ruleset` listing or the `nft -j -f` command form)
///    → the same AST that parsing the equivalent nft text gives, with spans into the JSON text.
///
/// What nft prints differs between releases; `json_flavour` picks the release to reproduce. Things the
/// schema cannot say (statements nflens keeps as `unknown_stmt`, `unknown_object` bodies, anonymous
/// chains) are written the way nft writes an expression without a JSON form — as a string holding its
/// text — and each one is reported as a `not_translatable` warning that names the rule and statement.
///
/// Including this header pulls in <nlohmann/json.hpp> (for the value forms).

#include <nflens/diagnostic.hpp>
#include <nflens/nft.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace nflens::nft {

/// Which nft release's JSON output to reproduce.
enum class json_flavour : std::uint8_t {
  current,  ///< nft 1.1.x, as upstream's `tests/shell/**/dumps/*.json-nft` expect
  v1_0_6,   ///< nft 1.0.6 (Debian 12): unflattened `|`/`&` chains, one-item flag lists as a bare string,
            ///< concatenated map data as one string, sets before chains, no `dynamic` set flag, no chain
            ///< `dev` for a single device. What it has no member for (a table or chain comment, the
            ///< `dynamic` flag, `auto-merge`, a listed chain's devices, inner tunnel headers) is left
            ///< out with a not_translatable warning
};

/// Options of `write_json`.
struct json_write_options {
  json_flavour flavour = json_flavour::current;
  /// Lead with `{"metainfo": {"version", "release_name", "json_schema_version": 1}}` as nft does.
  bool metainfo = true;
  /// What metainfo says; empty: the release of `flavour` ("1.1.6" / "1.0.6").
  std::string_view version;
  std::string_view release_name;
  /// Spaces per indentation level; negative: one line, as `nft -j` prints (separators ", " and ": ").
  int indent = -1;
  /// Write the command form `nft -j -f` reads (`{"add": {...}}`) even for a listing, in an order in
  /// which everything can be created (chains before the maps and rules that refer to them).
  bool commands = false;
};

/// Writes a ruleset as `nft -j list ruleset` prints it: per table, the table, its chains, objects,
/// sets and maps, flowtables, then the rules of every chain in order. Handles are written as held
/// (0 when the input had none). Warnings (`not_translatable`) for what the schema cannot express;
/// never errors. The text ends with a newline.
[[nodiscard]] result<std::string> write_json(const ruleset& r, const json_write_options& o = {});

/// Writes a script. A listing (only table blocks, each table once) is written as the listing above
/// (unless `o.commands`); any other script in the command form of `nft -j -f` (block contents become
/// `add` commands), in the order of the script.
[[nodiscard]] result<std::string> write_json(const script& s, const json_write_options& o = {});

/// The same as `write_json`, as a value (key order kept).
[[nodiscard]] result<nlohmann::ordered_json> to_json_value(const script& s, const json_write_options& o = {});
[[nodiscard]] result<nlohmann::ordered_json> to_json_value(const ruleset& r, const json_write_options& o = {});

/// What keeps `r` from being written as nft text (`print`) that nft reads back as `r`: a table, chain,
/// set, flowtable or object name that is not one nft word (nft's grammar, parser_bison.y `identifier`,
/// takes names only unquoted: a name with a space or a leading digit, which libnftables JSON can carry,
/// has no nft spelling), a comment or other string with a `"` or a line break (nft strings have no
/// escapes), a value that is neither one word or number nor quotable, a statement kept as text that
/// would break out of its rule. One `not_translatable` error per problem, located at the node (in the
/// JSON text when read by `parse_json`), capped at `limits::max_errors`; empty when all can be written.
/// Names and strings from nft text always pass.
[[nodiscard]] std::vector<diagnostic> check_text(const ruleset& r);

/// What `nflens convert --to nft` prints for a script: the ruleset it builds in an empty ruleset
/// (`to_ruleset`, as `nft -f` / `nft -j -f` would), as `nft list ruleset` of nft 1.1 lists it (`print`).
/// Errors of `to_ruleset` and of `check_text` leave the text empty: nothing is printed that nft would
/// not read back as the same ruleset.
[[nodiscard]] result<std::string> write_text(const script& s, const print_options& o = {});

/// Options of `parse_json`.
struct json_parse_options {
  nflens::limits limits;
};

/// Reads libnftables JSON: an object `{"nftables": [ ... ]}` whose items are `metainfo`, bare objects
/// (`table`, `chain`, `rule`, `set`, `map`, `element`, `flowtable`, `counter`, `quota`, `limit`,
/// `ct helper`, `ct timeout`, `ct expectation`, `secmark`, `synproxy`) — which `nft -j -f` adds — and
/// commands (`add`, `create`, `insert`, `replace`, `delete`, `destroy`, `flush`, `reset`, `rename`,
/// `list`). A document of bare objects only (a listing) becomes table blocks, as the text of
/// `nft list ruleset` parses; otherwise each item becomes one command. Values are typed as the nft
/// text parser types them (addresses, prefixes, quoted strings for interface names and other string
/// types, symbols for symbolic constants, durations for time types), so the AST equals the one of the
/// equivalent text apart from spans. Spans point into the JSON text.
///
/// Never throws for bad input: JSON syntax errors and schema errors ("expected an object with key
/// 'family'", "unknown statement 'foo'") are diagnostics with `file:line:column`; errors are capped at
/// `limits.max_errors`, nesting at `limits.max_depth`, input at `limits.max_input_bytes`. An item with
/// an error is left out, and the result is then not `ok()`.
[[nodiscard]] result<script> parse_json(std::string name, std::string text, const json_parse_options& o = {});
/// Like `parse_json`, but throws `nflens::parse_error` when there are errors.
[[nodiscard]] script parse_json_or_throw(std::string name, std::string text, const json_parse_options& o = {});

}  // namespace nflens::nft
