// StepPool: runs a loop body over [0, n) on the calling thread plus helper threads.
//
// Why not OpenMP: an OpenMP parallel loop ends in a barrier that waits for every thread, so on
// an oversubscribed machine (2 shared cores, many processes) each step waits for a helper to be
// scheduled, and two threads measured 10-50x slower than one. Here chunks are claimed from one
// atomic ticket; the caller claims too and waits only for helpers that actually claimed a chunk,
// so a helper that is not running costs the speedup, never a stall.
//
// Ticket = generation << 32 | next index. A helper joins a run by announcing itself in `busy_`
// and then claiming with compare-exchange on a ticket of the generation it woke for; a late
// helper finds a spent or newer ticket and claims nothing. The caller returns once every chunk
// is claimed and `busy_` is 0, so the body and range stay valid while any helper uses them.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

class StepPool {
  public:
    using Body = std::function<void(int begin, int end)>;

    explicit StepPool(int helpers) {
        for (int i = 0; i < helpers; i++)
            threads_.emplace_back([this] { helper(); });
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

    // Calls body(begin, end) over chunks covering [0, n); returns when all have run.
    void run(int n, int chunk, const Body &body) {
        body_.store(&body, std::memory_order_relaxed);
        n_.store(n, std::memory_order_relaxed);
        chunk_.store(chunk, std::memory_order_relaxed);
        const uint64_t generation = generation_.load(std::memory_order_relaxed) + 1;
        ticket_.store(generation << 32, std::memory_order_seq_cst);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            generation_.store(generation, std::memory_order_seq_cst);
        }
        wake_.notify_all();
        work(generation);
        while (busy_.load(std::memory_order_seq_cst) != 0)
            std::this_thread::yield();
    }

  private:
    // Claims and runs chunks of `generation` until none is left.
    // The ticket's ordering publishes body_, n_ and chunk_; relaxed loads suffice after it.
    void work(uint64_t generation) {
        uint64_t ticket = ticket_.load(std::memory_order_seq_cst);
        for (;;) {
            if ((ticket >> 32) != generation) return;
            const int begin = static_cast<int>(ticket & 0xFFFFFFFFu);
            const int n = n_.load(std::memory_order_relaxed);
            if (begin >= n) return;
            const int chunk = chunk_.load(std::memory_order_relaxed);
            const int end = begin + chunk < n ? begin + chunk : n;
            const uint64_t claimed = (generation << 32) | static_cast<uint32_t>(end);
            if (ticket_.compare_exchange_weak(ticket, claimed, std::memory_order_seq_cst)) {
                (*body_.load(std::memory_order_relaxed))(begin, end);
                ticket = ticket_.load(std::memory_order_seq_cst);
            }
        }
    }

    void helper() {
        // Spin this long for the next step before sleeping: steps come every few microseconds
        // in a training loop, and a futex wake-up costs more than that.
        constexpr auto SPIN = std::chrono::microseconds(50);
        uint64_t seen = 0;
        for (;;) {
            auto start = std::chrono::steady_clock::now();
            while (generation_.load(std::memory_order_acquire) == seen && !stop_.load() &&
                   std::chrono::steady_clock::now() - start < SPIN) {
            }
            if (generation_.load(std::memory_order_acquire) == seen) {
                std::unique_lock<std::mutex> lock(mutex_);
                wake_.wait(lock, [&] { return stop_ || generation_.load() != seen; });
            }
            if (stop_.load()) return;
            seen = generation_.load(std::memory_order_acquire);
            busy_.fetch_add(1, std::memory_order_seq_cst);
            work(seen);
            busy_.fetch_sub(1, std::memory_order_seq_cst);
        }
    }

    std::vector<std::thread> threads_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::atomic<bool> stop_{false};
    std::atomic<uint64_t> generation_{0};
    std::atomic<uint64_t> ticket_{0};
    std::atomic<int> busy_{0};
    std::atomic<const Body *> body_{nullptr};
    std::atomic<int> n_{0};
    std::atomic<int> chunk_{1};
};
