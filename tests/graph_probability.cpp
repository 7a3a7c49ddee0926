// SPDX-License-Identifier: MIT
// The exact probability arithmetic: iptables' 31-bit statistic thresholds as libxt_statistic computes and
// iptables-save prints them, the kernel's ladder semantics, nft numgen slots.

#include <doctest/doctest.h>

#include <nflens/graph.hpp>

#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

using namespace nflens;

TEST_CASE("statistic thresholds: round(p * 2^31), as iptables 1.8.9 stores them") {
  CHECK(statistic_threshold(0.5) == 0x40000000u);
  CHECK(statistic_threshold(0.5000000000) == 1073741824u);
  // kube-proxy writes 1/3 as 0.3333333333; iptables-save prints it back as 0.33333333349 = 715827883 / 2^31.
  CHECK(statistic_threshold(0.3333333333) == 715827883u);
  CHECK(statistic_threshold(0.33333333349) == 715827883u);
  CHECK(statistic_threshold(0.2000000000) == 429496730u);
  CHECK(statistic_threshold(0.1428571429) == 306783378u);
  CHECK(statistic_threshold(0.0) == 0u);
  CHECK(statistic_threshold(-1.0) == 0u);
  CHECK(statistic_threshold(1.0) == 0x80000000u);
  CHECK(statistic_threshold(2.0) == 0x80000000u);
  // The printed form (%.11f of threshold / 2^31) maps back to the same threshold for every n.
  for (int n = 2; n <= 200; ++n) {
    char kube[32], saved[32];
    std::snprintf(kube, sizeof kube, "%0.10f", 1.0 / n);
    const auto t = statistic_threshold(std::atof(kube));
    std::snprintf(saved, sizeof saved, "%.11f", statistic_probability(t));
    CHECK(statistic_threshold(std::atof(saved)) == t);
  }
  CHECK(statistic_probability(0x40000000u) == 0.5);
  CHECK(statistic_probability(0x80000000u) == 1.0);
}

TEST_CASE("ladder shares: p_i times what the earlier rules left, the last rule takes the rest") {
  // kube-proxy's 3-endpoint ladder: 1/3, 1/2, then the final rule without statistic.
  const std::vector<std::uint32_t> t3{statistic_threshold(0.3333333333), statistic_threshold(0.5), 0x80000000u};
  const auto s3 = ladder_shares(t3);
  REQUIRE(s3.size() == 3);
  const double p0 = 715827883.0 / 2147483648.0;
  CHECK(s3[0] == p0);
  CHECK(s3[1] == (1 - p0) * 0.5);
  CHECK(s3[2] == (1 - p0) * 0.5);
  CHECK(std::accumulate(s3.begin(), s3.end(), 0.0) == doctest::Approx(1.0).epsilon(1e-15));
  // Not exactly uniform: 1/3 rounds up by 1/3 of 2^-31.
  CHECK(s3[0] - 1.0 / 3 == doctest::Approx(1.0 / 3 / 2147483648.0).epsilon(1e-6));
  // Every ladder kube-proxy writes (n up to 1000) is uniform within 1e-6.
  for (std::uint32_t n : {2u, 5u, 7u, 10u, 100u, 1000u}) {
    std::vector<std::uint32_t> t;
    for (std::uint32_t i = 0; i + 1 < n; ++i) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%0.10f", 1.0 / (n - i));
      t.push_back(statistic_threshold(std::atof(buf)));
    }
    t.push_back(0x80000000u);
    const auto s = ladder_shares(t);
    double worst = 0;
    for (double x : s) worst = std::max(worst, std::abs(x - 1.0 / n));
    CHECK(worst < 1e-6);
    CHECK(std::accumulate(s.begin(), s.end(), 0.0) == doctest::Approx(1.0));
  }
  // A ladder without a final catch-all leaves part of the traffic untranslated.
  const auto open = ladder_shares(std::vector<std::uint32_t>{0x40000000u, 0x40000000u});
  CHECK(open[0] == 0.5);
  CHECK(open[1] == 0.25);
  // A non-uniform hand-written ladder: 0.9 then the rest.
  const auto skew = ladder_shares(std::vector<std::uint32_t>{statistic_threshold(0.9), 0x80000000u});
  CHECK(skew[0] == doctest::Approx(0.9).epsilon(1e-9));
  CHECK(skew[1] == doctest::Approx(0.1).epsilon(1e-8));
}

TEST_CASE("numgen shares: 1/N per slot, slots with the same target add up") {
  const std::vector<int> slots{0, 1, 2, 0};
  const auto s = numgen_shares(slots, 3);
  REQUIRE(s.size() == 3);
  CHECK(s[0] == 0.5);
  CHECK(s[1] == 0.25);
  CHECK(s[2] == 0.25);
  const auto gap = numgen_shares(std::vector<int>{0, -1, 1}, 2);  // slot 1 maps to nothing
  CHECK(gap[0] == doctest::Approx(1.0 / 3));
  CHECK(gap[1] == doctest::Approx(1.0 / 3));
  CHECK(numgen_shares(std::vector<int>{}, 2) == std::vector<double>{0.0, 0.0});
}

TEST_CASE("deviation from uniform") {
  service s;
  CHECK(deviation_from_uniform(s) == 0.0);
  s.endpoints.resize(3);
  s.endpoints[0].probability = 0.5;
  s.endpoints[1].probability = 0.25;
  s.endpoints[2].probability = 0.25;
  CHECK(deviation_from_uniform(s) == doctest::Approx(0.5 - 1.0 / 3));
  for (auto& e : s.endpoints) e.probability = 1.0 / 3;
  CHECK(deviation_from_uniform(s) == 0.0);
}

TEST_CASE("service names: ns/name:port") {
  auto n = parse_service_name("kube-system/kube-dns:dns-tcp");
  REQUIRE(n.has_value());
  CHECK(n->name_space == "kube-system");
  CHECK(n->name == "kube-dns");
  CHECK(n->port == "dns-tcp");
  CHECK(n->str() == "kube-system/kube-dns:dns-tcp");
  auto unnamed = parse_service_name("ns/svc:");
  REQUIRE(unnamed.has_value());
  CHECK(unnamed->port.empty());
  CHECK_FALSE(parse_service_name("kubernetes service nodeports").has_value());
  CHECK_FALSE(parse_service_name("ns1/svc1").has_value());
  CHECK_FALSE(parse_service_name("/svc:p").has_value());
  CHECK_FALSE(parse_service_name("a/b/c:p").has_value());
}
