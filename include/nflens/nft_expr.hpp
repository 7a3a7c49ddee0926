// SPDX-License-Identifier: MIT
#pragma once

/// @file
/// The nftables expression and statement nodes: what one rule of `nft list` output or of an `nft -f`
/// script says, typed. The words follow nft(8) and the nonterminals of nftables' `parser_bison.y`
/// (`payload_expr`, `meta_expr`, `ct_expr`, `relational_expr`, `verdict_stmt`, `nat_stmt`, ...).
///
/// Shapes. Nodes are small trivially copyable value types that live in the arena of the `source` they
/// were parsed from (see source.hpp): expressions are trees of `expr` linked by `const expr*`, arrays
/// are spans into the arena, text is a view into the source text (or into the arena for text that
/// nflens composed). Every node has a `span` relative to the source of the top-level node (rule,
/// element, set, chain, command) that contains it. Nodes have no behaviour: printing, JSON and the
/// dispatch graph are separate passes.
///
/// Size. A 34 MB kube-proxy dump holds a million expressions and half a million statements, so the
/// nodes are compact: `expr` 24 bytes, `stmt` 28, `rule` 48, `chain` 72. Arrays and text in the nodes
/// that are most numerous are `node_span` and `text_view` (12 bytes, converting to and from
/// `std::span` and `std::string_view`), numbers and pointers `unaligned<T>` (so that no alternative
/// is padded); the two operands of a binary node are two consecutive nodes
/// (`binop_expr::left()`, `right()`); an IPv6 address and the rare large nodes (`hash_spec`,
/// `meter_spec`) live out of line in the arena.
///
/// Values are stored decoded: `0x4000` and `16384` are the same `integer_expr`, `10800s` and `3h` the
/// same duration, `mark` and `meta mark` the same `meta_expr`, `or` and `|` the same `binop`. Symbolic
/// constants (`established`, `syn`, `tcp`, `echo-request`) stay `symbol_expr`: their meaning depends on
/// the datatype of the other side of the relation (see nft_types.hpp).

#include <nflens/net.hpp>
#include <nflens/source.hpp>

#include <array>
#include <bit>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <variant>

namespace nflens::nft {

/// A `T` stored in `sizeof(T)` bytes at any address (alignment 1), read and written by value. The
/// alternatives of `expr` and `stmt` hold their numbers and pointers this way, so that the variants
/// need no padding (an `expr` is 24 bytes, a `stmt` 28: a dump's million expressions are most of its
/// AST) and stay ordinary types: a member reads as a `T` (`x.value + 1`, `p->left`), takes a `T`
/// (`x.value = 5`), and binding a reference to the member itself is safe (unlike `[[gnu::packed]]`,
/// whose members bound to `const T&` are misaligned references).
template <class T>
struct unaligned {
  static_assert(std::is_trivially_copyable_v<T>);
  std::array<unsigned char, sizeof(T)> bytes_;

  unaligned() = default;  // trivial, as T; a member with `= {}` or an initializer is set
  constexpr unaligned(T v) noexcept : bytes_(std::bit_cast<std::array<unsigned char, sizeof(T)>>(v)) {}
  [[nodiscard]] constexpr T get() const noexcept { return std::bit_cast<T>(bytes_); }
  constexpr operator T() const noexcept { return get(); }
  /// For pointers: `p->member`, `*p`.
  constexpr T operator->() const noexcept
    requires std::is_pointer_v<T>
  {
    return get();
  }
  constexpr decltype(auto) operator*() const noexcept
    requires std::is_pointer_v<T>
  {
    return *get();
  }
};

/// Text held by a node: a `std::string_view` in 12 bytes (pointer and 32-bit length, unaligned), so that
/// nodes that name something stay small. Converts to and from `std::string_view`; compares as one.
struct text_view {
  unaligned<const char*> ptr_;  // no default member initializers: the type stays trivial;
  unaligned<std::uint32_t> size_;  // `text_view{}` is empty.

