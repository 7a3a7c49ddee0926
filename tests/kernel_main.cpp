// SPDX-License-Identifier: MIT
// The kernel suite uses the real netfilter tools in a fresh network namespace as an oracle. It needs
// root, `ip netns` and the tools; without them every test of this executable is skipped (exit 77).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "kernel_support.hpp"

#include <cstdio>

int main(int argc, char** argv) {
  if (const auto why = nflens::test::kernel_unavailable(); !why.empty()) {
    std::fprintf(stderr, "kernel: %s; skipping\n", why.c_str());
    return 77;
  }
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
