// SPDX-License-Identifier: MIT
// `nft -f` semantics: a script's commands applied to an in-memory ruleset as one transaction.
//
// Order and handles follow nft and the kernel: a table block expands into the table, then its chains
// (declarations), objects, sets (each followed by its elements), flowtables, and then the rules of
// each chain in order (nftables cmd.c nft_cmd_expand); every chain, object, set, anonymous set,
// flowtable and rule takes the next handle of its table, tables the next handle of the ruleset.
// Normalisations are those a kernel listing shows: base chains get a policy, priorities become
// numbers, one-element anonymous sets in a match become their element (evaluate.c
// optimize_singleton_set), and a set updated from the packet path gets `flags dynamic` and, without a
// size, `size 65535`. Lookups by name go through hash indexes, so a 10,000-service script applies in
// linear time.

#include <nflens/nft.hpp>

#include "nft/datatype.hpp"
#include "nft/dependency.hpp"
#include "nft/rule_check.hpp"
#include "nft/vocabulary.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace nflens::nft {

namespace {

// ---------------------------------------------------------------------------------------------------
// Structural hashing of element keys (consistent with `equal`)

void mix(std::size_t& h, std::size_t v) noexcept { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); }

std::size_t key_hash(const expr& e) noexcept {
  std::size_t h = e.value.index();
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, integer_expr>)
          mix(h, v.value);
        else if constexpr (std::is_same_v<T, address_expr>)
          mix(h, std::hash<ip_address>{}(v.address()));
        else if constexpr (std::is_same_v<T, symbol_expr>)
          mix(h, std::hash<std::string_view>{}(v.name));
        else if constexpr (std::is_same_v<T, string_expr>)
          mix(h, std::hash<std::string_view>{}(v.text));
        else if constexpr (std::is_same_v<T, time_expr>)
          mix(h, v.milliseconds);
        else if constexpr (std::is_same_v<T, prefix_expr>) {
          mix(h, key_hash(*v.value));
          mix(h, v.length);
        } else if constexpr (std::is_same_v<T, range_expr>) {
          mix(h, key_hash(*v.low()));
          mix(h, key_hash(*v.high()));
        } else if constexpr (std::is_same_v<T, concat_expr> || std::is_same_v<T, list_expr>) {
          for (const auto& i : v.items) mix(h, key_hash(i));
        } else if constexpr (std::is_same_v<T, binop_expr>) {
          mix(h, static_cast<std::size_t>(v.op));
          mix(h, key_hash(*v.left()));
          mix(h, key_hash(*v.right()));
        }
      },
      e.value);
  return h;
}

// ---------------------------------------------------------------------------------------------------
// Per-table indexes

struct string_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};

struct object_key {
  object_type type;
  std::string_view name;
  friend bool operator==(const object_key&, const object_key&) = default;
};
struct object_key_hash {
  std::size_t operator()(const object_key& k) const noexcept {
    std::size_t h = std::hash<std::string_view>{}(k.name);
    mix(h, static_cast<std::size_t>(k.type));
    return h;
  }
};

/// Where each named child of a table is; rebuilt after deletions.
struct table_index {
  std::unordered_map<std::string_view, std::uint32_t, string_hash, std::equal_to<>> chains, sets, flowtables;
  std::unordered_map<object_key, std::uint32_t, object_key_hash> objects;
  std::uint64_t next_handle = 1;
  /// Element key hashes of sets whose elements were looked up (built on demand), by set index.
  std::unordered_map<std::uint32_t, std::unordered_multimap<std::size_t, std::uint32_t>> element_keys;
};

std::uint64_t max_handle(const ruleset_table& t) {
  std::uint64_t m = 0;
  for (const auto& c : t.chains) {
    m = std::max(m, c.handle);
    for (const auto& r : c.rules) m = std::max(m, r.handle);
  }
  for (const auto& s : t.sets) m = std::max(m, s.handle);
  for (const auto& f : t.flowtables) m = std::max(m, f.handle);
  for (const auto& o : t.objects) m = std::max(m, o.handle);
  return m;
}

void build_index(const ruleset_table& t, table_index& ix) {
  ix.chains.clear();
  ix.sets.clear();
  ix.flowtables.clear();
  ix.objects.clear();
  ix.element_keys.clear();
  for (std::uint32_t i = 0; i < t.chains.size(); ++i) ix.chains.emplace(t.chains[i].name, i);
  for (std::uint32_t i = 0; i < t.sets.size(); ++i) ix.sets.emplace(t.sets[i].name, i);
  for (std::uint32_t i = 0; i < t.flowtables.size(); ++i) ix.flowtables.emplace(t.flowtables[i].name, i);
  for (std::uint32_t i = 0; i < t.objects.size(); ++i)
    ix.objects.emplace(object_key{t.objects[i].type, t.objects[i].name}, i);
}

// ---------------------------------------------------------------------------------------------------
// Walking the references of a rule

/// The object type a mangle statement's target names by its value: `ct helper set "NAME"` (and ct timeout, ct
/// expectation), `meta secmark set "NAME"`. Nothing for any other target.
std::optional<object_type> object_set_by(const expr& target) noexcept {
  if (const auto* c = target.get<ct_expr>()) {
    if (c->key == ct_key::helper) return object_type::ct_helper;
    if (c->key == ct_key::timeout) return object_type::ct_timeout;
    if (c->key == ct_key::expectation) return object_type::ct_expectation;
  }
  if (const auto* m = target.get<meta_expr>(); m != nullptr && m->key == meta_key::secmark) return object_type::secmark;
  return std::nullopt;
}

/// Calls `chain_ref(name, span)` for every jump/goto target, `set_ref(name, span)` for every `@set`,
/// `lookup(key, ref, added)` (where the visitor has it) for every key looked up in a named set or map
/// (`ip saddr @s`, `vmap @m`, `map @m`) or, `added`, given to it by a set statement (`add @s { ... }`),
/// after `set_ref` for it; `flowtable_ref(name, span)` for `flow add @ft`, and
/// `object_ref(type, name, span)` for named objects used by rules.
template <class Visitor>
struct ref_walker {
  Visitor& v;

  void ex(const expr* e) {
    if (e == nullptr) return;
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, set_ref_expr>)
            v.set_ref(x.name, e->where);
          else if constexpr (std::is_same_v<T, verdict_expr>) {
            if (x.kind == verdict::jump || x.kind == verdict::goto_) v.chain_ref(x.chain, e->where);
          } else if constexpr (std::is_same_v<T, prefix_expr>)
            ex(x.value);
          else if constexpr (std::is_same_v<T, range_expr>) {
            ex(x.low());
            ex(x.high());
          } else if constexpr (std::is_same_v<T, binop_expr>) {
            ex(x.left());
            ex(x.right());
          } else if constexpr (std::is_same_v<T, concat_expr> || std::is_same_v<T, list_expr>) {
            for (const auto& i : x.items) ex(&i);
          } else if constexpr (std::is_same_v<T, set_expr>) {
            for (const auto& el : x.elements) element(el);
          } else if constexpr (std::is_same_v<T, map_expr>) {
            ex(x.key());
            ex(x.mapping());
            lookup(x.key(), x.mapping());
          } else if constexpr (std::is_same_v<T, hash_expr>)
            ex(x.spec->key);
        },
        e->value);
  }
  void lookup(const expr* key, const expr* ref, bool added = false) {
    if constexpr (requires { v.lookup(*key, *ref, added); })
      if (key != nullptr && ref != nullptr && ref->is<set_ref_expr>()) v.lookup(*key, *ref, added);
  }
  void element(const nft::element& el) {
    ex(el.key);
    ex(el.data);
    if (el.options != nullptr)
      for (const auto& s : el.options->stmts) st(s);
  }
  void st(const stmt& s) {
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, match_stmt>) {
            ex(x.left);
            ex(x.right);
            lookup(x.left, x.right);
          } else if constexpr (std::is_same_v<T, verdict_stmt>) {
            if (x.kind == verdict::jump || x.kind == verdict::goto_) v.chain_ref(x.chain, s.where);
          } else if constexpr (std::is_same_v<T, anonymous_chain_stmt>) {
            if (x.body != nullptr)
              for (const auto& r : x.body->rules)
                for (const auto& i : r.stmts) st(i);
          } else if constexpr (std::is_same_v<T, verdict_map_stmt>) {
            ex(x.key);
            ex(x.mapping);
            lookup(x.key, x.mapping);
          } else if constexpr (std::is_same_v<T, mangle_stmt>) {
            ex(x.target);
            ex(x.value);
            // `ct helper set "ftp-1"`, `ct timeout set`, `ct expectation set`, `meta secmark set`: a named object
            if (const auto type = object_set_by(*x.target))
              if (const auto* n = x.value->template get<string_expr>()) v.object_ref(*type, n->text, s.where);
          } else if constexpr (std::is_same_v<T, nat_stmt>) {
            ex(x.address);
            ex(x.port);
          } else if constexpr (std::is_same_v<T, tproxy_stmt>) {
            ex(x.address);
            ex(x.port);
          } else if constexpr (std::is_same_v<T, queue_stmt>)
            ex(x.number);
          else if constexpr (std::is_same_v<T, dup_stmt> || std::is_same_v<T, fwd_stmt>) {
            ex(x.address);
            ex(x.device);
          } else if constexpr (std::is_same_v<T, set_stmt>) {
            ex(x.set_ref);
            if (const auto* r = x.set_ref->template get<set_ref_expr>()) v.dynset_ref(r->name, s.where);
            if (x.elem != nullptr) {
              element(*x.elem);
              lookup(x.elem->key, x.set_ref, true);
            }
          } else if constexpr (std::is_same_v<T, meter_stmt>) {
            if (x.elem() != nullptr) element(*x.elem());
          } else if constexpr (std::is_same_v<T, flow_offload_stmt>)
            v.flowtable_ref(x.flowtable, s.where);
          else if constexpr (std::is_same_v<T, objref_stmt>) {
            if (const auto* n = x.name->template get<string_expr>())
              v.object_ref(x.type, n->text, s.where);
            else if (const auto* m = x.name->template get<symbol_expr>())
              v.object_ref(x.type, m->name, s.where);
            else
              ex(x.name);
          }
        },
        s.value);
  }
};

