// Just enough of a GGUF reader for the quant tests to look at the peer files
// (tests/quant links only lowbit_quant, not the formats room): tensor names,
// shapes, types and data. Assumes a well-formed file; throws (failing the test) otherwise.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace lowbit::test {

struct MiniGgufTensor {
  std::vector<int64_t> shape;  // shape[0] = row length
  uint32_t type = 0;
  const uint8_t* data = nullptr;
  int64_t n_elements() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

class MiniGguf {
 public:
  explicit MiniGguf(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open fixture " + path);
    bytes_.assign(std::istreambuf_iterator<char>(in), {});
    if (bytes_.size() < 24 || std::memcmp(bytes_.data(), "GGUF", 4) != 0) throw std::runtime_error(path + ": not GGUF");
    pos_ = 8;
    const uint64_t n_tensors = u64();
    const uint64_t n_kv = u64();
    uint64_t alignment = 32;
    for (uint64_t i = 0; i < n_kv; ++i) {
      const std::string key = str();
      const uint32_t type = u32();
      if (key == "general.alignment" && type == 4) {
        alignment = u32();
        continue;
      }
      skip_value(type);
    }
    std::vector<std::pair<std::string, uint64_t>> offsets;
    for (uint64_t i = 0; i < n_tensors; ++i) {
      const std::string name = str();
      MiniGgufTensor t;
      const uint32_t dims = u32();
      for (uint32_t d = 0; d < dims; ++d) t.shape.push_back(static_cast<int64_t>(u64()));
      t.type = u32();
      offsets.emplace_back(name, u64());
      tensors_[name] = t;
    }
    const uint64_t data_start = (pos_ + alignment - 1) / alignment * alignment;
    for (const auto& [name, offset] : offsets) {
      if (data_start + offset > bytes_.size()) throw std::runtime_error(path + ": tensor " + name + " out of range");
      tensors_[name].data = bytes_.data() + data_start + offset;
    }
  }

  const std::map<std::string, MiniGgufTensor>& tensors() const { return tensors_; }
  const MiniGgufTensor& tensor(const std::string& name) const { return tensors_.at(name); }
  const uint8_t* end() const { return bytes_.data() + bytes_.size(); }

 private:
  template <class T>
  T read() {
    if (pos_ + sizeof(T) > bytes_.size()) throw std::runtime_error("GGUF truncated");
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  uint32_t u32() { return read<uint32_t>(); }
  uint64_t u64() { return read<uint64_t>(); }
  std::string str() {
    const uint64_t n = u64();
    if (pos_ + n > bytes_.size()) throw std::runtime_error("GGUF truncated");
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  void skip_value(uint32_t type) {
    static constexpr uint64_t kSizes[] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
    if (type == 8) {
      str();
    } else if (type == 9) {
      const uint32_t elem = u32();
      const uint64_t count = u64();
      for (uint64_t i = 0; i < count; ++i) skip_value(elem);
    } else if (type < 13) {
      pos_ += kSizes[type];
    } else {
      throw std::runtime_error("GGUF value type " + std::to_string(type));
    }
  }

  std::vector<uint8_t> bytes_;
  size_t pos_ = 0;
  std::map<std::string, MiniGgufTensor> tensors_;
};

inline std::string peer_fixture(const std::string& file) {
  return std::string(LOWBIT_FIXTURES_DIR) + "/peer/tiny-a/" + file;
}

}  // namespace lowbit::test
