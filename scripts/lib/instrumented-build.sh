# Sourced by scripts/fuzz.sh and scripts/sanitize.sh --quick: one build with
# AddressSanitizer and libFuzzer's coverage instrumentation, in .build-fuzz,
# gives both the libFuzzer target (avtool-fuzz; with AVTOOL_FUZZ_REPLAY=1 it
# replays its arguments instead) and an AddressSanitizer avtool. The second
# script to run finds it built.
instrumented_build_path=.build-fuzz

instrumented_build() {
  local swiftc driver product
  swiftc="$(readlink -f "$(command -v swiftc)")"
  driver="$(ls "$(dirname "$swiftc")"/../lib/clang/*/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a 2>/dev/null | head -n 1)"
  [ -n "$driver" ] || { echo "no libclang_rt.fuzzer_no_main-x86_64.a beside $swiftc" >&2; return 1; }
  for product in avtool-fuzz avtool; do
    AVTOOL_LIBFUZZER_DRIVER="$(readlink -f "$driver")" \
      swift build -c debug --product "$product" --build-path "$instrumented_build_path" --sanitize=address \
      -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp -Xswiftc -DAVTOOL_LIBFUZZER 2>&1 \
      | { grep -v "Cannot export local symbol" || true; } | tail -n 2 >&2
    [ -x "$instrumented_build_path/debug/$product" ] || { echo "the instrumented $product was not built" >&2; return 1; }
  done
}
