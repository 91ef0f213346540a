/* plume-bench micro: the ten microbenchmarks of AsyncTaichi's supplement, written in Plume's
 * kernel language, each run eager, optimized, and optimized with each pass disabled in turn
 * (bench_sfg.h). Targets (issue 6, 2-core CPU): geometric mean over the cases of at least 4x
 * fewer tasks launched and at least 2.2x less wall time, eager over optimized. */
#include "bench_sfg.h"

#if defined(PLUME_HAVE_KERNELS)

/* Sizes: dense 1-D arrays of N elements; the other cases give their own. */
static int N_of(sfgb_run *r) { return r->quick ? 1 << 12 : 1 << 20; }

/* The source with every "$N" replaced by n (ranges must be constants for fusion). */
static char *with_n(const char *tmpl, int n)
{
    static char buf[8192];
    char num[16];
    snprintf(num, sizeof num, "%d", n);
    size_t o = 0;
    for (const char *p = tmpl; *p && o + 16 < sizeof buf; p++) {
        if (p[0] == '$' && p[1] == 'N') {
            o += (size_t)snprintf(buf + o, sizeof buf - o, "%s", num);
            p++;
        } else {
            buf[o++] = *p;
        }
    }
    buf[o] = 0;
    return buf;
}

static char dense1[64];
static const char *dense_layout(sfgb_run *r)
{
    snprintf(dense1, sizeof dense1, "dense(i,%d)", N_of(r));
    return dense1;
}

static int sync_or_fail(sfgb_run *r) { return eng_sync(r->ctx) != ENG_OK ? sfgb_fail(r, "sync") : 0; }

static void check_1d(sfgb_run *r, int slot, int extent)
{
    sfgb_check *c = r->user;
    c->dim[slot] = 1;
    c->extent[slot] = extent;
}
static void check_dim(sfgb_run *r, int slot, int dim, int extent)
{
    sfgb_check *c = r->user;
    c->dim[slot] = dim;
    c->extent[slot] = extent;
}

/* ---- chain_copy: y = x + 1; z = y + 4 ---------------------------------------------------- */

static int chain_setup(sfgb_run *r)
{
    const char *L = dense_layout(r);
    if (!sfgb_field(r, 0, "x", L, ENG_F32, 0, 1) || !sfgb_field(r, 1, "y", L, ENG_F32, 0, 1) ||
        !sfgb_field(r, 2, "z", L, ENG_F32, 0, 1))
        return 1;
    if (sfgb_compile(r, with_n(
            "kernel init(field<f32, 1> x) { for (i in 0 .. $N) { x[i] = f32(i % 100); } }\n"
            "kernel cp1(field<f32, 1> x, field<f32, 1> y) { for (i in 0 .. $N) { y[i] = x[i] + 1.0; } }\n"
            "kernel cp2(field<f32, 1> y, field<f32, 1> z) { for (i in 0 .. $N) { z[i] = y[i] + 4.0; } }\n",
            N_of(r))))
        return 1;
    for (int i = 0; i < 3; i++)
        check_1d(r, i, N_of(r));
    return sfgb_launch(r, "init", "f0") || sync_or_fail(r);
}
static int chain_step(sfgb_run *r, int rep)
{
    (void)rep;
    return sfgb_launch(r, "cp1", "f0 f1") || sfgb_launch(r, "cp2", "f1 f2");
}

/* ---- increments: ten x[i] += 1 ----------------------------------------------------------- */

static int inc_setup(sfgb_run *r)
{
    if (!sfgb_field(r, 0, "x", dense_layout(r), ENG_F32, 0, 1))
        return 1;
    check_1d(r, 0, N_of(r));
    return sfgb_compile(r, with_n(
        "kernel inc(field<f32, 1> x) { for (i in 0 .. $N) { x[i] += 1.0; } }\n", N_of(r)));
}
static int inc_step(sfgb_run *r, int rep)
{
    (void)rep;
    for (int k = 0; k < 10; k++)
        if (sfgb_launch(r, "inc", "f0"))
            return 1;
    return 0;
}

