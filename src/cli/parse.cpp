// SPDX-License-Identifier: MIT
// `nflens parse [--format auto|iptables|nft] [--json] [--print] [--lenient] FILE|-`
//
// Default: a summary of what the input holds. `--print`: the canonical text — for iptables input the
// ruleset `iptables-save` would list after `iptables-restore` of the input into a fresh namespace (after
// the `--base` files, when given). `--json`: the AST as parsed (nlohmann). Diagnostics go to stderr; for
// iptables input every verb reports those of loading the input (parse and iptables-restore semantics,
// after the `--base` files), so the summary and --json fail where --print does.
// Exit 0 when the input has no errors (warnings allowed), 1 when it has errors, 2 for usage errors.
// With errors nothing is written to stdout for --print and --json (a partial ruleset is never presented
// as the input's); the summary is still printed, marked incomplete (parse errors) or refused (load errors).
#include "commands.hpp"
#include "common.hpp"
#include "parse_nft.hpp"

#include <nflens/iptables.hpp>
#include <nflens/json.hpp>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nflens::cli {

namespace {

struct parse_args {
  std::string format = "auto";
  std::string file;
  std::vector<std::string> base;
  bool json = false;
  bool print = false;
  bool lenient = false;
  bool noflush = false;
  std::string family = "auto";
  std::string table = "filter";
};

void write_stdout(std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// The summary of the input as parsed; `ds` are the diagnostics of loading it, `parse_errors` of them
// the parse's (lines left out of the counts).
std::string iptables_summary(const iptables::ruleset& rs, const std::vector<diagnostic>& ds, std::size_t parse_errors) {
  std::map<std::string, std::size_t> modules, targets, commands;
  std::size_t rules = 0, chains = 0, generic_modules = 0, generic_targets = 0;
  std::map<std::string, std::size_t> tables;
  for (const auto& t : rs.tables) {
    ++tables[std::string(iptables::table_name(t.id))];
    chains += t.chains.size();
    for (const auto& r : t.rules) {
      ++commands[std::string(iptables::command_option(r.command))];
      if (!r.has_spec()) continue;
      ++rules;
      for (const auto& m : r.matches()) {
        ++modules[std::string(m.name())];
        if (m.id == iptables::module_id::generic) ++generic_modules;
      }
      const auto& tg = r.target();
      switch (tg.id) {
        case iptables::target_id::none:
          break;
        case iptables::target_id::chain:
          ++targets[tg.is_goto ? "(goto chain)" : "(jump to chain)"];
          break;
        default:
          ++targets[std::string(tg.name)];
          if (tg.id == iptables::target_id::generic) ++generic_targets;
      }
    }
  }
  std::string out = fmt::format("format: iptables ({})\n", rs.family == ip_family::ipv4 ? "IPv4" : "IPv6");
  out += "tables:";
  for (const auto& [name, n] : tables)
    out += n > 1 ? fmt::format(" {} ({} blocks)", name, n) : fmt::format(" {}", name);
  out += fmt::format("\nchain declarations: {}\nrules: {}\ncommands:", chains, rules);
  for (const auto& [c, n] : commands) out += fmt::format(" {} {}", c, n);
  out += "\nmatch modules:";
  for (const auto& [m, n] : modules) out += fmt::format(" {} {}", m, n);
  out += "\ntargets:";
  for (const auto& [t, n] : targets) out += fmt::format(" {} {}", t, n);
  out += fmt::format("\nnot modelled: {} match uses, {} target uses\n", generic_modules, generic_targets);
  const auto errors = error_count(ds);
  out += fmt::format("diagnostics: {} errors, {} warnings{}\n", errors, ds.size() - errors,
                     parse_errors != 0 ? " (INCOMPLETE: lines with errors are not counted above)"
                     : errors != 0     ? " (iptables-restore would refuse the input: see the errors)"
                                       : "");
  return out;
}

bool has_rule_counters(const iptables::ruleset& rs) {
  for (const auto& t : rs.tables)
    for (const auto& r : t.rules)
      if (r.has_spec() && r.counters() != nullptr) return true;
  return false;
}

int run_iptables(const parse_args& a, input& in) {
  iptables::parse_options po;
  po.lenient = a.lenient;
  if (a.family == "ipv4") po.family = ip_family::ipv4;
  if (a.family == "ipv6") po.family = ip_family::ipv6;
  if (auto t = iptables::parse_table_name(a.table))
    po.lenient_table = *t;
  else {
    fmt::print(stderr, "nflens: unknown table '{}'\n", a.table);
    return 2;
  }

  // Every verb loads the input as iptables-restore would (after the --base files): its diagnostics and
  // exit status are those of loading it, not of the parse alone. The --base files come first: the family
  // the first one has (given, or seen in it) is the family of the others and of the input, as one
  // iptables-restore or ip6tables-restore would read them all.
  iptables::ruleset state;
  state.applied = true;
  std::vector<diagnostic> ds;
  bool first = true;
  bool with_counters = false;
  for (const auto& path : a.base) {
    auto base_in = read_input(path);
    if (!base_in) return 1;
    auto base = iptables::parse(base_in->name, std::move(base_in->text), po);
    with_counters = with_counters || has_rule_counters(base.value);
    if (first) {
      state.family = base.value.family;
      po.family = state.family;
    }
    ds.insert(ds.end(), base.diagnostics.begin(), base.diagnostics.end());
    auto more = iptables::apply(state, base.value, {.noflush = !first, .counters = true});
    ds.insert(ds.end(), more.begin(), more.end());
    first = false;
  }
  auto parsed = iptables::parse(in.name, std::move(in.text), po);
  if (first) state.family = parsed.value.family;
  // Rule counters (`[p:b] -A ...`, `-c p b`) mean the input came from `iptables-save -c`: --print
  // writes them back as that does.
  with_counters = with_counters || has_rule_counters(parsed.value);
  const std::size_t parse_errors = error_count(parsed.diagnostics);
  ds.insert(ds.end(), parsed.diagnostics.begin(), parsed.diagnostics.end());
  // as iptables::load: a parse that reached the error cap stopped early and is not applied
  const std::uint32_t cap = po.limits.max_errors;
  if (cap == 0 || parse_errors < cap) {
    // The summary and --json describe the input: a jump to a chain it never names is taken as one of the
    // running ruleset it is meant for (a warning), as kube-proxy's partial syncs do; --print builds the
    // state and refuses it, as iptables-restore does.
    auto more = iptables::apply(state, parsed.value,
                                {.noflush = a.noflush || !a.base.empty(),
                                 .counters = true,
                                 .outside_targets = !a.print,
                                 .max_errors = cap == 0 ? 0 : static_cast<std::uint32_t>(cap - parse_errors)});
    ds.insert(ds.end(), more.begin(), more.end());
  }
  print_diagnostics(ds);
  const bool failed = error_count(ds) != 0;
  if (a.print) {
    if (failed) return 1;
    write_stdout(iptables::print(state, {.counters = with_counters}));
    return 0;
  }
  if (a.json) {
    if (failed) return 1;
    write_stdout(nlohmann::json(parsed.value).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    write_stdout("\n");
    return 0;
  }
  write_stdout(iptables_summary(parsed.value, ds, parse_errors));
  return failed ? 1 : 0;
}

}  // namespace

runner add_parse(CLI::App& app) {
  auto a = std::make_shared<parse_args>();
  auto* sub = app.add_subcommand("parse", "Parse a saved ruleset; print a summary, the AST as JSON, or canonical text");
  sub->add_option("--format", a->format, "Input format: auto, iptables, nft, nft-json")
      ->check(CLI::IsMember({"auto", "iptables", "nft", "nft-json"}));
  sub->add_flag("--json", a->json, "Write the AST as JSON (nothing when the input has errors)");
  sub->add_flag("--print", a->print,
                "Write the canonical text: for iptables, what iptables-save lists after iptables-restore of the input");
  sub->add_flag("--lenient", a->lenient,
                "iptables: also accept `iptables -S` lines (no *table header, no COMMIT; table from --table)");
  sub->add_option("--table", a->table, "iptables --lenient: the table of lines outside a *table block")
      ->capture_default_str();
  sub->add_option("--family", a->family, "iptables: ipv4 (iptables), ipv6 (ip6tables) or auto")
      ->check(CLI::IsMember({"auto", "ipv4", "ipv6"}))
      ->capture_default_str();
  sub->add_option("--base", a->base,
                  "iptables: restore these files first (the first in full, the others and the input as "
                  "--noflush), e.g. a dump and kube-proxy's partial syncs");
  sub->add_flag("--noflush", a->noflush, "iptables: apply the input as iptables-restore --noflush");
  sub->add_option("FILE", a->file, "Input file, or - for standard input")->required();
  sub->get_option("--json")->excludes(sub->get_option("--print"));
  return [a]() -> int {
    auto in = read_input(a->file);
    if (!in) return 1;
    const auto format = choose_format(*in, a->format);
    if (!format) return 2;
    switch (*format) {
      case input_format::iptables:
        return run_iptables(*a, *in);
      case input_format::nft:
        return run_nft_parse(*in, {a->json, a->print});
      case input_format::nft_json:
        return run_nft_parse(*in, {a->json, a->print, true});
    }
    return 2;
  };
}

}  // namespace nflens::cli
