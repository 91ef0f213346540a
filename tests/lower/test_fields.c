/* Field access lowered and run on a real sparse tree, compared with the same steps done
 * through the tree API on a second tree: a struct-for over a sparse 3-D field with neighbour
 * reads (f[I + e], f[I - e], coarse f[I / 2] on both sides of zero), voxel_size, atomic
 * i32 += into a coarse field, min= / max= / += reductions into 0-D fields, a vec3 element
 * written through a dynamic component and a swizzle compound assignment, is_active and
 * activate; then deactivate (with its gc task), a 0-D value carried from serial code into a
 * parallel ivec3 box; and 2-D / 1-D fields: a parallel ivec2 box and struct-fors over dense
 * 2-D and 1-D fields (one skipping odd cells with continue). Every voxel of the region is
 * compared, activity included. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check.h"
#include "run_env.h"

static int32_t fdiv(int32_t a, int32_t b)
{
    int32_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static int32_t fmodi(int32_t a, int32_t b)
{
    int32_t r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}

static float rdf(plm_tree *t, const char *f, int32_t x, int32_t y, int32_t z)
{
    uint32_t c[3];
    run_read(t, f, x, y, z, c);
    float v;
    memcpy(&v, c, 4);
    return v;
}

static void wrf(plm_tree *t, const char *f, int32_t x, int32_t y, int32_t z, float v)
{
    plm_tree_write(t, plm_tree_field(t, f), x, y, z, &v);
}

static void wri(plm_tree *t, const char *f, int32_t x, int32_t y, int32_t z, int32_t v)
{
    float c;
    memcpy(&c, &v, 4);
    plm_tree_write(t, plm_tree_field(t, f), x, y, z, &c);
}

static const char *fld_src =
    "kernel fld(field<f32> a, field<f32> b, field<vec3> c, field<i32> n, field<f32, 0> s0,\n"
    "           field<f32, 0> s1, field<i32, 0> si) {\n"
    "    s0[] = -1000.0;\n"
    "    s1[] = 1000.0;\n"
    "    si[] = 0;\n"
    "    for (I in a) {\n"
    "        f32 h = voxel_size(a);\n"
    "        b[I] = a[I + ivec3(1, 0, 0)] * h - a[I - ivec3(0, 0, 1)] + a[I / 2];\n"
    "        n[I / 2] += 1;\n"
    "        s0[] max= a[I];\n"
    "        s1[] min= a[I];\n"
    "        si[] += 1;\n"
    "        i32 k = (I.x + I.y + I.z) % 3;\n"
    "        c[I][k] = a[I];\n"
    "        c[I].yz += vec2(1.0, 2.0);\n"
    "        if (!is_active(a, I + ivec3(0, 8, 0))) {\n"
    "            activate(c, I + ivec3(0, 8, 0));\n"
    "        }\n"
    "    }\n"
    "}\n";

static const char *post_src =
    "kernel post(field<f32> a, field<f32> b, field<f32, 0> s0, i32 x, i32 y, i32 z) {\n"
    "    f32 top = s0[];\n"
    "    deactivate(a, ivec3(x, y, z));\n"
    "    for (P in ivec3(-5, -5, -5) .. ivec3(5, 6, 7)) {\n"
    "        b[P] = f32(P.x + 7 * P.y + 49 * P.z) + top;\n"
    "    }\n"
    "}\n";

#define LO (-48)
#define HI 48

typedef struct origins {
    int32_t (*o)[3];
    int n, cap;
} origins;

static int collect(void *user, const int32_t origin[3], float *data)
{
    (void)data;
    origins *l = user;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->o = realloc(l->o, (size_t)l->cap * sizeof *l->o);
    }
    memcpy(l->o[l->n++], origin, sizeof l->o[0]);
    return 0;
}

static void reference(plm_tree *t, const int32_t kill[3])
{
    const float h = RUN_VOXEL_SIZE;
    wrf(t, "s0", 0, 0, 0, -1000.0f);
    wrf(t, "s1", 0, 0, 0, 1000.0f);
    wri(t, "si", 0, 0, 0, 0);
    origins l = {0};
    plm_tree_foreach_block(t, plm_tree_field(t, "a"), collect, &l);
    int a_id = plm_tree_field(t, "a");
    for (int bi = 0; bi < l.n; bi++)
        for (int v = 0; v < 512; v++) {
            int32_t x = l.o[bi][0] + v / 64, y = l.o[bi][1] + v / 8 % 8, z = l.o[bi][2] + v % 8;
            float ai = rdf(t, "a", x, y, z);
            float bv = rdf(t, "a", x + 1, y, z) * h - rdf(t, "a", x, y, z - 1) +
                       rdf(t, "a", fdiv(x, 2), fdiv(y, 2), fdiv(z, 2));
            wrf(t, "b", x, y, z, bv);
            uint32_t nc[3];
            run_read(t, "n", fdiv(x, 2), fdiv(y, 2), fdiv(z, 2), nc);
            wri(t, "n", fdiv(x, 2), fdiv(y, 2), fdiv(z, 2), (int32_t)nc[0] + 1);
            wrf(t, "s0", 0, 0, 0, fmaxf(rdf(t, "s0", 0, 0, 0), ai));
            wrf(t, "s1", 0, 0, 0, fminf(rdf(t, "s1", 0, 0, 0), ai));
            uint32_t sc[3];
            run_read(t, "si", 0, 0, 0, sc);
            wri(t, "si", 0, 0, 0, (int32_t)sc[0] + 1);
            float cv[3];
            uint32_t cc[3];
            run_read(t, "c", x, y, z, cc);
            memcpy(cv, cc, sizeof cv);
            cv[fmodi(x + y + z, 3)] = ai;
            cv[1] += 1.0f;
            cv[2] += 2.0f;
            plm_tree_write(t, plm_tree_field(t, "c"), x, y, z, cv);
            float dummy[3];
            if (plm_tree_read(t, a_id, x, y + 8, z, dummy) != 1)
                plm_tree_block(t, plm_tree_field(t, "c"), x, y + 8, z, 1, NULL);
        }
    free(l.o);
    /* post */
    float top = rdf(t, "s0", 0, 0, 0);
    plm_tree_deactivate(t, plm_layout_block_snode(plm_tree_layout(t), a_id), kill[0], kill[1],
                        kill[2]);
    for (int32_t z = -5; z < 7; z++)
        for (int32_t y = -5; y < 6; y++)
            for (int32_t x = -5; x < 5; x++)
                wrf(t, "b", x, y, z, (float)(x + 7 * y + 49 * z) + top);
}

