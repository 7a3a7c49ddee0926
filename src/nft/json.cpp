// SPDX-License-Identifier: MIT
// The nft AST as JSON (json.hpp): nflens' own form, one object per node with a "kind" and the node's
// fields under their AST names, decoded values (numbers, addresses, milliseconds) and a "location" on
// every node that has a span. This is not libnftables' schema (`nft -j`), which is `convert --to
// nft-json`.

#include <nflens/json.hpp>
#include <nflens/nft.hpp>

namespace nflens::nft {

// The numbers and pointers of compact nodes (`unaligned<T>`) serialize as their value (found by nlohmann
// through ADL).
template <class T>
void to_json(nlohmann::json& j, const unaligned<T>& v) {
  j = v.get();
}

namespace {

using json = nlohmann::json;

std::string str(std::string_view s) { return std::string(s); }

json where(const source* file, span s) {
  if (file == nullptr) return nullptr;
  const location at = file->locate(s);
  return {{"line", at.line}, {"column", at.column}, {"offset", s.offset}, {"length", s.length}};
}

template <class Bits, class E>
json flag_list(Bits bits, std::initializer_list<std::pair<E, const char*>> names) {
  json a = json::array();
  for (const auto& [f, n] : names)
    if (bits & static_cast<Bits>(f)) a.push_back(n);
  return a;
}

json priority_json(const priority& p, family f) {
  json j{{"name", p.name == priority_name::numeric ? json(nullptr) : json(str(name(p.name)))}, {"offset", p.offset}};
  if (const auto v = priority_value(p, f)) j["value"] = *v;
  return j;
}

/// Writes nodes whose spans are relative to `file`.
struct writer {
  const source* file = nullptr;
  family fam = family::ip;

  /// The source a node's spans refer to: its own `file` (a ruleset's chains, rules and elements), else
  /// this writer's (that of the command or table that holds a script's).
  template <class N>
  const source* file_of(const N& n) const noexcept {
    if constexpr (requires { n.file; })
      return n.file != nullptr ? n.file : file;
    else
      return file;
  }

  json loc(span s) const { return where(file, s); }

  // --- expressions ---------------------------------------------------------------------------------

  json ex(const expr* e) const { return e == nullptr ? json(nullptr) : ex(*e); }
  json ex(const expr& e) const {
    json j = std::visit([&](const auto& v) { return node(v); }, e.value);
    j["location"] = loc(e.where);
    return j;
  }
  json list(std::span<const expr> items) const {
    json a = json::array();
    for (const auto& i : items) a.push_back(ex(i));
    return a;
  }

  static json k(const char* kind) { return json{{"kind", kind}}; }

