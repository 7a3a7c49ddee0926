// SPDX-License-Identifier: MIT
#pragma once

// The statement layer of the nft grammar (nft(8) STATEMENTS; parser_bison.y `stmt`, `verdict_stmt`,
// `counter_stmt`, `limit_stmt`, `log_stmt`, `reject_stmt`, `nat_stmt`, `queue_stmt`, `set_stmt`, ...,
// `match_stmt`) and rules (`rule`: statements, then an optional comment).

#include "nft_expr.hpp"

namespace nflens::nft::grammar {

// clang-format off

struct kw_counter : NFLENS_NFT_KW("counter") {};
struct kw_packets : NFLENS_NFT_KW("packets") {};
struct kw_bytes : NFLENS_NFT_KW("bytes") {};
struct kw_limit : NFLENS_NFT_KW("limit") {};
struct kw_rate : NFLENS_NFT_KW("rate") {};
struct kw_over : NFLENS_NFT_KW("over") {};
struct kw_until : NFLENS_NFT_KW("until") {};
struct kw_burst : NFLENS_NFT_KW("burst") {};
struct kw_quota : NFLENS_NFT_KW("quota") {};
struct kw_used : NFLENS_NFT_KW("used") {};
struct kw_count : NFLENS_NFT_KW("count") {};
struct kw_last : NFLENS_NFT_KW("last") {};
struct kw_never : NFLENS_NFT_KW("never") {};
struct kw_log : NFLENS_NFT_KW("log") {};
struct kw_prefix : NFLENS_NFT_KW("prefix") {};
struct kw_group : NFLENS_NFT_KW("group") {};
struct kw_snaplen : NFLENS_NFT_KW("snaplen") {};
struct kw_queue_threshold : NFLENS_NFT_KW("queue-threshold") {};
struct kw_flags : NFLENS_NFT_KW("flags") {};
struct kw_sequence : NFLENS_NFT_KW("sequence") {};
struct kw_options : NFLENS_NFT_KW("options") {};
struct kw_skuid : NFLENS_NFT_KW("skuid") {};
struct kw_all : NFLENS_NFT_KW("all") {};
struct kw_reject : NFLENS_NFT_KW("reject") {};
struct kw_with : NFLENS_NFT_KW("with") {};
struct kw_icmpx : NFLENS_NFT_KW("icmpx") {};
struct kw_type : NFLENS_NFT_KW("type") {};
struct kw_reset : NFLENS_NFT_KW("reset") {};
struct kw_snat : NFLENS_NFT_KW("snat") {};
struct kw_dnat : NFLENS_NFT_KW("dnat") {};
struct kw_masquerade : NFLENS_NFT_KW("masquerade") {};
struct kw_redirect : NFLENS_NFT_KW("redirect") {};
struct kw_to : NFLENS_NFT_KW("to") {};
struct kw_port : NFLENS_NFT_KW("port") {};
struct kw_interval : NFLENS_NFT_KW("interval") {};
struct kw_fully_random : NFLENS_NFT_KW("fully-random") {};
struct kw_persistent : NFLENS_NFT_KW("persistent") {};
struct kw_tproxy : NFLENS_NFT_KW("tproxy") {};
struct kw_queue : NFLENS_NFT_KW("queue") {};
struct kw_num : NFLENS_NFT_KW("num") {};
struct kw_bypass : NFLENS_NFT_KW("bypass") {};
struct kw_fanout : NFLENS_NFT_KW("fanout") {};
struct kw_dup : NFLENS_NFT_KW("dup") {};
struct kw_fwd : NFLENS_NFT_KW("fwd") {};
struct kw_device : NFLENS_NFT_KW("device") {};
struct kw_notrack : NFLENS_NFT_KW("notrack") {};
struct kw_flow : NFLENS_NFT_KW("flow") {};
struct kw_add : NFLENS_NFT_KW("add") {};
struct kw_offload : NFLENS_NFT_KW("offload") {};
struct kw_update : NFLENS_NFT_KW("update") {};
struct kw_delete : NFLENS_NFT_KW("delete") {};
struct kw_meter : NFLENS_NFT_KW("meter") {};
struct kw_size : NFLENS_NFT_KW("size") {};
struct kw_set : NFLENS_NFT_KW("set") {};
struct kw_synproxy : NFLENS_NFT_KW("synproxy") {};
struct kw_mss : sor<NFLENS_NFT_KW("mss"), NFLENS_NFT_KW("maxseg")> {};
struct kw_wscale : NFLENS_NFT_KW("wscale") {};
struct kw_timestamp : NFLENS_NFT_KW("timestamp") {};
struct kw_sack_perm : sor<NFLENS_NFT_KW("sack-perm"), NFLENS_NFT_KW("sack-permitted")> {};
struct kw_xt : NFLENS_NFT_KW("xt") {};
struct kw_match : NFLENS_NFT_KW("match") {};
struct kw_target : NFLENS_NFT_KW("target") {};
struct kw_watcher : NFLENS_NFT_KW("watcher") {};
struct kw_handle : NFLENS_NFT_KW("handle") {};

// ---------------------------------------------------------------------------------------------------
// Rule comments and handles

/// `comment "text"` (`comment_spec`); nft also takes an unquoted word.
struct comment_value : string_word {};
struct comment_spec : seq<kw_comment, sp, comment_value> {};
struct set_elem_comment : comment_spec {};
/// `# handle 42` as `nft -a` prints it.
struct handle_value : number {};
struct handle_comment : seq<one<'#'>, sp, kw_handle, sp, handle_value> {};

// ---------------------------------------------------------------------------------------------------
// Verdicts (`verdict_stmt`, `chain_stmt`, `verdict_map_stmt`)

struct subchain_block;
/// `jump { ... }`: a verdict to an anonymous chain.
struct chain_stmt : seq<sor<kw_jump, kw_goto>, sp, at<one<'{'>>, subchain_block> {};
struct verdict_stmt : verdict_expr {};

// ---------------------------------------------------------------------------------------------------
// Stateful statements (`stateful_stmt`)

struct counter_packets : number {};
struct counter_bytes : number {};
struct counter_arg : sor<seq<kw_packets, sp, counter_packets>, seq<kw_bytes, sp, counter_bytes>> {};
/// `counter`, `counter packets 0 bytes 0`.
struct counter_stmt : seq<kw_counter, star<sp1, counter_arg>> {};

/// A number that may be followed directly by a unit (`1025bytes`), as in rates and quotas: decimal
/// (octal after a leading 0) or hex `0x...`, as nft's scanner reads numbers.
struct unit_number : leaf<unit_number> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const char* p = in.current();
    const char* end = in.end();
    std::size_t n = 0;
    if (end - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X') && is_hex(p[2]))
      n = 2 + detail::scan(p + 2, end, is_hex);
    else
      n = detail::scan(p, end, is_digit);
    if (n == 0) return false;
    in.bump_in_this_line(n);
    return true;
  }
};
struct bytes_unit : sor<NFLENS_NFT_UNIT("bytes"), NFLENS_NFT_UNIT("kbytes"), NFLENS_NFT_UNIT("mbytes")> {};
struct time_unit_word : table_word<vocab::time_units> {};
struct limit_over : kw_over {};
struct limit_until : kw_until {};
struct limit_mode : sor<limit_over, limit_until> {};
struct limit_rate_value : unit_number {};
struct limit_rate_unit : bytes_unit {};
/// `10/second`, `1 kbytes/second`.
struct limit_rate : seq<limit_rate_value, sp, opt<limit_rate_unit, sp>, one<'/'>, sp, time_unit_word> {};
struct limit_burst_value : unit_number {};
struct limit_burst_unit : sor<kw_packets, bytes_unit> {};
struct limit_burst : seq<kw_burst, sp, limit_burst_value, sp, limit_burst_unit> {};
struct limit_args : seq<opt<limit_mode, sp>, limit_rate, opt<sp1, limit_burst>> {};
/// `limit rate [over] 10/second [burst 5 packets]` (nft(8) LIMIT STATEMENT).
struct limit_stmt : seq<kw_limit, sp, kw_rate, sp, limit_args> {};

