// SPDX-License-Identifier: MIT
#pragma once

// Shared by the graph corpus tests: ground-truth comparison (the fields of kube-proxy corpus
// `*.expected.json` and `kpgen --truth`, as ../shared/tools/corpus-check compares them), and kpgen runs.

#include "kernel_support.hpp"
#include "support.hpp"

#include <nflens/graph.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace nflens::test {

using json = nlohmann::json;

/// The differences between a graph's JSON and a ground truth, one line each. A field the graph lists in
/// its service's `unknown` is not compared when `honour_unknown` (those are reported by `unknown_fields`).
inline std::vector<std::string> truth_diff(const json& got, const json& want, bool honour_unknown,
                                           std::vector<std::string>* unknown_fields = nullptr) {
  static const char* fields[] = {"protocol",
                                 "cluster_ip",
                                 "port",
                                 "node_port",
                                 "external_ips",
                                 "load_balancer_ips",
                                 "load_balancer_source_ranges",
                                 "affinity_timeout_s",
                                 "external_traffic_local"};
  std::vector<std::string> out;
  std::map<std::string, const json*> g;
  for (const auto& s : got["services"])
    if (s["service"].is_string()) g[s["service"].get<std::string>()] = &s;
  std::set<std::string> wanted;
  for (const auto& w : want["services"]) {
    const auto name = w["service"].get<std::string>();
    wanted.insert(name);
    auto it = g.find(name);
    if (it == g.end()) {
      out.push_back("missing " + name);
      continue;
    }
    const json& s = *it->second;
    std::vector<std::string> unknown;
    if (s.contains("unknown"))
      for (const auto& u : s["unknown"]) unknown.push_back(u.get<std::string>());
    for (const char* f : fields) {
      if (!w.contains(f)) continue;
      json a = s.contains(f) ? s[f] : json(nullptr), b = w[f];
      if (b.is_array()) {
        if (a.is_null()) a = json::array();
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
      }
      if (a == b) continue;
      const bool is_unknown = std::find(unknown.begin(), unknown.end(), f) != unknown.end();
      if (is_unknown && unknown_fields != nullptr) unknown_fields->push_back(name + "." + f);
      if (is_unknown && honour_unknown) continue;
      out.push_back(name + "." + f + ": " + a.dump() + " != " + b.dump());
    }
    // The addresses the dump cannot classify must be exactly those missing from the two lists.
    if (honour_unknown && s.contains("external_or_load_balancer_ips")) {
      std::vector<std::string> either, expected;
      for (const auto& x : s["external_or_load_balancer_ips"]) either.push_back(x.get<std::string>());
      for (const char* f : {"external_ips", "load_balancer_ips"}) {
        std::vector<std::string> have;
        for (const auto& x : s[f]) have.push_back(x.get<std::string>());
        if (w.contains(f))
          for (const auto& x : w[f])
            if (std::find(have.begin(), have.end(), x.get<std::string>()) == have.end())
              expected.push_back(x.get<std::string>());
      }
      std::sort(either.begin(), either.end());
      std::sort(expected.begin(), expected.end());
      if (either != expected) out.push_back(name + ".external_or_load_balancer_ips do not account for the truth");
    }
    auto eps = [](const json& l) {
      std::vector<std::pair<std::string, int>> v;
      for (const auto& e : l) v.emplace_back(e["ip"].get<std::string>(), e["port"].get<int>());
      std::sort(v.begin(), v.end());
      return v;
    };
    if (eps(s["endpoints"]) != eps(w["endpoints"])) out.push_back(name + ".endpoints differ");
    // Shares: every endpoint of a kube-proxy service gets 1/n (within the 31-bit rounding of the ladder).
    const auto n = s["endpoints"].size();
    for (const auto& e : s["endpoints"])
      if (std::abs(e["probability"].get<double>() - 1.0 / static_cast<double>(n)) > 1e-6)
        out.push_back(name + ".endpoints not uniform");
  }
  for (const auto& [name, s] : g)
    if (!wanted.count(name)) out.push_back("extra " + name);
  return out;
}

/// Runs kpgen with `args`, writing the dump to `dump` and its truth to `truth`. Returns false when it fails.
inline bool kpgen(const std::string& args, const std::filesystem::path& dump, const std::filesystem::path& truth) {
  const auto tool = shared_root() / "tools" / "kpgen";
  const auto r = run_command("python3 '" + tool.string() + "' " + args + " --truth '" + truth.string() + "' > '" +
                             dump.string() + "'");
  return r.status == 0;
}

/// A fresh temporary directory, removed with the object.
class temp_dir {
 public:
  temp_dir() {
    char tmpl[] = "/tmp/nflens-graph-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  ~temp_dir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  [[nodiscard]] const std::filesystem::path& path() const noexcept { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace nflens::test
