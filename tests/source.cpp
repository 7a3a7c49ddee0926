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

  TEST_CASE("source: the tree cap counts the arena and what is charged outside it") {
    source s("t", "x");
    s.limit_tree(1000);
    CHECK(s.tree_room() == 1000);
    (void)s.allocate(100, 1);
    CHECK(s.tree_room() == 900);
    s.charge(600);  // a list built outside the arena
    CHECK(s.tree_room() == 300);
    CHECK_THROWS_AS((void)s.allocate(301, 1), nflens::arena_exhausted);
    CHECK_THROWS_AS(s.charge(301), nflens::arena_exhausted);
    CHECK(s.tree_room() == 300);  // a refused charge or allocation counts nothing
    (void)s.allocate(300, 1);
    CHECK(s.tree_room() == 0);
    CHECK_THROWS_AS((void)s.allocate(1, 1), nflens::arena_exhausted);
    s.release(250);  // the list moved into the arena: its storage went back
    CHECK(s.tree_room() == 250);
    s.release(10000);  // at most what is charged
    CHECK(s.tree_room() == 600);
    CHECK(s.arena_bytes() == 400);
    CHECK(s.tree_bytes() == 400);
    CHECK(s.tree_peak() == 1000);  // arena 400 and 600 charged, before the releases
    (void)s.allocate(500, 1);
    CHECK(s.tree_peak() == 1000);
    s.limit_tree(2000);
    s.charge(200);
    s.release(200);
    CHECK(s.tree_peak() == 1100);  // arena 900 and 200 charged
    (void)s.allocate(300, 1);
    CHECK(s.tree_peak() == 1200);  // the arena now
    s.limit_tree(300);  // below what the arena holds: nothing more fits
    CHECK(s.tree_room() == 0);
    CHECK_THROWS_AS(s.charge(1), nflens::arena_exhausted);
    s.limit_tree(0);  // no cap
    CHECK(s.tree_room() > (std::size_t{1} << 40));
    s.charge(std::size_t{1} << 40);
    (void)s.allocate(64, 8);
    CHECK(s.arena_bytes() == 1264);
  }
}
