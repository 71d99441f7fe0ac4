// The "i2s" kernel family (dispatch.h): lossless ternary x int8 on AVX2 / AVX-512.
#pragma once

#include <memory>

#include "core/cpu_features.h"
#include "kernels/matmul.h"

namespace lowbit {

int i2s_score(const WeightView& w, const CpuFeatures& cpu);
std::unique_ptr<Matmul> i2s_make(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool);

}  // namespace lowbit
