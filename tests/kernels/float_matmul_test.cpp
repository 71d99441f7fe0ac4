// The "f16" family (F16 / BF16 / F32 x float) against the scalar "ref" kernel
// at every ISA level this CPU runs, on odd shapes and token counts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/half.h"
#include "core/rng.h"
#include "kernels/dispatch.h"
#include "kernels/float_matmul.h"
#include "kernels/float_tile_dots.h"
#include "quant/weight_format.h"
#include "ternary_test_support.h"

namespace lowbit::test {
namespace {

// rows x cols weights of `type` holding values in [-amp, amp].
std::vector<uint8_t> random_float_weights(GgmlType type, int64_t rows, int64_t cols, uint64_t seed) {
  Rng rng(seed);
  const int64_t n = rows * cols;
  std::vector<uint8_t> bytes(static_cast<size_t>(ggml_row_bytes(type, cols) * rows));
  for (int64_t i = 0; i < n; ++i) {
    const float v = static_cast<float>(rng.normal()) * (i % 31 == 0 ? 20.0f : 0.05f);
    if (type == GgmlType::F32) {
      std::memcpy(bytes.data() + 4 * i, &v, 4);
    } else {
      const uint16_t h = type == GgmlType::F16 ? float_to_fp16(v) : float_to_bf16(v);
      std::memcpy(bytes.data() + 2 * i, &h, 2);
    }
  }
  return bytes;
}

TEST(FloatKernel, MatchesReferenceAtEveryIsa) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{1, 1}, {3, 7}, {4, 16}, {5, 33}, {17, 100}, {64, 2560}, {1030, 64}, {1027, 40}};
  ThreadPool pool(2);
  const auto variants = isa_variants();
  ASSERT_FALSE(variants.empty()) << "this CPU has no AVX2: the f16 family cannot run";
  for (GgmlType type : {GgmlType::F16, GgmlType::BF16, GgmlType::F32}) {
    for (const auto& [rows, cols] : shapes) {
      const auto w = random_float_weights(type, rows, cols, static_cast<uint64_t>(rows * 131 + cols));
      const WeightView view{"w", type, rows, cols, w.data()};
      const auto ref = make_reference_matmul(view);
      for (int64_t tokens : {1, 2, 3, 4, 5, 9, 13, 20}) {
        const auto x = random_activations(tokens, cols, static_cast<uint64_t>(tokens + cols));
        ActivationBatch in(tokens, cols);
        in.set(x.data(), tokens, cols);
        std::vector<float> want(static_cast<size_t>(tokens * rows));
        ref->forward(in, want.data(), pool);
        for (const auto& v : variants) {
          for (const bool amd : {false, true}) {  // without and with the one-token prefetch
            CpuFeatures cpu = v.cpu;
            cpu.vendor_amd = amd;
            const auto kernel = find_kernel_family("f16")->make(view, cpu, pool);
            std::vector<float> got(static_cast<size_t>(tokens * rows), NAN);
            kernel->forward(in, got.data(), pool);
            for (int64_t t = 0; t < tokens; ++t) {
              for (int64_t r = 0; r < rows; ++r) {
                // Tolerance from the magnitudes summed: float reassociation only.
                std::vector<float> row(static_cast<size_t>(cols));
                double mag = 0;
                weight_format(type).dequantize_row(w.data() + r * ggml_row_bytes(type, cols), row.data(), cols);
                for (int64_t k = 0; k < cols; ++k) mag += std::fabs(row[k] * x[t * cols + k]);
                const size_t i = static_cast<size_t>(t * rows + r);
                ASSERT_NEAR(got[i], want[i], 1e-5 * mag + 1e-30)
                    << kernel->kernel_name() << (amd ? " (prefetch)" : "") << " " << ggml_type_name(type) << " "
                    << rows << "x" << cols << " tokens " << tokens << " at (" << t << ", " << r << ")";
              }
            }
          }
        }
      }
    }
  }
}

