// SPDX-License-Identifier: MIT
#pragma once

/// @file
/// The iptables side of nflens: the typed AST of `iptables-save` / `ip6tables-save` output and
/// `iptables-restore` input, its parser, `iptables-restore` semantics (`apply`, `load`) and the canonical
/// printer that writes what `iptables-save` (1.8.9, nf_tables backend) prints.
///
/// Shape (iptables(8), iptables-save(8), iptables-restore(8)):
///
///     ruleset ─ tables ─ chains  (`:NAME POLICY [packets:bytes]`)
///                      └ rules   (`[p:b] -A CHAIN [!] -s … -m MODULE --opt … -j TARGET --opt …`, and the
///                                 other restore commands -I -D -R -C -N -X -F -Z -P -E)
///
/// A ruleset comes in two states:
///  - **parsed** (`parse`): what the text says, in file order. `ruleset::tables` holds one entry per
///    `*table` block (a table may appear in several blocks), each with its `:CHAIN` declarations and its
///    commands in file order. `chain::first_rule`/`rule_count` are zero.
///  - **applied** (`apply`, `load`): the state the kernel would hold after `iptables-restore`, as
///    `iptables-save` lists it. One table per name in iptables-save's order, every chain (built-in chains
///    first, then user chains sorted by name), every rule an `append` command, grouped by chain in chain
///    order; `chain::first_rule`/`rule_count` give each chain's rules (`rules_of`), and `find_chain` finds
///    a chain in O(log n).
///
/// Memory: nodes are views, and small. Names and texts are views into the source text (or into the
/// source's arena for decoded text such as unescaped quotes); a rule is 80 bytes, its arrays (options,
/// matches, addresses) one block in the arena of the source it came from. Every `rule`, `chain` and
/// `table` points to its source (`file`); the ruleset owns all of them (`sources`), so keep a node only
/// as long as its ruleset, or a ruleset that took its sources (`apply` does). Sub-nodes (`match`,
/// `option`, `address_match`, ...) carry a `span` relative to the `file` of the rule that contains
/// them. A 41.5 MB kube-proxy dump of 381,000 rules parses into about 2.8 times its size, text included.
///
/// Typed modules and targets: see `iptables_modules.hpp` for the accessors (`tcp(m)`, `dnat(t)`, ...).

#include <nflens/diagnostic.hpp>
#include <nflens/net.hpp>
#include <nflens/source.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace nflens::iptables {

// ---------------------------------------------------------------------------------------------------
// Vocabularies

/// The tables of iptables(8) ("TABLES"), in the order `iptables-save` (1.8.9, nf_tables backend) lists
/// them.
enum class table_id : std::uint8_t { mangle, security, raw, filter, nat };

/// `"filter"`, `"nat"`, ...
[[nodiscard]] std::string_view table_name(table_id t) noexcept;
/// The table of a name as written after `*` or `-t`; nothing for names iptables does not have.
[[nodiscard]] std::optional<table_id> parse_table_name(std::string_view name) noexcept;
/// The built-in chains of a table in the order iptables-save lists them (the kernel's hook order):
/// filter INPUT FORWARD OUTPUT; nat PREROUTING INPUT OUTPUT POSTROUTING; mangle all five; raw PREROUTING
/// OUTPUT; security INPUT FORWARD OUTPUT.
[[nodiscard]] std::span<const std::string_view> builtin_chains(table_id t) noexcept;
/// True when `chain` is one of `builtin_chains(t)`.
[[nodiscard]] bool is_builtin_chain(table_id t, std::string_view chain) noexcept;

/// A chain's policy as `:CHAIN POLICY` or `-P CHAIN POLICY` gives it. User chains have none (`-`).
enum class chain_policy : std::uint8_t { none, accept, drop };
/// `"-"`, `"ACCEPT"` or `"DROP"`.
[[nodiscard]] std::string_view policy_name(chain_policy p) noexcept;

