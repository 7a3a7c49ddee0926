// SPDX-License-Identifier: MIT
// What nft text can hold of a ruleset (see nft/spelling.hpp), and `write_text`: the ruleset a script
// builds, printed as `nft list ruleset` does, or errors where the text could not say it.
#include <nflens/nft_json.hpp>

#include "nft/spelling.hpp"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace nflens::nft {

namespace {

/// A name or string as a message quotes it: at most 64 bytes, control characters escaped.
std::string shown(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < 64; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c < 0x20 || c == 0x7f)
      out += fmt::format("\\x{:02x}", c);
    else
      out += static_cast<char>(c);
  }
  if (s.size() > 64) out += "...";
  return out;
}

class checker {
 public:
  explicit checker(const ruleset& r) : r_(r) {}

  std::vector<diagnostic> run() {
    for (const auto& t : r_.tables) table(t);
    return std::move(out_);
  }

 private:
  void report(const source* file, span where, std::string message) {
    const std::uint32_t cap = limits{}.max_errors;
    if (cap != 0 && out_.size() > cap) return;
    if (cap != 0 && out_.size() == cap) {
      diagnostic d;
      d.level = severity::error;
      d.code = error_code::too_many_errors;
      d.message = fmt::format("more than {} names and strings nft text cannot hold; the rest are not reported", cap);
      out_.push_back(std::move(d));
      return;
    }
    diagnostic d;
    d.level = severity::error;
    d.code = error_code::not_translatable;
    d.message = std::move(message);
    d.where = where;
    for (const auto& s : r_.sources)
      if (s.get() == file) d.file = s;
    if (!d.file) d.where = span{};
    out_.push_back(std::move(d));
  }

  void name(const source* file, span where, std::string_view what, std::string_view n) {
    if (spelling::is_word(n)) return;
    report(file, where,
           fmt::format("{} \"{}\" cannot be written in nft text: nft reads a name only as one word (a letter or '_', "
                       "then letters, digits, '/', '-', '_' or '.'), never quoted",
                       what, shown(n)));
  }
  void string(const source* file, span where, std::string_view what, std::string_view s) {
    if (spelling::is_quotable(s)) return;
    report(file, where,
           fmt::format("{} \"{}\" cannot be written in nft text: an nft string has no escapes, so it cannot hold a "
                       "'\"' or a line break",
                       what, shown(s)));
  }
  void bare(const source* file, span where, std::string_view what, std::string_view s) {
    if (spelling::is_bare_value(s)) return;
    report(file, where,
           fmt::format("{} \"{}\" cannot be written in nft text: it is not one word or number", what, shown(s)));
  }

  void table(const ruleset_table& t) {
    name(t.file, t.where, "table name", t.name);
    string(t.file, t.where, "table comment", t.comment);
    for (const auto& o : t.objects) object(o);
    for (const auto& s : t.sets) set(s);
    for (const auto& f : t.flowtables) {
      name(f.file, f.where, "flowtable name", f.name);
      for (const auto d : f.devices) string(f.file, f.where, "device name", d);
    }
    for (const auto& c : t.chains) {
      name(c.file, c.where, "chain name", c.name);
      string(c.file, c.where, "chain comment", c.comment);
      if (c.base != nullptr)
        for (const auto d : c.base->devices) string(c.file, c.where, "device name", d);
      for (const auto& r : c.rules) {
        string(r.file, r.where, "rule comment", r.comment);
        stmts(r.file, r.stmts);
      }
    }
  }

  void object(const nft::object& o) {
    name(o.file, o.where, "object name", o.name);
    string(o.file, o.where, "object comment", o.comment);
    if (const auto* h = std::get_if<ct_helper_object>(&o.body)) {
      string(o.file, o.where, "ct helper type", h->type);
      bare(o.file, o.where, "protocol", h->protocol);
    } else if (const auto* t = std::get_if<ct_timeout_object>(&o.body)) {
      bare(o.file, o.where, "protocol", t->protocol);
      for (const auto& s : t->policy) name(o.file, o.where, "ct timeout state", s.state);
    } else if (const auto* x = std::get_if<ct_expectation_object>(&o.body)) {
      bare(o.file, o.where, "protocol", x->protocol);
    } else if (const auto* m = std::get_if<secmark_object>(&o.body)) {
      string(o.file, o.where, "secmark context", m->context);
    }
  }

  void set(const ruleset_set& s) {
    name(s.file, s.where, s.is_map ? "map name" : "set name", s.name);
    string(s.file, s.where, s.is_map ? "map comment" : "set comment", s.comment);
    for (const auto n : s.key.names) name(s.file, s.where, "datatype", n);
    for (const auto n : s.data.names) name(s.file, s.where, "datatype", n);
    if (s.key.typeof_expr != nullptr) expr(s.file, *s.key.typeof_expr);
    if (s.data.typeof_expr != nullptr) expr(s.file, *s.data.typeof_expr);
    stmts(s.file, s.stmts);
    for (const auto& e : s.elements) element(e.file != nullptr ? e.file : s.file, e);
  }

  void element(const source* file, const nft::element& e) {
    if (e.key != nullptr) expr(file, *e.key);
    if (e.data != nullptr) expr(file, *e.data);
    if (e.options != nullptr) {
      string(file, e.where, "element comment", e.options->comment);
      stmts(file, e.options->stmts);
    }
  }

  void stmts(const source* file, std::span<const stmt> list) {
    for (const auto& s : list) stmt(file, s);
  }

  void opt_expr(const source* file, const nft::expr* e) {
    if (e != nullptr) expr(file, *e);
  }

