/* test_api.c — the front end's API as the plugin and the lowering use it: kernel parameters
 * (ports), field-access bits through function calls, parallel regions and slots, options,
 * diagnostics records, buffers that are not NUL-terminated, the C locale for float literals,
 * and several threads compiling at once (no shared state). */
#include <locale.h>
#include <pthread.h>

#include "lang_test.h"

static const char *const ports_src =
    "func bump(field<vec3> v, ivec3 I) { v[I] += vec3(1.0); }\n"
    "func f32 peek(field<f32> f, ivec3 I) { return f[I]; }\n"
    "kernel k(field<f32> a, field<f32> b, field<f32, 0> s, field<vec3> v, field<vec3> w,\n"
    "         f32 dt, ivec3 off, field<i32, 1> line, field<f32, 2> img) {\n"
    "    s[] = 0.0;\n"
    "    bump(w, off);\n"
    "    for (I in a) {\n"
    "        f32 x = peek(a, I) * dt;\n"
    "        b[I] = x;\n"
    "        s[] += x;\n"
    "        bump(v, I);\n"
    "    }\n"
    "    for (i in 0 .. 10) {\n"
    "        if (is_active(img, ivec2(i, 0))) deactivate(img, ivec2(i, 0));\n"
    "        line[i] = i;\n"
    "    }\n"
    "}\n";

static void check_ports(void) {
    pk_result *r = lt_compile(ports_src, 0);
    LT_CHECK(pk_result_ok(r), "ports: %s", pk_result_text(r));
    const pk_program *prog = pk_result_program(r);
    if (!prog) {
        pk_result_free(r);
        return;
    }
    const pk_func *k = pk_find_kernel(prog, "k");
    LT_CHECK(k && k->is_kernel && k->nparams == 9, "kernel k with 9 parameters");
    LT_CHECK(pk_find_kernel(prog, "bump") == NULL, "a function is not a kernel");
    LT_CHECK(pk_find_kernel(prog, "nope") == NULL, "unknown kernel");
    if (!k || k->nparams != 9) {
        pk_result_free(r);
        return;
    }
    static const struct {
        const char *name;
        int kind, elem, dim;
        uint32_t access;
    } want[9] = {
        {"a", PK_T_FIELD, PK_T_F32, 3, PK_ACCESS_READ | PK_ACCESS_ITERATE},
        {"b", PK_T_FIELD, PK_T_F32, 3, PK_ACCESS_WRITE | PK_ACCESS_ACTIVATE},
        {"s", PK_T_FIELD, PK_T_F32, 0,
         PK_ACCESS_WRITE | PK_ACCESS_ACTIVATE | PK_ACCESS_READ | PK_ACCESS_ATOMIC},
        /* v: bump's += is atomic because the call is inside a parallel loop */
        {"v", PK_T_FIELD, PK_T_VEC3, 3,
         PK_ACCESS_WRITE | PK_ACCESS_ACTIVATE | PK_ACCESS_READ | PK_ACCESS_ATOMIC},
        /* w: the same function called from serial code: no atomic */
        {"w", PK_T_FIELD, PK_T_VEC3, 3, PK_ACCESS_WRITE | PK_ACCESS_ACTIVATE | PK_ACCESS_READ},
        {"dt", PK_T_F32, 0, 0, 0},
        {"off", PK_T_IVEC3, 0, 0, 0},
        {"line", PK_T_FIELD, PK_T_I32, 1, PK_ACCESS_WRITE | PK_ACCESS_ACTIVATE},
        {"img", PK_T_FIELD, PK_T_F32, 2, PK_ACCESS_READ | PK_ACCESS_DEACTIVATE},
    };
    for (uint32_t i = 0; i < 9; i++) {
        const pk_var *p = k->params[i];
        LT_CHECK(strcmp(p->name, want[i].name) == 0, "param %u is %s", i, p->name);
        LT_CHECK(p->kind == PK_VAR_PARAM && p->slot == i && p->owner == k, "param %u slot", i);
        LT_CHECK(p->type.kind == want[i].kind, "param %s kind %d", p->name, p->type.kind);
        if (want[i].kind == PK_T_FIELD) {
            LT_CHECK(p->type.elem == want[i].elem && p->type.dim == want[i].dim,
                     "param %s elem %d dim %d", p->name, p->type.elem, p->type.dim);
            LT_CHECK(p->field_access == want[i].access, "param %s access 0x%x, want 0x%x",
                     p->name, p->field_access, want[i].access);
        } else {
            LT_CHECK(p->is_const, "scalar kernel parameter %s is read-only", p->name);
        }
    }
    pk_port ports[9];
    LT_CHECK(pk_kernel_ports(k, ports, 9) == 9, "9 ports");
    for (uint32_t i = 0; i < 9; i++) {
        LT_CHECK(strcmp(ports[i].name, want[i].name) == 0, "port %u name", i);
        LT_CHECK(ports[i].is_field == (want[i].kind == PK_T_FIELD), "port %s is_field", want[i].name);
        LT_CHECK(ports[i].type == (want[i].kind == PK_T_FIELD ? want[i].elem : want[i].kind),
                 "port %s type %d", want[i].name, ports[i].type);
        LT_CHECK(ports[i].dim == want[i].dim && ports[i].access == want[i].access,
                 "port %s dim/access", want[i].name);
    }
    LT_CHECK(pk_kernel_ports(k, ports, 2) == 9 && pk_kernel_ports(NULL, ports, 9) == 0,
             "port count without room / without kernel");
    /* regions: two parallel loops; x lives in the first */
    LT_CHECK(k->nregions == 2, "nregions %u", k->nregions);
    const pk_stmt *body = k->body;
    LT_CHECK(body->nbody == 4, "kernel body has %u statements", body->nbody);
    if (body->nbody == 4) {
        const pk_stmt *l1 = body->body[2], *l2 = body->body[3];
        LT_CHECK(l1->kind == PK_S_FOR_FIELD && l1->parallel && l1->region == 1, "loop 1");
        LT_CHECK(l2->kind == PK_S_FOR_RANGE && l2->parallel && l2->region == 2, "loop 2");
        LT_CHECK(body->body[0]->kind == PK_S_ASSIGN && !body->body[0]->atomic, "serial write");
        const pk_stmt *decl = l1->then->body[0];
        LT_CHECK(decl->kind == PK_S_DECL && decl->var->region == 1 && decl->var->slot >= 9,
                 "x is declared in region 1 after the parameters");
        const pk_stmt *red = l1->then->body[2];
        LT_CHECK(red->kind == PK_S_ASSIGN && red->atomic && red->op == PK_OP_ADD, "atomic +=");
    }
    LT_CHECK(k->nvars >= 12, "nvars %u", k->nvars);
    /* callees are recorded */
    LT_CHECK(k->ncallees == 2, "k calls %u functions", k->ncallees);
    pk_result_free(r);
}

