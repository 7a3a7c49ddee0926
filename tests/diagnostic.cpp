// SPDX-License-Identifier: MIT
#include <nflens/diagnostic.hpp>

#include <doctest/doctest.h>

#include <memory>

using namespace nflens;

TEST_SUITE("unit") {
  TEST_CASE("diagnostic: rendered with file:line:column, code, the line and a caret") {
    auto file = std::make_shared<source>("rules.v4", "*filter\n-A INPUT -s 10.0.0.300 -j DROP\nCOMMIT\n");
    diagnostic d{severity::error, error_code::invalid_address, "expected an IPv4 address after -s, saw '10.0.0.300'",
                 file, span{20, 10}, {}};
    CHECK(render(d) ==
          "rules.v4:2:13: error[invalid-address]: expected an IPv4 address after -s, saw '10.0.0.300'\n"
          "    2 | -A INPUT -s 10.0.0.300 -j DROP\n"
          "      |             ^~~~~~~~~~\n");
  }

  TEST_CASE("diagnostic: tabs are kept so the caret lines up; notes are rendered after") {
    auto file = std::make_shared<source>("r.nft", "table ip t {\n\tchain c {\n\t\tjump x\n");
    diagnostic d{severity::error, error_code::unexpected_end, "expected '}'", file, span{33, 0}, {}};
    d.notes.push_back({file, span{14, 5}, "chain opened here"});
    // The end of input after a final newline is reported at the end of the last line.
    CHECK(render(d) ==
          "r.nft:3:10: error[unexpected-end]: expected '}'\n"
          "    3 | \t\tjump x\n"
          "      | \t\t      ^\n"
          "r.nft:2:2: note: chain opened here\n"
          "    2 | \tchain c {\n"
          "      | \t^~~~~\n");
  }

  TEST_CASE("diagnostic: without a file only the message is printed") {
    diagnostic d{severity::error, error_code::io_error, "cannot open x", nullptr, {}, {}};
    CHECK(render(d) == "error[io-error]: cannot open x\n");
  }

  TEST_CASE("diagnostic_sink: caps errors and says so once") {
    auto file = std::make_shared<source>("t", "x");
    limits lim;
    lim.max_errors = 3;
    diagnostic_sink sink(file, lim);
    CHECK(sink.warning(error_code::not_modelled, {}, "w"));
    CHECK(sink.error(error_code::syntax, {}, "1"));
    CHECK(sink.error(error_code::syntax, {}, "2"));
    CHECK(sink.error(error_code::syntax, {}, "3"));
    CHECK_FALSE(sink.full());
    CHECK_FALSE(sink.error(error_code::syntax, {}, "4"));
    CHECK(sink.full());
    CHECK_FALSE(sink.error(error_code::syntax, {}, "5"));
    const auto ds = sink.take();
    REQUIRE(ds.size() == 5);
    CHECK(ds[3].message == "3");
    CHECK(ds[4].code == error_code::too_many_errors);
    CHECK(error_count(ds) == 4);
  }

  TEST_CASE("result: ok only without errors") {
    result<int> r{42, {}};
    CHECK(r.ok());
    r.diagnostics.push_back({severity::warning, error_code::not_modelled, "w", nullptr, {}, {}});
    CHECK(r.ok());
    r.diagnostics.push_back({severity::error, error_code::syntax, "e", nullptr, {}, {}});
    CHECK_FALSE(r.ok());
  }

  TEST_CASE("diagnostic: code names are stable") {
    CHECK(code_name(error_code::syntax) == "syntax");
    CHECK(code_name(error_code::dangling_reference) == "dangling-reference");
    CHECK(code_name(error_code::too_many_errors) == "too-many-errors");
    CHECK(static_cast<int>(error_code::invalid_address) == 106);
  }
}
