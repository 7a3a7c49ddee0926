// SPDX-License-Identifier: MIT
#pragma once

// What the hostile-input tests assert about any parse result: either a clean parse, or errors that are
// located inside the input, render to a bounded text and respect the caps of `limits`.

#include <nflens/diagnostic.hpp>

#include <doctest/doctest.h>

#include <cstddef>
#include <string_view>
#include <vector>

namespace nflens::test {

/// Every diagnostic points into a source whose text is `text`, renders in under 4 kB per excerpt, and
/// the counts respect `lim`. Returns the number of errors.
inline std::size_t check_located(const std::vector<diagnostic>& ds, std::string_view text, const limits& lim = {}) {
  std::size_t errors = 0, warnings = 0;
  for (const auto& d : ds) {
    if (d.level == severity::error) ++errors;
    if (d.level == severity::warning) ++warnings;
    CHECK_MESSAGE(!d.message.empty(), "a diagnostic without a message");
    REQUIRE_MESSAGE(d.file != nullptr, "diagnostic without a source: " << d.message);
    CHECK(d.file->text().size() == text.size());
    CHECK(d.where.offset <= text.size());
    CHECK(d.where.length <= text.size() - std::min<std::size_t>(d.where.offset, text.size()));
    CHECK(render(d).size() < 4096 * (1 + d.notes.size()));
  }
  CHECK(errors <= lim.max_errors + 1);
  CHECK(warnings <= lim.max_warnings + 1);
  return errors;
}

/// The first diagnostic of severity error, or null.
inline const diagnostic* first_error(const std::vector<diagnostic>& ds) {
  for (const auto& d : ds)
    if (d.level == severity::error) return &d;
  return nullptr;
}

/// `parse(options)` of `text` under `limits::max_tree_bytes`. With half the tree the input needs, the
/// parse stops with exactly one error, `tree_too_large`, that names the limit and is located at the item
/// where the tree reached the cap, in the middle half of the input (not at its start, where an error
/// without a place would point, nor at its end), having taken no more than the cap. With what it needs,
/// it parses cleanly. What it needs is the most its source counted against the cap (`tree_peak`: the
/// arena and the lists the parser held on the side, at their reserved size).
template <class Options, class Parse>
void check_tree_cap(std::string_view text, Parse parse) {
  const auto full = parse(Options{});
  REQUIRE(full.ok());
  const std::size_t needed = full.value.sources.front()->tree_peak();
  REQUIRE(needed > 0);
  Options opt;
  opt.limits.max_tree_bytes = needed / 2;
  const auto half = parse(opt);
  check_located(half.diagnostics, text);
  std::size_t errors = 0;
  for (const auto& d : half.diagnostics) {
    if (d.level != severity::error) continue;
    ++errors;
    CHECK(d.code == error_code::tree_too_large);
    CHECK(d.message.find("max_tree_bytes") != std::string::npos);
    CHECK(d.where.offset > text.size() / 4);
    CHECK(d.where.offset < text.size() / 4 * 3);
  }
  CHECK(errors == 1);
  CHECK(half.value.sources.front()->arena_bytes() <= needed / 2);
  opt.limits.max_tree_bytes = needed;  // enough
  CHECK(parse(opt).ok());
}

}  // namespace nflens::test
