/* Fields placed in one tree (eng_field_declare_group): shared cells on the host side, kernels
 * that write one field at another's loop index without activating anything, one list for the
 * whole group, deactivation through a sibling, clearing one member, and the same bits queued
 * and eager when the optimizer fuses kernels over different members. */
#include "engine_test.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static eng_field_desc desc_of(const char *name, eng_type type, const char *layout, float bg)
{
    return et_desc(name, type, layout, 1.0, bg);
}

/* Three fields declared together in c (aos: interleaved per voxel); exits when that fails. */
static void group3(eng_context *c, const char *prefix, int aos, eng_field *out[3])
{
    static char names[3][32];
    eng_field_desc d[3];
    for (int i = 0; i < 3; i++) {
        snprintf(names[i], sizeof names[i], "%s%d", prefix, i);
        d[i] = desc_of(names[i], i == 1 ? ENG_VEC3 : ENG_F32, "", (float)(i + 1));
    }
    if ((aos ? eng_field_declare_interleaved(c, d, 3, out) : eng_field_declare_group(c, d, 3, out)) !=
        ENG_OK) {
        fprintf(stderr, "declaring group %s: %s\n", prefix, eng_error(c));
        exit(1);
    }
}

static void test_host_view(int aos)
{
    eng_context *c = et_context(2);
    eng_field *g[3];
    group3(c, "h", aos, g);
    CHECK(eng_field_count(c) == 3);
    CHECK(eng_field_components(g[1]) == 3);
    /* a voxel written in one member activates its block for all; the others read background */
    et_put(c, g[0], 3, 4, 5, 7.0f);
    CHECK(eng_field_block_count(g[2]) == 1);
    CHECK(eng_field_active_voxels(g[1]) == 512);
    CHECK(et_at(g[0], 3, 4, 5, 0) == 7.0f);
    CHECK(et_at(g[1], 3, 4, 5, 2) == 2.0f);
    CHECK(et_at(g[2], 3, 4, 5, 0) == 3.0f);
    /* block access per member: each sees its own values */
    float vals[3 * 512];
    uint64_t mask[8];
    int32_t o[3] = {0, 0, 0};
    CHECK(eng_field_read_block(g[1], o, vals, mask) == 1);
    CHECK(vals[0] == 2.0f && vals[3 * 511 + 2] == 2.0f && mask[7] == ~0ull);
    CHECK(eng_field_read_block(g[0], o, vals, NULL) == 1);
    CHECK(vals[3 * 64 + 4 * 8 + 5] == 7.0f && vals[0] == 1.0f);
    /* a block written whole lands in this member only, whatever the stride */
    for (int n = 0; n < 3 * 512; n++)
        vals[n] = (float)n;
    CHECK_OK(c, eng_field_write_block(c, g[1], o, vals, NULL));
    CHECK(et_at(g[1], 0, 0, 1, 2) == 5.0f && et_at(g[1], 7, 7, 7, 0) == 3.0f * 511);
    CHECK(et_at(g[0], 3, 4, 5, 0) == 7.0f && et_at(g[2], 0, 0, 1, 0) == 3.0f);
    /* only fields whose block is one run hand out a pointer */
    CHECK((eng_field_block_data(c, g[2], o, 0) != NULL) == !aos);
    /* the tree's memory is counted once: two members with one block cost less than two
     * fields with one block each in trees of their own */
    uint64_t shared = eng_memory_bytes(c);
    eng_context *c2 = et_context(2);
    eng_field *a = et_field(c2, "a", 3, ENG_F32, 0.0f);
    eng_field *b = et_field(c2, "b", 3, ENG_VEC3, 0.0f);
    eng_field *e = et_field(c2, "e", 3, ENG_F32, 0.0f);
    et_put(c2, a, 0, 0, 0, 1.0f);
    et_put(c2, b, 0, 0, 0, 1.0f);
    et_put(c2, e, 0, 0, 0, 1.0f);
    uint64_t apart = eng_memory_bytes(c2);
    CHECK(shared > 0 && shared < apart);
    eng_destroy(c2);
    /* clearing one member resets its values; the cells stay, the siblings keep theirs */
    et_put(c, g[2], 3, 4, 5, 9.0f);
    eng_field_clear(c, g[0]);
    CHECK(et_at(g[0], 3, 4, 5, 0) == 1.0f);
    CHECK(et_at(g[2], 3, 4, 5, 0) == 9.0f);
    CHECK(eng_field_block_count(g[0]) == 1);
    eng_destroy(c);
}

