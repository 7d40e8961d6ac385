// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The steering policies in userspace, for frames that reach an RX thread
 * without the XDP program's metadata. Inputs match bpf/steer.bpf.c: the
 * descriptor's flow hashes are computed over the same fields with the same
 * function (flowhash.h), and ports count only for UDP/TCP non-fragments.
 */
#include <arpa/inet.h>

#include "core/internal.h"
#include "ucpumap/steer.h"

uint32_t ucm_steer__pick(const struct ucm_steer_cfg *cfg,
			 const struct ucm_pkt *pkt, uint32_t *rr)
{
	uint32_t n = cfg->nworkers;
	bool ports = (pkt->flags & (UCM_PKT_F_PORTS | UCM_PKT_F_FRAG)) ==
		     UCM_PKT_F_PORTS;

	if (!n || n > UCM_STEER_MAX_WORKERS)
		return 0;
	switch (cfg->policy) {
	case UCM_STEER_RR:
		return (*rr)++ % n;
	case UCM_STEER_L4_HASH:
		return (cfg->flags & UCM_STEER_F_SYMMETRIC ? pkt->hash_sym :
							     pkt->hash) % n;
	case UCM_STEER_L4_SPORT:
		return (ports ? pkt->sport : 0) % n;
	case UCM_STEER_L4_DPORT:
		return (ports ? pkt->dport : 0) % n;
	default:
		return cfg->fixed < n ? cfg->fixed : 0;
	}
}