  text_view() = default;
  constexpr text_view(std::string_view v) noexcept : ptr_(v.data()), size_(static_cast<std::uint32_t>(v.size())) {}
  constexpr text_view(const char* c) noexcept : text_view(std::string_view(c)) {}
  [[nodiscard]] constexpr std::string_view view() const noexcept { return {ptr_.get(), size_.get()}; }
  constexpr operator std::string_view() const noexcept { return view(); }
  [[nodiscard]] constexpr const char* data() const noexcept { return ptr_; }
  [[nodiscard]] constexpr std::size_t size() const noexcept { return size_; }
  [[nodiscard]] constexpr bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] constexpr const char* begin() const noexcept { return ptr_; }
  [[nodiscard]] constexpr const char* end() const noexcept { return ptr_ + size_; }
  [[nodiscard]] constexpr char front() const noexcept { return ptr_[0]; }
  [[nodiscard]] constexpr char back() const noexcept { return ptr_[size_ - 1]; }
  [[nodiscard]] constexpr char operator[](std::size_t i) const noexcept { return ptr_[i]; }
  [[nodiscard]] constexpr bool starts_with(std::string_view p) const noexcept { return view().starts_with(p); }
  [[nodiscard]] constexpr bool ends_with(std::string_view p) const noexcept { return view().ends_with(p); }
  [[nodiscard]] constexpr bool starts_with(char c) const noexcept { return view().starts_with(c); }
  [[nodiscard]] constexpr bool ends_with(char c) const noexcept { return view().ends_with(c); }
  [[nodiscard]] constexpr std::string_view substr(std::size_t pos, std::size_t n = std::string_view::npos) const {
    return view().substr(pos, n);
  }
  [[nodiscard]] constexpr std::size_t find(std::string_view p, std::size_t pos = 0) const noexcept {
    return view().find(p, pos);
  }
  [[nodiscard]] constexpr std::size_t find(char c, std::size_t pos = 0) const noexcept { return view().find(c, pos); }
  friend constexpr bool operator==(text_view a, text_view b) noexcept { return a.view() == b.view(); }
  friend constexpr bool operator==(text_view a, std::string_view b) noexcept { return a.view() == b; }
  friend constexpr bool operator==(text_view a, const char* b) noexcept { return a.view() == b; }
  friend constexpr auto operator<=>(text_view a, text_view b) noexcept { return a.view() <=> b.view(); }
  friend constexpr auto operator<=>(text_view a, std::string_view b) noexcept { return a.view() <=> b; }
};

/// An array of nodes in the arena: a `std::span<const T>` in 12 bytes (pointer and 32-bit count,
/// unaligned). Iterates and indexes as a span and converts to and from one.
template <class T>
struct node_span {
  unaligned<const T*> ptr_;  // trivial, as text_view; `node_span{}` is empty
  unaligned<std::uint32_t> size_;

  node_span() = default;
  constexpr node_span(std::span<const T> s) noexcept : ptr_(s.data()), size_(static_cast<std::uint32_t>(s.size())) {}
  [[nodiscard]] constexpr std::span<const T> view() const noexcept { return {ptr_.get(), size_.get()}; }
  constexpr operator std::span<const T>() const noexcept { return view(); }
  [[nodiscard]] constexpr const T* data() const noexcept { return ptr_; }
  [[nodiscard]] constexpr std::size_t size() const noexcept { return size_; }
  [[nodiscard]] constexpr bool empty() const noexcept { return size_ == 0; }
  [[nodiscard]] constexpr const T* begin() const noexcept { return ptr_; }
  [[nodiscard]] constexpr const T* end() const noexcept { return ptr_ + size_; }
  [[nodiscard]] constexpr const T& front() const noexcept { return ptr_[0]; }
  [[nodiscard]] constexpr const T& back() const noexcept { return ptr_[size_ - 1]; }
  [[nodiscard]] constexpr const T& operator[](std::size_t i) const noexcept { return ptr_[i]; }
  [[nodiscard]] constexpr std::span<const T> subspan(std::size_t pos, std::size_t n = std::dynamic_extent) const {
    return view().subspan(pos, n);
  }
  [[nodiscard]] constexpr std::span<const T> first(std::size_t n) const { return view().first(n); }
  [[nodiscard]] constexpr std::span<const T> last(std::size_t n) const { return view().last(n); }
};

// ---------------------------------------------------------------------------------------------------
// Closed vocabularies. Each has `name()` (the word nft prints) and a parse function in nft.hpp.

/// Address family of a table (nft(8) ADDRESS FAMILIES).
enum class family : std::uint8_t { ip, ip6, inet, arp, bridge, netdev };

/// Relational operator of a match (`relational_op` in parser_bison.y). `implicit` is a match written
/// without an operator (`tcp dport 22`, `ct state established,related`): equality, or for bitmask
/// types "any of these bits" (nft(8) EXPRESSIONS). `neg` is the prefix `!` (`ct state ! new`).
enum class relational_op : std::uint8_t { implicit, eq, neq, lt, gt, lte, gte, neg };

/// Binary operator of an expression: `&` `|` `^` `<<` `>>`, also spelled `and` `or` `xor` `lshift`
/// `rshift`.
enum class binop : std::uint8_t { and_, or_, xor_, lshift, rshift };

/// A verdict (nft(8) VERDICT STATEMENT). `jump` and `goto` carry a chain name.
enum class verdict : std::uint8_t { accept, drop, continue_, return_, jump, goto_ };

