// SPDX-License-Identifier: MIT
#pragma once

// The expression layer of the nft grammar (nft(8) EXPRESSIONS; parser_bison.y `primary_expr`,
// `selector_expr`, `payload_expr`, `meta_expr`, `ct_expr`, ..., `concat_expr`, `relational_expr`,
// `set_expr`, `map_expr`). Three flavours of expression, as in nftables:
//  - `expr` (the left of a match or mangle: selectors, binary operations with constant right operands,
//    concatenations, `map` lookups),
//  - `rhs_expr` (constants: values, prefixes, ranges, concatenations, sets, `@set` references, lists),
//  - `stmt_expr` (the value of `set`, `to`, ...: selectors and constants mixed).

#include "nft_tokens.hpp"

#include "nft/vocabulary.hpp"

namespace nflens::nft::grammar {

// clang-format off

// ---------------------------------------------------------------------------------------------------
// Keywords of the expression layer

struct kw_meta : NFLENS_NFT_KW("meta") {};
struct kw_ct : NFLENS_NFT_KW("ct") {};
struct kw_fib : NFLENS_NFT_KW("fib") {};
struct kw_rt : NFLENS_NFT_KW("rt") {};
struct kw_socket : NFLENS_NFT_KW("socket") {};
struct kw_osf : NFLENS_NFT_KW("osf") {};
struct kw_ipsec : NFLENS_NFT_KW("ipsec") {};
struct kw_numgen : NFLENS_NFT_KW("numgen") {};
struct kw_jhash : NFLENS_NFT_KW("jhash") {};
struct kw_symhash : NFLENS_NFT_KW("symhash") {};
struct kw_tunnel : NFLENS_NFT_KW("tunnel") {};
struct kw_exthdr : NFLENS_NFT_KW("exthdr") {};
struct kw_ether : NFLENS_NFT_KW("ether") {};
struct kw_vlan : NFLENS_NFT_KW("vlan") {};
struct kw_arp : NFLENS_NFT_KW("arp") {};
struct kw_ip : NFLENS_NFT_KW("ip") {};
struct kw_icmp : NFLENS_NFT_KW("icmp") {};
struct kw_igmp : NFLENS_NFT_KW("igmp") {};
struct kw_ip6 : NFLENS_NFT_KW("ip6") {};
struct kw_icmpv6 : NFLENS_NFT_KW("icmpv6") {};
struct kw_ah : NFLENS_NFT_KW("ah") {};
struct kw_esp : NFLENS_NFT_KW("esp") {};
struct kw_comp : NFLENS_NFT_KW("comp") {};
struct kw_udp : NFLENS_NFT_KW("udp") {};
struct kw_udplite : NFLENS_NFT_KW("udplite") {};
struct kw_tcp : NFLENS_NFT_KW("tcp") {};
struct kw_dccp : NFLENS_NFT_KW("dccp") {};
struct kw_sctp : NFLENS_NFT_KW("sctp") {};
struct kw_th : NFLENS_NFT_KW("th") {};
struct kw_vxlan : NFLENS_NFT_KW("vxlan") {};
struct kw_geneve : NFLENS_NFT_KW("geneve") {};
struct kw_gre : NFLENS_NFT_KW("gre") {};
struct kw_gretap : NFLENS_NFT_KW("gretap") {};
struct kw_hbh : NFLENS_NFT_KW("hbh") {};
struct kw_rt0 : NFLENS_NFT_KW("rt0") {};
struct kw_rt2 : NFLENS_NFT_KW("rt2") {};
struct kw_srh : NFLENS_NFT_KW("srh") {};
struct kw_frag : NFLENS_NFT_KW("frag") {};
struct kw_dst : NFLENS_NFT_KW("dst") {};
struct kw_mh : NFLENS_NFT_KW("mh") {};
struct kw_option : NFLENS_NFT_KW("option") {};
struct kw_chunk : NFLENS_NFT_KW("chunk") {};
struct kw_addr : NFLENS_NFT_KW("addr") {};
struct kw_sid : NFLENS_NFT_KW("sid") {};
struct kw_saddr : NFLENS_NFT_KW("saddr") {};
struct kw_daddr : NFLENS_NFT_KW("daddr") {};
struct kw_original : NFLENS_NFT_KW("original") {};
struct kw_reply : NFLENS_NFT_KW("reply") {};
struct kw_in : NFLENS_NFT_KW("in") {};
struct kw_out : NFLENS_NFT_KW("out") {};
struct kw_spnum : NFLENS_NFT_KW("spnum") {};
struct kw_reqid : NFLENS_NFT_KW("reqid") {};
struct kw_spi : NFLENS_NFT_KW("spi") {};
struct kw_inc : NFLENS_NFT_KW("inc") {};
struct kw_random : NFLENS_NFT_KW("random") {};
struct kw_mod : NFLENS_NFT_KW("mod") {};
struct kw_offset : NFLENS_NFT_KW("offset") {};
struct kw_seed : NFLENS_NFT_KW("seed") {};
struct kw_ttl : NFLENS_NFT_KW("ttl") {};
struct kw_loose : NFLENS_NFT_KW("loose") {};
struct kw_skip : NFLENS_NFT_KW("skip") {};
struct kw_name : NFLENS_NFT_KW("name") {};
struct kw_version : NFLENS_NFT_KW("version") {};
struct kw_cgroupv2 : NFLENS_NFT_KW("cgroupv2") {};
struct kw_level : NFLENS_NFT_KW("level") {};
struct kw_path : NFLENS_NFT_KW("path") {};
struct kw_id : NFLENS_NFT_KW("id") {};
struct kw_map : NFLENS_NFT_KW("map") {};
struct kw_vmap : NFLENS_NFT_KW("vmap") {};
struct kw_and : NFLENS_NFT_KW("and") {};
struct kw_or : NFLENS_NFT_KW("or") {};
struct kw_xor : NFLENS_NFT_KW("xor") {};
struct kw_lshift : NFLENS_NFT_KW("lshift") {};
struct kw_rshift : NFLENS_NFT_KW("rshift") {};
struct kw_eq : NFLENS_NFT_KW("eq") {};
struct kw_ne : NFLENS_NFT_KW("ne") {};
struct kw_le : NFLENS_NFT_KW("le") {};
struct kw_ge : NFLENS_NFT_KW("ge") {};
struct kw_lt : NFLENS_NFT_KW("lt") {};
struct kw_gt : NFLENS_NFT_KW("gt") {};
struct kw_not : NFLENS_NFT_KW("not") {};
struct kw_timeout : NFLENS_NFT_KW("timeout") {};
struct kw_expires : NFLENS_NFT_KW("expires") {};
struct kw_comment : NFLENS_NFT_KW("comment") {};
struct kw_accept : NFLENS_NFT_KW("accept") {};
struct kw_drop : NFLENS_NFT_KW("drop") {};
struct kw_continue : NFLENS_NFT_KW("continue") {};
struct kw_return : NFLENS_NFT_KW("return") {};
struct kw_jump : NFLENS_NFT_KW("jump") {};
struct kw_goto : NFLENS_NFT_KW("goto") {};

// clang-format on

// ---------------------------------------------------------------------------------------------------
// Vocabulary words: one nft word that a table of nflens/nft/vocabulary.hpp contains.

/// A word found in `Table` (a `vocab::word<E>` array).
template <const auto& Table>
struct table_word : leaf<table_word<Table>> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const std::size_t n = word_length(in.current(), in.end());
    if (n == 0 || !vocab::lookup(Table, std::string_view(in.current(), n))) return false;
    in.bump_in_this_line(n);
    return true;
  }
};
/// A field word of header `H` (`saddr` after `ip`).
template <header H>
struct hdr_field : leaf<hdr_field<H>> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const std::size_t n = word_length(in.current(), in.end());
    if (n == 0 || !vocab::lookup_field(H, std::string_view(in.current(), n))) return false;
    in.bump_in_this_line(n);
    return true;
  }
};
/// The keyword that opens header `H`'s expression; its action starts a fresh payload expression.
template <header H, class Keyword>
struct hdr_kw : Keyword {};

