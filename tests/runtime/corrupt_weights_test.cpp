// Models whose weight bytes are damaged (header intact): loading and running
// them on two threads, with every kernel family, either works or fails with
// lowbit::Error, never a crash. Weights are repacked on the pool at load, so
// a refusal raised on a worker thread must reach the caller (it once
// segfaulted the process instead).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "fixtures.h"
#include "kernels/dispatch.h"
#include "model/decoder.h"
#include "model/model.h"
#include "runtime/dummy_model.h"

namespace lowbit {
namespace {

std::vector<char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(CorruptWeights, LoadOrRefuseWithAnErrorOnEveryKernel) {
  ThreadPool pool(2);
  int refused_not_ternary = 0, ran = 0;
  for (GgmlType type : {GgmlType::I2_S, GgmlType::TQ2_0}) {
    const std::string clean = testing::temp_path(std::string("corrupt-base-") + ggml_type_name(type) + ".gguf");
    DummyModelOptions opt;
    opt.shape = "tiny";
    opt.type = type;
    write_dummy_model(opt, clean, pool);
    const std::vector<char> base = read_bytes(clean);
    ASSERT_GT(base.size(), 100000u);
    Rng rng(77);
    for (int trial = 0; trial < 6; ++trial) {
      // Bytes in the back half of the file: tensor data, not the header.
      std::vector<char> bytes = base;
      for (int i = 0; i < 8; ++i)
        bytes[base.size() / 2 + rng.below(base.size() / 2)] = static_cast<char>(0xFF);
      const std::string path = testing::temp_path("corrupt-weights.gguf");
      write_bytes(path, bytes);
      for (const KernelFamily& family : kernel_families()) {
        LoadOptions lo;
        lo.kernel = family.name;
        try {
          const auto model = Model::load(path, lo, pool);
          Decoder decoder(*model, pool);
          const int32_t tokens[] = {1, 2, 3};
          std::vector<float> logits(static_cast<size_t>(model->config().n_vocab));
          decoder.eval(tokens, 3, logits.data());
          ++ran;
        } catch (const Error& e) {
          if (std::string(e.what()).find("is not ternary") != std::string::npos) ++refused_not_ternary;
        }
      }
    }
  }
  // The damage reached the ternary weights (a code 3 is refused) and some
  // kernels still ran (those that read other tensors, or other bytes).
  std::printf("[ corrupt ] %d runs, %d refused as not ternary\n", ran, refused_not_ternary);
  EXPECT_GT(refused_not_ternary, 0);
  EXPECT_GT(ran, 0);
}

}  // namespace
}  // namespace lowbit
