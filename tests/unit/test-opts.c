// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The apps' option tables (apps/common/opts.c): every kind into its field,
 * the messages of bad arguments, required options, and --help written from
 * the table. The apps' own tests check their tables' messages verbatim.
 * And util.c's pieces the reports rest on: the JSON writer's strings and
 * numbers, the medians over rounds, the pacing's slots.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "opts.h"
#include "util.h"
#include "utest.h"

struct tcfg {
	bool flag, flag_seen;
	uint32_t bits;
	int verbose;
	const char *str, *addr, *cpus_text;
	unsigned long num;
	uint16_t port;
	uint32_t pow;
	double secs, pos;
	int mode;
	bool skb;
	int cpus[4], ncpus;
	int one_cpu;
	uint8_t mac[6];
	int custom;
	unsigned long many;
	const char *req;
	const char *conf;
};

static const struct opt_enum modes[] = {
	{ "fixed", 0 }, { "round-robin", 1 }, { "l4-hash", 2 }, { NULL }
};

static const struct opt_enum xdp_modes[] = {
	{ "native", 0 }, { "skb", 1 }, { "generic", 1 }, { "drv", 0 }, { NULL }
};

static int parse_custom(const struct opt *o, const char *arg, void *cfg)
{
	if (strcmp(arg, "odd")) {
		fprintf(stderr, "--custom: want odd\n");
		return -1;
	}
	((struct tcfg *)cfg)->custom = 7;
	return 0;
}

static void tail_rows(FILE *f)
{
	fputs("  row-a  the first row\n", f);
}

#define HELP_40		"a row, another row, and yet another one, "
#define HELP_320	HELP_40 HELP_40 HELP_40 HELP_40 HELP_40 HELP_40 HELP_40 HELP_40

static const struct opt t_opts[] = {
	OPT_DEF("flag", OPT_FLAG, struct tcfg, flag, .short_opt = 'f',
		.seen = OPT_REF(struct tcfg, flag_seen), .help = "a flag"),
	OPT_DEF("bit", OPT_BIT, struct tcfg, bits, .mask = 1u << 3, .help = "a bit"),
	OPT_DEF("verbose", OPT_COUNT, struct tcfg, verbose, .short_opt = 'v', .help = "more"),
	OPT_DEF("str", OPT_STRING, struct tcfg, str, .hi = 5, .flags = OPT_F_DEFAULT,
		.metavar = "S", .help = "a string"),
	OPT_DEF("addr", OPT_ADDR, struct tcfg, addr, .metavar = "A", .help = "an address"),
	OPT_DEF("num", OPT_UINT, struct tcfg, num, .short_opt = 'n', .lo = 1, .hi = 9,
		.flags = OPT_F_DEFAULT, .metavar = "N", .help = "a number"),
	OPT_DEF("port", OPT_UINT, struct tcfg, port, .lo = 1, .hi = 65535, .metavar = "P",
		.help = "a port"),
	OPT_DEF("pow", OPT_POW2, struct tcfg, pow, .lo = 64, .hi = 4096, .flags = OPT_F_DEFAULT,
		.metavar = "N", .help = "a power of two"),
	OPT_DEF("secs", OPT_SECONDS, struct tcfg, secs, .dlo = 0.5, .dhi = 60,
		.flags = OPT_F_DEFAULT, .metavar = "S", .help = "seconds"),
	OPT_DEF("pos", OPT_SECONDS, struct tcfg, pos, .flags = OPT_F_POSITIVE, .metavar = "S",
		.help = "positive seconds"),
	OPT_DEF("mode", OPT_ENUM, struct tcfg, mode, .vals = modes, .flags = OPT_F_DEFAULT,
		.metavar = "M", .help = "a mode"),
	OPT_DEF("xdp-mode", OPT_ENUM, struct tcfg, skb, .vals = xdp_modes, .flags = OPT_F_DEFAULT,
		.metavar = "MODE", .help = "native or skb"),
	OPT_DEF("steer", OPT_ENUM, struct tcfg, mode, .vals = modes, .metavar = "P",
		.bad = "unknown policy '%s'; use fixed, round-robin or l4-hash",
		.help = "the mode again, with its own complaint"),
	OPT_DEF("cpus", OPT_CPUS, struct tcfg, cpus, .count = OPT_REF(struct tcfg, ncpus),
		.text = OPT_REF(struct tcfg, cpus_text), .flags = OPT_F_DEFAULT, .metavar = "LIST",
		.heading = "Placement:", .help = "CPUs"),
	OPT_DEF("cpu", OPT_CPUS, struct tcfg, one_cpu, .flags = OPT_F_DEFAULT, .metavar = "C",
		.help = "one CPU"),
	OPT_DEF("mac", OPT_MAC, struct tcfg, mac, .metavar = "MAC", .help = "a MAC address"),
	OPT_DEF("custom", OPT_CUSTOM, struct tcfg, custom, .parse = parse_custom, .metavar = "X",
		.help = "a word long enough to be wrapped onto the next line of the help, and then "
			"onto another one, since no line is longer than 79 columns"),
	/* a help longer than any buffer a line would fit in (a list of rows) */
	OPT_DEF("many", OPT_UINT, struct tcfg, many, .flags = OPT_F_DEFAULT, .metavar = "N",
		.help = HELP_320 HELP_320 HELP_320 HELP_320 HELP_320 "the-last-row"),
	OPT_DEF("req", OPT_STRING, struct tcfg, req, .lo = 1, .flags = OPT_F_REQUIRED, .metavar = "R",
		.help = "required"),
	{}
};