// clang-format off

// ---------------------------------------------------------------------------------------------------
// Selectors (`selector_expr`)

struct concat_expr;
struct set_expr;

/// `@nh,8,16`: base, bit offset, bit length (nft(8) RAW PAYLOAD EXPRESSION).
struct payload_raw_base : sor<NFLENS_NFT_KW("ll"), NFLENS_NFT_KW("nh"), NFLENS_NFT_KW("th"), NFLENS_NFT_KW("ih")> {};
struct payload_raw_offset : number {};
struct payload_raw_len : number {};
struct payload_raw_expr : seq<one<'@'>, payload_raw_base, sp, one<','>, sp, payload_raw_offset, sp, one<','>, sp, payload_raw_len> {};

struct eth_hdr_expr : seq<hdr_kw<header::ether, kw_ether>, sp, hdr_field<header::ether>> {};
struct vlan_hdr_expr : seq<hdr_kw<header::vlan, kw_vlan>, sp, hdr_field<header::vlan>> {};
/// `arp saddr ether`, `arp daddr ip`, `arp operation`.
struct arp_addr_field : seq<sor<kw_saddr, kw_daddr>, sp, sor<kw_ether, kw_ip>> {};
struct arp_hdr_expr : seq<hdr_kw<header::arp, kw_arp>, sp, sor<arp_addr_field, hdr_field<header::arp>>> {};
/// `ip option rr type`, `ip option ra` (nft(8) IP OPTIONS).
struct ip_option_type : table_word<vocab::ip_option_types> {};
struct ip_option_expr : seq<kw_option, sp, ip_option_type, opt<sp, hdr_field<header::ip_option>>> {};
struct ip_hdr_expr : seq<hdr_kw<header::ip, kw_ip>, sp, sor<ip_option_expr, hdr_field<header::ip>>> {};
struct icmp_hdr_expr : seq<hdr_kw<header::icmp, kw_icmp>, sp, hdr_field<header::icmp>> {};
struct igmp_hdr_expr : seq<hdr_kw<header::igmp, kw_igmp>, sp, hdr_field<header::igmp>> {};
struct ip6_hdr_expr : seq<hdr_kw<header::ip6, kw_ip6>, sp, hdr_field<header::ip6>> {};
struct icmp6_hdr_expr : seq<hdr_kw<header::icmpv6, kw_icmpv6>, sp, hdr_field<header::icmpv6>> {};
struct auth_hdr_expr : seq<hdr_kw<header::ah, kw_ah>, sp, hdr_field<header::ah>> {};
struct esp_hdr_expr : seq<hdr_kw<header::esp, kw_esp>, sp, hdr_field<header::esp>> {};
struct comp_hdr_expr : seq<hdr_kw<header::comp, kw_comp>, sp, hdr_field<header::comp>> {};
struct udp_hdr_expr : seq<hdr_kw<header::udp, kw_udp>, sp, hdr_field<header::udp>> {};
struct udplite_hdr_expr : seq<hdr_kw<header::udplite, kw_udplite>, sp, hdr_field<header::udplite>> {};
/// `tcp option maxseg size`, `tcp option sack2 left`, `tcp option 6 exists`, `tcp option @255,8,8`
/// (nft(8) TCP OPTIONS).
struct tcp_option_number : number {};
struct tcp_option_kind : sor<table_word<vocab::tcp_option_kinds>, tcp_option_number> {};
struct tcp_option_raw_offset : number {};
struct tcp_option_raw_len : number {};
struct tcp_option_raw : seq<one<'@'>, tcp_option_kind, sp, one<','>, sp, tcp_option_raw_offset, sp, one<','>, sp, tcp_option_raw_len> {};
struct tcp_option_expr : seq<kw_option, sp, sor<tcp_option_raw, seq<tcp_option_kind, opt<sp, hdr_field<header::tcp_option>>>>> {};
struct tcp_hdr_expr : seq<hdr_kw<header::tcp, kw_tcp>, sp, sor<tcp_option_expr, hdr_field<header::tcp>>> {};
struct dccp_option_number : number {};
struct dccp_hdr_expr : seq<hdr_kw<header::dccp, kw_dccp>, sp, sor<seq<kw_option, sp, dccp_option_number>, hdr_field<header::dccp>>> {};
/// `sctp chunk data tsn`, `sctp chunk init exists` (nft(8) SCTP CHUNKS).
struct sctp_chunk_type : table_word<vocab::sctp_chunk_types> {};
struct sctp_chunk_expr : seq<kw_chunk, sp, sctp_chunk_type, opt<sp, hdr_field<header::sctp_chunk>>> {};
struct sctp_hdr_expr : seq<hdr_kw<header::sctp, kw_sctp>, sp, sor<sctp_chunk_expr, hdr_field<header::sctp>>> {};
struct th_hdr_expr : seq<hdr_kw<header::th, kw_th>, sp, hdr_field<header::th>> {};
struct inner_inet_expr : sor<ip_hdr_expr, icmp_hdr_expr, igmp_hdr_expr, ip6_hdr_expr, icmp6_hdr_expr, auth_hdr_expr, esp_hdr_expr, comp_hdr_expr, udp_hdr_expr, udplite_hdr_expr, tcp_hdr_expr, dccp_hdr_expr, sctp_hdr_expr, th_hdr_expr> {};
struct inner_expr : sor<eth_hdr_expr, vlan_hdr_expr, arp_hdr_expr, inner_inet_expr> {};
/// `vxlan vni`, `vxlan ip saddr` (a header inside the tunnel).
struct vxlan_hdr_expr : seq<hdr_kw<header::vxlan, kw_vxlan>, sp, sor<hdr_field<header::vxlan>, inner_expr>> {};
struct geneve_hdr_expr : seq<hdr_kw<header::geneve, kw_geneve>, sp, sor<hdr_field<header::geneve>, inner_expr>> {};
struct gre_hdr_expr : seq<hdr_kw<header::gre, kw_gre>, sp, sor<hdr_field<header::gre>, inner_inet_expr>> {};
struct gretap_hdr_expr : seq<hdr_kw<header::gretap, kw_gretap>, sp, inner_expr> {};
struct payload_expr : word_switch<payload_raw_expr,
                                  when<words<"ether">, eth_hdr_expr>, when<words<"vlan">, vlan_hdr_expr>,
                                  when<words<"arp">, arp_hdr_expr>, when<words<"ip">, ip_hdr_expr>,
                                  when<words<"icmp">, icmp_hdr_expr>, when<words<"igmp">, igmp_hdr_expr>,
                                  when<words<"ip6">, ip6_hdr_expr>, when<words<"icmpv6">, icmp6_hdr_expr>,
                                  when<words<"ah">, auth_hdr_expr>, when<words<"esp">, esp_hdr_expr>,
                                  when<words<"comp">, comp_hdr_expr>, when<words<"udp">, udp_hdr_expr>,
                                  when<words<"udplite">, udplite_hdr_expr>, when<words<"tcp">, tcp_hdr_expr>,
                                  when<words<"dccp">, dccp_hdr_expr>, when<words<"sctp">, sctp_hdr_expr>,
                                  when<words<"th">, th_hdr_expr>, when<words<"vxlan">, vxlan_hdr_expr>,
                                  when<words<"geneve">, geneve_hdr_expr>, when<words<"gre">, gre_hdr_expr>,
                                  when<words<"gretap">, gretap_hdr_expr>> {};

