// SPDX-License-Identifier: MIT
#pragma once

/// @file
/// Diagnostics (errors, warnings, notes) with stable codes and source locations, and the `result` every
/// parse function returns. Bad input never throws out of the library: it becomes diagnostics.

#include <nflens/source.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace nflens {

/// How bad a diagnostic is. A result with any `error` is incomplete.
enum class severity : std::uint8_t { note, warning, error };

/// Stable identifiers of diagnostics. Append only: the numeric values and the names returned by
/// `code_name` are part of the interface (scripts match on them, as on nlohmann's `parse_error.101`).
enum class error_code : std::uint16_t {
  // lexical and syntax (1xx)
  syntax = 100,               ///< "expected X, saw Y"
  unexpected_end = 101,       ///< input ends inside a token, line or block
  unterminated_string = 102,  ///< a quote is opened and never closed
  invalid_character = 103,    ///< NUL byte, control character or byte that cannot start a token
  invalid_number = 104,       ///< not a number where one is required
  number_out_of_range = 105,  ///< a number that does not fit the field (port > 65535, prefix > 32, ...)
  invalid_address = 106,      ///< not an IPv4/IPv6 address
  invalid_prefix = 107,       ///< bad prefix length or mask
  invalid_port = 108,         ///< bad port or port range
  invalid_value = 109,        ///< a value the option or expression does not take
  missing_argument = 110,     ///< an option or keyword without its required argument
  unknown_option = 111,       ///< an option that no loaded match or target takes
  duplicate_option = 112,     ///< an option given twice where the tools refuse that
  misplaced_negation = 113,   ///< `!` where iptables does not accept one
  unknown_keyword = 114,      ///< a word that is not part of the grammar at this place
  // structure (2xx)
  outside_table = 200,          ///< an iptables rule or chain line before any `*table` header
  missing_commit = 201,         ///< an iptables table block not ended by `COMMIT`
  unknown_table = 202,          ///< a table name iptables does not have
  unknown_family = 203,         ///< an nft family that does not exist
  chain_not_found = 204,        ///< applying input: the chain does not exist
  chain_exists = 205,           ///< applying input: the chain already exists (`-N`, `create`)
  rule_not_found = 206,         ///< applying input: no rule matches `-D`, `-R`, `delete rule handle`
  object_not_found = 207,       ///< applying input: a table, set, map, element or object is missing
  object_exists = 208,          ///< applying input: `create` of something that exists
  chain_in_use = 209,           ///< applying input: deleting a chain that is still referenced or not empty
  undefined_variable = 210,     ///< nft `$NAME` without a `define`
  include_not_supported = 211,  ///< nft `include "file"`: nothing is read from disk
  // modelling (3xx, mostly warnings)
  not_modelled = 300,          ///< valid syntax kept as a generic node (warning)
  not_translatable = 301,      ///< an iptables-nft `xt` leftover or similar that cannot be expressed
  dangling_reference = 302,    ///< a jump, goto, map or set reference whose target is not in the ruleset
  unsupported_dispatch = 303,  ///< graph: a construct on a dispatch path that the graph cannot evaluate
  // limits and I/O (4xx)
  nesting_too_deep = 400,   ///< more nesting than `limits::max_depth`
  input_too_large = 401,    ///< more bytes than `limits::max_input_bytes`
  too_many_errors = 402,    ///< `limits::max_errors` reached; the rest of the input was not reported
  io_error = 403,           ///< a file could not be read
  internal_error = 404,     ///< a bug in nflens, reported instead of crashing
  too_many_warnings = 405,  ///< `limits::max_warnings` reached; says how many more were not kept (warning)
  tree_too_large = 406,     ///< the syntax tree outgrew `limits::max_tree_bytes`; the parse stopped there
};

/// The stable, short name of a code, for example `"syntax"` or `"invalid-address"`.
[[nodiscard]] std::string_view code_name(error_code code) noexcept;
/// `"error"`, `"warning"` or `"note"`.
[[nodiscard]] std::string_view severity_name(severity level) noexcept;

/// A secondary location attached to a diagnostic ("previous definition is here").
struct diagnostic_note {
  source_ptr file;  ///< may be null for notes without a place
  span where;
  std::string message;
};

