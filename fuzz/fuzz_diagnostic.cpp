// SPDX-License-Identifier: MIT
// Sources and diagnostics (source.hpp, diagnostic.hpp, format.hpp) on any text: the line table agrees
// with the text, every offset locates inside it, and a diagnostic anywhere renders to a bounded,
// single-excerpt text without control characters. The first 8 bytes choose the span; the rest is the
// text.

#include "fuzz_support.hpp"

#include <nflens/format.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nflens;
  std::uint32_t where[2] = {0, 0};
  if (size >= sizeof where) {
    std::memcpy(where, data, sizeof where);
    data += sizeof where;
    size -= sizeof where;
  }
  const std::string_view in = fuzz::text(data, size);
  const auto file = std::make_shared<const source>("<fuzz>", std::string(in));
  (void)detect_format(in);

  const auto newlines = static_cast<std::uint32_t>(std::count(in.begin(), in.end(), '\n'));
  const bool ends_open = !in.empty() && in.back() != '\n';
  fuzz::require(file->line_count() == std::max<std::uint32_t>(1, newlines + (ends_open ? 1 : 0)),
                "line count agrees with the newlines");

  const std::uint32_t offset = size == 0 ? 0 : where[0] % (static_cast<std::uint32_t>(size) + 1);
  const location at = file->locate(offset);
  fuzz::require(at.line >= 1 && at.line <= file->line_count(), "a location is on an existing line");
  const std::string_view line = file->line(at.line);
  fuzz::require(line.find('\n') == std::string_view::npos, "a line holds no newline");
  fuzz::require(at.column >= 1 && at.column - 1 <= line.size() + 2, "a column is within its line");

  const span sp{offset, std::min<std::uint32_t>(where[1] % 4096, static_cast<std::uint32_t>(size) - offset)};
  const diagnostic d{
      severity::error, error_code::syntax, "expected something", file, sp, {{file, {0, size > 0 ? 1u : 0u}, "a note"}}};
  fuzz::check_diagnostics({d});
  const std::string rendered = render(d);
  for (const char c : rendered)
    fuzz::require(c == '\n' || c == '\t' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7F),
                  "no control character is printed");
  fuzz::require(std::count(rendered.begin(), rendered.end(), '\n') == 6, "two heads, two excerpts, two carets");
  return 0;
}
