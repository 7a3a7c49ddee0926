// SPDX-License-Identifier: MIT
// Protocol dependencies as nft lists them (see dependency.hpp). The rules, from nftables'
// netlink_delinearize.c and payload.c:
//  - a match `KEY == value` on a protocol key (meta nfproto, meta protocol, meta l4proto, ether type,
//    vlan type, ip protocol, ip6 nexthdr) is remembered as the dependency of the next protocol layer
//    (an ether type that selects a VLAN header stays in the link layer: stacked headers);
//  - a later payload expression of that layer removes it, except that in the inet, bridge and netdev
//    families `ip protocol`/`ip6 nexthdr` stay before a transport header (they also select the family),
//    a `vlan type` dependency always stays, `ether type` stays unless it is 8021q before a VLAN field,
//    and `th` (which could be any transport protocol) removes nothing;
//  - a TCP option removes a transport dependency, an IPv6 extension header or IP option a network one;
//  - any statement other than a match or a verdict map forgets the remembered dependencies;
//  - `th sport|dport` reads as the transport protocol a match before it fixed (`meta l4proto udp th
//    dport 53` is `udp dport 53`).

#include "nft/dependency.hpp"

#include "nft/datatype.hpp"

#include <array>

namespace nflens::nft::deps {

namespace {

enum base : int { ll = 0, network = 1, transport = 2, none = -1 };

int base_of(const payload_expr& p) noexcept {
  if (p.inner != tunnel::none) return none;
  switch (p.protocol) {
    case header::ether:
    case header::vlan:
      return ll;
    case header::arp:
    case header::ip:
    case header::ip6:
      return network;
    case header::icmp:
    case header::igmp:
    case header::icmpv6:
    case header::ah:
    case header::esp:
    case header::comp:
    case header::udp:
    case header::udplite:
    case header::tcp:
    case header::dccp:
    case header::sctp:
    case header::th:
    case header::gre:
      return transport;
    default:
      return none;
  }
}

/// Which layer an extension header or option expression clears the dependency of.
int exthdr_layer(const payload_expr& p) noexcept {
  switch (p.protocol) {
    case header::tcp_option:
      return transport;
    case header::hbh:
    case header::rt:
    case header::rt0:
    case header::rt2:
    case header::srh:
    case header::frag:
    case header::dst:
    case header::mh:
    case header::exthdr:
    case header::ip_option:
      return network;
    default:
      return none;
  }
}

/// The single value of a match's right side, decoded through the left side's type.
std::optional<std::uint64_t> single_value(const expr& right, types::dtype t) {
  if (const auto* i = right.get<integer_expr>()) return i->value;
  if (const auto* s = right.get<symbol_expr>()) return types::symbol_value(s->name, t);
  return std::nullopt;
}

bool is_protocol_key(const payload_expr& p) noexcept {
  return (p.protocol == header::ether && p.field == header_field::type) ||
         (p.protocol == header::vlan && p.field == header_field::type) ||
         (p.protocol == header::ip && p.field == header_field::protocol) ||
         (p.protocol == header::ip6 && p.field == header_field::nexthdr);
}

template <class F>
void each_payload(const expr* e, F&& f) {
  if (e == nullptr) return;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, payload_expr>)
          f(v);
        else if constexpr (std::is_same_v<T, binop_expr>) {
          each_payload(v.left(), f);
          each_payload(v.right(), f);
        } else if constexpr (std::is_same_v<T, concat_expr>) {
          for (const auto& i : v.items) each_payload(&i, f);
        } else if constexpr (std::is_same_v<T, map_expr>) {
          each_payload(v.key(), f);
        } else if constexpr (std::is_same_v<T, hash_expr>) {
          each_payload(v.spec->key, f);
        }
      },
      e->value);
}