/* ---- fill_array: ten fills with one constant ---------------------------------------------- */

static int fill_setup(sfgb_run *r)
{
    if (!sfgb_field(r, 0, "x", dense_layout(r), ENG_F32, 0, 1))
        return 1;
    check_1d(r, 0, N_of(r));
    return sfgb_compile(r, with_n(
        "kernel fill(field<f32, 1> x) { for (i in 0 .. $N) { x[i] = 3.0; } }\n", N_of(r)));
}
static int fill_step(sfgb_run *r, int rep)
{
    (void)rep;
    for (int k = 0; k < 10; k++)
        if (sfgb_launch(r, "fill", "f0"))
            return 1;
    return 0;
}

/* ---- sparse_saxpy: saxpy kernels over sparse 2-D fields ------------------------------------
 *
 * As in AsyncTaichi's benchmark source: x and y placed in one tree of 2-D pointer blocks of
 * 32^2, 4 x 4 blocks (CPU scale 2), a quarter of them written by a range loop each repetition,
 * then six y = alpha x + y struct-fors over x with the roles of the two fields swapped between
 * them. Small on purpose: the case measures launches and list generations more than
 * arithmetic. */

static const char *saxpy_src =
    "kernel initialize(field<f32, 2> a) {\n"
    "    for (P in ivec2(0) .. ivec2(128)) {\n"
    "        if ((P.x / 32 + P.y / 32) % 4 == 0) { a[P] = f32(P.x + P.y); }\n"
    "    }\n"
    "}\n"
    "kernel saxpy(field<f32, 2> x, field<f32, 2> y, f32 alpha) {\n"
    "    for (I in x) { y[I] = alpha * x[I] + y[I]; }\n"
    "}\n";

static int saxpy_setup(sfgb_run *r)
{
    const char *nm[2] = {"a", "b"};
    if (sfgb_group(r, 0, nm, 2, "pointer(ij,4).dense(ij,32)", NULL))
        return 1;
    for (int i = 0; i < 2; i++)
        check_dim(r, i, 2, 128);
    return sfgb_compile(r, saxpy_src);
}
static int saxpy_step(sfgb_run *r, int rep)
{
    (void)rep;
    return sfgb_launch(r, "initialize", "f0") || sfgb_launch(r, "saxpy", "f0 f1 2") ||
           sfgb_launch(r, "saxpy", "f1 f0 1.1") || sfgb_launch(r, "saxpy", "f1 f0 1.1") ||
           sfgb_launch(r, "saxpy", "f0 f1 1.1") || sfgb_launch(r, "saxpy", "f0 f1 1.1") ||
           sfgb_launch(r, "saxpy", "f0 f1 1.1");
}

/* ---- autodiff: loss by reduction, gradients accumulated, ten times ------------------------ */

static int ad_setup(sfgb_run *r)
{
    const char *L = dense_layout(r);
    if (!sfgb_field(r, 0, "x", L, ENG_F32, 0, 1) || !sfgb_field(r, 1, "gx", L, ENG_F32, 0, 1) ||
        !sfgb_field(r, 2, "loss", "dense(i,1)", ENG_F32, 0, 1))
        return 1;
    check_1d(r, 0, N_of(r));
    check_1d(r, 1, N_of(r));
    check_dim(r, 2, 0, 1);
    /* Values 0..3: the loss (below 2^24) is exact in any order of the atomic adds. */
    if (sfgb_compile(r, with_n(
            "kernel init(field<f32, 1> x) { for (i in 0 .. $N) { x[i] = f32(i % 4); } }\n"
            "kernel clear_loss(field<f32, 0> loss) { loss[] = 0.0; }\n"
            "kernel compute_loss(field<f32, 1> x, field<f32, 0> loss) {\n"
            "    for (i in 0 .. $N) { loss[] += x[i] * x[i]; }\n"
            "}\n"
            "kernel loss_grad(field<f32, 1> x, field<f32, 1> gx) {\n"
            "    for (i in 0 .. $N) { gx[i] += 2.0 * x[i]; }\n"
            "}\n",
            N_of(r))))
        return 1;
    return sfgb_launch(r, "init", "f0") || sync_or_fail(r);
}
static int ad_step(sfgb_run *r, int rep)
{
    (void)rep;
    for (int k = 0; k < 10; k++)
        if (sfgb_launch(r, "clear_loss", "f2") || sfgb_launch(r, "compute_loss", "f0 f2") ||
            sfgb_launch(r, "loss_grad", "f0 f1"))
            return 1;
    return 0;
}

