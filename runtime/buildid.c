/* buildid.c: this build's identity for the kernel-cache key: the version
 * string plus the ELF build-id (NT_GNU_BUILD_ID, a hash the linker computes
 * over the linked code) of the object that holds this function: libtilec.so,
 * or the executable tilec_back was linked into.  Any change of tilec's or
 * LLVM's code (LLVM is linked in statically) changes it, so a rebuilt tilec
 * never loads an older build's cubin under the same version string.
 * requires: nothing; keeps: computed once per process (pthread_once);
 * breaks: nothing. */
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "runtime.h"

#include "version.h"

static char identity[128];
static pthread_once_t identity_once = PTHREAD_ONCE_INIT;

typedef struct { uintptr_t addr; char hex[2 * 64 + 1]; } search;

/* The build-id note among the PT_NOTE segments of the object holding s->addr. */
static int visit(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  search *s = data;
  bool mine = false;
  for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
    mine = ph->p_type == PT_LOAD && s->addr >= lo && s->addr < lo + ph->p_memsz;
  }
  if (!mine) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
      const uint8_t *name = p + sizeof *nh, *desc = name + ((nh->n_namesz + 3u) & ~3u);
      const uint8_t *next = desc + ((nh->n_descsz + 3u) & ~3u);
      if (next > end) break;
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && memcmp(name, "GNU", 4) == 0 && nh->n_descsz &&
          nh->n_descsz <= 64) {
        for (unsigned j = 0; j < nh->n_descsz; j++) snprintf(s->hex + 2 * j, 3, "%02x", desc[j]);
        return 1;
      }
      p = next;
    }
  }
  return 1; /* our object, without a build-id */
}

static void compute_identity(void) {
  search s = {.addr = (uintptr_t)&compute_identity};
  dl_iterate_phdr(visit, &s);
  snprintf(identity, sizeof identity, "%s+%s", TILEC_VERSION_STRING, s.hex[0] ? s.hex : "no-build-id");
}

const char *tl_build_identity(void) {
  pthread_once(&identity_once, compute_identity);
  return identity;
}