/// Protocol headers and pseudo-headers a `payload_expr` reads (nft(8) PAYLOAD EXPRESSION, EXTENSION
/// HEADER EXPRESSIONS, RAW PAYLOAD EXPRESSION). `tcp_option`, `ip_option`, `sctp_chunk` and
/// `dccp_option` carry the option or chunk kind in `payload_expr::option`; `raw` is `@base,offset,len`;
/// `exthdr` is the presence test `exthdr hbh` (the header in `payload_expr::option`).
enum class header : std::uint8_t {
  ether,
  vlan,
  arp,
  ip,
  icmp,
  igmp,
  ip6,
  icmpv6,
  ah,
  esp,
  comp,
  udp,
  udplite,
  tcp,
  dccp,
  sctp,
  th,
  vxlan,
  geneve,
  gre,
  gretap,
  hbh,
  rt,
  rt0,
  rt2,
  srh,
  frag,
  dst,
  mh,  // IPv6 extension headers
  tcp_option,
  ip_option,
  sctp_chunk,
  dccp_option,
  raw,
  exthdr,
};

/// Field of a header. One vocabulary over all headers; `field_name(header, header_field)` gives the
/// words nft prints (`saddr ether` for ARP's hardware source address). `none` is the header or option
/// itself (presence: `tcp option sack-perm exists`, `exthdr hbh missing`).
enum class header_field : std::uint8_t {
  none,
  // link and network layer
  saddr,
  daddr,
  type,
  id,
  cfi,
  dei,
  pcp,
  htype,
  ptype,
  hlen,
  plen,
  operation,
  saddr_ether,
  daddr_ether,
  saddr_ip,
  daddr_ip,
  version,
  hdrlength,
  dscp,
  ecn,
  length,
  frag_off,
  ttl,
  protocol,
  checksum,
  flowlabel,
  nexthdr,
  hoplimit,
  // icmp, igmp, icmpv6
  code,
  sequence,
  gateway,
  mtu,
  mrt,
  group,
  param_problem,
  max_delay,
  taddr,
  // ipsec, transport
  reserved,
  spi,
  flags,
  cpi,
  sport,
  dport,
  csumcov,
  ackseq,
  doff,
  window,
  urgptr,
  vtag,
  // tunnels
  vni,
  // extension headers
  seg_left,
  addr,
  last_entry,
  tag,
  sid,
  reserved2,
  more_fragments,
  // options and chunks
  value,
  ptr,
  size,
  left,
  right,
  count,
  tsval,
  tsecr,
  subtype,
  tsn,
  stream,
  ssn,
  ppid,
  init_tag,
  a_rwnd,
  num_outbound_streams,
  num_inbound_streams,
  initial_tsn,
  cum_tsn_ack,
  num_gap_ack_blocks,
  num_dup_tsns,
  lowest_tsn,
  seqno,
  new_cum_tsn,
};

/// Tunnel a header is read inside of (`vxlan ip saddr`, `gre ip daddr`): inner-header payload.
enum class tunnel : std::uint8_t { none, vxlan, geneve, gre, gretap };

/// Base of a raw payload expression `@base,offset,length` (nft(8) RAW PAYLOAD EXPRESSION).
enum class payload_base : std::uint8_t { ll, nh, th, ih };

/// Keys of the meta expression (nft(8) META EXPRESSIONS). Keys nft accepts without `meta` (`mark`,
/// `iifname`, ...) and those it requires it for (`meta l4proto`) are one vocabulary: `meta mark` and
/// `mark` are the same expression. `ipsec` is also spelled `secpath`, `ibrname` `ibriport`, `obrname`
/// `obriport`.
enum class meta_key : std::uint8_t {
  length,
  protocol,
  priority,
  random,
  secmark,
  nfproto,
  l4proto,
  iifkind,
  oifkind,
  ibrpvid,
  ibrvproto,
  sdif,
  sdifname,
  broute,
  ibrhwaddr,
  mark,
  iif,
  iifname,
  iiftype,
  oif,
  oifname,
  oiftype,
  skuid,
  skgid,
  nftrace,
  rtclassid,
  ibrname,
  obrname,
  pkttype,
  cpu,
  iifgroup,
  oifgroup,
  cgroup,
  ipsec,
  time,
  day,
  hour,
};

/// Keys of the conntrack expression (nft(8) CONNTRACK EXPRESSIONS). `timeout` and `expectation` occur only
/// in `ct timeout set` / `ct expectation set`, `count` only in the `ct count` statement.
enum class ct_key : std::uint8_t {
  l3proto,
  protocol,
  mark,
  state,
  direction,
  status,
  expiration,
  helper,
  saddr,
  daddr,
  proto_src,
  proto_dst,
  label,
  event,
  secmark,
  id,
  bytes,
  packets,
  avgpkt,
  zone,
  timeout,
  expectation,
};

