// SPDX-License-Identifier: MIT
// `nflens compare [--json] A B`: are two dumps (any mix of iptables and nft) the same dispatch, and how do
// they compare in size and cost? Exit 0 equivalent, 1 not, 2 usage or input errors.
#include "commands.hpp"
#include "graph_input.hpp"

#include <nflens/compare.hpp>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

namespace nflens::cli {

runner add_compare(CLI::App& app) {
  struct options {
    std::string a, b;
    std::string format_a = "auto", format_b = "auto";
    bool json = false;
    bool strict = false;
    double tolerance = 1e-6;
  };
  auto o = std::make_shared<options>();
  auto* sub = app.add_subcommand("compare",
                                 "Compare the service dispatch of two dumps (any mix of iptables and "
                                 "nft) and their structure side by side");
  sub->add_option("a", o->a, "first dump")->required();
  sub->add_option("b", o->b, "second dump")->required();
  sub->add_option("--format-a", o->format_a, "auto, iptables or nft")->capture_default_str();
  sub->add_option("--format-b", o->format_b, "auto, iptables or nft")->capture_default_str();
  sub->add_option("--tolerance", o->tolerance, "largest accepted difference of an endpoint's share (0 to 1)")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            double v = 0;
            return CLI::detail::lexical_cast(text, v) && v >= 0 && v <= 1 ? std::string{}
                                                                          : "a share difference is a number from 0 to 1";
          },
          "0..1"));
  sub->add_flag("--json", o->json, "the comparison as JSON");
  sub->add_flag("--strict", o->strict,
                "exit 1 also when the dumps are equivalent only under assumptions (constructs on dispatch "
                "paths that were not evaluated; see the warnings)");
  return [o] {
    if (o->a == "-" && o->b == "-") {
      fmt::print(stderr, "nflens: compare: only one of the two dumps can be standard input (-)\n");
      return 2;
    }
    auto ga = load_graph(o->a, o->format_a);
    auto gb = load_graph(o->b, o->format_b);
    if (!ga || !gb) {
      fmt::print(stderr, "nflens: compare: no comparison, an input has errors\n");
      return 2;
    }
    const auto c = compare(*ga, *gb, compare_options{o->tolerance});
    const auto out = o->json ? to_json(c, o->a, o->b) : to_text(c, o->a, o->b);
    std::fwrite(out.data(), 1, out.size(), stdout);
    if (!c.equivalent) return 1;
    return o->strict && c.unevaluated_a + c.unevaluated_b > 0 ? 1 : 0;
  };
}

}  // namespace nflens::cli