// The ISA's F16 rows with prefetch off: one token row by row, more in 4-row tiles.
FloatTileDots f16_rows_alone(const std::string& isa) {
#if LOWBIT_X86_KERNELS
  if (isa.rfind("avx512", 0) == 0) return float_tile_dots_avx512(GgmlType::F16, FloatPrefetch::None);
  return float_tile_dots_avx2(GgmlType::F16, FloatPrefetch::None);
#else
  EXPECT_EQ(isa, "neon-dotprod");
  return float_tile_dots_neon(GgmlType::F16, FloatPrefetch::None);
#endif
}

// One to four tokens through the tiles (AVX2, NEON; F16 with AVX-512 takes
// row panels): with the prefetch on (x86: non-temporal on AMD, into L2
// elsewhere) rows are read two or four at a time from distant parts of each
// chunk (parts of at least kStreamsMinApartBytes: at 1 thread the 67 MB
// matrix's chunks have 1 MiB quarters); every row must still get exactly the
// bits it gets read alone (or in a 4-row tile, the same arithmetic), whatever
// the chunking (thread count), the grouping or the hint.
TEST(FloatKernel, FewTokenRowsAreBitwiseIndependentOfGrouping) {
  const auto variants = isa_variants();
  ASSERT_FALSE(variants.empty()) << "this CPU has no AVX2: the f16 family cannot run";
  // 16400 x 2048: a call's rows far enough apart for x86's one-token streams
  // (kStreamsMinApartBytes). NEON reads no streams, and under qemu that shape
  // took 50 s of CI: x86 only.
  std::vector<std::pair<int64_t, int64_t>> shapes = {{1031, 100}};
  if (LOWBIT_X86_KERNELS) shapes.emplace_back(16400, 2048);
  for (const auto& [rows, cols] : shapes) {
    const auto w = random_float_weights(GgmlType::F16, rows, cols, static_cast<uint64_t>(rows + cols));
    const WeightView view{"w", GgmlType::F16, rows, cols, w.data()};
    for (const int64_t tokens : {1, 2, 3, 4}) {
      const auto x = random_activations(tokens, cols, static_cast<uint64_t>(5 + tokens));
      ActivationBatch in(tokens, cols);
      in.set(x.data(), tokens, cols);
      for (const auto& v : variants) {
        std::vector<float> alone(static_cast<size_t>(tokens * rows), NAN);  // rows read alone or in 4-row tiles
        f16_rows_alone(v.name)(w.data(), ggml_row_bytes(GgmlType::F16, cols), static_cast<int>(rows), in.x(), cols,
                               nullptr, static_cast<int>(tokens), cols, alone.data(), rows);
        for (const int threads : {1, 2}) {
          ThreadPool pool(threads);
          for (const bool amd : {false, true}) {
            CpuFeatures cpu = v.cpu;
            cpu.vendor_amd = amd;
            // F16 with AVX-512 on Intel reads row panels for every token count:
            // ManyTokensAreFmaChainsPerRowAndToken.
            if (float_panel_order(cpu, GgmlType::F16).from_tokens <= tokens) continue;
            const auto kernel = find_kernel_family("f16")->make(view, cpu, pool);
            std::vector<float> got(static_cast<size_t>(tokens * rows), NAN);
            kernel->forward(in, got.data(), pool);
            for (size_t i = 0; i < got.size(); ++i)
              ASSERT_EQ(std::memcmp(&got[i], &alone[i], sizeof(float)), 0)
                  << kernel->kernel_name() << " " << rows << "x" << cols << " tokens " << tokens << " token "
                  << i / static_cast<size_t>(rows) << " row " << i % static_cast<size_t>(rows) << ": " << got[i]
                  << " vs " << alone[i] << " (threads " << threads << (amd ? ", AMD" : ", Intel") << ")";
          }
        }
      }
    }
  }
}

