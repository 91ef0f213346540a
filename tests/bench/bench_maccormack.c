/* plume-bench maccormack: MacCormack advection (with clamping) of three scalar fields over a
 * sparse tube domain — inner radius 0.32, outer 0.45 of the unit cube, around the z axis —
 * at 128^3 (--quick: 32^3), as in AsyncTaichi's benchmark (paper section 8.2, supplement 4.2):
 * the fields move through a stored velocity field (a rigid rotation about the tube's axis,
 * defined on the tube's voxels) along RK3 paths. Every kernel is a struct-for over the domain
 * field, as a solver iterating its fluid cells would be, and each field has kernels of its own
 * (a channel may use another scheme). Eager, optimized and each pass off (bench_sfg.h).
 * Targets (issue 6, 2-core CPU): optimized at least 2.8x faster than eager with at least 10x
 * fewer tasks. Most of each step's work is the path through the velocity, which the three
 * fields share: fused, the optimizer traces it once. */
#include "bench_sfg.h"

#if defined(PLUME_HAVE_KERNELS)

static const char *mc_src =
    "const f32 OMEGA = 0.02;\n"
    "kernel init(field<f32> dom, field<vec3> u, field<f32> a, field<f32> b, field<f32> q3,\n"
    "            i32 n) {\n"
    "    for (P in ivec3(0) .. ivec3(n)) {\n"
    "        vec2 d = (vec2(f32(P.x), f32(P.y)) + vec2(0.5)) / f32(n) - vec2(0.5);\n"
    "        f32 r = length(d);\n"
    "        if (r >= 0.32 && r <= 0.45) {\n"
    "            f32 c = f32(n) * 0.5 - 0.5;\n"
    "            dom[P] = 1.0;\n"
    "            // rigid rotation about the z axis through the centre, in voxels per step\n"
    "            u[P] = vec3(c - f32(P.y), f32(P.x) - c, 0.0) * OMEGA;\n"
    "            a[P] = d.x > 0.0 ? 1.0 : 0.0;\n"
    "            b[P] = sin(f32(P.z) * 0.2) * 0.5 + 0.5;\n"
    "            q3[P] = f32((P.x / 4 + P.y / 4 + P.z / 4) % 2);\n"
    "        }\n"
    "    }\n"
    "}\n"
    "// Where a particle at p (velocity k1 there) is after one step along dir * u: Ralston's RK3.\n"
    "func vec3 trace(field<vec3> u, vec3 p, vec3 k1, f32 dir) {\n"
    "    vec3 k2 = sample(u, p + 0.5 * dir * k1);\n"
    "    vec3 k3 = sample(u, p + 0.75 * dir * k2);\n"
    "    return p + dir * (2.0 * k1 + 3.0 * k2 + 4.0 * k3) / 9.0;\n"
    "}\n"
    "kernel fwd(field<f32> dom, field<vec3> u, field<f32> q, field<f32> qf) {\n"
    "    for (I in dom) { qf[I] = sample(q, trace(u, vec3(I), u[I], -1.0)); }\n"
    "}\n"
    "kernel bwd(field<f32> dom, field<vec3> u, field<f32> qf, field<f32> qb) {\n"
    "    for (I in dom) { qb[I] = sample(qf, trace(u, vec3(I), u[I], 1.0)); }\n"
    "}\n"
    "kernel corr(field<f32> dom, field<vec3> u, field<f32> q, field<f32> qf, field<f32> qb,\n"
    "            field<f32> qn) {\n"
    "    for (I in dom) {\n"
    "        vec3 p = trace(u, vec3(I), u[I], -1.0);\n"
    "        ivec3 b = ivec3(i32(floor(p.x)), i32(floor(p.y)), i32(floor(p.z)));\n"
    "        f32 lo = 1e30;\n"
    "        f32 hi = -1e30;\n"
    "        for (static i in 0 .. 2) {\n"
    "            for (static j in 0 .. 2) {\n"
    "                for (static k in 0 .. 2) {\n"
    "                    f32 s = q[b + ivec3(i, j, k)];\n"
    "                    lo = min(lo, s);\n"
    "                    hi = max(hi, s);\n"
    "                }\n"
    "            }\n"
    "        }\n"
    "        qn[I] = clamp(qf[I] + 0.5 * (q[I] - qb[I]), lo, hi);\n"
    "    }\n"
    "}\n"
    "kernel copy(field<f32> dom, field<f32> qn, field<f32> q) {\n"
    "    for (I in dom) { q[I] = qn[I]; }\n"
    "}\n";