static const struct opts_cmd t_cmd = {
	.name = "t",
	.invoked = "prog t",
	.usage = "prog t --req R [options]",
	.doc = "Tests the tables.\n",
	.tail = "Rows:\n",
	.tail_fn = tail_rows,
	.opts = t_opts,
};

/* A command that reads a file of options (opts_cmd.config_opt). */
static const struct opt f_opts[] = {
	OPT_DEF("flag", OPT_FLAG, struct tcfg, flag, .help = "a flag"),
	OPT_DEF("num", OPT_UINT, struct tcfg, num, .lo = 1, .hi = 9, .metavar = "N", .help = "n"),
	OPT_DEF("str", OPT_STRING, struct tcfg, str, .hi = 5, .metavar = "S", .help = "s"),
	OPT_DEF("custom", OPT_CUSTOM, struct tcfg, custom, .parse = parse_custom, .metavar = "X",
		.help = "x"),
	OPT_DEF("req", OPT_STRING, struct tcfg, req, .flags = OPT_F_REQUIRED, .metavar = "R",
		.help = "required"),
	OPT_DEF("conf", OPT_STRING, struct tcfg, conf, .metavar = "FILE", .help = "options"),
	OPT_DEF("skb", OPT_FLAG, struct tcfg, skb, .flags = OPT_F_NO_FILE,
		.help = "the command line's only"),
	{}
};

static const struct opts_cmd f_cmd = {
	.name = "t", .usage = "t", .opts = f_opts, .config_opt = "conf",
};

/* The command parse() runs. */
static const struct opts_cmd *cmd_used = &t_cmd;

static const struct tcfg t_defaults = {
	.str = "abc", .num = 3, .pow = 128, .secs = 1.5, .mode = 2, .cpus_text = "0", .ncpus = 0,
};

static char err_text[4096];

/* opts_parse() on "prog" and the words up to NULL, into *@c from the
 * defaults; what it wrote to stderr into err_text. */