template <class Visitor>
void walk_rule(const rule& r, Visitor& v) {
  ref_walker<Visitor> w{v};
  for (const auto& s : r.stmts) w.st(s);
}

/// Counts the anonymous sets (and meters) a rule creates in the kernel (each takes a handle before the rule).
std::uint32_t anonymous_sets(const rule& r) {
  std::uint32_t n = 0;
  const auto count_expr = [&](const auto& self, const expr* e) -> void {
    if (e == nullptr) return;
    if (e->is<set_expr>()) ++n;
    if (const auto* m = e->get<map_expr>()) {
      self(self, m->key());
      self(self, m->mapping());
    }
  };
  for (const auto& s : r.stmts) {
    if (const auto* m = s.get<match_stmt>()) count_expr(count_expr, m->right);
    if (const auto* v = s.get<verdict_map_stmt>()) count_expr(count_expr, v->mapping);
    if (const auto* g = s.get<mangle_stmt>()) count_expr(count_expr, g->value);
    if (const auto* t = s.get<nat_stmt>()) count_expr(count_expr, t->address);
    if (s.is<meter_stmt>()) ++n;  // a meter is a set of its own in the kernel
  }
  return n;
}

// ---------------------------------------------------------------------------------------------------
// The transaction

class applier {
 public:
  applier(ruleset& rs, const script& s, const apply_options& o) : rs_(rs), script_(s), options_(o) {
    index_.resize(rs_.tables.size());
    for (std::size_t i = 0; i < rs_.tables.size(); ++i) {
      build_index(rs_.tables[i], index_[i]);
      index_[i].next_handle = max_handle(rs_.tables[i]) + 1;
      next_table_handle_ = std::max(next_table_handle_, rs_.tables[i].handle + 1);
    }
    arena_ = std::make_shared<source>("<apply>", std::string());
  }

  void run() {
    for (const auto& c : script_.commands) {
      if (errors_ >= options_.max_errors) break;
      execute(c);
    }
  }

  std::vector<diagnostic> take() { return std::move(diags_); }
  [[nodiscard]] std::size_t errors() const noexcept { return errors_; }
  [[nodiscard]] source_ptr arena() const { return arena_; }
  [[nodiscard]] bool arena_used() const noexcept { return arena_used_; }

 private:
  ruleset& rs_;
  const script& script_;
  const apply_options& options_;
  std::vector<table_index> index_;
  std::uint64_t next_table_handle_ = 1;
  std::shared_ptr<source> arena_;
  bool arena_used_ = false;
  std::vector<diagnostic> diags_;
  std::size_t errors_ = 0;
  const command* cmd_ = nullptr;
  std::uint32_t located_warnings_ = 0;

  // --- diagnostics -----------------------------------------------------------------------------------

  source_ptr owner(const source* f) const {
    for (const auto& s : script_.sources)
      if (s.get() == f) return s;
    for (const auto& s : rs_.sources)
      if (s.get() == f) return s;
    return nullptr;
  }
  /// The source of the command being applied, which its chains', rules' and elements' spans refer to.
  [[nodiscard]] const source* cmd_file() const noexcept { return cmd_ != nullptr ? cmd_->file : nullptr; }
  void fail(error_code code, std::string message, const source* file = nullptr, span where = {}) {
    ++errors_;
    diagnostic d;
    d.level = severity::error;
    d.code = code;
    d.message = std::move(message);
    if (file == nullptr && cmd_ != nullptr) {
      file = cmd_->file;
      where = cmd_->where;
    }
    d.file = owner(file);
    d.where = where;
    diags_.push_back(std::move(d));
  }
  void warn_at(error_code code, std::string message, const source* file, span where) {
    // as many as a parse keeps (limits::max_warnings); past them one note that more were dropped
    if (++located_warnings_ > limits{}.max_warnings) {
      if (located_warnings_ == limits{}.max_warnings + 1) {
        diagnostic d;
        d.level = severity::warning;
        d.code = error_code::too_many_warnings;
        d.message = "more dangling references are not reported";
        diags_.push_back(std::move(d));
      }
      return;
    }
    diagnostic d;
    d.level = severity::warning;
    d.code = code;
    d.message = std::move(message);
    d.file = owner(file);
    d.where = where;
    diags_.push_back(std::move(d));
  }
  void warn(error_code code, std::string message) {
    diagnostic d;
    d.level = severity::warning;
    d.code = code;
    d.message = std::move(message);
    if (cmd_ != nullptr) {
      d.file = owner(cmd_->file);
      d.where = cmd_->where;
    }
    diags_.push_back(std::move(d));
  }

  // --- lookups -------------------------------------------------------------------------------------

  std::string table_label(family f, std::string_view t) const { return fmt::format("table {} {}", name(f), t); }

  std::optional<std::size_t> find_table(family f, std::string_view n) const {
    for (std::size_t i = 0; i < rs_.tables.size(); ++i)
      if (rs_.tables[i].fam == f && rs_.tables[i].name == n) return i;
    return std::nullopt;
  }
  std::optional<std::size_t> find_table_by_handle(family f, std::uint64_t h) const {
    for (std::size_t i = 0; i < rs_.tables.size(); ++i)
      if (rs_.tables[i].fam == f && rs_.tables[i].handle == h) return i;
    return std::nullopt;
  }
  /// The command's table, or an error naming it.
  std::optional<std::size_t> need_table(const command& c) {
    if (auto t = find_table(c.fam, c.table_name)) return t;
    fail(error_code::object_not_found,
         fmt::format("{} does not exist (No such file or directory)", table_label(c.fam, c.table_name)));
    return std::nullopt;
  }
  template <class Map>
  static std::optional<std::uint32_t> lookup(const Map& m, std::string_view n) {
    const auto it = m.find(n);
    if (it == m.end()) return std::nullopt;
    return it->second;
  }

  // --- tables --------------------------------------------------------------------------------------

  std::size_t ensure_table(const command& c, const table_info& info, bool exclusive) {
    if (auto t = find_table(c.fam, c.table_name)) {
      if (exclusive) {
        fail(error_code::object_exists,
             fmt::format("{} already exists (File exists)", table_label(c.fam, c.table_name)));
        return *t;
      }
      rs_.tables[*t].flags = info.flags;
      return *t;
    }
    ruleset_table t;
    static_cast<table_info&>(t) = info;
    t.fam = c.fam;
    t.name = c.table_name;
    t.handle = info.handle != 0 ? info.handle : next_table_handle_;
    next_table_handle_ = std::max(next_table_handle_, t.handle + 1);
    rs_.tables.push_back(std::move(t));
    index_.emplace_back();
    return rs_.tables.size() - 1;
  }

  void add_table(const command& c, bool exclusive) {
    const auto* body = std::get_if<const table*>(&c.body);
    table_info info;
    if (body != nullptr && *body != nullptr) info = **body;
    info.file = c.file;
    if (info.where.length == 0) info.where = c.where;
    const std::size_t ti = ensure_table(c, info, exclusive);
    if (body == nullptr || *body == nullptr) return;
    const table& t = **body;
    // nft_cmd_expand: chains, objects, sets (with their elements), flowtables, then the rules.
    for (const auto& ch : t.chains) add_chain(ti, ch, false, false);
    for (const auto& o : t.objects) add_object(ti, o, false);
    for (const auto& s : t.sets) add_set(ti, s, false);
    for (const auto& f : t.flowtables) add_flowtable(ti, f, false);
    for (const auto& ch : t.chains) {
      const auto ci = lookup(index_[ti].chains, ch.name);
      if (!ci) continue;
      for (const auto& r : ch.rules) append_rule(ti, *ci, r, rule_position::none, 0, false, false);
    }
  }

  void delete_table(const command& c, bool must_exist) {
    std::optional<std::size_t> t =
        c.handle != 0 ? find_table_by_handle(c.fam, c.handle) : find_table(c.fam, c.table_name);
    if (!t) {
      if (must_exist)
        fail(error_code::object_not_found,
             c.handle != 0
                 ? fmt::format("table handle {} does not exist (No such file or directory)", c.handle)
                 : fmt::format("{} does not exist (No such file or directory)", table_label(c.fam, c.table_name)));
      return;
    }
    rs_.tables.erase(rs_.tables.begin() + static_cast<std::ptrdiff_t>(*t));
    index_.erase(index_.begin() + static_cast<std::ptrdiff_t>(*t));
  }

  // --- chains --------------------------------------------------------------------------------------

  const base_chain* normalised_base(const base_chain* b, family f) {
    if (b == nullptr) return nullptr;
    base_chain out = *b;
    if (const auto v = priority_value(b->prio, f)) out.prio = priority{priority_name::numeric, *v};
    arena_used_ = true;
    return arena_->store_one(out);
  }

