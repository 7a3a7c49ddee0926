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
//  - `-4`/`-6` lines of the other family are skipped;
//  - DROP in the nat table (`-j DROP`, `-P CHAIN DROP`) is refused by iptables itself, whatever the command
//    (`:CHAIN DROP` is not); REJECT is valid only in the filter table (the kernel's xt_target `.table`);
//  - the kernel's checks of the table it commits (nf_tables_validate, from each base chain): a target
//    runs only in its hooks (DNAT, REDIRECT PREROUTING and OUTPUT; SNAT POSTROUTING and INPUT; MASQUERADE
//    POSTROUTING; TPROXY PREROUTING), also when reached through user chains, and a path from a base chain
//    has at most 15 jumps or gotos, so a loop of jumps reached from one is refused ("Too many links"); a
//    loop or a target that no base chain reaches is accepted. A target in a built-in chain of the wrong
//    hook is refused as its rule is added; the rest is checked on the table as the block leaves it (a
//    rule added and deleted again in one block passes, as it does on a fresh table: after a refused
//    transaction the kernel checks each later rule as it is added, which is not modelled). The error is
//    reported at the rule of the block that completed the offending path (the last one written on it),
//    where iptables-restore reports the first rule after which the table is invalid.
#include <nflens/iptables.hpp>

#include "print.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace nflens::iptables {

namespace {

// Netfilter's hooks (NF_INET_*) as bits; a built-in chain is named after its hook.
constexpr std::uint8_t hook_prerouting = 1, hook_input = 2, hook_forward = 4, hook_output = 8, hook_postrouting = 16;
constexpr std::array<std::pair<std::uint8_t, std::string_view>, 5> hook_names{{{hook_prerouting, "PREROUTING"},
                                                                               {hook_input, "INPUT"},
                                                                               {hook_forward, "FORWARD"},
                                                                               {hook_output, "OUTPUT"},
                                                                               {hook_postrouting, "POSTROUTING"}}};

std::uint8_t hook_of(std::string_view builtin) {
  for (const auto& [bit, name] : hook_names)
    if (name == builtin) return bit;
  return 0;
}

// The hooks a target may run in (its xt_target `.hooks`, checked in a namespace); 0: any.
std::uint8_t target_hooks(target_id t) {
  switch (t) {
    case target_id::dnat:
    case target_id::redirect:
      return hook_prerouting | hook_output;
    case target_id::snat:
      return hook_postrouting | hook_input;
    case target_id::masquerade:
      return hook_postrouting;
    case target_id::tproxy:
      return hook_prerouting;
    default:
      return 0;
  }
}

// "PREROUTING and OUTPUT"
std::string hook_list(std::uint8_t hooks) {
  std::string out;
  for (const auto& [bit, name] : hook_names)
    if ((hooks & bit) != 0) {
      if (!out.empty()) out += " and ";
      out += name;
    }
  return out;
}

// What iptables-restore names the kernel message of a rule command: "RULE_APPEND", ...
std::string_view rule_message(command_kind c) {
  switch (c) {
    case command_kind::insert:
      return "RULE_INSERT";
    case command_kind::replace:
      return "RULE_REPLACE";
    default:
      return "RULE_APPEND";
  }
}

// The kernel's jump stack (NFT_JUMP_STACK_SIZE): a path from a base chain may have 15 jumps, not 16.
constexpr std::size_t max_jumps = 15;

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
  const source* file = nullptr;
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
    if (!r.has_spec()) return;
    const struct target t = r.target();
    if (t.id != target_id::chain) return;
    const auto it = index.find(t.name);
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
      decl.counters = {};
      decl.has_counters = false;
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
    validate_ = false;
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
    named_.clear();
    if (options_.outside_targets) {
      for (const auto& c : input.chains) named_.insert(c.name);
      for (const auto& r : input.rules)
        if (r.command == command_kind::new_chain) named_.insert(r.chain());
    }

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
    if (input.committed && !errors_in_block_ && validate_) validate(w, input);
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
  // The owner of a node's source, for a diagnostic.
  static source_ptr owner(const source* file) { return file != nullptr ? file->weak_from_this().lock() : nullptr; }

