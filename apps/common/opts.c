// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Command-line options as data: the parse and the help (see opts.h). */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "util.h"

#define OPTS_MAX	64	/* options in one table */
#define OPT_VAL_BASE	256	/* getopt's value for the i-th option: base + i */
#define SECONDS_MAX	1e7
#define HELP_COL	24	/* where the help text starts, at least */
#define HELP_WIDTH	79	/* the longest line */

static void *field(void *cfg, size_t off)
{
	return (char *)cfg + off;
}

/* A field named by OPT_REF(). */
static void *ref(void *cfg, size_t r)
{
	return (char *)cfg + r - 1;
}

static const char *ref_str(const void *cfg, size_t r)
{
	return r ? *(const char *const *)((const char *)cfg + r - 1) : NULL;
}

static void put_uint(void *p, size_t size, unsigned long v)
{
	switch (size) {
	case 1: *(uint8_t *)p = v; break;
	case 2: *(uint16_t *)p = v; break;
	case 4: *(uint32_t *)p = v; break;
	default: *(uint64_t *)p = v; break;
	}
}

static unsigned long get_uint(const void *p, size_t size)
{
	switch (size) {
	case 1: return *(const uint8_t *)p;
	case 2: return *(const uint16_t *)p;
	case 4: return *(const uint32_t *)p;
	default: return *(const uint64_t *)p;
	}
}

/* @e's value as it would be stored in @o's field is @v. */
static bool same_val(const struct opt *o, const struct opt_enum *e, unsigned long v)
{
	uint64_t tmp = 0;

	put_uint(&tmp, o->size, (unsigned long)e->val);
	return get_uint(&tmp, o->size) == v;
}

/* "--name: " and the complaint: the option's own words, or @fmt. */
static void __attribute__((format(printf, 3, 4)))
complain(const struct opt *o, const char *arg, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "--%s: ", o->name);
	if (o->bad) {
		fprintf(stderr, o->bad, arg);
	} else {
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fputc('\n', stderr);
}

/* An alias: a later name for an earlier one's value. */
static bool enum_alias(const struct opt_enum *v, const struct opt_enum *e)
{
	for (; v != e; v++)
		if (v->val == e->val)
			return true;
	return false;
}

/* The names an OPT_ENUM offers, in @buf: "a", "a nor b" (after "neither"),
 * "a, b or c". Return how many. */
static int enum_names(const struct opt_enum *v, char *buf, size_t len)
{
	int n = 0, i = 0, at = 0;

	for (const struct opt_enum *e = v; e->name; e++)
		n += !enum_alias(v, e);
	buf[0] = '\0';
	for (const struct opt_enum *e = v; e->name && at < (int)len; e++) {
		if (enum_alias(v, e))
			continue;
		at += snprintf(buf + at, len - at, "%s%s",
			       !i ? "" : i < n - 1 ? ", " : n == 2 ? " nor " : " or ", e->name);
		i++;
	}
	return n;
}

static int parse_enum(const struct opt *o, const char *arg, void *cfg)
{
	char names[256];

	for (const struct opt_enum *e = o->vals; e->name; e++) {
		if (!strcmp(arg, e->name)) {
			put_uint(field(cfg, o->off), o->size, (unsigned long)e->val);
			return 0;
		}
	}
	complain(o, arg, "'%s' is %s%s", arg,
		 enum_names(o->vals, names, sizeof(names)) == 2 ? "neither " : "not ", names);
	return -1;
}

static int parse_seconds(const struct opt *o, const char *arg, void *cfg)
{
	double hi = o->dhi ? o->dhi : SECONDS_MAX, d;
	char *end;

	errno = 0;
	d = strtod(arg, &end);
	if (!errno && end != arg && !*end &&
	    ((d >= o->dlo && d <= hi && (d > 0 || !(o->flags & OPT_F_POSITIVE))) ||
	     (d == 0 && (o->flags & OPT_F_ZERO_OFF)))) {
		*(double *)field(cfg, o->off) = d;
		return 0;
	}
	if (o->flags & OPT_F_ZERO_OFF)
		complain(o, arg, "'%s' is neither 0 (off) nor a number of seconds from %g to %.10g",
			 arg, o->dlo, hi);
	else if ((o->flags & OPT_F_POSITIVE) && !o->dlo)
		complain(o, arg, "'%s' is not a positive number of seconds up to %.10g", arg, hi);
	else
		complain(o, arg, "'%s' is not a number of seconds between %g and %.10g",
			 arg, o->dlo, hi);
	return -1;
}

