#include "formats/gguf_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "core/error.h"
#include "formats/gguf.h"

namespace lowbit {

namespace {

constexpr uint32_t kVersion = 3;
constexpr uint64_t kDefaultAlignment = 32;

template <class T>
void append(std::vector<uint8_t>& out, T v) {
  const size_t at = out.size();
  out.resize(at + sizeof(T));
  std::memcpy(out.data() + at, &v, sizeof(T));
}

void append_string(std::vector<uint8_t>& out, const std::string& s) {
  append<uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

template <class T>
std::vector<uint8_t> encode(T v) {
  std::vector<uint8_t> out;
  append(out, v);
  return out;
}

// The array header (element type, count) followed by the elements.
template <class T>
std::vector<uint8_t> encode_array(GgufValueType element_type, const std::vector<T>& v) {
  std::vector<uint8_t> out;
  append(out, static_cast<uint32_t>(element_type));
  append<uint64_t>(out, v.size());
  for (const T& e : v) append(out, e);
  return out;
}

uint64_t align_up(uint64_t n, uint64_t alignment) { return (n + alignment - 1) / alignment * alignment; }

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t j = 0; j < shape.size(); ++j) s += cat(j ? ", " : "", shape[j]);
  return s + "]";
}

uint32_t id(GgufValueType t) { return static_cast<uint32_t>(t); }

}  // namespace

void GgufWriter::set_u8(const std::string& key, uint8_t v) { set_encoded(key, id(GgufValueType::UINT8), encode(v)); }
void GgufWriter::set_i8(const std::string& key, int8_t v) { set_encoded(key, id(GgufValueType::INT8), encode(v)); }
void GgufWriter::set_u16(const std::string& key, uint16_t v) { set_encoded(key, id(GgufValueType::UINT16), encode(v)); }
void GgufWriter::set_i16(const std::string& key, int16_t v) { set_encoded(key, id(GgufValueType::INT16), encode(v)); }
void GgufWriter::set_u32(const std::string& key, uint32_t v) { set_encoded(key, id(GgufValueType::UINT32), encode(v)); }
void GgufWriter::set_i32(const std::string& key, int32_t v) { set_encoded(key, id(GgufValueType::INT32), encode(v)); }
void GgufWriter::set_u64(const std::string& key, uint64_t v) { set_encoded(key, id(GgufValueType::UINT64), encode(v)); }
void GgufWriter::set_i64(const std::string& key, int64_t v) { set_encoded(key, id(GgufValueType::INT64), encode(v)); }
void GgufWriter::set_f32(const std::string& key, float v) { set_encoded(key, id(GgufValueType::FLOAT32), encode(v)); }
void GgufWriter::set_f64(const std::string& key, double v) { set_encoded(key, id(GgufValueType::FLOAT64), encode(v)); }

void GgufWriter::set_bool(const std::string& key, bool v) {
  set_encoded(key, id(GgufValueType::BOOL), encode<uint8_t>(v ? 1 : 0));
}

void GgufWriter::set_string(const std::string& key, const std::string& v) {
  std::vector<uint8_t> out;
  append_string(out, v);
  set_encoded(key, id(GgufValueType::STRING), std::move(out));
}

void GgufWriter::set_string_array(const std::string& key, const std::vector<std::string>& v) {
  std::vector<uint8_t> out;
  append(out, id(GgufValueType::STRING));
  append<uint64_t>(out, v.size());
  for (const std::string& s : v) append_string(out, s);
  set_encoded(key, id(GgufValueType::ARRAY), std::move(out));
}

void GgufWriter::set_f32_array(const std::string& key, const std::vector<float>& v) {
  set_encoded(key, id(GgufValueType::ARRAY), encode_array(GgufValueType::FLOAT32, v));
}

void GgufWriter::set_i32_array(const std::string& key, const std::vector<int32_t>& v) {
  set_encoded(key, id(GgufValueType::ARRAY), encode_array(GgufValueType::INT32, v));
}

void GgufWriter::set_u8_array(const std::string& key, const std::vector<uint8_t>& v) {
  set_encoded(key, id(GgufValueType::ARRAY), encode_array(GgufValueType::UINT8, v));
}

void GgufWriter::set_raw_array(const std::string& key, uint32_t element_type, uint64_t count,
                               std::vector<uint8_t> encoded) {
  if (element_type > id(GgufValueType::FLOAT64))
    fail("GGUF writer: key '", key, "': unknown array element type id ", element_type);
  std::vector<uint8_t> out;
  out.reserve(12 + encoded.size());
  append(out, element_type);
  append(out, count);
  out.insert(out.end(), encoded.begin(), encoded.end());
  set_encoded(key, id(GgufValueType::ARRAY), std::move(out));
}

