// The one pybind11 binding for every Ocean env: a vectorized env class per C header.
//
// How to add an env (one header, one line here, a Python class, an entry point):
//   1. Write csrc/<env>/<env>.h after csrc/squared/squared.h. It compiles as C11 and as C++
//      (cast malloc results, no compound literals) and defines, at file scope:
//        Log                  struct of floats, last field `n`, + `static const char* LOG_NAMES[]`
//        <Env>                struct with `observations, actions, rewards, terminals, truncations`
//                             (pointers to this env's first row), `int num_agents`,
//                             `uint64_t rng`, `Log log`, and its config fields
//        CONFIG               `static const PufferField[]` of config fields, NULL-terminated
//        c_init(<Env>*)       after config is set, before rows exist: set num_agents, allocate
//        c_reset(<Env>*)      new episode from env->rng; writes obs, clears rewards and flags
//        c_step(<Env>*)       one step of every agent of this env; auto-resets, logs on ends
//        c_frame_size(const <Env>*, int* width, int* height) and c_render(const <Env>*, Canvas*)
//        c_close(<Env>*)      free what c_init allocated
//   2. Include it below inside `namespace <env> { ... }` and add `PUFFER_ENV(<env>, <Env>);` to
//      PYBIND11_MODULE. The class `_ocean.<env>` then exists.
//   3. Add a `puffer.ocean.OceanEnv` subclass (spaces + config dataclass) and one line under
//      [project.entry-points."puffer.envs"] in pyproject.toml.
//
// The binding owns everything but physics: array validation, per-env seeds, threads (pool.h),
// Log aggregation. It holds references to the numpy arrays it writes, so they outlive it.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <memory>

// Everything the env headers include, included here first so that their include guards keep
// system declarations out of the per-env namespaces below.
#include "pool.h"
#include "puffer.h"
#include "raster.h"

// clang-format off
namespace squared {
#include "squared/squared.h"
}
namespace cartpole {
#include "cartpole/cartpole.h"
}
#define CARTPOLE_CONTINUOUS // the same header again, with float actions
namespace cartpole_continuous {
#include "cartpole/cartpole.h"
}
namespace pong {
#include "pong/pong.h"
}
namespace breakout {
#include "breakout/breakout.h"
}
namespace snake {
#include "snake/snake.h"
}
namespace target {
#include "target/target.h"
}
namespace connect4 {
#include "connect4/connect4.h"
}
namespace g2048 {
#include "g2048/g2048.h"
}
namespace tetris {
#include "tetris/tetris.h"
}
namespace memory {
#include "memory/memory.h"
}
// clang-format on

namespace py = pybind11;

