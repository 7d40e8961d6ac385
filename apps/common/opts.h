/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Command-line options as data: each app describes its options in a table
 * (name, kind, the field of its config struct, bounds, metavar, help), and
 * opts_parse() fills the config from argv and writes --help from the same
 * table. What depends on more than one option stays in the app, as a few
 * checks after the parse.
 *
 *	static const struct opt gen_opts[] = {
 *		OPT_DEF("size", OPT_UINT, struct cfg, size, .lo = 14, .hi = 3408,
 *			.metavar = "BYTES", .help = "frame length",
 *			.seen = OPT_REF(struct cfg, size_set)),
 *		OPT_DEF("engine", OPT_ENUM, struct cfg, engine, .vals = engines,
 *			.metavar = "ENGINE", .help = "...", .flags = OPT_F_DEFAULT),
 *		{}
 *	};
 *
 * Messages name the option as the apps always have ("--size: '10' is not a
 * whole number between 14 and 3408"); the numbers, CPU lists and MAC
 * addresses go through util.c's parsers, so their wording is theirs.
 */
#ifndef UCM_APP_OPTS_H
#define UCM_APP_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

enum opt_kind {
	OPT_FLAG,	/* bool: true when given */
	OPT_BIT,	/* an unsigned field: |= .mask when given */
	OPT_COUNT,	/* int: one more each time given (-v -v) */
	OPT_STRING,	/* const char *: the argument; .hi: its longest length */
	OPT_ADDR,	/* const char *: an IPv4 or IPv6 address, as given */
	OPT_OUTFILE,	/* const char *: a file this process can write, named
			 * without ' " $ ` or \ (gnuplot's command line takes
			 * it); tried at the parse, so a bad one fails at once,
			 * not after the run */
	OPT_UINT,	/* an unsigned field: a whole number in [.lo, .hi] */
	OPT_POW2,	/* the same, and a power of two */
	OPT_SECONDS,	/* double: seconds in [.dlo, .dhi] (.dhi 0: 1e7) */
	OPT_ENUM,	/* an integer field: the value of a name in .vals */
	OPT_CPUS,	/* int[]: a CPU list, at most .hi (0: the array's size);
			 * its length into .count, or exactly one CPU without */
	OPT_MAC,	/* uint8_t[6]: 02:00:00:00:00:01 */
	OPT_CUSTOM,	/* .parse does it all */
};

#define OPT_F_REQUIRED	(1U << 0)	/* the parse fails without it */
#define OPT_F_DEFAULT	(1U << 1)	/* --help shows the field's value as
					 * the default (from the config
					 * opts_parse() was given) */
#define OPT_F_POSITIVE	(1U << 2)	/* OPT_SECONDS: more than 0 */
#define OPT_F_ZERO_OFF	(1U << 4)	/* OPT_SECONDS: 0 (off) too, below dlo */
/* Not in a file of options: it asks for something else than a run
 * (--check, --status, --version), which a unit's file would make of
 * every start. */
#define OPT_F_NO_FILE	(1U << 3)
/* It asks for something else than a run (--version, --status): taken
 * alone wherever it stands, no other option read, nor the file of
 * options. (--help reads the file: it shows the values the file gives.) */
#define OPT_F_STOPS	(1U << 5)

/* OPT_ENUM's names. A name whose value an earlier one has is an alias:
 * taken, but not offered in messages and --help. */
struct opt_enum {
	const char *name;
	int val;
};

struct opt;
/* OPT_CUSTOM: store @arg into @cfg. Return 0, or -1 with a message. */
typedef int (*opt_parse_fn)(const struct opt *o, const char *arg, void *cfg);

struct opt {
	const char *name;		/* the long name, without "--" */
	int short_opt;			/* 0: none */
	enum opt_kind kind;
	size_t off, size;		/* the field in the config struct */
	unsigned int flags;		/* OPT_F_* */
	unsigned long lo, hi;
	double dlo, dhi;
	unsigned long mask;		/* OPT_BIT */
	const struct opt_enum *vals;	/* OPT_ENUM, ending with { NULL } */
	opt_parse_fn parse;		/* OPT_CUSTOM */
	/* Other fields of the config, by OPT_REF(); 0: none. */
	size_t seen;			/* bool: set when the option is given */
	size_t text;			/* const char *: the argument as given */
	size_t count;			/* int: OPT_CPUS' length */
	/* The complaint after "--name: " for a bad argument, a printf
	 * format with one %s (the argument); NULL: the kind's own. */
	const char *bad;
	const char *metavar;		/* NULL: the option takes no argument */
	const char *help;
	const char *heading;		/* --help: a line before this option */
};

#define OPT_DEF(_name, _kind, _type, _field, ...)				\
	{ .name = (_name), .kind = (_kind), .off = offsetof(_type, _field),	\
	  .size = sizeof(((_type *)0)->_field), __VA_ARGS__ }
/* Another field, for .seen, .text and .count (never 0: 0 means none). */
#define OPT_REF(_type, _field)	(offsetof(_type, _field) + 1)

/* A command: its options and the words of its --help around them. */
struct opts_cmd {
	const char *name;		/* message prefix: "ucpumap-gen", "engine" */
	const char *invoked;		/* "ucpumap-bench engine"; NULL: name */
	const char *usage;		/* after "Usage: " */
	const char *doc;		/* paragraphs before the options */
	const char *tail;		/* after them */
	void (*tail_fn)(FILE *f);	/* and after that: a table of rows */
	const struct opt *opts;		/* ending with {} */
	/* The name of an OPT_STRING option whose argument is a file of
	 * options (NULL: none), read before the command line wherever the
	 * option stands, so that what the command line gives overrides it.
	 * One option a line, as on the command line but for the dashes,
	 * which may go: "queues 0-3", "--queues 0-3", "queues=0-3",
	 * "queues = 0-3" (blanks around '=' are not the value's), a flag
	 * alone ("two-way"); '#' at a line's start or after a blank begins a
	 * comment; blank lines. A value is the rest of the line, blanks at
	 * its ends taken off, no quoting. A path starting with '-' names an
	 * optional file (systemd's EnvironmentFile=-): none there is none
	 * read. A complaint about a line names the file and the line. */
	const char *config_opt;
};

#define OPTS_HELP	1
#define OPTS_FILE_ERR	(-2)	/* the file of options could not be read */

/*
 * Fill @cfg, which holds the defaults, from @argc/@argv (argv[0] is the
 * command). -h/--help prints the help to stdout. Return: 0, OPTS_HELP when
 * the help was asked for (the app exits 0), or -1 after a message on
 * stderr (the app exits 2); OPTS_FILE_ERR after a message when the file
 * of options (cmd->config_opt) cannot be read.
 */
int opts_parse(const struct opts_cmd *cmd, void *cfg, int argc, char **argv);
/* The help, with the defaults from @cfg. */
void opts_usage(const struct opts_cmd *cmd, const void *cfg, FILE *f);

#endif /* UCM_APP_OPTS_H */
