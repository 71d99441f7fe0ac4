// One sequence that outlives its requests: a decoder and the tokens its KV
// cache holds. A prompt that begins with those tokens (a chat's next turn,
// which resends the conversation) evaluates only the rest.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "model/decoder.h"
#include "runtime/generator.h"

namespace lowbit {

class Session {
 public:
  Session(const Model& model, ThreadPool& pool, KvCacheType kv_type = KvCacheType::F16);

  // generate_text over the kept cache (options.cached_prefix is set here).
  GenerateResult generate(const Tokenizer& tokenizer, const std::vector<int32_t>& prompt, GenerateOptions options,
                          const std::function<void(std::string_view)>& on_text);
  // Prompt tokens the last generate() found in the cache.
  int64_t last_cached() const { return last_cached_; }
  Decoder& decoder() { return decoder_; }

 private:
  Decoder decoder_;
  std::vector<int32_t> cached_;  // the tokens at the decoder's positions 0 .. pos()-1
  int64_t last_cached_ = 0;
};

}  // namespace lowbit
