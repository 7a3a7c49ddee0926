// SPDX-License-Identifier: MIT
// The nft printer and apply against ../shared (netfilter's and Kubernetes' data, read at test time,
// never committed; skipped without ../shared):
//  - every non-empty upstream listing (nft 1.1) parses, applies to an empty ruleset and prints back
//    byte for byte; the coverage per folder is printed (parsed / typed without generic nodes /
//    round-trip);
//  - every nft 1.0.6 re-listing of those dumps parses, and wherever nft's own JSON of the two is equal
//    (ORACLE.tsv: the two differ only in layout) the ASTs are equal too;
//  - each kube-proxy script, applied to an empty ruleset, equals its kernel listing, and the printed
//    listing parses back to the same ruleset.
#include <nflens/nft.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "support.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

namespace nft = nflens::nft;
namespace fs = std::filesystem;
using nflens::test::shared_root;
using nflens::test::slurp;

namespace {

std::vector<fs::path> files(const fs::path& dir, std::string_view suffix) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

fs::path upstream() { return shared_root() / "corpus/upstream/nftables"; }
fs::path kube() { return shared_root() / "corpus/kube-proxy/nftables"; }

/// Whether a script holds no generic node (`unknown_stmt`, `unknown_object`).
bool fully_typed(const nft::script& s) {
  const auto rules_typed = [](std::span<const nft::rule> rs) {
    for (const auto& r : rs)
      for (const auto& st : r.stmts)
        if (st.is<nft::unknown_stmt>()) return false;
    return true;
  };
  for (const auto& c : s.commands) {
    if (const auto* t = std::get_if<const nft::table*>(&c.body)) {
      for (const auto& ch : (*t)->chains)
        if (!rules_typed(ch.rules)) return false;
      for (const auto& o : (*t)->objects)
        if (std::holds_alternative<nft::unknown_object>(o.body)) return false;
    }
    if (const auto* r = std::get_if<const nft::rule*>(&c.body))
      if (!rules_typed({*r, 1})) return false;
  }
  return true;
}

struct tally {
  int files = 0, parsed = 0, typed = 0, round_trip = 0;
};

/// ORACLE.tsv: name → (status, note).
std::map<std::string, std::pair<std::string, std::string>> oracle() {
  std::map<std::string, std::pair<std::string, std::string>> out;
  std::istringstream in(slurp(upstream() / "ORACLE.tsv"));
  std::string line;
  while (std::getline(in, line)) {
    const auto a = line.find('\t');
    if (a == std::string::npos) continue;
    const auto b = line.find('\t', a + 1);
    out[line.substr(0, a)] = {line.substr(a + 1, b - a - 1), b == std::string::npos ? "" : line.substr(b + 1)};
  }
  return out;
}

nflens::result<nft::ruleset> load(const fs::path& p) {
  auto parsed = nft::parse(p.string(), slurp(p));
  nflens::result<nft::ruleset> out;
  if (!parsed.ok()) {
    out.diagnostics = std::move(parsed.diagnostics);
    return out;
  }
  return nft::to_ruleset(parsed.value);
}

}  // namespace

