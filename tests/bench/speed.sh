#!/usr/bin/env bash
# speed.sh BIN: run.collectives = messages against rounds, and rounds with fused layer passes
# (algorithms/README.md, Collectives and Fused layers).
# For each case, runs dtsim (BIN) in both modes and prints
#   speed: CASE hosts=H messages_wall_s=A rounds_wall_s=B speedup=A/B sim_rel_err=E
# E = (rounds - messages) / messages of the case's figure (simulated time, or Tflop/s per GPU),
# then a line with both CPU times (user + system: the shared machine moves wall times by tens of
# percent). Asserts nothing.
# Cases (algorithms/README.md, Collectives, has the error table they fill):
#  ring-1024      64 MiB ring allreduce over 1,024 ranks, contention-free CM02 star without cross
#                 traffic (run_bench.sh section 6's platform)
#  ring-64-lv08   the same over 64 ranks of a generated LV08 star with TCP cross traffic
#  ptdp-76b       PTD-P Table 1's 76.1B row on selene (results/pipeline/ptdp.ini, the reproduction's keys)
#  tp-dp-fattree-cm02, tp-dp-fattree-lv08
#                 contended: tensor parallelism t = 8 (one rack each) x data parallelism d = 8 on a
#                 64-host fat tree with 4:1 uplinks, so every data-parallel ring's flow crosses them
#  dp-distbelief  contended: data parallelism, 80 replicas of speech-42m on distbelief-2012 (LV08,
#                 racks of 20 hosts behind 5:1 uplinks, TCP cross traffic); dp-distbelief-noxt without
#                 cross traffic (--cfg=network/crosstraffic:0)
#  ring-16-racks-{cm02,lv08}[-noxt]
#                 64 MiB ring allreduce over 16 ranks in two racks of a fat tree (8 hosts, 2 uplinks
#                 each): two of the ring's pairs take the longer route, with and without cross traffic
#  tp16-fattree-{cm02,lv08}
#                 tensor groups of 16 across two racks (t = 16, d = 4) on the tp-dp fat tree
#  ptdp-1t        the 1T row, rounds with fused layers only (its message-level step is about 2,300
#                 CPU seconds: tests/bench/README.md, benchmark section 10)
#  ptdp-1t-mirror the 1T row, rounds with fused layers and pipeline.mirror_replicas = on (replica 0's
#                 pipeline simulated, the other 5 replicas joining its flush: exact, checked)
# The cases with a tensor-parallel layer stack (ptdp-*, tp-dp-*, tp16-*) run a third time, as rounds
# with tensor.fuse_layers = on, printed as CASE-fused against the same message-level run; messages
# and plain rounds run layer by layer (algorithms/README.md, Fused layers); ptdp-76b runs a fourth
# time fused with mirrored replicas, as ptdp-76b-mirror. Every ptdp run but the -mirror ones sets
# pipeline.mirror_replicas = off (ptdp.ini turns it on).
# Knobs (environment): ONLY (one case), SKIP_1T=1.
set -euo pipefail
BIN=${1:?usage: speed.sh BIN}
ONLY=${ONLY:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ptdp_ini="$here/../../results/pipeline/ptdp.ini"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }
# timed OUT ARGS...: runs BIN ARGS --out OUT, leaves "wall cpu" in $work/time
timed() {
  local out=$1
  shift
  /usr/bin/time -f '%e %U %S' -o "$work/time.raw" "$BIN" "$@" --quiet --out "$out" >"$work/log" 2>&1 ||
    { cat "$work/log" >&2; return 1; }
  awk '{ printf "%s %.3f\n", $1, $2 + $3 }' "$work/time.raw" >"$work/time"
}
json() { grep -m1 "\"$1\":" "$2" | sed 's/.*: //; s/,$//'; }
# report CASE HOSTS FIELD: both runs done into $work/m and $work/r, times in $work/tm, $work/tr
report() {
  local a b ca cb fa fb
  read -r a ca <"$work/tm"
  read -r b cb <"$work/tr"
  fa=$(json "$3" "$work/m/summary.json")
  fb=$(json "$3" "$work/r/summary.json")
  awk -v c="$1" -v h="$2" -v a="$a" -v b="$b" -v fa="$fa" -v fb="$fb" \
    'BEGIN { printf "speed: %s hosts=%s messages_wall_s=%.2f rounds_wall_s=%.2f speedup=%.1f sim_rel_err=%.2e\n",
             c, h, a, b, a / b, (fb - fa) / fa }'
  awk -v c="$1" -v a="$ca" -v b="$cb" -v fa="$fa" -v fb="$fb" -v f="$3" \
    'BEGIN { printf "       %s cpu: messages %.2f s, rounds %.2f s (%.1fx); %s %.17g and %.17g\n", c, a, b, a / b, f, fa, fb }'
}
both() { # both CASE HOSTS FIELD ARGS...: messages against rounds, layer by layer
  local c=$1 h=$2 f=$3
  shift 3
  timed "$work/m" "$@" --set run.collectives=messages --set tensor.fuse_layers=off
  cp "$work/time" "$work/tm"
  timed "$work/r" "$@" --set run.collectives=rounds --set tensor.fuse_layers=off
  cp "$work/time" "$work/tr"
  report "$c" "$h" "$f"
}
# fused CASE HOSTS FIELD ARGS...: after both on the same ARGS, rounds with tensor.fuse_layers = on
# against the same message-level run, as CASE-fused
fused() {
  local c=$1 h=$2 f=$3
  shift 3
  timed "$work/r" "$@" --set run.collectives=rounds --set tensor.fuse_layers=on
  cp "$work/time" "$work/tr"
  report "$c-fused" "$h" "$f"
}