static void check_options_and_diags(void) {
    const char *src = "kernel k() {\n    f32 unused = 1.0;\n}\n";
    pk_options opt = {0};
    opt.no_stdlib = 1;
    pk_result *r = pk_compile("w.pk", src, strlen(src), &opt);
    LT_CHECK(pk_result_ok(r) && pk_result_diag_count(r) == 1, "one warning");
    const pk_diag *d = pk_result_diag(r, 0);
    LT_CHECK(d && d->severity == PK_SEV_WARNING && d->loc.line == 2 && d->loc.col == 9 &&
                 strcmp(d->loc.file, "w.pk") == 0 && strcmp(d->message, "unused variable 'unused'") == 0,
             "warning record");
    LT_CHECK(pk_result_diag(r, 1) == NULL, "out of range diag");
    pk_result_free(r);
    opt.no_warnings = 1;
    r = pk_compile("w.pk", src, strlen(src), &opt);
    LT_CHECK(pk_result_ok(r) && pk_result_diag_count(r) == 0 && strcmp(pk_result_text(r), "") == 0,
             "no_warnings");
    pk_result_free(r);

    const char *bad = "kernel k() { a = 1; b = 2; c = 3; d = 4; e = 5; }";
    opt.max_errors = 3;
    r = pk_compile(NULL, bad, strlen(bad), &opt);
    LT_CHECK(pk_result_error_count(r) == 3, "max_errors 3: %u", pk_result_error_count(r));
    LT_CHECK(strncmp(pk_result_text(r), "<input>:1:14: error: unknown name 'a'", 36) == 0,
             "NULL file name: %s", pk_result_text(r));
    LT_CHECK(pk_result_program(r) == NULL && !pk_result_ok(r), "no program on errors");
    pk_result_free(r);
    pk_result_free(NULL);

    /* only `len` bytes are read: the rest of the buffer is not part of the source */
    const char *buf = "kernel k() {}garbage that would not parse";
    r = pk_compile("p.pk", buf, 13, NULL);
    LT_CHECK(pk_result_ok(r), "prefix: %s", pk_result_text(r));
    pk_result_free(r);
    r = pk_compile("e.pk", NULL, 0, NULL);
    LT_CHECK(pk_result_ok(r), "empty source");
    pk_result_free(r);

    /* NUL bytes are reported, not treated as the end */
    const char nul[] = "kernel k() {}\0kernel j() {}";
    r = pk_compile("n.pk", nul, sizeof nul - 1, NULL);
    LT_CHECK(!pk_result_ok(r) && strstr(pk_result_text(r), "unexpected byte 0x00"), "NUL: %s",
             pk_result_text(r));
    pk_result_free(r);
}

