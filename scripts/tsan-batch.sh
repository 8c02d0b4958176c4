#!/usr/bin/env bash
# The batch tests (recipe/ledger units and end-to-end runs, including 1,000
# parallel jobs) with thread sanitizer: the test bundle and the avtool binary
# it runs are both built with -sanitize=thread (in .build-tsan). Any report
# from any avtool process fails the script.
#   scripts/tsan-batch.sh
set -euo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d /tmp/avtool-tsan.XXXXXX)
start=$(date +%s)
swift build --build-tests --sanitize=thread --scratch-path .build-tsan 2>&1 | tail -1
TSAN_OPTIONS="log_path=$logs/report halt_on_error=0" \
    swift test --skip-build --sanitize=thread --scratch-path .build-tsan --filter Batch 2>&1 | tail -3
reports=$(cat "$logs"/report.* 2>/dev/null | grep -c "WARNING: ThreadSanitizer" || true)
echo "thread sanitizer: $reports report(s) in $(( $(date +%s) - start )) s; logs in $logs"
[[ $reports -eq 0 ]]
