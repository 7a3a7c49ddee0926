// SPDX-License-Identifier: MIT
#pragma once

/// @file
/// Typed views of the match modules and target extensions nflens models (iptables-extensions(8)). Each
/// accessor reads the decoded options of one `match` or `target` and returns a plain struct, or nothing
/// when the node is of another module. Cheap: no parsing, no allocation (strings are views into the
/// ruleset's sources). Defaults are filled in as the kernel sees them (recent's `--name DEFAULT`,
/// REJECT's `icmp-port-unreachable`, ...).

#include <nflens/iptables.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace nflens::iptables {

// ---------------------------------------------------------------------------------------------------
// Match modules

/// `-m comment --comment TEXT` (at most 255 bytes).
struct comment_match {
  std::string_view text;
};
[[nodiscard]] std::optional<comment_match> as_comment(const match& m) noexcept;

/// `--mode` of `-m statistic`.
enum class statistic_mode : std::uint8_t { random, nth };
/// `-m statistic --mode random [!] --probability P` or `--mode nth [!] --every N [--packet P]`.
struct statistic_match {
  statistic_mode mode = statistic_mode::random;
  bool negated = false;
  /// random: the kernel's 31-bit fixed-point probability, round(P * 2^31) (xt_statistic compares it
  /// with a random 31-bit number: the rule matches with probability `probability_fixed / 2^31`).
  std::uint32_t probability_fixed = 0;
  std::uint32_t every = 0;   ///< nth: match every N-th packet
  std::uint32_t packet = 0;  ///< nth: initial counter value
  /// random: the exact probability the kernel applies, `probability_fixed / 2^31`.
  [[nodiscard]] double probability() const noexcept { return probability_fixed / 2147483648.0; }
};
[[nodiscard]] std::optional<statistic_match> as_statistic(const match& m) noexcept;

/// `-m recent` (xt_recent): a list of recently seen addresses.
/// What `-m recent` does with the address.
enum class recent_command : std::uint8_t { set, rcheck, update, remove };
struct recent_match {
  recent_command command = recent_command::set;
  bool negated = false;
  std::uint32_t seconds = 0;  ///< 0: no time limit
  bool reap = false;
  std::uint32_t hitcount = 0;  ///< 0: no hit count
  bool rttl = false;
  std::string_view name = "DEFAULT";
  ip_address mask;      ///< defaults to all ones of the ruleset's family
  bool rsource = true;  ///< false: `--rdest`
};
[[nodiscard]] std::optional<recent_match> as_recent(const match& m, ip_family family = ip_family::ipv4) noexcept;

/// `-m mark [!] --mark VALUE[/MASK]` and `-m connmark [!] --mark VALUE[/MASK]`: matches when
/// `(mark & mask) == value`.
struct mark_match {
  std::uint32_t value = 0;
  std::uint32_t mask = 0xffffffff;
  bool negated = false;
};
[[nodiscard]] std::optional<mark_match> as_mark(const match& m) noexcept;
[[nodiscard]] std::optional<mark_match> as_connmark(const match& m) noexcept;

/// Connection tracking states (conntrack `--ctstate`, state `--state`), as bits.
enum ct_state : std::uint16_t {
  ct_invalid = 1u << 0,
  ct_new = 1u << 1,
  ct_related = 1u << 2,
  ct_established = 1u << 3,
  ct_untracked = 1u << 4,
  ct_snat = 1u << 5,  ///< conntrack only
  ct_dnat = 1u << 6,  ///< conntrack only
};
/// Connection tracking status bits (conntrack `--ctstatus`), as the kernel's IPS_* bits.
enum ct_status : std::uint16_t {
  ct_expected = 1u << 0,
  ct_seen_reply = 1u << 1,
  ct_assured = 1u << 2,
  ct_confirmed = 1u << 3,
};

/// `-m state [!] --state STATES`.
struct state_match {
  std::uint16_t states = 0;  ///< `ct_state` bits
  bool negated = false;
};
[[nodiscard]] std::optional<state_match> as_state(const match& m) noexcept;