static void test_errors(void)
{
    eng_context *c = et_context(1);
    eng_field *out[2] = {NULL, NULL};
    eng_field_desc d[2] = {desc_of("p", ENG_F32, "", 0.0f),
                           desc_of("q", ENG_F32, "pointer(ijk,64).dense(ijk,4)", 0.0f)};
    CHECK(eng_field_declare_group(c, d, 2, out) == ENG_EINVAL);
    CHECK(strstr(eng_error(c), "'q'") && strstr(eng_error(c), "one layout"));
    d[1] = desc_of("p", ENG_F32, "", 0.0f);
    CHECK(eng_field_declare_group(c, d, 2, out) == ENG_EEXIST);
    CHECK(eng_field_count(c) == 0 && eng_field_find(c, "p") == NULL);
    d[1] = desc_of("q", ENG_F32, NULL, 0.0f); /* NULL and "" both name the default layout */
    CHECK_OK(c, eng_field_declare_group(c, d, 2, out));
    CHECK(eng_field_count(c) == 2 && out[0] && out[1]);
    eng_destroy(c);
}

static const char *saxpy_src =
    "kernel saxpy(field<f32> x, field<f32> y, f32 alpha) {\n"
    "    for (I in x) { y[I] = alpha * x[I] + y[I]; }\n"
    "}\n"
    "kernel prune(field<f32> x, field<f32> y) {\n"
    "    for (I in x) { if (I.x >= 8) { deactivate(y, I); } }\n"
    "}\n";

/* saxpy between two members, three times, then once more after a deactivation through y.
 * Returns the list generations run by the three saxpys. */
static uint64_t run_saxpy(int eager, int grouped, float out[4])
{
    eng_context *c = et_context(2);
    eng_mode m = {eager, 0, 0, 0};
    CHECK_OK(c, eng_set_mode(c, &m));
    eng_field *x, *y;
    if (grouped) {
        eng_field_desc d[2] = {desc_of("x", ENG_F32, "", 0.0f), desc_of("y", ENG_F32, "", 0.0f)};
        eng_field *g[2];
        CHECK_OK(c, eng_field_declare_group(c, d, 2, g));
        x = g[0];
        y = g[1];
    } else {
        x = et_field(c, "x", 3, ENG_F32, 0.0f);
        y = et_field(c, "y", 3, ENG_F32, 0.0f);
    }
    et_put(c, x, 0, 0, 0, 1.0f);
    et_put(c, x, 9, 1, 2, 2.0f);
    eng_program *p = et_compile(c, saxpy_src);
    eng_kernel *k = p ? eng_program_find(p, "saxpy") : NULL;
    uint64_t lg = 0;
    if (k) {
        eng_arg xy[3] = {et_f(x), et_f(y), et_s(2.0)}, yx[3] = {et_f(y), et_f(x), et_s(0.5)};
        eng_stats s0, s1;
        CHECK_OK(c, eng_sync(c));
        eng_get_stats(c, &s0);
        CHECK_OK(c, eng_launch(c, k, xy, 3)); /* y = 2x + y: y(0) = 2, y(9,1,2) = 4 */
        CHECK_OK(c, eng_launch(c, k, yx, 3)); /* x = y/2 + x: x(0) = 2, x(9,1,2) = 4 */
        CHECK_OK(c, eng_launch(c, k, xy, 3)); /* y = 2x + y: y(0) = 6, y(9,1,2) = 12 */
        CHECK_OK(c, eng_sync(c));
        eng_get_stats(c, &s1);
        lg = s1.listgens - s0.listgens;
        out[0] = et_at(y, 0, 0, 0, 0);
        out[1] = et_at(y, 9, 1, 2, 0);
        eng_arg pr[2] = {et_f(x), et_f(y)};
        et_run(c, p, "prune", pr, 2);
        /* deactivating y's cells in the block at x = 8.. deactivates x's when they share a tree */
        out[2] = et_at(x, 9, 1, 2, 0);
        out[3] = (float)eng_field_block_count(x);
    }
    eng_destroy(c);
    return lg;
}

