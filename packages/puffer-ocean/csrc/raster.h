/* A tiny software rasterizer: rects, circles and 3x5 text glyphs into a caller-owned RGB frame.
 *
 * Every Ocean env renders through this header, so frames need no window library and nothing is
 * downloaded at build time. The canvas is row-major RGB uint8 (height, width, 3); all drawing
 * is clipped to it, so callers may draw partly off-screen.
 */
#ifndef PUFFER_RASTER_H
#define PUFFER_RASTER_H

#include <stdint.h>

typedef struct {
    uint8_t *pixels; /* height * width * 3 bytes, owned by the caller */
    int width;
    int height;
} Canvas;

typedef struct {
    uint8_t r, g, b;
} Color;

static const Color COLOR_BLACK = {0, 0, 0};
static const Color COLOR_WHITE = {255, 255, 255};
static const Color COLOR_BACKGROUND = {6, 24, 24};
static const Color COLOR_GRID = {20, 50, 50};
static const Color COLOR_RED = {187, 0, 0};
static const Color COLOR_GREEN = {0, 187, 0};
static const Color COLOR_BLUE = {0, 120, 220};
static const Color COLOR_YELLOW = {230, 200, 0};
static const Color COLOR_CYAN = {0, 187, 187};
static const Color COLOR_MAGENTA = {187, 0, 187};
static const Color COLOR_ORANGE = {230, 120, 0};
static const Color COLOR_GRAY = {128, 128, 128};

static inline void raster_pixel(Canvas *c, int x, int y, Color color) {
    if (x < 0 || y < 0 || x >= c->width || y >= c->height) return;
    uint8_t *p = c->pixels + 3 * ((int64_t)y * c->width + x);
    p[0] = color.r;
    p[1] = color.g;
    p[2] = color.b;
}

/* Axis-aligned rectangle with top-left corner (x, y), clipped to the canvas. */
static inline void raster_rect(Canvas *c, int x, int y, int w, int h, Color color) {
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > c->width ? c->width : x + w;
    int y1 = y + h > c->height ? c->height : y + h;
    for (int row = y0; row < y1; row++) {
        uint8_t *p = c->pixels + 3 * ((int64_t)row * c->width + x0);
        for (int col = x0; col < x1; col++, p += 3) {
            p[0] = color.r;
            p[1] = color.g;
            p[2] = color.b;
        }
    }
}

static inline void raster_clear(Canvas *c, Color color) {
    raster_rect(c, 0, 0, c->width, c->height, color);
}

/* Filled circle centred on (cx, cy) with radius r pixels. */
static inline void raster_circle(Canvas *c, int cx, int cy, int r, Color color) {
    for (int dy = -r; dy <= r; dy++) {
        for (int dx = -r; dx <= r; dx++) {
            if (dx * dx + dy * dy <= r * r) raster_pixel(c, cx + dx, cy + dy, color);
        }
    }
}

/* 3x5 glyphs, one octal digit per row (top first), most significant bit on the left. */
static inline int raster_glyph(char ch) {
    static const int DIGITS[10] = {075557, 026227, 071747, 071717, 055711,
                                   074717, 074757, 071111, 075757, 075717};
    static const int LETTERS[26] = {025755, 065656, 034443, 065556, 074647, 074644, 034553,
                                    055755, 072227, 011152, 055655, 044447, 057755, 065555,
                                    025552, 065644, 025563, 065655, 034216, 072222, 055557,
                                    055552, 055775, 055255, 055222, 071247};
    if (ch >= '0' && ch <= '9') return DIGITS[ch - '0'];
    if (ch >= 'a' && ch <= 'z') ch = (char)(ch - 'a' + 'A');
    if (ch >= 'A' && ch <= 'Z') return LETTERS[ch - 'A'];
    if (ch == ':') return 002020;
    if (ch == '-') return 000700;
    return 0; /* space and anything unknown */
}

/* Text with its top-left corner at (x, y); each glyph pixel is a scale x scale block. */
static inline void raster_text(Canvas *c, int x, int y, const char *text, int scale, Color color) {
    for (; *text; text++, x += 4 * scale) {
        int glyph = raster_glyph(*text);
        for (int row = 0; row < 5; row++) {
            int bits = (glyph >> (3 * (4 - row))) & 7;
            for (int col = 0; col < 3; col++) {
                if (bits & (4 >> col)) {
                    raster_rect(c, x + col * scale, y + row * scale, scale, scale, color);
                }
            }
        }
    }
}

/* Non-negative integer as decimal text. */
static inline void raster_number(Canvas *c, int x, int y, int value, int scale, Color color) {
    char text[12];
    int len = 0;
    char digits[12];
    if (value < 0) value = 0;
    do {
        digits[len++] = (char)('0' + value % 10);
        value /= 10;
    } while (value > 0 && len < 11);
    for (int i = 0; i < len; i++)
        text[i] = digits[len - 1 - i];
    text[len] = '\0';
    raster_text(c, x, y, text, scale, color);
}

#endif
