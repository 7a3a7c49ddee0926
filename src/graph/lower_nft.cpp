// SPDX-License-Identifier: MIT
// nftables → dispatch program: the ip, ip6 and inet tables of a ruleset. Base chains are entries by hook
// and priority (nat prerouting/output: DNAT; filter before dstnat: source gates; filter after: verdicts on
// what was not translated). Matches on addresses, protocols, ports, `fib ... type local`, ct state and
// marks become typed conditions; verdict maps (named and inline), `numgen`/`jhash` vmaps, `dnat to`,
// `update @set` and mark setting become actions. Anything else is kept as an `opaque` condition.

#include "dispatch.hpp"
#include "nft/datatype.hpp"

#include <nflens/nft.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <unordered_map>

namespace nflens {
namespace {

namespace d = dispatch;
using namespace nflens::nft;

/// The answers of a reject statement to an IPv4 and an IPv6 connection, as the kernel's nft_reject
/// gives them: a bare `reject` is port-unreachable of the packet's family, an icmpx code becomes the
/// family's own code (no-route: net-unreachable / no-route; host-unreachable: host-unreachable /
/// addr-unreachable; admin-prohibited: 13 / 1).
void reject_replies(const reject_stmt& r, d::action& a) {
  using K = reject_reply::kind;
  std::optional<std::uint64_t> code;
  if (r.code != nullptr) {
    if (const auto* i = r.code->get<integer_expr>()) code = i->value;
    if (const auto* sy = r.code->get<symbol_expr>()) code = types::reject_code_value(sy->name, r.type);
  }
  const auto c = static_cast<std::uint8_t>(code.value_or(0));
  switch (r.type) {
    case reject_type::unspecified:
      a.reject4 = {K::icmp, 3};
      a.reject6 = {K::icmpv6, 4};
      break;
    case reject_type::tcp_reset:
      a.reject4 = a.reject6 = {K::tcp_reset, 0};
      break;
    case reject_type::icmp:
      a.reject4 = a.reject6 = {K::icmp, code ? c : std::uint8_t{3}};
      break;
    case reject_type::icmpv6:
      a.reject4 = a.reject6 = {K::icmpv6, code ? c : std::uint8_t{4}};
      break;
    case reject_type::icmpx: {
      static constexpr std::uint8_t v4[] = {0, 3, 1, 13}, v6[] = {0, 4, 3, 1};  // no-route, port, host, admin
      const std::uint8_t x = code && c < 4 ? c : 1;
      a.reject4 = {K::icmp, v4[x]};
      a.reject6 = {K::icmpv6, v6[x]};
      break;
    }
  }
}

class lowering {
 public:
  lowering(const ruleset& rs, d::program& p) : rs_(rs), p_(p) {}

  void run() {
    p_.backend = "nftables";
    p_.structure.backend = "nftables";
    for (const auto& s : rs_.sources) {
      source_index(s.get());
      if (s) {
        p_.structure.bytes += s->text().size();
        p_.structure.lines += s->line_count() - (s->text().empty() || s->text().back() == '\n' ? 1 : 0);
      }
    }
    bool v6 = false, v4 = false;
    for (const auto& t : rs_.tables) {
      ++p_.structure.tables;
      p_.structure.chains += static_cast<std::uint32_t>(t.chains.size());
      for (const auto& c : t.chains) p_.structure.rules += static_cast<std::uint32_t>(c.rules.size());
      for (const auto& s : t.sets) {
        (s.is_map ? p_.structure.maps : p_.structure.sets) += 1;
        p_.structure.elements += static_cast<std::uint32_t>(s.elements.size());
      }
      if (t.fam == family::ip || t.fam == family::ip6 || t.fam == family::inet) (t.fam == family::ip6 ? v6 : v4) = true;
    }
    p_.family = v6 && !v4 ? ip_family::ipv6 : ip_family::ipv4;
    for (const auto& t : rs_.tables) {
      if (t.fam != family::ip && t.fam != family::ip6 && t.fam != family::inet) continue;
      // the family of the connections a table sees: an ip6 table's are IPv6 whatever the graph's family
      table_family_ = t.fam == family::ip6 ? ip_family::ipv6 : t.fam == family::ip ? ip_family::ipv4 : p_.family;
      lower_table(t);
    }
    for (auto* list : {&pre_, &nat_, &post_}) {
      std::stable_sort(list->begin(), list->end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [prio, e] : *list) p_.entries.push_back(e);
    }
  }

