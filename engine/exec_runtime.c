/* The runtime's clear_list, listgen and gc tasks, parallel over the runtime's work items. */
#include "engine/exec_runtime.h"

typedef struct item_job {
    plm_runtime *rt;
    int32_t snode;
} item_job;

static void listgen_items(void *ud, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    item_job *j = ud;
    for (int64_t i = begin; i < end; i++)
        plm_rt_listgen_item(j->rt, j->snode, (int32_t)i);
}

static void gc_items(void *ud, int64_t begin, int64_t end, int worker)
{
    (void)worker;
    item_job *j = ud;
    for (int64_t i = begin; i < end; i++)
        plm_rt_gc_item(j->rt, j->snode, (int32_t)i);
}

void exec_clear_list(plm_runtime *rt, int32_t snode) { plm_rt_list_clear(rt, snode); }

int exec_listgen(cpu_pool *pool, plm_runtime *rt, int32_t snode, int ordered, char *err,
                 size_t err_size)
{
    /* list(root) is a single element nothing else maintains: making it is O(1). */
    if (rt->snodes[snode].parent == 0)
        plm_rt_listgen_root(rt);
    item_job j = {rt, snode};
    int32_t n = plm_rt_listgen_num_items(rt, snode);
    if (ordered) {
        listgen_items(&j, 0, n, 0);
        return 0;
    }
    /* Items are at most PLM_RT_LISTGEN_CHUNK cells each: small grains balance sparse parents. */
    return cpu_pool_parallel_for(pool, n, 4, listgen_items, &j, err, err_size);
}

int exec_gc(cpu_pool *pool, plm_runtime *rt, int32_t snode, char *err, size_t err_size)
{
    item_job j = {rt, snode};
    int32_t n = plm_rt_gc_begin(rt, snode);
    int rc = cpu_pool_parallel_for(pool, n, 256, gc_items, &j, err, err_size);
    /* As plm_rt_gc does: nothing is pending once every item has moved its cell. */
    rt->snodes[snode].alloc.gc_pending = 0;
    return rc;
}
