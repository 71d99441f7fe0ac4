#include "tokenizer/regex_splitter.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "core/error.h"
#include "tokenizer/utf8.h"

namespace lowbit {
namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  pcre2_get_error_message(code, buffer, sizeof(buffer));
  return reinterpret_cast<const char*>(buffer);
}

}  // namespace

// The per-call state: match data and a JIT stack large enough for long runs
// of whitespace under the look-ahead of "\s+(?!\S)".
struct RegexSplitter::MatchState {
  pcre2_match_data* data = nullptr;
  pcre2_match_context* context = nullptr;
  pcre2_jit_stack* jit_stack = nullptr;

  explicit MatchState(const pcre2_code* code) {
    data = pcre2_match_data_create_from_pattern(code, nullptr);
    context = pcre2_match_context_create(nullptr);
    jit_stack = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, nullptr);
    if (data == nullptr || context == nullptr || jit_stack == nullptr) {
      release();
      fail("PCRE2: out of memory for the match state");
    }
    pcre2_jit_stack_assign(context, nullptr, jit_stack);
  }
  ~MatchState() { release(); }
  void release() {  // the pcre2 free functions accept null
    pcre2_jit_stack_free(jit_stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(data);
  }
  MatchState(const MatchState&) = delete;
  MatchState& operator=(const MatchState&) = delete;
};

struct RegexSplitter::Compiled {
  pcre2_code* code = nullptr;
  ~Compiled() { pcre2_code_free(code); }
};

RegexSplitter::RegexSplitter(const std::string& pattern) : pattern_(pattern), compiled_(std::make_unique<Compiled>()) {
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  compiled_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                  PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &error_offset, nullptr);
  if (compiled_->code == nullptr)
    fail("pre-tokenizer regex \"", pattern, "\": ", pcre2_message(error), " at offset ", error_offset);
  // Without JIT (unsupported CPU) PCRE2 interprets the pattern: slower, same result.
  pcre2_jit_compile(compiled_->code, PCRE2_JIT_COMPLETE);
}

RegexSplitter::~RegexSplitter() = default;
RegexSplitter::RegexSplitter(RegexSplitter&&) noexcept = default;
RegexSplitter& RegexSplitter::operator=(RegexSplitter&&) noexcept = default;

void RegexSplitter::split(std::span<const std::string_view> texts, std::vector<std::string_view>& pieces) const {
  MatchState state(compiled_->code);
  for (std::string_view text : texts) split_one(text, state, pieces);
}

void RegexSplitter::split_one(std::string_view text, MatchState& state, std::vector<std::string_view>& pieces) const {
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t gap_start = 0;  // text from here to the next match is a gap piece
  size_t search_from = 0;
  while (search_from < text.size()) {
    const int rc = pcre2_match(compiled_->code, subject, text.size(), search_from, 0, state.data, state.context);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) fail("pre-tokenizer regex \"", pattern_, "\": matching failed: ", pcre2_message(rc));
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(state.data);
    const size_t start = ovector[0];
    const size_t end = ovector[1];
    if (start >= text.size()) break;
    if (end == start) {  // an empty match marks no word: the character stays in the gap
      search_from = start + utf8_char_length_at(text, start);
      continue;
    }
    if (start > gap_start) pieces.push_back(text.substr(gap_start, start - gap_start));
    pieces.push_back(text.substr(start, end - start));
    gap_start = search_from = end;
  }
  if (gap_start < text.size()) pieces.push_back(text.substr(gap_start));
}

}  // namespace lowbit
