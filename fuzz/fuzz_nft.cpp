// SPDX-License-Identifier: MIT
// nft text, listing and script form (nft.hpp): parse with an include resolver that serves the input
// itself for every `include`, so include chains and cycles are exercised too. No crash, no escaped
// exception, every diagnostic located in one of the script's sources and bounded, and a parse without
// errors compares structurally equal to itself; the same again with `limits::max_tree_bytes` at the
// input's size.

#include "fuzz_support.hpp"

#include <nflens/nft.hpp>

#include <optional>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nflens;
  const std::string text(fuzz::text(data, size));
  nft::parse_options opt;
  opt.include_resolver = [&text](std::string_view) -> std::optional<std::string> { return text; };
  const auto parsed = nft::parse("<fuzz>", text, opt);
  fuzz::check_diagnostics(parsed.diagnostics, opt.limits);
  if (parsed.ok()) fuzz::require(!nft::compare(parsed.value, parsed.value).has_value(), "a script equals itself");
  // Again with the tree capped at the input's size, below what most inputs need (2 to 32 bytes a byte):
  // the parse stops wherever the cap is reached, in any action, and says so where it stopped.
  nft::parse_options capped = opt;
  capped.limits.max_tree_bytes = size + 1;
  const auto stopped = nft::parse("<fuzz>", text, capped);
  fuzz::check_diagnostics(stopped.diagnostics, capped.limits);
  return 0;
}