/// The command of a rule line (iptables(8) "COMMANDS"), as iptables-restore(8) takes them.
enum class command_kind : std::uint8_t {
  append,        ///< `-A CHAIN spec`
  insert,        ///< `-I CHAIN [n] spec` (`position` 0 when no number: insert at the head)
  delete_rule,   ///< `-D CHAIN spec` or `-D CHAIN n` (`spec` null, `position` n)
  replace,       ///< `-R CHAIN n spec`
  check,         ///< `-C CHAIN spec` (changes nothing)
  flush,         ///< `-F [CHAIN]` (`chain` empty: every chain of the table)
  zero,          ///< `-Z [CHAIN [n]]`
  new_chain,     ///< `-N CHAIN`
  delete_chain,  ///< `-X [CHAIN]` (`chain` empty: every empty user chain of the table)
  policy,        ///< `-P CHAIN POLICY` (`policy`); counters (`-c P B` as `iptables -S -v` prints, or `[p:b]`)
                 ///< are read and ignored, as iptables-restore 1.8.9 ignores them
  rename_chain,  ///< `-E OLD NEW` (`chain` OLD, `new_name` NEW)
};
/// `"-A"`, `"-I"`, ... (the short option).
[[nodiscard]] std::string_view command_option(command_kind c) noexcept;

/// Packet and byte counters, as `[packets:bytes]` or `-c packets bytes` give them.
struct counters {
  std::uint64_t packets = 0;
  std::uint64_t bytes = 0;
  friend constexpr bool operator==(const counters&, const counters&) noexcept = default;
};

/// The `-4` / `-6` prefix of iptables-restore input: a line only one of iptables-restore and
/// ip6tables-restore executes (the other skips it).
enum class family_filter : std::uint8_t { any, ipv4, ipv6 };

// ---------------------------------------------------------------------------------------------------
// Modules, targets and their options

/// Match modules (`-m NAME`, iptables-extensions(8) "MATCH EXTENSIONS") with typed accessors in
/// iptables_modules.hpp. Every other module is `generic`: kept with its options as written and reported
/// with a `not_modelled` warning.
enum class module_id : std::uint8_t {
  generic,
  addrtype,
  comment,
  connmark,
  conntrack,
  icmp,
  icmp6,
  limit,
  mark,
  multiport,
  nfacct,
  physdev,
  recent,
  sctp,
  set,
  state,
  statistic,
  tcp,
  udp,
};

/// What `-j`/`-g` names (iptables(8) "TARGETS", iptables-extensions(8) "TARGET EXTENSIONS").
enum class target_id : std::uint8_t {
  none,     ///< the rule has no `-j`/`-g`: it only counts
  chain,    ///< a user-defined chain (`-j NAME` jumps, `-g NAME` goes to)
  accept,   ///< ACCEPT
  drop,     ///< DROP
  return_,  ///< RETURN
  queue,    ///< QUEUE
  generic,  ///< a target extension without typed accessors, kept with its options as written
  connmark,
  dnat,
  log,
  mark,
  masquerade,
  nflog,
  redirect,
  reject,
  snat,
  tproxy,
};

