// SPDX-License-Identifier: MIT
// Graph extraction against parsing, on kpgen kube-proxy dumps of 1,000 / 3,000 / 10,000 services (10
// endpoints each, half of them NodePorts), for each backend: time and peak memory of parse alone, of the
// graph built from the parsed ruleset (apply, lowering, evaluation, assembly), and of compare of two
// graphs; and whether graph extraction grows linearly with the number of services.

#include "harness.hpp"

#include <nflens/compare.hpp>
#include <nflens/graph.hpp>
#include <nflens/iptables.hpp>
#include <nflens/nft.hpp>

#include <fmt/format.h>

#include <string>
#include <vector>

using namespace nflens;

int main(int argc, char** argv) {
  bench::runner run(argc, argv);
  const std::vector<int> sizes = run.quick() ? std::vector<int>{300, 1000} : std::vector<int>{1000, 3000, 10000};
  std::vector<bench::sample> graph_samples;
  for (const int n : sizes) {
    const auto dump = bench::kpgen({"--backend", "iptables", "--services", std::to_string(n), "--endpoints", "10",
                                    "--nodeport-frac", "0.5", "--seed", "1"});
    if (!dump) return 77;
    const auto label = fmt::format("{} services", n);
    run.measure("iptables parse, " + label, dump->size(), [&] { return iptables::parse("bench", *dump).ok(); });
    const auto parsed = iptables::parse("bench", *dump);
    if (!parsed.ok()) {
      run.fail("iptables parse, " + label, "the dump does not parse");
      continue;
    }
    // The graph of the state (what iptables-save lists): load = parse + apply, done once here.
    const auto state = iptables::load("bench", *dump);
    if (auto s = run.measure("iptables graph of the loaded state, " + label, dump->size(), [&] {
          auto g = build_graph(state.value);
          return g.ok() && g.value.services.size() >= static_cast<std::size_t>(n);
        }))
      graph_samples.push_back(*s);
    run.measure("iptables parse + graph, " + label, dump->size(), [&] {
      auto p = iptables::parse("bench", *dump);
      if (!p.ok()) return false;
      return build_graph(p.value).ok();
    });
    const auto g = build_graph(parsed.value);
    run.measure("compare iptables with itself, " + label, dump->size(),
                [&] { return compare(g.value, g.value).equivalent; });
  }
  if (graph_samples.size() >= 2) run.check_linear("iptables graph extraction", graph_samples);
  std::vector<bench::sample> nft_samples;
  for (const int n : sizes) {
    const auto dump = bench::kpgen({"--backend", "nftables", "--services", std::to_string(n), "--endpoints", "10",
                                    "--nodeport-frac", "0.5", "--seed", "1"});
    if (!dump) return 77;
    const auto label = fmt::format("{} services", n);
    run.measure("nft parse, " + label, dump->size(), [&] { return nft::parse("bench", *dump).ok(); });
    const auto parsed = nft::parse("bench", *dump);
    if (!parsed.ok()) {
      run.fail("nft parse, " + label, "the dump does not parse");
      continue;
    }
    if (auto s = run.measure("nft graph of the parsed listing, " + label, dump->size(), [&] {
          auto g = build_graph(parsed.value);
          return g.ok() && g.value.services.size() >= static_cast<std::size_t>(n);
        }))
      nft_samples.push_back(*s);
    run.measure("nft parse + graph, " + label, dump->size(), [&] {
      auto p = nft::parse("bench", *dump);
      return p.ok() && build_graph(p.value).ok();
    });
    const auto ipt = bench::kpgen({"--backend", "iptables", "--services", std::to_string(n), "--endpoints", "10",
                                   "--nodeport-frac", "0.5", "--seed", "1"});
    if (ipt) {
      const auto gi = build_graph(iptables::load("bench", *ipt).value);
      const auto gn = build_graph(parsed.value);
      run.measure("compare iptables with nft, " + label, dump->size() + ipt->size(),
                  [&] { return compare(gi.value, gn.value).equivalent; });
    }
  }
  if (nft_samples.size() >= 2) run.check_linear("nft graph extraction", nft_samples);
  return run.finish();
}
