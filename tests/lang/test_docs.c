/* test_docs.c — every ```plume block of docs/language.md compiles (with the standard library),
 * every ```plume-error block fails, and the standard library alone compiles and defines what
 * the documentation lists. Run from the source root (ctest sets the working directory). */
#include "lang_test.h"

static char *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (buf) {
        buf[n] = 0;
        *len = (size_t)n;
    }
    return buf;
}

static int check_blocks(const char *doc) {
    int nblocks = 0;
    const char *p = doc;
    int line = 1;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t ll = eol ? (size_t)(eol - p) : strlen(p);
        int is_ok = ll == 8 && strncmp(p, "```plume", 8) == 0;
        int is_err = ll == 14 && strncmp(p, "```plume-error", 14) == 0;
        int start_line = line;
        p += ll + (eol ? 1 : 0);
        line++;
        if (!is_ok && !is_err)
            continue;
        const char *body = p;
        while (*p && strncmp(p, "```", 3) != 0) {
            const char *e = strchr(p, '\n');
            p = e ? e + 1 : p + strlen(p);
            line++;
        }
        size_t blen = (size_t)(p - body);
        nblocks++;
        char name[64];
        snprintf(name, sizeof name, "language.md:%d", start_line + 1);
        pk_result *r = pk_compile(name, body, blen, NULL);
        LT_CHECK(r != NULL, "out of memory");
        if (is_ok)
            LT_CHECK(pk_result_ok(r), "block at line %d does not compile:\n%s", start_line,
                     pk_result_text(r));
        else
            LT_CHECK(!pk_result_ok(r), "block at line %d marked plume-error compiles", start_line);
        if (pk_result_ok(r))
            LT_CHECK(pk_result_program(r)->nkernels > 0 || pk_result_program(r)->nfuncs > 0,
                     "block at line %d declares nothing", start_line);
        pk_result_free(r);
    }
    return nblocks;
}

static void check_stdlib(void) {
    pk_result *r = pk_compile("empty.pk", "", 0, NULL);
    LT_CHECK(pk_result_ok(r), "the standard library alone does not compile:\n%s", pk_result_text(r));
    LT_CHECK(strcmp(pk_result_text(r), "") == 0, "the standard library gives diagnostics:\n%s",
             pk_result_text(r));
    const pk_program *prog = pk_result_program(r);
    /* name, return type, first parameter's element type (the field) */
    static const struct {
        const char *name;
        int ret, field_elem;
    } want[] = {
        {"sample", PK_T_F32, PK_T_F32},     {"sample", PK_T_VEC3, PK_T_VEC3},
        {"gradient", PK_T_VEC3, PK_T_F32},  {"laplacian", PK_T_F32, PK_T_F32},
        {"divergence", PK_T_F32, PK_T_VEC3},
    };
    for (size_t i = 0; prog && i < sizeof want / sizeof want[0]; i++) {
        int found = 0;
        for (uint32_t j = 0; j < prog->nfuncs; j++) {
            const pk_func *f = prog->funcs[j];
            if (strcmp(f->name, want[i].name) == 0 && f->ret.kind == want[i].ret &&
                f->nparams == 2 && f->params[0]->type.kind == PK_T_FIELD &&
                f->params[0]->type.elem == want[i].field_elem && f->params[0]->type.dim == 3 &&
                f->from_stdlib && !f->is_kernel)
                found = 1;
        }
        LT_CHECK(found, "stdlib lacks %s returning %s", want[i].name,
                 pk_type_kind_name(want[i].ret));
    }
    if (prog)
        LT_CHECK(prog->nkernels == 0, "the stdlib declares kernels");
    pk_result_free(r);
    size_t len = 0;
    const char *src = pk_stdlib_source(&len);
    LT_CHECK(len > 100 && strlen(src) == len, "embedded stdlib has %zu bytes", len);
    LT_CHECK(strstr(src, "func f32 laplacian(field<f32> f, ivec3 I)") != NULL,
             "embedded stdlib text is not stdlib.pk");
}

int main(void) {
    size_t len = 0;
    char *doc = read_all("docs/language.md", &len);
    if (!doc) {
        fprintf(stderr, "cannot read docs/language.md (run from the source root)\n");
        return 1;
    }
    int n = check_blocks(doc);
    LT_CHECK(n >= 8, "only %d plume blocks found in docs/language.md", n);
    free(doc);
    check_stdlib();
    return lt_finish("lang_docs");
}