  void add_chain(std::size_t ti, const chain& decl, bool exclusive, bool with_rules) {
    ruleset_table& t = rs_.tables[ti];
    table_index& ix = index_[ti];
    if (decl.base != nullptr && !vocab::priority_name_fits(decl.base->prio.name, t.fam, decl.base->hook_point)) {
      fail(error_code::invalid_value,
           fmt::format("chain {}: priority {} is not one of family {} at hook {} (nft: \"invalid priority "
                       "expression value in this context\")",
                       decl.name, name(decl.base->prio.name), name(t.fam), name(decl.base->hook_point)),
           cmd_file(), decl.where);
      return;
    }
    // a policy belongs to a base chain: given to a chain without a hook (new, or regular already), the
    // kernel refuses it ("Operation not supported"); to an existing base chain, it changes its policy
    const auto policy_without_hook = [&] {
      fail(error_code::invalid_value,
           fmt::format("chain {}: a policy on a chain without a hook (Operation not supported)", decl.name), cmd_file(),
           decl.where);
    };
    const bool bare_policy = decl.policy != chain_policy::unspecified && decl.base == nullptr;
    if (auto ci = lookup(ix.chains, decl.name)) {
      if (exclusive) {
        fail(error_code::chain_exists,
             fmt::format("chain {} already exists in {} (File exists)", decl.name, table_label(t.fam, t.name)),
             cmd_file(), decl.where);
        return;
      }
      ruleset_chain& c = t.chains[*ci];
      if (decl.base != nullptr && c.base == nullptr) {
        fail(error_code::chain_exists,
             fmt::format("chain {} exists and is not a base chain (Operation not supported)", decl.name), cmd_file(),
             decl.where);
        return;
      }
      if (bare_policy && c.base == nullptr) return policy_without_hook();
      if (decl.policy != chain_policy::unspecified) c.policy = decl.policy;
      if (with_rules)
        for (const auto& r : decl.rules) append_rule(ti, *ci, r, rule_position::none, 0, false, true);
      return;
    }
    if (bare_policy) return policy_without_hook();
    ruleset_chain c;
    static_cast<chain_info&>(c) = decl;
    c.file = cmd_file();
    c.base = normalised_base(decl.base, t.fam);
    if (c.base != nullptr && c.policy == chain_policy::unspecified) c.policy = chain_policy::accept;
    if (c.base == nullptr) c.policy = chain_policy::unspecified;
    c.handle = decl.handle != 0 ? decl.handle : ix.next_handle;
    ix.next_handle = std::max(ix.next_handle, c.handle + 1);
    const auto at = static_cast<std::uint32_t>(t.chains.size());
    t.chains.push_back(std::move(c));
    ix.chains.emplace(t.chains.back().name, at);
    if (with_rules)
      for (const auto& r : decl.rules) append_rule(ti, at, r, rule_position::none, 0, false, true);
  }

  /// Whether a rule or map element of the table jumps to chain `n`.
  bool chain_referenced(const ruleset_table& t, std::string_view n, std::string_view except) const {
    struct v {
      std::string_view target;
      bool found = false;
      void chain_ref(std::string_view c, span) { found |= c == target; }
      void set_ref(std::string_view, span) {}
      void dynset_ref(std::string_view, span) {}
      void flowtable_ref(std::string_view, span) {}
      void object_ref(object_type, std::string_view, span) {}
    } visitor{n};
    for (const auto& c : t.chains) {
      if (c.name == except) continue;
      for (const auto& r : c.rules) {
        walk_rule(r, visitor);
        if (visitor.found) return true;
      }
    }
    for (const auto& s : t.sets)
      for (const auto& el : s.elements)
        if (el.data != nullptr)
          if (const auto* v = el.data->get<verdict_expr>(); v != nullptr && v->chain == n) return true;
    return false;
  }

  void delete_chain(const command& c, bool must_exist) {
    const auto ti = find_table(c.fam, c.table_name);
    if (!ti) {
      if (must_exist) need_table(c);
      return;
    }
    ruleset_table& t = rs_.tables[*ti];
    std::optional<std::uint32_t> ci;
    if (c.handle != 0) {
      for (std::uint32_t i = 0; i < t.chains.size(); ++i)
        if (t.chains[i].handle == c.handle) ci = i;
    } else {
      ci = lookup(index_[*ti].chains, c.name);
    }
    if (!ci) {
      if (must_exist)
        fail(error_code::chain_not_found,
             c.handle != 0 ? fmt::format("chain handle {} does not exist in {} (No such file or directory)", c.handle,
                                         table_label(t.fam, t.name))
                           : fmt::format("chain {} does not exist in {} (No such file or directory)", c.name,
                                         table_label(t.fam, t.name)));
      return;
    }
    if (chain_referenced(t, t.chains[*ci].name, t.chains[*ci].name)) {
      fail(error_code::chain_in_use,
           fmt::format("chain {} is still the target of a jump or goto (Device or resource busy)", t.chains[*ci].name));
      return;
    }
    t.chains.erase(t.chains.begin() + *ci);
    rebuild(*ti);
  }

  void rebuild(std::size_t ti) {
    const auto next = index_[ti].next_handle;
    build_index(rs_.tables[ti], index_[ti]);
    index_[ti].next_handle = next;
  }

  void rename_chain(const command& c) {
    const auto ti = need_table(c);
    if (!ti) return;
    ruleset_table& t = rs_.tables[*ti];
    const auto ci = lookup(index_[*ti].chains, c.name);
    if (!ci) {
      fail(error_code::chain_not_found, fmt::format("chain {} does not exist in {} (No such file or directory)", c.name,
                                                    table_label(t.fam, t.name)));
      return;
    }
    if (lookup(index_[*ti].chains, c.new_name)) {
      fail(error_code::chain_exists,
           fmt::format("chain {} already exists in {} (File exists)", c.new_name, table_label(t.fam, t.name)));
      return;
    }
    if (chain_referenced(t, c.name, {})) {
      // The kernel keeps references by pointer and would list the new name in them; nflens keeps
      // names, so it refuses rather than leave references dangling.
      fail(error_code::chain_in_use,
           fmt::format("chain {} is the target of a jump or goto; nflens does not rename referenced chains", c.name));
      return;
    }
    t.chains[*ci].name = c.new_name;
    rebuild(*ti);
  }

  // --- rules ---------------------------------------------------------------------------------------

  /// Checks what a rule refers to, and marks sets it updates as dynamic. False after reporting.
  bool check_references(std::size_t ti, const rule& r) {
    struct v {
      applier& a;
      std::size_t ti;
      const rule& r;
      bool ok = true;
      void missing(error_code code, std::string what, span where) {
        if (!ok) return;
        if (a.options_.outside_references) {
          a.warn_at(error_code::dangling_reference, std::move(what), a.cmd_file(), where);
          return;
        }
        ok = false;
        a.fail(code, std::move(what), a.cmd_file(), where);
      }
      void chain_ref(std::string_view c, span where) {
        if (!a.lookup(a.index_[ti].chains, c))
          missing(error_code::chain_not_found,
                  fmt::format("jump or goto to chain {}, which does not exist (No such file or directory)", c), where);
      }
      void set_ref(std::string_view s, span where) {
        if (!a.lookup(a.index_[ti].sets, s))
          missing(error_code::object_not_found,
                  fmt::format("set or map @{} does not exist (No such file or directory)", s), where);
      }
      void dynset_ref(std::string_view s, span) {
        // The kernel sizes a set that the packet path updates (nft_dynset); nft marks a set (not a map)
        // that `add`/`update` statements fill as dynamic (evaluate.c stmt_evaluate_set).
        if (const auto si = a.lookup(a.index_[ti].sets, s)) {
          ruleset_set& set = a.rs_.tables[ti].sets[*si];
          if (!set.is_map) set.flags |= static_cast<std::uint8_t>(set_flag::dynamic);
          if (set.size == 0) set.size = 65535;
        }
      }
      void flowtable_ref(std::string_view f, span where) {
        if (!a.lookup(a.index_[ti].flowtables, f))
          missing(error_code::object_not_found,
                  fmt::format("flowtable {} does not exist (No such file or directory)", f), where);
      }
      void object_ref(object_type type, std::string_view n, span where) {
        if (a.index_[ti].objects.find(object_key{type, n}) == a.index_[ti].objects.end())
          missing(error_code::object_not_found,
                  fmt::format("{} {} does not exist (No such file or directory)", name(type), n), where);
      }
      // nft's evaluation compares the key's datatype with the set's (evaluate.c: "datatype mismatch"). A set
      // statement is checked as a statement's argument: a header field of integer type passes where its width
      // is the set type's (`add @ports { ip length }`), which nflens does not model, so it passes them all.
      void lookup(const expr& key, const expr& ref, bool added) {
        const std::string_view n = ref.get<set_ref_expr>()->name;
        const auto si = a.lookup(a.index_[ti].sets, n);
        if (!ok || !si) return;  // a missing set was reported by set_ref
        const ruleset_table& t = a.rs_.tables[ti];
        const ruleset_set& s = t.sets[*si];
        const types::value_type has = types::key_type(key, t.fam);
        const types::value_type holds =
            s.key.typeof_expr != nullptr ? types::key_type(*s.key.typeof_expr, t.fam) : types::declared_type(s.key);
        if (added && !has.is_concat() && (has.base == types::dtype::integer || has.base == types::dtype::xinteger)) return;
        // `fib ... oifname` is a string in nft 1.0.6 and an interface name in 1.1: a set of either holds it
        if (const auto* f = key.get<fib_expr>(); f != nullptr && f->result == fib_result::oifname && !holds.is_concat() &&
                                                 (holds.base == types::dtype::string || holds.base == types::dtype::ifname))
          return;
        if (!types::mismatched(has, holds)) return;
        ok = false;
        a.fail(error_code::invalid_value,
               fmt::format("`{}` is {}, but {} {} holds {} (nft: \"datatype mismatch\")",
                           a.cmd_file() != nullptr ? a.cmd_file()->text(key.where) : std::string_view("the key"),
                           types::spelling(has), s.is_map ? "map" : "set", n, types::spelling(holds)),
               a.cmd_file(), ref.where);
      }
    } visitor{*this, ti, r};
    walk_rule(r, visitor);
    return visitor.ok;
  }