TEST_SUITE("corpus") {
  TEST_CASE("nft printer: every upstream listing round-trips byte for byte") {
    std::map<std::string, tally> by_folder;
    std::vector<std::string> failures;
    for (const auto& f : files(upstream() / "dumps", ".nft")) {
      const std::string text = slurp(f);
      if (text.empty()) continue;
      // dumps are named <folder>__dumps__<test>.nft after the upstream test folder
      const std::string name = f.filename().string();
      tally& t = by_folder[name.substr(0, name.find("__"))];
      ++t.files;
      auto parsed = nft::parse(name, text);
      if (!parsed.ok()) {
        failures.push_back(name + ": " + nflens::render(parsed.diagnostics));
        continue;
      }
      ++t.parsed;
      if (fully_typed(parsed.value)) ++t.typed;
      const auto rs = nft::to_ruleset(parsed.value);
      if (!rs.ok()) {
        failures.push_back(name + ": " + nflens::render(rs.diagnostics));
        continue;
      }
      if (nft::print(rs.value) == text)
        ++t.round_trip;
      else
        failures.push_back(name + ": printed text differs");
    }
    tally all;
    std::string report = "nft upstream listings (folder: files / parsed / typed / round-trip)\n";
    for (const auto& [folder, t] : by_folder) {
      report += fmt::format("  {:<16} {:4} {:4} {:4} {:4}\n", folder, t.files, t.parsed, t.typed, t.round_trip);
      all.files += t.files;
      all.parsed += t.parsed;
      all.typed += t.typed;
      all.round_trip += t.round_trip;
    }
    report += fmt::format("  {:<16} {:4} {:4} {:4} {:4}\n", "all", all.files, all.parsed, all.typed, all.round_trip);
    std::fputs(report.c_str(), stdout);
    for (const auto& f : failures) MESSAGE(f);
    CHECK(all.files == 368);
    CHECK(all.parsed == all.files);
    CHECK(all.round_trip == all.files);
    // only the tunnel objects of sets/0075tunnel_0 are kept as text
    CHECK(all.typed == all.files - 1);
  }

  TEST_CASE("nft printer: nft 1.0.6 re-listings parse to the upstream AST where nft's JSON says they agree") {
    const auto status = oracle();
    int listings = 0, parsed = 0, same_json = 0, equal = 0, drift = 0, drift_equal = 0;
    nft::equality_options eq;  // element order is the kernel's in one and upstream's in the other
    for (const auto& k : files(upstream() / "kernel", ".nft")) {
      const std::string name = k.filename().string();
      const fs::path dump = upstream() / "dumps" / name;
      ++listings;
      CAPTURE(name);
      const auto kernel = load(k);
      CHECK_MESSAGE(kernel.ok(), nflens::render(kernel.diagnostics));
      if (!kernel.ok()) continue;
      ++parsed;
      if (!fs::exists(dump)) continue;  // bogons, examples: no upstream listing to compare with
      const auto it = status.find("dumps/" + name);
      if (it == status.end()) continue;
      const auto up = load(dump);
      REQUIRE(up.ok());
      const bool layout_only =
          it->second.first == "identical" || it->second.second.find("json==json-nft") != std::string::npos;
      const auto diff = nft::compare(up.value, kernel.value, eq);
      if (layout_only) {
        ++same_json;
        CHECK_MESSAGE(!diff, (diff ? diff->what : std::string()));
        if (!diff) ++equal;
      } else {
        ++drift;
        if (!diff) ++drift_equal;
      }
    }
    std::fputs(fmt::format("nft 1.0.6 re-listings: {} parse of {}; {} agree with upstream in nft's JSON, {} of "
                           "them with an equal AST; {} differ in content (version drift), {} of those equal anyway\n",
                           parsed, listings, same_json, equal, drift, drift_equal)
                   .c_str(),
               stdout);
    CHECK(parsed == listings);
    CHECK(equal == same_json);
    CHECK(same_json > 300);
  }

  TEST_CASE("nft apply: each kube-proxy script gives the ruleset of its kernel listing") {
    int scripts = 0;
    for (const auto& f : files(kube(), ".nft")) {
      const std::string name = f.filename().string();
      if (name.ends_with(".kernel.nft")) continue;
      CAPTURE(name);
      const fs::path listing = kube() / (name.substr(0, name.size() - 4) + ".kernel.nft");
      REQUIRE(fs::exists(listing));
      const auto script = load(f);
      const auto kernel = load(listing);
      REQUIRE_MESSAGE(script.ok(), nflens::render(script.diagnostics));
      REQUIRE_MESSAGE(kernel.ok(), nflens::render(kernel.diagnostics));
      const auto diff = nft::compare(script.value, kernel.value);
      CHECK_MESSAGE(!diff, (diff ? diff->what : std::string()));
      // The canonical print of either parses back to the same ruleset.
      const std::string printed = nft::print(script.value);
      auto again = nft::parse("printed", printed);
      REQUIRE(again.ok());
      const auto reapplied = nft::to_ruleset(again.value);
      REQUIRE(reapplied.ok());
      CHECK(!nft::compare(reapplied.value, kernel.value));
      CHECK(nft::print(reapplied.value) == printed);
      ++scripts;
    }
    CHECK(scripts == 11);
  }
}