static int parse_cpus(const struct opt *o, const char *what, const char *arg, void *cfg)
{
	int max = o->hi ? (int)o->hi : (int)(o->size / sizeof(int)), n;

	if (!o->count)
		max = 1;
	n = parse_cpu_list(arg, field(cfg, o->off), max, what);
	if (n < 0)
		return -1;
	if (o->count)
		*(int *)ref(cfg, o->count) = n;
	return 0;
}

/* One option's argument (NULL for those that take none) into @cfg. */
static int opt_store(const struct opt *o, const char *arg, void *cfg)
{
	void *p = field(cfg, o->off);
	char what[64];
	unsigned long v;
	struct in6_addr a;

	snprintf(what, sizeof(what), "--%s", o->name);
	switch (o->kind) {
	case OPT_FLAG:
		*(bool *)p = true;
		return 0;
	case OPT_BIT:
		put_uint(p, o->size, get_uint(p, o->size) | o->mask);
		return 0;
	case OPT_COUNT:
		(*(int *)p)++;
		return 0;
	case OPT_STRING:
		if (strlen(arg) < o->lo) {	/* .lo: the shortest, 1 for a name */
			if (o->lo == 1)
				complain(o, arg, "the value is empty");
			else
				complain(o, arg, "'%s' is shorter than %lu characters", arg, o->lo);
			return -1;
		}
		if (o->hi && strlen(arg) > o->hi) {
			complain(o, arg, "'%s' is longer than %lu characters", arg, o->hi);
			return -1;
		}
		*(const char **)p = arg;
		return 0;
	case OPT_OUTFILE:
		if (strpbrk(arg, "'\"$`\\")) {
			complain(o, arg, "'%s': give a file name without ' \" $ ` or \\", arg);
			return -1;
		}
		if (out_file_check(arg)) {
			complain(o, arg, "cannot write '%s': %s", arg, strerror(errno));
			return -1;
		}
		*(const char **)p = arg;
		return 0;
	case OPT_ADDR:
		if (inet_pton(AF_INET, arg, &a) != 1 && inet_pton(AF_INET6, arg, &a) != 1) {
			complain(o, arg, "'%s' is not an IPv4 or IPv6 address", arg);
			return -1;
		}
		*(const char **)p = arg;
		return 0;
	case OPT_UINT:
	case OPT_POW2:
		if ((o->kind == OPT_UINT ? parse_uint : parse_pow2)(arg, o->lo, o->hi, what, &v))
			return -1;
		put_uint(p, o->size, v);
		return 0;
	case OPT_SECONDS:
		return parse_seconds(o, arg, cfg);
	case OPT_ENUM:
		return parse_enum(o, arg, cfg);
	case OPT_CPUS:
		return parse_cpus(o, what, arg, cfg);
	case OPT_MAC:
		if (parse_mac(arg, p)) {
			complain(o, arg, "'%s' is not a MAC address like 02:00:00:00:00:01", arg);
			return -1;
		}
		return 0;
	case OPT_CUSTOM:
		return o->parse(o, arg, cfg);
	}
	return -1;
}

static int opt_given(const struct opt *o, const char *arg, void *cfg)
{
	if (opt_store(o, arg, cfg))
		return -1;
	if (o->seen)
		*(bool *)ref(cfg, o->seen) = true;
	if (o->text)
		*(const char **)ref(cfg, o->text) = arg;
	return 0;
}

