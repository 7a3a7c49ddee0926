// SPDX-License-Identifier: MIT
// `nflens convert --to nft-json|nft [--format auto|nft|nft-json] [--nft-version 1.1|1.0.6] [--pretty] [--commands]
// [--handles] FILE|-`
//
// `--to nft-json` writes what `nft -j list ruleset` prints for a listing (or, for a script that is
// more than a listing, the command form `nft -j -f` reads). `--to nft` writes what `nft list ruleset`
// (1.1) prints once the input is loaded into an empty ruleset (`nft -j -f` of JSON commands, `nft -f`
// of a script). Whatever cannot be expressed in the target is reported on stderr as a
// `not-translatable` warning naming the rule (for `--to nft`, a name or string from JSON that nft text
// cannot hold is an error); nothing is dropped silently. The input must load into an empty ruleset as
// `nft -f` would load it (the checks of `nft::to_ruleset`). Exit 0 when the input had no errors, 1 when
// it had (nothing is written then), 2 for usage errors. The library calls behind it
// (`nft::parse_json`, `nft::write_json`; `nft::write_text` for `--to nft`) give the same text.
#include "commands.hpp"
#include "common.hpp"

#include <nflens/nft.hpp>
#include <nflens/nft_json.hpp>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

namespace nflens::cli {

namespace {

struct convert_args {
  std::string to;
  std::string format = "auto";
  std::string nft_version = "1.1";
  std::string file;
  bool pretty = false;
  bool commands = false;
  bool handles = false;
};

int run_convert(const convert_args& a) {
  auto in = read_input(a.file);
  if (!in) return 1;
  const auto format = choose_format(*in, a.format);
  if (!format) return 2;
  if (*format == input_format::iptables) {
    fmt::print(stderr, "nflens: {}: convert reads nft text or libnftables JSON, not iptables input\n", in->name);
    return 2;
  }

  std::vector<diagnostic> ds;
  nft::script s;
  if (*format == input_format::nft) {
    auto parsed = nft::parse(in->name, std::move(in->text));
    ds = std::move(parsed.diagnostics);
    s = std::move(parsed.value);
  } else {
    auto parsed = nft::parse_json(in->name, std::move(in->text));
    ds = std::move(parsed.diagnostics);
    s = std::move(parsed.value);
  }
  if (error_count(ds) == 0) {
    // As every verb: what `nft -f` of the input into an empty ruleset refuses (a missing table, a jump
    // to a chain or a lookup of a set that does not exist, `create` of what exists, deleting what does
    // not) is an error here too; nft would not list the result, so nothing is written.
    const auto applied = nft::to_ruleset(s);
    ds.insert(ds.end(), applied.diagnostics.begin(), applied.diagnostics.end());
  }
  if (error_count(ds) != 0) {
    print_diagnostics(ds);
    return 1;
  }

  std::string out;
  if (a.to == "nft-json") {
    nft::json_write_options o;
    o.flavour = a.nft_version == "1.0.6" ? nft::json_flavour::v1_0_6 : nft::json_flavour::current;
    o.indent = a.pretty ? 2 : -1;
    o.commands = a.commands;
    auto w = nft::write_json(s, o);
    ds.insert(ds.end(), w.diagnostics.begin(), w.diagnostics.end());
    out = std::move(w.value);
  } else {
    // What `nft list ruleset` shows after loading the input into an empty ruleset; names and strings
    // that nft text cannot hold (from JSON) are errors.
    auto w = nft::write_text(s, {.handles = a.handles, .nft_1_0_6 = a.nft_version == "1.0.6"});
    ds.insert(ds.end(), w.diagnostics.begin(), w.diagnostics.end());
    if (error_count(ds) != 0) {
      print_diagnostics(ds);
      return 1;
    }
    out = std::move(w.value);
  }
  print_diagnostics(ds);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

runner add_convert(CLI::App& app) {
  auto a = std::make_shared<convert_args>();
  auto* sub = app.add_subcommand("convert", "Convert between nft text and libnftables JSON (nft -j), offline");
  sub->add_option("--to", a->to, "Output: nft-json (what `nft -j list ruleset` prints) or nft (nft text)")
      ->required()
      ->check(CLI::IsMember({"nft-json", "nft"}));
  sub->add_option("--format", a->format, "Input format: auto, nft or nft-json")
      ->check(CLI::IsMember({"auto", "nft", "nft-json"}))
      ->capture_default_str();
  sub->add_option("--nft-version", a->nft_version,
                  "reproduce the JSON or the text listing of this nft release (1.1 = 1.1.x, or 1.0.6: numbers for the "
                  "priorities it does not name)")
      ->check(CLI::IsMember({"1.1", "1.0.6"}))
      ->capture_default_str();
  sub->add_flag("--pretty", a->pretty, "nft-json: indent the JSON (nft prints one line)");
  sub->add_flag("--commands", a->commands,
                "nft-json: write the command form nft -j -f reads ({\"add\": ...}) also for a listing");
  sub->add_flag("--handles", a->handles, "nft: show handles, as nft -a list ruleset does");
  sub->add_option("FILE", a->file, "Input file, or - for standard input")->required();
  return [a] { return run_convert(*a); };
}

}  // namespace nflens::cli
