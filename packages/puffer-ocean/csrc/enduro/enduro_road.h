/* Enduro's road and traffic: the road's edges on screen (perspective, curves, the roadside
 * wiggle), the player's lane, the curve schedule and enemy-car spawning. Included by enduro.h
 * inside its env block, after the Enduro struct; the numbers are in enduro.h's rules table. */
#ifndef PUFFER_ENDURO_ROAD_H
#define PUFFER_ENDURO_ROAD_H

/* Depth of screen row y below the horizon: 0 at the vanishing point, 1 at the road's bottom. */
static inline float ed_depth(float y) {
    return (y - ED_VP_Y) / ED_ROAD_DEPTH;
}

/* An enemy car's size on screen relative to the player's: 0.9 x depth, at least 0.1. */
static inline float ed_car_scale(float y) {
    const float s = 0.9f * ed_depth(y);
    return s > 0.1f ? s : 0.1f;
}

/* The inward bump of both road edges at row y while the wiggle passes it (trapezoid in
 * 15% / 72% / 13% of its length, smaller towards the horizon). */
static inline float ed_wiggle(const Enduro *e, float y) {
    if (y < e->wiggle_y || y > e->wiggle_y + ED_WIGGLE_LENGTH) return 0.0f;
    const float u = (y - e->wiggle_y) / ED_WIGGLE_LENGTH;
    float w = ED_WIGGLE_AMPLITUDE;
    if (u < 0.15f)
        w *= u / 0.15f;
    else if (u >= 0.87f)
        w *= (1.0f - u) / 0.13f;
    const float d = ed_depth(y), scale = 0.03f + d * d;
    return w * (scale > 0.3f ? 0.3f : scale);
}

/* The road's left and right edges at row y, both shifted right by `offset`: a straight line or,
 * while the road curves, a quadratic Bezier from the bottom (which follows the player) to the
 * vanishing point, bowed against the curve. */
static inline void ed_edges(const Enduro *e, float y, float offset, float *left, float *right) {
    const float t = (ED_BOTTOM - y) / ED_ROAD_DEPTH;
    const float top = e->vp_x + offset;
    const float bottoms[2] = {e->base_vp_x - ED_ROAD_LEFT + offset,
                              e->base_vp_x + ED_ROAD_RIGHT + offset};
    float x[2];
    for (int k = 0; k < 2; k++) {
        const float b = bottoms[k];
        if (fabsf(e->curve) < 0.01f) {
            x[k] = b + t * (top - b);
        } else {
            const float control = b + (top - b) * 0.5f - 30.0f * e->curve, s = 1.0f - t;
            x[k] = s * s * b + 2.0f * s * t * control + t * t * top;
        }
    }
    const float w = ed_wiggle(e, y);
    *left = x[0] + w;
    *right = x[1] - w;
}

/* Centre of `lane` (0 left .. 2 right) at row y. */
static inline float ed_lane_x(const Enduro *e, int lane, float y) {
    float left, right;
    ed_edges(e, y, 0.0f, &left, &right);
    return left + (right - left) / ED_LANES * ((float)lane + 0.5f);
}

/* The lane under the player's centre, measured on a road shifted by half the player's offset
 * from the start column; also stored in e->lane (the observation's same-lane flags read it). */
static inline int ed_player_lane(Enduro *e) {
    float left, right;
    ed_edges(e, e->y, (e->x - ED_START_X) * 0.5f, &left, &right);
    int lane = (int)((e->x + ED_CAR_W / 2 - left) / ((right - left) / ED_LANES));
    lane = lane < 0 ? 0 : (lane > 2 ? 2 : lane);
    e->lane = lane;
    return lane;
}

/* The lane farthest from the player: the other outer lane, or from the middle lane the outer
 * lane on the far side of the road's centre. */
static inline int ed_far_lane(Enduro *e) {
    const int lane = ed_player_lane(e);
    if (lane != 1) return 2 - lane;
    float left, right;
    ed_edges(e, e->y, 0.0f, &left, &right);
    return e->x + ED_CAR_W / 2 < (left + right) / 2 ? 2 : 0;
}

/* One curve direction of their schedule: the k-th (k < 3) of a chain of directions in {-1, 0,
 * 1} drawn uniformly, except that a curve never turns straight into the opposite curve. */
static inline int ed_curve_draw(uint64_t *rng, int k) {
    int d = rng_int(rng, 3) - 1;
    for (int i = 0; i < k; i++)
        d = d == 0 ? rng_int(rng, 3) - 1 : (rng_int(rng, 2) ? d : 0);
    return d;
}

static inline void ed_curve_switch(Enduro *e, int steps) {
    e->curve_target = (float)ed_curve_draw(&e->rng, e->curve_stage);
    e->curve_stage = (e->curve_stage + 1) % 3;
    e->curve_steps = steps;
}

/* The curve schedule, the curve's easing and the vanishing point's slide. Their schedule counts
 * two ticks a frame and, at each, ends the stage when the count reaches a threshold drawn
 * uniformly from [1500, 5300] afresh every frame; a threshold can only be reached from 1,500
 * ticks on, so the draw is skipped before (same distribution, fewer draws). */
