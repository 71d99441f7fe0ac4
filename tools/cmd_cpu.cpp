// `lowbit cpu`: what this machine offers the kernels.
#include <cstdio>

#include "command.h"
#include "core/cpu_features.h"

namespace lowbit::tools {
namespace {

CommandMain setup_cpu(CLI::App&) {
  return [] {
    const CpuFeatures& f = cpu_features();
    std::printf("features: %s\n", f.describe().c_str());
    std::printf("isa levels: scalar%s%s%s\n", f.has_avx2_level() ? " avx2" : "", f.has_avx512_level() ? " avx512" : "",
                f.has_neon_level() ? " neon-dotprod" : "");
    return 0;
  };
}

const CommandRegistration cpu_command{"cpu", "print the CPU features the kernels can use", setup_cpu};

}  // namespace
}  // namespace lowbit::tools
