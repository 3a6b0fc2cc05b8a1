#!/usr/bin/env bash
# dtsim benchmark: prints figures, asserts nothing. Run with `cmake --build build --target bench`.
# Environment: DTSIM, REF, RING, GRAD = paths of dtsim, ref_downpour, ref_ring and bench_grad.
# Knobs (environment): R (replicas, 200), S (shards, 10), STEPS (50), NR (numeric replicas, 20),
# NSTEPS (numeric steps per replica, 50), P (ring allreduce ranks, 1024), PC (ranks of the callgrind
# comparison, 256), CG (0: skip it), ONLY (run only that section, e.g. ONLY=8; ONLY=9: the sweep),
# M3D (microbatches of the 1T 3D run of section 10, 64; its full step has 512; it also runs M3D / 2),
# SCALES (section 12: the fractions 1/F of the 10,000-host scale run, "20 10"; 1 is the full run),
# SCFG (section 12: SimGrid settings for dtsim and its reference, the recommended
# "--cfg=surf/precision:1e-6 --cfg=maxmin/precision:1e-2"; empty: the defaults),
# SENDS (section 12: downpour.sends and the reference's send mode, waited).
# REPS12 (section 12: runs of each program, alternated; the smallest times count; 1).
# REFSPLIT = path of ref_downpour_split (section 12). SCENARIOS = tests/scenarios (section 13).
# Section 14 reads results/megatron/megatron.ini.
set -euo pipefail
R=${R:-200} S=${S:-10} STEPS=${STEPS:-50} NR=${NR:-20} NSTEPS=${NSTEPS:-50} P=${P:-1024} ONLY=${ONLY:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

wall() { # wall seconds of a command, its output to $work/last.out
  local t0 t1
  t0=$(date +%s.%N)
  "$@" >"$work/last.out" 2>&1
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'
}
cpu() { # user + system seconds of a command (less sensitive than wall time to a shared machine)
  /usr/bin/time -f '%U %S' -o "$work/cpu.out" "$@" >"$work/last.out" 2>&1
  awk '{ printf "%.3f", $1 + $2 }' "$work/cpu.out"
}
want() { [ -z "$ONLY" ] || [ "$ONLY" = "$1" ]; }
json() { grep -m1 "\"$1\":" "$2" | sed 's/.*: //; s/,$//'; }

echo "== dtsim benchmark"
"$DTSIM" --version | sed 's/^/   /'
echo "   machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"

if want 1; then
echo
echo "== 1. Timing-only Downpour vs the bare-SimGrid reference (engine floor)"
echo "   $R replicas, $S shards, $STEPS steps, virtual speech-42m (fp32), distbelief-2012 preset"
"$DTSIM" platform distbelief-2012 --hosts $((R + S)) -o "$work/plat.xml"
params=41777152             # speech-42m parameters (models/cost.c)
flops=$((6 * 41758720))      # its forward+backward flops per example
t_dtsim=$(wall "$DTSIM" run --quiet --out "$work/dp" --set platform.file="$work/plat.xml" \
  --set model.numerics=off --set model.virtual=speech-42m --set downpour.replicas=$R \
  --set downpour.ps_shards=$S --set run.max_steps=$STEPS --set run.eval_every=1e9 \
  --set run.max_sim_time=1e9 --set downpour.warmstart_steps=0 --set downpour.adagrad=on)
sim_dtsim=$(json sim_time_s "$work/dp/summary.json")
t_ref=$(wall "$REF" "$work/plat.xml" $R $S $STEPS $params $flops 32 4 6 --log=xbt_cfg.thres:warning)
sim_ref=$(sed -n 's/^simulated \([^ ]*\) s.*/\1/p' "$work/last.out")
msgs=$((R * STEPS * S * 3 + R * S))
printf '   dtsim:     %8.2f s wall, simulated %s s\n' "$t_dtsim" "$sim_dtsim"
printf '   reference: %8.2f s wall, simulated %s s\n' "$t_ref" "$sim_ref"
printf '   messages: %d; dtsim %.0f messages per wall second\n' $msgs "$(awk -v a=$msgs -v b="$t_dtsim" 'BEGIN { print a / b }')"
printf '   ratio dtsim / reference: %.3f (target <= 1.2)\n' "$(awk -v a="$t_dtsim" -v b="$t_ref" 'BEGIN { print a / b }')"
fi

if want 2; then
echo
echo "== 2. Numerics on: MLP 784-256-10 on synthetic-teacher data (10,000 + 2,000 examples), batch 32"
echo "   Downpour with fixed-rate SGD on the shards, the update the plain loop applies"
evals=$((NR * NSTEPS))
numrun() {
  "$DTSIM" run --quiet --out "$work/num" --set model.layers=784,256,10 \
    --set data.train=10000 --set data.test=2000 --set downpour.replicas=$NR --set downpour.ps_shards=10 \
    --set run.max_steps=$1 --set run.eval_every=1e9 --set run.max_sim_time=1e9 \
    --set downpour.warmstart_steps=0 --set downpour.adagrad=off
}
t_num=$(wall numrun $NSTEPS)
t_one=$(wall numrun 1)
"$GRAD" 784,256,10 32 $evals 12000 >"$work/grad.out"
loop=$(awk '{print $4}' "$work/grad.out")
gen=$(awk '{print $6}' "$work/grad.out")
printf '   dtsim run, %d replicas x %d steps = %d gradient evaluations: %.2f s wall (1 step each: %.2f s)\n' \
  $NR $NSTEPS $evals "$t_num" "$t_one"
printf '   plain loop of %d evaluations: %.2f s, plus %.2f s to generate the same data\n' $evals "$loop" "$gen"
printf '   ratio dtsim / (loop + data): %.3f (target <= 1.3)\n' "$(awk -v a="$t_num" -v b="$loop" -v c="$gen" 'BEGIN { print a / (b + c) }')"
printf '   per additional step, dtsim / loop: %.3f\n' \
  "$(awk -v a="$t_num" -v o="$t_one" -v l="$loop" -v n=$evals -v r=$NR 'BEGIN { print ((a - o) / (n - r)) / (l / n) }')"

fi

if want 3; then
echo "== 3. Platform load: 10,000 hosts"
t_load=$(wall "$DTSIM" run --quiet --out "$work/load" --set run.algorithm=sgd --set platform.hosts=10000 \
  --set run.max_steps=1 --set model.layers=8,8,2 --set data.train=100 --set data.test=10)
printf '   sgd, 1 step, on distbelief-2012 sized to 10,000 hosts (checked in a child, then loaded): %.2f s wall\n' "$t_load"

fi

if want 4; then
echo
echo "== 4. dtsim reproduce fig3 --quick (speech-42m and image-80m on 1..16 machines)"
t_fig3=$(wall "$DTSIM" reproduce fig3 --quick --quiet --out "$work/fig3")
printf '   %.2f s wall on %d cores (target < 120 s); the full grid (up to 144 machines) takes tens of\n' "$t_fig3" "$(nproc)"
printf '   minutes: run it yourself with  dtsim reproduce fig3 --out DIR\n'
fi

if want 5; then
echo
echo "== 5. Async consensus: 16 agents on the complete graph of 1 Mflop/s hosts (tests/data/consensus-16.xml)"
plat16="$(cd "$(dirname "${BASH_SOURCE[0]}")/../data" && pwd)/consensus-16.xml"
cons() {
  "$DTSIM" run --quiet --out "$work/cons" --set run.algorithm=consensus --set platform.file="$plat16" \
    --set consensus.agents=16 --set consensus.topology=complete --set consensus.objective=l1 \
    --set consensus.mode=async --set run.eval_every=0.005 --set run.max_steps=$1
}
t_c500=$(wall cons 500)
t_c2000=$(wall cons 2000)
printf '   500 iterations: %.2f s wall; 2000: %.2f s (ratio %.2f: at most 4 if the cost is linear in the\n' \
  "$t_c500" "$t_c2000" "$(awk -v a="$t_c2000" -v b="$t_c500" 'BEGIN { print a / b }')"
printf '   length; near 16 it is quadratic, as when async agents polled receives with sg_comm_test)\n'
fi

if want 6; then
echo
echo "== 6. Ring allreduce, 64 MiB over $P ranks, timing only: dtsim vs a bare SimGrid program (ref_ring.c)"
echo "   2(P-1) messages of 64 MiB / P (+ 64 header bytes) per rank; a star of 50 GB/s, 500 ns links"
echo "   without a backbone (host link to host link), CM02, no TCP cross traffic, as results/collectives"
cat >"$work/ring.xml" <<EOF
<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <config>
    <prop id="network/model" value="CM02"/>
    <prop id="network/crosstraffic" value="0"/>
  </config>
  <cluster id="c" prefix="host-" suffix="" radical="0-$((P - 1))" speed="1Gf" core="1"
           bw="50GBps" lat="500ns" sharing_policy="SPLITDUPLEX"/>
</platform>
EOF
ring_dtsim() {
  "$DTSIM" run --quiet --out "$work/ring" --set run.algorithm=collective --set platform.file="$work/ring.xml" \
    --set model.numerics=off --set collective.op=allreduce --set collective.algorithm=ring \
    --set collective.ranks="$P" --set collective.bytes=67108864
}
ring_ref() { "$RING" "$work/ring.xml" "$P" 67108864 --log=xbt_cfg.thres:warning; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
# Two runs of each, alternated; the smaller wall and CPU times count (the machine is shared).
t_rd= t_rr= c_rd= c_rr=
for k in 1 2; do
  t_rd=$(min "$t_rd" "$(wall ring_dtsim)")
  t_rr=$(min "$t_rr" "$(wall ring_ref)")
  sim_rr=$(sed -n 's/^simulated \([^ ]*\) s.*/\1/p' "$work/last.out")
  c_rd=$(min "$c_rd" "$(cpu "$DTSIM" run --quiet --out "$work/ring" --set run.algorithm=collective \
    --set platform.file="$work/ring.xml" --set model.numerics=off --set collective.ranks="$P" \
    --set collective.bytes=67108864)")
  c_rr=$(min "$c_rr" "$(cpu "$RING" "$work/ring.xml" "$P" 67108864 --log=xbt_cfg.thres:warning)")
done
sim_rd=$(json time_s "$work/ring/summary.json")
form=$(json formula_s "$work/ring/summary.json")
printf '   dtsim:     %8.2f s wall, %8.2f s CPU, simulated %s s (formula %s s)\n' "$t_rd" "$c_rd" "$sim_rd" "$form"
printf '   reference: %8.2f s wall, %8.2f s CPU, simulated %s s\n' "$t_rr" "$c_rr" "$sim_rr"
printf '   ratio dtsim / reference: %.3f wall, %.3f CPU (target <= 1.2; dtsim target < 7 s wall)\n' \
  "$(awk -v a="$t_rd" -v b="$t_rr" 'BEGIN { print a / b }')" "$(awk -v a="$c_rd" -v b="$c_rr" 'BEGIN { print a / b }')"
if [ "${CG:-1}" = 1 ] && command -v valgrind >/dev/null; then
  # Instructions executed do not depend on what else the machine runs: the fair ratio.
  PC=${PC:-256}
  sed "s/radical=\"0-$((P - 1))\"/radical=\"0-$((PC - 1))\"/" "$work/ring.xml" >"$work/ringc.xml"
  # (summed over processes: dtsim's platform pre-check runs in a forked child)
  ir() { valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 | sed -n 's/.*refs: *//p' | tr -d , |
    awk '{ s += $1 } END { printf "%.0f", s }'; }
  i_rd=$(ir "$DTSIM" run --quiet --out "$work/ringc" --set run.algorithm=collective --set platform.file="$work/ringc.xml" \
    --set model.numerics=off --set collective.ranks="$PC" --set collective.bytes=67108864)
  i_rr=$(ir "$RING" "$work/ringc.xml" "$PC" 67108864 --log=xbt_cfg.thres:warning)
  printf '   instructions (callgrind, %d ranks): dtsim %s, reference %s, ratio %.3f\n' "$PC" "$i_rd" "$i_rr" \
    "$(awk -v a="$i_rd" -v b="$i_rr" 'BEGIN { print a / b }')"
fi
fi

if want 7; then
echo
echo "== 7. dtsim reproduce fig4 --quick and fig5 --quick (Dean'12 optimizers, speech-net timing, real proxy)"
t_f4=$(wall "$DTSIM" reproduce fig4 --quick --quiet --out "$work/fig4")
t_f5=$(wall "$DTSIM" reproduce fig5 --quick --quiet --out "$work/fig5")
printf '   fig4 --quick %.2f s, fig5 --quick %.2f s wall on %d cores (target < 180 s each); the full grids:\n' \
  "$t_f4" "$t_f5" "$(nproc)"
printf '   dtsim reproduce fig4 --out DIR, and fig5 (minutes each)\n'
fi

if want 8; then
echo
echo "== 8. Megatron-LM's largest point: 8.3B on 512 GPUs (tensor parallel 8 x data parallel 64, dgx2h)"
echo "   one step, timing only, fp16, GEMM flops alone (reproduce megatron runs this shape with the 2019 software)"
t_meg=$(wall "$DTSIM" run --quiet --out "$work/meg" --set run.algorithm=tensor --set platform.preset=dgx2h \
  --set platform.hosts=512 --set model.numerics=off --set model.dtype=fp16 --set model.efficiency=0.312 \
  --set tensor.ranks=8 --set tensor.data_parallel=64 --set tensor.hidden=3072 --set tensor.heads=32 \
  --set tensor.layers=72 --set tensor.seq=1024 --set tensor.microbatch=8)
printf '   %.2f s wall; simulated step %s s, %s Tflop/s per GPU, %s bytes on the wire\n' "$t_meg" \
  "$(json step_time_s "$work/meg/summary.json")" "$(json tflops_per_gpu "$work/meg/summary.json")" \
  "$(json bytes_total "$work/meg/summary.json")"
fi

if want 9; then
echo
echo "== 9. dtsim sweep: 8 points (sgd.lr x 4, sgd.batch x 2) of plain SGD on a 256-256-10 MLP, 200 steps"
echo "   each point a dtsim run in its own process; --jobs 1, then --jobs 2"
printf '[run]\nalgorithm = sgd\nmax_steps = 200\neval_every = 1e9\nmax_sim_time = 1e9\n[model]\nlayers = 256,256,10\n[data]\ntrain = 4000\ntest = 500\n' >"$work/sweep.ini"
sweep() {
  "$DTSIM" sweep "$work/sweep.ini" --vary sgd.lr=0.01,0.03,0.1,0.3 --vary sgd.batch=32,64 --quiet \
    --out "$work/sweep-j$1" --jobs "$1"
}
t_s1=$(wall sweep 1)
t_s2=$(wall sweep 2)
same=$(cmp -s "$work/sweep-j1/sweep.csv" "$work/sweep-j2/sweep.csv" && echo identical || echo DIFFERENT)
printf '   --jobs 1: %.2f s wall; --jobs 2: %.2f s wall; ratio %.3f (target about 0.5 on 2 free cores)\n' \
  "$t_s1" "$t_s2" "$(awk -v a="$t_s2" -v b="$t_s1" 'BEGIN { print a / b }')"
printf '   sweep.csv of the two: %s\n' "$same"
fi

if want 10; then
M3D=${M3D:-64}
echo
echo "== 10. PTD-P's 1T row: 3D parallelism on 3,072 GPUs (t = 8, p = 64, d = 6; 128 layers, h = 25,600,"
echo "   160 heads, s = 2048, V = 51,200, b = 1, recomputation, 1F1B), selene preset, timing only, one step"
echo "   of M3D = $M3D microbatches per replica (the paper's batch of 3,072 is 512) and of M3D / 2; per"
echo "   microbatch each of the 3,072 ranks sends 2 layers x 6 allreduces x 2(t-1) = 168 tensor messages"
echo "   plus 14 for the boundary allgathers, so wall time is about linear in the microbatches"
run1t() { # microbatches, output folder
  /usr/bin/time -f '%M %U %S' -o "$work/rss.out" "$DTSIM" run --quiet --out "$2" --set run.algorithm=pipeline \
    --set pipeline.model=transformer --set platform.preset=selene --set model.numerics=off \
    --set model.dtype=fp16 --set model.efficiency=0.748022 --set tensor.kernels=fused --set tensor.ranks=8 --set tensor.data_parallel=6 \
    --set pipeline.stages=64 --set pipeline.microbatches="$1" --set tensor.layers=128 --set tensor.hidden=25600 \
    --set tensor.heads=160 --set tensor.seq=2048 --set tensor.vocab=51200 --set tensor.microbatch=1 \
    --set tensor.recompute=on --set run.max_steps=1
}
half=$((M3D / 2))
t_half=$(wall run1t "$half" "$work/p3d-half")
read -r rss_half c_half <<<"$(awk '{ printf "%d %.1f", $1, $2 + $3 }' "$work/rss.out")"
t_full=$(wall run1t "$M3D" "$work/p3d")
read -r rss_full c_full <<<"$(awk '{ printf "%d %.1f", $1, $2 + $3 }' "$work/rss.out")"
printf '   m = %d: %.1f s wall, %s s CPU, peak RSS %d MB; m = %d: %.1f s wall, %s s CPU, peak RSS %d MB\n' \
  "$half" "$t_half" "$c_half" $((rss_half / 1024)) "$M3D" "$t_full" "$c_full" $((rss_full / 1024))
printf '   m = %d: simulated step %s s, %s Tflop/s per GPU, bubble %s, %s bytes on the wire\n' "$M3D" \
  "$(json makespan_s "$work/p3d/summary.json")" "$(json tflops_per_gpu "$work/p3d/summary.json")" \
  "$(json bubble_fraction "$work/p3d/summary.json")" "$(json bytes_total "$work/p3d/summary.json")"
# CPU time, not wall time, is extrapolated: on a shared machine wall time follows the load
printf '   extrapolated CPU time of the full step (m = 512), linear through the two: %.0f s\n' \
  "$(awk -v a="$c_half" -v b="$c_full" -v h="$half" -v f="$M3D" 'BEGIN { print b + (b - a) / (f - h) * (512 - f) }')"
fi

if want 11; then
echo
echo "== 11. Parallel numerics: synchronous data parallelism, 32 replicas each computing a real"
echo "   gradient of a 256-512-512-10 MLP on 256 examples per step, 2 steps, dgx2h hosts; wall time with"
echo "   one and two SimGrid threads (target: two at least 1.6x faster) and the result files compared"
par() { # threads, output folder
  "$DTSIM" run --quiet --out "$2" --set run.algorithm=dataparallel --set run.max_steps=2 --set run.eval_every=1000 \
    --set platform.preset=dgx2h --set platform.hosts=32 --set model.layers=256,512,512,10 --set data.train=20000 \
    --set data.test=1000 --set dataparallel.replicas=32 --set dataparallel.batch=256 "--cfg=contexts/nthreads:$1"
}
t1=$(wall par 1 "$work/par1")
t2=$(wall par 2 "$work/par2")
same=identical
for f in summary.json progress.csv links.csv breakdown.csv; do
  cmp -s "$work/par1/$f" "$work/par2/$f" || same="DIFFERENT ($f)"
done
printf '   one thread %.2f s, two threads %.2f s: %.2fx; result files %s\n' "$t1" "$t2" \
  "$(awk -v a="$t1" -v b="$t2" 'BEGIN { print a / b }')" "$same"
fi

if want 12; then
SCALES=${SCALES:-20 10} SCFG=${SCFG---cfg=surf/precision:1e-6 --cfg=maxmin/precision:1e-2} SENDS=${SENDS:-waited}
echo
echo "== 12. Scale: timing-only Downpour on a fat tree, tests/bench/scale-10k.ini at 1/F of its"
echo "   10,000 hosts (1,100/F replicas x 9 machines of image-80m + 100/F shards, 5 steps, distbelief-2012"
echo "   hosts and links as a fat tree), dtsim vs ref_downpour_split.c sending the same messages"
echo "   SimGrid settings for both: ${SCFG:-(defaults)}; downpour.sends = $SENDS (reference: $SENDS sends)"
ini="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/scale-10k.ini"
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a == "" || b < a) ? b : a }'; }
timed() { # command...: sets wall, cpu, rss (MB) from /usr/bin/time; output to $work/last.out
  /usr/bin/time -f '%e %U %S %M' -o "$work/time.out" "$@" >"$work/last.out" 2>&1
  read -r wall u s rss <"$work/time.out"
  cpu=$(awk -v a="$u" -v b="$s" 'BEGIN { printf "%.2f", a + b }')
  rss=$((rss / 1024))
}
printf '   %5s %6s %9s %9s %7s %9s %9s %7s %11s %11s %21s %21s\n' F hosts dtsim_s ref_s ratio dtsim_cpu \
  ref_cpu cpu_rat dtsim_rss_MB ref_rss_MB dtsim_sim_s ref_sim_s
