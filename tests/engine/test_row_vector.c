/* Rows in vectors (engine/codegen/row_vector.c): a struct_for body run for the 8 cells of a
 * leaf row at once. Values as a C loop computes them, bit for bit: a red-black stencil with
 * neighbours in blocks that are inactive (the background), the same on fields interleaved in
 * one tree (cells 12 bytes apart: the lanes path at run time), and a body with locals set
 * under if/else, casts, lerp's fma, vec3 reads and writes and a store under a mask; and the
 * vector code really made (and not with PLUME_ROWVEC=0). */
#include "engine_test.h"
#include "checker.h"

#include "engine/listing.h"

#include <math.h>
#include <stdint.h>

static eng_context *ctx;

static char *listing(const char *src, const char *kernel);

static const char *rb_src =
    "kernel rb(field<f32> dom, field<f32> r, field<f32> z, i32 color) {\n"
    "    for (I in dom) {\n"
    "        f32 d = dom[I];\n"
    "        if (d > -1.0 && ((I.x + I.y + I.z) & 1) == color) {\n"
    "            f32 s = z[I + ivec3(1, 0, 0)] + z[I - ivec3(1, 0, 0)] + z[I + ivec3(0, 1, 0)]\n"
    "                  + z[I - ivec3(0, 1, 0)] + z[I + ivec3(0, 0, 1)] + z[I - ivec3(0, 0, 1)];\n"
    "            z[I] = (r[I] + s) / (d + 8.0);\n"
    "        }\n"
    "    }\n"
    "}\n";

/* One colour's sweep: the other colour's cells (the neighbours) are not written in it, so
 * the C loop's order does not matter. */
static void check_rb(eng_field *dom, eng_field *r, eng_field *z, const char *what)
{
    eng_program *p = et_compile(ctx, rb_src);
    eng_arg args[4] = {et_f(dom), et_f(r), et_f(z), et_s(1)};
    if (et_run(ctx, p, "rb", args, 4))
        return;
    int bad = 0, changed = 0;
    FOR_ACTIVE(x, y, z0) {
        float d = pat(9, x, y, z0), want = pat(2, x, y, z0);
        if (d > -1.0f && ((x + y + z0) & 1) == 1) {
            float s = at_bg(2, x + 1, y, z0, 0.5f) + at_bg(2, x - 1, y, z0, 0.5f) +
                      at_bg(2, x, y + 1, z0, 0.5f) + at_bg(2, x, y - 1, z0, 0.5f) +
                      at_bg(2, x, y, z0 + 1, 0.5f) + at_bg(2, x, y, z0 - 1, 0.5f);
            want = (pat(1, x, y, z0) + s) / (d + 8.0f);
            changed++;
        }
        float got = et_at(z, x, y, z0, 0);
        if (got != want && bad++ < 5)
            fprintf(stderr, "%s (%d,%d,%d): %.9g, expected %.9g\n", what, x, y, z0, got, want);
    }
    CHECK(bad == 0);
    CHECK(changed > 1000); /* the test reaches both branches */
}

static void test_red_black(void)
{
    eng_field *dom = et_field(ctx, "rb_dom", 3, ENG_F32, 0.0f);
    eng_field *r = et_field(ctx, "rb_r", 3, ENG_F32, 0.0f);
    eng_field *z = et_field(ctx, "rb_z", 3, ENG_F32, 0.5f);
    checker_fill(ctx, dom, 9, 1);
    checker_fill(ctx, r, 1, 1);
    checker_fill(ctx, z, 2, 1);
    check_rb(dom, r, z, "red-black");
}

/* The same fields interleaved per voxel in one tree: no vector load can take a row. */
static void test_red_black_interleaved(void)
{
    eng_field_desc d[3] = {et_desc("ri_dom", ENG_F32, "", 0.5, 0.0f),
                           et_desc("ri_r", ENG_F32, "", 0.5, 0.0f),
                           et_desc("ri_z", ENG_F32, "", 0.5, 0.5f)};
    eng_field *f[3] = {NULL, NULL, NULL};
    CHECK_OK(ctx, eng_field_declare_interleaved(ctx, d, 3, f));
    if (!f[0])
        return;
    checker_fill(ctx, f[0], 9, 1);
    checker_fill(ctx, f[1], 1, 1);
    checker_fill(ctx, f[2], 2, 1);
    check_rb(f[0], f[1], f[2], "red-black, interleaved");
}

static const char *mix_src =
    "kernel mix(field<f32> dom, field<f32> a, field<vec3> v, field<vec3> o, field<f32> q,\n"
    "           field<vec3> o2, f32 t) {\n"
    "    for (I in dom) {\n"
    "        f32 x = a[I];\n"
    "        f32 y = 0.0;\n"
    "        if (x > 0.0) {\n"
    "            y = lerp(x, a[I + ivec3(0, 0, 1)], t);\n"
    "        } else {\n"
    "            i32 k = i32(floor(x * 3.0));\n"
    "            y = f32(k) + min(x, a[I - ivec3(0, 0, 1)]);\n"
    "        }\n"
    "        vec3 w = v[I + ivec3(0, 0, 1)];\n"
    "        o[I] = vec3(w.x * y, max(w.y, y), w.z - y);\n"
    "        if (y < 0.5) {\n"
    "            q[I] = y * 2.0;\n"
    "        }\n"
    "        vec3 u = v[I + ivec3(1, 0, 0)];\n"
    "        if (x > 0.5) {\n"
    "            o2[I] = u * 2.0 - vec3(y);\n"
    "        }\n"
    "    }\n"
    "}\n";