/* ---- stencil_reduction: a stencil, a reduction and a clear over one sparse domain, three times
 *
 * As in AsyncTaichi's benchmark source (benchmarks/async_cases.py): a and b in 1-D pointer
 * blocks of 1024 (64 blocks per scale unit; CPU scale 2), the interior blocks written by a range
 * loop, then three rounds of b = 3-point stencil of a, total += b, b = 0, each a struct-for
 * over a. Values are small integers (a = i % 7) and `total` restarts each repetition, so every
 * sum stays below 2^24 and comes out exact in any order of the float additions. */

static int sr_setup(sfgb_run *r)
{
    int blocks = r->quick ? 8 : 128;
    char L[64];
    snprintf(L, sizeof L, "pointer(i,%d).dense(i,1024)", blocks);
    if (!sfgb_field(r, 0, "a", L, ENG_F32, 0, 1) || !sfgb_field(r, 1, "b", L, ENG_F32, 0, 1) ||
        !sfgb_field(r, 2, "total", "dense(i,1)", ENG_F32, 0, 1))
        return 1;
    check_1d(r, 0, blocks * 1024);
    check_1d(r, 1, blocks * 1024);
    check_dim(r, 2, 0, 1);
    return sfgb_compile(r, with_n(
        "kernel initialize(field<f32, 1> a, field<f32, 0> total) {\n"
        "    for (i in 1024 .. $N - 1024) { a[i] = f32(i % 7); }\n"
        "    total[] = 0.0;\n"
        "}\n"
        "kernel stencil(field<f32, 1> a, field<f32, 1> b) {\n"
        "    for (i in a) { b[i] = a[i - 1] + a[i] + a[i + 1]; }\n"
        "}\n"
        "kernel reduce(field<f32, 1> a, field<f32, 1> b, field<f32, 0> total) {\n"
        "    for (i in a) { total[] += b[i]; }\n"
        "}\n"
        "kernel clear_b(field<f32, 1> a, field<f32, 1> b) {\n"
        "    for (i in a) { b[i] = 0.0; }\n"
        "}\n",
        blocks * 1024));
}
static int sr_step(sfgb_run *r, int rep)
{
    (void)rep;
    if (sfgb_launch(r, "initialize", "f0 f2"))
        return 1;
    for (int k = 0; k < 3; k++)
        if (sfgb_launch(r, "stencil", "f0 f1") || sfgb_launch(r, "reduce", "f0 f1 f2") ||
            sfgb_launch(r, "clear_b", "f0 f1"))
            return 1;
    return 0;
}

/* ---- mpm_splitted: a 2-D particle-in-cell substep split into small kernels ----------------- */

