// SPDX-License-Identifier: MIT
// The nft branch of `nflens parse`: parse nft text (a listing or an `nft -f` script) and print a
// summary of what it holds. Diagnostics go to stderr; exit 0 without errors, 1 with errors.
#include "parse_nft.hpp"

#include <nflens/json.hpp>
#include <nflens/nft.hpp>
#include <nflens/nft_json.hpp>

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <variant>

namespace nflens::cli {

namespace {

struct counts {
  std::map<std::string, std::size_t> tables, commands, statements;
  std::size_t chains = 0, base_chains = 0, rules = 0, sets = 0, maps = 0, elements = 0, flowtables = 0, objects = 0;
  std::size_t not_modelled = 0;

  void stmt_kinds(std::span<const nft::stmt> stmts) {
    static constexpr const char* kinds[] = {
        "match", "verdict",     "anonymous chain", "verdict map", "mangle",   "counter",
        "limit", "quota",       "ct count",        "last",        "log",      "reject",
        "nat",   "tproxy",      "queue",           "dup",         "fwd",      "notrack",
        "set",   "meter",       "flow offload",    "object ref",  "synproxy", "optstrip",
        "xt",    "not modelled"};
    static_assert(std::size(kinds) == std::variant_size_v<nft::stmt::value_type>);
    for (const auto& s : stmts) {
      ++statements[kinds[s.value.index()]];
      if (s.is<nft::unknown_stmt>()) ++not_modelled;
      if (const auto* a = s.get<nft::anonymous_chain_stmt>()) rules_of(a->body->rules);
    }
  }
  void rules_of(std::span<const nft::rule> rs) {
    rules += rs.size();
    for (const auto& r : rs) stmt_kinds(r.stmts);
  }
  void chain_of(const nft::chain& c) {
    ++chains;
    if (c.base != nullptr) ++base_chains;
    rules_of(c.rules);
  }
  void set_of(const nft::set& s) {
    ++(s.is_map ? maps : sets);
    elements += s.elements.size();
    stmt_kinds(s.stmts);
  }
  void table_of(const nft::table& t) {
    ++tables[fmt::format("{} {}", nft::name(t.fam), t.name)];
    for (const auto& c : t.chains) chain_of(c);
    for (const auto& s : t.sets) set_of(s);
    flowtables += t.flowtables.size();
    objects += t.objects.size();
    for (const auto& o : t.objects)
      if (std::holds_alternative<nft::unknown_object>(o.body)) ++not_modelled;
  }
  void command_of(const nft::command& c) {
    ++commands[fmt::format("{} {}", nft::name(c.verb), nft::name(c.what))];
    std::visit(
        [&](const auto& b) {
          using T = std::decay_t<decltype(b)>;
          if constexpr (std::is_same_v<T, const nft::table*>)
            table_of(*b);
          else if constexpr (std::is_same_v<T, const nft::chain*>)
            chain_of(*b);
          else if constexpr (std::is_same_v<T, const nft::rule*>)
            rules_of({b, 1});
          else if constexpr (std::is_same_v<T, const nft::set*>)
            set_of(*b);
          else if constexpr (std::is_same_v<T, std::span<const nft::element>>)
            elements += b.size();
          else if constexpr (std::is_same_v<T, const nft::flowtable*>)
            ++flowtables;
          else if constexpr (std::is_same_v<T, const nft::object*>)
            ++objects;
        },
        c.body);
  }
};

std::string summary(const nft::script& s, const std::vector<diagnostic>& ds) {
  counts n;
  for (const auto& c : s.commands) n.command_of(c);
  std::string out = "format: nft\ntables:";
  for (const auto& [t, k] : n.tables) out += fmt::format(" {}", t);
  out += fmt::format("\ncommands: {}", s.commands.size());
  for (const auto& [c, k] : n.commands) out += fmt::format(" ({} {})", c, k);
  out += fmt::format(
      "\nchains: {} ({} base chains)\nrules: {}\nsets: {}\nmaps: {}\nelements: {}\nflowtables: {}\n"
      "objects: {}\nstatements:",
      n.chains, n.base_chains, n.rules, n.sets, n.maps, n.elements, n.flowtables, n.objects);
  for (const auto& [k, v] : n.statements) out += fmt::format(" {} {}", k, v);
  out += fmt::format("\nnot modelled: {}\n", n.not_modelled);
  const auto errors = error_count(ds);
  out += fmt::format("diagnostics: {} errors, {} warnings{}\n", errors, ds.size() - errors,
                     errors ? " (INCOMPLETE: parts with errors are not counted above)" : "");
  return out;
}

/// Whether the input was listed with `nft -a` (some node carries a `# handle N`): then --print shows
/// handles too.
bool has_handles(const nft::script& s) {
  for (const auto& c : s.commands) {
    const auto* t = std::get_if<const nft::table*>(&c.body);
    if (t == nullptr || *t == nullptr) continue;
    if ((*t)->handle != 0) return true;
    for (const auto& ch : (*t)->chains) {
      if (ch.handle != 0) return true;
      for (const auto& r : ch.rules)
        if (r.handle != 0) return true;
    }
  }
  return false;
}

}  // namespace

int run_nft_parse(input& in, const nft_parse_args& a) {
  auto parsed =
      a.libnftables_json ? nft::parse_json(in.name, std::move(in.text)) : nft::parse(in.name, std::move(in.text));
  // Every verb reports what `nft -f` of the input into an empty ruleset reports: the syntax errors, and
  // when there are none, what applying the commands finds (a missing table, an existing object for
  // `create`, ...). The summary and --json describe the input, which may be a fragment: a rule's
  // reference to a chain, set or map it does not define is a dangling-reference warning there, and an
  // error for --print, which shows the ruleset `nft -f` would build.
  auto ds = std::move(parsed.diagnostics);
  std::optional<result<nft::ruleset>> applied;
  if (error_count(ds) == 0) {
    applied = nft::to_ruleset(parsed.value, {.outside_references = !a.print});
    ds.insert(ds.end(), applied->diagnostics.begin(), applied->diagnostics.end());
  }
  if (a.print) {
    // What `nft list ruleset` would show after `nft -f` of the input into an empty ruleset.
    if (error_count(ds) == 0 && a.libnftables_json) {
      // names and strings JSON can carry but nft text cannot (as `convert --to nft`)
      auto problems = nft::check_text(applied->value);
      ds.insert(ds.end(), problems.begin(), problems.end());
    }
    print_diagnostics(ds);
    if (error_count(ds) != 0) return 1;
    const std::string text = nft::print(applied->value, {.handles = has_handles(parsed.value)});
    std::fwrite(text.data(), 1, text.size(), stdout);
    return 0;
  }
  print_diagnostics(ds);
  if (a.json) {
    if (error_count(ds) != 0) return 1;
    const std::string text = nlohmann::json(parsed.value).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
    return 0;
  }
  const std::string text = summary(parsed.value, ds);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return error_count(ds) == 0 ? 0 : 1;
}

}  // namespace nflens::cli
