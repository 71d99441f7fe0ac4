#include "runtime/logprob_file.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "core/error.h"
#include "runtime/kl_divergence.h"

namespace lowbit {

namespace {

constexpr char kMagic[8] = {'l', 'o', 'w', 'b', 'i', 't', 'L', 'P'};
constexpr uint32_t kVersion = 1;
constexpr int64_t kHeaderWords = 5;  // version, n_vocab, n_ctx, n_chunks, first

void write_bytes(std::FILE* f, const void* data, size_t n, const std::string& path) {
  if (std::fwrite(data, 1, n, f) != n) fail(path, ": write failed (disk full?)");
}

void read_bytes(std::FILE* f, void* data, size_t n, const std::string& path) {
  if (std::fread(data, 1, n, f) != n) fail(path, ": unexpected end of file");
}

}  // namespace

int64_t logprob_record_bytes(int64_t n_vocab) { return 8 + 2 * n_vocab; }

void encode_logprob_record(const float* logits, int64_t n, uint8_t* record) {
  std::vector<double> lp(static_cast<size_t>(n));
  log_softmax(logits, n, lp.data());
  const auto [min_it, max_it] = std::minmax_element(lp.begin(), lp.end());
  const float top = static_cast<float>(*max_it);
  const float lo = std::max(static_cast<float>(*min_it), top - kLogprobRange);
  const float step = (top - lo) / 65535.0f;
  std::memcpy(record, &lo, 4);
  std::memcpy(record + 4, &step, 4);
  for (int64_t i = 0; i < n; ++i) {
    const double c = step > 0 ? std::nearbyint((lp[static_cast<size_t>(i)] - lo) / step) : 0.0;
    const uint16_t code = static_cast<uint16_t>(std::clamp(c, 0.0, 65535.0));
    std::memcpy(record + 8 + 2 * i, &code, 2);
  }
}

void decode_logprob_record(const uint8_t* record, int64_t n, double* log_probs) {
  float lo, step;
  std::memcpy(&lo, record, 4);
  std::memcpy(&step, record + 4, 4);
  for (int64_t i = 0; i < n; ++i) {
    uint16_t code;
    std::memcpy(&code, record + 8 + 2 * i, 2);
    log_probs[i] = lo + static_cast<double>(step) * code;
  }
  log_softmax(log_probs, n);  // renormalize
}

LogprobFileWriter::LogprobFileWriter(const std::string& path, const LogprobFileHeader& h)
    : path_(path), n_vocab_(h.n_vocab), expected_(h.n_chunks * h.scored_per_chunk()) {
  if (static_cast<int64_t>(h.tokens.size()) != h.n_chunks * h.n_ctx)
    fail(path, ": header has ", h.tokens.size(), " tokens for ", h.n_chunks, " chunks of ", h.n_ctx);
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) fail(path, ": cannot create: ", std::strerror(errno));
  write_bytes(file_, kMagic, 8, path_);
  const uint32_t words[kHeaderWords] = {kVersion, static_cast<uint32_t>(h.n_vocab), static_cast<uint32_t>(h.n_ctx),
                                        static_cast<uint32_t>(h.n_chunks), static_cast<uint32_t>(h.first)};
  write_bytes(file_, words, sizeof(words), path_);
  write_bytes(file_, h.tokens.data(), h.tokens.size() * 4, path_);
  record_.resize(static_cast<size_t>(logprob_record_bytes(n_vocab_)));
}

LogprobFileWriter::~LogprobFileWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

void LogprobFileWriter::add(const float* logits) {
  if (written_ >= expected_) fail(path_, ": more records than the header's ", expected_);
  encode_logprob_record(logits, n_vocab_, record_.data());
  write_bytes(file_, record_.data(), record_.size(), path_);
  ++written_;
}

namespace {

// Positions taken per pass over the pool: their records (256 KB each for a
// 128k vocabulary) are held at once.
int64_t rows_per_pass(const ThreadPool& pool) { return std::max<int64_t>(16, 2 * pool.size()); }

}  // namespace

void LogprobFileWriter::add_rows(const float* logits, int64_t rows, ThreadPool& pool) {
  if (written_ + rows > expected_) fail(path_, ": more records than the header's ", expected_);
  const auto bytes = static_cast<size_t>(logprob_record_bytes(n_vocab_));
  std::vector<uint8_t> records;
  for (int64_t r0 = 0; r0 < rows; r0 += rows_per_pass(pool)) {
    const int64_t n = std::min(rows - r0, rows_per_pass(pool));
    records.resize(static_cast<size_t>(n) * bytes);
    pool.parallel_for(n, 1, [&](int64_t begin, int64_t end, int) {
      for (int64_t i = begin; i < end; ++i)
        encode_logprob_record(logits + (r0 + i) * n_vocab_, n_vocab_, records.data() + static_cast<size_t>(i) * bytes);
    });
    write_bytes(file_, records.data(), records.size(), path_);
    written_ += n;
  }
}

