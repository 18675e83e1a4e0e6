#!/usr/bin/env bash
# `make test-cluster`: the same quick experiments run whole, as 3 shards through GNU parallel, and as a
# Slurm job array of 4 shards plus the dependent merge job on a one-node Slurm on this machine; each merged
# result must be identical to the whole run (`rfx compare --identical`: every metric, timings aside). Then
# a shard killed mid-way (scancel of one array task) is resubmitted alone: it must keep its finished rows,
# compute only the rest, and the merge must again equal the whole run.
# Needs root and Debian's slurm-wlm, munge and parallel (.ci/run installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
RFX="$(cd "$(dirname "${RFX:-target/debug/rfx}")" && pwd)/$(basename "${RFX:-target/debug/rfx}")"
T="$(mktemp -d)"
export RFX_SLURM_DIR="$T/slurm"
cleanup() { "$ROOT/scripts/slurm/local-cluster.sh" stop || true; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "cluster-test: FAILED: $*" >&2; exit 1; }
step() { echo "cluster-test: $*"; }
files=(experiments/gegenbauer-vs-taylor.toml experiments/arccos-condition-number.toml)
names=(gegenbauer-vs-taylor arccos-condition-number)

step "whole run"
"$RFX" run --quick --no-progress --out "$T/single" "${files[@]}" >/dev/null

step "GNU parallel, 3 shards"
parallel --will-cite --halt now,fail=1 -j 3 \
  "$RFX" run --quick --no-progress --threads 1 --out "$T/parallel" --shard {}/3 "${files[@]}" ::: 0 1 2 >/dev/null
"$RFX" merge "${names[@]/#/$T/parallel/}"
"$RFX" compare --identical "$T/single" "$T/parallel"

step "Slurm: starting a one-node cluster"
eval "$(scripts/slurm/local-cluster.sh start)"
wait_jobs() { # wait until the given job ids have left the queue (at most 180 s)
  for _ in $(seq 900); do
    [ -z "$(squeue -h -j "$1" 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  squeue >&2; fail "jobs $1 still queued after 180 s"
}
ids() { sed -n 's/^array job \([0-9]*\) .*merge job \([0-9]*\) .*/\1,\2/p'; }

step "Slurm: array of 4 shards + merge job"
# (printed, then parsed: `tee /dev/stderr` would reopen, and so truncate, a log file that stderr points to)
submitted="$(scripts/slurm/submit.sh "${files[@]}" --shards 4 --quick --out "$T/slurm-out" --rfx "$RFX" \
  --logs "$T/logs")"
echo "$submitted"
jobs="$(ids <<< "$submitted")"
[ -n "$jobs" ] || fail "submit.sh printed no job ids"
wait_jobs "$jobs"
for n in "${names[@]}"; do
  [ -f "$T/slurm-out/$n/cells.csv" ] || { cat "$T"/logs/* >&2; fail "the merge job wrote no $n/cells.csv"; }
done
"$RFX" compare --identical "$T/single" "$T/slurm-out"

step "Slurm: a shard killed mid-way and resubmitted alone"
cat > "$T/st.toml" <<'TOML'
[experiment]
name = "st"
kind = "selftest"
seed = 11

[sweep]
dim = [1, 2, 3, 4, 5, 6, 7, 8]
seed = [0, 1, 2]

[selftest]
draws = 2000
sleep_ms = 1000
TOML
"$RFX" run --no-progress --out "$T/st-single" "$T/st.toml" >/dev/null
jobs="$(scripts/slurm/submit.sh "$T/st.toml" --shards 4 --out "$T/st-out" --rfx "$RFX" --logs "$T/logs" | ids)"
array="${jobs%%,*}"
shard1="$T/st-out/st/cells.shard-1-of-4.csv"
rows() { if [ -f "$1" ]; then tail -n +2 "$1" | grep -c . || true; else echo 0; fi; }
for _ in $(seq 600); do [ "$(rows "$shard1")" -ge 2 ] && break; sleep 0.1; done
scancel "${array}_1"
wait_jobs "$jobs"
kept="$(rows "$shard1")"
[ "$kept" -ge 2 ] && [ "$kept" -lt 6 ] || fail "shard 1 had $kept of 6 rows when cancelled (expected 2 to 5)"
[ ! -f "$T/st-out/st/cells.csv" ] || fail "the merge ran although shard 1 was cancelled"
# complete rows: the 9 fields of a selftest row (dim, seed, mean, scaled, note, time_s, commit, load, cpu)
before="$(tail -n +2 "$shard1" | grep -E '^[^,]+(,[^,]*){8}$' || true)"
step "shard 1 cancelled with $kept finished rows; resubmitting index 1"
jobs="$(scripts/slurm/submit.sh "$T/st.toml" --shards 4 --out "$T/st-out" --rfx "$RFX" --logs "$T/logs" \
  --array 1 | ids)"
wait_jobs "$jobs"
log="$T/logs/rfx-shard-${jobs%%,*}_1.out"
computed="$(sed -n 's/.*shard 1\/4: 6 cells (\([0-9]*\) computed, \([0-9]*\) already done.*/\1 \2/p' "$log")"
done_before="$(echo "$before" | grep -c . || true)"
[ "$computed" = "$((6 - done_before)) $done_before" ] \
  || { cat "$log" >&2; fail "resubmitted shard 1 computed/kept '$computed', expected '$((6 - done_before)) $done_before'"; }
while IFS= read -r row; do
  [ -z "$row" ] || grep -qxF "$row" "$T/st-out/st/cells.csv" || fail "finished row not kept verbatim: $row"
done <<< "$before"
"$RFX" compare --identical "$T/st-single" "$T/st-out"
step "ok"