void GgufWriter::set_encoded(const std::string& key, uint32_t type, std::vector<uint8_t> encoded) {
  if (key.empty()) fail("GGUF writer: empty key");
  const auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.key == key; });
  if (it != entries_.end()) {
    it->type = type;
    it->encoded = std::move(encoded);
  } else {
    entries_.push_back({key, type, std::move(encoded)});
  }
}

void GgufWriter::add_tensor(const std::string& name, GgmlType type, const std::vector<int64_t>& shape,
                            const void* data, uint64_t bytes) {
  if (name.empty()) fail("GGUF writer: empty tensor name");
  if (std::any_of(tensors_.begin(), tensors_.end(), [&](const Tensor& t) { return t.name == name; }))
    fail("GGUF writer: tensor '", name, "' added twice");
  if (shape.empty() || shape.size() > static_cast<size_t>(kGgufMaxDims))
    fail("GGUF writer: tensor '", name, "': ", shape.size(), " dimensions, must be 1..", kGgufMaxDims);
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 1 || n > INT64_MAX / d) fail("GGUF writer: tensor '", name, "': invalid shape ", shape_text(shape));
    n *= d;
  }
  int64_t expected = 0;
  try {
    expected = ggml_tensor_bytes(type, n, shape[0]);
  } catch (const Error& e) {
    fail("GGUF writer: tensor '", name, "': shape ", shape_text(shape), ": ", e.what());
  }
  if (bytes != static_cast<uint64_t>(expected))
    fail("GGUF writer: tensor '", name, "': ", bytes, " bytes given, ", ggml_type_name(type), " ", shape_text(shape),
         " takes ", expected);
  if (data == nullptr) fail("GGUF writer: tensor '", name, "': no data");
  tensors_.push_back({name, type, shape, data, bytes});
}

uint64_t GgufWriter::alignment() const {
  const auto it =
      std::find_if(entries_.begin(), entries_.end(), [](const Entry& e) { return e.key == "general.alignment"; });
  if (it == entries_.end()) return kDefaultAlignment;
  if (it->type != id(GgufValueType::UINT32))
    fail("GGUF writer: key 'general.alignment' has type ", gguf_value_type_name(static_cast<GgufValueType>(it->type)),
         ", must be uint32");
  uint32_t a = 0;
  std::memcpy(&a, it->encoded.data(), sizeof(a));
  if (a == 0 || (a & (a - 1)) != 0) fail("GGUF writer: key 'general.alignment' is ", a, ", not a power of two");
  return a;
}

void GgufWriter::emit(FunctionRef<void(const void*, size_t)> sink) const {
  const uint64_t align = alignment();
  std::vector<uint8_t> header;
  header.insert(header.end(), {'G', 'G', 'U', 'F'});
  append(header, kVersion);
  append<uint64_t>(header, tensors_.size());
  append<uint64_t>(header, entries_.size());
  for (const Entry& e : entries_) {
    append_string(header, e.key);
    append(header, e.type);
    header.insert(header.end(), e.encoded.begin(), e.encoded.end());
  }
  uint64_t offset = 0;
  for (const Tensor& t : tensors_) {
    append_string(header, t.name);
    append<uint32_t>(header, static_cast<uint32_t>(t.shape.size()));
    for (int64_t d : t.shape) append<uint64_t>(header, static_cast<uint64_t>(d));
    append(header, static_cast<uint32_t>(t.type));
    append(header, offset);
    offset = align_up(offset + t.bytes, align);
  }
  header.resize(align_up(header.size(), align), 0);
  sink(header.data(), header.size());

  static constexpr uint8_t kZeros[4096] = {};
  for (const Tensor& t : tensors_) {
    sink(t.data, t.bytes);
    for (uint64_t pad = align_up(t.bytes, align) - t.bytes; pad > 0;) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(pad, sizeof(kZeros)));
      sink(kZeros, n);
      pad -= n;
    }
  }
}

std::vector<uint8_t> GgufWriter::write_to_memory() const {
  std::vector<uint8_t> out;
  emit([&](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  });
  return out;
}

void GgufWriter::write(const std::string& path) const {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) fail(path, ": cannot create ", tmp, ": ", std::strerror(errno));
  try {
    emit([&](const void* p, size_t n) {
      if (n > 0 && std::fwrite(p, 1, n, f) != n) fail(path, ": cannot write ", tmp, ": ", std::strerror(errno));
    });
    const int closed = std::fclose(f);
    f = nullptr;
    if (closed != 0) fail(path, ": cannot write ", tmp, ": ", std::strerror(errno));
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      fail(path, ": cannot rename ", tmp, " to it: ", std::strerror(errno));
  } catch (...) {
    if (f != nullptr) std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
}

}  // namespace lowbit
