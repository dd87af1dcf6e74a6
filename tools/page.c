// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * steptime export's page (GET /), see page.h. Every string a process
 * chose (its name, its job's variables) is HTML-escaped: a job named
 * "<script>" must show as text, never run.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "page.h"

/* The plot: a square of PLOT px, device (up) against host (right) time. */
#define PLOT		90
#define PLOT_X0		34
#define PLOT_Y0		100

/* @s as HTML text or a quoted attribute's value. */
static void html_put(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default: fputc(*s, f);
		}
	}
}

static void ms_put(FILE *f, __u64 ns)
{
	fprintf(f, "%llu.%03llu", (unsigned long long)(ns / 1000000),
		(unsigned long long)(ns / 1000 % 1000));
}

/* A step of the plot: one having both times. */
static bool step_times(const struct steptime_step_stats *s, __u64 *host,
		       __u64 *dev)
{
	return !steptime_stats__host_ns(s, host) &&
	       !steptime_stats__device_ns(s, dev);
}

static void plot_point(FILE *f, const struct steptime_step_stats *s,
		       __u64 host, __u64 dev, __u64 max)
{
	fprintf(f, "<circle class=\"step\" cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\">"
		"<title>step %llu: host ", PLOT_X0 + PLOT * (double)host / max,
		PLOT_Y0 - PLOT * (double)dev / max,
		(unsigned long long)s->index_id);
	ms_put(f, host);
	fputs(" ms, device ", f);
	ms_put(f, dev);
	fputs(" ms</title></circle>", f);
}

/*
 * One scale on both axes, from 0 to the largest time shown: on the
 * diagonal the device was busy all the step; below it, the host waited
 * for something else (input, collectives, Python).
 */
static void plot(FILE *f, const struct page_proc *p)
{
	__u64 host, dev, max = 0;
	size_t i;

	for (i = 0; i < p->n; i++)
		if (step_times(&p->steps[i], &host, &dev)) {
			max = host > max ? host : max;
			max = dev > max ? dev : max;
		}
	if (!max) {
		fputs("no step with both times kept", f);
		return;
	}
	fprintf(f, "<svg class=\"plot\" width=\"140\" height=\"118\" viewBox=\"0 0 140 118\" "
		"role=\"img\" aria-label=\"device against host step time\">"
		"<path class=\"axis\" d=\"M%d %dV%dH%d\"/>"
		"<path class=\"diag\" d=\"M%d %dL%d %d\"/>"
		"<text x=\"%d\" y=\"114\">host</text>"
		"<text x=\"2\" y=\"%d\">dev</text><text x=\"2\" y=\"%d\">",
		PLOT_X0, PLOT_Y0 - PLOT, PLOT_Y0, PLOT_X0 + PLOT,
		PLOT_X0, PLOT_Y0, PLOT_X0 + PLOT, PLOT_Y0 - PLOT,
		PLOT_X0 + PLOT / 2 - 10, PLOT_Y0 - PLOT / 2,
		PLOT_Y0 - PLOT + 8);
	ms_put(f, max);
	fputs("</text>", f);
	for (i = 0; i < p->n; i++)
		if (step_times(&p->steps[i], &host, &dev))
			plot_point(f, &p->steps[i], host, dev, max);
	fputs("</svg>", f);
}

static void cell(FILE *f, const char *cls, const char *v)
{
	fprintf(f, "<td class=\"%s\">", cls);
	html_put(f, *v ? v : "-");
	fputs("</td>", f);
}

static void cell_ms(FILE *f, const char *cls, bool have, __u64 ns)
{
	fprintf(f, "<td class=\"%s\">", cls);
	if (have)
		ms_put(f, ns);
	else
		fputs("-", f);
	fputs("</td>", f);
}

/* What is wrong with @p as the exporter sees it. */
static void proc_flags(FILE *f, const struct page_proc *p)
{
	fputs("<td class=\"flags\">", f);
	if (p->last_errors)
		fprintf(f, "<span class=\"flag\">task errors in the last step: %llu</span> ",
			(unsigned long long)p->last_errors);
	if (p->open_outstanding) {
		fprintf(f, "<span class=\"flag\">open step: %llu tasks outstanding, no progress for ",
			(unsigned long long)p->open_outstanding);
		ms_put(f, p->stall_ns);
		fputs(" ms</span> ", f);
	}
	if (p->incomplete)
		fprintf(f, "<span class=\"flag\">steps cut short: %llu</span>",
			(unsigned long long)p->incomplete);
	fputs("</td>", f);
}

