// SPDX-License-Identifier: MIT
#pragma once

// What every verb shares: reading an input (a path or `-`), choosing its format, reporting diagnostics.

#include <nflens/diagnostic.hpp>
#include <nflens/format.hpp>
#include <nflens/source.hpp>

#include <optional>
#include <string>
#include <vector>

namespace nflens::cli {

/// An input read whole into memory.
struct input {
  std::string name;  ///< the path as given, or "-" for standard input
  std::string text;
};

/// Reads a file or standard input ("-") once, refusing more than `lim.max_input_bytes`. On failure
/// prints `nflens: PATH: reason` to stderr and returns nothing.
std::optional<input> read_input(const std::string& path, const limits& lim = {});

/// The format to parse `in` as: `requested` unless it is "auto", else detected. Prints an error and
/// returns nothing when it cannot tell or the name is unknown.
std::optional<input_format> choose_format(const input& in, const std::string& requested);

/// Prints diagnostics to stderr, rendered with file:line:column and a caret line.
void print_diagnostics(const std::vector<diagnostic>& ds);

}  // namespace nflens::cli
