/* For the PTX tests: where ptxas is, and assembling a PTX text with it for one sm. */
#ifndef PLUME_TESTS_CODEGEN_PTXAS_UTIL_H
#define PLUME_TESTS_CODEGEN_PTXAS_UTIL_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The ptxas named on the command line (CMake finds it), else the CUDA toolkit's; NULL when
 * neither exists. */
static const char *find_ptxas(int argc, char **argv)
{
    if (argc > 1 && argv[1][0] && access(argv[1], X_OK) == 0)
        return argv[1];
    if (access("/usr/local/cuda/bin/ptxas", X_OK) == 0)
        return "/usr/local/cuda/bin/ptxas";
    return NULL;
}

/* Writes ptx to <stem>_sm<sm>.ptx in the working directory and assembles it. Returns 0 when
 * ptxas accepted it; otherwise -1 with ptxas's output in log. */
static int run_ptxas(const char *ptxas, const char *ptx, const char *stem, int sm, char *log,
                     size_t n)
{
    char path[256], cmd[1024];
    snprintf(path, sizeof path, "%s_sm%d.ptx", stem, sm);
    FILE *f = fopen(path, "w");
    if (!f) {
        snprintf(log, n, "cannot write %s", path);
        return -1;
    }
    fputs(ptx, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "%s -arch=sm_%d %s -o %s_sm%d.cubin 2>&1", ptxas, sm, path, stem,
             sm);
    FILE *p = popen(cmd, "r");
    if (!p) {
        snprintf(log, n, "cannot run %s", cmd);
        return -1;
    }
    size_t used = fread(log, 1, n - 1, p);
    log[used] = 0;
    int st = pclose(p);
    return st == 0 ? 0 : -1;
}

#endif
