// SPDX-License-Identifier: MIT
// iptables → dispatch program: the filter and nat tables of an applied ruleset, rule by rule. Matches
// that decide where a new connection goes become typed conditions (addresses, protocol, ports,
// addrtype LOCAL, statistic, recent, conntrack state, marks, interfaces); counters and comments are
// no-ops; anything else is kept as an `opaque` condition (reported if it stands on a dispatch path).

#include "dispatch.hpp"

#include <nflens/iptables.hpp>
#include <nflens/iptables_modules.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <unordered_map>

namespace nflens {
namespace {

namespace d = dispatch;
using namespace nflens::iptables;

class lowering {
 public:
  lowering(const ruleset& rs, d::program& p) : rs_(rs), p_(p) {}

  void run() {
    p_.backend = "iptables";
    p_.family = rs_.family;
    p_.structure.backend = "iptables";
    for (const auto& s : rs_.sources) source_index(s);
    for (const auto& s : rs_.sources)
      if (s) {
        p_.structure.bytes += s->text().size();
        p_.structure.lines += s->line_count() - (s->text().empty() || s->text().back() == '\n' ? 1 : 0);
      }
    for (const auto& t : rs_.tables) {
      ++p_.structure.tables;
      p_.structure.chains += static_cast<std::uint32_t>(t.chains.size());
      p_.structure.rules += static_cast<std::uint32_t>(t.rules.size());
    }
    const table* nat = find_table(rs_, table_id::nat);
    const table* filter = find_table(rs_, table_id::filter);
    // raw and mangle run before NAT in PREROUTING and OUTPUT (their hook priorities -300 and -150): what
    // they drop, NAT never sees.
    const table* raw = find_table(rs_, table_id::raw);
    const table* mangle = find_table(rs_, table_id::mangle);
    // Chains first (so jumps resolve), then rules chain by chain.
    if (nat != nullptr) declare(*nat, d::table_kind::nat);
    if (filter != nullptr) declare(*filter, d::table_kind::filter);
    if (raw != nullptr) declare(*raw, d::table_kind::other);
    if (mangle != nullptr) declare(*mangle, d::table_kind::other);
    if (nat != nullptr) lower(*nat);
    if (filter != nullptr) lower(*filter);
    if (raw != nullptr) lower(*raw);
    if (mangle != nullptr) lower(*mangle);
    auto chain_of = [&](const table* t, std::string_view name) -> d::index {
      return t == nullptr ? d::none : find(t->id, name);
    };
    for (const table* t : {raw, mangle})
      for (const char* c : {"PREROUTING", "OUTPUT"}) add_entry(chain_of(t, c), d::stage::pre_dnat, false);
    for (const char* c : {"PREROUTING", "OUTPUT"}) add_entry(chain_of(nat, c), d::stage::nat, false);
    for (const char* c : {"INPUT", "FORWARD", "OUTPUT"}) add_entry(chain_of(filter, c), d::stage::post_dnat, false);
    // kube-proxy installs the hook jumps with `iptables -I`, not in its restore input: start from its entry
    // chains when no hook reaches them.
    add_entry(chain_of(nat, "KUBE-SERVICES"), d::stage::nat, true);
    add_entry(chain_of(nat, "KUBE-NODEPORTS"), d::stage::nat, true);
    for (const char* c : {"KUBE-SERVICES", "KUBE-EXTERNAL-SERVICES", "KUBE-PROXY-FIREWALL", "KUBE-NODEPORTS"})
      add_entry(chain_of(filter, c), d::stage::post_dnat, true);
    p_.cluster_ip_chain = chain_of(filter, "KUBE-SERVICES");
    p_.nodeport_chain = chain_of(nat, "KUBE-NODEPORTS");
  }