#if LOWBIT_X86_KERNELS || LOWBIT_NEON_KERNELS  // NEON: the signed super-blocks only
// rows x cols weights of a k-quant (Q6_K, Q4_K, Q5_K, Q2_K, Q3_K), IQ4_XS or Q4_1, Q5_0, Q5_1 quantized from normal values
// with outliers, or (raw) random bytes with small random fp16 super-block
// scales: every sub-block scale, min and value bit pattern.
std::vector<uint8_t> random_k_quant_weights(GgmlType type, int64_t rows, int64_t cols, uint64_t seed, bool raw) {
  Rng rng(seed);
  std::vector<float> row(static_cast<size_t>(cols));
  const int64_t row_bytes = ggml_row_bytes(type, cols);
  std::vector<uint8_t> bytes(static_cast<size_t>(row_bytes * rows));
  if (raw) {
    for (auto& b : bytes) b = static_cast<uint8_t>(rng.next_u32());
    // Q4_K's and Q5_K's d and dmin are their first 4 bytes, Q2_K's its last
    // 4; Q6_K's and Q3_K's d its last 2; Q4_1's and Q5_1's d and m their
    // first 4, Q5_0's and IQ4_XS's d their first 2.
    const int64_t block_bytes = ggml_type_info(type).block_bytes;
    const std::vector<int64_t> scales_at = type == GgmlType::Q5_0 || type == GgmlType::IQ4_XS ? std::vector<int64_t>{0}
                                           : type == GgmlType::Q6_K || type == GgmlType::Q3_K ? std::vector<int64_t>{block_bytes - 2}
                                           : type == GgmlType::Q2_K ? std::vector<int64_t>{block_bytes - 4, block_bytes - 2}
                                                                    : std::vector<int64_t>{0, 2};
    for (int64_t off = 0; off < static_cast<int64_t>(bytes.size()); off += block_bytes)
      for (const int64_t at : scales_at) {
        const uint16_t h = float_to_fp16(static_cast<float>(rng.normal()) * 0.01f);
        std::memcpy(&bytes[static_cast<size_t>(off + at)], &h, 2);
      }
    return bytes;
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < cols; ++k) row[k] = static_cast<float>(rng.normal()) * (k % 37 == 3 ? 10.0f : 0.05f);
    weight_format(type).quantize_row(row.data(), bytes.data() + r * row_bytes, cols);
  }
  return bytes;
}

// The k-quant families against the reference: float products and sums, which
// differ from the reference's only by rounding (one token to four factor each
// sub-block's step out of its sum, so the weights' own product rounding is
// not repeated; more tokens dequantize exactly and differ in summation order).
TEST(KQuantKernels, MatchReferenceAtEveryIsa) {
  ThreadPool pool(2);
  const auto variants = isa_variants();
  ASSERT_FALSE(variants.empty()) << "this CPU has neither AVX2 nor NEON: the k-quant families cannot run";
  const std::vector<std::pair<GgmlType, std::string>> families = {
#if LOWBIT_X86_KERNELS
      {GgmlType::Q4_K, "q4_k"}, {GgmlType::Q5_K, "q4_k"}, {GgmlType::Q2_K, "q2_k"}, {GgmlType::Q4_1, "q4_1"},
      {GgmlType::Q5_0, "q4_1"}, {GgmlType::Q5_1, "q4_1"},
#endif
      {GgmlType::Q6_K, "q6_k"}, {GgmlType::Q3_K, "q3_k"}, {GgmlType::IQ4_XS, "iq4_xs"}};
  for (const auto& [type, family] : families)
    for (const bool raw : {false, true})
      for (const auto& [rows, cols] :
           std::vector<std::pair<int64_t, int64_t>>{{1, 256}, {5, 512}, {17, 2560}, {3, 96}, {6, 1056}}) {
        if (cols % ggml_type_info(type).block_size != 0) continue;  // 96, 1056: the 32-element blocks' odd lengths
        const auto w = random_k_quant_weights(type, rows, cols, static_cast<uint64_t>(rows + cols), raw);
        const WeightView view{"w", type, rows, cols, w.data()};
        const auto ref = make_reference_matmul(view);
        std::vector<float> row(static_cast<size_t>(cols));
        for (int64_t tokens : {1, 2, 4, 7, 13, 20}) {
          const auto x = random_activations(tokens, cols, static_cast<uint64_t>(3 * tokens + cols));
          ActivationBatch in(tokens, cols);
          in.set(x.data(), tokens, cols);
          std::vector<float> want(static_cast<size_t>(tokens * rows));
          ref->forward(in, want.data(), pool);
          for (const auto& v : variants) {
            const auto kernel = find_kernel_family(family)->make(view, v.cpu, pool);
            std::vector<float> got(want.size(), NAN);
            kernel->forward(in, got.data(), pool);
            for (int64_t t = 0; t < tokens; ++t) {
              for (int64_t r = 0; r < rows; ++r) {
                weight_format(type).dequantize_row(w.data() + r * ggml_row_bytes(type, cols), row.data(), cols);
                double mag = 0;
                for (int64_t k = 0; k < cols; ++k) mag += std::fabs(row[k] * x[t * cols + k]);
                const size_t i = static_cast<size_t>(t * rows + r);
                ASSERT_NEAR(got[i], want[i], 1e-5 * mag + 1e-30)
                    << kernel->kernel_name() << (raw ? " raw " : " ") << rows << "x" << cols << " tokens " << tokens
                    << " at (" << t << ", " << r << ")";
              }
            }
          }
        }
      }
}
#endif

