/* One compiling thread's LLVM state, and the shared module pipeline. */
#define _GNU_SOURCE
#include "engine/codegen/toolchain.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <llvm-c/Analysis.h>
#include <llvm-c/BitReader.h>
#include <llvm-c/Error.h>
#include <llvm-c/Linker.h>
#include <llvm-c/Target.h>
#include <llvm-c/Transforms/PassBuilder.h>

void cg_set_err(char *err, size_t n, const char *fmt, ...)
{
    if (!err || n == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
}

double cg_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static pthread_once_t llvm_once = PTHREAD_ONCE_INIT;

static void init_llvm_once(void)
{
    LLVMInitializeNativeTarget();
    LLVMInitializeNativeAsmPrinter();
    LLVMInitializeNativeAsmParser();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
}

void cg_init_llvm(void)
{
    pthread_once(&llvm_once, init_llvm_once);
}

/* Errors (a bitcode that does not parse, a failed link) come through the context's handler;
 * warnings and remarks are dropped instead of going to stderr. */
static void diag_handler(LLVMDiagnosticInfoRef di, void *user)
{
    cg_toolchain *tc = user;
    if (LLVMGetDiagInfoSeverity(di) != LLVMDSError)
        return;
    char *text = LLVMGetDiagInfoDescription(di);
    snprintf(tc->diag, sizeof tc->diag, "%s", text ? text : "unknown LLVM error");
    LLVMDisposeMessage(text);
}

/* clang writes "target-cpu"/"target-features" on every function it compiles. Kept on the
 * runtime, they would compile it for generic x86-64 (or sm_70) and, on NVPTX, stop it from
 * inlining into kernels that carry none. The runtime is built with -fno-builtin (it is
 * freestanding), which clang records as "no-builtins": the inliner refuses to inline such a
 * function into a caller that allows builtins, so that goes too (memset/memcpy that the
 * optimizer may then form are resolved from libc on the CPU and lowered to loops on NVPTX). */
void cg_strip_target_attributes(LLVMModuleRef m)
{
    static const char *const keys[] = {"target-cpu", "target-features", "tune-cpu",
                                       "no-builtins"};
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            LLVMRemoveStringAttributeAtIndex(f, LLVMAttributeFunctionIndex, keys[k],
                                             (unsigned)strlen(keys[k]));
    }
}

static LLVMCodeGenOptLevel codegen_level(int opt)
{
    switch (opt) {
    case 0: return LLVMCodeGenLevelNone;
    case 1: return LLVMCodeGenLevelLess;
    case 2: return LLVMCodeGenLevelDefault;
    default: return LLVMCodeGenLevelAggressive;
    }
}

