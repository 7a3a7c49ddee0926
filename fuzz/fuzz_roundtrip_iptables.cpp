// SPDX-License-Identifier: MIT
// Print -> parse round trip of the iptables side (issue 5): a ruleset that parses without errors
// prints to text that parses without errors to the same ruleset, so printing it again gives the same
// text (parsed form and applied form).

#include "fuzz_support.hpp"

#include <nflens/iptables.hpp>

#include <string>

namespace {

std::size_t rules(const nflens::iptables::ruleset& r) {
  std::size_t n = 0;
  for (const auto& t : r.tables) n += t.rules.size();
  return n;
}

std::size_t chains(const nflens::iptables::ruleset& r) {
  std::size_t n = 0;
  for (const auto& t : r.tables) n += t.chains.size();
  return n;
}

void round_trip(const nflens::iptables::ruleset& first, nflens::iptables::parse_options opt, bool applied) {
  using namespace nflens;
  opt.family = first.family;  // the printed text has no ip6tables-save header to tell
  const std::string printed = iptables::print(first);
  auto again = applied ? iptables::load("<printed>", printed, opt) : iptables::parse("<printed>", printed, opt);
  if (!again.ok()) {
    std::fprintf(stderr, "printed text:\n%s\n%s", printed.c_str(), render(again.diagnostics).c_str());
    fuzz::require(false, "the printed ruleset parses without errors");
  }
  fuzz::require(again.value.tables.size() == first.tables.size(), "the same tables after the round trip");
  fuzz::require(chains(again.value) == chains(first), "the same chains after the round trip");
  fuzz::require(rules(again.value) == rules(first), "the same rules after the round trip");
  const std::string reprinted = iptables::print(again.value);
  if (reprinted != printed) {
    std::fprintf(stderr, "printed:\n%s\nreprinted:\n%s\n", printed.c_str(), reprinted.c_str());
    fuzz::require(false, "printing the reparsed ruleset gives the same text");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nflens;
  const std::string text(fuzz::text(data, size));
  iptables::parse_options opt;
  const auto parsed = iptables::parse("<fuzz>", text, opt);
  if (!parsed.ok()) return 0;
  round_trip(parsed.value, opt, false);
  const auto loaded = iptables::load("<fuzz>", text, opt);
  if (loaded.ok()) round_trip(loaded.value, opt, true);
  return 0;
}
