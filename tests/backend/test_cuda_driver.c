/* The CUDA driver loader without a GPU.
 *   test_backend_cuda real            the machine's own driver: on a machine without one the
 *                                     probe says so in one line and nothing crashes
 *   test_backend_cuda fake LIB OLDLIB a fake driver (fake_cuda.c) in each of its modes, and one
 *                                     that lacks a required entry point
 *   test_backend_cuda probe-fake      cuda_driver_probe with the fake found as libcuda.so.1
 *                                     through LD_LIBRARY_PATH (set by ctest) */
#define _GNU_SOURCE
#include "engine/backend/cuda_driver.h"
#include "tests/check.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

static int test_real(void)
{
    char msg[512] = "", msg2[512] = "";
    /* Independent of the loader: is there a driver to find at all? */
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    int ok = cuda_driver_probe(msg, sizeof msg);
    printf("probe: %d: %s\n", ok, msg);
    CHECK(strlen(msg) > 0);
    CHECK(strchr(msg, '\n') == NULL); /* one line */
    if (!lib) {
        CHECK_EQ(ok, 0);
        CHECK(strstr(msg, "no CUDA driver") != NULL);
        CHECK(strstr(msg, "libcuda.so.1") != NULL);
        const cuda_driver *drv = (const cuda_driver *)msg;
        CHECK_EQ(cuda_driver_shared(&drv, msg2, sizeof msg2), -1);
        CHECK(drv == NULL);
        CHECK(strcmp(msg, msg2) == 0); /* the same reason every time */
    } else {
        CHECK(ok == 0 || strstr(msg, "CUDA driver") == msg);
    }
    /* A second probe answers the same. */
    CHECK_EQ(cuda_driver_probe(msg2, sizeof msg2), ok);
    CHECK(strcmp(msg, msg2) == 0);
    /* A tiny buffer is not overrun; NULL is accepted. */
    char tiny[8];
    memset(tiny, 'x', sizeof tiny);
    cuda_driver_probe(tiny, 4);
    CHECK(tiny[3] == 0 && tiny[4] == 'x');
    CHECK_EQ(cuda_driver_probe(NULL, 0), ok);
    CHECK_DONE();
}

