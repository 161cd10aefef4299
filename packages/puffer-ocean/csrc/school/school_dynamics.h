/* School's world, included by school.h inside its namespace after the types and config: the
 * terrain height-map (simplex noise, built once per config), unit motion (ground units drive,
 * air units pitch and roll by quaternions) and the attack scan. The rules these implement are
 * in school.h's table; school.h keeps the state, observation, step order, render and spec. */
#ifndef PUFFER_SCHOOL_DYNAMICS_H
#define PUFFER_SCHOOL_DYNAMICS_H

/* Per-step scratch of the attack scan: positions and target classes as flat arrays, so the
 * scan over candidate targets vectorizes. */
typedef struct {
    float *x, *y, *z;
    int32_t *ground; /* 1 for infantry, tank, artillery */
} SchoolScan;

static SchoolScan school_scan(const School *env) {
    float *f = (float *)(env->unit + env->agents);
    const size_t n = (size_t)env->agents;
    SchoolScan s = {f, f + n, f + 2 * n, (int32_t *)(f + 3 * n)};
    return s;
}

static float *school_terrain(const School *env) {
    return (float *)(env->unit + env->agents) + 4 * (size_t)env->agents;
}

/* The fixed terrain: PufferLib's height-map, the same for every seed and run. */
static void school_build_terrain(School *env) {
    simplex_heightmap(school_terrain(env), env->terrain_w, env->terrain_h, 1.0f / 2048.0f, 8, 0.0f,
                      0.0f, 256.0f, 16.0f);
}

static float school_ground(const School *env, float x, float z) {
    int tx = (int)(SCHOOL_TEXELS * x + SCHOOL_TEXELS * env->size_x);
    int tz = (int)(SCHOOL_TEXELS * z + SCHOOL_TEXELS * env->size_z);
    tx = tx >= env->terrain_w ? env->terrain_w - 1 : tx;
    tz = tz >= env->terrain_h ? env->terrain_h - 1 : tz;
    const float height = school_terrain(env)[tz * env->terrain_w + tx];
    return (height - SCHOOL_TEXELS * env->size_y) / SCHOOL_TEXELS;
}

static int school_is_ground(int type) {
    return type == SCHOOL_INFANTRY || type == SCHOOL_TANK || type == SCHOOL_ARTILLERY;
}

static SchoolQuat school_qmul(SchoolQuat a, SchoolQuat b) {
    SchoolQuat q = {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                    a.x * b.w + a.w * b.x + a.y * b.z - a.z * b.y,
                    a.y * b.w + a.w * b.y + a.z * b.x - a.x * b.z,
                    a.z * b.w + a.w * b.z + a.x * b.y - a.y * b.x};
    return q;
}