/// Every option of a typed module or target, by what it means; aliases decode to one id (`--destination-port`
/// and `--dport` are `tcp_dport`, `--syn` is `tcp_flags`). `generic` for options of generic modules.
enum class option_id : std::uint16_t {
  generic,
  // addrtype
  addrtype_src_type,
  addrtype_dst_type,
  addrtype_limit_iface_in,
  addrtype_limit_iface_out,
  // comment
  comment_comment,
  // connmark (match)
  connmark_mark,
  // conntrack
  conntrack_ctstate,
  conntrack_ctproto,
  conntrack_ctorigsrc,
  conntrack_ctorigdst,
  conntrack_ctreplsrc,
  conntrack_ctrepldst,
  conntrack_ctorigsrcport,
  conntrack_ctorigdstport,
  conntrack_ctreplsrcport,
  conntrack_ctrepldstport,
  conntrack_ctstatus,
  conntrack_ctexpire,
  conntrack_ctdir,
  // icmp, icmp6
  icmp_type,
  icmp6_type,
  // limit
  limit_limit,
  limit_burst,
  // mark (match)
  mark_mark,
  // multiport
  multiport_sports,
  multiport_dports,
  multiport_ports,
  // nfacct
  nfacct_name,
  // physdev
  physdev_in,
  physdev_out,
  physdev_is_in,
  physdev_is_out,
  physdev_is_bridged,
  // recent
  recent_set,
  recent_rcheck,
  recent_update,
  recent_remove,
  recent_seconds,
  recent_reap,
  recent_hitcount,
  recent_rttl,
  recent_name,
  recent_mask,
  recent_rsource,
  recent_rdest,
  // sctp
  sctp_sport,
  sctp_dport,
  sctp_chunk_types,
  // set
  set_match_set,
  set_return_nomatch,
  set_update_counters,
  set_update_subcounters,
  set_packets_eq,
  set_packets_lt,
  set_packets_gt,
  set_bytes_eq,
  set_bytes_lt,
  set_bytes_gt,
  // state
  state_state,
  // statistic
  statistic_mode,
  statistic_probability,
  statistic_every,
  statistic_packet,
  // tcp
  tcp_sport,
  tcp_dport,
  tcp_flags,
  tcp_option,
  // udp
  udp_sport,
  udp_dport,
  // CONNMARK
  connmark_set_xmark,
  connmark_set_mark,
  connmark_save_mark,
  connmark_restore_mark,
  connmark_and_mark,
  connmark_or_mark,
  connmark_xor_mark,
  connmark_left_shift_mark,
  connmark_right_shift_mark,
  connmark_mask,
  connmark_nfmask,
  connmark_ctmask,
  // DNAT, SNAT, MASQUERADE, REDIRECT
  nat_to_destination,
  nat_to_source,
  nat_to_ports,
  nat_random,
  nat_random_fully,
  nat_persistent,
  // LOG
  log_level,
  log_prefix,
  log_tcp_sequence,
  log_tcp_options,
  log_ip_options,
  log_uid,
  log_macdecode,
  // MARK
  mark_set_xmark,
  mark_set_mark,
  mark_and_mark,
  mark_or_mark,
  mark_xor_mark,
  // NFLOG
  nflog_group,
  nflog_prefix,
  nflog_range,
  nflog_size,
  nflog_threshold,
  // REJECT
  reject_with,
  // TPROXY
  tproxy_on_port,
  tproxy_on_ip,
  tproxy_mark,
};
/// The canonical long name of an option without its dashes (`"dport"`, `"to-destination"`); empty for
/// `generic` (use `option::generic_value().name`).
[[nodiscard]] std::string_view option_name(option_id id) noexcept;

/// Which member of `option`'s value is set.
enum class value_kind : std::uint8_t {
  none,       ///< a flag without argument (`--reap`, `--random`, `--rsource`)
  number,     ///< an unsigned integer (`number()`): counts, seconds, groups, codes, fixed-point values
  text,       ///< a decoded string (`text()`): comments, names, prefixes (unquoted, unescaped)
  ports,      ///< one port or range (`ports()`), `first == last` for a single port
  port_list,  ///< a comma list of ports and ranges (`port_list()`), multiport
  pair,       ///< two 32-bit values (`pair()`): value/mask of marks, mask/comparison of tcp flags
  address,    ///< an address and its mask (`address()`)
  nat_range,  ///< a NAT range (`nat()`): DNAT/SNAT `--to-*`, MASQUERADE/REDIRECT `--to-ports`
  set,        ///< an ipset reference (`set()`): name and src/dst flags
  generic,    ///< the arguments as written (`generic_value()`), for options of generic modules
};

/// An address with a netmask: `-s`, `-d`, `--ctorigsrc`, `--mask`, `--on-ip`. The mask need not be
/// contiguous (iptables(8) accepts `10.0.0.0/255.0.255.0` and prints it back as such).
struct address_mask {
  ip_address address;  ///< as the kernel holds it: already ANDed with `mask` where iptables does that
  ip_address mask;
  friend constexpr bool operator==(const address_mask&, const address_mask&) noexcept = default;
};
/// The prefix length of `m.mask`, or nothing when the mask is not contiguous.
[[nodiscard]] std::optional<std::uint8_t> prefix_length(const address_mask& m) noexcept;
/// True when `a` is of the same family and `(a & mask) == address`.
[[nodiscard]] bool contains(const address_mask& m, const ip_address& a) noexcept;