namespace {

// Raised as puffer.core.APIUsageError by the translator registered in the module.
struct UsageError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

constexpr int MIN_ENVS_PER_THREAD = 32;

uint64_t mix_seed(uint64_t seed, uint64_t index) {
    uint64_t state = seed;
    uint64_t key = rng_next(&state) + index * 0xD1B54A32D192ED03ull;
    return rng_next(&key);
}

template <typename T> py::dtype dtype_for_pointer() {
    return py::dtype::of<T>();
}

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

template <typename Env> class VecEnv {
  public:
    using Obs = std::remove_pointer_t<decltype(Env::observations)>;
    using Act = std::remove_pointer_t<decltype(Env::actions)>;

    VecEnv(std::string name, const PufferField *fields, const char *const *log_names,
           size_t log_size, int num_envs, const py::dict &config, py::array observations,
           py::array actions, py::array rewards, py::array terminals, py::array truncations,
           int num_threads)
        : name_(std::move(name)), log_names_(log_names, log_names + log_size) {
        if (num_envs < 1) {
            throw UsageError(name_ + ": num_envs is " + std::to_string(num_envs) +
                             ", expected >= 1");
        }
        set_threads(num_threads);
        envs_.resize(num_envs);
        for (Env &env : envs_) {
            std::memset(&env, 0, sizeof(Env));
            env.num_agents = 1;
            configure(&env, fields, config);
        }
        py::ssize_t agents = 0;
        for (Env &env : envs_) {
            c_init(&env);
            agents += env.num_agents;
        }
        initialized_ = true;
        num_agents_ = agents;
        try {
            bind_rows(observations, actions, rewards, terminals, truncations);
        } catch (...) {
            close(); // a throwing constructor runs no destructor: free what c_init allocated
            throw;
        }
    }

    ~VecEnv() { close(); }

    // Validates the five arrays (nothing is converted) and points each env at its rows.
    void bind_rows(const py::array &observations, const py::array &actions,
                   const py::array &rewards, const py::array &terminals,
                   const py::array &truncations) {
        const py::ssize_t agents = num_agents_;
        py::ssize_t obs_size, act_size, one;
        Obs *obs = checked_rows<Obs>(name_, "observations", observations, dtype_for_pointer<Obs>(),
                                     agents, &obs_size);
        Act *act = checked_rows<Act>(name_, "actions", actions, dtype_for_pointer<Act>(), agents,
                                     &act_size);
        float *rew =
            checked_rows<float>(name_, "rewards", rewards, py::dtype::of<float>(), agents, &one);
        uint8_t *term =
            checked_rows<uint8_t>(name_, "terminals", terminals, py::dtype("bool"), agents, &one);
        uint8_t *trunc = checked_rows<uint8_t>(name_, "truncations", truncations, py::dtype("bool"),
                                               agents, &one);
        arrays_ = {observations, actions, rewards, terminals, truncations};
        py::ssize_t row = 0;
        for (Env &env : envs_) {
            env.observations = obs + row * obs_size;
            env.actions = act + row * act_size;
            env.rewards = rew + row;
            env.terminals = term + row;
            env.truncations = trunc + row;
            row += env.num_agents;
        }
    }

    // Re-seeds env i with mix(seed, i) and starts a new episode in every env.
    void reset(uint64_t seed) {
        check_open("reset");
        py::gil_scoped_release release;
        const int n = static_cast<int>(envs_.size());
        for (int i = 0; i < n; i++) {
            envs_[i].rng = mix_seed(seed, static_cast<uint64_t>(i));
            c_reset(&envs_[i]);
        }
    }

    void step() {
        check_open("step");
        py::gil_scoped_release release;
        Env *envs = envs_.data();
        const int n = static_cast<int>(envs_.size());
        // Below MIN_ENVS_PER_THREAD instances a thread's share is cheaper than waking it.
        if (pool_ && n >= 2 * MIN_ENVS_PER_THREAD) {
            const int chunk = std::max(MIN_ENVS_PER_THREAD / 2, n / (4 * threads_));
            pool_->run(n, chunk, [envs](int begin, int end) {
                for (int i = begin; i < end; i++)
                    c_step(&envs[i]);
            });
            return;
        }
        for (int i = 0; i < n; i++)
            c_step(&envs[i]);
    }

    // Means of every Log field over the episodes finished since the last call, plus their count
    // `n`; empty when none finished. Clears the logs.
    py::dict log() {
        check_open("log");
        const size_t fields = log_names_.size();
        std::vector<double> sums(fields, 0.0);
        for (Env &env : envs_) {
            const float *values = reinterpret_cast<const float *>(&env.log);
            for (size_t k = 0; k < fields; k++)
                sums[k] += values[k];
            std::memset(&env.log, 0, sizeof(env.log));
        }
        py::dict out;
        const double n = sums[fields - 1];
        if (n <= 0.0) return out;
        for (size_t k = 0; k + 1 < fields; k++)
            out[py::str(log_names_[k])] = sums[k] / n;
        out["n"] = n;
        return out;
    }

    py::array_t<uint8_t> render(int index) {
        check_open("render");
        if (index < 0 || index >= static_cast<int>(envs_.size())) {
            throw UsageError(name_ + ": render(" + std::to_string(index) +
                             ") is outside [0, num_envs=" + std::to_string(envs_.size()) + ")");
        }
        int width = 0, height = 0;
        c_frame_size(&envs_[index], &width, &height);
        py::array_t<uint8_t> frame({height, width, 3});
        Canvas canvas{frame.mutable_data(), width, height};
        c_render(&envs_[index], &canvas);
        return frame;
    }

    void close() {
        if (closed_) return;
        closed_ = true;
        if (initialized_) {
            for (Env &env : envs_)
                c_close(&env);
        }
        arrays_.clear();
        pool_.reset();
    }

    void set_threads(int threads) {
        if (threads < 1) {
            throw UsageError(name_ + ": num_threads is " + std::to_string(threads) +
                             ", expected >= 1");
        }
        if (threads != threads_) {
            pool_.reset(); // joins the old helpers first
            if (threads > 1) pool_ = std::make_unique<StepPool>(threads - 1);
            threads_ = threads;
        }
    }

    int threads() const { return threads_; }
    int num_envs() const { return static_cast<int>(envs_.size()); }
    py::ssize_t num_agents() const { return num_agents_; }
    bool closed() const { return closed_; }

  private:
    void check_open(const char *call) const {
        if (closed_) {
            throw UsageError(name_ + ": " + call + "() called after close(); make a new env");
        }
    }

    void configure(Env *env, const PufferField *fields, const py::dict &config) {
        for (auto item : config) {
            std::string key = py::cast<std::string>(item.first);
            const PufferField *field = fields;
            while (field->name && key != field->name)
                field++;
            if (!field->name) {
                std::string known;
                for (const PufferField *f = fields; f->name; f++)
                    known += std::string(" ") + f->name;
                throw UsageError(name_ + ": unknown config field '" + key + "'; known:" + known);
            }
            char *at = reinterpret_cast<char *>(env) + field->offset;
            if (field->type == PUFFER_INT) {
                int value = py::cast<int>(item.second);
                std::memcpy(at, &value, sizeof(value));
            } else {
                float value = py::cast<float>(item.second);
                std::memcpy(at, &value, sizeof(value));
            }
        }
    }

    std::string name_;
    std::vector<const char *> log_names_;
    std::vector<Env> envs_;
    std::vector<py::array> arrays_;
    std::unique_ptr<StepPool> pool_; // threads_ - 1 helpers; null for one thread
    py::ssize_t num_agents_ = 0;
    int threads_ = 1;
    bool initialized_ = false;
    bool closed_ = false;
};

template <typename Env, size_t LogSize>
void bind_env(py::module_ &m, const char *name, const PufferField *fields,
              const char *const (&log_names)[LogSize]) {
    using V = VecEnv<Env>;
    const char *const *names = log_names;
    py::class_<V>(m, name)
        .def(py::init([name, fields, names](int num_envs, const py::dict &config,
                                            py::array observations, py::array actions,
                                            py::array rewards, py::array terminals,
                                            py::array truncations, int num_threads) {
                 return new V(name, fields, names, LogSize, num_envs, config, observations, actions,
                              rewards, terminals, truncations, num_threads);
             }),
             py::arg("num_envs"), py::arg("config"), py::arg("observations"), py::arg("actions"),
             py::arg("rewards"), py::arg("terminals"), py::arg("truncations"),
             py::arg("num_threads") = 1)
        .def("reset", &V::reset, py::arg("seed"))
        .def("step", &V::step)
        .def("log", &V::log)
        .def("render", &V::render, py::arg("index") = 0)
        .def("close", &V::close)
        .def_property("num_threads", &V::threads, &V::set_threads)
        .def_property_readonly("num_envs", &V::num_envs)
        .def_property_readonly("num_agents", &V::num_agents)
        .def_property_readonly("closed", &V::closed);
    m.attr("ENVS").cast<py::list>().append(name);
}

} // namespace

