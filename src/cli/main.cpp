// SPDX-License-Identifier: MIT
// nflens: read saved netfilter rulesets offline. Thin: options here, the work in the library.

#include "commands.hpp"

#include <nflens/version.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  CLI::App app{"nflens: read saved iptables and nftables rulesets offline, build their service dispatch graph, compare them",
               "nflens"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "nflens " NFLENS_VERSION);

  std::vector<std::pair<CLI::App*, nflens::cli::runner>> verbs;
  auto add = [&](nflens::cli::runner (*f)(CLI::App&)) {
    auto run = f(app);
    verbs.emplace_back(app.get_subcommands({}).back(), std::move(run));
  };
  add(nflens::cli::add_parse);
  add(nflens::cli::add_graph);
  add(nflens::cli::add_compare);
  add(nflens::cli::add_convert);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;  // --help and --version exit 0; every usage error exits 2
  }
  try {
    for (auto& [sub, run] : verbs) {
      if (!sub->parsed()) continue;
      const int rc = run();
      // Output that did not reach its file (a full disk, a closed pipe) is no result: say so, exit 2.
      if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
        fmt::print(stderr, "nflens: {}: could not write the output: {}\n", sub->get_name(), std::strerror(errno));
        return 2;
      }
      return rc;
    }
  } catch (const std::exception& e) {
    // The library reports bad input as diagnostics; reaching this is a bug or resource exhaustion.
    fmt::print(stderr, "nflens: internal error: {}\n", e.what());
    return 3;
  }
  return 2;
}
