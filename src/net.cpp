// SPDX-License-Identifier: MIT
#include <nflens/net.hpp>

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>

namespace nflens {

std::optional<ip_address> parse_ip_address(std::string_view text) noexcept {
  // inet_pton needs a terminated string; the longest textual IPv6 address is 45 characters.
  std::array<char, INET6_ADDRSTRLEN + 1> buf{};
  // inet_pton stops at a NUL: "1.2.3.4\0junk" must not pass as 1.2.3.4.
  if (text.empty() || text.size() >= buf.size() || text.find('\0') != std::string_view::npos) return std::nullopt;
  std::memcpy(buf.data(), text.data(), text.size());
  ip_address a;
  if (text.find(':') == std::string_view::npos) {
    if (inet_pton(AF_INET, buf.data(), a.bytes.data()) != 1) return std::nullopt;
    a.family = ip_family::ipv4;
  } else {
    if (inet_pton(AF_INET6, buf.data(), a.bytes.data()) != 1) return std::nullopt;
    a.family = ip_family::ipv6;
  }
  return a;
}

std::string to_string(const ip_address& a) {
  std::array<char, INET6_ADDRSTRLEN> buf{};
  const int af = a.family == ip_family::ipv4 ? AF_INET : AF_INET6;
  if (inet_ntop(af, a.bytes.data(), buf.data(), buf.size()) == nullptr) return {};
  return buf.data();
}

namespace {
// The numbers of a dotted host name as inet_aton(3) reads them: up to four parts, each decimal, octal
// after a leading 0 or hex after 0x. `numeric` tells whether every part is made of its base's digit
// characters (`08` is numeric but no octal number); `valid`, whether each also fits 32 bits and is a
// number of its base, and there are at most four.
struct aton_reading {
  std::array<std::uint32_t, 4> parts{};
  std::size_t count = 0;
  bool numeric = true;
  bool valid = true;
};
aton_reading read_aton(std::string_view text) noexcept {
  aton_reading r;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t dot = std::min(text.find('.', start), text.size());
    std::string_view part = text.substr(start, dot - start);
    start = dot + 1;
    unsigned base = 10;
    if (part.size() >= 2 && part[0] == '0' && (part[1] == 'x' || part[1] == 'X')) {
      base = 16;
      part.remove_prefix(2);
    } else if (part.size() >= 2 && part[0] == '0') {
      base = 8;
    }
    if (part.empty()) return r.numeric = r.valid = false, r;
    std::uint64_t v = 0;
    for (const char c : part) {
      unsigned d = 16;
      if (c >= '0' && c <= '9') d = static_cast<unsigned>(c - '0');
      else if (base == 16 && (c | 0x20) >= 'a' && (c | 0x20) <= 'f') d = static_cast<unsigned>((c | 0x20) - 'a' + 10);
      if (d == 16) return r.numeric = r.valid = false, r;
      if (d >= base || v > 0xffffffffu) r.valid = false;
      v = v * base + d;
    }
    if (v > 0xffffffffu || r.count == r.parts.size()) r.valid = false;
    if (r.count < r.parts.size()) r.parts[r.count] = static_cast<std::uint32_t>(v);
    ++r.count;
  }
  return r;
}
}  // namespace

std::optional<ip_address> parse_ipv4_inet_aton(std::string_view text) noexcept {
  const aton_reading r = read_aton(text);
  if (!r.valid) return std::nullopt;
  std::uint32_t value = 0;
  for (std::size_t i = 0; i + 1 < r.count; ++i) {
    if (r.parts[i] > 0xff) return std::nullopt;
    value |= r.parts[i] << (24 - 8 * i);
  }
  const unsigned last_bits = 32 - 8 * static_cast<unsigned>(r.count - 1);
  if (last_bits < 32 && r.parts[r.count - 1] >> last_bits != 0) return std::nullopt;
  return ipv4(value | r.parts[r.count - 1]);
}

bool is_numeric_host(std::string_view text) noexcept {
  return !text.empty() && text.front() >= '0' && text.front() <= '9' && read_aton(text).numeric;
}

ip_address ipv4(std::uint32_t host_order) noexcept {
  ip_address a;
  a.bytes[0] = static_cast<std::uint8_t>(host_order >> 24);
  a.bytes[1] = static_cast<std::uint8_t>(host_order >> 16);
  a.bytes[2] = static_cast<std::uint8_t>(host_order >> 8);
  a.bytes[3] = static_cast<std::uint8_t>(host_order);
  return a;
}

std::optional<ip_prefix> parse_ip_prefix(std::string_view text) noexcept {
  const auto slash = text.find('/');
  const auto address = parse_ip_address(text.substr(0, slash));
  if (!address) return std::nullopt;
  const std::uint8_t full = max_prefix_length(address->family);
  if (slash == std::string_view::npos) return ip_prefix{*address, full};
  const std::string_view digits = text.substr(slash + 1);
  unsigned length = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), length);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || length > full)
    return std::nullopt;
  return ip_prefix{*address, static_cast<std::uint8_t>(length)};
}

std::string to_string(const ip_prefix& p) { return to_string(p.address) + '/' + std::to_string(p.length); }

