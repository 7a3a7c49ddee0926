// SPDX-License-Identifier: MIT
#pragma once

// Hand-built dispatch programs for the graph tests: chains and rules written as C++ calls, laid out the
// way the backends lower their ASTs. Every rule and element gets an origin on its own line of a
// generated source text, so reports and quotes have real file:line positions.

#include "graph/dispatch.hpp"

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace nflens::test {

namespace d = nflens::dispatch;

inline ip_prefix pfx(std::string_view t) {
  auto p = parse_ip_prefix(t);
  if (!p) throw std::runtime_error("bad prefix in test: " + std::string(t));
  return *p;
}
inline ip_address addr(std::string_view t) {
  auto a = parse_ip_address(t);
  if (!a) throw std::runtime_error("bad address in test: " + std::string(t));
  return *a;
}

/// A condition before its values are placed.
struct cond {
  d::condition c;
  std::vector<d::value> values;
  std::string set_name;
};

inline cond daddr(std::string_view p, bool neg = false) {
  cond x;
  x.c.kind = d::cond_kind::addr;
  x.c.what = d::field::daddr;
  x.c.negated = neg;
  d::value v;
  v.prefix = pfx(p);
  x.values.push_back(v);
  return x;
}
inline cond saddr(std::string_view p, bool neg = false) {
  auto x = daddr(p, neg);
  x.c.what = d::field::saddr;
  return x;
}
inline cond dst_local(bool neg = false) {
  cond x;
  x.c.kind = d::cond_kind::addr_local;
  x.c.what = d::field::daddr;
  x.c.negated = neg;
  return x;
}
inline cond src_local() {
  auto x = dst_local();
  x.c.what = d::field::saddr;
  return x;
}
inline cond proto(l4_protocol p) {
  cond x;
  x.c.kind = d::cond_kind::protocol;
  x.c.what = d::field::l4proto;
  d::value v;
  v.k = d::value::kind::protocol;
  v.proto = p;
  x.values.push_back(v);
  return x;
}
inline cond dport(std::uint16_t p) {
  cond x;
  x.c.kind = d::cond_kind::port;
  x.c.what = d::field::dport;
  d::value v;
  v.k = d::value::kind::ports;
  v.ports = {p, p};
  x.values.push_back(v);
  return x;
}
inline cond random(double printed) {
  cond x;
  x.c.kind = d::cond_kind::random;
  x.c.threshold = statistic_threshold(printed);
  return x;
}
inline cond recent_check(std::string_view list, std::uint32_t seconds) {
  cond x;
  x.c.kind = d::cond_kind::recent_check;
  x.c.what = d::field::saddr;
  x.c.a = seconds;
  x.c.name = list;
  return x;
}
/// iptables `-m recent --set --name LIST --rsource`.
inline cond recent_set(std::string_view list) {
  cond x;
  x.c.kind = d::cond_kind::recent_set;
  x.c.what = d::field::saddr;
  x.c.name = list;
  return x;
}
inline cond in_set(d::field f, std::string name, bool neg = false) {
  cond x;
  x.c.kind = d::cond_kind::addr_set;
  x.c.what = f;
  x.c.negated = neg;
  x.set_name = std::move(name);
  return x;
}
inline cond ct_state(std::uint32_t bits, bool neg = false) {
  cond x;
  x.c.kind = d::cond_kind::ct_state;
  x.c.a = bits;
  x.c.negated = neg;
  return x;
}

/// An action before chain names are resolved.
struct act {
  d::action a;
  std::string target;  // chain name, or map name for vmaps
  std::string inline_map;
};

inline act jump(std::string t) {
  act x;
  x.a.kind = d::action_kind::jump;
  x.target = std::move(t);
  return x;
}
inline act go_to(std::string t) {
  auto x = jump(std::move(t));
  x.a.kind = d::action_kind::go_to;
  return x;
}
inline act verdict(d::action_kind k) {
  act x;
  x.a.kind = k;
  return x;
}
inline act dnat(std::string_view a, int port = -1) {
  act x;
  x.a.kind = d::action_kind::dnat;
  x.a.addr = addr(a);
  x.a.has_addr = true;
  if (port >= 0) {
    x.a.has_port = true;
    x.a.ports = {static_cast<std::uint16_t>(port), static_cast<std::uint16_t>(port)};
  }
  return x;
}
/// MARK --or-mark BITS; with a `mask`, --set-xmark BITS/MASK.
inline act mark(std::uint32_t bits, std::optional<std::uint32_t> mask = std::nullopt) {
  act x;
  x.a.kind = d::action_kind::mark_set;
  x.a.mark = bits;
  x.a.mark_mask = mask.value_or(bits);
  return x;
}
inline act vmap(std::string map, std::vector<d::field> key) {
  act x;
  x.a.kind = d::action_kind::vmap;
  x.a.key = std::move(key);
  x.target = std::move(map);
  return x;
}
/// nft `update @set { ip saddr }`: records the client in a (dynamic) set.
inline act set_update(std::string set) {
  act x;
  x.a.kind = d::action_kind::set_update;
  x.target = std::move(set);
  return x;
}
inline act numgen(std::string map, std::uint32_t mod) {
  act x;
  x.a.kind = d::action_kind::numgen_vmap;
  x.a.modulus = mod;
  x.target = std::move(map);
  return x;
}

/// One verdict map element: key values and verdict ("goto X", "jump X", "drop", "reject", "accept").
struct elem {
  std::vector<d::value> key;
  std::string verdict;
  std::string comment;
};
inline d::value kaddr(std::string_view p) {
  d::value v;
  v.prefix = pfx(p);
  return v;
}
inline d::value kproto(l4_protocol p) {
  d::value v;
  v.k = d::value::kind::protocol;
  v.proto = p;
  return v;
}
inline d::value kport(std::uint16_t p) {
  d::value v;
  v.k = d::value::kind::ports;
  v.ports = {p, p};
  return v;
}
inline d::value knum(std::uint32_t lo, std::uint32_t hi) {
  d::value v;
  v.k = d::value::kind::number;
  v.lo = lo;
  v.hi = hi;
  return v;
}

class program_builder {
 public:
  explicit program_builder(std::string backend = "iptables") { p_.backend = std::move(backend); }

  program_builder& chain(const std::string& name, d::table_kind t = d::table_kind::nat, d::hook h = d::hook::none,
                         int prio = 0) {
    chains_.push_back({name, t, h, prio, {}});
    return *this;
  }
  program_builder& rule(const std::string& chain_name, std::vector<cond> cs, act a, std::string comment = {}) {
    for (auto& c : chains_)
      if (c.name == chain_name) {
        c.rules.push_back({std::move(cs), std::move(a), std::move(comment)});
        return *this;
      }
    throw std::runtime_error("no chain " + chain_name);
  }
  program_builder& map(const std::string& name, std::vector<d::field> key, std::vector<elem> es) {
    maps_.push_back({name, std::move(key), std::move(es)});
    return *this;
  }
  program_builder& set(const std::string& name, std::vector<std::string> prefixes, bool dynamic = false,
                       std::uint32_t timeout = 0) {
    sets_.push_back({name, std::move(prefixes), dynamic, timeout});
    return *this;
  }
  program_builder& entry(const std::string& chain_name, d::stage st = d::stage::nat, bool fallback = false) {
    entries_.push_back({chain_name, st, fallback});
    return *this;
  }
  program_builder& cluster_ip_set(std::string name) {
    cluster_set_ = std::move(name);
    return *this;
  }
  program_builder& cluster_ip_chain(std::string name) {
    cluster_chain_ = std::move(name);
    return *this;
  }

  /// Lays everything out; the source text has one line per chain, rule, set, map and element.
  d::program build() {
    std::string text;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> spans;  // per origin
    std::vector<origin_kind> kinds;
    auto add_origin = [&](const std::string& line, origin_kind k) {
      spans.emplace_back(static_cast<std::uint32_t>(text.size()), static_cast<std::uint32_t>(line.size()));
      kinds.push_back(k);
      text += line;
      text += '\n';
      return static_cast<d::index>(spans.size() - 1);
    };
    std::map<std::string, d::index> chain_ix, map_ix, set_ix;
    for (std::size_t i = 0; i < chains_.size(); ++i) chain_ix[chains_[i].name] = static_cast<d::index>(i);
    // sets
    for (auto& s : sets_) {
      d::set st;
      st.name = store(s.name);
      st.origin = add_origin("set " + s.name, origin_kind::set);
      st.first = static_cast<d::index>(p_.values.size());
      for (auto& x : s.prefixes) p_.values.push_back(kaddr(x));
      st.count = static_cast<d::index>(s.prefixes.size());
      st.dynamic = s.dynamic;
      st.timeout_s = s.timeout;
      set_ix[s.name] = static_cast<d::index>(p_.sets.size());
      p_.sets.push_back(st);
    }
    auto verdict_of = [&](const std::string& v) {
      d::verdict r;
      auto sp = v.find(' ');
      std::string word = v.substr(0, sp);
      if (word == "goto" || word == "jump") {
        r.kind = word == "goto" ? d::action_kind::go_to : d::action_kind::jump;
        auto name = v.substr(sp + 1);
        r.target_name = store(name);
        auto it = chain_ix.find(name);
        r.target = it == chain_ix.end() ? d::none : it->second;
      } else if (word == "drop") {
        r.kind = d::action_kind::drop;
      } else if (word == "reject") {
        r.kind = d::action_kind::reject;
      } else if (word == "accept") {
        r.kind = d::action_kind::accept;
      } else if (word == "return") {
        r.kind = d::action_kind::ret;
      }
      return r;
    };
    auto add_map = [&](const std::string& name, const std::vector<d::field>& key, const std::vector<elem>& es) {
      d::map m;
      m.name = store(name);
      m.origin = add_origin("map " + name, origin_kind::map);
      m.key = key;
      m.first = static_cast<d::index>(p_.elements.size());
      for (auto& e : es) {
        d::element el;
        el.first = static_cast<d::index>(p_.values.size());
        for (auto& v : e.key) p_.values.push_back(v);
        el.count = static_cast<std::uint8_t>(e.key.size());
        el.result = verdict_of(e.verdict);
        el.comment = store(e.comment);
        el.origin = add_origin("element of " + name + " : " + e.verdict, origin_kind::map_element);
        p_.elements.push_back(el);
      }
      m.count = static_cast<d::index>(es.size());
      p_.maps.push_back(m);
      return static_cast<d::index>(p_.maps.size() - 1);
    };
    for (auto& m : maps_) map_ix[m.name] = add_map(m.name, m.key, m.elems);
    for (auto& c : chains_) {
      d::chain ch;
      ch.name = store(c.name);
      ch.table = c.table;
      ch.at = c.at;
      ch.priority = c.prio;
      ch.origin = add_origin("chain " + c.name, origin_kind::chain);
      ch.first = static_cast<d::index>(p_.rules.size());
      int n = 0;
      for (auto& r : c.rules) {
        d::rule ru;
        ru.origin = add_origin("-A " + c.name + " rule " + std::to_string(++n), origin_kind::rule);
        ru.first = static_cast<d::index>(p_.conditions.size());
        for (auto& x : r.conds) {
          d::condition cd = x.c;
          cd.name = store(std::string(cd.name));
          if (!x.values.empty()) {
            cd.first = static_cast<d::index>(p_.values.size());
            cd.count = static_cast<d::index>(x.values.size());
            for (auto& v : x.values) p_.values.push_back(v);
          }
          if (!x.set_name.empty()) {
            cd.name = store(x.set_name);
            auto it = set_ix.find(x.set_name);
            cd.set = it == set_ix.end() ? d::none : it->second;
          }
          p_.conditions.push_back(cd);
        }
        ru.count = static_cast<d::index>(r.conds.size());
        ru.act = r.a.a;
        ru.comment = store(r.comment);
        if (ru.act.kind == d::action_kind::jump || ru.act.kind == d::action_kind::go_to) {
          ru.act.target_name = store(r.a.target);
          auto it = chain_ix.find(r.a.target);
          ru.act.target = it == chain_ix.end() ? d::none : it->second;
        } else if (ru.act.kind == d::action_kind::set_update) {
          auto it = set_ix.find(r.a.target);
          ru.act.set = it == set_ix.end() ? d::none : it->second;
        } else if (ru.act.kind == d::action_kind::vmap || ru.act.kind == d::action_kind::numgen_vmap) {
          ru.act.target_name = store(r.a.target);
          auto it = map_ix.find(r.a.target);
          ru.act.map = it == map_ix.end() ? d::none : it->second;
        }
        p_.rules.push_back(ru);
      }
      ch.count = static_cast<d::index>(c.rules.size());
      p_.chains.push_back(ch);
    }
    for (auto& e : entries_) {
      d::entry en{chain_ix.at(e.chain), e.st};
      (e.fallback ? p_.fallback_entries : p_.entries).push_back(en);
    }
    if (!cluster_set_.empty()) p_.cluster_ip_set = set_ix.at(cluster_set_);
    if (!cluster_chain_.empty()) p_.cluster_ip_chain = chain_ix.at(cluster_chain_);
    auto src = std::make_shared<source>("test.rules", text);
    p_.sources.push_back(src);
    for (std::size_t i = 0; i < spans.size(); ++i)
      p_.origins.push_back(origin{0, span{spans[i].first, spans[i].second}, kinds[i]});
    p_.structure.rules = static_cast<std::uint32_t>(p_.rules.size());
    p_.structure.chains = static_cast<std::uint32_t>(p_.chains.size());
    // Strings were stored in this builder; keep it (and them) alive with the program's source.
    keep_.push_back(src);
    return p_;
  }

 private:
  // Names outlive the builder (programs keep views of them): a pool for the test process.
  static std::string_view store(const std::string& s) {
    static std::deque<std::string> pool;
    pool.push_back(s);
    return pool.back();
  }
  struct rule_def {
    std::vector<cond> conds;
    act a;
    std::string comment;
  };
  struct chain_def {
    std::string name;
    d::table_kind table;
    d::hook at;
    int prio;
    std::vector<rule_def> rules;
  };
  struct map_def {
    std::string name;
    std::vector<d::field> key;
    std::vector<elem> elems;
  };
  struct set_def {
    std::string name;
    std::vector<std::string> prefixes;
    bool dynamic;
    std::uint32_t timeout;
  };
  struct entry_def {
    std::string chain;
    d::stage st;
    bool fallback;
  };
  d::program p_;
  std::vector<chain_def> chains_;
  std::vector<map_def> maps_;
  std::vector<set_def> sets_;
  std::vector<entry_def> entries_;
  std::string cluster_set_, cluster_chain_;
  std::vector<source_ptr> keep_;
};

}  // namespace nflens::test
