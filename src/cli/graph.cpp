// SPDX-License-Identifier: MIT
// `nflens graph [--json|--dot] [--service NS/NAME:PORT] FILE [UPDATE...]`: the service dispatch graph of one dump,
// after the updates (kube-proxy's partial syncs or nft transactions) are applied onto it in order.
#include "commands.hpp"
#include "graph_input.hpp"

#include <nflens/graph.hpp>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace nflens::cli {

runner add_graph(CLI::App& app) {
  struct options {
    std::vector<std::string> files;
    std::string format = "auto";
    std::string service;
    bool json = false;
    bool dot = false;
    bool no_origins = false;
  };
  auto o = std::make_shared<options>();
  auto* sub = app.add_subcommand("graph",
                                 "The Service dispatch graph of one dump: frontends, services, endpoints "
                                 "and their exact shares");
  sub->add_option("file", o->files,
                  "iptables-save / iptables-restore input, or nft list output / nft -f script (- for "
                  "standard input); further files are updates applied onto it in order, as "
                  "`iptables-restore --noflush` or `nft -f` would (kube-proxy's partial syncs and transactions)")
      ->required();
  sub->add_option("--format", o->format, "auto, iptables or nft")->capture_default_str();
  auto* j = sub->add_flag("--json", o->json,
                          "the graph as JSON (the ground-truth shape of kube-proxy corpus "
                          "*.expected.json and kpgen --truth, plus shares and origins)");
  auto* d = sub->add_flag("--dot", o->dot, "the graph in Graphviz DOT");
  j->excludes(d);
  sub->add_flag("--no-origins", o->no_origins, "leave file:line origins out of the JSON");
  auto* sv = sub->add_option("--service", o->service,
                             "quote, with file:line, every rule and map element on the paths of service NS/NAME:PORT "
                             "(text only: not with --json or --dot)");
  sv->excludes(j);
  sv->excludes(d);
  return [o] {
    auto g = load_graph(o->files, o->format);
    if (!g) return 1;
    std::string out;
    if (!o->service.empty()) {
      const auto* s = g->find(o->service);
      if (s == nullptr) {
        fmt::print(stderr, "nflens: {}: no service '{}' in the graph\n", o->files.front(), o->service);
        return 1;
      }
      out = quote_service(*g, *s);
    } else if (o->json) {
      out = to_json(*g, !o->no_origins);
    } else if (o->dot) {
      out = to_dot(*g);
    } else {
      out = to_text(*g);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
  };
}

}  // namespace nflens::cli
