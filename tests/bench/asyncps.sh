#!/usr/bin/env bash
# asyncps.sh BIN: asynchronous parameter-server traffic at the paper's scale (Dean et al. 2012,
# Fig. 4's configurations from results/fig4/fig4.ini, sharded as `dtsim reproduce fig4` does: one
# shard per 8 replica machines). For each case, runs dtsim (BIN) and prints
#   asyncps: CASE replicas=R shards=S steps=N cpu_s=C ms_per_step=M rel_err=E rss_mb=X
# N: replica steps done (sandblaster: batches evaluated); C: user + system CPU seconds (the machine
# is shared: wall time moves by tens of percent); M = 1000 C / N; X: peak RSS; E: the case's
# simulated step time (summary.json's performance.step_time_s; sandblaster: its first batch's
# time_s) against the exact case of the same scale run earlier in this script, or n/a.
# Asserts nothing. Every Downpour case is Fig. 4's Downpour-Adagrad (overlap on, shards = R/8), timing
# only, 10 steps per replica, with SimGrid's exact-preserving settings FASTCFG (below; within 1e-6 of
# its defaults, tests/bench/README.md, Scale). The 200-replica and larger cases run on the preset with
# pooled rack uplinks (platform.uplink_routing = pooled), the platform the bank needs, so that each is
# compared with the exact model on the same platform. Cases:
#  downpour-20-exact, downpour-20
#                  20 replicas, 3 shards: exact, and with downpour.comm_quantum = Q (a smoke test)
#  downpour-200-exact
#                  Fig. 4's Downpour-Adagrad 200 (25 shards), 2,000 replica steps: exact
#  downpour-200    the same with the parameter-server bank (downpour.ps_bank = bank; algorithms/doc/
#                  downpour.md, Bank)
#  downpour-200-quantum, downpour-200-q50ms
#                  exact shards with downpour.comm_quantum = Q and 50 ms, the other approximation
#                  (algorithms/doc/downpour.md, Time quantum)
#  downpour-200-numerics
#                  downpour-200 with the reproduction's numerics on (the proxy MLP trains, at
#                  Adagrad's gamma 0.01: the default 0.1 diverges at 200 replicas within 17 s)
#  downpour-1000-horizon
#                  1,000 replicas (125 shards) with the bank, numerics off, for Fig. 4's whole horizon
#                  (900 simulated s, no step limit)
#  sandblaster-200-exact, sandblaster-200
#                  Fig. 4's Sandblaster L-BFGS with 200 replicas (25 shards; R/8 shards, batch 640 R):
#                  the first iteration, whose batches are fetch, portions and pushes; timing of the
#                  speech net, with the tiny proxy's numerics Sandblaster needs; on the pooled preset,
#                  exact with FASTCFG, then with the bank (sandblaster.ps_bank = bank; algorithms/
#                  doc/sandblaster.md, Bank) and BANKCFG; rel_err: the first batch's time against exact
#  sandblaster-2000
#                  the same with the bank at 2,000 replicas (250 shards)
#  sandblaster-R-dmodk
#                  the same, exact on the default preset (destination-routed uplinks), with R = SB_R
#                  replicas (2000). At 2,000 replicas hours of CPU per batch: only with SB=1
#  scale-10k       tests/bench/scale-10k.ini (10,000 hosts, 5 steps), exact: hours of CPU, only with
#                  FULL=1 and ONLY=scale-10k
#  scale-10k-bank  tests/bench/scale-10k-bank.ini (10,000 hosts, 9,900 whole replicas and the bank of
#                  100 shards, 5 steps); only with FULL=1
#  scale-10k-split-bank
#                  tests/bench/scale-10k-split-bank.ini (scale-10k's 1,100 replicas of 9 machines with
#                  the bank of 100 shards and its messages as waited puts, downpour.sends = waited,
#                  5 steps): the 10,000-host Downpour scenario with the bank; only with FULL=1
# BANKCFG, Sandblaster's bank's settings: FASTCFG's precisions with SimGrid's default network/optim:Lazy,
# whose selective update re-solves only the flows an event reaches: with the bank's control network,
# few for the coordinator's messages (the same results as network/optim:Full within 1e-9:
# algorithms/doc/sandblaster.md, Bank).
# Knobs (environment): Q (the quantum of downpour-20 and downpour-200-quantum, s; 0.02); QUICK=1 runs
# only the 20-replica cases; NOEXACT=1 skips downpour-200-exact and sandblaster-200-exact (minutes of CPU;
# then rel_err = n/a);
# ONLY=CASE runs CASE and its exact reference; SB=1 adds sandblaster-R-dmodk (SB_R=R replicas, 2000);
# FULL=1 adds scale-10k-bank and scale-10k-split-bank (and scale-10k with ONLY=scale-10k).
set -euo pipefail
BIN=${1:?usage: asyncps.sh BIN}
Q=${Q:-0.02} QUICK=${QUICK:-0} NOEXACT=${NOEXACT:-0} ONLY=${ONLY:-} SB=${SB:-0} SB_R=${SB_R:-2000} FULL=${FULL:-0}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
fig4="$here/../../results/fig4/fig4.ini"
FASTCFG="--cfg=network/optim:Full --cfg=surf/precision:1e-6 --cfg=maxmin/precision:1e-2"
BANKCFG="--cfg=network/optim:Lazy --cfg=surf/precision:1e-6 --cfg=maxmin/precision:1e-2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

