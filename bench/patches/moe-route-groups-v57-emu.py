"""moe-route-groups-v57-emu.py [SEED] -- a CPU emulation of the route kernel of
moe-route-groups-v57.patch (runtime/src/moe/moe_kernels.cu), phase by phase, threads as loops:
its index arithmetic against moe_ref_route's lists (tests/common/moe_ref.c), and no entry written
twice. A check of the arithmetic the kernel was written from, not of the CUDA code: the GPU
test (test_moe_gpu's routes) is that."""
import random, sys
K_THREADS, K_WARPS, K_COUNT_BYTES, K_PPB, K_MAXB, K_PPS = 1024, 32, 46 * 1024, 2048, 32, 64

def blocks_of(p): return 1 if p <= K_PPB else min((p + K_PPB - 1) // K_PPB, K_MAXB)
def slice_of(p, b): return (p + b - 1) // b
def segments_of(local, blocks, sl):
    fit = min(K_COUNT_BYTES // (4 * (local | 1)) - (blocks > 1), K_WARPS)
    want = (sl + K_PPS - 1) // K_PPS if sl > K_PPS else 1
    return min(want, fit)
def group_lanes(local):
    q = 32
    while q > 1 and q * local > K_THREADS: q //= 2
    return q

def local_of(ids, mp, experts, local, i):
    e = ids[i]
    if not (0 <= e < experts): return -1
    l = mp[e] if mp is not None else e
    return l if 0 <= l < local else -1

def route(ids, mp, experts, local, br, cap):
    pairs = len(ids)
    blocks = blocks_of(pairs); sl = slice_of(pairs, blocks); segs = segments_of(local, blocks, sl)
    sorted_ids, bexp, numpad = [None] * cap, [None] * (cap // br), [None]
    writer = {}
    def w(arr, name, idx, val, blk):
        assert 0 <= idx < len(arr), (name, idx)
        assert (name, idx) not in writer, f"{name}[{idx}] written twice ({writer[(name, idx)]}, {blk})"
        writer[(name, idx)] = blk; arr[idx] = val
    for block in range(blocks):
        rows = segs + (blocks > 1)
        sh = [0] * (rows * local)
        before_off = segs * local
        sb = min(pairs, block * sl); se = min(pairs, sb + sl)
        seg = (se - sb + segs - 1) // segs
        segr = []
        for warp in range(K_WARPS):
            b0 = min(se, sb + warp * seg) if warp < segs else se
            segr.append((b0, min(se, b0 + seg)))
            for i in range(*segr[-1]):
                l = local_of(ids, mp, experts, local, i)
                if l >= 0: sh[warp * local + l] += 1
        if blocks > 1:
            for i in range(0, sb):
                l = local_of(ids, mp, experts, local, i)
                if l >= 0: sh[before_off + l] += 1
            for i in range(se, pairs):
                l = local_of(ids, mp, experts, local, i)
                if l >= 0: sh[(segs - 1) * local + l] += 1
        q = group_lanes(local); groups = K_THREADS // q
        per = (local + groups - 1) // groups; chunk = (segs + q - 1) // q
        def thr(tid):
            sub = tid % 32 % q
            e0 = min(local, tid // q * per); e1 = min(local, e0 + per)
            g0 = min(segs, sub * chunk); g1 = min(segs, g0 + chunk)
            return sub, e0, e1, g0, g1
        T = [thr(t) for t in range(K_THREADS)]
        mine = [0] * K_THREADS
        earlier, pairs_of = {}, {}  # (thread, i): kept from the first walk for the second
        for i in range(per):
            parts = []
            for t in range(K_THREADS):
                sub, e0, e1, g0, g1 = T[t]; e = e0 + i if e0 + i < e1 else -1
                parts.append(sum(sh[g * local + e] for g in range(g0, g1)) if e >= 0 else 0)
            for t in range(K_THREADS):
                sub, e0, e1, g0, g1 = T[t]; e = e0 + i if e0 + i < e1 else -1
                base = t - sub
                earlier[t, i] = sum(parts[base:t])
                if e < 0: continue
                pairs_of[t, i] = sum(parts[base:base + q]) + (sh[before_off + e] if blocks > 1 else 0)
                if sub == 0: mine[t] += (pairs_of[t, i] + br - 1) // br * br
        excl, acc = [], 0
        for t in range(K_THREADS): excl.append(acc); acc += mine[t]
        total = acc
        start = [excl[t - T[t][0]] for t in range(K_THREADS)]
        for i in range(per):
            newsh = {}
            for t in range(K_THREADS):
                sub, e0, e1, g0, g1 = T[t]; e = e0 + i if e0 + i < e1 else -1
                if e < 0: continue
                be = sh[before_off + e] if blocks > 1 else 0
                pe = pairs_of[t, i]
                cur = start[t] + be + earlier[t, i]
                for g in range(g0, g1):
                    n = sh[g * local + e]; newsh[g * local + e] = cur; cur += n
                rws = (pe + br - 1) // br * br
                if e % blocks == block:
                    for b in range(start[t] // br + sub, (start[t] + rws) // br, q): w(bexp, "bexp", b, e, block)
                    for r in range(start[t] + pe + sub, start[t] + rws, q): w(sorted_ids, "sorted", r, pairs, block)
                start[t] += rws
            for k, v in newsh.items(): sh[k] = v
        stride = blocks * K_THREADS
        for tid in range(K_THREADS):
            first = block * K_THREADS + tid
            for b in range(total // br + first, cap // br, stride): w(bexp, "bexp", b, -1, block)
            for r in range(total + first, cap, stride): w(sorted_ids, "sorted", r, pairs, block)
        if block == 0: numpad[0] = total
        for warp in range(K_WARPS):
            b0, b1 = segr[warp]
            for base in range(b0, b1, 32):
                ls = [local_of(ids, mp, experts, local, base + j) if base + j < b1 else -1 for j in range(32)]
                for j in range(32):
                    l = ls[j]
                    if l < 0: continue
                    peers = [k for k in range(32) if ls[k] == l]
                    at = sh[warp * local + l]
                    w(sorted_ids, "sorted", at + peers.index(j), base + j, block)
                for l in set(x for x in ls if x >= 0):
                    sh[warp * local + l] += ls.count(l)
    return sorted_ids, bexp, numpad[0]

def ref(ids, mp, experts, local, br, cap):
    pairs = len(ids); s, b = [], []
    for e in range(local):
        st = len(s)
        s += [i for i in range(pairs) if local_of(ids, mp, experts, local, i) == e]
        while (len(s) - st) % br: s.append(pairs)
        b += [e] * ((len(s) - st) // br)
    n = len(s)
    return s + [pairs] * (cap - n), b + [-1] * (cap // br - len(b)), n

rng = random.Random(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
cases = [(1, 2, 5, 1), (133, 3, 12, 1), (300, 8, 256, 1), (64, 3, 12, 4), (700, 2, 128, 4), (512, 1, 8, 1),
         (16, 2, 64, 1), (300, 4, 32, 2), (1, 1, 1, 1), (200, 6, 4096, 1), (256, 8, 512, 1), (683, 3, 7, 1),
         (3001, 3, 64, 1), (1200, 4, 32, 2), (2, 8, 256, 1), (100, 8, 1024, 1), (700, 4, 2048, 2)]
n = 0
for m, topk, E, ways in cases:
    for br in (16, 64, 8, 1, 128):
        ids = [rng.randrange(E) for _ in range(m * topk)]
        if ways == 2: ids = [x if rng.random() > 0.05 else rng.choice([-1, E, 1 << 30]) for x in ids]
        mp, local = None, E
        if ways > 1:
            local = (E + ways - 1) // ways
            mp = [(e - local if local <= e < 2 * local else -1) for e in range(E)]
        cap = (m * topk + local * (br - 1)) // br * br
        got = route(ids, mp, E, local, br, cap)
        want = ref(ids, mp, E, local, br, cap)
        assert got == tuple(want) or list(got) == list(want), f"m={m} topk={topk} E={E} ways={ways} br={br}"
        n += 1
print(f"route_emu: {n} routes equal the reference, no entry written twice")
