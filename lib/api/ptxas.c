/* ptxas.c: the external ptxas, run by the library: found ($TILEC_PTXAS, PATH, the CUDA toolkit),
 * given the PTX in a private temporary directory, its messages into a log file and never onto the
 * process's stdout / stderr, the cubin read back (--emit=cubin, the JIT's assembler, --explain).
 * requires: nothing global (the child inherits the environment); keeps: the caller's PTX; breaks:
 * nothing (the temporary directory is removed). */
#include "program.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* ptxas: $TILEC_PTXAS, else the first on PATH, else /usr/local/cuda/bin. */
static bool find_ptxas(char *buf, size_t n) {
  const char *env = getenv("TILEC_PTXAS");
  if (env && *env) {
    snprintf(buf, n, "%s", env);
    return access(buf, X_OK) == 0;
  }
  const char *path = getenv("PATH");
  while (path && *path) {
    const char *end = strchr(path, ':');
    size_t len = end ? (size_t)(end - path) : strlen(path);
    if (len > 0 && len + 7 < n) {
      snprintf(buf, n, "%.*s/ptxas", (int)len, path);
      if (access(buf, X_OK) == 0) return true;
    }
    path = end ? end + 1 : NULL;
  }
  snprintf(buf, n, "/usr/local/cuda/bin/ptxas");
  return access(buf, X_OK) == 0;
}

bool tl_api_find_ptxas(char *buf, size_t n) { return find_ptxas(buf, n); }

bool tl_api_write_file(const char *path, const char *data, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return false;
  bool ok = fwrite(data, 1, n, f) == n;
  return (fclose(f) == 0) && ok;
}

int tl_api_run_logged(const char *prog, char *const argv[], const char *log_path, int *wstatus) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, log_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid;
  int rc = posix_spawn(&pid, prog, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  *wstatus = 0;
  if (rc == 0)
    while (waitpid(pid, wstatus, 0) < 0 && errno == EINTR) {
    }
  return rc;
}

/* Run ptxas (found by find_ptxas) on ptx in a private temporary directory: -arch=arch -O<opt>.
 * Its messages go to log, never to the process's stdout/stderr; a failure's reason to why. */
tilec_status tl_api_ptxas(const char *ptx, const char *arch, int opt_level, char **cubin_out, size_t *size_out,
                          tl_sbuf *log, tl_sbuf *why) {
  *cubin_out = NULL;
  *size_out = 0;
  char ptxas[4096];
  if (!find_ptxas(ptxas, sizeof ptxas)) {
    const char *env = getenv("TILEC_PTXAS");
    if (env && *env) /* (set: it alone is tried, so say that one is not an executable) */
      tl_sbuf_printf(why, "TILEC_PTXAS=%s is not an executable ptxas (unset it to search PATH and /usr/local/cuda/bin)",
                     env);
    else
      tl_sbuf_printf(why, "ptxas not found on PATH or in /usr/local/cuda/bin (set TILEC_PTXAS, or put the CUDA "
                          "toolkit's bin/ on PATH)");
    return TILEC_ERROR_UNSUPPORTED;
  }
  const char *tmp = getenv("TMPDIR");
  char dir[4096], ptx_path[4200], cubin_path[4200], log_path[4200], arch_flag[64], opt_flag[8];
  snprintf(dir, sizeof dir, "%s/tilec-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    tl_sbuf_printf(why, "cannot create a temporary directory for ptxas: %s", strerror(errno));
    return TILEC_ERROR_IO;
  }
  snprintf(ptx_path, sizeof ptx_path, "%s/kernel.ptx", dir);
  snprintf(cubin_path, sizeof cubin_path, "%s/kernel.cubin", dir);
  snprintf(log_path, sizeof log_path, "%s/ptxas.log", dir);
  snprintf(arch_flag, sizeof arch_flag, "-arch=%s", arch);
  snprintf(opt_flag, sizeof opt_flag, "-O%d", opt_level < 0 ? 0 : opt_level > 3 ? 3 : opt_level);
  tilec_status st = TILEC_OK;
  if (!tl_api_write_file(ptx_path, ptx, strlen(ptx))) {
    tl_sbuf_printf(why, "cannot write %s: %s", ptx_path, strerror(errno));
    st = TILEC_ERROR_IO;
  } else {
    char *argv[] = {ptxas, arch_flag, opt_flag, "-o", cubin_path, ptx_path, NULL};
    int wstatus;
    int rc = tl_api_run_logged(ptxas, argv, log_path, &wstatus);
    char *log_text = NULL, *cubin = NULL;
    size_t log_len = 0, cubin_len = 0;
    if (tl_api_read_file(log_path, &log_text, &log_len) == TILEC_OK && log_len > 0 && log)
      tl_sbuf_putn(log, log_text, log_len);
    free(log_text);
    if (rc != 0) {
      tl_sbuf_printf(why, "cannot run %s: %s", ptxas, strerror(rc));
      st = TILEC_ERROR_IO;
    } else if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
      tl_sbuf_printf(why, "ptxas rejected the generated PTX (messages above)");
      st = TILEC_ERROR_INTERNAL;
    } else if (tl_api_read_file(cubin_path, &cubin, &cubin_len) != TILEC_OK) {
      tl_sbuf_printf(why, "ptxas wrote no cubin");
      st = TILEC_ERROR_IO;
    } else {
      *cubin_out = cubin;
      *size_out = cubin_len;
    }
  }
  unlink(ptx_path);
  unlink(cubin_path);
  unlink(log_path);
  rmdir(dir);
  return st;
}