pts=()
for F in $SCALES; do
  R=$((1100 / F)) S=$((100 / F)) H=$((10000 / F))
  "$DTSIM" platform distbelief-2012 --hosts $H --topology fat-tree -o "$work/scale.xml"
  dw= dc= rw= rc=
  for ((k = 0; k < ${REPS12:-1}; k++)); do # alternated; the smallest times count (a shared machine)
    # shellcheck disable=SC2086 # SCFG holds several options
    timed "$DTSIM" run "$ini" --quiet --out "$work/scale" --set downpour.replicas=$R --set downpour.ps_shards=$S \
      --set platform.hosts=$H --set downpour.sends="$SENDS" $SCFG
    dw=$(min "$dw" "$wall") dc=$(min "$dc" "$cpu") dr=$rss
    # shellcheck disable=SC2086
    timed "$REFSPLIT" "$work/scale.xml" $R 9 $S 5 image-80m 32 4 "$SENDS" $SCFG --log=xbt_cfg.thres:warning
    rw=$(min "$rw" "$wall") rc=$(min "$rc" "$cpu") rr=$rss
  done
  ds=$(json sim_time_s "$work/scale/summary.json")
  rs=$(sed -n 's/^simulated \([^ ]*\) s.*/\1/p' "$work/last.out")
  wall=$rw cpu=$rc rss=$rr
  printf '   %5s %6d %9.2f %9.2f %7.3f %9.2f %9.2f %7.3f %11d %11d %21s %21s\n' "1/$F" $H "$dw" "$wall" \
    "$(awk -v a="$dw" -v b="$wall" 'BEGIN { print a / b }')" "$dc" "$cpu" \
    "$(awk -v a="$dc" -v b="$cpu" 'BEGIN { print a / b }')" "$dr" "$rss" "$ds" "$rs"
  pts+=("$H $dc $cpu $dr")