static void proc_row(FILE *f, const struct page_node *node,
		     const struct page_proc *p)
{
	fprintf(f, "<tr data-pid=\"%u\" data-last-step=\"%llu\"", p->pid,
		(unsigned long long)p->last_id);
	if (p->have_host)
		fprintf(f, " data-host-ns=\"%llu\"", (unsigned long long)p->last_host);
	if (p->have_dev)
		fprintf(f, " data-device-ns=\"%llu\"", (unsigned long long)p->last_dev);
	fprintf(f, "><td class=\"pid\">%u</td>", p->pid);
	cell(f, "job", p->lab->job);
	cell(f, "rank", p->lab->rank);
	cell(f, "device", p->lab->device);
	cell(f, "comm", p->lab->comm);
	fprintf(f, "<td class=\"last\">%llu</td>", (unsigned long long)p->last_id);
	cell_ms(f, "host", p->have_host, p->last_host);
	cell_ms(f, "dev", p->have_dev, p->last_dev);
	fputs("<td>", f);
	plot(f, p);
	fputs("</td>", f);
	proc_flags(f, p);
	if (node->keep && p->n)
		fprintf(f, "<td><a href=\"/trace?pid=%u\">trace</a></td></tr>\n", p->pid);
	else
		fputs("<td>-</td></tr>\n", f);
}

/* The node's losses: what /metrics counts that no process row shows. */
static void node_flags(FILE *f, const struct page_node *node)
{
	size_t i, shown = !node->loaded + !!node->missed + !!node->dropped;
	__u64 v;

	fputs("<ul class=\"node\">", f);
	if (!node->loaded)
		fputs("<li class=\"flag\">steptime is not loaded (steptime_loaded 0)</li>", f);
	for (i = 0; node->cnt && i < loss_count; i++) {
		v = counter_get(node->cnt, loss_names[i]);
		shown += !!v;
		if (v)
			fprintf(f, "<li class=\"flag\">%s: %llu (steptime_bpf_%s_total)</li>",
				loss_names[i], (unsigned long long)v, loss_names[i]);
	}
	if (node->missed)
		fprintf(f, "<li class=\"flag\">steps missed: %llu (steptime_exporter_steps_missed_total)</li>",
			(unsigned long long)node->missed);
	if (node->dropped)
		fprintf(f, "<li class=\"flag\">processes not exported: %llu (steptime_exporter_processes_dropped_total)</li>",
			(unsigned long long)node->dropped);
	fputs(shown ? "</ul>\n" : "<li>no loss counted</li></ul>\n", f);
}

static const char page_head[] =
	"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	"<title>steptime exporter</title><style>"
	"body{font:14px sans-serif;margin:1em;color:#222}"
	"table{border-collapse:collapse}td,th{border-bottom:1px solid #ccc;"
	"padding:3px 8px;text-align:left;vertical-align:middle}"
	"svg text{font-size:10px;fill:#555}.axis{stroke:#555;fill:none}"
	".diag{stroke:#aaa;stroke-dasharray:3 3}.step{fill:#1f77b4}"
	".flag{color:#b00}span.flag{display:block}td{white-space:nowrap}td.flags{white-space:normal}</style></head><body>\n"
	"<h1>steptime exporter</h1>\n"
	"<p><a href=\"/metrics\">/metrics</a> (Prometheus) &middot; "
	"/trace?pid=PID: a process's last steps (Chrome trace JSON), "
	"linked below</p>\n";

/*
 * Alerts are rules over the whole job's ranks (slowest against the
 * median), evaluated by Prometheus: one node's exporter cannot know
 * whether they fire, so the page shows the conditions it sees instead.
 */
static const char page_alerts[] =
	"<h2>Alerts</h2>\n<p>The alerts (SteptimeSlowRank, SteptimeDeviceHung, "
	"SteptimeRankStalled, SteptimeRankHung) live in Prometheus "
	"(deploy/prometheus/steptime.rules.yml): they compare a job's ranks "
	"across nodes, and this exporter does not know their state. What it "
	"sees on this node: the flags column above, and</p>\n";

int page_write(FILE *f, const struct page_node *node,
	       const struct page_proc *procs, size_t n)
{
	size_t i;

	fputs(page_head, f);
	fprintf(f, "<h2>Processes (%zu)</h2>\n<table><tr><th>pid</th><th>job</th>"
		"<th>rank</th><th>device</th><th>name</th><th>last step</th>"
		"<th>host ms</th><th>device ms</th><th>last steps: device "
		"against host time (ms)</th><th>flags</th><th>trace</th></tr>\n", n);
	for (i = 0; i < n; i++)
		proc_row(f, node, &procs[i]);
	fputs("</table>\n", f);
	if (!n)
		fputs("<p>No process marks steps now.</p>\n", f);
	fputs(page_alerts, f);
	node_flags(f, node);
	fputs("</body></html>\n", f);
	return ferror(f) ? -EIO : 0;
}
