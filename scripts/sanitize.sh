#!/usr/bin/env bash
# Runs the test suite with AddressSanitizer (and LeakSanitizer) compiled into
# avtool, its libraries and the tests — the end-to-end tests then run the
# instrumented avtool binary, so every probe, remux, transcode, merge, concat
# and fill-silence the suite does is checked for memory errors and leaks
# (a leak makes avtool exit non-zero, failing the test). Third-party leaks we
# cannot fix are listed, with reasons, in scripts/lsan.supp.
#
#   scripts/sanitize.sh [FILTER]   FILTER: a `swift test --filter` pattern (default: all tests)
#   scripts/sanitize.sh --quick    CI's short run: avtool and the fuzz target from the fuzzer's
#                                  build (scripts/lib/instrumented-build.sh, ASan); the end-to-end suites about bad inputs, timestamp
#                                  jumps, the fuzz corpus, faults, open files and signals run against them
#                                  from the ordinary test build (run `swift build --build-tests` first)
#
# Builds in .build-asan (--quick: .build-fuzz; the normal .build is left alone). Prints one line:
#   sanitize: address, <n> tests (<cases> cases) passed|FAILED in <s> s (build <b> s)
set -euo pipefail
# All in a function: bash reads a script as it runs, and this one runs long
# enough to be edited meanwhile.
main() {
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = --quick ]; then quick=1; shift; fi
filter="${1:-}"
scripts/setup-debian.sh
Tests/Fixtures/make-fixtures.sh .fixtures >/dev/null
Tests/Fixtures/get-real-media.sh .real-media >/dev/null

began=$SECONDS
if [ "$quick" -eq 1 ]; then
  # The fuzzer's build (already there when scripts/fuzz.sh ran first).
  source scripts/lib/instrumented-build.sh
  instrumented_build
  bin_dir="$instrumented_build_path/debug"
  # Its fuzz target replays the corpus for FuzzCorpusTests instead of fuzzing.
  export AVTOOL_FUZZ_REPLAY=1
else
  swift build --build-tests --sanitize=address --build-path .build-asan 2>&1 \
    | { grep -v "Cannot export local symbol" || true; } | tail -n 3 >&2
fi
built=$((SECONDS - began))

# A trap is reported by ASan; the Swift backtracer would only slow it down.
export SWIFT_BACKTRACE=enable=no
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
log=.build-asan/sanitize.log
status=0
# Full unwinding at each allocation, 8 frames deep: libavcodec has no frame
# pointers (the fast unwinder stops inside it), and the suppressions in
# lsan.supp name frames below it. 8 frames keep the cost close to the fast one.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:fast_unwind_on_malloc=0:malloc_context_size=8}"
if [ "$quick" -eq 1 ]; then
  mkdir -p .build-asan
  # (Whole suite names: BatchResourceTests' thousand jobs take half an hour under ASan.)
  AVTOOL_BIN="$PWD/$bin_dir/avtool" swift test --skip-build \
    --filter "${filter:-\.(BadInputTests|TimestampJumpTests|FuzzCorpusTests|FaultTests|ResourceTests|SignalTests|RepairTests|CutTests)(/|\$)}" >"$log" 2>&1 || status=$?
else
  swift test --skip-build --sanitize=address --build-path .build-asan ${filter:+--filter "$filter"} >"$log" 2>&1 || status=$?
fi
took=$((SECONDS - began - built))

# (-a: the log holds sanitizer output; || true: no match is not an error here)
tests=$( (grep -aE "^. Test run with [0-9]+ tests?" "$log" || true) | grep -oE "with [0-9]+ tests?" | awk '{ n += $2 } END { print n + 0 }')
cases=$( (grep -aE "^✔ Test .* passed" "$log" | grep -v "^✔ Test run with" || true) | awk '{ if (match($0, /with [0-9]+ test cases/)) { split(substr($0, RSTART, RLENGTH), w, " "); n += w[2] } else n += 1 } END { print n + 0 }')
# A filter that matches nothing passes nothing.
if [ "$status" -eq 0 ] && [ "$tests" -eq 0 ]; then
  echo "sanitize: no test matched the filter" >&2
  status=1
fi
if [ "$status" -ne 0 ]; then
  grep -aE "ERROR: AddressSanitizer|ERROR: LeakSanitizer|SUMMARY: |Fatal error|✘ Test .* (failed|recorded)" "$log" | head -n 30 >&2 || true
  echo "sanitize: address, $tests tests ($cases cases passed) FAILED in $took s (build $built s); log: $log"
  exit "$status"
fi
echo "sanitize: address$([ "$quick" -eq 1 ] && echo " (quick: avtool only)"), $tests tests ($cases cases) passed in $took s (build $built s)"
}
main "$@"
