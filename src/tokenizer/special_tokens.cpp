#include "tokenizer/special_tokens.h"

#include <algorithm>

namespace lowbit {

SpecialTokenSplitter::SpecialTokenSplitter(const Vocab& vocab) {
  for (int32_t id = 0; id < vocab.n_vocab(); ++id) {
    const int32_t type = vocab.token_types[id];
    if (vocab.tokens[id].empty()) continue;
    if (type == kTokenControl || type == kTokenUnknown || type == kTokenUserDefined)
      specials_.push_back({vocab.tokens[id], id, type == kTokenUserDefined});
  }
  std::stable_sort(specials_.begin(), specials_.end(),
                   [](const Special& a, const Special& b) { return a.text.size() > b.text.size(); });
}

std::vector<TextFragment> SpecialTokenSplitter::split(std::string_view text, bool parse_special) const {
  std::vector<TextFragment> fragments;
  if (text.empty()) return fragments;
  fragments.push_back({text, -1});
  std::vector<TextFragment> next;
  for (const Special& special : specials_) {
    if (!parse_special && !special.always) continue;
    next.clear();
    for (const TextFragment& fragment : fragments) {
      if (fragment.token >= 0) {
        next.push_back(fragment);
        continue;
      }
      std::string_view rest = fragment.text;
      for (size_t at; (at = rest.find(special.text)) != std::string_view::npos;) {
        if (at > 0) next.push_back({rest.substr(0, at), -1});
        next.push_back({special.text, special.id});
        rest.remove_prefix(at + special.text.size());
      }
      if (!rest.empty()) next.push_back({rest, -1});
    }
    fragments.swap(next);
  }
  return fragments;
}

}  // namespace lowbit
