// The one pybind11 binding for every Ocean env: a vectorized env class per C header.
//
// How to add an env (a header and one line):
//   1. Write csrc/<env>/<env>.h after csrc/squared/squared.h. It compiles as C11 and as C++
//      (cast malloc results, no compound literals), is wrapped in PUFFER_ENV_BEGIN(<env>) ...
//      PUFFER_ENV_END(<env>, <Env>) and defines:
//        Log                  struct of floats, last field `n`, + `static const char* LOG_NAMES[]`
//        <Env>                struct with `observations, actions, rewards, terminals, truncations`
//                             (pointers to this env's first row), `int num_agents`,
//                             `uint64_t rng`, `Log log`, and its config fields
//        CONFIG               `static const PufferField[]`: name, offset, default, range, doc
//        SPEC                 `static const PufferSpec`: observation, action, config, log names,
//                             state layout (puffer.h); Python builds the env class from it
//        KEYS                 `static const PufferKey[]`: the key map of `puffer play` (puffer.h)
//        c_init(<Env>*)       after config is set, before rows exist: set num_agents, allocate
//        c_reset(<Env>*)      new episode from env->rng; writes obs
//        c_step(<Env>*)       one step of every agent of this env; auto-resets, logs on ends
//        c_frame_size(const <Env>*, int* width, int* height) and c_render(const <Env>*, Canvas*)
//        c_close(<Env>*)      free what c_init allocated
//      and, for a turn-based game with moves that are sometimes illegal, SPEC.action_mask
//      (puffer.h): the env class then writes the buffer's `action_masks` (legal moves).
//   2. Add `#include "<env>/<env>.h"` to csrc/envs.h. The class `_ocean.<env>`, the Python class
//      `puffer.ocean.<Env>` and the registry name `<env>` then exist.
//
// The binding owns everything but physics: array validation, clearing rewards and flags before
// a reset (each c_step writes all three itself), action range checks, per-env seeds, threads
// (pool.h), Log aggregation, saving and loading state. It holds references to the numpy arrays it
// writes, so they outlive it.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

// Everything the env headers include, included here first so that their include guards keep
// system declarations out of the per-env namespaces.
#include "checks.h"
#include "pool.h"
#include "puffer.h"
#include "raster.h"

namespace py = pybind11;

