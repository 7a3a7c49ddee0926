// SPDX-License-Identifier: MIT
// Time and peak memory of every parser on the pathological inputs of issue 5 (a 100 MB line, 100,000
// nested braces, a million set elements, a million chains, long quoted strings, NUL bytes, CRLF, a
// cut token), each at several sizes so that linear growth is checked, not assumed. The outcome of
// each parse is checked too: a located error or a clean parse, as the hostile-input tests assert at
// small sizes. `--quick` runs a smoke version at about a tenth of the sizes.

#include "harness.hpp"
#include "pathological.hpp"

#include <nflens/diagnostic.hpp>
#include <nflens/format.hpp>
#include <nflens/iptables.hpp>
#include <nflens/nft.hpp>
#include <nflens/source.hpp>

#include <fmt/format.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

using nflens::pathological::dialect;
namespace gen = nflens::pathological;

/// What a parse of a pathological input must give.
enum class expect { clean, error, either };

/// A parser under test: parses `text` within `lim`, returns whether the outcome met `e` (a clean parse,
/// or at least one error diagnostic with a location inside the input), and leaves its result in `held`
/// until the next run, so that the harness sees what the result keeps resident. Its first dialect is its
/// own; it also reads the other dialect's inputs (foreign text), where only a located outcome is required.
struct parser {
  std::string name;
  std::vector<dialect> dialects;
  std::function<bool(const std::string& text, expect e, const nflens::limits& lim, std::shared_ptr<void>& held)> parse;
  bool has_limits = true;  ///< takes `limits` (the source row does not parse)
};

// The foundation every parser starts with: the source (its copy of the text and its line table) and
// format detection; the floor under every parser's figures. It reports no errors: no outcome to check.
bool parse_source_only(const std::string& text, expect, const nflens::limits&, std::shared_ptr<void>& held) {
  auto file = std::make_shared<nflens::source>("<bench>", std::string(text));
  (void)nflens::detect_format(file->text());
  const bool ok = file->line_count() > 0;
  held = std::move(file);
  return ok;
}

// Every error must be located inside the text; the outcome must be the one expected.
bool outcome_met(const std::vector<nflens::diagnostic>& ds, std::size_t size, expect e) {
  std::size_t errors = 0;
  for (const auto& d : ds) {
    if (d.level != nflens::severity::error) continue;
    ++errors;
    if (!d.file || d.where.offset > size) return false;
  }
  return e == expect::either || (e == expect::clean) == (errors == 0);
}

// Runs `parse(name, text, options)` with `lim`, checks the outcome and leaves the result in `held`.
template <class Options, class Parse>
bool parse_with(Parse parse, const std::string& text, expect e, const nflens::limits& lim,
                std::shared_ptr<void>& held) {
  Options o;
  o.limits = lim;
  auto r = std::make_shared<decltype(parse("<bench>", text, o))>(parse("<bench>", text, o));
  const bool ok = outcome_met(r->diagnostics, text.size(), e);
  held = std::move(r);
  return ok;
}

bool parse_iptables(const std::string& text, expect e, const nflens::limits& lim, std::shared_ptr<void>& held) {
  return parse_with<nflens::iptables::parse_options>(
      [](auto&&... a) { return nflens::iptables::parse(a...); }, text, e, lim, held);
}

bool parse_nft(const std::string& text, expect e, const nflens::limits& lim, std::shared_ptr<void>& held) {
  return parse_with<nflens::nft::parse_options>([](auto&&... a) { return nflens::nft::parse(a...); }, text, e, lim,
                                                held);
}

std::vector<parser> parsers() {
  std::vector<parser> out;
  out.push_back({"source", {dialect::iptables, dialect::nft}, parse_source_only, false});
  out.push_back({"iptables", {dialect::iptables, dialect::nft}, parse_iptables});
  out.push_back({"nft", {dialect::nft, dialect::iptables}, parse_nft});
  return out;
}

/// A pathological shape at one size.
struct shape {
  std::string name;
  std::size_t full;   ///< size parameter of the full run (bytes, depth or count)
  std::size_t quick;  ///< size parameter of the `--quick` run
  std::function<std::string(dialect, std::size_t)> make;
  expect (*outcome)(dialect);
  bool series;  ///< measured at full/8, full/4, full/2, full and checked for linear growth
};

expect clean(dialect) { return expect::clean; }
expect error(dialect) { return expect::error; }
expect either(dialect) { return expect::either; }
expect error_in_iptables(dialect d) { return d == dialect::iptables ? expect::error : expect::either; }