// IPv6 extension headers (nft(8) EXTENSION HEADER EXPRESSIONS).
struct hbh_hdr_expr : seq<hdr_kw<header::hbh, kw_hbh>, sp, hdr_field<header::hbh>> {};
struct rt_hdr_expr : seq<hdr_kw<header::rt, kw_rt>, sp, hdr_field<header::rt>> {};
struct exthdr_index : number {};
struct rt0_hdr_expr : seq<hdr_kw<header::rt0, kw_rt0>, sp, kw_addr, sp, one<'['>, sp, exthdr_index, sp, one<']'>> {};
struct rt2_hdr_expr : seq<hdr_kw<header::rt2, kw_rt2>, sp, hdr_field<header::rt2>> {};
struct srh_sid : seq<kw_sid, sp, one<'['>, sp, exthdr_index, sp, one<']'>> {};
struct rt4_hdr_expr : seq<hdr_kw<header::srh, kw_srh>, sp, sor<srh_sid, hdr_field<header::srh>>> {};
struct frag_hdr_expr : seq<hdr_kw<header::frag, kw_frag>, sp, hdr_field<header::frag>> {};
struct dst_hdr_expr : seq<hdr_kw<header::dst, kw_dst>, sp, hdr_field<header::dst>> {};
struct mh_hdr_expr : seq<hdr_kw<header::mh, kw_mh>, sp, hdr_field<header::mh>> {};
struct exthdr_expr : word_switch<pegtl::failure, when<words<"hbh">, hbh_hdr_expr>, when<words<"rt">, rt_hdr_expr>,
                                 when<words<"rt0">, rt0_hdr_expr>, when<words<"rt2">, rt2_hdr_expr>,
                                 when<words<"srh">, rt4_hdr_expr>, when<words<"frag">, frag_hdr_expr>,
                                 when<words<"dst">, dst_hdr_expr>, when<words<"mh">, mh_hdr_expr>> {};