/* "--dev IFACE and --tun NAME are required", when one of them is missing. */
static int check_required(const struct opts_cmd *cmd, const bool *given)
{
	const struct opt *o;
	int n = 0, missing = 0, i = 0;

	for (o = cmd->opts; o->name; o++) {
		if (!(o->flags & OPT_F_REQUIRED))
			continue;
		n++;
		missing += !given[o - cmd->opts];
	}
	if (!missing)
		return 0;
	fprintf(stderr, "%s: ", cmd->name);
	for (o = cmd->opts; o->name; o++) {
		if (!(o->flags & OPT_F_REQUIRED))
			continue;
		if (i)
			fputs(i == n - 1 ? " and " : ", ", stderr);
		fprintf(stderr, "--%s%s%s", o->name, o->metavar ? " " : "",
			o->metavar ?: "");
		i++;
	}
	fprintf(stderr, " %s required; try --help\n", n > 1 ? "are" : "is");
	return -1;
}

/* A shift by the value's own width is undefined (a long is 32 bits on
 * ILP32): a field as wide takes any value. */
static bool uint_fits(unsigned long v, size_t size)
{
	return size >= sizeof(v) || !(v >> (8 * size));
}

/* The field is one the kind can fill, and an argument is taken when the
 * kind needs one: a table's mistakes are found on its first run. */
static bool opt_fits(const struct opt *o)
{
	bool takes_arg = o->kind >= OPT_STRING && o->kind != OPT_CUSTOM;

	if (o->kind != OPT_CUSTOM && takes_arg != !!o->metavar)
		return false;
	switch (o->kind) {
	case OPT_FLAG: return o->size == sizeof(bool);
	case OPT_COUNT: return o->size == sizeof(int);
	case OPT_STRING:
	case OPT_OUTFILE:
	case OPT_ADDR: return o->size == sizeof(const char *);
	case OPT_SECONDS: return o->size == sizeof(double);
	case OPT_MAC: return o->size == 6;
	case OPT_CPUS: return !(o->size % sizeof(int)) && o->hi * sizeof(int) <= o->size;
	case OPT_BIT: return uint_fits(o->mask, o->size);
	case OPT_UINT:
	case OPT_POW2: return uint_fits(o->hi, o->size) && o->lo <= o->hi;
	case OPT_ENUM:
		for (const struct opt_enum *e = o->vals; e->name; e++)
			if (e->val < 0 || !uint_fits(e->val, o->size))
				return false;
		return !!o->vals;
	case OPT_CUSTOM: return !!o->parse;
	}
	return false;
}

/* getopt_long's tables from ours, with -h/--help at the end. */
static void getopt_tables(const struct opt *opts, int n, struct option *lo, char *so)
{
	int i;

	for (i = 0; i < n; i++) {
		lo[i] = (struct option){ opts[i].name,
			opts[i].metavar ? required_argument : no_argument, NULL,
			opts[i].short_opt ?: OPT_VAL_BASE + i };
		if (opts[i].short_opt) {
			*so++ = opts[i].short_opt;
			if (opts[i].metavar)
				*so++ = ':';
		}
	}
	lo[n] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n + 1] = (struct option){ NULL, 0, NULL, 0 };
	*so++ = 'h';
	*so = '\0';
}

static int opt_index(const struct opt *opts, int n, int c)
{
	if (c >= OPT_VAL_BASE)
		return c - OPT_VAL_BASE;
	for (int i = 0; i < n; i++)
		if (opts[i].short_opt == c)
			return i;
	return -1;
}

/* ---- a file of options (opts_cmd.config_opt) --------------------------------------- */

static int opt_by_name(const struct opt *opts, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(opts[i].name, name))
			return i;
	return -1;
}

/* The one option @name begins, or -1 (none, or several). */
static int opt_by_prefix(const struct opt *opts, int n, const char *name)
{
	size_t len = strlen(name);
	int found = -1;

	for (int i = 0; len && i < n; i++) {
		if (strncmp(opts[i].name, name, len))
			continue;
		if (found >= 0)
			return -1;
		found = i;
	}
	return found;
}

/* @line's option and value, cut in place: comments and blanks off, the
 * dashes off the name, blanks around a '=' too ("queues = 0-3", as other
 * files of settings write it). Return false for a line with nothing on
 * it. */
