// SPDX-License-Identifier: MIT
#include <nflens/diagnostic.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace nflens {

std::string_view code_name(error_code code) noexcept {
  switch (code) {
    case error_code::syntax: return "syntax";
    case error_code::unexpected_end: return "unexpected-end";
    case error_code::unterminated_string: return "unterminated-string";
    case error_code::invalid_character: return "invalid-character";
    case error_code::invalid_number: return "invalid-number";
    case error_code::number_out_of_range: return "number-out-of-range";
    case error_code::invalid_address: return "invalid-address";
    case error_code::invalid_prefix: return "invalid-prefix";
    case error_code::invalid_port: return "invalid-port";
    case error_code::invalid_value: return "invalid-value";
    case error_code::missing_argument: return "missing-argument";
    case error_code::unknown_option: return "unknown-option";
    case error_code::duplicate_option: return "duplicate-option";
    case error_code::misplaced_negation: return "misplaced-negation";
    case error_code::unknown_keyword: return "unknown-keyword";
    case error_code::outside_table: return "outside-table";
    case error_code::missing_commit: return "missing-commit";
    case error_code::unknown_table: return "unknown-table";
    case error_code::unknown_family: return "unknown-family";
    case error_code::chain_not_found: return "chain-not-found";
    case error_code::chain_exists: return "chain-exists";
    case error_code::rule_not_found: return "rule-not-found";
    case error_code::object_not_found: return "object-not-found";
    case error_code::object_exists: return "object-exists";
    case error_code::chain_in_use: return "chain-in-use";
    case error_code::undefined_variable: return "undefined-variable";
    case error_code::include_not_supported: return "include-not-supported";
    case error_code::not_modelled: return "not-modelled";
    case error_code::not_translatable: return "not-translatable";
    case error_code::dangling_reference: return "dangling-reference";
    case error_code::unsupported_dispatch: return "unsupported-dispatch";
    case error_code::nesting_too_deep: return "nesting-too-deep";
    case error_code::input_too_large: return "input-too-large";
    case error_code::too_many_errors: return "too-many-errors";
    case error_code::io_error: return "io-error";
    case error_code::internal_error: return "internal-error";
    case error_code::too_many_warnings: return "too-many-warnings";
    case error_code::tree_too_large: return "tree-too-large";
  }
  return "unknown";
}

std::string_view severity_name(severity level) noexcept {
  switch (level) {
    case severity::note: return "note";
    case severity::warning: return "warning";
    case severity::error: return "error";
  }
  return "error";
}

namespace {

// How much of a source line an excerpt shows. A hostile input can put megabytes on one line; the
// excerpt then shows a window of it around the caret, so a diagnostic stays a few hundred bytes.
constexpr std::size_t excerpt_width = 200;   // longest line shown whole
constexpr std::size_t excerpt_context = 80;  // bytes shown before the caret in a clipped line

bool is_utf8_continuation(char c) noexcept { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// Control characters other than tab (NUL, ESC, a lone CR ...) would garble or drive the terminal;
// each becomes one '?' so the caret still lines up.
void append_printable(std::string& out, std::string_view text) {
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    out += (u < 0x20 && c != '\t') || u == 0x7F ? '?' : c;
  }
}

// Messages quote input ("saw `...`"); a 100 MB token must not make a 100 MB message. Longer messages
// keep their start and their end (which usually says what was expected) around a `...`.
constexpr std::size_t message_width = 320;
constexpr std::size_t message_tail = 80;

std::string clip_message(std::string message) {
  if (message.size() <= message_width) return message;
  std::size_t head = message_width - message_tail - 5;
  while (head > 0 && is_utf8_continuation(message[head])) --head;
  std::size_t tail = message.size() - message_tail;
  while (tail < message.size() && is_utf8_continuation(message[tail])) ++tail;
  return message.substr(0, head) + " ... " + message.substr(tail);
}

// Source line, then a caret line under the span. Tabs are copied so the caret lines up; the marker
// is clipped to the line (a span running past the end of the line is marked to its end). Lines longer
// than `excerpt_width` are shown as a window around the caret, with `...` where text is left out.
void render_excerpt(std::string& out, const source& file, span where) {
  const location at = file.locate(where);
  const std::string_view line = file.line(at.line);
  const std::size_t column = std::min<std::size_t>(at.column - 1, line.size());
  std::size_t first = 0;
  std::size_t last = line.size();
  if (line.size() > excerpt_width) {
    first = column > excerpt_context ? column - excerpt_context : 0;
    while (first > 0 && first < column && is_utf8_continuation(line[first])) ++first;  // whole characters
    last = std::min(line.size(), first + excerpt_width);
    while (last < line.size() && last > column && is_utf8_continuation(line[last])) --last;
  }
  const std::string_view lead = first > 0 ? "..." : "";
  out += fmt::format("{:>5} | {}", at.line, lead);
  append_printable(out, line.substr(first, last - first));
  out += last < line.size() ? "...\n" : "\n";
  std::string marker(lead.size(), ' ');
  for (std::size_t i = first; i < column; ++i) marker += line[i] == '\t' ? '\t' : ' ';
  marker += '^';
  const std::size_t room = last > column ? last - column : 0;
  const std::size_t tildes = std::min<std::size_t>(where.length, room);
  if (tildes > 1) marker.append(tildes - 1, '~');
  out += fmt::format("      | {}\n", marker);
}

void render_head(std::string& out, const source* file, span where, std::string_view level, std::string_view code,
                 std::string_view message) {
  if (file != nullptr) {
    const location at = file->locate(where);
    out += fmt::format("{}:{}:{}: ", file->name(), at.line, at.column);
  }
  if (code.empty())
    out += fmt::format("{}: ", level);
  else
    out += fmt::format("{}[{}]: ", level, code);
  append_printable(out, message.size() > message_width ? clip_message(std::string(message)) : message);
  out += '\n';
}

}  // namespace

