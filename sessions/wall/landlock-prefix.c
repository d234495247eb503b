/* The shell prefix (sessions/wall/landlock.ts), compiled: the same Landlock domain as the perl
 * script, entered the same way, with the same refusals, in ~0.3 ms a command instead of perl's
 * ~2.3. API_DIR is the bridge's socket folder (WALL_API.dir), given at build time. No header of
 * the kernel's is needed: the syscall numbers (asm-generic: x86_64 and aarch64 alike) and the
 * structures' layout are the kernel's ABI. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef API_DIR
#error "API_DIR must be defined (the bridge's socket folder)"
#endif

#define CREATE_RULESET 444
#define ADD_RULE 445
#define RESTRICT_SELF 446
#define RULE_PATH_BENEATH 1
#define CREATE_RULESET_VERSION 1
/* LANDLOCK_ACCESS_FS_REMOVE_DIR .. MAKE_SYM (ABI 1) and REFER (ABI 2): the rights over names. */
#define NAME_RIGHTS 0x1ff0ULL
#define REFER 0x2000ULL
/* LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (ABI 6). */
#define SCOPE_ABSTRACT_UNIX_SOCKET 1ULL

struct ruleset_attr { uint64_t fs; uint64_t net; uint64_t scoped; };
struct path_beneath { uint64_t allowed; int32_t parent_fd; } __attribute__((packed));

static void fail(const char *what) {
  fprintf(stderr, "nightshift-wall: %s\n", what);
  exit(126);
}

static void failErrno(const char *what, const char *subject) {
  char line[4200];
  int e = errno;
  if (subject) snprintf(line, sizeof line, "%s %s: %s", what, subject, strerror(e));
  else snprintf(line, sizeof line, "%s: %s", what, strerror(e));
  fail(line);
}

/* Names may change beneath every real folder at the top of `top` but the API's and its parent. */
static void grantBeneath(int ruleset, uint64_t fs, const char *top, const char *api, const char *apiParent) {
  DIR *d = opendir(top);
  if (!d) failErrno("opendir", top);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    char p[4096];
    if (snprintf(p, sizeof p, strcmp(top, "/") ? "%s/%s" : "%s%s", top, e->d_name) >= (int)sizeof p) continue;
    if (!strcmp(p, api) || !strcmp(p, apiParent)) continue;
    struct stat st;
    if (lstat(p, &st) != 0 || S_ISLNK(st.st_mode) || !S_ISDIR(st.st_mode)) continue;
    int h = open(p, O_PATH | O_CLOEXEC);
    if (h < 0) continue;
    struct path_beneath rule = { fs, h };
    if (syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, &rule, 0) != 0) failErrno("landlock_add_rule", p);
    close(h);
  }
  closedir(d);
}

int main(int argc, char **argv) {
  long abi = syscall(CREATE_RULESET, NULL, 0, CREATE_RULESET_VERSION);
  if (abi < 1) {
    char line[512];
    int e = errno;
    snprintf(line, sizeof line, "Landlock is not available here (errno %d: %s): a tool could write the memory of the processes that hold the supervisor's stream", e, strerror(e));
    fail(line);
  }
  uint64_t fs = NAME_RIGHTS;
  if (abi >= 2) fs |= REFER;
  struct ruleset_attr attr = { fs, 0, SCOPE_ABSTRACT_UNIX_SOCKET };
  long ruleset = abi >= 6 ? syscall(CREATE_RULESET, &attr, sizeof attr, 0) : syscall(CREATE_RULESET, &attr, sizeof attr.fs, 0);
  if (ruleset < 0) failErrno("landlock_create_ruleset", NULL);
  char parentBuf[4096];
  snprintf(parentBuf, sizeof parentBuf, "%s", API_DIR);
  const char *apiParent = dirname(parentBuf);
  grantBeneath((int)ruleset, fs, "/", API_DIR, apiParent);
  grantBeneath((int)ruleset, fs, apiParent, API_DIR, apiParent);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) failErrno("PR_SET_NO_NEW_PRIVS", NULL);
  if (syscall(RESTRICT_SELF, ruleset, 0) != 0) failErrno("landlock_restrict_self", NULL);
  if (argc < 2) fail("no command");
  /* exec { '/bin/bash' } 'bash', '-c', @ARGV */
  char **args = calloc((size_t)argc + 2, sizeof *args);
  if (!args) fail("out of memory");
  args[0] = "bash";
  args[1] = "-c";
  for (int i = 1; i < argc; i++) args[i + 1] = argv[i];
  execv("/bin/bash", args);
  failErrno("exec", "/bin/bash");
  return 126;
}