/// Direction qualifier of a ct expression: `ct original saddr`, `ct reply proto-dst`.
enum class ct_direction : std::uint8_t { none, original, reply };

/// An explicit network protocol qualifier: `ct original ip saddr`, `rt ip6 nexthop`, `dnat ip to ...`.
enum class nfproto : std::uint8_t { none, ip, ip6 };

/// Result of a fib lookup (nft(8) FIB EXPRESSIONS): `oif`, `oifname`, `type`, or `check` (spelled
/// `check` by nft >= 1.1, compared with `exists`/`missing`).
enum class fib_result : std::uint8_t { oif, oifname, type, check };

/// Bits of the fib lookup tuple (`fib saddr . iif`).
enum class fib_flag : std::uint8_t { saddr = 1, daddr = 2, mark = 4, iif = 8, oif = 16 };

/// Keys of the routing expression (nft(8) ROUTING EXPRESSIONS).
enum class rt_key : std::uint8_t { classid, nexthop, mtu, ipsec };

/// Keys of the socket expression (nft(8) SOCKET EXPRESSION).
enum class socket_key : std::uint8_t { transparent, mark, wildcard, cgroupv2 };

/// What `osf` matches: the OS name or its version (nft(8) OSF EXPRESSION); and its ttl mode.
enum class osf_key : std::uint8_t { name, version };
enum class osf_ttl : std::uint8_t { check, loose, skip };

/// Keys of the ipsec (xfrm) expression (nft(8) IPSEC EXPRESSIONS): `ipsec in reqid`, `ipsec out ip daddr`.
enum class ipsec_key : std::uint8_t { reqid, spi, saddr, daddr };
enum class ipsec_direction : std::uint8_t { in, out };

/// Number generator type (nft(8) NUMGEN EXPRESSION).
enum class numgen_type : std::uint8_t { inc, random };

/// Hash kind (nft(8) HASH EXPRESSIONS).
enum class hash_kind : std::uint8_t { jhash, symhash };

/// Key of the tunnel expression (`tunnel path`, `tunnel id`).
enum class tunnel_key : std::uint8_t { path, id };

// ---------------------------------------------------------------------------------------------------
// Expressions

struct expr;
struct element;
struct stmt;
struct chain;

/// An unsigned number as written in decimal, hex (`0x4000`) or octal (a leading `0`, as nft's scanner
/// reads it). Up to 64 bits; longer hex strings are kept as `symbol_expr`, as nft does.
struct integer_expr {
  unaligned<std::uint64_t> value = 0;
};
/// An IPv4 or IPv6 address: an IPv4 address is held in the node, an IPv6 one in the arena (so that the
/// node stays 24 bytes). `address()` gives it back.
struct address_expr {
  std::array<std::uint8_t, 4> v4_bytes{};  ///< IPv4 (when `v6` is null)
  unaligned<const ip_address*> v6 = nullptr;          ///< IPv6, in the arena of `arena` given to the constructor

