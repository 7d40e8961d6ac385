// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd's drops by cause, counted once for all its outputs: the
 * statistics line and the conservation lines (stats.c), the JSON lines,
 * /metrics (metrics.c) and --status. The way in's causes first (the
 * kernel's two at the sockets, then ours, then the workers' reasons),
 * the way back's after; the names are the ones the man page lists.
 */
#include <string.h>

#include "daemon.h"

/* The way in's causes of drops, before the workers' reasons (struct
 * drops: in[7 + reason]); the kernel's two come first, at the AF_XDP
 * sockets, before rx counts the packet: every packet that reached a
 * socket is in rx or in one of them. A worker ring's refusals are split:
 * full, or over the queue's fair share of it. */
static const char *const in_causes[] = {
	"kernel_rx_ring_full", "kernel_rx_dropped", "bad_desc", "steer",
	"enqueue_full",	       "fair_share",	    "chain",
};
static const char *const back_causes[DROPS_BACK] = {
	"offload", "too_big", "non_ip", "no_neigh", "channel_full", "tx_full",
	"stopped", "link_local", "tx_bad",
};
/* The chain cause (in[IN_CHAIN]) by its reason, ucm_xsk_stats' order:
 * /metrics' labels (struct drops' chain[]). */
static const char *const chain_causes[DROPS_CHAIN] = {
	"chain_long", "chain_cut", "chain_bad", "chain_nosg",
};
#define IN_CHAIN	6
#define N_IN_CAUSES	((int)(sizeof(in_causes) / sizeof(in_causes[0])))
_Static_assert(N_IN_CAUSES + UCM_DROP_REASONS_MAX == DROPS_IN, "struct drops' way in");

const char *cause_name(bool back, int i)
{
	if (back)
		return back_causes[i];
	return i < N_IN_CAUSES ? in_causes[i] : ucm_drop_reason_str(i - N_IN_CAUSES);
}

void count_drops(const struct daemon *d, const struct ucm_dp_stats *t, struct drops *n)
{
	struct ucm_tun_back_stats rs;
	uint64_t tx_full = 0, tx_bad = 0;
	struct ucm_xsk_stats xs;
	uint32_t i;
	int r;

	memset(n, 0, sizeof(*n));
	for (i = 0; i < ucm_dp__nqueues(d->dp); i++) {
		ucm_dp__xsk_stats(d->dp, i, &xs, sizeof(xs));
		/* t->tx_drops is their sum: full, or refused as the kernel
		 * would lose it (a sender's bug) */
		tx_full += xs.tx_ring_full;
		tx_bad += xs.tx_bad_desc;
		n->in[0] += xs.kernel_rx_ring_full;
		n->in[1] += xs.kernel_rx_dropped;
		n->chain[0] += xs.rx_chain_long;
		n->chain[1] += xs.rx_chain_cut;
		n->chain[2] += xs.rx_chain_bad;
		n->chain[3] += xs.rx_chain_nosg;
	}
	n->in[2] = t->rx_bad_desc;
	n->in[3] = t->rx_steer_err;
	n->in[4] = t->enqueue_drops - t->enqueue_shed;
	n->in[5] = t->enqueue_shed;
	/* The sum of chain[], read with the rx it is part of. */
	n->in[IN_CHAIN] = t->rx_chain_drops;
	for (r = 0; r < UCM_DROP__MAX; r++)
		n->in[N_IN_CAUSES + r] = t->worker_drop_reason[r];
	if (!d->c.two_way)
		return;
	for (i = 0; i < ucm_dp__nworkers(d->dp); i++) {
		if (ucm_dp__back_stats(d->dp, i, &rs, sizeof(rs)))
			continue;
		n->back[0] += rs.drop_offload;
		n->back[1] += rs.drop_too_big;
		n->back[2] += rs.drop_non_ip;
		n->back[3] += rs.drop_no_neigh;
		n->back[6] += rs.drop_stopped;
		n->back[7] += rs.drop_link_local;
	}
	n->back[4] = t->back_channel_full;
	n->back[5] = tx_full;
	n->back[8] = tx_bad;
}

int drops_in_named(const struct drops *n, bool chain_reasons, struct drop_named *out)
{
	int k = 0, i, j;

	for (i = 0; i < DROPS_IN; i++) {
		const char *name;

		if (i == N_IN_CAUSES + UCM_DROP_NONE || i >= N_IN_CAUSES + UCM_DROP__MAX)
			continue;
		if (i == IN_CHAIN && chain_reasons) {
			for (j = 0; j < DROPS_CHAIN; j++)
				out[k++] = (struct drop_named){ .name = chain_causes[j],
								.v = n->chain[j] };
			continue;
		}
		name = cause_name(false, i);
		for (j = 0; j < k && strcmp(out[j].name, name); j++)
			;
		if (j == k)
			out[k++] = (struct drop_named){ .name = name };
		out[j].v += n->in[i];
	}
	return k;
}

uint64_t drops_arrived(const struct ucm_dp_stats *t, const struct drops *n)
{
	return t->rx + n->in[0] + n->in[1];
}

uint64_t drops_sum(const uint64_t *v, int n)
{
	uint64_t sum = 0;

	while (n--)
		sum += v[n];
	return sum;
}

uint64_t back_read_of(const struct ucm_tun_back_stats *rs)
{
	return rs->packets + rs->drop_offload + rs->drop_too_big + rs->drop_non_ip +
	       rs->drop_no_neigh + rs->drop_link_local + rs->drop_stopped;
}
