// SPDX-License-Identifier: MIT
// Addresses and prefixes (net.hpp): whatever parses prints back to text that parses to the same value,
// IPv4 is accepted only as a plain dotted quad, prefix lengths fit the family, masks and lengths agree.

#include "fuzz_support.hpp"

#include <nflens/net.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace nflens;
  const std::string_view in = fuzz::text(data, size);

  if (const auto a = parse_ip_address(in)) {
    fuzz::require(in.find('\0') == std::string_view::npos, "an address with a NUL byte is refused");
    if (a->family == ip_family::ipv4)
      fuzz::require(in.find_first_not_of("0123456789.") == std::string_view::npos, "IPv4 is a dotted quad");
    const std::string printed = to_string(*a);
    const auto again = parse_ip_address(printed);
    fuzz::require(again && *again == *a, "a printed address parses to the same address");
    fuzz::require(to_string(*again) == printed, "printing is canonical");
    fuzz::require(contains(ip_prefix{*a, max_prefix_length(a->family)}, *a), "a full-length prefix contains itself");
  }

  if (const auto p = parse_ip_prefix(in)) {
    fuzz::require(in.find('\0') == std::string_view::npos, "a prefix with a NUL byte is refused");
    fuzz::require(p->length <= max_prefix_length(p->address.family), "prefix length fits the family");
    fuzz::require(contains(*p, p->address), "a prefix contains its own address");
    const auto again = parse_ip_prefix(to_string(*p));
    fuzz::require(again && *again == *p, "a printed prefix parses to the same prefix");
    const ip_address mask = mask_of(p->address.family, p->length);
    const auto length = mask_length(mask);
    fuzz::require(length && *length == p->length, "mask_length inverts mask_of");
  }

  if (const auto proto = parse_protocol(in)) {
    if (*proto != l4_protocol::other && *proto != l4_protocol::any) {
      const auto back = parse_protocol(protocol_name(*proto));
      fuzz::require(back && *back == *proto, "a protocol name parses to its protocol");
    }
  }
  return 0;
}