/// `exthdr hbh` (presence, compared with `exists`/`missing`).
struct exthdr_key : table_word<vocab::exthdr_keys> {};
struct exthdr_exists_expr : seq<hdr_kw<header::exthdr, kw_exthdr>, sp, exthdr_key> {};

/// `meta l4proto`, `meta mark`, `mark`, `iifname` (nft(8) META EXPRESSIONS).
struct meta_key_qualified : table_word<vocab::meta_keys_qualified> {};
struct meta_key_unqualified : table_word<vocab::meta_keys_unqualified> {};
struct meta_expr : sor<seq<kw_meta, sp, sor<meta_key_qualified, meta_key_unqualified>>, meta_key_unqualified> {};

/// `ct state`, `ct original saddr`, `ct reply ip daddr`, `ct original bytes` (nft(8) CONNTRACK EXPRESSIONS).
struct ct_dir : sor<kw_original, kw_reply> {};
struct ct_key_word : table_word<vocab::ct_keys> {};
struct nf_key_proto : sor<kw_ip, kw_ip6> {};
struct ct_key_proto_field : seq<nf_key_proto, sp1, sor<kw_saddr, kw_daddr>> {};
struct ct_key_dir : ct_key_word {};
struct ct_expr : seq<kw_ct, sp, sor<seq<ct_dir, sp, sor<ct_key_proto_field, ct_key_dir>>, ct_key_word>> {};