static int parse(struct tcfg *c, ...)
{
	char *argv[64] = { "prog" };
	int argc = 1, rc, saved, saved_out, null, p[2];
	ssize_t n;
	va_list ap;

	va_start(ap, c);
	while (argc < 63 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	*c = t_defaults;
	if (pipe(p))
		return -99;
	fflush(stdout);
	fflush(stderr);
	saved_out = dup(1);
	saved = dup(2);
	null = open("/dev/null", O_WRONLY);
	dup2(null, 1);		/* -h's help */
	dup2(p[1], 2);
	rc = opts_parse(cmd_used, c, argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(saved_out, 1);
	dup2(saved, 2);
	close(saved_out);
	close(saved);
	close(null);
	close(p[1]);
	n = read(p[0], err_text, sizeof(err_text) - 1);
	err_text[n > 0 ? n : 0] = '\0';
	close(p[0]);
	return rc;
}

/* A CPU this process may run on, as text. */
static char cpu_text[16];

static int usable_cpu(void)
{
	int cpu;

	if (ut_usable_cpus(&cpu, 1) < 1)
		return -1;
	snprintf(cpu_text, sizeof(cpu_text), "%d", cpu);
	return cpu;
}

static int test_every_kind(void)
{
	int cpu = usable_cpu(), rc;
	struct tcfg c;

	UT_ASSERT(cpu >= 0, "no usable CPU");
	rc = parse(&c, "-f", "--bit", "-vv", "--verbose", "--str", "hello", "--addr", "fd00::1",
		   "-n", "9", "--port=65535", "--pow", "4096", "--secs", "60", "--pos", "0.001",
		   "--mode", "round-robin", "--xdp-mode", "generic", "--cpus", cpu_text,
		   "--cpu", cpu_text, "--mac", "02:00:00:00:00:0a", "--custom", "odd", "--req", "r",
		   NULL);

	UT_ASSERT(rc == 0, "rc %d: %s", rc, err_text);
	UT_ASSERT(c.flag && c.flag_seen && c.bits == 8 && c.verbose == 3, "flags");
	UT_ASSERT(!strcmp(c.str, "hello") && !strcmp(c.addr, "fd00::1") && !strcmp(c.req, "r"),
		  "strings");
	UT_ASSERT(c.num == 9 && c.port == 65535 && c.pow == 4096, "numbers %lu %u %u", c.num,
		  c.port, c.pow);
	UT_ASSERT(c.secs == 60 && c.pos == 0.001, "seconds %g %g", c.secs, c.pos);
	UT_ASSERT(c.mode == 1 && c.skb, "enums %d %d", c.mode, c.skb);
	UT_ASSERT(c.ncpus == 1 && c.cpus[0] == cpu && !strcmp(c.cpus_text, cpu_text) &&
		  c.one_cpu == cpu, "cpus");
	UT_ASSERT(c.mac[0] == 2 && c.mac[5] == 10 && c.custom == 7, "mac, custom");
	UT_ASSERT(!err_text[0], "said '%s'", err_text);

	/* The defaults stay when not given; a second parse starts afresh. */
	rc = parse(&c, "--req", "r", NULL);
	UT_ASSERT(rc == 0 && !c.flag && !c.flag_seen && c.num == 3 && !strcmp(c.str, "abc") &&
		  c.mode == 2 && c.secs == 1.5, "defaults");
	rc = parse(&c, "--xdp-mode", "drv", "--req", "r", NULL);
	UT_ASSERT(rc == 0 && !c.skb, "the alias drv");
	return 0;
}

/* Each bad argument: -1 and its message. */
static int test_bad_arguments(void)
{
	static const struct {
		const char *opt, *arg, *says;
	} bad[] = {
		{ "--num", "0", "--num: '0' is not a whole number between 1 and 9\n" },
		{ "--num", "1x", "--num: '1x' is not a whole number between 1 and 9\n" },
		/* strtoul() would skip the blank and take the sign: 1 */
		{ "--num", " -18446744073709551615",
		  "--num: ' -18446744073709551615' is not a whole number between 1 and 9\n" },
		{ "--num", " 5", "--num: ' 5' is not a whole number between 1 and 9\n" },
		{ "--pow", "100", "--pow: 100 is not a power of two; try 64\n" },
		{ "--secs", "0.1", "--secs: '0.1' is not a number of seconds between 0.5 and 60\n" },
		{ "--secs", "1s", "--secs: '1s' is not a number of seconds between 0.5 and 60\n" },
		{ "--pos", "0", "--pos: '0' is not a positive number of seconds up to 10000000\n" },
		{ "--pos", "2e7", "--pos: '2e7' is not a positive number of seconds up to 10000000\n" },
		{ "--mode", "x", "--mode: 'x' is not fixed, round-robin or l4-hash\n" },
		{ "--xdp-mode", "hw", "--xdp-mode: 'hw' is neither native nor skb\n" },
		{ "--steer", "up", "--steer: unknown policy 'up'; use fixed, round-robin or l4-hash\n" },
		{ "--str", "toolong", "--str: 'toolong' is longer than 5 characters\n" },
		{ "--req", "", "--req: the value is empty\n" },	/* .lo = 1 */
		{ "--addr", "10.1.2", "--addr: '10.1.2' is not an IPv4 or IPv6 address\n" },
		{ "--mac", "1ff:0:0:0:0:1",
		  "--mac: '1ff:0:0:0:0:1' is not a MAC address like 02:00:00:00:00:01\n" },
		{ "--mac", "-1:-1:-1:-1:-1:-1",
		  "--mac: '-1:-1:-1:-1:-1:-1' is not a MAC address like 02:00:00:00:00:01\n" },
		{ "--mac", "02-00-00-00-00-01",
		  "--mac: '02-00-00-00-00-01' is not a MAC address like 02:00:00:00:00:01\n" },
		{ "--mac", "02:00:00:00:00:0g",
		  "--mac: '02:00:00:00:00:0g' is not a MAC address like 02:00:00:00:00:01\n" },
		{ "--mac", " 2:00:00:00:00:01",
		  "--mac: ' 2:00:00:00:00:01' is not a MAC address like 02:00:00:00:00:01\n" },
		{ "--custom", "even", "--custom: want odd\n" },
	};
	int cpu = usable_cpu(), rc;
	char twice[40], says[80];
	struct tcfg c;

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		rc = parse(&c, "--req", "r", bad[i].opt, bad[i].arg, NULL);
		UT_ASSERT(rc == -1 && !strcmp(err_text, bad[i].says), "%s %s: rc %d, said '%s'",
			  bad[i].opt, bad[i].arg, rc, err_text);
	}
	UT_ASSERT(cpu >= 0, "no usable CPU");
	snprintf(twice, sizeof(twice), "%d,%d", cpu, cpu);
	snprintf(says, sizeof(says), "--cpu: CPU %d is listed twice\n", cpu);
	rc = parse(&c, "--req", "r", "--cpu", twice, NULL);
	UT_ASSERT(rc == -1 && !strcmp(err_text, says), "--cpu %s: rc %d, said '%s'", twice, rc,
		  err_text);
	return 0;
}

static int test_command_line(void)
{
	struct tcfg c;
	int rc;

	rc = parse(&c, NULL);
	UT_ASSERT(rc == -1 && !strcmp(err_text, "t: --req R is required; try --help\n"),
		  "missing: rc %d, said '%s'", rc, err_text);
	rc = parse(&c, "--req", "r", "stray", NULL);
	UT_ASSERT(rc == -1 && !strcmp(err_text, "t: unexpected argument 'stray'; try --help\n"),
		  "stray: rc %d, said '%s'", rc, err_text);
	rc = parse(&c, "--req", "r", "--nosuch", NULL);
	UT_ASSERT(rc == -1 && strstr(err_text, "unrecognized option") &&
		  strstr(err_text, "Try 'prog t --help'.\n"), "unknown: rc %d, said '%s'", rc,
		  err_text);
	rc = parse(&c, "--req", NULL);
	UT_ASSERT(rc == -1 && strstr(err_text, "requires an argument"), "no argument: '%s'",
		  err_text);
	rc = parse(&c, "--req", "r", "-hv", NULL);
	UT_ASSERT(rc == OPTS_HELP, "-hv: rc %d", rc);
	/* getopt forgets that the last parse stopped before the v of "-hv" */
	rc = parse(&c, "--req", "r", NULL);
	UT_ASSERT(rc == 0 && c.verbose == 0, "after -hv: rc %d, verbose %d", rc, c.verbose);
	return 0;
}

static int test_help(void)
{
	static const char head[] = "Usage: prog t --req R [options]\n\nTests the tables.\n\n";
	struct tcfg c = t_defaults;
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int lines = 0;

	UT_ASSERT(f, "open_memstream");
	opts_usage(&t_cmd, &c, f);
	fclose(f);
	UT_ASSERT(!strncmp(text, head, strlen(head)), "head: %.80s", text);
	UT_ASSERT(strstr(text, "\n  -f, --flag            a flag\n"), "a short option");
	UT_ASSERT(strstr(text, "\n  --str S               a string (default abc)\n"), "a string");
	UT_ASSERT(strstr(text, "\n  -n, --num N           a number (default 3)\n"), "a number");
	UT_ASSERT(strstr(text, "(default 1.5)") && strstr(text, "a mode (default l4-hash)") &&
		  strstr(text, "native or skb (default native)") &&
		  strstr(text, "\nPlacement:\n  --cpus LIST           CPUs (default 0)\n") &&
		  strstr(text, "one CPU (default 0)"), "defaults and the heading");
	UT_ASSERT(!strstr(text, "a port (default"), "a default shown without OPT_F_DEFAULT");
	UT_ASSERT(strstr(text, "the-last-row (default 0)\n") ||
		  strstr(text, "the-last-row\n                        (default 0)\n"),
		  "a help of %zu characters cut short", strlen(HELP_320) * 5);
	UT_ASSERT(strstr(text, "\n  -h, --help            this text\n\nRows:\n  row-a  the first row\n"),
		  "the end");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), lines++)
		UT_ASSERT(strlen(line) <= 79, "a line of %zu columns: %s", strlen(line), line);
	UT_ASSERT(lines > 25, "%d lines", lines);
	free(text);

	UT_ASSERT(parse(&c, "--num", "1", "-h", NULL) == OPTS_HELP, "-h");
	return 0;
}

