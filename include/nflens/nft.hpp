// SPDX-License-Identifier: MIT
#pragma once

/// @file
/// The nftables ruleset language (nft(8)): `nft list` output (the block form `table ip t { chain c
/// { ... } }`, with `-a` handles and `-s` stateless variants) and `nft -f` scripts (the command form
/// `add rule ip t c ...`, `define`, `flush`, `delete`, ...), parsed offline into a typed AST.
///
/// Two layers:
///  1. A `script` is what a file says: its commands in order. The block form is an `add table`
///     command whose `table` carries the nested chain, set, flowtable and object declarations; a
///     listing is a script of such commands. `define`d variables are substituted while parsing.
///  2. A `ruleset` is what the kernel holds: tables with their chains (and their rules), sets with their
///     elements, flowtables and objects, in containers that applying commands can change. Turning (1)
///     into (2) is `nft -f`'s apply semantics (see nft_apply.hpp when it exists).
///
/// Both layers share the node types of nft_expr.hpp and the declarations below. A command carries `file`
/// (the source its spans and those of everything in it refer to), and so do the tables, sets, flowtables
/// and objects it declares; the nodes a dump holds by the hundred thousand (chains, rules, elements) do
/// not, and a ruleset, whose rules and elements may come from several files, wraps them with theirs
/// (`ruleset_chain`, `ruleset_rule`, `ruleset_element`). A script or ruleset keeps those sources alive in
/// its `sources`, so the raw `const source*` stays valid while the script does.

#include <nflens/diagnostic.hpp>
#include <nflens/nft_expr.hpp>
#include <nflens/source.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace nflens::nft {

// ---------------------------------------------------------------------------------------------------
// Chains

/// Hook of a base chain or flowtable (nft(8) CHAINS, ADDRESS FAMILIES).
enum class hook : std::uint8_t { prerouting, input, forward, output, postrouting, ingress, egress };
/// Type of a base chain.
enum class chain_type : std::uint8_t { filter, nat, route };
/// Named priorities (nft(8) table 6/7). `numeric` means the priority was written as a number.
enum class priority_name : std::uint8_t { numeric, raw, mangle, dstnat, filter, security, srcnat, out };
/// A chain or flowtable priority as written: a number, or a name plus or minus an offset
/// (`dstnat - 10` is `{dstnat, -10}`, `-110` is `{numeric, -110}`). `priority_value` resolves it.
struct priority {
  priority_name name = priority_name::numeric;
  std::int32_t offset = 0;  ///< the number itself when `name` is numeric
  friend constexpr bool operator==(const priority&, const priority&) noexcept = default;
};
/// The number a priority stands for in a family and hook, as nft(8) defines the names (for example
/// `dstnat` is -100, but -300 in the bridge family); nothing for a name that family/hook does not know.
[[nodiscard]] std::optional<std::int32_t> priority_value(const priority& p, family f) noexcept;

/// Default verdict of a base chain. `unspecified` when none was written (the kernel uses accept).
enum class chain_policy : std::uint8_t { unspecified, accept, drop };

/// The `type T hook H [device D] priority P;` part of a base chain (`hook_spec`), with the devices of
/// netdev/inet ingress and egress chains (`device "eth0"` or `devices = { "a", "b" }`).
struct base_chain {
  chain_type type = chain_type::filter;
  hook hook_point = hook::input;
  priority prio;
  std::span<const std::string_view> devices;
  bool devices_block = false;  ///< written as `devices = { ... }` rather than `device X`
};

/// One rule: its statements in order, its comment and handle (`# handle N` in `nft -a` output). 40 bytes
/// (the views are the 12-byte `node_span` and `text_view`: a dump holds hundreds of thousands of rules).
/// Its spans refer to the source of the command it came in (`command::file`); a ruleset's rules, which
/// may come from several files, carry theirs (`ruleset_rule`).
struct rule {
  span where;
  node_span<stmt> stmts{};
  text_view comment{};       ///< without quotes; empty when none
  std::uint64_t handle = 0;  ///< 0 when not written
};
static_assert(sizeof(rule) == 40);

