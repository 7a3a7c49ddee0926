// SPDX-License-Identifier: MIT
// The graph builder on arbitrary dispatch programs (src/graph/dispatch.hpp): the bytes choose chains,
// rules, conditions, actions, verdict maps, sets and hooks, including jumps to missing chains, loops,
// deep nesting and numgen maps of any modulus, the shapes a hostile ruleset of either backend lowers
// to. Checked: no crash or hang, every diagnostic located, shares in [0, 1] summing to at most 1 per
// service, every origin inside its source, and a graph compares equivalent to itself.

#include "fuzz_graph.hpp"

#include "graph/dispatch.hpp"

#include <array>
#include <memory>
#include <string>

namespace {

namespace d = nflens::dispatch;
using nflens::ip_prefix;
using nflens::l4_protocol;

/// Reads choices from the fuzzer's bytes; zeros once they run out.
class choices {
 public:
  choices(const std::uint8_t* data, std::size_t size) : p_(data), n_(size) {}
  std::uint8_t byte() { return n_ == 0 ? 0 : (--n_, *p_++); }
  std::uint32_t below(std::uint32_t k) { return k == 0 ? 0 : byte() % k; }
  bool flag() { return (byte() & 1) != 0; }
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = v << 8 | byte();
    return v;
  }

 private:
  const std::uint8_t* p_;
  std::size_t n_;
};

constexpr std::array<std::string_view, 16> chain_names{
    "KUBE-SERVICES", "KUBE-SVC-A",          "KUBE-SEP-A",     "KUBE-SEP-B", "KUBE-MARK-MASQ", "KUBE-POSTROUTING",
    "KUBE-EXT-A",    "KUBE-FW-A",           "KUBE-NODEPORTS", "services",   "service-A",      "endpoint-A",
    "endpoint-B",    "mark-for-masquerade", "masquerading",   "DOCKER"};
constexpr std::array<std::string_view, 6> prefixes{"10.96.0.10/32", "10.244.0.0/16", "127.0.0.0/8",
                                                   "0.0.0.0/0",     "10.244.0.2/32", "fd00::1/128"};
constexpr std::array<std::string_view, 4> addresses{"10.244.0.2", "10.244.32.7", "127.0.0.1", "fd00::2"};
constexpr std::array<std::string_view, 4> comments{"", "ns/svc:http cluster IP", "ns/svc:http -> 10.244.0.2:80",
                                                   "kubernetes service nodeports"};

ip_prefix prefix(choices& in) { return *nflens::parse_ip_prefix(prefixes[in.below(prefixes.size())]); }

d::value value_for(d::field f, choices& in) {
  d::value v;
  switch (f) {
    case d::field::daddr:
    case d::field::saddr:
      v.k = in.flag() ? d::value::kind::prefix : d::value::kind::range;
      v.prefix = prefix(in);
      v.last = v.prefix.address;
      break;
    case d::field::l4proto:
      v.k = d::value::kind::protocol;
      v.proto = static_cast<l4_protocol>(in.below(12));
      break;
    case d::field::dport:
    case d::field::sport: {
      v.k = d::value::kind::ports;
      const auto a = static_cast<std::uint16_t>(in.flag() ? 80 : in.u32());
      v.ports = {a, static_cast<std::uint16_t>(a + in.below(3))};
      break;
    }
    default:
      v.k = d::value::kind::number;
      v.lo = in.below(8);
      v.hi = v.lo + in.below(3);
      break;
  }
  return v;
}

d::field key_field(choices& in) {
  static constexpr std::array<d::field, 5> fields{d::field::daddr, d::field::l4proto, d::field::dport, d::field::number,
                                                  d::field::saddr};
  return fields[in.below(fields.size())];
}

struct builder {
  d::program p;
  std::string text;  // one line per origin

  d::index origin(nflens::origin_kind kind, std::string_view line) {
    p.origins.push_back(
        {0, nflens::span{static_cast<std::uint32_t>(text.size()), static_cast<std::uint32_t>(line.size())}, kind});
    text += line;
    text += '\n';
    return static_cast<d::index>(p.origins.size() - 1);
  }
};