/* A table whose field does not fit its kind is refused before any parse. */
static int test_bad_table(void)
{
	static const struct opt bad[][2] = {
		{ OPT_DEF("n", OPT_FLAG, struct tcfg, num, .help = "a flag on a long"), {} },
		{ OPT_DEF("n", OPT_UINT, struct tcfg, port, .hi = 70000, .metavar = "P",
			  .help = "past a u16"), {} },
		{ OPT_DEF("n", OPT_UINT, struct tcfg, num, .hi = 9, .help = "no metavar"), {} },
		{ OPT_DEF("n", OPT_SECONDS, struct tcfg, port, .metavar = "S", .help = "a u16"), {} },
	};
	char *argv[] = { "prog", NULL };

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct opts_cmd cmd = { .name = "t", .usage = "t", .opts = bad[i] };
		struct tcfg c = {};
		int rc, saved = dup(2), null = open("/dev/null", O_WRONLY);

		fflush(stderr);
		dup2(null, 2);
		rc = opts_parse(&cmd, &c, 1, argv);
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		close(null);
		UT_ASSERT(rc == -1, "table %u taken", i);
	}
	return 0;
}

/* @text into the file @path. */
static void put_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

/* A file of options: every form of a line, read before the command line
 * (which overrides it wherever the option naming the file stands), its
 * complaints naming the file and the line, a missing file, an optional one,
 * no name. */
