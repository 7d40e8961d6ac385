#!/bin/bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# ucpumapd's statistics lines, on a veth pair: ucpumap-gen sends a known
# number of datagrams at a known rate into ucpumapd, which prints a line
# every half second and a JSON line with it (--stats-json), and stops by
# itself (--duration).
#
#   one-line-per-interval  without --extended: between the banner and the
#                          total line, only statistics lines, one per
#                          interval: as many as JSON lines before the
#                          last, each half a second after the one before;
#                          the total line alone, then the conservation line
#   line-rates             each line's rx, delivered and drops per second
#                          are the counters' change over the time between
#                          two JSON lines (their times to the microsecond),
#                          and its workers' busy share is their sleep's
#                          (idle lines near 0%); the RX threads' share on
#                          the lines at the sending rate is above the idle
#                          lines' (their CPU time grows with the traffic)
#   delivered-is-traffic   the lines' delivered rates times their intervals
#                          add up to what the daemon delivered, and that
#                          with the drops it counted and the veth's before
#                          vd (vg's tx_dropped) is exactly what the
#                          generator sent; the JSON lines' account (received = rx and
#                          the kernel's drops = delivered + drops, by
#                          cause in drops_in) is the conservation line's; the busiest line is near the sending rate;
#                          the fair share's refusals (enqueue_shed) are
#                          the queues' summed, within the enqueue drops
#   total-average          the total line's time is the run, --duration,
#                          and its rates are the whole run's counts over it
#   extended-lines         --extended: after each line, the cpumap line,
#                          the queue's and each worker's lines; the queue's
#                          RX thread's busy share is the line's RX threads'
#                          (one queue), the workers' average theirs
#   latency-counts         the last JSON line's latency histograms count
#                          every RX batch (rx_hist: rx_batches) and every
#                          bulk (wait_hist, sink_hist: the bulks flushed,
#                          enqueue_events, none lost), in the totals as in
#                          the queue and the workers; with --no-latency
#                          none, and no latency line. Where ucpumapd's log
#                          says this kernel's XDP has no metadata, no
#                          packet carries its arrival time: rx_hist must
#                          be empty, the others count as above (the PASS
#                          line says which kernel)
#   latency-counts-inline  the same with --pass (the RX thread runs the
#                          worker's work inline): every bulk counted, in
#                          wait_hist's first bucket (no ring, no wait)
#   prewake                one worker (--cpus 1): the pre-wake is on by
#                          default (the banner says so) and the trickle of
#                          datagrams ends sleeps before the RX thread's
#                          kick (prewakes > 0, every frame home); with
#                          --prewake off, none and not in the banner
#   setup-passes           traffic already coming as ucpumapd starts: what
#                          its program passed to the kernel before the
#                          sockets were in its map (no_socket, in the
#                          first JSON line) is no line's rate, nor the
#                          total line's (the traffic ends before the stop)
#   nothing-left           nothing outlives the cleanup
#
# The first four cases and latency-counts judge one default run, made at
# the first of them. Root. One PASS/FAIL/SKIP line per case; the script
# exits 0.
set -u
BUILD=${BUILD:-build}
name=test-stats
cases="one-line-per-interval line-rates delivered-is-traffic total-average extended-lines
latency-counts latency-counts-inline prewake setup-passes nothing-left"
daemon=$BUILD/ucpumapd
gen=$BUILD/ucpumap-gen
G=ucmsg$$
D=ucmsd$$
cd "$(dirname "$0")/../.."
. tests/lib.sh

setup() {
	skip_unless_root "namespaces, XDP, tun"
	[ -x "$daemon" ] && [ -x "$gen" ] || { bad build "$daemon or $gen is not built (make)"; exit 0; }
	[ -n "$PY" ] || { echo "SKIP: $name: needs python3"; exit 0; }
	if [ "$(nproc)" -lt 2 ]; then
		echo "SKIP: $name: needs two CPUs for two workers"
		exit 0
	fi
	veth_pair $G $D vg vd 10.208.0.1/24 10.208.0.2/24 || { bad setup "cannot build the namespaces"; exit 0; }
	ip netns exec $D sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
	# vg's tx_dropped counts the generator's frames alone: none of its
	# own IPv6 (router solicitations, MLD) that vd's full ring drops.
	ip netns exec $G sysctl -qw net.ipv6.conf.vg.disable_ipv6=1
	vdmac=$(mac_of $D vd)
}

