/* The toy IR: interpreter, metadata, IR operations and a recording executor. */
#include "toy_ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int toy_parent[TOY_SNODES] = {-1, 0, -1, -1};

toy_ir *toy_new(int loop, int snode, int begin, int end, int n_args, const toy_stmt *s, int n) {
    toy_ir *ir = calloc(1, sizeof *ir + (size_t)n * sizeof(toy_stmt));
    if (!ir)
        return NULL;
    ir->loop = (uint8_t)loop;
    ir->snode = (uint8_t)snode;
    ir->begin = begin;
    ir->end = end;
    ir->n_args = (uint8_t)n_args;
    ir->n = (uint32_t)n;
    if (n)
        memcpy(ir->s, s, (size_t)n * sizeof *s);
    return ir;
}

static toy_ir *toy_copy(const toy_ir *ir, uint32_t extra) {
    toy_ir *c = calloc(1, sizeof *c + (size_t)(ir->n + extra) * sizeof(toy_stmt));
    if (!c)
        return NULL;
    memcpy(c, ir, sizeof *c + (size_t)ir->n * sizeof(toy_stmt));
    return c;
}

/* ---- interpreter ---- */

static int wrap(int64_t x) { return (int)(((x % TOY_N) + TOY_N) % TOY_N); }

static int toy_addr(int mode, int off, int i, const int32_t *args, int scalar) {
    if (scalar)
        return 0;
    switch (mode) {
    case TA_INDEX: return wrap((int64_t)i + off);
    case TA_CONST: return wrap(off);
    case TA_HALF: return wrap(i / 2);
    default: return wrap(args[off]);
    }
}

static void body(toy_world *w, const toy_ir *ir, const int32_t *args, int i) {
    for (uint32_t k = 0; k < ir->n; k++) {
        const toy_stmt *s = &ir->s[k];
        if (s->op == TOP_STORE || s->op == TOP_ADD) {
            int32_t v = s->c;
            if (s->src >= 0)
                v += w->val[s->src][toy_addr(s->smode, s->soff, i, args, s->src == TOY_SCALAR)];
            if (s->arg >= 0)
                v += args[s->arg];
            int a = toy_addr(s->mode, s->off, i, args, s->target == TOY_SCALAR);
            if (s->op == TOP_STORE)
                w->val[s->target][a] = v;
            else
                w->val[s->target][a] += v;
        } else {
            int a = toy_addr(s->mode, s->off, i, args, 0);
            w->mask[s->target][a] = s->op == TOP_ACTIVATE;
        }
    }
}

void toy_run(toy_world *w, const toy_ir *ir, const int32_t *args, int reverse) {
    switch (ir->loop) {
    case TOY_SERIAL:
        body(w, ir, args, 0);
        break;
    case TOY_RANGE:
        for (int32_t j = 0; j < ir->end - ir->begin; j++)
            body(w, ir, args, reverse ? ir->end - 1 - j : ir->begin + j);
        break;
    case TOY_STRUCT: {
        int32_t n = w->list_n[ir->snode];
        for (int32_t j = 0; j < n; j++)
            body(w, ir, args, w->list[ir->snode][reverse ? n - 1 - j : j]);
        break;
    }
    case TOY_CLEAR:
        w->list_n[ir->snode] = 0;
        break;
    case TOY_LISTGEN:
        for (int c = 0; c < TOY_N; c++) {
            if (!w->mask[ir->snode][c])
                continue;
            if (w->list_n[ir->snode] >= TOY_LIST_CAP) {
                w->overflow = 1;
                break;
            }
            w->list[ir->snode][w->list_n[ir->snode]++] = c;
        }
        break;
    default:
        break;
    }
}

