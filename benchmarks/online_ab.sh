#!/bin/bash
# A machine A/B of two commits of the online tuner: `autotune bench --online --no-defaults
# --no-grid` on each, alternated run by run, one at a time, each from a clean clone; (c), the
# ideal, read from results/bench/bench.json. Run it alone: the machine is shared and noisy.
#
#   bash benchmarks/online_ab.sh OUT NEW_COMMIT OLD_COMMIT "WORKLOAD START" ... [-- BENCH_ARGS]
#
# START as the tables write it, with dashes for spaces (w2-pf2). BENCH_ARGS go to every bench
# run (default: --rounds 3). Each run writes OUT/<new|old>-<workload>-<start>/ and its log; the
# table: python results/bench/online-pool-start/table.py OUT.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "$1" && cd "$1" && pwd)
new=$2
old=$3
shift 3
runs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do runs+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
extra=("$@")
[ ${#extra[@]} -eq 0 ] && extra=(--rounds 3)
for way in new old; do
  commit=$new; [ "$way" = old ] && commit=$old
  rm -rf "/tmp/ab-$way" && git clone -q "$repo" "/tmp/ab-$way" && git -C "/tmp/ab-$way" checkout -q "$commit"
done
for run in "${runs[@]}"; do
  set -- $run
  for way in new old; do
    src=/tmp/ab-$way
    name=$way-$1-$2
    echo "$(date -u +%H:%M:%S) $name start, load $(cut -d' ' -f1 /proc/loadavg)" >> "$out/run.log"
    (cd "$src" && PYTHONPATH=$src PYTHONDONTWRITEBYTECODE= "$repo/.venv/bin/python" -m autotune \
      bench --online --no-defaults --no-grid --grid-from "$repo/results/bench/bench.json" \
      --workloads "$1" --start "${2//-/ }" "${extra[@]}" --out "$out/$name" > "$out/$name.log" 2>&1)
    echo "$(date -u +%H:%M:%S) $name exit $?" >> "$out/run.log"
  done
done
echo ALLDONE >> "$out/run.log"
