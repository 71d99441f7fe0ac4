// libFuzzer entry point for the GGUF reader (not built by CMake). Build with:
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -Isrc -Itests \
//     tests/fuzz/gguf_fuzz.cpp src/formats/gguf*.cpp src/core/ggml_types.cpp src/core/mapped_file.cpp \
//     -o gguf_fuzz
// and seed its corpus with any small .gguf files.
#include <cstddef>
#include <cstdint>

#include "core/error.h"
#include "formats/gguf.h"
#include "formats/gguf_test_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto f = lowbit::GgufFile::from_memory(data, size, "fuzz.gguf");
    lowbit::test::touch_everything(*f);
  } catch (const lowbit::Error&) {
  }
  return 0;
}
