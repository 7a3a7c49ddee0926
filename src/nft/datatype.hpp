// SPDX-License-Identifier: MIT
#pragma once

// nft's datatypes (nftables datatype.c, proto.c, meta.c, ct.c, exthdr.c): what the value on the other
// side of a selector means and how `nft list` spells it. A listing prints every constant through the
// datatype of the expression it is compared with, assigned to or looked up by (`meta mark 0x00004000`,
// `tcp dport 22`, `ip protocol tcp`, `ct state established`); the AST stores values decoded, so the
// printer and the JSON writers recover the spelling from here. Private to the library.

#include <nflens/nft.hpp>
#include <nflens/nft_types.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nflens::nft::types {

/// nft's datatypes (nft_types.hpp holds the table of what each selector reads).
using dtype = nft::datatype;

/// The datatype of an expression: one datatype, or a concatenation of up to 16 (`ipv4_addr .
/// inet_service`). An empty type (`invalid`, no parts) means nothing is known.
struct value_type {
  dtype base = dtype::invalid;
  std::uint8_t count = 0;  ///< number of concatenated parts; 0 when not a concatenation
  std::array<dtype, 16> parts{};

  [[nodiscard]] bool is_concat() const noexcept { return count > 0; }
  /// The type of part `i` of a concatenation (the whole type when not one).
  [[nodiscard]] value_type part(std::size_t i) const noexcept {
    if (count == 0) return *this;
    return value_type{i < count ? parts[i] : dtype::invalid};
  }
};

/// The type a set's `type` clause or `typeof` expression declares.
[[nodiscard]] value_type declared_type(const set_type& t) noexcept;

/// The datatype nft's evaluation gives a key that looks up a named set or map (`ip saddr`, `meta mark &
/// 0xff`, `ip daddr . tcp dport`): a selector's own, a binary operation's left operand's (a shift's too),
/// a concatenation's parts. A constant has none (`invalid`): nft types it from the set; nor has a raw
/// payload, which nft may read as the header field at its offset. Also the type of a `typeof` set.
[[nodiscard]] value_type key_type(const expr& key, family f) noexcept;
/// Whether a key of type `key` cannot look up elements of type `elements` in a named set or map: nft's
/// `datatype_equal` on the whole type and on each part of a concatenation (evaluate.c, "datatype
/// mismatch"). The integer types nft prints differently (`xinteger`, `mptcp_subtype`) are nft's one
/// `integer`. Concatenations of different lengths mismatch; otherwise a part that is not known (`invalid`)
/// matches any: nflens refuses only what it can tell.
[[nodiscard]] bool mismatched(const value_type& key, const value_type& elements) noexcept;
/// A type as a set declaration spells it: `ipv4_addr . inet_service`; `?` for a part not known.
[[nodiscard]] std::string spelling(const value_type& t);

/// Whether values of this type are strings (interface names, helper names): printed quoted.
[[nodiscard]] bool is_string_type(dtype t) noexcept;
/// Whether this type is a bitmask of flags (`tcp flags`, `ct state`, ...): a value with several bits
/// prints as `a | b`, an implicit match means "any of these bits".
[[nodiscard]] bool is_bitmask_type(dtype t) noexcept;
/// Whether this is one of the integer-like types whose elements nft packs five to a line in a named set
/// (expression.c calculate_delim), or two to a line (2), or one per line (1).
[[nodiscard]] int elements_per_line(dtype t) noexcept;

/// The datatype of an expression in family `f`: selectors as nft_types.hpp says (an address whose
/// family the selector leaves open takes the table's), binary operations, concatenations, and
/// constants that carry their own type.
[[nodiscard]] value_type type_of(const expr& e, family f) noexcept;

/// Appends the spelling of integer `v` in type `t` as nft lists it: a symbolic constant where the
/// type has one (`tcp`, `established`, `echo-request`), otherwise the number in the type's base format
/// (`0x00004000` for a mark, `0x0800` for an ether type, decimal for most). Bitmask values with several
/// bits are written `a | b` (`parenthesise` wraps them when they are an operand).
void append_integer(std::string& out, std::uint64_t v, dtype t, bool parenthesise = false);
/// A duration in milliseconds as nft prints it (`1d2h3m4s5ms`, `0s`).
void append_time(std::string& out, std::uint64_t ms);
/// Whether `name` is a symbolic constant of type `t` (or of a protocol/service name nflens knows).
[[nodiscard]] std::optional<std::uint64_t> symbol_value(std::string_view name, dtype t) noexcept;
/// The code of a `reject with icmp|icmpv6|icmpx CODE` statement: its symbolic name or the number.
void append_reject_code(std::string& out, std::uint64_t code, reject_type t);
[[nodiscard]] std::optional<std::uint64_t> reject_code_value(std::string_view name, reject_type t) noexcept;

}  // namespace nflens::nft::types