#if LOWBIT_X86_KERNELS || LOWBIT_NEON_KERNELS
// From the panels' threshold on (float_panel_order: 5 tokens with AVX-512,
// 16 with AVX2 and NEON) many tokens go through the panels, tokens in the
// lanes (simd_float_panel_body.h): every (row, token) is k_group FMA chains
// over k in order from 0 (AVX-512: the even values of k and the odd ones, as
// lane pairs), on the row's values as the reference dequantizes them, added
// at the end. F16 with AVX-512 goes through its row panels (f16_panels.h)
// from one token: one chain. So each must equal that scalar model bit for
// bit, for every shape (k across chunks of 256 and not, odd; rows past a
// panel of 16 or of 48, and across them) and token count, at every ISA
// level, whatever the thread count.
TEST(FloatKernel, ManyTokensAreFmaChainsPerRowAndToken) {
  const auto variants = isa_variants();
  ASSERT_FALSE(variants.empty()) << "this CPU has neither AVX2 nor NEON: the float families cannot run";
  struct Case {
    GgmlType type;
    std::string family;
  };
  const std::vector<Case> cases = {
      {GgmlType::F16, "f16"}, {GgmlType::BF16, "f16"}, {GgmlType::F32, "f16"}, {GgmlType::Q6_K, "q6_k"},
#if LOWBIT_X86_KERNELS
      {GgmlType::Q4_K, "q4_k"}, {GgmlType::Q2_K, "q2_k"}, {GgmlType::Q5_1, "q4_1"},
#endif
  };
  for (const Case& c : cases) {
    const int64_t block = ggml_type_info(c.type).block_size;
    for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 256}, {37, 512}, {18, 2560}, {5, 1280}, {3, 7}, {17, 600}, {100, 33}, {49, 256}, {3100, 40}}) {
      if (cols % block != 0) continue;
      if (rows > 1000 && c.type != GgmlType::F16) continue;  // enough row panels for F16's pairs; time elsewhere
      const auto w = c.family == "f16" ? random_float_weights(c.type, rows, cols, static_cast<uint64_t>(rows * 7 + cols))
                                       : random_k_quant_weights(c.type, rows, cols, static_cast<uint64_t>(rows + cols), false);
      const WeightView view{"w", c.type, rows, cols, w.data()};
      std::vector<float> values(static_cast<size_t>(rows * cols));
      for (int64_t r = 0; r < rows; ++r)
        weight_format(c.type).dequantize_row(w.data() + r * ggml_row_bytes(c.type, cols), values.data() + r * cols, cols);
      for (const int64_t tokens : {1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 40, 64, 65, 130}) {
        const auto x = random_activations(tokens, cols, static_cast<uint64_t>(tokens * 3 + cols));
        ActivationBatch in(tokens, cols);
        in.set(x.data(), tokens, cols);
        for (const auto& v : variants)
        for (const bool amd : {false, true}) {  // F16 on AVX-512: Intel's row panels, AMD's lane pairs
          if (amd && c.type != GgmlType::F16) continue;  // the vendor picks F16's layout only
          CpuFeatures cpu = v.cpu;
          cpu.vendor_amd = amd;
          cpu.amx_bf16 = false;  // AMX's tiles sum in another order: F16AmxTiles* below
          const FloatPanelOrder order = float_panel_order(cpu, c.type);
          ASSERT_TRUE(order.k_group == 1 || order.k_group == 2) << v.name << ": the model below has two chains";
          if (tokens < order.from_tokens) continue;  // the tiles': other tests
          // k_group chains, chain g over k = g, g + k_group, ...; an odd k's
          // last pair padded with 0 x 0.
          std::vector<float> want(static_cast<size_t>(tokens * rows));
          const int64_t g = order.k_group, padded = (cols + g - 1) / g * g;
          for (int64_t t = 0; t < tokens; ++t)
            for (int64_t r = 0; r < rows; ++r) {
              float chains[2] = {0.0f, 0.0f};
              for (int64_t k = 0; k < padded; ++k)
                chains[k % g] = k < cols ? std::fma(x[t * cols + k], values[r * cols + k], chains[k % g])
                                         : std::fma(0.0f, 0.0f, chains[k % g]);
              want[t * rows + r] = g == 1 ? chains[0] : chains[0] + chains[1];
            }
          for (const int threads : {1, 2}) {
            ThreadPool pool(threads);
            const auto kernel = find_kernel_family(c.family)->make(view, cpu, pool);
            std::vector<float> got(want.size(), NAN);
            kernel->forward(in, got.data(), pool);
            for (size_t i = 0; i < got.size(); ++i)
              ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0)
                  << kernel->kernel_name() << " " << ggml_type_name(c.type) << " " << rows << "x" << cols << " tokens "
                  << tokens << " token " << i / static_cast<size_t>(rows) << " row " << i % static_cast<size_t>(rows)
                  << ": " << got[i] << " vs " << want[i] << " (threads " << threads << (amd ? ", AMD" : "") << ")";
          }
        }
      }
    }
  }
}
#endif