d::verdict verdict_of(choices& in, std::uint32_t chains) {
  d::verdict v;
  switch (in.below(6)) {
    case 0:
      v.kind = d::action_kind::drop;
      break;
    case 1:
      v.kind = d::action_kind::reject;
      break;
    case 2:
      v.kind = d::action_kind::accept;
      break;
    case 3:
      v.kind = d::action_kind::ret;
      break;
    default: {
      v.kind = in.flag() ? d::action_kind::go_to : d::action_kind::jump;
      const auto t = in.below(chains + 1);  // == chains: a chain that is not there
      v.target = t < chains ? t : d::none;
      v.target_name = t < chains ? chain_names[t] : "MISSING";
      break;
    }
  }
  return v;
}

d::program decode(choices& in) {
  builder b;
  b.p.backend = in.flag() ? "iptables" : "nftables";
  b.p.family = in.flag() ? nflens::ip_family::ipv4 : nflens::ip_family::ipv6;
  const std::uint32_t chains = 1 + in.below(chain_names.size());

  const std::uint32_t sets = in.below(3);
  for (std::uint32_t i = 0; i < sets; ++i) {
    d::set s;
    s.name = i == 0 ? "cluster-ips" : "affinity";
    s.origin = b.origin(nflens::origin_kind::set, "set");
    s.first = static_cast<d::index>(b.p.values.size());
    s.count = in.below(4);
    for (d::index k = 0; k < s.count; ++k) b.p.values.push_back(value_for(d::field::daddr, in));
    s.dynamic = in.flag();
    s.timeout_s = in.below(4) * 3600;
    b.p.sets.push_back(s);
  }

  const std::uint32_t maps = in.below(4);
  for (std::uint32_t i = 0; i < maps; ++i) {
    d::map m;
    m.name = i == 0 ? "service-ips" : "numgen";
    m.origin = b.origin(nflens::origin_kind::map, "map");
    const std::uint32_t fields = 1 + in.below(3);
    for (std::uint32_t k = 0; k < fields; ++k) m.key.push_back(key_field(in));
    m.first = static_cast<d::index>(b.p.elements.size());
    m.count = in.below(7);
    for (d::index e = 0; e < m.count; ++e) {
      d::element el;
      el.first = static_cast<d::index>(b.p.values.size());
      el.count = static_cast<std::uint8_t>(m.key.size() - in.below(2));  // sometimes one value short
      for (std::uint8_t k = 0; k < el.count; ++k) b.p.values.push_back(value_for(m.key[k], in));
      el.result = verdict_of(in, chains);
      el.origin = b.origin(nflens::origin_kind::map_element, "element");
      el.comment = comments[in.below(comments.size())];
      b.p.elements.push_back(el);
    }
    b.p.maps.push_back(std::move(m));
  }

  for (std::uint32_t c = 0; c < chains; ++c) {
    d::chain ch;
    ch.name = chain_names[c];
    ch.origin = b.origin(nflens::origin_kind::chain, "chain");
    ch.table = static_cast<d::table_kind>(in.below(3));
    ch.at = c == 0 ? d::hook::prerouting : in.below(4) == 0 ? static_cast<d::hook>(in.below(6)) : d::hook::none;
    static constexpr std::array<std::int32_t, 4> priorities{-150, -100, 0, 100};
    ch.priority = priorities[in.below(priorities.size())];
    ch.policy = in.flag() ? d::action_kind::accept : d::action_kind::drop;
    ch.first = static_cast<d::index>(b.p.rules.size());
    ch.count = in.below(7);
    for (d::index r = 0; r < ch.count; ++r) {
      d::rule ru;
      ru.origin = b.origin(nflens::origin_kind::rule, "rule");
      ru.comment = comments[in.below(comments.size())];
      ru.first = static_cast<d::index>(b.p.conditions.size());
      ru.count = in.below(4);
      for (d::index k = 0; k < ru.count; ++k) {
        d::condition cd;
        cd.kind = static_cast<d::cond_kind>(in.below(static_cast<std::uint32_t>(d::cond_kind::opaque) + 1));
        cd.negated = in.below(4) == 0;
        cd.what = in.flag() ? d::field::daddr : d::field::saddr;
        switch (cd.kind) {
          case d::cond_kind::addr:
          case d::cond_kind::protocol:
          case d::cond_kind::port: {
            const d::field f = cd.kind == d::cond_kind::protocol ? d::field::l4proto
                               : cd.kind == d::cond_kind::port   ? (in.flag() ? d::field::dport : d::field::sport)
                                                                 : cd.what;
            cd.what = f;
            cd.first = static_cast<d::index>(b.p.values.size());
            cd.count = 1 + in.below(2);
            for (d::index v = 0; v < cd.count; ++v) b.p.values.push_back(value_for(f, in));
            break;
          }
          case d::cond_kind::addr_set: {
            const auto s = in.below(sets + 1);
            cd.set = s < sets ? s : d::none;
            cd.name = s < sets ? b.p.sets[s].name : "missing-set";
            break;
          }
          case d::cond_kind::random:
            cd.threshold = in.u32() >> in.below(8);
            break;
          case d::cond_kind::nth:
            cd.a = in.below(5);  // 0 too: every 0 packets
            cd.b = in.below(5);
            break;
          case d::cond_kind::recent_check:
          case d::cond_kind::recent_set:
            cd.name = in.flag() ? "KUBE-SEP-A" : "KUBE-SEP-B";
            cd.a = in.below(3) * 10800;
            break;
          case d::cond_kind::ct_state:
          case d::cond_kind::mark:
            cd.a = in.below(128);
            cd.b = in.below(128);
            break;
          case d::cond_kind::iface:
            cd.name = "eth0";
            break;
          case d::cond_kind::opaque:
            cd.name = "-m foo";
            break;
          default:
            break;
        }
        b.p.conditions.push_back(cd);
      }
      d::action& a = ru.act;
      a.kind = static_cast<d::action_kind>(in.below(static_cast<std::uint32_t>(d::action_kind::other) + 1));
      switch (a.kind) {
        case d::action_kind::jump:
        case d::action_kind::go_to: {
          const auto t = in.below(chains + 1);
          a.target = t < chains ? t : d::none;
          a.target_name = t < chains ? chain_names[t] : "MISSING";
          break;
        }
        case d::action_kind::dnat:
        case d::action_kind::redirect:
        case d::action_kind::snat:
          a.has_addr = a.kind != d::action_kind::redirect || in.flag();
          a.addr = *nflens::parse_ip_address(addresses[in.below(addresses.size())]);
          a.addr_range = in.below(4) == 0;
          a.addr_last = a.addr;
          a.has_port = in.flag();
          a.ports = {static_cast<std::uint16_t>(in.u32()), 0};
          a.ports.last = a.ports.first;
          break;
        case d::action_kind::mark_set:
          a.mark = in.flag() ? 0x4000 : in.u32();
          break;
        case d::action_kind::set_update: {
          const auto s = in.below(sets + 1);
          a.set = s < sets ? s : d::none;
          break;
        }
        case d::action_kind::vmap:
        case d::action_kind::numgen_vmap:
        case d::action_kind::hash_vmap: {
          const auto m = in.below(maps + 1);
          a.map = m < maps ? m : d::none;
          a.target_name = m < maps ? b.p.maps[m].name : "missing-map";
          if (a.kind == d::action_kind::vmap && in.flag())
            for (std::uint32_t k = 1 + in.below(3); k > 0; --k) a.key.push_back(key_field(in));
          a.modulus = in.below(6);  // 0 too
          a.offset = in.below(3);
          a.text = in.flag() ? "inc" : "random";
          break;
        }
        case d::action_kind::other:
          a.text = "LOG";
          break;
        default:
          break;
      }
      b.p.rules.push_back(std::move(ru));
    }
    b.p.chains.push_back(ch);
    if (ch.at != d::hook::none) b.p.entries.push_back({c, static_cast<d::stage>(in.below(3))});
  }
  if (in.flag()) b.p.fallback_entries.push_back({in.below(chains), d::stage::nat});
  if (sets > 0 && in.flag()) b.p.cluster_ip_set = 0;
  if (in.flag()) b.p.cluster_ip_chain = in.below(chains);
  b.p.structure.backend = b.p.backend;
  b.p.structure.chains = chains;
  b.p.structure.rules = static_cast<std::uint32_t>(b.p.rules.size());
  b.p.structure.elements = static_cast<std::uint32_t>(b.p.elements.size());
  b.p.sources.push_back(std::make_shared<const nflens::source>("<fuzz>", std::move(b.text)));
  return std::move(b.p);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nflens;
  choices in(data, size);
  const d::program p = decode(in);
  std::vector<diagnostic> out;
  const dispatch_graph g = d::build(p, out);
  fuzz::check_diagnostics(out);
  fuzz::check_graph(g);
  return 0;
}
