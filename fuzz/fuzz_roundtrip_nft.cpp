// SPDX-License-Identifier: MIT
// Print -> parse round trip of the nft side (issue 5): text that parses and applies without errors (a
// listing or a script, `nft -f` semantics) prints, as `nft list ruleset` would, to a listing that parses
// and applies without errors to a ruleset of the same shape (tables, chains, rules, sets, elements,
// objects, flowtables), and printing that again gives the same text. The first print may respell what
// nft's listing respells (symbol aliases, quoting, protocol dependencies), so the AST is compared after
// it: the printed listing must be a fixed point.

#include "fuzz_support.hpp"

#include <nflens/nft.hpp>

#include <string>

namespace {

/// Counts of everything a listing shows, table by table.
std::vector<std::size_t> shape(const nflens::nft::ruleset& r) {
  std::vector<std::size_t> s{r.tables.size()};
  for (const auto& t : r.tables) {
    s.insert(s.end(), {t.chains.size(), t.sets.size(), t.objects.size(), t.flowtables.size()});
    for (const auto& c : t.chains) s.push_back(c.rules.size());
    for (const auto& x : t.sets) s.push_back(x.elements.size());
  }
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nflens;
  const std::string text(fuzz::text(data, size));
  const auto parsed = nft::parse("<fuzz>", text);
  if (!parsed.ok()) return 0;
  const auto first = nft::to_ruleset(parsed.value);
  if (!first.ok()) return 0;
  const std::string printed = nft::print(first.value);
  const auto reparsed = nft::parse("<printed>", printed);
  auto again = reparsed.ok() ? nft::to_ruleset(reparsed.value) : result<nft::ruleset>{};
  if (!reparsed.ok() || !again.ok()) {
    std::fprintf(stderr, "printed text:\n%s\n%s", printed.c_str(),
                 render(reparsed.ok() ? again.diagnostics : reparsed.diagnostics).c_str());
    fuzz::require(false, "the printed ruleset parses and applies without errors");
  }
  if (shape(first.value) != shape(again.value)) {
    std::fprintf(stderr, "printed text:\n%s\n", printed.c_str());
    fuzz::require(false, "the printed ruleset has the same tables, chains, rules, sets and elements");
  }
  const std::string reprinted = nft::print(again.value);
  if (reprinted != printed) {
    std::fprintf(stderr, "printed:\n%s\nreprinted:\n%s\n", printed.c_str(), reprinted.c_str());
    fuzz::require(false, "printing the reread ruleset gives the same text");
  }
  return 0;
}
