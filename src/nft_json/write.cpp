// SPDX-License-Identifier: MIT
// nft AST → libnftables JSON, as nft's own JSON printer (nftables src/json.c) lays it out: the same
// objects, keys in the same order, the same choice between numbers, strings, lists and null.
#include <nflens/nft_json.hpp>

#include "nft_json/emit.hpp"
#include "nft_json/types.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace nflens::nft {

namespace {

using json_detail::default_l3proto;
using json_detail::emitter;
using json_detail::type_of;
using json_detail::value_kind;

// get_rate() of nft: the largest of bytes, kbytes, mbytes that divides the value.
std::pair<std::uint64_t, std::string_view> byte_unit(std::uint64_t v) noexcept {
  static constexpr std::string_view units[] = {"bytes", "kbytes", "mbytes"};
  if (v == 0) return {0, units[0]};
  std::size_t i = 0;
  while (i + 1 < std::size(units) && v % 1024 == 0) {
    v /= 1024;
    ++i;
  }
  return {v, units[i]};
}

/// `@name`, how nft's JSON refers to a named set, map or flowtable.
std::string at_name(std::string_view n) {
  std::string s(n.size() + 1, '@');
  n.copy(s.data() + 1, n.size());
  return s;
}

std::string ether_text(const std::array<std::uint8_t, 6>& b) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3], b[4], b[5]);
}

/// A table's rules of one chain, or elements of one set: a script's span (in the source of the table
/// that holds them) or a ruleset's list, whose items each carry their source.
template <class Node, class Held>
struct node_list {
  std::span<const Node> script;
  const std::vector<Held>* held = nullptr;
  const source* file = nullptr;  ///< the script's

  [[nodiscard]] bool empty() const noexcept { return held != nullptr ? held->empty() : script.empty(); }
  /// Calls `f(node, its source)` for each in order.
  template <class F>
  void each(F&& f) const {
    if (held != nullptr)
      for (const auto& n : *held) f(static_cast<const Node&>(n), n.file);
    else
      for (const auto& n : script) f(n, file);
  }
};
using rule_list = node_list<rule, ruleset_rule>;
using element_list = node_list<element, ruleset_element>;

/// The objects of one table in listing order, whichever layer (script block or ruleset) holds them.
struct table_view {
  const table_info* info = nullptr;
  std::vector<const chain_info*> chains;
  std::vector<const source*> chain_files;  // per chain
  std::vector<rule_list> rules;            // per chain
  std::vector<const set_info*> sets;
  std::vector<element_list> elements;  // per set
  std::vector<const object*> objects;
  std::vector<const flowtable*> flowtables;
};

table_view view_of(const table& t) {
  table_view v{&t, {}, {}, {}, {}, {}, {}, {}};
  for (const auto& c : t.chains) {
    v.chains.push_back(&c);
    v.chain_files.push_back(t.file);
    v.rules.push_back({c.rules, nullptr, t.file});
  }
  for (const auto& s : t.sets) {
    v.sets.push_back(&s);
    v.elements.push_back({s.elements, nullptr, s.file});
  }
  for (const auto& o : t.objects) v.objects.push_back(&o);
  for (const auto& f : t.flowtables) v.flowtables.push_back(&f);
  return v;
}

table_view view_of(const ruleset_table& t) {
  table_view v{&t, {}, {}, {}, {}, {}, {}, {}};
  for (const auto& c : t.chains) {
    v.chains.push_back(&c);
    v.chain_files.push_back(c.file);
    v.rules.push_back({{}, &c.rules, nullptr});
  }
  for (const auto& s : t.sets) {
    v.sets.push_back(&s);
    v.elements.push_back({{}, &s.elements, nullptr});
  }
  for (const auto& o : t.objects) v.objects.push_back(&o);
  for (const auto& f : t.flowtables) v.flowtables.push_back(&f);
  return v;
}

class writer {
 public:
  writer(std::string& out, const json_write_options& o, std::vector<diagnostic>& diags)
      : e_(out), o_(o), diags_(diags) {}

  void begin_document() {
    e_.begin_object();
    e_.key("nftables");
    e_.begin_array();
    if (o_.metainfo) {
      const bool old = o_.flavour == json_flavour::v1_0_6;
      e_.begin_object();
      e_.key("metainfo");
      e_.begin_object();
      e_.member("version", !o_.version.empty() ? o_.version : old ? "1.0.6" : "1.1.6");
      e_.member("release_name", !o_.release_name.empty() ? o_.release_name
                                : old                    ? "Lester Gooch #5"
                                                         : "Commodore Bullmoose #7");
      e_.member_number("json_schema_version", 1);
      e_.end_object();
      e_.end_object();
    }
  }
  void end_document() {
    e_.end_array();
    e_.end_object();
    e_.out() += '\n';
  }

  /// A table and everything in it, in `nft -j list ruleset` order. With `verb`, each object is wrapped
  /// in `{verb: ...}` (the command form).
  /// `table_verb` (when not empty) wraps the table itself: `create table t { ... }` creates the table and
  /// adds its contents.
  void table_listing(const table_view& t, std::string_view verb = {}, std::string_view table_verb = {}) {
    fam_ = t.info->fam;
    table_name_ = t.info->name;
    auto wrapped_in = [&](std::string_view v, auto&& body) {
      if (!v.empty()) {
        e_.begin_object();
        e_.key(v);
      }
      body();
      if (!v.empty()) e_.end_object();
    };
    auto wrapped = [&](auto&& body) { wrapped_in(verb, body); };
    wrapped_in(table_verb.empty() ? verb : table_verb, [&] { table_object(*t.info, verb.empty()); });
    auto chains = [&] {
      for (std::size_t i = 0; i < t.chains.size(); ++i)
        wrapped([&] { chain_object(*t.chains[i], t.chain_files[i], verb.empty()); });
    };
    auto sets = [&] {
      for (std::size_t i = 0; i < t.sets.size(); ++i)
        wrapped([&] { set_object(*t.sets[i], t.elements[i], verb.empty()); });
    };
    if (old() && verb.empty()) {
      // nft 1.0.6 lists objects, sets and maps, flowtables, then chains; a command document keeps the
      // order in which everything can be created (maps may refer to chains)
      for (const auto* o : t.objects) wrapped([&] { object_object(*o, verb.empty()); });
      sets();
      for (const auto* f : t.flowtables) wrapped([&] { flowtable_object(*f, verb.empty()); });
      chains();
    } else {
      chains();
      for (const auto* o : t.objects) wrapped([&] { object_object(*o, verb.empty()); });
      sets();
      for (const auto* f : t.flowtables) wrapped([&] { flowtable_object(*f, verb.empty()); });
    }
    for (std::size_t i = 0; i < t.chains.size(); ++i)
      t.rules[i].each([&](const rule& r, const source* file) {
        wrapped([&] { rule_object(t.chains[i]->name, r, file, verb.empty(), {}); });
      });
  }

  void write_command(const nft::command& c);

 private:
  [[nodiscard]] bool old() const noexcept { return o_.flavour == json_flavour::v1_0_6; }

  // --- diagnostics
  void not_translatable(const source* file, span where, std::string what) {
    diagnostic d;
    d.level = severity::warning;
    d.code = error_code::not_translatable;
    d.message = std::move(what);
    if (file != nullptr) {
      // Nodes hold a raw `const source*`; diagnostics want shared ownership. The sources outlive the
      // write, so a non-owning shared_ptr is safe here.
      d.file = source_ptr(source_ptr{}, file);
    }
    d.where = where;
    diags_.push_back(std::move(d));
  }
  /// What nft 1.0.6's JSON has no member for: left out of that flavour, and said so.
  void lost_in_old(const source* file, span where, std::string what) {
    not_translatable(file, where, what + " has no place in nft 1.0.6's JSON; it is left out");
  }

  /// A list of flag names: an array, or in 1.0.6 (for table, log, queue and nat flags: `single`) a bare
  /// string when there is one.
  void flag_list(std::string_view key, std::span<const std::string_view> names, bool single = false) {
    if (names.empty()) return;
    e_.key(key);
    if (old() && single && names.size() == 1) {
      e_.string(names[0]);
      return;
    }
    e_.begin_array();
    for (auto n : names) e_.string(n);
    e_.end_array();
  }

  // --- top-level objects
  void handle(std::uint64_t h, bool listing) {
    if (!listing) return;
    e_.member_number("handle", h);
  }