json() { grep -m1 "\"$1\":" "$2" | sed 's/.*: //; s/,$//'; }
steps() { grep -m1 '^  "steps":' "$1" | sed 's/.*: //; s/,$//'; } # the run's, not tensor.steps' key
# wanted CASE: the case runs (ONLY is empty or names it, or CASE is the exact reference of ONLY's scale:
# X-exact for ONLY = X or X-SOMETHING, not for X0)
wanted() {
  [ -z "$ONLY" ] || [ "$ONLY" = "$1" ] ||
    { [ "${1%-exact}" != "$1" ] && { [ "$ONLY" = "${1%-exact}" ] || [ "${ONLY#"${1%-exact}"-}" != "$ONLY" ]; }; }
}
# timed CASE ARGS...: runs BIN run ARGS into $work/CASE, leaves "cpu_s rss_mb" in $work/CASE.time
timed() {
  local c=$1
  shift
  /usr/bin/time -f '%U %S %M' -o "$work/$c.raw" "$BIN" run "$@" --quiet --out "$work/$c" >"$work/log" 2>&1 ||
    { echo "asyncps: $c failed: $(tail -1 "$work/log")" >&2; return 1; }
  awk '{ printf "%.2f %d\n", $1 + $2, $3 / 1024 }' "$work/$c.raw" >"$work/$c.time"
}
# line CASE R S STEPS FIGURE [REFERENCE_FIGURE]
line() {
  local cpu rss
  read -r cpu rss <"$work/$1.time"
  awk -v c="$1" -v r="$2" -v s="$3" -v n="$4" -v cpu="$cpu" -v rss="$rss" -v f="$5" -v ref="${6:-}" 'BEGIN {
    e = ref == "" ? "n/a" : sprintf("%+.2e", (f - ref) / ref)
    printf "asyncps: %s replicas=%d shards=%d steps=%d cpu_s=%.2f ms_per_step=%.2f rel_err=%s rss_mb=%d\n",
           c, r, s, n, cpu, 1000 * cpu / n, e, rss }'
}

# Downpour-Adagrad with R replicas as Fig. 4 runs it, timing only: the numeric warmstart's keys go
# back to their defaults (a timing-only run has no numeric model to warm up).
downpour() { # downpour R STEPS ARGS...
  local r=$1 n=$2
  shift 2
  echo "$fig4" --set run.algorithm=downpour --set downpour.replicas="$r" --set downpour.ps_shards=$(((r + 7) / 8)) \
    --set downpour.adagrad=on --set run.max_steps="$n" --set model.numerics=off --set model.warmstart_steps=0 \
    --set model.warmstart_batch=32 --set model.warmstart_lr=0.05 "$@"
}
# dp CASE R STEPS REFCASE ARGS...: one Downpour case, its step time against REFCASE's (- for none)
dp() {
  local c=$1 r=$2 n=$3 ref=$4 refv=
  shift 4
  wanted "$c" || return 0
  # shellcheck disable=SC2046 # downpour echoes the arguments
  timed "$c" $(downpour "$r" "$n" "$@")
  [ "$ref" = - ] || [ ! -f "$work/$ref/summary.json" ] || refv=$(json step_time_s "$work/$ref/summary.json")
  line "$c" "$r" $(((r + 7) / 8)) "$(steps "$work/$c/summary.json")" \
    "$(json step_time_s "$work/$c/summary.json")" "$refv"
}

echo "== asyncps.sh: asynchronous parameter-server traffic ($("$BIN" --version | head -1); $(nproc) cores)"

# shellcheck disable=SC2086 # FASTCFG holds several options
dp downpour-20-exact 20 10 - $FASTCFG
# shellcheck disable=SC2086
dp downpour-20 20 10 downpour-20-exact --set downpour.comm_quantum="$Q" $FASTCFG
[ "$QUICK" = 1 ] && exit 0