  json node(const integer_expr& v) const { return {{"kind", "integer"}, {"value", v.value}}; }
  json node(const address_expr& v) const { return {{"kind", "address"}, {"value", to_string(v.address())}}; }
  json node(const ether_address_expr& v) const {
    std::string s;
    for (std::size_t i = 0; i < v.bytes.size(); ++i) {
      static constexpr char hex[] = "0123456789abcdef";
      if (i != 0) s += ':';
      s += hex[v.bytes[i] >> 4];
      s += hex[v.bytes[i] & 15];
    }
    return {{"kind", "ether_address"}, {"value", s}};
  }
  json node(const time_expr& v) const { return {{"kind", "time"}, {"milliseconds", v.milliseconds}}; }
  json node(const symbol_expr& v) const { return {{"kind", "symbol"}, {"name", str(v.name)}}; }
  json node(const string_expr& v) const { return {{"kind", "string"}, {"value", str(v.text)}}; }
  json node(const boolean_expr& v) const { return {{"kind", "boolean"}, {"value", v.value}}; }
  json node(const wildcard_expr&) const { return k("wildcard"); }
  json node(const prefix_expr& v) const { return {{"kind", "prefix"}, {"value", ex(v.value)}, {"length", v.length}}; }
  json node(const range_expr& v) const { return {{"kind", "range"}, {"low", ex(v.low())}, {"high", ex(v.high())}}; }
  json node(const binop_expr& v) const {
    return {{"kind", "binop"}, {"op", str(name(v.op))}, {"left", ex(v.left())}, {"right", ex(v.right())}};
  }
  json node(const concat_expr& v) const { return {{"kind", "concat"}, {"items", list(v.items)}}; }
  json node(const list_expr& v) const { return {{"kind", "list"}, {"items", list(v.items)}}; }
  json node(const set_expr& v) const { return {{"kind", "set"}, {"elements", elements(v.elements)}}; }
  json node(const set_ref_expr& v) const { return {{"kind", "set_ref"}, {"name", str(v.name)}}; }
  json node(const map_expr& v) const { return {{"kind", "map"}, {"key", ex(v.key())}, {"mapping", ex(v.mapping())}}; }
  json node(const verdict_expr& v) const {
    json j{{"kind", "verdict"}, {"verdict", str(name(v.kind))}};
    if (v.kind == verdict::jump || v.kind == verdict::goto_) j["chain"] = str(v.chain);
    return j;
  }
  json node(const payload_expr& v) const {
    json j{{"kind", "payload"}, {"protocol", str(name(v.protocol))}};
    const auto f = field_name(v.protocol, v.field);
    j["field"] = f.empty() ? json(nullptr) : json(str(f));
    switch (v.protocol) {
      case header::tcp_option:
      case header::ip_option:
      case header::sctp_chunk:
      case header::dccp_option: {
        j["option"] = v.option;
        const auto n = option_name(v.protocol, v.option);
        if (!n.empty()) j["option_name"] = str(n);
        break;
      }
      case header::exthdr:
        j["header"] = str(name(static_cast<header>(v.option)));
        break;
      case header::raw:
        j["base"] = str(name(v.base));
        break;
      default:
        break;
    }
    if (v.index != 0) j["index"] = v.index;
    if (v.inner != tunnel::none) j["tunnel"] = str(name(v.inner));
    if (v.protocol == header::raw || v.length != 0) {
      j["offset"] = v.offset;
      j["length"] = v.length;
    }
    return j;
  }
  json node(const meta_expr& v) const { return {{"kind", "meta"}, {"key", str(name(v.key))}}; }
  json node(const ct_expr& v) const {
    json j{{"kind", "ct"}, {"key", str(name(v.key))}};
    if (v.direction != ct_direction::none) j["direction"] = str(name(v.direction));
    if (v.protocol != nfproto::none) j["family"] = str(name(v.protocol));
    return j;
  }
  json node(const fib_expr& v) const {
    return {{"kind", "fib"},
            {"flags", flag_list(v.flags, {std::pair{fib_flag::saddr, "saddr"}, std::pair{fib_flag::daddr, "daddr"},
                                          std::pair{fib_flag::mark, "mark"}, std::pair{fib_flag::iif, "iif"},
                                          std::pair{fib_flag::oif, "oif"}})},
            {"result", str(name(v.result))}};
  }
  json node(const rt_expr& v) const {
    json j{{"kind", "rt"}, {"key", str(name(v.key))}};
    if (v.protocol != nfproto::none) j["family"] = str(name(v.protocol));
    return j;
  }
  json node(const socket_expr& v) const {
    json j{{"kind", "socket"}, {"key", str(name(v.key))}};
    if (v.key == socket_key::cgroupv2) j["level"] = v.level;
    return j;
  }
  json node(const osf_expr& v) const {
    return {{"kind", "osf"},
            {"key", str(name(v.key))},
            {"ttl", v.ttl == osf_ttl::loose  ? "loose"
                    : v.ttl == osf_ttl::skip ? "skip"
                                             : "check"}};
  }
  json node(const ipsec_expr& v) const {
    json j{{"kind", "ipsec"},
           {"direction", v.direction == ipsec_direction::in ? "in" : "out"},
           {"key", str(name(v.key))},
           {"spnum", v.spnum}};
    if (v.protocol != nfproto::none) j["family"] = str(name(v.protocol));
    return j;
  }
  json node(const numgen_expr& v) const {
    return {{"kind", "numgen"}, {"type", str(name(v.type))}, {"modulus", v.modulus}, {"offset", v.offset}};
  }
  json node(const hash_expr& v) const {
    json j{{"kind", str(name(v.spec->kind))}, {"modulus", v.spec->modulus}, {"offset", v.spec->offset}};
    if (v.spec->kind == hash_kind::jhash) j["key"] = ex(v.spec->key);
    if (v.spec->has_seed) j["seed"] = v.spec->seed;
    return j;
  }
  json node(const tunnel_expr& v) const {
    return {{"kind", "tunnel"}, {"key", v.key == tunnel_key::path ? "path" : "id"}};
  }