std::vector<shape> shapes() {
  constexpr std::size_t MB = 1000 * 1000;
  return {
      {"long line", 100 * MB, 8 * MB, gen::long_line, error_in_iptables, true},
      {"wide rules", 100 * MB, 8 * MB, gen::wide_rules, clean, true},
      {"long token", 100 * MB, 8 * MB, gen::long_token, either, false},
      {"long quoted string", 100 * MB, 8 * MB, [](dialect d, std::size_t n) { return gen::long_quoted(d, n); }, either,
       true},
      {"unterminated quoted string", 100 * MB, 8 * MB,
       [](dialect d, std::size_t n) { return gen::long_quoted(d, n, false); }, error, false},
      {"nested braces", 100000, 10000, [](dialect d, std::size_t n) { return gen::nested_braces(d, n); },
       error_in_iptables, true},
      {"nested braces, unclosed", 100000, 10000,
       [](dialect d, std::size_t n) { return gen::nested_braces(d, n, false); }, error, false},
      {"nested blocks", 100000, 10000, gen::nested_blocks, either, false},
      {"nested parentheses", 100000, 10000, gen::nested_parens, either, false},
      {"binary operator chain", 1000000, 100000, gen::binary_chain, either, true},
      {"set elements", 1000000, 100000, gen::set_elements, clean, true},
      {"chains", 1000000, 100000, gen::many_chains, clean, true},
      {"definitions", 400000, 50000, gen::many_definitions, clean, true},
      {"chains, CRLF line ends", 1000000, 100000,
       [](dialect d, std::size_t n) { return gen::crlf(gen::many_chains(d, n)); }, either, false},
      {"set elements, NUL every 4 kB", 1000000, 100000,
       [](dialect d, std::size_t n) { return gen::with_nul_bytes(gen::set_elements(d, n), 4096, 100); }, error, false},
      {"set elements, cut in a token", 1000000, 100000,
       [](dialect d, std::size_t n) {
         std::string text = gen::set_elements(d, n);
         text.resize(text.size() / 2);
         while (!text.empty() && (text.back() == ' ' || text.back() == '\n' || text.back() == ',')) text.pop_back();
         text.pop_back();  // inside an address
         return text;
       },
       error, false},
  };
}

}  // namespace

int main(int argc, char** argv) {
  nflens::bench::runner run(argc, argv);
  constexpr std::size_t slack = std::size_t{64} << 20;
  for (const auto& p : parsers()) {
    for (const dialect d : p.dialects) {
      for (const auto& s : shapes()) {
        const std::string base = fmt::format("{} {}: {}", p.name, gen::dialect_name(d), s.name);
        if (!run.wanted(base)) continue;
        const std::size_t top = run.quick() ? s.quick : s.full;
        std::vector<std::size_t> sizes{top};
        if (s.series) sizes = {top / 8, top / 4, top / 2, top};
        std::vector<nflens::bench::sample> samples;
        std::shared_ptr<void> held;  // the last run's result, freed by the next run's `prepare`
        nflens::bench::options opt;
        opt.repetitions = run.repetitions();
        opt.prepare = [&] { held.reset(); };
        const auto measure = [&](const std::string& name, const std::string& text, expect e,
                                 const nflens::limits& lim) {
          return run.measure(
              name, text.size(), [&] { return p.parse(text, e, lim, held); }, opt);
        };
        for (const std::size_t n : sizes) {
          const std::string text = s.make(d, n);
          // The dialect's first parser is its own; the other reads foreign text: any located outcome.
          const expect e = d == p.dialects.front() ? s.outcome(d) : expect::either;
          auto got = measure(fmt::format("{} ({})", base, n), text, e, nflens::limits{});
          if (!got) continue;
          // Memory with the default limits: the result (the text and its syntax tree, whose size per
          // input byte depends on how dense the text is, up to `limits::max_tree_bytes`) plus at most
          // 64 MB that the parse needs only while it runs. More than that is memory the API does not
          // account for (a stack, a copy, a quadratic buffer).
          if (got->ok && got->added_bytes() > got->retained_bytes() + slack)
            run.fail(got->name, fmt::format("peak memory added {} is more than 64 MB above what the result keeps ({})",
                                            nflens::bench::human_bytes(got->added_bytes()),
                                            nflens::bench::human_bytes(got->retained_bytes())));
          samples.push_back(std::move(*got));
          if (n != top || !p.has_limits) continue;
          // Memory a caller can bound for any input: with the tree capped at twice the input, the parse
          // holds at most 3x the input, and adds at most 64 MB to that while it runs. Dense text stops
          // at the cap with a located `tree_too_large` error.
          nflens::limits capped;
          capped.max_tree_bytes = 2 * text.size();
          auto c = measure(fmt::format("{} ({}), tree capped at 2x", base, n), text,
                           e == expect::clean ? expect::either : e, capped);
          if (c && c->ok && c->added_bytes() > 3 * text.size() + slack)
            run.fail(c->name, fmt::format("peak memory added {} is above 3x the input + 64 MB",
                                          nflens::bench::human_bytes(c->added_bytes())));
        }
        if (samples.size() > 1) run.check_linear(base, samples);
      }
    }
  }
  return run.finish();
}