  address_expr() = default;  ///< 0.0.0.0
  /// Holds `a`; an IPv6 address is copied into `arena`'s arena.
  address_expr(const ip_address& a, source& arena) {
    if (a.family == ip_family::ipv6)
      v6 = arena.store_one(a);
    else
      for (std::size_t i = 0; i < 4; ++i) v4_bytes[i] = a.bytes[i];
  }
  [[nodiscard]] ip_address address() const noexcept {
    if (v6 != nullptr) return *v6;
    ip_address a;
    for (std::size_t i = 0; i < 4; ++i) a.bytes[i] = v4_bytes[i];
    return a;
  }
};
/// An Ethernet address `aa:bb:cc:dd:ee:ff`.
struct ether_address_expr {
  std::array<std::uint8_t, 6> bytes{};
};
/// A duration written with units (`3h`, `1h2m3s`, `100ms`, `10800s`), in milliseconds.
struct time_expr {
  unaligned<std::uint64_t> milliseconds = 0;
};
/// An unquoted word: a symbolic constant (`established`, `tcp`, `echo-request`), an interface name,
/// a class id (`1:bbf8`), or a number too long for 64 bits.
struct symbol_expr {
  text_view name{};
};
/// A quoted string, without the quotes. nft has no escapes except `\*` (a literal star in an interface
/// name), kept as written.
struct string_expr {
  text_view text{};
};
/// `exists` / `missing`.
struct boolean_expr {
  bool value = false;
};
/// The catch-all set element `*`.
struct wildcard_expr {};
/// `value/length` (`10.0.0.0/8`, `fe80::/64`).
struct prefix_expr {
  unaligned<const expr*> value = nullptr;
  std::uint8_t length = 0;
};
/// `low-high` (`1024-65535`, `10.0.0.1-10.0.0.9`). The bounds are two consecutive nodes.
struct range_expr {
  unaligned<const expr*> bounds = nullptr;  ///< low, high
  [[nodiscard]] const expr* low() const noexcept { return bounds; }
  [[nodiscard]] const expr* high() const noexcept;
};
/// `left OP right` for `&` `|` `^` `<<` `>>`. Left-associative; `&` binds tighter than `^` than `|`, and
/// shifts tightest (parser_bison.y `shift_expr` ... `inclusive_or_expr`).
/// The operands are two consecutive nodes.
struct binop_expr {
  binop op = binop::and_;
  unaligned<const expr*> operands = nullptr;  ///< left, right
  [[nodiscard]] const expr* left() const noexcept { return operands; }
  [[nodiscard]] const expr* right() const noexcept;
};
/// A concatenation `a . b . c` (two or more items).
struct concat_expr {
  node_span<expr> items{};
};
/// A comma list outside braces: `established,related`, `syn,ack` (`list_rhs_expr`).
struct list_expr {
  node_span<expr> items{};
};
/// An anonymous set or map literal `{ ... }`: its elements, each a key and for maps a data part.
struct set_expr {
  node_span<element> elements{};
};
/// A named set or map reference `@name`.
struct set_ref_expr {
  text_view name{};
};
/// A lookup `key map { ... }` or `key map @name`; `mapping` is a `set_expr` or `set_ref_expr`. The key
/// and the mapping are two consecutive nodes.
struct map_expr {
  unaligned<const expr*> operands = nullptr;  ///< key, mapping
  [[nodiscard]] const expr* key() const noexcept { return operands; }
  [[nodiscard]] const expr* mapping() const noexcept;
};
/// A verdict as map data: `: accept`, `: goto chain`.
struct verdict_expr {
  verdict kind = verdict::accept;
  text_view chain{};  ///< for jump and goto
};
/// A header field: `ip saddr`, `tcp dport`, `tcp option maxseg size`, `sctp chunk data tsn`,
/// `vxlan ip saddr`, `@nh,8,16`.
struct payload_expr {
  header protocol = header::ip;
  header_field field = header_field::none;
  std::uint8_t option = 0;  ///< tcp option kind, ip option type, sctp chunk type, dccp option; exthdr header
  std::uint8_t index = 0;   ///< sack block 0-3, `rt0 addr[N]`, `srh sid[N]`
  tunnel inner = tunnel::none;
  payload_base base = payload_base::ll;  ///< raw payload only
  unaligned<std::uint32_t> offset = 0;              ///< raw payload: bit offset; `tcp option @kind,offset,length`
  unaligned<std::uint32_t> length = 0;              ///< raw payload: bit length
};
/// `meta KEY` or an unqualified meta key (`mark`, `iifname`).
struct meta_expr {
  meta_key key = meta_key::mark;
};
/// `ct [original|reply] [ip|ip6] KEY`.
struct ct_expr {
  ct_key key = ct_key::state;
  ct_direction direction = ct_direction::none;
  nfproto protocol = nfproto::none;
};
/// `fib saddr . iif oif` (flags are `fib_flag` bits).
struct fib_expr {
  std::uint8_t flags = 0;
  fib_result result = fib_result::oif;
};
/// `rt [ip|ip6] KEY`.
struct rt_expr {
  rt_key key = rt_key::classid;
  nfproto protocol = nfproto::none;
};
/// `socket KEY`, `socket cgroupv2 level N`.
struct socket_expr {
  socket_key key = socket_key::transparent;
  unaligned<std::uint32_t> level = 0;
};
/// `osf [ttl loose|skip] name|version`.
struct osf_expr {
  osf_key key = osf_key::name;
  osf_ttl ttl = osf_ttl::check;
};
/// `ipsec in|out [spnum N] KEY`, `ipsec out ip daddr`.
struct ipsec_expr {
  ipsec_direction direction = ipsec_direction::in;
  ipsec_key key = ipsec_key::reqid;
  nfproto protocol = nfproto::none;
  unaligned<std::uint32_t> spnum = 0;
};
/// `numgen inc|random mod N [offset M]`.
struct numgen_expr {
  numgen_type type = numgen_type::inc;
  unaligned<std::uint32_t> modulus = 0;
  unaligned<std::uint32_t> offset = 0;
};
/// `jhash EXPR mod N [seed S] [offset O]`, `symhash mod N [offset O]`.
struct hash_spec {
  const expr* key = nullptr;  ///< jhash only
  std::uint32_t modulus = 0;
  std::uint32_t seed = 0;
  std::uint32_t offset = 0;
  hash_kind kind = hash_kind::jhash;
  bool has_seed = false;
};
/// A hash expression node: its `hash_spec` lives in the arena (rare; the node stays 24 bytes).
struct hash_expr {
  unaligned<const hash_spec*> spec = nullptr;  ///< never null in a parsed node
};
/// `tunnel path|id`.
struct tunnel_expr {
  tunnel_key key = tunnel_key::id;
};

