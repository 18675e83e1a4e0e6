#!/usr/bin/env bash
# Submit experiments as a Slurm job array of N shards plus a merge job that runs when all shards succeed.
#
#   scripts/slurm/submit.sh experiments/x.toml [more.toml ...] --shards 32 [options] [-- sbatch options]
#
# Options:
#   --shards N          number of shards (array tasks 0..N-1); required
#   --cpus C            CPUs per task (passed to rfx --threads; default 1)
#   --out DIR           results root (default: results, or results/quick with --quick)
#   --quick             the experiments' [quick] variant
#   --times-from DIR    recorded cell times for the partition (e.g. results); every task uses the same
#   --array LIST        only these indices (e.g. 3 or 1,5-7): resubmit failed shards; a new merge job follows
#   --rfx PATH          the rfx binary (default: target/release/rfx, else rfx on PATH)
#   --logs DIR          Slurm output files (default: slurm-logs)
# Anything after `--` goes to both sbatch calls (e.g. -- --partition=big --time=4:00:00 --mem=8G).
# Prints the array and merge job ids. The folder must be on a file system every node sees.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
files=() shards="" cpus=1 out="" quick="" times="" array="" rfx="" logs="slurm-logs" extra=()
die() { echo "submit.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --shards) shards="${2:?}"; shift 2 ;;
    --cpus) cpus="${2:?}"; shift 2 ;;
    --out) out="${2:?}"; shift 2 ;;
    --quick) quick=1; shift ;;
    --times-from) times="${2:?}"; shift 2 ;;
    --array) array="${2:?}"; shift 2 ;;
    --rfx) rfx="${2:?}"; shift 2 ;;
    --logs) logs="${2:?}"; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -*) die "unknown option $1 (see the comment at the top of $0)" ;;
    *) files+=("$1"); shift ;;
  esac
done
[ ${#files[@]} -gt 0 ] || die "no experiment files; usage: $0 experiments/x.toml --shards N"
[[ "$shards" =~ ^[1-9][0-9]*$ ]] || die "--shards N: expected a whole number ≥ 1, got '${shards}'"
[[ "$cpus" =~ ^[1-9][0-9]*$ ]] || die "--cpus C: expected a whole number ≥ 1, got '${cpus}'"
if [ -z "$rfx" ]; then
  if [ -x target/release/rfx ]; then rfx="$PWD/target/release/rfx"; else rfx="$(command -v rfx || true)"; fi
fi
[ -x "$rfx" ] || die "no rfx binary (build it: cargo build --release -p rfx-experiments, or pass --rfx PATH)"
rfx="$(cd "$(dirname "$rfx")" && pwd)/$(basename "$rfx")"
command -v sbatch >/dev/null || die "sbatch not found (is this a Slurm login node?)"
[ -n "$out" ] || { if [ -n "$quick" ]; then out="results/quick"; else out="results"; fi; }

run_args=(--out "$out")
[ -n "$quick" ] && run_args+=(--quick)
[ -n "$times" ] && run_args+=(--times-from "$times")
# Check the files (both variants) and read the experiments' names before submitting anything.
dirs=()
for f in "${files[@]}"; do
  line="$("$rfx" validate "$f")" || exit 2
  name="$(sed -n 's/.*experiment `\([^`]*\)`.*/\1/p' <<< "$line")"
  [ -n "$name" ] || die "cannot read the experiment name of $f from: $line"
  dirs+=("$out/$name")
done
mkdir -p "$logs"
export RFX="$rfx" RFX_SHARDS="$shards" RFX_RUN_ARGS="${run_args[*]}"
array_job="$(sbatch --parsable --chdir="$PWD" --array="${array:-0-$((shards - 1))}" \
  --cpus-per-task="$cpus" --output="$logs/%x-%A_%a.out" --export=ALL "${extra[@]}" \
  "$here/shard.sbatch" "${files[@]}")"
array_job="${array_job%%;*}"
merge_job="$(sbatch --parsable --chdir="$PWD" --dependency="afterok:$array_job" --kill-on-invalid-dep=yes \
  --output="$logs/%x-%j.out" --export=ALL "${extra[@]}" "$here/merge.sbatch" "${dirs[@]}")"
merge_job="${merge_job%%;*}"
echo "array job $array_job (shards ${array:-0-$((shards - 1))} of $shards), merge job $merge_job (after all succeed)"
echo "watch: squeue -j $array_job,$merge_job    logs: $logs/"
