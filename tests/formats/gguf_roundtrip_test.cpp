// GgufWriter -> GgufFile round trips: every value type, arrays of each,
// nested arrays, tensors of several types and shapes, two alignments; plus the
// writer's own contract (replacing keys, refusing bad tensors, I/O errors).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "formats/gguf.h"
#include "formats/gguf_test_util.h"
#include "formats/gguf_writer.h"

namespace lowbit {
namespace {

using test::Bytes;

template <class T>
T scalar_of(const GgufValue& v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v.f);
  } else if constexpr (std::is_same_v<T, bool>) {
    return v.u != 0;
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(v.i);
  } else {
    return static_cast<T>(v.u);
  }
}

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

// The type's extremes, then random values of every bit pattern width.
template <class T>
std::vector<T> sample_values(Rng& rng, size_t n) {
  std::vector<T> v = {std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max(), T{}};
  if constexpr (std::is_floating_point_v<T>) {
    v.push_back(-T{0});
    v.push_back(std::numeric_limits<T>::infinity());
    v.push_back(-std::numeric_limits<T>::infinity());
    v.push_back(std::numeric_limits<T>::denorm_min());
    while (v.size() < n) v.push_back(static_cast<T>(rng.normal() * 1e3));
  } else {
    while (v.size() < n) v.push_back(static_cast<T>(rng.next_u64()));
  }
  return v;
}

template <class T>
void expect_array(const GgufFile& f, const std::string& key, uint32_t element_type, const std::vector<T>& want) {
  SCOPED_TRACE(key);
  const GgufValue* v = f.find(key);
  ASSERT_NE(v, nullptr);
  ASSERT_EQ(v->type, GgufValueType::ARRAY);
  ASSERT_EQ(static_cast<uint32_t>(v->array_type), element_type);
  ASSERT_EQ(v->array.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(static_cast<uint32_t>(v->array[k].type), element_type);
    EXPECT_TRUE(same_bits<T>(scalar_of<T>(v->array[k]), want[k])) << "element " << k;
  }
}

struct TensorCase {
  std::string name;
  GgmlType type;
  std::vector<int64_t> shape;
  Bytes data;
};

std::vector<TensorCase> sample_tensors(Rng& rng) {
  std::vector<TensorCase> t = {
      {"f32.weight", GgmlType::F32, {7, 3}, {}},
      {"f16.weight", GgmlType::F16, {5, 2, 3}, {}},
      {"q8_0.weight", GgmlType::Q8_0, {64, 3}, {}},
      {"i2_s.weight", GgmlType::I2_S, {256, 4}, {}},
      {"tq2_0.weight", GgmlType::TQ2_0, {256, 3}, {}},
      {"f32.4d", GgmlType::F32, {2, 3, 1, 2}, {}},
  };
  for (TensorCase& c : t) {
    int64_t n = 1;
    for (int64_t d : c.shape) n *= d;
    c.data.resize(static_cast<size_t>(ggml_tensor_bytes(c.type, n, c.shape[0])));
    for (uint8_t& b : c.data) b = static_cast<uint8_t>(rng.next_u32());
  }
  return t;
}