/// An expression node. 24 bytes; children live in the same arena.
struct expr {
  using value_type =
      std::variant<integer_expr, address_expr, ether_address_expr, time_expr, symbol_expr, string_expr, boolean_expr,
                   wildcard_expr, prefix_expr, range_expr, binop_expr, concat_expr, list_expr, set_expr, set_ref_expr,
                   map_expr, verdict_expr, payload_expr, meta_expr, ct_expr, fib_expr, rt_expr, socket_expr, osf_expr,
                   ipsec_expr, numgen_expr, hash_expr, tunnel_expr>;
  span where;
  value_type value;

  template <class T>
  [[nodiscard]] const T* get() const noexcept {
    return std::get_if<T>(&value);
  }
  template <class T>
  [[nodiscard]] bool is() const noexcept {
    return std::holds_alternative<T>(value);
  }
};
static_assert(sizeof(expr) == 24, "a dump holds a million expressions: keep every alternative within 15 bytes");

inline const expr* range_expr::high() const noexcept { return bounds == nullptr ? nullptr : bounds + 1; }
inline const expr* binop_expr::right() const noexcept { return operands == nullptr ? nullptr : operands + 1; }
inline const expr* map_expr::mapping() const noexcept { return operands == nullptr ? nullptr : operands + 1; }

/// Stores `first` and `second` as two consecutive nodes in the arena of `arena` and returns the first:
/// the operands of `binop_expr`, `range_expr` and `map_expr`.
inline const expr* store_pair(source& arena, const expr& first, const expr& second) {
  const expr both[2] = {first, second};
  return arena.store(std::span<const expr>(both)).data();
}

// ---------------------------------------------------------------------------------------------------
// Statements

