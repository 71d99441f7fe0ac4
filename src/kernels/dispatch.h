// Choosing a kernel per matrix (design.md). Each kernel family says how well
// it suits a matrix on a CPU; `auto` takes the best, a name forces one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernels/matmul.h"

namespace lowbit {

struct KernelFamily {
  const char* name;  // as --kernel spells it: "ref", "i2s", "tl1", "tl2", ...
  const char* description;
  // How well this family suits w on a CPU with `cpu`: 0 = cannot run it;
  // higher is better (the reference scores 1); negative = can run it when
  // forced with --kernel but auto never picks it (e.g. int8 activations on
  // an F16 model, which its authors compute in float).
  int (*score)(const WeightView& w, const CpuFeatures& cpu);
  // Repacks w into the family's layout (on the pool) for the best ISA level `cpu` allows.
  std::unique_ptr<Matmul> (*make)(const WeightView& w, const CpuFeatures& cpu, ThreadPool& pool);
  // True when the family computes exactly what the format's reference computes
  // (up to float accumulation order); false for approximations such as int8
  // lookup tables, which `lowbit verify` and the tests hold to their own bounds.
  bool lossless = true;
};

// Every family compiled in, "ref" first.
const std::vector<KernelFamily>& kernel_families();
const KernelFamily* find_kernel_family(const std::string& name);
// "auto, ref, i2s, ..." for help texts.
std::string kernel_names();
// The family names of a --kernel value: "a+b" -> {"a", "b"}; "auto" -> {};
// the group "q8k" -> every *_q8k family. Unknown or empty names -> Error.
std::vector<std::string> forced_kernel_names(const std::string& kernel);

// kernel == "auto": the highest-scoring family for w. Otherwise the named family
// if it can run w, else the auto choice (a forced kernel applies to the matrices
// it supports; the head and embeddings keep theirs). Several names joined by
// '+' ("q4_k_q8k+q6_k_q8k": a Q4_K_M file's two types) are tried in order.
// Unknown name -> Error.
// `cpu` defaults to the detected features; tests pass fewer to reach lower ISA paths.
std::unique_ptr<Matmul> make_matmul(const WeightView& w, const std::string& kernel, ThreadPool& pool,
                                    const CpuFeatures& cpu = cpu_features());

}  // namespace lowbit