  /// What the kernel stores for statements, where it differs from what was written: a packet limit
  /// without a burst has nft's default burst of 5 (nft 1.0.6 did not list it, 1.1 does), also inside
  /// the elements that `add @s { ... }` statements create.
  static bool needs_kernel_form(std::span<const stmt> ss) {
    for (const auto& s : ss) {
      if (const auto* l = s.get<limit_stmt>(); l != nullptr && !l->bytes && !l->has_burst) return true;
      if (const auto* d = s.get<set_stmt>(); d != nullptr && d->elem != nullptr && d->elem->options != nullptr &&
                                             needs_kernel_form(d->elem->options->stmts))
        return true;
    }
    return false;
  }
  std::span<const stmt> kernel_stmts(std::span<const stmt> ss) {
    if (!needs_kernel_form(ss)) return ss;
    std::vector<stmt> out(ss.begin(), ss.end());
    for (auto& s : out) {
      if (auto* l = std::get_if<limit_stmt>(&s.value); l != nullptr && !l->bytes && !l->has_burst) {
        l->burst = 5;
        l->has_burst = true;
      }
      if (auto* d = std::get_if<set_stmt>(&s.value); d != nullptr && d->elem != nullptr)
        d->elem = arena_->store_one(kernel_element(*d->elem));
    }
    arena_used_ = true;
    return arena_->store(std::span<const stmt>(out));
  }
  /// Without the protocol matches that a later match implies (see dependency.hpp): what nft lists.
  std::span<const stmt> listed_stmts(std::span<const stmt> ss, family f) {
    auto out = deps::as_listed(ss, f, *arena_);
    if (!out) return ss;
    arena_used_ = true;
    return arena_->store(std::span<const stmt>(*out));
  }
  element kernel_element(const element& el) {
    element out = el;
    out.key = masked(el.key);
    if (el.options == nullptr || !needs_kernel_form(el.options->stmts)) return out;
    element_options o = *el.options;
    o.stmts = kernel_stmts(o.stmts);
    arena_used_ = true;
    out.options = arena_->store_one(o);
    return out;
  }

  /// The kernel's form of a prefix: the bits past its length cleared (`1.2.3.4/24` is stored, and listed,
  /// as `1.2.3.0/24`; nft's evaluation masks every prefix constant, in a match, a set and a
  /// concatenation), and a full-length one an address (`10.0.0.1/32` is `10.0.0.1`). `e` itself when
  /// nothing changes.
  const expr* masked(const expr* e) {
    if (e == nullptr) return e;
    if (const auto* p = e->get<prefix_expr>()) {
      const auto* a = p->value == nullptr ? nullptr : p->value->get<address_expr>();
      if (a == nullptr) return e;
      const ip_address addr = a->address();
      if (p->length > max_prefix_length(addr.family)) return e;
      if (p->length == max_prefix_length(addr.family)) return p->value;  // one address: listed as it
      const ip_address out = nflens::masked(ip_prefix{addr, p->length}).address;
      if (out == addr) return e;
      arena_used_ = true;
      const expr* value = arena_->store_one(expr{p->value->where, address_expr(out, *arena_)});
      return arena_->store_one(expr{e->where, prefix_expr{value, p->length}});
    }
    if (const auto* set = e->get<set_expr>()) {
      std::vector<element> els;
      for (std::size_t i = 0; i < set->elements.size(); ++i) {
        const expr* key = masked(set->elements[i].key);
        if (key == set->elements[i].key) continue;
        if (els.empty()) els.assign(set->elements.begin(), set->elements.end());
        els[i].key = key;
      }
      if (els.empty()) return e;
      arena_used_ = true;
      return arena_->store_one(expr{e->where, set_expr{arena_->store(std::span<const element>(els))}});
    }
    if (const auto* c = e->get<concat_expr>()) {
      std::vector<expr> items;
      for (std::size_t i = 0; i < c->items.size(); ++i) {
        const expr* item = masked(&c->items[i]);
        if (item == &c->items[i]) continue;
        if (items.empty()) items.assign(c->items.begin(), c->items.end());
        items[i] = *item;
      }
      if (items.empty()) return e;
      arena_used_ = true;
      return arena_->store_one(expr{e->where, concat_expr{arena_->store(std::span<const expr>(items))}});
    }
    return e;
  }
  /// A rule with the prefixes of its matches in the kernel's form (see `masked`); `r` when none changes.
  rule with_masked_prefixes(const rule& r) {
    std::vector<stmt> out;
    for (std::size_t i = 0; i < r.stmts.size(); ++i) {
      const auto* m = r.stmts[i].get<match_stmt>();
      if (m == nullptr) continue;
      const expr* right = masked(m->right);
      if (right == m->right) continue;
      if (out.empty()) out.assign(r.stmts.begin(), r.stmts.end());
      match_stmt changed = *m;
      changed.right = right;
      out[i].value = changed;
    }
    if (out.empty()) return r;
    rule copy = r;
    arena_used_ = true;
    copy.stmts = arena_->store(std::span<const stmt>(out));
    return copy;
  }

  /// nft's evaluation of a match against a one-element anonymous set: the element itself.
  rule normalised(const rule& r) {
    bool change = false;
    for (const auto& s : r.stmts)
      if (collapsible(s)) change = true;
    if (!change) return r;
    std::vector<stmt> out(r.stmts.begin(), r.stmts.end());
    for (auto& s : out) {
      if (!collapsible(s)) continue;
      match_stmt m = *s.get<match_stmt>();
      const element& el = m.right->get<set_expr>()->elements.front();
      m.right = el.key;
      if (m.op == relational_op::implicit) {
        const auto t = types::type_of(*m.left, family::inet).base;
        if (types::is_bitmask_type(t) && t != types::dtype::ct_state) m.op = relational_op::eq;
      }
      s.value = m;
    }
    rule copy = r;
    arena_used_ = true;
    copy.stmts = arena_->store(std::span<const stmt>(out));
    return copy;
  }
  static bool collapsible(const stmt& s) {
    const auto* m = s.get<match_stmt>();
    if (m == nullptr || m->left->is<concat_expr>()) return false;
    if (m->op != relational_op::implicit && m->op != relational_op::eq && m->op != relational_op::neq) return false;
    const auto* set = m->right->get<set_expr>();
    if (set == nullptr || set->elements.size() != 1) return false;
    const element& el = set->elements.front();
    if (el.data != nullptr || (el.options != nullptr && !el.options->stmts.empty())) return false;
    const expr& k = *el.key;
    return !(k.is<concat_expr>() || k.is<wildcard_expr>() || k.is<set_expr>());
  }

  /// Adds a rule. `evaluate`: the rule is input to nft's evaluation (a command, or a chain given with
  /// `add chain`), not a listing of what the kernel already holds (a table block), so nft's rewrites apply.
  void append_rule(std::size_t ti, std::uint32_t ci, const rule& r, rule_position kind, std::uint64_t pos, bool insert,
                   bool evaluate) {
    if (!check_references(ti, r)) return;
    ruleset_table& t = rs_.tables[ti];
    table_index& ix = index_[ti];
    auto& rules = t.chains[ci].rules;
    rule nr = with_masked_prefixes(evaluate ? normalised(r) : r);
    nr.stmts = listed_stmts(kernel_stmts(nr.stmts), t.fam);
    ix.next_handle += anonymous_sets(nr);
    if (nr.handle == 0) nr.handle = ix.next_handle;
    ix.next_handle = std::max(ix.next_handle, nr.handle + 1);
    std::size_t at = insert ? 0 : rules.size();
    // (`position 0` or `handle 0` is no position: nft leaves a zero out of the netlink message, so the rule
    // goes to the end, or with insert to the start)
    if ((kind == rule_position::position || kind == rule_position::handle) && pos != 0) {
      const auto it = std::find_if(rules.begin(), rules.end(), [&](const rule& x) { return x.handle == pos; });
      if (it == rules.end()) {
        fail(error_code::rule_not_found,
             fmt::format("no rule with handle {} in chain {} (No such file or directory)", pos, t.chains[ci].name));
        return;
      }
      at = static_cast<std::size_t>(it - rules.begin()) + (insert ? 0 : 1);
    } else if (kind == rule_position::index) {
      if (pos >= rules.size()) {
        fail(error_code::rule_not_found,
             fmt::format("no rule at index {} in chain {} (No such file or directory)", pos, t.chains[ci].name));
        return;
      }
      at = static_cast<std::size_t>(pos) + (insert ? 0 : 1);
    }
    rules.insert(rules.begin() + static_cast<std::ptrdiff_t>(at), ruleset_rule{nr, cmd_file()});
  }

