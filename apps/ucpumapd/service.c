// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * ucpumapd under a service manager: systemd's notification protocol
 * (sd_notify(3)). Without NOTIFY_SOCKET in the environment every call here
 * does nothing, so the daemon behaves the same on a terminal.
 *
 *   READY=1     once every queue is redirected and forwarding (Type=notify:
 *               units ordered after ours start then, not before)
 *   WATCHDOG=1  from the control loop, twice per WatchdogSec, and only
 *               while ucm_dp__check() finds no fault: a stuck control
 *               thread is restarted. A fault the check sees stops the
 *               daemon itself, a stalled worker or RX thread included
 *               (UCM_DP_FAULT_*_STALLED)
 *   STOPPING=1  when the stop begins, with the reason as STATUS
 */
#include <stdio.h>
#include <systemd/sd-daemon.h>

#include "daemon.h"
#include "util.h"

void svc_ready(struct daemon *d)
{
	uint64_t usec = 0;

	sd_notifyf(0, "READY=1\nSTATUS=forwarding %s to %s", d->c.dev,
		   ucm_dp__tun_name(d->dp));
	/* > 0 when WatchdogSec is set for this process (WATCHDOG_USEC). */
	if (sd_watchdog_enabled(0, &usec) > 0 && usec)
		d->wd_period = usec / 2e6;
	d->wd_last = now_sec();
}

void svc_tick(struct daemon *d)
{
	double now;

	if (!d->wd_period)
		return;
	now = now_sec();
	if (now - d->wd_last < d->wd_period)
		return;
	sd_notify(0, "WATCHDOG=1");
	d->wd_last = now;
}

void svc_stopping(const char *why)
{
	sd_notifyf(0, "STOPPING=1\nSTATUS=stopping: %s", why);
}