INTERVAL=0.5
DURATION=5
COUNT=40000
RATE=20000

# run CASE ARGS...: ucpumapd for DURATION seconds with ARGS, statistics
# every INTERVAL; once its first line is out, COUNT datagrams at RATE.
# $tmp/CASE.out, .json, .gen; $why when something did not run.
run() {
	local c=$1 dpid rc v0
	shift
	why=
	ip netns exec $D "$daemon" --dev vd --tun ucms0 --cpus 0,1 --interval $INTERVAL \
		--duration $DURATION --stats-json "$tmp/$c.json" "$@" > "$tmp/$c.out" 2> "$tmp/$c.err" &
	dpid=$!
	lib_pid $dpid
	if ! wait_line "$tmp/$c.out" '^vd: rx ' 30 $dpid; then
		why="no statistics line within 3 s: $(tail -2 "$tmp/$c.err" | tr '\n' ' ')"
		stop_pid $dpid
		return 1
	fi
	ip netns exec $D sysctl -qw net.ipv4.conf.ucms0.rp_filter=0 2> /dev/null
	v0=$(veth_drops)
	lib_run ip netns exec $G "$gen" --dev vg --dst-ip 10.208.0.2 --dst-mac "$vdmac" \
		--dst-port 9000 --flows 4 --rate $RATE --count $COUNT --duration 10 \
		> "$tmp/$c.gen" 2>&1 || why="ucpumap-gen failed: $(tail -2 "$tmp/$c.gen" | tr '\n' ' ');"
	sleep 0.2	# vd's last frames to its queue
	echo $(($(veth_drops) - v0)) > "$tmp/$c.veth"
	for _ in $(seq 100); do
		kill -0 $dpid 2> /dev/null || break
		sleep 0.1
	done
	if kill -0 $dpid 2> /dev/null; then
		why="$why still running 10 s after --duration;"
		stop_pid $dpid
	else
		lib_wait $dpid
		rc=$?
		[ $rc = 0 ] || why="$why exit status $rc: $(tail -2 "$tmp/$c.err" | tr '\n' ' ');"
	fi
	grep -q '^audit: every frame came home$' "$tmp/$c.out" ||
		why="$why $(grep -E '^(conservation|audit)' "$tmp/$c.out" | tr '\n' ' ')"
	[ -z "$why" ]
}

# What the veth pair dropped before vd's XDP program saw it (vg's side:
# the peer's ring full), which no counter of the daemon's can see. vd's
# own rx_dropped is not added: a redirect to a full socket ring counts
# there and in the socket's ring-full count, which the daemon reads.
veth_drops() {
	ip netns exec $G cat /sys/class/net/vg/statistics/tx_dropped
}