  // --- elements and statements ---------------------------------------------------------------------

  template <class E>
  json element(const E& el) const {
    writer w{file_of(el), fam};
    json j{{"key", w.ex(el.key)}};
    if (el.data != nullptr) j["data"] = w.ex(el.data);
    if (const auto* o = el.options) {
      if (o->has_timeout) j["timeout_ms"] = o->timeout_ms;
      if (o->has_expires) j["expires_ms"] = o->expires_ms;
      if (!o->comment.empty()) j["comment"] = str(o->comment);
      if (!o->stmts.empty()) j["statements"] = w.stmts(o->stmts);
    }
    j["location"] = w.loc(el.where);
    return j;
  }
  template <class Elements>
  json elements(const Elements& els) const {
    json a = json::array();
    for (const auto& el : els) a.push_back(element(el));
    return a;
  }

  json stmts(std::span<const nft::stmt> ss) const {
    json a = json::array();
    for (const auto& s : ss) a.push_back(st(s));
    return a;
  }
  json st(const nft::stmt& s) const {
    json j = std::visit([&](const auto& v) { return snode(v); }, s.value);
    j["location"] = loc(s.where);
    return j;
  }

  json snode(const match_stmt& v) const {
    json j{{"kind", "match"}, {"left", ex(v.left)}, {"right", ex(v.right)}};
    j["op"] = v.op == relational_op::implicit ? json(nullptr) : json(str(name(v.op)));
    if (v.flag_syntax) j["flag_syntax"] = true;
    return j;
  }
  json snode(const verdict_stmt& v) const {
    json j{{"kind", "verdict"}, {"verdict", str(name(v.kind))}};
    if (v.kind == verdict::jump || v.kind == verdict::goto_) j["chain"] = str(v.chain);
    return j;
  }
  json snode(const anonymous_chain_stmt& v) const {
    json j{{"kind", "anonymous_chain"}, {"verdict", str(name(v.kind))}};
    if (v.body != nullptr) j["rules"] = rules(v.body->rules);
    return j;
  }
  json snode(const verdict_map_stmt& v) const {
    return {{"kind", "verdict_map"}, {"key", ex(v.key)}, {"mapping", ex(v.mapping)}};
  }
  json snode(const mangle_stmt& v) const {
    return {{"kind", "mangle"}, {"target", ex(v.target)}, {"value", ex(v.value)}};
  }
  static json counter_json(const counter_stmt& v) {
    json j{{"kind", "counter"}};
    if (v.has_values) {
      j["packets"] = v.packets;
      j["bytes"] = v.bytes;
    }
    return j;
  }
  json snode(const counter_stmt& v) const { return counter_json(v); }
  static json limit_json(const limit_stmt& v) {
    json j{{"kind", "limit"},  {"rate", v.rate}, {"unit", str(name(v.unit))},
           {"bytes", v.bytes}, {"over", v.over}, {"burst", v.burst}};
    if (!v.has_burst) j.erase("burst");
    return j;
  }
  json snode(const limit_stmt& v) const { return limit_json(v); }
  static json quota_json(const quota_stmt& v) {
    json j{{"kind", "quota"}, {"bytes", v.bytes}, {"over", v.over}};
    if (v.has_used) j["used"] = v.used;
    return j;
  }
  json snode(const quota_stmt& v) const { return quota_json(v); }
  json snode(const connlimit_stmt& v) const { return {{"kind", "ct_count"}, {"count", v.count}, {"over", v.over}}; }
  json snode(const last_stmt& v) const {
    json j{{"kind", "last"}};
    j["used_ms"] = v.has_used ? json(v.used_ms) : json(nullptr);
    return j;
  }
  json snode(const log_stmt& v) const {
    json j{{"kind", "log"}};
    if (v.prefix != nullptr) j["prefix"] = ex(v.prefix);
    if (v.present & 1) j["level"] = str(name(v.level));
    if (v.present & 2) j["group"] = v.group;
    if (v.present & 4) j["snaplen"] = v.snaplen;
    if (v.present & 8) j["queue_threshold"] = v.queue_threshold;
    if (v.flags != 0)
      j["flags"] = flag_list(
          v.flags, {std::pair{log_flag::tcp_sequence, "tcp sequence"}, std::pair{log_flag::tcp_options, "tcp options"},
                    std::pair{log_flag::ip_options, "ip options"}, std::pair{log_flag::skuid, "skuid"},
                    std::pair{log_flag::ether, "ether"}});
    return j;
  }
  json snode(const reject_stmt& v) const {
    json j{{"kind", "reject"}};
    if (v.type != reject_type::unspecified) j["type"] = str(name(v.type));
    if (v.code != nullptr) j["code"] = ex(v.code);
    return j;
  }
  json snode(const nat_stmt& v) const {
    json j{{"kind", str(name(v.kind))}};
    if (v.protocol != nfproto::none) j["family"] = str(name(v.protocol));
    static constexpr const char* modes[] = {nullptr, "addr_port", "interval", "prefix"};
    if (v.mode != nat_mode::plain) j["mode"] = modes[static_cast<int>(v.mode)];
    if (v.address != nullptr) j["address"] = ex(v.address);
    if (v.port != nullptr) j["port"] = ex(v.port);
    if (v.flags != 0)
      j["flags"] =
          flag_list(v.flags, {std::pair{nat_flag::random, "random"}, std::pair{nat_flag::fully_random, "fully-random"},
                              std::pair{nat_flag::persistent, "persistent"}});
    return j;
  }
  json snode(const tproxy_stmt& v) const {
    json j{{"kind", "tproxy"}};
    if (v.protocol != nfproto::none) j["family"] = str(name(v.protocol));
    if (v.address != nullptr) j["address"] = ex(v.address);
    if (v.port != nullptr) j["port"] = ex(v.port);
    return j;
  }
  json snode(const queue_stmt& v) const {
    json j{{"kind", "queue"}, {"number", ex(v.number)}};
    if (v.flags != 0)
      j["flags"] =
          flag_list(v.flags, {std::pair{queue_flag::bypass, "bypass"}, std::pair{queue_flag::fanout, "fanout"}});
    return j;
  }
  json snode(const dup_stmt& v) const {
    return {{"kind", "dup"}, {"address", ex(v.address)}, {"device", ex(v.device)}};
  }
  json snode(const fwd_stmt& v) const {
    json j{{"kind", "fwd"}, {"address", ex(v.address)}, {"device", ex(v.device)}};
    if (v.protocol != nfproto::none) j["family"] = str(name(v.protocol));
    return j;
  }
  json snode(const notrack_stmt&) const { return k("notrack"); }
  json snode(const set_stmt& v) const {
    json j{{"kind", "set"}, {"op", str(name(v.op))}, {"set", ex(v.set_ref)}};
    if (v.elem != nullptr) j["element"] = element(*v.elem);
    return j;
  }
  json snode(const meter_stmt& v) const {
    json j{{"kind", "meter"}, {"name", ex(v.name())}, {"size", v.size()}};
    if (v.elem() != nullptr) j["element"] = element(*v.elem());
    return j;
  }
  json snode(const flow_offload_stmt& v) const { return {{"kind", "flow_offload"}, {"flowtable", str(v.flowtable)}}; }
  json snode(const objref_stmt& v) const {
    return {{"kind", "object_ref"}, {"type", str(name(v.type))}, {"name", ex(v.name)}};
  }
  static json synproxy_json(const synproxy_stmt& v) {
    json j{{"kind", "synproxy"}};
    if (v.present & 1) j["mss"] = v.mss;
    if (v.present & 2) j["wscale"] = v.wscale;
    j["flags"] = flag_list(
        v.flags, {std::pair{synproxy_flag::timestamp, "timestamp"}, std::pair{synproxy_flag::sack_perm, "sack-perm"}});
    return j;
  }
  json snode(const synproxy_stmt& v) const { return synproxy_json(v); }
  json snode(const optstrip_stmt& v) const { return {{"kind", "optstrip"}, {"option", ex(v.option)}}; }
  json snode(const xt_stmt& v) const {
    return {{"kind", "xt"}, {"xt", str(name(v.kind))}, {"name", str(v.name)}, {"translatable", false}};
  }
  json snode(const unknown_stmt& v) const { return {{"kind", "unknown"}, {"text", str(v.text)}, {"modelled", false}}; }

