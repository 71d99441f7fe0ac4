// What the CPU can do, read once: cpuid (and xgetbv for OS register support) on
// x86-64, the kernel's hwcap bits on 64-bit Arm.
#pragma once

#include <string>

// LOWBIT_X86_KERNELS and LOWBIT_NEON_KERNELS (1 or 0) say which ISA folders of
// src/kernels this build compiled; CMakeLists.txt defines them for every file.
#if !defined(LOWBIT_X86_KERNELS) || !defined(LOWBIT_NEON_KERNELS)
#error "LOWBIT_X86_KERNELS and LOWBIT_NEON_KERNELS are set by CMakeLists.txt"
#endif

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
  // AMX tiles with int8 dot products, the OS saving tile state (XCR0) and
  // this process allowed to use it (Linux arch_prctl ARCH_REQ_XCOMP_PERM,
  // asked once at detection).
  bool amx_int8 = false;
  // AMX's BF16 tile dot product (tdpbf16ps), under the same OS conditions.
  bool amx_bf16 = false;
  // cpuid vendor "AuthenticAMD". Some memory hints are a vendor matter: a
  // non-temporal prefetch made the F16 GEMV faster on Zen 5 and slower on an
  // Intel Xeon (kernels/simd_float_gemv_body.h).
  bool vendor_amd = false;
  // 64-bit Arm (hwcap): Advanced SIMD, and its int8 dot product (sdot/udot,
  // ARMv8.2-A's optional DotProd, part of ARMv8.4-A).
  bool neon = false;
  bool neon_dotprod = false;

  // The ISA levels kernels are built for: AVX2 (+FMA/F16C/BMI2: the x86_avx2
  // files are compiled with -mbmi2, and the lookup GEMM uses rorx) and
  // AVX-512 (F/BW/VL/DQ).
  bool has_avx2_level() const { return avx2 && fma && f16c && bmi2; }
  bool has_avx512_level() const { return has_avx2_level() && avx512f && avx512bw && avx512vl && avx512dq; }
  // The Arm level the arm_neon files are built for (-march=armv8.2-a+dotprod).
  bool has_neon_level() const { return neon && neon_dotprod; }
  std::string describe() const;  // "avx2 fma f16c avx512f ..."
};

// f with the features named in `names` turned off: names as describe() spells
// them, separated by commas or spaces ("amx_int8,avx512f"). An unknown name ->
// Error listing the known ones.
CpuFeatures without_features(CpuFeatures f, const std::string& names);

// The detected features, less those named in the environment variable
// LOWBIT_CPU_DISABLE (read once). It lets one machine time the paths another
// would take: LOWBIT_CPU_DISABLE=amx_int8 runs prefill as a CPU without AMX
// does (e.g. the Zen 5 the targets name). `lowbit cpu` prints what is left.
const CpuFeatures& cpu_features();

// The CPU's name as /proc/cpuinfo's first "model name" line gives it (the
// benchmarks print it beside their tables); "unknown CPU" where there is none
// (Arm kernels' cpuinfo has no such line).
std::string cpu_model_name();

}  // namespace lowbit
