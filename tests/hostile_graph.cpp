// SPDX-License-Identifier: MIT
// Hostile dispatch shapes against the graph evaluator (issue 5): a ruleset whose jumps multiply the
// paths of a connection (each chain jumps to the next one three times, n deep: 3^n paths), a loop, and
// jumps nested past limits::max_depth. Each must end quickly with a located diagnostic, and a graph
// cut short must say so with an error, never pass for complete.

#include "graph_builder.hpp"
#include "hostile_support.hpp"

#include <nflens/graph.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace nflens;
using namespace nflens::test;

namespace {

std::string chain_name(int i) { return std::string("C").append(std::to_string(i)); }  // GCC 12 -Wrestrict

/// ENTRY makes a frontend (10.0.0.1 tcp/80) and jumps to C0; every Ci jumps to Ci+1 three times
/// (after a random split, for one source prefix, and unconditionally); Cn DNATs one source prefix.
d::program multiplying(int n) {
  program_builder b;
  b.chain("ENTRY", d::table_kind::nat, d::hook::prerouting);
  for (int i = 0; i <= n; ++i) b.chain(chain_name(i));
  b.rule("ENTRY", {daddr("10.0.0.1/32"), proto(l4_protocol::tcp), dport(80)}, jump("C0"));
  for (int i = 0; i < n; ++i) {
    b.rule(chain_name(i), {random(0.5)}, jump(chain_name(i + 1)));
    b.rule(chain_name(i), {saddr("10.9.0.0/16")}, jump(chain_name(i + 1)));
    b.rule(chain_name(i), {}, jump(chain_name(i + 1)));
  }
  b.rule(chain_name(n), {saddr("10.8.0.0/16")}, dnat("10.1.0.1", 80));
  b.entry("ENTRY");
  return b.build();
}

std::size_t count_code(const std::vector<diagnostic>& ds, error_code code, severity level) {
  std::size_t n = 0;
  for (const auto& d : ds) n += d.code == code && d.level == level;
  return n;
}

}  // namespace

TEST_SUITE("unit") {
  TEST_CASE("hostile graph: jumps that multiply paths stop at the evaluation budget with one error") {
    // 3 deep is still evaluated in full; 12 deep would be 3^12 paths of 3^12 paths.
    for (const int n : {3, 12, 40}) {
      CAPTURE(n);
      const auto p = multiplying(n);
      std::vector<diagnostic> out;
      (void)d::build(p, out);
      check_located(out, p.sources[0]->text());
      const std::size_t budget_errors = count_code(out, error_code::unsupported_dispatch, severity::error);
      if (n == 3) {
        CHECK(budget_errors == 0);  // evaluated in full
        CHECK(error_count(out) == 0);
      } else {
        CHECK(budget_errors == 1);  // the graph is incomplete and says so
      }
    }
  }

  TEST_CASE("hostile graph: the evaluation budget is the caller's to set") {
    // 4 deep is past the default budget; a larger one lets it finish, a smaller one stops even the
    // 3-deep program
    const auto errors = [](int n, const graph_options& opt) {
      const auto p = multiplying(n);
      std::vector<diagnostic> out;
      (void)d::build(p, out, opt);
      return count_code(out, error_code::unsupported_dispatch, severity::error);
    };
    graph_options roomy;
    roomy.budget.base = 20'000'000;
    graph_options tight;
    tight.budget.base = 10;
    tight.budget.per_item = 0;
    CHECK(errors(4, {}) == 1);
    CHECK(errors(4, roomy) == 0);
    CHECK(errors(3, {}) == 0);
    CHECK(errors(3, tight) == 1);
  }

  TEST_CASE("hostile graph: a loop of jumps is reported, not followed") {
    program_builder b;
    b.chain("ENTRY", d::table_kind::nat, d::hook::prerouting).chain("A").chain("B");
    b.rule("ENTRY", {daddr("10.0.0.1/32"), proto(l4_protocol::tcp), dport(80)}, jump("A"));
    b.rule("A", {}, jump("B"));
    b.rule("B", {random(0.5)}, jump("A"));
    b.rule("B", {}, dnat("10.1.0.1", 80));
    b.entry("ENTRY");
    const auto p = b.build();
    std::vector<diagnostic> out;
    const auto g = d::build(p, out);
    check_located(out, p.sources[0]->text());
    CHECK(count_code(out, error_code::unsupported_dispatch, severity::warning) == 1);
    REQUIRE(g.services.size() == 1);
    CHECK(g.services[0].endpoints.size() == 1);
  }

  TEST_CASE("hostile graph: jumps nested deeper than limits::max_depth stop with a located warning") {
    program_builder b;
    b.chain("ENTRY", d::table_kind::nat, d::hook::prerouting);
    const int n = 2000;
    for (int i = 0; i <= n; ++i) b.chain(chain_name(i));
    b.rule("ENTRY", {daddr("10.0.0.1/32"), proto(l4_protocol::tcp), dport(80)}, jump("C0"));
    for (int i = 0; i < n; ++i) b.rule(chain_name(i), {}, jump(chain_name(i + 1)));
    b.rule(chain_name(n), {}, dnat("10.1.0.1", 80));
    b.entry("ENTRY");
    const auto p = b.build();
    std::vector<diagnostic> out;
    (void)d::build(p, out);
    check_located(out, p.sources[0]->text());
    CHECK(count_code(out, error_code::nesting_too_deep, severity::warning) == 1);
  }
}