/// The range of a NAT target (iptables-extensions(8) DNAT/SNAT `--to-destination
/// [ipaddr[-ipaddr]][:port[-port[/baseport]]]`, MASQUERADE/REDIRECT `--to-ports port[-port]`).
struct nat_range {
  ip_address min_address;       ///< valid when `has_address`
  ip_address max_address;       ///< equals `min_address` for a single address
  port_range ports;             ///< valid when `has_ports`
  std::uint16_t base_port = 0;  ///< the `/baseport` of a shifted range; 0 when absent
  bool has_address = false;
  bool has_ports = false;
  friend constexpr bool operator==(const nat_range&, const nat_range&) noexcept = default;
};

/// `-m set --match-set NAME FLAGS` (iptables-extensions(8) set): the set's name and, per dimension,
/// whether it is the source (`src`) or destination (`dst`) of the packet.
struct set_reference {
  std::string_view name;
  std::uint8_t dimensions = 0;    ///< 1..6
  std::uint8_t source_flags = 0;  ///< bit i set: dimension i+1 is `src`
};

/// One argument of a generic option: as written (with quotes) and decoded.
struct generic_argument {
  std::string_view raw;   ///< the token as in the source, quotes included
  std::string_view text;  ///< the token as iptables-restore passes it on: unquoted, unescaped
};
/// The value of an option of a generic module or target: its name (without dashes) and arguments.
struct generic_option {
  std::string_view name;
  std::span<const generic_argument> arguments;
};

/// One option of a match or target: `[!] --name [argument...]`, with its decoded value. 24 bytes; the
/// value's payload is a tagged union read through the accessor named after `kind`.
struct option {
  span where{};                       ///< the option as written: from `!` or `--name` to its last argument
  option_id id = option_id::generic;  ///< what it is; `option_name(id)` is its canonical spelling
  value_kind kind = value_kind::none;
  bool negated = false;    ///< `! --name ...`
  std::uint32_t size = 0;  ///< length of `text()`, element count of `port_list()`
  union payload {
    std::uint64_t number;
    std::uint32_t pair[2];
    port_range ports;
    const char* text;
    const port_range* port_list;
    const address_mask* address;
    const nat_range* nat;
    const set_reference* set;
    const generic_option* generic;
  } value{.number = 0};

  /// `kind == number`.
  [[nodiscard]] std::uint64_t number() const noexcept { return value.number; }
  /// `kind == text`.
  [[nodiscard]] std::string_view text() const noexcept { return {value.text, size}; }
  /// `kind == ports`.
  [[nodiscard]] port_range ports() const noexcept { return value.ports; }
  /// `kind == port_list`.
  [[nodiscard]] std::span<const port_range> port_list() const noexcept { return {value.port_list, size}; }
  /// `kind == pair`: {value, mask} of a mark, {mask, comparison} of tcp flags.
  [[nodiscard]] std::uint32_t first() const noexcept { return value.pair[0]; }
  [[nodiscard]] std::uint32_t second() const noexcept { return value.pair[1]; }
  /// `kind == address`.
  [[nodiscard]] const address_mask& address() const noexcept { return *value.address; }
  /// `kind == nat_range`.
  [[nodiscard]] const nat_range& nat() const noexcept { return *value.nat; }
  /// `kind == set`.
  [[nodiscard]] const set_reference& set() const noexcept { return *value.set; }
  /// `kind == generic`.
  [[nodiscard]] const generic_option& generic_value() const noexcept { return *value.generic; }
};

/// The name of an option as written in canonical form: `option_name(o.id)`, or the generic name.
[[nodiscard]] std::string_view name(const option& o) noexcept;

/// A match module in a rule: `-m NAME [options]`, or a protocol match loaded implicitly by `-p PROTO`
/// followed by one of its options (iptables(8): "-p tcp --dport 80" loads `-m tcp`). 32 bytes; lives
/// in the arena of its rule's source.
struct match {
  span where{};  ///< `-m NAME`; for an implicit match, its first option
  module_id id = module_id::generic;
  bool implicit = false;  ///< loaded by `-p PROTO`, not by `-m` (printed with `-m` all the same)

  /// `"tcp"`, `"comment"`, ... (generic: as written).
  [[nodiscard]] std::string_view name() const noexcept { return {name_, name_length_}; }
  /// The options, in the order written (printing uses the module's own order).
  [[nodiscard]] std::span<const option> options() const noexcept { return {options_, option_count_}; }