/// `fib saddr . iif oif`, `fib daddr type` (nft(8) FIB EXPRESSIONS).
struct fib_flag : table_word<vocab::fib_flags> {};
struct fib_tuple : list<fib_flag, seq<sp, one<'.'>, sp>> {};
struct fib_result : table_word<vocab::fib_results> {};
struct fib_expr : seq<kw_fib, sp, fib_tuple, sp, fib_result> {};

/// `rt classid`, `rt ip nexthop`, `rt mtu` (nft(8) ROUTING EXPRESSIONS).
struct rt_key : table_word<vocab::rt_keys> {};
struct rt_expr : seq<kw_rt, sp, opt<nf_key_proto, sp>, rt_key> {};

/// `socket transparent`, `socket cgroupv2 level 2` (nft(8) SOCKET EXPRESSION).
struct socket_level : number {};
struct socket_key : table_word<vocab::socket_keys> {};
struct socket_expr : seq<kw_socket, sp, sor<seq<kw_cgroupv2, sp, kw_level, sp, socket_level>, socket_key>> {};

/// `osf [ttl loose|skip] name|version` (nft(8) OSF EXPRESSION).
struct osf_ttl : seq<kw_ttl, sp, sor<kw_loose, kw_skip>> {};
struct osf_key : sor<kw_name, kw_version> {};
struct osf_expr : seq<kw_osf, sp, opt<osf_ttl, sp>, osf_key> {};

/// `ipsec in reqid`, `ipsec out spnum 1 ip daddr` (nft(8) IPSEC EXPRESSIONS; `xfrm_expr`).
struct xfrm_dir : sor<kw_in, kw_out> {};
struct xfrm_spnum_value : number {};
struct xfrm_spnum : seq<kw_spnum, sp, xfrm_spnum_value> {};
struct xfrm_state_key : sor<kw_reqid, kw_spi> {};
struct xfrm_proto_key : seq<nf_key_proto, sp1, sor<kw_saddr, kw_daddr>> {};
struct xfrm_expr : seq<kw_ipsec, sp, xfrm_dir, sp, opt<xfrm_spnum, sp>, sor<xfrm_proto_key, xfrm_state_key>> {};

/// `numgen random mod 2 [offset 1]` (nft(8) NUMGEN EXPRESSION).
struct numgen_type : sor<kw_inc, kw_random> {};
struct numgen_modulus : number {};
struct hash_offset : number {};
struct offset_opt : seq<kw_offset, sp, hash_offset> {};
struct numgen_expr : seq<kw_numgen, sp, numgen_type, sp, kw_mod, sp, numgen_modulus, opt<sp, offset_opt>> {};

/// `jhash ip saddr . tcp dport mod 4 [seed 0x1] [offset 1]`, `symhash mod 2` (nft(8) HASH EXPRESSIONS).
struct hash_modulus : number {};
struct hash_seed_value : number {};
struct hash_seed : seq<kw_seed, sp, hash_seed_value> {};
struct jhash_expr : seq<kw_jhash, sp, concat_expr, sp, kw_mod, sp, hash_modulus, opt<sp, hash_seed>, opt<sp, offset_opt>> {};
struct symhash_expr : seq<kw_symhash, sp, kw_mod, sp, hash_modulus, opt<sp, offset_opt>> {};
struct hash_expr : sor<jhash_expr, symhash_expr> {};

/// `tunnel path`, `tunnel id`.
struct tunnel_expr : seq<kw_tunnel, sp, sor<kw_path, kw_id>> {};

struct selector_expr
    : word_switch<payload_expr,
                  when<words<"ether", "vlan", "arp", "ip", "icmp", "igmp", "ip6", "icmpv6", "ah", "esp", "comp", "udp",
                             "udplite", "tcp", "dccp", "sctp", "th", "vxlan", "geneve", "gre", "gretap">,
                       payload_expr>,
                  when<words<"hbh", "rt", "rt0", "rt2", "srh", "frag", "dst", "mh">, exthdr_expr>,
                  when<words<"exthdr">, exthdr_exists_expr>, when<words<"ipsec">, xfrm_expr>,
                  when<words<"meta", "mark", "iif", "iifname", "iiftype", "oif", "oifname", "oiftype", "skuid",
                             "skgid", "nftrace", "rtclassid", "ibrname", "ibriport", "obrname", "obriport", "pkttype",
                             "cpu", "iifgroup", "oifgroup", "cgroup", "ipsec", "time", "day", "hour">,
                       meta_expr>,
                  when<words<"ct">, ct_expr>, when<words<"rt">, rt_expr>, when<words<"fib">, fib_expr>,
                  when<words<"numgen">, numgen_expr>, when<words<"jhash", "symhash">, hash_expr>,
                  when<words<"socket">, socket_expr>, when<words<"osf">, osf_expr>,
                  when<words<"tunnel">, tunnel_expr>> {};

