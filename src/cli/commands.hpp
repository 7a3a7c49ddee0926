// SPDX-License-Identifier: MIT
#pragma once

// The verbs of the `nflens` command. Each verb registers its subcommand and options on the app and
// returns the function that runs it once the command line is parsed; that function returns the exit
// status (0 success, 1 input with errors or a negative verdict, 2 usage errors).

#include <functional>

namespace CLI {
class App;
}

namespace nflens::cli {

using runner = std::function<int()>;

runner add_parse(CLI::App& app);
runner add_graph(CLI::App& app);
runner add_compare(CLI::App& app);
runner add_convert(CLI::App& app);

}  // namespace nflens::cli