 private:
  using chain_map = std::unordered_map<std::string_view, d::index>;
  chain_map& chains_of(table_id t) {
    switch (t) {
      case table_id::nat:
        return nat_chains_;
      case table_id::raw:
        return raw_chains_;
      case table_id::mangle:
        return mangle_chains_;
      default:
        return filter_chains_;
    }
  }
  d::index find(table_id t, std::string_view name) {
    auto& m = chains_of(t);
    auto it = m.find(name);
    return it == m.end() ? d::none : it->second;
  }

  std::uint32_t source_index(const source_ptr& s) {
    auto it = source_ix_.find(s.get());
    if (it != source_ix_.end()) return it->second;
    const auto i = static_cast<std::uint32_t>(p_.sources.size());
    p_.sources.push_back(s);
    source_ix_.emplace(s.get(), i);
    return i;
  }

  d::index add_origin(const source* s, span where, origin_kind k) {
    if (s == nullptr) return d::none;
    std::uint32_t i = 0;
    if (auto it = source_ix_.find(s); it != source_ix_.end()) {
      i = it->second;
    } else if (auto owner = s->weak_from_this().lock()) {  // a source the ruleset does not list
      i = source_index(owner);
    } else {
      return d::none;
    }
    p_.origins.push_back(origin{i, where, k});
    return static_cast<d::index>(p_.origins.size() - 1);
  }

  void add_entry(d::index c, d::stage st, bool fallback) {
    if (c == d::none) return;
    (fallback ? p_.fallback_entries : p_.entries).push_back({c, st});
  }

  static d::hook hook_of(std::string_view n) {
    if (n == "PREROUTING") return d::hook::prerouting;
    if (n == "INPUT") return d::hook::input;
    if (n == "FORWARD") return d::hook::forward;
    if (n == "OUTPUT") return d::hook::output;
    if (n == "POSTROUTING") return d::hook::postrouting;
    return d::hook::none;
  }

  void declare(const table& t, d::table_kind k) {
    for (const auto& c : t.chains) {
      d::chain ch;
      ch.name = c.name;
      ch.table = k;
      ch.at = c.builtin ? hook_of(c.name) : d::hook::none;
      ch.policy = c.policy == chain_policy::drop ? d::action_kind::drop : d::action_kind::accept;
      ch.origin = add_origin(c.file, c.where, origin_kind::chain);
      // The chains kube-proxy writes in its restore input (the two canaries it and kubelet create with -N
      // are not rewritten).
      ch.written = !c.builtin && c.name.substr(0, 5) == "KUBE-" && c.name != "KUBE-KUBELET-CANARY" &&
                   c.name != "KUBE-PROXY-CANARY";
      chains_of(t.id).emplace(c.name, static_cast<d::index>(p_.chains.size()));
      p_.chains.push_back(ch);
    }
  }

  void lower(const table& t) {
    for (const auto& c : t.chains) {
      auto& ch = p_.chains[find(t.id, c.name)];
      ch.first = static_cast<d::index>(p_.rules.size());
      for (const auto& r : rules_of(t, c)) lower_rule(t, r);
      ch.count = static_cast<d::index>(p_.rules.size()) - ch.first;
    }
  }

  d::index add_values(std::initializer_list<d::value> vs) {
    const auto first = static_cast<d::index>(p_.values.size());
    for (const auto& v : vs) p_.values.push_back(v);
    return first;
  }

  void addr_cond(std::span<const address_match> ms, d::field f) {
    if (ms.empty()) return;
    // iptables applies `-s a,b` as one rule per address; a rule holds one, or several alike negated.
    d::condition c;
    c.kind = d::cond_kind::addr;
    c.what = f;
    c.negated = ms.front().negated;
    c.first = static_cast<d::index>(p_.values.size());
    for (const auto& m : ms) {
      const auto len = prefix_length(m.value);
      if (!len) {
        opaque(fmt::format("{} {}/{}", f == d::field::saddr ? "-s" : "-d", to_string(m.value.address),
                           to_string(m.value.mask)));
        return;
      }
      d::value v;
      v.prefix = ip_prefix{m.value.address, *len};
      p_.values.push_back(v);
    }
    c.count = static_cast<d::index>(ms.size());
    p_.conditions.push_back(c);
  }