template <class F>
void each_payload(const stmt& s, F&& f) {
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, match_stmt>) {
          each_payload(v.left, f);
          each_payload(v.right, f);
        } else if constexpr (std::is_same_v<T, verdict_map_stmt>) {
          each_payload(v.key, f);
        } else if constexpr (std::is_same_v<T, mangle_stmt>) {
          each_payload(v.value, f);
        } else if constexpr (std::is_same_v<T, nat_stmt> || std::is_same_v<T, tproxy_stmt>) {
          each_payload(v.address, f);
          each_payload(v.port, f);
        } else if constexpr (std::is_same_v<T, set_stmt>) {
          if (v.elem != nullptr) {
            each_payload(v.elem->key, f);
            each_payload(v.elem->data, f);
          }
        } else if constexpr (std::is_same_v<T, objref_stmt>) {
          each_payload(v.name, f);
        } else if constexpr (std::is_same_v<T, dup_stmt> || std::is_same_v<T, fwd_stmt>) {
          each_payload(v.address, f);
        } else if constexpr (std::is_same_v<T, queue_stmt>) {
          each_payload(v.number, f);
        }
      },
      s.value);
}

struct state {
  family fam;
  std::array<int, 3> dep{-1, -1, -1};  ///< statement index of the dependency of each layer
  std::vector<bool> removed;
  std::span<const stmt> stmts;

  [[nodiscard]] const match_stmt& dep_match(int layer) const { return *stmts[dep[layer]].get<match_stmt>(); }

  bool may_kill(const payload_expr& p, int b) const {
    const match_stmt& d = dep_match(b);
    const auto* dp = d.left->get<payload_expr>();
    if (fam == family::bridge || fam == family::netdev || fam == family::inet) {
      if (dp != nullptr && base_of(*dp) == network && (dp->protocol == header::ip || dp->protocol == header::ip6) &&
          b == transport)
        return false;
      if (dp != nullptr && b == base_of(*dp)) {
        if (is_protocol_key(p)) return false;
        if (b == ll) {
          if (dp->protocol == header::vlan) return false;
          const auto v = single_value(*d.right, types::dtype::ether_type);
          return v && *v == 0x8100;
        }
      }
    }
    if (b != transport) return true;
    if (p.protocol == header::th) return false;
    if (dp == nullptr || base_of(*dp) != transport) return true;
    return false;  // icmp type dependencies of icmp fields: nflens keeps them
  }

  /// nftables' ct_meta_may_dependency_kill for a meta match of `key` == `value` at layer `own`.
  bool meta_may_kill(const meta_expr& key, std::uint64_t value, int own) const {
    const match_stmt& d = dep_match(own);
    std::uint64_t nfproto = 0;
    if (const auto* dm = d.left->get<meta_expr>()) {
      if (dm->key == meta_key::nfproto) {
        nfproto = single_value(*d.right, types::dtype::nf_proto).value_or(0);
      } else if (dm->key == meta_key::protocol) {
        nfproto = nfproto_of(single_value(*d.right, types::dtype::ether_type).value_or(0));
      } else {
        return true;
      }
    } else if (const auto* dp = d.left->get<payload_expr>();
               dp != nullptr && base_of(*dp) == ll && dp->field == header_field::type) {
      nfproto = nfproto_of(single_value(*d.right, types::dtype::ether_type).value_or(0));
    } else {
      return true;
    }
    switch (fam) {
      case family::inet:
      case family::netdev:
      case family::bridge:
        break;
      case family::ip:
        return nfproto == 2;
      case family::ip6:
        return nfproto == 10;
      default:
        return true;
    }
    if (key.key != meta_key::l4proto) return true;
    return (value == 1 && nfproto == 2) || (value == 58 && nfproto == 10);
  }
  static std::uint64_t nfproto_of(std::uint64_t ether_type) {
    return ether_type == 0x0800 ? 2 : ether_type == 0x86dd ? 10 : 0;
  }

  void kill(const payload_expr& p) {
    const int layer = exthdr_layer(p);
    if (layer != none) {
      if (dep[layer] >= 0) {
        removed[dep[layer]] = true;
        dep[layer] = -1;
      }
      return;
    }
    const int b = base_of(p);
    if (b == none || dep[b] < 0) return;
    if (!may_kill(p, b)) return;
    removed[dep[b]] = true;
    dep[b] = -1;
  }
};

