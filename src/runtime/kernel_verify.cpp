#include "runtime/kernel_verify.h"

#include <algorithm>
#include <map>

#include "core/error.h"
#include "kernels/dispatch.h"
#include "model/decoder.h"

namespace lowbit {

namespace {

std::vector<const Matmul*> matmuls_of(const Model& m) {
  std::vector<const Matmul*> v;
  for (const LayerWeights& L : m.layers())
    for (const Linear* l : {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down}) v.push_back(l->matmul.get());
  v.push_back(m.output().matmul.get());
  return v;
}

// "i2s/avx512-vnni" -> "i2s"
std::string family_of(const std::string& kernel_name) { return kernel_name.substr(0, kernel_name.find('/')); }

}  // namespace

KernelUse describe_kernel_use(const Model& model, const Model& ref) {
  const std::vector<const Matmul*> mine = matmuls_of(model), theirs = matmuls_of(ref);
  if (mine.size() != theirs.size()) fail("verify: the two loads of ", model.path(), " have different matrices");
  KernelUse use;
  for (size_t i = 0; i < mine.size(); ++i) {
    const std::string name = mine[i]->kernel_name();
    use.kernels.push_back(name);
    if (!use.lossless) continue;
    const KernelFamily* f = find_kernel_family(family_of(name));
    if (f != nullptr && !f->lossless) {
      use.lossless = false;
      use.approximate_because = cat(name, " is an approximate kernel");
    } else if (mine[i]->uses_int8_activations() && !theirs[i]->uses_int8_activations()) {
      use.lossless = false;
      use.approximate_because = cat(name, " quantizes activations to int8 where the reference multiplies in float");
    }
  }
  return use;
}

std::string summarize_kernels(const std::vector<std::string>& kernels) {
  std::map<std::string, int> counts;
  for (const auto& k : kernels) counts[k]++;
  std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string s;
  for (const auto& [name, n] : sorted) s += cat(s.empty() ? "" : ", ", n, " ", name);
  return s;
}

std::vector<float> evaluate_all_logits(const Model& model, ThreadPool& pool, const std::vector<int32_t>& tokens) {
  Decoder decoder(model, pool, 64, KvCacheType::F32);
  std::vector<float> logits(tokens.size() * static_cast<size_t>(model.config().n_vocab));
  decoder.eval(tokens.data(), static_cast<int64_t>(tokens.size()), logits.data(), /*all_logits=*/true);
  return logits;
}

KernelComparison compare_kernel_logits(const std::vector<float>& ref, const std::vector<float>& other,
                                       const std::vector<int32_t>& tokens, int64_t n_vocab) {
  const int64_t n = static_cast<int64_t>(tokens.size());
  if (static_cast<int64_t>(ref.size()) != n * n_vocab || other.size() != ref.size())
    fail("verify: logits of ", ref.size(), " and ", other.size(), " values for ", n, " tokens of ", n_vocab);
  KernelComparison c;
  std::vector<double> base_lp(static_cast<size_t>(n_vocab)), lp(static_cast<size_t>(n_vocab));
  for (int64_t t = 0; t < n; ++t) {
    const float* a = ref.data() + t * n_vocab;
    const float* b = other.data() + t * n_vocab;
    c.logits.add(a, b, n_vocab);
    log_softmax(a, n_vocab, base_lp.data());
    log_softmax(b, n_vocab, lp.data());
    c.distributions.add(base_lp.data(), lp.data(), n_vocab, t + 1 < n ? tokens[static_cast<size_t>(t + 1)] : -1);
  }
  return c;
}

Verdict judge(const KernelComparison& c, bool lossless, double relative_tolerance) {
  if (!lossless) return Verdict::Approximate;
  return c.logits.within(relative_tolerance) ? Verdict::Pass : Verdict::Fail;
}

}  // namespace lowbit
