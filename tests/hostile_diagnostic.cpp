// SPDX-License-Identifier: MIT
// Hostile input against the foundation every parser reports through: a diagnostic on a line of many
// megabytes stays small, control characters from the input never reach the terminal, and an address
// with a NUL byte in it is refused rather than cut at the NUL.

#include "pathological.hpp"

#include <nflens/diagnostic.hpp>
#include <nflens/net.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <string>

using namespace nflens;
namespace gen = nflens::pathological;

namespace {
diagnostic error_at(const source_ptr& file, std::uint32_t offset, std::uint32_t length) {
  return {severity::error, error_code::syntax, "expected something", file, span{offset, length}, {}};
}
}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("hostile: a diagnostic on a 10 MB line shows a window around the caret") {
    const std::string text = gen::long_line(gen::dialect::iptables, 10'000'000);
    auto file = std::make_shared<const source>("long.rules", text);
    const std::uint32_t at = 5'000'003;  // inside the only rule line
    const std::string out = render(error_at(file, at, 4));
    CHECK(out.size() < 600);
    CHECK(out.starts_with("long.rules:3:"));
    // The excerpt is clipped on both sides and the caret sits under the byte it points at.
    const auto excerpt = out.find(" | ...");
    REQUIRE(excerpt != std::string::npos);
    const auto excerpt_end = out.find('\n', excerpt);
    CHECK(out.substr(excerpt_end - 3, 3) == "...");
    const auto caret_line = out.find("      | ", excerpt_end);
    const auto caret = out.find('^', caret_line);
    const auto column_in_excerpt = caret - (caret_line + 8);
    CHECK(out.substr(excerpt + 3 + column_in_excerpt, 4) == text.substr(at, 4));
    CHECK(out.substr(caret, 4) == "^~~~");
  }

  TEST_CASE("hostile: a caret near the start or the end of a long line") {
    const std::string text = std::string(1000, 'a') + "\n";
    auto file = std::make_shared<const source>("t", text);
    const std::string start = render(error_at(file, 0, 5000));  // a span past the excerpt is clipped to it
    CHECK(start.find("    1 | aaa") != std::string::npos);
    CHECK(start.find(std::string(200, '~')) == std::string::npos);
    const std::string end = render(error_at(file, 1000, 0));  // at the newline
    CHECK(end.find(" | ...") != std::string::npos);
    CHECK(end.find("...\n") == std::string::npos);  // nothing cut on the right
    CHECK(end.size() < 600);
  }

  TEST_CASE("hostile: a long line of multi-byte characters is cut between characters") {
    std::string text;
    for (int i = 0; i < 400; ++i) text += "\xE2\x82\xAC";  // the euro sign, 3 bytes each
    auto file = std::make_shared<const source>("t", text);
    const std::string out = render(error_at(file, 600, 3));
    const auto start = out.find(" | ...") + 6;
    const auto end = out.find("...\n", start);
    REQUIRE(end != std::string::npos);
    const std::string shown = out.substr(start, end - start);
    CHECK(shown.size() % 3 == 0);
    CHECK(shown.starts_with("\xE2\x82\xAC"));
  }

  TEST_CASE("hostile: control characters and NUL bytes in the source line and message are shown as '?'") {
    auto file = std::make_shared<const source>("t", std::string("-A IN\x1b[31mPUT \0 -j\x7f\r\n", 19));
    diagnostic d = error_at(file, 14, 1);
    d.message = std::string("saw '\x1b[2J\0'", 11);
    const std::string out = render(d);
    CHECK(out ==
          "t:1:15: error[syntax]: saw '?[2J?'\n"
          "    1 | -A IN?[31mPUT ? -j?\n"
          "      |               ^\n");
  }

  TEST_CASE("hostile: the NUL byte and line-end variants keep the line table right") {
    const std::string valid = gen::small_valid(gen::dialect::iptables);
    const source crlf("t", gen::crlf(valid));
    const source lf("t", valid);
    REQUIRE(crlf.line_count() == lf.line_count());
    for (std::uint32_t l = 1; l <= lf.line_count(); ++l) CHECK(crlf.line(l) == lf.line(l));
    const source nul("t", std::string("a\0b\nc", 5));  // a NUL byte does not end a line
    CHECK(nul.line_count() == 2);
    CHECK(nul.line(1) == std::string_view("a\0b", 3));
  }

  TEST_CASE("hostile: an address with a NUL byte is not cut at the NUL") {
    CHECK_FALSE(parse_ip_address(std::string_view("1.2.3.4\0junk", 12)));
    CHECK_FALSE(parse_ip_address(std::string_view("::\0\xd4", 4)));
    CHECK_FALSE(parse_ip_prefix(std::string_view("10.0.0.0\0/8", 11)));
    CHECK(parse_ip_address("1.2.3.4"));
  }
}

TEST_SUITE("unit") {
  TEST_CASE("hostile: warnings are capped at limits::max_warnings and the rest counted once") {
    auto file = std::make_shared<const source>("t", std::string(100, 'x'));
    limits lim;
    lim.max_warnings = 3;
    diagnostic_sink sink(file, lim);
    for (std::uint32_t i = 0; i < 10; ++i) {
      const std::string n = std::to_string(i);  // (not "w" + n: GCC 12 -Wrestrict false positive)
      CHECK(sink.warning(error_code::not_modelled, span{i, 1}, std::string("w").append(n)));
      sink.note(span{i, 1}, std::string("note of w").append(n));
    }
    CHECK(sink.error(error_code::syntax, span{50, 1}, "an error still counts"));
    const auto ds = sink.take();
    REQUIRE(ds.size() == 5);
    CHECK(ds[2].message == "w2");
    CHECK(ds[2].notes.size() == 1);  // notes of dropped warnings do not land on a kept one
    CHECK(ds[3].message == "an error still counts");
    CHECK(ds[4].level == severity::warning);
    CHECK(ds[4].code == error_code::too_many_warnings);
    CHECK(ds[4].message == "7 more warnings not shown (the limit is 3); the last is here");
    CHECK(ds[4].where == span{9, 1});
    CHECK(error_count(ds) == 1);
  }

  TEST_CASE("hostile: a million warnings keep only the cap") {
    auto file = std::make_shared<const source>("t", "x");
    diagnostic_sink sink(file, limits{});
    for (int i = 0; i < 1'000'000; ++i) (void)sink.warning(error_code::not_modelled, {}, "not modelled");
    const auto ds = sink.take();
    CHECK(ds.size() == limits{}.max_warnings + 1);
    CHECK(ds.back().message.starts_with("999000 more warnings"));
  }
}
