#include "formats/gguf.h"

#include <algorithm>
#include <numeric>

#include "core/error.h"
#include "formats/gguf_cursor.h"
#include "formats/gguf_value_reader.h"

namespace lowbit {

namespace {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian u32
constexpr size_t kMaxKeyBytes = 65535;   // the GGUF spec's limit on key length
// The fewest bytes a key/value pair (u64 key length, 1-byte key, u32 type,
// 1-byte value) and a tensor info (name as before, u32 n_dims, one u64 dim,
// u32 type, u64 offset) can take: bounds the header counts.
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 1 + 4 + 8 + 4 + 8;

// Ids that other tools put in files but lowbit does not read, named so the
// error says what the file holds.
std::string unsupported_type(uint32_t id) {
  switch (id) {
    case 31: case 32: case 33:
      return cat("tensor type id ", id, " is a Q4_0 repacked layout (Q4_0_4_4/4_8/8_8) that llama.cpp retired from "
                 "files; re-quantize the model");
    case 37:
      return "tensor type id 37 is I8_S in bitnet.cpp (activations, never stored) and the retired IQ4_NL_4_8 in "
             "llama.cpp; lowbit reads neither";
    case 38:
      return "tensor type id 38 is TL1 in bitnet.cpp and the retired IQ4_NL_8_8 in llama.cpp; lowbit reads neither "
             "(convert the model to I2_S)";
    case 39:
      return "tensor type id 39 is MXFP4 in llama.cpp and TL2 in bitnet.cpp; lowbit reads neither (convert the "
             "model to I2_S)";
    case 16: return "tensor type id 16 (iq2_xxs) is not supported";
    case 17: return "tensor type id 17 (iq2_xs) is not supported";
    case 18: return "tensor type id 18 (iq3_xxs) is not supported";
    case 19: return "tensor type id 19 (iq1_s) is not supported";
    case 21: return "tensor type id 21 (iq3_s) is not supported";
    case 22: return "tensor type id 22 (iq2_s) is not supported";
    case 29: return "tensor type id 29 (iq1_m) is not supported";
    case 40: return "tensor type id 40 (nvfp4) is not supported";
    default: return cat("unknown tensor type id ", id);
  }
}

std::string shape_text(const std::vector<uint64_t>& dims) {
  std::string s = "[";
  for (size_t j = 0; j < dims.size(); ++j) s += cat(j ? ", " : "", dims[j]);
  return s + "]";
}

// "[offset, end)" relative to the data section, even when end overflows u64.
std::string range_text(uint64_t offset, uint64_t bytes) {
  if (offset > UINT64_MAX - bytes) return cat("[", offset, ", ", offset, " + ", bytes, ")");
  return cat("[", offset, ", ", offset + bytes, ")");
}

}  // namespace

GgufFile::GgufFile(const std::string& path) : path_(path), file_(path) { parse(file_.data(), file_.size()); }

std::unique_ptr<GgufFile> GgufFile::from_memory(const uint8_t* data, size_t size, const std::string& name) {
  std::unique_ptr<GgufFile> f(new GgufFile());
  f->path_ = name;
  f->owned_.assign(data, data + size);
  f->parse(f->owned_.data(), f->owned_.size());
  return f;
}

void GgufFile::parse(const uint8_t* data, size_t size) {
  size_ = size;
  GgufCursor in(data, size, path_);

  const uint32_t magic = in.read<uint32_t>("magic");
  if (magic != kMagic) {
    std::string shown;
    for (int b = 0; b < 4; ++b) {
      const char c = static_cast<char>(magic >> (8 * b));
      shown += (c >= 0x20 && c < 0x7f) ? c : '?';
    }
    in.fail_here("not a GGUF file (magic '", shown, "', expected 'GGUF')");
  }
  version_ = in.read<uint32_t>("version");
  if (version_ != 0 && (version_ & 0xffff) == 0)
    in.fail_here("version ", version_, " looks byte-swapped: only little-endian GGUF files are supported");
  if (version_ != 2 && version_ != 3)
    in.fail_here("GGUF version ", version_, " is not supported (only versions 2 and 3)");

  const uint64_t tensor_count = in.read<uint64_t>("tensor count");
  const uint64_t kv_count = in.read<uint64_t>("key/value count");
  if (kv_count > in.remaining() / kMinKvBytes)
    in.fail_here("key/value count ", kv_count, " does not fit in the file (", in.remaining(), " bytes remain)");
  if (tensor_count > in.remaining() / kMinTensorInfoBytes)
    in.fail_here("tensor count ", tensor_count, " does not fit in the file (", in.remaining(), " bytes remain)");

  read_metadata(in, kv_count);
  read_tensor_infos(in, tensor_count);
  place_tensor_data(data, in.pos());
}

void GgufFile::read_metadata(GgufCursor& in, uint64_t kv_count) {
  for (uint64_t k = 0; k < kv_count; ++k) {
    in.set_context(cat("key #", k));
    const std::string_view key = in.read_string("key");
    if (key.empty()) in.fail_here("empty key");
    if (key.size() > kMaxKeyBytes)
      in.fail_here("key of ", key.size(), " bytes is longer than the ", kMaxKeyBytes, " the GGUF spec allows");
    in.set_context(cat("key '", key, "'"));
    if (const auto it = kv_index_.find(key); it != kv_index_.end())
      in.fail_here("appears twice (entries ", it->second, " and ", k, ")");
    const uint32_t type_id = in.read<uint32_t>("value type");
    if (!gguf_value_type_is_known(type_id)) in.fail_here("unknown value type id ", type_id);
    GgufValue value = read_gguf_value(in, static_cast<GgufValueType>(type_id));
    kv_index_.emplace(std::string(key), kv_.size());
    kv_.emplace_back(std::string(key), std::move(value));
  }

  if (const GgufValue* a = find("general.alignment")) {
    if (a->type != GgufValueType::UINT32)
      fail(path_, ": key 'general.alignment' has type ", gguf_value_type_name(a->type), ", must be uint32");
    if (a->u == 0 || (a->u & (a->u - 1)) != 0)
      fail(path_, ": key 'general.alignment' is ", a->u, ", not a power of two");
    alignment_ = a->u;
  }
}

void GgufFile::read_tensor_infos(GgufCursor& in, uint64_t tensor_count) {
  for (uint64_t t = 0; t < tensor_count; ++t) {
    in.set_context(cat("tensor #", t));
    const std::string_view name = in.read_string("tensor name");
    if (name.empty()) in.fail_here("empty tensor name");
    in.set_context(cat("tensor '", name, "'"));
    if (const auto it = tensor_index_.find(name); it != tensor_index_.end())
      in.fail_here("name appears twice (tensors ", it->second, " and ", t, ")");

    const uint32_t n_dims = in.read<uint32_t>("n_dims");
    if (n_dims < 1 || n_dims > kGgufMaxDims) in.fail_here("n_dims ", n_dims, " is outside 1..", kGgufMaxDims);
    std::vector<uint64_t> dims(n_dims);
    for (uint64_t& d : dims) d = in.read<uint64_t>("dimension");
    GgufTensorInfo info;
    info.name = name;
    info.n_elements = 1;
    for (uint32_t j = 0; j < n_dims; ++j) {
      if (dims[j] == 0) in.fail_here("shape ", shape_text(dims), ": dimension ", j, " is 0 (empty tensors are not supported)");
      if (dims[j] > static_cast<uint64_t>(INT64_MAX))
        in.fail_here("shape ", shape_text(dims), ": dimension ", j, " is above 2^63-1");
      const auto d = static_cast<int64_t>(dims[j]);
      if (info.n_elements > INT64_MAX / d) in.fail_here("shape ", shape_text(dims), " has more than 2^63-1 elements");
      info.n_elements *= d;
      info.shape.push_back(d);
    }

    const uint32_t type_id = in.read<uint32_t>("tensor type");
    const GgmlTypeInfo* type = ggml_type_info(type_id);
    if (type == nullptr) in.fail_here(unsupported_type(type_id));
    info.type = type->type;
    try {
      info.bytes = static_cast<uint64_t>(ggml_tensor_bytes(info.type, info.n_elements, info.shape[0]));
    } catch (const Error& e) {
      in.fail_here("shape ", shape_text(dims), ": ", e.what());
    }
    info.offset = in.read<uint64_t>("data offset");

    tensor_index_.emplace(info.name, tensors_.size());
    tensors_.push_back(std::move(info));
  }
}

void GgufFile::place_tensor_data(const uint8_t* data, size_t header_end) {
  // As in llama.cpp, the padding before the data section is only required
  // when there are tensors (vocab-only files end right after the header).
  data_offset_ = tensors_.empty() ? header_end : (header_end + alignment_ - 1) / alignment_ * alignment_;
  if (tensors_.empty()) return;
  if (data_offset_ > size_)
    fail(path_, ": the data section would start at ", data_offset_, ", past the end of the file (", size_, " bytes)");
  const uint64_t section = size_ - data_offset_;

  for (GgufTensorInfo& t : tensors_) {
    if (t.offset % alignment_ != 0)
      fail(path_, ": tensor '", t.name, "': data offset ", t.offset, " is not a multiple of the alignment ", alignment_);
    if (t.offset > section || t.bytes > section - t.offset)
      fail(path_, ": tensor '", t.name, "': data ", range_text(t.offset, t.bytes), " lies outside the file (the data "
           "section holds ", section, " bytes from file offset ", data_offset_, ")");
    t.data = data + data_offset_ + t.offset;
  }

  std::vector<size_t> order(tensors_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return tensors_[a].offset < tensors_[b].offset; });
  for (size_t k = 1; k < order.size(); ++k) {
    const GgufTensorInfo& prev = tensors_[order[k - 1]];
    const GgufTensorInfo& cur = tensors_[order[k]];
    if (prev.offset + prev.bytes > cur.offset)
      fail(path_, ": tensor '", cur.name, "': data ", range_text(cur.offset, cur.bytes), " overlaps tensor '",
           prev.name, "' at ", range_text(prev.offset, prev.bytes));
  }
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  const auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensorInfo& GgufFile::tensor(std::string_view name) const {
  const GgufTensorInfo* t = find_tensor(name);
  if (t == nullptr) fail(path_, ": tensor '", name, "' is missing");
  return *t;
}

}  // namespace lowbit
