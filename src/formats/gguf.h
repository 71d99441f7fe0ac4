// GGUF v2/v3 reader (mmap) and its value model. Everything is validated when
// the file is opened (header, every key and value, every tensor info, data
// ranges); accessors then never read outside the mapping. Every error names the
// file and the key or tensor, and says what was wrong.
//
// Stricter than llama.cpp where a model file has no use for the freedom:
// n_dims must be 1..4 (not 0), every dimension >= 1 (no empty tensors), bool
// bytes 0 or 1, keys and tensor names non-empty, arrays nested at most 8 deep.
// Tensors may sit in any order with gaps, but must be aligned and must not
// overlap. Type ids 37-39 (bitnet.cpp I8_S/TL1/TL2, upstream retired layouts
// and MXFP4) are refused with a message saying which formats the id can mean.
// As in llama.cpp, a file without tensors may end right after its metadata
// (no padding up to the data section): data_offset() is then the file size.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ggml_types.h"
#include "core/mapped_file.h"

namespace lowbit {

// A tensor has 1..kGgufMaxDims dimensions (GGML_MAX_DIMS), read and written.
inline constexpr int kGgufMaxDims = 4;

enum class GgufValueType : uint32_t {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
};

const char* gguf_value_type_name(GgufValueType t);  // "uint32", "array", ...

// One metadata value. Scalars are held by value; strings and arrays point into
// the mapping (string_view), so a 280k-entry merges array costs one vector of views.
// Only the field of the value's own type is set.
struct GgufValue {
  GgufValueType type = GgufValueType::UINT8;
  uint64_t u = 0;        // unsigned integers and bool (0 or 1)
  int64_t i = 0;         // signed integers
  double f = 0;          // float32 / float64
  std::string_view str;  // STRING
  // ARRAY: element type and elements (nested arrays allowed by the spec).
  GgufValueType array_type = GgufValueType::UINT8;
  std::vector<GgufValue> array;
};

struct GgufTensorInfo {
  std::string name;
  std::vector<int64_t> shape;  // ggml order: shape[0] is the row length (contiguous)
  GgmlType type = GgmlType::F32;
  uint64_t offset = 0;         // from the start of the data section, as in the file
  uint64_t bytes = 0;          // computed from type and shape
  int64_t n_elements = 0;
  const uint8_t* data = nullptr;  // into the mapping
  int64_t rows() const { return shape.empty() ? 0 : n_elements / shape[0]; }
  int64_t row_length() const { return shape.empty() ? 0 : shape[0]; }
};

class GgufCursor;

class GgufFile {
 public:
  // Maps and validates; throws Error("PATH: ...") on anything malformed.
  explicit GgufFile(const std::string& path);
  // Validates an in-memory image (tests, fuzzing); `name` is used in errors.
  static std::unique_ptr<GgufFile> from_memory(const uint8_t* data, size_t size, const std::string& name);

  const std::string& path() const { return path_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }  // start of the tensor data section
  size_t file_size() const { return size_; }

  // Keys in file order.
  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return kv_; }
  const GgufValue* find(std::string_view key) const;
  bool has(std::string_view key) const { return find(key) != nullptr; }

  // Typed getters. Missing key or wrong type -> Error naming file, key, found and wanted type.
  std::string_view get_string(std::string_view key) const;
  uint64_t get_uint(std::string_view key) const;  // any integer type; negative -> Error
  int64_t get_int(std::string_view key) const;    // any integer type; out of range -> Error
  double get_float(std::string_view key) const;   // float32/float64 (integers accepted too)
  bool get_bool(std::string_view key) const;
  std::optional<uint64_t> get_uint_opt(std::string_view key) const;  // absent -> nullopt, wrong type -> Error
  std::optional<double> get_float_opt(std::string_view key) const;
  std::optional<bool> get_bool_opt(std::string_view key) const;
  std::optional<std::string_view> get_string_opt(std::string_view key) const;
  // Arrays; wrong element type -> Error.
  std::vector<std::string_view> get_string_array(std::string_view key) const;
  std::vector<float> get_float_array(std::string_view key) const;    // float32/float64 elements
  std::vector<int64_t> get_int_array(std::string_view key) const;    // any integer elements

  const std::vector<GgufTensorInfo>& tensors() const { return tensors_; }
  const GgufTensorInfo* find_tensor(std::string_view name) const;
  // Error naming file and tensor when absent.
  const GgufTensorInfo& tensor(std::string_view name) const;

  // Drops the mapping once weights are repacked (design.md rule 3): tensor
  // data pointers and string views become invalid.
  void release_mapping() { file_.release(); }

 private:
  // Lookup by string_view without building a std::string.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  using NameIndex = std::unordered_map<std::string, size_t, NameHash, std::equal_to<>>;

  GgufFile() = default;
  void parse(const uint8_t* data, size_t size);
  void read_metadata(GgufCursor& in, uint64_t kv_count);
  void read_tensor_infos(GgufCursor& in, uint64_t tensor_count);
  void place_tensor_data(const uint8_t* data, size_t header_end);
  [[noreturn]] void fail_type(std::string_view key, const GgufValue& v, const char* wanted) const;
  const GgufValue& get(std::string_view key) const;

  std::string path_;
  MappedFile file_;
  std::vector<uint8_t> owned_;  // from_memory copies the image here
  size_t size_ = 0;
  uint32_t version_ = 0;
  uint64_t alignment_ = 32;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> kv_;
  NameIndex kv_index_;
  std::vector<GgufTensorInfo> tensors_;
  NameIndex tensor_index_;
};

}  // namespace lowbit
