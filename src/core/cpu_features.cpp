#include "core/cpu_features.h"

#include <cstdint>
#include <cstdlib>
#include <fstream>

#include "core/error.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#elif defined(__aarch64__) && defined(__linux__)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace lowbit {

namespace {

#if defined(__x86_64__) || defined(__i386__)
uint64_t read_xcr0() {
  uint32_t eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<uint64_t>(edx) << 32) | eax;
}

// Linux hands out AMX tile data state (XFEATURE_XTILEDATA, 18) to a process
// only when asked (ARCH_REQ_XCOMP_PERM, 0x1023); true when granted.
bool request_amx_permission() {
#if defined(__linux__) && defined(__x86_64__)
  return syscall(SYS_arch_prctl, 0x1023, 18) == 0;
#else
  return false;
#endif
}

CpuFeatures detect() {
  CpuFeatures f;
  unsigned a, b, c, d;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return f;
  f.vendor_amd = b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163;  // "Auth" "enti" "cAMD"
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = c & (1u << 27);
  const bool avx = c & (1u << 28);
  f.fma = c & (1u << 12);
  f.f16c = c & (1u << 29);
  if (!osxsave || !avx) return CpuFeatures{.vendor_amd = f.vendor_amd};
  const uint64_t xcr0 = read_xcr0();
  const bool ymm_ok = (xcr0 & 0x6) == 0x6;
  const bool zmm_ok = (xcr0 & 0xe6) == 0xe6;
  if (!ymm_ok) return CpuFeatures{.vendor_amd = f.vendor_amd};
  unsigned max_leaf = __get_cpuid_max(0, nullptr);
  if (max_leaf < 7) return f;
  __cpuid_count(7, 0, a, b, c, d);
  f.avx2 = b & (1u << 5);
  f.bmi2 = b & (1u << 8);
  if (zmm_ok) {
    f.avx512f = b & (1u << 16);
    f.avx512dq = b & (1u << 17);
    f.avx512bw = b & (1u << 30);
    f.avx512vl = b & (1u << 31);
    f.avx512vbmi = c & (1u << 1);
    f.avx512vnni = c & (1u << 11);
  }
  const bool amx_tile = d & (1u << 24), amx_int8 = d & (1u << 25), amx_bf16 = d & (1u << 22);
  const bool tiles_ok = (xcr0 & (uint64_t{3} << 17)) == (uint64_t{3} << 17);  // XTILECFG, XTILEDATA
  const bool tiles_granted = amx_tile && tiles_ok && request_amx_permission();
  f.amx_int8 = tiles_granted && amx_int8;
  f.amx_bf16 = tiles_granted && amx_bf16;
  __cpuid_count(7, 1, a, b, c, d);
  f.avx_vnni = a & (1u << 4);
  if (zmm_ok) f.avx512bf16 = a & (1u << 5);
  f.avx_vnni_int8 = d & (1u << 4);
  return f;
}
#elif defined(__aarch64__) && defined(__linux__)
CpuFeatures detect() {
  const unsigned long hwcap = getauxval(AT_HWCAP);
  CpuFeatures f;
  f.neon = hwcap & HWCAP_ASIMD;
  f.neon_dotprod = hwcap & HWCAP_ASIMDDP;
  return f;
}
#else
CpuFeatures detect() { return CpuFeatures{}; }
#endif

}  // namespace

namespace {

// Every feature flag with its name, in describe()'s order.
struct NamedFeature {
  const char* name;
  bool CpuFeatures::*flag;
};
constexpr NamedFeature kNamedFeatures[] = {
    {"avx2", &CpuFeatures::avx2},
    {"fma", &CpuFeatures::fma},
    {"f16c", &CpuFeatures::f16c},
    {"bmi2", &CpuFeatures::bmi2},
    {"avx_vnni", &CpuFeatures::avx_vnni},
    {"avx_vnni_int8", &CpuFeatures::avx_vnni_int8},
    {"avx512f", &CpuFeatures::avx512f},
    {"avx512bw", &CpuFeatures::avx512bw},
    {"avx512vl", &CpuFeatures::avx512vl},
    {"avx512dq", &CpuFeatures::avx512dq},
    {"avx512vnni", &CpuFeatures::avx512vnni},
    {"avx512vbmi", &CpuFeatures::avx512vbmi},
    {"avx512bf16", &CpuFeatures::avx512bf16},
    {"amx_int8", &CpuFeatures::amx_int8},
    {"amx_bf16", &CpuFeatures::amx_bf16},
    {"neon", &CpuFeatures::neon},
    {"dotprod", &CpuFeatures::neon_dotprod},
};

CpuFeatures detect_allowed() {
  const char* disable = std::getenv("LOWBIT_CPU_DISABLE");
  if (disable == nullptr) return detect();
  try {
    return without_features(detect(), disable);
  } catch (const Error& e) {
    fail("LOWBIT_CPU_DISABLE: ", e.what());
  }
}

}  // namespace

std::string CpuFeatures::describe() const {
  std::string s;
  for (const NamedFeature& f : kNamedFeatures) {
    if (!(this->*f.flag)) continue;
    if (!s.empty()) s += ' ';
    s += f.name;
  }
  return s.empty() ? "scalar" : s;
}

CpuFeatures without_features(CpuFeatures f, const std::string& names) {
  size_t at = 0;
  while (at < names.size()) {
    const size_t end = names.find_first_of(", ", at);
    const std::string name = names.substr(at, end == std::string::npos ? std::string::npos : end - at);
    at = end == std::string::npos ? names.size() : end + 1;
    if (name.empty()) continue;
    bool known = false;
    for (const NamedFeature& n : kNamedFeatures) {
      if (name != n.name) continue;
      f.*n.flag = false;
      known = true;
    }
    if (!known) {
      std::string all;
      for (const NamedFeature& n : kNamedFeatures) all += cat(all.empty() ? "" : ", ", n.name);
      fail("unknown CPU feature '", name, "' (known: ", all, ")");
    }
  }
  return f;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect_allowed();
  return features;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

}  // namespace lowbit
