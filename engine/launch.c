/* Launches: a kernel is lowered and offloaded once per set of field layouts (a "spec"), its
 * tasks are bound to the fields of a launch and interned in the SFG bank once per binding, and
 * each launch then only packs its scalar arguments and queues the tasks. */
#define _GNU_SOURCE
#include "engine/engine_internal.h"
#include "engine/exec_cuda.h"
#include "engine/lower/lower.h"
#include "engine/passes/passes.h"
#if PLUME_HAVE_OPT
#include "engine/opt/opt.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The most statements one task may lower to. LLVM's time grows faster than the size: a loop
 * with a static loop of 512 sampled reads lowers to about 2,570 statements and compiles in
 * 8 s, one of 1,024 to about 5,130 in 39 s, one of 4,096 took over a minute (and a cancel
 * waits for the compile under way). The solver's largest kernel task has about 980. */
#define MAX_TASK_STMTS 4096u

static int count_stmt(ir_stmt *st, void *ud)
{
    (void)st;
    ++*(uint64_t *)ud;
    return 0;
}

void eng_error_in_kernel(const char *msg, const pk_func *fn, const pk_result *r, char *out,
                         size_t n)
{
    const char *file = fn->loc.file ? fn->loc.file : "<input>";
    size_t fl = strlen(file);
    char tag[300];
    snprintf(tag, sizeof tag, "kernel '%s'", fn->name);
    int located = !strncmp(msg, file, fl) && msg[fl] == ':' && msg[fl + 1] >= '0' && msg[fl + 1] <= '9';
    unsigned line = fn->loc.line, col = fn->loc.col;
    if (!located) {
        snprintf(out, n, "%s:%u:%u: error: %s: %s", file, fn->loc.line, fn->loc.col, tag, msg);
    } else {
        if (sscanf(msg + fl, ":%u:%u:", &line, &col) != 2)
            line = 0;
        const char *e = strstr(msg + fl, ": error: ");
        if (!e || strstr(msg, tag)) {
            snprintf(out, n, "%s", msg);
        } else {
            e += strlen(": error: ");
            snprintf(out, n, "%.*s%s: %s", (int)(e - msg), msg, tag, e);
        }
    }
    /* the line and a caret under the place, as the front end's errors show them */
    size_t used = strlen(out);
    if (!r || line == 0 || strchr(out, '\n') || used + 4 >= n)
        return;
    out[used] = '\n';
    if (pk_result_excerpt(r, fn->loc.file, line, col, out + used + 1, n - used - 1) != 0)
        out[used] = 0;
}

int eng_tasks_size_check(const pk_func *fn, ir_task *const *tasks, uint32_t nt, char *err, size_t n)
{
    for (uint32_t i = 0; i < nt; i++) {
        uint64_t size = 0;
        ir_walk(tasks[i]->body, count_stmt, &size);
        if (size > MAX_TASK_STMTS) {
            snprintf(err, n,
                     "%s:%u:%u: error: kernel '%s': lowers to %llu statements in one loop, more than "
                     "%u: compiling it would take tens of seconds or more; write large static loops "
                     "(`for (static ...)`) as plain loops, and call a function from a loop rather "
                     "than from many places (each call is inlined)",
                     fn->loc.file ? fn->loc.file : "<input>", fn->loc.line, fn->loc.col, fn->name,
                     (unsigned long long)size, MAX_TASK_STMTS);
            return -1;
        }
    }
    return 0;
}

static void spec_free(eng_spec *s)
{
    for (uint32_t i = 0; i < s->ntasks; i++)
        ir_task_free(s->tasks[i]);
    free(s->tasks);
    free(s->fields);
    if (s->gtmp_cuda)
        eng_cuda_buffer_free(s->gtmp_cuda, s->gtmp);
    else
        free(s->gtmp);
    for (uint32_t b = 0; b < s->nbindings; b++)
        free(s->bindings[b].irs);
    free(s->bindings);
}

void eng_kernel_release(eng_kernel *k)
{
    for (uint32_t i = 0; i < k->nspecs; i++)
        spec_free(&k->specs[i]);
    free(k->specs);
    k->specs = NULL;
    k->nspecs = 0;
}

