/* kernel.h in a build without the kernel stages (no LLVM 16): volumes still move, every
 * attempt to compile a kernel says why it cannot. */
#include "engine/engine_internal.h"

#include <string.h>

int eng_program_compile(eng_context *ctx, const char *file, const char *src, size_t len,
                        eng_program **out)
{
    (void)src;
    (void)len;
    *out = NULL;
    return eng_fail(ctx, ENG_ECOMPILE,
                    "%s: kernels are not available: this Plume was built without LLVM 16",
                    file ? file : "<input>");
}
void eng_program_release(eng_context *ctx, eng_program *p) { (void)ctx; (void)p; }
int eng_program_set_origin(eng_context *ctx, eng_program *p, const char *origin)
{
    (void)ctx; (void)p; (void)origin;
    return ENG_EINVAL;
}
size_t eng_error_origin(const eng_context *ctx) { (void)ctx; return 0; }
uint32_t eng_program_kernel_count(const eng_program *p) { (void)p; return 0; }
const char *eng_program_warnings(const eng_program *p) { (void)p; return NULL; }
eng_kernel *eng_program_kernel(eng_program *p, uint32_t i) { (void)p; (void)i; return NULL; }
eng_kernel *eng_program_find(eng_program *p, const char *name) { (void)p; (void)name; return NULL; }
const char *eng_kernel_name(const eng_kernel *k) { (void)k; return ""; }
uint32_t eng_kernel_param_count(const eng_kernel *k) { (void)k; return 0; }
const eng_param *eng_kernel_param(const eng_kernel *k, uint32_t i) { (void)k; (void)i; return NULL; }
int eng_launch(eng_context *ctx, eng_kernel *k, const eng_arg *args, uint32_t nargs)
{
    (void)k;
    (void)args;
    (void)nargs;
    return eng_fail(ctx, ENG_EINVAL, "kernels are not available: this Plume was built without LLVM 16");
}
int eng_kernel_check_field(eng_context *ctx, const eng_kernel *k, uint32_t p, eng_field *f)
{
    (void)k;
    (void)p;
    (void)f;
    return eng_fail(ctx, ENG_EINVAL, "kernels are not available: this Plume was built without LLVM 16");
}
int eng_kernel_check_bindable(eng_context *ctx, const eng_kernel *k)
{
    (void)k;
    return eng_fail(ctx, ENG_EINVAL, "kernels are not available: this Plume was built without LLVM 16");
}
int eng_flush(eng_context *ctx) { (void)ctx; return ENG_OK; }
int eng_sync(eng_context *ctx) { (void)ctx; return ENG_OK; }
int eng_set_mode(eng_context *ctx, const eng_mode *mode)
{
    ctx->mode = *mode;
    return ENG_OK;
}
void eng_get_stats(eng_context *ctx, eng_stats *out)
{
    (void)ctx;
    memset(out, 0, sizeof *out);
}
void eng_reset_stats(eng_context *ctx) { (void)ctx; }