static SchoolQuat school_qnorm(SchoolQuat q) {
    float len = sqrtf(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
    len = len == 0.0f ? 1.0f : len;
    SchoolQuat r = {q.w / len, q.x / len, q.y / len, q.z / len};
    return r;
}

static SchoolVec school_vnorm(SchoolVec v) {
    const float len = sqrtf(v.x * v.x + v.y * v.y + v.z * v.z);
    if (len > 0.0f) v.x /= len, v.y /= len, v.z /= len;
    return v;
}

/* Rotation by `angle` rad about `axis` (normalized here), as a unit quaternion. */
static SchoolQuat school_turn(SchoolVec axis, float angle) {
    SchoolQuat q = {1.0f, 0.0f, 0.0f, 0.0f};
    if (axis.x * axis.x + axis.y * axis.y + axis.z * axis.z == 0.0f) return q;
    axis = school_vnorm(axis);
    const float s = sinf(0.5f * angle);
    q.w = cosf(0.5f * angle), q.x = axis.x * s, q.y = axis.y * s, q.z = axis.z * s;
    return school_qnorm(q);
}

/* v rotated by q through q's rotation matrix (exact for unit q). */
static SchoolVec school_rotate(SchoolVec v, SchoolQuat q) {
    const float xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z, ww = q.w * q.w;
    SchoolVec r;
    r.x = v.x * (xx + ww - yy - zz) + v.y * (2 * q.x * q.y - 2 * q.w * q.z) +
          v.z * (2 * q.x * q.z + 2 * q.w * q.y);
    r.y = v.x * (2 * q.w * q.z + 2 * q.x * q.y) + v.y * (ww - xx + yy - zz) +
          v.z * (-2 * q.w * q.x + 2 * q.y * q.z);
    r.z = v.x * (-2 * q.w * q.y + 2 * q.x * q.z) + v.y * (2 * q.w * q.x + 2 * q.y * q.z) +
          v.z * (ww - xx - yy + zz);
    return r;
}

static void school_drive(const School *env, SchoolUnit *u, const float *act) {
    const SchoolVec up = {0.0f, 1.0f, 0.0f}, ahead = {0.0f, 0.0f, 1.0f};
    u->q = school_qmul(school_turn(up, -act[1] / 10.0f), u->q);
    const SchoolVec forward = school_vnorm(school_rotate(ahead, u->q));
    u->speed = u->max_speed * SCHOOL_MAX_SPEED;
    u->vx = u->speed * forward.x, u->vz = u->speed * forward.z;
    u->x = puffer_clip(u->x + u->vx, -env->size_x, env->size_x);
    u->z = puffer_clip(u->z + u->vz, -env->size_z, env->size_z);
    u->y = school_ground(env, u->x, u->z);
}

static void school_fly(const School *env, SchoolUnit *u, const float *act) {
    const SchoolVec ahead = {0.0f, 0.0f, 1.0f}, above = {0.0f, 1.0f, 0.0f};
    const SchoolQuat o = u->q;
    u->speed = u->max_speed * SCHOOL_MAX_SPEED;
    SchoolVec forward = school_vnorm(school_rotate(ahead, o));
    const SchoolVec up = school_vnorm(school_rotate(above, o));
    const SchoolVec cross = {forward.y * up.z - forward.z * up.y,
                             forward.z * up.x - forward.x * up.z,
                             forward.x * up.y - forward.y * up.x};
    const SchoolVec right = school_vnorm(cross);
    const SchoolQuat roll = school_turn(forward, u->max_turn * act[1] / 10.0f);
    const SchoolQuat pitch = school_turn(right, u->max_turn * act[0] / 10.0f);
    const SchoolQuat q = school_qnorm(school_qmul(roll, pitch));
    forward = school_vnorm(school_rotate(forward, q));
    u->q = school_qmul(q, o);
    /* The lift of the old up minus gravity's full speed: level flight keeps its height. */
    u->vx = u->speed * (forward.x + up.x);
    u->vy = u->speed * (forward.y + up.y - 1.0f);
    u->vz = u->speed * (forward.z + up.z);
    u->x = puffer_clip(u->x + u->vx, -env->size_x, env->size_x);
    u->y = puffer_clip(u->y + u->vy, -env->size_y, env->size_y);
    u->z = puffer_clip(u->z + u->vz, -env->size_z, env->size_z);
}

/* a . b > cos(30 deg) |a| |b| without roots: a . b > 0 and its square beats cos^2 |a|^2 |b|^2. */
static inline int32_t school_in_cone(float dot, float d2, float v2) {
    return (dot > 0.0f) & (dot * dot > SCHOOL_COS30 * SCHOOL_COS30 * d2 * v2);
}

enum { SCHOOL_CHUNK = 32 };

/* The first index in [from, to) the unit can hit, or -1. Each chunk of candidates is tested
 * branch-free (so it vectorizes), then searched for its first hit. */
static int school_first_hit(const SchoolScan *s, const SchoolUnit *u, int from, int to) {
    const float r2 = u->range * u->range, c2 = SCHOOL_COS30 * SCHOOL_COS30;
    const float vx = u->vx, vy = u->vy, vz = u->vz, x = u->x, y = u->y, z = u->z;
    const float v3 = vx * vx + vy * vy + vz * vz, v2 = vx * vx + vz * vz;
    int32_t hit[SCHOOL_CHUNK];
    for (int j0 = from; j0 < to; j0 += SCHOOL_CHUNK) {
        const int n = to - j0 < SCHOOL_CHUNK ? to - j0 : SCHOOL_CHUNK;
        const float *tx = s->x + j0, *ty = s->y + j0, *tz = s->z + j0;
        const int32_t *g = s->ground + j0;
        switch (u->type) {
        case SCHOOL_INFANTRY:
        case SCHOOL_TANK:
            for (int k = 0; k < n; k++) {
                const float dx = tx[k] - x, dz = tz[k] - z, d2 = dx * dx + dz * dz;
                hit[k] = g[k] & (d2 <= r2) & school_in_cone(dx * vx + dz * vz, d2, v2);
            }
            break;
        case SCHOOL_BOMBER:
            for (int k = 0; k < n; k++) {
                const float dx = tx[k] - x, dz = tz[k] - z;
                hit[k] = g[k] & (dx * dx + dz * dz <= r2);
            }
            break;
        case SCHOOL_ARTILLERY:
            for (int k = 0; k < n; k++) {
                const float dx = tx[k] - x, dy = ty[k] - y, dz = tz[k] - z, d2 = dx * dx + dz * dz;
                hit[k] = (1 - g[k]) & (d2 <= r2) & (d2 > 0.0f) & (dy > 0.0f) & (dy * dy > c2 * d2) &
                         (dy * dy <= d2);
            }
            break;
        default: /* drone, mothership, fighter */
            for (int k = 0; k < n; k++) {
                const float dx = tx[k] - x, dy = ty[k] - y, dz = tz[k] - z;
                const float d2 = dx * dx + dy * dy + dz * dz;
                hit[k] = (d2 <= r2) & school_in_cone(dx * vx + dy * vy + dz * vz, d2, v3);
            }
        }
        for (int k = 0; k < n; k++)
            if (hit[k]) return j0 + k;
    }
    return -1;
}

static void school_attack(School *env) {
    const SchoolScan s = school_scan(env);
    for (int j = 0; j < env->agents; j++) {
        const SchoolUnit *u = &env->unit[j];
        s.x[j] = u->x, s.y[j] = u->y, s.z[j] = u->z, s.ground[j] = school_is_ground(u->type);
    }
    const int per_army = env->agents / env->armies;
    for (int i = 0; i < env->agents; i++) {
        SchoolUnit *u = &env->unit[i];
        /* Armies hold contiguous indices: the candidates are everything before and after it. */
        const int own = u->army * per_army;
        int j = school_first_hit(&s, u, 0, own);
        if (j < 0) j = school_first_hit(&s, u, own + per_army, env->agents);
        if (j < 0) continue;
        u->target = j;
        env->rewards[i] += SCHOOL_HIT;
        u->episode_return += SCHOOL_HIT;
        env->unit[j].health -= u->damage;
    }
}

#endif