  void table_object(const table_info& t, bool listing) {
    e_.begin_object();
    e_.key("table");
    e_.begin_object();
    e_.member("family", name(t.fam));
    e_.member("name", t.name);
    handle(t.handle, listing);
    std::vector<std::string_view> flags;
    if (t.flags & static_cast<std::uint8_t>(table_flag::dormant)) flags.push_back("dormant");
    if (t.flags & static_cast<std::uint8_t>(table_flag::owner)) flags.push_back("owner");
    if (t.flags & static_cast<std::uint8_t>(table_flag::persist)) flags.push_back("persist");
    if (old() && flags.size() == 1) {
      // 1.0.6 writes the table's name where a single flag belongs (fixed in later releases)
      e_.member("flags", t.name);
    } else {
      flag_list("flags", flags, true);
    }
    if (!t.comment.empty() && old())
      lost_in_old(t.file, t.where, fmt::format("table {} {}: a comment", name(t.fam), t.name));
    else if (!t.comment.empty())
      e_.member("comment", t.comment);
    e_.end_object();
    e_.end_object();
  }

  void devices(std::span<const std::string_view> devs) {
    if (devs.empty()) return;
    e_.key("dev");
    if (devs.size() == 1) {
      e_.string(devs[0]);
      return;
    }
    e_.begin_array();
    for (auto d : devs) e_.string(d);
    e_.end_array();
  }

  /// `file`: the source `c`'s spans refer to.
  void chain_object(const chain_info& c, const source* file, bool listing) {
    if (c.offload)
      not_translatable(file, c.where,
                       fmt::format("table {} {} chain {}: 'flags offload' has no libnftables JSON form; it is left out",
                                   name(fam_), table_name_, c.name));
    e_.begin_object();
    e_.key("chain");
    e_.begin_object();
    e_.member("family", name(fam_));
    e_.member("table", table_name_);
    e_.member("name", c.name);
    handle(c.handle, listing);
    if (!c.comment.empty() && old())
      lost_in_old(file, c.where, fmt::format("table {} {} chain {}: a comment", name(fam_), table_name_, c.name));
    else if (!c.comment.empty())
      e_.member("comment", c.comment);
    if (c.base != nullptr) {
      const auto& b = *c.base;
      // 1.0.6 lists no devices (it keeps them only for what it parsed), but needs them to create a chain
      if (!old() || !listing)
        devices(b.devices);
      else if (!b.devices.empty())
        lost_in_old(file, c.where, fmt::format("table {} {} chain {}: the devices of a listed chain", name(fam_),
                                                 table_name_, c.name));
      e_.member("type", name(b.type));
      e_.member("hook", name(b.hook_point));
      e_.key("prio");
      e_.signed_number(priority_value(b.prio, fam_).value_or(b.prio.offset));
      e_.member("policy", c.policy == chain_policy::drop ? "drop" : "accept");
    }
    e_.end_object();
    e_.end_object();
  }

  void type_names(std::span<const std::string_view> names, bool joined) {
    if (names.size() == 1) {
      e_.string(names[0]);
      return;
    }
    if (joined) {
      std::string s;
      for (auto n : names) {
        if (!s.empty()) s += " . ";
        s += n;
      }
      e_.string(s);
      return;
    }
    e_.begin_array();
    for (auto n : names) e_.string(n);
    e_.end_array();
  }

  void set_object(const set_info& s, const element_list& elements, bool listing) {
    e_.begin_object();
    e_.key(s.is_map ? "map" : "set");
    e_.begin_object();
    e_.member("family", name(fam_));
    e_.member("name", s.name);
    e_.member("table", table_name_);
    e_.key("type");
    if (s.key.typeof_expr != nullptr && old()) {
      // 1.0.6 writes the datatype behind a `typeof`: the expressions are lost
      not_translatable(s.file, s.where,
                       fmt::format("table {} {} {} {}: nft 1.0.6's JSON has no typeof; the key is written as its "
                                   "datatype",
                                   name(fam_), table_name_, s.is_map ? "map" : "set", s.name));
      std::array<std::string_view, 16> names{};
      const auto n = json_detail::type_names_of(*s.key.typeof_expr, fam_, names.data(), names.size());
      type_names({names.data(), n}, false);
    } else if (s.key.typeof_expr != nullptr) {
      e_.begin_object();
      e_.key("typeof");
      expr(*s.key.typeof_expr);
      e_.end_object();
    } else {
      type_names(s.key.names, false);
    }
    handle(s.handle, listing);
    if (!s.comment.empty()) e_.member("comment", s.comment);
    if (s.is_map) {
      e_.key("map");
      if (s.data.object) {
        e_.string(name(*s.data.object));
      } else if (s.data.typeof_expr != nullptr) {
        not_translatable(s.file, s.where,
                         fmt::format("table {} {} map {}: libnftables JSON has no typeof for map data; the data is "
                                     "written as its datatype",
                                     name(fam_), table_name_, s.name));
        std::array<std::string_view, 16> names{};
        const auto n = json_detail::type_names_of(*s.data.typeof_expr, fam_, names.data(), names.size());
        type_names({names.data(), n}, old());
      } else {
        type_names(s.data.names, old());
      }
    }
    const bool constant = (s.flags & static_cast<std::uint8_t>(set_flag::constant)) != 0;
    if (!constant) {
      if (s.policy == set_policy::memory) e_.member("policy", "memory");
      if (s.size != 0) e_.member_number("size", s.size);
    }
    std::vector<std::string_view> flags;
    if (constant) flags.push_back("constant");
    if (s.flags & static_cast<std::uint8_t>(set_flag::interval)) flags.push_back("interval");
    if ((s.flags & static_cast<std::uint8_t>(set_flag::timeout)) || (s.has_timeout && s.timeout_ms != 0))
      flags.push_back("timeout");  // a set timeout implies the flag, which the listing then leaves out
    if ((s.flags & static_cast<std::uint8_t>(set_flag::dynamic)) && old())
      lost_in_old(s.file, s.where, fmt::format("table {} {} set {}: flag dynamic", name(fam_), table_name_, s.name));
    else if (s.flags & static_cast<std::uint8_t>(set_flag::dynamic))
      flags.push_back("dynamic");
    flag_list("flags", flags);
    if (s.has_timeout && s.timeout_ms != 0) e_.member_number("timeout", s.timeout_ms / 1000);
    if (s.has_gc_interval && s.gc_interval_ms != 0) e_.member_number("gc-interval", s.gc_interval_ms / 1000);
    if (s.auto_merge && old())
      lost_in_old(s.file, s.where, fmt::format("table {} {} set {}: auto-merge", name(fam_), table_name_, s.name));
    if (s.auto_merge && !old()) {
      e_.key("auto-merge");
      e_.boolean(true);
    }
    if (!elements.empty()) {
      const type_hint saved = hint_, saved_data = data_hint_;
      hint_ = s.key.typeof_expr != nullptr ? hint_of(*s.key.typeof_expr) : hint_of(s.key.names);
      data_hint_ = s.data.typeof_expr != nullptr ? hint_of(*s.data.typeof_expr) : hint_of(s.data.names);
      e_.key("elem");
      e_.begin_array();
      const source* const saved_file = file_;
      elements.each([&](const nft::element& el, const source* file) {
        file_ = file;
        element(el);
      });
      file_ = saved_file;
      e_.end_array();
      hint_ = saved;
      data_hint_ = saved_data;
    }
    if (!s.stmts.empty()) {
      e_.key("stmt");
      stmt_list(s.stmts, s.file);
    }
    e_.end_object();
    e_.end_object();
  }

  void flowtable_object(const flowtable& f, bool listing) {
    if (f.counter || f.offload)
      not_translatable(f.file, f.where,
                       fmt::format("table {} {} flowtable {}: {} has no libnftables JSON form; it is left out",
                                   name(fam_), table_name_, f.name,
                                   f.counter && f.offload ? "'counter' and 'flags offload'"
                                   : f.counter            ? "'counter'"
                                                          : "'flags offload'"));
    e_.begin_object();
    e_.key("flowtable");
    e_.begin_object();
    e_.member("family", name(fam_));
    e_.member("name", f.name);
    e_.member("table", table_name_);
    handle(f.handle, listing);
    if (f.has_hook) {
      e_.member("hook", name(f.hook_point));
      e_.key("prio");
      e_.signed_number(priority_value(f.prio, family::netdev).value_or(f.prio.offset));
    }
    devices(f.devices);
    e_.end_object();
    e_.end_object();
  }

  void object_object(const object& o, bool listing) {
    e_.begin_object();
    e_.key(name(o.type));
    e_.begin_object();
    e_.member("family", name(fam_));
    e_.member("name", o.name);
    e_.member("table", table_name_);
    handle(o.handle, listing);
    if (!o.comment.empty()) e_.member("comment", o.comment);
    std::visit([&](const auto& b) { object_body(o, b); }, o.body);
    e_.end_object();
    e_.end_object();
  }

