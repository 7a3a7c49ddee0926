// SPDX-License-Identifier: MIT
#include <nflens/source.hpp>

#include <doctest/doctest.h>

#include <array>

using nflens::source;

TEST_SUITE("unit") {
  TEST_CASE("source: locate gives 1-based line and byte column") {
    const source s("t", "ab\ncd\r\n\nlast");
    CHECK(s.line_count() == 4);
    CHECK(s.locate(0u) == nflens::location{1, 1, 0});
    CHECK(s.locate(1u) == nflens::location{1, 2, 1});
    CHECK(s.locate(2u) == nflens::location{1, 3, 2});  // the newline itself belongs to line 1
    CHECK(s.locate(3u) == nflens::location{2, 1, 3});
    CHECK(s.locate(8u) == nflens::location{4, 1, 8});
    CHECK(s.locate(999u).line == 4);  // clamped to the end
    CHECK(s.line(1) == "ab");
    CHECK(s.line(2) == "cd");  // CR stripped
    CHECK(s.line(3).empty());
    CHECK(s.line(4) == "last");
    CHECK(s.line(5).empty());
  }

  TEST_CASE("source: trailing newline does not add a line; empty text has one line") {
    CHECK(source("t", "a\nb\n").line_count() == 2);
    CHECK(source("t", "").line_count() == 1);
    CHECK(source("t", "\n").line_count() == 1);
  }

  TEST_CASE("source: spans and views") {
    const source s("t", "hello world");
    const auto word = s.text().substr(6, 5);
    const auto sp = s.span_of(word);
    CHECK(sp.offset == 6);
    CHECK(sp.length == 5);
    CHECK(s.text(sp) == "world");
    CHECK(s.text(nflens::span{100, 4}).empty());
  }

  TEST_CASE("source: arena keeps copies alive and stable") {
    source s("t", "x");
    const std::array<int, 3> items{1, 2, 3};
    const auto stored = s.store(std::span<const int>(items));
    const auto text = s.store(std::string_view("decoded \"text\""));
    for (int i = 0; i < 10000; ++i) (void)s.store_one(i);  // force new arena blocks
    REQUIRE(stored.size() == 3);
    CHECK(stored[0] == 1);
    CHECK(stored[2] == 3);
    CHECK(text == "decoded \"text\"");
    CHECK(s.arena_bytes() >= 3 * sizeof(int) + 14 + 10000 * sizeof(int));
  }
}