 private:
  std::uint32_t source_index(const source* s) {
    auto it = source_ix_.find(s);
    if (it != source_ix_.end()) return it->second;
    for (const auto& sp : rs_.sources)
      if (sp.get() == s) {
        const auto i = static_cast<std::uint32_t>(p_.sources.size());
        p_.sources.push_back(sp);
        source_ix_.emplace(s, i);
        return i;
      }
    return 0;
  }

  d::index add_origin(const source* s, span where, origin_kind k) {
    if (s == nullptr || p_.sources.empty()) return d::none;
    p_.origins.push_back(origin{source_index(s), where, k});
    return static_cast<d::index>(p_.origins.size() - 1);
  }

  std::string_view store(std::string s) {
    texts_.push_back(std::move(s));
    return texts_.back();
  }

  static d::hook hook_of(hook h) {
    switch (h) {
      case hook::prerouting:
        return d::hook::prerouting;
      case hook::input:
        return d::hook::input;
      case hook::forward:
        return d::hook::forward;
      case hook::output:
        return d::hook::output;
      case hook::postrouting:
        return d::hook::postrouting;
      default:
        return d::hook::none;
    }
  }

  struct table_ctx {
    std::unordered_map<std::string_view, d::index> chains, maps, sets;
    d::index chain(std::string_view n) const {
      auto it = chains.find(n);
      return it == chains.end() ? d::none : it->second;
    }
    d::index map(std::string_view n) const {
      auto it = maps.find(n);
      return it == maps.end() ? d::none : it->second;
    }
    d::index set(std::string_view n) const {
      auto it = sets.find(n);
      return it == sets.end() ? d::none : it->second;
    }
  };

  // ---- values ---------------------------------------------------------------------------------

  /// A key or match value; false when the expression is not a literal nflens can use.
  bool value_of(const expr& e, d::value& v) {
    if (const auto* a = e.get<address_expr>()) {
      v.k = d::value::kind::prefix;
      v.prefix = ip_prefix{a->address(), max_prefix_length(a->address().family)};
      return true;
    }
    if (const auto* p = e.get<prefix_expr>()) {
      if (p->value == nullptr) return false;
      const auto* a = p->value->get<address_expr>();
      if (a == nullptr) return false;
      v.k = d::value::kind::prefix;
      v.prefix = ip_prefix{a->address(), p->length};
      return true;
    }
    if (const auto* r = e.get<range_expr>()) {
      if (r->low() == nullptr || r->high() == nullptr) return false;
      const auto* la = r->low()->get<address_expr>();
      const auto* ha = r->high()->get<address_expr>();
      if (la != nullptr && ha != nullptr) {
        v.k = d::value::kind::range;
        v.prefix = ip_prefix{la->address(), max_prefix_length(la->address().family)};
        v.last = ha->address();
        return true;
      }
      const auto* li = r->low()->get<integer_expr>();
      const auto* hi = r->high()->get<integer_expr>();
      if (li != nullptr && hi != nullptr) {
        v.k = d::value::kind::ports;
        v.ports = {static_cast<std::uint16_t>(li->value), static_cast<std::uint16_t>(hi->value)};
        v.lo = static_cast<std::uint32_t>(li->value);
        v.hi = static_cast<std::uint32_t>(hi->value);
        return true;
      }
      return false;
    }
    if (const auto* i = e.get<integer_expr>()) {
      v.k = d::value::kind::ports;
      v.ports = {static_cast<std::uint16_t>(i->value), static_cast<std::uint16_t>(i->value)};
      v.lo = v.hi = static_cast<std::uint32_t>(i->value);
      if (i->value < 256)
        if (auto p = parse_protocol(std::to_string(i->value))) v.proto = *p;
      return true;
    }
    if (const auto* s = e.get<symbol_expr>()) {
      if (auto p = parse_protocol(s->name)) {
        v.k = d::value::kind::protocol;
        v.proto = *p;
        return true;
      }
      // a service name (`tcp . http`): the kernel holds its port, as nft resolves it
      if (const auto port = types::symbol_value(s->name, types::dtype::inet_service); port && *port <= 65535) {
        v.k = d::value::kind::ports;
        v.ports = {static_cast<std::uint16_t>(*port), static_cast<std::uint16_t>(*port)};
        v.lo = v.hi = static_cast<std::uint32_t>(*port);
        return true;
      }
      return false;
    }
    return false;
  }

  /// The values of a match's right side: one literal, an anonymous set, a comma list.
  bool values_of(const expr& e, std::vector<d::value>& out) {
    if (const auto* s = e.get<set_expr>()) {
      for (const auto& el : s->elements) {
        d::value v;
        if (el.key == nullptr || !value_of(*el.key, v)) return false;
        out.push_back(v);
      }
      return true;
    }
    if (const auto* l = e.get<list_expr>()) {
      for (const auto& x : l->items) {
        d::value v;
        if (!value_of(x, v)) return false;
        out.push_back(v);
      }
      return true;
    }
    d::value v;
    if (!value_of(e, v)) return false;
    out.push_back(v);
    return true;
  }