#if LOWBIT_X86_KERNELS
// F16 row panels (AVX-512) at the format's extremes: every finite F16 bit
// pattern once (subnormals, +-0, +-65504), times activations from 1e-30 to
// 1, must give the scalar FMA chain's bits, through the pairs of panels (1
// to 4 tokens, 42 panels) and the passes of 8 tokens.
TEST(FloatKernel, F16PanelsAreFmaChainsAtEveryF16Value) {
  if (!cpu_features().has_avx512_level()) GTEST_SKIP() << "no AVX-512: F16 row panels cannot run here";
  CpuFeatures intel = cpu_features();
  intel.vendor_amd = false;  // AMD keeps the file's layout
  const int64_t rows = 1984, cols = 32;  // 63488 values: the finite F16 patterns
  std::vector<uint16_t> w;
  for (uint32_t h = 0; h < 0x10000; ++h)
    if ((h & 0x7c00) != 0x7c00) w.push_back(static_cast<uint16_t>(h));
  ASSERT_EQ(static_cast<int64_t>(w.size()), rows * cols);
  Rng rng(11);
  for (size_t i = w.size() - 1; i > 0; --i) std::swap(w[i], w[rng.below(i + 1)]);  // patterns spread over rows
  const WeightView view{"w", GgmlType::F16, rows, cols, reinterpret_cast<const uint8_t*>(w.data())};
  for (const int64_t tokens : {1, 3, 4, 8, 11}) {
    std::vector<float> x(static_cast<size_t>(tokens * cols));
    for (size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(rng.normal()) * (i % 5 == 0 ? 1e-30f : i % 7 == 0 ? 1e-3f : 0.5f);
    ActivationBatch in(tokens, cols);
    in.set(x.data(), tokens, cols);
    for (const int threads : {1, 2}) {
      ThreadPool pool(threads);
      const auto kernel = find_kernel_family("f16")->make(view, intel, pool);
      std::vector<float> got(static_cast<size_t>(tokens * rows), NAN);
      kernel->forward(in, got.data(), pool);
      for (int64_t t = 0; t < tokens; ++t)
        for (int64_t r = 0; r < rows; ++r) {
          float want = 0.0f;
          for (int64_t c = 0; c < cols; ++c) want = std::fma(x[t * cols + c], fp16_to_float(w[r * cols + c]), want);
          const float g = got[static_cast<size_t>(t * rows + r)];
          ASSERT_EQ(std::memcmp(&g, &want, sizeof(float)), 0)
              << kernel->kernel_name() << " tokens " << tokens << " token " << t << " row " << r << ": " << g << " vs "
              << want << " (threads " << threads << ")";
        }
    }
  }
}
#endif

#if LOWBIT_X86_KERNELS
// F16 on Intel's AVX-512 with AMX-BF16: from 12 tokens the panels go through
// tile products of bf16 pieces (f16_amx_gemm.h), a float dot product summed
// in another order than the FMA chain: within 1e-5 of sum |w x| of that chain
// (the bound the other float kernels meet against the reference), for rows
// across and past panels and row groups, k odd and past a 32-value step,
// steps past a span of 4 (k = 600: 19 steps), one token block (12, 16) and
// several, tokens past a tile and across chunks (k = 2563: 128 tokens a chunk), on 1
// and 2 threads; and at every finite F16 value times activations from 1e-30
// to 1. The kernel's name says which path ran.
TEST(FloatKernel, F16AmxTilesMatchTheFmaChainWithinRounding) {
  if (!cpu_features().amx_bf16) GTEST_SKIP() << "no AMX-BF16 (with the kernel's permission): the F16 tiles cannot run here";
  CpuFeatures intel = cpu_features();
  intel.vendor_amd = false;
  struct Case {
    int64_t rows, cols;
    std::vector<uint16_t> w;  // F16 bits
  };
  std::vector<Case> cases;
  for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{49, 32}, {100, 33}, {3100, 40}, {17, 600}, {97, 2563}}) {
    const auto bytes = random_float_weights(GgmlType::F16, rows, cols, static_cast<uint64_t>(rows * 5 + cols));
    std::vector<uint16_t> w(static_cast<size_t>(rows * cols));
    std::memcpy(w.data(), bytes.data(), w.size() * sizeof(uint16_t));
    cases.push_back({rows, cols, w});
  }
  {
    Case every{1984, 32, {}};  // 63488 values: the finite F16 patterns, spread over rows
    for (uint32_t h = 0; h < 0x10000; ++h)
      if ((h & 0x7c00) != 0x7c00) every.w.push_back(static_cast<uint16_t>(h));
    Rng rng(12);
    for (size_t i = every.w.size() - 1; i > 0; --i) std::swap(every.w[i], every.w[rng.below(i + 1)]);
    cases.push_back(every);
  }
  for (const Case& c : cases) {
    const WeightView view{"w", GgmlType::F16, c.rows, c.cols, reinterpret_cast<const uint8_t*>(c.w.data())};
    for (const int64_t tokens : {12, 16, 31, 33, 47, 130}) {
      if (c.cols == 2563 && tokens != 130) continue;  // (time: the chunks are what it is here for)
      Rng rng(static_cast<uint64_t>(tokens + c.cols));
      std::vector<float> x(static_cast<size_t>(tokens * c.cols));
      for (size_t i = 0; i < x.size(); ++i)
        x[i] = static_cast<float>(rng.normal()) * (i % 5 == 0 ? 1e-30f : i % 7 == 0 ? 1e-3f : 0.5f);
      ActivationBatch in(tokens, c.cols);
      in.set(x.data(), tokens, c.cols);
      for (const int threads : {1, 2}) {
        ThreadPool pool(threads);
        const auto kernel = find_kernel_family("f16")->make(view, intel, pool);
        ASSERT_NE(kernel->kernel_name().find("amx"), std::string::npos) << kernel->kernel_name();
        std::vector<float> got(static_cast<size_t>(tokens * c.rows), NAN);
        kernel->forward(in, got.data(), pool);
        for (int64_t t = 0; t < tokens; ++t)
          for (int64_t r = 0; r < c.rows; ++r) {
            float want = 0.0f;
            double mag = 0.0;
            for (int64_t k = 0; k < c.cols; ++k) {
              const float w = fp16_to_float(c.w[static_cast<size_t>(r * c.cols + k)]), v = x[static_cast<size_t>(t * c.cols + k)];
              want = std::fma(v, w, want);
              mag += std::fabs(static_cast<double>(v) * w);
            }
            ASSERT_NEAR(got[static_cast<size_t>(t * c.rows + r)], want, 1e-5 * mag + 1e-30)
                << kernel->kernel_name() << " " << c.rows << "x" << c.cols << " tokens " << tokens << " token " << t
                << " row " << r << " (threads " << threads << ")";
          }
      }
    }
  }
}
#endif