int cg_toolchain_init(cg_toolchain *tc, const cg_target *t, char *err, size_t err_size)
{
    cg_init_llvm();
    memset(tc, 0, sizeof *tc);
    tc->arch = t->arch;
    tc->opt_level = t->opt_level < 0 ? 0 : t->opt_level > 3 ? 3 : t->opt_level;

    char *host_cpu = NULL, *host_features = NULL;
    const char *cpu = t->cpu, *features = t->features;
    if (t->arch == CG_HOST) {
        tc->triple = LLVMGetDefaultTargetTriple();
        if (!cpu)
            cpu = host_cpu = LLVMGetHostCPUName();
        if (!features)
            features = host_features = LLVMGetHostCPUFeatures();
    } else {
        tc->triple = LLVMCreateMessage("nvptx64-nvidia-cuda");
        if (!cpu)
            cpu = "sm_80";
        if (!features)
            features = "";
    }

    LLVMTargetRef target;
    char *msg = NULL;
    if (LLVMGetTargetFromTriple(tc->triple, &target, &msg)) {
        cg_set_err(err, err_size, "codegen: no LLVM target for %s: %s", tc->triple,
                   msg ? msg : "?");
        LLVMDisposeMessage(msg);
        goto fail;
    }
    /* The host target machine matches LLJIT's own defaults for in-memory code: static
     * relocations and the JIT code model (large on x86-64), so an object can be loaded
     * anywhere in the address space. */
    tc->tm = LLVMCreateTargetMachine(target, tc->triple, cpu, features,
                                     codegen_level(tc->opt_level),
                                     LLVMRelocDefault,
                                     t->arch == CG_HOST ? LLVMCodeModelJITDefault
                                                        : LLVMCodeModelDefault);
    if (!tc->tm) {
        cg_set_err(err, err_size, "codegen: cannot create a target machine for %s (cpu %s)",
                   tc->triple, cpu);
        goto fail;
    }
    LLVMTargetDataRef td = LLVMCreateTargetDataLayout(tc->tm);
    tc->datalayout = LLVMCopyStringRepOfTargetData(td);
    LLVMDisposeTargetData(td);

    tc->ctx = LLVMContextCreate();
    LLVMContextSetDiagnosticHandler(tc->ctx, diag_handler, tc);

    if (t->runtime_bc && t->runtime_bc_size) {
        LLVMMemoryBufferRef buf = LLVMCreateMemoryBufferWithMemoryRange(
            t->runtime_bc, t->runtime_bc_size, "plume-runtime", 0);
        tc->diag[0] = 0;
        if (LLVMParseBitcodeInContext2(tc->ctx, buf, &tc->runtime)) {
            cg_set_err(err, err_size, "codegen: the runtime bitcode (%zu bytes) does not parse: %s",
                       t->runtime_bc_size, tc->diag[0] ? tc->diag : "invalid bitcode");
            tc->runtime = NULL;
            LLVMDisposeMemoryBuffer(buf);
            goto fail;
        }
        LLVMDisposeMemoryBuffer(buf);
        /* The runtime is built for the same architecture; adopting our triple and layout
         * keeps the linker from warning about vendor differences (pc vs unknown). */
        LLVMSetTarget(tc->runtime, tc->triple);
        LLVMSetDataLayout(tc->runtime, tc->datalayout);
        cg_strip_target_attributes(tc->runtime);
        /* linkonce_odr: the linker then copies into a task's module only the runtime functions
         * the task calls (transitively) instead of all of them, and the optimizer has far less
         * to look at before globaldce would have dropped them anyway */
        for (LLVMValueRef f = LLVMGetFirstFunction(tc->runtime); f; f = LLVMGetNextFunction(f))
            if (!LLVMIsDeclaration(f) && LLVMGetLinkage(f) == LLVMExternalLinkage)
                LLVMSetLinkage(f, LLVMLinkOnceODRLinkage);
    }
    if (t->libdevice) {
        LLVMMemoryBufferRef buf = NULL;
        char *msg = NULL;
        if (LLVMCreateMemoryBufferWithContentsOfFile(t->libdevice, &buf, &msg)) {
            cg_set_err(err, err_size, "codegen: cannot read libdevice %s: %s", t->libdevice,
                       msg ? msg : "?");
            LLVMDisposeMessage(msg);
            goto fail;
        }
        tc->diag[0] = 0;
        if (LLVMParseBitcodeInContext2(tc->ctx, buf, &tc->libdevice)) {
            cg_set_err(err, err_size, "codegen: libdevice %s does not parse: %s", t->libdevice,
                       tc->diag[0] ? tc->diag : "invalid bitcode");
            tc->libdevice = NULL;
            LLVMDisposeMemoryBuffer(buf);
            goto fail;
        }
        LLVMDisposeMemoryBuffer(buf);
        /* libdevice says nvptx64-nvidia-gpulibs; ours is the one the module is built for */
        LLVMSetTarget(tc->libdevice, tc->triple);
        LLVMSetDataLayout(tc->libdevice, tc->datalayout);
    }
    LLVMDisposeMessage(host_cpu);
    LLVMDisposeMessage(host_features);
    return 0;

fail:
    LLVMDisposeMessage(host_cpu);
    LLVMDisposeMessage(host_features);
    cg_toolchain_fini(tc);
    return -1;
}

void cg_toolchain_fini(cg_toolchain *tc)
{
    if (tc->runtime)
        LLVMDisposeModule(tc->runtime);
    if (tc->libdevice)
        LLVMDisposeModule(tc->libdevice);
    if (tc->ctx)
        LLVMContextDispose(tc->ctx);
    if (tc->tm)
        LLVMDisposeTargetMachine(tc->tm);
    LLVMDisposeMessage(tc->triple);
    LLVMDisposeMessage(tc->datalayout);
    memset(tc, 0, sizeof *tc);
}

