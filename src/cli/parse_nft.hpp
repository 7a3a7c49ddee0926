// SPDX-License-Identifier: MIT
#pragma once

// The nft branch of `nflens parse` (see parse_nft.cpp).

#include "common.hpp"

namespace nflens::cli {

/// What `nflens parse` asks of nft input.
struct nft_parse_args {
  bool json = false;
  bool print = false;
  bool libnftables_json = false;  ///< the input is libnftables JSON (`nft -j`), read with nft::parse_json
};

/// Parses `in` as nft text (or libnftables JSON), prints diagnostics and a summary; returns the exit status.
int run_nft_parse(input& in, const nft_parse_args& a);

}  // namespace nflens::cli
