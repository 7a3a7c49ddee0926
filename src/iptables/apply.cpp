// SPDX-License-Identifier: MIT
// iptables-restore semantics over an in-memory ruleset (iptables-restore(8), and what iptables-restore
// 1.8.9 with the nf_tables backend does, checked in a network namespace):
//  - a `*table` block is one transaction, committed by COMMIT; a block with an error changes nothing;
//  - without --noflush the block replaces the table (all rules and user chains go, policies reset);
//    with --noflush `:CHAIN` flushes an existing user chain (a built-in chain keeps its rules and only
//    takes the policy) or creates it;
//  - `-A -I -D -R -C -N -X -F -Z -P -E` as iptables(8) describes them; a rule may jump only to a chain
//    that exists at that point; `-X` refuses a chain that still has rules or is jumped to;
//  - as iptables-nft 1.8.9 does within one transaction: `-E OLD NEW` takes effect at COMMIT (the rest
//    of the block still names the chain OLD, NEW does not exist yet) and refuses a chain the block
//    declared (`:OLD`) or created (`-N OLD`) (CHAIN_RENAME fails). `-R` of a rule the same block added
//    is accepted, as upstream's shell test 0018-replace-new expects (1.8.9 itself crashes on it);
//  - `-s a,b -d c,d` adds one rule per source and destination pair;
//  - `-4`/`-6` lines of the other family are skipped.
#include <nflens/iptables.hpp>

#include "print.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

namespace nflens::iptables {

namespace {

struct work_chain {
  chain decl;
  std::vector<rule> rules;
  std::uint32_t references = 0;  // rules that jump or go to this chain
  bool deleted = false;
  bool declared_in_block = false;  // `:NAME` or `-N NAME` in the block being applied
};

struct work_table {
  table_id id = table_id::filter;
  // iptables-nft creates a table only for a block that declares a chain or adds a rule: `*filter` with
  // nothing but COMMIT, `-F` or `-X` leaves no table behind (and, without --noflush, removes it).
  bool exists = false;
  source_ptr file;
  span where{};
  std::vector<work_chain> chains;
  std::unordered_map<std::string_view, std::size_t> index;  // name -> chains[i]
  // Consecutive rules mostly name the same chain, and jump to the same few: the last chain found for
  // each purpose is looked at before the index.
  std::size_t last_rule_chain = 0, last_target = 0;

  work_chain* find(std::string_view name, std::size_t* cache = nullptr) {
    if (cache != nullptr && *cache < chains.size() && !chains[*cache].deleted && chains[*cache].decl.name == name)
      return &chains[*cache];
    const auto it = index.find(name);
    if (it == index.end()) return nullptr;
    if (cache != nullptr) *cache = it->second;
    return &chains[it->second];
  }
  work_chain& add(chain c) {
    index[c.name] = chains.size();
    chains.push_back({std::move(c), {}, 0, false, false});
    return chains.back();
  }
  void reference(const rule& r, int delta) {
    if (r.spec == nullptr || r.spec->target.id != target_id::chain) return;
    const auto it = index.find(r.spec->target.name);
    if (it != index.end()) chains[it->second].references += static_cast<std::uint32_t>(delta);
  }
};

chain builtin_chain(table_id t, std::string_view name) {
  chain c;
  c.name = name;
  c.policy = chain_policy::accept;
  c.builtin = true;
  (void)t;
  return c;
}

work_table fresh_table(table_id id) {
  work_table w;
  w.id = id;
  for (auto name : builtin_chains(id)) w.add(builtin_chain(id, name));
  return w;
}

work_table to_work(const table& t) {
  work_table w;
  w.id = t.id;
  w.file = t.file;
  w.where = t.where;
  w.chains.reserve(t.chains.size());
  for (const auto& c : t.chains) {
    auto& wc = w.add(c);
    const auto rs = rules_of(t, c);
    wc.rules.assign(rs.begin(), rs.end());
  }
  for (const auto& c : w.chains)  // once every chain is known
    for (const auto& r : c.rules) w.reference(r, +1);
  return w;
}

table to_table(work_table&& w) {
  table t;
  t.id = w.id;
  t.file = w.file;
  t.where = w.where;
  t.committed = true;
  t.applied = true;
  std::vector<work_chain*> order;
  order.reserve(w.chains.size());
  for (auto name : builtin_chains(w.id))
    if (auto* c = w.find(name)) order.push_back(c);
  std::vector<work_chain*> user;
  for (auto& c : w.chains)
    if (!c.deleted && !c.decl.builtin) user.push_back(&c);
  std::sort(user.begin(), user.end(),
            [](const work_chain* a, const work_chain* b) { return a->decl.name < b->decl.name; });
  order.insert(order.end(), user.begin(), user.end());
  std::size_t total = 0;
  for (auto* c : order) total += c->rules.size();
  t.rules.reserve(total);
  t.chains.reserve(order.size());
  for (auto* c : order) {
    chain decl = c->decl;
    decl.first_rule = static_cast<std::uint32_t>(t.rules.size());
    decl.rule_count = static_cast<std::uint32_t>(c->rules.size());
    if (!decl.builtin) {
      decl.policy = chain_policy::none;
      decl.counters.reset();
    }
    t.chains.push_back(decl);
    for (auto& r : c->rules) t.rules.push_back(std::move(r));
    c->rules = {};
  }
  return t;
}

class applier {
 public:
  applier(ruleset& state, const apply_options& options) : state_(state), options_(options) {}