static bool split_line(char *line, char **name, char **val)
{
	char *p, *end;

	for (p = line; *p; p++)
		if (*p == '#' && (p == line || *(p - 1) == ' ' || *(p - 1) == '\t'))
			break;
	*p = '\0';
	for (end = p; end > line && strchr(" \t\r\n", *(end - 1)); end--)
		*(end - 1) = '\0';
	line += strspn(line, " \t");
	if (!*line)
		return false;
	if (!strncmp(line, "--", 2))
		line += 2;
	*name = line;
	line += strcspn(line, " \t=");
	if (*line) {
		bool eq = *line == '=';

		*line++ = '\0';
		line += strspn(line, " \t");
		if (!eq && *line == '=')
			line += 1 + strspn(line + 1, " \t");
	}
	*val = line;
	return true;
}

/* @o given @arg on line @lineno of @path: its complaint, if any, after
 * "path:line: " (the parsers write theirs to stderr: caught here, stderr
 * swapped for a memory stream meanwhile; a parse runs before the app
 * starts any thread). */
static int file_opt_given(const struct opt *o, const char *arg, void *cfg, const char *path,
			  int lineno)
{
	FILE *err = stderr, *mem;
	char *msg = NULL;
	size_t len = 0;
	int rc;

	mem = open_memstream(&msg, &len);
	if (mem)
		stderr = mem;
	rc = opt_given(o, arg, cfg);
	if (mem) {
		fclose(mem);
		stderr = err;
	}
	if (rc)
		fprintf(stderr, "%s:%d: %s", path, lineno, msg && *msg ? msg : "a bad value\n");
	free(msg);
	return rc;
}

/*
 * A file's string values outlive it: the config keeps pointers to them for
 * the process's life. Each is kept on a list that stays reachable, so
 * that it is no leak (LeakSanitizer's view too), only memory that lives
 * as long as the options do. Main thread only, as the parse is.
 */
struct file_val {
	struct file_val *next;
	char s[];
};
static struct file_val *file_vals;

static char *file_keep(const char *val)
{
	size_t len = strlen(val) + 1;
	struct file_val *v = malloc(sizeof(*v) + len);

	if (!v)
		return NULL;
	memcpy(v->s, val, len);
	v->next = file_vals;
	file_vals = v;
	return v->s;
}

/* One line of @path, given its option and value. */
static int file_line(const struct opts_cmd *cmd, void *cfg, int n, const char *path,
		     int lineno, const char *name, const char *val, bool *given)
{
	int i = opt_by_name(cmd->opts, n, name);
	int p = i < 0 ? opt_by_prefix(cmd->opts, n, name) : -1;
	const struct opt *o;
	char *arg = NULL;

	/* The command line takes a prefix (getopt_long()); a file wants the
	 * whole name, which an option added later cannot make ambiguous. */
	if (p >= 0 && strcmp(cmd->opts[p].name, cmd->config_opt) &&
	    !(cmd->opts[p].flags & OPT_F_NO_FILE)) {
		fprintf(stderr, "%s:%d: no option --%s: a file of options takes whole names: %s\n",
			path, lineno, name, cmd->opts[p].name);
		return -1;
	}
	if (i < 0 || !strcmp(name, cmd->config_opt) || (cmd->opts[i].flags & OPT_F_NO_FILE)) {
		fprintf(stderr, "%s:%d: %s%s%s; `%s --help` lists the options\n", path, lineno,
			i < 0 ? "no option --" : "--", name,
			i < 0 ? "" : " cannot be in a file of options: give it on the command line",
			cmd->invoked ?: cmd->name);
		return -1;
	}
	o = &cmd->opts[i];
	if (o->metavar && !*val) {
		fprintf(stderr, "%s:%d: --%s needs a value: %s %s\n", path, lineno, name, name,
			o->metavar);
		return -1;
	}
	if (!o->metavar && *val) {
		fprintf(stderr, "%s:%d: --%s takes no value: '%s' alone on its line\n", path,
			lineno, name, name);
		return -1;
	}
	if (o->metavar && !(arg = file_keep(val))) {
		fprintf(stderr, "%s:%d: out of memory\n", path, lineno);
		return -1;
	}
	if (file_opt_given(o, arg, cfg, path, lineno))
		return -1;
	given[i] = true;
	return 0;
}

