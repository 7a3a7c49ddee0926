// SPDX-License-Identifier: MIT
#include "graph_input.hpp"

#include "common.hpp"

#include <nflens/iptables.hpp>
#include <nflens/nft.hpp>
#include <nflens/nft_json.hpp>

#include <fmt/format.h>

#include <cstdio>

namespace nflens::cli {

namespace {

bool has_errors(const std::vector<diagnostic>& ds) { return error_count(ds) != 0; }

/// Parses an input read already; nothing (diagnostics printed) when it has errors.
template <class Parse>
auto parse_input(input in, Parse parse) -> std::optional<decltype(parse(std::string{}, std::string{}))> {
  auto r = parse(std::move(in.name), std::move(in.text));
  print_diagnostics(r.diagnostics);
  if (!r.ok()) return std::nullopt;
  return r;
}

/// Reads and parses an update, which must have the format `want` of the dump it is applied to.
template <class Parse>
auto read_update(const std::string& path, const std::string& format, input_format want, Parse parse)
    -> std::optional<decltype(parse(std::string{}, std::string{}))> {
  auto in = read_input(path);
  if (!in) return std::nullopt;
  const auto f = choose_format(*in, format);
  if (!f) return std::nullopt;
  if (*f != want) {
    fmt::print(stderr, "nflens: {}: an update must have the format of the dump it is applied to\n", in->name);
    return std::nullopt;
  }
  return parse_input(std::move(*in), parse);
}

std::optional<dispatch_graph> finish(result<dispatch_graph> g) {
  print_diagnostics(g.diagnostics);
  if (!g.ok()) return std::nullopt;
  return std::move(g.value);
}

std::optional<dispatch_graph> load_iptables(input in, const std::vector<std::string>& paths,
                                            const std::string& format) {
  const auto parse = [](std::string name, std::string text) {
    return iptables::parse(std::move(name), std::move(text));
  };
  auto first = parse_input(std::move(in), parse);
  if (!first) return std::nullopt;
  if (paths.size() == 1) return finish(build_graph(first->value));
  // The dump as the kernel holds it, then each update as `iptables-restore --noflush` applies it.
  iptables::ruleset state;
  state.applied = true;
  state.family = first->value.family;
  auto ds = iptables::apply(state, first->value);
  print_diagnostics(ds);
  if (has_errors(ds)) return std::nullopt;
  std::vector<iptables::ruleset> inputs;  // kept alive: applied nodes may live in their arenas
  inputs.push_back(std::move(first->value));
  for (std::size_t i = 1; i < paths.size(); ++i) {
    auto next = read_update(paths[i], format, input_format::iptables, parse);
    if (!next) return std::nullopt;
    iptables::apply_options noflush;
    noflush.noflush = true;
    ds = iptables::apply(state, next->value, noflush);
    print_diagnostics(ds);
    if (has_errors(ds)) return std::nullopt;
    inputs.push_back(std::move(next->value));
  }
  return finish(build_graph(state));
}

/// nft text or nft's JSON (`nft -j list`, `nft -j -f` input): both read into the same script form.
std::optional<dispatch_graph> load_nft(input in, const std::vector<std::string>& paths, const std::string& format,
                                       input_format want) {
  const auto parse = [want](std::string name, std::string text) {
    return want == input_format::nft_json ? nft::parse_json(std::move(name), std::move(text))
                                          : nft::parse(std::move(name), std::move(text));
  };
  auto first = parse_input(std::move(in), parse);
  if (!first) return std::nullopt;
  // The listing or script as `nft -f` into an empty ruleset, then each update as one more `nft -f`.
  auto state = nft::to_ruleset(first->value);
  print_diagnostics(state.diagnostics);
  if (!state.ok()) return std::nullopt;
  std::vector<nft::script> inputs;  // kept alive: the ruleset refers to their nodes
  inputs.push_back(std::move(first->value));
  for (std::size_t i = 1; i < paths.size(); ++i) {
    auto next = read_update(paths[i], format, want, parse);
    if (!next) return std::nullopt;
    const auto ds = nft::apply(state.value, next->value);
    print_diagnostics(ds);
    if (has_errors(ds)) return std::nullopt;
    inputs.push_back(std::move(next->value));
  }
  return finish(build_graph(state.value));
}

}  // namespace

std::optional<dispatch_graph> load_graph(const std::vector<std::string>& paths, const std::string& format) {
  if (paths.empty()) return std::nullopt;
  // The format of the first input decides.
  auto in = read_input(paths[0]);
  if (!in) return std::nullopt;
  const auto f = choose_format(*in, format);
  if (!f) return std::nullopt;
  switch (*f) {
    case input_format::iptables:
      return load_iptables(std::move(*in), paths, format);
    case input_format::nft:
    case input_format::nft_json:
      return load_nft(std::move(*in), paths, format, *f);
  }
  return std::nullopt;
}

std::optional<dispatch_graph> load_graph(const std::string& path, const std::string& format) {
  return load_graph(std::vector<std::string>{path}, format);
}

}  // namespace nflens::cli
