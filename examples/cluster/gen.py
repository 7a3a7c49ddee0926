#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the example cluster's rulesets in kube-proxy's two shapes (iptables-restore input and an nft -f
script). Chain names follow kube-proxy's naming scheme (sha256, base32) so the dumps look like a real node's.
Run make-dumps.sh to load them into a fresh network namespace and save what the kernel holds."""
import base64, hashlib

POD_CIDR = "10.244.0.0/16"
SERVICES = [  # (ns, name, port name, proto, cluster IP, port, node port, endpoints, affinity seconds)
    ("default", "kubernetes", "https", "tcp", "10.96.0.1", 443, None, [("192.168.122.10", 6443)], None),
    ("shop", "web", "http", "tcp", "10.96.12.34", 80, 30080,
     [("10.244.1.11", 8080), ("10.244.2.12", 8080), ("10.244.3.13", 8080)], None),
    ("shop", "cache", "redis", "tcp", "10.96.40.2", 6379, None, [("10.244.1.21", 6379), ("10.244.2.22", 6379)], 10800),
    ("shop", "legacy", "http", "tcp", "10.96.50.5", 80, None, [], None),
]


def h(s, n):
    return base64.b32encode(hashlib.sha256(s.encode()).digest()).decode()[:n]


def iptables():
    fil, nat_chains, nat = [], [], []
    for ns, name, pn, proto, cip, port, np, eps, aff in SERVICES:
        spn = f"{ns}/{name}:{pn}"
        svc = "KUBE-SVC-" + h(spn + proto, 16)
        ext = "KUBE-EXT-" + h(spn + proto, 16)
        m = f"-m {proto} -p {proto}"
        if not eps:
            fil.append(f'-A KUBE-SERVICES -m comment --comment "{spn} has no endpoints" {m} -d {cip} --dport {port} -j REJECT')
            continue
        nat.append(f'-A KUBE-SERVICES -m comment --comment "{spn} cluster IP" {m} -d {cip} --dport {port} -j {svc}')
        nat_chains.append(svc)
        nat.append(f'-A {svc} -m comment --comment "{spn} cluster IP" {m} -d {cip} --dport {port} ! -s {POD_CIDR} -j KUBE-MARK-MASQ')
        if np:
            nat_chains.append(ext)
            nat.append(f'-A KUBE-NODEPORTS -m comment --comment {spn} {m} --dport {np} -j {ext}')
            nat.append(f'-A {ext} -m comment --comment "masquerade traffic for {spn} external destinations" -j KUBE-MARK-MASQ')
            nat.append(f'-A {ext} -j {svc}')
        seps = ["KUBE-SEP-" + h(f"{spn}{proto}{ip}:{p}", 16) for ip, p in eps]
        if aff:
            for (ip, p), sep in zip(eps, seps):
                nat.append(f'-A {svc} -m comment --comment "{spn} -> {ip}:{p}" -m recent --name {sep} --rcheck --seconds {aff} --reap -j {sep}')
        for i, ((ip, p), sep) in enumerate(zip(eps, seps)):
            prob = "" if i == len(eps) - 1 else f" -m statistic --mode random --probability {1.0 / (len(eps) - i):0.10f}"
            nat.append(f'-A {svc} -m comment --comment "{spn} -> {ip}:{p}"{prob} -j {sep}')
        for (ip, p), sep in zip(eps, seps):
            nat_chains.append(sep)
            nat.append(f"-A {sep} -m comment --comment {spn} -s {ip} -j KUBE-MARK-MASQ")
            rec = f" -m recent --name {sep} --set" if aff else ""
            nat.append(f"-A {sep} -m comment --comment {spn}{rec} {m} -j DNAT --to-destination {ip}:{p}")
    nat.append('-A KUBE-SERVICES -m comment --comment "kubernetes service nodeports; NOTE: this must be the last rule in this chain" -m addrtype --dst-type LOCAL -j KUBE-NODEPORTS')
    out = ["*filter", ":KUBE-SERVICES - [0:0]", ":KUBE-EXTERNAL-SERVICES - [0:0]", ":KUBE-NODEPORTS - [0:0]",
           "-A INPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes externally-visible service portals\" -j KUBE-EXTERNAL-SERVICES",
           "-A FORWARD -m conntrack --ctstate NEW -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES",
           "-A OUTPUT -m conntrack --ctstate NEW -m comment --comment \"kubernetes service portals\" -j KUBE-SERVICES"]
    out += fil + ["COMMIT", "*nat", ":KUBE-SERVICES - [0:0]", ":KUBE-NODEPORTS - [0:0]", ":KUBE-POSTROUTING - [0:0]",
                  ":KUBE-MARK-MASQ - [0:0]"] + [f":{c} - [0:0]" for c in nat_chains]
    out += ['-A PREROUTING -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
            '-A OUTPUT -m comment --comment "kubernetes service portals" -j KUBE-SERVICES',
            '-A POSTROUTING -m comment --comment "kubernetes postrouting rules" -j KUBE-POSTROUTING',
            "-A KUBE-MARK-MASQ -j MARK --or-mark 0x4000",
            "-A KUBE-POSTROUTING -m mark ! --mark 0x4000/0x4000 -j RETURN",
            "-A KUBE-POSTROUTING -j MARK --xor-mark 0x4000",
            '-A KUBE-POSTROUTING -m comment --comment "kubernetes service traffic requiring SNAT" -j MASQUERADE']
    out += nat + ["COMMIT"]
    return "\n".join(out) + "\n"


def nft():
    t = "ip kube-proxy"
    L = [f'add table {t} {{ comment "rules for kube-proxy" ; }}',
         f'add set {t} cluster-ips {{ type ipv4_addr ; comment "Active ClusterIPs" ; }}',
         f'add set {t} nodeport-ips {{ type ipv4_addr ; comment "IPs that accept NodePort traffic" ; }}']
    maps = [("service-ips", "ipv4_addr . inet_proto . inet_service", "ClusterIP, ExternalIP and LoadBalancer IP traffic"),
            ("service-nodeports", "inet_proto . inet_service", "NodePort traffic"),
            ("no-endpoint-services", "ipv4_addr . inet_proto . inet_service", "vmap to drop or reject packets to services with no endpoints")]
    for n, ty, c in maps:
        L.append(f'add map {t} {n} {{ type {ty} : verdict ; comment "{c}" ; }}')
    chains, rules, elems = [], [], []
    base = [("nat-prerouting", "nat", "prerouting", -100), ("nat-output", "nat", "output", -100),
            ("nat-postrouting", "nat", "postrouting", 100), ("filter-input", "filter", "input", 0),
            ("filter-forward", "filter", "forward", 0), ("filter-output", "filter", "output", 0)]
    for n, ty, hk, pr in base:
        L.append(f"add chain {t} {n} {{ type {ty} hook {hk} priority {pr} ; }}")
    for n in ("services", "service-endpoints-check", "mark-for-masquerade", "masquerading", "reject-chain"):
        L.append(f"add chain {t} {n}")
    fixed = ["nat-prerouting jump services", "nat-output jump services", "nat-postrouting jump masquerading",
             "filter-input ct state new jump service-endpoints-check",
             "filter-forward ct state new jump service-endpoints-check",
             "filter-output ct state new jump service-endpoints-check",
             "services ip daddr . meta l4proto . th dport vmap @service-ips",
             "services ip daddr @nodeport-ips meta l4proto . th dport vmap @service-nodeports",
             "service-endpoints-check ip daddr . meta l4proto . th dport vmap @no-endpoint-services",
             "mark-for-masquerade meta mark set meta mark or 0x4000",
             "masquerading meta mark and 0x4000 == 0 return",
             "masquerading meta mark set meta mark xor 0x4000",
             "masquerading masquerade fully-random",
             "reject-chain reject"]
    rules += [f"add rule {t} {r}" for r in fixed]
    elems.append(f"add element {t} nodeport-ips {{ 192.168.122.10 }}")
    sets = []
    for ns, name, pn, proto, cip, port, np, eps, aff in SERVICES:
        spn = f"{ns}/{name}:{pn}"
        b = f"{ns}/{name}/{proto}/{pn}"
        b = h(b, 8) + "-" + b
        svc, ext = "service-" + b, "external-" + b
        elems.append(f"add element {t} cluster-ips {{ {cip} }}")
        if not eps:
            elems.append(f'add element {t} no-endpoint-services {{ {cip} . {proto} . {port} comment "{spn}" : goto reject-chain }}')
            continue
        chains.append(svc)
        elems.append(f"add element {t} service-ips {{ {cip} . {proto} . {port} : goto {svc} }}")
        rules.append(f"add rule {t} {svc} ip daddr {cip} ip saddr != {POD_CIDR} jump mark-for-masquerade")
        if np:
            chains.append(ext)
            elems.append(f"add element {t} service-nodeports {{ {proto} . {np} : goto {ext} }}")
            rules.append(f"add rule {t} {ext} jump mark-for-masquerade")
            rules.append(f"add rule {t} {ext} goto {svc}")
        eb = []
        for ip, p in eps:
            e = f"{ns}/{name}/{proto}/{pn}__{ip}/{p}"
            eb.append(h(e, 8) + "-" + e)
        if aff:
            for x in eb:
                sets.append(f"add set {t} affinity-{x} {{ type ipv4_addr ; flags dynamic,timeout ; timeout {aff}s ; }}")
                rules.append(f"add rule {t} {svc} ip saddr @affinity-{x} goto endpoint-{x}")
        slots = " , ".join(f"{i} : goto endpoint-{x}" for i, x in enumerate(eb))
        rules.append(f"add rule {t} {svc} numgen random mod {len(eps)} vmap {{ {slots} }}")
        for (ip, p), x in zip(eps, eb):
            chains.append("endpoint-" + x)
            rules.append(f"add rule {t} endpoint-{x} ip saddr {ip} jump mark-for-masquerade")
            if aff:
                rules.append(f"add rule {t} endpoint-{x} update @affinity-{x} {{ ip saddr }}")
            rules.append(f"add rule {t} endpoint-{x} meta l4proto {proto} dnat to {ip}:{p}")
    L += sets + [f"add chain {t} {c}" for c in chains] + rules + elems
    return "\n".join(L) + "\n"


if __name__ == "__main__":
    open("cluster.iptables-restore", "w").write(iptables())
    open("cluster.nft-script", "w").write(nft())