  void object_body(const object&, std::monostate) {}
  void object_body(const object&, const counter_stmt& c) {
    e_.member_number("packets", c.packets);
    e_.member_number("bytes", c.bytes);
  }
  void object_body(const object&, const quota_stmt& q) {
    e_.member_number("bytes", q.bytes);
    e_.member_number("used", q.used);
    e_.key("inv");
    e_.boolean(q.over);
  }
  void object_body(const object&, const limit_stmt& l) {
    std::uint64_t rate = l.rate;
    std::uint64_t burst = l.burst;
    std::string_view rate_unit, burst_unit;
    if (l.bytes) {
      std::tie(rate, rate_unit) = byte_unit(l.rate);
      std::tie(burst, burst_unit) = byte_unit(l.burst);
    }
    e_.member_number("rate", rate);
    e_.member("per", name(l.unit));
    if (l.over) {
      e_.key("inv");
      e_.boolean(true);
    }
    if (!rate_unit.empty()) e_.member("rate_unit", rate_unit);
    if (!l.bytes && !l.has_burst) burst = 5;  // nft's default burst of a packet limit, not listed
    if (burst != 0) {
      e_.member_number("burst", burst);
      if (!burst_unit.empty()) e_.member("burst_unit", burst_unit);
    }
  }
  void protocol_name(std::string_view p) {
    // proto_name_json(): the protocol's name, or its number when /etc/protocols has none
    std::uint64_t n = 0;
    if (!p.empty() && std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
        std::from_chars(p.data(), p.data() + p.size(), n).ec == std::errc{})
      e_.number(n);
    else
      e_.string(p);
  }
  void l3proto(std::optional<family> f) {
    e_.member("l3proto", name(f.value_or(default_l3proto(fam_))));
  }
  void object_body(const object&, const ct_helper_object& h) {
    e_.member("type", h.type);
    e_.key("protocol");
    protocol_name(h.protocol);
    l3proto(h.l3proto);
  }
  void object_body(const object&, const ct_timeout_object& t) {
    e_.key("protocol");
    protocol_name(t.protocol);
    l3proto(t.l3proto);
    e_.key("policy");
    if (t.policy.empty()) {
      e_.null();
      return;
    }
    e_.begin_object();
    for (const auto& st : t.policy) e_.member_number(st.state, st.value_ms / 1000);
    e_.end_object();
  }
  void object_body(const object&, const ct_expectation_object& x) {
    e_.key("protocol");
    protocol_name(x.protocol);
    e_.member_number("dport", x.dport);
    e_.member_number("timeout", x.timeout_ms);
    e_.member_number("size", x.size);
    l3proto(x.l3proto);
  }
  void object_body(const object&, const secmark_object& s) { e_.member("context", s.context); }
  void object_body(const object&, const synproxy_stmt& s) {
    e_.member_number("mss", s.mss);
    e_.member_number("wscale", s.wscale);
    std::vector<std::string_view> flags;
    if (s.flags & static_cast<std::uint8_t>(synproxy_flag::timestamp)) flags.push_back("timestamp");
    if (s.flags & static_cast<std::uint8_t>(synproxy_flag::sack_perm)) flags.push_back("sack-perm");
    flag_list("flags", flags);
  }
  void object_body(const object& o, const unknown_object& u) {
    if (o.type == object_type::tunnel && tunnel_body(u.text)) return;
    not_translatable(o.file, o.where,
                     fmt::format("{} '{}' in table {} {} is kept as text by nflens and has no libnftables JSON form "
                                 "here; its body is written as the string \"text\"",
                                 name(o.type), o.name, name(fam_), table_name_));
    e_.member("text", u.text);
  }