// ---------------------------------------------------------------------------------------------------
// Constants

/// One value token (scanner.l's token classes, longest match first): see value_token in the parser.
struct quoted_value : quoted_string {};
struct hex_value : number {};
struct dec_value : number {};
/// One value, classified by its first characters the way scanner.l's longest match does: a quoted
/// string, `[ipv6]`, an IPv6 address, a MAC address, an IPv4 address, a class id, hex, a time string, a
/// decimal number, or a word. Dispatches to the named token rule so that its action runs.
struct value_token {
  using rule_t = value_token;
  using subs_t = pegtl::type_list<quoted_value, ip6addr_bracketed, ip6addr, macaddr, ip4addr, classid, hex_value,
                                  timestring, dec_value, symbol_word>;
  template <pegtl::apply_mode A, pegtl::rewind_mode M, template <class...> class Action,
            template <class...> class Control, class Input, class... States>
  [[nodiscard]] static bool match(Input& in, States&... st) {
    if (in.empty()) return false;
    const char* p = in.current();
    const char* end = in.end();
    const char c = *p;
    if (c == '"') return Control<quoted_value>::template match<A, M, Action, Control>(in, st...);
    if (c == '[') return Control<ip6addr_bracketed>::template match<A, M, Action, Control>(in, st...);
    if (is_digit(c) || is_hex(c) || c == ':') {
      // Look at the run of address characters to pick the candidates.
      bool colon = false;
      bool dot = false;
      bool dot_first = false;  // a '.' before the first ':', which no IPv6 address has (see ip6addr)
      const char* q = p;
      while (q != end && (is_hex(*q) || *q == ':' || *q == '.')) {
        colon |= *q == ':';
        dot_first |= *q == '.' && !colon;
        dot |= *q == '.';
        ++q;
      }
      if (colon) {
        // `10.0.0.1:80` (a DNAT target) goes straight to the IPv4 address.
        if (!dot_first && Control<ip6addr>::template match<A, M, Action, Control>(in, st...)) return true;
        if (Control<macaddr>::template match<A, M, Action, Control>(in, st...)) return true;
        if (Control<classid>::template match<A, M, Action, Control>(in, st...)) return true;
      }
      if (is_digit(c)) {
        if (dot && Control<ip4addr>::template match<A, M, Action, Control>(in, st...)) return true;
        if (c == '0' && p + 1 != end && (p[1] == 'x' || p[1] == 'X'))
          return Control<hex_value>::template match<A, M, Action, Control>(in, st...);
        if (Control<timestring>::template match<A, M, Action, Control>(in, st...)) return true;
        if (Control<dec_value>::template match<A, M, Action, Control>(in, st...)) return true;
      }
    }
    return Control<symbol_word>::template match<A, M, Action, Control>(in, st...);
  }
};

// Binary operators, also as words (scanner.l).
struct lshift_op : sor<string<'<', '<'>, kw_lshift> {};
struct rshift_op : sor<string<'>', '>'>, kw_rshift> {};
struct and_op : sor<seq<one<'&'>, not_at<one<'&'>>>, kw_and> {};
struct xor_op : sor<one<'^'>, kw_xor> {};
struct or_op : sor<seq<one<'|'>, not_at<one<'|'>>>, kw_or> {};
struct binop_operator : sor<lshift_op, rshift_op, and_op, xor_op, or_op> {};
/// `OP operand` after the first operand of a binary expression.
template <class Operand> struct binop_tail : seq<binop_operator, sp, Operand> {};
/// `a OP b OP c ...` (`shift_expr` ... `inclusive_or_expr`, one level per precedence in parser_bison.y):
/// parsed as a flat list and built into a tree by the action with nft's precedence — shifts bind
/// tightest, then `&`, then `^`, then `|`, all left-associative — so that a plain value is not passed
/// through five nested rules.
template <class First, class Operand>
struct binop_chain : seq<First, star<next_is<'<', '>', '&', '^', '|', 'l', 'r', 'a', 'x', 'o'>, sp, binop_tail<Operand>>> {};

/// `/len` after a value: a prefix.
struct prefix_length : number {};
struct prefix_tail : seq<sp, one<'/'>, sp, prefix_length> {};
/// `-high` after a value: a range.
template <class Operand> struct range_tail : seq<sp, one<'-'>, sp, Operand> {};