/// `-m conntrack`. Each criterion is present only when given.
struct conntrack_match {
  struct addresses {
    address_mask value;
    bool negated = false;
  };
  struct ports {
    port_range value;
    bool negated = false;
  };
  std::optional<std::uint16_t> state;  ///< `ct_state` bits
  bool state_negated = false;
  std::optional<std::uint8_t> protocol;
  bool protocol_negated = false;
  std::optional<addresses> orig_source, orig_destination, reply_source, reply_destination;
  std::optional<ports> orig_source_port, orig_destination_port, reply_source_port, reply_destination_port;
  std::optional<std::uint16_t> status;  ///< `ct_status` bits (0 is `NONE`)
  bool status_negated = false;
  std::optional<std::pair<std::uint32_t, std::uint32_t>> expire;  ///< seconds, inclusive range
  bool expire_negated = false;
  std::optional<bool> direction_reply;  ///< `--ctdir REPLY` (true) / `ORIGINAL` (false)
};
[[nodiscard]] std::optional<conntrack_match> as_conntrack(const match& m) noexcept;

/// `-m multiport [!] --sports|--dports|--ports LIST`.
/// Which ports `-m multiport` compares.
enum class multiport_direction : std::uint8_t { source, destination, either };
struct multiport_match {
  multiport_direction direction = multiport_direction::destination;
  std::span<const port_range> ports;
  bool negated = false;
};
[[nodiscard]] std::optional<multiport_match> as_multiport(const match& m) noexcept;

/// Address types of `-m addrtype` (the kernel's RTN_* route types), as bits `1 << RTN_x`.
enum address_type : std::uint16_t {
  addr_unspec = 1u << 0,
  addr_unicast = 1u << 1,
  addr_local = 1u << 2,
  addr_broadcast = 1u << 3,
  addr_anycast = 1u << 4,
  addr_multicast = 1u << 5,
  addr_blackhole = 1u << 6,
  addr_unreachable = 1u << 7,
  addr_prohibit = 1u << 8,
  addr_throw = 1u << 9,
  addr_nat = 1u << 10,
  addr_xresolve = 1u << 11,
};

/// `-m addrtype [!] --src-type TYPES [!] --dst-type TYPES [--limit-iface-in|--limit-iface-out]`.
struct addrtype_match {
  std::uint16_t source_types = 0;  ///< `address_type` bits; 0 when not given
  bool source_negated = false;
  std::uint16_t destination_types = 0;
  bool destination_negated = false;
  bool limit_iface_in = false;
  bool limit_iface_out = false;
};
[[nodiscard]] std::optional<addrtype_match> as_addrtype(const match& m) noexcept;

/// `-m tcp`, `-m udp`, `-m sctp` ports, and tcp's flags and option.
struct port_match {
  std::optional<port_range> source;
  bool source_negated = false;
  std::optional<port_range> destination;
  bool destination_negated = false;
};
/// TCP flag bits as `--tcp-flags` names them.
enum tcp_flag : std::uint8_t {
  tcp_fin = 0x01,
  tcp_syn = 0x02,
  tcp_rst = 0x04,
  tcp_psh = 0x08,
  tcp_ack = 0x10,
  tcp_urg = 0x20,
};
struct tcp_match : port_match {
  struct flags {
    std::uint8_t mask = 0;        ///< flags examined
    std::uint8_t comparison = 0;  ///< flags that must be set among them
    bool negated = false;
  };
  std::optional<flags> tcp_flags;
  std::optional<std::uint8_t> tcp_option;
  bool tcp_option_negated = false;
};
[[nodiscard]] std::optional<tcp_match> as_tcp(const match& m) noexcept;
[[nodiscard]] std::optional<port_match> as_udp(const match& m) noexcept;
struct sctp_match : port_match {
  std::string_view chunk_types;  ///< `--chunk-types` as decoded (`all DATA,INIT`); empty when absent
  bool chunk_types_negated = false;
};
[[nodiscard]] std::optional<sctp_match> as_sctp(const match& m) noexcept;

/// `-m icmp [!] --icmp-type T[/C]` and `-m icmp6 [!] --icmpv6-type T[/C]`.
struct icmp_match {
  std::uint8_t type = 0;
  std::uint8_t code_min = 0;
  std::uint8_t code_max = 0xff;
  bool any = false;  ///< IPv4 `any`
  bool negated = false;
};
[[nodiscard]] std::optional<icmp_match> as_icmp(const match& m) noexcept;
[[nodiscard]] std::optional<icmp_match> as_icmp6(const match& m) noexcept;

