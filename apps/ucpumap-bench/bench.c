// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* ucpumap-bench: the project's benchmarks, one subcommand each. */
#include <stdio.h>
#include <string.h>

#include "bench.h"

static void usage(FILE *f)
{
	fprintf(f,
"Usage: ucpumap-bench COMMAND [options]\n"
"\n"
"Commands:\n"
"  engine    the engine alone (frame pool + cpumap, no NIC, no tun): one\n"
"            producer feeds one worker (rows recycle, no-recycle,\n"
"            direct-bulk, no-direct-bulk, no-latency, mp-ring), or P\n"
"            producers W workers (pw-1x1, pw-2x2, pw-4x4, pw-4x1, pw-1x4;\n"
"            pw-2x2-lanes, pw-4x4-lanes, pw-4x1-lanes: a ring per producer)\n"
"  datapath  the whole path on veth, or a NIC with --dev (root): kernel\n"
"            XDP_PASS and cpumap, ucpumapd's modes, the tun ceiling, DPDK\n"
"            testpmd, and both directions at once\n"
"  scale     the datapath at width on veth, or a NIC's queues with --dev\n"
"            (root): N queues, a generator per queue, ucpumapd against the\n"
"            kernel's cpumap; fan-in, fan-out, and one queue flooding\n"
"            beside light ones\n"
"\n"
"'ucpumap-bench COMMAND --help' shows the options of a command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "engine"))
		return bench_engine(argc - 1, argv + 1);
	if (!strcmp(argv[1], "datapath"))
		return bench_datapath(argc - 1, argv + 1);
	if (!strcmp(argv[1], "scale"))
		return bench_scale(argc - 1, argv + 1);
	fprintf(stderr, "ucpumap-bench: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
