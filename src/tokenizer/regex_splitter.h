// One PCRE2 regular expression (UTF + Unicode properties, JIT-compiled) used to
// split text into the pieces it matches and the gaps between them.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace lowbit {

class RegexSplitter {
 public:
  // Throws Error naming the pattern and the offset where PCRE2 rejects it.
  explicit RegexSplitter(const std::string& pattern);
  ~RegexSplitter();
  RegexSplitter(RegexSplitter&&) noexcept;
  RegexSplitter& operator=(RegexSplitter&&) noexcept;

  // Appends to `pieces`, for each text in turn, the matches of the pattern and
  // the non-empty gaps between them, in text order (Hugging Face's "Isolated"
  // split), so the pieces concatenate back to the texts. Invalid UTF-8 never
  // matches and ends up in gaps. Thread-safe: the match state is per call.
  void split(std::span<const std::string_view> texts, std::vector<std::string_view>& pieces) const;

  const std::string& pattern() const { return pattern_; }

 private:
  struct Compiled;
  struct MatchState;
  void split_one(std::string_view text, MatchState& state, std::vector<std::string_view>& pieces) const;
  std::string pattern_;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace lowbit
