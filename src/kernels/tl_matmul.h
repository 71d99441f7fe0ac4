// The TL kernel families (dispatch.h): tl1_0, tl1_1, tl2_0, tl2_1 (bitnet.cpp's
// names; _1 lossless with int16 tables, _0 with int8 tables), and tl1 / tl2
// meaning the lossless ones.
#pragma once

#include <vector>

#include "kernels/dispatch.h"

namespace lowbit {

std::vector<KernelFamily> tl_kernel_families();

}  // namespace lowbit
