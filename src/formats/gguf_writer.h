// GGUF v3 writer. Metadata keys are written in the order they were first set;
// tensors in the order added, each at an offset aligned to `general.alignment`
// (default 32) from the start of the data section; every tensor, the last one
// included, is followed by zero padding to the alignment, as llama.cpp writes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/function_ref.h"
#include "core/ggml_types.h"

namespace lowbit {

class GgufWriter {
 public:
  // Scalars. Setting a key again replaces its value (keeps its position).
  void set_u8(const std::string& key, uint8_t v);
  void set_i8(const std::string& key, int8_t v);
  void set_u16(const std::string& key, uint16_t v);
  void set_i16(const std::string& key, int16_t v);
  void set_u32(const std::string& key, uint32_t v);
  void set_i32(const std::string& key, int32_t v);
  void set_u64(const std::string& key, uint64_t v);
  void set_i64(const std::string& key, int64_t v);
  void set_f32(const std::string& key, float v);
  void set_f64(const std::string& key, double v);
  void set_bool(const std::string& key, bool v);
  void set_string(const std::string& key, const std::string& v);
  // Arrays.
  void set_string_array(const std::string& key, const std::vector<std::string>& v);
  void set_f32_array(const std::string& key, const std::vector<float>& v);
  void set_i32_array(const std::string& key, const std::vector<int32_t>& v);
  void set_u8_array(const std::string& key, const std::vector<uint8_t>& v);
  // Any other array (all 13 value types, nested arrays): elements as raw
  // little-endian bytes, each string element as u64 length + bytes (as in the file).
  void set_raw_array(const std::string& key, uint32_t element_type, uint64_t count, std::vector<uint8_t> encoded);

  // shape in ggml order (shape[0] = row length). `data` is NOT copied: it must
  // stay valid until write(). Its size must equal ggml_tensor_bytes(type, ...)
  // or the call throws Error naming the tensor.
  void add_tensor(const std::string& name, GgmlType type, const std::vector<int64_t>& shape, const void* data,
                  uint64_t bytes);

  // Writes the file (to path + ".tmp", then renames). Throws Error on I/O failure.
  void write(const std::string& path) const;
  // The same bytes as write() puts in the file (tests, fuzzing, small files).
  std::vector<uint8_t> write_to_memory() const;

 private:
  struct Entry {
    std::string key;
    uint32_t type;
    std::vector<uint8_t> encoded;  // the value as it goes in the file (after the type)
  };
  struct Tensor {
    std::string name;
    GgmlType type;
    std::vector<int64_t> shape;
    const void* data;
    uint64_t bytes;
  };
  void set_encoded(const std::string& key, uint32_t type, std::vector<uint8_t> encoded);
  uint64_t alignment() const;  // general.alignment if set (validated), else 32
  // Hands the file's bytes to `sink` in order: the header in one piece, then
  // each tensor's data straight from the caller's buffer, then its padding.
  void emit(FunctionRef<void(const void*, size_t)> sink) const;
  std::vector<Entry> entries_;
  std::vector<Tensor> tensors_;
};

}  // namespace lowbit