  std::optional<std::pair<std::size_t, std::uint32_t>> need_chain(const command& c) {
    const auto ti = need_table(c);
    if (!ti) return std::nullopt;
    const auto ci = lookup(index_[*ti].chains, c.name);
    if (!ci) {
      fail(error_code::chain_not_found, fmt::format("chain {} does not exist in {} (No such file or directory)", c.name,
                                                    table_label(c.fam, c.table_name)));
      return std::nullopt;
    }
    return std::pair{*ti, *ci};
  }

  void rule_command(const command& c) {
    const auto where = need_chain(c);
    if (!where) return;
    const auto [ti, ci] = *where;
    auto& rules = rs_.tables[ti].chains[ci].rules;
    const auto by_handle = [&]() -> std::optional<std::size_t> {
      for (std::size_t i = 0; i < rules.size(); ++i)
        if (rules[i].handle == c.handle) return i;
      fail(error_code::rule_not_found,
           fmt::format("no rule with handle {} in chain {} (No such file or directory)", c.handle, c.name));
      return std::nullopt;
    };
    const rule* body = nullptr;
    if (const auto* b = std::get_if<const rule*>(&c.body)) body = *b;
    switch (c.verb) {
      case command_verb::add:
      case command_verb::create:
        if (body != nullptr) append_rule(ti, ci, *body, c.position_kind, c.position, false, true);
        return;
      case command_verb::insert:
        if (body != nullptr) append_rule(ti, ci, *body, c.position_kind, c.position, true, true);
        return;
      case command_verb::replace: {
        const auto i = by_handle();
        if (!i || body == nullptr || !check_references(ti, *body)) return;
        rule nr = normalised(*body);
        nr.stmts = listed_stmts(kernel_stmts(nr.stmts), rs_.tables[ti].fam);
        nr.handle = rules[*i].handle;
        rules[*i] = ruleset_rule{nr, cmd_file()};
        return;
      }
      case command_verb::delete_:
      case command_verb::destroy: {
        for (std::size_t i = 0; i < rules.size(); ++i)
          if (rules[i].handle == c.handle) {
            rules.erase(rules.begin() + static_cast<std::ptrdiff_t>(i));
            return;
          }
        if (c.verb == command_verb::delete_) by_handle();
        return;
      }
      default:
        unsupported(c);
    }
  }

  // --- sets and elements ---------------------------------------------------------------------------

  void add_set(std::size_t ti, const set& decl, bool exclusive) {
    ruleset_table& t = rs_.tables[ti];
    table_index& ix = index_[ti];
    if (auto si = lookup(ix.sets, decl.name)) {
      if (exclusive) {
        fail(error_code::object_exists,
             fmt::format("{} {} already exists in {} (File exists)", decl.is_map ? "map" : "set", decl.name,
                         table_label(t.fam, t.name)),
             decl.file, decl.where);
        return;
      }
      add_elements(ti, *si, decl.elements, false, decl.file);
      return;
    }
    // nft's evaluation (set_evaluate) refuses a new set or map whose declaration gives no key type, or a
    // map without its data type: the kernel never holds one.
    if (decl.key.empty() || (decl.is_map && decl.data.empty())) {
      fail(error_code::missing_argument,
           fmt::format("{} {} does not specify its {} data type", decl.is_map ? "map" : "set", decl.name,
                       decl.key.empty() ? "key" : "mapping"),
           decl.file, decl.where);
      return;
    }
    if (!check_element_statements(decl, decl.elements, decl.file)) return;
    ruleset_set s;
    static_cast<set_info&>(s) = decl;
    if (s.has_timeout && s.timeout_ms != 0) s.flags |= static_cast<std::uint8_t>(set_flag::timeout);
    s.handle = decl.handle != 0 ? decl.handle : ix.next_handle;
    ix.next_handle = std::max(ix.next_handle, s.handle + 1);
    s.stmts = kernel_stmts(s.stmts);
    s.elements.reserve(decl.elements.size());
    for (const auto& el : decl.elements) s.elements.push_back({kernel_element(el), decl.file});
    const auto at = static_cast<std::uint32_t>(t.sets.size());
    t.sets.push_back(std::move(s));
    ix.sets.emplace(t.sets.back().name, at);
    check_element_targets(ti, decl.elements, decl.file);
  }

  /// An element's own statements need the set to declare statements or be dynamic (evaluate.c
  /// setelem_evaluate: "missing statement in set declaration").
  bool check_element_statements(const set_info& set, std::span<const element> els, const source* file) {
    if (!set.stmts.empty() || (set.flags & static_cast<std::uint8_t>(set_flag::dynamic)) != 0) return true;
    for (const auto& el : els)
      if (el.options != nullptr && !el.options->stmts.empty()) {
        const std::string_view what = set.is_map ? "map" : "set";
        fail(error_code::invalid_value,
             fmt::format("an element of {} {} has statements the {} does not declare (nft: \"missing statement in "
                         "{} declaration\")",
                         what, set.name, what, what),
             file, el.options->stmts.front().where);
        return false;
      }
    return true;
  }

  void check_element_targets(std::size_t ti, std::span<const element> els, const source* file) {
    for (const auto& el : els)
      if (el.data != nullptr)
        if (const auto* v = el.data->get<verdict_expr>(); v != nullptr &&
                                                          (v->kind == verdict::jump || v->kind == verdict::goto_) &&
                                                          !lookup(index_[ti].chains, v->chain)) {
          fail(error_code::chain_not_found,
               fmt::format("element jumps to chain {}, which does not exist (No such file or directory)", v->chain),
               file, el.data->where);
          return;
        }
  }

  std::unordered_multimap<std::size_t, std::uint32_t>& keys_of(std::size_t ti, std::uint32_t si) {
    auto& ix = index_[ti].element_keys;
    auto it = ix.find(si);
    if (it != ix.end()) return it->second;
    auto& m = ix[si];
    const auto& els = rs_.tables[ti].sets[si].elements;
    m.reserve(els.size());
    for (std::uint32_t i = 0; i < els.size(); ++i) m.emplace(key_hash(*els[i].key), i);
    return m;
  }
  std::optional<std::uint32_t> find_element(std::size_t ti, std::uint32_t si, const expr& key) {
    const auto& els = rs_.tables[ti].sets[si].elements;
    auto [lo, hi] = keys_of(ti, si).equal_range(key_hash(key));
    for (; lo != hi; ++lo)
      if (equal(*els[lo->second].key, key)) return lo->second;
    return std::nullopt;
  }

  void add_elements(std::size_t ti, std::uint32_t si, std::span<const element> els, bool exclusive,
                    const source* file) {
    check_element_targets(ti, els, file);
    auto& set = rs_.tables[ti].sets[si];
    if (!check_element_statements(set, els, file)) return;
    // the elements against the set's declared types (a declaration's own were checked when it was read)
    if (auto p = check_elements(set, els, file != nullptr ? file->text() : std::string_view{})) {
      fail(p->code, std::move(p->message), file, p->where);
      return;
    }
    if (set.elements.empty() && !exclusive && !index_[ti].element_keys.contains(si)) {
      set.elements.reserve(els.size());
      for (const auto& el : els) set.elements.push_back({kernel_element(el), file});
      return;
    }
    for (const auto& given : els) {
      const element el = kernel_element(given);
      if (const auto at = find_element(ti, si, *el.key)) {
        if (exclusive) {
          fail(error_code::object_exists, fmt::format("element already exists in set {} (File exists)", set.name),
               file, el.where);
          return;
        }
        // `add` of a map key that is there with other data: the kernel refuses it (File exists)
        const auto& have = set.elements[*at];
        if (el.data != nullptr && have.data != nullptr && !equal(*el.data, *have.data)) {
          fail(error_code::object_exists,
               fmt::format("the key is in map {} already, with other data (File exists)", set.name),
               file, el.where);
          return;
        }
        continue;
      }
      const auto i = static_cast<std::uint32_t>(set.elements.size());
      set.elements.push_back({el, file});
      keys_of(ti, si).emplace(key_hash(*el.key), i);
    }
  }

  void delete_elements(std::size_t ti, std::uint32_t si, std::span<const element> els, bool must_exist,
                       const source* file) {
    auto& set = rs_.tables[ti].sets[si];
    std::vector<bool> gone(set.elements.size(), false);
    bool any = false;
    for (const auto& el : els) {
      const auto at = find_element(ti, si, *el.key);
      if (!at || gone[*at]) {
        if (must_exist) {
          fail(error_code::object_not_found,
               fmt::format("element does not exist in set {} (No such file or directory)", set.name),
               file, el.where);
          return;
        }
        continue;
      }
      gone[*at] = true;
      any = true;
    }
    if (!any) return;
    std::size_t w = 0;
    for (std::size_t r = 0; r < set.elements.size(); ++r)
      if (!gone[r]) set.elements[w++] = set.elements[r];
    set.elements.resize(w);
    index_[ti].element_keys.erase(si);
  }

  std::optional<std::pair<std::size_t, std::uint32_t>> need_set(const command& c, bool must_exist = true) {
    const auto ti = find_table(c.fam, c.table_name);
    if (!ti) {
      if (must_exist) need_table(c);
      return std::nullopt;
    }
    std::optional<std::uint32_t> si;
    if (c.handle != 0 && c.name.empty()) {
      for (std::uint32_t i = 0; i < rs_.tables[*ti].sets.size(); ++i)
        if (rs_.tables[*ti].sets[i].handle == c.handle) si = i;
    } else {
      si = lookup(index_[*ti].sets, c.name);
    }
    if (!si) {
      if (must_exist)
        fail(error_code::object_not_found,
             fmt::format("set or map {} does not exist in {} (No such file or directory)",
                         c.name.empty() ? fmt::format("handle {}", c.handle) : std::string(c.name),
                         table_label(c.fam, c.table_name)));
      return std::nullopt;
    }
    return std::pair{*ti, *si};
  }

