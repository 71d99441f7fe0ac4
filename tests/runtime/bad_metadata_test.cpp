// Models whose header is well-formed GGUF but whose values make no model: a
// NaN RoPE base or norm epsilon, a head count the embedding cannot hold, a
// NaN in a norm vector or in an I2_S tensor's scale. Each must be refused at
// load with an error naming the file and the key or tensor (they used to load and make
// every logit NaN, or draw tokens from garbage). Then a seeded sweep sets every
// numeric key, one at a time, to values on the edges of the checks: loading
// and decoding must work or throw lowbit::Error, never crash.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "core/thread_pool.h"
#include "fixtures.h"
#include "formats/gguf.h"
#include "formats/gguf_writer.h"
#include "model/decoder.h"
#include "model/model.h"
#include "runtime/dummy_model.h"
#include "runtime/gguf_metadata_copy.h"
#include "runtime/sampler.h"

namespace lowbit {
namespace {

const std::string kArch = "bitnet-b1.58.";  // the tiny dummy's architecture prefix

// The tiny dummy (I2_S matrices), written once per process.
const std::string& tiny_model(ThreadPool& pool) {
  static const std::string path = [&] {
    const std::string p = testing::temp_path("bad-metadata-base.gguf");
    DummyModelOptions opt;
    opt.shape = "tiny";
    write_dummy_model(opt, p, pool);
    return p;
  }();
  return path;
}

// What a rewrite changes: metadata (after the copy; `skip` keys are left out)
// and the bytes of named tensors.
struct Edit {
  std::vector<std::string> skip;
  std::function<void(GgufWriter&)> metadata = [](GgufWriter&) {};
  std::function<void(const std::string& name, std::vector<uint8_t>& bytes)> tensor = [](const std::string&,
                                                                                           std::vector<uint8_t>&) {};
};

std::string rewrite(const std::string& base, const Edit& edit) {
  const GgufFile f(base);
  GgufWriter w;
  copy_gguf_metadata(f, w, edit.skip);
  edit.metadata(w);
  std::vector<std::vector<uint8_t>> data;
  data.reserve(f.tensors().size());
  for (const GgufTensorInfo& t : f.tensors()) {
    data.emplace_back(t.data, t.data + t.bytes);
    edit.tensor(t.name, data.back());
    w.add_tensor(t.name, t.type, t.shape, data.back().data(), t.bytes);
  }
  const std::string out = testing::temp_path("bad-metadata.gguf");
  w.write(out);
  return out;
}

// Loads the model, decodes three tokens and samples from the last logits.
void load_and_run(const std::string& path, ThreadPool& pool) {
  const auto model = Model::load(path, LoadOptions{}, pool);
  Decoder decoder(*model, pool);
  const int32_t tokens[] = {1, 2, 3};
  std::vector<float> logits(static_cast<size_t>(model->config().n_vocab));
  decoder.eval(tokens, 3, logits.data());
  SamplerParams params;
  Sampler sampler(params, model->config().n_vocab);
  sampler.sample(logits.data(), std::span<const int32_t>(tokens));
}

void expect_refused(const Edit& edit, const std::string& expected) {
  ThreadPool pool(2);
  const std::string path = rewrite(tiny_model(pool), edit);
  try {
    load_and_run(path, pool);
    ADD_FAILURE() << "loaded and ran; expected an error containing \"" << expected << "\"";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << "the error names no file: " << e.what();
  }
}

Edit set_f32(const std::string& key, float v) {
  Edit e;
  e.metadata = [=](GgufWriter& w) { w.set_f32(key, v); };
  return e;
}

TEST(BadMetadata, NonFiniteOrNegativeRopeBaseAndEpsilonAreRefused) {
  for (float v : {NAN, INFINITY, 0.0f, -1.0f})
    expect_refused(set_f32(kArch + "rope.freq_base", v), kArch + "rope.freq_base = ");
  for (float v : {NAN, -INFINITY, -1e-5f})
    expect_refused(set_f32(kArch + "attention.layer_norm_rms_epsilon", v),
                   kArch + "attention.layer_norm_rms_epsilon = ");
  // An epsilon of 0 is a model (every norm's input here is non-zero).
  ThreadPool pool(2);
  const Edit zero = set_f32(kArch + "attention.layer_norm_rms_epsilon", 0);
  EXPECT_NO_THROW(load_and_run(rewrite(tiny_model(pool), zero), pool));
}

TEST(BadMetadata, AHeadSizeTooSmallForRopeNamesTheHeadCount) {
  Edit e;
  e.metadata = [](GgufWriter& w) { w.set_u32(kArch + "attention.head_count", 128); };
  // 256 / 128 = a head of 2, less than the file's 64 rotated dimensions.
  expect_refused(e, "head_count 128");
}

// A float NaN written over bytes [at, at + 4) of the named tensor.
Edit nan_in_tensor(const std::string& tensor, size_t at) {
  Edit e;
  e.tensor = [=](const std::string& name, std::vector<uint8_t>& bytes) {
    const float nan = NAN;
    if (name == tensor) std::memcpy(bytes.data() + at, &nan, sizeof nan);
  };
  return e;
}

TEST(BadMetadata, ANanInANormVectorNamesTheTensorAndElement) {
  expect_refused(nan_in_tensor("output_norm.weight", 5 * sizeof(float)),
                 "tensor 'output_norm.weight' element 5 is nan");
}

TEST(BadMetadata, ANanI2sScaleNamesTheTensor) {
  // I2_S: the 2-bit codes (one byte per four weights), then the float scale.
  expect_refused(nan_in_tensor("blk.1.ffn_down.weight", 768 * 256 / 4),
                 "tensor blk.1.ffn_down.weight (I2_S): its scale is nan");
}

// Every integer or float key (and one element of every numeric array), one
// at a time, set to a value on the edge of some check.
TEST(BadMetadata, EdgeValuesInEveryNumericKeyLoadOrThrowError) {
  ThreadPool pool(2);
  const std::string& base = tiny_model(pool);
  std::vector<std::string> keys;
  std::vector<bool> is_array;
  {
    const GgufFile f(base);
    for (const auto& [key, v] : f.metadata()) {
      const bool array = v.type == GgufValueType::ARRAY;
      const GgufValueType t = array ? v.array_type : v.type;
      if (t == GgufValueType::STRING || t == GgufValueType::ARRAY || t == GgufValueType::BOOL) continue;
      if (array && v.array.empty()) continue;
      keys.push_back(key);
      is_array.push_back(array);
    }
  }
  ASSERT_GT(keys.size(), 8u);
  const double edges[] = {0, 1, 2, 3, 31, 32, 33, 64, 65, 255, 256, 4096, 65536, 2147483647.0, 4294967295.0,
                          -1, 0.5, 1e-30, 1e30, NAN, INFINITY, -INFINITY};
  Rng rng(4242);
  int ran = 0, refused = 0;
  for (int it = 0; it < 160; ++it) {
    const size_t k = rng.below(keys.size());
    const double v = edges[rng.below(std::size(edges))];
    Edit e;
    e.skip = {keys[k]};
    e.metadata = [&, k, v](GgufWriter& w) {
      if (is_array[k]) {
        const GgufFile f(base);
        const GgufValue& a = *f.find(keys[k]);
        if (a.array_type == GgufValueType::FLOAT32 || a.array_type == GgufValueType::FLOAT64) {
          std::vector<float> values = f.get_float_array(keys[k]);
          values[rng.below(values.size())] = static_cast<float>(v);
          w.set_f32_array(keys[k], values);
        } else {
          std::vector<int32_t> values;
          for (int64_t x : f.get_int_array(keys[k])) values.push_back(static_cast<int32_t>(x));
          const bool fits = std::isfinite(v) && std::abs(v) < 2147483647.0;
          values[rng.below(values.size())] = fits ? static_cast<int32_t>(v) : -1;
          w.set_i32_array(keys[k], values);
        }
      } else if (std::isfinite(v) && v >= 0 && v == std::floor(v)) {
        w.set_u64(keys[k], static_cast<uint64_t>(v));
      } else if (std::isfinite(v) && v == std::floor(v)) {
        w.set_i64(keys[k], static_cast<int64_t>(v));
      } else {
        w.set_f64(keys[k], v);
      }
    };
    const std::string path = rewrite(base, e);
    try {
      load_and_run(path, pool);
      ++ran;
    } catch (const Error&) {
      ++refused;
    } catch (const std::exception& ex) {
      FAIL() << keys[k] << " = " << v << ": " << typeid(ex).name() << ": " << ex.what();
    }
  }
  std::printf("[ metadata ] %d ran, %d refused\n", ran, refused);
  EXPECT_GT(ran, 10);  // the sweep reaches models that load: it tests the decoder too
  EXPECT_GT(refused, 10);
}

}  // namespace
}  // namespace lowbit