done
if [ ${#pts[@]} -ge 2 ]; then
  # CPU seconds grow as hosts^k: k from the two largest scales, extrapolated to 10,000 hosts
  read -r h1 d1 r1 m1 <<<"${pts[-2]}"
  read -r h2 d2 r2 m2 <<<"${pts[-1]}"
  awk -v h1="$h1" -v h2="$h2" -v d1="$d1" -v d2="$d2" -v r1="$r1" -v r2="$r2" -v m2="$m2" 'BEGIN {
    kd = log(d2 / d1) / log(h2 / h1); kr = log(r2 / r1) / log(h2 / h1); x = 10000 / h2
    printf "   CPU time grows as hosts^%.2f (dtsim) and hosts^%.2f (reference) between %d and %d hosts;\n", kd, kr, h1, h2
    printf "   extrapolated to 10,000 hosts: dtsim %.0f s, reference %.0f s of CPU; peak RSS about %.0f MB (linear)\n",
      d2 * x ^ kd, r2 * x ^ kr, m2 * x }'
fi
fi


if want 13; then
echo
echo "== 13. GPT-3 175B on 512 H100s, one step (tests/scenarios/gpt175b-h100.ini): dtsim run's CPU time"
echo "   (issue 50's target: under 2 minutes); then the same with every replica simulated (mirror_replicas = off)"
sc="${SCENARIOS:-$(dirname "$0")/../scenarios}/gpt175b-h100.ini"
c175=$(cpu "$DTSIM" run "$sc" --quiet --out "$work/g175")
c175f=$(cpu "$DTSIM" run "$sc" --quiet --out "$work/g175f" --set pipeline.mirror_replicas=off)
printf '   %s s of CPU (%s s with mirror_replicas = off); simulated step %s s, MFU %s, %s J\n' "$c175" "$c175f" \
  "$(json step_time_s "$work/g175/summary.json")" "$(json mfu "$work/g175/summary.json")" \
  "$(json it "$work/g175/summary.json")"
fi

if want 14; then
echo
echo "== 14. Megatron-LM 2019's framework host (model.framework = megatron-2019, results/megatron/megatron.ini):"
echo "   the 512-GPU torch-DDP row's CPU time with and without it (issue 49's target: the full"
echo "   reproduction no slower than 2x), and dtsim reproduce megatron --quick's (target: under 5 minutes)"
mini="$(dirname "$0")/../../results/megatron/megatron.ini"
meg512() {
  cpu "$DTSIM" run "$mini" --quiet --out "$work/$1" --set tensor.hidden=3072 --set tensor.heads=32 \
    --set tensor.layers=72 --set tensor.ranks=8 --set tensor.data_parallel=64 --set platform.hosts=512 "${@:2}"
}
c_host=$(meg512 m14)
c_none=$(meg512 m14n --set model.framework=none --set tensor.comm_hbm=off)
printf '   %s s of CPU with the host thread, %s s without (ratio %.2f); simulated step %s s against %s s\n' \
  "$c_host" "$c_none" "$(awk -v a="$c_host" -v b="$c_none" 'BEGIN { print a / b }')" \
  "$(json step_time_s "$work/m14/summary.json")" "$(json step_time_s "$work/m14n/summary.json")"
c_q=$(cpu "$DTSIM" reproduce megatron --quick --fresh --quiet --jobs 1 --out "$work/mq")
t_q=$(wall "$DTSIM" reproduce megatron --quick --fresh --quiet --jobs 1 --out "$work/mq2")
printf '   reproduce megatron --quick: %s s of CPU, %s s wall (--jobs 1)\n' "$c_q" "$t_q"
fi