  d::index push_values(const std::vector<d::value>& vs) {
    const auto first = static_cast<d::index>(p_.values.size());
    for (const auto& v : vs) p_.values.push_back(v);
    return first;
  }

  /// The packet field an expression reads, for conditions and map keys.
  static d::field field_of(const expr& e) {
    if (const auto* p = e.get<payload_expr>()) {
      if (p->inner != tunnel::none) return d::field::other;
      if ((p->protocol == header::ip || p->protocol == header::ip6) && p->field == header_field::daddr)
        return d::field::daddr;
      if ((p->protocol == header::ip || p->protocol == header::ip6) && p->field == header_field::saddr)
        return d::field::saddr;
      if (p->protocol == header::ip && p->field == header_field::protocol) return d::field::l4proto;
      if (p->protocol == header::ip6 && p->field == header_field::nexthdr) return d::field::l4proto;
      const bool l4 = p->protocol == header::th || p->protocol == header::tcp || p->protocol == header::udp ||
                      p->protocol == header::sctp || p->protocol == header::udplite || p->protocol == header::dccp;
      if (l4 && p->field == header_field::dport) return d::field::dport;
      if (l4 && p->field == header_field::sport) return d::field::sport;
      return d::field::other;
    }
    if (const auto* m = e.get<meta_expr>()) {
      if (m->key == meta_key::l4proto) return d::field::l4proto;
      if (m->key == meta_key::iifname || m->key == meta_key::iif) return d::field::iif;
      if (m->key == meta_key::oifname || m->key == meta_key::oif) return d::field::oif;
    }
    return d::field::other;
  }

  /// The protocol a transport payload implies (`tcp dport` matches TCP only).
  static std::optional<l4_protocol> implied_protocol(const expr& e) {
    if (const auto* p = e.get<payload_expr>()) {
      switch (p->protocol) {
        case header::tcp:
          return l4_protocol::tcp;
        case header::udp:
          return l4_protocol::udp;
        case header::sctp:
          return l4_protocol::sctp;
        default:
          return std::nullopt;
      }
    }
    return std::nullopt;
  }

  // ---- sets and maps --------------------------------------------------------------------------

  d::verdict verdict_of(const expr* data, const table_ctx& t) {
    d::verdict v;
    if (data == nullptr) return v;
    const auto* ve = data->get<verdict_expr>();
    if (ve == nullptr) return v;
    switch (ve->kind) {
      case verdict::accept:
        v.kind = d::action_kind::accept;
        break;
      case verdict::drop:
        v.kind = d::action_kind::drop;
        break;
      case verdict::continue_:
        v.kind = d::action_kind::none;
        break;
      case verdict::return_:
        v.kind = d::action_kind::ret;
        break;
      case verdict::jump:
      case verdict::goto_:
        v.kind = ve->kind == verdict::jump ? d::action_kind::jump : d::action_kind::go_to;
        v.target_name = ve->chain;
        v.target = t.chain(ve->chain);
        break;
    }
    return v;
  }

  /// Elements into a dispatch map; each key is split into its concatenated parts.
  /// `els`: a named map's `ruleset_element`s, or the elements of an anonymous map in the rule being lowered
  /// (whose source is the rule's).
  template <class Elements>
  d::index add_map(std::string_view name, d::index origin_ix, const Elements& els, const table_ctx& t,
                   origin_kind kind) {
    d::map m;
    m.name = name;
    m.origin = origin_ix;
    m.first = static_cast<d::index>(p_.elements.size());
    for (const auto& el : els) {
      if (el.key == nullptr) continue;
      d::element de;
      de.first = static_cast<d::index>(p_.values.size());
      std::vector<const expr*> parts;
      if (const auto* c = el.key->template get<concat_expr>())
        for (const auto& x : c->items) parts.push_back(&x);
      else
        parts.push_back(el.key);
      bool ok = true;
      for (const auto* x : parts) {
        d::value v;
        if (!value_of(*x, v)) ok = false;
        p_.values.push_back(v);
      }
      if (!ok) continue;  // a key nflens cannot use (a wildcard, a symbolic constant) selects nothing here
      de.count = static_cast<std::uint8_t>(parts.size());
      de.result = verdict_of(el.data, t);
      const source* file = rule_file_;
      if constexpr (requires { el.file; }) file = el.file;
      de.origin = add_origin(file, el.where, kind);
      if (el.options != nullptr) de.comment = el.options->comment;
      p_.elements.push_back(de);
    }
    m.count = static_cast<d::index>(p_.elements.size()) - m.first;
    p_.maps.push_back(std::move(m));
    return static_cast<d::index>(p_.maps.size() - 1);
  }

