// tokenizer.json files with damaged structure: a small valid byte-level BPE
// tokenizer (the 256 byte tokens, merges, added tokens, Llama 3's split) with
// members replaced by values of other types or out of range, removed, or the
// text cut short. Each is read into a vocabulary that tokenizes text, or
// refused with an Error naming the path; never a crash (the suite also runs
// under AddressSanitizer + UBSan, where an assertion or undefined behaviour
// aborts).
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "fixtures.h"
#include "tokenizer/byte_level.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_hf_json.h"

namespace lowbit::vocab_hf_json_fuzz_test {
namespace {

using nlohmann::json;

json seed_tokenizer() {
  json vocab = json::object();
  for (int b = 0; b < 256; ++b) vocab[byte_level_char(static_cast<uint8_t>(b))] = b;
  const std::string space = byte_level_char(' ');
  vocab["on"] = 256;
  vocab["ce"] = 257;
  vocab[space + "u"] = 258;
  vocab["once"] = 259;
  json merges = json::array({"o n", "c e", space + " u", json::array({"on", "ce"})});
  json added = json::array({{{"id", 260}, {"content", "<|begin_of_text|>"}, {"special", true}},
                            {{"id", 261}, {"content", "<|eot_id|>"}, {"special", true}},
                            {{"id", 262}, {"content", "<x>"}, {"special", false}}});
  json split = {{"type", "Split"}, {"pattern", {{"Regex", find_pre_tokenizer("llama-bpe")->hf_regex}}}};
  json byte_level = {{"type", "ByteLevel"}, {"use_regex", false}};
  return {{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}, {"unk_token", "<x>"}}},
          {"added_tokens", added},
          {"pre_tokenizer", {{"type", "Sequence"}, {"pretokenizers", json::array({split, byte_level})}}}};
}

// A value to put somewhere it does not belong.
json odd_value(Rng& rng) {
  switch (rng.below(12)) {
    case 0: return nullptr;
    case 1: return -1;
    case 2: return 0;
    case 3: return 263;  // one past the last id
    case 4: return int64_t{1} << 40;
    case 5: return uint64_t{18446744073709551615u};
    case 6: return 2.5;
    case 7: return true;
    case 8: return "";
    case 9: return "(?<unclosed";
    case 10: return json::array();
    default: return json::object();
  }
}

// Every value in the tree, by JSON pointer (the byte tokens' 256 entries left out
// but one, so that the damage falls on the structure more often).
void collect(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
  out.push_back(at);
  if (j.is_object()) {
    int bytes_seen = 0;
    for (const auto& [key, value] : j.items()) {
      if (value.is_number_integer() && value.get<int64_t>() < 256 && ++bytes_seen > 1) continue;
      collect(value, at / key, out);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) collect(j[i], at / i, out);
  }
}

void damage(json& root, Rng& rng) {
  std::vector<json::json_pointer> places;
  collect(root, json::json_pointer(), places);
  const json::json_pointer at = places[rng.below(places.size())];
  if (at.empty()) return;
  if (rng.below(4) == 0) {
    json& parent = root[at.parent_pointer()];
    if (parent.is_object()) parent.erase(at.back());
    else if (parent.is_array()) parent.erase(std::stoul(at.back()));
  } else {
    root[at] = odd_value(rng);
  }
}

TEST(VocabHfJsonFuzz, DamagedFilesTokenizeOrAreRefusedNamingThem) {
  const json seed = seed_tokenizer();
  const std::string path = testing::temp_path("tokenizer-fuzz.json");
  const std::string text = "once upon a time <|eot_id|> <x> caf\xc3\xa9 \xff 12345";
  const auto read_and_tokenize = [&](const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
    const auto tok = Tokenizer::create(read_vocab_hf_json(path));
    std::string round_trip;
    for (int32_t id : tok->encode(text, true, true)) round_trip += tok->token_to_piece(id);
    return round_trip;
  };
  // The seed reads, and round-trips the text after its <|begin_of_text|>.
  ASSERT_EQ(read_and_tokenize(seed.dump()), "<|begin_of_text|>" + text);

  constexpr int kIterations = 3000;
  int read = 0, refused = 0;
  Rng rng(20261128);
  for (int it = 0; it < kIterations; ++it) {
    json j = seed;
    for (uint64_t n = 1 + rng.below(2); n > 0; --n) damage(j, rng);
    std::string bytes = j.dump();
    if (rng.below(10) == 0) bytes.resize(rng.below(bytes.size()));
    try {
      EXPECT_FALSE(read_and_tokenize(bytes).empty());
      ++read;
    } catch (const Error& e) {
      ASSERT_EQ(std::string(e.what()).rfind(path + ": ", 0), 0u) << e.what();
      ++refused;
    } catch (const std::exception& e) {
      FAIL() << "iteration " << it << ": " << e.what() << "\n" << bytes.substr(0, 400);
    }
  }
  // Both outcomes must be common, or the damage is not exercising the reader.
  EXPECT_GT(read, 100);
  EXPECT_GT(refused, 1000);
}

}  // namespace
}  // namespace lowbit::vocab_hf_json_fuzz_test
