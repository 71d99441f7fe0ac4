#include "core/cpu_features.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace lowbit {
namespace {

CpuFeatures everything() {
  CpuFeatures f;
  f.avx2 = f.fma = f.f16c = f.bmi2 = f.avx_vnni = f.avx_vnni_int8 = true;
  f.avx512f = f.avx512bw = f.avx512vl = f.avx512dq = f.avx512vnni = f.avx512vbmi = f.avx512bf16 = true;
  f.amx_int8 = f.amx_bf16 = f.neon = f.neon_dotprod = true;
  return f;
}

TEST(CpuFeatures, DisablingNamesTurnsOffExactlyThoseFeatures) {
  const CpuFeatures all = everything();
  const CpuFeatures f = without_features(all, "amx_int8, avx512vnni,,dotprod");
  EXPECT_FALSE(f.amx_int8);
  EXPECT_FALSE(f.avx512vnni);
  EXPECT_FALSE(f.neon_dotprod);
  EXPECT_EQ(f.describe(),
            "avx2 fma f16c bmi2 avx_vnni avx_vnni_int8 avx512f avx512bw avx512vl avx512dq avx512vbmi avx512bf16 amx_bf16 neon");
  EXPECT_TRUE(f.has_avx512_level());
  EXPECT_FALSE(f.has_neon_level());
  // Turning off a part of a level turns off the level.
  EXPECT_FALSE(without_features(all, "avx512bw").has_avx512_level());
  EXPECT_TRUE(without_features(all, "avx512bw").has_avx2_level());
  EXPECT_FALSE(without_features(all, "fma").has_avx2_level());
  EXPECT_EQ(without_features(all, "").describe(), all.describe());
}

TEST(CpuFeatures, EveryNameDescribePrintsCanBeDisabled) {
  const CpuFeatures all = everything();
  std::string names = all.describe();
  EXPECT_EQ(without_features(all, names).describe(), "scalar");
}

TEST(CpuFeatures, UnknownNameIsAnErrorListingTheKnownOnes) {
  try {
    without_features(everything(), "amx_int8,avx1024");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'avx1024'"), std::string::npos) << m;
    EXPECT_NE(m.find("avx512vnni"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace lowbit
