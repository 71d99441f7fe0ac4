#include "kernels/dispatch.h"

#include "core/error.h"
#include "kernels/aipc_families.h"
#include "kernels/float_matmul.h"
#include "kernels/k_quant_q8k.h"
#include "kernels/i2s_matmul.h"
#include "kernels/tl2v_matmul.h"
#include "kernels/tl_matmul.h"
#include "quant/weight_format.h"

namespace lowbit {

namespace {

int reference_score(const WeightView& w, const CpuFeatures&) {
  return find_weight_format(w.type) != nullptr ? 1 : 0;
}

std::unique_ptr<Matmul> reference_make(const WeightView& w, const CpuFeatures&, ThreadPool&) {
  return make_reference_matmul(w);
}

}  // namespace

const std::vector<KernelFamily>& kernel_families() {
  static const std::vector<KernelFamily> families = [] {
    std::vector<KernelFamily> f;
    f.push_back({"ref", "scalar reference of every format (src/quant)", reference_score, reference_make});
    f.push_back({"i2s", "ternary 2-bit tiles, int8 VNNI dot, lossless (AVX2/AVX-512)", i2s_score, i2s_make});
    f.push_back({"tl2v", "ternary TL2 triples (1.67 bits) up-converted for int8 VNNI, lossless (AVX-512 VBMI)",
                 tl2v_score, tl2v_make});
    for (const auto& tl : tl_kernel_families()) f.push_back(tl);
    f.push_back(int2_kernel_family());
    f.push_back(int1_kernel_family());
    f.push_back(int1_lut_kernel_family());
    f.push_back(q4_0_kernel_family());
    f.push_back(iq4_nl_kernel_family());
    f.push_back(q8_0_kernel_family());
    f.push_back(float_kernel_family());
    f.push_back(q6_k_kernel_family());
    f.push_back(q4_k_kernel_family());
    f.push_back(q2_k_kernel_family());
    f.push_back(q3_k_kernel_family());
    f.push_back(q4_1_kernel_family());
    f.push_back(iq4_xs_kernel_family());
    f.push_back(q6_k_q8k_kernel_family());
    f.push_back(q4_k_q8k_kernel_family());
    f.push_back(q5_k_q8k_kernel_family());
    f.push_back(q2_k_q8k_kernel_family());
    f.push_back(q3_k_q8k_kernel_family());
    f.push_back(iq4_xs_q8k_kernel_family());
    return f;
  }();
  return families;
}

const KernelFamily* find_kernel_family(const std::string& name) {
  for (const auto& f : kernel_families())
    if (name == f.name) return &f;
  return nullptr;
}

namespace {

// The families a group name stands for: "q8k" for every *_q8k family (a mixed
// k-quant file's types at once, as llama.cpp computes them).
std::vector<std::string> group_members(const std::string& name) {
  std::vector<std::string> members;
  if (name != "q8k") return members;
  for (const auto& f : kernel_families()) {
    const std::string n = f.name;
    if (n.size() > 4 && n.compare(n.size() - 4, 4, "_q8k") == 0) members.push_back(n);
  }
  return members;
}

}  // namespace

std::string kernel_names() {
  std::string s = "auto";
  for (const auto& f : kernel_families()) s += cat(", ", f.name);
  return s + ", q8k (every *_q8k)";
}

std::vector<std::string> forced_kernel_names(const std::string& kernel) {
  std::vector<std::string> names;
  if (kernel == "auto") return names;
  for (size_t begin = 0;;) {
    const size_t end = kernel.find('+', begin);
    const std::string name = kernel.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
    const std::vector<std::string> members = group_members(name);
    if (!members.empty())
      names.insert(names.end(), members.begin(), members.end());
    else if (find_kernel_family(name) != nullptr)
      names.push_back(name);
    else
      fail("unknown kernel '", name, "' in '", kernel, "' (known: ", kernel_names(), "; join several with +)");
    if (end == std::string::npos) return names;
    begin = end + 1;
  }
}

std::unique_ptr<Matmul> make_matmul(const WeightView& w, const std::string& kernel, ThreadPool& pool,
                                    const CpuFeatures& cpu) {
  for (const std::string& name : forced_kernel_names(kernel)) {
    const KernelFamily* forced = find_kernel_family(name);
    if (forced->score(w, cpu) != 0) return forced->make(w, cpu, pool);
  }
  const KernelFamily* best = nullptr;
  int best_score = 0;
  for (const auto& f : kernel_families()) {
    const int s = f.score(w, cpu);
    if (s > best_score) {
      best_score = s;
      best = &f;
    }
  }
  if (best == nullptr)
    fail("tensor ", w.name, ": no kernel can multiply type ", ggml_type_name(w.type), " (shape ", w.rows, " x ",
         w.cols, ")");
  return best->make(w, cpu, pool);
}

}  // namespace lowbit
