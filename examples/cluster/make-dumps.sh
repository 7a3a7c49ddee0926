#!/bin/sh
# SPDX-License-Identifier: MIT
# Loads the example cluster into a fresh network namespace in each mode and saves what the kernel holds:
#   cluster.iptables  (iptables-save, nf_tables backend; the "# Generated/Completed" lines removed)
#   cluster.nft       (nft list ruleset)
# Needs root, iproute2, iptables and nftables. Never touches the host's own ruleset.
set -eu
cd "$(dirname "$0")"
python3 gen.py
ns="nflens-example-$$"
ip netns add "$ns"
trap 'ip netns del "$ns"' EXIT
ip netns exec "$ns" iptables-restore < cluster.iptables-restore
ip netns exec "$ns" iptables-save | grep -v '^#' > cluster.iptables
ip netns exec "$ns" iptables -t nat -F && ip netns exec "$ns" iptables -t nat -X
ip netns exec "$ns" iptables -t filter -F && ip netns exec "$ns" iptables -t filter -X
ip netns exec "$ns" nft flush ruleset
ip netns exec "$ns" nft -f cluster.nft-script
ip netns exec "$ns" nft list ruleset > cluster.nft
echo "wrote cluster.iptables ($(wc -l < cluster.iptables) lines) and cluster.nft ($(wc -l < cluster.nft) lines)"