/* Float literals read the same whatever LC_NUMERIC the host application set. */
static void check_locale(void) {
    const char *names[] = {"de_DE.UTF-8", "de_DE.utf8", "fr_FR.UTF-8", "ru_RU.UTF-8"};
    const char *set = NULL;
    for (size_t i = 0; i < 4 && !set; i++)
        set = setlocale(LC_NUMERIC, names[i]);
    if (!set) {
        printf("lang_api: no comma-decimal locale installed; locale check done in the C locale\n");
    }
    const char *src = "const f64 X = 0.125;\nconst f32 Y = 1.5e3;\n";
    pk_result *r = lt_compile(src, 1);
    const pk_program *p = pk_result_program(r);
    LT_CHECK(p && p->nconsts == 2 && p->consts[0]->value->f[0] == 0.125 &&
                 p->consts[1]->value->f[0] == 1500.0,
             "float literals under locale %s", set ? set : "C");
    pk_result_free(r);
    setlocale(LC_NUMERIC, "C");
}

/* Several threads compile different programs at once; each result matches the one made
 * alone. */
enum { THREADS = 6, ROUNDS = 30 };
static const char *thread_src[THREADS];
static char *expected[THREADS];
static int thread_bad[THREADS];

static void *worker(void *arg) {
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < ROUNDS; i++) {
        pk_result *r = pk_compile("th.pk", thread_src[t], strlen(thread_src[t]), NULL);
        char *dump = r ? pk_print_program(pk_result_program(r), PK_PRINT_STDLIB) : NULL;
        if (!dump || strcmp(dump, expected[t]) != 0)
            thread_bad[t]++;
        free(dump);
        pk_result_free(r);
    }
    return NULL;
}

static void check_threads(void) {
    static char srcs[THREADS][512];
    for (int t = 0; t < THREADS; t++) {
        snprintf(srcs[t], sizeof srcs[t],
                 "const f32 C%d = %d.5;\n"
                 "kernel k%d(field<f32> q, field<vec3> v) {\n"
                 "    for (I in q) q[I] = sample(q, vec3(I) * C%d) + laplacian(q, I) + f32(%d);\n"
                 "    for (I in v) v[I] = sample(v, vec3(I)) + gradient(q, I) * C%d;\n"
                 "}\n",
                 t, t, t, t, t, t);
        thread_src[t] = srcs[t];
        pk_result *r = pk_compile("th.pk", srcs[t], strlen(srcs[t]), NULL);
        LT_CHECK(pk_result_ok(r), "thread source %d: %s", t, pk_result_text(r));
        expected[t] = pk_print_program(pk_result_program(r), PK_PRINT_STDLIB);
        pk_result_free(r);
    }
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    for (int t = 0; t < THREADS; t++) {
        LT_CHECK(thread_bad[t] == 0, "thread %d: %d mismatching results", t, thread_bad[t]);
        free(expected[t]);
    }
}

int main(void) {
    check_ports();
    check_options_and_diags();
    check_locale();
    check_threads();
    return lt_finish("lang_api");
}
