// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumap-bench scale: which widths run, and where each row's threads go.
 *
 * A width fits when its generators, RX threads and workers each have a
 * CPU (--shared-cpus: the generators still do, one per queue). On veth a
 * generator feeds queue (its CPU) % vd's queues, and vd has the fewest
 * queues, from the widest width up, on which the first CPUs of --cpus
 * feed different ones (CPUs 0,2,4,6 need 5 for width 4): the generators
 * take those CPUs, the RX threads and the workers the next. With
 * --dev, scale_dev.c places them. The widths and rows that do not run
 * are kept with why, for the header and the report.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ucpumap/xsk.h"

#include "bench.h"
#include "scale.h"

/* Whether a wanted row runs at width @w: on a NIC, those the queues the
 * traffic arrives on allow (scale_make_cells() skips the others, saying why). */
static bool width_runs(const struct scale_run *sr, int w)
{
	int nrows;
	const struct scale_rowdef *rowdefs = scale_rowdefs(&nrows);
	bool every;

	for (int i = 0; i < nrows; i++)
		if (scale_row_wanted(&sr->cfg, i) && w >= rowdefs[i].min_width &&
		    (!sr->cfg.dev || !scale_dev_skip(sr, &rowdefs[i], w, &every)))
			return true;
	return false;
}

/* Why width @w does not fit the CPUs, into @why: false when it fits. */
static bool width_short(const struct scale_run *sr, int w, char *why, size_t sz)
{
	const struct scale_cfg *cfg = &sr->cfg;
	int q = cfg->dev ? sr->ntraffic : w, need = cfg->dev ? q + w : 3 * w;

	if (!cfg->dev && cfg->shared && w > cfg->ncpus) {
		snprintf(why, sz, "needs %d CPUs for its generators, one per queue, even with "
			 "--shared-cpus; %d given", w, cfg->ncpus);
		return true;
	}
	if (need <= cfg->ncpus || cfg->shared)
		return false;
	if (cfg->dev)
		snprintf(why, sz, "needs %d CPUs (%d RX threads, one per queue the traffic "
			 "arrives on, %d workers, none shared); %d given", need, q, w,
			 cfg->ncpus);
	else
		snprintf(why, sz, "needs %d CPUs (%d generators, %d RX threads, %d workers, "
			 "none shared); %d given", need, w, w, w, cfg->ncpus);
	return true;
}

/*
 * Width @w's generators on veth, into @gen and @queue: the first CPUs of
 * --cpus that feed different queues of vd (a frame sent on CPU c arrives
 * on queue c % veth_queues, veth's rule), marked in @used (by their place
 * in the list) unless it is NULL. Return: how many were found, @w when they all were.
 */
static int pick_gens(const struct scale_run *sr, int w, int *gen, int *queue, bool *used)
{
	const struct scale_cfg *cfg = &sr->cfg;
	bool taken[UCM_XSK_MAX_QUEUES] = { false };
	int k = 0;

	for (int i = 0; i < cfg->ncpus && k < w; i++) {
		int q = cfg->cpus[i] % sr->veth_queues;

		if (taken[q])
			continue;
		taken[q] = true;
		if (used)
			used[i] = true;
		gen[k] = cfg->cpus[i];
		queue[k++] = q;
	}
	return k;
}

/* Why width @w's generators cannot each feed a queue of their own. */
static const char *gens_short(const struct scale_run *sr, int w, int found)
{
	static char why[256];

	snprintf(why, sizeof(why), "--cpus fall on %d of vd's %d queues (a generator on CPU "
		 "c feeds queue c %% %d), and its %d generators need one each, on no count "
		 "of queues up to %d: give --cpus with %d consecutive CPUs", found,
		 sr->veth_queues, sr->veth_queues, w, UCM_XSK_MAX_QUEUES, w);
	return why;
}

/* vd's queues for the widest width @w: the fewest from @w up (to the XSK
 * map's UCM_XSK_MAX_QUEUES) on which @w generators feed a queue each, and
 * so do the first of them at any narrower width. False, with @w queues,
 * when there are none. */
