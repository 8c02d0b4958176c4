#!/usr/bin/env bash
# Runs RECIPE on a Slurm cluster as N shards (a job array), then merges the
# shards' ledgers into the recipe's main ledger once every shard has ended.
#   recipes/slurm/submit.sh RECIPE N [avtool batch options, e.g. --base DIR]
# Prints the array's job id and the merge job's id. Pass --wait as the first
# option to block until the merge is done (sbatch --wait).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
wait=()
if [[ ${1:-} == --wait ]]; then wait=(--wait); shift; fi
recipe=${1:?usage: submit.sh [--wait] RECIPE N [options]}
n=${2:?usage: submit.sh [--wait] RECIPE N [options]}
shift 2
array=$(sbatch --parsable --array=0-$((n - 1)) "$here/avtool-batch.sbatch" "$recipe" "$@")
echo "shards: job $array (array 0-$((n - 1)))"
merge=$(sbatch --parsable "${wait[@]}" --dependency=afterany:"$array" --job-name=avtool-merge \
    --output=avtool-merge-%j.log --wrap "\"${AVTOOL:-avtool}\" batch \"$recipe\" --merge-ledgers $*")
echo "merge: job $merge"