namespace {

constexpr int MIN_ENVS_PER_THREAD = 32;
// save_state layout: magic, format version, then a fixed header (see StateHeader).
constexpr char STATE_MAGIC[8] = {'P', 'U', 'F', 'O', 'C', 'E', 'A', 'N'};
constexpr uint32_t STATE_VERSION = 1;

struct StateHeader {
    char magic[8];
    uint32_t version;
    uint32_t num_envs;
    uint64_t env_size;
    uint64_t total;
    char name[32];
};

uint64_t mix_seed(uint64_t seed, uint64_t index) {
    uint64_t state = seed;
    uint64_t key = rng_next(&state) + index * 0xD1B54A32D192ED03ull;
    return rng_next(&key);
}

template <typename T> constexpr PufferDtype dtype_code() {
    if constexpr (std::is_same_v<T, uint8_t>)
        return PUFFER_UINT8;
    else if constexpr (std::is_same_v<T, int8_t>)
        return PUFFER_INT8;
    else
        return PUFFER_FLOAT32;
}

// The spec as Python data: what puffer.ocean builds the env class from.
py::dict spec_dict(const PufferSpec &spec, const char *c_type) {
    py::list config;
    for (const PufferField *f = spec.config; f->name; f++) {
        config.append(py::dict(py::arg("name") = f->name,
                               py::arg("type") = f->type == PUFFER_INT ? "int" : "float",
                               py::arg("default") = f->value, py::arg("min") = f->min,
                               py::arg("max") = f->max, py::arg("doc") = f->doc));
    }
    const char *dtypes[] = {"uint8", "int8", "float32"};
    py::object low = py::float_(spec.obs_low), high = py::float_(spec.obs_high);
    if (spec.obs_lows) {
        low = py::cast(std::vector<float>(spec.obs_lows, spec.obs_lows + spec.obs_size));
        high = py::cast(std::vector<float>(spec.obs_highs, spec.obs_highs + spec.obs_size));
    }
    return py::dict(
        py::arg("doc") = spec.doc, py::arg("c_type") = c_type,
        py::arg("obs_dtype") = dtypes[spec.obs_dtype], py::arg("obs_size") = spec.obs_size,
        py::arg("obs_low") = low, py::arg("obs_high") = high,
        py::arg("action_sizes") =
            std::vector<int>(spec.action_sizes, spec.action_sizes + spec.action_heads),
        py::arg("action_dim") = spec.action_dim, py::arg("action_low") = spec.action_low,
        py::arg("action_high") = spec.action_high, py::arg("config") = config,
        py::arg("log_names") =
            std::vector<std::string>(spec.log_names, spec.log_names + spec.log_size),
        py::arg("env_size") = spec.env_size, py::arg("action_masks") = spec.action_mask != nullptr);
}

// A header's key map as [(key, head, value), ...]; empty when the header declares none.
py::list key_list(const PufferKey *keys) {
    py::list out;
    for (const PufferKey *k = keys; k && k->key; k++)
        out.append(py::make_tuple(k->key, k->head, k->value));
    return out;
}

template <typename Env> class VecEnv {
  public:
    using Obs = std::remove_pointer_t<decltype(Env::observations)>;
    using Act = std::remove_pointer_t<decltype(Env::actions)>;

    VecEnv(std::string name, const PufferSpec *spec, int num_envs, const py::dict &config,
           int num_threads)
        : name_(std::move(name)), spec_(spec) {
        if (num_envs < 1) {
            throw UsageError(name_ + ": num_envs is " + std::to_string(num_envs) +
                             ", expected >= 1");
        }
        set_threads(num_threads);
        envs_.resize(num_envs);
        for (Env &env : envs_) {
            std::memset(&env, 0, sizeof(Env));
            env.num_agents = 1;
            configure(&env, config);
        }
        if (spec_->check) {
            if (const char *problem = spec_->check(&envs_[0])) {
                throw UsageError(name_ + ": " + problem);
            }
        }
        py::ssize_t agents = 0;
        for (Env &env : envs_) {
            c_init(&env);
            agents += env.num_agents;
        }
        initialized_ = true;
        num_agents_ = agents;
    }

    ~VecEnv() { close(); }

    // Validates the five arrays, and the action_masks array of an env whose SPEC declares an
    // action_mask (nothing is converted), and points each env at its rows.
    void bind(const py::array &observations, const py::array &actions, const py::array &rewards,
              const py::array &terminals, const py::array &truncations,
              const py::object &action_masks) {
        check_open("bind");
        const py::ssize_t agents = num_agents_;
        py::ssize_t obs_size, act_size, one;
        Obs *obs = checked_rows<Obs>(name_, "observations", observations, py::dtype::of<Obs>(),
                                     agents, &obs_size);
        Act *act =
            checked_rows<Act>(name_, "actions", actions, py::dtype::of<Act>(), agents, &act_size);
        float *rew =
            checked_rows<float>(name_, "rewards", rewards, py::dtype::of<float>(), agents, &one);
        uint8_t *term =
            checked_rows<uint8_t>(name_, "terminals", terminals, py::dtype("bool"), agents, &one);
        uint8_t *trunc = checked_rows<uint8_t>(name_, "truncations", truncations, py::dtype("bool"),
                                               agents, &one);
        const py::ssize_t want_obs = spec_->obs_size;
        const py::ssize_t want_act = spec_->action_heads ? spec_->action_heads : spec_->action_dim;
        if (obs_size != want_obs || act_size != want_act) {
            throw UsageError(name_ + ": rows hold " + std::to_string(obs_size) +
                             " observation and " + std::to_string(act_size) +
                             " action elements, expected " + std::to_string(want_obs) + " and " +
                             std::to_string(want_act));
        }
        uint8_t *legal = bind_masks(action_masks);
        arrays_ = {observations, actions, rewards, terminals, truncations};
        if (legal) arrays_.push_back(action_masks.cast<py::array>());
        obs_row_bytes_ = static_cast<size_t>(obs_size) * sizeof(Obs);
        actions_ = act;
        rewards_ = rew;
        terminals_ = term;
        truncations_ = trunc;
        py::ssize_t row = 0;
        for (Env &env : envs_) {
            env.observations = obs + row * obs_size;
            env.actions = act + row * act_size;
            env.rewards = rew + row;
            env.terminals = term + row;
            env.truncations = trunc + row;
            if (legal) env_masks_.push_back(legal + row * mask_width());
            row += env.num_agents;
        }
    }

    // Re-seeds env i with mix(seed, i) and starts a new episode in every env.
    void reset(uint64_t seed) {
        check_bound("reset");
        py::gil_scoped_release release;
        clear_outputs();
        const int n = static_cast<int>(envs_.size());
        for (int i = 0; i < n; i++) {
            envs_[i].rng = mix_seed(seed, static_cast<uint64_t>(i));
            c_reset(&envs_[i]);
        }
        write_masks(0, n);
    }

    // Refuses actions outside the action space (discrete ranges; continuous bounds, NaN and inf
    // included), naming the row and the value, then steps every env. Nothing is stepped when an
    // action is refused.
    void step() {
        check_bound("step");
        check_actions();
        step_unchecked();
    }

    // The step without the action check: benchmarks/ocean.py measures what the check costs.
    void step_unchecked() {
        check_bound("step");
        py::gil_scoped_release release;
        Env *envs = envs_.data();
        const int n = static_cast<int>(envs_.size());
        // Below MIN_ENVS_PER_THREAD instances a thread's share is cheaper than waking it.
        if (pool_ && n >= 2 * MIN_ENVS_PER_THREAD) {
            const int chunk = std::max(MIN_ENVS_PER_THREAD / 2, n / (4 * threads_));
            pool_->run(n, chunk, [this, envs](int begin, int end) {
                for (int i = begin; i < end; i++)
                    c_step(&envs[i]);
                write_masks(begin, end);
            });
            return;
        }
        for (int i = 0; i < n; i++)
            c_step(&envs[i]);
        write_masks(0, n);
    }

    // Means of every Log field over the episodes finished since the last call, plus their count
    // `n`; empty when none finished. Clears the logs.
    py::dict log() {
        check_open("log");
        const size_t fields = static_cast<size_t>(spec_->log_size);
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
            out[py::str(spec_->log_names[k])] = sums[k] / n;
        out["n"] = n;
        return out;
    }

    py::array_t<uint8_t> render(int index) {
        check_bound("render");
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

    // Everything needed to continue bit-exactly: a StateHeader, then per env its struct (row
    // and heap pointers zeroed), heap arrays and observation rows (puffer_state_save).
    py::array_t<uint8_t> save_state() {
        check_bound("save_state");
        const size_t total = state_size();
        py::array_t<uint8_t> out(static_cast<py::ssize_t>(total));
        uint8_t *at = out.mutable_data();
        StateHeader header = make_header(total);
        std::memcpy(at, &header, sizeof(header));
        at += sizeof(header);
        for (const Env &env : envs_) {
            const size_t obs_bytes = obs_row_bytes_ * env.num_agents;
            puffer_state_save(spec_, &env, obs_bytes, at);
            at += puffer_state_size(spec_, &env, obs_bytes);
        }
        return out;
    }

    void load_state(const py::array_t<uint8_t, py::array::c_style> &state) {
        check_bound("load_state");
        const size_t total = state_size();
        StateHeader want = make_header(total), got{};
        if (state.ndim() != 1 || static_cast<size_t>(state.size()) < sizeof(StateHeader)) {
            throw UsageError(name_ +
                             ": load_state() needs the 1-D uint8 array save_state() "
                             "returned; got " +
                             std::to_string(state.size()) + " bytes");
        }
        const uint8_t *at = state.data();
        std::memcpy(&got, at, sizeof(got));
        if (std::memcmp(got.magic, want.magic, sizeof(want.magic)) || got.version != want.version) {
            throw UsageError(name_ + ": load_state() got no Ocean state of format version " +
                             std::to_string(STATE_VERSION) + "; pass what save_state() returned");
        }
        if (std::strncmp(got.name, want.name, sizeof(want.name)) || got.num_envs != want.num_envs ||
            got.env_size != want.env_size || got.total != total ||
            static_cast<size_t>(state.size()) != total) {
            throw UsageError(name_ + ": load_state() got the state of '" +
                             std::string(got.name, strnlen(got.name, sizeof(got.name))) +
                             "' with num_envs=" + std::to_string(got.num_envs) + ", " +
                             std::to_string(state.size()) + " bytes; this env has num_envs=" +
                             std::to_string(envs_.size()) + " and needs " + std::to_string(total) +
                             " bytes; build the env with the same name, num_envs and config");
        }
        at += sizeof(StateHeader);
        // Check every env's config before changing any, so a refused state changes nothing.
        const uint8_t *scan = at;
        for (const Env &env : envs_) {
            check_same_config(&env, scan);
            scan += puffer_state_size(spec_, &env, obs_row_bytes_ * env.num_agents);
        }
        for (Env &env : envs_) {
            const size_t obs_bytes = obs_row_bytes_ * env.num_agents;
            puffer_state_load(spec_, &env, obs_bytes, at);
            at += puffer_state_size(spec_, &env, obs_bytes);
        }
        write_masks(0, static_cast<int>(envs_.size()));
    }

    size_t state_size() const {
        size_t total = sizeof(StateHeader);
        for (const Env &env : envs_)
            total += puffer_state_size(spec_, &env, obs_row_bytes_ * env.num_agents);
        return total;
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

    void check_bound(const char *call) const {
        check_open(call);
        if (arrays_.empty()) {
            throw UsageError(name_ + ": " + call + "() called before bind(); bind the arrays");
        }
    }

    // Columns of one action_masks row: one per action of every head.
    py::ssize_t mask_width() const {
        py::ssize_t width = 0;
        for (int k = 0; k < spec_->action_heads; k++)
            width += spec_->action_sizes[k];
        return width;
    }

    // The action_masks rows, checked like the other arrays; null for an env without masks,
    // which must then be given None.
    uint8_t *bind_masks(const py::object &action_masks) {
        if (!spec_->action_mask) {
            if (!action_masks.is_none()) {
                throw UsageError(name_ + ": got action_masks, but this env declares no legal-"
                                         "action masks (its SPEC has no action_mask); pass None");
            }
            return nullptr;
        }
        if (action_masks.is_none()) {
            throw UsageError(name_ +
                             ": this env writes legal-action masks; bind an "
                             "action_masks array (Buffer.allocate(..., action_masks=True))");
        }
        py::ssize_t width;
        uint8_t *legal =
            checked_rows<uint8_t>(name_, "action_masks", action_masks.cast<py::array>(),
                                  py::dtype("bool"), num_agents_, &width);
        if (width != mask_width()) {
            throw UsageError(name_ + ": action_masks rows hold " + std::to_string(width) +
                             " elements, expected " + std::to_string(mask_width()) +
                             " (one per action)");
        }
        env_masks_.clear();
        return legal;
    }

    // Writes the legal actions of envs [begin, end) from their state (SPEC.action_mask).
    void write_masks(int begin, int end) {
        if (!spec_->action_mask) return;
        for (int i = begin; i < end; i++)
            spec_->action_mask(&envs_[i], env_masks_[i]);
    }

    // Zeroes rewards and flags before a reset. Each c_step writes all three for every agent
    // (the sanitizer harness poisons them to check), so steps pay for no extra pass.
    void clear_outputs() {
        std::memset(rewards_, 0, sizeof(float) * num_agents_);
        std::memset(terminals_, 0, num_agents_);
        std::memset(truncations_, 0, num_agents_);
    }

    // One branch-free pass over every action (any_outside); the slow search for the first bad
    // one runs only when the pass found one.
    void check_actions() const {
        const py::ssize_t rows = num_agents_;
        if constexpr (std::is_same_v<Act, float>) {
            const py::ssize_t count = rows * spec_->action_dim;
            const float low = static_cast<float>(spec_->action_low);
            const float high = static_cast<float>(spec_->action_high);
            if (!any_outside(actions_, count, low, high)) return;
            for (py::ssize_t i = 0; i < count; i++) {
                if (!(actions_[i] >= low && actions_[i] <= high)) {
                    const char *what =
                        std::isfinite(actions_[i]) ? "outside" : "not finite, outside";
                    throw UsageError(name_ + ": action " + format_value(actions_[i]) + " at row " +
                                     std::to_string(i / spec_->action_dim) + " is " + what + " [" +
                                     format_value(low) + ", " + format_value(high) +
                                     "]; clip continuous actions to single_action_space in the "
                                     "policy (envs do not clip)");
                }
            }
        } else {
            const int heads = spec_->action_heads;
            const int *sizes = spec_->action_sizes;
            bool bad = false;
            if (heads == 1) {
                bad = any_outside(actions_, rows, sizes[0]);
            } else {
                for (py::ssize_t i = 0; i < rows; i++)
                    for (int k = 0; k < heads; k++)
                        bad |= static_cast<uint32_t>(actions_[i * heads + k]) >=
                               static_cast<uint32_t>(sizes[k]);
            }
            if (!bad) return;
            for (py::ssize_t i = 0; i < rows * heads; i++) {
                const int size = sizes[i % heads];
                if (actions_[i] < 0 || actions_[i] >= size) {
                    std::string head = heads > 1 ? " (head " + std::to_string(i % heads) + ")" : "";
                    throw UsageError(name_ + ": action " + std::to_string(actions_[i]) +
                                     " at row " + std::to_string(i / heads) + head +
                                     " is outside [0, " + std::to_string(size) +
                                     "); sample actions from env.single_action_space");
                }
            }
        }
    }

    StateHeader make_header(size_t total) const {
        StateHeader header{};
        std::memcpy(header.magic, STATE_MAGIC, sizeof(STATE_MAGIC));
        header.version = STATE_VERSION;
        header.num_envs = static_cast<uint32_t>(envs_.size());
        header.env_size = sizeof(Env);
        header.total = total;
        std::strncpy(header.name, name_.c_str(), sizeof(header.name) - 1);
        return header;
    }

    void check_same_config(const Env *env, const uint8_t *saved) const {
        for (const PufferField *f = spec_->config; f->name; f++) {
            const uint8_t *now = reinterpret_cast<const uint8_t *>(env) + f->offset;
            if (std::memcmp(now, saved + f->offset, 4) == 0) continue;
            double was = 0, is = 0;
            if (f->type == PUFFER_INT) {
                int a, b;
                std::memcpy(&a, saved + f->offset, 4);
                std::memcpy(&b, now, 4);
                was = a, is = b;
            } else {
                float a, b;
                std::memcpy(&a, saved + f->offset, 4);
                std::memcpy(&b, now, 4);
                was = a, is = b;
            }
            throw UsageError(name_ + ": load_state() got a state saved with " + f->name + "=" +
                             format_value(was) + ", this env has " + format_value(is) +
                             "; build the env with the config it was saved with");
        }
    }

    void configure(Env *env, const py::dict &config) {
        puffer_set_defaults(spec_, env);
        for (auto item : config) {
            std::string key = py::cast<std::string>(item.first);
            const PufferField *field = spec_->config;
            while (field->name && key != field->name)
                field++;
            if (!field->name) {
                std::string known;
                for (const PufferField *f = spec_->config; f->name; f++)
                    known += std::string(" ") + f->name;
                throw UsageError(name_ + ": unknown config field '" + key + "'; known:" + known);
            }
            const double value = py::cast<double>(item.second);
            if (!(value >= field->min && value <= field->max)) {
                throw UsageError(name_ + ": config " + key + "=" + format_value(value) +
                                 " is outside [" + format_value(field->min) + ", " +
                                 format_value(field->max) + "]; " + field->doc);
            }
            puffer_set_field(env, field, value);
        }
    }

    std::string name_;
    const PufferSpec *spec_;
    std::vector<Env> envs_;
    std::vector<py::array> arrays_;
    std::vector<uint8_t *> env_masks_; // each env's first action_masks row; empty: no masks
    std::unique_ptr<StepPool> pool_;   // threads_ - 1 helpers; null for one thread
    Act *actions_ = nullptr;           // all rows, for the action check
    float *rewards_ = nullptr;         // all rows, cleared before each step
    uint8_t *terminals_ = nullptr;
    uint8_t *truncations_ = nullptr;
    size_t obs_row_bytes_ = 0;
    py::ssize_t num_agents_ = 0;
    int threads_ = 1;
    bool initialized_ = false;
    bool closed_ = false;
};

// The envs in csrc/envs.h, in order; each header's PUFFER_ENV_END appends itself.
std::vector<std::function<void(py::module_ &)>> &registered() {
    static std::vector<std::function<void(py::module_ &)>> envs;
    return envs;
}

template <typename Env>
bool puffer_register(const char *name, const char *c_type, const char *header,
                     const PufferSpec *spec, const PufferKey *keys) {
    using Obs = typename VecEnv<Env>::Obs;
    using Act = typename VecEnv<Env>::Act;
    static_assert(std::is_same_v<Act, int32_t> || std::is_same_v<Act, float>,
                  "actions are int32 (discrete) or float (continuous)");
    registered().push_back([name, c_type, header, spec, keys](py::module_ &m) {
        if (spec->obs_dtype != dtype_code<Obs>() ||
            (spec->action_heads > 0) != std::is_same_v<Act, int32_t> ||
            spec->log_size != static_cast<int>(sizeof(Env::log) / sizeof(float))) {
            throw std::logic_error(std::string(name) + ": SPEC disagrees with the env struct");
        }
        using V = VecEnv<Env>;
        py::class_<V>(m, name)
            .def(py::init([name, spec](int num_envs, const py::dict &config, int num_threads) {
                     return new V(name, spec, num_envs, config, num_threads);
                 }),
                 py::arg("num_envs"), py::arg("config"), py::arg("num_threads") = 1)
            .def("bind", &V::bind, py::arg("observations"), py::arg("actions"), py::arg("rewards"),
                 py::arg("terminals"), py::arg("truncations"), py::arg("action_masks") = py::none())
            .def("reset", &V::reset, py::arg("seed"))
            .def("step", &V::step)
            .def("_step_unchecked", &V::step_unchecked)
            .def("log", &V::log)
            .def("render", &V::render, py::arg("index") = 0)
            .def("save_state", &V::save_state)
            .def("load_state", &V::load_state, py::arg("state"))
            .def("close", &V::close)
            .def_property("num_threads", &V::threads, &V::set_threads)
            .def_property_readonly("num_envs", &V::num_envs)
            .def_property_readonly("num_agents", &V::num_agents)
            .def_property_readonly("state_size", &V::state_size)
            .def_property_readonly("closed", &V::closed);
        m.attr("ENVS").cast<py::list>().append(name);
        py::dict info = spec_dict(*spec, c_type);
        info["header"] = header;
        info["keys"] = key_list(keys);
        m.attr("SPECS").cast<py::dict>()[name] = info;
    });
    return true;
}

} // namespace

// The SPECs leave zero fields out, as C zero-initializes them; so does C++, without warning.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#include "envs.h"
#pragma GCC diagnostic pop

#define PUFFER_STRINGIFY(x) #x
#define PUFFER_VERSION(x) PUFFER_STRINGIFY(x)

PYBIND11_MODULE(_ocean, m) {
    m.doc() = "Private: vectorized C Ocean envs. Use the classes in puffer.ocean instead.";
    m.attr("__version__") = PUFFER_VERSION(VERSION_INFO);
    m.attr("ENVS") = py::list();
    m.attr("SPECS") = py::dict();
    static py::handle usage_error =
        py::object(py::module_::import("puffer.core.errors").attr("APIUsageError")).release();
    py::register_exception_translator([](std::exception_ptr p) {
        try {
            if (p) std::rethrow_exception(p);
        } catch (const UsageError &e) {
            PyErr_SetString(usage_error.ptr(), e.what());
        }
    });
    for (auto &bind : registered())
        bind(m);
}