/// Properties of a chain, shared by the declaration and the ruleset's chain.
struct chain_info {
  span where;
  text_view name{};
  text_view comment{};
  std::uint64_t handle = 0;
  const base_chain* base = nullptr;  ///< null for a regular chain
  chain_policy policy = chain_policy::unspecified;
  bool offload = false;  ///< `flags offload`
};
/// A chain as written: `chain NAME { ... }` in a table block, or the body of `add chain`. 64 bytes. Its
/// spans, and its rules', refer to the source of the command it came in (`command::file`).
struct chain : chain_info {
  node_span<rule> rules{};
};
static_assert(sizeof(chain) == 64);

// ---------------------------------------------------------------------------------------------------
// Sets and maps

/// Bits of set flags (`flags constant,interval,timeout,dynamic`).
enum class set_flag : std::uint8_t { constant = 1, interval = 2, timeout = 4, dynamic = 8 };
/// Set policy (`policy performance|memory`).
enum class set_policy : std::uint8_t { unspecified, performance, memory };

/// A key or data type: `type ipv4_addr . inet_service` lists datatype names (see nft_types.hpp for the
/// known ones); `typeof ip saddr . tcp dport` gives an expression instead. Map data may also be an
/// object type (`: counter`, `: quota`, `: ct timeout`...), `verdict`, or `interval TYPE`.
struct set_type {
  std::span<const std::string_view> names;  ///< `type` form: the datatype names in order
  const expr* typeof_expr = nullptr;        ///< `typeof` form: a selector or concat_expr
  bool interval = false;                    ///< map data written `interval TYPE`
  std::optional<object_type> object;        ///< map data that is a stateful object type
  [[nodiscard]] bool empty() const noexcept { return names.empty() && typeof_expr == nullptr && !object; }
};

/// Properties of a set or map.
struct set_info {
  const source* file = nullptr;
  span where;
  std::string_view name;
  bool is_map = false;
  std::uint64_t handle = 0;
  set_type key;
  set_type data;           ///< maps only
  std::uint8_t flags = 0;  ///< set_flag bits
  std::uint64_t timeout_ms = 0;
  std::uint64_t gc_interval_ms = 0;
  std::uint32_t size = 0;
  set_policy policy = set_policy::unspecified;
  bool has_timeout = false;
  bool has_gc_interval = false;
  bool auto_merge = false;
  std::string_view comment;
  std::span<const stmt> stmts;  ///< set-level stateful statements (`counter`, `quota ...`) for new elements
};
/// A set or map as written: `set NAME { ... }` / `map NAME { ... }` or the body of `add set` / `add map`.
struct set : set_info {
  std::span<const element> elements;  ///< `elements = { ... }`
};

// ---------------------------------------------------------------------------------------------------
// Flowtables and stateful objects

/// Properties of a flowtable: `flowtable NAME { hook ingress priority P; devices = { ... }; [counter] }`.
struct flowtable {
  const source* file = nullptr;
  span where;
  std::string_view name;
  std::uint64_t handle = 0;
  bool has_hook = false;
  hook hook_point = hook::ingress;
  priority prio;
  std::span<const std::string_view> devices;
  bool counter = false;
  bool offload = false;  ///< `flags offload`
};

