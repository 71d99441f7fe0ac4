// A gen-model `tiny` BitNet b1.58 (2B-4T style) model: lowbit's logits, through
// every lossless kernel, must equal an independent double-precision
// computation of BitNet b1.58's math,
// written here from the papers and the file layout: ternary weights with one
// scale per tensor, activations quantized per token to int8 with absmax,
// squared-ReLU gate, sub-norms, half-split RoPE with theta 500000.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/half.h"
#include "fixtures.h"
#include "formats/gguf.h"
#include "model/decoder.h"
#include "kernels/dispatch.h"
#include "model/model.h"
#include "runtime/dummy_model.h"
#include "runtime/kernel_verify.h"

namespace lowbit {
namespace {

using Vec = std::vector<double>;

// Reads a tensor as doubles, [rows][cols] row-major, from its GGUF bytes.
Vec read_tensor(const GgufFile& f, const std::string& name) {
  const GgufTensorInfo& t = f.tensor(name);
  Vec out(static_cast<size_t>(t.n_elements));
  if (t.type == GgmlType::F32) {
    for (int64_t i = 0; i < t.n_elements; ++i) {
      float v;
      std::memcpy(&v, t.data + 4 * i, 4);
      out[static_cast<size_t>(i)] = v;
    }
  } else if (t.type == GgmlType::F16) {
    for (int64_t i = 0; i < t.n_elements; ++i) {
      uint16_t h;
      std::memcpy(&h, t.data + 2 * i, 2);
      out[static_cast<size_t>(i)] = fp16_to_float(h);
    }
  } else if (t.type == GgmlType::I2_S) {
    // Blocks of 128 weights in 32 bytes: weight j at byte j % 32, bits 6 - 2*(j/32); value = code - 1.
    float scale;
    std::memcpy(&scale, t.data + t.n_elements / 4, 4);
    for (int64_t i = 0; i < t.n_elements; ++i) {
      const int64_t block = i / 128, j = i % 128;
      const int code = (t.data[block * 32 + j % 32] >> (6 - 2 * (j / 32))) & 3;
      out[static_cast<size_t>(i)] = scale * (code - 1);
    }
  } else {
    ADD_FAILURE() << "unexpected type in " << name;
  }
  return out;
}

Vec rms_norm(const Vec& x, const Vec& w, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double s = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * s * w[i];
  return y;
}

// BitNet's W1.58A8 linear: x quantized to int8 per token with absmax, then W x, rescaled.
Vec ternary_linear(const Vec& W, const Vec& x, size_t rows) {
  const size_t cols = x.size();
  double max = 1e-5;
  for (double v : x) max = std::max(max, std::fabs(v));
  const double s = 127.0 / max;
  Vec q(cols);
  for (size_t i = 0; i < cols; ++i) q[i] = std::clamp(std::round(x[i] * s), -128.0, 127.0);
  Vec y(rows, 0.0);
  for (size_t r = 0; r < rows; ++r) {
    double acc = 0;
    for (size_t c = 0; c < cols; ++c) acc += W[r * cols + c] * q[c];
    y[r] = acc / s;
  }
  return y;
}

void rope_half_split(double* v, size_t head_dim, size_t pos, double theta) {
  const size_t half = head_dim / 2;
  for (size_t i = 0; i < half; ++i) {
    const double angle = static_cast<double>(pos) * std::pow(theta, -2.0 * static_cast<double>(i) / head_dim);
    const double a = v[i], b = v[i + half];
    v[i] = a * std::cos(angle) - b * std::sin(angle);
    v[i + half] = a * std::sin(angle) + b * std::cos(angle);
  }
}

// The double-precision logits [V] of the last of `tokens`, from the file alone.
Vec reference_logits(const std::string& path, const std::vector<int32_t>& tokens) {
  GgufFile f(path);
  const std::string a = "bitnet-b1.58.";
  const size_t D = f.get_uint(a + "embedding_length"), H = f.get_uint(a + "attention.head_count"),
               Hkv = f.get_uint(a + "attention.head_count_kv"), F = f.get_uint(a + "feed_forward_length"),
               L = f.get_uint(a + "block_count"), Dh = D / H;
  const double eps = f.get_float(a + "attention.layer_norm_rms_epsilon");
  const double theta = f.get_float(a + "rope.freq_base");
  const Vec emb = read_tensor(f, "token_embd.weight");
  const size_t V = emb.size() / D;
  std::vector<std::vector<Vec>> kcache(L), vcache(L);
  Vec x;
  for (size_t t = 0; t < tokens.size(); ++t) {
    x.assign(emb.begin() + tokens[t] * D, emb.begin() + (tokens[t] + 1) * D);
    for (size_t l = 0; l < L; ++l) {
      const std::string b = "blk." + std::to_string(l) + ".";
      const Vec h = rms_norm(x, read_tensor(f, b + "attn_norm.weight"), eps);
      Vec q = ternary_linear(read_tensor(f, b + "attn_q.weight"), h, H * Dh);
      Vec k = ternary_linear(read_tensor(f, b + "attn_k.weight"), h, Hkv * Dh);
      const Vec v = ternary_linear(read_tensor(f, b + "attn_v.weight"), h, Hkv * Dh);
      for (size_t i = 0; i < H; ++i) rope_half_split(&q[i * Dh], Dh, t, theta);
      for (size_t i = 0; i < Hkv; ++i) rope_half_split(&k[i * Dh], Dh, t, theta);
      kcache[l].push_back(k);
      vcache[l].push_back(v);
      Vec att(H * Dh, 0.0);
      for (size_t i = 0; i < H; ++i) {
        const size_t g = i / (H / Hkv);
        Vec s(t + 1);
        double max = -1e300;
        for (size_t j = 0; j <= t; ++j) {
          double dot = 0;
          for (size_t d = 0; d < Dh; ++d) dot += q[i * Dh + d] * kcache[l][j][g * Dh + d];
          s[j] = dot / std::sqrt(static_cast<double>(Dh));
          max = std::max(max, s[j]);
        }
        double sum = 0;
        for (double& e : s) sum += (e = std::exp(e - max));
        for (size_t j = 0; j <= t; ++j)
          for (size_t d = 0; d < Dh; ++d) att[i * Dh + d] += s[j] / sum * vcache[l][j][g * Dh + d];
      }
      const Vec att_n = rms_norm(att, read_tensor(f, b + "attn_sub_norm.weight"), eps);
      const Vec o = ternary_linear(read_tensor(f, b + "attn_output.weight"), att_n, D);
      for (size_t i = 0; i < D; ++i) x[i] += o[i];
      const Vec h2 = rms_norm(x, read_tensor(f, b + "ffn_norm.weight"), eps);
      const Vec gate = ternary_linear(read_tensor(f, b + "ffn_gate.weight"), h2, F);
      const Vec up = ternary_linear(read_tensor(f, b + "ffn_up.weight"), h2, F);
      Vec act(F);
      for (size_t i = 0; i < F; ++i) act[i] = std::pow(std::max(gate[i], 0.0), 2) * up[i];
      const Vec act_n = rms_norm(act, read_tensor(f, b + "ffn_sub_norm.weight"), eps);
      const Vec down = ternary_linear(read_tensor(f, b + "ffn_down.weight"), act_n, D);
      for (size_t i = 0; i < D; ++i) x[i] += down[i];
    }
  }
  const Vec xf = rms_norm(x, read_tensor(f, "output_norm.weight"), eps);
  Vec logits(V, 0.0);
  for (size_t r = 0; r < V; ++r)
    for (size_t i = 0; i < D; ++i) logits[r] += emb[r * D + i] * xf[i];  // tied F16 head, float math
  return logits;
}

// The tiny BitNet dummy (I2_S, seed 7) written to `file`, a prompt, and its
// double-precision logits: what both tests below hold lowbit to.
struct TinyReference {
  std::string path;
  std::vector<int32_t> tokens = {17, 301, 5, 640, 99};
  Vec want;
  double max_abs = 0;  // the largest |logit|: the scale of the 1e-5 tolerance
};

TinyReference tiny_reference(const std::string& file, ThreadPool& pool) {
  TinyReference r;
  r.path = testing::temp_path(file);
  DummyModelOptions opt;
  opt.shape = "tiny";
  opt.type = GgmlType::I2_S;
  opt.seed = 7;
  write_dummy_model(opt, r.path, pool);
  r.want = reference_logits(r.path, r.tokens);
  for (double v : r.want) r.max_abs = std::max(r.max_abs, std::fabs(v));
  return r;
}

double max_abs_diff(const Vec& want, const std::vector<float>& got) {
  double d = 0;
  for (size_t i = 0; i < want.size(); ++i) d = std::max(d, std::fabs(want[i] - got[i]));
  return d;
}

// Item 3 of the quality issue: through EVERY lossless kernel that can run
// the model (the reference included), lowbit's logits equal the
// double-precision emulation within 1e-5 of the largest logit. Which kernels
// are lossless the families say themselves (runtime/kernel_verify.h).
TEST(BitNetReference, EveryLosslessKernelEqualsDoublePrecisionMath) {
  ThreadPool pool(2);
  const TinyReference tiny = tiny_reference("bitnet-tiny-i2_s.gguf", pool);
  const std::string& path = tiny.path;
  const std::vector<int32_t>& tokens = tiny.tokens;
  const Vec& want = tiny.want;
  const double max_abs = tiny.max_abs;
  ASSERT_GT(max_abs, 0.1);

  LoadOptions ref_options;
  ref_options.kernel = "ref";
  const auto ref = Model::load(path, ref_options, pool);
  ASSERT_EQ(ref->config().arch, Architecture::BitNetB158);
  std::vector<std::string> checked;
  for (const KernelFamily& family : kernel_families()) {
    LoadOptions lo;
    lo.kernel = family.name;
    const auto model = Model::load(path, lo, pool);
    const KernelUse use = describe_kernel_use(*model, *ref);
    const bool runs_it = std::any_of(use.kernels.begin(), use.kernels.end(), [&](const std::string& k) {
      return k.substr(0, k.find('/')) == family.name;
    });
    if (!runs_it || !use.lossless) continue;
    // BitNet's math has no f16 rounding of K and V: compare with an f32 cache.
    Decoder decoder(*model, pool, 64, KvCacheType::F32);
    std::vector<float> logits(want.size());
    decoder.eval(tokens.data(), static_cast<int64_t>(tokens.size()), logits.data());
    const double max_diff = max_abs_diff(want, logits);
    std::printf("[ bitnet tiny ] %-7s %-40s max |lowbit - double| = %.3g, relative %.3g\n", family.name,
                summarize_kernels(use.kernels).c_str(), max_diff, max_diff / max_abs);
    EXPECT_LE(max_diff, 1e-5 * max_abs) << family.name;
    checked.push_back(family.name);
  }
  EXPECT_NE(std::find(checked.begin(), checked.end(), "ref"), checked.end());
  EXPECT_GE(checked.size(), 2u) << "no optimized lossless kernel ran the model";
}

// Decoding token by token, one token's (token, KV head) items do not spread
// evenly over 3 threads, so attention splits each item's positions into
// ranges once the context is long enough (Decoder::position_parts: 2 ranges
// from 128 positions, 3 from 192) and merges them. The logits must equal one
// thread's, which never splits, up to float reassociation. (200 positions are
// past where the double-precision emulation above holds to 1e-5: its RoPE
// angles are exact, lowbit's float as in llama2.c and ggml.)
TEST(BitNetReference, TokenByTokenWithAttentionSplitByPositionEqualsOneThread) {
  ThreadPool one(1), three(3);
  const TinyReference tiny = tiny_reference("bitnet-tiny-i2_s-decode.gguf", one);
  const auto model = Model::load(tiny.path, LoadOptions{}, three);
  ASSERT_NE(model->config().n_head_kv % three.size(), 0);
  std::vector<int32_t> tokens;
  for (int32_t i = 0; i < 200; ++i) tokens.push_back((17 + 37 * i) % 1000);
  ASSERT_GE(model->n_ctx(), static_cast<int64_t>(tokens.size()));
  std::vector<std::vector<float>> logits;
  for (ThreadPool* pool : {&one, &three}) {
    Decoder decoder(*model, *pool, 1, KvCacheType::F32);
    logits.emplace_back(tiny.want.size());
    for (const int32_t t : tokens) decoder.eval(&t, 1, logits.back().data());
  }
  double max_abs = 0, max_diff = 0;
  for (size_t i = 0; i < logits[0].size(); ++i) {
    max_abs = std::max(max_abs, std::fabs(static_cast<double>(logits[0][i])));
    max_diff = std::max(max_diff, std::fabs(static_cast<double>(logits[0][i]) - logits[1][i]));
  }
  ASSERT_GT(max_abs, 0.1);
  EXPECT_LE(max_diff, 1e-5 * max_abs);
}

}  // namespace
}  // namespace lowbit
