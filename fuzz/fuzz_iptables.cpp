// SPDX-License-Identifier: MIT
// iptables-save / iptables-restore text (iptables.hpp): parse strictly and leniently, then apply as
// iptables-restore would. No crash, no escaped exception, every diagnostic located in the input and
// bounded, and a parse without errors applies without crashing either.

#include "fuzz_support.hpp"

#include <nflens/iptables.hpp>

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nflens;
  const std::string text(fuzz::text(data, size));
  for (const bool lenient : {false, true}) {
    iptables::parse_options opt;
    opt.lenient = lenient;
    const auto parsed = iptables::parse("<fuzz>", text, opt);
    fuzz::check_diagnostics(parsed.diagnostics, opt.limits);
    if (!parsed.ok()) continue;
    for (const bool noflush : {false, true}) {
      iptables::ruleset state;
      state.applied = true;
      state.family = parsed.value.family;
      iptables::apply_options apply;
      apply.noflush = noflush;
      fuzz::check_diagnostics(iptables::apply(state, parsed.value, apply), opt.limits);
      (void)iptables::print(state);
    }
  }
  return 0;
}