static void test_saxpy(void)
{
    float sep[4], grp[4], grp_eager[4];
    uint64_t lg_sep = run_saxpy(0, 0, sep);
    uint64_t lg_grp = run_saxpy(0, 1, grp);
    run_saxpy(1, 1, grp_eager);
    for (int i = 0; i < 2; i++) {
        CHECK(sep[i] == (i ? 12.0f : 6.0f));
        CHECK(grp[i] == sep[i]);
        CHECK(grp_eager[i] == sep[i]);
    }
    /* apart: x keeps its block at x = 8..; together: gone with y's */
    CHECK(sep[2] == 4.0f && sep[3] == 2.0f);
    CHECK(grp[2] == 0.0f && grp[3] == 1.0f);
    CHECK(grp_eager[2] == 0.0f && grp_eager[3] == 1.0f);
    /* apart, each saxpy activates the field it writes, so the next one's lists (one per level
     * above the leaf) are rebuilt; together, no saxpy changes the tree's mask and its lists are
     * made once */
    CHECK(lg_grp >= 1);
    CHECK(lg_sep == 3 * lg_grp);
}

/* Three members advected by one velocity, one kernel per member: queued, the three kernels
 * fuse over the members' shared loop, and the results are eager's bits. */
static const char *adv_src =
    "kernel adv(field<f32> q, field<f32> qo, field<vec3> u) {\n"
    "    for (I in qo) {\n"
    "        vec3 p = vec3(I) - 0.7 * u[I];\n"
    "        qo[I] = sample(q, p);\n"
    "    }\n"
    "}\n"
    "kernel setu(field<vec3> u) { for (I in u) { u[I] = vec3(0.3, -0.2, 0.5); } }\n";

static void run_adv(int eager, int aos, float *out, int n, uint64_t *fused)
{
    eng_context *c = et_context(2);
    eng_mode m = {eager, 0, 0, 0};
    CHECK_OK(c, eng_set_mode(c, &m));
    eng_field *q[3], *qo[3];
    group3(c, "q", aos, q);
    group3(c, "o", 0, qo);
    eng_field *u = et_field(c, "u", 3, ENG_VEC3, 0.0f);
    /* two blocks of every tree, with values that vary */
    for (int b = 0; b < 2; b++)
        for (int v = 0; v < 512; v++) {
            int x = 8 * b + v / 64, y = (v / 8) % 8, z = v % 8;
            int32_t ijk[3] = {x, y, z};
            float val[3] = {(float)(v % 13), (float)(v % 7), (float)(v % 5)};
            eng_field_write(c, q[0], ijk, val);
            eng_field_write(c, q[2], ijk, val + 1);
            eng_field_write(c, qo[0], ijk, val + 2);
            eng_field_write(c, u, ijk, val);
        }
    eng_program *p = et_compile(c, adv_src);
    eng_kernel *ka = p ? eng_program_find(p, "adv") : NULL;
    eng_kernel *ku = p ? eng_program_find(p, "setu") : NULL;
    if (ka && ku) {
        eng_arg su[1] = {et_f(u)};
        CHECK_OK(c, eng_launch(c, ku, su, 1));
        eng_stats s0, s1;
        CHECK_OK(c, eng_sync(c));
        eng_get_stats(c, &s0);
        for (int i = 0; i < 3; i += 2) {
            eng_arg a[3] = {et_f(q[i]), et_f(qo[i]), et_f(u)};
            CHECK_OK(c, eng_launch(c, ka, a, 3));
        }
        CHECK_OK(c, eng_sync(c));
        eng_get_stats(c, &s1);
        *fused = s1.tasks_fused - s0.tasks_fused;
    }
    int k = 0;
    for (int x = 0; x < 16 && k < n; x++)
        for (int y = 0; y < 8; y++)
            for (int z = 0; z < 8; z += 3) {
                out[k++] = et_at(qo[0], x, y, z, 0);
                out[k++] = et_at(qo[2], x, y, z, 0);
            }
    eng_destroy(c);
}

