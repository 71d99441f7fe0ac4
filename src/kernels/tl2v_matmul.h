// The "tl2v" kernel family (dispatch.h): lossless ternary x int8 at 1.67 bits
// per weight on AVX-512 VBMI (tl2v_tiles.h).
#pragma once

#include <memory>

#include "core/cpu_features.h"
#include "kernels/matmul.h"

namespace lowbit {

int tl2v_score(const WeightView& w, const CpuFeatures& cpu);
std::unique_ptr<Matmul> tl2v_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool);

}  // namespace lowbit
