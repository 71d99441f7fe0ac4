// What the CPU can do, read once with cpuid (and xgetbv for OS register support).
#pragma once

#include <string>

namespace lowbit {

struct CpuFeatures {
  bool avx2 = false;
  bool fma = false;
  bool f16c = false;
  bool bmi2 = false;
  bool avx_vnni = false;       // vpdpbusd on ymm (VEX)
  bool avx_vnni_int8 = false;  // vpdpbssd: signed x signed int8
  bool avx512f = false;
  bool avx512bw = false;
  bool avx512vl = false;
  bool avx512dq = false;
  bool avx512vnni = false;
  bool avx512vbmi = false;
  bool avx512bf16 = false;
  // cpuid vendor "AuthenticAMD". Some memory hints are a vendor matter: a
  // non-temporal prefetch made the F16 GEMV faster on Zen 5 and slower on an
  // Intel Xeon (kernels/simd_float_gemv_body.h).
  bool vendor_amd = false;

  // The ISA levels kernels are built for: AVX2 (+FMA/F16C/BMI2: the x86_avx2
  // files are compiled with -mbmi2, and the lookup GEMM uses rorx) and
  // AVX-512 (F/BW/VL/DQ).
  bool has_avx2_level() const { return avx2 && fma && f16c && bmi2; }
  bool has_avx512_level() const { return has_avx2_level() && avx512f && avx512bw && avx512vl && avx512dq; }
  std::string describe() const;  // "avx2 fma f16c avx512f ..."
};

const CpuFeatures& cpu_features();

}  // namespace lowbit