static void test_mixed_body(void)
{
    eng_field *dom = et_field(ctx, "m_dom", 3, ENG_F32, 0.0f);
    eng_field *a = et_field(ctx, "m_a", 3, ENG_F32, 0.25f);
    eng_field *v = et_field(ctx, "m_v", 3, ENG_VEC3, 0.5f);
    eng_field *o = et_field(ctx, "m_o", 3, ENG_VEC3, 0.0f);
    eng_field *q = et_field(ctx, "m_q", 3, ENG_F32, 0.0f);
    checker_fill(ctx, dom, 9, 1);
    checker_fill(ctx, a, 3, 1);
    checker_fill(ctx, v, 4, 3);
    checker_fill(ctx, q, 7, 1);
    eng_field *o2 = et_field(ctx, "m_o2", 3, ENG_VEC3, 0.0f);
    checker_fill(ctx, o2, 12, 3);
    eng_program *p = et_compile(ctx, mix_src);
    eng_arg args[7] = {et_f(dom), et_f(a), et_f(v), et_f(o), et_f(q), et_f(o2), et_s(0.375)};
    if (et_run(ctx, p, "mix", args, 7))
        return;
    int bad = 0, both[2] = {0, 0};
    FOR_ACTIVE(x, y0, z) {
        float xa = pat(3, x, y0, z), y;
        if (xa > 0.0f) {
            y = fmaf(at_bg(3, x, y0, z + 1, 0.25f) - xa, 0.375f, xa);
            both[0]++;
        } else {
            int32_t k = (int32_t)floorf(xa * 3.0f);
            y = (float)k + fminf(xa, at_bg(3, x, y0, z - 1, 0.25f));
            both[1]++;
        }
        float w[3];
        for (int c = 0; c < 3; c++)
            w[c] = at_bg(4 + c, x, y0, z + 1, 0.5f);
        float want[4] = {w[0] * y, fmaxf(w[1], y), w[2] - y, y < 0.5f ? y * 2.0f : pat(7, x, y0, z)};
        float got[4] = {et_at(o, x, y0, z, 0), et_at(o, x, y0, z, 1), et_at(o, x, y0, z, 2),
                        et_at(q, x, y0, z, 0)};
        for (int c = 0; c < 4; c++)
            if (got[c] != want[c] && bad++ < 5)
                fprintf(stderr, "mix (%d,%d,%d) value %d: %.9g, expected %.9g\n", x, y0, z, c,
                        got[c], want[c]);
        /* o2: u (the +x neighbour, in an inactive block past x = 7, 15, ...) where x > 0.5 */
        for (int c = 0; c < 3; c++) {
            float u = at_bg(4 + c, x + 1, y0, z, 0.5f);
            float w2 = xa > 0.5f ? u * 2.0f - y : pat(12 + c, x, y0, z);
            float g2 = et_at(o2, x, y0, z, c);
            if (g2 != w2 && bad++ < 5)
                fprintf(stderr, "mix (%d,%d,%d) o2.%d: %.9g, expected %.9g\n", x, y0, z, c, g2, w2);
        }
    }
    CHECK(bad == 0);
    CHECK(both[0] > 1000 && both[1] > 1000);
}

/* x[I] += v through an activating pointer, into a field whose leaf keeps activity per voxel
 * (bitmasked): only the voxels whose lane takes the branch become active, as one cell at a
 * time would have it (the load of x must not activate the row's other cells). */
static void test_bitmasked_activation(void)
{
    char layout[128], rest[64];
    snprintf(layout, sizeof layout, "%s", eng_default_layout(3));
    char *leaf = strstr(layout, "dense(");
    CHECK(leaf != NULL);
    if (!leaf)
        return;
    snprintf(rest, sizeof rest, "%s", leaf + 5);
    snprintf(leaf, sizeof layout - (size_t)(leaf - layout), "bitmasked%s", rest);
    eng_field *dom = et_field(ctx, "b_dom", 3, ENG_F32, 0.0f);
    eng_field *x = et_field_layout(ctx, "b_x", layout, ENG_F32, 0.0f);
    checker_fill(ctx, dom, 9, 1);
    eng_program *p = et_compile(ctx,
        "kernel bump(field<f32> dom, field<f32> x) {\n"
        "    for (I in dom) { if (dom[I] > 1.5) { x[I] += 1.0; } }\n"
        "}\n");
    eng_arg args[2] = {et_f(dom), et_f(x)};
    if (et_run(ctx, p, "bump", args, 2))
        return;
    uint64_t want = 0;
    int bad = 0;
    FOR_ACTIVE(i, j, k) {
        int hit = pat(9, i, j, k) > 1.5f;
        want += (uint64_t)hit;
        if (et_at(x, i, j, k, 0) != (hit ? 1.0f : 0.0f) && bad++ < 5)
            fprintf(stderr, "bump (%d,%d,%d): %g\n", i, j, k, et_at(x, i, j, k, 0));
    }
    CHECK(bad == 0);
    CHECK(want > 100 && want < 32 * 512 / 2);
    CHECK(eng_field_active_voxels(x) == want);
}

/* The same into a field whose leaf blocks do not line up with the loop's (4^3 voxels): its
 * chain is no fast access and runs lane by lane, and x[I] += v (made a load and a store by
 * atomic demotion) goes through the activating pointer. Lanes the mask leaves out neither
 * activate nor load through a pointer they did not make. */
static void test_activation_lane_by_lane(void)
{
    eng_field *dom = et_field(ctx, "q_dom", 3, ENG_F32, 0.0f);
    eng_field *x = et_field_layout(ctx, "q_x", "offset(-2048).pointer(ijk,32).pointer(ijk,32).dense(ijk,4)",
                                   ENG_F32, 0.0f);
    checker_fill(ctx, dom, 9, 1);
    const char *src =
        "kernel bump4(field<f32> dom, field<f32> x) {\n"
        "    for (I in dom) { if (dom[I] > 1.5 && I.z % 8 < 4) { x[I] += 1.0; } }\n"
        "}\n";
    eng_program *p = et_compile(ctx, src);
    eng_arg args[2] = {et_f(dom), et_f(x)};
    if (et_run(ctx, p, "bump4", args, 2))
        return;
    uint64_t want = 0;
    int bad = 0;
    FOR_ACTIVE(i, j, k) {
        int hit = pat(9, i, j, k) > 1.5f && (k & 4) == 0;
        want += (uint64_t)hit;
        if (et_at(x, i, j, k, 0) != (hit ? 1.0f : 0.0f) && bad++ < 5)
            fprintf(stderr, "bump4 (%d,%d,%d): %g\n", i, j, k, et_at(x, i, j, k, 0));
    }
    CHECK(bad == 0);
    CHECK(want > 500);
    /* only the 4^3 blocks holding a hit voxel became active (this layout has no block
     * statistics to ask: a kernel counts them) */
    eng_field *n = et_field(ctx, "q_n", 0, ENG_F32, 0.0f);
    eng_program *pc = et_compile(ctx,
        "kernel count4(field<f32> dom, field<f32> x, field<f32, 0> n) {\n"
        "    for (I in dom) { if (is_active(x, I)) { n[] += 1.0; } }\n"
        "}\n");
    eng_arg ca[3] = {et_f(dom), et_f(x), et_f(n)};
    if (et_run(ctx, pc, "count4", ca, 3))
        return;
    static uint8_t hit4[8][8][8];
    memset(hit4, 0, sizeof hit4);
    FOR_ACTIVE(i, j, k) hit4[i / 4][j / 4][k / 4] |= pat(9, i, j, k) > 1.5f && (k & 4) == 0;
    int blocks = 0, all = 0;
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            for (int k = 0; k < 8; k++) {
                blocks += hit4[i][j][k];
                all += on(i * 4, j * 4, k * 4);
            }
    int32_t z0[3] = {0, 0, 0};
    CHECK(eng_field_read(n, z0, 0) == (float)(64 * blocks));
    CHECK(blocks < all); /* some of dom's 4^3 blocks have no hit voxel */
    char *text = listing(src, "bump4");
    if (text) {
        CHECK(strstr(text, "<8 x float>") != NULL); /* a row, with its activation lane by lane */
        free(text);
    }
}