TEST(FloatKernel, AutoPicksItForFloatHeadsOnly) {
  ThreadPool pool(1);
  const auto w = random_float_weights(GgmlType::F16, 8, 64, 3);
  if (!cpu_features().has_avx2_level() && !cpu_features().has_neon_level()) GTEST_SKIP() << "neither AVX2 nor NEON";
  EXPECT_EQ(make_matmul({"head", GgmlType::F16, 8, 64, w.data()}, "auto", pool)->kernel_name().rfind("f16/", 0), 0u);
  EXPECT_EQ(find_kernel_family("f16")->score({"w", GgmlType::Q8_0, 8, 64, nullptr}, cpu_features()), 0);
  EXPECT_EQ(find_kernel_family("f16")->score({"w", GgmlType::Q6_K, 8, 256, nullptr}, cpu_features()), 0);
  // The signed super-blocks' float kernels are AVX2 and NEON code, the others AVX2 only.
  EXPECT_GT(find_kernel_family("q6_k")->score({"w", GgmlType::Q6_K, 8, 256, nullptr}, cpu_features()), 1);
  EXPECT_GT(find_kernel_family("iq4_xs")->score({"w", GgmlType::IQ4_XS, 8, 256, nullptr}, cpu_features()), 1);
#if LOWBIT_X86_KERNELS
  EXPECT_GT(find_kernel_family("q4_k")->score({"w", GgmlType::Q4_K, 8, 256, nullptr}, cpu_features()), 1);
  EXPECT_GT(find_kernel_family("q4_k")->score({"w", GgmlType::Q5_K, 8, 256, nullptr}, cpu_features()), 1);
  EXPECT_EQ(find_kernel_family("q4_k")->score({"w", GgmlType::Q6_K, 8, 256, nullptr}, cpu_features()), 0);
#else
  EXPECT_EQ(find_kernel_family("q4_k")->score({"w", GgmlType::Q4_K, 8, 256, nullptr}, cpu_features()), 0);
#endif
  CpuFeatures none;
  EXPECT_EQ(find_kernel_family("f16")->score({"w", GgmlType::F16, 8, 64, nullptr}, none), 0);
}

}  // namespace
}  // namespace lowbit::test
