// SPDX-License-Identifier: MIT
// The graph/compare pipeline on whatever parses (graph.hpp, compare.hpp): text of either format is
// detected and parsed (iptables also applied as iptables-restore would; nft as a listing or add-only
// script; nft's JSON likewise), and its dispatch graph built; a graph cut short must say so with an error. The graph's
// shares, origins and outputs are checked, and a graph compares equivalent to itself.

#include "fuzz_graph.hpp"

#include <nflens/format.hpp>
#include <nflens/iptables.hpp>
#include <nflens/nft.hpp>
#include <nflens/nft_json.hpp>

#include <string>

namespace {

template <typename Parsed>
void check_built(const Parsed& parsed) {
  if (!parsed.ok()) return;
  const auto g = nflens::build_graph(parsed.value);
  nflens::fuzz::check_diagnostics(g.diagnostics);
  nflens::fuzz::check_graph(g.value);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nflens;
  const std::string text(fuzz::text(data, size));
  const auto format = detect_format(text);
  if (!format) return 0;
  if (*format == input_format::iptables) {
    check_built(iptables::parse("<fuzz>", text));
    check_built(iptables::load("<fuzz>", text));
  } else if (*format == input_format::nft) {
    check_built(nft::parse("<fuzz>", text));
  } else if (*format == input_format::nft_json) {
    check_built(nft::parse_json("<fuzz>", text));
  }
  return 0;
}
