// SPDX-License-Identifier: MIT
// Golden files of our own inputs (tests/golden/iptables/NAME.rules): the AST as JSON (NAME.ast.json),
// the input printed back in canonical restore form (NAME.restore), the diagnostics of parsing and
// loading (NAME.diag), and, when it loads, the iptables-save listing of the state (NAME.save). `UPDATE_GOLDEN=1` rewrites them; review the diff before committing.
// NAME.lenient.rules is read with --lenient.
#include <nflens/iptables.hpp>
#include <nflens/json.hpp>

#include <doctest/doctest.h>

#include "support.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace ipt = nflens::iptables;
namespace fs = std::filesystem;

namespace {

bool updating() {
  const char* v = std::getenv("UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

void compare(const fs::path& path, const std::string& actual) {
  CAPTURE(path.string());
  if (updating()) {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  REQUIRE_MESSAGE(fs::exists(path), "missing golden file; run with UPDATE_GOLDEN=1");
  CHECK(nflens::test::slurp(path) == actual);
}

}  // namespace

TEST_SUITE("golden") {
  TEST_CASE("iptables golden: AST, diagnostics and listing of our own inputs") {
    const fs::path dir = nflens::test::source_root() / "tests/golden/iptables";
    std::vector<fs::path> inputs;
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".rules") inputs.push_back(e.path());
    std::sort(inputs.begin(), inputs.end());
    REQUIRE(inputs.size() >= 6);
    for (const auto& input : inputs) {
      const std::string name = input.filename().string();
      CAPTURE(name);
      const std::string stem = input.stem().string();
      const std::string text = nflens::test::slurp(input);
      ipt::parse_options o;
      o.lenient = name.find(".lenient.") != std::string::npos;
      auto parsed = ipt::parse(name, text, o);
      compare(dir / (stem + ".ast.json"), nlohmann::json(parsed.value).dump(2) + "\n");
      // the input itself in canonical form: blocks, declarations and commands in file order
      if (parsed.ok()) {
        compare(dir / (stem + ".restore"), ipt::print(parsed.value, {.counters = true}));
        // which reads back to the same
        auto again = ipt::parse(name, ipt::print(parsed.value, {.counters = true}), o);
        CHECK(again.ok());
        CHECK(ipt::print(again.value, {.counters = true}) == ipt::print(parsed.value, {.counters = true}));
      }
      auto loaded = ipt::load(name, text, o);
      compare(dir / (stem + ".diag"), nflens::render(loaded.diagnostics));
      if (loaded.ok())
        compare(dir / (stem + ".save"), ipt::print(loaded.value));
      else
        CHECK_FALSE(fs::exists(dir / (stem + ".save")));
    }
  }
}