/* One field bound to two slots: the task activates the +x neighbour's block through one slot
 * (no fast access: a write at I + e activates) and asks through the other whether it is
 * active, which each iteration's own write just made it. The fast copy's answer from the
 * blocks it looked up as the entry started would say no at block edges: it must not be used
 * when a slot the task changes is bound to a field a fast access reads. */
static void test_query_aliased_write(void)
{
    eng_field *v = et_field(ctx, "al_v", 3, ENG_F32, 0.0f);
    eng_field *o = et_field(ctx, "al_o", 3, ENG_F32, 0.0f);
    checker_fill(ctx, v, 9, 1);
    eng_program *p = et_compile(ctx,
        "kernel alias_q(field<f32> v, field<f32> w, field<f32> o) {\n"
        "    for (I in v) {\n"
        "        w[I + ivec3(1, 0, 0)] = 1.0;\n"
        "        o[I] = is_active(v, I + ivec3(1, 0, 0)) ? 1.0 : 0.0;\n"
        "    }\n"
        "}\n");
    eng_arg args[3] = {et_f(v), et_f(v), et_f(o)};
    if (et_run(ctx, p, "alias_q", args, 3))
        return;
    int bad = 0, edge = 0;
    FOR_ACTIVE(x, y, z) {
        edge += x % 8 == 7 && !on(x + 1, y, z);
        if (et_at(o, x, y, z, 0) != 1.0f && bad++ < 5)
            fprintf(stderr, "alias_q (%d,%d,%d): %g\n", x, y, z, et_at(o, x, y, z, 0));
    }
    CHECK(bad == 0);
    CHECK(edge > 100); /* cells whose neighbour's block was inactive before the task */
}

/* One statement indexing every axis of a read at a computed point (a[ivec3(k, k, k)]): the
 * cached reads' out-of-line walk stood one parameter in for all three axes and walked to
 * (z, z, z) (rows on and off alike); such reads now keep the generic walk. */
static void test_one_index_on_all_axes(void)
{
    eng_field *dom = et_field(ctx, "d_dom", 3, ENG_F32, 0.0f);
    eng_field *sh = et_field(ctx, "d_sh", 3, ENG_F32, 0.0f);
    eng_field *a = et_field(ctx, "d_a", 3, ENG_F32, 0.75f);
    eng_field *o = et_field(ctx, "d_o", 3, ENG_F32, 0.0f);
    checker_fill(ctx, dom, 9, 1);
    checker_fill(ctx, sh, 6, 1);
    checker_fill(ctx, a, 5, 1);
    eng_program *p = et_compile(ctx,
        "kernel diag(field<f32> dom, field<f32> sh, field<f32> a, field<f32> o) {\n"
        "    for (I in dom) {\n"
        "        i32 k = i32(sh[I] * 4.0) + I.z;\n"
        "        o[I] = a[ivec3(k, k, k)] + a[ivec3(k + 1, k, k)];\n"
        "    }\n"
        "}\n");
    eng_arg args[4] = {et_f(dom), et_f(sh), et_f(a), et_f(o)};
    if (et_run(ctx, p, "diag", args, 4))
        return;
    int bad = 0;
    FOR_ACTIVE(x, y, z) {
        int k = (int)(pat(6, x, y, z) * 4.0f) + z;
        float want = at_bg(5, k, k, k, 0.75f) + at_bg(5, k + 1, k, k, 0.75f);
        float got = et_at(o, x, y, z, 0);
        if (got != want && bad++ < 5)
            fprintf(stderr, "diag (%d,%d,%d): %.9g, expected %.9g\n", x, y, z, got, want);
    }
    CHECK(bad == 0);
}

/* Statements that run lane by lane inside a vector body (row_vector.c, lanes_stmt), and the
 * fast copy's answer to is_active at I + c (fast_struct.c): activity of neighbours two
 * blocks' worth of ways (I + 1 + 1 included), floored integer division, modulo and shifts
 * with negative operands, tan and atan2, a float reduction and a max under a mask, and an
 * atomic at a computed place (column counts). */
static const char *lanes_src =
    "kernel lanes(field<f32> dom, field<f32> a, field<f32> o, field<f32, 0> sum,\n"
    "             field<f32, 0> hi, field<f32> cnt) {\n"
    "    for (I in dom) {\n"
    "        f32 x = a[I];\n"
    "        f32 w = 0.0;\n"
    "        if (is_active(a, I + ivec3(0, 0, 1)) && is_active(dom, I - ivec3(1, 0, 0))) {\n"
    "            w = 1.0;\n"
    "        }\n"
    "        if (is_active(a, I + ivec3(0, 0, 1) + ivec3(0, 0, 1))) { w += 2.0; }\n"
    "        i32 n = I.z * 7 - 40;\n"
    "        i32 q = n / (I.y % 5 - 2) + n % 3 + (n >> 2) + (I.x << (I.y & 3));\n"
    "        if (x > 0.0) {\n"
    "            sum[] += x;\n"
    "            hi[] max= x + w;\n"
    "            cnt[ivec3(I.x, I.y, 0)] += 1.0;\n"
    "            o[I] = f32(q) + w + tan(x * 0.1) + atan2(x, w + 1.0);\n"
    "        }\n"
    "    }\n"
    "}\n";