/// `ct helper NAME { type "ftp" protocol tcp; [l3proto ip;] }`.
struct ct_helper_object {
  std::string_view type;      ///< the helper name, without quotes
  std::string_view protocol;  ///< tcp or udp
  std::optional<family> l3proto;
};
/// One `state : value` of a ct timeout policy, the value in milliseconds.
struct ct_timeout_state {
  std::string_view state;
  std::uint64_t value_ms = 0;
};
/// `ct timeout NAME { protocol tcp; [l3proto ip;] policy = { established: 100, ... } }`.
struct ct_timeout_object {
  std::string_view protocol;
  std::optional<family> l3proto;
  std::span<const ct_timeout_state> policy;
};
/// `ct expectation NAME { protocol tcp; dport 22; timeout 10s; size 8; [l3proto ip;] }`.
struct ct_expectation_object {
  std::string_view protocol;
  std::optional<family> l3proto;
  std::uint16_t dport = 0;
  std::uint64_t timeout_ms = 0;
  std::uint32_t size = 0;
};
/// `secmark NAME { "context" }`.
struct secmark_object {
  std::string_view context;
};
/// An object body nflens keeps as raw text (currently `tunnel`); always reported as `not_modelled`.
struct unknown_object {
  std::string_view text;
};
/// A named stateful object (nft(8) STATEFUL OBJECTS): `counter`, `quota`, `limit`, `ct helper`,
/// `ct timeout`, `ct expectation`, `secmark`, `synproxy`, `tunnel`. The counter, quota, limit and synproxy
/// bodies reuse the statement types.
struct object {
  using body_type =
      std::variant<std::monostate, counter_stmt, quota_stmt, limit_stmt, ct_helper_object, ct_timeout_object,
                   ct_expectation_object, secmark_object, synproxy_stmt, unknown_object>;
  const source* file = nullptr;
  span where;
  object_type type = object_type::counter;
  std::string_view name;
  std::uint64_t handle = 0;
  std::string_view comment;
  body_type body;  ///< monostate for `add counter t c` without a body
};

// ---------------------------------------------------------------------------------------------------
// Tables

/// Bits of table flags (`flags dormant,owner,persist`).
enum class table_flag : std::uint8_t { dormant = 1, owner = 2, persist = 4 };

/// Properties of a table.
struct table_info {
  const source* file = nullptr;
  span where;
  family fam = family::ip;
  std::string_view name;
  std::uint64_t handle = 0;
  std::uint8_t flags = 0;  ///< table_flag bits
  std::string_view comment;
};
/// A table as written: `table FAMILY NAME { ... }` with its nested declarations in order of kind.
struct table : table_info {
  std::span<const chain> chains;
  std::span<const set> sets;  ///< sets and maps
  std::span<const flowtable> flowtables;
  std::span<const object> objects;
};

// ---------------------------------------------------------------------------------------------------
// Commands and scripts

/// The verb of a command (`base_cmd`). A table block at the top level is `add`.
enum class command_verb : std::uint8_t {
  add,
  create,
  insert,
  replace,
  delete_,
  destroy,
  flush,
  reset,
  rename,
  list,
  get,
  describe,
  monitor,
  import,
  export_
};
/// What a command acts on.
enum class command_object : std::uint8_t {
  table,
  chain,
  rule,
  set,
  map,
  element,
  flowtable,
  object,
  ruleset,
  other  ///< list/reset/monitor/describe/import/export forms that name no single object (`list tables`)
};
/// How `add`/`insert` place a rule: `position N`, `handle N`, `index N` (`rule_position`).
enum class rule_position : std::uint8_t { none, position, handle, index };

/// One command of a script. `family` defaults to ip when not written (`family_written` false). Objects
/// named by handle (`delete rule ip t c handle 4`, `delete table handle 2`) carry it in `handle`.
struct command {
  using body_type = std::variant<std::monostate, const table*, const chain*, const rule*, const set*,
                                 std::span<const element>, const flowtable*, const object*>;
  const source* file = nullptr;
  span where;
  command_verb verb = command_verb::add;
  command_object what = command_object::table;
  object_type obj = object_type::counter;  ///< for command_object::object
  family fam = family::ip;
  bool family_written = false;
  rule_position position_kind = rule_position::none;
  std::string_view table_name;
  std::string_view name;       ///< chain, set, map, flowtable or object name
  std::uint64_t handle = 0;    ///< `handle N` naming the object (0 when named)
  std::uint64_t position = 0;  ///< value of `position`/`handle`/`index` for rule placement
  std::string_view new_name;   ///< `rename chain ... NEW`
  body_type body;              ///< table, chain, rule, set, elements, flowtable or object; monostate otherwise
};

/// A parsed file: its commands in order, and the sources they point into (the file, plus any included
/// file a caller's resolver supplied).
struct script {
  std::vector<source_ptr> sources;
  std::vector<command> commands;
};

// ---------------------------------------------------------------------------------------------------
// The kernel's view (layer 2)

