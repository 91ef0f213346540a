/* The async queue: launches append tasks; a flush builds the state-flow graph, runs the passes
 * until none changes anything, hands the tasks and their edges to the executor, and keeps the
 * nodes that still own a state for the next flush. Eager mode skips all of it. */
#include "engine/sfg/sfg_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Passes can enable each other (demotion -> listgen removal -> fusion -> dead stores ...);
 * they run in turn until a whole sweep changes nothing, at most this many sweeps. */
#define MAX_SWEEPS 8

sfg_queue *sfg_queue_create(sfg_bank *bank, sfg_executor_fn exec, void *exec_ud,
                            const sfg_options *opt) {
    if (!bank || !exec)
        return NULL;
    sfg_queue *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    q->bank = bank;
    q->exec = exec;
    q->exec_ud = exec_ud;
    if (opt)
        q->opt = *opt;
    const char *dir = opt && opt->dump_dir ? opt->dump_dir : getenv("PLUME_SFG_DUMP");
    snprintf(q->dump_dir, sizeof q->dump_dir, "%s", dir ? dir : "");
    q->opt.dump_dir = q->dump_dir;
    const char *memo = getenv("PLUME_SFG_MEMO");
    q->memo_on = !q->opt.eager && !q->opt.no_memo && !q->dump_dir[0] &&
                 (q->opt.disabled_passes & SFG_PASS_ALL) != SFG_PASS_ALL &&
                 !(memo && !strcmp(memo, "0"));
    if (sfg_graph_init(&q->g)) {
        free(q);
        return NULL;
    }
    return q;
}

void sfg_queue_destroy(sfg_queue *q) {
    if (!q)
        return;
    sfg_graph_free(&q->g);
    sfg_memo_free(&q->memo);
    free(q);
}

const char *sfg_error(const sfg_queue *q) { return q ? q->err : "no queue"; }
uint32_t sfg_pending(const sfg_queue *q) { return sfg_graph_pending(&q->g); }
const sfg_stats *sfg_get_stats(const sfg_queue *q) { return &q->stats; }
void sfg_reset_stats(sfg_queue *q) { memset(&q->stats, 0, sizeof q->stats); }

int sfg_parse_passes(const char *list, uint32_t *bits) {
    static const struct {
        const char *name;
        uint32_t bit;
    } names[] = {{"listgen", SFG_PASS_LISTGEN},
                 {"demote", SFG_PASS_DEMOTE},
                 {"fusion", SFG_PASS_FUSION},
                 {"dse", SFG_PASS_DSE}};
    *bits = 0;
    if (!list || !*list || !strcmp(list, "none"))
        return SFG_OK;
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        uint32_t found = 0;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i].name) == len && !strncmp(p, names[i].name, len))
                found = names[i].bit;
        if (!found)
            return SFG_EINVAL;
        *bits |= found;
        p += len;
        if (*p == ',')
            p++;
    }
    return SFG_OK;
}

static void count_launch(sfg_queue *q, const sfg_task_meta *m) {
    q->stats.launched[m->type]++;
    q->stats.tasks_launched++;
    if (m->type == SFG_LISTGEN)
        q->stats.listgens++;
}

static int run_eager(sfg_queue *q, sfg_ir ir, const sfg_task_meta *m, const void *args,
                     size_t args_size, const char *name, const sfg_tags *tags) {
    sfg_exec_task t = {.ir = ir, .meta = m, .args = args, .args_size = args_size,
                       .name = name ? name : "", .tags = *tags};
    sfg_batch b = {.tasks = &t, .n_tasks = 1, .in_order = 1, .index = q->batch_index++};
    count_launch(q, m);
    q->stats.flushes++;
    if (q->exec(q->exec_ud, &b)) {
        sfg_set_error(q->err, "sfg: the executor failed on task '%s'", t.name);
        return SFG_EEXEC;
    }
    return SFG_OK;
}

int sfg_launch(sfg_queue *q, sfg_ir ir, const void *args, size_t args_size, const char *name) {
    return sfg_launch_tagged(q, ir, args, args_size, name, NULL);
}

