// Malformed GGUF images, each wrong in one place, built from a valid image:
// every one must be refused with an Error naming the file, the key or tensor,
// and the reason. Plus the unusual-but-valid files that must still open.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "formats/gguf.h"
#include "formats/gguf_test_util.h"

namespace lowbit {
namespace {

using test::Bytes;
using test::EncodedGguf;
using test::RawGguf;

using MakeImage = std::function<Bytes()>;

// The valid image after `change` edits its description.
MakeImage edited(std::function<void(RawGguf&)> change) {
  return [change] {
    RawGguf g = test::small_valid_gguf();
    change(g);
    return test::encode(g).bytes;
  };
}

// The valid image with the field at `mark` + delta overwritten by `value`.
template <class T>
MakeImage patched(std::string mark, ptrdiff_t delta, T value) {
  return [mark, delta, value] {
    EncodedGguf e = test::encode(test::small_valid_gguf());
    test::patch(e.bytes, static_cast<size_t>(static_cast<ptrdiff_t>(e.at.at(mark)) + delta), value);
    return e.bytes;
  };
}

// The valid image cut `delta` bytes after `mark` (negative: before it). The
// keys or tensors after the one cut into are dropped first, so the header's
// counts still fit in what remains and the reader gets as far as the cut.
MakeImage cut(std::string mark, ptrdiff_t delta) {
  return [mark, delta] {
    RawGguf g = test::small_valid_gguf();
    const std::string field = mark.substr(0, mark.find(':'));
    const std::string name = mark.substr(mark.find(':') + 1);
    if (field == "key" || field == "value") {
      size_t k = 0;
      while (g.kvs[k].key != name) ++k;
      g.kvs.resize(k + 1);
      g.tensors.clear();
    } else if (field != mark) {
      size_t t = 0;
      while (g.tensors[t].name != name) ++t;
      g.tensors.resize(t + 1);
    }
    EncodedGguf e = test::encode(g);
    e.bytes.resize(static_cast<size_t>(static_cast<ptrdiff_t>(e.at.at(mark)) + delta));
    return e.bytes;
  };
}

// `levels` arrays each holding the next; the innermost is an empty u8 array.
Bytes nested_arrays(int levels) {
  Bytes v = test::gguf_array(test::kU8, 0, {});
  for (int k = 1; k < levels; ++k) v = test::gguf_array(test::kArray, 1, v);
  return v;
}

RawGguf with_alignment_key(uint32_t type, Bytes value) {
  RawGguf g = test::small_valid_gguf();
  g.kvs.push_back({"general.alignment", type, std::move(value)});
  return g;
}

struct Case {
  std::string name;
  MakeImage make;
  std::vector<std::string> expect;  // substrings of the message, besides the file name
};

std::vector<Case> corrupt_cases() {
  constexpr uint64_t k2to62 = uint64_t{1} << 62;
  return {
      {"empty", [] { return Bytes{}; }, {"header", "file ends inside the magic"}},
      {"truncated-magic", cut("tensor_count", -5), {"file ends inside the magic"}},
      {"bad-magic", edited([](RawGguf& g) { g.magic = "GGML"; }), {"not a GGUF file", "'GGML'"}},
      {"truncated-version", cut("tensor_count", -2), {"file ends inside the version"}},
      {"version-1", edited([](RawGguf& g) { g.version = 1; }), {"GGUF version 1 is not supported"}},
      {"version-4", edited([](RawGguf& g) { g.version = 4; }), {"GGUF version 4 is not supported"}},
      {"version-big-endian", edited([](RawGguf& g) { g.version = 0x03000000; }), {"byte-swapped", "little-endian"}},
      {"truncated-tensor-count", cut("tensor_count", 3), {"file ends inside the tensor count"}},
      {"huge-tensor-count", patched<uint64_t>("tensor_count", 0, uint64_t{1} << 40),
       {"header", "tensor count 1099511627776 does not fit in the file"}},
      {"huge-kv-count", patched<uint64_t>("kv_count", 0, UINT64_MAX),
       {"key/value count 18446744073709551615 does not fit in the file"}},
      {"truncated-key-length", cut("key:tiny.flag", 4), {"key #2", "file ends inside the key"}},
      {"truncated-key-bytes", cut("key:tiny.flag", 8 + 3), {"key #2", "key of 9 bytes does not fit in the file"}},
      {"huge-key-length", patched<uint64_t>("key:tiny.flag", 0, k2to62),
       {"key #2", "key of 4611686018427387904 bytes does not fit in the file"}},
      {"empty-key", edited([](RawGguf& g) { g.kvs[1].key = ""; }), {"key #1", "empty key"}},
      {"key-too-long", edited([](RawGguf& g) { g.kvs[1].key = std::string(65536, 'k'); }),
       {"key #1", "key of 65536 bytes is longer than the 65535"}},
      {"duplicate-key", edited([](RawGguf& g) { g.kvs[2].key = "tiny.block_count"; }),
       {"key 'tiny.block_count'", "appears twice (entries 1 and 2)"}},
      {"unknown-value-type", edited([](RawGguf& g) { g.kvs[1].type = 13; }),
       {"key 'tiny.block_count'", "unknown value type id 13"}},
      {"truncated-value-type", cut("value:tiny.block_count", -2),
       {"key 'tiny.block_count'", "file ends inside the value type"}},
      {"truncated-uint32-value", cut("value:tiny.block_count", 2),
       {"key 'tiny.block_count'", "file ends inside the uint32 value"}},
      {"bool-2", patched<uint8_t>("value:tiny.flag", 0, 2), {"key 'tiny.flag'", "bool value 2 is neither 0 nor 1"}},
      {"huge-string-length", patched<uint64_t>("value:general.architecture", 0, INT64_MAX),
       {"key 'general.architecture'", "string of 9223372036854775807 bytes does not fit in the file"}},
      {"truncated-string", cut("value:general.architecture", 8 + 2),
       {"key 'general.architecture'", "string of 4 bytes does not fit in the file"}},
      {"huge-string-array", patched<uint64_t>("value:tokenizer.ggml.tokens", 4, k2to62),
       {"key 'tokenizer.ggml.tokens'", "array of 4611686018427387904 strings does not fit in the file"}},
      {"truncated-string-array", cut("value:tokenizer.ggml.tokens", 12 + 13 + 11 + 12 + 8 + 2),
       {"key 'tokenizer.ggml.tokens'", "string of 5 bytes does not fit in the file"}},
      {"huge-float-array", patched<uint64_t>("value:tiny.scores", 4, uint64_t{1} << 40),
       {"key 'tiny.scores'", "array of 1099511627776 float32 values does not fit in the file"}},
      {"huge-nested-array", patched<uint64_t>("value:tiny.nested", 4, uint64_t{1} << 50),
       {"key 'tiny.nested'", "array of 1125899906842624 arrays does not fit in the file"}},
      {"unknown-array-element-type", patched<uint32_t>("value:tiny.scores", 0, 99),
       {"key 'tiny.scores'", "unknown array element type id 99"}},
      {"truncated-array-count", cut("value:tiny.scores", 4 + 5), {"key 'tiny.scores'", "inside the array count"}},
      {"nested-too-deep", edited([](RawGguf& g) { g.kvs.push_back({"deep", test::kArray, nested_arrays(9)}); }),
       {"key 'deep'", "arrays nested deeper than 8 levels"}},
      {"alignment-0", [] { return test::encode(with_alignment_key(test::kU32, test::le<uint32_t>(0))).bytes; },
       {"key 'general.alignment' is 0, not a power of two"}},
      {"alignment-3", [] { return test::encode(with_alignment_key(test::kU32, test::le<uint32_t>(3))).bytes; },
       {"key 'general.alignment' is 3, not a power of two"}},
      {"alignment-uint64", [] { return test::encode(with_alignment_key(test::kU64, test::le<uint64_t>(32))).bytes; },
       {"key 'general.alignment' has type uint64, must be uint32"}},
      {"alignment-string", [] { return test::encode(with_alignment_key(test::kString, test::gguf_str("32"))).bytes; },
       {"key 'general.alignment' has type string, must be uint32"}},
      {"truncated-tensor-name", cut("tensor:b.weight", 4), {"tensor #1", "file ends inside the tensor name"}},
      {"empty-tensor-name", edited([](RawGguf& g) { g.tensors[1].name = ""; }), {"tensor #1", "empty tensor name"}},
      {"duplicate-tensor", edited([](RawGguf& g) { g.tensors[2].name = "a.weight"; }),
       {"tensor 'a.weight'", "name appears twice (tensors 0 and 2)"}},
      {"n_dims-0", edited([](RawGguf& g) { g.tensors[1].dims = {}; }), {"tensor 'b.weight'", "n_dims 0 is outside 1..4"}},
      {"n_dims-5", edited([](RawGguf& g) { g.tensors[1].dims = {32, 3, 1, 1, 1}; }),
       {"tensor 'b.weight'", "n_dims 5 is outside 1..4"}},
      {"n_dims-huge", patched<uint32_t>("dims:b.weight", -4, UINT32_MAX),
       {"tensor 'b.weight'", "n_dims 4294967295 is outside 1..4"}},
      {"truncated-dims", cut("dims:b.weight", 10), {"tensor 'b.weight'", "file ends inside the dimension"}},
      {"zero-dim", edited([](RawGguf& g) { g.tensors[1].dims = {32, 0}; }),
       {"tensor 'b.weight'", "shape [32, 0]: dimension 1 is 0"}},
      {"dim-above-int64", edited([](RawGguf& g) { g.tensors[0].dims = {8, UINT64_MAX}; }),
       {"tensor 'a.weight'", "dimension 1 is above 2^63-1"}},
      {"element-count-overflow", edited([](RawGguf& g) { g.tensors[0].dims = {1u << 20, 1u << 20, 1u << 20, 1u << 20}; }),
       {"tensor 'a.weight'", "has more than 2^63-1 elements"}},
      {"byte-size-overflow", edited([](RawGguf& g) { g.tensors[1].dims = {32, (uint64_t{1} << 58) - 1}; }),
       {"tensor 'b.weight'", "byte size overflows"}},
      {"row-byte-size-overflow", edited([](RawGguf& g) { g.tensors[0].dims = {uint64_t{1} << 61, 1}; }),
       {"tensor 'a.weight'", "byte size overflows"}},
      {"truncated-tensor-type", cut("type:b.weight", 2), {"tensor 'b.weight'", "file ends inside the tensor type"}},
      {"type-39", edited([](RawGguf& g) { g.tensors[2].type = 39; }),
       {"tensor 'c.weight'", "type id 39", "MXFP4", "TL2", "neither"}},
      {"type-38", edited([](RawGguf& g) { g.tensors[2].type = 38; }), {"tensor 'c.weight'", "type id 38", "TL1"}},
      {"type-16", edited([](RawGguf& g) { g.tensors[2].type = 16; }), {"tensor 'c.weight'", "16 (iq2_xxs)"}},
      {"type-1000", edited([](RawGguf& g) { g.tensors[2].type = 1000; }),
       {"tensor 'c.weight'", "unknown tensor type id 1000"}},
      {"row-not-block-multiple", edited([](RawGguf& g) { g.tensors[1].dims = {33, 3}; }),
       {"tensor 'b.weight'", "not a multiple of the block size 32"}},
      {"i2_s-not-multiple-of-128", edited([](RawGguf& g) { g.tensors[2].dims = {64, 3}; }),
       {"tensor 'c.weight'", "not a multiple of 128"}},
      {"truncated-offset", cut("offset:c.weight", 5), {"tensor 'c.weight'", "file ends inside the data offset"}},
      {"unaligned-offset", edited([](RawGguf& g) { g.tensors[2].offset = 200; }),
       {"tensor 'c.weight'", "data offset 200 is not a multiple of the alignment 32"}},
      {"offset-past-eof", edited([](RawGguf& g) { g.tensors[2].offset = 1 << 20; }),
       {"tensor 'c.weight'", "data [1048576, 1048672) lies outside the file"}},
      {"offset-wraps", edited([](RawGguf& g) { g.tensors[2].offset = UINT64_MAX - 31; }),
       {"tensor 'c.weight'", "data [18446744073709551584, 18446744073709551584 + 96) lies outside the file"}},
      {"data-truncated",
       [] {
         Bytes b = test::encode(test::small_valid_gguf()).bytes;
         b.resize(b.size() - 10);
         return b;
       },
       {"tensor 'c.weight'", "data [192, 288) lies outside the file"}},
      {"data-section-past-eof",
       [] {
         RawGguf g = with_alignment_key(test::kU32, test::le<uint32_t>(4096));
         g.alignment = 4096;
         EncodedGguf e = test::encode(g);
         e.bytes.resize(e.at.at("data") - 1);
         return e.bytes;
       },
       {"the data section would start at 4096, past the end of the file (4095 bytes)"}},
      {"overlap", edited([](RawGguf& g) { g.tensors[1].offset = 32; }),
       {"tensor 'b.weight'", "data [32, 134) overlaps tensor 'a.weight' at [0, 64)"}},
      {"overlap-out-of-order", edited([](RawGguf& g) { g.tensors[0].offset = 224; }),
       {"tensor 'a.weight'", "overlaps tensor 'c.weight'"}},
      {"tensor-count-one-too-many", patched<uint64_t>("tensor_count", 0, 4), {"tensor #3"}},
  };
}

TEST(GgufCorrupt, EveryMalformedImageIsRefusedWithANamedReason) {
  const std::vector<Case> cases = corrupt_cases();
  EXPECT_GE(cases.size(), 30u);
  std::set<std::string> names;
  std::set<Bytes> images;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_TRUE(names.insert(c.name).second) << "duplicate case name";
    const Bytes image = c.make();
    EXPECT_TRUE(images.insert(image).second) << "same image as another case";
    const std::string file = "corrupt-" + c.name + ".gguf";
    try {
      GgufFile::from_memory(image.data(), image.size(), file);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(file + ": ", 0), 0u) << msg;
      for (const std::string& part : c.expect) EXPECT_NE(msg.find(part), std::string::npos) << msg;
    }
  }
}