/// A rule as a ruleset holds it: with the source its spans refer to, since the rules of one chain may
/// come from several scripts.
struct ruleset_rule : rule {
  const source* file = nullptr;
};
/// A set element as a ruleset holds it, with the source its spans refer to (see `ruleset_rule`).
struct ruleset_element : element {
  const source* file = nullptr;
};
/// A chain as a ruleset holds it.
struct ruleset_chain : chain_info {
  const source* file = nullptr;  ///< the source of the declaration, which `where` refers to
  std::vector<ruleset_rule> rules;
};
/// A set or map as a ruleset holds it.
struct ruleset_set : set_info {
  std::vector<ruleset_element> elements;
};
/// A table as a ruleset holds it, children in the order nft lists them (creation order).
struct ruleset_table : table_info {
  std::vector<ruleset_chain> chains;
  std::vector<ruleset_set> sets;
  std::vector<flowtable> flowtables;
  std::vector<object> objects;
};
/// What the kernel holds: tables in creation order, and the sources the nodes point into.
struct ruleset {
  std::vector<source_ptr> sources;
  std::vector<ruleset_table> tables;
};

// ---------------------------------------------------------------------------------------------------
// Parsing

/// Options of `parse`.
struct parse_options {
  nflens::limits limits;
  /// Supplies the text of `include "PATH"`; by default nothing is read and each include is an
  /// `include_not_supported` error naming the file. Return nothing for a file that cannot be had.
  std::function<std::optional<std::string>(std::string_view path)> include_resolver;
};

/// Parses nft text (a listing or a script); `name` is what diagnostics print (a path, `-`, `<string>`). Never throws
/// for bad input: syntax errors are diagnostics (`file:line:col`, the line, a caret, what was expected), recovery is at
/// the next statement or line, errors are capped at `limits.max_errors`, nesting at `limits.max_depth`,
/// input size at `limits.max_input_bytes`. Valid syntax that is not modelled becomes an `unknown_stmt` or
/// `unknown_object` with a `not_modelled` warning; `xt` leftovers get `not_translatable`. When the
/// result is not `ok()`, the script holds the commands that parsed and must not be taken as complete.
[[nodiscard]] result<script> parse(std::string name, std::string text, const parse_options& options = {});
/// Like `parse`, but throws `nflens::parse_error` when there are errors.
[[nodiscard]] script parse_or_throw(std::string name, std::string text, const parse_options& options = {});

// ---------------------------------------------------------------------------------------------------
// Structural equality

/// What `compare` ignores besides spans and sources (always ignored).
struct equality_options {
  bool ignore_handles = true;          ///< `# handle N` of rules, chains, sets, tables, objects
  bool ignore_element_order = true;    ///< elements of named and anonymous sets compared as multisets
  bool ignore_counter_values = false;  ///< packet/byte values of counters and quota usage
  /// A one-element anonymous set without element options equals its element (`ip saddr { 1.1.1.1-1.1.1.2 }`
  /// and `ip saddr 1.1.1.1-1.1.1.2`): nft's evaluation turns the first into the second, and nft 1.0.6
  /// lists it that way. Off by default: the two are written differently.
  bool singleton_sets_as_values = false;
};

/// Where two ASTs first differ: a description ("table ip t: chain c: rule 3: statement 2 differs") and
/// the two places.
struct difference {
  std::string what;
  const source* left_file = nullptr;
  span left;
  const source* right_file = nullptr;
  span right;
};

/// Compares two scripts structurally (commands in order; sets' elements and table children as
/// documented by `equality_options`). Nothing when equal.
[[nodiscard]] std::optional<difference> compare(const script& a, const script& b, const equality_options& o = {});
/// Compares two rulesets structurally.
[[nodiscard]] std::optional<difference> compare(const ruleset& a, const ruleset& b, const equality_options& o = {});
/// Structural equality of single nodes.
[[nodiscard]] bool equal(const expr& a, const expr& b, const equality_options& o = {});
[[nodiscard]] bool equal(const stmt& a, const stmt& b, const equality_options& o = {});
[[nodiscard]] bool equal(const rule& a, const rule& b, const equality_options& o = {});
[[nodiscard]] bool equal(const element& a, const element& b, const equality_options& o = {});