static int make_spec(eng_context *ctx, eng_kernel *k, const ir_field_info *infos, uint32_t nf,
                     eng_spec **out)
{
    double t0 = now_s();
    char err[1024];
    ir_task *kt = NULL;
    if (lower_kernel(k->program->prog, k->fn, infos, nf, &kt, err, sizeof err) != 0) {
        char located[ENG_ERR_SIZE];
        eng_error_in_kernel(err, k->fn, k->program->result, located, sizeof located);
        return eng_fail(ctx, ENG_ECOMPILE, "%s", located);
    }
#if PLUME_HAVE_OPT
    if (opt_run(kt, 0, NULL, NULL, err, sizeof err) != 0) {
        ir_task_free(kt);
        return eng_fail(ctx, ENG_EINTERNAL, "kernel '%s': %s", k->fn->name, err);
    }
#endif
    ir_task **tasks = NULL;
    uint32_t nt = 0;
    int rc = passes_offload(kt, &tasks, &nt, err, sizeof err);
    ir_task_free(kt);
    if (rc != 0)
        return eng_fail(ctx, ENG_EINTERNAL, "kernel '%s': offload: %s", k->fn->name, err);
    if (eng_tasks_size_check(k->fn, tasks, nt, err, sizeof err) != 0) {
        for (uint32_t j = 0; j < nt; j++)
            ir_task_free(tasks[j]);
        free(tasks);
        return eng_fail(ctx, ENG_ECOMPILE, "%s", err);
    }
    eng_spec *grown = realloc(k->specs, (k->nspecs + 1) * sizeof *grown);
    if (!grown) {
        for (uint32_t i = 0; i < nt; i++)
            ir_task_free(tasks[i]);
        free(tasks);
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    }
    k->specs = grown;
    eng_spec *s = &k->specs[k->nspecs];
    memset(s, 0, sizeof *s);
    s->tasks = tasks;
    s->ntasks = nt;
    s->nfields = nf;
    s->fields = malloc((nf ? nf : 1) * sizeof *s->fields);
    s->gtmp_arg = UINT32_MAX;
    if (!s->fields) {
        spec_free(s);
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    }
    memcpy(s->fields, infos, nf * sizeof *infos);
    if (nt) {
        s->nargs = tasks[0]->nargs;
        s->arg_types = tasks[0]->arg_types;
        if (tasks[0]->gtmp_bytes) {
            s->gtmp_arg = s->nargs - 1;
            /* On a GPU the tasks write it: memory both sides address. */
            s->gtmp = ctx->cuda ? eng_cuda_buffer_new(ctx->cuda, tasks[0]->gtmp_bytes)
                                : calloc(1, tasks[0]->gtmp_bytes);
            s->gtmp_cuda = ctx->cuda;
            if (!s->gtmp) {
                spec_free(s);
                return eng_fail(ctx, ENG_ENOMEM, ctx->cuda ? "out of GPU memory for a kernel's temporaries"
                                                           : "out of host memory");
            }
        }
    }
    s->gtmp_state = ENG_GTMP_STATE_BASE + ctx->next_gtmp_state++;
    k->nspecs++;
    ctx->stats.frontend_s += now_s() - t0;
    *out = s;
    return ENG_OK;
}

/* A list or gc task touches one SNode of one tree: as the SFG sees it, it is that SNode's task
 * whichever kernel made it, so it keeps one slot (and no arguments), bound to the tree's first
 * field whichever field of the tree the kernel named. Identical listgens of different kernels
 * then hash alike, which is what list-generation removal needs. */
static passes_bound *bind_runtime_task(eng_context *ctx, const ir_task *t, const uint32_t *ids)
{
    uint32_t id = ids[t->field], key = t->fields[t->field].tree_key;
    const ir_field_info *info = &t->fields[t->field];
    if (key && key - 1 < (uint32_t)ctx->nfields && eng_field_ir_info(ctx->fields[key - 1])) {
        id = key - 1;
        info = eng_field_ir_info(ctx->fields[id]);
    }
    ir_task *c = ir_task_new(t->kind, t->name, info, 1, NULL, 0);
    if (!c)
        return NULL;
    c->field = 0;
    c->level = t->level;
    return passes_bound_adopt(c, &id, 1, 0);
}

