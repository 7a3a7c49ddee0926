// SPDX-License-Identifier: MIT
// libnftables JSON input (nft_json.hpp, issue 6): parse_json on any bytes. No crash, no escaped
// exception, every diagnostic located in the input and bounded, errors capped; and a document that
// reads without errors writes back (write_json, in the flavour of the release its metainfo names) to
// JSON that reads without errors to an equal script (nft::compare) unless the write warned what it left out.

#include "fuzz_support.hpp"

#include <nflens/nft.hpp>
#include <nflens/nft_json.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <string>

namespace {

/// The release whose JSON the document says it is: nft 1.0.x metainfo reads with 1.0.6's conventions.
nflens::nft::json_flavour flavour_of(const std::string& text) {
  const auto doc = nlohmann::json::parse(text, nullptr, false);
  if (!doc.is_object() || !doc.contains("nftables") || !doc["nftables"].is_array())
    return nflens::nft::json_flavour::current;
  for (const auto& item : doc["nftables"]) {
    if (!item.is_object() || !item.contains("metainfo") || !item["metainfo"].is_object()) continue;
    const auto& v = item["metainfo"];
    if (v.contains("version") && v["version"].is_string()) {
      const auto s = v["version"].get<std::string>();
      if (s.starts_with("1.0.") || s.starts_with("0.")) return nflens::nft::json_flavour::v1_0_6;
    }
  }
  return nflens::nft::json_flavour::current;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nflens;
  const std::string text(fuzz::text(data, size));
  const nft::json_parse_options opt;
  const auto parsed = nft::parse_json("<fuzz>", text, opt);
  fuzz::check_diagnostics(parsed.diagnostics, opt.limits);
  if (!parsed.ok()) return 0;
  nft::json_write_options w;
  w.flavour = flavour_of(text);
  const auto written = nft::write_json(parsed.value, w);
  const auto again = nft::parse_json("<written>", written.value, opt);
  if (!again.ok()) {
    std::fprintf(stderr, "written:\n%s\n%s", written.value.c_str(), render(again.diagnostics).c_str());
    fuzz::require(false, "the JSON written for a script reads without errors");
  }
  const bool complete = std::none_of(written.diagnostics.begin(), written.diagnostics.end(),
                                     [](const diagnostic& d) { return d.code == error_code::not_translatable; });
  // what the flavour has no form for is left out, and said so: only a complete write must read back equal
  if (const auto d = nft::compare(parsed.value, again.value); d && complete) {
    std::fprintf(stderr, "written:\n%s\ndifference: %s\n", written.value.c_str(), d->what.c_str());
    fuzz::require(false, "reading the JSON written for a script gives an equal script");
  }
  return 0;
}