  void block(const table& input) {
    errors_in_block_ = false;
    renames_.clear();
    work_table w;
    if (options_.noflush) {
      if (const table* existing = find_table(state_, input.id)) {
        w = to_work(*existing);
        w.exists = true;
      } else {
        w = fresh_table(input.id);
      }
    } else {
      w = fresh_table(input.id);
    }
    w.file = input.file;
    w.where = input.where;

    // declarations and commands in file order
    std::size_t ci = 0, ri = 0;
    while (ci < input.chains.size() || ri < input.rules.size()) {
      const bool chain_first =
          ri == input.rules.size() ||
          (ci < input.chains.size() && input.chains[ci].where.offset <= input.rules[ri].where.offset);
      if (chain_first)
        declaration(w, input.chains[ci++]);
      else
        command(w, input.rules[ri++]);
    }
    if (!input.committed || errors_in_block_) return;  // nothing of the block reaches the kernel
    for (const auto& [index, name] : renames_) rename(w, w.chains[index], name);
    if (!w.exists) {
      std::erase_if(state_.tables, [&](const table& t) { return t.id == input.id; });
      return;
    }
    table t = to_table(std::move(w));
    for (auto& existing : state_.tables)
      if (existing.id == t.id) {
        existing = std::move(t);
        return;
      }
    state_.tables.push_back(std::move(t));
    std::sort(state_.tables.begin(), state_.tables.end(), [](const table& a, const table& b) { return a.id < b.id; });
  }

  std::vector<diagnostic> take() { return std::move(diagnostics_); }

 private:
  void error(const source_ptr& file, span where, error_code code, std::string message) {
    errors_in_block_ = true;
    // Capped like a parse's errors (diagnostic_sink): a million failing commands give a bounded list.
    if (options_.max_errors != 0 && errors_ >= options_.max_errors) {
      if (errors_++ == options_.max_errors)
        diagnostics_.push_back({severity::error,
                                error_code::too_many_errors,
                                fmt::format("too many errors ({}); the rest were not reported", options_.max_errors),
                                file,
                                where,
                                {}});
      return;
    }
    ++errors_;
    diagnostics_.push_back({severity::error, code, std::move(message), file, where, {}});
  }