static bool pick_veth_queues(struct scale_run *sr, int w)
{
	int gen[SCALE_MAX_WIDTH], queue[SCALE_MAX_WIDTH];

	for (sr->veth_queues = w; sr->veth_queues <= UCM_XSK_MAX_QUEUES; sr->veth_queues++)
		if (pick_gens(sr, w, gen, queue, NULL) == w)
			return true;
	sr->veth_queues = w;
	return false;
}

/*
 * The widths that fit, into sr->cfg.widths; the others into sr->skip,
 * with why. A width of --widths that a row would run at and that does not
 * fit is refused instead: it was asked for. 0, or -1 after a message.
 */
int scale_pick_widths(struct scale_run *sr)
{
	struct scale_cfg *cfg = &sr->cfg;
	int given = cfg->nwidths, n = 0;
	char why[sizeof(sr->skip[0].why)];

	if (!given)
		for (int w = 1; w <= SCALE_MAX_WIDTH; w *= 2)
			cfg->widths[given++] = w;
	for (int i = 0; i < given; i++) {
		int w = cfg->widths[i];

		if (width_short(sr, w, why, sizeof(why))) {
			if (cfg->widths_s && width_runs(sr, w)) {
				fprintf(stderr, "scale: --widths: width %d %s: take it out of "
					"--widths, give more --cpus%s\n", w, why, cfg->shared ? "" :
					", or add --shared-cpus (a functional run on shared CPUs, "
					"not a measure of width)");
				return -1;
			}
			sr->skip[sr->nskip].width = w;
			memcpy(sr->skip[sr->nskip++].why, why, sizeof(why));
			continue;
		}
		cfg->widths[n++] = w;
	}
	cfg->nwidths = n;
	/* On veth the widest width sets the queues, and so the queue each
	 * generator's CPU feeds: a width of the defaults whose generators
	 * cannot each have one on any count is skipped, the widest first (a
	 * width asked for is refused by scale_make_cells(), with why). */
	while (!cfg->dev && n && !pick_veth_queues(sr, cfg->widths[n - 1]) && !cfg->widths_s) {
		int gen[SCALE_MAX_WIDTH], queue[SCALE_MAX_WIDTH], w = cfg->widths[n - 1];

		sr->skip[sr->nskip].width = w;
		snprintf(sr->skip[sr->nskip++].why, sizeof(why), "%s",
			 gens_short(sr, w, pick_gens(sr, w, gen, queue, NULL)));
		cfg->nwidths = --n;
	}
	if (cfg->dev || !n)	/* --dev: the sinks, one per width's queue */
		sr->veth_queues = n ? cfg->widths[n - 1] : 0;
	if (!n && cfg->dev) {
		fprintf(stderr, "scale: no width fits %d CPUs: each needs an RX thread per queue "
			"the traffic arrives on (%d) and a worker per width, none shared; "
			"--shared-cpus runs them on shared CPUs, a functional run, not a measure "
			"of width\n", cfg->ncpus, sr->ntraffic);
		return -1;
	}
	if (!n) {
		fprintf(stderr, "scale: no width fits %d CPUs: width 1 needs 3 (a generator, an RX "
			"thread, a worker); --shared-cpus runs them on shared CPUs, a functional "
			"run, not a measure of width\n", cfg->ncpus);
		return -1;
	}
	return 0;
}

/* Width @w's layout for row @def into @pl: NULL, or why it cannot run.
 * scale_pick_widths() kept only widths with a generator CPU each (w <= ncpus). */
static const char *place(const struct scale_run *sr, const struct scale_rowdef *def, int w,
			 struct scale_place *pl)
{
	const struct scale_cfg *cfg = &sr->cfg;
	bool used[APP_MAX_CPUS] = { false };
	int seq[APP_MAX_CPUS], n = cfg->ncpus, k = 0, found;

