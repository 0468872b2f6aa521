/* SPDX-License-Identifier: MIT */
/*
 * The smallest ELF file the tests need: an x86-64 ELF header followed by one
 * executable PT_LOAD program header and nothing else (no sections). Tests
 * write it out and point the code under test at it.
 */
#ifndef MT_ELF_FIXTURE_H
#define MT_ELF_FIXTURE_H

#include <elf.h>
#include <stdint.h>

struct mt_elf_fixture {
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
};

/* A shared object whose only segment maps [offset, offset + size) at vaddr. */
static inline struct mt_elf_fixture mt_elf_fixture(uint64_t offset, uint64_t vaddr, uint64_t size)
{
	return (struct mt_elf_fixture){
		.eh = {
			.e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB,
				     EV_CURRENT },
			.e_type = ET_DYN,
			.e_machine = EM_X86_64,
			.e_version = EV_CURRENT,
			.e_phoff = sizeof(Elf64_Ehdr),
			.e_ehsize = sizeof(Elf64_Ehdr),
			.e_phentsize = sizeof(Elf64_Phdr),
			.e_phnum = 1,
		},
		.ph = {
			.p_type = PT_LOAD,
			.p_flags = PF_R | PF_X,
			.p_offset = offset,
			.p_vaddr = vaddr,
			.p_filesz = size,
			.p_memsz = size,
			.p_align = 0x1000,
		},
	};
}

#endif
