#!/usr/bin/env bash
# Builds everything and runs the whole test suite:
#  1. the Release build's GoogleTest suites under ctest;
#  2. the file-reader and HTTP server suites again under AddressSanitizer + UBSan
#     (build-asan/), so corrupted-file and bad-request tests prove "no crash",
#     not just "right message"; and the i2s, int2, int1 and k-quant x Q8_K kernel
#     suites, whose loops index tables with computed offsets or read several
#     tokens' activations at once.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
fixtures=../shared/fixtures
if [ ! -d "$fixtures" ]; then
  echo "test.sh: $fixtures is missing: the suite needs the shared fixtures" >&2
  exit 1
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs" --timeout 900)

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLOWBIT_ASAN=ON >/dev/null
asan_targets=(lowbit_test_formats lowbit_test_tokenizer lowbit_test_server lowbit_test_kernels)
cmake --build build-asan -j "$jobs" --target "${asan_targets[@]}"
(cd build-asan && ctest --output-on-failure -j "$jobs" --timeout 900 -R '^(Gguf|Llama2c|Vocab|SpmTokenizer|BpeTokenizer|CompletionServer|Http|I2sKernel|Int2Kernel|Int1Kernel|Int1LutKernel|ActivationBatch|Q2KQ8KKernel|Q3KQ8KKernel|Iq4XsQ8KKernel|KernelDispatch|Q4KQ8KKernel|Q5KQ8KKernel|Q6KQ8KKernel)')
