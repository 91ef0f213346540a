/* cuda_ptxas: PTX to a cubin with the toolkit's ptxas in a child process. Needs a ptxas
 * (/usr/local/cuda/bin/ptxas, or $PLUME_PTXAS): skips with a message where there is none. */
#define _GNU_SOURCE
#include "engine/backend/cuda_ptxas.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"

/* A kernel that stores 7 through its parameter: valid PTX for sm_80 and later. */
static const char *good =
    ".version 7.0\n.target sm_80\n.address_size 64\n\n"
    ".visible .entry k(.param .u64 p)\n{\n"
    "\t.reg .b64 %rd<3>;\n\t.reg .b32 %r<2>;\n"
    "\tld.param.u64 %rd1, [p];\n\tcvta.to.global.u64 %rd2, %rd1;\n"
    "\tmov.u32 %r1, 7;\n\tst.global.u32 [%rd2], %r1;\n\tret;\n}\n";

static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d)
        closedir(d);
    return n;
}

int main(void)
{
    char path[4096], msg[1024];
    if (!cuda_ptxas_find(path, sizeof path))
        SKIP("no ptxas: PLUME_PTXAS is off or names no executable, or "
             "/usr/local/cuda/bin/ptxas is absent");
    char found[4096];
    snprintf(found, sizeof found, "%s", path);
    setenv("PLUME_PTXAS", "off", 1);
    CHECK(cuda_ptxas_find(path, sizeof path) == 0);
    setenv("PLUME_PTXAS", "/nonexistent/ptxas", 1);
    CHECK(cuda_ptxas_find(path, sizeof path) == 0);
    setenv("PLUME_PTXAS", found, 1);
    CHECK(cuda_ptxas_find(path, sizeof path) == 1 && strcmp(path, found) == 0);

    /* every temporary file goes, whether ptxas succeeds or fails */
    char tmp[] = "/tmp/plume-test-ptxas-XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    setenv("TMPDIR", tmp, 1);

    void *image = NULL;
    size_t size = 0;
    CHECK(cuda_ptxas_compile(found, 80, good, &image, &size, msg, sizeof msg) == 0);
    /* a cubin is an ELF file for the GPU: the header's magic, and more than a header */
    CHECK(image && size > 64 && memcmp(image, "\177ELF", 4) == 0);
    free(image);
    CHECK(entries(tmp) == 0);

    const char *bad = ".version 7.0\n.target sm_80\n.address_size 64\n\n"
                      ".visible .entry k()\n{\n\tnot_an_instruction;\n\tret;\n}\n";
    CHECK(cuda_ptxas_compile(found, 80, bad, &image, &size, msg, sizeof msg) == -1);
    printf("bad PTX: %s\n", msg);
    CHECK(image == NULL && size == 0);
    CHECK(strncmp(msg, "ptxas exited with ", 18) == 0 && strstr(msg, "not_an_instruction"));
    CHECK(entries(tmp) == 0);

    /* a ptxas that cannot run */
    CHECK(cuda_ptxas_compile("/nonexistent/ptxas", 80, good, &image, &size, msg, sizeof msg) == -1);
    printf("missing ptxas: %s\n", msg);
    CHECK(strstr(msg, "/nonexistent/ptxas") != NULL);
    CHECK(entries(tmp) == 0);
    rmdir(tmp);
    CHECK_DONE();
}
