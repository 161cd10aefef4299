// Stress check of csrc/pool.h, built by test_ocean_sanitize.py with ThreadSanitizer: many runs
// over helpers that are often asleep or late, each index must be visited exactly once per run.
// Prints "ok" and exits 0, or names the first bad index and exits 1.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "pool.h"

int main(int argc, char **argv) {
    const int runs = argc > 1 ? std::atoi(argv[1]) : 2000;
    const int n = 257; // not a multiple of the block or chunk sizes
    for (int helpers = 1; helpers <= 3; helpers++) {
        StepPool pool(helpers);
        std::vector<int> visits(n, 0);
        for (int run = 0; run < runs; run++) {
            pool.run(n, 7, [&visits](int begin, int end) {
                for (int i = begin; i < end; i++)
                    visits[i]++;
            });
            if (run % 97 == 0) std::this_thread::sleep_for(std::chrono::microseconds(80));
        }
        for (int i = 0; i < n; i++) {
            if (visits[i] != runs) {
                std::printf("helpers=%d index %d visited %d times, expected %d\n", helpers, i,
                            visits[i], runs);
                return 1;
            }
        }
    }
    std::printf("ok\n");
    return 0;
}