  // --- declarations --------------------------------------------------------------------------------

  template <class R>
  json rule(const R& r) const {
    writer w{file_of(r), fam};
    json j{{"statements", w.stmts(r.stmts)}};
    if (!r.comment.empty()) j["comment"] = str(r.comment);
    if (r.handle != 0) j["handle"] = r.handle;
    j["location"] = w.loc(r.where);
    return j;
  }
  template <class Rules>
  json rules(const Rules& rs) const {
    json a = json::array();
    for (const auto& r : rs) a.push_back(rule(r));
    return a;
  }

  template <class C>
  json chain_info_json(const C& c) const {
    writer w{file_of(c), fam};
    json j{{"name", str(c.name)}};
    if (c.handle != 0) j["handle"] = c.handle;
    if (c.base != nullptr) {
      const base_chain& b = *c.base;
      json base{
          {"type", str(name(b.type))}, {"hook", str(name(b.hook_point))}, {"priority", priority_json(b.prio, fam)}};
      if (!b.devices.empty()) {
        json d = json::array();
        for (const auto dev : b.devices) d.push_back(str(dev));
        base["devices"] = d;
      }
      j["base"] = base;
    }
    if (c.policy != chain_policy::unspecified) j["policy"] = str(name(c.policy));
    if (!c.comment.empty()) j["comment"] = str(c.comment);
    if (c.offload) j["offload"] = true;
    j["location"] = w.loc(c.where);
    return j;
  }
  template <class C>
  json chain(const C& c) const {
    json j = chain_info_json(c);
    j["rules"] = writer{file_of(c), fam}.rules(c.rules);
    return j;
  }