static int test_file(void)
{
	/* A line each, refused naming its line. */
	static const struct {
		const char *text, *says;
	} bad_lines[] = {
		{ "flag on\n", ":1: --flag takes no value" },
		{ "\nnum\n", ":2: --num needs a value" },
		{ "nosuch 1\n", ":1: no option --nosuch" },
		/* a prefix, which the command line would take */
		{ "cus 1\n", ":1: no option --cus: a file of options takes whole names: custom" },
		/* one the file cannot take: not offered */
		{ "sk\n", ":1: no option --sk; `t --help` lists the options" },
		{ "conf x\n", ":1: --conf cannot be in a file" },
		{ "skb\n", ":1: --skb cannot be in a file" },
		{ "num = \n", ":1: --num needs a value" },
		{ "flag = on\n", ":1: --flag takes no value" },
	};
	char path[] = "/tmp/test-opts-XXXXXX", opt[64], says[256];
	struct tcfg c;
	int fd = mkstemp(path), rc;

	UT_ASSERT(fd >= 0, "mkstemp");
	close(fd);
	cmd_used = &f_cmd;
	put_file(path, "# a comment\n\n  num 4   # four\n--str=ab#c\nflag\nreq   r r\n");
	rc = parse(&c, "--conf", path, NULL);
	UT_ASSERT(rc == 0 && c.num == 4 && c.flag && !strcmp(c.str, "ab#c") &&
		  !strcmp(c.req, "r r"), "forms: rc %d num %lu str '%s' req '%s' (%s)", rc, c.num,
		  c.str, c.req, err_text);
	/* Blanks around '=': the value's own stay. */
	put_file(path, "num = 5\nstr =ab\nreq=  r = r \n");
	rc = parse(&c, "--conf", path, NULL);
	UT_ASSERT(rc == 0 && c.num == 5 && !strcmp(c.str, "ab") && !strcmp(c.req, "r = r"),
		  "'=' between blanks: rc %d num %lu str '%s' req '%s' (%s)", rc, c.num, c.str,
		  c.req, err_text);
	put_file(path, "# a comment\n\n  num 4   # four\n--str=ab#c\nflag\nreq   r r\n");
	rc = parse(&c, "--num", "7", "--conf", path, NULL);
	UT_ASSERT(rc == 0 && c.num == 7, "the command line first: num %lu", c.num);
	rc = parse(&c, "--conf", path, "--num", "8", NULL);
	UT_ASSERT(rc == 0 && c.num == 8, "the command line after: num %lu", c.num);
	put_file(path, "num 4\nnum 11\n");
	rc = parse(&c, "--conf", path, "--req", "r", NULL);
	snprintf(says, sizeof(says), "%s:2: --num: '11' is not a whole number between 1 and 9\n",
		 path);
	UT_ASSERT(rc == -1 && !strcmp(err_text, says), "bad value: rc %d, said '%s'", rc, err_text);
	put_file(path, "custom even\n");
	rc = parse(&c, "--conf", path, "--req", "r", NULL);
	snprintf(says, sizeof(says), "%s:1: --custom: want odd\n", path);
	UT_ASSERT(rc == -1 && !strcmp(err_text, says), "custom: said '%s'", err_text);
	for (unsigned int i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++) {
		put_file(path, bad_lines[i].text);
		rc = parse(&c, "--conf", path, "--req", "r", NULL);
		UT_ASSERT(rc == -1 && strstr(err_text, bad_lines[i].says), "want '%s': rc %d, '%s'",
			  bad_lines[i].says, rc, err_text);
	}
	rc = parse(&c, "--skb", "--req", "r", NULL);
	UT_ASSERT(rc == 0 && c.skb, "--skb on the command line: rc %d '%s'", rc, err_text);
	unlink(path);
	rc = parse(&c, "--conf", path, "--req", "r", NULL);
	UT_ASSERT(rc == OPTS_FILE_ERR && strstr(err_text, "No such file"), "missing: rc %d '%s'",
		  rc, err_text);
	snprintf(opt, sizeof(opt), "-%s", path);
	rc = parse(&c, "--conf", opt, "--req", "r", NULL);
	UT_ASSERT(rc == 0 && c.num == 3, "optional and missing: rc %d '%s'", rc, err_text);
	/* No name, optional or not: a usage error, not a file not there. */
	rc = parse(&c, "--conf", "", "--req", "r", NULL);
	UT_ASSERT(rc == -1 && !strcmp(err_text, "--conf: the file's name is empty\n"),
		  "empty: rc %d '%s'", rc, err_text);
	rc = parse(&c, "--conf", "-", "--req", "r", NULL);
	UT_ASSERT(rc == -1 && !strcmp(err_text, "--conf: the file's name is empty\n"),
		  "'-': rc %d '%s'", rc, err_text);
	cmd_used = &t_cmd;
	return 0;
}