  match() = default;
  match(std::string_view name, std::span<const option> options, span where, module_id id, bool implicit) noexcept
      : where(where),
        id(id),
        implicit(implicit),
        name_length_(static_cast<std::uint16_t>(name.size())),
        option_count_(static_cast<std::uint16_t>(options.size())),
        name_(name.data()),
        options_(options.data()) {}

 private:
  std::uint16_t name_length_ = 0;   // module names are at most 28 bytes (XT_EXTENSION_MAXNAMELEN)
  std::uint16_t option_count_ = 0;  // a line has at most 251 words
  const char* name_ = nullptr;
  const option* options_ = nullptr;
};

/// The target of a rule: `-j NAME [options]` or `-g CHAIN`. A value `rule::target()` returns.
struct target {
  std::string_view name;  ///< `"DNAT"`, `"ACCEPT"`, a chain name; empty when `id == none`
  std::span<const option> options;
  span where{};  ///< `-j NAME` / `-g NAME`
  target_id id = target_id::none;
  bool is_goto = false;  ///< `-g`: continue in CHAIN and do not return here
};

/// `[!] -s` / `[!] -d` with one address (iptables(8) "address[/mask][,...]": a list makes one rule per
/// address when applied).
struct address_match {
  address_mask value;
  bool negated = false;
  span where{};  ///< the address as written
};

/// `[!] -i` / `[!] -o NAME` (a trailing `+` matches every interface whose name starts with NAME).
struct interface_match {
  std::string_view name;  ///< as written, with the `+`
  bool negated = false;
  span where{};
};

/// `[!] -p PROTO`. `number` 0 is `all`.
struct protocol_match {
  span where{};
  std::uint8_t number = 0;
  bool present = false;
  bool negated = false;
};

/// `[!] -f` (IPv4 only: second and further fragments).
struct fragment_match {
  span where{};
  bool present = false;
  bool negated = false;
};

/// The parts of a rule most rules do not have, kept apart so that the common rule stays small: `-i`,
/// `-o`, `-f`, counters, the rule number, `-E`'s new name, and the names a rename (`-E`) gave the
/// rule's chain or its jump target after the rule was written. In the arena of the rule's source.
struct rule_extras {
  const interface_match* in_interface = nullptr;
  const interface_match* out_interface = nullptr;
  struct counters counters;
  std::string_view new_name;        ///< `-E OLD NEW`: NEW
  /// The rule's chain when its name is not a view into the file: renamed by `-E` in `apply`, or decoded
  /// from a quoted word with escapes (`-A "a\"b"`).
  std::string_view renamed_chain;
  std::string_view renamed_target;  ///< the same for the chain the rule jumps to
  span fragment_where{};
  std::uint32_t position = 0;
  bool has_counters = false;
  bool fragment = false;
  bool fragment_negated = false;
};

/// One command line of the input (in a parsed ruleset), or one rule of a chain (in an applied ruleset,
/// where every rule is an `append`), with its rule specification (iptables(8) "PARAMETERS" and "MATCH AND
/// TARGET EXTENSIONS") when the command takes one.
///
/// 80 bytes: names are offsets into the text of `file` (chain and target names are plain words in
/// iptables-save's format), the arrays (options, matches, addresses) one block in the arena of `file`,
/// and the rare parts (`rule_extras`) one more. Read it through the accessors.
struct rule {
  const nflens::source* file = nullptr;  ///< the source `where` and every span below refer to; owned by the ruleset
  span where{};                  ///< the whole line, without its line terminator
  // (command, policy, only: below, after the private members they pack with)