/// One diagnostic. `file` may be null only for diagnostics about the input as a whole (I/O errors).
struct diagnostic {
  severity level = severity::error;
  error_code code = error_code::syntax;
  std::string message;  ///< "expected X after Y, saw Z"; no trailing period, no location
  source_ptr file;
  span where;
  std::vector<diagnostic_note> notes;
};

/// Renders `file:line:column: error[code]: message`, then the source line and a caret line that marks
/// the span (`^~~~`), then each note the same way. Ends with a newline. Tabs in the source line are
/// kept in the caret line so the caret lines up in a terminal.
[[nodiscard]] std::string render(const diagnostic& d);
/// Renders every diagnostic in order.
[[nodiscard]] std::string render(const std::vector<diagnostic>& ds);

/// Number of diagnostics of severity error.
[[nodiscard]] std::size_t error_count(const std::vector<diagnostic>& ds) noexcept;

/// What every parse function returns: the value (complete only when `ok()`), and all diagnostics in
/// source order. When `ok()` is false the value holds what could be recovered and must not be taken
/// as the whole input.
template <class T>
struct result {
  T value{};
  std::vector<diagnostic> diagnostics;
  [[nodiscard]] bool ok() const noexcept { return error_count(diagnostics) == 0; }
};

/// Thrown only by the opt-in `*_or_throw` wrappers; carries the rendered diagnostics.
class parse_error : public std::runtime_error {
 public:
  explicit parse_error(std::vector<diagnostic> ds);
  [[nodiscard]] const std::vector<diagnostic>& diagnostics() const noexcept { return diagnostics_; }

 private:
  std::vector<diagnostic> diagnostics_;
};

/// Collects diagnostics during a parse and enforces `limits::max_errors`: once that many errors are
/// in, one `too_many_errors` error is added and `full()` turns true so the parser can stop. Warnings
/// past `limits::max_warnings` are only counted; `take()` then ends the list with one
/// `too_many_warnings` warning that gives their number. Messages longer than 320 bytes (a message
/// quoting a huge token) keep their first 235 and last 80 bytes around ` ... `; `render` clips the
/// same way.
class diagnostic_sink {
 public:
  diagnostic_sink(source_ptr file, const limits& lim)
      : file_(std::move(file)), max_errors_(lim.max_errors), max_warnings_(lim.max_warnings) {}
  /// Adds a diagnostic located in this sink's source; an error equal to the diagnostic before it (code, place
  /// and message) is kept once. Returns false once the error cap is reached.
  bool report(severity level, error_code code, span where, std::string message);
  bool error(error_code code, span where, std::string message) {
    return report(severity::error, code, where, std::move(message));
  }
  bool warning(error_code code, span where, std::string message) {
    return report(severity::warning, code, where, std::move(message));
  }
  /// Attaches a note to the last diagnostic added (no-op when there is none).
  void note(span where, std::string message);
  /// Counts `n` errors reported through another sink (an included file's) against this sink's cap.
  void charge_errors(std::size_t n) noexcept { errors_ += n; }
  /// Counts `n` warnings kept by another sink (an included file's, or its includer's before it)
  /// against this sink's cap, so that the files of one parse keep `limits::max_warnings` in all.
  void charge_warnings(std::size_t n) noexcept { warnings_ += n; }
  /// Warnings kept by this sink plus those charged to it.
  [[nodiscard]] std::size_t warnings() const noexcept { return warnings_; }
  [[nodiscard]] bool full() const noexcept { return full_; }
  /// Errors reported through this sink plus those charged to it (the `too_many_errors` not counted).
  [[nodiscard]] std::size_t errors() const noexcept { return errors_; }
  /// The error cap (`limits::max_errors`; 0: none).
  [[nodiscard]] std::uint32_t max_errors() const noexcept { return max_errors_; }
  [[nodiscard]] const source_ptr& file() const noexcept { return file_; }
  [[nodiscard]] std::vector<diagnostic> take();

 private:
  source_ptr file_;
  std::uint32_t max_errors_;
  std::uint32_t max_warnings_;
  std::size_t errors_ = 0;
  std::size_t warnings_ = 0;
  std::size_t dropped_warnings_ = 0;
  span last_dropped_{};
  bool last_kept_ = false;  // whether note() applies to the last diagnostic reported
  bool full_ = false;
  std::vector<diagnostic> list_;
};

}  // namespace nflens