  json set_type_json(const set_type& t) const {
    json j;
    if (t.typeof_expr != nullptr) {
      j["typeof"] = ex(t.typeof_expr);
    } else if (t.object) {
      j["object"] = str(name(*t.object));
    } else {
      json a = json::array();
      for (const auto n : t.names) a.push_back(str(n));
      j["type"] = a;
    }
    if (t.interval) j["interval"] = true;
    return j;
  }
  template <class S>
  json set(const S& s) const {
    writer w{s.file != nullptr ? s.file : file, fam};
    json j{{"name", str(s.name)}, {"map", s.is_map}, {"key", w.set_type_json(s.key)}};
    if (s.is_map) j["data"] = w.set_type_json(s.data);
    if (s.handle != 0) j["handle"] = s.handle;
    j["flags"] =
        flag_list(s.flags, {std::pair{set_flag::constant, "constant"}, std::pair{set_flag::interval, "interval"},
                            std::pair{set_flag::timeout, "timeout"}, std::pair{set_flag::dynamic, "dynamic"}});
    if (s.has_timeout) j["timeout_ms"] = s.timeout_ms;
    if (s.has_gc_interval) j["gc_interval_ms"] = s.gc_interval_ms;
    if (s.size != 0) j["size"] = s.size;
    if (s.policy != set_policy::unspecified) j["policy"] = str(name(s.policy));
    if (s.auto_merge) j["auto_merge"] = true;
    if (!s.comment.empty()) j["comment"] = str(s.comment);
    if (!s.stmts.empty()) j["statements"] = w.stmts(s.stmts);
    j["elements"] = w.elements(s.elements);
    j["location"] = w.loc(s.where);
    return j;
  }

