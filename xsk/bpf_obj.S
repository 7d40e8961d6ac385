/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The XDP object built from bpf/steer.bpf.c, linked into the library as
 * bytes so that no binary needs a file on disk. UCM_STEER_OBJ is its path,
 * given by the Makefile.
 */
	.section .rodata
	.balign 8
	.globl ucm_steer_bpf_obj
	.hidden ucm_steer_bpf_obj
	.type ucm_steer_bpf_obj, @object
ucm_steer_bpf_obj:
	.incbin UCM_STEER_OBJ
	.globl ucm_steer_bpf_obj_end
	.hidden ucm_steer_bpf_obj_end
ucm_steer_bpf_obj_end:
	.size ucm_steer_bpf_obj, ucm_steer_bpf_obj_end - ucm_steer_bpf_obj

	.section .note.GNU-stack,"",@progbits