  // ---- tables ---------------------------------------------------------------------------------

  void lower_table(const ruleset_table& t) {
    table_ctx ctx;
    const auto chain_base = static_cast<d::index>(p_.chains.size());
    for (std::size_t i = 0; i < t.chains.size(); ++i)
      ctx.chains.emplace(t.chains[i].name, chain_base + static_cast<d::index>(i));
    for (const auto& s : t.sets) {
      if (s.is_map) {
        ctx.maps.emplace(s.name, add_map(s.name, add_origin(s.file, s.where, origin_kind::map), s.elements, ctx,
                                         origin_kind::map_element));
      } else {
        d::set ds;
        ds.name = s.name;
        ds.origin = add_origin(s.file, s.where, origin_kind::set);
        ds.first = static_cast<d::index>(p_.values.size());
        for (const auto& el : s.elements) {
          d::value v;
          if (el.key != nullptr && value_of(*el.key, v)) p_.values.push_back(v);
        }
        ds.count = static_cast<d::index>(p_.values.size()) - ds.first;
        ds.dynamic = (s.flags & static_cast<std::uint8_t>(set_flag::dynamic)) != 0;
        ds.timeout_s = static_cast<std::uint32_t>(s.timeout_ms / 1000);
        ctx.sets.emplace(s.name, static_cast<d::index>(p_.sets.size()));
        p_.sets.push_back(ds);
      }
    }
    for (const auto& c : t.chains) {
      d::chain ch;
      ch.name = c.name;
      ch.origin = add_origin(c.file, c.where, origin_kind::chain);
      ch.policy = c.policy == nft::chain_policy::drop ? d::action_kind::drop : d::action_kind::accept;
      const auto ci = static_cast<d::index>(p_.chains.size());
      if (c.base != nullptr) {
        ch.at = hook_of(c.base->hook_point);
        const auto prio = priority_value(c.base->prio, t.fam).value_or(0);
        ch.priority = prio;
        ch.table = c.base->type == chain_type::nat      ? d::table_kind::nat
                   : c.base->type == chain_type::filter ? d::table_kind::filter
                                                        : d::table_kind::other;
        const bool pre_hook = ch.at == d::hook::prerouting || ch.at == d::hook::output;
        if (ch.table == d::table_kind::nat && pre_hook) nat_.push_back({prio, {ci, d::stage::nat}});
        if (ch.table == d::table_kind::filter && pre_hook && prio < -100)
          pre_.push_back({prio, {ci, d::stage::pre_dnat}});
        // Input and forward come after DNAT whatever their priority (older kube-proxy puts its filter chains
        // at `dstnat - 10` on every hook); prerouting and output only when above dstnat.
        const bool after = ch.at == d::hook::input || ch.at == d::hook::forward || (pre_hook && prio > -100);
        if (ch.table == d::table_kind::filter && after) post_.push_back({prio, {ci, d::stage::post_dnat}});
      } else {
        ch.table = d::table_kind::nat;  // regular chains take the kind of whatever jumps to them
      }
      p_.chains.push_back(ch);
    }
    for (std::size_t i = 0; i < t.chains.size(); ++i) {
      auto& ch = p_.chains[chain_base + i];
      ch.first = static_cast<d::index>(p_.rules.size());
      for (const auto& r : t.chains[i].rules) lower_rule(r, ctx);
      ch.count = static_cast<d::index>(p_.rules.size()) - ch.first;
    }
    // kube-proxy's dispatch chain, when no base chain reaches it.
    if (const auto s = ctx.chain("services"); s != d::none) p_.fallback_entries.push_back({s, d::stage::nat});
    if (p_.cluster_ip_set == d::none) p_.cluster_ip_set = ctx.set("cluster-ips");
  }

  // ---- rules ----------------------------------------------------------------------------------

  void opaque(const stmt& s) {
    d::condition c;
    c.kind = d::cond_kind::opaque;
    c.name = rule_file_ != nullptr ? rule_file_->text(s.where) : std::string_view("statement");
    conds_.push_back(c);
  }