// The right-hand side (`primary_rhs_expr` ... `concat_rhs_expr`).
struct basic_rhs_expr;
struct paren_rhs_expr : seq<one<'('>, sp, basic_rhs_expr, sp, one<')'>> {};
/// `[invalid type]`, which nft 1.0.6 prints after a value whose datatype it lost (a listing-only form).
struct invalid_type_note : seq<sp, string<'[', 'i', 'n', 'v', 'a', 'l', 'i', 'd', ' ', 't', 'y', 'p', 'e', ']'>> {};
struct value : seq<value_token, opt<next_is<'['>, invalid_type_note>> {};
struct primary_rhs_expr : sor<value, variable_expr, paren_rhs_expr> {};
struct basic_rhs_expr : binop_chain<primary_rhs_expr, primary_rhs_expr> {};
struct multiton_rhs_expr : seq<basic_rhs_expr, opt<next_is<'/', '-'>, sor<prefix_tail, range_tail<basic_rhs_expr>>>> {};
struct concat_rhs_tail : seq<sp, one<'.'>, sp, multiton_rhs_expr> {};
/// `a . b-c . d/8`.
struct concat_rhs_expr : seq<multiton_rhs_expr, star<next_is<'.'>, concat_rhs_tail>> {};
/// `@name`.
struct set_ref_expr : seq<one<'@'>, sp, identifier> {};

// ---------------------------------------------------------------------------------------------------
// Sets, maps and their elements (`set_expr`, `set_elem_expr`)

struct set_elem_stmt;
/// The value of `timeout`/`expires`: a time string or a number of seconds.
struct time_value : sor<timestring, number> {};
/// An element's times take a unit (`set_elem_time_spec`, `time_spec`: `timeout 10` is refused).
struct set_elem_timeout : seq<kw_timeout, sp, timestring> {};
struct set_elem_expires : seq<kw_expires, sp, timestring> {};
struct set_elem_comment;
struct set_elem_option : sor<set_elem_timeout, set_elem_expires, set_elem_comment, set_elem_stmt> {};
struct set_elem_begin : pegtl::success {};
struct wildcard_key : seq<one<'*'>, not_at<pegtl::identifier_other>> {};
struct set_elem_key_expr : sor<wildcard_key, concat_rhs_expr> {};
/// `verdict_expr` as map data: `accept`, `goto chain`.
struct chain_target : sor<variable_expr, identifier, quoted_string> {};
struct verdict_accept : kw_accept {};
struct verdict_drop : kw_drop {};
struct verdict_continue : kw_continue {};
struct verdict_return : kw_return {};
struct verdict_jump : seq<kw_jump, sp, chain_target> {};
struct verdict_goto : seq<kw_goto, sp, chain_target> {};
struct verdict_expr : sor<verdict_accept, verdict_drop, verdict_continue, verdict_return, verdict_jump, verdict_goto> {};
struct set_rhs_expr : sor<verdict_expr, concat_rhs_expr> {};
struct set_elem_data : seq<sp, one<':'>, sp, set_rhs_expr> {};
/// `key [options] [: data]`.
struct set_elem_expr : seq<set_elem_begin, set_elem_key_expr, star<next_is<'t', 'e', 'c', 'l', 'q'>, sp1, set_elem_option>, opt<next_is<':'>, set_elem_data>> {};
struct set_list_member_expr : sor<seq<next_is<'{'>, set_expr>, set_elem_expr> {};
struct set_list_sep : seq<nl_ws, one<','>, nl_ws> {};
struct set_list_expr : seq<set_list_member_expr, star<set_list_sep, opt<set_list_member_expr>>> {};
/// `{ a, b-c, d . e : verdict, ... }`, elements separated by commas and any space or newline; at least
/// one (nft refuses `{ }` everywhere but in a `define`).
struct set_expr : seq<one<'{'>, nl_ws, set_list_expr, nl_ws, one<'}'>> {};
/// `{ }`: the empty set, only the value of a `define` (parser_bison.y `initializer_expr`).
struct empty_set_expr : seq<one<'{'>, sp, one<'}'>> {};

// ---------------------------------------------------------------------------------------------------
// The left side (`primary_expr` ... `concat_expr`, `map_expr`)

