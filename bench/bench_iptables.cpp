// SPDX-License-Identifier: MIT
// iptables parse throughput and peak memory on kube-proxy dumps from kpgen (issue 2): parse alone,
// parse + apply (load), and the canonical printer, at 1,000 to 10,000 services. The 10,000-service
// dump is kpgen's `--backend iptables --services 10000 --endpoints 10 --nodeport-frac 0.5` (41.5 MB,
// 507,415 lines). Memory is reported as what the work added at its peak (the parser owns its copy of
// the text) against the input size; the aim is under 3x.
#include "harness.hpp"

#include <nflens/iptables.hpp>

#include <fmt/format.h>

#include <string>
#include <vector>

namespace ipt = nflens::iptables;
namespace bench = nflens::bench;

int main(int argc, char** argv) {
  bench::runner run(argc, argv);
  const std::vector<int> sizes = run.quick() ? std::vector<int>{500, 1000} : std::vector<int>{1250, 2500, 5000, 10000};
  std::vector<bench::sample> parse_samples, load_samples;
  for (const int services : sizes) {
    const auto dump = bench::kpgen({"--backend", "iptables", "--services", std::to_string(services), "--endpoints",
                                    "10", "--nodeport-frac", "0.5"});
    if (!dump) return 77;
    const std::string label = fmt::format("{} services, {}", services, bench::human_bytes(dump->size()));
    if (auto s = bench::measure_parse(
            run, "iptables parse, " + label, *dump,
            [](std::string text) { return ipt::parse("kpgen.rules", std::move(text)); },
            [](const auto& r) { return r.ok() && !r.value.tables.empty(); })) {
      parse_samples.push_back(*s);
      if (services == sizes.back()) {
        const double ratio = static_cast<double>(s->added_bytes()) / static_cast<double>(dump->size());
        fmt::print("  parse peak memory: {:.2f}x the input ({} added for {} of text)\n", ratio,
                   bench::human_bytes(s->added_bytes()), bench::human_bytes(dump->size()));
      }
    }
    if (auto s = run.measure("iptables load (parse + apply), " + label, dump->size(), [&] {
          auto r = ipt::load("kpgen.rules", std::string(*dump));
          return r.ok() && r.value.applied;
        }))
      load_samples.push_back(*s);
    if (services == sizes.back())  // as a caller that reads, parses and frees pays it
      run.measure("iptables copy + parse + free, " + label, dump->size(), [&] {
        auto r = ipt::parse("kpgen.rules", std::string(*dump));
        return r.ok() && !r.value.tables.empty();
      });
    if (services == sizes.back()) {
      auto loaded = ipt::load("kpgen.rules", std::string(*dump));
      if (!loaded.ok()) return 1;
      std::size_t printed = 0;
      run.measure("iptables print (iptables-save form), " + label, dump->size(), [&] {
        printed = ipt::print(loaded.value).size();
        return printed > dump->size() / 2;
      });
    }
  }
  run.check_linear("iptables parse", parse_samples);
  run.check_linear("iptables load", load_samples);
  return run.finish();
}