TEST(GgufCorrupt, TruncatedAtEveryByteIsRefused) {
  const Bytes image = test::encode(test::small_valid_gguf()).bytes;
  for (size_t n = 0; n < image.size(); ++n) {
    try {
      GgufFile::from_memory(image.data(), n, "cut.gguf");
      ADD_FAILURE() << "accepted a file cut to " << n << " bytes";
    } catch (const Error& e) {
      EXPECT_EQ(std::string(e.what()).rfind("cut.gguf: ", 0), 0u) << e.what();
    }
  }
}

TEST(GgufCorrupt, MissingFileNamesThePath) {
  try {
    GgufFile f("/nonexistent/model.gguf");
    ADD_FAILURE() << "opened a missing file";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/model.gguf"), std::string::npos) << e.what();
  }
}

// Files that look odd but are valid GGUF, and must open.
TEST(GgufEdgeCases, UnusualButValidFilesOpen) {
  const RawGguf base = test::small_valid_gguf();
  const Bytes image = test::encode(base).bytes;
  const auto f = GgufFile::from_memory(image.data(), image.size(), "valid.gguf");
  EXPECT_EQ(f->tensors().size(), 3u);
  EXPECT_EQ(f->tensor("c.weight").data, f->tensor("a.weight").data + 192);
  EXPECT_EQ(f->tensor("b.weight").bytes, 102u);

  RawGguf v2 = base;
  v2.version = 2;
  const Bytes v2_image = test::encode(v2).bytes;
  EXPECT_EQ(GgufFile::from_memory(v2_image.data(), v2_image.size(), "v2.gguf")->version(), 2u);

  RawGguf deep = base;
  deep.kvs.push_back({"deep", test::kArray, nested_arrays(8)});
  const Bytes deep_image = test::encode(deep).bytes;
  EXPECT_NO_THROW(GgufFile::from_memory(deep_image.data(), deep_image.size(), "deep.gguf"));

  // Tensors out of file order, with gaps between them.
  RawGguf shuffled = base;
  shuffled.tensors[0].offset = 256;
  shuffled.tensors[1].offset = 96;
  shuffled.tensors[2].offset = 0;
  shuffled.data.resize(512);
  const Bytes shuffled_image = test::encode(shuffled).bytes;
  const auto s = GgufFile::from_memory(shuffled_image.data(), shuffled_image.size(), "shuffled.gguf");
  EXPECT_EQ(s->tensor("a.weight").offset, 256u);

  // Vocab-only file ending right after its metadata, with no padding (as
  // llama.cpp ships ggml-vocab-*.gguf).
  RawGguf vocab;
  vocab.kvs = base.kvs;
  vocab.alignment = 1;
  const Bytes vocab_image = test::encode(vocab).bytes;
  ASSERT_NE(vocab_image.size() % 32, 0u);
  const auto v = GgufFile::from_memory(vocab_image.data(), vocab_image.size(), "vocab.gguf");
  EXPECT_EQ(v->data_offset(), vocab_image.size());
  EXPECT_EQ(v->get_string_array("tokenizer.ggml.tokens").size(), 4u);

  // Alignment 1: tensors may sit at any offset.
  RawGguf packed = with_alignment_key(test::kU32, test::le<uint32_t>(1));
  packed.alignment = 1;
  packed.tensors[1].offset = 64;
  packed.tensors[2].offset = 166;
  packed.data.resize(262);
  const Bytes packed_image = test::encode(packed).bytes;
  EXPECT_EQ(GgufFile::from_memory(packed_image.data(), packed_image.size(), "packed.gguf")->alignment(), 1u);

  const Bytes minimal = test::encode(RawGguf{}).bytes;
  const auto m = GgufFile::from_memory(minimal.data(), minimal.size(), "minimal.gguf");
  EXPECT_TRUE(m->metadata().empty());
  EXPECT_TRUE(m->tensors().empty());
}

}  // namespace
}  // namespace lowbit