/// `left [op] right`, and the flag form `left [op] value / mask` (stored as `(left & mask) op value`
/// with `flag_syntax` set, as nft evaluates it; nft 1.1 prints the `&` form, 1.0.6 the `/` form).
struct match_stmt {
  unaligned<const expr*> left = nullptr;
  unaligned<const expr*> right = nullptr;
  relational_op op = relational_op::implicit;
  bool flag_syntax = false;
};
/// `accept`, `drop`, `continue`, `return`, `jump CHAIN`, `goto CHAIN`.
struct verdict_stmt {
  verdict kind = verdict::accept;
  text_view chain{};
};
/// `jump { ... }` / `goto { ... }`: a verdict to an anonymous chain written inline (nft >= 1.0.7).
struct anonymous_chain_stmt {
  verdict kind = verdict::jump;
  unaligned<const chain*> body = nullptr;
};
/// `key vmap { k : verdict, ... }` or `key vmap @name` (`verdict_map_stmt`).
struct verdict_map_stmt {
  unaligned<const expr*> key = nullptr;
  unaligned<const expr*> mapping = nullptr;  ///< set_expr or set_ref_expr
};
/// `target set value`: payload, exthdr, meta and ct mangling (`meta mark set 0x1`, `ct mark set meta mark`,
/// `ip dscp set cs1`, `ct helper set "ftp"`, `meta secmark set "ssh"`).
struct mangle_stmt {
  unaligned<const expr*> target = nullptr;
  unaligned<const expr*> value = nullptr;
};
/// `counter [packets N bytes N]`.
struct counter_stmt {
  unaligned<std::uint64_t> packets = 0;
  unaligned<std::uint64_t> bytes = 0;
  bool has_values = false;
};
/// Time unit of a rate (`/second` ...).
enum class time_unit : std::uint8_t { second, minute, hour, day, week };
/// `limit rate [over|until] N/unit [burst N packets]`, `limit rate [over] N bytes/unit [burst N bytes]`.
/// Byte rates and bursts are stored in bytes (`1 kbytes` is 1024). Without `burst`, `burst` holds nft's
/// default (5 for a packet rate, 0 for a byte rate, as parser_bison.y's `limit_burst_pkts` gives) and
/// `has_burst` is false: nft 1.1 lists `burst 5 packets`, nft 1.0.6 leaves the default out.
struct limit_stmt {
  unaligned<std::uint64_t> rate = 0;
  unaligned<std::uint32_t> burst = 0;
  time_unit unit = time_unit::second;
  bool bytes = false;  ///< a byte rate
  bool over = false;
  bool has_burst = false;
};
/// `quota [over|until] N bytes [used N bytes]`, in bytes.
struct quota_stmt {
  unaligned<std::uint64_t> bytes = 0;
  unaligned<std::uint64_t> used = 0;
  bool over = false;
  bool has_used = false;
};
/// `ct count [over] N` (connlimit).
struct connlimit_stmt {
  unaligned<std::uint32_t> count = 0;
  bool over = false;
};
/// `last [used never|used TIME]`.
struct last_stmt {
  unaligned<std::uint64_t> used_ms = 0;
  bool has_used = false;  ///< false: `last` or `last used never`
};
/// Syslog level of `log level`.
enum class log_level : std::uint8_t { emerg, alert, crit, err, warn, notice, info, debug, audit };
/// Bits of `log flags`.
enum class log_flag : std::uint8_t {
  tcp_sequence = 1,
  tcp_options = 2,
  ip_options = 4,
  skuid = 8,
  ether = 16,
  all = 31
};
/// `log [prefix S] [level L] [group N] [snaplen N] [queue-threshold N] [flags F]`.
struct log_stmt {
  unaligned<const expr*> prefix = nullptr;  ///< a string_expr, or nothing
  unaligned<std::uint32_t> snaplen = 0;
  unaligned<std::uint16_t> group = 0;
  unaligned<std::uint16_t> queue_threshold = 0;
  log_level level = log_level::warn;
  std::uint8_t flags = 0;    ///< log_flag bits
  std::uint8_t present = 0;  ///< which of level(1) group(2) snaplen(4) queue-threshold(8) were written
};
/// Kind of reject (nft(8) REJECT STATEMENT).
enum class reject_type : std::uint8_t { unspecified, icmp, icmpv6, icmpx, tcp_reset };
/// `reject [with icmp|icmpv6|icmpx [type] CODE | with tcp reset]`.
struct reject_stmt {
  reject_type type = reject_type::unspecified;
  unaligned<const expr*> code = nullptr;  ///< symbol or integer; null when no code was given
};
/// Which NAT statement.
enum class nat_kind : std::uint8_t { snat, dnat, masquerade, redirect };
/// Bits of NAT flags: `random`, `fully-random`, `persistent`.
enum class nat_flag : std::uint8_t { random = 1, fully_random = 2, persistent = 4 };
/// What `to` maps: a plain address[:port], `addr . port to` (a concatenated map value), `interval to`,
/// `prefix to`.
enum class nat_mode : std::uint8_t { plain, addr_port, interval, prefix };
/// `snat|dnat [ip|ip6] [MODE] to ADDR[:PORT] [flags]`, `masquerade [to :PORT] [flags]`,
/// `redirect [to [:]PORT] [flags]`.
struct nat_stmt {
  nat_kind kind : 4 = nat_kind::dnat;  // kind and mode share a byte: the node stays 28 bytes
  nat_mode mode : 4 = nat_mode::plain;
  nfproto protocol = nfproto::none;
  std::uint8_t flags = 0;  ///< nat_flag bits
  unaligned<const expr*> address = nullptr;
  unaligned<const expr*> port = nullptr;
};
/// `tproxy [ip|ip6] to [ADDR][:PORT]`.
struct tproxy_stmt {
  nfproto protocol = nfproto::none;
  unaligned<const expr*> address = nullptr;
  unaligned<const expr*> port = nullptr;
};
/// Bits of `queue flags`.
enum class queue_flag : std::uint8_t { bypass = 1, fanout = 2 };
/// `queue [flags F] [num|to] EXPR`.
struct queue_stmt {
  unaligned<const expr*> number = nullptr;  ///< integer, range, numgen, hash or map; null: queue 0
  std::uint8_t flags = 0;        ///< queue_flag bits
};
/// `dup to ADDR [device DEV]`.
struct dup_stmt {
  unaligned<const expr*> address = nullptr;
  unaligned<const expr*> device = nullptr;
};
/// `fwd [ip|ip6] to [ADDR device] DEV`.
struct fwd_stmt {
  nfproto protocol = nfproto::none;
  unaligned<const expr*> address = nullptr;
  unaligned<const expr*> device = nullptr;
};
/// `notrack`.
struct notrack_stmt {};
/// `add|update|delete @set { elem }` and the map form `{ key : value }` (`set_stmt`, `map_stmt`).
enum class set_op : std::uint8_t { add, update, delete_ };
struct set_stmt {
  set_op op = set_op::add;
  unaligned<const expr*> set_ref = nullptr;  ///< set_ref_expr
  unaligned<const element*> elem = nullptr;  ///< key, optional data, timeout and stateful statements
};
/// `meter NAME [size N] { key stmt }` (the pre-0.9 form of a dynamic set).
struct meter_spec {
  const expr* name = nullptr;  ///< a symbol_expr
  const element* elem = nullptr;
  std::uint32_t size = 65535;  ///< the parsers give nft's default (`meter_stmt::default_size`) when none (or 0) is written
};
/// The statement node of a meter: its `meter_spec` lives in the arena (rare; the node stays 28 bytes).
struct meter_stmt {
  unaligned<const meter_spec*> spec = nullptr;  ///< never null in a parsed node
  [[nodiscard]] const expr* name() const noexcept { return spec->name; }
  [[nodiscard]] const element* elem() const noexcept { return spec->elem; }
  [[nodiscard]] std::uint32_t size() const noexcept { return spec->size; }
  static constexpr std::uint32_t default_size = 65535;
};
/// `flow add @flowtable` (also spelled `flow offload @flowtable`).
struct flow_offload_stmt {
  text_view flowtable{};
};
/// Kinds of stateful object (nft(8) STATEFUL OBJECTS).
enum class object_type : std::uint8_t {
  counter,
  quota,
  limit,
  ct_helper,
  ct_timeout,
  ct_expectation,
  secmark,
  synproxy,
  tunnel
};
/// A reference to a named object: `counter name "c"`, `quota name q`, `limit name l`, `synproxy name s`,
/// `ct timeout set "t"`, `ct expectation set "e"`; the name may be a map lookup.
struct objref_stmt {
  object_type type = object_type::counter;
  unaligned<const expr*> name = nullptr;
};
/// Bits of synproxy flags.
enum class synproxy_flag : std::uint8_t { timestamp = 1, sack_perm = 2 };
/// `synproxy [mss N] [wscale N] [timestamp] [sack-perm]`.
struct synproxy_stmt {
  unaligned<std::uint16_t> mss = 0;
  std::uint8_t wscale = 0;
  std::uint8_t flags = 0;    ///< synproxy_flag bits
  std::uint8_t present = 0;  ///< mss(1), wscale(2) written
};
/// `reset tcp option KIND` (optstrip).
struct optstrip_stmt {
  unaligned<const expr*> option = nullptr;  ///< a payload_expr of header::tcp_option
};
/// An iptables-nft compat expression that nft cannot show in its own syntax: `xt match "name"`,
/// `xt target "name"`. Kept, and reported as `not_translatable`.
enum class xt_kind : std::uint8_t { match, target, watcher };
struct xt_stmt {
  xt_kind kind = xt_kind::match;
  text_view name{};
};
/// Valid syntax that nflens does not model: its raw text. Always reported as `not_modelled`.
struct unknown_stmt {
  text_view text{};
};