static void test_fused_advection(int aos)
{
    enum { N = 16 * 8 * 3 * 2 };
    static float e[N], q[N];
    uint64_t fe = 0, fq = 0;
    run_adv(1, aos, e, N, &fe);
    run_adv(0, aos, q, N, &fq);
    CHECK(!memcmp(e, q, sizeof e));
    CHECK(fe == 0 && fq >= 1);
    /* one value against C: at (4,4,3) the point (4,4,3) - 0.7 (0.3,-0.2,0.5) lies between
     * voxels 3..4, 4..5, 2..3; q0 is v % 13 with v = 64x + 8y + z */
    double px = 4 - 0.21, py = 4 + 0.14, pz = 3 - 0.35, want = 0;
    for (int cx = 0; cx < 2; cx++)
        for (int cy = 0; cy < 2; cy++)
            for (int cz = 0; cz < 2; cz++) {
                int x = (int)px + cx, y = (int)py + cy, z = (int)pz + cz;
                double w = (cx ? px - (int)px : 1 - (px - (int)px)) *
                           (cy ? py - (int)py : 1 - (py - (int)py)) *
                           (cz ? pz - (int)pz : 1 - (pz - (int)pz));
                want += w * ((64 * x + 8 * y + z) % 13);
            }
    int k = ((4 * 8 + 4) * 3 + 1) * 2; /* x = 4, y = 4, z = 3 (the second of 0, 3, 6) */
    CHECK_NEAR(e[k], want, 1e-5);
}

/* In dir (PLUME_IR_DUMP), the selects of a background block ("rd.base") in the LLVM module of
 * the task whose name has a '+' (fused: 1) or not (0); -1 when there is no such task. */
static int bg_selects(const char *dir, int fused)
{
    DIR *d = opendir(dir);
    int count = -1;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 3, ".ir") != 0)
            continue;
        char path[1024], line[256] = "";
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f || !fgets(line, sizeof line, f) || strncmp(line, "# task adv", 10) != 0 ||
            (strchr(line, '+') != NULL) != fused) {
            if (f)
                fclose(f);
            continue;
        }
        fclose(f);
        snprintf(path + strlen(path) - 3, 8, ".ll");
        if (!(f = fopen(path, "r")))
            continue;
        count = 0;
        while (fgets(line, sizeof line, f))
            if (strstr(line, "%rd.base") && strstr(line, "= select"))
                count++;
        fclose(f);
    }
    if (d)
        closedir(d);
    return count;
}

/* The fused samples of members side by side in one tree take the background block (read in
 * place of an inactive block) once per corner for all of them: the fused task's LLVM has no
 * more such selects than one member's task alone (it had one per member and corner when each
 * member's read took its own slot's block: engine/codegen/cached_read.c, read_base). */
static void test_shared_background(void)
{
    char dir[] = "/tmp/plume-test-groups-XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(stderr, "mkdtemp failed\n");
        check_failures++;
        return;
    }
    setenv("PLUME_IR_DUMP", dir, 1);
    setenv("PLUME_IR_DUMP_LLVM", "1", 1);
    setenv("PLUME_KERNEL_CACHE", "off", 1);
    enum { N = 16 * 8 * 3 * 2 };
    static float out[N];
    uint64_t fused = 0;
    run_adv(1, 1, out, N, &fused);
    run_adv(0, 1, out, N, &fused);
    unsetenv("PLUME_IR_DUMP");
    unsetenv("PLUME_IR_DUMP_LLVM");
    unsetenv("PLUME_KERNEL_CACHE");
    int one = bg_selects(dir, 0), both = bg_selects(dir, 1);
    CHECK(one > 0 && both > 0);
    CHECK(both <= one);
    char cmd[1100];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* A read of one member at a computed voxel after the task wrote that voxel of it (through
 * another index expression, equal at run time), while another member of the tree was read
 * there first: the read sees the written value. The members share their lookups, so
 * whatever was looked up before the write (the block, then missing) must be forgotten for
 * every member of the tree (engine/codegen/cached_read.c). */