int sfg_launch_tagged(sfg_queue *q, sfg_ir ir, const void *args, size_t args_size,
                      const char *name, const void *tag) {
    if (!q)
        return SFG_EINVAL;
    sfg_tags tags = {{tag}, tag != NULL, 0};
    if (args_size && !args) {
        sfg_set_error(q->err, "sfg_launch: %zu bytes of arguments but no pointer", args_size);
        return SFG_EINVAL;
    }
    const sfg_task_meta *m;
    int rc = sfg_bank_meta(q->bank, ir, &m);
    if (rc) {
        sfg_set_error(q->err, "sfg_launch: %s", sfg_bank_error(q->bank));
        return rc;
    }
    q->stats.tasks_enqueued++;
    if (q->opt.eager)
        return run_eager(q, ir, m, args, args_size, name, &tags);
    if ((rc = sfg_graph_append(&q->g, ir, ir.hash, m, args, args_size, name, &tags))) {
        sfg_set_error(q->err, "sfg_launch: out of memory");
        return rc;
    }
    if (q->opt.flush_every && sfg_graph_pending(&q->g) >= q->opt.flush_every)
        return sfg_flush(q);
    return SFG_OK;
}

static int run_passes(sfg_queue *q) {
    static const struct {
        uint32_t bit;
        const char *name;
        int (*fn)(sfg_queue *, int *);
    } passes[] = {{SFG_PASS_LISTGEN, "listgen", sfg_pass_listgen},
                  {SFG_PASS_DEMOTE, "demote", sfg_pass_demote},
                  {SFG_PASS_FUSION, "fusion", sfg_pass_fusion},
                  {SFG_PASS_DSE, "dse", sfg_pass_dse}};
    /* Fusion runs its rounds until one fuses nothing, so it is at a fixpoint when it returns:
     * it runs again only after another pass changed the graph. (The others run again after
     * their own changes too: one removal or demotion can enable the next.) */
    uint32_t n_changes = 0, fusion_seen = UINT32_MAX;
    for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
        int any = 0;
        for (size_t p = 0; p < sizeof passes / sizeof passes[0]; p++) {
            if (q->opt.disabled_passes & passes[p].bit)
                continue;
            int is_fusion = passes[p].bit == SFG_PASS_FUSION;
            if (is_fusion && fusion_seen == n_changes)
                continue;
            int changed = 0;
            int rc = passes[p].fn(q, &changed);
            if (rc) {
                sfg_set_error(q->err, "sfg: pass %s failed: %s", passes[p].name,
                              rc == SFG_ENOMEM ? "out of memory" : sfg_bank_error(q->bank));
                return rc;
            }
            if (changed) {
                sfg_dump(q, passes[p].name);
                n_changes++;
            }
            if (is_fusion)
                fusion_seen = n_changes;
            any |= changed;
        }
        if (!any)
            break;
    }
    return SFG_OK;
}

/* Builds the graph of the pending tasks and runs the passes, or takes what they made of the
 * same flush before (memo.c). The key needs only the accesses' versions (sfg_graph_number), so
 * a flush found in the memo builds its graph once, from the replayed tasks. A memo that cannot
 * keep an entry (out of memory) only loses the shortcut. */
static int optimize(sfg_queue *q) {
    sfg_graph *g = &q->g;
    int passes = (q->opt.disabled_passes & SFG_PASS_ALL) != SFG_PASS_ALL;
    uint64_t key[2] = {0, 0};
    int rc;
    if (q->memo_on && passes) {
        if ((rc = sfg_graph_number(g))) {
            sfg_set_error(q->err, "sfg: out of memory building the graph");
            return rc;
        }
        sfg_memo_key(g, key);
        const sfg_memo_entry *e = sfg_memo_find(&q->memo, key);
        if (e) {
            if ((rc = sfg_memo_replay(e, g, &q->stats)))
                sfg_set_error(q->err, "sfg: out of memory");
            else
                q->stats.flushes_memoized++;
            return rc;
        }
    }
    if ((rc = sfg_graph_rebuild(g))) {
        sfg_set_error(q->err, "sfg: out of memory building the graph");
        return rc;
    }
    sfg_dump(q, "input");
    if (!passes)
        return SFG_OK;
    sfg_stats before = q->stats;
    if ((rc = run_passes(q)))
        return rc;
    sfg_dump(q, "output");
    if (q->memo_on)
        (void)sfg_memo_store(&q->memo, key, g, &before, &q->stats);
    return SFG_OK;
}

/* Edges between pending tasks, as positions in the batch, one per pair. The graph's edges come
 * grouped by their head (insert() adds a task's edges as it inserts the task), so a pair's
 * duplicates lie in one group: a mark per tail finds them without sorting (a qsort per flush
 * was a fifth of a memoized flush's time). Ordered by head, then first appearance. */