  /// iptables-nft's `-m statistic` as nft lists it: `meta random & 2147483647 < T` (`--probability`,
  /// threshold T of 2^31, as xt_statistic compares), `>= T` (`! --probability`), and `numgen inc mod N P`
  /// (`--mode nth --every N --packet P`).
  bool lower_statistic(const match_stmt& m) {
    const expr& l = *m.left;
    const auto* v = m.right->get<integer_expr>();
    if (v == nullptr) return false;
    if (const auto* ng = l.get<numgen_expr>()) {
      if (ng->type != numgen_type::inc || ng->offset != 0 || ng->modulus == 0 || v->value >= ng->modulus) return false;
      if (m.op != relational_op::implicit && m.op != relational_op::eq && m.op != relational_op::neq) return false;
      d::condition c;
      c.kind = d::cond_kind::nth;
      c.a = ng->modulus;
      c.b = static_cast<std::uint32_t>(v->value);
      c.negated = m.op == relational_op::neq;
      conds_.push_back(c);
      return true;
    }
    const auto* b = l.get<binop_expr>();
    if (b == nullptr || b->op != binop::and_ || b->left() == nullptr || b->right() == nullptr) return false;
    const auto* me = b->left()->get<meta_expr>();
    const auto* mask = b->right()->get<integer_expr>();
    if (me == nullptr || me->key != meta_key::random || mask == nullptr || mask->value != 0x7fffffff) return false;
    constexpr std::uint64_t full = std::uint64_t{1} << 31;
    std::uint64_t below = 0;  // the random values that match: [0, below) or, for >=, [below, 2^31)
    bool at_or_above = false;
    switch (m.op) {
      case relational_op::lt: below = v->value; break;
      case relational_op::lte: below = v->value + 1; break;
      case relational_op::gte: below = v->value; at_or_above = true; break;
      case relational_op::gt: below = v->value + 1; at_or_above = true; break;
      default: return false;
    }
    below = std::min(below, full);
    d::condition c;
    c.kind = d::cond_kind::random;
    c.threshold = static_cast<std::uint32_t>(at_or_above ? full - below : below);
    conds_.push_back(c);
    return true;
  }