struct quota_value : unit_number {};
struct quota_unit : bytes_unit {};
struct quota_used_value : unit_number {};
struct quota_used_unit : bytes_unit {};
struct quota_used : seq<kw_used, sp, quota_used_value, sp, quota_used_unit> {};
struct quota_args : seq<opt<limit_mode, sp>, quota_value, sp, quota_unit, opt<sp1, quota_used>> {};
/// `quota [over|until] 25 mbytes [used 10 mbytes]` (nft(8) QUOTA STATEMENT).
struct quota_stmt : seq<kw_quota, sp, quota_args> {};

struct connlimit_count : number {};
/// `ct count [over] N`.
struct connlimit_stmt : seq<kw_ct, sp, kw_count, sp, opt<limit_over, sp>, connlimit_count> {};

struct last_used_time : time_value {};
struct last_used_never : kw_never {};
/// `last`, `last used never`, `last used 10s`.
struct last_stmt : seq<kw_last, opt<sp1, kw_used, sp, sor<last_used_never, last_used_time>>> {};

struct stateful_stmt : sor<counter_stmt, limit_stmt, quota_stmt, connlimit_stmt, last_stmt> {};
/// Statements a set element may carry (`set_elem_stmt`).
struct set_elem_stmt : sor<counter_stmt, limit_stmt, connlimit_stmt, quota_stmt, last_stmt> {};