  void set_command(const command& c) {
    switch (c.verb) {
      case command_verb::add:
      case command_verb::create: {
        const auto ti = need_table(c);
        const auto* b = std::get_if<const set*>(&c.body);
        if (ti && b != nullptr && *b != nullptr) add_set(*ti, **b, c.verb == command_verb::create);
        return;
      }
      case command_verb::delete_:
      case command_verb::destroy: {
        const auto w = need_set(c, c.verb == command_verb::delete_);
        if (!w) return;
        ruleset_table& t = rs_.tables[w->first];
        const auto n = t.sets[w->second].name;
        if (set_referenced(t, n)) {
          fail(error_code::chain_in_use, fmt::format("set {} is still used by a rule (Device or resource busy)", n));
          return;
        }
        t.sets.erase(t.sets.begin() + w->second);
        rebuild(w->first);
        return;
      }
      case command_verb::flush: {
        const auto w = need_set(c);
        if (!w) return;
        rs_.tables[w->first].sets[w->second].elements.clear();
        index_[w->first].element_keys.erase(w->second);
        return;
      }
      default:
        unsupported(c);
    }
  }

  bool set_referenced(const ruleset_table& t, std::string_view n) const {
    struct v {
      std::string_view target;
      bool found = false;
      void chain_ref(std::string_view, span) {}
      void set_ref(std::string_view s, span) { found |= s == target; }
      void dynset_ref(std::string_view, span) {}
      void flowtable_ref(std::string_view, span) {}
      void object_ref(object_type, std::string_view, span) {}
    } visitor{n};
    for (const auto& c : t.chains)
      for (const auto& r : c.rules) {
        walk_rule(r, visitor);
        if (visitor.found) return true;
      }
    return false;
  }

  void element_command(const command& c) {
    const auto* els = std::get_if<std::span<const element>>(&c.body);
    const std::span<const element> list = els != nullptr ? *els : std::span<const element>{};
    switch (c.verb) {
      case command_verb::add:
      case command_verb::create: {
        const auto w = need_set(c);
        if (w) add_elements(w->first, w->second, list, c.verb == command_verb::create, c.file);
        return;
      }
      case command_verb::delete_:
      case command_verb::destroy: {
        const auto w = need_set(c, c.verb == command_verb::delete_);
        if (w) delete_elements(w->first, w->second, list, c.verb == command_verb::delete_, c.file);
        return;
      }
      case command_verb::get:
        return;
      default:
        unsupported(c);
    }
  }

  // --- flowtables and objects ----------------------------------------------------------------------

  void add_flowtable(std::size_t ti, const flowtable& decl, bool exclusive) {
    ruleset_table& t = rs_.tables[ti];
    table_index& ix = index_[ti];
    if (lookup(ix.flowtables, decl.name)) {
      if (exclusive)
        fail(error_code::object_exists,
             fmt::format("flowtable {} already exists in {} (File exists)", decl.name, table_label(t.fam, t.name)),
             decl.file, decl.where);
      return;
    }
    flowtable f = decl;
    if (f.has_hook)
      if (const auto v = priority_value(f.prio, family::netdev)) f.prio = priority{priority_name::numeric, *v};
    f.handle = decl.handle != 0 ? decl.handle : ix.next_handle;
    ix.next_handle = std::max(ix.next_handle, f.handle + 1);
    const auto at = static_cast<std::uint32_t>(t.flowtables.size());
    t.flowtables.push_back(f);
    ix.flowtables.emplace(t.flowtables.back().name, at);
  }

  void add_object(std::size_t ti, const object& decl, bool exclusive) {
    ruleset_table& t = rs_.tables[ti];
    table_index& ix = index_[ti];
    if (const auto it = ix.objects.find(object_key{decl.type, decl.name}); it != ix.objects.end()) {
      if (exclusive)
        fail(error_code::object_exists,
             fmt::format("{} {} already exists in {} (File exists)", name(decl.type), decl.name,
                         table_label(t.fam, t.name)),
             decl.file, decl.where);
      return;
    }
    object o = decl;
    if (std::holds_alternative<std::monostate>(o.body) && o.type == object_type::counter) o.body = counter_stmt{};
    o.handle = decl.handle != 0 ? decl.handle : ix.next_handle;
    ix.next_handle = std::max(ix.next_handle, o.handle + 1);
    const auto at = static_cast<std::uint32_t>(t.objects.size());
    t.objects.push_back(o);
    ix.objects.emplace(object_key{t.objects.back().type, t.objects.back().name}, at);
  }

  template <class Vec, class Pred>
  std::optional<std::size_t> find_in(const Vec& v, Pred p) {
    for (std::size_t i = 0; i < v.size(); ++i)
      if (p(v[i])) return i;
    return std::nullopt;
  }

  void flowtable_command(const command& c) {
    const bool must = c.verb != command_verb::destroy;
    switch (c.verb) {
      case command_verb::add:
      case command_verb::create: {
        const auto ti = need_table(c);
        const auto* b = std::get_if<const flowtable*>(&c.body);
        if (ti && b != nullptr && *b != nullptr) add_flowtable(*ti, **b, c.verb == command_verb::create);
        return;
      }
      case command_verb::delete_:
      case command_verb::destroy: {
        const auto ti = find_table(c.fam, c.table_name);
        if (!ti) {
          if (must) need_table(c);
          return;
        }
        auto& v = rs_.tables[*ti].flowtables;
        const auto i =
            find_in(v, [&](const flowtable& f) { return c.handle != 0 ? f.handle == c.handle : f.name == c.name; });
        if (!i) {
          if (must)
            fail(error_code::object_not_found,
                 fmt::format("flowtable {} does not exist (No such file or directory)", c.name));
          return;
        }
        v.erase(v.begin() + static_cast<std::ptrdiff_t>(*i));
        rebuild(*ti);
        return;
      }
      default:
        unsupported(c);
    }
  }

  void object_command(const command& c) {
    const bool must = c.verb != command_verb::destroy;
    switch (c.verb) {
      case command_verb::add:
      case command_verb::create: {
        const auto ti = need_table(c);
        const auto* b = std::get_if<const object*>(&c.body);
        if (ti && b != nullptr && *b != nullptr) add_object(*ti, **b, c.verb == command_verb::create);
        return;
      }
      case command_verb::delete_:
      case command_verb::destroy: {
        const auto ti = find_table(c.fam, c.table_name);
        if (!ti) {
          if (must) need_table(c);
          return;
        }
        auto& v = rs_.tables[*ti].objects;
        const auto i = find_in(v, [&](const object& o) {
          return o.type == c.obj && (c.handle != 0 ? o.handle == c.handle : o.name == c.name);
        });
        if (!i) {
          if (must)
            fail(error_code::object_not_found,
                 fmt::format("{} {} does not exist (No such file or directory)", name(c.obj), c.name));
          return;
        }
        v.erase(v.begin() + static_cast<std::ptrdiff_t>(*i));
        rebuild(*ti);
        return;
      }
      default:
        unsupported(c);
    }
  }

  // --- reset ---------------------------------------------------------------------------------------

  /// Counters and quotas back to zero (`reset counters|quotas|rules|counter|quota|set|map|element`).
  /// The parser keeps `reset` as words; they are split here.
  void reset_command(const command& c) {
    std::vector<std::string_view> words;
    std::string_view text = c.file != nullptr ? c.file->text(c.where) : std::string_view{};
    while (!text.empty()) {
      const auto b = text.find_first_not_of(" \t\r\n;");
      if (b == std::string_view::npos) break;
      text.remove_prefix(b);
      const auto e = text.find_first_of(" \t\r\n;");
      words.push_back(text.substr(0, e));
      if (e == std::string_view::npos) break;
      text.remove_prefix(e);
    }
    if (words.size() < 2) return;
    const std::string_view what = words[1];
    std::size_t i = 2;
    std::optional<family> f;
    if (what != "counter" && what != "quota") {
      if (i < words.size() && words[i] == "table") ++i;
    }
    if (i < words.size())
      if (const auto pf = parse_family(words[i])) {
        f = pf;
        ++i;
      }
    const std::string_view table_name = i < words.size() ? words[i++] : std::string_view{};
    const std::string_view object_name = i < words.size() ? words[i++] : std::string_view{};
    const bool counters = what == "counters" || what == "counter" || what == "rules" || what == "rule" ||
                          what == "set" || what == "map" || what == "element";
    const bool quotas = what == "quotas" || what == "quota" || what == "rules" || what == "rule" || what == "set" ||
                        what == "map" || what == "element";
    for (auto& t : rs_.tables) {
      if (f && t.fam != *f) continue;
      if (!table_name.empty() && t.name != table_name) continue;
      if (what == "counters" || what == "quotas" || what == "counter" || what == "quota") {
        for (auto& o : t.objects) {
          if (!object_name.empty() && o.name != object_name) continue;
          if (counters && o.type == object_type::counter) o.body = counter_stmt{};
          if (quotas && o.type == object_type::quota)
            if (auto* q = std::get_if<quota_stmt>(&o.body)) q->used = 0;
        }
        continue;
      }
      if (what == "rules" || what == "rule") {
        for (auto& ch : t.chains) {
          if (!object_name.empty() && ch.name != object_name) continue;
          for (auto& r : ch.rules) static_cast<rule&>(r) = zeroed(r);
        }
        continue;
      }
      if (what == "set" || what == "map" || what == "element")
        for (auto& s : t.sets) {
          if (!object_name.empty() && s.name != object_name) continue;
          for (auto& el : s.elements) static_cast<element&>(el) = zeroed(el);
        }
    }
    (void)c;
  }