  /// The chain operated on; empty for `-F`, `-X`, `-Z` without a chain.
  [[nodiscard]] std::string_view chain() const noexcept;
  /// 1-based rule number of `-I`, `-D n`, `-R`, `-Z CHAIN n`; 0 when absent.
  [[nodiscard]] std::uint32_t position() const noexcept { return extras_ != nullptr ? extras_->position : 0; }
  /// `-E OLD NEW`: NEW; empty for other commands.
  [[nodiscard]] std::string_view new_name() const noexcept {
    return extras_ != nullptr ? extras_->new_name : std::string_view{};
  }
  /// True when the command carries a rule specification (-A -I -R -C, `-D CHAIN spec`); the accessors
  /// below give empty or absent parts otherwise.
  [[nodiscard]] bool has_spec() const noexcept { return (flags_ & has_spec_flag) != 0; }
  /// `-s`; empty when absent, several for `-s a,b`.
  [[nodiscard]] std::span<const address_match> source() const noexcept;
  /// `-d`.
  [[nodiscard]] std::span<const address_match> destination() const noexcept;
  /// `-i`, or null.
  [[nodiscard]] const interface_match* in_interface() const noexcept {
    return extras_ != nullptr ? extras_->in_interface : nullptr;
  }
  /// `-o`, or null.
  [[nodiscard]] const interface_match* out_interface() const noexcept {
    return extras_ != nullptr ? extras_->out_interface : nullptr;
  }
  /// `[packets:bytes]` before the command, or `-c packets bytes`; null when absent.
  [[nodiscard]] const struct counters* counters() const noexcept {
    return extras_ != nullptr && extras_->has_counters ? &extras_->counters : nullptr;
  }
  /// `-m` modules (and implicit protocol matches) in order.
  [[nodiscard]] std::span<const match> matches() const noexcept;
  /// Every option of the rule: the matches' in match order, then the target's.
  [[nodiscard]] std::span<const option> options() const noexcept;
  /// `-j` / `-g`; `id == none` when absent.
  [[nodiscard]] struct target target() const noexcept;
  /// `-p`.
  [[nodiscard]] protocol_match protocol() const noexcept {
    return {protocol_where_, protocol_, (flags_ & protocol_flag) != 0, (flags_ & protocol_negated_flag) != 0};
  }
  /// `-f`.
  [[nodiscard]] fragment_match fragment() const noexcept {
    if (extras_ == nullptr) return {};
    return {extras_->fragment_where, extras_->fragment, extras_->fragment_negated};
  }
  /// The rare parts, or null.
  [[nodiscard]] const rule_extras* extras() const noexcept { return extras_; }

 private:
  friend struct rule_builder;
  static constexpr std::uint8_t has_spec_flag = 1, protocol_flag = 2, protocol_negated_flag = 4, goto_flag = 8;
  const std::byte* arrays_ = nullptr;  // options, then matches, then sources and destinations
  const rule_extras* extras_ = nullptr;
  span target_where_{};
  span protocol_where_{};
  std::uint32_t chain_offset_ = 0;   // in file->text()
  std::uint32_t target_offset_ = 0;  // in file->text()
  std::uint32_t source_count_ = 0;
  std::uint32_t destination_count_ = 0;
  std::uint16_t chain_length_ = 0;  // chain names are at most 28 bytes, target names 29
  std::uint16_t target_length_ = 0;
  std::uint16_t option_count_ = 0;  // a line has at most 251 words
  std::uint16_t target_option_count_ = 0;
  std::uint16_t match_count_ = 0;
  target_id target_id_ = target_id::none;
  std::uint8_t protocol_ = 0;
  std::uint8_t flags_ = 0;

 public:
  command_kind command = command_kind::append;
  chain_policy policy = chain_policy::none;  ///< `-P CHAIN POLICY`
  family_filter only = family_filter::any;   ///< `-4` / `-6` prefix
};
static_assert(sizeof(rule) <= 80, "a rule of a 400,000-rule dump: keep it small");

/// Builds and edits rules: for the parser and `apply` (which derive rules: one per address of `-s a,b`,
/// a chain or jump renamed by `-E`). Arrays and extras are stored in the arena of `file`. The chain and
/// target names of `parts` are views into `file.text()` or, when not (a name decoded into the arena), go
/// into `rule_extras::renamed_chain`/`renamed_target`.
struct rule_builder {
  /// The parts of a rule specification as plain values; spans of `where` relative to `file`.
  struct parts {
    std::string_view chain;  ///< a view into file->text(), or a decoded name elsewhere
    std::span<const option> options;  ///< the matches' options in match order, then the target's
    std::span<const match> matches;   ///< each match's options a range of `options` (copied along)
    std::span<const address_match> sources, destinations;
    std::string_view target_name;  ///< the same, or empty
    span target_where{};
    std::size_t target_options = 0;  ///< the last `target_options` of `options` are the target's
    target_id target = target_id::none;
    bool is_goto = false;
    protocol_match protocol;
    bool has_spec = false;
    rule_extras extras;  ///< stored only when it differs from a default one
  };
  /// A rule of `file` with these parts. `r.where`, `command`, `policy`, `only` are kept from `r`.
  static void build(rule& r, source& file, const parts& p);
  /// The same rule with its sources and destinations replaced (one address each, for `-s a,b`).
  static rule with_addresses(const rule& r, source& arena, std::span<const address_match> sources,
                             std::span<const address_match> destinations);
  /// The same rule with other extras (a rename, counters dropped).
  static rule with_extras(const rule& r, source& arena, const rule_extras& extras);
};