/// `-m set [!] --match-set NAME FLAGS [--return-nomatch] [! --update-counters] ...`.
struct set_match {
  set_reference set;
  bool negated = false;
  bool return_nomatch = false;
  bool update_counters = true;
  bool update_subcounters = true;
};
[[nodiscard]] std::optional<set_match> as_set(const match& m) noexcept;

/// `-m limit --limit RATE --limit-burst N`.
struct limit_match {
  /// The kernel's average: 1/10000 s per packet (XT_LIMIT_SCALE); 3/hour is 12000000.
  std::uint32_t average = 10000 * 3600 / 3;
  std::uint32_t burst = 5;  ///< `--limit-burst`; 0 is the default 5, as iptables-nft's kernel takes it
  /// Packets per second the average allows.
  [[nodiscard]] double per_second() const noexcept { return average ? 10000.0 / average : 0.0; }
};
[[nodiscard]] std::optional<limit_match> as_limit(const match& m) noexcept;

/// `-m physdev` (bridge ports).
struct physdev_match {
  std::optional<std::string_view> in, out;
  bool in_negated = false, out_negated = false;
  std::optional<bool> is_in, is_out, is_bridged;  ///< present when given; value false when negated
};
[[nodiscard]] std::optional<physdev_match> as_physdev(const match& m) noexcept;

/// `-m nfacct --nfacct-name NAME`.
struct nfacct_match {
  std::string_view name;
};
[[nodiscard]] std::optional<nfacct_match> as_nfacct(const match& m) noexcept;

// ---------------------------------------------------------------------------------------------------
// Targets

/// DNAT, SNAT, MASQUERADE and REDIRECT (which one is `target::id`).
struct nat_target {
  std::optional<nat_range> range;  ///< `--to-destination`, `--to-source`, `--to-ports`
  bool random = false;
  bool random_fully = false;
  bool persistent = false;
};
[[nodiscard]] std::optional<nat_target> as_nat(const target& t) noexcept;

/// MARK: `mark = (mark & ~mask) ^ value` (every spelling reduces to this, `--set-xmark`).
struct mark_target {
  std::uint32_t value = 0;
  std::uint32_t mask = 0;
};
[[nodiscard]] std::optional<mark_target> as_mark(const target& t) noexcept;

/// CONNMARK.
/// What CONNMARK does.
enum class connmark_mode : std::uint8_t { set, save, restore };
struct connmark_target {
  connmark_mode mode = connmark_mode::set;
  std::uint32_t value = 0;  ///< set: `ctmark = (ctmark & ~mask) ^ value`
  std::uint32_t mask = 0;
  std::uint32_t nfmask = 0xffffffff;  ///< save/restore
  std::uint32_t ctmask = 0xffffffff;
  std::uint8_t left_shift = 0;
  std::uint8_t right_shift = 0;
};
[[nodiscard]] std::optional<connmark_target> as_connmark(const target& t) noexcept;

/// REJECT `--reject-with TYPE` (defaults: icmp-port-unreachable, icmp6-port-unreachable).
struct reject_target {
  std::string_view with;  ///< the canonical name iptables-save prints
  bool tcp_reset = false;  ///< `tcp-reset`: a TCP RST, not an ICMP error
  std::uint8_t code = 3;   ///< otherwise the ICMP (iptables) or ICMPv6 (ip6tables) code sent: 3 and 4 are port-unreachable
};
[[nodiscard]] std::optional<reject_target> as_reject(const target& t, ip_family family = ip_family::ipv4) noexcept;

/// LOG.
struct log_target {
  std::uint8_t level = 4;  ///< syslog level (4 = warning)
  std::string_view prefix;
  bool tcp_sequence = false, tcp_options = false, ip_options = false, uid = false, macdecode = false;
};
[[nodiscard]] std::optional<log_target> as_log(const target& t) noexcept;

/// NFLOG.
struct nflog_target {
  std::uint16_t group = 0;
  std::string_view prefix;
  std::optional<std::uint32_t> size;  ///< `--nflog-size` (or `--nflog-range`)
  std::uint16_t threshold = 1;
};
[[nodiscard]] std::optional<nflog_target> as_nflog(const target& t) noexcept;

/// TPROXY.
struct tproxy_target {
  std::uint16_t port = 0;
  std::optional<ip_address> address;
  std::uint32_t mark = 0;
  std::uint32_t mask = 0;
};
[[nodiscard]] std::optional<tproxy_target> as_tproxy(const target& t) noexcept;

}  // namespace nflens::iptables
