// The public API (include/lowbit/lowbit.h) over the runtime's pieces.
#include <algorithm>
#include <thread>

#include "core/error.h"
#include "lowbit/lowbit.h"
#include "model/decoder.h"
#include "runtime/generator.h"
#include "runtime/tokenizer_loader.h"

namespace lowbit {

struct Engine::Impl {
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
};

Engine::Engine(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Engine::~Engine() = default;

std::unique_ptr<Engine> Engine::open(const EngineOptions& o) {
  auto impl = std::make_unique<Impl>();
  const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  impl->pool = std::make_unique<ThreadPool>(threads);
  LoadOptions lo;
  lo.kernel = o.kernel;
  lo.n_ctx = o.n_ctx;
  impl->model = Model::load(o.model, lo, *impl->pool);
  impl->tokenizer = load_tokenizer(o.tokenizer, *impl->model);
  return std::unique_ptr<Engine>(new Engine(std::move(impl)));
}

int64_t Engine::vocab_size() const { return impl_->model->config().n_vocab; }
int64_t Engine::context_length() const { return impl_->model->n_ctx(); }

std::vector<int32_t> Engine::tokenize(std::string_view text, bool add_bos) const {
  return impl_->tokenizer->encode(text, add_bos, !impl_->model->is_llama2c());
}

std::string Engine::token_text(int32_t token) const { return impl_->tokenizer->token_to_piece(token); }

namespace {
Decoder make_decoder(const Model& model, ThreadPool& pool) {
  return Decoder(model, pool, kPromptBatch, model.prefers_f32_kv_cache() ? KvCacheType::F32 : KvCacheType::F16);
}
}  // namespace

std::vector<float> Engine::logits(const std::vector<int32_t>& tokens) {
  Decoder decoder = make_decoder(*impl_->model, *impl_->pool);
  std::vector<float> out(static_cast<size_t>(vocab_size()));
  decoder.eval(tokens.data(), static_cast<int64_t>(tokens.size()), out.data());
  return out;
}

GenerationStats Engine::generate(std::string_view prompt, const GenerationParams& p,
                                 const std::function<void(std::string_view)>& on_text) {
  GenerateOptions g;
  g.n_predict = p.n_predict;
  g.sampling.temperature = p.temperature;
  g.sampling.top_k = p.top_k;
  g.sampling.top_p = p.top_p;
  g.sampling.min_p = p.min_p;
  g.sampling.repeat_penalty = p.repeat_penalty;
  g.sampling.seed = p.seed;
  Decoder decoder = make_decoder(*impl_->model, *impl_->pool);
  const GenerateResult r = generate_text(decoder, *impl_->tokenizer, tokenize(prompt, impl_->tokenizer->vocab().add_bos),
                                         g, on_text);
  return {static_cast<int64_t>(r.prompt_tokens.size()), static_cast<int64_t>(r.generated.size()), r.prompt_seconds,
          r.generate_seconds};
}

}  // namespace lowbit