Bytes read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(GgufRoundTrip, EveryValueTypeAndTensorType) {
  for (uint32_t alignment : {0u, 64u}) {  // 0: leave general.alignment unset (32)
    SCOPED_TRACE(alignment);
    Rng rng(1234 + alignment);
    GgufWriter w;
    w.set_string("general.architecture", "roundtrip");
    if (alignment != 0) w.set_u32("general.alignment", alignment);
    w.set_u8("v.u8", 250);
    w.set_i8("v.i8", -128);
    w.set_u16("v.u16", 65535);
    w.set_i16("v.i16", -30000);
    w.set_u32("v.u32", 4000000000u);
    w.set_i32("v.i32", INT32_MIN);
    w.set_u64("v.u64", UINT64_MAX);
    w.set_i64("v.i64", INT64_MIN);
    w.set_f32("v.f32", -3.25f);
    w.set_f64("v.f64", 1e300);
    w.set_bool("v.true", true);
    w.set_bool("v.false", false);
    const std::string odd_string("h\xc3\xa9llo\0world", 12);  // UTF-8 and an embedded NUL
    w.set_string("v.string", odd_string);
    w.set_string("v.empty_string", "");

    const auto u8s = sample_values<uint8_t>(rng, 9);
    const auto i8s = sample_values<int8_t>(rng, 9);
    const auto u16s = sample_values<uint16_t>(rng, 9);
    const auto i16s = sample_values<int16_t>(rng, 9);
    const auto u32s = sample_values<uint32_t>(rng, 9);
    const auto i32s = sample_values<int32_t>(rng, 9);
    const auto u64s = sample_values<uint64_t>(rng, 9);
    const auto i64s = sample_values<int64_t>(rng, 9);
    const auto f32s = sample_values<float>(rng, 11);
    const auto f64s = sample_values<double>(rng, 11);
    const std::vector<uint8_t> bools = {1, 0, 0, 1, 1};
    w.set_u8_array("a.u8", u8s);
    w.set_raw_array("a.i8", test::kI8, i8s.size(), test::concat_le(i8s));
    w.set_raw_array("a.u16", test::kU16, u16s.size(), test::concat_le(u16s));
    w.set_raw_array("a.i16", test::kI16, i16s.size(), test::concat_le(i16s));
    w.set_raw_array("a.u32", test::kU32, u32s.size(), test::concat_le(u32s));
    w.set_i32_array("a.i32", i32s);
    w.set_raw_array("a.u64", test::kU64, u64s.size(), test::concat_le(u64s));
    w.set_raw_array("a.i64", test::kI64, i64s.size(), test::concat_le(i64s));
    w.set_f32_array("a.f32", f32s);
    w.set_raw_array("a.f64", test::kF64, f64s.size(), test::concat_le(f64s));
    w.set_raw_array("a.bool", test::kBool, bools.size(), bools);
    w.set_string_array("a.string", {"<unk>", "", "\xe2\x96\x81the", std::string(300, 'x')});
    w.set_raw_array("a.empty", test::kU32, 0, {});
    // [[1, 2], [], [3]] of int32, and [["x"], ["y", "zz"]].
    Bytes nested_ints = test::gguf_array(test::kI32, 2, test::concat_le<int32_t>({1, 2}));
    const Bytes empty_ints = test::gguf_array(test::kI32, 0, {});
    const Bytes three = test::gguf_array(test::kI32, 1, test::le<int32_t>(3));
    nested_ints.insert(nested_ints.end(), empty_ints.begin(), empty_ints.end());
    nested_ints.insert(nested_ints.end(), three.begin(), three.end());
    w.set_raw_array("a.nested_i32", test::kArray, 3, nested_ints);
    Bytes nested_strings = test::gguf_array(test::kString, 1, test::gguf_str("x"));
    Bytes yz = test::gguf_str("y");
    const Bytes zz = test::gguf_str("zz");
    yz.insert(yz.end(), zz.begin(), zz.end());
    const Bytes second = test::gguf_array(test::kString, 2, yz);
    nested_strings.insert(nested_strings.end(), second.begin(), second.end());
    w.set_raw_array("a.nested_string", test::kArray, 2, nested_strings);

    const std::vector<TensorCase> tensors = sample_tensors(rng);
    for (const TensorCase& t : tensors) w.add_tensor(t.name, t.type, t.shape, t.data.data(), t.data.size());

    const std::string path = testing::TempDir() + "gguf_roundtrip_" + std::to_string(alignment) + ".gguf";
    w.write(path);
    const Bytes in_memory = w.write_to_memory();
    EXPECT_EQ(read_file_bytes(path), in_memory);
    EXPECT_FALSE(std::ifstream(path + ".tmp").good()) << "temporary file left behind";
    GgufFile f(path);
    std::remove(path.c_str());

    EXPECT_EQ(f.version(), 3u);
    EXPECT_EQ(f.alignment(), alignment == 0 ? 32u : alignment);
    EXPECT_EQ(f.has("general.alignment"), alignment != 0);
    EXPECT_EQ(f.data_offset() % f.alignment(), 0u);
    EXPECT_EQ(f.file_size(), in_memory.size());
    EXPECT_EQ(f.metadata().front().first, "general.architecture");
    EXPECT_EQ(f.metadata().back().first, "a.nested_string");
    EXPECT_EQ(f.metadata().size(), alignment == 0 ? 30u : 31u);

    EXPECT_EQ(f.get_string("general.architecture"), "roundtrip");
    EXPECT_EQ(f.find("v.u8")->type, GgufValueType::UINT8);
    EXPECT_EQ(f.get_uint("v.u8"), 250u);
    EXPECT_EQ(f.find("v.i8")->type, GgufValueType::INT8);
    EXPECT_EQ(f.get_int("v.i8"), -128);
    EXPECT_EQ(f.find("v.u16")->type, GgufValueType::UINT16);
    EXPECT_EQ(f.get_uint("v.u16"), 65535u);
    EXPECT_EQ(f.find("v.i16")->type, GgufValueType::INT16);
    EXPECT_EQ(f.get_int("v.i16"), -30000);
    EXPECT_EQ(f.find("v.u32")->type, GgufValueType::UINT32);
    EXPECT_EQ(f.get_uint("v.u32"), 4000000000u);
    EXPECT_EQ(f.find("v.i32")->type, GgufValueType::INT32);
    EXPECT_EQ(f.get_int("v.i32"), INT32_MIN);
    EXPECT_EQ(f.find("v.u64")->type, GgufValueType::UINT64);
    EXPECT_EQ(f.get_uint("v.u64"), UINT64_MAX);
    EXPECT_EQ(f.find("v.i64")->type, GgufValueType::INT64);
    EXPECT_EQ(f.get_int("v.i64"), INT64_MIN);
    EXPECT_EQ(f.find("v.f32")->type, GgufValueType::FLOAT32);
    EXPECT_EQ(f.get_float("v.f32"), -3.25);
    EXPECT_EQ(f.find("v.f64")->type, GgufValueType::FLOAT64);
    EXPECT_EQ(f.get_float("v.f64"), 1e300);
    EXPECT_TRUE(f.get_bool("v.true"));
    EXPECT_FALSE(f.get_bool("v.false"));
    EXPECT_EQ(f.get_string("v.string"), odd_string);
    EXPECT_EQ(f.get_string("v.empty_string"), "");

    expect_array(f, "a.u8", test::kU8, u8s);
    expect_array(f, "a.i8", test::kI8, i8s);
    expect_array(f, "a.u16", test::kU16, u16s);
    expect_array(f, "a.i16", test::kI16, i16s);
    expect_array(f, "a.u32", test::kU32, u32s);
    expect_array(f, "a.i32", test::kI32, i32s);
    expect_array(f, "a.u64", test::kU64, u64s);
    expect_array(f, "a.i64", test::kI64, i64s);
    expect_array(f, "a.f32", test::kF32, f32s);
    expect_array(f, "a.f64", test::kF64, f64s);
    expect_array(f, "a.bool", test::kBool, std::vector<bool>{true, false, false, true, true});
    EXPECT_EQ(f.get_string_array("a.string"),
              (std::vector<std::string_view>{"<unk>", "", "\xe2\x96\x81the", std::string(300, 'x')}));
    expect_array(f, "a.empty", test::kU32, std::vector<uint32_t>{});

    const GgufValue& ni = *f.find("a.nested_i32");
    ASSERT_EQ(ni.array_type, GgufValueType::ARRAY);
    ASSERT_EQ(ni.array.size(), 3u);
    ASSERT_EQ(ni.array[0].array.size(), 2u);
    EXPECT_EQ(ni.array[0].array_type, GgufValueType::INT32);
    EXPECT_EQ(ni.array[0].array[1].i, 2);
    EXPECT_TRUE(ni.array[1].array.empty());
    ASSERT_EQ(ni.array[2].array.size(), 1u);
    EXPECT_EQ(ni.array[2].array[0].i, 3);
    const GgufValue& ns = *f.find("a.nested_string");
    ASSERT_EQ(ns.array.size(), 2u);
    ASSERT_EQ(ns.array[1].array.size(), 2u);
    EXPECT_EQ(ns.array[0].array[0].str, "x");
    EXPECT_EQ(ns.array[1].array[1].str, "zz");

    ASSERT_EQ(f.tensors().size(), tensors.size());
    for (size_t k = 0; k < tensors.size(); ++k) {
      const TensorCase& want = tensors[k];
      const GgufTensorInfo& got = f.tensors()[k];
      SCOPED_TRACE(want.name);
      EXPECT_EQ(got.name, want.name);
      EXPECT_EQ(&f.tensor(want.name), &got);
      EXPECT_EQ(got.type, want.type);
      EXPECT_EQ(got.shape, want.shape);
      EXPECT_EQ(got.row_length(), want.shape[0]);
      EXPECT_EQ(got.rows() * got.row_length(), got.n_elements);
      EXPECT_EQ(got.offset % f.alignment(), 0u);
      ASSERT_EQ(got.bytes, want.data.size());
      EXPECT_EQ(std::memcmp(got.data, want.data.data(), want.data.size()), 0);
    }
    EXPECT_EQ(f.tensor("i2_s.weight").bytes, 256u * 4 / 4 + 32);
    EXPECT_EQ(f.tensor("tq2_0.weight").bytes, 3u * 66);
  }
}

