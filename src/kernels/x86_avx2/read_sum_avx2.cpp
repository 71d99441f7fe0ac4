#include <immintrin.h>

#include <cstddef>
#include <cstdint>

namespace lowbit {

// Software prefetch distance: with the hardware prefetcher alone one core of a
// Zen 5 server reads well below what it can draw (and below what the GEMV
// kernels, which prefetch this far ahead, reach), so the probe would not be
// the ceiling it claims to be.
constexpr size_t kPrefetchBytes = 4096;

// Loads every byte once (four independent 256-bit streams) and folds them so
// the compiler cannot drop the loads.
uint64_t read_sum_avx2(const uint8_t* p, size_t bytes) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  for (size_t i = 0; i + 128 <= bytes; i += 128) {
    _mm_prefetch(reinterpret_cast<const char*>(p + i + kPrefetchBytes), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(p + i + kPrefetchBytes + 64), _MM_HINT_T0);
    a = _mm256_xor_si256(a, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i)));
    b = _mm256_xor_si256(b, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 32)));
    c = _mm256_xor_si256(c, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 64)));
    d = _mm256_xor_si256(d, _mm256_load_si256(reinterpret_cast<const __m256i*>(p + i + 96)));
  }
  const __m256i x = _mm256_xor_si256(_mm256_xor_si256(a, b), _mm256_xor_si256(c, d));
  return static_cast<uint64_t>(_mm256_extract_epi64(x, 0) ^ _mm256_extract_epi64(x, 3));
}

}  // namespace lowbit
