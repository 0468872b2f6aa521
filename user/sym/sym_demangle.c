// SPDX-License-Identifier: MIT
/*
 * Name demangling through libiberty, the demangler GCC and binutils use.
 * Debian ships it as a static C library (libiberty-dev), and unlike
 * libstdc++'s __cxa_demangle it also handles both Rust manglings and needs
 * no C++ runtime in the link.
 */
#include "sym/sym.h"

#include <libiberty/demangle.h>

char *mt_sym_demangle(const char *name)
{
	/* Only Itanium C++ (_Z) and Rust v0 (_R) names are mangled; legacy
	 * Rust names are Itanium-shaped. Skipping the rest is also faster. */
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	return cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | DMGL_AUTO);
}
