// SPDX-License-Identifier: MIT
// The corpus suite reads ../shared (netfilter's and Kubernetes' test data, never committed here).
// Without it every test of this executable is skipped: meson counts exit status 77 as SKIP.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "support.hpp"

#include <cstdio>

int main(int argc, char** argv) {
  if (nflens::test::shared_root().empty()) {
    std::fprintf(stderr, "corpus: ../shared not found (set NFLENS_SHARED); skipping\n");
    return 77;
  }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
