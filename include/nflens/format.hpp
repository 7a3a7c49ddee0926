// SPDX-License-Identifier: MIT
#pragma once

/// @file
/// Telling the input formats apart without parsing them.

#include <optional>
#include <string_view>

namespace nflens {

/// The text formats nflens reads.
enum class input_format {
  iptables,  ///< iptables-save / ip6tables-save output, iptables-restore input, `iptables -S` lines
  nft,       ///< `nft list` output and `nft -f` scripts
  nft_json,  ///< libnftables JSON (`nft -j list ruleset`, `nft -j -f` input)
};

/// `"iptables"`, `"nft"` or `"nft-json"`.
[[nodiscard]] std::string_view format_name(input_format f) noexcept;

/// Guesses the format from the first significant token: `*table`, `:CHAIN`, `-A`/`-P`/`-N`/..., `COMMIT`
/// or a `[p:b]` counter prefix mean iptables; `table`, `add`, `define`, `flush` and the other nft
/// command words mean nft; `{` or `[` mean JSON. Blank and `#` lines are skipped, except that an
/// `iptables-save` header comment decides for iptables. Nothing when the text gives no clue (empty, or
/// only comments).
[[nodiscard]] std::optional<input_format> detect_format(std::string_view text) noexcept;

}  // namespace nflens
