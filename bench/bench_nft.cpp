// SPDX-License-Identifier: MIT
// nft parse throughput and peak memory on kube-proxy nftables dumps from kpgen (issue 3), at 1,250 to
// 10,000 services. The 10,000-service dump is kpgen's `--backend nftables --services 10000 --endpoints
// 10 --nodeport-frac 0.5` (34 MB, 705k lines: what `nft list table ip kube-proxy` prints). Memory is
// what the parse added at its peak (the parser owns its copy of the text) against the input size; the
// aim is under 3x. Aim for time: 300 MB/s on one core.
#include "harness.hpp"

#include <nflens/nft.hpp>

#include <fmt/format.h>

#include <string>
#include <vector>

namespace nft = nflens::nft;
namespace bench = nflens::bench;

int main(int argc, char** argv) {
  bench::runner run(argc, argv);
  const std::vector<int> sizes = run.quick() ? std::vector<int>{500, 1000} : std::vector<int>{1250, 2500, 5000, 10000};
  std::vector<bench::sample> parse_samples;
  for (const int services : sizes) {
    const auto dump = bench::kpgen({"--backend", "nftables", "--services", std::to_string(services), "--endpoints",
                                    "10", "--nodeport-frac", "0.5"});
    if (!dump) return 77;
    const std::string label = fmt::format("{} services, {}", services, bench::human_bytes(dump->size()));
    if (auto s = bench::measure_parse(
            run, "nft parse, " + label, *dump,
            [](std::string text) { return nft::parse("kpgen.nft", std::move(text)); },
            [](const auto& r) { return r.ok() && r.value.commands.size() == 1; })) {
      parse_samples.push_back(*s);
      if (services == sizes.back()) {
        const double ratio = static_cast<double>(s->added_bytes()) / static_cast<double>(dump->size());
        fmt::print("  parse peak memory: {:.2f}x the input ({} added for {} of text)\n", ratio,
                   bench::human_bytes(s->added_bytes()), bench::human_bytes(dump->size()));
      }
    }
  }
  if (const auto dump = bench::kpgen({"--backend", "nftables", "--services", std::to_string(sizes.back()),
                                      "--endpoints", "10", "--nodeport-frac", "0.5"}))
    run.measure(fmt::format("nft copy + parse + free, {} services, {}", sizes.back(), bench::human_bytes(dump->size())),
                dump->size(), [&] {  // as a caller that reads, parses and frees pays it
                  auto r = nft::parse("kpgen.nft", std::string(*dump));
                  return r.ok() && r.value.commands.size() == 1;
                });
  run.check_linear("nft parse", parse_samples);
  return run.finish();
}