  void declaration(work_table& w, const chain& c) {
    w.exists = true;
    if (work_chain* existing = w.find(c.name); existing != nullptr && !existing->deleted) {
      existing->declared_in_block = true;
      if (existing->decl.builtin) {
        if (c.policy != chain_policy::none) existing->decl.policy = c.policy;
        existing->decl.counters = options_.counters ? c.counters : std::nullopt;
        existing->decl.file = c.file;
        existing->decl.where = c.where;
      } else {
        // `:CHAIN` of an existing user chain flushes it (iptables-restore --noflush)
        for (const auto& r : existing->rules) w.reference(r, -1);
        existing->rules.clear();
      }
      return;
    }
    chain decl = c;
    decl.builtin = is_builtin_chain(w.id, c.name);
    if (decl.builtin) {
      // a built-in chain the kernel does not have yet (it was deleted? cannot happen) — treat as policy
      if (decl.policy == chain_policy::none) decl.policy = chain_policy::accept;
    } else {
      decl.policy = chain_policy::none;
    }
    if (!options_.counters) decl.counters.reset();
    w.add(decl).declared_in_block = true;
  }

  // `-E`, at COMMIT: the chain, its rules and the jumps to it take the new name.
  static void rename(work_table& w, work_chain& c, std::string_view new_name) {
    if (c.deleted) return;
    const std::string_view old_name = c.decl.name;
    const std::size_t i = w.index[old_name];
    w.index.erase(old_name);
    c.decl.name = new_name;
    w.index[new_name] = i;
    for (auto& x : c.rules) x.chain = new_name;
    // jumps follow the chain: rename them too (the kernel refers to the chain, not its name)
    for (auto& other : w.chains)
      for (auto& x : other.rules)
        if (x.spec != nullptr && x.spec->target.id == target_id::chain && x.spec->target.name == old_name) {
          rule_spec copy = *x.spec;
          copy.target.name = new_name;
          x.spec = const_cast<source&>(*x.file).store_one(copy);
        }
  }

  work_chain* chain_for(work_table& w, const rule& r) {
    work_chain* c = w.find(r.chain, &w.last_rule_chain);
    if (c == nullptr || c->deleted) {
      error(r.file, r.where, error_code::chain_not_found,
            fmt::format("chain `{}` does not exist in table {}", r.chain, table_name(w.id)));
      return nullptr;
    }
    return c;
  }

  // The rules one command line adds: one per source/destination pair, counters as configured.
  // A rule line that adds one rule as it is (no address lists, counters kept as given).
  bool single(const rule& r) const {
    const rule_spec& s = *r.spec;
    return s.source.size() <= 1 && s.destination.size() <= 1 && (options_.counters || s.counters == nullptr);
  }

  // In the applied state every rule is an `-A` of its chain.
  static rule as_appended(const rule& r) {
    rule a = r;
    a.command = command_kind::append;
    a.position = 0;
    a.only = family_filter::any;
    return a;
  }

  std::vector<rule> expand(const rule& r) {
    std::vector<rule> out;
    const rule_spec& s = *r.spec;
    const bool drop_counters = !options_.counters && s.counters != nullptr;
    if (s.source.size() <= 1 && s.destination.size() <= 1 && !drop_counters) {
      out.push_back(as_appended(r));
      return out;
    }
    auto& arena = const_cast<source&>(*r.file);  // the arena is where nodes derived from this source live
    const std::size_t ns = std::max<std::size_t>(s.source.size(), 1);
    const std::size_t nd = std::max<std::size_t>(s.destination.size(), 1);
    for (std::size_t i = 0; i < ns; ++i)
      for (std::size_t j = 0; j < nd; ++j) {
        rule_spec copy = s;
        if (!s.source.empty()) copy.source = s.source.subspan(i, 1);
        if (!s.destination.empty()) copy.destination = s.destination.subspan(j, 1);
        if (drop_counters) copy.counters = nullptr;
        rule one = as_appended(r);
        one.spec = arena.store_one(copy);
        out.push_back(std::move(one));
      }
    return out;
  }