  /// A tunnel object's body (`{ id 10 ip saddr A ip daddr B sport N dport N tos N ttl N [geneve|vxlan|erspan
  /// { ... }] }`, nft(8) TUNNEL), which the AST keeps as text, in json.c's layout. False (nothing written)
  /// when the text is not of that form.
  bool tunnel_body(std::string_view text) {
    std::vector<std::string_view> t;  // words, with braces and quoted strings as tokens
    for (std::size_t i = 0; i < text.size();) {
      const char c = text[i];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ';') {
        ++i;
      } else if (c == '{' || c == '}') {
        t.push_back(text.substr(i++, 1));
      } else if (c == '"') {
        const auto end = text.find('"', i + 1);
        if (end == std::string_view::npos) return false;
        t.push_back(text.substr(i + 1, end - i - 1));
        i = end + 1;
      } else {
        std::size_t j = i;
        while (j < text.size() && std::string_view(" \t\n\r;{}\"").find(text[j]) == std::string_view::npos) ++j;
        t.push_back(text.substr(i, j - i));
        i = j;
      }
    }
    auto number = [](std::string_view w) -> std::optional<std::uint64_t> {
      std::uint64_t v = 0;
      int base = 10;
      if (w.starts_with("0x")) {
        w.remove_prefix(2);
        base = 16;
      }
      if (w.empty()) return std::nullopt;
      const auto r = std::from_chars(w.data(), w.data() + w.size(), v, base);
      if (r.ec != std::errc{} || r.ptr != w.data() + w.size()) return std::nullopt;
      return v;
    };
    std::uint64_t id = 0, sport = 0, dport = 0, tos = 0, ttl = 0;
    std::string_view src, dst, kind;
    bool v6 = false;
    std::size_t sub = 0, sub_end = 0;
    std::size_t i = 0;
    if (i < t.size() && t[i] == "{") ++i;
    for (; i < t.size() && t[i] != "}"; ++i) {
      const auto w = t[i];
      auto next_number = [&](std::uint64_t& out) {
        if (i + 1 >= t.size()) return false;
        const auto v = number(t[++i]);
        if (!v) return false;
        out = *v;
        return true;
      };
      if (w == "id" || w == "sport" || w == "dport" || w == "tos" || w == "ttl") {
        std::uint64_t& out = w == "id" ? id : w == "sport" ? sport : w == "dport" ? dport : w == "tos" ? tos : ttl;
        if (!next_number(out)) return false;
      } else if ((w == "ip" || w == "ip6") && i + 2 < t.size() && (t[i + 1] == "saddr" || t[i + 1] == "daddr")) {
        v6 = w == "ip6";
        (t[i + 1] == "saddr" ? src : dst) = t[i + 2];
        i += 2;
      } else if ((w == "geneve" || w == "vxlan" || w == "erspan") && i + 1 < t.size() && t[i + 1] == "{") {
        kind = w;
        sub = i + 2;
        std::size_t j = sub;
        while (j < t.size() && t[j] != "}") ++j;
        if (j == t.size()) return false;
        sub_end = j;
        i = j;
      } else {
        return false;
      }
    }
    if (src.empty() || dst.empty()) return false;
    e_.member_number("id", id);
    e_.member(v6 ? "src-ipv6" : "src-ipv4", src);
    e_.member(v6 ? "dst-ipv6" : "dst-ipv4", dst);
    e_.member_number("sport", sport);
    e_.member_number("dport", dport);
    e_.member_number("tos", tos);
    e_.member_number("ttl", ttl);
    if (kind.empty()) return true;
    e_.member("type", kind);
    e_.key("tunnel");
    const std::span<const std::string_view> body{t.data() + sub, sub_end - sub};
    auto value_of = [&](std::string_view key) -> std::optional<std::string_view> {
      for (std::size_t k = 0; k + 1 < body.size(); ++k)
        if (body[k] == key) return body[k + 1];
      return std::nullopt;
    };
    if (kind == "geneve") {
      e_.begin_array();
      for (std::size_t k = 0; k + 5 < body.size() + 0 && body[k] == "class"; k += 6) {
        e_.begin_object();
        e_.member_number("class", number(body[k + 1]).value_or(0));
        e_.member_number("opt-type", number(body[k + 3]).value_or(0));
        e_.member("data", body[k + 5]);
        e_.end_object();
      }
      e_.end_array();
    } else if (kind == "vxlan") {
      e_.begin_object();
      e_.member_number("gbp", number(value_of("gbp").value_or("0")).value_or(0));
      e_.end_object();
    } else {
      const auto version = number(value_of("version").value_or("0")).value_or(0);
      e_.begin_object();
      e_.member_number("version", version);
      if (version == 1) {
        e_.member_number("index", number(value_of("index").value_or("0")).value_or(0));
      } else {
        e_.member("dir", value_of("direction").value_or("ingress"));
        e_.member_number("hwid", number(value_of("id").value_or("0")).value_or(0));
      }
      e_.end_object();
    }
    return true;
  }

  /// `file`: the source `r`'s spans refer to.
  void rule_object(std::string_view chain_name, const rule& r, const source* file, bool listing,
                   const nft::command* cmd) {
    file_ = file;
    chain_name_ = chain_name;
    e_.begin_object();
    e_.key("rule");
    e_.begin_object();
    e_.member("family", name(fam_));
    e_.member("table", table_name_);
    e_.member("chain", chain_name);
    if (listing) {
      e_.member_number("handle", r.handle);
    } else if (cmd != nullptr) {
      if (cmd->verb == command_verb::replace || cmd->position_kind == rule_position::handle ||
          cmd->position_kind == rule_position::position)
        e_.member_number("handle", cmd->verb == command_verb::replace ? cmd->handle : cmd->position);
      if (cmd->position_kind == rule_position::index) e_.member_number("index", cmd->position);
    }
    if (!r.comment.empty()) e_.member("comment", r.comment);
    e_.key("expr");
    e_.begin_array();
    rule_ = &r;
    stmt_index_ = 0;
    for (const auto& s : r.stmts) {
      ++stmt_index_;
      stmt(s);
    }
    rule_ = nullptr;
    e_.end_array();
    e_.end_object();
    e_.end_object();
  }

  // --- statements
  void stmt_list(std::span<const stmt> stmts, const source* file) {
    const bool was = stateless_;
    stateless_ = true;
    const source* f = file_;
    if (file != nullptr) file_ = file;
    e_.begin_array();
    for (const auto& s : stmts) stmt(s);
    e_.end_array();
    stateless_ = was;
    file_ = f;
  }

  void stmt(const nft::stmt& s) {
    if (auto text = text_form(s)) {
      e_.string(*text);
      return;
    }
    e_.begin_object();
    stmt_member(s);
    e_.end_object();
  }

  /// Statements nft has no JSON form for are written as their text, as nft's printer does (json.c
  /// falls back to the statement's printed form); each one is reported.
  std::optional<std::string_view> text_form(const nft::stmt& s) {
    const std::string_view text = file_ != nullptr ? file_->text(s.where) : std::string_view{};
    if (const auto* u = s.get<unknown_stmt>()) {
      not_translatable(file_, s.where,
                       fmt::format("{}: statement '{}' is not modelled by nflens and has no libnftables JSON form; "
                                   "it is written as a string",
                                   where_text(), u->text));
      return u->text;
    }
    if (const auto* a = s.get<anonymous_chain_stmt>()) {
      not_translatable(file_, s.where,
                       fmt::format("{}: an anonymous chain ({} {{ ... }}) has no libnftables JSON form; it is "
                                   "written as a string, as nft does",
                                   where_text(), name(a->kind)));
      return text;
    }
    if (old()) {
      // nft 1.0.6 has no JSON form for map statements (`update @m { k : v }`) and `last`
      const auto* st = s.get<set_stmt>();
      if ((st != nullptr && st->elem != nullptr && st->elem->data != nullptr) || s.is<last_stmt>()) {
        not_translatable(
            file_, s.where,
            fmt::format("{}: nft 1.0.6 has no JSON form for this statement; it is written as a string", where_text()));
        return text;
      }
    }
    return std::nullopt;
  }

  /// Writes the single `"key": value` of a statement (the members of an element merge these).
  void stmt_member(const nft::stmt& s) {
    std::visit([&](const auto& v) { stmt_body(s, v); }, s.value);
  }

  void stmt_body(const nft::stmt&, const match_stmt& m) {
    e_.key("match");
    e_.begin_object();
    e_.key("op");
    switch (m.op) {
      case relational_op::implicit: {
        const bool bitmask = m.left != nullptr && type_of(*m.left, fam_).kind == value_kind::bitmask &&
                             m.right != nullptr && !m.right->is<set_expr>() && !m.right->is<set_ref_expr>() &&
                             !m.flag_syntax;
        e_.string(bitmask ? "in" : "==");
        break;
      }
      default:
        e_.string(name(m.op));
    }
    const auto* masked = m.left->get<binop_expr>();
    if (old() && masked != nullptr && masked->op == binop::and_ &&
        (m.flag_syntax || (type_of(*masked->left(), fam_).kind == value_kind::bitmask && flag_value(*masked->right()) &&
                           flag_value(*m.right)))) {
      // 1.0.6 lists a masked comparison of flags with flags in its `/` form, and writes a value of several
      // flags there as the array of their names, whichever text it was read from (`tcp flags syn /
      // fin,syn,rst,ack` or 1.1's `tcp flags & (fin | syn | rst | ack) == syn`: the kernel holds the same
      // for both); compared with a set, the mask stays an `|` of flags
      e_.key("left");
      e_.begin_object();
      e_.key("&");
      e_.begin_array();
      expr(*masked->left());
      flags_or_expr(*masked->right());
      e_.end_array();
      e_.end_object();
      e_.key("right");
      flags_or_expr(*m.right);
      e_.end_object();
      return;
    }
    if (old() && type_of(*m.left, fam_).kind == value_kind::bitmask && flag_value(*m.right)) {
      e_.key("left");
      relational_ = true;
      expr(*m.left);
      relational_ = false;
      e_.key("right");
      flags_or_expr(*m.right);
      e_.end_object();
      return;
    }
    e_.key("left");
    relational_ = true;
    expr(*m.left);
    relational_ = false;
    e_.key("right");
    typed(*m.right, hint_of(*m.left));
    e_.end_object();
  }
  /// Whether `x` is a flag constant or an inclusive or of flag constants (`syn | ack`).
  static bool flag_value(const nft::expr& x) noexcept {
    if (x.is<symbol_expr>() || x.is<integer_expr>()) return true;
    const auto* b = x.get<binop_expr>();
    return b != nullptr && b->op == binop::or_ && flag_value(*b->left()) && flag_value(*b->right());
  }
  /// A flag value as 1.0.6 writes it: an `|` of flags as the array of their names, anything else as is.
  void flags_or_expr(const nft::expr& x) {
    const auto* b = x.get<binop_expr>();
    if (b != nullptr && b->op == binop::or_ && flag_value(x))
      or_items_array(x);
    else
      expr(x);
  }
  /// `a | b | c` as the array `[a, b, c]`.
  void or_items_array(const nft::expr& x) {
    e_.begin_array();
    auto walk = [&](const nft::expr& y, auto&& self) -> void {
      const auto* b = y.get<binop_expr>();
      if (b != nullptr && b->op == binop::or_) {
        self(*b->left(), self);
        self(*b->right(), self);
      } else {
        expr(y);
      }
    };
    walk(x, walk);
    e_.end_array();
  }
  void stmt_body(const nft::stmt&, const verdict_stmt& v) { verdict_member(v.kind, v.chain); }
  void stmt_body(const nft::stmt&, const anonymous_chain_stmt&) {}  // text_form()
  void stmt_body(const nft::stmt&, const verdict_map_stmt& v) {
    e_.key("vmap");
    e_.begin_object();
    e_.key("key");
    expr(*v.key);
    e_.key("data");
    expr(*v.mapping);
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const mangle_stmt& m) {
    // `ct helper set "ftp"`, `ct timeout set "t"`, `ct expectation set "e"` and `meta secmark set "s"`
    // assign a named object: nft writes them as object references.
    if (const auto* c = m.target->get<ct_expr>()) {
      std::string_view obj;
      if (c->key == ct_key::helper) obj = "ct helper";
      if (c->key == ct_key::timeout) obj = "ct timeout";
      if (c->key == ct_key::expectation) obj = "ct expectation";
      if (!obj.empty()) {
        e_.key(obj);
        expr(*m.value);
        return;
      }
    }
    if (const auto* mk = m.target->get<meta_expr>();
        mk != nullptr && mk->key == meta_key::secmark && (m.value->is<string_expr>() || m.value->is<symbol_expr>())) {
      e_.key("secmark");
      expr(*m.value);
      return;
    }
    e_.key("mangle");
    e_.begin_object();
    e_.key("key");
    if (const auto* c = m.target->get<ct_expr>()) {
      // ct_stmt_json(): the key without a protocol qualifier
      e_.begin_object();
      e_.key("ct");
      e_.begin_object();
      e_.member("key", name(c->key));
      if (c->direction != ct_direction::none) e_.member("dir", name(c->direction));
      e_.end_object();
      e_.end_object();
    } else {
      expr(*m.target);
    }
    e_.key("value");
    expr(*m.value);
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const counter_stmt& c) {
    e_.key("counter");
    if (stateless_ || !c.has_values) {
      e_.null();
      return;
    }
    e_.begin_object();
    e_.member_number("packets", c.packets);
    e_.member_number("bytes", c.bytes);
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const limit_stmt& l) {
    std::uint64_t rate = l.rate;
    std::uint64_t burst = l.burst;
    if (!l.has_burst && !l.bytes && old()) burst = 5;  // 1.0.6 does not list its default burst
    std::string_view rate_unit, burst_unit;
    if (l.bytes) {
      std::tie(rate, rate_unit) = byte_unit(l.rate);
      std::tie(burst, burst_unit) = byte_unit(l.burst);
    }
    e_.key("limit");
    e_.begin_object();
    e_.member_number("rate", rate);
    e_.member_number("burst", burst);
    e_.member("per", name(l.unit));
    if (l.over) {
      e_.key("inv");
      e_.boolean(true);
    }
    if (!rate_unit.empty()) e_.member("rate_unit", rate_unit);
    if (!burst_unit.empty()) e_.member("burst_unit", burst_unit);
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const quota_stmt& q) {
    e_.key("quota");
    e_.begin_object();
    auto [v, unit] = byte_unit(q.bytes);
    e_.member_number("val", v);
    e_.member("val_unit", unit);
    if (q.over) {
      e_.key("inv");
      e_.boolean(true);
    }
    if (!stateless_ && q.used != 0) {
      auto [u, uunit] = byte_unit(q.used);
      e_.member_number("used", u);
      e_.member("used_unit", uunit);
    }
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const connlimit_stmt& c) {
    e_.key("ct count");
    e_.begin_object();
    e_.member_number("val", c.count);
    if (c.over) {
      e_.key("inv");
      e_.boolean(true);
    }
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const last_stmt& l) {
    e_.key("last");
    if (stateless_ || !l.has_used) {
      e_.null();
      return;
    }
    e_.begin_object();
    e_.member_number("used", l.used_ms);
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const log_stmt& l) {
    e_.key("log");
    const bool any = l.prefix != nullptr || (l.present & 0x0e) != 0 ||
                     ((l.present & 1) && l.level != log_level::warn) || l.flags != 0;
    if (!any) {
      e_.null();
      return;
    }
    e_.begin_object();
    if (l.prefix != nullptr) {
      e_.key("prefix");
      expr(*l.prefix);
    }
    if (l.present & 2) e_.member_number("group", l.group);
    if (l.present & 4) e_.member_number("snaplen", l.snaplen);
    if (l.present & 8) e_.member_number("queue-threshold", l.queue_threshold);
    if ((l.present & 1) && l.level != log_level::warn) e_.member("level", name(l.level));
    std::vector<std::string_view> flags;
    const auto all = static_cast<std::uint8_t>(log_flag::all);
    if ((l.flags & all) == all) {
      flags.push_back("all");
    } else {
      if (l.flags & static_cast<std::uint8_t>(log_flag::tcp_sequence)) flags.push_back("tcp sequence");
      if (l.flags & static_cast<std::uint8_t>(log_flag::tcp_options)) flags.push_back("tcp options");
      if (l.flags & static_cast<std::uint8_t>(log_flag::ip_options)) flags.push_back("ip options");
      if (l.flags & static_cast<std::uint8_t>(log_flag::skuid)) flags.push_back("skuid");
      if (l.flags & static_cast<std::uint8_t>(log_flag::ether)) flags.push_back("ether");
    }
    flag_list("flags", flags, true);
    e_.end_object();
  }
  /// The network protocol a rule's earlier statements pin (`ip daddr ...`, `meta nfproto ipv6`).
  nfproto rule_network() const noexcept {
    if (fam_ == family::ip) return nfproto::ip;
    if (fam_ == family::ip6) return nfproto::ip6;
    if (rule_ == nullptr) return nfproto::none;
    nfproto found = nfproto::none;
    auto look = [&](const nft::expr& e, auto&& self) -> void {
      if (const auto* p = e.get<payload_expr>()) {
        if (p->inner != tunnel::none) return;
        if (p->protocol == header::ip || p->protocol == header::icmp || p->protocol == header::igmp)
          found = nfproto::ip;
        if (p->protocol == header::ip6 || p->protocol == header::icmpv6) found = nfproto::ip6;
      } else if (const auto* c = e.get<concat_expr>()) {
        for (const auto& i : c->items) self(i, self);
      } else if (const auto* b = e.get<binop_expr>()) {
        self(*b->left(), self);
      }
    };
    for (std::size_t i = 0; i + 1 < stmt_index_ && i < rule_->stmts.size(); ++i) {
      const auto* m = rule_->stmts[i].get<match_stmt>();
      if (m == nullptr) continue;
      look(*m->left, look);
      if (const auto* mk = m->left->get<meta_expr>(); mk != nullptr && mk->key == meta_key::nfproto) {
        if (const auto* sym = m->right->get<symbol_expr>()) {
          if (sym->name == "ipv4") found = nfproto::ip;
          if (sym->name == "ipv6") found = nfproto::ip6;
        }
      }
    }
    return found;
  }
  void stmt_body(const nft::stmt&, const reject_stmt& r) {
    e_.key("reject");
    reject_type type = r.type;
    if (type == reject_type::unspecified) {
      // What the kernel holds for a bare `reject` (nft's default): ICMP port unreachable of the rule's
      // network protocol, or the family-independent icmpx one.
      const auto net = rule_network();
      type = net == nfproto::ip ? reject_type::icmp : net == nfproto::ip6 ? reject_type::icmpv6 : reject_type::icmpx;
    }
    e_.begin_object();
    e_.member("type", name(type));
    if (r.code != nullptr) {
      e_.key("expr");
      expr(*r.code);
    } else if (type != reject_type::tcp_reset) {
      e_.member("expr", "port-unreachable");
    }
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const nat_stmt& n) {
    e_.key(name(n.kind));
    std::vector<std::string_view> flags;
    if (n.flags & static_cast<std::uint8_t>(nat_flag::random)) flags.push_back("random");
    if (n.flags & static_cast<std::uint8_t>(nat_flag::fully_random)) flags.push_back("fully-random");
    if (n.flags & static_cast<std::uint8_t>(nat_flag::persistent)) flags.push_back("persistent");
    if (n.mode == nat_mode::plain && n.address == nullptr && n.port == nullptr && flags.empty() &&
        n.protocol == nfproto::none) {
      e_.null();
      return;
    }
    e_.begin_object();
    if (n.protocol != nfproto::none) e_.member("family", name(n.protocol));
    if (n.address != nullptr) {
      e_.key("addr");
      expr(*n.address);
    }
    if (n.port != nullptr) {
      e_.key("port");
      expr(*n.port);
    }
    if (n.mode == nat_mode::prefix) flags.push_back("netmap");
    flag_list("flags", flags, true);
    if (n.mode == nat_mode::prefix) {
      const std::string_view pf[] = {"prefix"};
      flag_list("type_flags", pf, true);
    }
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const tproxy_stmt& t) {
    e_.key("tproxy");
    e_.begin_object();
    if (t.protocol != nfproto::none && fam_ == family::inet) e_.member("family", name(t.protocol));
    if (t.address != nullptr) {
      e_.key("addr");
      expr(*t.address);
    }
    if (t.port != nullptr) {
      e_.key("port");
      expr(*t.port);
    }
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const queue_stmt& q) {
    e_.key("queue");
    if (q.number == nullptr && q.flags == 0) {
      e_.null();
      return;
    }
    e_.begin_object();
    if (q.number != nullptr) {
      e_.key("num");
      expr(*q.number);
    }
    std::vector<std::string_view> flags;
    if (q.flags & static_cast<std::uint8_t>(queue_flag::bypass)) flags.push_back("bypass");
    if (q.flags & static_cast<std::uint8_t>(queue_flag::fanout)) flags.push_back("fanout");
    flag_list("flags", flags, true);
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const dup_stmt& d) {
    e_.key("dup");
    if (d.address == nullptr) {
      e_.null();
      return;
    }
    e_.begin_object();
    e_.key("addr");
    expr(*d.address);
    if (d.device != nullptr) {
      e_.key("dev");
      expr(*d.device);
    }
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const fwd_stmt& f) {
    e_.key("fwd");
    e_.begin_object();
    e_.key("dev");
    expr(*f.device);
    if (f.address != nullptr) {
      e_.member("family", f.protocol == nfproto::ip6 ? "ip6" : "ip");
      e_.key("addr");
      expr(*f.address);
    }
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const notrack_stmt&) {
    e_.key("notrack");
    e_.null();
  }
  void stmt_body(const nft::stmt&, const set_stmt& st) {
    const auto* ref = st.set_ref != nullptr ? st.set_ref->get<set_ref_expr>() : nullptr;
    const bool is_map = st.elem != nullptr && st.elem->data != nullptr;
    e_.key(is_map ? "map" : "set");
    e_.begin_object();
    e_.member("op", name(st.op));
    e_.key("elem");
    if (st.elem != nullptr) element_key(*st.elem, false);
    if (is_map) {
      e_.key("data");
      expr(*st.elem->data);
    }
    e_.key(is_map ? "map" : "set");
    e_.string(ref != nullptr ? at_name(ref->name) : std::string());
    if (st.elem != nullptr && st.elem->options != nullptr && !st.elem->options->stmts.empty()) {
      e_.key("stmt");
      stmt_list(st.elem->options->stmts, nullptr);
    }
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const meter_stmt& m) {
    e_.key("meter");
    e_.begin_object();
    e_.key("key");
    if (m.elem() != nullptr) element_key(*m.elem(), false);
    e_.key("stmt");
    const bool was = stateless_;
    stateless_ = true;
    if (m.elem() != nullptr && m.elem()->options != nullptr && !m.elem()->options->stmts.empty())
      stmt(m.elem()->options->stmts.front());
    else
      e_.null();
    stateless_ = was;
    e_.member_number("size", m.size());
    if (m.name() != nullptr) {
      e_.key("name");
      expr(*m.name());
    }
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const flow_offload_stmt& f) {
    e_.key("flow");
    e_.begin_object();
    e_.member("op", "add");
    e_.member("flowtable", at_name(f.flowtable));
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const objref_stmt& o) {
    e_.key(name(o.type));
    expr(*o.name);
  }
  void stmt_body(const nft::stmt&, const synproxy_stmt& s) {
    e_.key("synproxy");
    std::vector<std::string_view> flags;
    if (s.flags & static_cast<std::uint8_t>(synproxy_flag::timestamp)) flags.push_back("timestamp");
    if (s.flags & static_cast<std::uint8_t>(synproxy_flag::sack_perm)) flags.push_back("sack-perm");
    if (s.present == 0 && flags.empty()) {
      e_.null();
      return;
    }
    e_.begin_object();
    if (s.present & 1) e_.member_number("mss", s.mss);
    if (s.present & 2) e_.member_number("wscale", s.wscale);
    flag_list("flags", flags);
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const optstrip_stmt& o) {
    e_.key("reset");
    optstrip_ = true;
    expr(*o.option);
    optstrip_ = false;
  }
  void stmt_body(const nft::stmt&, const xt_stmt& x) {
    e_.key("xt");
    e_.begin_object();
    e_.member("type", name(x.kind));
    e_.member("name", x.name);
    e_.end_object();
  }
  void stmt_body(const nft::stmt&, const unknown_stmt&) {}  // text_form()

  std::string where_text() const {
    return fmt::format("table {} {} chain {} rule {}", name(fam_), table_name_, chain_name_,
                       rule_ != nullptr ? fmt::format("statement {}", stmt_index_) : std::string("(set)"));
  }

  void verdict(nft::verdict v, std::string_view chain) {
    e_.begin_object();
    verdict_member(v, chain);
    e_.end_object();
  }
  void verdict_member(nft::verdict v, std::string_view chain) {
    e_.key(name(v));
    if (v == verdict::jump || v == verdict::goto_) {
      e_.begin_object();
      e_.member("target", chain);
      e_.end_object();
    } else {
      e_.null();
    }
  }

  // --- elements
  /// The key of an element, wrapped in `{"elem": {"val": ..., options}}` when it has options. With
  /// `stmts`, the element's statements merge into that object (a named set's element list);
  /// otherwise they belong to the enclosing statement (`add @s { ... }`).
  void element_key(const nft::element& el, bool stmts) {
    const element_options* o = el.options;
    const bool wrap =
        o != nullptr && ((o->has_timeout && o->timeout_ms != 0) || (o->has_expires && o->expires_ms != 0) ||
                         !o->comment.empty() || (stmts && !o->stmts.empty()));
    if (!wrap) {
      expr(*el.key);
      return;
    }
    e_.begin_object();
    e_.key("elem");
    e_.begin_object();
    e_.key("val");
    expr(*el.key);
    if (o->has_timeout && o->timeout_ms != 0) e_.member_number("timeout", o->timeout_ms / 1000);
    if (o->has_expires && o->expires_ms != 0) e_.member_number("expires", o->expires_ms / 1000);
    if (!o->comment.empty()) e_.member("comment", o->comment);
    if (stmts) {
      std::vector<std::string_view> seen;
      for (const auto& s : o->stmts) {
        const auto k = stmt_key(s);
        if (std::find(seen.begin(), seen.end(), k) != seen.end()) continue;  // json_object_update_missing
        if (old() && !seen.empty()) {  // 1.0.6 writes one statement per element
          if (!element_stmts_lost_)   // once per write: a set may hold a million such elements
            lost_in_old(file_, s.where,
                        fmt::format("table {} {}: a set element's {} after its first statement (here, and in any "
                                    "later element)",
                                    name(fam_), table_name_, k));
          element_stmts_lost_ = true;
          break;
        }
        seen.push_back(k);
        stmt_member(s);
      }
    }
    e_.end_object();
    e_.end_object();
  }
  static std::string_view stmt_key(const nft::stmt& s) {
    if (s.is<counter_stmt>()) return "counter";
    if (s.is<limit_stmt>()) return "limit";
    if (s.is<quota_stmt>()) return "quota";
    if (s.is<connlimit_stmt>()) return "ct count";
    if (s.is<last_stmt>()) return "last";
    return {};
  }
  void element(const nft::element& el) {
    if (el.data == nullptr) {
      element_key(el, true);
      return;
    }
    e_.begin_array();
    element_key(el, true);
    typed(*el.data, data_hint_);
    e_.end_array();
  }

  // --- expressions
  void expr(const nft::expr& x) {
    std::visit([&](const auto& v) { expr_body(x, v); }, x.value);
  }
  void expr_body(const nft::expr&, const integer_expr& v) {
    // ifindex_type has no JSON form of its own: nft prints it (a name, or the number) as a string
    if (hint_.size == 1 && hint_.names[0] == "iface_index") {
      e_.string(fmt::format("{}", v.value));
      return;
    }
    // nft prints ranges numerically in text, but resolves symbolic types in JSON
    if (in_range_ && hint_.size == 1) {
      if (const auto sym = json_detail::symbol_name(hint_.names[0], v.value); !sym.empty()) {
        e_.string(sym);
        return;
      }
    }
    e_.number(v.value);
  }
  void expr_body(const nft::expr&, const address_expr& v) { e_.string(to_string(v.address())); }
  void expr_body(const nft::expr&, const ether_address_expr& v) { e_.string(ether_text(v.bytes)); }
  void expr_body(const nft::expr&, const time_expr& v) { e_.number(v.milliseconds / 1000); }
  void expr_body(const nft::expr&, const symbol_expr& v) { e_.string(v.name); }
  void expr_body(const nft::expr&, const string_expr& v) { e_.string(v.text); }
  void expr_body(const nft::expr&, const boolean_expr& v) { e_.boolean(v.value); }
  void expr_body(const nft::expr&, const wildcard_expr&) { e_.string("*"); }
  void expr_body(const nft::expr&, const prefix_expr& v) {
    e_.begin_object();
    e_.key("prefix");
    e_.begin_object();
    e_.key("addr");
    expr(*v.value);
    e_.member_number("len", v.length);
    e_.end_object();
    e_.end_object();
  }
  void expr_body(const nft::expr&, const range_expr& v) {
    e_.begin_object();
    e_.key("range");
    e_.begin_array();
    const bool was = in_range_;
    in_range_ = true;
    expr(*v.low());
    expr(*v.high());
    in_range_ = was;
    e_.end_array();
    e_.end_object();
  }
  void binop_operands(binop op, const nft::expr& x) {
    // 1.1.x flattens a chain of the same operator (`a | b | c` → {"|": [a, b, c]}); 1.0.6 does not.
    const auto* b = x.get<binop_expr>();
    if (b != nullptr && b->op == op && !old()) {
      binop_operands(op, *b->left());
      binop_operands(op, *b->right());
      return;
    }
    expr(x);
  }
  void expr_body(const nft::expr&, const binop_expr& v) {
    e_.begin_object();
    e_.key(name(v.op));
    e_.begin_array();
    if (old()) {
      expr(*v.left());
      expr(*v.right());
    } else {
      binop_operands(v.op, *v.left());
      binop_operands(v.op, *v.right());
    }
    e_.end_array();
    e_.end_object();
  }
  void expr_body(const nft::expr&, const concat_expr& v) {
    e_.begin_object();
    e_.key("concat");
    e_.begin_array();
    const type_hint all = hint_;
    for (std::size_t i = 0; i < v.items.size(); ++i) {
      type_hint one;
      if (all.size == v.items.size()) {
        one.names[0] = all.names[i];
        one.size = 1;
      }
      typed(v.items[i], one);
    }
    e_.end_array();
    e_.end_object();
  }
  void expr_body(const nft::expr&, const list_expr& v) {
    e_.begin_array();
    for (const auto& i : v.items) expr(i);
    e_.end_array();
  }
  void expr_body(const nft::expr&, const set_expr& v) {
    const type_hint saved_data = data_hint_;
    data_hint_ = {};
    struct restore {
      type_hint& h;
      type_hint v;
      ~restore() { h = v; }
    } r{data_hint_, saved_data};
    e_.begin_object();
    e_.key("set");
    e_.begin_array();
    for (const auto& el : v.elements) element(el);
    e_.end_array();
    e_.end_object();
  }
  void expr_body(const nft::expr&, const set_ref_expr& v) { e_.string(at_name(v.name)); }
  void expr_body(const nft::expr&, const map_expr& v) {
    e_.begin_object();
    e_.key("map");
    e_.begin_object();
    e_.key("key");
    expr(*v.key());
    e_.key("data");
    expr(*v.mapping());
    e_.end_object();
    e_.end_object();
  }
  void expr_body(const nft::expr&, const verdict_expr& v) { verdict(v.kind, v.chain); }
  void expr_body(const nft::expr& x, const payload_expr& p) {
    e_.begin_object();
    switch (p.protocol) {
      case header::raw:
        e_.key("payload");
        e_.begin_object();
        e_.member("base", name(p.base));
        e_.member_number("offset", p.offset);
        e_.member_number("len", p.length);
        e_.end_object();
        break;
      case header::tcp_option:
        e_.key("tcp option");
        e_.begin_object();
        if (option_name(p.protocol, p.option).empty()) {
          // a kind without a name: nft writes the raw form, 8 bits for a presence test, 0 to strip it
          e_.member_number("base", p.option);
          e_.member_number("offset", p.offset);
          e_.member_number("len", p.length != 0 ? p.length.get() : optstrip_ ? 0u : 8u);
        } else if (p.length != 0) {
          e_.member_number("base", p.option);
          e_.member_number("offset", p.offset);
          e_.member_number("len", p.length);
        } else {
          std::string n(option_name(p.protocol, p.option));
          if (p.option == 5 && p.index != 0) n += static_cast<char>('0' + p.index);
          e_.member("name", n);
          if (p.field != header_field::none) e_.member("field", field_name(p.protocol, p.field));
        }
        e_.end_object();
        break;
      case header::ip_option:
      case header::sctp_chunk:
        e_.key(name(p.protocol));
        e_.begin_object();
        e_.member("name", option_name(p.protocol, p.option));
        if (p.field != header_field::none) e_.member("field", field_name(p.protocol, p.field));
        e_.end_object();
        break;
      case header::dccp_option:
        e_.key("dccp option");
        e_.begin_object();
        e_.member_number("type", p.option);
        e_.end_object();
        break;
      case header::exthdr:
        e_.key("exthdr");
        e_.begin_object();
        e_.member("name", name(static_cast<header>(p.option)));
        e_.end_object();
        break;
      case header::hbh:
      case header::rt:
      case header::rt0:
      case header::rt2:
      case header::srh:
      case header::frag:
      case header::dst:
      case header::mh:
        e_.key("exthdr");
        e_.begin_object();
        e_.member("name", name(p.protocol));
        if (p.field != header_field::none) {
          // `srh sid[1]`, `rt0 addr[2]`: the index is part of the field's name
          if (p.index != 0 && (p.field == header_field::sid || p.field == header_field::addr))
            e_.member("field", fmt::format("{}[{}]", field_name(p.protocol, p.field), p.index));
          else
            e_.member("field", field_name(p.protocol, p.field));
        }
        e_.end_object();
        break;
      default:
        e_.key("payload");
        e_.begin_object();
        if (p.inner != tunnel::none && old())
          lost_in_old(file_, x.where, fmt::format("an inner header of tunnel {}", name(p.inner)));
        else if (p.inner != tunnel::none)
          e_.member("tunnel", name(p.inner));
        else if ((p.protocol == header::vxlan || p.protocol == header::geneve) && !old())
          e_.member("tunnel", name(p.protocol));  // nft reads these headers as tunnels of themselves
        e_.member("protocol", name(p.protocol));
        e_.member("field", field_name(p.protocol, p.field));
        e_.end_object();
    }
    e_.end_object();
  }
  void expr_body(const nft::expr&, const meta_expr& m) {
    e_.begin_object();
    e_.key("meta");
    e_.begin_object();
    e_.member("key", name(m.key));
    e_.end_object();
    e_.end_object();
  }
  void expr_body(const nft::expr&, const ct_expr& c) {
    e_.begin_object();
    e_.key("ct");
    e_.begin_object();
    if (c.protocol != nfproto::none)
      e_.member("key", fmt::format("{} {}", name(c.protocol), name(c.key)));
    else
      e_.member("key", name(c.key));
    if (c.direction != ct_direction::none) e_.member("dir", name(c.direction));
    e_.end_object();
    e_.end_object();
  }
  void expr_body(const nft::expr&, const fib_expr& f) {
    e_.begin_object();
    e_.key("fib");
    e_.begin_object();
    // 1.1.x spells the presence test `check` in text, but keeps `oif` in a match's JSON (json.c keeps
    // the older form there for compatibility).
    e_.member("result", f.result == fib_result::check && relational_ ? "oif" : name(f.result));
    std::vector<std::string_view> flags;
    static constexpr std::string_view names[] = {"saddr", "daddr", "mark", "iif", "oif"};
    for (std::size_t i = 0; i < std::size(names); ++i)
      if (f.flags & (1u << i)) flags.push_back(names[i]);
    flag_list("flags", flags);
    e_.end_object();
    e_.end_object();
  }
  void expr_body(const nft::expr&, const rt_expr& r) {
    e_.begin_object();
    e_.key("rt");
    e_.begin_object();
    e_.member("key", name(r.key));
    if (r.key == rt_key::nexthop) {
      const bool v6 = r.protocol == nfproto::ip6 || (r.protocol == nfproto::none && fam_ == family::ip6);
      e_.member("family", v6 ? "ip6" : "ip");
    }
    e_.end_object();
    e_.end_object();
  }
  void expr_body(const nft::expr& x, const socket_expr& s) {
    if (s.key == socket_key::cgroupv2 && s.level != 0)
      not_translatable(file_, x.where,
                       fmt::format("{}: libnftables JSON has no level for 'socket cgroupv2'; level {} is left out",
                                   where_text(), s.level));
    e_.begin_object();
    e_.key("socket");
    e_.begin_object();
    e_.member("key", name(s.key));
    e_.end_object();
    e_.end_object();
  }
  void expr_body(const nft::expr&, const osf_expr& o) {
    e_.begin_object();
    e_.key("osf");
    e_.begin_object();
    e_.member("key", name(o.key));
    if (o.ttl == osf_ttl::loose) e_.member("ttl", "loose");
    if (o.ttl == osf_ttl::skip) e_.member("ttl", "skip");
    e_.end_object();
    e_.end_object();
  }
  void expr_body(const nft::expr&, const ipsec_expr& i) {
    e_.begin_object();
    e_.key("ipsec");
    e_.begin_object();
    e_.member("key", name(i.key));
    if (i.key == ipsec_key::saddr || i.key == ipsec_key::daddr)
      e_.member("family", i.protocol == nfproto::ip6 ? "ip6" : "ip");
    e_.member("dir", i.direction == ipsec_direction::in ? "in" : "out");
    e_.member_number("spnum", i.spnum);
    e_.end_object();
    e_.end_object();
  }
  void expr_body(const nft::expr&, const numgen_expr& n) {
    e_.begin_object();
    e_.key("numgen");
    e_.begin_object();
    e_.member("mode", name(n.type));
    e_.member_number("mod", n.modulus);
    e_.member_number("offset", n.offset);
    e_.end_object();
    e_.end_object();
  }
  void expr_body(const nft::expr&, const hash_expr& h) {
    e_.begin_object();
    e_.key(name(h.spec->kind));
    e_.begin_object();
    e_.member_number("mod", h.spec->modulus);
    if (h.spec->has_seed) e_.member_number("seed", h.spec->seed);
    if (h.spec->offset != 0) e_.member_number("offset", h.spec->offset);
    if (h.spec->key != nullptr && h.spec->kind == hash_kind::jhash) {
      e_.key("expr");
      expr(*h.spec->key);
    }
    e_.end_object();
    e_.end_object();
  }
  void expr_body(const nft::expr&, const tunnel_expr& t) {
    e_.begin_object();
    e_.key("tunnel");
    e_.begin_object();
    e_.member("key", t.key == tunnel_key::path ? "path" : "id");
    e_.end_object();
    e_.end_object();
  }

  /// The datatype names expected for the value being written: one per concatenation item (empty when
  /// unknown). Some types print numbers as strings in JSON (an interface index nft cannot resolve).
  struct type_hint {
    std::array<std::string_view, 16> names{};
    std::size_t size = 0;
    [[nodiscard]] std::span<const std::string_view> view() const noexcept { return {names.data(), size}; }
  };
  type_hint hint_of(const nft::expr& e) const noexcept {
    type_hint h;
    h.size = json_detail::type_names_of(e, fam_, h.names.data(), h.names.size());
    return h;
  }
  static type_hint hint_of(std::span<const std::string_view> names) noexcept {
    type_hint h;
    h.size = std::min(names.size(), h.names.size());
    std::copy_n(names.begin(), h.size, h.names.begin());
    return h;
  }
  /// Writes `x` with `h` as the expected type.
  void typed(const nft::expr& x, const type_hint& h) {
    const type_hint saved = hint_;
    hint_ = h;
    expr(x);
    hint_ = saved;
  }

  emitter e_;
  type_hint hint_;
  type_hint data_hint_;  // for the data of map elements
  bool relational_ = false;
  bool in_range_ = false;
  bool optstrip_ = false;
  const json_write_options& o_;
  std::vector<diagnostic>& diags_;
  bool element_stmts_lost_ = false;  // reported once
  family fam_ = family::ip;
  std::string_view table_name_;
  std::string_view chain_name_;
  const source* file_ = nullptr;
  const rule* rule_ = nullptr;
  std::size_t stmt_index_ = 0;
  bool stateless_ = false;
};

