/* SPDX-License-Identifier: MIT */
/* Which library defines a function a program only imports (trigger_import.c). */
#ifndef MTRACE_TRIGGER_IMPORT_H
#define MTRACE_TRIGGER_IMPORT_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * For SYMBOL, imported by ELF (the file at PATH): 1 with LIB the path of
 * the first of its libraries found that defines it, else 0 with NEEDED the
 * names of the libraries it loads ("libc.so.6, libm.so.6"; empty if none).
 */
int mt_trigger_import_source(Elf *elf, const char *path, const char *symbol, char *lib,
			     size_t liblen, char *needed, size_t neededlen);

/* Whether ELF's dynamic symbols define NAME as a function (trigger_elf.c,
 * where symbols are looked up for a trigger). */
bool mt_trigger_elf_defines(Elf *elf, const char *name);

#endif
