// SPDX-License-Identifier: MIT
// The iptables AST as JSON (json.hpp).
#include <nflens/json.hpp>

#include "modules.hpp"
#include "values.hpp"

namespace nflens::iptables {

namespace {

using json = nlohmann::json;

json where(const source* file, span s) {
  if (file == nullptr) return nullptr;
  const location at = file->locate(s);
  return {{"line", at.line}, {"column", at.column}, {"offset", s.offset}, {"length", s.length}};
}

json address_json(const address_mask& m) {
  json j{{"address", to_string(m.address)}};
  if (const auto len = prefix_length(m))
    j["prefix"] = *len;
  else
    j["mask"] = to_string(m.mask);
  return j;
}

json value_json(const option& o) {
  switch (o.kind) {
    case value_kind::none:
      return nullptr;
    case value_kind::number:
      return o.number();
    case value_kind::text:
      return std::string(o.text());
    case value_kind::ports:
      return {{"first", o.ports().first}, {"last", o.ports().last}};
    case value_kind::port_list: {
      json a = json::array();
      for (const auto& r : o.port_list()) a.push_back({{"first", r.first}, {"last", r.last}});
      return a;
    }
    case value_kind::pair:
      return json::array({o.first(), o.second()});
    case value_kind::address:
      return address_json(o.address());
    case value_kind::nat_range: {
      const auto& n = o.nat();
      json j = json::object();
      if (n.has_address) {
        j["min_address"] = to_string(n.min_address);
        j["max_address"] = to_string(n.max_address);
      }
      if (n.has_ports) {
        j["min_port"] = n.ports.first;
        j["max_port"] = n.ports.last;
        if (n.base_port) j["base_port"] = n.base_port;
      }
      return j;
    }
    case value_kind::set: {
      const auto& s = o.set();
      json flags = json::array();
      for (unsigned i = 0; i < s.dimensions; ++i) flags.push_back((s.source_flags & (1u << i)) ? "src" : "dst");
      return {{"name", std::string(s.name)}, {"flags", flags}};
    }
    case value_kind::generic: {
      json a = json::array();
      for (const auto& arg : o.generic_value().arguments) a.push_back(std::string(arg.text));
      return a;
    }
  }
  return nullptr;
}

json options_json(const source* file, std::span<const option> opts) {
  json a = json::array();
  for (const auto& o : opts) {
    json j{{"name", std::string(name(o))}, {"negated", o.negated}, {"value", value_json(o)}};
    if (file != nullptr) j["raw"] = std::string(file->text(o.where));
    j["location"] = where(file, o.where);
    a.push_back(std::move(j));
  }
  return a;
}

std::string_view target_kind(target_id t) {
  switch (t) {
    case target_id::none:
      return "none";
    case target_id::chain:
      return "chain";
    case target_id::accept:
      return "accept";
    case target_id::drop:
      return "drop";
    case target_id::return_:
      return "return";
    case target_id::queue:
      return "queue";
    case target_id::generic:
      return "generic";
    case target_id::connmark:
      return "connmark";
    case target_id::dnat:
      return "dnat";
    case target_id::log:
      return "log";
    case target_id::mark:
      return "mark";
    case target_id::masquerade:
      return "masquerade";
    case target_id::nflog:
      return "nflog";
    case target_id::redirect:
      return "redirect";
    case target_id::reject:
      return "reject";
    case target_id::snat:
      return "snat";
    case target_id::tproxy:
      return "tproxy";
  }
  return "generic";
}

json spec_json(const source* file, const rule& s) {
  json j = json::object();
  auto addresses = [&](std::span<const address_match> as) {
    json a = json::array();
    for (const auto& m : as) {
      json x = address_json(m.value);
      x["negated"] = m.negated;
      x["location"] = where(file, m.where);
      a.push_back(std::move(x));
    }
    return a;
  };
  if (!s.source().empty()) j["source"] = addresses(s.source());
  if (!s.destination().empty()) j["destination"] = addresses(s.destination());
  auto iface = [&](const interface_match* i) {
    return json{{"name", std::string(i->name)}, {"negated", i->negated}, {"location", where(file, i->where)}};
  };
  if (s.in_interface() != nullptr) j["in_interface"] = iface(s.in_interface());
  if (s.out_interface() != nullptr) j["out_interface"] = iface(s.out_interface());
  if (const protocol_match protocol = s.protocol(); protocol.present) {
    const auto n = detail::protocol_print_name(protocol.number);
    j["protocol"] = {{"number", protocol.number},
                     {"name", protocol.number == 0 ? "all" : std::string(n)},
                     {"negated", protocol.negated},
                     {"location", where(file, protocol.where)}};
  }
  if (const fragment_match fragment = s.fragment(); fragment.present)
    j["fragment"] = {{"negated", fragment.negated}, {"location", where(file, fragment.where)}};
  if (s.counters() != nullptr) j["counters"] = {{"packets", s.counters()->packets}, {"bytes", s.counters()->bytes}};
  json ms = json::array();
  for (const auto& m : s.matches())
    ms.push_back({{"module", std::string(m.name())},
                  {"typed", m.id != module_id::generic},
                  {"implicit", m.implicit},
                  {"location", where(file, m.where)},
                  {"options", options_json(file, m.options())}});
  j["matches"] = std::move(ms);
  if (const struct target target = s.target(); target.id != target_id::none)
    j["target"] = {{"name", std::string(target.name)},
                   {"kind", target_kind(target.id)},
                   {"goto", target.is_goto},
                   {"location", where(file, target.where)},
                   {"options", options_json(file, target.options)}};
  return j;
}

json counters_json(const chain& c) {
  if (!c.has_counters) return nullptr;
  return {{"packets", c.counters.packets}, {"bytes", c.counters.bytes}};
}

}  // namespace

void to_json(nlohmann::json& j, const rule& r) {
  const source* file = r.file;
  j = json::object();
  j["command"] = command_option(r.command);
  if (!r.chain().empty()) j["chain"] = std::string(r.chain());
  if (r.position() != 0) j["position"] = r.position();
  if (r.command == command_kind::policy) j["policy"] = policy_name(r.policy);
  if (r.command == command_kind::rename_chain) j["new_name"] = std::string(r.new_name());
  if (r.only != family_filter::any) j["only"] = r.only == family_filter::ipv4 ? "ipv4" : "ipv6";
  j["location"] = where(file, r.where);
  if (r.has_spec()) j.update(spec_json(file, r));
}

void to_json(nlohmann::json& j, const ruleset& rs) {
  j = json::object();
  j["family"] = rs.family == ip_family::ipv4 ? "ipv4" : "ipv6";
  j["applied"] = rs.applied;
  json tables = json::array();
  for (const auto& t : rs.tables) {
    json tj{{"table", table_name(t.id)}, {"committed", t.committed}, {"location", where(t.file, t.where)}};
    json chains = json::array();
    for (const auto& c : t.chains) {
      json cj{{"name", std::string(c.name)},
              {"policy", policy_name(c.policy)},
              {"builtin", c.builtin},
              {"counters", counters_json(c)},
              {"location", where(c.file, c.where)}};
      if (t.applied) {
        cj["first_rule"] = c.first_rule;
        cj["rule_count"] = c.rule_count;
      }
      chains.push_back(std::move(cj));
    }
    tj["chains"] = std::move(chains);
    json rules = json::array();
    for (const auto& r : t.rules) rules.push_back(r);
    tj["rules"] = std::move(rules);
    tables.push_back(std::move(tj));
  }
  j["tables"] = std::move(tables);
}

}  // namespace nflens::iptables