static const char *mpm_src =
    "const i32 G = 128;\n"
    "const f32 DX = 1.0 / 128.0;\n"
    "kernel init(field<f32, 1> px, field<f32, 1> py, field<f32, 1> vx, field<f32, 1> vy) {\n"
    "    for (p in 0 .. $N) {\n"
    "        px[p] = 0.3 + 0.4 * f32(p % 97) / 97.0;\n"
    "        py[p] = 0.3 + 0.4 * f32((p / 97) % 89) / 89.0;\n"
    "        vx[p] = 0.0;\n"
    "        vy[p] = -1.0;\n"
    "    }\n"
    "}\n"
    "kernel clear_m(field<f32, 2> gm) { for (P in ivec2(0) .. ivec2(G)) { gm[P] = 0.0; } }\n"
    "kernel clear_vx(field<f32, 2> gx) { for (P in ivec2(0) .. ivec2(G)) { gx[P] = 0.0; } }\n"
    "kernel clear_vy(field<f32, 2> gy) { for (P in ivec2(0) .. ivec2(G)) { gy[P] = 0.0; } }\n"
    "kernel p2g(field<f32, 1> px, field<f32, 1> py, field<f32, 1> vx, field<f32, 1> vy,\n"
    "           field<f32, 2> gm, field<f32, 2> gx, field<f32, 2> gy) {\n"
    "    for (p in 0 .. $N) {\n"
    "        vec2 x = vec2(px[p], py[p]) / DX - vec2(0.5);\n"
    "        ivec2 b = ivec2(i32(floor(x.x)), i32(floor(x.y)));\n"
    "        vec2 f = x - vec2(f32(b.x), f32(b.y));\n"
    "        for (static i in 0 .. 2) {\n"
    "            for (static j in 0 .. 2) {\n"
    "                f32 w = (i == 0 ? 1.0 - f.x : f.x) * (j == 0 ? 1.0 - f.y : f.y);\n"
    "                ivec2 c = b + ivec2(i, j);\n"
    "                gm[c] += w;\n"
    "                gx[c] += w * vx[p];\n"
    "                gy[c] += w * vy[p];\n"
    "            }\n"
    "        }\n"
    "    }\n"
    "}\n"
    "kernel normalize_x(field<f32, 2> gm, field<f32, 2> gx) {\n"
    "    for (P in ivec2(0) .. ivec2(G)) { if (gm[P] > 0.0) { gx[P] = gx[P] / gm[P]; } }\n"
    "}\n"
    "kernel normalize_y(field<f32, 2> gm, field<f32, 2> gy, f32 dt) {\n"
    "    for (P in ivec2(0) .. ivec2(G)) { if (gm[P] > 0.0) { gy[P] = gy[P] / gm[P] - 9.8 * dt; } }\n"
    "}\n"
    "kernel bc_x(field<f32, 2> gx) {\n"
    "    for (P in ivec2(0) .. ivec2(G)) { if (P.x < 3 || P.x >= G - 3) { gx[P] = 0.0; } }\n"
    "}\n"
    "kernel bc_y(field<f32, 2> gy) {\n"
    "    for (P in ivec2(0) .. ivec2(G)) { if (P.y < 3 || P.y >= G - 3) { gy[P] = 0.0; } }\n"
    "}\n"
    "kernel g2p(field<f32, 1> px, field<f32, 1> py, field<f32, 1> vx, field<f32, 1> vy,\n"
    "           field<f32, 2> gx, field<f32, 2> gy, f32 dt) {\n"
    "    for (p in 0 .. $N) {\n"
    "        vec2 x = vec2(px[p], py[p]) / DX - vec2(0.5);\n"
    "        ivec2 b = ivec2(i32(floor(x.x)), i32(floor(x.y)));\n"
    "        vec2 f = x - vec2(f32(b.x), f32(b.y));\n"
    "        vec2 v = vec2(0.0);\n"
    "        for (static i in 0 .. 2) {\n"
    "            for (static j in 0 .. 2) {\n"
    "                f32 w = (i == 0 ? 1.0 - f.x : f.x) * (j == 0 ? 1.0 - f.y : f.y);\n"
    "                ivec2 c = b + ivec2(i, j);\n"
    "                v += w * vec2(gx[c], gy[c]);\n"
    "            }\n"
    "        }\n"
    "        vx[p] = v.x;\n"
    "        vy[p] = v.y;\n"
    "        px[p] = clamp(px[p] + dt * v.x, 0.05, 0.95);\n"
    "        py[p] = clamp(py[p] + dt * v.y, 0.05, 0.95);\n"
    "    }\n"
    "}\n";

