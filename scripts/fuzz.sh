#!/usr/bin/env bash
# Fuzzes avtool's probe and remux paths with libFuzzer + AddressSanitizer
# (scripts/lib/instrumented-build.sh, a build shared with sanitize.sh --quick)
# (and LeakSanitizer): Sources/avtool-fuzz parses each input as boxes and
# encodes them back (the ISOBMFF round trip; AVTOOL_FUZZ_ENTRY=isobmff runs
# only that), opens each input from memory,
# probes every packet, then remuxes it, fills its audio gaps or joins it to
# itself (concat) through the timestamp core into an in-memory muxer, and
# lays out its index with every kind of tag edit (the bulk remux's); an input
# that does not open (an MP4 without its index), and every third one, is walked
# as `repair` rebuilds such a file, with fixed PCM and data-track references
# (Tests/Fuzz/references, the GoPro and iPhone recordings). Seeds
# are the test fixtures and the real recordings of .real-media (whole when
# small, else their first 32 KiB) and
# Tests/Fuzz; the growing corpus is kept in .fuzz/corpus between runs.
#
#   scripts/fuzz.sh [SECONDS]     default 60; CI runs 60, docs/reliability.md the long run
#
# Prints libFuzzer's progress to .fuzz/fuzz.log and one summary line:
#   fuzz: <executions> executions in <s> s (<corpus> corpus inputs, <cov> coverage points), <n> crashes
# Exits non-zero when libFuzzer finds a crash, a hang (> 10 s on one input),
# a leak or a memory blow-up; the reproducer is in .fuzz/artifacts/. Replay
# one with the normal build: swift build --product avtool-fuzz && .build/debug/avtool-fuzz FILE
set -euo pipefail
# All in a function: bash reads a script as it runs, and this one runs long
# enough to be edited meanwhile.
main() {
cd "$(dirname "$0")/.."
seconds="${1:-60}"
# libFuzzer reads 0 as "forever".
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "usage: scripts/fuzz.sh SECONDS (a positive number)" >&2; exit 2; }
scripts/setup-debian.sh
Tests/Fixtures/make-fixtures.sh .fixtures >/dev/null

source scripts/lib/instrumented-build.sh
build=$instrumented_build_path
echo "building the fuzz target (libFuzzer + AddressSanitizer) in $build" >&2
instrumented_build
bin="$build/debug/avtool-fuzz"

rm -rf .fuzz/seeds
mkdir -p .fuzz/seeds .fuzz/corpus .fuzz/artifacts
# Seeds: the generated fixtures and, when fetched (Tests/Fixtures/get-real-media.sh),
# the real recordings nobody here made (phones, HandBrake, cameras).
for f in .fixtures/* .real-media/*; do
  [ -f "$f" ] || continue
  case "$f" in *.txt) continue ;; esac
  size=$(stat -c %s "$f")
  [ "$size" -gt 0 ] || continue
  if [ "$size" -le 102400 ]; then
    cp "$f" ".fuzz/seeds/$(basename "$(dirname "$f")")-$(basename "$f")"
  else
    head -c 32768 "$f" >".fuzz/seeds/head32k-$(basename "$(dirname "$f")")-$(basename "$f")"
  fi
done
# The committed sample of earlier runs and every reproducer found so far.
cp Tests/Fuzz/corpus/* .fuzz/seeds/ 2>/dev/null || true
for f in Tests/Fuzz/crashes/*; do [ -f "$f" ] && cp "$f" .fuzz/seeds/; done

# The Swift runtime's backtracer would stall on a trap; libFuzzer reports it.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
status=0
touch .fuzz/.started
"$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
  -print_final_stats=1 -artifact_prefix=.fuzz/artifacts/ \
  .fuzz/corpus .fuzz/seeds >.fuzz/fuzz.log 2>&1 || status=$?

# (-a: the log may hold binary; || true: a missing figure prints as '?')
execs=$( (grep -ao 'stat::number_of_executed_units: [0-9]*' .fuzz/fuzz.log || true) | awk '{print $2}' | tail -1)
took=$( (grep -ao 'Done [0-9]* runs in [0-9]* second' .fuzz/fuzz.log || true) | awk '{print $5}' | tail -1)
cov=$( (grep -aoE '#[0-9]+.*cov: [0-9]+' .fuzz/fuzz.log || true) | tail -1 | grep -oE '[0-9]+$' || true)
corpus=$(ls .fuzz/corpus | wc -l)
# Only what this run found (earlier reproducers stay until moved to Tests/Fuzz/crashes).
crashes=$(find .fuzz/artifacts -type f -newer .fuzz/.started | grep -cE '/(crash|leak|timeout|oom|slow-unit)-' || true)
if [ "$status" -ne 0 ]; then
  grep -aE "ERROR: |SUMMARY: |Test unit written|Fatal error" .fuzz/fuzz.log | head -20 >&2 || true
fi
echo "fuzz: ${execs:-?} executions in ${took:-$seconds} s (${corpus} corpus inputs, ${cov:-?} coverage points), $crashes crashes"
exit "$status"
}
main "$@"