/// The transport protocol `th` means after `value` was matched by `left` (6, 17, ...).
std::optional<header> transport_of(std::uint64_t proto) {
  switch (proto) {
    case 6:
      return header::tcp;
    case 17:
      return header::udp;
    case 33:
      return header::dccp;
    case 132:
      return header::sctp;
    case 136:
      return header::udplite;
    default:
      return std::nullopt;
  }
}

}  // namespace

std::optional<std::vector<stmt>> as_listed(std::span<const stmt> stmts, family f, source& arena) {
  state st{f, {-1, -1, -1}, std::vector<bool>(stmts.size(), false), stmts};
  std::vector<stmt> out(stmts.begin(), stmts.end());
  bool changed = false;
  std::optional<std::uint64_t> l4proto;  // nft's protocol context: never forgotten within a rule
  for (std::size_t i = 0; i < out.size(); ++i) {
    stmt& s = out[i];
    if (auto* m = std::get_if<match_stmt>(&s.value)) {
      // `th` after a fixed transport protocol reads as that protocol (payload_expr_complete)
      if (const auto* p = m->left->get<payload_expr>();
          p != nullptr && p->protocol == header::th && p->inner == tunnel::none && l4proto)
        if (const auto h = transport_of(*l4proto)) {
          expr e = *m->left;
          auto np = *p;
          np.protocol = *h;
          e.value = np;
          m->left = arena.store_one(e);
          changed = true;
        }
      st.stmts = out;
      each_payload(s, [&](const payload_expr& p) { st.kill(p); });
      if (m->op == relational_op::implicit || m->op == relational_op::eq) {
        int layer = none;
        types::dtype t = types::dtype::invalid;
        bool l4 = false;
        if (const auto* me = m->left->get<meta_expr>()) {
          if (me->key == meta_key::l4proto) layer = transport, t = types::dtype::inet_proto, l4 = true;
          if (me->key == meta_key::nfproto) layer = network, t = types::dtype::nf_proto;
          if (me->key == meta_key::protocol) layer = network, t = types::dtype::ether_type;
        } else if (const auto* p = m->left->get<payload_expr>();
                   p != nullptr && is_protocol_key(*p) && p->inner == tunnel::none) {
          const bool link = p->protocol == header::ether || p->protocol == header::vlan;
          layer = link ? network : transport;
          t = link ? types::dtype::ether_type : types::dtype::inet_proto;
          l4 = !link;
        }
        if (layer != none)
          if (const auto v = single_value(*m->right, t)) {
            // A meta protocol match can make the one below it redundant (ct_meta_may_dependency_kill):
            // `meta nfproto ipv6 meta l4proto ipv6-icmp` lists as `meta l4proto ipv6-icmp`.
            if (const auto* me = m->left->get<meta_expr>()) {
              const int own = layer - 1;
              if (own >= 0 && st.dep[own] >= 0 && st.meta_may_kill(*me, *v, own)) {
                st.removed[st.dep[own]] = true;
                st.dep[own] = -1;
              }
            }
            // an ether type that selects another link-layer header (VLAN) stays in the link layer
            if (layer == network && t == types::dtype::ether_type && (*v == 0x8100 || *v == 0x88a8) &&
                !m->left->is<meta_expr>())
              layer = ll;
            st.dep[layer] = static_cast<int>(i);
            if (l4) l4proto = *v;
          }
      }
      continue;
    }
    st.stmts = out;
    each_payload(s, [&](const payload_expr& p) { st.kill(p); });
    if (!s.is<verdict_map_stmt>()) st.dep = {-1, -1, -1};
  }
  std::vector<stmt> kept;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (st.removed[i]) {
      changed = true;
      continue;
    }
    kept.push_back(out[i]);
  }
  if (!changed) return std::nullopt;
  return kept;
}

}  // namespace nflens::nft::deps