  void opaque(std::string text) {
    d::condition c;
    c.kind = d::cond_kind::opaque;
    c.name = store(text);
    p_.conditions.push_back(c);
  }

  std::string_view store(const std::string& s) {
    texts_.push_back(s);
    return texts_.back();
  }

  void port_cond(d::field f, port_range r, bool negated) {
    d::condition c;
    c.kind = d::cond_kind::port;
    c.what = f;
    c.negated = negated;
    d::value v;
    v.k = d::value::kind::ports;
    v.ports = r;
    c.first = add_values({v});
    c.count = 1;
    p_.conditions.push_back(c);
  }

  static std::uint32_t ct_bits(std::uint16_t s) {
    std::uint32_t b = 0;
    if (s & iptables::ct_new) b |= d::ct_new;
    if (s & iptables::ct_established) b |= d::ct_established;
    if (s & iptables::ct_related) b |= d::ct_related;
    if (s & iptables::ct_invalid) b |= d::ct_invalid;
    if (s & iptables::ct_untracked) b |= d::ct_untracked;
    if (s & iptables::ct_snat) b |= d::ct_snat;
    if (s & iptables::ct_dnat) b |= d::ct_dnat;
    return b;
  }

  void lower_match(const match& m, d::rule& out) {
    d::condition c;
    switch (m.id) {
      case module_id::comment:
        if (auto x = as_comment(m)) out.comment = x->text;
        return;
      case module_id::nfacct:
        return;  // counters do not decide where a new connection goes
      case module_id::limit:
        opaque("-m limit");  // past the rate the rule does not match: reported where it decides dispatch
        return;
      case module_id::statistic:
        if (auto x = as_statistic(m)) {
          // xt_statistic inverts the outcome: `! --probability P` matches when the 31-bit random number
          // is at or above round(P * 2^31), which is the threshold 2^31 - round(P * 2^31).
          if (x->mode == statistic_mode::random) {
            c.kind = d::cond_kind::random;
            c.threshold = x->negated ? 0x80000000u - x->probability_fixed : x->probability_fixed;
          } else {
            c.kind = d::cond_kind::nth;
            c.a = x->every;
            c.b = x->packet;
            c.negated = x->negated;
          }
          p_.conditions.push_back(c);
          return;
        }
        break;
      case module_id::recent:
        if (auto x = as_recent(m, rs_.family)) {
          // affinity is a list of clients: `--rdest` records and checks destinations, a short `--mask`
          // whole networks; neither keeps one client on its endpoint. Such a `--set` records no client (it
          // always matches); such a check is `recent_check` on `field::other`, which the evaluator reports
          const bool client_key = x->rsource && mask_length(x->mask) == max_prefix_length(x->mask.family);
          if (!client_key && x->command == recent_command::set) return;
          c.what = client_key ? d::field::saddr : d::field::other;
          c.name = x->name;
          c.negated = x->negated;
          if (x->command == recent_command::set) {
            c.kind = d::cond_kind::recent_set;
          } else if (x->command == recent_command::rcheck || x->command == recent_command::update) {
            c.kind = d::cond_kind::recent_check;
            c.a = x->seconds;
            c.b = x->hitcount;
          } else {
            break;
          }
          p_.conditions.push_back(c);
          return;
        }
        break;
      case module_id::mark:
      case module_id::connmark:
        if (auto x = m.id == module_id::mark ? as_mark(m) : as_connmark(m)) {
          c.kind = d::cond_kind::mark;
          c.a = x->mask;
          c.b = x->value;
          c.negated = x->negated;
          p_.conditions.push_back(c);
          return;
        }
        break;
      case module_id::state:
        if (auto x = as_state(m)) {
          c.kind = d::cond_kind::ct_state;
          c.a = ct_bits(x->states);
          c.negated = x->negated;
          p_.conditions.push_back(c);
          return;
        }
        break;
      case module_id::conntrack:
        if (auto x = as_conntrack(m)) {
          if (x->state && !x->protocol && !x->orig_source && !x->orig_destination && !x->reply_source &&
              !x->reply_destination && !x->orig_source_port && !x->orig_destination_port && !x->reply_source_port &&
              !x->reply_destination_port && !x->status && !x->expire && !x->direction_reply) {
            c.kind = d::cond_kind::ct_state;
            c.a = ct_bits(*x->state);
            c.negated = x->state_negated;
            p_.conditions.push_back(c);
            return;
          }
        }
        break;
      case module_id::multiport:
        if (auto x = as_multiport(m)) {
          if (x->direction == multiport_direction::either) break;
          c.kind = d::cond_kind::port;
          c.what = x->direction == multiport_direction::destination ? d::field::dport : d::field::sport;
          c.negated = x->negated;
          c.first = static_cast<d::index>(p_.values.size());
          for (const auto& r : x->ports) {
            d::value v;
            v.k = d::value::kind::ports;
            v.ports = r;
            p_.values.push_back(v);
          }
          c.count = static_cast<d::index>(x->ports.size());
          p_.conditions.push_back(c);
          return;
        }
        break;
      case module_id::addrtype:
        if (auto x = as_addrtype(m)) {
          bool handled = true;
          auto side = [&](std::uint16_t types, bool neg, d::field f) {
            if (types == 0) return;
            if (types != addr_local) {
              handled = false;
              return;
            }
            d::condition a;
            a.kind = d::cond_kind::addr_local;
            a.what = f;
            a.negated = neg;
            p_.conditions.push_back(a);
          };
          side(x->source_types, x->source_negated, d::field::saddr);
          side(x->destination_types, x->destination_negated, d::field::daddr);
          if (handled) return;
        }
        break;
      case module_id::tcp:
      case module_id::udp:
      case module_id::sctp: {
        std::optional<port_match> pm;
        bool other = false;
        if (m.id == module_id::tcp) {
          if (auto x = as_tcp(m)) {
            pm = *x;
            other = x->tcp_flags.has_value() || x->tcp_option.has_value();
          }
        } else if (m.id == module_id::udp) {
          pm = as_udp(m);
        } else if (auto x = as_sctp(m)) {
          pm = *x;
          other = !x->chunk_types.empty();
        }
        if (!pm) break;
        if (pm->destination) port_cond(d::field::dport, *pm->destination, pm->destination_negated);
        if (pm->source) port_cond(d::field::sport, *pm->source, pm->source_negated);
        if (other) opaque(fmt::format("-m {} flags", m.name()));
        return;
      }
      default:
        break;
    }
    opaque(fmt::format("-m {}", m.name()));
  }

