// SPDX-License-Identifier: MIT
// The iptables library in a few lines: load an iptables-save dump (or iptables-restore input) as the
// kernel would hold it, then walk the nat table's chains: the shares of each `-m statistic` ladder, and
// every DNAT rule with the line it came from.
//
//   build/examples/iptables_dnat examples/cluster/cluster.iptables
#include <nflens/iptables.hpp>
#include <nflens/iptables_modules.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace ipt = nflens::iptables;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DUMP\n", argv[0]);
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "%s: cannot read\n", argv[1]);
    return 1;
  }
  std::ostringstream text;
  text << in.rdbuf();

  // parse + apply to an empty state; bad input gives located diagnostics, never an exception
  auto loaded = ipt::load(argv[1], text.str());
  if (!loaded.ok()) {
    std::fputs(nflens::render(loaded.diagnostics).c_str(), stderr);
    return 1;
  }
  const ipt::table* nat = ipt::find_table(loaded.value, ipt::table_id::nat);
  if (nat == nullptr) return 0;
  for (const ipt::chain& c : nat->chains) {
    // a probability ladder: each `-m statistic --mode random` rule takes its share of what the rules
    // before it left (the kernel compares a 31-bit threshold: as_statistic gives the exact value)
    double left = 1.0;
    for (const ipt::rule& r : ipt::rules_of(*nat, c)) {
      for (const ipt::match& m : r.matches())
        if (const auto st = ipt::as_statistic(m); st && st->mode == ipt::statistic_mode::random) {
          fmt::print("{} -> {}: {:.9f} of the chain\n", c.name, r.target().name, left * st->probability());
          left *= 1.0 - st->probability();
        }
      if (r.target().id == ipt::target_id::chain && left < 1.0 && r.matches().size() <= 1) {
        fmt::print("{} -> {}: {:.9f} of the chain (the rest)\n", c.name, r.target().name, left);
        left = 0.0;
      }
      // where a connection is sent, and the line that says so
      if (const auto t = ipt::as_nat(r.target()); t && r.target().id == ipt::target_id::dnat && t->range) {
        const auto at = r.file->locate(r.where);
        fmt::print("{}:{}: {} DNAT to {}:{}\n", r.file->name(), at.line, c.name,
                   nflens::to_string(t->range->min_address), t->range->ports.first);
      }
    }
  }
  return 0;
}
