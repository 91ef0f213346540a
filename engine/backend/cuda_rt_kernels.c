/* cuda_rt_kernels.c — the runtime's own tasks (clear_list, listgen, gc) as GPU kernels.
 *
 * Device code: built by clang-16 for nvptx64 into bitcode at build time (never by the host
 * compiler), embedded in the plugin, linked with the runtime's nvptx64 bitcode and lowered to
 * PTX for the device's sm when a CUDA context opens (engine/exec_cuda.c). Every function named
 * plm_cuda_k_* is a kernel.
 *
 * Nothing here needs the host to know a count: list sizes and pending gc cells are read on the
 * device, so a batch of tasks launches without a round trip (and can be one CUDA graph). The
 * kernels that run on one thread (serial) may be launched with any grid; only thread 0 of
 * block 0 works. The grid-stride kernels accept any grid. */
#include "sparse/runtime/runtime.h"

static int first_thread(void)
{
    return __nvvm_read_ptx_sreg_tid_x() == 0 && __nvvm_read_ptx_sreg_ctaid_x() == 0;
}

static int32_t grid_thread(void)
{
    return (int32_t)(__nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
                     __nvvm_read_ptx_sreg_tid_x());
}

static int32_t grid_threads(void)
{
    return (int32_t)(__nvvm_read_ptx_sreg_nctaid_x() * __nvvm_read_ptx_sreg_ntid_x());
}

void plm_cuda_k_clear_list(plm_runtime *rt, int32_t snode)
{
    if (first_thread())
        plm_rt_list_clear(rt, snode);
}

/* list(root) holds one element, made when the tree was created; this remakes it only when it
 * is missing, so tasks that run at once never race to rewrite it. */
void plm_cuda_k_listgen_root(plm_runtime *rt)
{
    if (first_thread() && plm_rt_list_size(rt, 0) != 1)
        plm_rt_listgen_root(rt);
}

void plm_cuda_k_listgen_items(plm_runtime *rt, int32_t snode)
{
    int32_t n = plm_rt_listgen_num_items(rt, snode);
    for (int32_t i = grid_thread(); i < n; i += grid_threads())
        plm_rt_listgen_item(rt, snode, i);
}

/* One thread per cell of the parent's containers: a sparse level of 4096 cells is one work
 * item, which a single thread would scan alone. Not for dynamic SNodes (the items kernel). */
void plm_cuda_k_listgen_cells(plm_runtime *rt, int32_t snode)
{
    int64_t n = plm_rt_listgen_num_cells(rt, snode);
    for (int64_t i = grid_thread(); i < n; i += grid_threads())
        plm_rt_listgen_cell(rt, snode, i);
}

void plm_cuda_k_gc_begin(plm_runtime *rt, int32_t snode)
{
    if (first_thread())
        plm_rt_gc_begin(rt, snode);
}

void plm_cuda_k_gc_items(plm_runtime *rt, int32_t snode)
{
    int32_t n = rt->snodes[snode].alloc.gc_pending;
    for (int32_t i = grid_thread(); i < n; i += grid_threads())
        plm_rt_gc_item(rt, snode, i);
}

void plm_cuda_k_gc_end(plm_runtime *rt, int32_t snode)
{
    if (first_thread())
        rt->snodes[snode].alloc.gc_pending = 0;
}