  void stmt(const source* file, const nft::stmt& s) {
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, match_stmt>) {
            opt_expr(file, v.left);
            opt_expr(file, v.right);
          } else if constexpr (std::is_same_v<T, verdict_stmt>) {
            if (v.kind == verdict::jump || v.kind == verdict::goto_) name(file, s.where, "chain name", v.chain);
          } else if constexpr (std::is_same_v<T, verdict_map_stmt>) {
            opt_expr(file, v.key);
            opt_expr(file, v.mapping);
          } else if constexpr (std::is_same_v<T, mangle_stmt>) {
            opt_expr(file, v.target);
            opt_expr(file, v.value);
          } else if constexpr (std::is_same_v<T, log_stmt>) {
            opt_expr(file, v.prefix);
          } else if constexpr (std::is_same_v<T, reject_stmt>) {
            opt_expr(file, v.code);
          } else if constexpr (std::is_same_v<T, nat_stmt> || std::is_same_v<T, tproxy_stmt>) {
            opt_expr(file, v.address);
            opt_expr(file, v.port);
          } else if constexpr (std::is_same_v<T, queue_stmt>) {
            opt_expr(file, v.number);
          } else if constexpr (std::is_same_v<T, dup_stmt> || std::is_same_v<T, fwd_stmt>) {
            opt_expr(file, v.address);
            opt_expr(file, v.device);
          } else if constexpr (std::is_same_v<T, set_stmt>) {
            opt_expr(file, v.set_ref);
            if (v.elem != nullptr) element(file, *v.elem);
          } else if constexpr (std::is_same_v<T, meter_stmt>) {
            opt_expr(file, v.name());
            if (v.elem() != nullptr) element(file, *v.elem());
          } else if constexpr (std::is_same_v<T, flow_offload_stmt>) {
            name(file, s.where, "flowtable name", v.flowtable);
          } else if constexpr (std::is_same_v<T, objref_stmt>) {
            opt_expr(file, v.name);
          } else if constexpr (std::is_same_v<T, optstrip_stmt>) {
            opt_expr(file, v.option);
          } else if constexpr (std::is_same_v<T, xt_stmt>) {
            string(file, s.where, "xt extension name", v.name);
          } else if constexpr (std::is_same_v<T, unknown_stmt>) {
            statement_text(file, s.where, v.text);
          }
        },
        s.value);
  }

  /// A statement kept as text (JSON gives one as a string, as nft writes a statement without a JSON
  /// form, `jump { ... }` of an anonymous chain among them) is printed as it is: it must stay inside its
  /// rule. Line breaks and `;` only inside its braces, braces balanced, quotes closed on their line, no
  /// `#` (which would comment out the rest of the line).
  void statement_text(const source* file, span where, std::string_view t) {
    int depth = 0;
    bool quoted = false, ok = !t.empty();
    for (const char c : t) {
      if (c == '\0') ok = false;
      if (quoted) {
        if (c == '\n' || c == '\r') ok = false;
        quoted = c != '"';
        continue;
      }
      if (c == '"') quoted = true;
      if (c == '#') ok = false;
      if ((c == ';' || c == '\n' || c == '\r') && depth == 0) ok = false;
      if (c == '{') ++depth;
      if (c == '}' && --depth < 0) ok = false;
    }
    if (ok && depth == 0 && !quoted) return;
    report(file, where,
           fmt::format("statement text \"{}\" cannot be written in nft text as one statement: it breaks out of its "
                       "rule (a line break or ';' outside braces, '#', or an unbalanced brace or quote)",
                       shown(t)));
  }

  void expr(const source* file, const nft::expr& e) {
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, string_expr>) {
            string(file, e.where, "string", v.text);
          } else if constexpr (std::is_same_v<T, symbol_expr>) {
            // the printer writes a value that is not one token between quotes (nft/spelling.hpp)
            if (!spelling::is_bare_value(v.name)) string(file, e.where, "value", v.name);
          } else if constexpr (std::is_same_v<T, set_ref_expr>) {
            name(file, e.where, "set name", v.name);
          } else if constexpr (std::is_same_v<T, verdict_expr>) {
            if (v.kind == verdict::jump || v.kind == verdict::goto_) name(file, e.where, "chain name", v.chain);
          } else if constexpr (std::is_same_v<T, prefix_expr>) {
            opt_expr(file, v.value);
          } else if constexpr (std::is_same_v<T, range_expr>) {
            opt_expr(file, v.low());
            opt_expr(file, v.high());
          } else if constexpr (std::is_same_v<T, binop_expr>) {
            opt_expr(file, v.left());
            opt_expr(file, v.right());
          } else if constexpr (std::is_same_v<T, concat_expr> || std::is_same_v<T, list_expr>) {
            for (const auto& i : v.items) expr(file, i);
          } else if constexpr (std::is_same_v<T, set_expr>) {
            for (const auto& el : v.elements) element(file, el);
          } else if constexpr (std::is_same_v<T, map_expr>) {
            opt_expr(file, v.key());
            opt_expr(file, v.mapping());
          } else if constexpr (std::is_same_v<T, hash_expr>) {
            opt_expr(file, v.spec->key);
          }
        },
        e.value);
  }

  const ruleset& r_;
  std::vector<diagnostic> out_;
};

}  // namespace

std::vector<diagnostic> check_text(const ruleset& r) { return checker(r).run(); }

result<std::string> write_text(const script& s, const print_options& o) {
  result<std::string> out;
  auto applied = to_ruleset(s);
  out.diagnostics = std::move(applied.diagnostics);
  if (error_count(out.diagnostics) != 0) return out;
  auto problems = check_text(applied.value);
  const bool bad = !problems.empty();
  out.diagnostics.insert(out.diagnostics.end(), std::make_move_iterator(problems.begin()),
                         std::make_move_iterator(problems.end()));
  if (bad) return out;
  out.value = print(applied.value, o);
  return out;
}

}  // namespace nflens::nft