/// The name keys of an object in a command that names it (`delete chain`, `flush set`, ...).
void writer::write_command(const nft::command& c) {
  fam_ = c.fam;
  table_name_ = c.table_name;
  const std::string_view verb = name(c.verb);
  auto named = [&](std::string_view what, bool with_name) {
    e_.begin_object();
    e_.key(verb);
    e_.begin_object();
    e_.key(what);
    e_.begin_object();
    e_.member("family", name(c.fam));
    if (c.what == command_object::table) {
      if (c.handle != 0)
        e_.member_number("handle", c.handle);
      else
        e_.member("name", c.table_name);
    } else {
      e_.member("table", c.table_name);
      if (c.handle != 0 && c.what != command_object::rule)
        e_.member_number("handle", c.handle);
      else if (with_name)
        e_.member(c.what == command_object::rule ? "chain" : "name", c.name);
      if (c.what == command_object::rule && c.handle != 0) e_.member_number("handle", c.handle);
    }
    if (!c.new_name.empty()) e_.member("newname", c.new_name);
    e_.end_object();
    e_.end_object();
    e_.end_object();
  };

  const bool adds = c.verb == command_verb::add || c.verb == command_verb::create || c.verb == command_verb::insert ||
                    c.verb == command_verb::replace;
  if (adds) {
    if (const auto* t = std::get_if<const table*>(&c.body)) {
      if (c.verb == command_verb::add) {
        table_listing(view_of(**t), verb);
      } else {
        // `create table t { ... }`: the table itself is created, its contents added
        table_listing(view_of(**t), "add", verb);
      }
      return;
    }
    if (const auto* ch = std::get_if<const chain*>(&c.body)) {
      e_.begin_object();
      e_.key(verb);
      chain_object(**ch, c.file, false);
      e_.end_object();
      for (const auto& r : (*ch)->rules) {
        e_.begin_object();
        e_.key("add");
        rule_object((*ch)->name, r, c.file, false, nullptr);
        e_.end_object();
      }
      return;
    }
    if (const auto* r = std::get_if<const rule*>(&c.body)) {
      e_.begin_object();
      e_.key(verb);
      rule_object(c.name, **r, c.file, false, &c);
      e_.end_object();
      return;
    }
    if (const auto* s = std::get_if<const set*>(&c.body)) {
      e_.begin_object();
      e_.key(verb);
      set_object(**s, {(*s)->elements, nullptr, (*s)->file}, false);
      e_.end_object();
      return;
    }
    if (const auto* f = std::get_if<const flowtable*>(&c.body)) {
      e_.begin_object();
      e_.key(verb);
      flowtable_object(**f, false);
      e_.end_object();
      return;
    }
    if (const auto* o = std::get_if<const object*>(&c.body)) {
      e_.begin_object();
      e_.key(verb);
      object_object(**o, false);
      e_.end_object();
      return;
    }
  }
  if (const auto* els = std::get_if<std::span<const nft::element>>(&c.body)) {
    e_.begin_object();
    e_.key(verb);
    e_.begin_object();
    e_.key("element");
    e_.begin_object();
    e_.member("family", name(c.fam));
    e_.member("table", c.table_name);
    e_.member("name", c.name);
    e_.key("elem");
    e_.begin_array();
    for (const auto& el : *els) element(el);
    e_.end_array();
    e_.end_object();
    e_.end_object();
    e_.end_object();
    return;
  }
  switch (c.what) {
    case command_object::ruleset:
      e_.begin_object();
      e_.key(verb);
      e_.begin_object();
      e_.key("ruleset");
      e_.null();
      e_.end_object();
      e_.end_object();
      return;
    case command_object::table:
      named("table", true);
      return;
    case command_object::chain:
      named("chain", true);
      return;
    case command_object::rule:
      named("rule", true);
      return;
    case command_object::set:
      named("set", true);
      return;
    case command_object::map:
      named("map", true);
      return;
    case command_object::flowtable:
      named("flowtable", true);
      return;
    case command_object::object:
      named(name(c.obj), true);
      return;
    case command_object::other:
      if (c.verb == command_verb::list && !c.name.empty()) {  // `{"list": {"tables": ...}}`, as read
        e_.begin_object();
        e_.key(verb);
        e_.begin_object();
        e_.key(c.name);
        if (c.family_written) {
          e_.begin_object();
          e_.member("family", name(c.fam));
          e_.end_object();
        } else {
          e_.null();
        }
        e_.end_object();
        e_.end_object();
        return;
      }
      break;
    case command_object::element:
      break;
  }
  not_translatable(c.file, c.where,
                   fmt::format("'{} {}' has no libnftables JSON command form; it is left out", verb, name(c.what)));
}

