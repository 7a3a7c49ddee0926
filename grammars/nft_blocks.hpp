// SPDX-License-Identifier: MIT
#pragma once

// The block and command layer of the nft grammar: table, chain, set, map, flowtable and object blocks
// (parser_bison.y `table_block`, `chain_block`, `set_block`, `map_block`, `flowtable_block`,
// `counter_block`, ...), the commands of `nft -f` input (`base_cmd`, `add_cmd`, `delete_cmd`, ...),
// `define`/`include` (`common_block`), and the top rule.

#include "nft_stmt.hpp"

namespace nflens::nft::grammar {

// clang-format off

struct kw_table : NFLENS_NFT_KW("table") {};
struct kw_chain : NFLENS_NFT_KW("chain") {};
struct kw_rule : NFLENS_NFT_KW("rule") {};
struct kw_element : NFLENS_NFT_KW("element") {};
struct kw_elements : NFLENS_NFT_KW("elements") {};
struct kw_flowtable : NFLENS_NFT_KW("flowtable") {};
struct kw_ruleset : NFLENS_NFT_KW("ruleset") {};
struct kw_hook : NFLENS_NFT_KW("hook") {};
struct kw_devices : NFLENS_NFT_KW("devices") {};
struct kw_priority : NFLENS_NFT_KW("priority") {};
struct kw_policy : NFLENS_NFT_KW("policy") {};
struct kw_typeof : NFLENS_NFT_KW("typeof") {};
struct kw_gc_interval : NFLENS_NFT_KW("gc-interval") {};
struct kw_auto_merge : NFLENS_NFT_KW("auto-merge") {};
struct kw_performance : NFLENS_NFT_KW("performance") {};
struct kw_memory : NFLENS_NFT_KW("memory") {};
struct kw_helper : NFLENS_NFT_KW("helper") {};
struct kw_expectation : NFLENS_NFT_KW("expectation") {};
struct kw_secmark : NFLENS_NFT_KW("secmark") {};
struct kw_protocol : NFLENS_NFT_KW("protocol") {};
struct kw_l3proto : NFLENS_NFT_KW("l3proto") {};
struct kw_dport : NFLENS_NFT_KW("dport") {};
struct kw_create : NFLENS_NFT_KW("create") {};
struct kw_insert : NFLENS_NFT_KW("insert") {};
struct kw_replace : NFLENS_NFT_KW("replace") {};
struct kw_destroy : NFLENS_NFT_KW("destroy") {};
struct kw_flush : NFLENS_NFT_KW("flush") {};
struct kw_rename : NFLENS_NFT_KW("rename") {};
struct kw_list : NFLENS_NFT_KW("list") {};
struct kw_get : NFLENS_NFT_KW("get") {};
struct kw_describe : NFLENS_NFT_KW("describe") {};
struct kw_monitor : NFLENS_NFT_KW("monitor") {};
struct kw_import : NFLENS_NFT_KW("import") {};
struct kw_export : NFLENS_NFT_KW("export") {};
struct kw_position : NFLENS_NFT_KW("position") {};
struct kw_index : NFLENS_NFT_KW("index") {};
struct kw_define : NFLENS_NFT_KW("define") {};
struct kw_redefine : NFLENS_NFT_KW("redefine") {};
struct kw_undefine : NFLENS_NFT_KW("undefine") {};
struct kw_include : NFLENS_NFT_KW("include") {};

// ---------------------------------------------------------------------------------------------------
// Items of a block, with recovery

/// An item of a block followed by its end: a separator, or the block's closing brace.
/// An item of a block and its separator, which nft wants even before the closing brace (parser_bison.y
/// `chain_block rule stmt_separator`, `table_block CHAIN ... '}' stmt_separator`: `{ accept }` and
/// `table ip t { chain c { } }` are refused).
template <class Item>
struct block_item : seq<Item, sp, stmt_separator> {};
/// Parses `Item`; on a syntax error reports it, skips to the end of the item (the next newline or `;`
/// outside braces, or the enclosing `}`), and succeeds, so a block reports every bad item in one run.
/// Fails only at `}` or the end of input. Implemented by the parser (`recover_item`).
template <class Item>
struct recoverable {
  using rule_t = recoverable;
  using subs_t = pegtl::type_list<Item>;
  template <pegtl::apply_mode A, pegtl::rewind_mode M, template <class...> class Action,
            template <class...> class Control, class Input, class... States>
  [[nodiscard]] static bool match(Input& in, States&... st);
};
/// Items of a block, each with its own end (`block_item`, `free_item`), up to (not
/// including) the block's closing brace.
template <class ItemWithEnd>
struct item_list : star<separators, not_at<one<'}'>>, not_at<eof>, recoverable<ItemWithEnd>> {};
/// The items of a block up to (not including) its closing brace.
template <class Item>
struct block_items : item_list<block_item<Item>> {};
/// An item that another may follow on the same line (parser_bison.y's `counter_block counter_config`,
/// `limit_block comment_spec`, ...: `rate 1/second comment "x"`).
template <class Item>
struct free_item : seq<Item, sp, opt<stmt_separator>> {};
/// The `# handle N` after a block's opening brace.
template <class Items>
struct block_handle : handle_comment {};
/// The opening brace of a block; its action starts the declaration the block fills.
template <class Items>
struct block_brace : one<'{'> {};
/// `{ [# handle N]`.
template <class Items>
struct block_open : seq<block_brace<Items>, sp, opt<block_handle<Items>>> {};
struct block_close : one<'}'> {};
/// `{ [# handle N] items }`.
template <class Items>
struct block : seq<block_open<Items>, Items, separators, must<block_close>> {};

// ---------------------------------------------------------------------------------------------------
// define, include (`common_block`)

struct variable_name : identifier {};
struct initializer_negative : seq<one<'-'>, sp, number> {};
struct initializer_expr : sor<set_expr, empty_set_expr, initializer_negative, seq<relational_rhs>> {};
struct define_equals : one<'='> {};
struct define_stmt : if_must<sor<kw_define, kw_redefine>, sp, variable_name, sp, define_equals, sp, initializer_expr> {};
struct undefine_stmt : seq<kw_undefine, sp, variable_name> {};
struct include_path : quoted_string {};
struct include_stmt : if_must<kw_include, sp, include_path> {};
struct common_block : sor<define_stmt, undefine_stmt, include_stmt> {};

// ---------------------------------------------------------------------------------------------------
// Names

struct family_spec : table_word<vocab::families> {};
struct table_identifier : identifier {};
struct chain_identifier : identifier {};
struct set_identifier : identifier {};
struct obj_identifier : identifier {};
/// `[family] name`; a family word is always the family.
struct table_spec : seq<opt<family_spec, sp1>, table_identifier> {};
struct chain_spec : seq<table_spec, sp1, chain_identifier> {};
struct set_spec : seq<table_spec, sp1, set_identifier> {};
struct obj_spec : seq<table_spec, sp1, obj_identifier> {};
struct handle_number : number {};
struct handle_spec : seq<kw_handle, sp, handle_number> {};
struct tableid_spec : seq<opt<family_spec, sp1>, handle_spec> {};
struct chainid_spec : seq<table_spec, sp1, handle_spec> {};
struct position_number : number {};
struct position_spec : seq<kw_position, sp, position_number> {};
struct position_handle : seq<kw_handle, sp, position_number> {};
struct position_index : seq<kw_index, sp, position_number> {};
/// `TABLE CHAIN [position N | handle N | index N]`.
struct rule_position : seq<chain_spec, opt<sp1, sor<position_spec, position_handle, position_index>>> {};
struct ruleid_spec : seq<chain_spec, sp1, handle_spec> {};

// ---------------------------------------------------------------------------------------------------
// Chains (`chain_block`, `hook_spec`, `prio_spec`, `policy_spec`)

struct chain_type_word : table_word<vocab::chain_types> {};
struct hook_name : identifier {};
struct device_name : sor<variable_expr, string_word> {};
struct device_list : seq<one<'{'>, nl_ws, list<device_name, set_list_sep>, opt<set_list_sep>, nl_ws, one<'}'>> {};
struct flowtable_expr : sor<device_list, variable_expr> {};
struct dev_spec_single : seq<kw_device, sp, device_name> {};
struct dev_spec_list : seq<kw_devices, sp, one<'='>, sp, flowtable_expr> {};
struct dev_spec : sor<dev_spec_single, dev_spec_list> {};
struct prio_number : signed_number {};
struct prio_name : identifier {};
struct prio_offset_plus : seq<one<'+'>, sp, number> {};
struct prio_offset_minus : seq<one<'-'>, sp, number> {};
/// `priority -110`, `priority filter`, `priority dstnat - 10`, `priority $p` (`extended_prio_spec`).
struct extended_prio_spec : sor<variable_expr, prio_number, seq<prio_name, opt<sp, sor<prio_offset_plus, prio_offset_minus>>>> {};
struct prio_spec : seq<kw_priority, sp, extended_prio_spec> {};
/// `type filter hook input [device "lo"] priority 0` (`hook_spec`).
struct hook_spec : if_must<kw_type, sp, chain_type_word, sp1, kw_hook, sp, hook_name, opt<sp1, dev_spec>, sp1, prio_spec> {};
struct policy_accept : kw_accept {};
struct policy_drop : kw_drop {};
struct policy_spec : seq<kw_policy, sp, sor<policy_accept, policy_drop, variable_expr>> {};
struct chain_flags_spec : seq<kw_flags, sp, kw_offload> {};
struct chain_comment : comment_spec {};
struct chain_devices : dev_spec_list {};
struct chain_block_item
    : word_switch<rule, when<words<"define", "redefine", "undefine", "include">, common_block>,
                  when<words<"type">, hook_spec>, when<words<"policy">, policy_spec>,
                  when<words<"flags">, chain_flags_spec>, when<words<"devices">, chain_devices>,
                  when<words<"comment">, chain_comment>> {};
struct chain_block : block<block_items<chain_block_item>> {};
/// The body of `jump { ... }`: rules only.
struct subchain_block : block<block_items<rule>> {};

// ---------------------------------------------------------------------------------------------------
// Sets and maps (`set_block`, `map_block`)

struct type_identifier : identifier {};
/// `ipv4_addr . inet_proto . inet_service` (`data_type_expr`).
struct data_type_expr : list<type_identifier, seq<sp, one<'.'>, sp>> {};
/// `ip saddr . tcp dport` (`typeof_expr`).
struct typeof_expr : seq<selector_expr, star<sp, one<'.'>, sp, selector_expr>> {};
struct set_type_key : seq<kw_type, sp, data_type_expr> {};
struct set_typeof_key : seq<kw_typeof, sp, typeof_expr> {};
struct set_flag_word : identifier {};
struct set_flags_spec : seq<kw_flags, sp, list<set_flag_word, seq<sp, one<','>, sp>>> {};
/// A set's times take a unit (`time_spec`: `timeout 10` is refused).
struct set_timeout : seq<kw_timeout, sp, timestring> {};
struct set_gc_interval : seq<kw_gc_interval, sp, timestring> {};
struct set_size_value : number {};
struct set_size : seq<kw_size, sp, set_size_value> {};
struct set_policy_performance : kw_performance {};
struct set_policy_memory : kw_memory {};
struct set_policy : seq<kw_policy, sp, sor<set_policy_performance, set_policy_memory>> {};
struct set_auto_merge : kw_auto_merge {};
struct set_elements : seq<kw_elements, sp, one<'='>, sp, sor<set_expr, variable_expr>> {};
struct set_comment : comment_spec {};
struct set_stateful : seq<stateful_stmt, star<sp1, stateful_stmt>> {};
struct set_block_item : sor<common_block, set_type_key, set_typeof_key, set_flags_spec, set_timeout, set_gc_interval, set_size, set_policy, set_auto_merge, set_elements, set_comment, set_stateful> {};
/// `elements = { ... }` and `auto-merge` need no separator (`set_block ELEMENTS '=' set_block_expr`).
struct set_free_item : sor<set_elements, set_auto_merge> {};
template <>
struct block_item<set_block_item> : sor<free_item<set_free_item>, seq<set_block_item, sp, stmt_separator>> {};
struct set_block : block<block_items<set_block_item>> {};

/// Map data that is a stateful object: `counter`, `quota`, `limit`, `secmark`, `synproxy`,
/// `ct helper|timeout|expectation` (`map_block_obj_type`).
struct map_obj_counter : kw_counter {};
struct map_obj_quota : kw_quota {};
struct map_obj_limit : kw_limit {};
struct map_obj_secmark : kw_secmark {};
struct map_obj_synproxy : kw_synproxy {};
struct map_obj_ct_helper : seq<kw_ct, sp, kw_helper> {};
struct map_obj_ct_timeout : seq<kw_ct, sp, kw_timeout> {};
struct map_obj_ct_expectation : seq<kw_ct, sp, kw_expectation> {};
struct map_obj_type : sor<map_obj_counter, map_obj_quota, map_obj_limit, map_obj_secmark, map_obj_synproxy, map_obj_ct_helper, map_obj_ct_timeout, map_obj_ct_expectation> {};
struct map_data_interval : kw_interval {};
struct map_data_type : list<type_identifier, seq<sp, one<'.'>, sp>> {};
struct map_data_typeof : seq<typeof_expr> {};
struct map_type_key : seq<kw_type, sp, data_type_expr, sp, one<':'>, sp, sor<seq<map_obj_type, not_at<sp, one<'.'>>>, seq<opt<map_data_interval, sp1>, map_data_type>>> {};
struct map_typeof_key : seq<kw_typeof, sp, typeof_expr, sp, one<':'>, sp, sor<seq<map_obj_type, not_at<sp, one<'.'>>>, seq<opt<map_data_interval, sp1>, map_data_typeof>, map_data_type>> {};
/// (no `auto-merge` in a map: `map_block` has none)
struct map_block_item : sor<common_block, map_type_key, map_typeof_key, set_flags_spec, set_timeout, set_gc_interval, set_size, set_policy, set_elements, set_comment, set_stateful> {};
template <>
struct block_item<map_block_item> : sor<free_item<set_elements>, seq<map_block_item, sp, stmt_separator>> {};
struct map_block : block<block_items<map_block_item>> {};

// ---------------------------------------------------------------------------------------------------
// Flowtables (`flowtable_block`)

struct flowtable_hook_name : identifier {};
struct flowtable_hook : seq<kw_hook, sp, flowtable_hook_name, sp1, prio_spec> {};
struct flowtable_devices : dev_spec_list {};
struct flowtable_counter : kw_counter {};
struct flowtable_offload : seq<kw_flags, sp, kw_offload> {};
struct flowtable_block_item : sor<common_block, flowtable_hook, flowtable_devices, flowtable_counter, flowtable_offload> {};
/// `counter` needs no separator (`flowtable_block COUNTER close_scope_counter`).
template <>
struct block_item<flowtable_block_item> : sor<free_item<flowtable_counter>, seq<flowtable_block_item, sp, stmt_separator>> {};
struct flowtable_block : block<block_items<flowtable_block_item>> {};

// ---------------------------------------------------------------------------------------------------
// Stateful objects (`counter_block`, `quota_block`, `limit_block`, `ct_helper_block`, ...)

struct obj_comment : comment_spec {};
struct counter_config : seq<kw_packets, sp, counter_packets, sp1, kw_bytes, sp, counter_bytes> {};
struct counter_items : item_list<sor<block_item<common_block>, free_item<sor<counter_config, obj_comment>>>> {};
struct counter_block : block<counter_items> {};
struct quota_config : quota_args {};
struct quota_items : item_list<sor<block_item<common_block>, free_item<sor<quota_config, obj_comment>>>> {};
struct quota_block : block<quota_items> {};
struct limit_config : seq<kw_rate, sp, limit_args> {};
struct limit_items : item_list<sor<block_item<common_block>, free_item<sor<limit_config, obj_comment>>>> {};
struct limit_block : block<limit_items> {};
struct ct_l4proto : identifier {};
/// The family word of `l3proto` (not a `family_spec`: it must not change the table's family).
struct ct_l3proto_family : table_word<vocab::families> {};
struct ct_l3proto : seq<kw_l3proto, sp, ct_l3proto_family> {};
struct ct_helper_type : quoted_string {};
struct ct_helper_config : seq<kw_type, sp, ct_helper_type, sp1, kw_protocol, sp, ct_l4proto> {};
struct ct_helper_items
    : item_list<sor<block_item<common_block>, block_item<sor<ct_helper_config, ct_l3proto>>, free_item<obj_comment>>> {};
struct ct_helper_block : block<ct_helper_items> {};
struct ct_protocol : seq<kw_protocol, sp, ct_l4proto> {};
struct timeout_state_name : identifier {};
struct timeout_state : seq<timeout_state_name, sp, one<':'>, sp, time_value> {};
/// `policy = { established: 100, close: 5s }` (`timeout_states`: no comma after the last).
struct timeout_policy : seq<kw_policy, sp, one<'='>, sp, one<'{'>, nl_ws, list<timeout_state, set_list_sep>, nl_ws, one<'}'>> {};
struct ct_timeout_items
    : item_list<sor<block_item<common_block>, block_item<sor<ct_protocol, ct_l3proto, timeout_policy>>, free_item<obj_comment>>> {};
struct ct_timeout_block : block<ct_timeout_items> {};
struct ct_expect_dport : seq<kw_dport, sp, number> {};
/// `timeout 3s`: a time with its unit (`time_spec`; a bare number is refused).
struct ct_expect_timeout : seq<kw_timeout, sp, timestring> {};
struct ct_expect_size : seq<kw_size, sp, number> {};
struct ct_expect_items
    : item_list<sor<block_item<common_block>, block_item<sor<ct_protocol, ct_expect_dport, ct_expect_timeout, ct_expect_size, ct_l3proto>>, free_item<obj_comment>>> {};
struct ct_expect_block : block<ct_expect_items> {};
struct secmark_config : string_word {};
struct secmark_items : item_list<sor<block_item<common_block>, free_item<sor<obj_comment, secmark_config>>>> {};
struct secmark_block : block<secmark_items> {};
/// `[timestamp] [sack-perm]`, in that order (`synproxy_ts synproxy_sack`).
struct synproxy_obj_flags : sor<seq<synproxy_timestamp, opt<sp1, synproxy_sack_perm>>, synproxy_sack_perm> {};
/// An object's settings in nft's order (`synproxy_config`): `mss N wscale N [timestamp] [sack-perm]` on one
/// line, or `mss N`, `wscale N` and the flags each ending a line (as nft lists them).
struct synproxy_config
    : seq<kw_mss, sp, synproxy_mss,
          sor<seq<sp1, kw_wscale, sp, synproxy_wscale, opt<sp1, synproxy_obj_flags>>,
              seq<sp, stmt_separator, sp, kw_wscale, sp, synproxy_wscale, sp, stmt_separator, sp, opt<synproxy_obj_flags>>>> {};
struct synproxy_items : item_list<sor<block_item<common_block>, free_item<sor<synproxy_config, obj_comment>>>> {};
struct synproxy_block : block<synproxy_items> {};
/// A block nflens keeps as raw text (tunnel objects): balanced braces, strings skipped whole.
struct raw_block : leaf<raw_block> {
  template <class Input>
  [[nodiscard]] static bool match(Input& in) noexcept {
    const char* p = in.current();
    const char* end = in.end();
    if (p == end || *p != '{') return false;
    std::size_t depth = 0;
    for (const char* q = p; q != end; ++q) {
      if (*q == '"') {
        const char* close = q + 1;
        while (close != end && *close != '"' && *close != '\n') ++close;
        if (close == end || *close != '"') return false;
        q = close;
      } else if (*q == '#') {
        while (q + 1 != end && q[1] != '\n') ++q;
      } else if (*q == '{') {
        ++depth;
      } else if (*q == '}' && --depth == 0) {
        in.bump(static_cast<std::size_t>(q + 1 - p));
        return true;
      }
    }
    return false;
  }
};
struct tunnel_block : raw_block {};

struct counter_obj_decl : seq<kw_counter, sp, obj_identifier, sp, counter_block> {};
struct quota_obj_decl : seq<kw_quota, sp, obj_identifier, sp, quota_block> {};
struct limit_obj_decl : seq<kw_limit, sp, obj_identifier, sp, limit_block> {};
struct ct_helper_obj_decl : seq<kw_ct, sp, kw_helper, sp, obj_identifier, sp, ct_helper_block> {};
struct ct_timeout_obj_decl : seq<kw_ct, sp, kw_timeout, sp, obj_identifier, sp, ct_timeout_block> {};
struct ct_expect_obj_decl : seq<kw_ct, sp, kw_expectation, sp, obj_identifier, sp, ct_expect_block> {};
struct secmark_obj_decl : seq<kw_secmark, sp, obj_identifier, sp, secmark_block> {};
struct synproxy_obj_decl : seq<kw_synproxy, sp, obj_identifier, sp, synproxy_block> {};
struct tunnel_obj_decl : seq<kw_tunnel, sp, obj_identifier, sp, tunnel_block> {};

// ---------------------------------------------------------------------------------------------------
// Tables (`table_block`)

struct chain_decl : if_must<kw_chain, sp, chain_identifier, sp, chain_block> {};
struct set_decl : if_must<kw_set, sp, set_identifier, sp, set_block> {};
struct map_decl : if_must<kw_map, sp, set_identifier, sp, map_block> {};
struct flowtable_decl : if_must<kw_flowtable, sp, set_identifier, sp, flowtable_block> {};
struct table_flag : identifier {};
struct table_flags_spec : seq<kw_flags, sp, list<table_flag, seq<sp, one<','>, sp>>> {};
struct table_comment : comment_spec {};
struct table_block_item
    : word_switch<pegtl::failure, when<words<"define", "redefine", "undefine", "include">, common_block>,
                  when<words<"flags">, table_flags_spec>, when<words<"comment">, table_comment>,
                  when<words<"chain">, chain_decl>, when<words<"set">, set_decl>, when<words<"map">, map_decl>,
                  when<words<"flowtable">, flowtable_decl>, when<words<"counter">, counter_obj_decl>,
                  when<words<"quota">, quota_obj_decl>, when<words<"limit">, limit_obj_decl>,
                  when<words<"ct">, ct_helper_obj_decl>, when<words<"ct">, ct_timeout_obj_decl>,
                  when<words<"ct">, ct_expect_obj_decl>, when<words<"secmark">, secmark_obj_decl>,
                  when<words<"synproxy">, synproxy_obj_decl>, when<words<"tunnel">, tunnel_obj_decl>> {};
struct table_block : block<block_items<table_block_item>> {};

// ---------------------------------------------------------------------------------------------------
// Commands (`base_cmd`)

struct add_table : if_must<kw_table, sp, table_spec, opt<sp, table_block>> {};
struct add_chain : seq<kw_chain, sp, chain_spec, opt<sp, chain_block>> {};
struct add_rule : seq<kw_rule, sp, rule_position, sp1, rule> {};
struct add_set : seq<kw_set, sp, set_spec, sp, set_block> {};
struct add_map : seq<kw_map, sp, set_spec, sp, map_block> {};
struct element_list : sor<set_expr, variable_expr> {};
struct add_element : seq<kw_element, sp, set_spec, sp, element_list> {};
struct add_flowtable : seq<kw_flowtable, sp, set_spec, sp, flowtable_block> {};
struct add_counter : seq<kw_counter, sp, obj_spec, opt<sp, sor<counter_block, counter_config>>> {};
struct add_quota : seq<kw_quota, sp, obj_spec, sp, sor<quota_block, quota_config>> {};
struct add_limit : seq<kw_limit, sp, obj_spec, sp, sor<limit_block, limit_config>> {};
struct add_ct_helper : seq<kw_ct, sp, kw_helper, sp, obj_spec, sp, ct_helper_block> {};
struct add_ct_timeout : seq<kw_ct, sp, kw_timeout, sp, obj_spec, sp, ct_timeout_block> {};
struct add_ct_expectation : seq<kw_ct, sp, kw_expectation, sp, obj_spec, sp, ct_expect_block> {};
struct add_secmark : seq<kw_secmark, sp, obj_spec, sp, sor<secmark_block, secmark_config>> {};
struct add_synproxy : seq<kw_synproxy, sp, obj_spec, sp, sor<synproxy_block, synproxy_config>> {};
struct add_tunnel : seq<kw_tunnel, sp, obj_spec, sp, tunnel_block> {};
struct add_cmd : sor<add_table, add_chain, add_rule, add_set, add_map, add_element, add_flowtable, add_counter, add_quota, add_limit, add_ct_helper, add_ct_timeout, add_ct_expectation, add_secmark, add_synproxy, add_tunnel> {};

struct insert_cmd : seq<kw_rule, sp, rule_position, sp1, rule> {};
struct replace_cmd : seq<kw_rule, sp, ruleid_spec, sp1, rule> {};

struct obj_kind_counter : kw_counter {};
struct obj_kind_quota : kw_quota {};
struct obj_kind_limit : kw_limit {};
struct obj_kind_secmark : kw_secmark {};
struct obj_kind_synproxy : kw_synproxy {};
struct obj_kind_tunnel : kw_tunnel {};
struct obj_kind_ct_helper : seq<kw_ct, sp, kw_helper> {};
struct obj_kind_ct_timeout : seq<kw_ct, sp, kw_timeout> {};
struct obj_kind_ct_expectation : seq<kw_ct, sp, kw_expectation> {};
struct obj_kind : sor<obj_kind_counter, obj_kind_quota, obj_kind_limit, obj_kind_secmark, obj_kind_synproxy, obj_kind_tunnel, obj_kind_ct_helper, obj_kind_ct_timeout, obj_kind_ct_expectation> {};
struct objid_spec : seq<table_spec, sp1, handle_spec> {};
struct delete_table : seq<kw_table, sp, sor<tableid_spec, table_spec>> {};
struct delete_chain : seq<kw_chain, sp, sor<chainid_spec, seq<chain_spec, opt<sp, chain_block>>>> {};
struct delete_rule : seq<kw_rule, sp, ruleid_spec> {};
struct delete_set : seq<kw_set, sp, sor<chainid_spec, set_spec>> {};
struct delete_map : seq<kw_map, sp, sor<chainid_spec, set_spec>> {};
struct delete_element : seq<kw_element, sp, set_spec, sp, element_list> {};
struct delete_flowtable : seq<kw_flowtable, sp, sor<chainid_spec, seq<set_spec, opt<sp, flowtable_block>>>> {};
struct delete_object : seq<obj_kind, sp1, sor<objid_spec, obj_spec>> {};
struct delete_cmd : sor<delete_table, delete_chain, delete_rule, delete_set, delete_map, delete_element, delete_flowtable, delete_object> {};
struct get_cmd : seq<kw_element, sp, set_spec, sp, element_list> {};

struct flush_table : seq<kw_table, sp, table_spec> {};
struct flush_chain : seq<kw_chain, sp, chain_spec> {};
struct flush_set : seq<kw_set, sp, set_spec> {};
struct flush_map : seq<kw_map, sp, set_spec> {};
struct flush_meter : seq<sor<kw_meter, seq<kw_flow, sp, kw_table>>, sp1, set_spec> {};
struct flush_ruleset : seq<kw_ruleset, opt<sp1, family_spec>> {};
struct flush_cmd : sor<flush_table, flush_chain, flush_set, flush_map, flush_meter, flush_ruleset> {};
struct rename_new_name : identifier {};
struct rename_cmd : seq<kw_chain, sp, chain_spec, sp1, rename_new_name> {};

/// The forms of `list`, `reset`, `monitor`, `describe`, `import`, `export` that query rather than
/// change the ruleset: kept as commands with their text, not interpreted further, but read as nft reads
/// them (parser_bison.y `list_cmd`, `reset_cmd`, `monitor_cmd`, `import_cmd`, `export_cmd`): `list set`
/// without a set, `reset ruleset` and `export ruleset` without a format are refused as nft refuses them.
struct query_name : identifier {};
/// `[family] table` (`table_spec`: a family word is the family, and a name must follow it); `... name`
/// (`chain_spec`, `set_spec`, `obj_spec`, `flowtable_spec`).
struct query_table : sor<seq<family_spec, sp1, query_name>, seq<not_at<family_spec>, query_name>> {};
struct query_named : seq<query_table, sp1, query_name> {};
/// `[family]` (`ruleset_spec`).
struct query_ruleset : opt<sp1, family_spec> {};
/// `table T`, `T`, or `[family]` (`list_cmd_spec_any`).
struct query_any : sor<seq<sp1, kw_table, sp1, query_table>, seq<sp1, family_spec, sp1, query_name>,
                       seq<sp1, not_at<family_spec, sp, sor<eof, one<';', '\n', '#'>>>, query_name>, query_ruleset> {};
template <class Word, class Spec>
struct query_form : seq<Word, Spec> {};
/// `json`, `xml`, `vm json` (`markup_format`).
struct markup_format : sor<NFLENS_NFT_KW("json"), NFLENS_NFT_KW("xml"), seq<NFLENS_NFT_KW("vm"), sp1, NFLENS_NFT_KW("json")>> {};
struct ct_query_kind : sor<kw_helper, kw_timeout, kw_expectation> {};
struct ct_query_kinds : sor<NFLENS_NFT_KW("helpers"), NFLENS_NFT_KW("timeouts"), NFLENS_NFT_KW("expectations")> {};
struct list_cmd
    : seq<sp1, sor<query_form<kw_table, seq<sp1, query_table>>, query_form<NFLENS_NFT_KW("tables"), query_ruleset>,
                   query_form<kw_chain, seq<sp1, query_named>>, query_form<NFLENS_NFT_KW("chains"), query_ruleset>,
                   query_form<NFLENS_NFT_KW("sets"), query_any>, query_form<kw_set, seq<sp1, query_named>>,
                   query_form<NFLENS_NFT_KW("counters"), query_any>, query_form<kw_counter, seq<sp1, query_named>>,
                   query_form<NFLENS_NFT_KW("quotas"), query_any>, query_form<kw_quota, seq<sp1, query_named>>,
                   query_form<NFLENS_NFT_KW("limits"), query_any>, query_form<kw_limit, seq<sp1, query_named>>,
                   query_form<NFLENS_NFT_KW("secmarks"), query_any>, query_form<kw_secmark, seq<sp1, query_named>>,
                   query_form<NFLENS_NFT_KW("synproxys"), query_any>, query_form<kw_synproxy, seq<sp1, query_named>>,
                   query_form<kw_ruleset, query_ruleset>,
                   query_form<seq<kw_flow, sp1, NFLENS_NFT_KW("tables")>, query_ruleset>,
                   query_form<seq<kw_flow, sp1, kw_table>, seq<sp1, query_named>>,
                   query_form<NFLENS_NFT_KW("meters"), query_ruleset>, query_form<kw_meter, seq<sp1, query_named>>,
                   query_form<NFLENS_NFT_KW("flowtables"), query_any>, query_form<kw_flowtable, seq<sp1, query_named>>,
                   query_form<NFLENS_NFT_KW("maps"), query_any>, query_form<kw_map, seq<sp1, query_named>>,
                   query_form<seq<kw_ct, sp1, ct_query_kinds>, seq<sp1, kw_table, sp1, query_table>>,
                   query_form<seq<kw_ct, sp1, ct_query_kind>, seq<sp1, query_named>>,
                   query_form<NFLENS_NFT_KW("hooks"), seq<query_ruleset, opt<sp1, kw_device, sp1, query_name>>>,
                   query_form<NFLENS_NFT_KW("tunnels"), query_any>, query_form<kw_tunnel, seq<sp1, query_named>>>> {};
/// `reset element T S { ... }`: the elements are read as `get element` reads them.
struct reset_element : seq<kw_element, sp, set_spec, sp, element_list> {};
struct reset_cmd
    : seq<sp1, sor<query_form<NFLENS_NFT_KW("counters"), query_any>, query_form<kw_counter, seq<sp1, query_named>>,
                   query_form<NFLENS_NFT_KW("quotas"), query_any>, query_form<kw_quota, seq<sp1, query_named>>,
                   query_form<NFLENS_NFT_KW("rules"), sor<seq<sp1, kw_chain, sp1, query_named>, seq<sp1, query_named>,
                                                          seq<sp1, kw_table, sp1, query_table>, query_any>>,
                   query_form<kw_rule, seq<sp1, query_named, sp1, handle_spec>>, reset_element,
                   query_form<kw_set, seq<sp1, query_named>>, query_form<kw_map, seq<sp1, query_named>>>> {};
/// `monitor [EVENT] [tables|chains|sets|rules|elements|ruleset|trace] [json|xml]` (`monitor_cmd`; the
/// event, `new` or `destroy`, is any word to nft's parser and checked when it runs).
struct monitor_object : sor<NFLENS_NFT_KW("tables"), NFLENS_NFT_KW("chains"), NFLENS_NFT_KW("sets"), NFLENS_NFT_KW("rules"),
                            NFLENS_NFT_KW("elements"), kw_ruleset, NFLENS_NFT_KW("trace")> {};
struct monitor_event : seq<not_at<sor<monitor_object, markup_format>>, identifier> {};
struct monitor_cmd : seq<opt<sp1, monitor_event>, opt<sp1, monitor_object>, opt<sp1, markup_format>> {};
/// `import|export [ruleset] json|xml|vm json` (`import_cmd`, `export_cmd`).
struct import_cmd : seq<sp1, opt<kw_ruleset, sp1>, markup_format> {};
struct export_cmd : seq<sp1, opt<kw_ruleset, sp1>, markup_format> {};
struct describe_cmd : seq<sp1, expr> {};

struct verb_add : kw_add {};
struct verb_create : kw_create {};
struct verb_insert : kw_insert {};
struct verb_replace : kw_replace {};
struct verb_delete : kw_delete {};
struct verb_destroy : kw_destroy {};
struct verb_flush : kw_flush {};
struct verb_rename : kw_rename {};
struct verb_get : kw_get {};
struct verb_list : kw_list {};
struct verb_reset : kw_reset {};
struct verb_monitor : kw_monitor {};
struct verb_describe : kw_describe {};
struct verb_import : kw_import {};
struct verb_export : kw_export {};
struct verb_implicit_add : pegtl::success {};

struct base_cmd : sor<
  seq<verb_add, sp1, add_cmd>,
  seq<verb_create, sp1, add_cmd>,
  seq<verb_insert, sp1, insert_cmd>,
  seq<verb_replace, sp1, replace_cmd>,
  seq<verb_delete, sp1, delete_cmd>,
  seq<verb_destroy, sp1, delete_cmd>,
  seq<verb_flush, sp1, flush_cmd>,
  seq<verb_rename, sp1, rename_cmd>,
  seq<verb_get, sp1, get_cmd>,
  seq<verb_list, list_cmd>,
  seq<verb_reset, reset_cmd>,
  seq<verb_monitor, monitor_cmd>,
  seq<verb_describe, describe_cmd>,
  seq<verb_import, import_cmd>,
  seq<verb_export, export_cmd>,
  seq<verb_implicit_add, add_cmd>> {};

/// One line of input (`line`): a `define`/`include`, or a command, then its separator.
struct line : seq<sor<common_block, base_cmd>, sp, sor<stmt_separator, eof>> {};
/// A whole file (`input`): lines, blank lines and comments, with recovery at each line.
struct input : seq<star<separators, not_at<eof>, recoverable<line>>, separators, eof> {};

// clang-format on

}  // namespace nflens::nft::grammar

namespace tao::pegtl {
template <class Name, class Item>
struct analyze_traits<Name, nflens::nft::grammar::recoverable<Item>> : analyze_seq_traits<Item> {};
template <class Name>
struct analyze_traits<Name, nflens::nft::grammar::raw_block> : analyze_any_traits<> {};
}  // namespace tao::pegtl
