// SPDX-License-Identifier: MIT
// nft's evaluation checks on one rule as a whole (private to the library).
#pragma once

#include <nflens/diagnostic.hpp>
#include <nflens/nft.hpp>

#include <optional>
#include <span>
#include <string>

namespace nflens::nft {

/// Why nft refuses a rule: where (a span of the rule's source), the error code and the message.
struct rule_problem {
  span where{};
  error_code code = error_code::invalid_value;
  std::string message;
};

/// What nft's evaluation (evaluate.c, checked against nft 1.0.6) refuses in a rule of a table of
/// `table_family` as a whole, whether the rule came as text (`nft -f`) or JSON (`nft -j -f`):
///  - a statement after a terminal one (a verdict other than continue, reject, nat, queue): "Statement
///    after terminal statement has no effect";
///  - a NAT or tproxy port without a transport protocol match earlier in the rule (a transport header
///    field, `meta l4proto`, `ip protocol` / `ip6 nexthdr` equal to something, in ip and ip6 tables `ct
///    protocol`): "transport protocol mapping is only valid after transport protocol match";
///  - a NAT or tproxy address of the other family, or in an inet table without `ip` / `ip6` or a match
///    that tells the family;
///  - an ip6 header in an ip table, an ip header in an ip6 table, both in one rule: "conflicting
///    protocols specified"; `meta nfproto` outside an inet table;
///  - a transport header (tcp, udp, icmp, esp, ...) after another one, or after `meta l4proto`, `ip
///    protocol` or `ip6 nexthdr` equal to another protocol: "conflicting protocols specified: tcp vs.
///    udp". A later explicit match does not conflict (`tcp dport 22 meta l4proto udp` loads), nor do
///    tcp options, sctp chunks, `th` or a tunnelled packet's headers. (nft 1.0.6 also takes the first
///    element of `meta l4proto { tcp, udp }` as the protocol; nflens does not follow that.)
///  - `ct [original|reply] saddr|daddr` without `ip` / `ip6` in an inet, bridge or netdev table, unless
///    an earlier match may tell the network protocol: "cannot determine ip protocol version";
///  - a queue number above 65535.
/// The first problem found, or nothing when nft would take the rule.
[[nodiscard]] std::optional<rule_problem> check_rule(family table_family, std::span<const stmt> stmts);
/// What `TARGET set VALUE` cannot write, as nft's grammar has it: only a header field of the packet (not an
/// IPv6 extension header, not a tunnelled packet's header), a meta key, and a ct key (with a direction,
/// only zone, bytes, packets and avgpkt) are targets of `set` (parser_bison.y payload_stmt, meta_stmt,
/// ct_stmt). What `target` is when it is not one ("an IPv6 extension header", "a fib lookup"); nothing when
/// it is.
[[nodiscard]] std::optional<std::string_view> unsettable(const expr& target) noexcept;

/// What nft refuses in a set or map declaration written in text: a type name that is no datatype ("unknown
/// datatype"), `auto-merge` without `flags interval`. Spans into `text` (the source the set's names
/// view), else the set's own. The first problem, or nothing.
[[nodiscard]] std::optional<rule_problem> check_set_declaration(const set_info& set, std::string_view text);

/// What nft's evaluation refuses in the constant `right` of a match or mangle whose other side is `left`:
/// a number wider than the field (`tcp dport 70000`: "Value 70000 exceeds valid range 0-65535"), a word
/// of digits of 2^64 or more, a name that is no value of a closed vocabulary (`ct state establishd`:
/// "Could not parse ct_state"), an IPv4 address with a part over 255, a string too long or empty for
/// an interface name, a range of zero or negative size, a concatenation where one value is expected.
/// Sets, lists and ranges are checked element by element, concatenations item by item. `text` is the
/// source the spans refer to, for quoting a dotted quad; empty when there is none to quote. Throws the
/// problem as a `rule_problem`.
void check_constant(const expr& left, const expr& right, std::string_view text);
/// A range, prefix or wildcard interface name (`"eth*"`) that is `e` or a part of it (when `e` is a
/// concatenation); null when none: what makes an element an interval one.
[[nodiscard]] const expr* interval_part(const expr& e) noexcept;
/// What nft's evaluation (setelem_evaluate, and the kernel for a map element without data) refuses in the
/// elements of a named set or map, checked against its declaration (`type` or `typeof`): a key or data
/// that is no value of its type, as `check_constant` judges it (`type inet_service; elements = { 70000 }`:
/// "Service out of range"); a concatenation with more or fewer parts than the type; a range or prefix in a
/// key without `flags interval`, or in data not declared `interval TYPE` ("Value must be a singleton");
/// data in a set ("set is not a map"); a map element without data; data of a verdict map that is no
/// verdict; an element timeout in a set without timeouts, an expiry without a timeout or past it (the
/// kernel's refusals); in an interval set without `auto-merge`, two elements of one part that share keys
/// ("conflicting intervals specified"). Object maps' data (object names) are not judged. `text` as for
/// `check_constant`. The first problem, or nothing.
[[nodiscard]] std::optional<rule_problem> check_elements(const set_info& set, std::span<const element> elements,
                                                         std::string_view text);
/// `check_constant` over the matches and mangles of a rule (nft runs the same evaluation on `nft -j -f`
/// JSON as on text): the first problem, or nothing.
[[nodiscard]] std::optional<rule_problem> check_constants(std::span<const stmt> stmts);

}  // namespace nflens::nft
