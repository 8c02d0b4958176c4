#!/usr/bin/env bash
# Produces the figures of docs/reliability.md, each from a run made now:
#   fuzzing (scripts/fuzz.sh), the fault, signal, bad-input, timestamp-jump
#   and fuzz-corpus tests, the hostile-timestamp property tests, the
#   sanitizer run (scripts/sanitize.sh), the batch's kill and descriptor
#   tests, the batch under thread sanitizer (scripts/tsan-batch.sh) and,
#   with --memory, the 2-hour memory benchmark (bench/memory-2h.sh).
#
#   scripts/reliability.sh [--fuzz-seconds N] [--memory] [--no-sanitize] [--no-tsan]
#     --fuzz-seconds N   how long to fuzz (default 60, as CI; the table in the docs used 3600)
#     --memory           also run bench/memory-2h.sh (generates ~1 GB of inputs, a few minutes)
#     --no-sanitize      skip the AddressSanitizer run (it builds everything a second time)
#     --no-tsan          skip the ThreadSanitizer batch run (a third build, ~5 minutes)
#
# Prints a Markdown table (the one in docs/reliability.md) on stdout.
set -euo pipefail
# All in a function: bash reads a script as it runs, and this one runs long
# enough to be edited meanwhile.
main() {
cd "$(dirname "$0")/.."
fuzz_seconds=60 memory=0 sanitize=1 tsan=1
while [ $# -gt 0 ]; do
  case "$1" in
    --fuzz-seconds) fuzz_seconds="$2"; shift 2 ;;
    --memory) memory=1; shift ;;
    --no-sanitize) sanitize=0; shift ;;
    --no-tsan) tsan=0; shift ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
scripts/setup-debian.sh
Tests/Fixtures/make-fixtures.sh .fixtures >/dev/null
Tests/Fixtures/get-real-media.sh .real-media >/dev/null

fuzz="not run (--fuzz-seconds 0)"
[ "$fuzz_seconds" -gt 0 ] && { fuzz=$(scripts/fuzz.sh "$fuzz_seconds" | tail -n 1) || true; }

swift build --build-tests >&2
# Test cases passed per suite filter: "<passed> of <cases>".
cases() {
  local log status=0
  log=$(mktemp)
  swift test --skip-build --filter "$1" >"$log" 2>&1 || status=$?
  local passed failed
  passed=$( (grep -aE "^✔ Test .* passed" "$log" | grep -v "^✔ Test run with" || true) | awk '{ if (match($0, /with [0-9]+ test cases/)) { split(substr($0, RSTART, RLENGTH), w, " "); n += w[2] } else n += 1 } END { print n + 0 }')
  failed=$( (grep -aE "^✘ Test .* failed" "$log" | grep -v "^✘ Test run with" || true) | awk '{ if (match($0, /with [0-9]+ test cases/)) { split(substr($0, RSTART, RLENGTH), w, " "); n += w[2] } else n += 1 } END { print n + 0 }')
  rm -f "$log"
  echo "$passed of $((passed + failed))$([ "$status" -eq 0 ] || echo ' (FAILURES)')"
}
faults=$(cases "FaultTests|avtoolTests\.ResourceTests")
signals=$(cases "SignalTests")
badinput=$(cases "BadInputTests|ReferencingInputTests|TimestampJumpTests|FuzzCorpusTests|MemoryIOTests|ReportTextTests")
hostile=$(cases "HostileTimestampTests")
batchkill=$(cases "killedBatchFinishesOnRerun|aFailingJobDoesNotStopTheOthers")
batchfds=$(cases "BatchResourceTests")
corpus=$(ls Tests/Fuzz/corpus | wc -l)
reproducers=$(ls Tests/Fuzz/crashes | grep -vc '^\.' || true)
# Random sequences the hostile-timestamp properties check per run (their count: arguments).
sequences=$(grep -oE "count: [0-9_]+" Tests/SyncTests/HostileTimestampTests.swift | tr -d '_' | awk '{ n += $2 } END { print n }')

san="not run (--no-sanitize)"
[ "$sanitize" -eq 1 ] && { san=$(scripts/sanitize.sh | tail -n 1) || true; }
tsanrun="not run (--no-tsan)"
[ "$tsan" -eq 1 ] && { tsanrun=$(scripts/tsan-batch.sh | tail -n 1) || true; }
mem="not run (pass --memory)"
[ "$memory" -eq 1 ] && { mem=$(bench/memory-2h.sh | tail -n 1) || true; }

cat <<TABLE
| what | figure (this run) | how |
|---|---|---|
| fuzzing (libFuzzer + ASan + LSan) | ${fuzz#fuzz: } | \`scripts/fuzz.sh $fuzz_seconds\` |
| fuzz reproducers (crashes, hangs, leaks found → fixed, replayed) | $reproducers | \`Tests/Fuzz/crashes\`, \`swift test --filter FuzzCorpusTests\` |
| bad inputs replayed in the tests | $corpus fuzz-made inputs × (replayer, probe, remux, fill-silence); $badinput test cases passed | \`swift test --filter "BadInputTests\|ReferencingInputTests\|TimestampJumpTests\|FuzzCorpusTests\|MemoryIOTests\|ReportTextTests"\` |
| hostile timestamp sequences through the core | $sequences random sequences per run; $hostile properties passed | \`swift test --filter HostileTimestampTests\` |
| faults survived (5 writing verbs) | $faults fault cases passed, $signals signal cases passed | \`swift test --filter "FaultTests\|ResourceTests\|SignalTests"\` |
| sanitizer run (whole suite) | ${san#sanitize: } | \`scripts/sanitize.sh\` |
| memory, 2 h vs 10 min | $mem | \`bench/memory-2h.sh\` |
| batch: killed (SIGKILL, SIGINT) or failing jobs, then rerun | $batchkill cases passed | \`swift test --filter "killedBatchFinishesOnRerun\|aFailingJobDoesNotStopTheOthers"\` |
| batch: file descriptors over 1,000 jobs (\`ulimit -n 64\`) | $batchfds cases passed | \`swift test --filter BatchResourceTests\` |
| batch under ThreadSanitizer | ${tsanrun#thread sanitizer: } | \`scripts/tsan-batch.sh\` |
TABLE
}
main "$@"
