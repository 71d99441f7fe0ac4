#!/usr/bin/env bash
# Builds everything and runs the whole test suite:
#  1. the Release build's GoogleTest suites under ctest;
#  2. the file-reader and HTTP server suites again under AddressSanitizer + UBSan
#     (build-asan/), so corrupted-file and bad-request tests prove "no crash",
#     not just "right message"; and the i2s, int2, int1, q8_0 and k-quant x Q8_K
#     kernel suites, whose loops index tables with computed offsets or read several
#     tokens' activations at once, and block attention (tile layouts in scratch);
#  3. on x86-64, the suite built for 64-bit Arm (build-arm64/, cross-
#     compiled, run under qemu-aarch64), so the portable code and the NEON
#     kernels are tested on the other architecture users run (an Arm machine
#     runs them natively in stage 1). The rooms whose code differs by CPU or
#     meets it end to end: core (CPU features, threads), kernels (the NEON
#     ones), model, runtime (whole models against their reference outputs)
#     and tokenizer (bytes >= 0x80 in a char that is unsigned on Arm). The
#     others' code is portable and tested in stage 1; building and running
#     them under qemu as well took CI over its 15 minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
fixtures=../shared/fixtures
if [ ! -d "$fixtures" ]; then
  echo "test.sh: $fixtures is missing: the suite needs the shared fixtures" >&2
  exit 1
fi
source scripts/configure.sh
configure build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs" --timeout 900)

configure build-asan -DCMAKE_BUILD_TYPE=Debug -DLOWBIT_ASAN=ON
asan_targets=(lowbit_test_formats lowbit_test_tokenizer lowbit_test_server lowbit_test_kernels lowbit_test_model)
cmake --build build-asan -j "$jobs" --target "${asan_targets[@]}"
(cd build-asan && ctest --output-on-failure -j "$jobs" --timeout 900 -R '^(Gguf|Llama2c|Vocab|SpmTokenizer|BpeTokenizer|CompletionServer|Http|I2sKernel|Int2Kernel|Int1Kernel|Int1LutKernel|Q8_0Kernel|ActivationBatch|Q2KQ8KKernel|Q3KQ8KKernel|Iq4XsQ8KKernel|KernelDispatch|Q4KQ8KKernel|Q5KQ8KKernel|Q6KQ8KKernel|FloatKernel.F16Panels|VectorOps.BlockAttention)')

if [ "$(uname -m)" = x86_64 ]; then
  configure build-arm64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DCMAKE_BUILD_TYPE=Release
  arm_rooms=(core kernels model runtime tokenizer)
  cmake --build build-arm64 -j "$jobs" --target "${arm_rooms[@]/#/lowbit_test_}"
  # Tests carry their room as a label (CMakeLists.txt): these rooms' only.
  (cd build-arm64 && ctest --output-on-failure -j "$jobs" --timeout 900 -L "^($(IFS='|'; echo "${arm_rooms[*]}"))\$")
fi
