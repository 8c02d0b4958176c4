#!/usr/bin/env bash
# Transcodes one long recording on a Slurm cluster: N chunk tasks (a job
# array, recipes/slurm/transcode-chunks.sbatch), then the join as a job that
# runs once every task has succeeded.
#   recipes/slurm/submit-transcode-chunks.sh [--wait] IN OUT N [DIR] [-- transcode options, e.g. --crf 22 --preset slow]
# DIR (default OUT.chunks) holds the chunks and their ledger; it is kept, so
# after a failed task the same command encodes only the chunks still
# missing and joins again. The video options go to the chunk tasks (every
# task must get the same ones); the join takes them from DIR.
# Prints the array's job id and the join's. --wait blocks until the join
# has ended (sbatch --wait) and exits with its status.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
wait=()
if [[ ${1:-} == --wait ]]; then wait=(--wait); shift; fi
usage="usage: submit-transcode-chunks.sh [--wait] IN OUT N [DIR] [-- options]"
input=${1:?$usage}
output=${2:?$usage}
n=${3:?$usage}
shift 3
dir=$output.chunks
if [[ $# -gt 0 && $1 != -- ]]; then dir=$1; shift; fi
[[ ${1:-} == -- ]] && shift
abs() { [[ $1 == /* ]] && echo "$1" || echo "$PWD/$1"; }
input=$(abs "$input"); output=$(abs "$output"); dir=$(abs "$dir")
array=$(sbatch --parsable --array=1-"$n" "$here/transcode-chunks.sbatch" "$input" "$dir" "$@")
echo "chunks: job $array (array 1-$n)"
join=$(sbatch --parsable "${wait[@]}" --dependency=afterok:"$array" --job-name=avtool-join \
    --output=avtool-join-%j.log --wrap "\"${AVTOOL:-avtool}\" transcode --join \"$dir\" \"$output\" -y --quiet")
echo "join: job $join"
