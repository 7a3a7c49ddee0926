// SPDX-License-Identifier: MIT
// libnftables JSON speed (issue 6) on kube-proxy nftables dumps from kpgen, at 1,250 to 10,000
// services; the 10,000-service dump is kpgen's `--backend nftables --services 10000 --endpoints 10
// --nodeport-frac 0.5` (34 MB, 705k lines). Measured, each in its own child with its peak memory:
//  - `write`: nft::write_json of the parsed dump (what `nflens convert --to nft-json` does after parsing);
//    throughput in MB of nft text per second;
//  - `convert`: parse and write together, the whole of `convert --to nft-json` but for I/O;
//  - `read`: nft::parse_json of the JSON written (what `convert --to nft` and `parse` do with JSON input);
//    throughput in MB of JSON per second. Its added memory is the copy of the JSON handed over (1x), the
//    AST (about 1x: the arena) and the item being read: the reader holds one tree of JSON values per
//    item of "nftables", not one of the whole document (2.4x the JSON on 10,000 services; 5.5x before).
// Time and memory must grow linearly with the input.
#include "harness.hpp"

#include <nflens/nft.hpp>
#include <nflens/nft_json.hpp>

#include <fmt/format.h>

#include <string>
#include <vector>

namespace nft = nflens::nft;
namespace bench = nflens::bench;

int main(int argc, char** argv) {
  bench::runner run(argc, argv);
  const std::vector<int> sizes = run.quick() ? std::vector<int>{500, 1000} : std::vector<int>{1250, 2500, 5000, 10000};
  std::vector<bench::sample> write_samples, convert_samples, read_samples;
  for (const int services : sizes) {
    const auto dump = bench::kpgen({"--backend", "nftables", "--services", std::to_string(services), "--endpoints",
                                    "10", "--nodeport-frac", "0.5"});
    if (!dump) return 77;
    const auto parsed = nft::parse("kpgen.nft", std::string(*dump));
    if (!parsed.ok()) {
      fmt::print(stderr, "kpgen dump of {} services does not parse\n", services);
      return 1;
    }
    const auto written = nft::write_json(parsed.value);
    if (!written.diagnostics.empty()) {
      fmt::print(stderr, "kpgen dump of {} services: the JSON writer reported {} diagnostics\n", services,
                 written.diagnostics.size());
      return 1;
    }
    const std::string& json = written.value;
    const std::string label = fmt::format("{} services, {} of nft text", services, bench::human_bytes(dump->size()));
    if (auto s = run.measure("nft-json write, " + label, dump->size(), [&] {
          const auto w = nft::write_json(parsed.value);
          return w.diagnostics.empty() && w.value.size() == json.size();
        }))
      write_samples.push_back(*s);
    if (auto s = run.measure("nft-json convert (parse + write), " + label, dump->size(), [&] {
          const auto p = nft::parse("kpgen.nft", std::string(*dump));
          const auto w = nft::write_json(p.value);
          return p.ok() && w.diagnostics.empty() && w.value.size() == json.size();
        }))
      convert_samples.push_back(*s);
    if (auto s = run.measure(
            fmt::format("nft-json read, {} services, {} of JSON", services, bench::human_bytes(json.size())),
            json.size(), [&] {
              const auto r = nft::parse_json("kpgen.json", std::string(json));
              return r.ok() && r.value.commands.size() == 1;
            }))
      read_samples.push_back(*s);
    if (services == sizes.back())
      fmt::print("  JSON written for {} services: {} ({:.2f}x the nft text)\n", services,
                 bench::human_bytes(json.size()), static_cast<double>(json.size()) / static_cast<double>(dump->size()));
  }
  run.check_linear("nft-json write", write_samples);
  run.check_linear("nft-json convert", convert_samples);
  run.check_linear("nft-json read", read_samples);
  return run.finish();
}