/// A statement. 28 bytes.
struct stmt {
  using value_type =
      std::variant<match_stmt, verdict_stmt, anonymous_chain_stmt, verdict_map_stmt, mangle_stmt, counter_stmt,
                   limit_stmt, quota_stmt, connlimit_stmt, last_stmt, log_stmt, reject_stmt, nat_stmt, tproxy_stmt,
                   queue_stmt, dup_stmt, fwd_stmt, notrack_stmt, set_stmt, meter_stmt, flow_offload_stmt, objref_stmt,
                   synproxy_stmt, optstrip_stmt, xt_stmt, unknown_stmt>;
  span where;
  value_type value;

  template <class T>
  [[nodiscard]] const T* get() const noexcept {
    return std::get_if<T>(&value);
  }
  template <class T>
  [[nodiscard]] bool is() const noexcept {
    return std::holds_alternative<T>(value);
  }
};
static_assert(sizeof(stmt) == 28, "half a million statements in a dump: keep every alternative within 19 bytes");

/// Options written on a set element (`set_elem_option`, `set_elem_stmt`): absent for most elements.
struct element_options {
  std::uint64_t timeout_ms = 0;
  std::uint64_t expires_ms = 0;
  std::string_view comment;
  std::span<const stmt> stmts;  ///< counter, limit, quota, ct count, last
  bool has_timeout = false;
  bool has_expires = false;
};

/// A set or map element (`set_elem_expr`): a key (value, prefix, range, concatenation or `*`), for maps a
/// data part (value or verdict), and its options. In a named set's element list, an `add element`
/// command or an anonymous `{ ... }`. 32 bytes. Its spans refer to the source of the command or rule it
/// came in; a ruleset's elements carry theirs (`ruleset_element`).
struct element {
  span where;
  const expr* key = nullptr;
  const expr* data = nullptr;                ///< maps only
  const element_options* options = nullptr;  ///< null when none were written
};
static_assert(sizeof(element) == 32);

}  // namespace nflens::nft
