"""Per-step trace of a persistent pool across epochs: time, position in epoch, backlog, dispatched."""
import sys, time, statistics
from autotune.bench.accuracy import parse_config
from autotune.burst.backlog import ready_batches
from autotune.workload.spec import load_workload
from autotune.workload.options import WorkloadOptions

spec, label, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
wl = load_workload(spec, WorkloadOptions(device="cpu"))
cfg = parse_config(label)
loader = wl.make_loader(cfg)
n = len(loader)
rows = []
t0 = time.perf_counter(); ep = 0
while time.perf_counter() - t0 < seconds:
    it = iter(loader); k = 0
    for b in it:
        wl.step(b)
        rows.append((time.perf_counter() - t0, ep, k, ready_batches(it), it._send_idx, it._rcvd_idx))
        k += 1
    ep += 1
del loader
bs = wl.batch_size
# step interval by position in epoch, epochs >= 1
import collections
by_pos = collections.defaultdict(list)
for i in range(1, len(rows)):
    t, e, k, bl, s, r = rows[i]
    if e >= 1:
        by_pos[k].append(t - rows[i-1][0])
depth = cfg.prefetch_depth
print(f"{spec} {label}: {n} steps/epoch, depth {depth}, epochs {ep}")
segs = {"boundary(k=0)": [0], "head 1..depth": range(1, depth + 1), "middle": range(depth + 1, n - depth),
        "tail last depth": range(n - depth, n)}
for name, ks in segs.items():
    vals = [v for k in ks for v in by_pos.get(k, [])]
    if vals:
        print(f"  {name:16s} mean step {statistics.mean(vals)*1e3:7.2f} ms  n={len(vals)}")
# per epoch rate and first-epoch mid rate
for e in range(ep):
    er = [r for r in rows if r[1] == e]
    mid = [r for r in er if depth < r[2] < n - depth]
    if len(mid) > 2:
        rate = (len(mid) - 1) * bs / (mid[-1][0] - mid[0][0])
        print(f"  epoch {e}: mid rate {rate:.0f}  backlog mid median {statistics.median(r[3] for r in mid)}  tail backlogs {[r[3] for r in er[-depth-2:]]}")
# production over spans (consumed + backlog change), as the burst window scores it
def prod(i, j):
    a, b = rows[i], rows[j]
    consumed = (j - i) * bs
    produced = consumed + (b[3] - a[3]) * bs
    return produced / (b[0] - a[0]), consumed / (b[0] - a[0])
idx = {(r[1], r[2]): i for i, r in enumerate(rows)}
for e in range(min(ep, 4)):
    for lo, hi in ((17, n - 1), (17, n - depth - 1), (depth, n - depth - 1)):
        if (e, lo) in idx and (e, hi) in idx:
            p, c = prod(idx[(e, lo)], idx[(e, hi)])
            print(f"  epoch {e} steps {lo}..{hi}: produced {p:.0f}/s consumed {c:.0f}/s  backlog {rows[idx[(e,lo)]][3]}->{rows[idx[(e,hi)]][3]}")
# whole epochs: from end of epoch e's last step to end of epoch e+1's last step
ends = [i for i, r in enumerate(rows) if r[2] == n - 1]
for a, b in zip(ends, ends[1:]):
    print(f"  whole epoch {rows[b][1]}: {n*bs/(rows[b][0]-rows[a][0]):.0f}/s", end="")
print()
