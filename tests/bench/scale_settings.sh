#!/usr/bin/env bash
# Issue 8.5 settings study: the scale scenario (tests/bench/scale-10k.ini) at 1/F of its
# hosts under SimGrid's reference settings (the defaults) and under candidate settings;
# prints wall and CPU seconds, peak RSS, the simulated makespan and its deviation from the
# reference, and the mean staleness. Asserts nothing.
# usage: DTSIM=build/dtsim bash tests/bench/scale_settings.sh [F...]   (default: 20 10)
# Environment: SENDS (downpour.sends, waited), REPS (runs of each, 1; the smallest wall and CPU
# times count: the machine may be shared), SETTINGS (newline-separated lines
# "name|--cfg=... --cfg=..."; default: the list below).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
DTSIM=${DTSIM:-build/dtsim} SENDS=${SENDS:-waited} REPS=${REPS:-1}
[ $# -gt 0 ] || set -- 20 10
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
SETTINGS=${SETTINGS:-"reference (defaults)|
network/optim:Full|--cfg=network/optim:Full
Full + selective update|--cfg=network/optim:Full --cfg=network/maxmin-selective-update:1
network/crosstraffic:0|--cfg=network/crosstraffic:0
surf/precision:1e-6|--cfg=surf/precision:1e-6
maxmin/precision:1e-2|--cfg=maxmin/precision:1e-2
both precisions|--cfg=surf/precision:1e-6 --cfg=maxmin/precision:1e-2
surf 1e-6, maxmin 1e-1|--cfg=surf/precision:1e-6 --cfg=maxmin/precision:1e-1
solver fairbottleneck|--cfg=network/solver:fairbottleneck
crosstraffic:0 + Full|--cfg=network/crosstraffic:0 --cfg=network/optim:Full
crosstraffic:0 + both precisions|--cfg=network/crosstraffic:0 --cfg=surf/precision:1e-6 --cfg=maxmin/precision:1e-2"}
json() { grep -m1 "\"$1\":" "$2" | sed 's/.*: //; s/,$//'; }

for F in "$@"; do
  R=$((1100 / F)) S=$((100 / F)) H=$((10000 / F))
  echo "== 1/$F: $R replicas x 9 machines + $S shards, $H hosts, 5 steps, downpour.sends = $SENDS"
  printf '   %-28s %8s %8s %8s %22s %10s %9s\n' settings wall_s cpu_s rss_MB makespan_s rel_dev staleness
  ref=
  while IFS='|' read -r name cfg; do
    [ -n "$name" ] || continue
    best_w= best_c= ok=1
    for ((k = 0; k < REPS; k++)); do
      # shellcheck disable=SC2086 # cfg holds several options
      /usr/bin/time -f '%e %U %S %M' -o "$work/time" "$DTSIM" run "$here/scale-10k.ini" --quiet --out "$work/out" \
        --set downpour.replicas=$R --set downpour.ps_shards=$S --set platform.hosts=$H --set downpour.sends="$SENDS" \
        $cfg >"$work/log" 2>&1 || { echo "   $name: failed: $(tail -1 "$work/log")"; ok=0; break; }
      read -r wall user sys rss <"$work/time"
      c=$(awk -v a="$user" -v b="$sys" 'BEGIN { print a + b }')
      best_w=$(awk -v a="$best_w" -v b="$wall" 'BEGIN { print (a == "" || b < a) ? b : a }')
      best_c=$(awk -v a="$best_c" -v b="$c" 'BEGIN { print (a == "" || b < a) ? b : a }')
    done
    [ $ok = 1 ] || continue
    sim=$(json sim_time_s "$work/out/summary.json")
    stale=$(grep -A2 '"staleness"' "$work/out/summary.json" | json mean /dev/stdin)
    [ -n "$ref" ] || ref=$sim
    printf '   %-28s %8.2f %8.2f %8d %22s %+10.2e %9.3f\n' "$name" "$best_w" "$best_c" \
      $((rss / 1024)) "$sim" "$(awk -v a="$sim" -v b="$ref" 'BEGIN { print (a - b) / b }')" "$stale"
  done <<<"$SETTINGS"
done