static inline void ed_update_curve(Enduro *e) {
    e->curve_steps++;
    if (e->curve_steps + 1 >= ED_CURVE_TICKS_MIN) {
        const int threshold = ED_CURVE_TICKS_MIN + rng_int(&e->rng, ED_CURVE_TICKS_SPAN);
        if (e->curve_steps >= threshold)
            ed_curve_switch(e, 1);
        else if (++e->curve_steps >= threshold)
            ed_curve_switch(e, 0);
    } else {
        e->curve_steps++;
    }
    if (e->curve < e->curve_target)
        e->curve = ed_min(e->curve + ED_CURVE_EASE, e->curve_target);
    else if (e->curve > e->curve_target)
        e->curve = ed_max(e->curve - ED_CURVE_EASE, e->curve_target);
    e->curve_dir = fabsf(e->curve) < 0.1f ? 0 : (e->curve > 0 ? 1 : -1);
    /* The vanishing point slides 1.5 + 10 |speed| / 7.5 px a frame towards its target. */
    const float rate = 1.0f + 0.5f + fabsf(e->speed) / ED_MAX_SPEED * (ED_MAX_SPEED - ED_MIN_SPEED);
    const float target =
        ED_VP_LEFT - e->t_p * (ED_VP_LEFT - ED_VP_RIGHT) + (float)e->curve_dir * ED_CURVE_VP_SHIFT;
    if (e->vp_x < target)
        e->vp_x = ed_min(e->vp_x + rate, target);
    else if (e->vp_x > target)
        e->vp_x = ed_max(e->vp_x - rate, target);
}

/* Their add_enemy_car: picks its own lane (the far lane only while the player stands or
 * reverses; 60% of the time the last spawned lane), builds a car at the vanishing point and
 * refuses it if a car of that lane is closer than a random 0.5-6.5 car lengths (scaled at the
 * spawn row) or if two other lanes are busy within 6 car lengths. Returns the new car or NULL. */
static inline EdCar *ed_add_car(Enduro *e) {
    if (e->num_cars >= ED_MAX_CARS) return NULL;
    int lane = e->speed <= 0.0f ? ed_far_lane(e) : rng_int(&e->rng, ED_LANES);
    if (rng_int(&e->rng, 100) < 60 && e->last_lane != -1) lane = e->last_lane;
    e->last_lane = lane;
    EdCar car = {.y = e->speed > 0.0f ? ED_SPAWN_AHEAD_Y : ED_SPAWN_BEHIND_Y,
                 .last_y = ED_VP_Y,
                 .x = e->vp_x, /* the lane's x at the vanishing point, where all lanes meet */
                 .lane = lane,
                 .passed = 0,
                 .color = rng_int(&e->rng, 6)};
    const float scale = ed_max(0.1f, 0.9f * ed_depth(car.y) + 0.1f);
    const float spacing = (rng_float(&e->rng) * 6.0f + 0.5f) * ED_CAR_H * scale;
    int busy[ED_LANES] = {0, 0, 0};
    for (int i = 0; i < e->num_cars; i++) {
        const EdCar *c = &e->cars[i];
        const float gap = fabsf(c->y - car.y);
        if (c->lane == lane && gap < spacing) return NULL;
        if (gap < 6.0f * ED_CAR_H) busy[c->lane] = 1;
    }
    if (busy[0] + busy[1] + busy[2] >= ED_LANES - 1 && !busy[lane]) return NULL;
    e->cars[e->num_cars] = car;
    return &e->cars[e->num_cars++];
}

/* The spawn timer: every interval (0.5 s, shorter with speed from day 2) one car, or with
 * probability speed / max a clump of 1-2, each in a distinct random lane (which overrides the
 * lane add_car chose) and 3 car lengths above the one before. */
static inline void ed_spawn(Enduro *e) {
    const float speed_frac = ed_max(0.0f, ed_min(1.0f, (e->speed - ED_MIN_SPEED) / 10.0f));
    const int d = e->day - 1;
    float slow = ED_SPAWN_MAX_INTERVAL[d < 3 ? d : 2] - (d < 3 ? 0.0f : 0.1f * (float)(d - 2));
    slow = slow < 0.1f ? 0.1f : slow;
    const float fast = ED_SPAWN_MIN_INTERVAL > slow ? ED_SPAWN_MIN_INTERVAL : slow;
    const float interval = fast - speed_frac * (fast - slow) * 1.5f;
    e->spawn_timer += 1.0f / ED_FPS;
    if (e->spawn_timer < interval) return;
    e->spawn_timer -= interval;
    if (e->num_cars >= ED_MAX_CARS) return;
    int count = 1;
    if (rng_float(&e->rng) < speed_frac) count = 1 + rng_int(&e->rng, 2);
    int taken[ED_LANES] = {0, 0, 0};
    for (int i = 0; i < count && e->num_cars < ED_MAX_CARS; i++) {
        int lane = rng_int(&e->rng, ED_LANES - i); /* the k-th free lane */
        for (int l = 0; l < ED_LANES; l++) {
            if (taken[l]) continue;
            if (lane-- == 0) {
                lane = l;
                break;
            }
        }
        taken[lane] = 1;
        EdCar *car = ed_add_car(e);
        if (car) car->lane = lane, car->y -= (float)i * 3.0f * ED_CAR_H;
    }
}

#endif