/// A chain: `:NAME POLICY [packets:bytes]` (built-in chains carry a policy, user chains `-`).
struct chain {
  std::string_view name;
  const source* file = nullptr;  ///< null for a built-in chain that `apply` created
  span where{};                  ///< the declaration (or the line that created the chain)
  struct counters counters;      ///< the policy counters; meaningful when `has_counters`
  std::uint32_t first_rule = 0;  ///< applied rulesets: index of the chain's first rule in `table::rules`
  std::uint32_t rule_count = 0;  ///< applied rulesets: number of rules of the chain
  chain_policy policy = chain_policy::none;
  bool builtin = false;
  bool has_counters = false;  ///< the declaration has `[packets:bytes]`
};

/// A table block `*NAME ... COMMIT` (parsed), or a table (applied).
struct table {
  table_id id = table_id::filter;
  const source* file = nullptr;
  span where{};               ///< the `*NAME` line
  bool committed = false;     ///< the block ended with `COMMIT` (applied tables: always true)
  bool applied = false;       ///< built by `apply`: chains in iptables-save order, rules grouped
  std::vector<chain> chains;  ///< parsed: declarations in file order; applied: iptables-save order
  std::vector<rule> rules;    ///< parsed: commands in file order; applied: rules grouped per chain
};

/// A whole input or state.
struct ruleset {
  ip_family family = ip_family::ipv4;  ///< iptables (IPv4) or ip6tables (IPv6)
  bool applied = false;                ///< true for the state `apply` and `load` build (see the file comment)
  std::vector<table> tables;
  std::vector<source_ptr> sources;  ///< every source a node of this ruleset points into
};

/// The rules of a chain of an applied ruleset, in order (empty for a parsed ruleset).
[[nodiscard]] std::span<const rule> rules_of(const table& t, const chain& c) noexcept;
/// The table with that id (applied rulesets have at most one), or null.
[[nodiscard]] const table* find_table(const ruleset& r, table_id id) noexcept;
/// The chain of that name, or null. O(log n) in an applied table (built-ins first, user chains sorted),
/// O(n) in a parsed one.
[[nodiscard]] const chain* find_chain(const table& t, std::string_view name) noexcept;

// ---------------------------------------------------------------------------------------------------
// Parsing

/// How to read the text.
struct parse_options {
  /// The family the text is for. Unset: IPv6 when the `# Generated by ip6tables-save` header says so,
  /// else what the first rule line that tells says (an address; a module or target of one family only,
  /// such as `-m icmp6`, `-m hl`, `-j HL` or `-m ttl`, `-j TTL`; `-f`; `-p icmp` / `-p ipv6-icmp`; a
  /// REJECT type, NAT or conntrack address of one family), else IPv4. Addresses of the other family are
  /// errors, except on lines with the other family's `-4`/`-6` prefix.
  std::optional<ip_family> family;
  /// Also accept lines as `iptables -S` prints them: commands outside any `*table` block go to
  /// `lenient_table`, and a block may end without `COMMIT`.
  bool lenient = false;
  table_id lenient_table = table_id::filter;
  struct limits limits;
};

/// Parses `iptables-save` / `ip6tables-save` output or `iptables-restore` input. `name` is what
/// diagnostics print for the text (a path, `-`). Syntax errors are diagnostics (`file:line:column`,
/// recovery at the next line, at most `limits::max_errors`); a line with an error is left out of the
/// result, which is then incomplete (`ok()` false). Modules and targets without typed accessors are kept
/// generically and reported with a `not_modelled` warning. Never throws for bad input.
[[nodiscard]] result<ruleset> parse(std::string name, std::string text, const parse_options& options = {});