// ---------------------------------------------------------------------------------------------------
// Applying scripts (`nft -f`)

/// Options of `apply`.
struct apply_options {
  /// Stop after this many failed commands (each failure is one error diagnostic).
  std::uint32_t max_errors = 100;
  /// A rule's reference to a chain, set, map, flowtable or object the ruleset lacks (`jump c`, `@s`) is a
  /// `dangling_reference` warning and the rule is kept, instead of an error that refuses the script. For
  /// describing an input that is a fragment of a larger ruleset (`nflens parse` without --print, a
  /// tests/py rule line), not for building the state `nft -f` would: nft refuses such a reference.
  bool outside_references = false;
};

/// Applies the commands of `s` to `r` in order, as `nft -f` does (one transaction): `add` creates
/// tables, chains, sets, maps, flowtables and objects or leaves existing ones as they are (new
/// properties of a chain are taken over), `create` fails when the object exists, `insert` puts rules
/// first (or before `position`/`handle`), `add rule` appends (or after `position`/`handle`/`index`),
/// `replace` swaps the rule with that handle, `delete` needs the object (by name or `handle`),
/// `destroy` does not, `flush` empties tables, chains, sets and maps (`flush ruleset` removes every
/// table), `reset` zeroes counters and quotas, `rename` renames a chain; elements are added to or
/// deleted from sets and maps. As the kernel does, objects get handles in creation order (one counter
/// per table, tables numbered per ruleset), base chains without a policy get `accept`, priorities are
/// stored as numbers, and a set or map that rules update (`add @s`, `update @s`) gets `size 65535` when
/// it had no size (a set also `flags dynamic`). Rules given as commands (`add rule`, `insert rule`, the
/// body of `add chain`) go through nft's evaluation, which turns a one-element anonymous set in a
/// match into its element; rules inside a table block are taken as listed (a listing shows what the
/// kernel holds), so a listing applied to an empty ruleset prints back unchanged. Listing-only verbs (`list`, `monitor`, `describe`, ...) change nothing.
/// Failures (a missing table or chain, an existing object for `create`, a dangling `jump`, a missing
/// element for `delete element`) are located error diagnostics, and, as with `nft -f`, nothing of the
/// script is applied then: `r` is left as it was. The sources of `s` are added to `r.sources`.
[[nodiscard]] std::vector<diagnostic> apply(ruleset& r, const script& s, const apply_options& options = {});

/// The ruleset a listing or script describes on its own: `apply` onto an empty ruleset.
[[nodiscard]] result<ruleset> to_ruleset(const script& s, const apply_options& options = {});

// ---------------------------------------------------------------------------------------------------
// Printing (`nft list` form)

/// Options of the printer, as nft's command line spells them.
struct print_options {
  bool handles = false;    ///< `nft -a`: `# handle N` after tables, chains, sets, objects, flowtables and rules
  bool stateless = false;  ///< `nft -s`: counters without values, quotas without usage, no element expiry
  /// Priorities as nft 1.0.6 lists and reads them: `dstnat` only for prerouting and `srcnat` only for
  /// postrouting (1.1 also names -100 of output and 100 of input, which 1.0.6 refuses to read), and ct
  /// timeout policies in seconds (`established : 100`, which 1.1 lists as `1m40s` and 1.0.6 cannot read),
  /// and fib's presence test as `oif exists|missing` (1.1's `check`, which 1.0.6 does not know).
  bool nft_1_0_6 = false;
};

/// The ruleset as `nft list ruleset` of nft 1.1 prints it: tables in order, each with its objects, sets
/// and maps, flowtables and chains (a blank line between blocks), one tab per level, rules one per line;
/// every constant spelled through its datatype (`meta mark 0x00004000`, `tcp dport 22`, `ip protocol
/// tcp`, `ct state established,related`, `timeout 3h`), named priorities where nft uses them
/// (`dstnat - 10`), long element lists wrapped as nft wraps them. A listing of nft 1.1 that parses and
/// is applied to an empty ruleset prints back byte for byte.
[[nodiscard]] std::string print(const ruleset& r, const print_options& options = {});
/// One rule as it appears on its line in a listing of a table of family `f` (statements, comment and,
/// with `handles`, its handle), without indentation or newline.
[[nodiscard]] std::string print(const rule& r, family f, const print_options& options = {});
/// The same for a rule of table `t` of a ruleset, whose sets and maps type the values of statements that
/// update them (`update @m { ip saddr : 0x00000001 }`).
[[nodiscard]] std::string print(const rule& r, const ruleset_table& t, const print_options& options = {});
/// One statement or expression as a listing spells it.
[[nodiscard]] std::string print(const stmt& s, family f, const print_options& options = {});
[[nodiscard]] std::string print(const expr& e, family f);