#define PUFFER_STRINGIFY(x) #x
#define PUFFER_VERSION(x) PUFFER_STRINGIFY(x)
#define PUFFER_ENV(ns, Type) bind_env<ns::Type>(m, #ns, ns::CONFIG, ns::LOG_NAMES)

PYBIND11_MODULE(_ocean, m) {
    m.doc() = "Private: vectorized C Ocean envs. Use the classes in puffer.ocean instead.";
    m.attr("__version__") = PUFFER_VERSION(VERSION_INFO);
    m.attr("ENVS") = py::list();
    static py::handle usage_error =
        py::object(py::module_::import("puffer.core.errors").attr("APIUsageError")).release();
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const UsageError &e) {
            PyErr_SetString(usage_error.ptr(), e.what());
        }
    });

    PUFFER_ENV(squared, Squared);
    PUFFER_ENV(cartpole, Cartpole);
    PUFFER_ENV(cartpole_continuous, Cartpole);
    PUFFER_ENV(pong, Pong);
    PUFFER_ENV(breakout, Breakout);
    PUFFER_ENV(snake, Snake);
    PUFFER_ENV(target, Target);
    PUFFER_ENV(connect4, Connect4);
    PUFFER_ENV(g2048, G2048);
    PUFFER_ENV(tetris, Tetris);
    PUFFER_ENV(memory, Memory);
}