/// Like `parse`, throwing `parse_error` when the text has errors.
[[nodiscard]] ruleset parse_or_throw(std::string name, std::string text, const parse_options& options = {});

// ---------------------------------------------------------------------------------------------------
// iptables-restore semantics

/// How to apply restore input (iptables-restore(8) options).
struct apply_options {
  /// `--noflush`: a table block changes the table instead of replacing it, and `:CHAIN` flushes an
  /// existing chain instead of the whole table starting empty.
  bool noflush = false;
  /// `--counters`: take the counters of the input (`[p:b]`, `-c`); otherwise they are zero.
  bool counters = true;
  /// Read the input on its own, as a restore meant for a running ruleset (kube-proxy's partial syncs
  /// rewrite some chains and jump to others they leave alone): a jump to a chain that the block neither
  /// declares nor creates (`:NAME`, `-N NAME`) and that does not exist is taken as a chain of that
  /// ruleset. It is added as an empty user chain, with a `dangling_reference` warning at the jump, instead
  /// of a `chain_not_found` error. For describing an input (`nflens parse` without --print), not for
  /// building the state iptables-restore would: iptables-restore refuses such a jump.
  bool outside_targets = false;
  /// Errors reported at most (0: no cap); past it one `too_many_errors` error is added and the rest
  /// are only counted (their blocks are still left out). `load` uses its parse options' cap instead.
  std::uint32_t max_errors = limits{}.max_errors;
};

/// Applies parsed restore input to `state` as `iptables-restore` 1.8.9 (nf_tables backend) does, checked
/// against it in network namespaces: each `COMMIT`ted block is one transaction (a block with an error
/// changes nothing); without `noflush` a block replaces its table; `:CHAIN` flushes an existing user
/// chain (a built-in chain keeps its rules and only takes the policy); a rule may jump only to a chain
/// that exists at that point; `-X` refuses a chain that has rules or is jumped to; `-E OLD NEW` takes
/// effect at COMMIT (the rest of the block still names the chain OLD) and refuses a chain that the same
/// block declared or created; a block that declares no chain and adds no rule leaves no table. `state` must be an
/// applied ruleset (a default constructed ruleset is an empty one: set `state.applied = true` and its `family`); lines
/// restricted to the other family (`-4`/`-6`) are skipped. Errors (missing chain, rule number too big, chain still
/// referenced, ...) are returned as diagnostics located in `input`'s sources, at most `options.max_errors` of them
/// plus one `too_many_errors`. Nodes derived from the
/// input (one rule per address of `-s a,b`, a jump renamed by `-E`) are allocated in the arena of the
/// input's source: do not apply the same parsed input from two threads at once.
[[nodiscard]] std::vector<diagnostic> apply(ruleset& state, const ruleset& input, const apply_options& options = {});

/// Parses and applies to an empty state: the ruleset the kernel would hold after `iptables-restore`
/// of the text into a fresh network namespace. Parse and apply diagnostics together; their errors share
/// `options.limits.max_errors` (a parse that reached it is not applied).
[[nodiscard]] result<ruleset> load(std::string name, std::string text, const parse_options& options = {},
                                   const apply_options& apply = {});

// ---------------------------------------------------------------------------------------------------
// Printing

/// What the printer writes.
struct print_options {
  /// Rule counters as `[packets:bytes]` prefixes, as `iptables-save -c` prints them: on every rule of an
  /// applied ruleset (`[0:0]` for a rule without), on the commands of a parsed one that were given some.
  bool counters = false;
};

/// Writes a ruleset in `iptables-save` form: for an applied ruleset exactly what iptables-save 1.8.9
/// (nf_tables backend) prints for that state, without the `#` header and footer lines; for a parsed
/// ruleset each block with its declarations and commands in file order, each in canonical form.
[[nodiscard]] std::string print(const ruleset& r, const print_options& options = {});
/// One rule as iptables-save prints it, without a line end: `-A CHAIN ... -j TARGET ...`.
[[nodiscard]] std::string print(const rule& r, ip_family family = ip_family::ipv4, const print_options& options = {});

}  // namespace nflens::iptables