void toy_world_init(toy_world *w, uint32_t seed) {
    memset(w, 0, sizeof *w);
    uint32_t x = seed * 2654435761u + 12345u;
    for (int f = 0; f < TOY_FIELDS; f++)
        for (int c = 0; c < TOY_N; c++) {
            x = x * 1664525u + 1013904223u;
            w->val[f][c] = seed ? (int32_t)(x >> 24) % 7 : 0;
        }
    for (int s = 0; s < TOY_SNODES; s++)
        for (int c = 0; c < TOY_N; c++) {
            x = x * 1664525u + 1013904223u;
            w->mask[s][c] = seed ? (x >> 28) & 1 : 0;
        }
}

/* ---- ops ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

static uint64_t op_hash(void *ud, const void *p) {
    toy_counters *c = ud;
    const toy_ir *ir = p;
    c->hashes++;
    uint64_t h = 0xcbf29ce484222325ull;
    int32_t head[8] = {ir->loop, ir->snode, ir->side_effects, ir->n_args,
                       ir->begin, ir->end, ir->family, ir->heavy};
    h = fnv(h, head, sizeof head);
    for (uint32_t k = 0; k < ir->n; k++) {
        const toy_stmt *s = &ir->s[k];
        int32_t v[9] = {s->op, s->target, s->mode, s->off, s->src, s->smode, s->soff, s->arg, s->c};
        h = fnv(h, v, sizeof v);
    }
    return h;
}

static int op_meta(void *ud, const void *p, sfg_task_meta *out) {
    toy_counters *c = ud;
    const toy_ir *ir = p;
    c->metas++;
    uint32_t n = 0;
    memset(out, 0, sizeof *out);
    out->flags = ir->side_effects ? SFG_TASK_SIDE_EFFECTS : 0;
    out->family = ir->family;
    out->snode = ir->snode;
    int parallel = ir->loop == TOY_RANGE || ir->loop == TOY_STRUCT;
    switch (ir->loop) {
    case TOY_SERIAL: out->type = SFG_SERIAL; break;
    case TOY_RANGE:
        out->type = SFG_RANGE_FOR;
        out->begin = ir->begin;
        out->end = ir->end;
        break;
    case TOY_STRUCT:
        out->type = SFG_STRUCT_FOR;
        c->acc[n++] = (sfg_access){SFG_STATE(SFG_LIST, ir->snode), SFG_ACC_READ, 0, 0};
        break;
    case TOY_CLEAR:
        out->type = SFG_CLEAR_LIST;
        c->acc[n++] =
            (sfg_access){SFG_STATE(SFG_LIST, ir->snode), SFG_ACC_WRITE | SFG_ACC_FULL, 0, 0};
        break;
    case TOY_LISTGEN:
        out->type = SFG_LISTGEN;
        c->acc[n++] =
            (sfg_access){SFG_STATE(SFG_LIST, ir->snode), SFG_ACC_READ | SFG_ACC_WRITE, 0, 0};
        c->acc[n++] = (sfg_access){SFG_STATE(SFG_MASK, ir->snode), SFG_ACC_READ, 0, 0};
        if (toy_parent[ir->snode] >= 0)
            c->acc[n++] =
                (sfg_access){SFG_STATE(SFG_LIST, toy_parent[ir->snode]), SFG_ACC_READ, 0, 0};
        break;
    case TOY_GC:
        out->type = SFG_GC;
        c->acc[n++] = (sfg_access){SFG_STATE(SFG_MASK, ir->snode), SFG_ACC_READ, 0, 0};
        c->acc[n++] = (sfg_access){SFG_STATE(SFG_ALLOC, ir->snode), SFG_ACC_WRITE, 0, 0};
        break;
    default:
        return 1;
    }
    for (int f = 0; f < TOY_FIELDS; f++) {
        int loads = 0, stores = 0, adds = 0, own = f != TOY_SCALAR;
        for (uint32_t k = 0; k < ir->n; k++) {
            const toy_stmt *s = &ir->s[k];
            if ((s->op == TOP_STORE || s->op == TOP_ADD) && s->target == f) {
                stores += s->op == TOP_STORE;
                adds += s->op == TOP_ADD;
                own &= s->mode == TA_INDEX && s->off == 0;
            }
            if (s->src == f) {
                loads++;
                own &= s->smode == TA_INDEX && s->soff == 0;
            }
        }
        if (!loads && !stores && !adds)
            continue;
        uint32_t fl = 0;
        if (loads || adds)
            fl |= SFG_ACC_READ;
        if (stores || adds)
            fl |= SFG_ACC_WRITE;
        if (parallel && own)
            fl |= SFG_ACC_UNIQUE;
        if (adds && !stores && !loads)
            fl |= SFG_ACC_ATOMIC;
        if ((fl & SFG_ACC_UNIQUE) && stores)
            fl |= SFG_ACC_COVER;
        if ((fl & SFG_ACC_WRITE) && !(fl & SFG_ACC_READ) &&
            ((ir->loop == TOY_SERIAL && f == TOY_SCALAR) ||
             (ir->loop == TOY_RANGE && ir->begin == 0 && ir->end == TOY_N &&
              (fl & SFG_ACC_COVER))))
            fl |= SFG_ACC_FULL;
        c->acc[n++] = (sfg_access){SFG_STATE(SFG_VALUE, f), fl, 0, 1};
    }
    for (int sn = 0; sn < TOY_SNODES; sn++) {
        int acts = 0, deacts = 0, by_arg = 0, own = 1;
        for (uint32_t k = 0; k < ir->n; k++) {
            const toy_stmt *s = &ir->s[k];
            if ((s->op != TOP_ACTIVATE && s->op != TOP_DEACTIVATE) || s->target != sn)
                continue;
            acts += s->op == TOP_ACTIVATE;
            deacts += s->op == TOP_DEACTIVATE;
            by_arg |= s->mode == TA_ARG;
            own &= s->mode == TA_INDEX && s->off == 0;
        }
        if (!acts && !deacts)
            continue;
        uint32_t fl = SFG_ACC_READ | SFG_ACC_WRITE;
        if (acts && !deacts)
            fl |= SFG_ACC_ATOMIC | (by_arg ? 0 : SFG_ACC_INDEX_ONLY);
        /* toy statements are unconditional: activations at i activate every index's cell */
        if (acts && !deacts && parallel && own)
            fl |= SFG_ACC_AT_INDEX | SFG_ACC_AT_EVERY_INDEX;
        if (parallel && own)
            fl |= SFG_ACC_UNIQUE;
        c->acc[n++] = (sfg_access){SFG_STATE(SFG_MASK, sn), fl, 0, 2};
        if (acts)
            c->acc[n++] =
                (sfg_access){SFG_STATE(SFG_ALLOC, sn), SFG_ACC_WRITE | SFG_ACC_ATOMIC, 0, 3};
    }
    /* a struct_for's list access is listed first; a field access may not repeat it */
    out->n_access = n;
    out->access = c->acc;
    return 0;
}