// ---------------------------------------------------------------------------------------------------
// Named object references (`objref_stmt`)

struct objref_counter : seq<kw_counter, sp, kw_name, sp, stmt_expr> {};
struct objref_limit : seq<kw_limit, sp, kw_name, sp, stmt_expr> {};
struct objref_quota : seq<kw_quota, sp, kw_name, sp, stmt_expr> {};
struct objref_synproxy : seq<kw_synproxy, sp, kw_name, sp, stmt_expr> {};
struct objref_tunnel : seq<kw_tunnel, sp, kw_name, sp, stmt_expr> {};
struct objref_stmt : sor<objref_counter, objref_limit, objref_quota, objref_synproxy, objref_tunnel> {};

// ---------------------------------------------------------------------------------------------------
// log (nft(8) LOG STATEMENT)

struct log_prefix_value : sor<variable_expr, string_word> {};
struct log_group_value : number {};
struct log_snaplen_value : number {};
struct log_queue_threshold_value : number {};
struct log_level_word : table_word<vocab::log_levels> {};
struct log_flag_tcp_sequence : kw_sequence {};
struct log_flag_tcp_options : kw_options {};
struct log_flag_ip_options : kw_options {};
struct log_flag_skuid : kw_skuid {};
struct log_flag_ether : kw_ether {};
struct log_flag_all : kw_all {};
struct log_flags_tcp : seq<kw_tcp, sp, list<sor<log_flag_tcp_sequence, log_flag_tcp_options>, seq<sp, one<','>, sp>>> {};
struct log_flags : sor<log_flags_tcp, seq<kw_ip, sp, log_flag_ip_options>, log_flag_skuid, log_flag_ether, log_flag_all> {};
struct log_arg : sor<seq<kw_prefix, sp, log_prefix_value>, seq<kw_group, sp, log_group_value>, seq<kw_snaplen, sp, log_snaplen_value>, seq<kw_queue_threshold, sp, log_queue_threshold_value>, seq<kw_level, sp, log_level_word>, seq<kw_flags, sp, log_flags>> {};
struct log_stmt : seq<kw_log, star<sp1, log_arg>> {};

// ---------------------------------------------------------------------------------------------------
// reject (nft(8) REJECT STATEMENT)

struct reject_code : sor<number, identifier> {};
struct reject_tcp_reset : seq<kw_tcp, sp, kw_reset> {};
struct reject_icmp : seq<kw_icmp, sp, opt<kw_type, sp1>, reject_code> {};
struct reject_icmpv6 : seq<kw_icmpv6, sp, opt<kw_type, sp1>, reject_code> {};
struct reject_icmpx : seq<kw_icmpx, sp, opt<kw_type, sp1>, reject_code> {};
struct reject_opts : seq<kw_with, sp, sor<reject_tcp_reset, reject_icmpx, reject_icmpv6, reject_icmp>> {};
struct reject_stmt : seq<kw_reject, opt<sp1, reject_opts>> {};

// ---------------------------------------------------------------------------------------------------
// NAT (nft(8) NAT STATEMENTS)

struct nat_flag_random : kw_random {};
struct nat_flag_fully_random : kw_fully_random {};
struct nat_flag_persistent : kw_persistent {};
struct nf_nat_flag : sor<nat_flag_random, nat_flag_fully_random, nat_flag_persistent> {};
struct nf_nat_flags : list<nf_nat_flag, seq<sp, one<','>, sp>> {};
struct nat_address : seq<stmt_expr> {};
struct nat_port : seq<stmt_expr> {};
struct nat_family : seq<nf_key_proto, sp1, at<sor<kw_to, kw_addr, kw_interval, kw_prefix>>> {};
struct nat_mode_addr_port : seq<kw_addr, sp, one<'.'>, sp, kw_port> {};
struct nat_mode_interval : kw_interval {};
struct nat_mode_prefix : kw_prefix {};
struct nat_mode : sor<nat_mode_addr_port, nat_mode_interval, nat_mode_prefix> {};
struct nat_target : sor<seq<one<':'>, sp, nat_port>, seq<nat_address, opt<sp, one<':'>, sp, nat_port>>> {};
/// Before each list of flags after snat/dnat: nft keeps the last list only (`random persistent` is
/// `persistent`).
struct nat_flags_again : pegtl::success {};
struct nat_stmt_args : seq<opt<nat_family>, opt<nat_mode, sp1>, opt<kw_to, sp>, nat_target,
                           star<sp1, at<nf_nat_flag>, nat_flags_again, nf_nat_flags>> {};