  json flowtable(const nft::flowtable& f) const {
    writer w{f.file != nullptr ? f.file : file, fam};
    json j{{"name", str(f.name)}};
    if (f.handle != 0) j["handle"] = f.handle;
    if (f.has_hook) {
      j["hook"] = str(name(f.hook_point));
      j["priority"] = priority_json(f.prio, family::netdev);
    }
    json d = json::array();
    for (const auto dev : f.devices) d.push_back(str(dev));
    j["devices"] = d;
    if (f.counter) j["counter"] = true;
    if (f.offload) j["offload"] = true;
    j["location"] = w.loc(f.where);
    return j;
  }

  json object(const nft::object& o) const {
    writer w{o.file != nullptr ? o.file : file, fam};
    json j{{"type", str(name(o.type))}, {"name", str(o.name)}};
    if (o.handle != 0) j["handle"] = o.handle;
    if (!o.comment.empty()) j["comment"] = str(o.comment);
    std::visit(
        [&](const auto& b) {
          using T = std::decay_t<decltype(b)>;
          if constexpr (std::is_same_v<T, counter_stmt>)
            j["body"] = counter_json(b);
          else if constexpr (std::is_same_v<T, quota_stmt>)
            j["body"] = quota_json(b);
          else if constexpr (std::is_same_v<T, limit_stmt>)
            j["body"] = limit_json(b);
          else if constexpr (std::is_same_v<T, synproxy_stmt>)
            j["body"] = synproxy_json(b);
          else if constexpr (std::is_same_v<T, ct_helper_object>) {
            j["body"] = {{"helper", str(b.type)}, {"protocol", str(b.protocol)}};
            if (b.l3proto) j["body"]["l3proto"] = str(name(*b.l3proto));
          } else if constexpr (std::is_same_v<T, ct_timeout_object>) {
            json p = json::object();
            for (const auto& s : b.policy) p[str(s.state)] = s.value_ms;
            j["body"] = {{"protocol", str(b.protocol)}, {"policy_ms", p}};
            if (b.l3proto) j["body"]["l3proto"] = str(name(*b.l3proto));
          } else if constexpr (std::is_same_v<T, ct_expectation_object>) {
            j["body"] = {
                {"protocol", str(b.protocol)}, {"dport", b.dport}, {"timeout_ms", b.timeout_ms}, {"size", b.size}};
            if (b.l3proto) j["body"]["l3proto"] = str(name(*b.l3proto));
          } else if constexpr (std::is_same_v<T, secmark_object>)
            j["body"] = {{"context", str(b.context)}};
          else if constexpr (std::is_same_v<T, unknown_object>)
            j["body"] = {{"text", str(b.text)}, {"modelled", false}};
        },
        o.body);
    j["location"] = w.loc(o.where);
    return j;
  }