static int bind(eng_context *ctx, eng_kernel *k, eng_spec *s, const uint32_t *ids,
                eng_binding **out)
{
    for (uint32_t b = 0; b < s->nbindings; b++)
        if (!memcmp(s->bindings[b].field_id, ids, s->nfields * sizeof *ids)) {
            *out = &s->bindings[b];
            return ENG_OK;
        }
    eng_binding *grown = realloc(s->bindings, (s->nbindings + 1) * sizeof *grown);
    if (!grown)
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    s->bindings = grown;
    eng_binding *b = &s->bindings[s->nbindings];
    memset(b, 0, sizeof *b);
    memcpy(b->field_id, ids, s->nfields * sizeof *ids);
    b->irs = calloc(s->ntasks ? s->ntasks : 1, sizeof *b->irs);
    if (!b->irs)
        return eng_fail(ctx, ENG_ENOMEM, "out of host memory");
    for (uint32_t t = 0; t < s->ntasks; t++) {
        const ir_task *task = s->tasks[t];
        int runtime = task->kind == IR_TASK_CLEAR_LIST || task->kind == IR_TASK_LISTGEN ||
                      task->kind == IR_TASK_GC;
        passes_bound *pb = runtime ? bind_runtime_task(ctx, task, ids)
                                   : passes_bound_create(task, ids, s->nfields, s->gtmp_state);
        if (!pb) {
            free(b->irs);
            return eng_fail(ctx, ENG_ENOMEM, "out of host memory");
        }
        if (sfg_bank_intern(ctx->bank, pb, &b->irs[t]) != SFG_OK) {
            free(b->irs);
            return eng_fail(ctx, ENG_EINTERNAL, "kernel '%s': %s", k->fn->name, sfg_bank_error(ctx->bank));
        }
    }
    b->ntasks = s->ntasks;
    s->nbindings++;
    *out = b;
    return ENG_OK;
}

/* Scalar parameters fill 8-byte slots in order, components in order, then one voxel size per
 * field slot (lower.h). */
static int pack_args(eng_context *ctx, eng_kernel *k, const eng_spec *s, const eng_arg *args,
                     uint64_t *slots)
{
    uint32_t a = 0;
    for (uint32_t p = 0; p < k->fn->nparams; p++) {
        const pk_var *v = k->fn->params[p];
        if (v->type.kind == PK_T_FIELD)
            continue;
        int n = pk_type_components(v->type);
        for (int c = 0; c < n; c++, a++) {
            if (a >= s->nargs)
                return eng_fail(ctx, ENG_EINTERNAL, "kernel '%s': more scalar arguments than the IR has", k->fn->name);
            ir_type t = s->arg_types[a];
            double f = c < 3 ? args[p].f[c] : 0;
            int64_t i = c < 3 ? args[p].i[c] : 0;
            uint64_t bits = 0;
            if (t == IR_F32) {
                float x = (float)f;
                uint32_t u;
                memcpy(&u, &x, 4);
                bits = u;
            } else if (t == IR_F64) {
                memcpy(&bits, &f, 8);
            } else {
                bits = (uint64_t)i;
            }
            slots[a] = bits;
        }
    }
    /* Then each field slot's voxel size (what voxel_size(f) reads), as f32. */
    for (uint32_t p = 0, slot = 0; p < k->fn->nparams; p++) {
        if (k->fn->params[p]->type.kind != PK_T_FIELD)
            continue;
        if (a >= s->nargs || s->arg_types[a] != IR_F32)
            return eng_fail(ctx, ENG_EINTERNAL, "kernel '%s': the IR has no voxel size for field slot %u", k->fn->name, slot);
        float vs = (float)eng_field_info(args[p].field)->voxel_size;
        uint32_t u;
        memcpy(&u, &vs, 4);
        slots[a++] = u;
        slot++;
    }
    if (s->gtmp_arg != UINT32_MAX)
        slots[s->gtmp_arg] = (uint64_t)(uintptr_t)s->gtmp;
    return ENG_OK;
}