static void *op_fuse(void *ud, const void *pa, const void *pb, const sfg_arg_match *m) {
    (void)m; /* arg_unit is 0: arguments are not compared */
    toy_counters *c = ud;
    const toy_ir *a = pa, *b = pb;
    c->fuses++;
    if (a->loop != b->loop)
        return NULL;
    /* like the engine's heavy bodies that share no work */
    if (a->heavy && b->heavy && !(a->family && a->family == b->family))
        return NULL;
    toy_ir *f = toy_copy(a, b->n);
    if (!f)
        return NULL;
    for (uint32_t k = 0; k < b->n; k++) {
        toy_stmt s = b->s[k];
        if (s.arg >= 0)
            s.arg = (int8_t)(s.arg + a->n_args);
        if (s.mode == TA_ARG)
            s.off = (int8_t)(s.off + a->n_args);
        f->s[a->n + k] = s;
    }
    f->n = a->n + b->n;
    f->n_args = (uint8_t)(a->n_args + b->n_args);
    f->side_effects = a->side_effects | b->side_effects;
    f->family = 0;
    f->heavy = a->heavy | b->heavy;
    return f;
}

static void *op_demote(void *ud, const void *p, uint32_t snode) {
    toy_counters *c = ud;
    const toy_ir *ir = p;
    c->demotes++;
    toy_ir *d = toy_copy(ir, 0);
    if (!d)
        return NULL;
    uint32_t w = 0;
    for (uint32_t k = 0; k < ir->n; k++)
        if (!(ir->s[k].op == TOP_ACTIVATE && ir->s[k].target == snode))
            d->s[w++] = ir->s[k];
    d->n = w;
    return d;
}