  void lower_rule(const table& t, const rule& r) {
    d::rule out;
    out.origin = add_origin(r.file, r.where, origin_kind::rule);
    out.first = static_cast<d::index>(p_.conditions.size());
    if (r.has_spec()) {
      addr_cond(r.source(), d::field::saddr);
      addr_cond(r.destination(), d::field::daddr);
      for (const auto* i : {r.in_interface(), r.out_interface()}) {
        if (i == nullptr) continue;
        d::condition c;
        if (i->name == "+") {  // every interface (iptables(8): a name ending in `+` matches its prefix)
          if (i->negated) c.kind = d::cond_kind::never, p_.conditions.push_back(c);
          continue;
        }
        c.kind = d::cond_kind::iface;
        c.what = i == r.in_interface() ? d::field::iif : d::field::oif;
        c.negated = i->negated;
        c.name = i->name;
        p_.conditions.push_back(c);
      }
      if (const protocol_match protocol = r.protocol(); protocol.present && protocol.number != 0) {
        d::condition c;
        c.kind = d::cond_kind::protocol;
        c.what = d::field::l4proto;
        c.negated = protocol.negated;
        d::value v;
        v.k = d::value::kind::protocol;
        const auto p = parse_protocol(std::to_string(protocol.number));
        v.proto = p ? *p : l4_protocol::other;
        c.first = add_values({v});
        c.count = 1;
        p_.conditions.push_back(c);
      }
      if (r.fragment().present) opaque("-f");
      for (const auto& m : r.matches()) lower_match(m, out);
      lower_target(t, r.target(), out);
    }
    out.count = static_cast<d::index>(p_.conditions.size()) - out.first;
    p_.rules.push_back(out);
  }

