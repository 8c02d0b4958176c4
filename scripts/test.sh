#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine and runs every test: installs packages,
# generates the sample fixtures, fetches the real-world recordings, then
# `swift test`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-debian.sh
Tests/Fixtures/make-fixtures.sh .fixtures
Tests/Fixtures/get-real-media.sh .real-media >/dev/null
swift build --build-tests
swift test --skip-build
# `avtool batch` on a real single-node Slurm cluster (a job array of shards).
SLURM_TEST_OPTIONAL=1 scripts/slurm-test.sh