static void seed(plm_tree *t)
{
    uint32_t s = 12345;
    for (int i = 0; i < 400; i++) {
        int32_t p[3];
        for (int a = 0; a < 3; a++) {
            s = s * 1664525u + 1013904223u;
            p[a] = (int32_t)(s >> 16) % 64 - 32;
        }
        wrf(t, "a", p[0], p[1], p[2], (float)(i % 37) - 12.5f);
    }
}

static long compare(plm_tree *got, plm_tree *want, const char *f, int comps, long *active)
{
    long bad = 0;
    for (int32_t x = LO; x < HI; x++)
        for (int32_t y = LO; y < HI; y++)
            for (int32_t z = LO; z < HI; z++) {
                uint32_t u[3] = {0}, w[3] = {0};
                int au = run_read(got, f, x, y, z, u), aw = run_read(want, f, x, y, z, w);
                *active += aw == 1;
                if (au != aw || memcmp(u, w, sizeof(uint32_t) * (size_t)comps) != 0) {
                    if (bad++ < 3)
                        fprintf(stderr, "%s (%d,%d,%d): jit %d %08x, ref %d %08x\n", f, x, y, z,
                                au, u[0], aw, w[0]);
                }
            }
    return bad;
}

static void test_sparse(run_env *e)
{
    plm_tree *ref = NULL;
    char err[256];
    CHECK(run_reset(e) == 0);
    CHECK(plm_tree_create(RUN_LAYOUT, 256u << 20, &ref, err, sizeof err) == 0);
    if (!ref)
        return;
    seed(e->tree);
    seed(ref);
    const char *f1[7] = {"a", "b", "c", "n", "s0", "s1", "si"};
    CHECK(run_kernel(e, fld_src, "fld", f1, 7, NULL, 0) == 0);
    /* a voxel of an active block away from the box written by post */
    const int32_t kill[3] = {20, 20, 20};
    float dummy;
    plm_tree_write(e->tree, plm_tree_field(e->tree, "a"), kill[0], kill[1], kill[2],
                   &(float){3.0f});
    plm_tree_write(ref, plm_tree_field(ref, "a"), kill[0], kill[1], kill[2], &(float){3.0f});
    CHECK(plm_tree_read(e->tree, plm_tree_field(e->tree, "a"), 20, 20, 20, &dummy) == 1);
    const char *f2[3] = {"a", "b", "s0"};
    uint64_t args[3] = {(uint64_t)(int64_t)kill[0], (uint64_t)(int64_t)kill[1],
                        (uint64_t)(int64_t)kill[2]};
    CHECK(run_kernel(e, post_src, "post", f2, 3, args, 3) == 0);
    reference(ref, kill);
    CHECK(plm_tree_read(e->tree, plm_tree_field(e->tree, "a"), 20, 20, 20, &dummy) == 0);
    long active = 0;
    CHECK(compare(e->tree, ref, "a", 1, &active) == 0);
    CHECK(compare(e->tree, ref, "b", 1, &active) == 0);
    CHECK(compare(e->tree, ref, "c", 3, &active) == 0);
    CHECK(compare(e->tree, ref, "n", 1, &active) == 0);
    CHECK(active > 10000); /* the comparison covered real work */
    const char *zero_d[3] = {"s0", "s1", "si"};
    for (int i = 0; i < 3; i++) {
        uint32_t u[3], w[3];
        run_read(e->tree, zero_d[i], 0, 0, 0, u);
        run_read(ref, zero_d[i], 0, 0, 0, w);
        CHECK(u[0] == w[0]);
    }
    uint32_t si[3];
    run_read(e->tree, "si", 0, 0, 0, si);
    CHECK(si[0] % 512 == 0 && si[0] >= 512); /* whole dense blocks were visited */
    plm_tree_destroy(ref);
}

