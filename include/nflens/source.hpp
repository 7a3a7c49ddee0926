// SPDX-License-Identifier: MIT
#pragma once

/// @file
/// Source texts, byte spans into them, line/column lookup, and the arena that holds parsed nodes.
///
/// Every AST node of nflens carries a `span`: a byte range relative to the `source` it was parsed from.
/// Top-level nodes (tables, chains, rules, sets, elements, commands) also carry the `source_ptr` of their
/// text, so that a ruleset assembled from several inputs (a dump plus restore or `nft -f` deltas) still
/// tells, for every node, which file, line and column it came from. Sub-nodes (matches, options,
/// expressions, statements) use the source of the top-level node that contains them.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <memory_resource>
#include <mutex>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace nflens {

/// A byte range `[offset, offset + length)` in one source text. 8 bytes, trivially copyable.
struct span {
  std::uint32_t offset = 0;  ///< byte offset from the start of the source text
  std::uint32_t length = 0;  ///< length in bytes
  friend constexpr bool operator==(span, span) noexcept = default;
};

/// A position resolved from a byte offset: 1-based line, 1-based byte column (a tab counts as one
/// byte, as in nft's and gcc's `file:line:column`), and the byte offset itself.
struct location {
  std::uint32_t line = 0;
  std::uint32_t column = 0;
  std::uint32_t offset = 0;
  friend constexpr bool operator==(const location&, const location&) noexcept = default;
};

/// One input text (a file, standard input or an in-memory string) and the memory of everything parsed
/// from it. Nodes refer into `text()` with `std::string_view` and `span`; decoded strings that differ
/// from the text (unescaped quotes, for example) and node arrays live in the source's arena. A source
/// is created by a parse function, filled during that parse, and shared read-only (`source_ptr`)
/// afterwards by every ruleset that holds nodes from it (`shared_from_this()` gives the owner of a
/// node's `const source*`). Texts up to 4 GiB (offsets are 32-bit).
class source : public std::enable_shared_from_this<source> {
 public:
  /// Takes ownership of `text`; `name` is what diagnostics print (a path, `-` or `<string>`).
  source(std::string name, std::string text);
  source(const source&) = delete;
  source& operator=(const source&) = delete;
  ~source();

  [[nodiscard]] std::string_view name() const noexcept { return name_; }
  [[nodiscard]] std::string_view text() const noexcept { return text_; }
  /// The text a span covers; an empty view when the span lies outside the text.
  [[nodiscard]] std::string_view text(span s) const noexcept;
  /// Line and column of a byte offset (offsets past the end resolve to the end). O(log lines); the first
  /// lookup of a source builds its line table (one pass over the text; thread-safe).
  [[nodiscard]] location locate(std::uint32_t offset) const noexcept;
  [[nodiscard]] location locate(span s) const noexcept { return locate(s.offset); }
  /// The text of 1-based line `line`, without its line terminator (`\n` or `\r\n`).
  [[nodiscard]] std::string_view line(std::uint32_t line) const noexcept;
  /// Number of lines; a final line without a newline counts, an empty text has one (empty) line.
  [[nodiscard]] std::uint32_t line_count() const noexcept { return static_cast<std::uint32_t>(line_starts().size()); }
  /// The span of `part`, which must be a view into `text()`.
  [[nodiscard]] span span_of(std::string_view part) const noexcept;

  /// Arena allocation for parsers: storage that lives as long as the source. Never freed piecemeal.
  /// Throws `arena_exhausted` when the tree would pass its cap (`limit_tree`). Inline: a parse makes an
  /// allocation for most nodes (a million in a large dump).
  [[nodiscard]] void* allocate(std::size_t bytes, std::size_t alignment) {
    if (bytes > arena_room_ - arena_bytes_) over_limit();  // arena_bytes_ <= arena_room_ always
    arena_bytes_ += bytes;
    return arena_.allocate(bytes, alignment);
  }

  /// The syntax tree's memory cap (`limits::max_tree_bytes`): what the arena hands out plus what a parser
  /// holds outside it while it builds the tree and `charge`s here (a list under construction, a table's
  /// rule vector), so that the cap bounds a parse's memory and not only its result. One account for
  /// every parser.
  /// Sets the cap in bytes (0: no cap). The parse functions set it before they parse; it applies to what
  /// is allocated or charged after it is set.
  void limit_tree(std::size_t max_bytes) noexcept {
    tree_limit_ = max_bytes == 0 ? no_cap : max_bytes;
    update_arena_room();
  }
  /// Counts `bytes` held outside the arena against the cap; the arena's room shrinks by as much. Throws
  /// `arena_exhausted` (and counts nothing) when the tree would pass the cap.
  void charge(std::size_t bytes) {
    if (bytes > tree_room()) over_limit();
    charged_ += bytes;
    update_arena_room();
  }
  /// Gives back bytes charged earlier (at most what is charged).
  void release(std::size_t bytes) noexcept {
    peak_ = std::max(peak_, arena_bytes_ + charged_);  // the arena only grows: the highest point was now
    charged_ -= std::min(bytes, charged_);
    update_arena_room();
  }
  /// Bytes counted against the cap now: the arena's and those still charged (after an iptables parse, its
  /// tables' lists; the nft parser's lists under construction are given back when it ends).
  [[nodiscard]] std::size_t tree_bytes() const noexcept { return arena_bytes_ + charged_; }
  /// The most bytes counted against the cap at any time so far: what a parse of this source needs as
  /// `limits::max_tree_bytes` (its lists under construction included, which it gave back when it ended).
  [[nodiscard]] std::size_t tree_peak() const noexcept { return std::max(peak_, tree_bytes()); }
  /// Bytes the tree may still take, in the arena or charged; a very large number when there is no cap.
  [[nodiscard]] std::size_t tree_room() const noexcept { return arena_room_ - arena_bytes_; }
  /// Copies `items` into the arena. Only for trivially destructible node types (no destructor runs).
  template <class T>
  [[nodiscard]] std::span<const T> store(std::span<const T> items) {
    static_assert(std::is_trivially_destructible_v<T>, "arena nodes are never destroyed");
    if (items.empty()) return {};
    auto* out = static_cast<T*>(allocate(sizeof(T) * items.size(), alignof(T)));
    for (std::size_t i = 0; i < items.size(); ++i) std::construct_at(out + i, items[i]);
    return {out, items.size()};
  }
  /// Copies one node into the arena and returns a stable pointer to it.
  template <class T>
  [[nodiscard]] const T* store_one(const T& item) {
    static_assert(std::is_trivially_destructible_v<T>, "arena nodes are never destroyed");
    return std::construct_at(static_cast<T*>(allocate(sizeof(T), alignof(T))), item);
  }
  /// Copies a string into the arena (for decoded text that is not a slice of the source).
  [[nodiscard]] std::string_view store(std::string_view text);
  /// Bytes taken by the arena so far (for the benchmarks' memory accounting).
  [[nodiscard]] std::size_t arena_bytes() const noexcept { return arena_bytes_; }