std::string render(const diagnostic& d) {
  std::string out;
  render_head(out, d.file.get(), d.where, severity_name(d.level), code_name(d.code), d.message);
  if (d.file) render_excerpt(out, *d.file, d.where);
  for (const auto& n : d.notes) {
    render_head(out, n.file.get(), n.where, "note", {}, n.message);
    if (n.file) render_excerpt(out, *n.file, n.where);
  }
  return out;
}

std::string render(const std::vector<diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) out += render(d);
  return out;
}

std::size_t error_count(const std::vector<diagnostic>& ds) noexcept {
  return static_cast<std::size_t>(
      std::count_if(ds.begin(), ds.end(), [](const diagnostic& d) { return d.level == severity::error; }));
}

parse_error::parse_error(std::vector<diagnostic> ds) : std::runtime_error(render(ds)), diagnostics_(std::move(ds)) {}

bool diagnostic_sink::report(severity level, error_code code, span where, std::string message) {
  last_kept_ = false;
  if (full_) return false;
  // The same error at the same place says nothing new (two blocks left open at the end of the input
  // both expect their '}' there): kept once.
  if (level == severity::error && !list_.empty()) {
    const diagnostic& last = list_.back();
    if (last.level == level && last.code == code && last.where == where && last.message == message) return true;
  }
  if (level == severity::error) {
    if (max_errors_ != 0 && errors_ >= max_errors_) {
      list_.push_back({severity::error, error_code::too_many_errors,
                       fmt::format("too many errors ({}); the rest of the input was not checked", max_errors_), file_,
                       where, {}});
      full_ = true;
      return false;
    }
    ++errors_;
  } else if (level == severity::warning) {
    if (max_warnings_ != 0 && warnings_ >= max_warnings_) {
      ++dropped_warnings_;
      last_dropped_ = where;
      return true;  // parsing goes on: a warning does not make the result incomplete
    }
    ++warnings_;
  }
  list_.push_back({level, code, clip_message(std::move(message)), file_, where, {}});
  last_kept_ = true;
  return true;
}

void diagnostic_sink::note(span where, std::string message) {
  if (last_kept_ && !list_.empty()) list_.back().notes.push_back({file_, where, clip_message(std::move(message))});
}

std::vector<diagnostic> diagnostic_sink::take() {
  if (dropped_warnings_ > 0) {
    list_.push_back({severity::warning, error_code::too_many_warnings,
                     fmt::format("{} more warnings not shown (the limit is {}); the last is here", dropped_warnings_,
                                 max_warnings_),
                     file_, last_dropped_, {}});
    dropped_warnings_ = 0;
  }
  return std::move(list_);
}

}  // namespace nflens
