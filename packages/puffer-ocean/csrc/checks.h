// The binding's checks: its error type, the bound-array check and the action range pass.
// Private to binding.cpp, its one includer.
#pragma once

#include <pybind11/numpy.h>

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

namespace py = pybind11;

namespace {

// Raised as puffer.core.APIUsageError by the translator registered in the module.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Checks one bound array (dtype, C-contiguity, writeable, row count) and returns its data and
// the number of elements in one row. Nothing is ever converted: a mismatch is refused.
template <typename T>
T *checked_rows(const std::string &env, const char *array_name, const py::array &array,
                const py::dtype &dtype, py::ssize_t rows, py::ssize_t *row_size) {
    std::string where = env + ": " + array_name;
    if (!array.dtype().is(dtype) && !array.dtype().equal(dtype)) {
        throw UsageError(where + " has dtype " + std::string(py::str(array.dtype())) +
                         ", expected " + std::string(py::str(dtype)) +
                         "; allocate it with puffer.core.Buffer.allocate");
    }
    if (!(array.flags() & py::array::c_style)) {
        throw UsageError(where + " is not C-contiguous; pass a contiguous row slice");
    }
    if (!array.writeable()) {
        throw UsageError(where + " is read-only; the env writes it in place");
    }
    if (array.ndim() < 1 || array.shape(0) != rows) {
        throw UsageError(where + " has " + std::to_string(array.ndim() ? array.shape(0) : 0) +
                         " rows, expected " + std::to_string(rows) + " (num_envs * agents)");
    }
    *row_size = rows ? array.size() / rows : 0;
    return static_cast<T *>(const_cast<void *>(array.data()));
}

std::string format_value(double value) {
    std::ostringstream out;
    out << value;
    return out.str();
}

// Whether any of `n` int32 actions lies outside [0, size), or any of `n` floats outside
// [low, high] (NaN included). One branch-free pass that vectorizes; built for AVX2 and for the
// baseline, the loader picking what the CPU has (twice the lanes: half the cost at 1,024 envs).
#if defined(__x86_64__) && defined(__GNUC__)
#define PUFFER_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define PUFFER_CLONES
#endif
PUFFER_CLONES bool any_outside(const int32_t *actions, py::ssize_t n, int32_t size) {
    uint32_t bad = 0;
    for (py::ssize_t i = 0; i < n; i++)
        bad |= static_cast<uint32_t>(actions[i]) >= static_cast<uint32_t>(size);
    return bad;
}

PUFFER_CLONES bool any_outside(const float *actions, py::ssize_t n, float low, float high) {
    uint32_t bad = 0;
    for (py::ssize_t i = 0; i < n; i++) // NaN fails both comparisons
        bad |= !(actions[i] >= low) | !(actions[i] <= high);
    return bad;
}

} // namespace