	if (cfg->dev) {
		scale_dev_place(sr, def, w, pl);
		return NULL;
	}
	memset(pl, 0, sizeof(*pl));
	pl->ngen = def->shape == SH_FAN_OUT ? 1 : w;
	pl->nwk = def->shape == SH_FAN_IN || def->shape == SH_FLOOD ? 1 : w;
	found = pick_gens(sr, w, pl->gen, pl->queue, used);
	if (found < w)
		return gens_short(sr, w, found);
	/* The RX threads, then the workers, on the CPUs after them in the
	 * list; with --shared-cpus round again from its first. */
	for (int i = 0; i < n; i++)
		if (!used[i])
			seq[k++] = cfg->cpus[i];
	for (int i = 0; i < n; i++)
		if (used[i])
			seq[k++] = cfg->cpus[i];
	for (int i = 0; i < w; i++) {
		pl->rx[i] = seq[i % n];
		pl->wk[i] = seq[(w + i) % n];
	}
	return NULL;
}

/* The cells: every wanted row at every width it applies to. */
int scale_make_cells(struct scale_run *sr)
{
	const struct scale_cfg *cfg = &sr->cfg;
	int nrows;
	const struct scale_rowdef *rowdefs = scale_rowdefs(&nrows);

	sr->cells = calloc(nrows * cfg->nwidths, sizeof(*sr->cells));
	if (!sr->cells)
		return -1;
	for (int k = 0; k < cfg->nwidths; k++) {
		int w = cfg->widths[k];

		for (int i = 0; i < nrows; i++) {
			const struct scale_rowdef *def = &rowdefs[i];
			struct scale_cell *c = &sr->cells[sr->ncells];
			const char *why;
			bool every;

			if (!scale_row_wanted(cfg, i) || w < def->min_width)
				continue;
			if (cfg->dev && (why = scale_dev_skip(sr, def, w, &every))) {
				scale_skip_row(sr, def->name, every ? 0 : w, why);
				continue;
			}
			why = place(sr, def, w, &c->pl);
			if (why) {
				fprintf(stderr, "scale: width %d: %s\n", w, why);
				return -1;
			}
			c->def = def;
			c->width = w;
			snprintf(c->name, sizeof(c->name), "%s-w%d", def->name, w);
			sr->ncells++;
		}
	}
	if (!sr->ncells && cfg->dev) {
		scale_print_skips(sr, stderr, "scale: ");
		fprintf(stderr, "scale: no row runs on %s at widths %s (see above)\n", cfg->dev,
			cfg->widths_s ? cfg->widths_s : "chosen");
		return -1;
	}
	if (!sr->ncells) {
		scale_print_skips(sr, stderr, "scale: ");
		fprintf(stderr, "scale: no row runs at widths %s%s: the fan, flood, no-fair and "
			"lanes rows need a width of 2 or more\n", cfg->widths_s ? cfg->widths_s :
			"that fit", sr->nskip ? " (others skipped: see above)" : "");
		return -1;
	}
	return 0;
}

/* Append @word to the comma-separated @list unless it is there. */
static void list_add(char *list, size_t sz, const char *word)
{
	size_t n = strlen(word), len = strlen(list);

	for (const char *p = list; (p = strstr(p, word)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ',' || !p[n]))
			return;
	snprintf(list + len, sz - len, "%s%s", len ? ", " : "", word);
}

void scale_skip_row(struct scale_run *sr, const char *row, int w, const char *why)
{
	struct scale_skip *s = NULL;
	char ws[16];

	for (int i = 0; i < sr->nskip && !s; i++)
		if (!sr->skip[i].width && !strcmp(sr->skip[i].why, why))
			s = &sr->skip[i];
	if (!s) {
		if (sr->nskip == SCALE_MAX_SKIPS)
			return;
		s = &sr->skip[sr->nskip++];
		memset(s, 0, sizeof(*s));
		snprintf(s->why, sizeof(s->why), "%s", why);
	}
	list_add(s->rows, sizeof(s->rows), row);
	if (w) {
		snprintf(ws, sizeof(ws), "%d", w);
		list_add(s->widths, sizeof(s->widths), ws);
	}
}