int eng_kernel_check_field(eng_context *ctx, const eng_kernel *k, uint32_t p, eng_field *f)
{
    const eng_param *q = &k->params[p];
    if (!f)
        return eng_fail(ctx, ENG_EINVAL, "kernel '%s': no field for parameter '%s'", k->fn->name, q->name);
    int comps = eng_field_components(f);
    if ((q->type == ENG_P_FIELD_VEC3) != (comps == 3))
        return eng_fail(ctx, ENG_ETYPE, "kernel '%s': parameter '%s' is a field of %s but field '%s' holds %s",
                        k->fn->name, q->name, q->type == ENG_P_FIELD_VEC3 ? "vec3" : "f32",
                        eng_field_info(f)->name, comps == 3 ? "vec3" : "f32");
    const ir_field_info *info = eng_field_ir_info(f);
    if (!info) {
        char why[ENG_ERR_SIZE]; /* eng_fail writes ctx->err: not from itself */
        snprintf(why, sizeof why, "%s", ctx->err);
        return eng_fail(ctx, ENG_EINTERNAL, "field '%s': %s", eng_field_info(f)->name, why);
    }
    if (info->dim != q->dim) {
        /* a field's dimensions come from its layout; say which layout gives the kernel's */
        static const char *const like[4] = {"dense(i,1)", "dense(i,1024)", "dense(ij,64)", "default"};
        return eng_fail(ctx, ENG_ETYPE, "kernel '%s': parameter '%s' is %d-dimensional but field '%s' is "
                        "%d-dimensional (a field's layout sets its dimensions: \"layout\": \"%s\" makes a "
                        "%d-dimensional one, see docs/scene-format.md)",
                        k->fn->name, q->name, q->dim, eng_field_info(f)->name, info->dim,
                        like[q->dim < 4 ? q->dim : 3], q->dim);
    }
    return ENG_OK;
}

int eng_launch(eng_context *ctx, eng_kernel *k, const eng_arg *args, uint32_t nargs)
{
    if (!k || (nargs && !args))
        return eng_fail(ctx, ENG_EINVAL, "eng_launch: no kernel or arguments");
    if (nargs != k->nparams)
        return eng_fail(ctx, ENG_EINVAL, "kernel '%s' takes %u arguments, got %u", k->fn->name,
                        k->nparams, nargs);
    int rc = eng_runtime_ready(ctx);
    if (rc)
        return rc;
    ir_field_info infos[ENG_MAX_PARAMS];
    uint32_t ids[ENG_MAX_PARAMS], nf = 0;
    for (uint32_t p = 0; p < k->nparams; p++) {
        const eng_param *q = &k->params[p];
        if (q->type != ENG_P_FIELD_F32 && q->type != ENG_P_FIELD_VEC3)
            continue;
        eng_field *f = args[p].field;
        int frc = eng_kernel_check_field(ctx, k, p, f);
        if (frc)
            return frc;
        const ir_field_info *info = eng_field_ir_info(f);
        infos[nf] = *info;
        ids[nf++] = (uint32_t)eng_field_id(f);
    }
    eng_spec *s = NULL;
    for (uint32_t i = 0; i < k->nspecs && !s; i++)
        if (k->specs[i].nfields == nf && !memcmp(k->specs[i].fields, infos, nf * sizeof *infos))
            s = &k->specs[i];
    if (!s && (rc = make_spec(ctx, k, infos, nf, &s)) != ENG_OK)
        return rc;
    /* A kernel without effect (pure code) offloads to no task at all. */
    if (!s->ntasks)
        return ENG_OK;
    eng_binding *b = NULL;
    if ((rc = bind(ctx, k, s, ids, &b)) != ENG_OK)
        return rc;
    uint64_t slots[4 * ENG_MAX_PARAMS + 16];
    if (s->nargs > sizeof slots / sizeof *slots)
        return eng_fail(ctx, ENG_EINVAL, "kernel '%s': too many scalar arguments", k->fn->name);
    memset(slots, 0, sizeof slots);
    if ((rc = pack_args(ctx, k, s, args, slots)) != ENG_OK)
        return rc;
    /* "kernel#task", put together by hand rather than by snprintf: this runs for every task
     * of every launch, about 2,000 a frame of the default scene */
    char name[96];
    size_t nl = strnlen(k->fn->name, sizeof name - 12);
    memcpy(name, k->fn->name, nl);
    name[nl++] = '#';
    for (uint32_t t = 0; t < b->ntasks; t++) {
        char digits[12];
        int nd = 0;
        uint32_t v = t;
        do
            digits[nd++] = (char)('0' + v % 10);
        while ((v /= 10) && nd < (int)sizeof digits);
        for (int d = 0; d < nd; d++)
            name[nl + (size_t)d] = digits[nd - 1 - d];
        name[nl + (size_t)nd] = 0;
        int src = sfg_launch_tagged(ctx->queue, b->irs[t], slots, s->nargs * sizeof *slots, name,
                                    k->program->origin);
        if (src != SFG_OK)
            return eng_queue_error(ctx, src);
    }
    return ENG_OK;
}