static int mpm_setup(sfgb_run *r)
{
    int np = r->quick ? 1024 : 65536;
    char L1[32];
    snprintf(L1, sizeof L1, "dense(i,%d)", np);
    const char *nm[7] = {"px", "py", "vx", "vy", "gm", "gvx", "gvy"};
    for (int i = 0; i < 7; i++) {
        if (!sfgb_field(r, i, nm[i], i < 4 ? L1 : "dense(ij,128)", ENG_F32, 0, 1))
            return 1;
        check_dim(r, i, i < 4 ? 1 : 2, i < 4 ? np : 128);
    }
    if (sfgb_compile(r, with_n(mpm_src, np)))
        return 1;
    return sfgb_launch(r, "init", "f0 f1 f2 f3") || sync_or_fail(r);
}
static int mpm_step(sfgb_run *r, int rep)
{
    (void)rep;
    return sfgb_launch(r, "clear_m", "f4") || sfgb_launch(r, "clear_vx", "f5") ||
           sfgb_launch(r, "clear_vy", "f6") || sfgb_launch(r, "p2g", "f0 f1 f2 f3 f4 f5 f6") ||
           sfgb_launch(r, "normalize_x", "f4 f5") || sfgb_launch(r, "normalize_y", "f4 f6 0.0005") ||
           sfgb_launch(r, "bc_x", "f5") || sfgb_launch(r, "bc_y", "f6") ||
           sfgb_launch(r, "g2p", "f0 f1 f2 f3 f5 f6 0.0005");
}

/* ---- simple_advection: semi-Lagrangian advection of three fields, ten times -------------
 *
 * As in AsyncTaichi's benchmark source (benchmarks/async_advection.py): dense 256^2 fields, a
 * rotating velocity field sampled bilinearly along RK3 paths, the three components of x
 * advected by one semi-Lagrangian kernel each, then copied back in one kernel. The three
 * advections trace the same paths, which is what fusion can share. As Taichi's components
 * share one SNode, the fields are placed in one tree; the loops iterate the velocity's
 * field. */

static const char *adv_src =
    "const f32 DX = 1.0 / 256.0;\n"
    "const f32 INV_DX = 256.0;\n"
    "const f32 DT = 0.01;\n"
    "func vec2 clamp_pos(vec2 p) {\n"
    "    return vec2(min(1.0 - 1e-4 - DX + 0.5 * DX, max(p.x, 0.5 * DX)),\n"
    "                min(1.0 - 1e-4 - DX + 0.5 * DX, max(p.y, 0.5 * DX)));\n"
    "}\n"
    "func f32 bilerp(field<f32, 2> x, vec2 p0) {\n"
    "    vec2 p = clamp_pos(p0) * INV_DX - vec2(0.5);\n"
    "    ivec2 I = ivec2(i32(floor(p.x)), i32(floor(p.y)));\n"
    "    vec2 f = p - vec2(f32(I.x), f32(I.y));\n"
    "    vec2 g = vec2(1.0) - f;\n"
    "    return x[I] * (g.x * g.y) + x[I + ivec2(1, 0)] * (f.x * g.y) +\n"
    "           x[I + ivec2(0, 1)] * (g.x * f.y) + x[I + ivec2(1, 1)] * (f.x * f.y);\n"
    "}\n"
    "func vec2 velocity(field<f32, 2> vx, field<f32, 2> vy, vec2 p) {\n"
    "    return vec2(bilerp(vx, p), bilerp(vy, p));\n"
    "}\n"
    "kernel init(field<f32, 2> vx, field<f32, 2> vy, field<f32, 2> x0, field<f32, 2> x1, field<f32, 2> x2) {\n"
    "    for (P in ivec2(0) .. ivec2(256)) {\n"
    "        vx[P] = f32(P.y) / 256.0 - 0.5;\n"
    "        vy[P] = 0.5 - f32(P.x) / 256.0;\n"
    "        f32 r = length(vec2(f32(P.x), f32(P.y)) / 256.0 - vec2(0.5, 0.6));\n"
    "        f32 s = r < 0.2 ? 1.0 : 0.0;\n"
    "        x0[P] = s;\n"
    "        x1[P] = s * 0.5 + f32(P.x % 7) * 0.01;\n"
    "        x2[P] = s * 0.25 + f32(P.y % 5) * 0.02;\n"
    "    }\n"
    "}\n"
    "kernel semi_lagrangian(field<f32, 2> vx, field<f32, 2> vy, field<f32, 2> x, field<f32, 2> nx) {\n"
    "    for (I in vx) {\n"
    "        vec2 p = (vec2(f32(I.x), f32(I.y)) + vec2(0.5)) * DX;\n"
    "        vec2 v1 = velocity(vx, vy, p);\n"
    "        vec2 p1 = p - 0.5 * DT * v1;\n"
    "        vec2 v2 = velocity(vx, vy, p1);\n"
    "        vec2 p2 = p - 0.75 * DT * v2;\n"
    "        vec2 v3 = velocity(vx, vy, p2);\n"
    "        vec2 q = p - DT * (2.0 / 9.0 * v1 + 1.0 / 3.0 * v2 + 4.0 / 9.0 * v3);\n"
    "        nx[I] = bilerp(x, q);\n"
    "    }\n"
    "}\n"
    "kernel copy(field<f32, 2> vx, field<f32, 2> x0, field<f32, 2> x1, field<f32, 2> x2,\n"
    "           field<f32, 2> n0, field<f32, 2> n1, field<f32, 2> n2) {\n"
    "    for (I in vx) { x0[I] = n0[I]; x1[I] = n1[I]; x2[I] = n2[I]; }\n"
    "}\n";

