#include "runtime/session.h"

namespace lowbit {

Session::Session(const Model& model, ThreadPool& pool, KvCacheType kv_type) : decoder_(model, pool, 64, kv_type) {}

GenerateResult Session::generate(const Tokenizer& tokenizer, const std::vector<int32_t>& prompt,
                                 GenerateOptions options, const std::function<void(std::string_view)>& on_text) {
  // The longest prefix shared with the cache; at least the prompt's last
  // token is evaluated (its logits sample the first reply token).
  size_t same = 0;
  while (same < cached_.size() && same + 1 < prompt.size() && cached_[same] == prompt[same]) ++same;
  decoder_.truncate(static_cast<int64_t>(same));
  options.cached_prefix = static_cast<int64_t>(same);
  last_cached_ = static_cast<int64_t>(same);
  cached_.clear();  // unknown if generation throws
  GenerateResult r = generate_text(decoder_, tokenizer, prompt, options, on_text);
  cached_ = prompt;
  cached_.insert(cached_.end(), r.generated.begin(), r.generated.end());
  cached_.resize(static_cast<size_t>(decoder_.pos()));  // the last sampled token was not evaluated
  return r;
}

}  // namespace lowbit