 private:
  std::string name_;
  std::string text_;
  // The line table (4 bytes a line) is built on the first lookup: a parse that meets no error needs none.
  [[nodiscard]] const std::vector<std::uint32_t>& line_starts() const noexcept;
  mutable std::vector<std::uint32_t> line_starts_;
  mutable std::once_flag lines_built_;
  std::pmr::monotonic_buffer_resource arena_;
  static constexpr std::size_t no_cap = std::numeric_limits<std::size_t>::max() / 2;  // no overflow in sums
  std::size_t arena_bytes_ = 0;
  std::size_t tree_limit_ = no_cap;
  std::size_t charged_ = 0;
  std::size_t peak_ = 0;  // tree_bytes() before the last release (see tree_peak)
  std::size_t arena_room_ = no_cap;  // the arena's share of the cap: tree_limit_ - charged_, or 0
  void update_arena_room() noexcept {
    arena_room_ = charged_ < tree_limit_ ? tree_limit_ - charged_ : 0;
    if (arena_room_ < arena_bytes_) arena_room_ = arena_bytes_;  // a cap set below what is already there
  }
  [[noreturn, gnu::cold]] static void over_limit();  // throws arena_exhausted
};

/// Thrown by `source::allocate` when a parse's syntax tree would outgrow `limits::max_tree_bytes`. The
/// parse functions catch it and report `error_code::tree_too_large` at the item being parsed; it never
/// leaves them. A `std::bad_alloc`, so code that handles running out of memory handles this too.
class arena_exhausted : public std::bad_alloc {
 public:
  [[nodiscard]] const char* what() const noexcept override { return "nflens: syntax tree memory limit reached"; }
};

/// Shared, read-only ownership of a source. Rulesets keep the sources their nodes point into alive.
using source_ptr = std::shared_ptr<const source>;

/// Limits that bound the work and memory any input can cause (README.md, "Limits"). Every parse function
/// takes them in its options.
struct limits {
  std::size_t max_input_bytes = std::size_t{1} << 30;  ///< larger inputs are refused with `input_too_large`
  std::uint32_t max_errors = 50;                       ///< diagnostics of severity error kept per parse
  /// Nesting of blocks, sets, parentheses, JSON values; operators in one expression; jumps a graph
  /// follows. Taken as at most `depth_ceiling` whatever it is set to (`depth()`): every level is a
  /// recursion, and a million levels would overflow the stack.
  std::uint32_t max_depth = 256;
  /// Diagnostics of severity warning kept per parse (0: no cap); the rest are counted in one
  /// `too_many_warnings` warning. A million unmodelled statements must not make a million diagnostics.
  std::uint32_t max_warnings = 1000;
  /// Bytes the syntax tree of one source text may take (its arena: nodes and decoded strings), so that
  /// memory stays bounded on any input, whatever its density: a parse that needs more stops at the item
  /// it is in with `tree_too_large`. 0: no cap. The parsers count what they hold outside the arena too
  /// (`source::charge`: nft the rules, elements, commands and names of what it is building, a large list
  /// at its reserved size; the JSON reader its document tree and side lists; iptables each table's rules
  /// and chains and its index of unmodelled modules), so that the cap bounds the parse's memory and not
  /// only its result: with the cap at twice the input, a parse holds at most three times the input plus
  /// 64 MB (bench_hostile); `source::tree_peak` tells what a parse needed. The tree of the densest nft text, set
  /// elements of two bytes (`1,`), is 32 times the input (a 1 GiB input would need 32 GiB); a kube-proxy
  /// dump's is about 2 times (65 MB for 10,000 Services in nft). The default, 2 GiB, is 30 times that
  /// dump's. An included nft file is a source of its own, with its own cap.
  std::size_t max_tree_bytes = std::size_t{2} << 30;

  /// A ceiling that holds on an 8 MB stack even under AddressSanitizer (braces nested 2,048 deep overflowed it).
  static constexpr std::uint32_t depth_ceiling = 1024;
  /// The nesting limit in effect: `max_depth`, at most `depth_ceiling`.
  [[nodiscard]] constexpr std::uint32_t depth() const noexcept {
    return max_depth < depth_ceiling ? max_depth : depth_ceiling;
  }
};

}  // namespace nflens