/* slots: 0..2 the advected fields, 3 the domain, then per field its forward (4..6), backward
 * (7..9) and corrected (10..12) temporaries, so the three fields' kernels are independent;
 * 13 the velocity */
/* voxels per axis: 128 (--quick 32), or what the gpu suite asks for */
static int mc_n(const sfgb_run *r) { return r->quick ? 32 : bench_mc_n ? bench_mc_n : 128; }

static int mc_setup(sfgb_run *r)
{
    const char *nm[14] = {"q1", "q2", "q3", "dom", "f1", "f2", "f3", "b1", "b2", "b3",
                          "n1", "n2", "n3", "u"};
    eng_type ty[14];
    sfgb_check *chk = r->user;
    for (int i = 0; i < 14; i++) {
        ty[i] = i == 13 ? ENG_VEC3 : ENG_F32;
        chk->dim[i] = 3;
    }
    /* As the paper's benchmark lays them out (section 8.2: the three quantities adjacent in
     * memory, collocated, for cache-line use): per role a tree of its own in which the three
     * quantities are interleaved per voxel (q1 q2 q3 | f1 f2 f3 | b1 b2 b3 | n1 n2 n3), and
     * the domain and the velocity in trees of their own. A kernel of one quantity then drags
     * its neighbours' bytes through the cache, the fused kernel uses them.
     * PLUME_BENCH_TREES=group: all fourteen fields in one tree, each field's block one run;
     * =interleaved: all fourteen interleaved in one tree; =separate: a tree per field. */
    const char *how = getenv("PLUME_BENCH_TREES");
    if (!how || !strcmp(how, "channels")) {
        eng_field_desc d[3];
        static const int first[4] = {0, 4, 7, 10};
        for (int g = 0; g < 4; g++) {
            memset(d, 0, sizeof d);
            for (int i = 0; i < 3; i++) {
                d[i].name = nm[first[g] + i];
                d[i].type = ENG_F32;
                d[i].layout = "";
                d[i].voxel_size = 1.0;
            }
            if (eng_field_declare_interleaved(r->ctx, d, 3, &r->f[first[g]]) != ENG_OK)
                return sfgb_fail(r, nm[first[g]]);
        }
        if (!sfgb_field(r, 3, "dom", "", ENG_F32, 0, 1) ||
            !sfgb_field(r, 13, "u", "", ENG_VEC3, 0, 1))
            return 1;
    } else if (sfgb_group(r, 0, nm, 14, "", ty)) {
        return 1;
    }
    if (sfgb_compile(r, mc_src))
        return 1;
    char args[64];
    snprintf(args, sizeof args, "f3 f13 f0 f1 f2 %d", mc_n(r));
    if (sfgb_launch(r, "init", args) || eng_sync(r->ctx) != ENG_OK)
        return sfgb_fail(r, "init");
    return 0;
}

static int mc_step(sfgb_run *r, int rep)
{
    (void)rep;
    char a[64];
    for (int q = 0; q < 3; q++) {
        int f = 4 + q, b = 7 + q, n = 10 + q;
        snprintf(a, sizeof a, "f3 f13 f%d f%d", q, f);
        if (sfgb_launch(r, "fwd", a))
            return 1;
        snprintf(a, sizeof a, "f3 f13 f%d f%d", f, b);
        if (sfgb_launch(r, "bwd", a))
            return 1;
        snprintf(a, sizeof a, "f3 f13 f%d f%d f%d f%d", q, f, b, n);
        if (sfgb_launch(r, "corr", a))
            return 1;
        snprintf(a, sizeof a, "f3 f%d f%d", n, q);
        if (sfgb_launch(r, "copy", a))
            return 1;
    }
    return 0;
}

static const sfgb_case mc_case = {"maccormack", mc_setup, mc_step, 10, 2, 0, 3};

static int run_maccormack(bench_ctx *bctx)
{
    double tr, wr;
    sfgb_header();
    int rc = sfgb_case_run(&mc_case, bctx, &tr, &wr);
    printf("maccormack: %.2fx fewer tasks (target 10), %.2fx less wall time (target 2.8)\n", tr, wr);
    return rc;
}

#else

static int run_maccormack(bench_ctx *bctx)
{
    (void)bctx;
    fprintf(stderr, "plume-bench maccormack: this build has no kernels\n");
    return 1;
}

#endif

BENCH_SUITE("maccormack", "MacCormack advection of 3 fields over a sparse tube at 128^3: eager "
                          "vs optimized vs each pass off", run_maccormack)