static int32_t floor_div(int32_t a, int32_t b)
{
    if (b == 0)
        return 0;
    int32_t q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static int32_t floor_mod(int32_t a, int32_t b)
{
    return b == 0 ? 0 : a - b * floor_div(a, b);
}

static void test_lane_statements(void)
{
    eng_field *dom = et_field(ctx, "l_dom", 3, ENG_F32, 0.0f);
    eng_field *a = et_field(ctx, "l_a", 3, ENG_F32, 0.0f);
    eng_field *o = et_field(ctx, "l_o", 3, ENG_F32, 0.0f);
    eng_field *sum = et_field(ctx, "l_sum", 0, ENG_F32, 0.0f);
    eng_field *hi = et_field(ctx, "l_hi", 0, ENG_F32, 0.0f);
    eng_field *cnt = et_field(ctx, "l_cnt", 3, ENG_F32, 0.0f);
    checker_fill(ctx, dom, 9, 1);
    checker_fill(ctx, a, 3, 1);
    eng_program *p = et_compile(ctx, lanes_src);
    eng_arg args[6] = {et_f(dom), et_f(a), et_f(o), et_f(sum), et_f(hi), et_f(cnt)};
    if (et_run(ctx, p, "lanes", args, 6))
        return;
    int bad = 0, col[32][32] = {{0}}, kinds[4] = {0, 0, 0, 0};
    double want_sum = 0;
    float want_hi = 0.0f; /* the 0-D field's background, as the kernel's max starts from */
    FOR_ACTIVE(x, y, z) {
        float xa = pat(3, x, y, z), w = 0.0f;
        if (on(x, y, z + 1) && on(x - 1, y, z))
            w = 1.0f;
        if (on(x, y, z + 2))
            w += 2.0f;
        kinds[(int)w]++;
        int32_t n = z * 7 - 40;
        int32_t q = floor_div(n, floor_mod(y, 5) - 2) + floor_mod(n, 3) + (n >> 2) +
                    (int32_t)((uint32_t)x << (y & 3));
        float want = 0.0f;
        if (xa > 0.0f) {
            want_sum += xa;
            want_hi = fmaxf(want_hi, xa + w);
            col[x][y]++;
            want = (float)q + w + tanf(xa * 0.1f) + atan2f(xa, w + 1.0f);
        }
        float got = et_at(o, x, y, z, 0);
        /* tan and atan2 are libm's on both sides */
        if (got != want && bad++ < 5)
            fprintf(stderr, "lanes (%d,%d,%d): %.9g, expected %.9g\n", x, y, z, got, want);
    }
    for (int x = 0; x < 32; x++)
        for (int y = 0; y < 32; y++)
            if (et_at(cnt, x, y, 0, 0) != (float)col[x][y] && bad++ < 5)
                fprintf(stderr, "lanes count (%d,%d): %g, expected %d\n", x, y,
                        et_at(cnt, x, y, 0, 0), col[x][y]);
    int32_t z0[3] = {0, 0, 0};
    /* quarters summed in any order are exact */
    CHECK(eng_field_read(sum, z0, 0) == (float)want_sum);
    CHECK(eng_field_read(hi, z0, 0) == want_hi);
    CHECK(bad == 0);
    for (int k = 0; k < 4; k++)
        CHECK(kinds[k] > 100); /* every combination of neighbours' activity occurs */
}

/* A sweep that writes its own field at the cell and reads its neighbours where they are
 * active (a wall condition's shape): the tree stays as it is, so is_active and the
 * neighbours' reads are served from the blocks looked up as each entry starts. */
static const char *walls_src =
    "kernel walls(field<f32> v, i32 color) {\n"
    "    for (I in v) {\n"
    "        if (((I.x + I.y + I.z) & 1) == color) {\n"
    "            f32 s = v[I];\n"
    "            if (is_active(v, I + ivec3(1, 0, 0))) { s += v[I + ivec3(1, 0, 0)]; }\n"
    "            if (!is_active(v, I - ivec3(0, 0, 1))) { s = s * 0.5; }\n"
    "            v[I] = s;\n"
    "        }\n"
    "    }\n"
    "}\n";

static void test_walls(void)
{
    eng_field *v = et_field(ctx, "w_v", 3, ENG_F32, 0.25f);
    checker_fill(ctx, v, 8, 1);
    eng_program *p = et_compile(ctx, walls_src);
    eng_arg args[2] = {et_f(v), et_s(1)};
    if (et_run(ctx, p, "walls", args, 2))
        return;
    int bad = 0, halved = 0, added = 0;
    FOR_ACTIVE(x, y, z) {
        float want = pat(8, x, y, z);
        if (((x + y + z) & 1) == 1) {
            if (on(x + 1, y, z)) {
                want += pat(8, x + 1, y, z); /* the other colour: not written */
                added++;
            }
            if (!on(x, y, z - 1)) {
                want *= 0.5f;
                halved++;
            }
        }
        float got = et_at(v, x, y, z, 0);
        if (got != want && bad++ < 5)
            fprintf(stderr, "walls (%d,%d,%d): %.9g, expected %.9g\n", x, y, z, got, want);
    }
    CHECK(bad == 0);
    CHECK(halved > 100 && added > 100);
    CHECK(eng_field_active_voxels(v) == 32u * 512u); /* nothing activated */
}

/* Multigrid transfers between grids a factor 2 apart, which the fast copy serves from one
 * coarse block per fine entry (I / 2) or two fine blocks per axis per coarse entry (2 J + c):
 * blocks at negative coordinates too (floored halving), inactive neighbours reading the
 * background, and the scalar fast copy (PLUME_ROWVEC=0) as well as rows. */
static int on_fine(int x, int y, int z)
{
    return on(x, y, z) || (x >= -8 && x < 0 && y >= -16 && y < -8 && z >= -8 && z < 0);
}

static int on_coarse(int x, int y, int z)
{
    /* a checkerboard over coarse 0..15 (fine 0..31), and the coarse block at -8 on every
     * axis, which holds the halves of the fine block at (-8, -16, -8) */
    if (x >= -8 && x < 0 && y >= -8 && y < 0 && z >= -8 && z < 0)
        return 1;
    if (x < 0 || y < 0 || z < 0 || x >= 16 || y >= 16 || z >= 16)
        return 0;
    return ((x / 8 + y / 8 + z / 8) & 1) == 0;
}

static void fill_grid(eng_field *fld, int f, int coarse)
{
    float v[512];
    for (int bx = -1; bx < 4; bx++)
        for (int by = -2; by < 4; by++)
            for (int bz = -1; bz < 4; bz++) {
                int32_t o[3] = {bx * 8, by * 8, bz * 8};
                if (!(coarse ? on_coarse(o[0], o[1], o[2]) : on_fine(o[0], o[1], o[2])))
                    continue;
                for (int n = 0; n < 512; n++)
                    v[n] = pat(f, o[0] + n / 64, o[1] + (n / 8) % 8, o[2] + n % 8);
                CHECK_OK(ctx, eng_field_write_block(ctx, fld, o, v, NULL));
            }
}

static int floor_half(int v)
{
    return v >= 0 ? v / 2 : -((1 - v) / 2);
}

static void check_transfers(const char *tag, float w)
{
    char name[8][32];
    const char *what[8] = {"fd", "ft", "fz", "cd", "cz", "cr", "", ""};
    for (int k = 0; k < 6; k++)
        snprintf(name[k], sizeof name[k], "%s_%s", tag, what[k]);
    eng_field *fd = et_field(ctx, name[0], 3, ENG_F32, 0.0f);
    eng_field *ft = et_field(ctx, name[1], 3, ENG_F32, 0.125f);
    eng_field *fz = et_field(ctx, name[2], 3, ENG_F32, 0.0f);
    eng_field *cd = et_field(ctx, name[3], 3, ENG_F32, 0.0f);
    eng_field *cz = et_field(ctx, name[4], 3, ENG_F32, 0.375f);
    eng_field *cr = et_field(ctx, name[5], 3, ENG_F32, 0.0f);
    fill_grid(fd, 9, 0);
    fill_grid(ft, 5, 0);
    fill_grid(fz, 2, 0);
    fill_grid(cd, 10, 1);
    fill_grid(cz, 4, 1);
    fill_grid(cr, 6, 1);
    char src[1024];
    snprintf(src, sizeof src,
             "kernel restrict_%s(field<f32> dc, field<f32> tf, field<f32> rc) {\n"
             "    for (J in dc) {\n"
             "        f32 s = 0.0;\n"
             "        for (static c in 0 .. 8) {\n"
             "            s += tf[2 * J + ivec3(c / 4, (c / 2) %% 2, c %% 2)];\n"
             "        }\n"
             "        rc[J] = dc[J] > 0.5 ? %g * s : 0.0;\n"
             "    }\n"
             "}\n"
             "kernel prolong_%s(field<f32> df, field<f32> zc, field<f32> zf) {\n"
             "    for (I in df) {\n"
             "        if (df[I] > 0.5) { zf[I] += %g * zc[I / 2]; }\n"
             "    }\n"
             "}\n",
             tag, w, tag, w);
    eng_program *p = et_compile(ctx, src);
    char kn[2][32];
    snprintf(kn[0], sizeof kn[0], "restrict_%s", tag);
    snprintf(kn[1], sizeof kn[1], "prolong_%s", tag);
    eng_arg ra[3] = {et_f(cd), et_f(ft), et_f(cr)}, pa[3] = {et_f(fd), et_f(cz), et_f(fz)};
    if (et_run(ctx, p, kn[0], ra, 3) || et_run(ctx, p, kn[1], pa, 3))
        return;
    int bad = 0, neg = 0, empty = 0;
    for (int x = -8; x < 16; x++)
        for (int y = -8; y < 16; y++)
            for (int z = -8; z < 16; z++) {
                if (!on_coarse(x, y, z))
                    continue;
                float sum = 0.0f;
                int seen = 0;
                for (int c = 0; c < 8; c++) {
                    int fx = 2 * x + c / 4, fy = 2 * y + (c / 2) % 2, fz0 = 2 * z + c % 2;
                    int a = on_fine(fx, fy, fz0);
                    seen += a;
                    sum += a ? pat(5, fx, fy, fz0) : 0.125f;
                }
                empty += seen == 0;
                neg += x < 0 && seen > 0;
                float want = pat(10, x, y, z) > 0.5f ? w * sum : 0.0f;
                float got = et_at(cr, x, y, z, 0);
                if (got != want && bad++ < 5)
                    fprintf(stderr, "%s restrict (%d,%d,%d): %.9g, expected %.9g\n", tag, x, y,
                            z, got, want);
            }
    for (int x = -8; x < 32; x++)
        for (int y = -16; y < 32; y++)
            for (int z = -8; z < 32; z++) {
                if (!on_fine(x, y, z))
                    continue;
                int cx = floor_half(x), cy = floor_half(y), cz0 = floor_half(z);
                float want = pat(2, x, y, z);
                if (pat(9, x, y, z) > 0.5f)
                    want = want + w * (on_coarse(cx, cy, cz0) ? pat(4, cx, cy, cz0) : 0.375f);
                float got = et_at(fz, x, y, z, 0);
                if (got != want && bad++ < 5)
                    fprintf(stderr, "%s prolong (%d,%d,%d): %.9g, expected %.9g\n", tag, x, y,
                            z, got, want);
            }
    CHECK(bad == 0);
    /* negative coordinates; coarse cells over inactive fine blocks (the background) */
    CHECK(neg == 64 && empty > 100);
}

static void test_grid_transfers(void)
{
    check_transfers("gt", 0.5f);
    setenv("PLUME_ROWVEC", "0", 1);
    check_transfers("gs", 0.25f);
    unsetenv("PLUME_ROWVEC");
}

static char *listing(const char *src, const char *kernel)
{
    char *text = NULL, err[512];
    int rc = eng_compile_listing("rows.pk", src, strlen(src), kernel, ENG_LIST_LLVM, &text, err,
                                 sizeof err);
    CHECK_MSG(rc == ENG_LIST_OK, err);
    return rc == ENG_LIST_OK ? text : NULL;
}

/* Reads at computed points, three corners around one base (a group): most rows' points lie
 * among the blocks next to the row's own (a gather from the table of blocks), some rows have
 * lanes two or more blocks away, below 0 or past the active pattern (the walk, lane by lane),
 * and inactive blocks read the background. */
static const char *samp_src =
    "kernel samp(field<f32> dom, field<f32> a, field<f32> o, field<f32> sh, f32 s) {\n"
    "    for (I in dom) {\n"
    "        vec3 p = vec3(I) * s + vec3(sh[I], -5.0, 2.0);\n"
    "        ivec3 b = ivec3(floor(p));\n"
    "        o[I] = a[b] + 0.5 * a[b + ivec3(1, 0, 0)] + 0.25 * a[b + ivec3(0, 0, 1)];\n"
    "    }\n"
    "}\n";

/* The sampling tests' set-up: kernel `name` of src (parameters dom, a, o, sh, s) over the
 * checkerboards dom (pattern 9) and a (pattern 5, background 0.75), with s = 1.7 and sh
 * shift(x, y, z) where a block is active (NULL: 3 everywhere, background included). The point
 * depends on a loaded value (sh), as a sample's does: reads at points made from the loop index
 * alone stay scalar (cached_read.c, from_load). Returns o, or NULL when the run failed. */
static eng_field *run_sampler(const char *tag, const char *src, const char *name,
                              float (*shift)(int, int, int))
{
    char fn[4][32];
    static const char *const part[4] = {"dom", "a", "o", "sh"};
    for (int k = 0; k < 4; k++)
        snprintf(fn[k], sizeof fn[k], "%s_%s", tag, part[k]);
    eng_field *dom = et_field(ctx, fn[0], 3, ENG_F32, 0.0f);
    eng_field *a = et_field(ctx, fn[1], 3, ENG_F32, 0.75f);
    eng_field *o = et_field(ctx, fn[2], 3, ENG_F32, 0.0f);
    eng_field *sh = et_field(ctx, fn[3], 3, ENG_F32, 3.0f);
    checker_fill(ctx, dom, 9, 1);
    checker_fill(ctx, a, 5, 1);
    if (shift)
        checker_fill_fn(ctx, sh, shift);
    else
        et_put(ctx, sh, 0, 0, 0, 3.0f);
    eng_program *p = et_compile(ctx, src);
    eng_arg args[5] = {et_f(dom), et_f(a), et_f(o), et_f(sh), et_s(1.7)};
    return et_run(ctx, p, name, args, 5) ? NULL : o;
}

static void test_samples(void)
{
    eng_field *o = run_sampler("s", samp_src, "samp", NULL);
    if (!o)
        return;
    int bad = 0, far = 0;
    FOR_ACTIVE(x, y, z) {
        int b[3] = {(int)floorf((float)x * 1.7f + 3.0f), (int)floorf((float)y * 1.7f + -5.0f),
                    (int)floorf((float)z * 1.7f + 2.0f)};
        float want = at_bg(5, b[0], b[1], b[2], 0.75f) + 0.5f * at_bg(5, b[0] + 1, b[1], b[2], 0.75f);
        want = want + 0.25f * at_bg(5, b[0], b[1], b[2] + 1, 0.75f);
        for (int c = 0; c < 3; c++) {
            int e = (c == 0 ? x : c == 1 ? y : z) / 8 * 8;
            far += b[c] < e - 8 || b[c] >= e + 16;
        }
        float got = et_at(o, x, y, z, 0);
        if (got != want && bad++ < 5)
            fprintf(stderr, "samp (%d,%d,%d): %.9g, expected %.9g\n", x, y, z, got, want);
    }
    CHECK(bad == 0);
    CHECK(far > 1000); /* lanes the walk serves */
    char *text = listing(samp_src, "samp");
    if (text) {
        CHECK(strstr(text, "@llvm.masked.gather.v8f32") != NULL);
        free(text);
    }
}

/* One sample's corners split by an `if`, and corners wider apart than the shared terms cover
 * (x deltas 0 and 5): a row makes a group's range test and index terms at its first corner
 * and keeps them only for corners that block holds (the ones after the `if` make their own),
 * a delta outside the kept span makes its terms on the spot, and members this far apart test
 * their own ranges (an off-by-one there crashed this test). */
static const char *split_src =
    "kernel split(field<f32> dom, field<f32> a, field<f32> o, field<f32> sh, f32 s) {\n"
    "    for (I in dom) {\n"
    "        vec3 p = vec3(I) * s + vec3(sh[I], -5.0, 2.0);\n"
    "        ivec3 b = ivec3(floor(p));\n"
    "        f32 v = 0.0;\n"
    "        if (((I.x + I.z) & 1) == 0) {\n"
    "            v = a[b + ivec3(0, 1, 0)];\n"
    "        }\n"
    "        o[I] = v + 0.5 * a[b] + 0.25 * a[b + ivec3(5, 0, 0)];\n"
    "    }\n"
    "}\n";

static void test_split_samples(void)
{
    eng_field *o = run_sampler("sp", split_src, "split", NULL);
    if (!o)
        return;
    int bad = 0;
    FOR_ACTIVE(x, y, z) {
        int b[3] = {(int)floorf((float)x * 1.7f + 3.0f), (int)floorf((float)y * 1.7f + -5.0f),
                    (int)floorf((float)z * 1.7f + 2.0f)};
        float v = ((x + z) & 1) == 0 ? at_bg(5, b[0], b[1] + 1, b[2], 0.75f) : 0.0f;
        float want = v + 0.5f * at_bg(5, b[0], b[1], b[2], 0.75f);
        want = want + 0.25f * at_bg(5, b[0] + 5, b[1], b[2], 0.75f);
        float got = et_at(o, x, y, z, 0);
        if (got != want && bad++ < 5)
            fprintf(stderr, "split (%d,%d,%d): %.9g, expected %.9g\n", x, y, z, got, want);
    }
    CHECK(bad == 0);
    char *text = listing(split_src, "split");
    if (text) {
        CHECK(strstr(text, "@llvm.masked.gather.v8f32") != NULL);
        free(text);
    }
}

/* x[I] += v on a dense leaf of another tree (atomic demotion makes it a load and a store
 * through the activating pointer): the row reads its run at once where the block is there or
 * was just made, and through the one-element sink, lane by lane as a cell at a time would,
 * where the cell lies outside the field's range (y covers 0..15 on each axis: the loop's
 * blocks past it report the range error, and the blocks inside that were there are still
 * right). */
static const char *acc_src = "kernel acc(field<f32> dom, field<f32> x) {\n"
                             "    for (I in dom) { x[I] += dom[I] * 2.0; }\n"
                             "}\n";

static void fill_first_column(eng_field *fld)
{
    float v[512];
    for (int by = 0; by < 4; by++)
        for (int bz = 0; bz < 4; bz++) {
            int32_t o[3] = {0, by * 8, bz * 8};
            if (!on(o[0], o[1], o[2]) || by >= 2 || bz >= 2)
                continue;
            for (int n = 0; n < 512; n++)
                v[n] = pat(5, n / 64, o[1] + (n / 8) % 8, o[2] + n % 8);
            CHECK_OK(ctx, eng_field_write_block(ctx, fld, o, v, NULL));
        }
}

/* After the range error every activation gets the sink (runtime.h), so past it (limit < 32)
 * only the blocks that were there are sure to be written; the others hold the result or,
 * never made, the background. */
static int acc_bad(eng_field *x, int limit)
{
    int bad = 0, n = 0;
    FOR_ACTIVE(i, j, k) {
        if (i >= limit || j >= limit || k >= limit)
            continue;
        int had = i < 8 && j < 16 && k < 16;
        float want = (had ? pat(5, i, j, k) : 0.5f) + pat(9, i, j, k) * 2.0f;
        float got = et_at(x, i, j, k, 0);
        n++;
        if (limit < 32 && !had && got == 0.5f)
            continue;
        if (got != want && bad++ < 5)
            fprintf(stderr, "acc (%d,%d,%d): %g, expected %g\n", i, j, k, et_at(x, i, j, k, 0),
                    want);
    }
    CHECK(n > 1000);
    return bad;
}

static void test_activating_reads(void)
{
    eng_field *dom = et_field(ctx, "ar_dom", 3, ENG_F32, 0.0f);
    eng_field *x = et_field(ctx, "ar_x", 3, ENG_F32, 0.5f);
    eng_field *y = et_field_layout(ctx, "ar_y", "pointer(ijk,2).dense(ijk,8)", ENG_F32, 0.5f);
    checker_fill(ctx, dom, 9, 1);
    fill_first_column(x);
    fill_first_column(y);
    eng_program *p = et_compile(ctx, acc_src);
    eng_arg args[2] = {et_f(dom), et_f(x)};
    if (et_run(ctx, p, "acc", args, 2))
        return;
    CHECK(acc_bad(x, 32) == 0);
    args[1] = et_f(y);
    CHECK_OK(ctx, eng_launch(ctx, eng_program_find(p, "acc"), args, 2));
    int rc = eng_sync(ctx);
    CHECK(rc != ENG_OK);
    CHECK(acc_bad(y, 16) == 0);
    char *text = listing(acc_src, "acc");
    if (text) {
        CHECK(strstr(text, "row.insink") != NULL);
        CHECK(strstr(text, "<8 x float>") != NULL);
        free(text);
    }
}

/* Float-to-integer casts in rows saturate as the scalar cast does (NaN gives 0, values past
 * an end give that end): every cast of f32 and f64 to i32, u32 and i64 on values at and around
 * each end, and the row is a vector with no lane-by-lane saturating intrinsic left in it. */
static const char *sat_src =
    "kernel sat(field<f32> a, field<f32> b, field<vec3> oi, field<vec3> ou, field<vec3> ol,\n"
    "           field<vec3> di, field<vec3> du, field<vec3> dl) {\n"
    "    for (I in a) {\n"
    "        f32 x = a[I];\n"
    "        f64 d = f64(x) + f64(b[I]);\n"
    "        i32 i = i32(x);\n"
    "        u32 u = u32(x);\n"
    "        i64 l = i64(x);\n"
    "        oi[I] = vec3(f32(i >> 16), f32(i & 65535), f32(i32(l >> 48)));\n"
    "        ou[I] = vec3(f32(i32(u >> 16)), f32(i32(u & 65535)), f32(i32((l >> 32) & 65535)));\n"
    "        ol[I] = vec3(f32(i32((l >> 16) & 65535)), f32(i32(l & 65535)), 0.0);\n"
    "        i = i32(d);\n"
    "        u = u32(d);\n"
    "        l = i64(d);\n"
    "        di[I] = vec3(f32(i >> 16), f32(i & 65535), f32(i32(l >> 48)));\n"
    "        du[I] = vec3(f32(i32(u >> 16)), f32(i32(u & 65535)), f32(i32((l >> 32) & 65535)));\n"
    "        dl[I] = vec3(f32(i32((l >> 16) & 65535)), f32(i32(l & 65535)), 0.0);\n"
    "    }\n"
    "}\n";

static const float sat_x[] = {
    NAN, INFINITY, -INFINITY, 1e20f, -1e20f, 2147483648.0f, 2147483520.0f, -2147483648.0f,
    -2147483904.0f, 4294967296.0f, 4294967040.0f, 9223372036854775808.0f,
    9223371487098961920.0f, -9223372036854775808.0f, -9223373136366403584.0f, -0.75f, 3.75f,
    65537.5f, -65537.5f, 0.0f, -0.0f, 1e-30f, 123456.7f};
#define SAT_NX ((int)(sizeof sat_x / sizeof sat_x[0]))
static const float sat_b[4] = {0.5f, -0.5f, 0.25f, 0.0f};

static float sat_a_at(int x, int y, int z) { return sat_x[(x * 7 + y * 3 + z) % SAT_NX]; }
static float sat_b_at(int x, int y, int z) { return sat_b[(x + y + z * 3) % 4]; }

/* The language's casts (docs/language.md), written out in C for in-range values. */
static int32_t ref_i32(double v)
{
    return isnan(v) ? 0 : v >= 2147483648.0 ? INT32_MAX : v <= -2147483648.0 ? INT32_MIN : (int32_t)v;
}
static uint32_t ref_u32(double v)
{
    return isnan(v) || v <= 0.0 ? 0 : v >= 4294967296.0 ? UINT32_MAX : (uint32_t)v;
}
static int64_t ref_i64(double v)
{
    if (isnan(v))
        return 0;
    if (v >= 9223372036854775808.0)
        return INT64_MAX;
    return v <= -9223372036854775808.0 ? INT64_MIN : (int64_t)v;
}

static int sat_check(eng_field *o[3], int x, int y, int z, double v, const char *what)
{
    int32_t i = ref_i32(v);
    uint32_t u = ref_u32(v);
    int64_t l = ref_i64(v);
    float want[9] = {(float)(i >> 16), (float)(i & 65535), (float)(int32_t)(l >> 48),
                     (float)(int32_t)(u >> 16), (float)(int32_t)(u & 65535),
                     (float)(int32_t)((l >> 32) & 65535), (float)(int32_t)((l >> 16) & 65535),
                     (float)(int32_t)(l & 65535), 0.0f};
    int bad = 0;
    for (int k = 0; k < 9; k++) {
        float got = et_at(o[k / 3], x, y, z, k % 3);
        if (got != want[k] && bad++ < 1)
            fprintf(stderr, "sat %s of %.17g at (%d,%d,%d) part %d: %g, expected %g\n", what, v, x,
                    y, z, k, got, want[k]);
    }
    return bad;
}

static void test_saturating_casts(void)
{
    eng_field *a = et_field(ctx, "sat_a", 3, ENG_F32, 0.0f);
    eng_field *b = et_field(ctx, "sat_b", 3, ENG_F32, 0.0f);
    const char *names[6] = {"sat_oi", "sat_ou", "sat_ol", "sat_di", "sat_du", "sat_dl"};
    eng_field *o[6];
    for (int k = 0; k < 6; k++)
        o[k] = et_field(ctx, names[k], 3, ENG_VEC3, 7.0f);
    checker_fill_fn(ctx, a, sat_a_at);
    checker_fill_fn(ctx, b, sat_b_at);
    eng_program *p = et_compile(ctx, sat_src);
    eng_arg args[8] = {et_f(a), et_f(b), et_f(o[0]), et_f(o[1]), et_f(o[2]),
                       et_f(o[3]), et_f(o[4]), et_f(o[5])};
    if (et_run(ctx, p, "sat", args, 8))
        return;
    int bad = 0, seen[SAT_NX] = {0};
    FOR_ACTIVE(x, y, z) {
        float xa = sat_a_at(x, y, z);
        seen[(x * 7 + y * 3 + z) % SAT_NX]++;
        bad += sat_check(o, x, y, z, (double)xa, "f32");
        bad += sat_check(o + 3, x, y, z, (double)xa + (double)sat_b_at(x, y, z), "f64");
    }
    CHECK(bad == 0);
    for (int k = 0; k < SAT_NX; k++)
        CHECK(seen[k] > 0);
    char *text = listing(sat_src, "sat");
    if (text) {
        CHECK(strstr(text, "<8 x float>") != NULL);
        CHECK(strstr(text, ".sat.v8") == NULL);
        free(text);
    }
}

/* Samples at points that saturate (1e20, -1e20 in some lanes of a row; NaN, whose cast is 0):
 * those lanes' corners lie far outside every table (at and next to the i32 ends, where b + 1
 * wraps) and read the background; the row's other lanes read their neighbours as usual. */
static float far_shift_at(int x, int y, int z)
{
    static const float odd[4] = {1e20f, -1e20f, NAN, 3.0f};
    int n = (x % 8) * 64 + (y % 8) * 8 + z % 8; /* the voxel's place in its block */
    return (n * 7) % 5 == 0 ? odd[(n / 5) % 4] : 3.0f;
}

static void test_far_samples(void)
{
    eng_field *o = run_sampler("fs", samp_src, "samp", far_shift_at);
    if (!o)
        return;
    int bad = 0, odd_lanes = 0;
    FOR_ACTIVE(x, y, z) {
        float s = far_shift_at(x, y, z);
        odd_lanes += s != 3.0f;
        /* the language's cast (NaN gives 0) and wrapping b + 1 */
        int32_t b[3] = {ref_i32(floorf((float)x * 1.7f + s)), ref_i32(floorf((float)y * 1.7f + -5.0f)),
                        ref_i32(floorf((float)z * 1.7f + 2.0f))};
        int32_t bx1 = (int32_t)((uint32_t)b[0] + 1u), bz1 = (int32_t)((uint32_t)b[2] + 1u);
        float want = at_bg(5, b[0], b[1], b[2], 0.75f) + 0.5f * at_bg(5, bx1, b[1], b[2], 0.75f);
        want = want + 0.25f * at_bg(5, b[0], b[1], bz1, 0.75f);
        float got = et_at(o, x, y, z, 0);
        if (got != want && bad++ < 5)
            fprintf(stderr, "far samp (%d,%d,%d) s=%g: %.9g, expected %.9g\n", x, y, z, s, got, want);
    }
    CHECK(bad == 0);
    CHECK(odd_lanes > 1000);
}

static void test_vector_code(void)
{
    char *text = listing(rb_src, "rb");
    if (text) {
        CHECK(strstr(text, "<8 x float>") != NULL);
        CHECK(strstr(text, "@llvm.masked.store.v8f32") != NULL);
        free(text);
    }
    /* bodies with statements run lane by lane are still rows */
    const char *srcs[2] = {lanes_src, walls_src}, *names[2] = {"lanes", "walls"};
    for (int k = 0; k < 2; k++) {
        text = listing(srcs[k], names[k]);
        if (text) {
            CHECK_MSG(strstr(text, "@llvm.masked.store.v8f32") != NULL, names[k]);
            free(text);
        }
    }
    setenv("PLUME_ROWVEC", "0", 1);
    text = listing(rb_src, "rb");
    unsetenv("PLUME_ROWVEC");
    if (text) {
        CHECK(strstr(text, "@llvm.masked.store") == NULL);
        free(text);
    }
}

int main(void)
{
    setenv("PLUME_KERNEL_CACHE", "off", 1);
    ctx = et_context(2);
    test_red_black();
    test_red_black_interleaved();
    test_mixed_body();
    test_samples();
    test_far_samples();
    test_split_samples();
    test_bitmasked_activation();
    test_activation_lane_by_lane();
    test_query_aliased_write();
    test_one_index_on_all_axes();
    test_lane_statements();
    test_walls();
    test_grid_transfers();
    test_saturating_casts();
    test_activating_reads();
    test_vector_code();
    eng_destroy(ctx);
    CHECK_DONE();
}