uint64_t cg_count_instructions(LLVMModuleRef m)
{
    uint64_t n = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f))
        for (LLVMBasicBlockRef b = LLVMGetFirstBasicBlock(f); b; b = LLVMGetNextBasicBlock(b))
            for (LLVMValueRef i = LLVMGetFirstInstruction(b); i; i = LLVMGetNextInstruction(i))
                n++;
    return n;
}

static int is_kept(const char *name, const char *const *keep, int n_keep)
{
    for (int i = 0; i < n_keep; i++)
        if (strcmp(name, keep[i]) == 0)
            return 1;
    return 0;
}

/* The external functions the builder defined: the default export list. */
static int collect_exports(LLVMModuleRef m, char ***names, int *n)
{
    int cap = 0;
    *names = NULL;
    *n = 0;
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        LLVMLinkage l = LLVMGetLinkage(f);
        if (LLVMIsDeclaration(f) || l == LLVMInternalLinkage || l == LLVMPrivateLinkage)
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            char **grown = realloc(*names, (size_t)cap * sizeof **names);
            if (!grown)
                return -1;
            *names = grown;
        }
        size_t len;
        const char *s = LLVMGetValueName2(f, &len);
        (*names)[(*n)++] = strndup(s, len);
    }
    return 0;
}

static void internalize(LLVMModuleRef m, const char *const *keep, int n_keep)
{
    for (LLVMValueRef f = LLVMGetFirstFunction(m); f; f = LLVMGetNextFunction(f)) {
        if (LLVMIsDeclaration(f))
            continue;
        size_t len;
        const char *name = LLVMGetValueName2(f, &len);
        if (!is_kept(name, keep, n_keep)) {
            LLVMSetLinkage(f, LLVMInternalLinkage);
            LLVMSetVisibility(f, LLVMDefaultVisibility);
        }
    }
    for (LLVMValueRef g = LLVMGetFirstGlobal(m); g; g = LLVMGetNextGlobal(g)) {
        if (LLVMIsDeclaration(g))
            continue;
        LLVMSetLinkage(g, LLVMInternalLinkage);
        LLVMSetVisibility(g, LLVMDefaultVisibility);
    }
}

static int run_passes(cg_toolchain *tc, LLVMModuleRef m, char *err, size_t err_size)
{
    char pipeline[64];
    /* globaldce first: the linked runtime's unused functions go before the early
     * per-function passes would spend time on them. */
    snprintf(pipeline, sizeof pipeline, "globaldce,default<O%d>", tc->opt_level);
    LLVMPassBuilderOptionsRef opts = LLVMCreatePassBuilderOptions();
    int vec = tc->opt_level >= 2;
    LLVMPassBuilderOptionsSetLoopVectorization(opts, vec);
    LLVMPassBuilderOptionsSetSLPVectorization(opts, vec);
    LLVMPassBuilderOptionsSetLoopInterleaving(opts, vec);
    LLVMPassBuilderOptionsSetLoopUnrolling(opts, tc->opt_level >= 1);
    LLVMErrorRef e = LLVMRunPasses(m, pipeline, tc->tm, opts);
    LLVMDisposePassBuilderOptions(opts);
    if (e) {
        char *msg = LLVMGetErrorMessage(e);
        cg_set_err(err, err_size, "optimizer: %s", msg);
        LLVMDisposeErrorMessage(msg);
        return -1;
    }
    return 0;
}

