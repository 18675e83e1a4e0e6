#!/usr/bin/env bash
# rfx against scikit-learn, side by side in one run; writes results/performance.md (issue 10).
#   bench/compare/run.sh            from the workspace root (make bench calls it)
# Environment: CARGO_TARGET_DIR (where the release binaries are), RFX_DATA_MIRROR / RFX_DATA_DIR (MNIST),
# RFX_BENCH_QUICK=0 skips timing `rfx run --quick` of every experiment (about 20 s) for the report,
# RFX_BENCH_CRITERION_LOG=FILE includes that criterion output in the report,
# COMPARE_ARGS="--n 2000 ..." passes sizes to compare.py (defaults: n = 10^4, m = 4096, 3 repetitions).
set -euo pipefail
cd "$(dirname "$0")/../.."
here=bench/compare
venv=${RFX_BENCH_VENV:-$here/.venv}
target=${CARGO_TARGET_DIR:-target}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
# scikit-learn and numpy from PyPI (pinned, so that reruns compare against the same code)
"$venv/bin/pip" install -q "scikit-learn==1.9.1" "numpy==2.4.6"
cargo build --release --locked -p rfx-experiments --bins
quick_args=()
if [ "${RFX_BENCH_QUICK:-1}" = 1 ]; then
  log=$(mktemp)
  out=$(mktemp -d)
  before=$(cut -d' ' -f1-3 /proc/loadavg)
  start=$(date +%s.%N)
  "$target/release/rfx" fetch --all >/dev/null
  start=$(date +%s.%N)
  "$target/release/rfx" run --quick --no-progress --out "$out" \
    $(ls experiments/*.toml | grep -v '/Cargo.toml$') >/dev/null
  end=$(date +%s.%N)
  echo "wall=$(echo "$end - $start" | bc) $before $(cut -d' ' -f1-3 /proc/loadavg)" >"$log"
  rm -rf "$out"
  quick_args=(--quick-log "$log")
fi
crit_args=()
if [ -n "${RFX_BENCH_CRITERION_LOG:-}" ]; then
  crit_args=(--criterion-log "$RFX_BENCH_CRITERION_LOG")
fi
# Each library in its fair environment (issue 26): the machine sets OPENBLAS_CORETYPE=Haswell because the system
# OpenBLAS that rfx links misbehaves on this CPU without it; numpy's bundled OpenBLAS needs no override and is
# slowed by it. So numpy and scikit-learn (this Python process) run without the variable, and compare.py puts
# the machine's value back for every rfx-perf it starts (RFX_BENCH_RFX_CORETYPE).
RFX_BENCH_RFX_CORETYPE="${OPENBLAS_CORETYPE-}" RFX_PERF_NOTE=$here/notes.md \
  env -u OPENBLAS_CORETYPE "$venv/bin/python" $here/compare.py --rfx-perf "$target/release/rfx-perf" \
  "${quick_args[@]}" "${crit_args[@]}" ${COMPARE_ARGS:-}