POOLED="--set platform.uplink_routing=pooled"
if [ "$NOEXACT" != 1 ]; then
  # shellcheck disable=SC2086
  dp downpour-200-exact 200 10 - $POOLED --set downpour.ps_bank=exact $FASTCFG
fi
# shellcheck disable=SC2086
dp downpour-200 200 10 downpour-200-exact $POOLED --set downpour.ps_bank=bank $FASTCFG
# shellcheck disable=SC2086
dp downpour-200-quantum 200 10 downpour-200-exact $POOLED --set downpour.ps_bank=exact \
  --set downpour.comm_quantum="$Q" $FASTCFG
# shellcheck disable=SC2086
dp downpour-200-q50ms 200 10 downpour-200-exact $POOLED --set downpour.ps_bank=exact \
  --set downpour.comm_quantum=0.05 $FASTCFG

if wanted downpour-200-numerics; then
  # shellcheck disable=SC2086
  timed downpour-200-numerics "$fig4" --set run.algorithm=downpour --set downpour.replicas=200 \
    --set downpour.ps_shards=25 --set downpour.adagrad=on --set downpour.adagrad_gamma=0.01 --set run.max_steps=10 $POOLED \
    --set downpour.ps_bank=bank $FASTCFG
  line downpour-200-numerics 200 25 "$(steps "$work/downpour-200-numerics/summary.json")" \
    "$(json step_time_s "$work/downpour-200-numerics/summary.json")"
fi
# shellcheck disable=SC2086
dp downpour-1000-horizon 1000 0 - $POOLED --set downpour.ps_bank=bank $FASTCFG

# Fig. 4's Sandblaster with R replicas, one L-BFGS iteration: FASTCFG, or BANKCFG with the bank
sandblaster() { # sandblaster R ARGS...
  local r=$1 cfg=$FASTCFG
  shift
  case " $* " in *" sandblaster.ps_bank=bank "*) cfg=$BANKCFG ;; esac
  # shellcheck disable=SC2086 # the settings hold several options
  echo "$fig4" --set run.algorithm=sandblaster --set sandblaster.replicas="$r" \
    --set sandblaster.ps_shards=$(((r + 7) / 8)) --set data.train=$((640 * r)) --set run.max_steps=1 "$@" $cfg
}
first_batch() { awk -F, 'NR == 2 { print $4 }' "$1"; } # batches.csv's first time_s
# sbl CASE R REFCASE ARGS...: one Sandblaster case, its first batch's time against REFCASE's (- for none)
sbl() {
  local c=$1 r=$2 ref=$3 refv=
  shift 3
  wanted "$c" || return 0
  # shellcheck disable=SC2046 # sandblaster echoes the arguments
  timed "$c" $(sandblaster "$r" "$@")
  [ "$ref" = - ] || [ ! -f "$work/$ref/batches.csv" ] || refv=$(first_batch "$work/$ref/batches.csv")
  line "$c" "$r" $(((r + 7) / 8)) "$(($(wc -l <"$work/$c/batches.csv") - 1))" \
    "$(first_batch "$work/$c/batches.csv")" "$refv"
}
if [ "$NOEXACT" != 1 ]; then
  # shellcheck disable=SC2086
  sbl sandblaster-200-exact 200 - $POOLED --set sandblaster.ps_bank=exact
fi
# shellcheck disable=SC2086
sbl sandblaster-200 200 sandblaster-200-exact $POOLED --set sandblaster.ps_bank=bank
# shellcheck disable=SC2086
sbl sandblaster-2000 2000 - $POOLED --set sandblaster.ps_bank=bank
if [ "$SB" = 1 ]; then
  sbl "sandblaster-$SB_R-dmodk" "$SB_R" - --set sandblaster.ps_bank=exact
fi

if [ "$FULL" = 1 ] && [ "$ONLY" = scale-10k ]; then
  timed scale-10k "$here/scale-10k.ini"
  line scale-10k 1100 100 "$(steps "$work/scale-10k/summary.json")" \
    "$(json step_time_s "$work/scale-10k/summary.json")"
fi
if [ "$FULL" = 1 ] && wanted scale-10k-bank; then
  timed scale-10k-bank "$here/scale-10k-bank.ini"
  line scale-10k-bank 9900 100 "$(steps "$work/scale-10k-bank/summary.json")" \
    "$(json step_time_s "$work/scale-10k-bank/summary.json")"
fi
if [ "$FULL" = 1 ] && wanted scale-10k-split-bank; then
  timed scale-10k-split-bank "$here/scale-10k-split-bank.ini"
  line scale-10k-split-bank 1100 100 "$(steps "$work/scale-10k-split-bank/summary.json")" \
    "$(json step_time_s "$work/scale-10k-split-bank/summary.json")"
fi
