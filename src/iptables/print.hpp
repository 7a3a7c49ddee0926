// SPDX-License-Identifier: MIT
#pragma once

// Private: printer pieces other passes reuse.

#include <nflens/iptables.hpp>

#include <string>

namespace nflens::iptables::detail {

/// The rule specification as iptables-save prints it after `-A CHAIN` (starts with a space; empty for a
/// rule without matches and target). Two specifications are the same rule for `-D` when equal.
[[nodiscard]] std::string spec_text(const rule& r, ip_family family);

}  // namespace nflens::iptables::detail