static void test_read_after_write(void)
{
    eng_context *c = et_context(2);
    eng_field *m[2];
    eng_field_desc d[2] = {desc_of("rw_a", ENG_F32, "", 1.0f), desc_of("rw_b", ENG_F32, "", 2.0f)};
    CHECK_OK(c, eng_field_declare_group(c, d, 2, m));
    eng_field *src = et_field(c, "rw_src", 3, ENG_F32, 0.0f);
    eng_field *dst = et_field(c, "rw_dst", 3, ENG_F32, 0.0f);
    for (int b = 0; b < 2; b++)
        for (int v = 0; v < 512; v++)
            et_put(c, src, 8 * b + v / 64, (v / 8) % 8, v % 8, (float)(v % 11) + 0.5f);
    eng_program *p = et_compile(c,
        "kernel raw2(field<f32> src, field<f32> a, field<f32> b, field<f32> dst, i32 k) {\n"
        "    for (I in src) {\n"
        "        ivec3 p = ivec3(I.y, I.x, I.z);\n"
        "        ivec3 w = ivec3(I.y + k, I.x, I.z);\n"
        "        f32 s = a[p] + b[p] + 0.0 * (a[p + ivec3(1, 0, 0)] + b[p + ivec3(1, 0, 0)]);\n"
        "        b[w] = s + src[I];\n"
        "        dst[I] = b[p] + 0.0 * b[p + ivec3(1, 0, 0)];\n"
        "    }\n"
        "}\n");
    eng_arg args[5] = {et_f(src), et_f(m[0]), et_f(m[1]), et_f(dst), et_s(0)};
    if (p && et_run(c, p, "raw2", args, 5) == 0) {
        int bad = 0;
        for (int b = 0; b < 2; b++)
            for (int v = 0; v < 512; v++) {
                int x = 8 * b + v / 64, y = (v / 8) % 8, z = v % 8;
                float want = 3.0f + (float)(v % 11) + 0.5f;
                float got = et_at(dst, x, y, z, 0);
                if (got != want && bad++ < 5)
                    fprintf(stderr, "group read after write (%d,%d,%d): %g, expected %g\n", x, y,
                            z, got, want);
            }
        CHECK(bad == 0);
    } else {
        CHECK(!"raw2 compiles and runs");
    }
    eng_destroy(c);
}

/* A stencil over members of one tree, interleaved per voxel (each member's stride is the
 * whole 20-byte element) or one run per member: reads at I + c in the neighbouring blocks
 * (some inactive: each member's background), a write at I; as a C loop computes it. The
 * interleaved layout takes the fast struct_for copy with the member's stride. */
static float st_val(int x, int y, int z, int m) { return (float)((x * 5 + y * 3 + z + 7 * m) % 11); }

static void test_stencil(int aos)
{
    eng_context *c = et_context(2);
    eng_field *g[3];
    group3(c, "s", aos, g);
    /* blocks at x = 0 and x = 8 (y, z in 0..7); the rest inactive */
    for (int x = 0; x < 16; x++)
        for (int y = 0; y < 8; y++)
            for (int z = 0; z < 8; z++) {
                int32_t ijk[3] = {x, y, z};
                float v0[3] = {st_val(x, y, z, 0)};
                float v1[3] = {st_val(x, y, z, 1), st_val(x, y, z, 2), st_val(x, y, z, 3)};
                eng_field_write(c, g[0], ijk, v0);
                eng_field_write(c, g[1], ijk, v1);
            }
    eng_program *p = et_compile(c,
        "kernel st(field<f32> a, field<vec3> v, field<f32> o) {\n"
        "    for (I in a) {\n"
        "        o[I] = a[I + ivec3(1, 0, 0)] - 2.0 * a[I - ivec3(0, 0, 1)]\n"
        "             + v[I + ivec3(0, 1, 0)].y * 0.5 + v[I].z;\n"
        "    }\n"
        "}\n");
    eng_arg args[3] = {et_f(g[0]), et_f(g[1]), et_f(g[2])};
    if (et_run(c, p, "st", args, 3) == 0) {
        int bad = 0;
        for (int x = 0; x < 16; x++)
            for (int y = 0; y < 8; y++)
                for (int z = 0; z < 8; z++) {
                    /* backgrounds: a 1, v 2, o 3 (group3) */
                    float ax = x + 1 < 16 ? st_val(x + 1, y, z, 0) : 1.0f;
                    float az = z > 0 ? st_val(x, y, z - 1, 0) : 1.0f;
                    float vy = y + 1 < 8 ? st_val(x, y + 1, z, 2) : 2.0f;
                    float want = ax - 2.0f * az + vy * 0.5f + st_val(x, y, z, 3);
                    float got = et_at(g[2], x, y, z, 0);
                    if (got != want && bad++ < 5)
                        fprintf(stderr, "stencil aos=%d (%d,%d,%d): %g, expected %g\n", aos, x,
                                y, z, got, want);
                }
        CHECK(bad == 0);
    }
    eng_destroy(c);
}

int main(void)
{
    test_host_view(0);
    test_host_view(1);
    test_errors();
    test_saxpy();
    test_fused_advection(0);
    test_fused_advection(1);
    test_read_after_write();
    test_stencil(0);
    test_stencil(1);
    test_shared_background();
    if (check_failures)
        fprintf(stderr, "%d checks failed\n", check_failures);
    return check_failures ? 1 : 0;
}
