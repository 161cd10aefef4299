// Fixed-width vectors for the CPU kernels' row work (sequence_cpu.cpp, mingru_cpu.cpp): GCC
// vector types of B bytes, unaligned loads and stores, and the attributes that compile a
// function for the instruction set of its width.
#ifndef PUFFER_CPU_VECTORS_H
#define PUFFER_CPU_VECTORS_H

#include <string.h>

#include "recurrence.h"

namespace puffer_cpu {

// The row work (the recurrent product and the cells) runs on vectors of B bytes: 64 where the
// CPU has AVX-512 (twice the lanes per instruction), else 32 (AVX2, or the compiler's lowering
// elsewhere). Each lane computes the same operations in the same order at either width, so the
// two agree to the last bit or two (where the compiler contracts a product into an FMA). GCC vector
// types spell the tiles out: left to the auto-vectorizer the accumulators spilled to the stack
// (2-4x slower). (An alias template cannot carry vector_size on a dependent type: GCC drops it.
// Hence the named types of recurrence.h.)
template <typename T, int B> struct VecOf;
template <> struct VecOf<float, 32> {
    using type = puffer::VecF;
};
template <> struct VecOf<double, 32> {
    using type = puffer::VecD;
};
template <> struct VecOf<float, 64> {
    using type = puffer::VecF16;
};
template <> struct VecOf<double, 64> {
    using type = puffer::VecD8;
};
template <typename T, int B> using Vec = typename VecOf<T, B>::type;

template <int B, typename T> __attribute__((always_inline)) inline Vec<T, B> load(const T *p) {
    Vec<T, B> v;
    static_assert(sizeof v == B, "a B-byte vector");
    memcpy(&v, p, sizeof v);
    return v;
}

template <typename T, typename V> __attribute__((always_inline)) inline void store(T *p, V v) {
    memcpy(p, &v, sizeof v);
}

} // namespace puffer_cpu

// The row work of one dtype at one width, compiled for the instruction set that has the width:
// 32-byte vectors as AVX2 with a portable fallback clone, 64-byte ones as AVX-512.
#if defined(__x86_64__) && defined(__GNUC__)
#define PUFFER_W32 __attribute__((target_clones("arch=x86-64-v3", "default")))
#define PUFFER_W64 __attribute__((target("arch=x86-64-v4")))
#else
#define PUFFER_W32
#define PUFFER_W64
#endif

#endif // PUFFER_CPU_VECTORS_H
