/* debuginfo.c: line info for the PTX.  requires: g->C, g->M created, the
 * source files in g->ctx->files; keeps: the emitted instructions (only adds
 * !dbg locations and DI metadata); breaks: nothing.  With line_info off every
 * function here does nothing, so the module has no debug metadata at all.
 *
 * One DICompileUnit (line directives only, see cg_di_begin) for the first source file,
 * one DISubprogram per kernel, and the builders' current location is the tile
 * op being lowered, so the NVPTX back-end writes `.file` / `.loc` directives
 * that point at .tile lines (Nsight Compute then shows DSL lines). */
#include <string.h>

#include <llvm-c/DebugInfo.h>

#include "cg.h"

/* llvm::DICompileUnit::DebugDirectivesOnly; the C enum stops at LineTablesOnly
 * (2) but LLVMDIBuilderCreateCompileUnit casts the value straight through. */
#define TL_DWARF_EMISSION_DIRECTIVES_ONLY ((LLVMDWARFEmissionKind)3)

/* The DIFile of ctx file index fi (created on first use, NULL when unknown). */
static LLVMMetadataRef di_file(cg *g, int32_t fi) {
  if (fi < 0 || fi >= g->ctx->files.len) fi = g->di_main_file;
  if (fi < 0) return NULL;
  if (!g->di_files[fi]) {
    const char *name = g->ctx->files.data[fi].name ? g->ctx->files.data[fi].name : "<string>";
    /* split "dir/base" so the .file directive carries both */
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    size_t dirlen = slash ? (size_t)(slash - name) : 0;
    if (slash && dirlen == 0) dirlen = 1; /* "/x.tile": directory "/" */
    g->di_files[fi] = LLVMDIBuilderCreateFile(g->dib, base, strlen(base), name, dirlen);
  }
  return g->di_files[fi];
}

void cg_di_begin(cg *g) {
  g->dib = NULL;
  if (!g->o || !g->o->line_info) return;
  g->di_main_file = g->ctx->files.len > 0 ? 0 : -1;
  g->di_files = tl_alloc(&g->ctx->arena, sizeof(LLVMMetadataRef) * (size_t)(g->ctx->files.len + 1));
  memset(g->di_files, 0, sizeof(LLVMMetadataRef) * (size_t)(g->ctx->files.len + 1));
  g->dib = LLVMCreateDIBuilderDisallowUnresolved(g->M);
  LLVMMetadataRef file = di_file(g, g->di_main_file);
  if (!file) file = LLVMDIBuilderCreateFile(g->dib, "<string>", 8, "", 0);
  static const char producer[] = "tilec";
  /* Emission kind: directives only (clang's -gline-directives-only), not
   * LineTablesOnly.  Both give the same .file/.loc, but LineTablesOnly also
   * writes DWARF sections and `.target sm_XX, debug`, and ptxas treats a debug
   * target as a debug build: softmax went from 33 to 104 registers (measured,
   * ptxas 13.0).  DW_LANG_C11 is the nearest DWARF language. */
  g->di_cu = LLVMDIBuilderCreateCompileUnit(g->dib, LLVMDWARFSourceLanguageC11, file, producer,
                                            sizeof producer - 1, 1, "", 0, 0, "", 0,
                                            TL_DWARF_EMISSION_DIRECTIVES_ONLY, 0, 0, 0, "", 0, "", 0);
  LLVMMetadataRef ver = LLVMValueAsMetadata(LLVMConstInt(g->i32, LLVMDebugMetadataVersion(), 0));
  LLVMAddModuleFlag(g->M, LLVMModuleFlagBehaviorWarning, "Debug Info Version", 18, ver);
  LLVMMetadataRef dwarf = LLVMValueAsMetadata(LLVMConstInt(g->i32, 2, 0));
  LLVMAddModuleFlag(g->M, LLVMModuleFlagBehaviorWarning, "Dwarf Version", 13, dwarf);
}

void cg_di_kernel(cg *g, const char *entry, tl_loc loc) {
  if (!g->dib) return;
  LLVMMetadataRef file = di_file(g, loc.file);
  if (!file) file = LLVMDIBuilderCreateFile(g->dib, "<string>", 8, "", 0);
  LLVMMetadataRef fty = LLVMDIBuilderCreateSubroutineType(g->dib, file, NULL, 0, LLVMDIFlagZero);
  unsigned line = loc.line > 0 ? (unsigned)loc.line : 0;
  g->di_sp = LLVMDIBuilderCreateFunction(g->dib, file, entry, strlen(entry), entry, strlen(entry), file, line,
                                         fty, 0, 1, line, LLVMDIFlagZero, 1);
  g->di_sp_file = loc.file;
  LLVMSetSubprogram(g->fn, g->di_sp);
  g->di_kernel_loc = loc;
}

/* The DILocation of loc inside the current kernel. */
static LLVMMetadataRef di_location(cg *g, tl_loc loc) {
  if (loc.line <= 0) loc = g->di_kernel_loc;
  LLVMMetadataRef scope = g->di_sp;
  int32_t fi = loc.file >= 0 && loc.file < g->ctx->files.len ? loc.file : g->di_main_file;
  int32_t spf = g->di_sp_file >= 0 && g->di_sp_file < g->ctx->files.len ? g->di_sp_file : g->di_main_file;
  if (fi != spf && fi >= 0) /* an op from another file (an import): a lexical block file */
    scope = LLVMDIBuilderCreateLexicalBlockFile(g->dib, g->di_sp, di_file(g, fi), 0);
  unsigned line = loc.line > 0 ? (unsigned)loc.line : 0, col = loc.col > 0 ? (unsigned)loc.col : 0;
  return LLVMDIBuilderCreateDebugLocation(g->C, line, col, scope, NULL);
}

void cg_di_set_loc(cg *g, tl_loc loc) {
  if (!g->dib || !g->di_sp) return;
  /* no caching: an emitter may reposition g->B, which resets its location */
  LLVMSetCurrentDebugLocation2(g->B, di_location(g, loc));
}

void cg_di_prologue_loc(cg *g) {
  if (!g->dib || !g->di_sp) return;
  LLVMMetadataRef l = di_location(g, g->di_kernel_loc);
  LLVMSetCurrentDebugLocation2(g->PB, l);
  LLVMSetCurrentDebugLocation2(g->B, l);
}

void cg_di_end_kernel(cg *g) {
  if (!g->dib || !g->di_sp) return;
  LLVMDIBuilderFinalizeSubprogram(g->dib, g->di_sp);
  LLVMSetCurrentDebugLocation2(g->B, NULL);
  LLVMSetCurrentDebugLocation2(g->PB, NULL);
  g->di_sp = NULL;
}

void cg_di_finish(cg *g) {
  if (!g->dib) return;
  LLVMDIBuilderFinalize(g->dib);
  LLVMDisposeDIBuilder(g->dib);
  g->dib = NULL;
}
