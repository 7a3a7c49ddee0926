// SPDX-License-Identifier: MIT
#pragma once

// Reading one dump (iptables or nft, a path or `-`), optionally followed by updates applied onto it, and
// building its dispatch graph, for `graph` and `compare`.

#include <nflens/graph.hpp>

#include <optional>
#include <string>
#include <vector>

namespace nflens::cli {

/// Reads, parses and builds the graph of `path`. Diagnostics go to stderr; errors give nothing (the
/// caller exits with its error status), warnings (dangling references, constructs not evaluated) do not.
std::optional<dispatch_graph> load_graph(const std::string& path, const std::string& format);

/// The graph of `paths[0]` after applying `paths[1..]` onto it in order, as kube-proxy's syncs do:
/// iptables input with `iptables-restore --noflush`, nft scripts with `nft -f` (deletes, flushes and
/// replaces included). Every input must have the format of the first. Errors as `load_graph`.
std::optional<dispatch_graph> load_graph(const std::vector<std::string>& paths, const std::string& format);

}  // namespace nflens::cli
