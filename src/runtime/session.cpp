#include "runtime/session.h"

namespace lowbit {

Session::Session(const Model& model, ThreadPool& pool, KvCacheType kv_type) : decoder_(model, pool, 64, kv_type) {}

GenerateResult Session::generate(const Tokenizer& tokenizer, const std::vector<int32_t>& prompt,
                                 GenerateOptions options, const std::function<void(std::string_view)>& on_text) {
  const int64_t same = reusable_prefix(cached_, prompt);
  decoder_.truncate(same);
  options.cached_prefix = same;
  last_cached_ = same;
  cached_.clear();  // unknown if generation throws
  GenerateResult r = generate_text(decoder_, tokenizer, prompt, options, on_text);
  cached_ = prompt;
  cached_.insert(cached_.end(), r.generated.begin(), r.generated.end());
  cached_.resize(static_cast<size_t>(decoder_.pos()));  // the last sampled token was not evaluated
  return r;
}

}  // namespace lowbit