bool is_listing(const script& s) {
  std::set<std::pair<family, std::string_view>> seen;
  for (const auto& c : s.commands) {
    if (c.verb != command_verb::add || c.what != command_object::table) return false;
    if (!std::holds_alternative<const table*>(c.body)) return false;
    if (!seen.emplace(c.fam, c.table_name).second) return false;
  }
  return true;
}

std::string finish(std::string text, const json_write_options& o) {
  if (o.indent < 0) return text;
  auto v = nlohmann::ordered_json::parse(text);
  return v.dump(o.indent, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace

result<std::string> write_json(const script& s, const json_write_options& o) {
  result<std::string> r;
  r.value.reserve(256);
  writer w(r.value, o, r.diagnostics);
  w.begin_document();
  if (is_listing(s) && !o.commands) {
    for (const auto& c : s.commands) w.table_listing(view_of(*std::get<const table*>(c.body)));
  } else {
    for (const auto& c : s.commands) w.write_command(c);
  }
  w.end_document();
  r.value = finish(std::move(r.value), o);
  return r;
}

result<std::string> write_json(const ruleset& rs, const json_write_options& o) {
  result<std::string> r;
  writer w(r.value, o, r.diagnostics);
  w.begin_document();
  for (const auto& t : rs.tables) w.table_listing(view_of(t), o.commands ? "add" : "");
  w.end_document();
  r.value = finish(std::move(r.value), o);
  return r;
}

result<nlohmann::ordered_json> to_json_value(const script& s, const json_write_options& o) {
  auto flat = o;
  flat.indent = -1;
  auto text = write_json(s, flat);
  return {nlohmann::ordered_json::parse(text.value), std::move(text.diagnostics)};
}

result<nlohmann::ordered_json> to_json_value(const ruleset& rs, const json_write_options& o) {
  auto flat = o;
  flat.indent = -1;
  auto text = write_json(rs, flat);
  return {nlohmann::ordered_json::parse(text.value), std::move(text.diagnostics)};
}

}  // namespace nflens::nft
