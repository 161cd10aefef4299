/* Enduro's picture through csrc/raster.h: the 152 x 210 screen at twice its size, sky and
 * roadside coloured by the time-of-day stage, the road drawn row by row between its edges, cars
 * as boxes scaled by depth (tail lights only at night, none beyond the fog), and a score panel.
 * Included by enduro.h inside its env block. */
#ifndef PUFFER_ENDURO_RENDER_H
#define PUFFER_ENDURO_RENDER_H

static const Color ED_SKY[ED_STAGES] = {
    {45, 50, 184},  {45, 50, 184},  {45, 50, 184},  {90, 90, 200}, {84, 92, 214}, {104, 72, 198},
    {124, 68, 188}, {148, 64, 160}, {168, 72, 120}, {180, 96, 80}, {160, 80, 60}, {100, 60, 80},
    {0, 0, 0},      {0, 0, 0},      {0, 0, 0},      {60, 60, 120}};
static const Color ED_GROUND[ED_STAGES] = {{0, 68, 0}, {0, 68, 0}, {0, 68, 0}, {214, 214, 214},
                                           {0, 68, 0}, {0, 60, 0}, {0, 56, 0}, {0, 52, 0},
                                           {0, 48, 0}, {0, 44, 0}, {0, 40, 0}, {0, 32, 0},
                                           {0, 0, 0},  {0, 0, 0},  {0, 0, 0},  {20, 40, 20}};
static const Color ED_CAR_COLORS[6] = {{66, 72, 200},   {200, 160, 40}, {200, 80, 160},
                                       {220, 120, 100}, {40, 160, 160}, {220, 220, 60}};
static const Color ED_FOG = {110, 110, 110};
static const Color ED_PLAYER = {200, 200, 255};

static void c_frame_size(const Enduro *env, int *width, int *height) {
    (void)env;
    *width = (int)ED_WIDTH * ED_SCALE;
    *height = 210 * ED_SCALE;
}

static void ed_render_road(const Enduro *e, Canvas *canvas, int night, float fog_y) {
    const int k = ED_SCALE;
    for (int row = (int)ED_VP_Y * k; row <= (int)ED_BOTTOM * k; row++) {
        const float y = (float)row / k;
        if (y < fog_y) {
            raster_rect(canvas, 0, row, canvas->width, 1, ED_FOG);
            continue;
        }
        float left, right;
        ed_edges(e, y, 0.0f, &left, &right);
        const uint8_t g = y < 91.0f ? 74 : (y < 106.0f ? 111 : 170);
        const Color road = night ? COLOR_BLACK : (Color){g, g, g};
        const Color edge = night ? COLOR_GRAY : COLOR_WHITE;
        const int l = (int)(left * k), r = (int)(right * k);
        raster_rect(canvas, l, row, r - l, 1, road);
        raster_rect(canvas, l, row, k, 1, edge);
        raster_rect(canvas, r - k, row, k, 1, edge);
    }
}

static void c_render(const Enduro *env, Canvas *canvas) {
    const Enduro *e = env;
    const int k = ED_SCALE, night = e->stage >= 12 && e->stage <= 14;
    const float fog_y = e->stage == 13 ? 92.0f : 0.0f;
    raster_clear(canvas, ED_GROUND[e->stage]);
    raster_rect(canvas, 0, 0, canvas->width, (int)ED_VP_Y * k, ED_SKY[e->stage]);
    ed_render_road(e, canvas, night, fog_y);
    for (int i = 0; i < e->num_cars; i++) {
        const EdCar *c = &e->cars[i];
        if (c->y < fog_y || c->lane < 0) continue;
        const float s = ed_car_scale(c->y), w = ED_CAR_W * s, h = ED_CAR_H * s;
        const int x = (int)((ed_lane_x(e, c->lane, c->y) - w / 2) * k);
        const int y = (int)((c->y - h / 2) * k), wk = (int)(w * k) + 1, hk = (int)(h * k) + 1;
        if (night) {
            raster_rect(canvas, x, y + hk - 2, 2, 2, COLOR_RED);
            raster_rect(canvas, x + wk - 2, y + hk - 2, 2, 2, COLOR_RED);
        } else {
            raster_rect(canvas, x, y, wk, hk, ED_CAR_COLORS[c->color]);
        }
    }
    const Color player = e->car_lock > 0 || e->edge_lock > 0 ? COLOR_ORANGE : ED_PLAYER;
    raster_rect(canvas, (int)(e->x * k), (int)(e->y * k), (int)ED_CAR_W * k, (int)ED_CAR_H * k,
                player);
    const int panel = ((int)ED_BOTTOM + 8) * k;
    raster_rect(canvas, 0, panel, canvas->width, 48 * k, COLOR_BACKGROUND);
    raster_number(canvas, 12 * k, panel + 4 * k, e->score, 3, COLOR_WHITE);
    raster_text(canvas, 12 * k, panel + 20 * k, "DAY", 3, COLOR_YELLOW);
    raster_number(canvas, 32 * k, panel + 20 * k, e->day, 3, COLOR_YELLOW);
    raster_text(canvas, 70 * k, panel + 20 * k, "CARS", 3, COLOR_GREEN);
    raster_number(canvas, 98 * k, panel + 20 * k, e->day_done ? 0 : e->quota, 3, COLOR_GREEN);
}

#endif
