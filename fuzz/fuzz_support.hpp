// SPDX-License-Identifier: MIT
#pragma once

// What every fuzz target checks besides "no crash, no sanitizer report": the properties the public API
// promises for any input. A broken property aborts with a message, which libFuzzer reports as a
// crash and keeps the input for.

#include <nflens/diagnostic.hpp>
#include <nflens/source.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace nflens::fuzz {

/// The fuzzer's bytes as text (the parsers take any bytes: NULs, invalid UTF-8).
inline std::string_view text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Aborts with `what` when `ok` is false.
inline void require(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz: property broken: %s\n", what);
  std::abort();
}

/// Longest rendered diagnostic accepted: the excerpt is clipped to a window, messages are one line
/// and must not quote unbounded input.
inline constexpr std::size_t max_rendered_diagnostic = 4096;

/// Every diagnostic is located inside its own source (or has no source), renders to a bounded text,
/// and the error and warning counts respect `lim.max_errors` and `lim.max_warnings` (plus the one
/// `too_many_errors` or `too_many_warnings`).
inline void check_diagnostics(const std::vector<diagnostic>& ds, const limits& lim = {}) {
  std::size_t errors = 0;
  std::size_t warnings = 0;
  for (const auto& d : ds) {
    if (d.level == severity::error) ++errors;
    if (d.level == severity::warning) ++warnings;
    require(!d.message.empty(), "a diagnostic has a message");
    if (d.file) {
      const std::size_t size = d.file->text().size();
      require(d.where.offset <= size && d.where.length <= size - d.where.offset,
              "a diagnostic span lies in its source");
    }
    for (const auto& n : d.notes)
      if (n.file)
        require(n.where.offset <= n.file->text().size() && n.where.length <= n.file->text().size() - n.where.offset,
                "a note span lies in its source");
    const std::size_t rendered = render(d).size();
    require(rendered <= max_rendered_diagnostic * (1 + d.notes.size()), "a rendered diagnostic is bounded");
  }
  require(lim.max_errors == 0 || errors <= lim.max_errors + 1, "errors are capped at limits::max_errors");
  require(lim.max_warnings == 0 || warnings <= lim.max_warnings + 1, "warnings are capped at limits::max_warnings");
}

}  // namespace nflens::fuzz