  void lower_target(const table& t, const target& tg, d::rule& out) {
    auto& a = out.act;
    switch (tg.id) {
      case target_id::none:
        a.kind = d::action_kind::none;
        return;
      case target_id::chain: {
        a.kind = tg.is_goto ? d::action_kind::go_to : d::action_kind::jump;
        a.target_name = tg.name;
        a.target = find(t.id, tg.name);
        return;
      }
      case target_id::accept:
        a.kind = d::action_kind::accept;
        return;
      case target_id::drop:
        a.kind = d::action_kind::drop;
        return;
      case target_id::return_:
        a.kind = d::action_kind::ret;
        return;
      case target_id::reject:
        a.kind = d::action_kind::reject;
        if (const auto r = as_reject(tg, rs_.family)) {
          const auto type = r->tcp_reset                      ? reject_reply::kind::tcp_reset
                            : rs_.family == ip_family::ipv6 ? reject_reply::kind::icmpv6
                                                            : reject_reply::kind::icmp;
          a.reject4 = a.reject6 = reject_reply{type, r->code};
        }
        return;
      case target_id::masquerade:
        a.kind = d::action_kind::masquerade;
        return;
      case target_id::snat:
        a.kind = d::action_kind::snat;
        return;
      case target_id::dnat:
      case target_id::redirect: {
        a.kind = tg.id == target_id::dnat ? d::action_kind::dnat : d::action_kind::redirect;
        if (auto n = as_nat(tg); n && n->range) {
          const auto& rg = *n->range;
          a.has_addr = rg.has_address;
          a.addr = rg.min_address;
          a.addr_range = rg.has_address && !(rg.max_address == rg.min_address);
          a.addr_last = rg.max_address;
          a.has_port = rg.has_ports;
          a.ports = rg.ports;
        }
        return;
      }
      case target_id::mark:
        a.kind = d::action_kind::mark_set;
        if (auto m = as_mark(tg)) {
          a.mark = m->value;
          a.mark_mask = m->mask;
        }
        return;
      default:
        a.kind = d::action_kind::other;
        a.text = tg.name;
        // `-j NOTRACK`, `-j CT --notrack`: the evaluator reports it where NAT would have translated
        if (tg.name == "NOTRACK") a.effect = d::other_effect::notrack;
        if (tg.name == "CT")
          for (const auto& o : tg.options)
            if (o.kind == value_kind::generic && o.generic_value().name == "notrack") a.effect = d::other_effect::notrack;
        if (tg.id == target_id::connmark) a.effect = d::other_effect::conntrack_mark;
        return;
    }
  }

