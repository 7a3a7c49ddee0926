// SPDX-License-Identifier: MIT
#pragma once

// Protocol dependencies of a rule, as nft lists them. nft stores a match on a protocol field (`meta
// l4proto tcp`, `ip protocol tcp`, `meta nfproto ipv4`, `ether type ip`) and leaves it out of the
// listing when a later match on the header it selects implies it (`meta l4proto tcp tcp dport 22`
// lists as `tcp dport 22`); `th dport` after `meta l4proto udp` lists as `udp dport`. This follows
// nftables' netlink_delinearize.c / payload.c (payload_dependency_store/kill, payload_expr_complete).
// Private to the library.

#include <nflens/nft.hpp>

#include <optional>
#include <vector>

namespace nflens::nft::deps {

/// The statements of a rule of a table of family `f` as nft lists them, or nothing when the listing
/// is what was written. New expression nodes are stored in `arena`.
[[nodiscard]] std::optional<std::vector<stmt>> as_listed(std::span<const stmt> stmts, family f, source& arena);

}  // namespace nflens::nft::deps
