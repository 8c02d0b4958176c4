#!/usr/bin/env bash
# Builds AVToolKit's documentation (Sources/AVToolKit/AVToolKit.docc and the
# doc comments) with swift-docc-plugin, which Package.swift resolves only
# when AVTOOL_DOCC is set (from the package mirror; the builds and tests do
# without it). Fails on any DocC warning (a broken link, say) and on any
# public declaration of AVToolKit without a summary. About 30 s the first
# time, a few seconds after. The archive: .build/plugins/Swift-DocC/outputs/AVToolKit.doccarchive
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
AVTOOL_DOCC=1 swift package --disable-sandbox generate-documentation --target AVToolKit \
    --warnings-as-errors --experimental-skip-synthesized-symbols \
    --experimental-documentation-coverage --coverage-summary-level detailed >"$log" 2>&1 || { cat "$log"; exit 1; }
grep -E '^(Types|Members|Globals) ' "$log"
# The detailed table's third column says whether a symbol has a summary.
undocumented=$(awk -F'|' 'NF > 6 && $3 ~ /false/ && $2 !~ /Article/' "$log")
if [ -n "$undocumented" ]; then
    echo "public declarations without a summary:"
    echo "$undocumented"
    exit 1
fi
echo "documentation: every public declaration has a summary; archive in .build/plugins/Swift-DocC/outputs/AVToolKit.doccarchive"
