#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs every test: installs packages,
# generates the sample fixtures, fetches the real-world recordings, then
# `swift test`; then the Debian package installed with apt-get and run
# (scripts/deb-test.sh); then a batch recipe on a local Slurm cluster
# (scripts/slurm-test.sh); then the short hardening runs (docs/reliability.md): 60 s of
# fuzzing (scripts/fuzz.sh) and the bad-input, fault and signal suites
# against an AddressSanitizer build of avtool (scripts/sanitize.sh --quick);
# the two share one instrumented build (scripts/lib/instrumented-build.sh).
# AVTOOL_FUZZ_SECONDS=0 skips both.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-debian.sh
Tests/Fixtures/make-fixtures.sh .fixtures
Tests/Fixtures/get-real-media.sh .real-media >/dev/null
swift build --build-tests
swift test --skip-build
# The Debian package: built, installed with apt-get, run, removed.
scripts/deb-test.sh
# `avtool batch` on a real single-node Slurm cluster (a job array of shards).
SLURM_TEST_OPTIONAL=1 scripts/slurm-test.sh
fuzz_seconds="${AVTOOL_FUZZ_SECONDS:-60}"
if [ "$fuzz_seconds" -gt 0 ]; then
  scripts/fuzz.sh "$fuzz_seconds"
  scripts/sanitize.sh --quick
fi
