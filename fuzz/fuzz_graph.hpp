// SPDX-License-Identifier: MIT
#pragma once

// What the graph targets check on any dispatch graph they get: shares in [0, 1] that sum to at most
// 1 per service, origins inside their sources, every output renders, and the graph compares
// equivalent to itself.

#include "fuzz_support.hpp"

#include <nflens/compare.hpp>
#include <nflens/graph.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

namespace nflens::fuzz {

inline void check_origins(const dispatch_graph& g, const std::vector<origin>& os) {
  for (const auto& o : os) {
    require(o.source < g.sources.size(), "an origin names a source of the graph");
    const auto size = g.sources[o.source]->text().size();
    require(o.where.offset <= size && o.where.length <= size - o.where.offset, "an origin lies inside its source");
  }
}

inline void check_graph(const dispatch_graph& g) {
  for (const auto& s : g.services) {
    double total = 0;
    for (const auto& e : s.endpoints) {
      require(std::isfinite(e.probability) && e.probability >= 0 && e.probability <= 1 + 1e-9,
              "an endpoint's share is in [0, 1]");
      if (e.local_probability)
        require(*e.local_probability >= 0 && *e.local_probability <= 1 + 1e-9, "a local share is in [0, 1]");
      total += e.probability;
      check_origins(g, e.origins);
    }
    require(total <= 1 + 1e-6, "the shares of a service sum to at most 1");
    require(s.untranslated >= -1e-9 && s.untranslated <= 1 + 1e-9, "the untranslated share is in [0, 1]");
    check_origins(g, s.origins);
    for (const auto& f : s.frontends) check_origins(g, f.origins);
    (void)quote_service(g, s);
  }
  (void)to_json(g);
  (void)to_dot(g);
  (void)to_text(g);
  const comparison self = compare(g, g);
  if (!self.equivalent) {
    std::fputs(to_text(self, "a", "a").c_str(), stderr);
    require(false, "a graph is equivalent to itself");
  }
  (void)to_json(self, "a", "a");
  if (!g.services.empty()) (void)add_endpoint_cost(g, 0);
}

}  // namespace nflens::fuzz
