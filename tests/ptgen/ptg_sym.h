/* SPDX-License-Identifier: MIT */
/* Symbol addresses from ELF symbol tables (libelf). */
#ifndef PTG_SYM_H
#define PTG_SYM_H

#include <stdbool.h>
#include <stdint.h>

#include "ptg_image.h"

/* Link-time address (st_value) and file offset of function @name in @path,
 * searching .symtab, then .dynsym. @is_dyn tells whether the file is ET_DYN
 * (PIE or shared library). */
int ptg_sym_lookup(const char *path, const char *name, uint64_t *vaddr, uint64_t *file_off,
		   bool *is_dyn);
/* Run-time address of @name in the mapping of @path found in @img. */
int ptg_sym_addr(const struct ptg_image *img, const char *path, const char *name,
		 uint64_t *addr);

/* Whether @path is ET_DYN (PIE or shared library) rather than ET_EXEC. */
int ptg_sym_is_dyn(const char *path, bool *is_dyn);
/* Entry points of every sized function symbol of @path (.symtab and
 * .dynsym) that lies in executable code of @img, relocated by @bias.
 * Sorted, without duplicates. */
int ptg_sym_functions(const char *path, uint64_t bias, const struct ptg_image *img,
		      uint64_t **funcs, size_t *n);

#endif
