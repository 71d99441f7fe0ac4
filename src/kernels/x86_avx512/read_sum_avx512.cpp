#include <immintrin.h>

#include <cstddef>
#include <cstdint>

// GCC 12's AVX-512 headers trip -W(maybe-)uninitialized on their own
// _mm512_undefined_*() placeholders (GCC bug 105593); nothing here reads them.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace lowbit {

// Loads every byte once, 64 bytes per load (on Zen 4/5 one core streams memory
// ~20% faster this way than with 256-bit loads, as the 512-bit kernels do),
// from four quarters of the span side by side: on Zen 5 one core drew 12% more
// this way than from one sequential stream (36.4 against 32.6 GB/s at 1
// thread; 80.6 against 70.9 at 2), two or eight quarters less (performance.md
// "Session 11"). The probe is the roofline: it must read as fast as memory goes.
uint64_t read_sum_avx512(const uint8_t* p, size_t bytes) {
  constexpr size_t kStreams = 4;
  const size_t quarter = bytes / kStreams / 128 * 128;
  __m512i a = _mm512_setzero_si512(), b = a;
  for (size_t i = 0; i < quarter; i += 128) {
    #pragma GCC unroll 4
    for (size_t s = 0; s < kStreams; ++s) {
      a = _mm512_xor_si512(a, _mm512_load_si512(p + s * quarter + i));
      b = _mm512_xor_si512(b, _mm512_load_si512(p + s * quarter + i + 64));
    }
  }
  for (size_t i = kStreams * quarter; i + 128 <= bytes; i += 128) {
    a = _mm512_xor_si512(a, _mm512_load_si512(p + i));
    b = _mm512_xor_si512(b, _mm512_load_si512(p + i + 64));
  }
  return static_cast<uint64_t>(_mm512_reduce_add_epi64(_mm512_xor_si512(a, b)));
}

}  // namespace lowbit