  // Checks a rule about to be added; `target` is then the chain it jumps to (or null).
  bool check_rule(work_table& w, const rule& r, work_chain*& target) {
    const rule_spec& s = *r.spec;
    target = nullptr;
    if (s.target.id == target_id::chain) {
      target = w.find(s.target.name, &w.last_target);
      if (target == nullptr || target->deleted) {
        error(r.file, s.target.where, error_code::chain_not_found,
              fmt::format("chain `{}` does not exist in table {} (iptables-restore: \"Chain '{}' does not exist\")",
                          s.target.name, table_name(w.id), s.target.name));
        return false;
      }
      if (target->decl.builtin) {
        error(r.file, s.target.where, error_code::invalid_value,
              fmt::format("cannot jump to the built-in chain `{}`", s.target.name));
        return false;
      }
    }
    const std::string_view c = r.chain;
    if (s.out_interface != nullptr && (c == "INPUT" || c == "PREROUTING") && is_builtin_chain(w.id, c)) {
      error(r.file, s.out_interface->where, error_code::invalid_value, fmt::format("can't use -o with {}", c));
      return false;
    }
    if (s.in_interface != nullptr && (c == "OUTPUT" || c == "POSTROUTING") && is_builtin_chain(w.id, c)) {
      error(r.file, s.in_interface->where, error_code::invalid_value, fmt::format("can't use -i with {}", c));
      return false;
    }
    const target_id t = s.target.id;
    const bool nat_target =
        t == target_id::dnat || t == target_id::snat || t == target_id::masquerade || t == target_id::redirect;
    if (nat_target && w.id != table_id::nat) {
      error(r.file, s.target.where, error_code::invalid_value,
            fmt::format("target {} is valid only in the nat table", s.target.name));
      return false;
    }
    if (t == target_id::tproxy && w.id != table_id::mangle) {
      error(r.file, s.target.where, error_code::invalid_value, "target TPROXY is valid only in the mangle table");
      return false;
    }
    return true;
  }