  bool lower_match(const match_stmt& m) {
    if (m.left == nullptr || m.right == nullptr) return false;
    if (lower_statistic(m)) return true;
    const bool neg = m.op == relational_op::neq || m.op == relational_op::neg;
    if (m.op != relational_op::implicit && m.op != relational_op::eq && !neg) return false;
    const expr& l = *m.left;
    const expr& r = *m.right;
    d::condition c;
    c.negated = neg;
    // `meta nfproto ipv4|ipv6`, `meta protocol ip|ip6`: decided by the family of the table's connections
    // (an ip table sees IPv4 packets only, an ip6 table IPv6 ones; an inet table's are the graph's family)
    if (const auto* me = l.get<meta_expr>(); me != nullptr && (me->key == meta_key::nfproto || me->key == meta_key::protocol))
      if (const auto* sy = r.get<symbol_expr>()) {
        const std::string_view w = sy->name;
        const bool v4 = w == "ipv4" || w == "ip", v6 = w == "ipv6" || w == "ip6";
        if (v4 || v6) {
          const bool holds = (table_family_ == ip_family::ipv6) == v6;
          if (holds != neg) return true;  // always met: no condition
          c.kind = d::cond_kind::never;
          c.negated = false;
          conds_.push_back(c);
          return true;
        }
      }
    // fib daddr type local, fib saddr type local
    if (const auto* f = l.get<fib_expr>()) {
      const auto* s = r.get<symbol_expr>();
      if (f->result != fib_result::type || s == nullptr || s->name != "local") return false;
      c.kind = d::cond_kind::addr_local;
      c.what = (f->flags & static_cast<std::uint8_t>(fib_flag::saddr)) ? d::field::saddr : d::field::daddr;
      conds_.push_back(c);
      return true;
    }
    if (const auto* ct = l.get<ct_expr>()) {
      if (ct->key != ct_key::state) return false;
      std::vector<std::string_view> words;
      if (const auto* s = r.get<symbol_expr>()) words.push_back(s->name);
      if (const auto* li = r.get<list_expr>())
        for (const auto& x : li->items)
          if (const auto* s = x.get<symbol_expr>()) words.push_back(s->name);
      if (const auto* se = r.get<set_expr>())
        for (const auto& el : se->elements)
          if (el.key != nullptr)
            if (const auto* s = el.key->get<symbol_expr>()) words.push_back(s->name);
      std::uint32_t bits = 0;
      for (auto w : words) {
        if (w == "new")
          bits |= d::ct_new;
        else if (w == "established")
          bits |= d::ct_established;
        else if (w == "related")
          bits |= d::ct_related;
        else if (w == "invalid")
          bits |= d::ct_invalid;
        else if (w == "untracked")
          bits |= d::ct_untracked;
        else
          return false;
      }
      c.kind = d::cond_kind::ct_state;
      c.a = bits;
      conds_.push_back(c);
      return true;
    }
    // meta mark & MASK == VALUE, mark VALUE
    {
      const expr* base = &l;
      std::uint64_t mask = 0xffffffff;
      if (const auto* b = l.get<binop_expr>(); b != nullptr && b->op == binop::and_ && b->left() && b->right()) {
        const auto* mi = b->right()->get<integer_expr>();
        if (mi == nullptr) return false;
        mask = mi->value;
        base = b->left();
      }
      if (const auto* me = base->get<meta_expr>(); me != nullptr && me->key == meta_key::mark) {
        const auto* v = r.get<integer_expr>();
        if (v == nullptr) return false;
        c.kind = d::cond_kind::mark;
        c.a = static_cast<std::uint32_t>(mask);
        c.b = static_cast<std::uint32_t>(v->value);
        conds_.push_back(c);
        return true;
      }
      if (base != &l) return false;
    }
    const auto f = field_of(l);
    if (f == d::field::iif || f == d::field::oif) {
      const auto* s = r.get<string_expr>();
      const auto* sy = r.get<symbol_expr>();
      if (s == nullptr && sy == nullptr) return false;
      c.kind = d::cond_kind::iface;
      c.what = f;
      c.name = s != nullptr ? s->text : sy->name;
      conds_.push_back(c);
      return true;
    }
    // ip daddr . tcp dport { 10.96.0.10 . 53, ... }: a tuple of destination fields in an anonymous set
    if (const auto* cc = l.get<concat_expr>()) {
      const auto* se = r.get<set_expr>();
      if (se == nullptr) return false;
      std::vector<d::field> key;
      std::vector<l4_protocol> implied;
      for (const auto& x : cc->items) {
        const auto kf = field_of(x);
        if (kf != d::field::daddr && kf != d::field::l4proto && kf != d::field::dport) return false;
        key.push_back(kf);
        if (const auto p = implied_protocol(x)) implied.push_back(*p);
      }
      for (const auto& el : se->elements) {
        const auto* ec = el.key != nullptr ? el.key->get<concat_expr>() : nullptr;
        if (ec == nullptr || ec->items.size() != key.size()) return false;
      }
      const auto mi = add_map({}, d::none, se->elements, *ctx_, origin_kind::map_element);
      p_.maps[mi].key = std::move(key);
      for (const auto p : implied) {
        d::condition pc;
        pc.kind = d::cond_kind::protocol;
        pc.what = d::field::l4proto;
        d::value v;
        v.k = d::value::kind::protocol;
        v.proto = p;
        pc.first = push_values({v});
        pc.count = 1;
        conds_.push_back(pc);
      }
      c.kind = d::cond_kind::tuple;
      c.what = d::field::other;
      c.set = mi;
      conds_.push_back(c);
      return true;
    }
    if (f == d::field::other) return false;
    if (const auto* ref = r.get<set_ref_expr>()) {
      if (f != d::field::daddr && f != d::field::saddr) return false;
      c.kind = d::cond_kind::addr_set;
      c.what = f;
      c.name = ref->name;
      c.set = ctx_->set(ref->name);
      conds_.push_back(c);
      return true;
    }
    std::vector<d::value> vs;
    if (!values_of(r, vs)) return false;
    if (const auto p = implied_protocol(l)) {
      d::condition pc;
      pc.kind = d::cond_kind::protocol;
      pc.what = d::field::l4proto;
      d::value v;
      v.k = d::value::kind::protocol;
      v.proto = *p;
      pc.first = push_values({v});
      pc.count = 1;
      conds_.push_back(pc);
    }
    switch (f) {
      case d::field::daddr:
      case d::field::saddr:
        c.kind = d::cond_kind::addr;
        break;
      case d::field::l4proto:
        c.kind = d::cond_kind::protocol;
        for (auto& v : vs) v.k = d::value::kind::protocol;
        break;
      case d::field::dport:
      case d::field::sport:
        c.kind = d::cond_kind::port;
        break;
      default:
        return false;
    }
    c.what = f;
    c.first = push_values(vs);
    c.count = static_cast<d::index>(vs.size());
    conds_.push_back(c);
    return true;
  }

  void emit(const rule& r, d::action a, d::index origin_ix) {
    d::rule out;
    out.origin = origin_ix;
    out.first = static_cast<d::index>(p_.conditions.size());
    for (const auto& c : conds_) p_.conditions.push_back(c);
    out.count = static_cast<d::index>(conds_.size());
    out.act = std::move(a);
    out.comment = r.comment;
    p_.rules.push_back(std::move(out));
  }

