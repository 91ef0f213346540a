/* The real SFG queue (engine/sfg) driven by bound tasks made from hand-built kernels through
 * passes_offload: what the executor receives for q *= 2 then q += 1 over a VDB-like field,
 * launched twice. */
#include "tests/check.h"
#include "engine/passes/passes.h"
#include "pass_util.h"

typedef struct rec {
    uint32_t batches;
    uint32_t n[4];
    uint32_t types[4][SFG_TASK_TYPE_COUNT];
    uint32_t stores[4];   /* global_store statements in the batch's struct_for tasks */
    int prepared;         /* every loop task lowered and verified */
} rec;

static int count_stores(ir_stmt *s, void *ud)
{
    uint32_t *n = ud;
    *n += s->op == IR_GLOBAL_STORE;
    return 0;
}

static int executor(void *ud, const sfg_batch *batch)
{
    rec *r = ud;
    uint32_t k = r->batches < 4 ? r->batches : 3;
    r->batches++;
    r->n[k] = batch->n_tasks;
    for (uint32_t i = 0; i < batch->n_tasks; i++) {
        const sfg_exec_task *t = &batch->tasks[i];
        r->types[k][t->meta->type]++;
        if (t->meta->type == SFG_STRUCT_FOR) {
            const passes_bound *b = t->ir.ir;
            ir_walk(b->task->body, count_stores, &r->stores[k]);
            ir_task *low = NULL;
            char err[256];
            if (passes_prepare_codegen(b->task, &low, err, sizeof err) != 0) {
                fprintf(stderr, "prepare: %s\n", err);
                r->prepared = 0;
            }
            ir_task_free(low);
        }
    }
    return 0;
}

/* for (I in q) q[I] = q[I] <op> c */
static ir_task *kernel(const char *name, int op, double c)
{
    ir_field_info f[1] = {vdb_field("q")};
    ir_task *k = ir_task_new(IR_TASK_KERNEL, name, f, 1, NULL, 0);
    ir_builder b;
    ir_builder_init(&b, k);
    ir_stmt *loop = ir_struct_for(&b, 0);
    ir_builder_at_end(&b, loop->body);
    ir_stmt *I[3];
    for (int a = 0; a < 3; a++)
        I[a] = ir_loop_index(&b, loop, (uint32_t)a);
    ir_stmt *p = ir_global_ptr(&b, 0, 0, I);
    ir_stmt *v = ir_global_load(&b, p);
    ir_global_store(&b, p, ir_binary(&b, op, v, ir_const_float(&b, IR_F32, c)));
    return k;
}

typedef struct launchable {
    sfg_ir ir[8];
    uint32_t n;
} launchable;

static int prepare(sfg_bank *bank, ir_task *k, uint32_t gtmp_state, launchable *out)
{
    ir_task **tasks = NULL;
    uint32_t nt = 0;
    char err[256];
    int rc = passes_offload(k, &tasks, &nt, err, sizeof err);
    ir_task_free(k);
    if (rc != 0 || nt > 8) {
        fprintf(stderr, "offload: %s\n", err);
        return -1;
    }
    uint32_t id = 1;
    out->n = nt;
    for (uint32_t i = 0; i < nt && !rc; i++) {
        passes_bound *b = passes_bound_create(tasks[i], &id, 1, gtmp_state);
        rc = !b || sfg_bank_intern(bank, b, &out->ir[i]) != SFG_OK;
    }
    for (uint32_t i = 0; i < nt; i++)
        ir_task_free(tasks[i]);
    free(tasks);
    return rc ? -1 : 0;
}

static void launch(sfg_queue *q, const launchable *l)
{
    for (uint32_t i = 0; i < l->n; i++)
        CHECK_EQ(sfg_launch(q, l->ir[i], NULL, 0, "t"), SFG_OK);
}

int main(void)
{
    sfg_ir_ops ops = passes_sfg_ops();
    sfg_bank *bank = sfg_bank_create(&ops);
    rec r;
    memset(&r, 0, sizeof r);
    r.prepared = 1;
    sfg_queue *q = bank ? sfg_queue_create(bank, executor, &r, NULL) : NULL;
    CHECK(q != NULL);
    launchable mul, add;
    CHECK_EQ(prepare(bank, kernel("mul", IR_MUL, 2.0), 1000, &mul), 0);
    CHECK_EQ(prepare(bank, kernel("add", IR_ADD, 1.0), 1001, &add), 0);
    /* per kernel: clear_list + listgen for levels 1 and 2, then the struct_for */
    CHECK_EQ(mul.n, 5);
    CHECK_EQ(add.n, 5);
    /* the list tasks of both kernels are the same IR with the same binding: one bank entry */
    CHECK_EQ(mul.ir[1].hash, add.ir[1].hash);
    CHECK(mul.ir[4].hash != add.ir[4].hash);

    launch(q, &mul);
    launch(q, &add);
    CHECK_EQ(sfg_sync(q), SFG_OK);
    /* first flush: the lists are made once (add's list tasks are redundant: mul's writes at
     * its own loop index are demoted, so the masks stay), and the two struct_fors fuse */
    CHECK_EQ(r.batches, 1);
    CHECK_EQ(r.n[0], 5);
    CHECK_EQ(r.types[0][SFG_LISTGEN], 2);
    CHECK_EQ(r.types[0][SFG_CLEAR_LIST], 2);
    CHECK_EQ(r.types[0][SFG_STRUCT_FOR], 1);
    CHECK_EQ(r.stores[0], 2);

    launch(q, &mul);
    launch(q, &add);
    CHECK_EQ(sfg_sync(q), SFG_OK);
    /* second flush: the lists the first one made are still up to date */
    CHECK_EQ(r.batches, 2);
    CHECK_EQ(r.n[1], 1);
    CHECK_EQ(r.types[1][SFG_LISTGEN], 0);
    CHECK_EQ(r.types[1][SFG_STRUCT_FOR], 1);
    CHECK_EQ(r.stores[1], 2);
    CHECK(r.prepared);
    const sfg_stats *st = sfg_get_stats(q);
    CHECK_EQ(st->tasks_enqueued, 20);
    CHECK_EQ(st->tasks_launched, 6);
    sfg_queue_destroy(q);
    sfg_bank_destroy(bank);
    CHECK_DONE();
}