# mirrored CASE HOSTS FIELD ARGS...: after both on the same ARGS, rounds with fused layers and
# pipeline.mirror_replicas = on against the same message-level run, as CASE-mirror
mirrored() {
  local c=$1 h=$2 f=$3
  shift 3
  timed "$work/r" "$@" --set run.collectives=rounds --set tensor.fuse_layers=on --set pipeline.mirror_replicas=on
  cp "$work/time" "$work/tr"
  report "$c-mirror" "$h" "$f"
}

echo "== speed.sh: run.collectives = messages vs rounds ($("$BIN" --version | head -1); $(nproc) cores)"

if want ring-1024; then
  cat >"$work/ring.xml" <<EOF
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <config>
    <prop id="network/model" value="CM02"/>
    <prop id="network/crosstraffic" value="0"/>
  </config>
  <cluster id="c" prefix="host-" suffix="" radical="0-1023" speed="1Gf" core="1"
           bw="50GBps" lat="500ns" sharing_policy="SPLITDUPLEX"/>
</platform>
EOF
  both ring-1024 1024 time_s run --set run.algorithm=collective --set platform.file="$work/ring.xml" \
    --set model.numerics=off --set collective.op=allreduce --set collective.algorithm=ring \
    --set collective.ranks=1024 --set collective.bytes=67108864
fi

# PTD-P Table 1 rows as dtsim reproduce pipeline runs them (sim/reproduce_pipeline.c's grid)
ptdp() { # ptdp T D H HEADS LAYERS B P M V
  local sched=1f1b
  [ "$9" -gt 1 ] && sched=interleaved
  echo run "$ptdp_ini" --set tensor.ranks="$1" --set tensor.data_parallel="$2" --set tensor.hidden="$3" \
    --set tensor.heads="$4" --set tensor.layers="$5" --set tensor.microbatch="$6" --set pipeline.stages="$7" \
    --set pipeline.microbatches="$8" --set pipeline.chunks="$9" --set pipeline.schedule=$sched \
    --set pipeline.mirror_replicas=off
}

if want ptdp-76b; then
  # shellcheck disable=SC2046
  both ptdp-76b 1024 tflops_per_gpu $(ptdp 8 32 10240 80 60 2 4 28 3)
  # shellcheck disable=SC2046
  fused ptdp-76b 1024 tflops_per_gpu $(ptdp 8 32 10240 80 60 2 4 28 3)
  # shellcheck disable=SC2046
  mirrored ptdp-76b 1024 tflops_per_gpu $(ptdp 8 32 10240 80 60 2 4 28 3)
fi