# verdicts OUT JSON SENT: one "CASE ok" or "CASE why" line per case
# (VETH: what veth_drops() counted over the traffic).
verdicts() {
	"$PY" - "$@" $INTERVAL $DURATION $RATE <<'PY'
import json, os, re, sys
out, js, sent = open(sys.argv[1]).read().splitlines(), sys.argv[2], int(sys.argv[3])
interval, duration, rate = float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
lines = [json.loads(l) for l in open(js) if l.strip()]
LINE = re.compile(r"vd: rx (\d+) pps, delivered (\d+) pps, drops (\d+)/s"
                  r"( \(largest: [a-z0-9_]+ \d+/s\))?, workers (\d+)% busy, RX threads (\d+)% busy"
                  r"(?:, to the kernel \d+/s \(largest: [a-z_]+ \d+/s\))?(?:, checksums left to the kernel \d+/s)?$")
TOTAL = re.compile(r"total vd, averaged over the whole run \(([0-9.]+) s\): rx (\d+) pps, "
                   r"delivered (\d+) pps, drops (\d+)/s( \(largest: [a-z0-9_]+ \d+/s\))?"
                   r", workers (\d+)% busy, RX threads (\d+)% busy"
                  r"(?:, to the kernel \d+/s \(largest: [a-z_]+ \d+/s\))?(?:, checksums left to the kernel \d+/s)?$")

def verdict(case, why):
    print(case, "ok" if not why else "; ".join(why))

# Between the banner and the total line: statistics lines only.
start = next(i for i, l in enumerate(out) if l.startswith("ucpumapd: "))
end = next((i for i, l in enumerate(out) if l.startswith("total ")), len(out))
stats = out[start + 1:end]
why = ["not a statistics line: %r" % l for l in stats if not LINE.match(l)][:2]
after = out[end + 1:end + 2]
if not after or not after[0].startswith("conservation: "):
    why.append("after the total line: %r (want the conservation line)" % after)
if len(stats) != len(lines) - 1:
    why.append("%d lines, %d JSON lines before the last" % (len(stats), len(lines) - 1))
gaps = [b["time"] - a["time"] for a, b in zip(lines, lines[1:-1])]
if len(stats) < duration / interval - 2 or any(not 0.45 <= g <= 1.0 for g in gaps):
    why.append("%d lines in %g s, %g s apart: %s" % (len(stats), duration, interval,
               " ".join("%.3f" % g for g in gaps)))
verdict("one-line-per-interval", why)

# Each line against the counters of its JSON line and the one before (the
# first line's interval starts before any JSON line).
def drops(d):
    return (d["rx_bad_desc"] + d["rx_steer_err"] + d["enqueue_drops"] + d["worker_drops"] +
            sum(q["kernel_rx_dropped"] + q["kernel_rx_ring_full"] for q in d["queues"]))
why = []
parsed = [LINE.match(l) for l in stats]
for i in range(1, min(len(parsed), len(lines) - 1)):
    a, b, m = lines[i - 1], lines[i], parsed[i]
    if not m:
        continue
    dt = b["time"] - a["time"]
    for what, got, want in (("rx", int(m.group(1)), (b["rx"] - a["rx"]) / dt),
                            ("delivered", int(m.group(2)), (b["tun_packets"] - a["tun_packets"]) / dt),
                            ("drops", int(m.group(3)), (drops(b) - drops(a)) / dt)):
        if abs(got - want) > 1 + want * 1e-4:
            why.append("line %d: %s %d pps, the counters say %.1f" % (i + 1, what, got, want))
    # The workers' busy share: what they did not sleep of the interval.
    nw = len(b["workers"])
    slept = sum(w["sleep_ns"] for w in b["workers"]) - sum(w["sleep_ns"] for w in a["workers"])
    busy = min(100.0, max(0.0, 100.0 * (1 - slept / 1e9 / (dt * nw))))
    if abs(int(m.group(5)) - busy) > 1.5:
        why.append("line %d: workers %s%% busy, their sleep says %.1f%%" % (i + 1, m.group(5), busy))
    # The RX threads': their CPU time over the interval.
    rxb = min(100.0, max(0.0, 100.0 * (b["rx_cpu_ns"] - a["rx_cpu_ns"]) / 1e9 / (dt * len(b["queues"]))))
    if abs(int(m.group(6)) - rxb) > 1.5:
        why.append("line %d: RX threads %s%% busy, their CPU time says %.1f%%" % (i + 1, m.group(6), rxb))
    # The JSON line has the line's shares.
    for what, got, want in (("workers_busy", b.get("workers_busy"), int(m.group(5))),
                            ("rx_threads_busy", b.get("rx_threads_busy"), int(m.group(6)))):
        if got is None or abs(got - want) > 0.51:
            why.append("JSON line %d: %s %s, the line says %d%%" % (i + 1, what, got, want))
# A line without traffic has idle workers (a sleep still going on counts).
why += ["line %d: workers %s%%, RX threads %s%% busy with nothing coming in"
        % (i + 1, m.group(5), m.group(6))
        for i, m in enumerate(parsed) if m and m.group(1) == "0" and
        (int(m.group(5)) > 10 or int(m.group(6)) > 10)]
# The RX threads' share grows with the traffic: the median of the lines
# at the sending rate above the idle lines' (a thread with nothing coming
# in still wakes now and then: about a third here).
def rx_shares(busy):
    return sorted(b["rx_threads_busy"] for a, b in zip(lines, lines[1:-1])
                  if ((b["rx"] - a["rx"]) / (b["time"] - a["time"]) >= rate / 2 if busy
                      else b["rx"] == a["rx"]))
on, off = rx_shares(True), rx_shares(False)
if not on or not off or on[len(on) // 2] <= 1.3 * off[len(off) // 2]:
    why.insert(0, "RX threads %s%% busy at the sending rate, %s%% idle (want the median above 1.3x)"
               % (on, off))
verdict("line-rates", why[:3])

# The traffic: the lines add up to it. The first line comes before it.
why = []
delivered = lines[-1]["tun_packets"]
seen = sum(int(m.group(2)) * (lines[i]["time"] - lines[i - 1]["time"])
           for i, m in enumerate(parsed) if m and 0 < i < len(lines) - 1)
first = int(parsed[0].group(2)) if parsed and parsed[0] else None
if first != 0:
    why.append("the first line, before the traffic, says delivered %s pps" % first)
if abs(seen - delivered) > 2 + delivered * 0.001:
    why.append("the lines' delivered rates make %.0f datagrams, the daemon delivered %d"
               % (seen, delivered))
# The account: received (at the sockets) = rx + the kernel's drops there
# = delivered + drops, and drops_in names each of them.
for i, d in enumerate(lines):
    kern = sum(q["kernel_rx_dropped"] + q["kernel_rx_ring_full"] for q in d["queues"])
    if (d["received"] != d["rx"] + kern or d["drops"] != drops(d) or
            sum(d["drops_in"].values()) != d["drops"] or d["delivered"] != d["tun_packets"]):
        why.append("JSON line %d: received %d, drops %d (by cause %d), delivered %d; rx %d + the "
                   "kernel's %d, the drops %d, tun_packets %d"
                   % (i + 1, d["received"], d["drops"], sum(d["drops_in"].values()),
                      d["delivered"], d["rx"], kern, drops(d), d["tun_packets"]))
        break
m = [re.match(r"conservation: received (\d+) = delivered (\d+) \+ drops (\d+) \(", l) for l in out]
m = [x for x in m if x]
if not m or tuple(map(int, m[0].groups())) != tuple(lines[-1][k] for k in ("received", "delivered", "drops")):
    why.append("the conservation line %s, the last JSON line received %d delivered %d drops %d"
               % (m[0].groups() if m else None, lines[-1]["received"], lines[-1]["delivered"],
                  lines[-1]["drops"]))
# Each datagram delivered or a counted drop (a loaded machine drops some):
# the daemon's, or the veth's before vd (which the daemon cannot see).
veth = int(os.environ.get("VETH", "-1"))
if veth < 0 or delivered + drops(lines[-1]) + veth != sent:
    why.append("the generator sent %d, the daemon delivered %d and counted %d drops, the veth "
               "dropped %d: %+d" % (sent, delivered, drops(lines[-1]), veth,
                                    delivered + drops(lines[-1]) + veth - sent))
# The fair share's refusals: among the enqueue drops, the queues' own
# summed (one queue here: none, and never more than the drops).
for i, d in enumerate(lines):
    qs = sum(e["shed"] for q in d["queues"] for e in q["enqueue"])
    if d["enqueue_shed"] != qs or qs > d["enqueue_drops"]:
        why.append("JSON line %d: enqueue_shed %s, the queues' %d, enqueue_drops %d"
                   % (i + 1, d["enqueue_shed"], qs, d["enqueue_drops"]))
        break
peak = max((int(m.group(2)) for m in parsed if m), default=0)
if not 0.5 * rate <= peak <= 1.5 * rate:
    why.append("the busiest line says %d pps, the generator sent %d pps" % (peak, rate))
verdict("delivered-is-traffic", why)

# The total line: the run's time, the run's averages.
why = []
t = [TOTAL.match(l) for l in out if l.startswith("total ")]
if len(t) != 1 or not t[0]:
    why.append("total line: %r" % [l for l in out if l.startswith("total ")])
else:
    secs, rx, dl = float(t[0].group(1)), int(t[0].group(2)), int(t[0].group(3))
    if not duration - 0.05 <= secs <= duration + 0.5:
        why.append("the run took %.2f s by the total line, --duration %g" % (secs, duration))
    # Each rate is rounded to the packet per second, the time to the ms.
    for what, avg, n in (("rx", rx, lines[-1]["rx"]), ("delivered", dl, delivered)):
        if abs(avg * secs - n) > 1 + 0.5 * secs + 0.0005 * avg:
            why.append("%s %d pps over %.3f s, but %d in all" % (what, avg, secs, n))
verdict("total-average", why)
PY
}

# default_run: the run without options, judged by verdicts ($tmp/v);
# $default_why when it did not run.
default_run() {
	local sent
	default_why=
	if run default; then
		sent=$(awk '/^total:/ { print $2 }' "$tmp/default.gen")
		VETH=$(cat "$tmp/default.veth" 2> /dev/null || echo -1) \
			verdicts "$tmp/default.out" "$tmp/default.json" "${sent:-0}" > "$tmp/v"
		sed -n '/^ucpumapd: /,/^total /p' "$tmp/default.out" | sed 's/^/# /'
	else
		default_why=$why
	fi
}

# verdict_case CASE: verdicts' line for CASE on the default run.
verdict_case() {
	local c=$1 r
	lib_once default_run
	if [ -n "$default_why" ]; then
		bad $c "$default_why"
		return
	fi
	r=$(sed -n "s/^$c //p" "$tmp/v")
	if [ "$r" = ok ]; then ok $c; else bad $c "${r:-no verdict: $(tail -2 "$tmp/v")}"; fi
}

case_one_line_per_interval() { verdict_case one-line-per-interval; }
case_line_rates() { verdict_case line-rates; }
case_delivered_is_traffic() { verdict_case delivered-is-traffic; }
case_total_average() { verdict_case total-average; }

# --extended: each block is the line, the cpumap, queue 0, its latency
# and enqueue lines, and per worker its line, its coalesce line and its
# latency line. Each thread's busy share: queue 0's RX thread's is the
# line's RX threads' (the only one), the two workers' average the line's
# workers' (each rounded: within 1).
extended_shares() {
	"$PY" - "$1" <<'PY'
import re, sys
why, blocks, line, nq, nw = [], 0, None, 0, 0
for l in open(sys.argv[1]):
    if l.startswith(("conservation", "audit")):
        break
    m = re.match(r"(vd: |total vd, ).*, workers (\d+)% busy, RX threads (\d+)% busy", l)
    if m:
        line, ws, blocks = (int(m.group(2)), int(m.group(3))), [], blocks + 1
        continue
    q = re.match(r"  queue 0: \d+ pps, RX thread (\d+)% busy, rx ", l)
    w = re.match(r"  worker \d+ \(cpu \d+\): \d+ pps, (\d+)% busy, drops ", l)
    nq, nw = nq + bool(line and q), nw + bool(line and w)
    if line and q and int(q.group(1)) != line[1]:
        why.append("block %d: queue 0's RX thread %s%% busy, the line's RX threads %d%%"
                   % (blocks, q.group(1), line[1]))
    if line and w:
        ws.append(int(w.group(1)))
        if len(ws) == 2 and abs(sum(ws) / 2 - line[0]) > 1:
            why.append("block %d: workers %s%% busy, the line's %d%%" % (blocks, ws, line[0]))
if nq != blocks or nw != 2 * blocks:
    why.insert(0, "%d blocks, %d queue and %d worker lines with a busy share" % (blocks, nq, nw))
print("; ".join(why[:3]) if why else "ok")
PY
}

case_extended_lines() {
	local r s
	if run extended --extended; then
		r=$(awk '
			function check() {
				want = "|cpumap: to|queue 0:|latency (us):|enqueue 0->0:|enqueue 0->1:|worker 0|coalesce: super-packets|latency (us):|worker 1|coalesce: super-packets|latency (us):"
				if (blk != want && !bad) { bad = 1; print "a block: " blk " (want " want ")" }
				blocks++
			}
			/^(conservation|audit)/ { exit }
			/^(vd: |total vd, )/ { if (n) check(); n = 1; blk = ""; next }
			n { blk = blk "|" $1 " " $2 }
			END { if (n) check(); if (!bad) print blocks " blocks" }' "$tmp/extended.out")
		s=$(extended_shares "$tmp/extended.out")
		if [[ $r =~ ^([0-9]+)\ blocks$ ]] && [ "${BASH_REMATCH[1]}" -ge 5 ] && [ "$s" = ok ]; then
			ok extended-lines "$r, each thread's busy share its line's"
		else
			bad extended-lines "$r; $s"
		fi
	else
		bad extended-lines "$why"
	fi
}

# The line ucpumapd's log has (ucm_xdp__load) where the kernel's XDP
# cannot write metadata: no arrival stamps, so no rx_hist.
NOMETA_LOG="this kernel's XDP has no bpf_xdp_adjust_meta()"

# latency_counts JSON OFF ERR: "ok" or what is wrong, from the last JSON
# line (OFF 1: every histogram must be empty); ERR is the run's log.
latency_counts() {
	local nometa=0

	grep -qF "$NOMETA_LOG" "$3" && nometa=1
	"$PY" - "$1" "$2" $nometa <<'PY'
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
off = sys.argv[2] == "1"
nometa = sys.argv[3] == "1"
why = []
n = lambda h: sum(h)
q = last["queues"][0]
ws = last["workers"]
bulks = last["enqueue_events"]
if off:
    for k in ("rx_hist", "wait_hist", "sink_hist"):
        if n(last[k]):
            why.append("%s counted %d with --no-latency" % (k, n(last[k])))
else:
    if not bulks or last["enqueue_drops"]:
        why.append("%d bulks, %d enqueue drops: nothing to judge" % (bulks, last["enqueue_drops"]))
    if not q["rx_batches"]:
        why.append("no RX batch")
    elif nometa and n(q["rx_hist"]):
        why.append("rx_hist %d without XDP metadata (no arrival stamps)" % n(q["rx_hist"]))
    elif not nometa and n(q["rx_hist"]) != q["rx_batches"]:
        why.append("rx_hist %d for %d RX batches" % (n(q["rx_hist"]), q["rx_batches"]))
    for k in ("wait_hist", "sink_hist"):
        if n(last[k]) != bulks:
            why.append("%s %d for %d bulks" % (k, n(last[k]), bulks))
        if sum(n(w[k]) for w in ws) != n(last[k]):
            why.append("%s: the workers' %d, the total %d" % (k, sum(n(w[k]) for w in ws), n(last[k])))
    if n(last["rx_hist"]) != n(q["rx_hist"]):
        why.append("rx_hist: the queue's %d, the total %d" % (n(q["rx_hist"]), n(last["rx_hist"])))
rx = "rx_hist empty (no XDP metadata on this kernel)" if nometa else "all in rx_hist"
print("; ".join(why) or "ok %d RX batches, %s, %d bulks" % (q["rx_batches"], rx, bulks))
PY
}

case_latency_counts() {
	local r r2
	lib_once default_run
	if [ -f "$tmp/default.json" ]; then
		r=$(latency_counts "$tmp/default.json" 0 "$tmp/default.err")
		if run nolat --no-latency --extended; then
			r2=$(latency_counts "$tmp/nolat.json" 1 "$tmp/nolat.err")
			grep -q "latency (us)" "$tmp/nolat.out" && r2="a latency line with --no-latency; $r2"
		else
			r2="--no-latency: $why"
		fi
		if [[ $r == ok* ]] && [[ $r2 == ok* ]]; then
			ok latency-counts "${r#ok }; none with --no-latency"
		else
			bad latency-counts "$r; --no-latency: $r2"
		fi
	else
		bad latency-counts "no JSON from the default run"
	fi
}

case_latency_counts_inline() {
	local r w
	if run inline --pass; then
		r=$(latency_counts "$tmp/inline.json" 0 "$tmp/inline.err")
		w=$("$PY" -c 'import json,sys; l=[json.loads(x) for x in open(sys.argv[1]) if x.strip()][-1]; print(sum(l["wait_hist"][1:]))' "$tmp/inline.json")
		[ "$w" = 0 ] || r="${w:-an unreadable count of} bulks waited, inline; $r"
		if [[ $r == ok* ]]; then
			ok latency-counts-inline "${r#ok }, none waited"
		else
			bad latency-counts-inline "$r"
		fi
	else
		bad latency-counts-inline "$why"
	fi
}

# prewakes JSON: the workers' pre-wakes in the last JSON line.
prewakes() {
	"$PY" -c 'import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
print(sum(w["prewakes"] for w in last["workers"]))' "$1"
}

case_prewake() {
	local r n n2
	r=
	if run pw --cpus 1; then
		n=$(prewakes "$tmp/pw.json")
		grep -q "^ucpumapd: .*, pre-wake$" "$tmp/pw.out" || r="no pre-wake in the banner;"
		[ "$n" -gt 0 ] || r="$r no pre-wake in $COUNT datagrams at $RATE/s;"
	else
		r="--cpus 1: $why"
	fi
	if run pwoff --cpus 1 --prewake off; then
		n2=$(prewakes "$tmp/pwoff.json")
		grep -q "pre-wake" "$tmp/pwoff.out" && r="$r pre-wake in the banner with --prewake off;"
		[ "$n2" = 0 ] || r="$r $n2 pre-wakes with --prewake off;"
	else
		r="$r --prewake off: $why"
	fi
	if [ -z "$r" ]; then
		ok prewake "$n pre-wakes with one worker, none with --prewake off"
	else
		bad prewake "$r"
	fi
}

case_setup_passes() {
	local gpid dpid first rc why=
	# 2 s at 20000/s: the start's set-up sees some, the stop none. An
	# AF_PACKET sender: vd has no program yet to take redirected frames.
	ip netns exec $G "$gen" --dev vg --dst-ip 10.208.0.2 --dst-mac "$vdmac" --dst-port 9000 \
		--engine packet --flows 4 --rate 20000 --duration 2 > "$tmp/sp.gen" 2>&1 &
	gpid=$!
	lib_pid $gpid
	sleep 0.3
	ip netns exec $D "$daemon" --dev vd --tun ucms0 --cpus 0,1 --interval 0.5 --duration 3 \
		--stats-json "$tmp/sp.json" > "$tmp/sp.out" 2> "$tmp/sp.err" &
	dpid=$!
	lib_pid $dpid
	lib_wait $gpid
	for _ in $(seq 60); do kill -0 $dpid 2> /dev/null || break; sleep 0.1; done
	kill -0 $dpid 2> /dev/null && { stop_pid $dpid; why="still running 3 s after --duration;"; }
	lib_wait $dpid 2> /dev/null
	rc=$?
	[ $rc = 0 ] || why="$why exit $rc: $(tail -2 "$tmp/sp.err" | tr '\n' ' ');"
	# As root the pass counters are readable (test-faults pass-unread
	# covers them refused): a first line without them is a failure.
	first=$(jget "$tmp/sp.json" 'json.loads(open(sys.argv[1]).readline()).get("xdp_pass", {}).get("no_socket", -1)')
	if [ -z "$first" ] || [ "$first" -lt 0 ]; then
		bad setup-passes "$why the first JSON line has no xdp_pass: $(head -c 200 "$tmp/sp.json" 2> /dev/null)"
		return
	fi
	if [ "$first" = 0 ]; then
		skip setup-passes "the set-up passed nothing to the kernel this time (the generator: $(tail -1 "$tmp/sp.gen"))"
		return
	fi
	grep -q "no_socket" "$tmp/sp.out" &&
		why="$why $(grep -m2 'no_socket' "$tmp/sp.out" | tr '\n' ' ');"
	grep -q '^audit: every frame came home$' "$tmp/sp.out" || why="$why $(grep -E '^(audit|conservation)' "$tmp/sp.out")"
	if [ -z "$why" ]; then
		ok setup-passes "$first passed before the sockets were in the map; no line counts them"
	else
		bad setup-passes "$first passed in the set-up, then: $why"
	fi
}

case_nothing_left() {
	lib_cleanup_check
	[ -z "$lib_left" ] && ok nothing-left || bad nothing-left "$lib_left"
}

lib_run_cases "$@"