  static bool has_state(std::span<const stmt> ss) {
    for (const auto& s : ss)
      if (s.is<counter_stmt>() || s.is<quota_stmt>()) return true;
    return false;
  }
  std::span<const stmt> zeroed(std::span<const stmt> ss) {
    if (!has_state(ss)) return ss;
    std::vector<stmt> out(ss.begin(), ss.end());
    for (auto& s : out) {
      if (auto* k = std::get_if<counter_stmt>(&s.value)) {
        k->packets = 0;
        k->bytes = 0;
      }
      if (auto* q = std::get_if<quota_stmt>(&s.value)) q->used = 0;
    }
    arena_used_ = true;
    return arena_->store(std::span<const stmt>(out));
  }
  rule zeroed(const rule& r) {
    rule out = r;
    out.stmts = zeroed(r.stmts);
    return out;
  }
  element zeroed(const element& el) {
    if (el.options == nullptr || !has_state(el.options->stmts)) return el;
    element_options o = *el.options;
    o.stmts = zeroed(o.stmts);
    element out = el;
    out.options = arena_->store_one(o);
    return out;
  }

  // --- dispatch ------------------------------------------------------------------------------------

  void unsupported(const command& c) {
    warn(error_code::not_modelled,
         fmt::format("`{} {}` does not change a ruleset here and was not applied", name(c.verb), name(c.what)));
  }

  void execute(const command& c) {
    cmd_ = &c;
    switch (c.verb) {
      case command_verb::list:
      case command_verb::get:
      case command_verb::describe:
      case command_verb::monitor:
      case command_verb::export_:
        return;
      case command_verb::import:
        warn(error_code::not_modelled, "`import` reads events from a live system and was not applied");
        return;
      case command_verb::reset:
        reset_command(c);
        return;
      default:
        break;
    }
    switch (c.what) {
      case command_object::table:
        switch (c.verb) {
          case command_verb::add:
          case command_verb::create:
            add_table(c, c.verb == command_verb::create);
            return;
          case command_verb::delete_:
          case command_verb::destroy:
            delete_table(c, c.verb == command_verb::delete_);
            return;
          case command_verb::flush:
            if (const auto ti = need_table(c))
              for (auto& ch : rs_.tables[*ti].chains) ch.rules.clear();
            return;
          default:
            unsupported(c);
            return;
        }
      case command_object::chain:
        switch (c.verb) {
          case command_verb::add:
          case command_verb::create: {
            const auto ti = need_table(c);
            const auto* b = std::get_if<const chain*>(&c.body);
            if (ti && b != nullptr && *b != nullptr) {
              chain decl = **b;
              decl.name = c.name;
              add_chain(*ti, decl, c.verb == command_verb::create, true);
            }
            return;
          }
          case command_verb::delete_:
          case command_verb::destroy:
            delete_chain(c, c.verb == command_verb::delete_);
            return;
          case command_verb::flush:
            if (const auto w = need_chain(c)) rs_.tables[w->first].chains[w->second].rules.clear();
            return;
          case command_verb::rename:
            rename_chain(c);
            return;
          default:
            unsupported(c);
            return;
        }
      case command_object::rule:
        rule_command(c);
        return;
      case command_object::set:
      case command_object::map:
        set_command(c);
        return;
      case command_object::element:
        element_command(c);
        return;
      case command_object::flowtable:
        flowtable_command(c);
        return;
      case command_object::object:
        object_command(c);
        return;
      case command_object::ruleset:
        if (c.verb == command_verb::flush) {
          if (c.family_written) {
            std::size_t w = 0;
            for (std::size_t r = 0; r < rs_.tables.size(); ++r)
              if (rs_.tables[r].fam != c.fam) {
                if (w != r) {
                  rs_.tables[w] = std::move(rs_.tables[r]);
                  index_[w] = std::move(index_[r]);
                }
                ++w;
              }
            rs_.tables.resize(w);
            index_.resize(w);
          } else {
            rs_.tables.clear();
            index_.clear();
          }
          return;
        }
        unsupported(c);
        return;
      case command_object::other:
        return;
    }
  }
};

/// The chains (with where they are named) and the sets a rule or element refers to: what the commit
/// checks below follow.
struct jump_refs {
  std::vector<std::pair<std::string_view, span>> chains;
  std::vector<std::string_view> sets;
  void chain_ref(std::string_view c, span w) { chains.emplace_back(c, w); }
  void set_ref(std::string_view n, span) { sets.push_back(n); }
  void dynset_ref(std::string_view, span) {}
  void flowtable_ref(std::string_view, span) {}
  void object_ref(object_type, std::string_view, span) {}
};

/// An error of the kernel's commit checks, at `where` in `file` (one of the ruleset's sources).
void commit_error(const ruleset& rs, std::vector<diagnostic>& diags, const source* file, span where,
                  std::string message) {
  diagnostic d;
  d.level = severity::error;
  d.code = error_code::invalid_value;
  d.message = std::move(message);
  for (const auto& src : rs.sources)
    if (src.get() == file) d.file = src;
  d.where = where;
  diags.push_back(std::move(d));
}

/// Base chains nft or the kernel refuses for their family, type, hook and priority:
/// - the kernel's chain types (nft_chain_filter, nft_chain_nat, nft_chain_route): filter at every hook of
///   the family (ip, ip6: prerouting to postrouting; inet: those and ingress; arp: input and output;
///   bridge: prerouting to postrouting; netdev: ingress and egress), nat in ip, ip6 and inet at prerouting,
///   input, output and postrouting only, route in ip, ip6 and inet at output only ("Operation not
///   supported");
/// - a nat chain at or before conntrack's priority, -200 (the same).
/// (Priority names are checked when a chain is added: `priority_name_fits`.)
/// Checked against nft 1.0.6 and the kernel in a network namespace (tests/nft_kernel.cpp).
void check_base_chains(const ruleset& rs, std::vector<diagnostic>& diags) {
  for (const auto& t : rs.tables) {
    const bool inet_like = t.fam == family::ip || t.fam == family::ip6 || t.fam == family::inet;
    for (const auto& c : t.chains) {
      if (c.base == nullptr) continue;
      const auto& b = *c.base;
      const hook h = b.hook_point;
      bool hook_ok = false;
      switch (t.fam) {
        case family::ip:
        case family::ip6:
        case family::bridge:
          hook_ok = h <= hook::postrouting;
          break;
        case family::inet:
          hook_ok = h <= hook::ingress;
          break;
        case family::arp:
          hook_ok = h == hook::input || h == hook::output;
          break;
        case family::netdev:
          hook_ok = h == hook::ingress || h == hook::egress;
          break;
      }
      const bool type_ok = b.type == chain_type::filter
                               ? hook_ok
                           : b.type == chain_type::nat
                               ? inet_like && (h == hook::prerouting || h == hook::input || h == hook::output ||
                                               h == hook::postrouting)
                               : inet_like && h == hook::output;
      if (!type_ok) {
        commit_error(rs, diags, c.file, c.where,
                     fmt::format("table {} {} chain {}: the kernel has no {} chains at hook {} in family {} "
                                 "(\"Operation not supported\")",
                                 name(t.fam), t.name, c.name, name(b.type), name(h), name(t.fam)));
        continue;
      }
      if (b.type == chain_type::nat)
        if (const auto v = priority_value(b.prio, t.fam); v && *v <= -200)
          commit_error(rs, diags, c.file, c.where,
                       fmt::format("table {} {} chain {}: a nat chain needs a priority after conntrack's (-200), "
                                   "not {} (\"Operation not supported\")",
                                   name(t.fam), t.name, c.name, *v));
    }
  }
}

/// The hooks the kernel allows a statement at in the ip, ip6 and inet families, where it limits them
/// (nft_reject_validate, nft_tproxy_validate, nft_synproxy_validate): reject not at postrouting, tproxy
/// only at prerouting, synproxy only at input and forward. Nothing for the other statements.
struct hook_limit {
  std::string_view what;
  bool (*allowed)(hook);
  std::string_view where;
};
std::optional<hook_limit> hook_limit_of(const stmt& st) noexcept {
  if (st.is<reject_stmt>())
    return hook_limit{"reject", [](hook h) { return h != hook::postrouting; }, "prerouting, input, forward or output"};
  if (st.is<tproxy_stmt>()) return hook_limit{"tproxy", [](hook h) { return h == hook::prerouting; }, "prerouting"};
  if (st.is<synproxy_stmt>())
    return hook_limit{"synproxy", [](hook h) { return h == hook::input || h == hook::forward; }, "input or forward"};
  return std::nullopt;
}