  void error(const source* at, span where, error_code code, std::string message,
             std::vector<diagnostic_note> notes = {}) {
    const source_ptr file = owner(at);
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
    diagnostics_.push_back({severity::error, code, std::move(message), file, where, std::move(notes)});
  }

  void declaration(work_table& w, const chain& c) {
    w.exists = true;
    if (work_chain* existing = w.find(c.name); existing != nullptr && !existing->deleted) {
      existing->declared_in_block = true;
      if (existing->decl.builtin) {
        if (c.policy != chain_policy::none) existing->decl.policy = c.policy;
        existing->decl.has_counters = options_.counters && c.has_counters;
        existing->decl.counters = existing->decl.has_counters ? c.counters : counters{};
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
    if (!options_.counters) {
      decl.counters = {};
      decl.has_counters = false;
    }
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
    // (derived nodes go to the arena of the rule's own source)
    auto arena = [](const rule& x) -> source& { return const_cast<source&>(*x.file); };
    auto extras = [](const rule& x) { return x.extras() != nullptr ? *x.extras() : rule_extras{}; };
    for (auto& x : c.rules) {
      rule_extras e = extras(x);
      e.renamed_chain = new_name;
      x = rule_builder::with_extras(x, arena(x), e);
    }
    // jumps follow the chain: rename them too (the kernel refers to the chain, not its name)
    for (auto& other : w.chains)
      for (auto& x : other.rules)
        if (x.has_spec() && x.target().id == target_id::chain && x.target().name == old_name) {
          rule_extras e = extras(x);
          e.renamed_target = new_name;
          x = rule_builder::with_extras(x, arena(x), e);
        }
  }

  // A rule's counters set to zero (a rule without counters has none to zero).
  static void zero_rule(rule& x) {
    if (x.counters() == nullptr || (x.counters()->packets == 0 && x.counters()->bytes == 0)) return;
    rule_extras e = *x.extras();
    e.counters = {};
    x = rule_builder::with_extras(x, const_cast<source&>(*x.file), e);
  }

  work_chain* chain_for(work_table& w, const rule& r) {
    work_chain* c = w.find(r.chain(), &w.last_rule_chain);
    if (c == nullptr || c->deleted) {
      error(r.file, r.where, error_code::chain_not_found,
            fmt::format("chain `{}` does not exist in table {} (iptables-restore: \"No chain/target/match by that "
                        "name\")",
                        r.chain(), table_name(w.id)));
      return nullptr;
    }
    return c;
  }

  // The rules one command line adds: one per source/destination pair, counters as configured.
  // A rule line that adds one rule as it is (no address lists, counters kept as given).
  bool single(const rule& r) const {
    return r.source().size() <= 1 && r.destination().size() <= 1 && (options_.counters || r.counters() == nullptr);
  }

  // In the applied state every rule is an `-A` of its chain (without a rule number; counters as configured).
  rule as_appended(const rule& r) const {
    rule a = r;
    a.command = command_kind::append;
    a.only = family_filter::any;
    const bool drop_counters = !options_.counters && r.counters() != nullptr;
    if (r.position() != 0 || drop_counters) {
      rule_extras e = *r.extras();
      e.position = 0;
      if (drop_counters) {
        e.counters = {};
        e.has_counters = false;
      }
      a = rule_builder::with_extras(a, const_cast<source&>(*r.file), e);
    }
    return a;
  }

  std::vector<rule> expand(const rule& r) {
    std::vector<rule> out;
    const rule a = as_appended(r);
    const auto sources = r.source(), destinations = r.destination();
    if (sources.size() <= 1 && destinations.size() <= 1) {
      out.push_back(a);
      return out;
    }
    auto& arena = const_cast<source&>(*r.file);  // the arena is where nodes derived from this source live
    const std::size_t ns = std::max<std::size_t>(sources.size(), 1);
    const std::size_t nd = std::max<std::size_t>(destinations.size(), 1);
    for (std::size_t i = 0; i < ns; ++i)
      for (std::size_t j = 0; j < nd; ++j)
        out.push_back(rule_builder::with_addresses(a, arena, sources.empty() ? sources : sources.subspan(i, 1),
                                                   destinations.empty() ? destinations : destinations.subspan(j, 1)));
    return out;
  }

  // Checks a rule about to be added; `target` is then the chain it jumps to (or null).
  bool check_rule(work_table& w, const rule& r, work_chain*& target) {
    const struct target jump = r.target();
    target = nullptr;
    if (jump.id == target_id::chain) {
      target = w.find(jump.name, &w.last_target);
      if (target == nullptr || target->deleted) {
        error(r.file, jump.where, error_code::chain_not_found,
              fmt::format("chain `{}` does not exist in table {} (iptables-restore: \"Chain '{}' does not exist\")",
                          jump.name, table_name(w.id), jump.name));
        return false;
      }
      if (target->decl.builtin) {
        error(r.file, jump.where, error_code::invalid_value,
              fmt::format("cannot jump to the built-in chain `{}`", jump.name));
        return false;
      }
    }
    const std::string_view c = r.chain();
    if (r.out_interface() != nullptr && (c == "INPUT" || c == "PREROUTING") && is_builtin_chain(w.id, c)) {
      error(r.file, r.out_interface()->where, error_code::invalid_value, fmt::format("can't use -o with {}", c));
      return false;
    }
    if (r.in_interface() != nullptr && (c == "OUTPUT" || c == "POSTROUTING") && is_builtin_chain(w.id, c)) {
      error(r.file, r.in_interface()->where, error_code::invalid_value, fmt::format("can't use -i with {}", c));
      return false;
    }
    const target_id t = jump.id;
    const bool nat_target =
        t == target_id::dnat || t == target_id::snat || t == target_id::masquerade || t == target_id::redirect;
    if (nat_target && w.id != table_id::nat) {
      error(r.file, jump.where, error_code::invalid_value,
            fmt::format("target {} is valid only in the nat table", jump.name));
      return false;
    }
    if (t == target_id::tproxy && w.id != table_id::mangle) {
      error(r.file, jump.where, error_code::invalid_value, "target TPROXY is valid only in the mangle table");
      return false;
    }
    if (t == target_id::reject && w.id != table_id::filter) {
      error(r.file, jump.where, error_code::invalid_value,
            fmt::format("target REJECT is valid only in the filter table (kernel: \"REJECT target: only valid in "
                        "filter table, not {}\"; iptables-restore: \"{} failed (Invalid argument)\")",
                        table_name(w.id), rule_message(r.command)));
      return false;
    }
    // in a built-in chain the kernel checks the hook as the rule is added; through user chains, at COMMIT
    const std::uint8_t allowed = target_hooks(t);
    if (allowed != 0) {
      validate_ = true;
      if (const std::uint8_t hook = hook_of(c); hook != 0 && (hook & allowed) == 0 && is_builtin_chain(w.id, c)) {
        error(r.file, jump.where, error_code::invalid_value,
              fmt::format("target {} is valid only in {}, not in {} (iptables-restore: \"{} failed (Invalid "
                          "argument)\")",
                          jump.name, hook_list(allowed), c, rule_message(r.command)));
        return false;
      }
    }
    if (target != nullptr) validate_ = true;
    return true;
  }

  // iptables refuses DROP in the nat table before anything else of the line (iptables 1.8.9 do_parse).
  bool drop_in_nat(const work_table& w, const rule& r) {
    if (w.id != table_id::nat) return false;
    const bool rule_drop = r.has_spec() && r.target().id == target_id::drop && r.command != command_kind::policy;
    const bool policy_drop = r.command == command_kind::policy && r.policy == chain_policy::drop;
    if (!rule_drop && !policy_drop) return false;
    error(r.file, rule_drop ? r.target().where : r.where, error_code::invalid_value,
          "DROP is refused in the nat table (iptables-restore: \"The \"nat\" table is not intended for filtering, "
          "the use of DROP is therefore inhibited.\")");
    return true;
  }

  // `apply_options::outside_targets`: a jump to a chain the block never names is to a chain of the
  // running ruleset (created here, before `chain_for` hands out pointers into `w.chains`).
  void outside_target(work_table& w, const rule& r) {
    const bool adds =
        r.command == command_kind::append || r.command == command_kind::insert || r.command == command_kind::replace;
    if (!adds || !r.has_spec() || r.target().id != target_id::chain) return;
    const struct target jump = r.target();
    const std::string_view name = jump.name;
    if (is_builtin_chain(w.id, name) || named_.contains(name)) return;
    if (const work_chain* c = w.find(name); c != nullptr && !c->deleted) return;
    chain decl;
    decl.name = name;
    decl.file = r.file;
    decl.where = jump.where;
    w.add(decl);
    diagnostics_.push_back({severity::warning,
                            error_code::dangling_reference,
                            fmt::format("chain `{}` is not in the input: taken as a chain of the running ruleset "
                                        "(iptables-restore into an empty one: \"Chain '{}' does not exist\")",
                                        name, name),
                            owner(r.file),
                            jump.where,
                            {}});
  }

  // One edge of the jump graph: chains[to] reached through the rule `via`.
  struct jump_edge {
    std::uint32_t to;
    const rule* via;
  };

  // The kernel's checks of the table the block commits (see the file comment): for each base chain, the
  // targets it reaches must allow its hook, and its paths may have at most `max_jumps` jumps.
  void validate(const work_table& w, const table& input) {
    const std::size_t n = w.chains.size();
    std::vector<std::uint32_t> first(n + 1, 0);
    std::vector<jump_edge> edges;
    for (std::size_t i = 0; i < n; ++i) {
      first[i] = static_cast<std::uint32_t>(edges.size());
      if (w.chains[i].deleted) continue;
      for (const auto& r : w.chains[i].rules) {
        if (!r.has_spec() || r.target().id != target_id::chain) continue;
        const auto it = w.index.find(r.target().name);
        if (it != w.index.end()) edges.push_back({static_cast<std::uint32_t>(it->second), &r});
      }
    }
    first[n] = static_cast<std::uint32_t>(edges.size());
    std::vector<std::pair<std::uint32_t, std::uint8_t>> bases;  // chain, hook
    for (auto name : builtin_chains(w.id))
      if (const auto it = w.index.find(name); it != w.index.end())
        bases.emplace_back(static_cast<std::uint32_t>(it->second), hook_of(name));

    // The rule of this block written last among `path` (and `extra`): the one that completed it.
    auto when = [&](const rule* r) -> std::uint64_t {
      return r->file == input.file ? std::uint64_t{r->where.offset} + 1 : 0;
    };
    auto latest = [&](const std::vector<const rule*>& path, const rule* extra) {
      const rule* best = extra;
      for (const rule* r : path)
        if (best == nullptr || when(r) > when(best)) best = r;
      return best;
    };
    auto command_of = [&](const rule* r) {
      const auto it = std::lower_bound(input.rules.begin(), input.rules.end(), r->where.offset,
                                       [](const rule& x, std::uint32_t o) { return x.where.offset < o; });
      return it != input.rules.end() && it->where.offset == r->where.offset && r->file == input.file
                 ? it->command
                 : command_kind::append;
    };
    auto chain_path = [&](std::uint32_t base, const std::vector<const rule*>& path) {
      std::string out(w.chains[base].decl.name);
      for (const rule* r : path) out += fmt::format(" -> {}", r->target().name);
      return out;
    };

    // Hooks: a breadth-first walk from each base chain, every target of every chain it reaches.
    std::vector<std::uint32_t> seen(n, 0), from(n, 0);
    std::vector<const rule*> via(n, nullptr);
    std::unordered_set<const rule*> reported;
    std::vector<std::uint32_t> queue;
    std::uint32_t stamp = 0;
    for (const auto& [base, hook] : bases) {
      ++stamp;
      queue.assign(1, base);
      seen[base] = stamp;
      via[base] = nullptr;
      for (std::size_t qi = 0; qi < queue.size(); ++qi) {
        const std::uint32_t c = queue[qi];
        for (std::uint32_t e = first[c]; e < first[c + 1]; ++e)
          if (seen[edges[e].to] != stamp) {
            seen[edges[e].to] = stamp;
            from[edges[e].to] = c;
            via[edges[e].to] = edges[e].via;
            queue.push_back(edges[e].to);
          }
        if (c == base) continue;  // a built-in chain's own targets were checked as they were added
        for (const auto& r : w.chains[c].rules) {
          const std::uint8_t allowed = r.has_spec() ? target_hooks(r.target().id) : 0;
          if (allowed == 0 || (allowed & hook) != 0) continue;
          std::vector<const rule*> path;
          for (std::uint32_t x = c; x != base; x = from[x]) path.push_back(via[x]);
          std::reverse(path.begin(), path.end());
          const rule* at = latest(path, &r);
          if (!reported.insert(at).second) continue;
          if (options_.max_errors != 0 && errors_ > options_.max_errors) return;  // the cap was said
          const std::string route = chain_path(base, path);
          const std::string says =
              fmt::format("iptables-restore: \"{} failed (Invalid argument)\"", rule_message(command_of(at)));
          if (at == &r) {
            error(r.file, r.target().where, error_code::invalid_value,
                  fmt::format("target {} is valid only in {}, and chain `{}` is reached from {} ({}) ({})",
                              r.target().name, hook_list(allowed), w.chains[c].decl.name, w.chains[base].decl.name,
                              route, says));
          } else {
            error(at->file, at->target().where, error_code::invalid_value,
                  fmt::format("this jump lets {} reach target {} in chain `{}` ({}), which is valid only in {} ({})",
                              w.chains[base].decl.name, r.target().name, w.chains[c].decl.name, route,
                              hook_list(allowed), says),
                  {{owner(r.file), r.target().where, fmt::format("the {} rule", r.target().name)}});
          }
        }
      }
    }

    // Depth: a depth-first walk from each base chain, keeping each finished chain's longest path below it
    // (`height`, through `deepest`); the first path too long, or loop, is reported.
    enum : std::uint8_t { white, on_path, done };
    std::vector<std::uint8_t> colour(n, white);
    std::vector<std::uint32_t> height(n, 0);
    std::vector<const jump_edge*> deepest(n, nullptr);
    struct frame {
      std::uint32_t chain, next;  // next: the index in `edges` of the chain's next edge to follow
    };
    std::vector<frame> stack;
    for (const auto& [base, hook] : bases) {
      (void)hook;
      if (colour[base] == done) continue;
      stack.assign(1, {base, first[base]});
      colour[base] = on_path;
      while (!stack.empty()) {
        const std::size_t top = stack.size() - 1;
        const std::uint32_t c = stack[top].chain;
        if (stack[top].next == first[c + 1]) {
          colour[c] = done;
          stack.pop_back();
          if (!stack.empty()) {
            const std::uint32_t p = stack.back().chain;
            if (height[c] + 1 > height[p]) {
              height[p] = height[c] + 1;
              deepest[p] = &edges[stack.back().next - 1];
            }
          }
          continue;
        }
        const jump_edge& e = edges[stack[top].next++];
        const std::uint32_t t = e.to;
        const std::size_t jumps = stack.size();  // on the path base -> ... -> c -> t
        const bool loop = colour[t] == on_path;
        const std::size_t below = colour[t] == done ? height[t] : 0;
        if (!loop && jumps + below <= max_jumps) {
          if (colour[t] == done) {
            if (height[t] + 1 > height[c]) {
              height[c] = height[t] + 1;
              deepest[c] = &e;
            }
          } else {
            colour[t] = on_path;
            stack.push_back({t, first[t]});
          }
          continue;
        }
        std::vector<const rule*> path;
        for (std::size_t i = 0; i < top; ++i) path.push_back(edges[stack[i].next - 1].via);
        path.push_back(e.via);
        for (const jump_edge* d = colour[t] == done ? deepest[t] : nullptr; d != nullptr; d = deepest[d->to])
          path.push_back(d->via);
        const rule* at = latest(path, nullptr);
        const std::string says =
            fmt::format("iptables-restore: \"{} failed (Too many links)\"", rule_message(command_of(at)));
        const std::string route = chain_path(base, path);
        error(at->file, at->target().where, error_code::invalid_value,
              loop ? fmt::format("a loop of jumps is reached from {} ({}): the kernel follows at most {} nested "
                                 "jumps from a built-in chain ({})",
                                 w.chains[base].decl.name, route, max_jumps, says)
                   : fmt::format("a path of {} jumps from {} ({}): the kernel follows at most {} nested jumps from a "
                                 "built-in chain ({})",
                                 path.size(), w.chains[base].decl.name, route, max_jumps, says));
        return;
      }
    }
  }

  void command(work_table& w, const rule& r) {
    if ((r.only == family_filter::ipv4 && state_.family != ip_family::ipv4) ||
        (r.only == family_filter::ipv6 && state_.family != ip_family::ipv6))
      return;
    if (drop_in_nat(w, r)) return;
    if (options_.outside_targets) outside_target(w, r);
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
        const std::size_t at = r.position() == 0 ? 0 : r.position() - 1;
        if (at > c->rules.size()) {
          error(r.file, r.where, error_code::rule_not_found,
                fmt::format("index of insertion too big: chain `{}` has {} rules", r.chain(), c->rules.size()));
          return;
        }
        auto added = expand(r);
        w.exists = true;
        for (const auto& one : added) w.reference(one, +1);
        // iptables inserts the rule of each address pair at the position in turn: the last pair first
        // (checked with iptables-restore 1.8.9 in a network namespace)
        c->rules.insert(c->rules.begin() + static_cast<std::ptrdiff_t>(at), added.rbegin(), added.rend());
        return;
      }
      case command_kind::replace: {
        work_chain* c = chain_for(w, r);
        work_chain* target = nullptr;
        if (c == nullptr || !check_rule(w, r, target)) return;
        if (r.position() == 0 || r.position() > c->rules.size()) {
          error(r.file, r.where, error_code::rule_not_found,
                fmt::format("index of replacement too big: chain `{}` has {} rules", r.chain(), c->rules.size()));
          return;
        }
        auto added = expand(r);
        if (added.size() != 1) {
          error(r.file, r.where, error_code::invalid_value, "-R takes a single source and destination address");
          return;
        }
        auto& slot = c->rules[r.position() - 1];
        w.reference(slot, -1);
        slot = std::move(added.front());
        w.reference(slot, +1);
        return;
      }
      case command_kind::delete_rule: {
        work_chain* c = chain_for(w, r);
        if (c == nullptr) return;
        if (!r.has_spec()) {
          if (r.position() == 0 || r.position() > c->rules.size()) {
            error(r.file, r.where, error_code::rule_not_found,
                  fmt::format("index of deletion too big: chain `{}` has {} rules", r.chain(), c->rules.size()));
            return;
          }
          w.reference(c->rules[r.position() - 1], -1);
          c->rules.erase(c->rules.begin() + static_cast<std::ptrdiff_t>(r.position() - 1));
          return;
        }
        for (const auto& one : expand(r)) {
          const std::string wanted = detail::spec_text(one, state_.family);
          auto it = std::find_if(c->rules.begin(), c->rules.end(), [&](const rule& x) {
            return x.has_spec() && detail::spec_text(x, state_.family) == wanted;
          });
          if (it == c->rules.end()) {
            error(r.file, r.where, error_code::rule_not_found,
                  fmt::format("no such rule in chain `{}` (iptables: \"Bad rule (does a matching rule exist in that "
                              "chain?)\")",
                              r.chain()));
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
          const std::string wanted = detail::spec_text(one, state_.family);
          const bool found = std::any_of(c->rules.begin(), c->rules.end(), [&](const rule& x) {
            return x.has_spec() && detail::spec_text(x, state_.family) == wanted;
          });
          if (!found)
            error(r.file, r.where, error_code::rule_not_found, fmt::format("no such rule in chain `{}`", r.chain()));
        }
        return;
      }
      case command_kind::flush: {
        auto flush = [&](work_chain& c) {
          for (const auto& x : c.rules) w.reference(x, -1);
          c.rules.clear();
        };
        if (r.chain().empty()) {
          for (auto& c : w.chains)
            if (!c.deleted) flush(c);
        } else if (work_chain* c = chain_for(w, r)) {
          flush(*c);
        }
        return;
      }
      case command_kind::zero: {
        // `-Z` zeroes every chain, `-Z CHAIN` its policy counters and all its rules', `-Z CHAIN n` rule n's
        // (checked with iptables-restore 1.8.9 --counters in a network namespace)
        auto zero_chain = [](work_chain& c) {
          if (c.decl.has_counters) c.decl.counters = counters{};
          for (auto& x : c.rules) zero_rule(x);
        };
        if (r.chain().empty()) {
          for (auto& c : w.chains) zero_chain(c);
          return;
        }
        work_chain* c = chain_for(w, r);
        if (c == nullptr) return;
        if (r.position() > c->rules.size()) {
          error(r.file, r.where, error_code::rule_not_found,
                fmt::format("rule {} does not exist in chain `{}`", r.position(), r.chain()));
          return;
        }
        if (r.position() == 0)
          zero_chain(*c);
        else
          zero_rule(c->rules[r.position() - 1]);
        return;
      }
      case command_kind::new_chain: {
        if (work_chain* c = w.find(r.chain()); c != nullptr && !c->deleted) {
          error(r.file, r.where, error_code::chain_exists, fmt::format("chain `{}` already exists", r.chain()));
          return;
        }
        chain decl;
        decl.name = r.chain();
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
        if (r.chain().empty()) {
          for (auto& c : w.chains)
            if (!c.deleted && !c.decl.builtin) remove(c, false);
          return;
        }
        work_chain* c = chain_for(w, r);
        if (c == nullptr) return;
        if (c->decl.builtin) {
          error(r.file, r.where, error_code::invalid_value, fmt::format("cannot delete built-in chain `{}`", r.chain()));
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
                fmt::format("`{}` is not a built-in chain: only built-in chains have a policy", r.chain()));
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
          error(r.file, r.where, error_code::invalid_value, fmt::format("cannot rename built-in chain `{}`", r.chain()));
          return;
        }
        if (c->declared_in_block) {
          error(r.file, r.where, error_code::chain_not_found,
                fmt::format("chain `{}` was declared or created in this block: iptables-restore 1.8.9 (nf_tables) "
                            "renames only chains of the running ruleset (CHAIN_RENAME fails)",
                            r.chain()));
          return;
        }
        const std::size_t i = w.index[r.chain()];
        const bool taken = std::any_of(renames_.begin(), renames_.end(),
                                       [&](const auto& x) { return x.second == r.new_name() || x.first == i; });
        if (work_chain* n = w.find(r.new_name()); (n != nullptr && !n->deleted) || taken) {
          error(r.file, r.where, error_code::chain_exists,
                fmt::format("chain `{}` already exists (or is renamed in this block)", r.new_name()));
          return;
        }
        renames_.emplace_back(i, r.new_name());  // at COMMIT: until then the chain keeps its name
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
  // The block added a jump or a hook-bound target: the table is checked at COMMIT (`validate`).
  bool validate_ = false;
  // outside_targets: the chains the block declares or creates
  std::unordered_set<std::string_view> named_;
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