// The writer's bytes equal the independent test encoder's for the same content.
TEST(GgufWriter, MatchesIndependentEncoder) {
  const test::RawGguf g = test::small_valid_gguf();
  GgufWriter w;
  w.set_string("general.architecture", "tiny");
  w.set_u32("tiny.block_count", 2);
  w.set_bool("tiny.flag", true);
  w.set_string_array("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>", "hello"});
  w.set_raw_array("tiny.nested", test::kArray, 1, test::gguf_array(test::kI16, 2, test::concat_le<int16_t>({-7, 9})));
  w.set_f32_array("tiny.scores", {0.5f, -1.0f, 2.0f});
  w.add_tensor("a.weight", GgmlType::F32, {8, 2}, g.data.data(), 64);
  w.add_tensor("b.weight", GgmlType::Q8_0, {32, 3}, g.data.data() + 64, 102);
  w.add_tensor("c.weight", GgmlType::I2_S, {128, 2}, g.data.data() + 192, 96);
  Bytes want = test::encode(g).bytes;
  // The encoder copies the whole data section; the writer pads b.weight with zeros.
  const size_t data = test::encode(g).at.at("data");
  std::fill(want.begin() + data + 64 + 102, want.begin() + data + 192, 0);
  EXPECT_EQ(w.write_to_memory(), want);
}

