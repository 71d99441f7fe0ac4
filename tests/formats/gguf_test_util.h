// A GGUF encoder for tests, written independently of GgufWriter: every field
// is given raw (counts, n_dims, type ids, offsets), so tests can build both
// valid files and files that are wrong in exactly one place. It records where
// each field landed so a test can patch a valid image afterwards.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "formats/gguf.h"

namespace lowbit::test {

using Bytes = std::vector<uint8_t>;

template <class T>
void put(Bytes& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

inline void put_str(Bytes& out, const std::string& s) {
  put<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

template <class T>
Bytes le(T v) {
  Bytes out;
  put(out, v);
  return out;
}

inline Bytes gguf_str(const std::string& s) {
  Bytes out;
  put_str(out, s);
  return out;
}

// Array value bytes (after the ARRAY type id): element type, count, elements.
inline Bytes gguf_array(uint32_t element_type, uint64_t count, const Bytes& elements) {
  Bytes out;
  put(out, element_type);
  put(out, count);
  out.insert(out.end(), elements.begin(), elements.end());
  return out;
}

template <class T>
Bytes concat_le(const std::vector<T>& v) {
  Bytes out;
  for (const T& e : v) put(out, e);
  return out;
}

// Value type ids, as in the GGUF spec.
enum : uint32_t { kU8, kI8, kU16, kI16, kU32, kI32, kF32, kBool, kString, kArray, kU64, kI64, kF64 };

struct RawKv {
  std::string key;
  uint32_t type;
  Bytes value;  // the bytes after the type id
};

struct RawTensor {
  std::string name;
  std::vector<uint64_t> dims;
  uint32_t type;
  uint64_t offset;
};

struct RawGguf {
  std::string magic = "GGUF";
  uint32_t version = 3;
  std::optional<uint64_t> tensor_count;  // default: tensors.size()
  std::optional<uint64_t> kv_count;      // default: kvs.size()
  std::vector<RawKv> kvs;
  std::vector<RawTensor> tensors;
  uint64_t alignment = 32;  // pads the header; the key, if any, is one of kvs
  Bytes data;               // the data section
};

struct EncodedGguf {
  Bytes bytes;
  // Field positions: "tensor_count", "kv_count", "key:K", "value:K" (after
  // the type id), "tensor:N", "dims:N", "type:N", "offset:N", "data".
  std::map<std::string, size_t> at;
  std::vector<size_t> u64_fields;  // every count, length, dimension and offset
};

inline EncodedGguf encode(const RawGguf& g) {
  EncodedGguf e;
  Bytes& b = e.bytes;
  b.insert(b.end(), g.magic.begin(), g.magic.end());
  put(b, g.version);
  e.at["tensor_count"] = b.size();
  e.u64_fields.push_back(b.size());
  put<uint64_t>(b, g.tensor_count.value_or(g.tensors.size()));
  e.at["kv_count"] = b.size();
  e.u64_fields.push_back(b.size());
  put<uint64_t>(b, g.kv_count.value_or(g.kvs.size()));
  for (const RawKv& kv : g.kvs) {
    e.at["key:" + kv.key] = b.size();
    e.u64_fields.push_back(b.size());
    put_str(b, kv.key);
    put(b, kv.type);
    e.at["value:" + kv.key] = b.size();
    b.insert(b.end(), kv.value.begin(), kv.value.end());
  }
  for (const RawTensor& t : g.tensors) {
    e.at["tensor:" + t.name] = b.size();
    e.u64_fields.push_back(b.size());
    put_str(b, t.name);
    put<uint32_t>(b, static_cast<uint32_t>(t.dims.size()));
    e.at["dims:" + t.name] = b.size();
    for (uint64_t d : t.dims) {
      e.u64_fields.push_back(b.size());
      put(b, d);
    }
    e.at["type:" + t.name] = b.size();
    put(b, t.type);
    e.at["offset:" + t.name] = b.size();
    e.u64_fields.push_back(b.size());
    put(b, t.offset);
  }
  b.resize((b.size() + g.alignment - 1) / g.alignment * g.alignment, 0);
  e.at["data"] = b.size();
  b.insert(b.end(), g.data.begin(), g.data.end());
  return e;
}

template <class T>
void patch(Bytes& b, size_t pos, T v) {
  std::memcpy(b.data() + pos, &v, sizeof(T));
}

// A small valid file: scalars, a string array, a nested array, and three
// tensors (f32 [8, 2], q8_0 [32, 3], i2_s [128, 2]) laid out back to back
// with 32-byte alignment, data bytes = their offset in the section mod 251.
inline RawGguf small_valid_gguf() {
  RawGguf g;
  g.kvs.push_back({"general.architecture", kString, gguf_str("tiny")});
  g.kvs.push_back({"tiny.block_count", kU32, le<uint32_t>(2)});
  g.kvs.push_back({"tiny.flag", kBool, le<uint8_t>(1)});
  Bytes tokens;
  for (const char* s : {"<unk>", "<s>", "</s>", "hello"}) put_str(tokens, s);
  g.kvs.push_back({"tokenizer.ggml.tokens", kArray, gguf_array(kString, 4, tokens)});
  Bytes inner = gguf_array(kI16, 2, concat_le<int16_t>({-7, 9}));
  g.kvs.push_back({"tiny.nested", kArray, gguf_array(kArray, 1, inner)});
  g.kvs.push_back({"tiny.scores", kArray, gguf_array(kF32, 3, concat_le<float>({0.5f, -1.0f, 2.0f}))});
  // f32 [8, 2]: 64 bytes; q8_0 [32, 3]: 3 * 34 = 102 -> padded 128; i2_s [128, 2]: 64 + 32 = 96.
  g.tensors.push_back({"a.weight", {8, 2}, 0, 0});
  g.tensors.push_back({"b.weight", {32, 3}, 8, 64});
  g.tensors.push_back({"c.weight", {128, 2}, 36, 192});
  g.data.resize(288);
  for (size_t k = 0; k < g.data.size(); ++k) g.data[k] = static_cast<uint8_t>(k % 251);
  return g;
}

// Reads every byte a parsed file claims to own (every string, every tensor's
// data) and calls the getter that fits each key's type, so a sanitizer sees
// any view or pointer that reaches past the image. Returns a checksum to keep
// the reads alive.
inline uint64_t touch_everything(const GgufFile& f) {
  uint64_t sum = 0;
  const auto touch_value = [&sum](const GgufValue& v, auto& self) -> void {
    for (char c : v.str) sum += static_cast<uint8_t>(c);
    for (const GgufValue& e : v.array) self(e, self);
  };
  for (const auto& [key, v] : f.metadata()) {
    touch_value(v, touch_value);
    try {
      switch (v.type) {
        case GgufValueType::STRING: sum += f.get_string(key).size(); break;
        case GgufValueType::BOOL: sum += f.get_bool(key); break;
        case GgufValueType::FLOAT32:
        case GgufValueType::FLOAT64: sum += std::bit_cast<uint64_t>(f.get_float(key)); break;
        case GgufValueType::ARRAY:
          if (v.array_type == GgufValueType::STRING) {
            sum += f.get_string_array(key).size();
          } else if (v.array_type == GgufValueType::FLOAT32 || v.array_type == GgufValueType::FLOAT64) {
            sum += f.get_float_array(key).size();
          } else if (v.array_type != GgufValueType::BOOL && v.array_type != GgufValueType::ARRAY) {
            sum += f.get_int_array(key).size();
          }
          break;
        default: sum += f.get_uint(key) + static_cast<uint64_t>(f.get_int(key)); break;
      }
    } catch (const Error&) {  // out of range for the getter: allowed
      ++sum;
    }
  }
  for (const GgufTensorInfo& t : f.tensors()) {
    if (&f.tensor(t.name) != &t) return 0;
    for (uint64_t k = 0; k < t.bytes; ++k) sum += t.data[k];
  }
  return sum;
}

}  // namespace lowbit::test