  const ruleset& rs_;
  d::program& p_;
  std::unordered_map<const source*, std::uint32_t> source_ix_;
  chain_map nat_chains_, filter_chains_, raw_chains_, mangle_chains_;
  std::deque<std::string> texts_;
};

}  // namespace

namespace {

/// The state an iptables-save dump describes, taken as it is written: its chains, and its `-A` rules
/// grouped by chain in file order. Unlike `apply`, a rule that jumps to a chain the dump lacks is kept
/// (the graph reports the dangling reference and builds the rest), and a rule in a user chain the dump
/// does not declare is kept in that chain (`build_graph` reports the error iptables-restore gives).
iptables::ruleset as_written(const iptables::ruleset& rs) {
  iptables::ruleset out;
  out.family = rs.family;
  out.applied = true;
  out.sources = rs.sources;
  // Per table: its chains (first declaration wins, chains only named by rules added), their rules in order.
  struct building {
    std::unordered_map<std::string_view, std::size_t> index;
    std::vector<std::vector<const iptables::rule*>> rules;
  };
  std::vector<building> work;
  auto table_for = [&](const iptables::table& block) -> std::size_t {
    for (std::size_t i = 0; i < out.tables.size(); ++i)
      if (out.tables[i].id == block.id) return i;
    out.tables.emplace_back();
    auto& t = out.tables.back();
    t.id = block.id;
    t.file = block.file;
    t.where = block.where;
    t.committed = true;
    t.applied = true;
    work.emplace_back();
    return out.tables.size() - 1;
  };
  for (const auto& block : rs.tables) {
    const auto ti = table_for(block);
    auto& t = out.tables[ti];
    auto& w = work[ti];
    auto chain_index = [&](std::string_view name, const iptables::chain* decl) {
      auto [it, fresh] = w.index.emplace(name, t.chains.size());
      if (fresh) {
        iptables::chain c;
        if (decl != nullptr) {
          c = *decl;
        } else {
          c.name = name;
          c.builtin = iptables::is_builtin_chain(block.id, name);
          c.policy = c.builtin ? iptables::chain_policy::accept : iptables::chain_policy::none;
        }
        t.chains.push_back(c);
        w.rules.emplace_back();
      }
      return it->second;
    };
    for (const auto& c : block.chains) chain_index(c.name, &c);
    for (const auto& r : block.rules) {
      const auto ci = chain_index(r.chain(), nullptr);
      w.rules[ci].push_back(&r);
    }
  }
  for (std::size_t ti = 0; ti < out.tables.size(); ++ti) {
    auto& t = out.tables[ti];
    for (std::size_t i = 0; i < t.chains.size(); ++i) {
      t.chains[i].first_rule = static_cast<std::uint32_t>(t.rules.size());
      for (const auto* r : work[ti].rules[i]) t.rules.push_back(*r);
      t.chains[i].rule_count = static_cast<std::uint32_t>(work[ti].rules[i].size());
    }
  }
  return out;
}

}  // namespace

result<dispatch_graph> build_graph(const iptables::ruleset& rs, const graph_options& opt) {
  result<dispatch_graph> out;
  const iptables::ruleset* state = &rs;
  iptables::ruleset applied;
  if (!rs.applied) {
    bool appends_only = true;
    for (const auto& t : rs.tables)
      for (const auto& r : t.rules) appends_only = appends_only && r.command == iptables::command_kind::append;
    if (appends_only) {
      // An iptables-save dump (or restore input that only appends): the state as written. What
      // iptables-restore would refuse in it is an error all the same (DROP in nat, a target outside its
      // hooks, a loop, a rule in an undeclared chain); a jump to a chain the dump lacks is not: it is a
      // dangling reference, and the graph reports it and builds the rest.
      iptables::ruleset check;
      check.applied = true;
      check.family = rs.family;
      for (auto& d : iptables::apply(check, rs, {.outside_targets = true}))
        if (d.level == severity::error) out.diagnostics.push_back(std::move(d));
      applied = as_written(rs);
    } else {
      // Restore input with other commands: the state it gives when loaded into empty tables.
      applied.applied = true;
      applied.family = rs.family;
      auto ds = iptables::apply(applied, rs, {});
      for (auto& x : ds) out.diagnostics.push_back(std::move(x));
    }
    state = &applied;
  }
  dispatch::program p;
  lowering l(*state, p);
  l.run();
  out.value = dispatch::build(p, out.diagnostics, opt);
  return out;
}

}  // namespace nflens
