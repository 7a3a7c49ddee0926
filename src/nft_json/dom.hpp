// SPDX-License-Identifier: MIT
#pragma once

// A JSON document tree whose every value knows its byte span in the source text, so that schema errors
// ("unknown statement 'foo'") point at file:line:column like syntax errors do — which no DOM of a general
// JSON library offers (nlohmann 3.11 has no value positions). Read once, flat: nodes in one vector,
// container children as index runs in another, strings as views into the text unless they had escapes
// (decoded into the source's arena). RFC 8259, with the limits of nflens::limits. The lists count against
// the source's tree cap (limits::max_tree_bytes) while the document lives: a listing of ten million `0`s
// is a tree of 280 MB. Private.

#include <nflens/diagnostic.hpp>
#include <nflens/source.hpp>

#include "tree_memory.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace nflens::nft::json_detail {

/// `deferred`: an item of `"nftables"` that is an object or array, skipped by `parse` (only its extent is
/// known); `parse_value` reads it when the reader gets to that item.
enum class jkind : std::uint8_t { null, boolean, number, string, array, object, deferred };

/// One JSON value. 24 bytes.
struct jnode {
  jkind kind = jkind::null;
  bool boolean = false;     ///< value of a boolean
  bool integral = false;    ///< a number without fraction or exponent
  bool negative = false;    ///< a number with a leading minus
  std::uint32_t first = 0;  ///< containers: first child in `jdoc::kids`; escaped strings: index in `decoded`
  std::uint32_t count = 0;  ///< containers: children (objects: 2 per member, key then value)
  span where;               ///< the value's text, quotes and brackets included
  bool escaped = false;     ///< a string whose text had escapes (decoded copy in `decoded`)
};

class jdoc {
 public:
  /// Parses `src`'s text. Syntax errors go to `sink` (located, with what was expected); returns false
  /// when the text is not one complete JSON value. With `defer_items`, the items of a top-level
  /// `"nftables"` array (`{"rule": {...}}`) that are objects or arrays are not parsed but kept as
  /// `deferred` nodes spanning their text (brackets matched, strings skipped, nesting checked): a
  /// listing of 100 MB is then read item by item instead of as one tree of all its values.
  bool parse(source& src, diagnostic_sink& sink, std::uint32_t max_depth, bool defer_items = false);
  /// Parses the deferred value `where` of another document of `src` into this one (the root), at
  /// nesting depth `depth`; false after reporting a syntax error. The memory of the last value is reused.
  bool parse_value(source& src, diagnostic_sink& sink, std::uint32_t max_depth, span where, std::uint32_t depth);

  [[nodiscard]] const jnode& root() const noexcept { return nodes_[0]; }
  /// Where `parse` was in the text when the tree outgrew its cap (`arena_exhausted`).
  [[nodiscard]] std::size_t reached() const noexcept { return reached_; }
  [[nodiscard]] const jnode& node(std::uint32_t i) const noexcept { return nodes_[i]; }
  /// Children of an array, or key/value indexes of an object (alternating).
  [[nodiscard]] std::span<const std::uint32_t> kids(const jnode& n) const noexcept {
    return {kids_.data() + n.first, n.count};
  }
  /// The text of a string (decoded), or of a number as written.
  [[nodiscard]] std::string_view text(const jnode& n) const noexcept;
  /// The value of member `key` of an object, or null.
  [[nodiscard]] const jnode* member(const jnode& object, std::string_view key) const noexcept;
  /// The number as an unsigned or signed 64-bit integer, when it is one.
  [[nodiscard]] std::optional<std::uint64_t> unsigned_value(const jnode& n) const noexcept;
  [[nodiscard]] std::optional<std::int64_t> signed_value(const jnode& n) const noexcept;

 private:
  friend class jparser;
  const source* src_ = nullptr;
  detail::node_stack<jnode> nodes_;
  detail::node_stack<std::uint32_t> kids_;
  detail::node_stack<std::string_view> decoded_;
  std::size_t reached_ = 0;
};

/// `"object"`, `"array"`, ... for messages.
[[nodiscard]] std::string_view kind_name(jkind k) noexcept;

}  // namespace nflens::nft::json_detail