/// The kernel's check of NAT statements against the base chains that reach them (nft_nat_validate,
/// nft_chain_validate_hooks, run at commit): dnat and redirect only in nat chains at prerouting or
/// output, snat only at postrouting or input, masquerade only at postrouting — also through jumps, gotos
/// and verdict maps; and of the statements `hook_limit_of` names, in the ip, ip6 and inet families. A
/// chain no base chain reaches is not checked. One error per statement, at it.
void check_statement_hooks(const ruleset& rs, std::vector<diagnostic>& diags) {
  const auto allowed = [](nat_kind k, hook h) {
    switch (k) {
      case nat_kind::dnat:
      case nat_kind::redirect:
        return h == hook::prerouting || h == hook::output;
      case nat_kind::snat:
        return h == hook::postrouting || h == hook::input;
      case nat_kind::masquerade:
        return h == hook::postrouting;
    }
    return false;
  };
  for (const auto& t : rs.tables) {
    std::unordered_map<std::string_view, std::size_t> chain_at, set_at;
    for (std::size_t i = 0; i < t.chains.size(); ++i) chain_at.emplace(t.chains[i].name, i);
    for (std::size_t i = 0; i < t.sets.size(); ++i) set_at.emplace(t.sets[i].name, i);
    std::set<const stmt*> reported;
    for (const auto& b : t.chains) {
      if (b.base == nullptr) continue;
      std::vector<char> seen(t.chains.size(), 0);
      std::vector<std::size_t> todo{chain_at[b.name]};
      seen[todo.back()] = 1;
      while (!todo.empty()) {
        const auto& c = t.chains[todo.back()];
        todo.pop_back();
        jump_refs found;
        const auto check = [&](const auto& self, std::span<const stmt> stmts, const source* file) -> void {
          for (const auto& st : stmts) {
            if (const auto* n = st.get<nat_stmt>();
                n != nullptr && (b.base->type != chain_type::nat || !allowed(n->kind, b.base->hook_point)) &&
                reported.insert(&st).second) {
              commit_error(
                  rs, diags, file, st.where,
                  fmt::format("{} in chain {}, reached from base chain {} ({} hook {}): the kernel allows it only in "
                              "nat chains at {} (\"Operation not supported\")",
                              name(n->kind), c.name, b.name, name(b.base->type), name(b.base->hook_point),
                              n->kind == nat_kind::masquerade ? "postrouting"
                              : n->kind == nat_kind::snat     ? "postrouting or input"
                                                              : "prerouting or output"));
            }
            if (const auto limit = hook_limit_of(st);
                limit && (t.fam == family::ip || t.fam == family::ip6 || t.fam == family::inet) &&
                !limit->allowed(b.base->hook_point) && reported.insert(&st).second)
              commit_error(rs, diags, file, st.where,
                           fmt::format("{} in chain {}, reached from base chain {} ({} hook {}): the kernel allows it "
                                       "only at {} (\"Operation not supported\")",
                                       limit->what, c.name, b.name, name(b.base->type), name(b.base->hook_point),
                                       limit->where));
            if (const auto* a = st.get<anonymous_chain_stmt>(); a != nullptr && a->body != nullptr)
              for (const auto& r : a->body->rules) self(self, r.stmts, file);
          }
        };
        for (const auto& r : c.rules) {
          walk_rule(r, found);
          check(check, r.stmts, r.file);
        }
        // verdict maps the chain looks up jump on through their elements
        for (std::size_t k = 0; k < found.sets.size(); ++k) {  // (the walk below may add to it)
          const auto it = set_at.find(found.sets[k]);
          if (it == set_at.end()) continue;
          ref_walker<jump_refs> w{found};
          for (const auto& el : t.sets[it->second].elements) w.ex(el.data);
        }
        for (const auto& [cn, where] : found.chains) {
          const auto it = chain_at.find(cn);
          if (it == chain_at.end() || seen[it->second]) continue;
          seen[it->second] = 1;
          todo.push_back(it->second);
        }
      }
    }
  }
}

/// The kernel's checks of jumps and gotos (also in verdict maps): none may go to a base chain
/// (nft_verdict_init: "Operation not supported"), and a path from a base chain has at most 15 of them
/// (nft_chain_validate, NFT_JUMP_STACK_SIZE 16: "Too many links"), so a loop reached from one is refused
/// too. A loop no base chain reaches is accepted, as the kernel accepts it. One error per base chain,
/// at the jump that goes one level too deep on its deepest path.
void check_jumps(const ruleset& rs, std::vector<diagnostic>& diags) {
  constexpr std::uint32_t max_jumps = 15;
  struct edge {
    std::size_t to;
    const source* file;
    span where;
  };
  const auto error = [&](const source* file, span where, std::string message) {
    commit_error(rs, diags, file, where, std::move(message));
  };
  for (const auto& t : rs.tables) {
    std::unordered_map<std::string_view, std::size_t> chain_at, set_at;
    for (std::size_t i = 0; i < t.chains.size(); ++i) chain_at.emplace(t.chains[i].name, i);
    for (std::size_t i = 0; i < t.sets.size(); ++i) set_at.emplace(t.sets[i].name, i);
    // the chain refs of each named map's elements, and a jump to a base chain wherever it is written
    std::vector<std::vector<edge>> map_edges(t.sets.size());
    const auto resolve = [&](const jump_refs& found, const source* file, std::vector<edge>& out) {
      for (const auto& [name, where] : found.chains) {
        const auto it = chain_at.find(name);
        if (it == chain_at.end()) continue;
        if (t.chains[it->second].base != nullptr)
          error(file, where,
                fmt::format("jump or goto to base chain {}: the kernel refuses it (\"Operation not supported\")", name));
        else
          out.push_back({it->second, file, where});
      }
    };
    for (std::size_t m = 0; m < t.sets.size(); ++m)
      for (const auto& el : t.sets[m].elements) {
        jump_refs found;
        ref_walker<jump_refs> w{found};
        w.ex(el.data);
        resolve(found, el.file, map_edges[m]);
      }
    std::vector<std::vector<edge>> edges(t.chains.size());
    for (std::size_t c = 0; c < t.chains.size(); ++c)
      for (const auto& r : t.chains[c].rules) {
        jump_refs found;
        walk_rule(r, found);
        resolve(found, r.file, edges[c]);
        for (const auto n : found.sets)
          if (const auto it = set_at.find(n); it != set_at.end())
            edges[c].insert(edges[c].end(), map_edges[it->second].begin(), map_edges[it->second].end());
      }
    // Longest path (in jumps, capped past the limit) from each chain, by an iterative depth-first walk; a
    // chain met again on the current path is a loop, as deep as any limit.
    enum : std::uint8_t { unseen, on_path, done };
    std::vector<std::uint8_t> colour(t.chains.size(), unseen);
    std::vector<std::uint32_t> height(t.chains.size(), 0);
    std::vector<const edge*> deepest(t.chains.size(), nullptr);
    for (std::size_t b = 0; b < t.chains.size(); ++b) {
      if (t.chains[b].base == nullptr) continue;
      if (colour[b] == unseen) {
        std::vector<std::pair<std::size_t, std::size_t>> stack{{b, 0}};  // chain, next edge
        colour[b] = on_path;
        while (!stack.empty()) {
          auto& [c, next] = stack.back();
          if (next == edges[c].size()) {
            colour[c] = done;
            const std::size_t finished = c;
            stack.pop_back();
            if (!stack.empty()) {
              const std::size_t p = stack.back().first;
              if (height[finished] + 1 > height[p]) {
                height[p] = std::min(height[finished] + 1, max_jumps + 1);
                deepest[p] = &edges[p][stack.back().second - 1];
              }
            }
            continue;
          }
          const edge& e = edges[c][next++];
          if (colour[e.to] == unseen && height[c] <= max_jumps) {
            colour[e.to] = on_path;
            stack.emplace_back(e.to, 0);
            continue;
          }
          const std::uint32_t below = colour[e.to] == on_path ? max_jumps + 1 : height[e.to];
          if (below + 1 > height[c]) {
            height[c] = std::min(below + 1, max_jumps + 1);
            deepest[c] = &e;
          }
        }
      }
      if (height[b] <= max_jumps) continue;
      // the deepest path, to the jump that is one too many (the kernel's level 16)
      std::string path(t.chains[b].name);
      const edge* e = deepest[b];
      for (std::uint32_t level = 1; e != nullptr; ++level) {
        path += fmt::format(" -> {}", t.chains[e->to].name);
        if (level == max_jumps + 1 || deepest[e->to] == nullptr) break;
        e = deepest[e->to];
      }
      if (e != nullptr)
        error(e->file, e->where,
              fmt::format("more than {} nested jumps or gotos from base chain {} ({}): the kernel refuses it "
                          "(\"Too many links\"), as it refuses a loop reached from a base chain",
                          max_jumps, t.chains[b].name, path));
    }
  }
}

}  // namespace

std::vector<diagnostic> apply(ruleset& r, const script& s, const apply_options& options) {
  ruleset work = r;
  applier a(work, s, options);
  a.run();
  auto diags = a.take();
  if (a.errors() != 0) return diags;
  const auto before = diags.size();
  work.sources.insert(work.sources.end(), s.sources.begin(), s.sources.end());
  check_base_chains(work, diags);
  check_statement_hooks(work, diags);
  check_jumps(work, diags);
  work.sources.resize(work.sources.size() - s.sources.size());
  if (diags.size() != before) return diags;
  for (const auto& src : s.sources)
    if (std::find(work.sources.begin(), work.sources.end(), src) == work.sources.end()) work.sources.push_back(src);
  if (a.arena_used()) work.sources.push_back(a.arena());
  r = std::move(work);
  return diags;
}

result<ruleset> to_ruleset(const script& s, const apply_options& options) {
  result<ruleset> out;
  out.diagnostics = apply(out.value, s, options);
  return out;
}

}  // namespace nflens::nft
