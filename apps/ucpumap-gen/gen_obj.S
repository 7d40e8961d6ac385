/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The XDP object built from bpf/gen.bpf.c, linked into ucpumap-gen as bytes
 * so that the binary needs no file on disk. UCM_GEN_OBJ is its path, given
 * by the Makefile.
 */
	.section .rodata
	.balign 8
	.globl ucm_gen_bpf_obj
	.hidden ucm_gen_bpf_obj
	.type ucm_gen_bpf_obj, @object
ucm_gen_bpf_obj:
	.incbin UCM_GEN_OBJ
	.globl ucm_gen_bpf_obj_end
	.hidden ucm_gen_bpf_obj_end
ucm_gen_bpf_obj_end:
	.size ucm_gen_bpf_obj, ucm_gen_bpf_obj_end - ucm_gen_bpf_obj

	.section .note.GNU-stack,"",@progbits