  void command(work_table& w, const rule& r) {
    if ((r.only == family_filter::ipv4 && state_.family != ip_family::ipv4) ||
        (r.only == family_filter::ipv6 && state_.family != ip_family::ipv6))
      return;
    switch (r.command) {
      case command_kind::append: {
        work_chain* c = chain_for(w, r);
        work_chain* target = nullptr;
        if (c == nullptr || !check_rule(w, r, target)) return;
        w.exists = true;
        if (single(r)) {  // the common case, without a vector
          c->rules.push_back(as_appended(r));
          if (target != nullptr) ++target->references;
          return;
        }
        auto added = expand(r);
        if (target != nullptr) target->references += static_cast<std::uint32_t>(added.size());
        for (auto& one : added) c->rules.push_back(std::move(one));
        return;
      }
      case command_kind::insert: {
        work_chain* c = chain_for(w, r);
        work_chain* target = nullptr;
        if (c == nullptr || !check_rule(w, r, target)) return;
        const std::size_t at = r.position == 0 ? 0 : r.position - 1;
        if (at > c->rules.size()) {
          error(r.file, r.where, error_code::rule_not_found,
                fmt::format("index of insertion too big: chain `{}` has {} rules", r.chain, c->rules.size()));
          return;
        }
        auto added = expand(r);
        w.exists = true;
        for (const auto& one : added) w.reference(one, +1);
        c->rules.insert(c->rules.begin() + static_cast<std::ptrdiff_t>(at), added.begin(), added.end());
        return;
      }
      case command_kind::replace: {
        work_chain* c = chain_for(w, r);
        work_chain* target = nullptr;
        if (c == nullptr || !check_rule(w, r, target)) return;
        if (r.position == 0 || r.position > c->rules.size()) {
          error(r.file, r.where, error_code::rule_not_found,
                fmt::format("index of replacement too big: chain `{}` has {} rules", r.chain, c->rules.size()));
          return;
        }
        auto added = expand(r);
        if (added.size() != 1) {
          error(r.file, r.where, error_code::invalid_value, "-R takes a single source and destination address");
          return;
        }
        auto& slot = c->rules[r.position - 1];
        w.reference(slot, -1);
        slot = std::move(added.front());
        w.reference(slot, +1);
        return;
      }
      case command_kind::delete_rule: {
        work_chain* c = chain_for(w, r);
        if (c == nullptr) return;
        if (r.spec == nullptr) {
          if (r.position == 0 || r.position > c->rules.size()) {
            error(r.file, r.where, error_code::rule_not_found,
                  fmt::format("index of deletion too big: chain `{}` has {} rules", r.chain, c->rules.size()));
            return;
          }
          w.reference(c->rules[r.position - 1], -1);
          c->rules.erase(c->rules.begin() + static_cast<std::ptrdiff_t>(r.position - 1));
          return;
        }
        for (const auto& one : expand(r)) {
          const std::string wanted = detail::spec_text(*one.spec, state_.family);
          auto it = std::find_if(c->rules.begin(), c->rules.end(), [&](const rule& x) {
            return x.spec != nullptr && detail::spec_text(*x.spec, state_.family) == wanted;
          });
          if (it == c->rules.end()) {
            error(r.file, r.where, error_code::rule_not_found,
                  fmt::format("no such rule in chain `{}` (iptables: \"Bad rule (does a matching rule exist in that "
                              "chain?)\")",
                              r.chain));
            return;
          }
          w.reference(*it, -1);
          c->rules.erase(it);
        }
        return;
      }
      case command_kind::check: {
        work_chain* c = chain_for(w, r);
        if (c == nullptr) return;
        for (const auto& one : expand(r)) {
          const std::string wanted = detail::spec_text(*one.spec, state_.family);
          const bool found = std::any_of(c->rules.begin(), c->rules.end(), [&](const rule& x) {
            return x.spec != nullptr && detail::spec_text(*x.spec, state_.family) == wanted;
          });
          if (!found)
            error(r.file, r.where, error_code::rule_not_found, fmt::format("no such rule in chain `{}`", r.chain));
        }
        return;
      }
      case command_kind::flush: {
        auto flush = [&](work_chain& c) {
          for (const auto& x : c.rules) w.reference(x, -1);
          c.rules.clear();
        };
        if (r.chain.empty()) {
          for (auto& c : w.chains)
            if (!c.deleted) flush(c);
        } else if (work_chain* c = chain_for(w, r)) {
          flush(*c);
        }
        return;
      }
      case command_kind::zero: {
        if (r.chain.empty()) {
          for (auto& c : w.chains)
            if (c.decl.counters) c.decl.counters = counters{};
          return;
        }
        work_chain* c = chain_for(w, r);
        if (c == nullptr) return;
        if (r.position > c->rules.size()) {
          error(r.file, r.where, error_code::rule_not_found,
                fmt::format("rule {} does not exist in chain `{}`", r.position, r.chain));
          return;
        }
        if (r.position == 0 && c->decl.counters) c->decl.counters = counters{};
        return;
      }
      case command_kind::new_chain: {
        if (work_chain* c = w.find(r.chain); c != nullptr && !c->deleted) {
          error(r.file, r.where, error_code::chain_exists, fmt::format("chain `{}` already exists", r.chain));
          return;
        }
        chain decl;
        decl.name = r.chain;
        decl.file = r.file;
        decl.where = r.where;
        w.add(decl).declared_in_block = true;
        w.exists = true;
        return;
      }
      case command_kind::delete_chain: {
        auto remove = [&](work_chain& c, bool report) {
          if (!c.rules.empty() || c.references > 0) {
            if (report || true)
              error(r.file, r.where, error_code::chain_in_use,
                    fmt::format("cannot delete chain `{}`: {}", c.decl.name,
                                c.rules.empty() ? "other rules jump to it" : "it still has rules"));
            return;
          }
          c.deleted = true;
          w.index.erase(c.decl.name);
        };
        if (r.chain.empty()) {
          for (auto& c : w.chains)
            if (!c.deleted && !c.decl.builtin) remove(c, false);
          return;
        }
        work_chain* c = chain_for(w, r);
        if (c == nullptr) return;
        if (c->decl.builtin) {
          error(r.file, r.where, error_code::invalid_value, fmt::format("cannot delete built-in chain `{}`", r.chain));
          return;
        }
        remove(*c, true);
        return;
      }
      case command_kind::policy: {
        work_chain* c = chain_for(w, r);
        if (c == nullptr) return;
        if (!c->decl.builtin) {
          error(r.file, r.where, error_code::invalid_value,
                fmt::format("`{}` is not a built-in chain: only built-in chains have a policy", r.chain));
          return;
        }
        c->decl.policy = r.policy;
        w.exists = true;
        return;
      }
      case command_kind::rename_chain: {
        work_chain* c = chain_for(w, r);
        if (c == nullptr) return;
        if (c->decl.builtin) {
          error(r.file, r.where, error_code::invalid_value, fmt::format("cannot rename built-in chain `{}`", r.chain));
          return;
        }
        if (c->declared_in_block) {
          error(r.file, r.where, error_code::chain_not_found,
                fmt::format("chain `{}` was declared or created in this block: iptables-restore 1.8.9 (nf_tables) "
                            "renames only chains of the running ruleset (CHAIN_RENAME fails)",
                            r.chain));
          return;
        }
        const std::size_t i = w.index[r.chain];
        const bool taken = std::any_of(renames_.begin(), renames_.end(),
                                       [&](const auto& x) { return x.second == r.new_name || x.first == i; });
        if (work_chain* n = w.find(r.new_name); (n != nullptr && !n->deleted) || taken) {
          error(r.file, r.where, error_code::chain_exists,
                fmt::format("chain `{}` already exists (or is renamed in this block)", r.new_name));
          return;
        }
        renames_.emplace_back(i, r.new_name);  // at COMMIT: until then the chain keeps its name
        return;
      }
    }
  }