static int adv_setup(sfgb_run *r)
{
    const char *nm[8] = {"x0", "x1", "x2", "n0", "n1", "n2", "vx", "vy"};
    if (sfgb_group(r, 0, nm, 8, "dense(ij,256)", NULL))
        return 1;
    for (int i = 0; i < 3; i++)
        check_dim(r, i, 2, 256);
    if (sfgb_compile(r, adv_src))
        return 1;
    return sfgb_launch(r, "init", "f6 f7 f0 f1 f2") || sync_or_fail(r);
}
static int adv_step(sfgb_run *r, int rep)
{
    (void)rep;
    for (int k = 0; k < 10; k++)
        if (sfgb_launch(r, "semi_lagrangian", "f6 f7 f0 f3") ||
            sfgb_launch(r, "semi_lagrangian", "f6 f7 f1 f4") ||
            sfgb_launch(r, "semi_lagrangian", "f6 f7 f2 f5") ||
            sfgb_launch(r, "copy", "f6 f0 f1 f2 f3 f4 f5"))
            return 1;
    return 0;
}

/* ---- multires: three 2x downsamplings over a four-level hierarchy --------------------------
 *
 * As in AsyncTaichi's benchmark source: four 1-D fields, level l with n / 2^l elements in
 * pointer blocks of pointer(16).dense(16) (n = 2^20 at CPU scale 2; --quick 2^14), level 0
 * written once, then each repetition copies the even elements of level l to level l + 1 at
 * i / 2, a struct-for over level l. */

static const char *mr_src =
    "kernel init(field<f32, 1> f) { for (i in 0 .. $N) { f[i] = f32(i); } }\n"
    "kernel downsample(field<f32, 1> fine, field<f32, 1> coarse) {\n"
    "    for (i in fine) { if (i % 2 == 0) { coarse[i / 2] = fine[i]; } }\n"
    "}\n";

static int mr_setup(sfgb_run *r)
{
    const char *nm[4] = {"l0", "l1", "l2", "l3"};
    int n = r->quick ? 1 << 14 : 1 << 20;
    for (int i = 0; i < 4; i++) {
        char layout[96];
        snprintf(layout, sizeof layout, "pointer(i,%d).pointer(i,16).dense(i,16)", (n >> i) / 256);
        if (!sfgb_field(r, i, nm[i], layout, ENG_F32, 0, 1))
            return 1;
        check_1d(r, i, n >> i);
    }
    if (sfgb_compile(r, with_n(mr_src, n)))
        return 1;
    return sfgb_launch(r, "init", "f0") || sync_or_fail(r);
}
static int mr_step(sfgb_run *r, int rep)
{
    (void)rep;
    return sfgb_launch(r, "downsample", "f0 f1") || sfgb_launch(r, "downsample", "f1 f2") ||
           sfgb_launch(r, "downsample", "f2 f3");
}