/* json_str: what is not UTF-8 becomes U+FFFD, what is stays as it is. */
/* One value written by the JSON writer, as text (the caller frees it):
 * @str, else @num. NULL when no memory stream could be had. */
static char *json_text(const char *str, double num)
{
	struct json j = {};
	size_t len;
	char *buf;

	j.f = open_memstream(&buf, &len);
	if (!j.f)
		return NULL;
	j.first[0] = true;
	if (str)
		json_str(&j, NULL, str);
	else
		json_num(&j, NULL, num);
	fclose(j.f);
	return buf;
}

/* Counts whole to the unit, rates in six digits; a median over rounds
 * that meets a lower bound is that bound. */
static int test_json_counts(void)
{
	static const struct {
		double in;
		const char *out;
	} c[] = {
		{ 1767512, "1767512" }, { 0, "0" }, { -3, "-3" },
		{ 9007199254740991.0, "9007199254740991" }, { 0.5, "0.5" },
		{ 512345.678, "512346" }, { 1e300, "1e+300" },
	};
	const double two[2] = { 100000, 180 }, four[4] = { 100000, 100000, 170, 180 };
	const double calm[4] = { 150, 100000, 170, 180 };
	char *buf;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		buf = json_text(NULL, c[i].in);
		UT_ASSERT(buf, "open_memstream: %s", strerror(errno));
		UT_ASSERT(!strcmp(buf, c[i].out), "case %zu: '%s', not '%s'", i, buf, c[i].out);
		free(buf);
	}
	UT_ASSERT(run_median_bound(two, 2, 100000) == 100000, "%g", run_median_bound(two, 2, 100000));
	UT_ASSERT(run_median_bound(four, 4, 100000) == 100000, "%g", run_median_bound(four, 4, 100000));
	UT_ASSERT(run_median_bound(calm, 4, 100000) == 175, "%g", run_median_bound(calm, 4, 100000));
	UT_ASSERT(run_median_bound(two, 1, 100000) == 100000, "one round");
	return 0;
}