  ruleset& state_;
  const apply_options& options_;
  std::vector<diagnostic> diagnostics_;
  bool errors_in_block_ = false;
  std::vector<std::pair<std::size_t, std::string_view>> renames_;  // chains[i] -> new name, at COMMIT
  std::size_t errors_ = 0;  // reported or not, over all blocks
};

}  // namespace

std::vector<diagnostic> apply(ruleset& state, const ruleset& input, const apply_options& options) {
  if (!state.applied) {
    if (!state.tables.empty())
      return {{severity::error,
               error_code::internal_error,
               "apply: the state must be an applied ruleset (from apply or load, or empty)",
               nullptr,
               {},
               {}}};
    state.applied = true;
  }
  applier a(state, options);
  try {
    for (const auto& t : input.tables) a.block(t);
  } catch (const std::exception& e) {
    auto ds = a.take();
    ds.push_back({severity::error,
                  error_code::internal_error,
                  fmt::format("internal error while applying: {}", e.what()),
                  nullptr,
                  {},
                  {}});
    return ds;
  }
  for (const auto& s : input.sources)
    if (std::find(state.sources.begin(), state.sources.end(), s) == state.sources.end()) state.sources.push_back(s);
  return a.take();
}

result<ruleset> load(std::string name, std::string text, const parse_options& options,
                     const apply_options& apply_opts) {
  auto parsed = parse(std::move(name), std::move(text), options);
  result<ruleset> res;
  res.value.family = parsed.value.family;
  res.value.applied = true;
  res.diagnostics = std::move(parsed.diagnostics);
  // Parse and apply errors share the parse's cap; a parse that reached it stopped early (not applied).
  const std::uint32_t cap = options.limits.max_errors;
  const std::size_t parse_errors = error_count(res.diagnostics);
  if (cap != 0 && parse_errors >= cap) return res;
  apply_options capped = apply_opts;
  capped.max_errors = cap == 0 ? 0 : static_cast<std::uint32_t>(cap - parse_errors);
  auto more = apply(res.value, parsed.value, capped);
  res.diagnostics.insert(res.diagnostics.end(), std::make_move_iterator(more.begin()),
                         std::make_move_iterator(more.end()));
  return res;
}

}  // namespace nflens::iptables