tp_dp() { # tp_dp NETWORK_MODEL: writes the fat tree, echoes the run's arguments
  "$BIN" platform --hosts 64 --topology fat-tree --rack-size 8 --uplinks 2 --speed 100T --bw 12.5G --lat 1us \
    --network-model "$1" -o "$work/ft-$1.xml"
  echo run --set run.algorithm=tensor --set platform.file="$work/ft-$1.xml" --set model.numerics=off \
    --set model.dtype=fp16 --set tensor.ranks=8 --set tensor.data_parallel=8 --set tensor.hidden=4096 \
    --set tensor.heads=32 --set tensor.layers=4 --set tensor.seq=2048 --set tensor.microbatch=4 \
    --set tensor.microbatches=2 --set tensor.dp_overlap=on
}
for nm in CM02 LV08; do
  c=tp-dp-fattree-$(echo "$nm" | tr 'A-Z' 'a-z')
  if want "$c"; then
    # shellcheck disable=SC2046
    both "$c" 64 step_time_s $(tp_dp "$nm")
    # shellcheck disable=SC2046
    fused "$c" 64 step_time_s $(tp_dp "$nm")
  fi
done

if want ring-64-lv08; then
  "$BIN" platform --hosts 64 --topology star --bw 12.5G --lat 1us --network-model LV08 -o "$work/star-lv08.xml"
  both ring-64-lv08 64 time_s run --set run.algorithm=collective --set platform.file="$work/star-lv08.xml" \
    --set model.numerics=off --set collective.ranks=64 --set collective.bytes=67108864
fi

for c in dp-distbelief dp-distbelief-noxt; do
  if want $c; then
    xt=()
    [ $c = dp-distbelief-noxt ] && xt=(--cfg=network/crosstraffic:0)
    both $c 80 sim_time_s run --set run.algorithm=dataparallel --set platform.preset=distbelief-2012 \
      --set model.numerics=off --set model.virtual=speech-42m --set dataparallel.replicas=80 \
      --set dataparallel.batch=512 --set run.max_steps=2 "${xt[@]}"
  fi
done

for nm in CM02 LV08; do
  l=$(echo "$nm" | tr 'A-Z' 'a-z')
  for c in ring-16-racks-$l ring-16-racks-$l-noxt tp16-fattree-$l; do
    want $c || continue
    "$BIN" platform --hosts 64 --topology fat-tree --rack-size 8 --uplinks 2 --speed 100T --bw 12.5G --lat 1us \
      --network-model "$nm" -o "$work/ft-$nm.xml"
    xt=()
    case $c in *-noxt) xt=(--cfg=network/crosstraffic:0) ;; esac
    case $c in
    ring-*)
      both $c 16 time_s run --set run.algorithm=collective --set platform.file="$work/ft-$nm.xml" \
        --set model.numerics=off --set collective.ranks=16 --set collective.bytes=67108864 "${xt[@]}" ;;
    tp16-*)
      # shellcheck disable=SC2046
      both $c 64 step_time_s $(tp_dp "$nm") --set tensor.ranks=16 --set tensor.data_parallel=4 \
        --set tensor.microbatches=4
      # shellcheck disable=SC2046
      fused $c 64 step_time_s $(tp_dp "$nm") --set tensor.ranks=16 --set tensor.data_parallel=4 \
        --set tensor.microbatches=4 ;;
    esac
  done
done

if want ptdp-1t && [ "${SKIP_1T:-0}" != 1 ]; then
  # shellcheck disable=SC2046
  timed "$work/r" $(ptdp 8 6 25600 160 128 1 64 512 1) --set run.collectives=rounds --set tensor.fuse_layers=on
  read -r b cb <"$work/time"
  printf 'speed: ptdp-1t-fused hosts=3072 messages_wall_s=n/a rounds_wall_s=%.2f speedup=n/a sim_rel_err=n/a\n' "$b"
  printf '       ptdp-1t-fused cpu: rounds %.2f s; tflops_per_gpu %s\n' "$cb" "$(json tflops_per_gpu "$work/r/summary.json")"
fi
if want ptdp-1t-mirror; then
  # shellcheck disable=SC2046
  timed "$work/r" $(ptdp 8 6 25600 160 128 1 64 512 1) --set run.collectives=rounds --set tensor.fuse_layers=on \
    --set pipeline.mirror_replicas=on
  read -r b cb <"$work/time"
  printf 'speed: ptdp-1t-mirror hosts=3072 messages_wall_s=n/a rounds_wall_s=%.2f speedup=n/a sim_rel_err=n/a\n' "$b"
  printf '       ptdp-1t-mirror cpu: rounds %.2f s; tflops_per_gpu %s\n' "$cb" "$(json tflops_per_gpu "$work/r/summary.json")"
fi
