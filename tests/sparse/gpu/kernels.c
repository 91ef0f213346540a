/* Device side of the GPU test: kernels in C for nvptx64, linked with the runtime bitcode. The
 * build marks every function named plm_gpu_k_* as a kernel (nvvm.annotations). */
#include "sparse/runtime/runtime.h"

static int32_t gid(void)
{
    return (int32_t)(__nvvm_read_ptx_sreg_ctaid_x() * __nvvm_read_ptx_sreg_ntid_x() +
                     __nvvm_read_ptx_sreg_tid_x());
}

/* Same hash as the host side. */
static float value_of(const int32_t *v)
{
    uint32_t h = ((uint32_t)v[0] * 73856093u) ^ ((uint32_t)v[1] * 19349663u) ^
                 ((uint32_t)v[2] * 83492791u);
    return (float)(h >> 8) * 1e-3f;
}

void plm_gpu_k_layout(uint64_t *out)
{
    if (gid() != 0)
        return;
    out[0] = sizeof(plm_runtime);
    out[1] = __builtin_offsetof(plm_runtime, snodes);
    out[2] = __builtin_offsetof(plm_runtime, fields);
    out[3] = sizeof(plm_rt_snode);
    out[4] = sizeof(plm_rt_elem);
}

void plm_gpu_k_init(void *arena, uint64_t bytes, const plm_rt_config *cfg, uint64_t *out)
{
    if (gid() != 0)
        return;
    uint64_t needed = 0;
    plm_runtime *rt = plm_rt_init(arena, bytes, cfg, &needed);
    out[0] = (uint64_t)(uintptr_t)rt;
    out[1] = needed;
}

void plm_gpu_k_write(plm_runtime *rt, const int32_t *vox, int32_t n, int32_t fvalue,
                     int32_t fcount)
{
    int32_t i = gid();
    if (i >= n)
        return;
    const int32_t *v = vox + 3 * i;
    float *p = (float *)plm_rt_access(rt, fvalue, v[0], v[1], v[2], 1);
    *p = value_of(v);
    float *c = (float *)plm_rt_access(rt, fcount, v[0], v[1], v[2], 1);
    __nvvm_atom_add_gen_f(c, 1.0f);
}

void plm_gpu_k_read(plm_runtime *rt, const int32_t *vox, int32_t n, int32_t field, float *out)
{
    int32_t i = gid();
    if (i >= n)
        return;
    const int32_t *v = vox + 3 * i;
    const float *p = (const float *)plm_rt_access(rt, field, v[0], v[1], v[2], 0);
    out[i] = p ? *p : -12345.0f;
}

/* One thread: start list generation of a level and say how many items it has. */
void plm_gpu_k_listgen_begin(plm_runtime *rt, int32_t snode, int32_t *items)
{
    if (gid() != 0)
        return;
    if (snode == 0) {
        plm_rt_listgen_root(rt);
        *items = 0;
        return;
    }
    plm_rt_list_clear(rt, snode);
    *items = plm_rt_listgen_num_items(rt, snode);
}

void plm_gpu_k_listgen(plm_runtime *rt, int32_t snode, int32_t items)
{
    int32_t i = gid();
    if (i < items)
        plm_rt_listgen_item(rt, snode, i);
}