struct basic_expr;
struct paren_expr : seq<one<'('>, sp, basic_expr, sp, one<')'>> {};
/// A constant on the left (`ip saddr . 1.2.3.4 . 80 @s`, `ip saddr . "lo" @s`): any value but a plain
/// word, which at the start of a statement is a misspelt keyword far more often than a symbol.
struct not_plain_word : leaf<not_plain_word> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const std::size_t n = word_length(in.current(), in.end());
    return n == 0 || (in.size(n + 1) > n && in.current()[n] == ':');
  }
};
struct lhs_value : seq<not_plain_word, value> {};
struct primary_expr : sor<selector_expr, lhs_value, variable_expr, paren_expr> {};
/// The left side's right operands are constants (`meta mark & 0xff`), as in parser_bison.y.
struct basic_expr : binop_chain<primary_expr, primary_rhs_expr> {};
struct concat_tail : seq<sp, one<'.'>, sp, basic_expr> {};
/// `ip daddr . meta l4proto . th dport`.
struct concat_expr : seq<basic_expr, star<next_is<'.'>, concat_tail>> {};
/// `KEY map { ... }` / `KEY map @name`.
struct map_lookup : sor<set_expr, set_ref_expr, variable_expr> {};
struct map_tail : seq<sp, kw_map, sp, map_lookup> {};
struct expr : seq<concat_expr, opt<next_is<'m'>, map_tail>> {};

// ---------------------------------------------------------------------------------------------------
// Relations (`relational_expr`)

struct op_eq : sor<string<'=', '='>, kw_eq> {};
struct op_neq : sor<string<'!', '='>, kw_ne> {};
struct op_lte : sor<string<'<', '='>, kw_le> {};
struct op_gte : sor<string<'>', '='>, kw_ge> {};
struct op_lt : sor<one<'<'>, kw_lt> {};
struct op_gt : sor<one<'>'>, kw_gt> {};
struct op_neg : sor<one<'!'>, kw_not> {};
struct op_implicit : pegtl::success {};
struct relational_op : sor<op_eq, op_neq, op_lte, op_gte, op_lt, op_gt, op_neg> {};
/// `fin,syn` after `/` in a flag match: the mask.
struct flag_mask : seq<basic_rhs_expr, star<sp, one<','>, sp, basic_rhs_expr>> {};
/// `value / mask` (`tcp flags syn / syn,ack`).
struct flag_tail : seq<sp, one<'/'>, sp, not_at<number>, flag_mask> {};
/// `a, b, c` after the first value (`list_rhs_expr`).
struct list_rhs_tail : plus<sp, one<','>, sp, basic_rhs_expr> {};
/// A constant, a list, a concatenation, or a flag match, parsed once from its first value.
struct rhs_sequence : seq<multiton_rhs_expr, opt<next_is<',', '/', '.'>, sor<seq<list_rhs_tail, opt<flag_tail>>, flag_tail, star<concat_rhs_tail>>>> {};
struct relational_rhs : sor<seq<next_is<'{'>, set_expr>, set_ref_expr, rhs_sequence> {};
/// `[op] rhs` after the left side.
struct relational_tail : seq<sor<seq<relational_op, sp>, op_implicit>, relational_rhs> {};

// ---------------------------------------------------------------------------------------------------
// Statement values (`primary_stmt_expr` ... `stmt_expr`)

struct basic_stmt_expr;
struct paren_stmt_expr : seq<one<'('>, sp, basic_stmt_expr, sp, one<')'>> {};
struct primary_stmt_expr : sor<selector_expr, value, variable_expr, paren_stmt_expr> {};
struct basic_stmt_expr : binop_chain<primary_stmt_expr, primary_stmt_expr> {};
struct concat_stmt_tail : seq<sp, one<'.'>, sp, basic_stmt_expr> {};
struct list_stmt_tail : plus<sp, one<','>, sp, basic_stmt_expr> {};
struct map_stmt_tail : seq<sp, kw_map, sp, sor<set_expr, set_ref_expr, variable_expr>> {};
/// A statement's value: a prefix, a range, a list, or a concatenation with an optional `map` lookup.
struct stmt_expr : seq<basic_stmt_expr, opt<next_is<'/', '-', ',', '.', 'm'>, sor<prefix_tail, range_tail<basic_stmt_expr>, list_stmt_tail, seq<star<next_is<'.'>, concat_stmt_tail>, opt<map_stmt_tail>>>>> {};

// clang-format on

}  // namespace nflens::nft::grammar

namespace tao::pegtl {
template <class Name, const auto& T>
struct analyze_traits<Name, nflens::nft::grammar::table_word<T>> : analyze_any_traits<> {};
template <class Name, nflens::nft::header H>
struct analyze_traits<Name, nflens::nft::grammar::hdr_field<H>> : analyze_any_traits<> {};
template <class Name>
struct analyze_traits<Name, nflens::nft::grammar::not_plain_word> : analyze_opt_traits<> {};
template <class Name>
struct analyze_traits<Name, nflens::nft::grammar::value_token>
    : analyze_sor_traits<nflens::nft::grammar::quoted_value, nflens::nft::grammar::symbol_word> {};
}  // namespace tao::pegtl