struct nat_snat : kw_snat {};
struct nat_dnat : kw_dnat {};
/// `snat|dnat [ip|ip6] [addr . port|interval|prefix] to ADDR[:PORT] [flags]`.
struct nat_stmt : seq<sor<nat_snat, nat_dnat>, sp1, nat_stmt_args> {};
/// `masquerade [to :PORT] [flags]`.
struct masq_stmt : seq<kw_masquerade, opt<sp1, kw_to, sp, one<':'>, sp, nat_port>, opt<sp1, nf_nat_flags>> {};
/// `redirect [to [:]PORT] [flags]`.
struct redir_stmt : seq<kw_redirect, opt<sp1, kw_to, sp, opt<one<':'>, sp>, nat_port>, opt<sp1, nf_nat_flags>> {};
/// `tproxy [ip|ip6] to [ADDR][:PORT]`.
struct tproxy_family : nf_key_proto {};
struct tproxy_stmt : seq<kw_tproxy, sp, opt<tproxy_family, sp1>, kw_to, sp, nat_target> {};

// ---------------------------------------------------------------------------------------------------
// queue, dup, fwd, notrack, flow offload, synproxy, optstrip, xt

struct queue_flag_bypass : kw_bypass {};
struct queue_flag_fanout : kw_fanout {};
struct queue_stmt_flag : sor<queue_flag_bypass, queue_flag_fanout> {};
struct queue_stmt_flags : list<queue_stmt_flag, seq<sp, one<','>, sp>> {};
struct queue_number : seq<stmt_expr> {};
/// `num N` takes a number or a range (`queue_stmt_expr_simple`); `to` also a numgen, a hash or a map.
struct queue_num_number : queue_number {};
struct queue_arg : sor<seq<kw_flags, sp, queue_stmt_flags>, seq<kw_num, sp, queue_num_number>, seq<kw_to, sp, queue_number>, queue_stmt_flags> {};
/// `queue [flags bypass,fanout] [num N|to EXPR]`, and the older `queue num 1-3 bypass`.
struct queue_stmt : seq<kw_queue, star<sp1, queue_arg>> {};
struct dup_address : seq<stmt_expr> {};
struct dup_device : seq<stmt_expr> {};
struct dup_stmt : seq<kw_dup, sp, kw_to, sp, dup_address, opt<sp1, kw_device, sp, dup_device>> {};
struct fwd_family : nf_key_proto {};
struct fwd_stmt : seq<kw_fwd, sp, opt<fwd_family, sp1>, kw_to, sp, dup_address, opt<sp1, kw_device, sp, dup_device>> {};
struct notrack_stmt : kw_notrack {};
struct flow_offload_stmt : seq<kw_flow, sp, sor<kw_add, kw_offload>, sp, one<'@'>, sp, identifier> {};
struct synproxy_mss : number {};
struct synproxy_wscale : number {};
struct synproxy_timestamp : kw_timestamp {};
struct synproxy_sack_perm : kw_sack_perm {};
struct synproxy_arg : sor<seq<kw_mss, sp, synproxy_mss>, seq<kw_wscale, sp, synproxy_wscale>, synproxy_timestamp, synproxy_sack_perm> {};
/// `synproxy [mss N] [wscale N] [timestamp] [sack-perm]`.
struct synproxy_stmt : seq<kw_synproxy, star<sp1, synproxy_arg>> {};
/// `reset tcp option sack-perm`.
struct optstrip_stmt : seq<kw_reset, sp, kw_tcp, sp, kw_option, sp, tcp_option_kind> {};
struct xt_kind_match : kw_match {};
struct xt_kind_target : kw_target {};
struct xt_kind_watcher : kw_watcher {};
struct xt_name : string_word {};
/// `xt match "comment"`: an iptables-nft expression nft cannot show.
struct xt_stmt : seq<kw_xt, sp, sor<xt_kind_match, xt_kind_target, xt_kind_watcher>, sp1, xt_name> {};

// ---------------------------------------------------------------------------------------------------
// Dynamic sets (`set_stmt`, `map_stmt`, `meter_stmt`)

