/* org.plume.kernel: the generic kernel node. A TD writes kernels in Plume's language; the node
 * runs one of them per cook. Its ports are the kernel's field parameters (bound by default to
 * fields of the same name) and its extra parameters are the kernel's scalar parameters, set by
 * name with the typed setters. Scalars named dt, time and frame that the host never set take
 * the cook's values, so a kernel can integrate in time without wiring. A port's binding and a
 * scalar's value stay with their name when the code, the kernel or the source name changes. */
#include "engine/kernel.h"
#include "plugin/nodes/node_util.h"
#include "plugin/plugin.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const plume_param_desc params[] = {
    PARAM_CODE("code", "Code", "Kernel-language source (docs/language.md): one or more kernels.", ""),
    PARAM_STRING("kernel", "Kernel", "Which kernel of the code to run; empty: the first one.", ""),
    PARAM_STRING("source_name", "Source Name",
                 "The file name compile errors cite (file:line:col); empty: the node's name.", ""),
};
enum { P_CODE = 0, P_KERNEL = 1, P_SOURCE_NAME = 2 };

typedef struct scalar_value {
    double v[3];
    int set; /* the host set it: dt/time/frame defaults no longer apply */
} scalar_value;

/* What the host set on a port or a scalar, by name, kept across recompiles: an artist who
 * edits the code (or picks another kernel, or renames the source) keeps the wiring and values
 * of the parameters that are still there, also through an edit that did not compile. */
typedef struct kept {
    char *name;
    int is_port;
    char *field;       /* a port's binding; NULL: its default field */
    int type;          /* a scalar's eng_param type: restored only into the same type */
    scalar_value value;
} kept;

typedef struct kernel_state {
    eng_context *eng;       /* where prog was compiled */
    eng_program *prog;      /* the code's, released when the code changes or the node goes */
    eng_kernel *kernel;     /* NULL until the code compiles */
    char *error;            /* the compile error, reported again at cook */
    plume_port_desc *ports; /* one per field parameter */
    char **labels;
    scalar_value *values;   /* one per kernel parameter */
    uint32_t nparams;
    kept *kept; /* outlives compiles */
    uint32_t nkept;
} kernel_state;

static void state_clear(kernel_state *s)
{
    /* an artist editing code compiles it again and again: each program went only with the
     * context before (about 250 KB each) */
    if (s->prog)
        eng_program_release(s->eng, s->prog);
    free(s->error);
    free(s->ports);
    if (s->labels)
        for (uint32_t i = 0; i < s->nparams; i++)
            free(s->labels[i]);
    free(s->labels);
    free(s->values);
    kept *k = s->kept;
    uint32_t nk = s->nkept;
    memset(s, 0, sizeof *s);
    s->kept = k;
    s->nkept = nk;
}

static void state_free(void *p)
{
    if (!p)
        return;
    kernel_state *s = p;
    state_clear(s);
    for (uint32_t i = 0; i < s->nkept; i++) {
        free(s->kept[i].name);
        free(s->kept[i].field);
    }
    free(s->kept);
    free(p);
}

static kept *kept_find(kernel_state *s, const char *name, int is_port)
{
    for (uint32_t i = 0; i < s->nkept; i++)
        if (s->kept[i].is_port == is_port && !strcmp(s->kept[i].name, name))
            return &s->kept[i];
    return NULL;
}

