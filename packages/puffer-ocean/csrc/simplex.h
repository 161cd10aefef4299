/* 2D simplex noise (Perlin 2001, in Gustavson's formulation) and the octave sum PufferLib 3.0
 * builds its height-maps from, so that school's fixed terrain and terraform's random ones are
 * the same maps as theirs, not merely noise of the same octaves.
 *
 * The lattice hash is Ken Perlin's reference permutation and the gradients are the 12 cube-edge
 * directions projected to the plane, so the noise is a fixed function of (x, y): PufferLib's
 * (their simplex.h, from Casey Duncan's `noise` library) computes the same function.
 */
#ifndef PUFFER_SIMPLEX_H
#define PUFFER_SIMPLEX_H

#include <float.h>
#include <math.h>
#include <stdint.h>

static const uint8_t SIMPLEX_PERM[256] = {
    151, 160, 137, 91,  90,  15,  131, 13,  201, 95,  96,  53,  194, 233, 7,   225, 140, 36,  103,
    30,  69,  142, 8,   99,  37,  240, 21,  10,  23,  190, 6,   148, 247, 120, 234, 75,  0,   26,
    197, 62,  94,  252, 219, 203, 117, 35,  11,  32,  57,  177, 33,  88,  237, 149, 56,  87,  174,
    20,  125, 136, 171, 168, 68,  175, 74,  165, 71,  134, 139, 48,  27,  166, 77,  146, 158, 231,
    83,  111, 229, 122, 60,  211, 133, 230, 220, 105, 92,  41,  55,  46,  245, 40,  244, 102, 143,
    54,  65,  25,  63,  161, 1,   216, 80,  73,  209, 76,  132, 187, 208, 89,  18,  169, 200, 196,
    135, 130, 116, 188, 159, 86,  164, 100, 109, 198, 173, 186, 3,   64,  52,  217, 226, 250, 124,
    123, 5,   202, 38,  147, 118, 126, 255, 82,  85,  212, 207, 206, 59,  227, 47,  16,  58,  17,
    182, 189, 28,  42,  223, 183, 170, 213, 119, 248, 152, 2,   44,  154, 163, 70,  221, 153, 101,
    155, 167, 43,  172, 9,   129, 22,  39,  253, 19,  98,  108, 110, 79,  113, 224, 232, 178, 185,
    112, 104, 218, 246, 97,  228, 251, 34,  242, 193, 238, 210, 144, 12,  191, 179, 162, 241, 81,
    51,  145, 235, 249, 14,  239, 107, 49,  192, 214, 31,  181, 199, 106, 157, 184, 84,  204, 176,
    115, 121, 50,  45,  127, 4,   150, 254, 138, 236, 205, 93,  222, 114, 67,  29,  24,  72,  243,
    141, 128, 195, 78,  66,  215, 61,  156, 180};

/* Gradient g of the 12: (x, y) of the cube edges (+-1, +-1, 0), (+-1, 0, +-1), (0, +-1, +-1). */
static const float SIMPLEX_GX[12] = {1, -1, 1, -1, 1, -1, 1, -1, 0, 0, 0, 0};
static const float SIMPLEX_GY[12] = {1, 1, -1, -1, 0, 0, 0, 0, 1, -1, 1, -1};

/* Skew (sqrt 3 - 1) / 2 maps the triangle lattice onto the square one; unskew (3 - sqrt 3) / 6
 * maps back. */
static const float SIMPLEX_F2 = 0.3660254037844386f, SIMPLEX_G2 = 0.21132486540518713f;

static inline int simplex_hash(int i, int j) {
    return SIMPLEX_PERM[(i + SIMPLEX_PERM[j & 255]) & 255] % 12;
}

/* Noise at (x, y), in about [-1, 1]. */
static inline float simplex2(float x, float y) {
    const float s = (x + y) * SIMPLEX_F2;
    const float i = floorf(x + s), j = floorf(y + s);
    const float t = (i + j) * SIMPLEX_G2;
    const float x0 = x - (i - t), y0 = y - (j - t);
    const int i1 = x0 > y0, j1 = !i1; /* which triangle of the skewed cell holds the point */
    const float cx[3] = {x0, x0 - (float)i1 + SIMPLEX_G2, x0 + 2.0f * SIMPLEX_G2 - 1.0f};
    const float cy[3] = {y0, y0 - (float)j1 + SIMPLEX_G2, y0 + 2.0f * SIMPLEX_G2 - 1.0f};
    const int ii = (int)i & 255, jj = (int)j & 255;
    const int g[3] = {simplex_hash(ii, jj), simplex_hash(ii + i1, jj + j1),
                      simplex_hash(ii + 1, jj + 1)};
    float sum = 0.0f;
    for (int k = 0; k < 3; k++) {
        const float f = 0.5f - cx[k] * cx[k] - cy[k] * cy[k];
        if (f > 0.0f) sum += f * f * f * f * (SIMPLEX_GX[g[k]] * cx[k] + SIMPLEX_GY[g[k]] * cy[k]);
    }
    return 70.0f * sum;
}

/* The (width, height) row-major map of `octaves` octaves of noise, octave o sampled at
 * base_frequency * 2^o cycles per cell from the offset and weighted 2^-o, then stretched to
 * [0, scale]; cells below `floor` read 0 and the rest lose `floor`. */
static inline void simplex_heightmap(float *map, int width, int height, float base_frequency,
                                     int octaves, float offset_x, float offset_y, float scale,
                                     float floor) {
    float low = FLT_MAX, high = -FLT_MAX;
    for (int r = 0; r < height; r++) {
        for (int c = 0; c < width; c++) {
            float sum = 0.0f, frequency = base_frequency, weight = 1.0f;
            for (int o = 0; o < octaves; o++, frequency *= 2.0f, weight *= 0.5f)
                sum += weight *
                       simplex2(frequency * (float)c + offset_x, frequency * (float)r + offset_y);
            map[r * width + c] = sum;
            low = sum < low ? sum : low;
            high = sum > high ? sum : high;
        }
    }
    const float stretch = high > low ? scale / (high - low) : 0.0f;
    for (int i = 0; i < width * height; i++) {
        const float h = stretch * (map[i] - low);
        map[i] = h < floor ? 0.0f : h - floor;
    }
}

#endif