static int batch_edges(const sfg_graph *g, sfg_edge **out, uint32_t *n_out) {
    uint32_t fp = g->first_pending, np = g->n_node - fp, n = 0;
    *out = NULL;
    *n_out = 0;
    if (!g->n_edge || !np)
        return SFG_OK;
    sfg_edge *e = malloc((size_t)g->n_edge * sizeof *e);
    uint32_t *at = malloc((size_t)np * 2 * sizeof *at);
    if (!e || !at) {
        free(e);
        free(at);
        return SFG_ENOMEM;
    }
    /* at[2p]: the head whose group last met tail p; at[2p + 1]: that edge's position */
    for (uint32_t p = 0; p < np; p++)
        at[2 * p] = UINT32_MAX;
    for (uint32_t i = 0; i < g->n_edge; i++) {
        const sfg_gedge *x = &g->edge[i];
        if (x->from < fp)
            continue;
        uint32_t from = x->from - fp, to = x->to - fp;
        if (at[2 * from] == to) {
            e[at[2 * from + 1]].kinds |= x->kind;
            continue;
        }
        at[2 * from] = to;
        at[2 * from + 1] = n;
        e[n++] = (sfg_edge){from, to, x->kind};
    }
    free(at);
    *out = e;
    *n_out = n;
    return SFG_OK;
}

static int flush(sfg_queue *q, int sync) {
    sfg_graph *g = &q->g;
    uint32_t np = sfg_graph_pending(g);
    if (!np)
        return SFG_OK;
    double t0 = sfg_now();
    q->dump_step = 0;
    int rc = optimize(q);
    sfg_edge *edges = NULL;
    uint32_t n_edges = 0;
    sfg_exec_task *tasks = NULL;
    if (!rc && (rc = batch_edges(g, &edges, &n_edges)))
        sfg_set_error(q->err, "sfg: out of memory");
    np = sfg_graph_pending(g);
    if (!rc && np && !(tasks = malloc((size_t)np * sizeof *tasks))) {
        rc = SFG_ENOMEM;
        sfg_set_error(q->err, "sfg: out of memory");
    }
    if (rc) {
        /* the queued work cannot run as optimized: drop it and what the graph knew */
        free(edges);
        sfg_graph_forget(g);
        return rc;
    }
    for (uint32_t p = 0; p < np; p++) {
        const sfg_node *n = &g->node[g->first_pending + p];
        tasks[p] = (sfg_exec_task){.ir = n->ir, .meta = n->meta, .args = n->args,
                                   .args_size = n->args_size, .name = n->name, .tags = n->tags};
        count_launch(q, n->meta);
    }
    q->stats.optimizer_s += sfg_now() - t0;
    sfg_batch b = {.tasks = tasks, .n_tasks = np, .edges = edges, .n_edges = n_edges,
                   .sync = sync, .in_order = sync, .index = q->batch_index++};
    q->stats.flushes++;
    int xr = np ? q->exec(q->exec_ud, &b) : 0;
    free(tasks);
    free(edges);
    if (xr) {
        sfg_set_error(q->err, "sfg: the executor failed on batch %llu",
                      (unsigned long long)b.index);
        sfg_graph_forget(g);
        return SFG_EEXEC;
    }
    if ((rc = sfg_graph_retire(g))) {
        sfg_set_error(q->err, "sfg: out of memory");
        sfg_graph_forget(g);
    }
    return rc;
}

int sfg_flush(sfg_queue *q) { return q ? flush(q, 0) : SFG_EINVAL; }
int sfg_sync(sfg_queue *q) { return q ? flush(q, 1) : SFG_EINVAL; }

int sfg_host_write(sfg_queue *q, const sfg_state *states, uint32_t n) {
    if (!q || (n && !states))
        return SFG_EINVAL;
    if (sfg_graph_pending(&q->g)) {
        sfg_set_error(q->err, "sfg_host_write: %u tasks still queued; call sfg_sync first",
                      sfg_graph_pending(&q->g));
        return SFG_EINVAL;
    }
    for (uint32_t i = 0; i < n; i++)
        if (sfg_graph_host_write(&q->g, states[i])) {
            sfg_set_error(q->err, "sfg_host_write: out of memory");
            return SFG_ENOMEM;
        }
    return SFG_OK;
}

int sfg_forget(sfg_queue *q) {
    if (!q)
        return SFG_EINVAL;
    if (sfg_graph_pending(&q->g)) {
        sfg_set_error(q->err, "sfg_forget: %u tasks still queued", sfg_graph_pending(&q->g));
        return SFG_EINVAL;
    }
    sfg_graph_forget(&q->g);
    return SFG_OK;
}