static int test_fake(const char *path, const char *old_path)
{
    char msg[512];
    cuda_driver *drv = NULL;

    setenv("FAKE_CUDA_MODE", "nodevice", 1);
    CHECK_EQ(cuda_driver_load(path, &drv, msg, sizeof msg), -1);
    CHECK(drv == NULL);
    printf("nodevice: %s\n", msg);
    /* The driver's own error name and text, and its version. */
    CHECK(strstr(msg, "12.4") != NULL);
    CHECK(strstr(msg, "cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"));

    CHECK_EQ(cuda_driver_load(old_path, &drv, msg, sizeof msg), -1);
    printf("old: %s\n", msg);
    CHECK(strstr(msg, "lacks cuLaunchKernel") != NULL);

    CHECK_EQ(cuda_driver_load("/nonexistent/libcuda.so.1", &drv, msg, sizeof msg), -1);
    CHECK(strstr(msg, "no CUDA driver: /nonexistent/libcuda.so.1 not found") == msg);

    setenv("FAKE_CUDA_MODE", "one", 1);
    CHECK_EQ(cuda_driver_load(path, &drv, msg, sizeof msg), 0);
    if (!drv)
        CHECK_DONE();
    CHECK_EQ(drv->version, 12040);
    /* the build: the library's path, then its size and time */
    long long bsize = 0, btime = 0;
    CHECK(strncmp(drv->build, path, strlen(path)) == 0 &&
          sscanf(drv->build + strlen(path), " %lld %lld", &bsize, &btime) == 2 && bsize > 0);
    CHECK_EQ(drv->has_graphs, 0); /* the fake exports no graph entry point */
    CHECK(drv->cuGraphLaunch == NULL && drv->cuStreamBeginCapture == NULL);
    CHECK(drv->cuMemAlloc != NULL && drv->cuLaunchKernel != NULL);

    int count = -1;
    CHECK_EQ(cuda_device_count(drv, &count, msg, sizeof msg), 0);
    CHECK_EQ(count, 1);
    cuda_device_info info;
    CHECK_EQ(cuda_device_query(drv, 0, &info, msg, sizeof msg), 0);
    CHECK(strcmp(info.name, "Fake GPU") == 0);
    CHECK_EQ(info.sm_major, 8);
    CHECK_EQ(info.sm_minor, 6);
    CHECK_EQ(info.multiprocessors, 84);
    CHECK_EQ(info.total_mem, (size_t)12 << 30);
    CHECK_EQ(cuda_device_query(drv, 3, &info, msg, sizeof msg), -1);
    CHECK(strstr(msg, "cuDeviceGet(3): CUDA error 101") == msg); /* a code without a name */

    cuda_context c;
    CHECK_EQ(cuda_context_open(drv, 0, &c, msg, sizeof msg), 0);
    CHECK(c.ctx != NULL);
    CUmodule mod = (CUmodule)msg;
    CHECK_EQ(cuda_module_load_ptx(drv, ".version 7.0\n", &mod, msg, sizeof msg), -1);
    printf("module: %s\n", msg);
    CHECK(mod == NULL);
    CHECK(strcmp(msg, "cuModuleLoadDataEx: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation "
                      "failed): ptxas fatal   : fake parse error at line 3") == 0);
    /* the linker: its machine code copied out before its state goes, its log on failure */
    CHECK_EQ(drv->has_linker, 1);
    void *image = NULL;
    size_t isize = 0;
    CHECK_EQ(cuda_link_ptx(drv, ".version 7.0\n.target sm_86\n", &image, &isize, msg, sizeof msg),
             0);
    CHECK(image != NULL && isize == 20 && strcmp(image, "CUBIN(.version 7.0)") == 0);
    mod = NULL;
    CHECK_EQ(cuda_module_load_image(drv, image, &mod, msg, sizeof msg), 0);
    CHECK(mod != NULL);
    free(image);
    CHECK_EQ(cuda_link_ptx(drv, ".version 7.0\nbad\n", &image, &isize, msg, sizeof msg), -1);
    CHECK(image == NULL && isize == 0);
    printf("link: %s\n", msg);
    CHECK(strcmp(msg, "cuLinkAddData: CUDA_ERROR_INVALID_PTX (a PTX JIT compilation failed): "
                      "ptxas fatal   : fake link error") == 0);
    cuda_context_close(&c);
    CHECK(c.ctx == NULL);

    CHECK_EQ(cuda_check(drv, 0, "x", msg, sizeof msg), 0);
    CHECK_EQ(cuda_check(drv, 999, "cuMemAlloc", msg, sizeof msg), -1);
    CHECK(strcmp(msg, "cuMemAlloc: CUDA_ERROR_UNKNOWN (unknown error)") == 0);
    cuda_driver_free(drv);

    setenv("FAKE_CUDA_MODE", "zero", 1);
    CHECK_EQ(cuda_driver_load(path, &drv, msg, sizeof msg), 0);
    CHECK_EQ(cuda_device_count(drv, &count, msg, sizeof msg), 0);
    CHECK_EQ(count, 0);
    cuda_driver_free(drv);
    CHECK_DONE();
}

static int test_probe_fake(void)
{
    char msg[512];
    setenv("FAKE_CUDA_MODE", "one", 1);
    int ok = cuda_driver_probe(msg, sizeof msg);
    printf("probe (one): %s\n", msg);
    CHECK_EQ(ok, 1);
    CHECK(strcmp(msg, "CUDA driver 12.4: 1 device, device 0 Fake GPU, sm_86, 84 SMs, 12.0 GiB") ==
          0);
    setenv("FAKE_CUDA_MODE", "zero", 1);
    ok = cuda_driver_probe(msg, sizeof msg);
    printf("probe (zero): %s\n", msg);
    CHECK_EQ(ok, 0);
    CHECK(strcmp(msg, "CUDA driver 12.4 found but it reports no device") == 0);
    CHECK_DONE();
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "real") == 0)
        return test_real();
    if (argc >= 4 && strcmp(argv[1], "fake") == 0)
        return test_fake(argv[2], argv[3]);
    if (argc >= 2 && strcmp(argv[1], "probe-fake") == 0)
        return test_probe_fake();
    fprintf(stderr, "usage: %s real | fake LIB OLDLIB | probe-fake\n", argv[0]);
    return 2;
}