static void *op_remove(void *ud, const void *p, sfg_state state, int *empty) {
    toy_counters *c = ud;
    const toy_ir *ir = p;
    c->removes++;
    if (SFG_STATE_KIND(state) != SFG_VALUE)
        return NULL;
    uint32_t f = SFG_STATE_ID(state);
    for (uint32_t k = 0; k < ir->n; k++) {
        const toy_stmt *s = &ir->s[k];
        int store = (s->op == TOP_STORE || s->op == TOP_ADD) && s->target == f;
        if (!store && s->src == (int)f)
            return NULL; /* a load of f would see a different value: decline */
    }
    toy_ir *d = toy_copy(ir, 0);
    if (!d)
        return NULL;
    uint32_t w = 0;
    for (uint32_t k = 0; k < ir->n; k++) {
        const toy_stmt *s = &ir->s[k];
        if (!((s->op == TOP_STORE || s->op == TOP_ADD) && s->target == f))
            d->s[w++] = *s;
    }
    d->n = w;
    *empty = w == 0 && !ir->side_effects;
    return d;
}

static void op_free(void *ud, void *p) {
    toy_counters *c = ud;
    c->frees++;
    free(p);
}

sfg_ir_ops toy_ops(toy_counters *counters) {
    return (sfg_ir_ops){.ud = counters,
                        .hash = op_hash,
                        .meta = op_meta,
                        .fuse = op_fuse,
                        .demote_activation = op_demote,
                        .remove_stores = op_remove,
                        .free_ir = op_free};
}

/* ---- executor ---- */

static int conflict(const sfg_task_meta *a, const sfg_task_meta *b) {
    for (uint32_t i = 0; i < a->n_access; i++)
        for (uint32_t j = 0; j < b->n_access; j++)
            if (a->access[i].state == b->access[j].state &&
                ((a->access[i].flags | b->access[j].flags) & SFG_ACC_WRITE))
                return 1;
    return 0;
}

/* Every pair of conflicting tasks must be ordered by a path of edges, or a backend that only
 * honours the edges could run them in either order. */
static int check_paths(const sfg_batch *b) {
    uint32_t n = b->n_tasks, words = (n + 63) / 64;
    uint64_t *reach = calloc((size_t)n * words, sizeof *reach);
    if (!reach)
        return 1;
    for (uint32_t i = n; i-- > 0;) {
        uint64_t *row = reach + (size_t)i * words;
        for (uint32_t e = 0; e < b->n_edges; e++) {
            if (b->edges[e].from != i)
                continue;
            uint32_t t = b->edges[e].to;
            row[t / 64] |= 1ull << (t % 64);
            for (uint32_t w = 0; w < words; w++)
                row[w] |= reach[(size_t)t * words + w];
        }
    }
    int missing = 0;
    for (uint32_t i = 0; i < n && !missing; i++)
        for (uint32_t j = i + 1; j < n && !missing; j++)
            if (conflict(b->tasks[i].meta, b->tasks[j].meta) &&
                !((reach[(size_t)i * words + j / 64] >> (j % 64)) & 1))
                missing = 1;
    free(reach);
    return missing;
}

