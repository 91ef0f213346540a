/* Every kernel of the language reference's examples (docs/language.md, blocks marked
 * `plume`) and of the front end's corpus (the .pk files of tests/lang/corpus that compile)
 * lowers, with a descriptor per field parameter made from its declared type, to IR that
 * verifies (lower_kernel runs ir_verify). Arguments: the files to read. */
#include "tests/check.h"
#include "lower_util.h"

static char *slurp(const char *path, size_t *len)
{
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

static int lowered;

/* Lowers every kernel of src; a source that does not compile is skipped (the corpus holds
 * deliberate errors). */
static void lower_all(const char *what, const char *src, size_t len)
{
    pk_options opt = {0};
    opt.no_warnings = 1;
    pk_result *r = pk_compile(what, src, len, &opt);
    if (!r || !pk_result_ok(r)) {
        pk_result_free(r);
        return;
    }
    const pk_program *p = pk_result_program(r);
    for (uint32_t k = 0; k < p->nkernels; k++) {
        const pk_func *fn = p->kernels[k];
        ir_field_info fi[PK_MAX_PARAMS];
        uint32_t nf = 0;
        for (uint32_t i = 0; i < fn->nparams; i++) {
            pk_type t = fn->params[i]->type;
            if (t.kind != PK_T_FIELD)
                continue;
            pk_type elem = pk_type_make(t.elem);
            ir_type et = t.elem == PK_T_F64 ? IR_F64 : t.elem == PK_T_I32 ? IR_I32 : IR_F32;
            fi[nf++] = lt_field(fn->params[i]->name, et, pk_type_components(elem), t.dim, 3);
        }
        char err[1024];
        ir_task *out = NULL;
        if (lower_kernel(p, fn, fi, nf, &out, err, sizeof err) != 0) {
            fprintf(stderr, "%s: kernel '%s': %s\n", what, fn->name, err);
            check_failures++;
        } else {
            lowered++;
        }
        ir_task_free(out);
    }
    pk_result_free(r);
}

static void markdown(const char *path, const char *text)
{
    const char *open = "```plume\n";
    for (const char *s = strstr(text, open); s; s = strstr(s, open)) {
        s += strlen(open);
        const char *end = strstr(s, "```");
        if (!end)
            break;
        lower_all(path, s, (size_t)(end - s));
        s = end + 3;
    }
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        size_t len = 0;
        char *text = slurp(argv[i], &len);
        if (!text) {
            fprintf(stderr, "cannot read %s\n", argv[i]);
            return 1;
        }
        size_t n = strlen(argv[i]);
        if (n > 3 && strcmp(argv[i] + n - 3, ".md") == 0)
            markdown(argv[i], text);
        else
            lower_all(argv[i], text, len);
        free(text);
    }
    CHECK(lowered >= 10); /* the examples were found */
    printf("%d kernels lowered\n", lowered);
    CHECK_DONE();
}