  json table_info_json(const nft::table_info& t) const {
    json j{{"family", str(name(t.fam))}, {"name", str(t.name)}};
    if (t.handle != 0) j["handle"] = t.handle;
    j["flags"] = flag_list(t.flags, {std::pair{table_flag::dormant, "dormant"}, std::pair{table_flag::owner, "owner"},
                                     std::pair{table_flag::persist, "persist"}});
    if (!t.comment.empty()) j["comment"] = str(t.comment);
    j["location"] = where(t.file != nullptr ? t.file : file, t.where);
    return j;
  }
  template <class T>
  json table(const T& t) const {
    writer w{t.file != nullptr ? t.file : file, t.fam};
    json j = w.table_info_json(t);
    json sets = json::array(), chains = json::array(), fts = json::array(), objs = json::array();
    for (const auto& s : t.sets) sets.push_back(w.set(s));
    for (const auto& f : t.flowtables) fts.push_back(w.flowtable(f));
    for (const auto& o : t.objects) objs.push_back(w.object(o));
    for (const auto& c : t.chains) chains.push_back(w.chain(c));
    j["objects"] = objs;
    j["sets"] = sets;
    j["flowtables"] = fts;
    j["chains"] = chains;
    return j;
  }

  json command(const nft::command& c) const {
    writer w{c.file != nullptr ? c.file : file, c.fam};
    json j{{"verb", str(name(c.verb))}, {"object", str(name(c.what))}};
    if (c.what == command_object::object) j["type"] = str(name(c.obj));
    if (c.what != command_object::other && c.what != command_object::ruleset) {
      j["family"] = str(name(c.fam));
      j["family_written"] = c.family_written;
      if (!c.table_name.empty()) j["table"] = str(c.table_name);
    } else if (c.what == command_object::ruleset && c.family_written) {
      j["family"] = str(name(c.fam));
    }
    if (!c.name.empty()) j["name"] = str(c.name);
    if (c.handle != 0) j["handle"] = c.handle;
    if (c.position_kind != rule_position::none) {
      static constexpr const char* kinds[] = {nullptr, "position", "handle", "index"};
      j["position"] = {{"kind", kinds[static_cast<int>(c.position_kind)]}, {"value", c.position}};
    }
    if (!c.new_name.empty()) j["new_name"] = str(c.new_name);
    std::visit(
        [&](const auto& b) {
          using T = std::decay_t<decltype(b)>;
          if constexpr (std::is_same_v<T, const nft::table*>)
            j["table_block"] = w.table(*b);
          else if constexpr (std::is_same_v<T, const nft::chain*>)
            j["chain"] = w.chain(*b);
          else if constexpr (std::is_same_v<T, const nft::rule*>)
            j["rule"] = w.rule(*b);
          else if constexpr (std::is_same_v<T, const nft::set*>)
            j["set"] = w.set(*b);
          else if constexpr (std::is_same_v<T, std::span<const nft::element>>)
            j["elements"] = w.elements(b);
          else if constexpr (std::is_same_v<T, const nft::flowtable*>)
            j["flowtable"] = w.flowtable(*b);
          else if constexpr (std::is_same_v<T, const nft::object*>)
            j["object_decl"] = w.object(*b);
        },
        c.body);
    j["location"] = w.loc(c.where);
    return j;
  }
};

}  // namespace

void to_json(nlohmann::json& j, const script& s) {
  json cmds = json::array();
  const writer w;
  for (const auto& c : s.commands) cmds.push_back(w.command(c));
  j = json{{"format", "nft"}, {"commands", std::move(cmds)}};
}

void to_json(nlohmann::json& j, const ruleset& r) {
  json tables = json::array();
  const writer w;
  for (const auto& t : r.tables) tables.push_back(w.table(t));
  j = json{{"format", "nft"}, {"tables", std::move(tables)}};
}

void to_json(nlohmann::json& j, const ruleset_rule& r) { j = writer{r.file, family::ip}.rule(r); }

}  // namespace nflens::nft