void LogprobFileWriter::finish() {
  if (written_ != expected_) fail(path_, ": wrote ", written_, " records, the header promises ", expected_);
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) fail(path_, ": close failed: ", std::strerror(errno));
}

LogprobFileReader::LogprobFileReader(const std::string& path) : path_(path) {
  file_ = std::fopen(path.c_str(), "rb");
  if (file_ == nullptr) fail(path, ": cannot open: ", std::strerror(errno));
  char magic[8];
  read_bytes(file_, magic, 8, path_);
  if (std::memcmp(magic, kMagic, 8) != 0)
    fail(path, ": not a lowbit log-probability file (write one with lowbit perplexity --kld-base)");
  uint32_t words[kHeaderWords];
  read_bytes(file_, words, sizeof(words), path_);
  if (words[0] != kVersion) fail(path, ": version ", words[0], ", this lowbit reads version ", kVersion);
  LogprobFileHeader& h = header_;
  h.n_vocab = words[1];
  h.n_ctx = words[2];
  h.n_chunks = words[3];
  h.first = words[4];
  if (h.n_vocab < 1 || h.n_ctx < 4 || h.first >= h.n_ctx - 1 || h.n_chunks < 1)
    fail(path, ": header values out of range (n_vocab ", h.n_vocab, ", n_ctx ", h.n_ctx, ", n_chunks ", h.n_chunks,
         ", first ", h.first, ")");
  total_ = h.n_chunks * h.scored_per_chunk();
  const uintmax_t want = 8 + 4 * kHeaderWords + 4 * static_cast<uintmax_t>(h.n_chunks * h.n_ctx) +
                         static_cast<uintmax_t>(total_ * logprob_record_bytes(h.n_vocab));
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) fail(path, ": cannot read its size: ", ec.message());
  if (size != want) fail(path, ": file has ", size, " bytes, its header implies ", want, " (truncated?)");
  h.tokens.resize(static_cast<size_t>(h.n_chunks * h.n_ctx));
  read_bytes(file_, h.tokens.data(), h.tokens.size() * 4, path_);
  record_.resize(static_cast<size_t>(logprob_record_bytes(h.n_vocab)));
}

LogprobFileReader::~LogprobFileReader() {
  if (file_ != nullptr) std::fclose(file_);
}

void LogprobFileReader::next_records(int64_t rows, uint8_t* records) {
  if (read_ + rows > total_) fail(path_, ": read past the last of its ", total_, " records");
  read_bytes(file_, records, static_cast<size_t>(rows) * record_.size(), path_);
  read_ += rows;
}

void compare_with_base(LogprobFileReader& reader, const float* logits, int64_t rows, const int32_t* targets,
                       ThreadPool& pool, DistributionComparison& comparison) {
  const int64_t V = reader.header().n_vocab;
  const auto bytes = static_cast<size_t>(logprob_record_bytes(V));
  // Per thread: the base's and the model's log-probabilities of a position.
  std::vector<std::vector<double>> base(static_cast<size_t>(pool.size())), lp(base.size());
  std::vector<uint8_t> records;
  std::vector<PositionComparison> measured;
  for (int64_t r0 = 0; r0 < rows; r0 += rows_per_pass(pool)) {
    const int64_t n = std::min(rows - r0, rows_per_pass(pool));
    records.resize(static_cast<size_t>(n) * bytes);
    reader.next_records(n, records.data());
    measured.assign(static_cast<size_t>(n), {});
    pool.parallel_for(n, 1, [&](int64_t begin, int64_t end, int thread) {
      std::vector<double>& b = base[static_cast<size_t>(thread)];
      std::vector<double>& l = lp[static_cast<size_t>(thread)];
      b.resize(static_cast<size_t>(V));
      l.resize(static_cast<size_t>(V));
      for (int64_t i = begin; i < end; ++i) {
        decode_logprob_record(records.data() + static_cast<size_t>(i) * bytes, V, b.data());
        log_softmax(logits + (r0 + i) * V, V, l.data());
        measured[static_cast<size_t>(i)] = measure_position(b.data(), l.data(), V, targets[r0 + i]);
      }
    });
    for (const PositionComparison& m : measured) comparison.add(m);
  }
}

void LogprobFileReader::next(double* log_probs) {
  if (read_ >= total_) fail(path_, ": read past the last of its ", total_, " records");
  read_bytes(file_, record_.data(), record_.size(), path_);
  decode_logprob_record(record_.data(), header_.n_vocab, log_probs);
  ++read_;
}

}  // namespace lowbit