/* The options of the file @path into @cfg and @given. */
static int read_file(const struct opts_cmd *cmd, void *cfg, int n, const char *path,
		     bool *given)
{
	bool optional = path[0] == '-';
	char *line = NULL, *name, *val;
	size_t cap = 0;
	int lineno = 0, rc = 0;
	FILE *f;

	path += optional;
	if (!*path) {
		fprintf(stderr, "--%s: the file's name is empty\n", cmd->config_opt);
		return -1;
	}
	f = fopen(path, "re");
	if (!f) {
		if (optional && errno == ENOENT)
			return 0;
		fprintf(stderr, "%s: --%s %s: %s\n", cmd->name, cmd->config_opt, path,
			strerror(errno));
		return OPTS_FILE_ERR;
	}
	while (!rc && getline(&line, &cap, f) >= 0) {
		lineno++;
		if (split_line(line, &name, &val))
			rc = file_line(cmd, cfg, n, path, lineno, name, val, given);
	}
	if (!rc && ferror(f)) {
		fprintf(stderr, "%s: --%s %s: %s\n", cmd->name, cmd->config_opt, path,
			strerror(errno));
		rc = OPTS_FILE_ERR;
	}
	free(line);
	fclose(f);
	return rc;
}

/* The file of options named on the command line (the last one), read
 * before the rest: a first pass over @argv looks for it alone. */
/* A first pass, silent: where an option that stops the parse stands
 * (@stop, its @stop_arg: "nothing else is needed"), and --config's file. */
static const char *first_pass(const struct opts_cmd *cmd, int n, int argc, char **argv,
			      const struct option *lo, const char *so, int *stop,
			      const char **stop_arg)
{
	const char *path = NULL;
	int c, i, saved = opterr;
	bool help = false;

	*stop = -1;
	opterr = 0;	/* the second pass says what is wrong */
	optind = 0;
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		i = opt_index(cmd->opts, n, c);
		help |= c == 'h';	/* first: the second pass shows it */
		if (i >= 0 && (cmd->opts[i].flags & OPT_F_STOPS) && !help) {
			*stop = i;
			*stop_arg = optarg;
			break;
		}
		if (i >= 0 && cmd->config_opt && !strcmp(cmd->opts[i].name, cmd->config_opt))
			path = optarg;
	}
	opterr = saved;
	return path;
}

int opts_parse(const struct opts_cmd *cmd, void *cfg, int argc, char **argv)
{
	const char *invoked = cmd->invoked ?: cmd->name;
	struct option lo[OPTS_MAX + 2];
	char so[2 * OPTS_MAX + 2];
	bool given[OPTS_MAX] = {};
	const char *path, *arg;
	int n = 0, c, i;

	for (; cmd->opts[n].name; n++) {
		if (!opt_fits(&cmd->opts[n])) {
			fprintf(stderr, "%s: --%s: its field or argument does not fit its kind (a bug)\n",
				cmd->name, cmd->opts[n].name);
			return -1;
		}
	}
	if (n > OPTS_MAX) {
		fprintf(stderr, "%s: more than %d options in its table\n", cmd->name, OPTS_MAX);
		return -1;
	}
	getopt_tables(cmd->opts, n, lo, so);
	path = first_pass(cmd, n, argc, argv, lo, so, &i, &arg);
	if (i >= 0)	/* alone: no other option is read, nor the file */
		return opt_given(&cmd->opts[i], arg, cfg) ? -1 : 0;
	if (path) {
		c = read_file(cmd, cfg, n, path, given);
		if (c)
			return c;
	}
	optind = 0;	/* getopt starts afresh, even after a parse that stopped midway */
	while ((c = getopt_long(argc, argv, so, lo, NULL)) != -1) {
		if (c == 'h') {
			opts_usage(cmd, cfg, stdout);
			return OPTS_HELP;
		}
		i = opt_index(cmd->opts, n, c);
		if (i < 0) {
			fprintf(stderr, "Try '%s --help'.\n", invoked);
			return -1;
		}
		if (opt_given(&cmd->opts[i], optarg, cfg))
			return -1;
		given[i] = true;
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s'; try --help\n", cmd->name,
			argv[optind]);
		return -1;
	}
	return check_required(cmd, given);
}

/* ---- --help ----------------------------------------------------------------------- */