/* sfg.h: one edge per pair of tasks (the queue merges the kinds of a pair's edges). */
static int duplicate_pair(const sfg_batch *b) {
    for (uint32_t i = 0; i < b->n_edges; i++)
        for (uint32_t j = i + 1; j < b->n_edges; j++)
            if (b->edges[i].from == b->edges[j].from && b->edges[i].to == b->edges[j].to)
                return 1;
    return 0;
}

int toy_executor(void *ud, const sfg_batch *b) {
    toy_exec *e = ud;
    e->batches++;
    e->syncs += b->sync ? 1 : 0;
    e->in_order += b->in_order ? 1 : 0;
    if (b->sync && !b->in_order) /* the queue broke sfg.h's contract: fail whatever test ran */
        return 1;
    if (e->fail)
        return 1;
    e->last_n = b->n_tasks;
    e->last_n_edges = b->n_edges;
    if (b->n_edges > e->last_edges_cap) {
        free(e->last_edges);
        e->last_edges = malloc((size_t)b->n_edges * sizeof *e->last_edges);
        e->last_edges_cap = e->last_edges ? b->n_edges : 0;
    }
    if (e->last_edges && b->n_edges)
        memcpy(e->last_edges, b->edges, (size_t)b->n_edges * sizeof *b->edges);
    for (uint32_t i = 0; i < b->n_edges; i++)
        if (b->edges[i].from >= b->edges[i].to || b->edges[i].to >= b->n_tasks)
            e->bad_order = 1;
    if (b->n_edges <= 4096 && duplicate_pair(b))
        e->bad_order = 1;
    if (b->n_tasks <= 512 && check_paths(b))
        e->missing_dep = 1;
    for (uint32_t i = 0; i < b->n_tasks; i++) {
        const sfg_exec_task *t = &b->tasks[i];
        if (i < TOY_MAX_BATCH) {
            e->last_hash[i] = t->ir.hash;
            e->last_type[i] = t->meta->type;
            snprintf(e->last_name[i], sizeof e->last_name[i], "%s", t->name);
            e->last_tags[i] = t->tags;
        }
        e->tasks++;
        e->by_type[t->meta->type]++;
        const toy_ir *ir = t->ir.ir;
        if (t->args_size != (size_t)ir->n_args * sizeof(int32_t))
            return 1;
        if (e->world)
            toy_run(e->world, ir, t->args, e->reverse);
    }
    return 0;
}

void toy_exec_free(toy_exec *e) {
    free(e->last_edges);
    e->last_edges = NULL;
    e->last_edges_cap = 0;
}

int toy_env_init(toy_env *env, const sfg_options *opt, int run_world, int reverse) {
    memset(env, 0, sizeof *env);
    sfg_ir_ops ops = toy_ops(&env->cnt);
    env->bank = sfg_bank_create(&ops);
    if (!env->bank)
        return 1;
    env->ex.world = run_world ? &env->world : NULL;
    env->ex.reverse = reverse;
    env->q = sfg_queue_create(env->bank, toy_executor, &env->ex, opt);
    return env->q ? 0 : 1;
}

void toy_env_free(toy_env *env) {
    sfg_queue_destroy(env->q);
    sfg_bank_destroy(env->bank);
    toy_exec_free(&env->ex);
}

int toy_launch(toy_env *env, toy_ir *ir, const int32_t *args, const char *name) {
    return toy_launch_tagged(env, ir, args, name, NULL);
}

int toy_launch_tagged(toy_env *env, toy_ir *ir, const int32_t *args, const char *name,
                      const void *tag) {
    if (!ir)
        return SFG_ENOMEM;
    size_t n_args = ir->n_args;
    sfg_ir h;
    int rc = sfg_bank_intern(env->bank, ir, &h);
    if (rc)
        return rc;
    return sfg_launch_tagged(env->q, h, args, n_args * sizeof(int32_t), name, tag);
}

int toy_last_count(const toy_env *env, int type) {
    int n = 0;
    for (uint32_t i = 0; i < env->ex.last_n && i < TOY_MAX_BATCH; i++)
        n += env->ex.last_type[i] == type;
    return n;
}