// ---------------------------------------------------------------------------------------------------
// Words of the vocabularies, as nft prints them, and their parsers.

[[nodiscard]] std::string_view name(family v) noexcept;
[[nodiscard]] std::string_view name(hook v) noexcept;
[[nodiscard]] std::string_view name(chain_type v) noexcept;
[[nodiscard]] std::string_view name(priority_name v) noexcept;  ///< empty for numeric
[[nodiscard]] std::string_view name(chain_policy v) noexcept;   ///< empty for unspecified
[[nodiscard]] std::string_view name(verdict v) noexcept;
[[nodiscard]] std::string_view name(relational_op v) noexcept;  ///< `==`, `!=`, ... ; empty for implicit
[[nodiscard]] std::string_view name(binop v) noexcept;          ///< `&`, `|`, `^`, `<<`, `>>`
[[nodiscard]] std::string_view name(header v) noexcept;         ///< `ip`, `tcp`, `tcp option`, ...
[[nodiscard]] std::string_view name(meta_key v) noexcept;
[[nodiscard]] std::string_view name(ct_key v) noexcept;
[[nodiscard]] std::string_view name(ct_direction v) noexcept;
[[nodiscard]] std::string_view name(nfproto v) noexcept;
[[nodiscard]] std::string_view name(fib_result v) noexcept;
[[nodiscard]] std::string_view name(rt_key v) noexcept;
[[nodiscard]] std::string_view name(socket_key v) noexcept;
[[nodiscard]] std::string_view name(osf_key v) noexcept;
[[nodiscard]] std::string_view name(ipsec_key v) noexcept;
[[nodiscard]] std::string_view name(numgen_type v) noexcept;
[[nodiscard]] std::string_view name(hash_kind v) noexcept;
[[nodiscard]] std::string_view name(tunnel v) noexcept;
[[nodiscard]] std::string_view name(payload_base v) noexcept;
[[nodiscard]] std::string_view name(time_unit v) noexcept;
[[nodiscard]] std::string_view name(log_level v) noexcept;
[[nodiscard]] std::string_view name(reject_type v) noexcept;
[[nodiscard]] std::string_view name(nat_kind v) noexcept;
[[nodiscard]] std::string_view name(set_op v) noexcept;
[[nodiscard]] std::string_view name(object_type v) noexcept;  ///< `counter`, `ct helper`, ...
[[nodiscard]] std::string_view name(set_policy v) noexcept;
[[nodiscard]] std::string_view name(command_verb v) noexcept;
[[nodiscard]] std::string_view name(command_object v) noexcept;
[[nodiscard]] std::string_view name(xt_kind v) noexcept;
/// The words nft prints for a header field (`saddr`, `saddr ether`, `frag-off`); empty for `none`.
[[nodiscard]] std::string_view field_name(header h, header_field f) noexcept;
/// The name of a TCP option kind (`maxseg`, `sack-perm`, ...), an IP option (`rr`), an SCTP chunk type
/// (`data`, `init-ack`); empty for kinds without a name (printed as numbers).
[[nodiscard]] std::string_view option_name(header h, std::uint8_t option) noexcept;

[[nodiscard]] std::optional<family> parse_family(std::string_view word) noexcept;
[[nodiscard]] std::optional<hook> parse_hook(std::string_view word) noexcept;
[[nodiscard]] std::optional<meta_key> parse_meta_key(std::string_view word) noexcept;
[[nodiscard]] std::optional<ct_key> parse_ct_key(std::string_view word) noexcept;

}  // namespace nflens::nft