struct set_op_add : kw_add {};
struct set_op_update : kw_update {};
struct set_op_delete : kw_delete {};
struct set_stmt_op : sor<set_op_add, set_op_update, set_op_delete> {};
struct set_stmt_data : seq<sp, one<':'>, sp, stmt_expr> {};
/// `{ ip saddr timeout 10s counter }`, `{ ip saddr : 0x1 }`: one element whose key is evaluated.
struct set_stmt_element : seq<one<'{'>, nl_ws, set_elem_begin, concat_expr, star<sp1, set_elem_option>, opt<set_stmt_data>, nl_ws, one<'}'>> {};
struct set_stmt : seq<set_stmt_op, sp1, set_ref_expr, sp, set_stmt_element> {};
/// The key and options of `set add KEY [timeout T] [expires T] [comment "c"] @name` (no statements).
struct set_stmt_legacy_element : seq<set_elem_begin, concat_expr, star<sp1, sor<set_elem_timeout, set_elem_expires, set_elem_comment>>> {};
/// `set add ip saddr timeout 10s @s`: the older spelling of `add @s { ip saddr timeout 10s }`, which nft
/// still reads (parser_bison.y `SET set_stmt_op set_elem_expr_stmt set_ref_expr`) and lists as that.
struct set_stmt_legacy : seq<kw_set, sp1, set_stmt_op, sp1, set_stmt_legacy_element, sp, set_ref_expr> {};
struct meter_name : identifier {};
struct meter_size : number {};
/// `meter NAME [size N] { key stmt }`.
struct meter_stmt : seq<kw_meter, sp, meter_name, sp, opt<kw_size, sp, meter_size, sp>, set_stmt_element> {};

// ---------------------------------------------------------------------------------------------------
// Matches and mangling led by an expression

struct mangle_tail : seq<kw_set, sp, stmt_expr> {};
struct vmap_tail : seq<kw_vmap, sp, sor<set_expr, set_ref_expr, variable_expr>> {};
/// `ip saddr 10.0.0.0/8` (`match_stmt`), `meta mark set 1` (`meta_stmt`/`ct_stmt`/`payload_stmt`),
/// `ip daddr . tcp dport vmap @m` (`verdict_map_stmt`): the left side is parsed once.
struct expr_stmt : seq<expr, sp, sor<mangle_tail, vmap_tail, relational_tail>> {};

// ---------------------------------------------------------------------------------------------------
// Statements and rules

struct stmt
    : word_switch<expr_stmt, when<words<"jump", "goto">, chain_stmt>,
                  when<words<"accept", "drop", "continue", "return", "jump", "goto">, verdict_stmt>,
                  when<words<"counter", "limit", "quota", "synproxy", "tunnel">, objref_stmt>,
                  when<words<"counter">, counter_stmt>, when<words<"limit">, limit_stmt>,
                  when<words<"quota">, quota_stmt>, when<words<"ct">, connlimit_stmt>, when<words<"last">, last_stmt>,
                  when<words<"log">, log_stmt>, when<words<"reject">, reject_stmt>,
                  when<words<"snat", "dnat">, nat_stmt>, when<words<"masquerade">, masq_stmt>,
                  when<words<"redirect">, redir_stmt>, when<words<"tproxy">, tproxy_stmt>,
                  when<words<"synproxy">, synproxy_stmt>, when<words<"queue">, queue_stmt>,
                  when<words<"dup">, dup_stmt>, when<words<"fwd">, fwd_stmt>, when<words<"notrack">, notrack_stmt>,
                  when<words<"flow">, flow_offload_stmt>, when<words<"meter">, meter_stmt>,
                  when<words<"add", "update", "delete">, set_stmt>, when<words<"set">, set_stmt_legacy>,
                  when<words<"reset">, optstrip_stmt>,
                  when<words<"xt">, xt_stmt>> {};
struct rule_begin : pegtl::success {};
struct stmt_list : seq<stmt, star<sp1, stmt>> {};
/// `stmt ... [comment "x"] [# handle N]`.
struct rule_comment : comment_spec {};
struct rule_handle : handle_comment {};
struct rule : seq<rule_begin, stmt_list, opt<sp1, rule_comment>, opt<sp, rule_handle>> {};

// clang-format on

}  // namespace nflens::nft::grammar

namespace tao::pegtl {
template <class Name>
struct analyze_traits<Name, nflens::nft::grammar::unit_number> : analyze_any_traits<> {};
}  // namespace tao::pegtl