  void lower_rule(const ruleset_rule& r, const table_ctx& t) {
    ctx_ = &t;
    rule_file_ = r.file;
    conds_.clear();
    const auto origin_ix = add_origin(r.file, r.where, origin_kind::rule);
    bool emitted = false;
    auto act = [&](d::action a) {
      emit(r, std::move(a), origin_ix);
      emitted = true;
    };
    for (const auto& s : r.stmts) {
      if (const auto* m = s.get<match_stmt>()) {
        if (!lower_match(*m)) opaque(s);
        continue;
      }
      d::action a;
      if (const auto* v = s.get<verdict_stmt>()) {
        switch (v->kind) {
          case verdict::accept:
            a.kind = d::action_kind::accept;
            break;
          case verdict::drop:
            a.kind = d::action_kind::drop;
            break;
          case verdict::continue_:
            a.kind = d::action_kind::none;
            break;
          case verdict::return_:
            a.kind = d::action_kind::ret;
            break;
          case verdict::jump:
          case verdict::goto_:
            a.kind = v->kind == verdict::jump ? d::action_kind::jump : d::action_kind::go_to;
            a.target_name = v->chain;
            a.target = t.chain(v->chain);
            break;
        }
        act(std::move(a));
      } else if (const auto* rj = s.get<reject_stmt>()) {
        a.kind = d::action_kind::reject;
        reject_replies(*rj, a);
        act(std::move(a));
      } else if (const auto* n = s.get<nat_stmt>()) {
        switch (n->kind) {
          case nat_kind::dnat:
          case nat_kind::redirect: {
            a.kind = n->kind == nat_kind::dnat ? d::action_kind::dnat : d::action_kind::redirect;
            bool ok = n->mode == nat_mode::plain;
            if (ok && n->address != nullptr) {
              d::value v;
              if (value_of(*n->address, v) && (v.k == d::value::kind::prefix || v.k == d::value::kind::range)) {
                a.has_addr = true;
                a.addr = v.prefix.address;
                a.addr_range = v.k == d::value::kind::range;
                a.addr_last = v.last;
              } else {
                ok = false;
              }
            }
            if (ok && n->port != nullptr) {
              d::value v;
              if (value_of(*n->port, v) && v.k == d::value::kind::ports) {
                a.has_port = true;
                a.ports = v.ports;
              } else {
                ok = false;
              }
            }
            if (!ok) {
              a = d::action{};
              a.kind = d::action_kind::other;
              a.effect = d::other_effect::unmodelled_nat;  // reported where it is reached
            }
            break;
          }
          case nat_kind::snat:
            a.kind = d::action_kind::snat;
            break;
          case nat_kind::masquerade:
            a.kind = d::action_kind::masquerade;
            break;
        }
        act(std::move(a));
      } else if (const auto* vm = s.get<verdict_map_stmt>()) {
        lower_vmap(s, *vm, t, origin_ix, act);
      } else if (const auto* mg = s.get<mangle_stmt>()) {
        const auto* tm = mg->target != nullptr ? mg->target->get<meta_expr>() : nullptr;
        if (tm != nullptr && tm->key == meta_key::mark) {
          a.kind = d::action_kind::mark_set;
          // `meta mark set V`, `meta mark set meta mark | V` (or ^ V, & V) as xt_mark's (mark & ~mask) ^ value
          if (mg->value != nullptr) {
            if (const auto* i = mg->value->get<integer_expr>()) {
              a.mark = static_cast<std::uint32_t>(i->value);
              a.mark_mask = 0xffffffff;
            }
            if (const auto* b = mg->value->get<binop_expr>(); b != nullptr && b->right() != nullptr)
              if (const auto* i = b->right()->get<integer_expr>()) {
                const auto v = static_cast<std::uint32_t>(i->value);
                a.mark = b->op == binop::and_ ? 0 : v;
                a.mark_mask = b->op == binop::and_ ? ~v : b->op == binop::xor_ ? 0 : v;
              }
          }
        } else {
          a.kind = d::action_kind::other;
          if (const auto* ct = mg->target != nullptr ? mg->target->get<ct_expr>() : nullptr;
              ct != nullptr && ct->key == ct_key::mark)
            a.effect = d::other_effect::conntrack_mark;  // seen by later `ct mark` matches
        }
        act(std::move(a));
      } else if (const auto* ss = s.get<set_stmt>()) {
        // an affinity list records clients: `update @S { ip saddr }`; any other key (a destination, a
        // masked source, a concatenation) does not, and is not modelled
        if (ss->op == set_op::delete_ || ss->elem == nullptr || ss->elem->key == nullptr ||
            field_of(*ss->elem->key) != d::field::saddr) {
          opaque(s);
          continue;
        }
        a.kind = d::action_kind::set_update;
        a.set_add = ss->op == set_op::add;
        if (ss->set_ref != nullptr)
          if (const auto* ref = ss->set_ref->get<set_ref_expr>()) a.set = t.set(ref->name);
        // `update @affinity-X { ip saddr timeout 1h }`: this rule's elements outlive the set's timeout
        if (ss->elem != nullptr && ss->elem->options != nullptr && ss->elem->options->has_timeout)
          a.set_timeout_s = static_cast<std::uint32_t>(ss->elem->options->timeout_ms / 1000);
        act(std::move(a));
      } else if (s.is<queue_stmt>()) {
        a.kind = d::action_kind::accept;
        act(std::move(a));
      } else if (s.is<notrack_stmt>()) {
        a.kind = d::action_kind::other;
        a.effect = d::other_effect::notrack;  // reported where NAT would have translated the connection
        act(std::move(a));
      } else if (s.is<limit_stmt>() || s.is<quota_stmt>() || s.is<connlimit_stmt>()) {
        opaque(s);  // past the rate or quota the rule stops here: reported where it decides dispatch
      } else if (s.is<counter_stmt>() || s.is<log_stmt>() || s.is<last_stmt>() || s.is<objref_stmt>()) {
        continue;  // no effect on where a new connection is translated to
      } else {
        opaque(s);  // xt leftovers, unknown statements, anonymous chains: reported if they decide dispatch
      }
    }
    if (!emitted) emit(r, d::action{}, origin_ix);
  }