bool contains(const ip_prefix& p, const ip_address& a) noexcept {
  if (p.address.family != a.family) return false;
  const unsigned whole = p.length / 8;
  if (std::memcmp(p.address.bytes.data(), a.bytes.data(), whole) != 0) return false;
  const unsigned rest = p.length % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<std::uint8_t>(0xff00u >> rest);
  return (p.address.bytes[whole] & mask) == (a.bytes[whole] & mask);
}

std::optional<std::uint8_t> mask_length(const ip_address& mask) noexcept {
  const unsigned size = mask.family == ip_family::ipv4 ? 4 : 16;
  unsigned length = 0;
  unsigned i = 0;
  for (; i < size && mask.bytes[i] == 0xff; ++i) length += 8;
  if (i < size) {
    const std::uint8_t b = mask.bytes[i];
    unsigned ones = 0;
    while (ones < 8 && (b & (0x80u >> ones)) != 0) ++ones;
    if (static_cast<std::uint8_t>(0xff00u >> ones) != b) return std::nullopt;
    length += ones;
    for (++i; i < size; ++i)
      if (mask.bytes[i] != 0) return std::nullopt;
  }
  return static_cast<std::uint8_t>(length);
}

ip_address mask_of(ip_family f, std::uint8_t length) noexcept {
  ip_address m;
  m.family = f;
  const unsigned full = max_prefix_length(f);
  if (length > full) length = static_cast<std::uint8_t>(full);
  for (unsigned i = 0; i < length / 8u; ++i) m.bytes[i] = 0xff;
  if (length % 8 != 0) m.bytes[length / 8] = static_cast<std::uint8_t>(0xff00u >> (length % 8));
  return m;
}

ip_address masked(const ip_address& a, const ip_address& mask) noexcept {
  ip_address out = a;
  for (std::size_t i = 0; i < out.bytes.size(); ++i) out.bytes[i] &= mask.bytes[i];
  return out;
}

ip_prefix masked(const ip_prefix& p) noexcept {
  const auto length = std::min(p.length, max_prefix_length(p.address.family));
  return {masked(p.address, mask_of(p.address.family, length)), length};
}

std::optional<std::uint8_t> protocol_number(l4_protocol p) noexcept {
  switch (p) {
    case l4_protocol::tcp: return 6;
    case l4_protocol::udp: return 17;
    case l4_protocol::sctp: return 132;
    case l4_protocol::icmp: return 1;
    case l4_protocol::icmpv6: return 58;
    case l4_protocol::udplite: return 136;
    case l4_protocol::dccp: return 33;
    case l4_protocol::esp: return 50;
    case l4_protocol::ah: return 51;
    case l4_protocol::gre: return 47;
    case l4_protocol::any:
    case l4_protocol::other: return std::nullopt;
  }
  return std::nullopt;
}

std::string_view protocol_name(l4_protocol p) noexcept {
  switch (p) {
    case l4_protocol::any: return "all";
    case l4_protocol::tcp: return "tcp";
    case l4_protocol::udp: return "udp";
    case l4_protocol::sctp: return "sctp";
    case l4_protocol::icmp: return "icmp";
    case l4_protocol::icmpv6: return "icmpv6";
    case l4_protocol::udplite: return "udplite";
    case l4_protocol::dccp: return "dccp";
    case l4_protocol::esp: return "esp";
    case l4_protocol::ah: return "ah";
    case l4_protocol::gre: return "gre";
    case l4_protocol::other: return "other";
  }
  return "other";
}

std::optional<l4_protocol> parse_protocol(std::string_view name) noexcept {
  struct entry {
    std::string_view name;
    l4_protocol proto;
  };
  static constexpr std::array<entry, 17> table{{
      {"all", l4_protocol::any},        {"tcp", l4_protocol::tcp},         {"6", l4_protocol::tcp},
      {"udp", l4_protocol::udp},        {"17", l4_protocol::udp},          {"sctp", l4_protocol::sctp},
      {"132", l4_protocol::sctp},       {"icmp", l4_protocol::icmp},       {"1", l4_protocol::icmp},
      {"icmpv6", l4_protocol::icmpv6},  {"ipv6-icmp", l4_protocol::icmpv6}, {"58", l4_protocol::icmpv6},
      {"udplite", l4_protocol::udplite}, {"dccp", l4_protocol::dccp},       {"esp", l4_protocol::esp},
      {"ah", l4_protocol::ah},          {"gre", l4_protocol::gre},
  }};
  for (const auto& e : table)
    if (e.name == name) return e.proto;
  return std::nullopt;
}

}  // namespace nflens

std::size_t std::hash<nflens::ip_address>::operator()(const nflens::ip_address& a) const noexcept {
  // FNV-1a over the family and the bytes: cheap, and good enough for hash maps keyed by address.
  std::size_t h = 1469598103934665603ull;
  auto mix = [&h](std::uint8_t b) { h = (h ^ b) * 1099511628211ull; };
  mix(static_cast<std::uint8_t>(a.family));
  for (auto b : a.bytes) mix(b);
  return h;
}