int cg_build_module(cg_toolchain *tc, const char *name, jit_build_fn build, void *user,
                    const char *const *keep, int n_keep, LLVMModuleRef *out,
                    uint64_t *instructions, char *err, size_t err_size)
{
    *out = NULL;
    char msg[512];
    LLVMModuleRef m = LLVMModuleCreateWithNameInContext(name, tc->ctx);
    LLVMSetTarget(m, tc->triple);
    LLVMSetDataLayout(m, tc->datalayout);

    msg[0] = 0;
    if (build(user, tc->ctx, m, msg, sizeof msg) != 0) {
        cg_set_err(err, err_size, "%s: build: %s", name, msg[0] ? msg : "the builder failed");
        LLVMDisposeModule(m);
        return -1;
    }
    char *vmsg = NULL;
    if (LLVMVerifyModule(m, LLVMReturnStatusAction, &vmsg)) {
        size_t len = vmsg ? strlen(vmsg) : 0;
        while (len && vmsg[len - 1] == '\n')
            vmsg[--len] = 0;
        cg_set_err(err, err_size, "%s: verifier: %s", name, vmsg ? vmsg : "invalid module");
        LLVMDisposeMessage(vmsg);
        LLVMDisposeModule(m);
        return -1;
    }
    LLVMDisposeMessage(vmsg);

    char **exports = NULL;
    int n_exports = 0;
    if (!keep) {
        if (collect_exports(m, &exports, &n_exports) != 0) {
            cg_set_err(err, err_size, "%s: out of memory", name);
            LLVMDisposeModule(m);
            return -1;
        }
        keep = (const char *const *)exports;
        n_keep = n_exports;
    }

    int rc = -1;
    if (tc->runtime) {
        tc->diag[0] = 0;
        LLVMModuleRef rt = LLVMCloneModule(tc->runtime);
        if (LLVMLinkModules2(m, rt)) { /* consumes rt */
            cg_set_err(err, err_size, "%s: linking the runtime: %s", name,
                       tc->diag[0] ? tc->diag : "failed");
            goto done;
        }
    }
    /* Only what the module calls survives: everything of libdevice but the kept symbols is
     * internalized below and dropped by globaldce; NVPTX's pipeline folds __nvvm_reflect. */
    if (tc->libdevice) {
        tc->diag[0] = 0;
        LLVMModuleRef ld = LLVMCloneModule(tc->libdevice);
        if (LLVMLinkModules2(m, ld)) {
            cg_set_err(err, err_size, "%s: linking libdevice: %s", name,
                       tc->diag[0] ? tc->diag : "failed");
            goto done;
        }
    }
    for (int i = 0; i < n_keep; i++) {
        LLVMValueRef f = LLVMGetNamedFunction(m, keep[i]);
        if (!f || LLVMIsDeclaration(f)) {
            cg_set_err(err, err_size, "%s: symbol '%s' is not defined by the module", name,
                       keep[i]);
            goto done;
        }
    }
    internalize(m, keep, n_keep);
    if (run_passes(tc, m, msg, sizeof msg) != 0) {
        cg_set_err(err, err_size, "%s: %s", name, msg);
        goto done;
    }
    if (instructions)
        *instructions = cg_count_instructions(m);
    rc = 0;

done:
    for (int i = 0; i < n_exports; i++)
        free(exports[i]);
    free(exports);
    if (rc == 0)
        *out = m;
    else
        LLVMDisposeModule(m);
    return rc;
}

int cg_emit(cg_toolchain *tc, LLVMModuleRef m, LLVMCodeGenFileType kind,
            LLVMMemoryBufferRef *out, char *err, size_t err_size)
{
    char *msg = NULL;
    *out = NULL;
    if (LLVMTargetMachineEmitToMemoryBuffer(tc->tm, m, kind, &msg, out)) {
        cg_set_err(err, err_size, "code generation: %s", msg ? msg : "failed");
        LLVMDisposeMessage(msg);
        *out = NULL;
        return -1;
    }
    LLVMDisposeMessage(msg);
    return 0;
}

int cg_print(cg_toolchain *tc, LLVMModuleRef m, jit_emit_kind kind, char **text, char *err,
             size_t err_size)
{
    *text = NULL;
    if (kind == JIT_EMIT_LLVM) {
        char *s = LLVMPrintModuleToString(m);
        *text = s ? strdup(s) : NULL;
        LLVMDisposeMessage(s);
    } else {
        LLVMMemoryBufferRef buf;
        if (cg_emit(tc, m, LLVMAssemblyFile, &buf, err, err_size) != 0)
            return -1;
        size_t n = LLVMGetBufferSize(buf);
        *text = malloc(n + 1);
        if (*text) {
            memcpy(*text, LLVMGetBufferStart(buf), n);
            (*text)[n] = 0;
        }
        LLVMDisposeMemoryBuffer(buf);
    }
    if (!*text) {
        cg_set_err(err, err_size, "out of memory");
        return -1;
    }
    return 0;
}