  template <class Act>
  void lower_vmap(const stmt& s, const verdict_map_stmt& vm, const table_ctx& t, d::index origin_ix,
                  Act&& act) {
    d::action a;
    if (vm.key == nullptr || vm.mapping == nullptr) {
      opaque(s);
      return;
    }
    const expr& key = *vm.key;
    if (const auto* ng = key.get<numgen_expr>()) {
      a.kind = d::action_kind::numgen_vmap;
      a.modulus = ng->modulus;
      a.offset = ng->offset;
      a.text = ng->type == numgen_type::inc ? "inc" : "random";
    } else if (const auto* h = key.get<hash_expr>()) {
      a.kind = d::action_kind::hash_vmap;
      a.modulus = h->spec->modulus;
      a.offset = h->spec->offset;
    } else {
      a.kind = d::action_kind::vmap;
      std::vector<const expr*> parts;
      if (const auto* c = key.get<concat_expr>())
        for (const auto& x : c->items) parts.push_back(&x);
      else
        parts.push_back(&key);
      for (const auto* x : parts) a.key.push_back(field_of(*x));
    }
    if (const auto* ref = vm.mapping->get<set_ref_expr>()) {
      a.map = t.map(ref->name);
      a.target_name = ref->name;
    } else if (const auto* se = vm.mapping->get<set_expr>()) {
      a.map = add_map({}, d::none, se->elements, t, origin_kind::map_element);
      // Inline elements carry the rule's source when they do not name their own.
      for (d::index e = p_.maps[a.map].first; e < p_.maps[a.map].first + p_.maps[a.map].count; ++e)
        if (p_.elements[e].origin == d::none) p_.elements[e].origin = origin_ix;
    } else {
      opaque(s);
      return;
    }
    act(std::move(a));
  }

  const ruleset& rs_;
  d::program& p_;
  const table_ctx* ctx_ = nullptr;
  const source* rule_file_ = nullptr;  // the source of the rule being lowered (its anonymous maps' elements)
  std::vector<d::condition> conds_;
  ip_family table_family_ = ip_family::ipv4;  // of the table being lowered
  std::unordered_map<const source*, std::uint32_t> source_ix_;
  std::deque<std::string> texts_;
  std::vector<std::pair<std::int32_t, d::entry>> pre_, nat_, post_;
};

}  // namespace

result<dispatch_graph> build_graph(const nft::ruleset& rs, const graph_options& opt) {
  result<dispatch_graph> out;
  dispatch::program p;
  lowering l(rs, p);
  l.run();
  out.value = dispatch::build(p, out.diagnostics, opt);
  return out;
}

result<dispatch_graph> build_graph(const nft::script& s, const graph_options& opt) {
  // The ruleset the listing or script describes, as `nft -f` into an empty ruleset would leave it.
  auto rs = nft::to_ruleset(s);
  if (!rs.ok()) {
    result<dispatch_graph> out;
    out.diagnostics = std::move(rs.diagnostics);
    return out;
  }
  auto out = build_graph(rs.value, opt);
  out.diagnostics.insert(out.diagnostics.begin(), rs.diagnostics.begin(), rs.diagnostics.end());
  return out;
}

}  // namespace nflens
