// StepPool: runs a loop body over [0, n) on the calling thread plus helper threads.
//
// Why not OpenMP: an OpenMP loop ends in a barrier that waits for every thread, so on an
// oversubscribed machine (2 shared cores, many processes) each step waits for a helper to be
// scheduled; two threads measured 10-50x slower than one. Here the caller waits only for work
// a helper actually took, so a helper that is not running costs the speedup, never a stall.
//
// [0, n) is split into one block per thread. Each thread first claims chunks of its own block,
// so the same envs stay on the same core from step to step (their rows stay in its cache),
// then steals chunks from the other blocks. Each block has a ticket = generation << 32 | next
// index, claimed by compare-exchange; a helper announces itself in `busy_` before claiming, and
// a late helper finds spent or newer tickets and claims nothing. The caller returns once every
// chunk is claimed and `busy_` is 0, so the body and range stay valid while any helper runs.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

class StepPool {
  public:
    using Body = std::function<void(int begin, int end)>;

    explicit StepPool(int helpers) : blocks_(new Block[helpers + 1]), num_blocks_(helpers + 1) {
        for (int i = 0; i < helpers; i++)
            threads_.emplace_back([this, i] { helper(i + 1); });
    }

    ~StepPool() {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stop_.store(true);
        }
        wake_.notify_all();
        for (std::thread &thread : threads_)
            thread.join();
    }

    StepPool(const StepPool &) = delete;
    StepPool &operator=(const StepPool &) = delete;

    // Calls body(begin, end) over chunks covering [0, n); returns when all have run. n must be
    // the same on every call: a late helper may compare a spent ticket with a new block end.
    void run(int n, int chunk, const Body &body) {
        if (n_ >= 0 && n != n_) throw std::invalid_argument("StepPool::run: n changed");
        n_ = n;
        body_.store(&body, std::memory_order_relaxed);
        chunk_.store(chunk, std::memory_order_relaxed);
        const uint64_t generation = generation_.load(std::memory_order_relaxed) + 1;
        for (int b = 0; b < num_blocks_; b++) {
            Block &block = blocks_[b];
            block.end.store(static_cast<int>(static_cast<int64_t>(n) * (b + 1) / num_blocks_),
                            std::memory_order_relaxed);
            const int begin = static_cast<int>(static_cast<int64_t>(n) * b / num_blocks_);
            block.ticket.store(generation << 32 | static_cast<uint32_t>(begin));
        }
        {
            std::lock_guard<std::mutex> lock(mutex_);
            generation_.store(generation);
        }
        wake_.notify_all();
        work(generation, 0);
        while (busy_.load() != 0)
            std::this_thread::yield();
    }

  private:
    struct alignas(64) Block { // one cache line each: threads claim from them concurrently
        std::atomic<uint64_t> ticket{0};
        std::atomic<int> end{0};
    };

    // Runs chunks of `generation`: block `self` first, then the others. The tickets' ordering
    // publishes body_, chunk_ and the ends, so relaxed loads suffice after them.
    void work(uint64_t generation, int self) {
        for (int k = 0; k < num_blocks_; k++) {
            Block &block = blocks_[(self + k) % num_blocks_];
            uint64_t ticket = block.ticket.load();
            for (;;) {
                if ((ticket >> 32) != generation) break;
                const int begin = static_cast<int>(ticket & 0xFFFFFFFFu);
                const int end = block.end.load(std::memory_order_relaxed);
                if (begin >= end) break;
                const int chunk = chunk_.load(std::memory_order_relaxed);
                const int stop = begin + chunk < end ? begin + chunk : end;
                if (block.ticket.compare_exchange_weak(ticket, generation << 32 | stop)) {
                    (*body_.load(std::memory_order_relaxed))(begin, stop);
                    ticket = block.ticket.load();
                }
            }
        }
    }

    void helper(int self) {
        // Spin this long for the next step before sleeping: in a rollout loop steps come every
        // few microseconds, and a futex wake-up costs more than that.
        constexpr auto SPIN = std::chrono::microseconds(50);
        uint64_t seen = 0;
        for (;;) {
            const auto start = std::chrono::steady_clock::now();
            while (generation_.load(std::memory_order_acquire) == seen && !stop_.load() &&
                   std::chrono::steady_clock::now() - start < SPIN) {
                std::this_thread::yield(); // gives the core back if the caller shares it
            }
            if (generation_.load(std::memory_order_acquire) == seen) {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return stop_.load() || generation_.load() != seen; });
            }
            if (stop_.load()) return;
            seen = generation_.load();
            busy_.fetch_add(1);
            work(seen, self);
            busy_.fetch_sub(1);
        }
    }

    std::unique_ptr<Block[]> blocks_;
    const int num_blocks_;
    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::atomic<bool> stop_{false};
    alignas(64) std::atomic<uint64_t> generation_{0};
    alignas(64) std::atomic<int> busy_{0};
    std::atomic<const Body *> body_{nullptr};
    std::atomic<int> chunk_{1};
    int n_ = -1; // the caller's thread only
};