static const char *two_src =
    "kernel two(field<f32, 2> g2, field<f32, 1> o1, field<f32, 1> o2, i32 w) {\n"
    "    for (P in ivec2(1, 2) .. ivec2(w, 7)) { g2[P] = f32(P.x * 100 + P.y); }\n"
    "    for (Q in g2) { o1[Q.x + 32 * Q.y] = g2[Q] * 2.0; }\n"
    "    for (i in o1) {\n"
    "        if (i % 2 == 1) continue;\n"
    "        o2[i] = o1[i] + f32(i);\n"
    "    }\n"
    "}\n";

static void test_dense(run_env *e)
{
    CHECK(run_reset(e) == 0);
    const int32_t w = 20;
    uint64_t args[1] = {(uint64_t)w};
    const char *f[3] = {"g2", "o1", "o2"};
    CHECK(run_kernel(e, two_src, "two", f, 3, args, 1) == 0);
    int bad = 0;
    for (int32_t y = 0; y < 32; y++)
        for (int32_t x = 0; x < 32; x++) {
            float g = x >= 1 && x < w && y >= 2 && y < 7 ? (float)(x * 100 + y) : 0.0f;
            int i = x + 32 * y;
            if (rdf(e->tree, "g2", x, y, 0) != g || rdf(e->tree, "o1", i, 0, 0) != g * 2.0f ||
                rdf(e->tree, "o2", i, 0, 0) != (i % 2 ? 0.0f : g * 2.0f + (float)i)) {
                if (bad++ < 3)
                    fprintf(stderr, "two (%d,%d): g2 %g/%g\n", x, y, rdf(e->tree, "g2", x, y, 0),
                            g);
            }
        }
    CHECK(bad == 0);
}

int main(void)
{
    run_env e;
    int rc = run_init(&e);
    if (rc == 77)
        return 77;
    CHECK(rc == 0);
    if (rc != 0)
        CHECK_DONE();
    test_sparse(&e);
    test_dense(&e);
    run_done(&e);
    CHECK_DONE();
}
