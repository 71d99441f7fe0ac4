// The file `lowbit perplexity --kld-base` writes and `--kld` reads: the base
// model's next-token log-probabilities at every scored position, and the
// tokens they were computed on (so a comparison on another text, context or
// vocabulary is refused instead of silently meaningless).
//
// Layout, little-endian:
//   char  magic[8] = "lowbitLP"
//   u32   version = 1
//   u32   n_vocab, n_ctx, n_chunks, first   (first: first scored position)
//   i32   tokens[n_chunks * n_ctx]          the text's tokens, before any BOS replacement
//   then n_chunks * (n_ctx - 1 - first) records, chunk by chunk, position by position:
//     f32 lo, f32 step, u16 code[n_vocab]   log p_i ~= lo + step * code_i
// lo is the smallest log-probability, but no lower than the largest minus
// kLogprobRange (probabilities e^-24 below the top cannot move a KL divergence);
// step = (largest - lo) / 65535, so values are kept to within step / 2
// (<= 1.9e-4 nats). 2 bytes per vocabulary entry, as in llama.cpp's own file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "runtime/kl_divergence.h"

namespace lowbit {

constexpr float kLogprobRange = 24.0f;

struct LogprobFileHeader {
  int64_t n_vocab = 0;
  int64_t n_ctx = 0;
  int64_t n_chunks = 0;
  int64_t first = 0;
  std::vector<int32_t> tokens;  // [n_chunks * n_ctx]

  int64_t scored_per_chunk() const { return n_ctx - 1 - first; }
};

// Bytes of one record for a vocabulary of n.
int64_t logprob_record_bytes(int64_t n_vocab);
// One position's logits [n] -> its record (log-softmax, then the 16-bit code).
void encode_logprob_record(const float* logits, int64_t n, uint8_t* record);
// A record -> normalized log-probabilities [n] (renormalized after decoding,
// so the rounding does not bias a KL divergence to first order).
void decode_logprob_record(const uint8_t* record, int64_t n, double* log_probs);

class LogprobFileWriter {
 public:
  // Creates the file and writes the header; Error naming the path on failure.
  LogprobFileWriter(const std::string& path, const LogprobFileHeader& header);
  ~LogprobFileWriter();
  // Appends the record of one scored position: logits [n_vocab].
  void add(const float* logits);
  // Appends the records of `rows` positions (logits [rows][n_vocab]), encoded
  // on the pool's threads and written in order.
  void add_rows(const float* logits, int64_t rows, ThreadPool& pool);
  // Checks every record was written and closes; Error otherwise.
  void finish();

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  int64_t n_vocab_, expected_, written_ = 0;
  std::vector<uint8_t> record_;
};

class LogprobFileReader {
 public:
  // Opens and validates the header and the file size; Error naming the path.
  explicit LogprobFileReader(const std::string& path);
  ~LogprobFileReader();
  const LogprobFileHeader& header() const { return header_; }
  // The next record as log-probabilities [n_vocab].
  void next(double* log_probs);
  // The next `rows` records as they are stored (logprob_record_bytes each).
  void next_records(int64_t rows, uint8_t* records);

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
  LogprobFileHeader header_;
  int64_t read_ = 0, total_ = 0;
  std::vector<uint8_t> record_;
};

// Compares `rows` positions' logits ([rows][n_vocab]) with the reader's next
// records: each position's log-softmax and measure_position on the pool's
// threads, added to `comparison` in order. targets: [rows] (-1: none).
void compare_with_base(LogprobFileReader& reader, const float* logits, int64_t rows, const int32_t* targets,
                       ThreadPool& pool, DistributionComparison& comparison);

}  // namespace lowbit