TEST(GgufWriter, SettingAKeyAgainReplacesItInPlace) {
  GgufWriter w;
  w.set_u32("first", 1);
  w.set_string("second", "two");
  w.set_string("first", "one");
  const Bytes image = w.write_to_memory();
  const auto f = GgufFile::from_memory(image.data(), image.size(), "replace.gguf");
  ASSERT_EQ(f->metadata().size(), 2u);
  EXPECT_EQ(f->metadata()[0].first, "first");
  EXPECT_EQ(f->get_string("first"), "one");
  EXPECT_EQ(f->metadata()[1].first, "second");
  EXPECT_TRUE(f->tensors().empty());
}

void expect_error(const std::function<void()>& action, const std::vector<std::string>& parts) {
  try {
    action();
    ADD_FAILURE() << "no Error thrown; expected one mentioning " << parts.front();
  } catch (const Error& e) {
    for (const std::string& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
  }
}

TEST(GgufWriter, RefusesMalformedTensorsAndKeys) {
  const std::vector<uint8_t> data(1024);
  GgufWriter w;
  expect_error([&] { w.add_tensor("w.size", GgmlType::F32, {4, 4}, data.data(), 60); },
               {"'w.size'", "60 bytes given", "64"});
  expect_error([&] { w.add_tensor("w.block", GgmlType::Q8_0, {33}, data.data(), 34); },
               {"'w.block'", "block size 32"});
  expect_error([&] { w.add_tensor("w.i2s", GgmlType::I2_S, {64}, data.data(), 48); }, {"'w.i2s'", "128"});
  expect_error([&] { w.add_tensor("w.dims", GgmlType::F32, {1, 1, 1, 1, 1}, data.data(), 4); },
               {"'w.dims'", "5 dimensions"});
  expect_error([&] { w.add_tensor("w.zero", GgmlType::F32, {4, 0}, data.data(), 0); }, {"'w.zero'", "[4, 0]"});
  expect_error([&] { w.add_tensor("w.huge", GgmlType::F32, {int64_t{1} << 61}, data.data(), 0); },
               {"'w.huge'", "byte size overflows"});
  expect_error([&] { w.add_tensor("w.null", GgmlType::F32, {1}, nullptr, 4); }, {"'w.null'", "no data"});
  expect_error([&] { w.add_tensor("", GgmlType::F32, {1}, data.data(), 4); }, {"empty tensor name"});
  w.add_tensor("w.ok", GgmlType::F32, {2}, data.data(), 8);
  expect_error([&] { w.add_tensor("w.ok", GgmlType::F32, {2}, data.data(), 8); }, {"'w.ok'", "twice"});
  expect_error([&] { w.set_u32("", 1); }, {"empty key"});
  expect_error([&] { w.set_raw_array("k.raw", 13, 0, {}); }, {"'k.raw'", "element type id 13"});

  w.set_u32("general.alignment", 48);
  expect_error([&] { w.write_to_memory(); }, {"general.alignment", "48", "power of two"});
  w.set_u64("general.alignment", 64);
  expect_error([&] { w.write_to_memory(); }, {"general.alignment", "uint64", "uint32"});
}

TEST(GgufWriter, UnwritablePathNamesTheFile) {
  GgufWriter w;
  w.set_u32("x", 1);
  const std::string path = testing::TempDir() + "no-such-dir/out.gguf";
  expect_error([&] { w.write(path); }, {path, "cannot create"});
}

TEST(GgufGetters, ConvertWhatFitsAndNameWhatDoesNot) {
  GgufWriter w;
  w.set_u8("u8", 7);
  w.set_i32("i32.neg", -5);
  w.set_i16("i16.pos", 300);
  w.set_u64("u64.big", UINT64_MAX);
  w.set_f32("f32", 0.5f);
  w.set_f64("f64", -2.5);
  w.set_bool("bool", true);
  w.set_string("str", "text");
  w.set_f32_array("f32s", {1.5f, -2.0f});
  w.set_raw_array("f64s", test::kF64, 2, test::concat_le<double>({0.25, 1e10}));
  w.set_u8_array("u8s", {0, 255});
  w.set_raw_array("i64s", test::kI64, 2, test::concat_le<int64_t>({INT64_MIN, 5}));
  w.set_raw_array("u64s.big", test::kU64, 2, test::concat_le<uint64_t>({1, UINT64_MAX}));
  w.set_string_array("strs", {"a", "bc"});
  const Bytes image = w.write_to_memory();
  const auto f = GgufFile::from_memory(image.data(), image.size(), "getters.gguf");

  EXPECT_EQ(f->get_uint("u8"), 7u);
  EXPECT_EQ(f->get_int("u8"), 7);
  EXPECT_EQ(f->get_uint("i16.pos"), 300u);
  EXPECT_EQ(f->get_int("i32.neg"), -5);
  EXPECT_EQ(f->get_float("i32.neg"), -5.0);
  EXPECT_EQ(f->get_uint("u64.big"), UINT64_MAX);
  EXPECT_EQ(f->get_float("f32"), 0.5);
  EXPECT_EQ(f->get_float("f64"), -2.5);
  EXPECT_TRUE(f->get_bool("bool"));
  EXPECT_EQ(f->get_string("str"), "text");
  EXPECT_EQ(f->get_float_array("f32s"), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(f->get_float_array("f64s"), (std::vector<float>{0.25f, 1e10f}));
  EXPECT_EQ(f->get_int_array("u8s"), (std::vector<int64_t>{0, 255}));
  EXPECT_EQ(f->get_int_array("i64s"), (std::vector<int64_t>{INT64_MIN, 5}));
  EXPECT_EQ(f->get_string_array("strs"), (std::vector<std::string_view>{"a", "bc"}));

  EXPECT_EQ(f->get_uint_opt("absent"), std::nullopt);
  EXPECT_EQ(f->get_float_opt("absent"), std::nullopt);
  EXPECT_EQ(f->get_bool_opt("absent"), std::nullopt);
  EXPECT_EQ(f->get_string_opt("absent"), std::nullopt);
  EXPECT_EQ(f->get_uint_opt("u8"), 7u);
  EXPECT_EQ(f->get_string_opt("str"), "text");
  EXPECT_EQ(f->find_tensor("absent"), nullptr);

  expect_error([&] { f->get_uint("i32.neg"); }, {"getters.gguf", "'i32.neg'", "-5", "non-negative"});
  expect_error([&] { f->get_int("u64.big"); }, {"getters.gguf", "'u64.big'", "above 2^63-1"});
  expect_error([&] { f->get_string("u8"); }, {"getters.gguf", "'u8'", "has type uint8, wanted string"});
  expect_error([&] { f->get_uint("str"); }, {"getters.gguf", "'str'", "has type string, wanted an integer"});
  expect_error([&] { f->get_float("bool"); }, {"'bool'", "has type bool, wanted a number"});
  expect_error([&] { f->get_bool("u8"); }, {"'u8'", "wanted bool"});
  expect_error([&] { f->get_uint("missing.key"); }, {"getters.gguf", "'missing.key'", "is missing"});
  expect_error([&] { f->get_bool_opt("str"); }, {"'str'", "wanted bool"});
  expect_error([&] { f->get_string_array("f32s"); }, {"'f32s'", "has type array of float32, wanted array of string"});
  expect_error([&] { f->get_float_array("strs"); }, {"'strs'", "array of string"});
  expect_error([&] { f->get_int_array("f32s"); }, {"'f32s'", "wanted array of integers"});
  expect_error([&] { f->get_int_array("u8"); }, {"'u8'", "has type uint8"});
  expect_error([&] { f->get_int_array("u64s.big"); }, {"'u64s.big'", "element 1", "above 2^63-1"});
  expect_error([&] { f->tensor("output.weight"); }, {"getters.gguf", "'output.weight'", "missing"});
}

// A Llama 3 sized vocabulary (128k tokens, 280k merges) parses, with the
// strings as views into the image.
TEST(GgufRoundTrip, LargeVocabulary) {
  std::vector<std::string> tokens(128256), merges(280147);
  for (size_t k = 0; k < tokens.size(); ++k) tokens[k] = "tok" + std::to_string(k);
  for (size_t k = 0; k < merges.size(); ++k) merges[k] = "m" + std::to_string(k) + " x";
  GgufWriter w;
  w.set_string_array("tokenizer.ggml.tokens", tokens);
  w.set_string_array("tokenizer.ggml.merges", merges);
  const Bytes image = w.write_to_memory();
  const auto f = GgufFile::from_memory(image.data(), image.size(), "vocab.gguf");
  const auto t = f->get_string_array("tokenizer.ggml.tokens");
  const auto m = f->get_string_array("tokenizer.ggml.merges");
  ASSERT_EQ(t.size(), tokens.size());
  ASSERT_EQ(m.size(), merges.size());
  EXPECT_EQ(t[128255], "tok128255");
  EXPECT_EQ(m[280146], "m280146 x");
  EXPECT_EQ(m[0], "m0 x");
}

}  // namespace
}  // namespace lowbit