/* ---- deep_hierarchy: jitter over an eight-level pointer hierarchy --------------------------
 *
 * As in AsyncTaichi's benchmark source: eight levels of 4-way pointers over dense leaves of 8
 * (524288 elements at CPU scale 2; --quick: four levels), every element written once, then
 * five x[i] += x[i + 1] (even i) struct-fors a repetition. Not fusible; what the optimizer
 * can remove is the list generation of every level before each loop. */

static int deep_setup(sfgb_run *r)
{
    int levels = r->quick ? 4 : 8, n = 8;
    char layout[160] = "";
    for (int l = 0; l < levels; l++) {
        strcat(layout, "pointer(i,4).");
        n *= 4;
    }
    strcat(layout, "dense(i,8)");
    if (!sfgb_field(r, 0, "x", layout, ENG_F32, 0, 1))
        return 1;
    check_1d(r, 0, n);
    if (sfgb_compile(r, with_n(
            "kernel init(field<f32, 1> x) { for (i in 0 .. $N) { x[i] = f32(i % 5); } }\n"
            "kernel jitter(field<f32, 1> x) { for (i in x) { if (i % 2 == 0) { x[i] += x[i + 1]; } } }\n",
            n)))
        return 1;
    return sfgb_launch(r, "init", "f0") || sync_or_fail(r);
}
static int deep_step(sfgb_run *r, int rep)
{
    (void)rep;
    for (int k = 0; k < 5; k++)
        if (sfgb_launch(r, "jitter", "f0"))
            return 1;
    return 0;
}

static const sfgb_case micro_cases[] = {
    {"chain_copy", chain_setup, chain_step, 20, 2, 0, 3},
    {"increments", inc_setup, inc_step, 20, 2, 0, 1},
    {"fill_array", fill_setup, fill_step, 20, 2, 0, 1},
    {"sparse_saxpy", saxpy_setup, saxpy_step, 200, 2, 0, 2},
    {"autodiff", ad_setup, ad_step, 5, 2, 0, 3},
    {"stencil_reduction", sr_setup, sr_step, 20, 2, 0, 3},
    /* float atomics of the particle scatter land in a different order run to run */
    {"mpm_splitted", mpm_setup, mpm_step, 20, 2, 1e-3, 7},
    {"simple_advection", adv_setup, adv_step, 3, 1, 0, 3},
    {"multires", mr_setup, mr_step, 10, 2, 0, 4},
    {"deep_hierarchy", deep_setup, deep_step, 20, 2, 0, 1},
};

static int run_micro(bench_ctx *bctx)
{
    int fail = 0, n = 0;
    double lt = 0, lw = 0;
    const char *only = bctx->argc > 0 ? bctx->argv[0] : NULL;
    sfgb_header();
    for (size_t i = 0; i < sizeof micro_cases / sizeof micro_cases[0]; i++) {
        if (only && strcmp(only, micro_cases[i].name))
            continue;
        double tr = 1, wr = 1;
        if (sfgb_case_run(&micro_cases[i], bctx, &tr, &wr)) {
            fail = 1;
            continue;
        }
        lt += log(tr);
        lw += log(wr);
        n++;
    }
    if (n) {
        double gt = exp(lt / n), gw = exp(lw / n);
        printf("geometric mean over %d cases: %.2fx fewer tasks (target 4), %.2fx less wall time "
               "(target 2.2)\n", n, gt, gw);
        json_array_append_new(bctx->cases, json_pack("{s:s, s:i, s:f, s:f}", "name", "geomean",
                                                     "cases", n, "task_ratio", gt, "speedup", gw));
    }
    return fail;
}

#else

static int run_micro(bench_ctx *bctx)
{
    (void)bctx;
    fprintf(stderr, "plume-bench micro: this build has no kernels (needs LLVM 16 and every "
                    "compiler stage)\n");
    return 1;
}

#endif

BENCH_SUITE("micro", "AsyncTaichi's ten microbenchmarks: eager vs optimized vs each pass off "
                     "[case]", run_micro)