static int test_json_utf8(void)
{
	static const struct {
		const char *in, *out;
	} c[] = {
		{ "eth0", "\"eth0\"" },
		{ "a\xff" "b", "\"a\\ufffdb\"" },
		{ "\xc3\xa9t\xc3\xa9", "\"\xc3\xa9t\xc3\xa9\"" },	/* two-byte */
		{ "\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"" },	/* four-byte */
		{ "\xc0\x80", "\"\\ufffd\\ufffd\"" },		/* overlong NUL */
		{ "\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"" },	/* overlong '/' */
		{ "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },	/* a surrogate */
		{ "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" }, /* > U+10FFFF */
		{ "x\xe2\x82", "\"x\\ufffd\\ufffd\"" },		/* cut at the end */
		{ "q\"\x01\\", "\"q\\\"\\u0001\\\\\"" },
	};
	char *buf;

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		buf = json_text(c[i].in, 0);
		UT_ASSERT(buf, "open_memstream: %s", strerror(errno));
		UT_ASSERT(!strcmp(buf, c[i].out), "case %zu: '%s', not '%s'", i, buf, c[i].out);
		free(buf);
	}
	return 0;
}

/* sleep_next_slot(): behind by 5.5 periods, 4 slots skipped and the next
 * one at once (less than a period late); on time, it sleeps to its slot.
 * A thread that loses the CPU for half a period before the call reads
 * the clock sees 5 to skip, as a skip of one too many would: of 5 tries,
 * one must see 4. */
static int test_next_slot(void)
{
	const uint64_t period = 10000000;	/* 10 ms */
	uint64_t t0 = 0, then, took = 0;
	struct timespec next;
	uint32_t skipped = 0;

	for (int i = 0; i < 5; i++) {
		t0 = mono_ns();
		then = t0 - 55 * period / 10;
		next = (struct timespec){ .tv_sec = then / 1000000000,
					  .tv_nsec = then % 1000000000 };
		skipped = sleep_next_slot(&next, period);
		took = mono_ns() - t0;
		if (skipped == 4 && took < period)
			break;
	}
	UT_ASSERT(skipped == 4 && took < period, "skipped %u, slept %llu ns", skipped,
		  (unsigned long long)took);
	t0 = mono_ns();
	next = (struct timespec){ .tv_sec = t0 / 1000000000, .tv_nsec = t0 % 1000000000 };
	skipped = sleep_next_slot(&next, period);
	took = mono_ns() - t0;
	UT_ASSERT(!skipped && took >= period, "on time: skipped %u, slept %llu ns", skipped,
		  (unsigned long long)took);
	return 0;
}

static const struct ut_case cases[] = {
	UT_CASE(test_every_kind),
	UT_CASE(test_bad_arguments),
	UT_CASE(test_command_line),
	UT_CASE(test_help),
	UT_CASE(test_bad_table),
	UT_CASE(test_file),
	UT_CASE(test_json_counts),
	UT_CASE(test_json_utf8),
	UT_CASE(test_next_slot),
	{}
};

int main(int argc, char **argv)
{
	return ut_main(argc, argv, cases);
}