static kept *kept_get(kernel_state *s, const char *name, int is_port)
{
    kept *k = kept_find(s, name, is_port);
    if (k)
        return k;
    kept *grown = realloc(s->kept, (s->nkept + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    s->kept = grown;
    k = &s->kept[s->nkept];
    memset(k, 0, sizeof *k);
    if (!(k->name = strdup(name)))
        return NULL;
    k->is_port = is_port;
    s->nkept++;
    return k;
}

/* Notes the current kernel's bindings and the scalars the host set (a port unbound now is
 * noted as unbound: an old binding must not come back). */
static int remember(pl_node *n, kernel_state *s)
{
    for (uint32_t i = 0; i < n->nports; i++) {
        kept *k = kept_get(s, n->ports[i].id, 1);
        if (!k)
            return -1;
        free(k->field);
        k->field = n->bindings[i] ? strdup(n->bindings[i]) : NULL;
        if (n->bindings[i] && !k->field)
            return -1;
    }
    for (uint32_t i = 0; s->kernel && i < s->nparams; i++) {
        const eng_param *q = eng_kernel_param(s->kernel, i);
        if (q->type == ENG_P_FIELD_F32 || q->type == ENG_P_FIELD_VEC3)
            continue;
        kept *k = s->values[i].set ? kept_get(s, q->name, 0) : kept_find(s, q->name, 0);
        if (s->values[i].set && !k)
            return -1;
        if (k) {
            k->type = (int)q->type;
            k->value = s->values[i]; /* .set 0: the cook's dt/time/frame again */
        }
    }
    return 0;
}

/* Gives the new kernel's ports and scalars what was noted under their names. */
static int restore(pl_node *n, kernel_state *s)
{
    for (uint32_t i = 0; i < n->nports; i++) {
        kept *k = kept_find(s, n->ports[i].id, 1);
        if (k && k->field && !(n->bindings[i] = strdup(k->field)))
            return -1;
    }
    for (uint32_t i = 0; i < s->nparams; i++) {
        const eng_param *q = eng_kernel_param(s->kernel, i);
        kept *k = kept_find(s, q->name, 0);
        if (k && k->type == (int)q->type)
            s->values[i] = k->value;
    }
    return 0;
}

static kernel_state *state_of(pl_node *n)
{
    if (!n->state) {
        n->state = calloc(1, sizeof(kernel_state));
        n->free_state = state_free;
    }
    return n->state;
}

static plume_status compile(pl_node *n)
{
    kernel_state *s = state_of(n);
    if (!s)
        return pl_fail(n->ctx, PLUME_ERR_INTERNAL, "out of host memory");
    /* Ports of the old kernel go first; what the host set on them is noted by name, for the
     * parameters of the new code that carry the same names. */
    if (remember(n, s) != 0)
        return pl_fail(n->ctx, PLUME_ERR_INTERNAL, "out of host memory");
    plume_status st = pl_node_set_ports(n, NULL, 0);
    if (st != PLUME_OK)
        return st; /* the node still points at the old ports: keep them */
    state_clear(s);
    const char *code = n->values[P_CODE].str;
    if (!code[0])
        return PLUME_OK; /* nothing to compile yet: the cook says so */
    const char *file = n->values[P_SOURCE_NAME].str[0] ? n->values[P_SOURCE_NAME].str : n->name;
    eng_program *prog = NULL;
    int rc = eng_program_compile(n->ctx->eng, file, code, strlen(code), &prog);
    eng_kernel *k = NULL;
    s->eng = n->ctx->eng;
    s->prog = prog;
    if (rc == 0) {
        pl_node_owns_program(n, prog);
        /* once per code, as the parameter is set: not every cook */
        pl_log_text(n->ctx, PLUME_LOG_WARNING, eng_program_warnings(prog));
        const char *want = n->values[P_KERNEL].str;
        k = want[0] ? eng_program_find(prog, want) : eng_program_kernel(prog, 0);
        if (!k && want[0]) {
            char have[1024] = "";
            size_t len = 0;
            for (uint32_t i = 0; i < eng_program_kernel_count(prog) && len < sizeof have - 1; i++) {
                int w = snprintf(have + len, sizeof have - len, "%s%s", i ? ", " : "",
                                 eng_kernel_name(eng_program_kernel(prog, i)));
                len = w < 0 || len + (size_t)w >= sizeof have ? sizeof have - 1 : len + (size_t)w;
            }
            pl_fail(n->ctx, PLUME_ERR_NOT_FOUND, "node '%s': %s has no kernel named '%s'%s%s", n->name,
                    file, want, len ? "; its kernels: " : " (it defines none)", have);
        }
        else if (!k)
            pl_fail(n->ctx, PLUME_ERR_NOT_FOUND, "node '%s': %s defines no kernel", n->name, file);
        st = k ? PLUME_OK : PLUME_ERR_NOT_FOUND;
        int brc = k ? eng_kernel_check_bindable(n->ctx->eng, k) : ENG_OK;
        if (brc) /* a field no port can carry: said where the code is set, at its place */
            st = pl_from_engine(n->ctx, brc);
    } else {
        st = pl_from_engine(n->ctx, rc);
    }
    if (st != PLUME_OK) {
        s->error = strdup(n->ctx->err);
        return st;
    }
    uint32_t np = eng_kernel_param_count(k), nports = 0;
    s->values = calloc(np ? np : 1, sizeof *s->values);
    s->ports = calloc(np ? np : 1, sizeof *s->ports);
    s->labels = calloc(np ? np : 1, sizeof *s->labels);
    s->nparams = np;
    if (!s->values || !s->ports || !s->labels)
        return pl_fail(n->ctx, PLUME_ERR_INTERNAL, "out of host memory");
    for (uint32_t i = 0; i < np; i++) {
        const eng_param *q = eng_kernel_param(k, i);
        if (q->type != ENG_P_FIELD_F32 && q->type != ENG_P_FIELD_VEC3)
            continue;
        plume_port_desc *p = &s->ports[nports++];
        p->struct_size = sizeof *p;
        p->id = q->name;
        p->label = q->name;
        p->help = "A field parameter of the kernel.";
        p->value_type = q->type == ENG_P_FIELD_VEC3 ? PLUME_VALUE_VEC3 : PLUME_VALUE_F32;
        p->direction = (q->access & ENG_ACCESS_WRITE)
                           ? ((q->access & ENG_ACCESS_READ) ? PLUME_PORT_INOUT : PLUME_PORT_OUT)
                           : PLUME_PORT_IN;
        p->default_field = q->name;
        p->optional = 0;
    }
    st = pl_node_set_ports(n, s->ports, nports);
    if (st == PLUME_OK) /* a kernel only with its ports: validate and cook index them by its fields */
        s->kernel = k;
    if (st == PLUME_OK && restore(n, s) != 0)
        st = pl_fail(n->ctx, PLUME_ERR_INTERNAL, "out of host memory");
    return st;
}

static plume_status param_changed(pl_node *n, uint32_t index)
{
    (void)index; /* each of the three parameters changes what is compiled */
    return compile(n);
}

/* Doubles below this round to a finite f32 (at most FLT_MAX); from it on, to infinity. */
#define F32_LIMIT 0x1.ffffffp127

/* Why a value of setter type `type` cannot go into a kernel parameter of kind `kind` (what the
 * parameter takes, for the message), or NULL when it can. Values arrive as doubles: integers
 * must be whole and fit the parameter's type (a launch would otherwise wrap them), floats finite
 * and, for f32, within its range (past it they would become inf). */
static const char *value_refused(int kind, plume_param_type type, const double *num)
{
    switch (kind) {
    case ENG_P_BOOL:
        return type == PLUME_PARAM_BOOL || (type == PLUME_PARAM_INT && (num[0] == 0 || num[0] == 1))
                   ? NULL
                   : "true or false (or 0 or 1)";
    case ENG_P_I32:
        return type == PLUME_PARAM_INT && num[0] >= -2147483648.0 && num[0] <= 2147483647.0
                   ? NULL
                   : "an integer from -2147483648 to 2147483647 (i32)";
    case ENG_P_U32:
        return type == PLUME_PARAM_INT && num[0] >= 0 && num[0] <= 4294967295.0
                   ? NULL
                   : "an integer from 0 to 4294967295 (u32)";
    case ENG_P_I64:
        /* the value travels as a double: past 2^53 it would not be the integer given */
        return type == PLUME_PARAM_INT && fabs(num[0]) < 9007199254740992.0
                   ? NULL
                   : "an integer within +-9007199254740991 (i64 as a node sets it)";
    case ENG_P_F32:
        return (type == PLUME_PARAM_FLOAT || type == PLUME_PARAM_INT) && fabs(num[0]) < F32_LIMIT
                   ? NULL
                   : "a finite number within +-3.4e38 (f32)";
    case ENG_P_F64:
        return (type == PLUME_PARAM_FLOAT || type == PLUME_PARAM_INT) && isfinite(num[0])
                   ? NULL
                   : "a finite number (f64)";
    case ENG_P_VEC3:
        if (type != PLUME_PARAM_VEC3)
            return "3 numbers (vec3)";
        for (int c = 0; c < 3; c++)
            if (!(fabs(num[c]) < F32_LIMIT))
                return "3 finite numbers within +-3.4e38 (vec3)";
        return NULL;
    case ENG_P_IVEC3:
        if (type != PLUME_PARAM_VEC3)
            return "3 integers (ivec3)";
        for (int c = 0; c < 3; c++)
            if (!(num[c] >= -2147483648.0 && num[c] <= 2147483647.0) || num[c] != floor(num[c]))
                return "3 integers from -2147483648 to 2147483647 (ivec3)";
        return NULL;
    case ENG_P_FIELD_F32:
    case ENG_P_FIELD_VEC3:
        return "a field: it is a port, bound to a field under \"bind\"";
    default:
        return "a value of a type nodes cannot set (only bool, i32, u32, i64, f32, f64, vec3 and "
               "ivec3 parameters are set by name)";
    }
}

/* Whether setter type `type` suits a parameter of kind `kind` at all (its value may still be
 * out of range): the status tells a host which of the two went wrong. */
static int setter_fits(int kind, plume_param_type type)
{
    switch (kind) {
    case ENG_P_BOOL: return type == PLUME_PARAM_BOOL || type == PLUME_PARAM_INT;
    case ENG_P_I32:
    case ENG_P_U32:
    case ENG_P_I64: return type == PLUME_PARAM_INT;
    case ENG_P_F32:
    case ENG_P_F64: return type == PLUME_PARAM_FLOAT || type == PLUME_PARAM_INT;
    case ENG_P_VEC3:
    case ENG_P_IVEC3: return type == PLUME_PARAM_VEC3;
    default: return 0;
    }
}

static plume_status set_extra(pl_node *n, const char *id, plume_param_type type, const double *num,
                              const char *str)
{
    (void)str;
    kernel_state *s = state_of(n);
    if (!s || !s->kernel)
        return pl_fail(n->ctx, PLUME_ERR_NOT_FOUND,
                       "node '%s' has no parameter '%s' (its code %s)", n->name, id ? id : "(null)",
                       s && s->error ? "does not compile" : "is not set yet: set 'code' first");
    for (uint32_t i = 0; id && i < s->nparams; i++) {
        const eng_param *q = eng_kernel_param(s->kernel, i);
        if (strcmp(q->name, id))
            continue;
        const char *why = value_refused(q->type, type, num);
        if (why)
            return pl_fail(n->ctx, setter_fits(q->type, type) ? PLUME_ERR_OUT_OF_RANGE : PLUME_ERR_TYPE_MISMATCH,
                           "node '%s': kernel parameter '%s' takes %s", n->name, id, why);
        int c = type == PLUME_PARAM_VEC3 ? 3 : 1;
        for (int k = 0; k < c; k++)
            s->values[i].v[k] = num[k];
        s->values[i].set = 1;
        return PLUME_OK;
    }
    /* the parameters it does have: neither `plume nodes` nor the scene lists a kernel's */
    static const char *const kinds[] = {"bool", "i32", "f32", "vec3", "ivec3", "", "", "",
                                        "u32", "i64", "f64"};
    char have[1024] = "";
    size_t len = 0;
    for (uint32_t i = 0; i < s->nparams && len < sizeof have - 1; i++) {
        const eng_param *q = eng_kernel_param(s->kernel, i);
        if (q->type < 0 || q->type > ENG_P_F64 || !kinds[q->type][0])
            continue; /* fields are ports; other types cannot be set */
        int w = snprintf(have + len, sizeof have - len, "%s%s (%s)", len ? ", " : "", q->name,
                         kinds[q->type]);
        len = w < 0 ? sizeof have - 1 : len + (size_t)w < sizeof have ? len + (size_t)w : sizeof have - 1;
    }
    return pl_fail(n->ctx, PLUME_ERR_NOT_FOUND, "node '%s': kernel '%s' has no parameter '%s'; %s%s",
                   n->name, eng_kernel_name(s->kernel), id ? id : "(null)",
                   len ? "its parameters: " : "it has no parameters a node can set", have);
}

/* What a cook cannot start without: compiled code with its kernel. */
static plume_status code_ready(pl_node *n, const kernel_state *s)
{
    if (s && s->kernel)
        return PLUME_OK;
    if (s && s->error)
        return pl_fail(n->ctx, PLUME_ERR_COMPILE, "%s", s->error);
    return pl_fail(n->ctx, PLUME_ERR_MISSING_INPUT, "node '%s': its 'code' parameter is empty", n->name);
}

/* The code, and each bound field's kind and dimensions against its parameter (eng_launch would
 * refuse them in the first cook). */
static plume_status validate(pl_node *n, eng_field *const *fields)
{
    kernel_state *s = state_of(n);
    plume_status st = code_ready(n, s);
    uint32_t port = 0;
    for (uint32_t i = 0; st == PLUME_OK && i < s->nparams; i++) {
        const eng_param *q = eng_kernel_param(s->kernel, i);
        if (q->type != ENG_P_FIELD_F32 && q->type != ENG_P_FIELD_VEC3)
            continue;
        eng_field *f = fields[port++];
        int rc = f ? eng_kernel_check_field(n->ctx->eng, s->kernel, i, f) : 0;
        if (rc)
            st = pl_from_engine(n->ctx, rc);
    }
    return st;
}

/* dt and time arrive as seconds (0.0417 at 24 fps), frame as a whole number: an unset
 * parameter of a type that cannot hold them silently got 0 (or false). Once per node. */
static void warn_cook_value(pl_node *n, const eng_param *q)
{
    int timeish = !strcmp(q->name, "dt") || !strcmp(q->name, "time");
    int whole = q->type == ENG_P_I32 || q->type == ENG_P_U32 || q->type == ENG_P_I64;
    if (n->warned || !((timeish && (whole || q->type == ENG_P_BOOL)) ||
                       (!strcmp(q->name, "frame") && q->type == ENG_P_BOOL)))
        return;
    n->warned = 1;
    pl_log(n->ctx, PLUME_LOG_WARNING,
           "node '%s': kernel parameter '%s' is not a %s, so the %s the cook passes it %s; declare it "
           "%s, or set it by name",
           n->name, q->name, timeish ? "float" : "number", timeish ? "seconds" : "frame number",
           timeish ? "lose their fraction (0.0417 becomes 0)" : "become true or false", timeish ? "f32" : "i32");
}

static plume_status cook(pl_node *n, pl_cook_env *env)
{
    kernel_state *s = state_of(n);
    plume_status ready = code_ready(n, s);
    if (ready != PLUME_OK)
        return ready;
    eng_arg args[64];
    uint32_t np = s->nparams < 64 ? s->nparams : 64, port = 0;
    memset(args, 0, sizeof args);
    for (uint32_t i = 0; i < np; i++) {
        const eng_param *q = eng_kernel_param(s->kernel, i);
        if (q->type == ENG_P_FIELD_F32 || q->type == ENG_P_FIELD_VEC3) {
            args[i].field = env->port_fields[port++];
            continue;
        }
        double v[3] = {s->values[i].v[0], s->values[i].v[1], s->values[i].v[2]};
        if (!s->values[i].set) {
            if (!strcmp(q->name, "dt"))
                v[0] = env->info->dt;
            else if (!strcmp(q->name, "time"))
                v[0] = env->info->time;
            else if (!strcmp(q->name, "frame"))
                v[0] = (double)env->info->frame;
            warn_cook_value(n, q);
        }
        for (int c = 0; c < 3; c++) {
            args[i].f[c] = v[c];
            args[i].i[c] = (int64_t)v[c];
        }
    }
    int rc = eng_launch(env->ctx->eng, s->kernel, args, np);
    return rc ? pl_from_engine(env->ctx, rc) : PLUME_OK;
}

const pl_node_type pl_node_kernel = {
    .desc = {.struct_size = sizeof(plume_node_desc),
             .id = "org.plume.kernel",
             .label = "Kernel",
             .category = "Kernel",
             .help = "Runs a kernel written in Plume's language. Its field parameters become ports "
                     "(bound by default to fields of the same name), its scalar parameters are set "
                     "by name; unset scalars named dt and time (seconds: declare them f32) and frame take the "
                     "cook's values.",
             .version = 1,
             .param_count = COUNT(params),
             .params = params,
             .port_count = 0,
             .ports = NULL},
    .cook = cook,
    .param_changed = param_changed,
    .set_extra = set_extra,
    .validate = validate,
};