/* The field's value as --help shows a default, or false when it has none. */
static bool default_str(const struct opt *o, const void *cfg, char *buf, size_t len)
{
	const void *p = (const char *)cfg + o->off;
	const char *text = ref_str(cfg, o->text);
	unsigned long v;

	switch (o->kind) {
	case OPT_UINT:
	case OPT_POW2:
		snprintf(buf, len, "%lu", get_uint(p, o->size));
		return true;
	case OPT_SECONDS:
		snprintf(buf, len, "%g", *(const double *)p);
		return true;
	case OPT_ENUM:
		v = get_uint(p, o->size);
		/* the first name of a value is not an alias */
		for (const struct opt_enum *e = o->vals; e->name; e++)
			if (same_val(o, e, v)) {
				snprintf(buf, len, "%s", e->name);
				return true;
			}
		return false;
	case OPT_CPUS:
		if (text)
			snprintf(buf, len, "%s", text);
		else if (!o->count)
			snprintf(buf, len, "%d", *(const int *)p);
		else
			return false;
		return true;
	case OPT_STRING:
	case OPT_OUTFILE:
	case OPT_ADDR:
	case OPT_CUSTOM:
		text = text ?: (o->kind != OPT_CUSTOM ? ref_str(cfg, o->off + 1) : NULL);
		if (!text)
			return false;
		snprintf(buf, len, "%s", text);
		return true;
	default:
		return false;
	}
}

/* @text from column @at on, words wrapped to HELP_WIDTH and continued
 * at column @col; "\n" breaks. The column it ends at. */
static int put_wrapped(FILE *f, const char *text, int col, int at)
{
	const char *w = text;

	while (*w) {
		size_t len = strcspn(w, " \n");

		if (at > col && at + 1 + (int)len > HELP_WIDTH) {
			fprintf(f, "\n%*s", col, "");
			at = col;
		} else if (at > col) {
			fputc(' ', f);
			at++;
		}
		fwrite(w, 1, len, f);
		at += len;
		w += len;
		if (*w == '\n') {
			fprintf(f, "\n%*s", col, "");
			at = col;
		}
		while (*w == ' ' || *w == '\n')
			w++;
	}
	return at;
}

static int opt_head(const struct opt *o, char *buf, size_t len)
{
	char s[8] = "";

	if (o->short_opt)
		snprintf(s, sizeof(s), "-%c, ", o->short_opt);
	return snprintf(buf, len, "  %s--%s%s%s", s, o->name, o->metavar ? " " : "",
			o->metavar ?: "");
}

static void opt_help(const struct opt *o, const void *cfg, int col, FILE *f)
{
	char head[128], def[64], text[sizeof(def) + 16];
	int at;

	if (o->heading)
		fprintf(f, "\n%s\n", o->heading);
	at = opt_head(o, head, sizeof(head));
	fputs(head, f);
	if (at >= col) {
		fprintf(f, "\n%*s", col, "");
		at = col;
	} else {
		at += fprintf(f, "%*s", col - at, "");
	}
	/* the help straight from its table: it has no bound (a list of rows) */
	at = put_wrapped(f, o->help ?: "", col, at);
	if ((o->flags & OPT_F_DEFAULT) && default_str(o, cfg, def, sizeof(def))) {
		snprintf(text, sizeof(text), "(default %s)", def);
		put_wrapped(f, text, col, at);
	}
	fputc('\n', f);
}

void opts_usage(const struct opts_cmd *cmd, const void *cfg, FILE *f)
{
	static const struct opt help = { .name = "help", .short_opt = 'h', .help = "this text" };
	const struct opt *o;
	char head[128];
	int col = HELP_COL;

	for (o = cmd->opts; o->name; o++) {
		int w = opt_head(o, head, sizeof(head)) + 2;

		if (w > col && w <= 32)
			col = w;
	}
	fprintf(f, "Usage: %s\n", cmd->usage);
	if (cmd->doc)
		fprintf(f, "\n%s", cmd->doc);
	fputc('\n', f);
	for (o = cmd->opts; o->name; o++)
		opt_help(o, cfg, col, f);
	opt_help(&help, cfg, col, f);
	if (cmd->tail)
		fprintf(f, "\n%s", cmd->tail);
	if (cmd->tail_fn)
		cmd->tail_fn(f);
}
