// SPDX-License-Identifier: GPL-2.0
/*
 * vmakctl: inspect and tune vmak rings over the "vmak" generic netlink
 * family. Output is text, or JSON with -j.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linux/vmak.h"
#include "linux/vmak_genl.h"
#include "vmak/sockstats.h"
#include "vmak/vmak.h"

static bool json;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vmakctl [-j] COMMAND\n"
		"  info                          module version and socket family\n"
		"  ring show [ID]                rings of this network namespace\n"
		"  ring set ID moderation [count N] [usec T]\n"
		"                                wake after N packets or T us\n"
		"  ring arm ID                   one-shot wake of the ring's waiters\n"
		"  rule show [RING-ID]           steering rules, all or one ring's\n"
		"  stats [ID]                    receive counters per ring\n"
		"  monitor [count N]             print ring events as they happen\n"
		"  sockets [-p PID]              sockets libvmak offloads, per process\n"
		"options:\n"
		"  -j, --json   JSON output\n"
		"  -h, --help   this text\n");
}

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "vmakctl: %s: %s\n", what, vmak_strerror(err));
	return 1;
}

/* A failed netlink request: the kernel's extack text and attribute. */
static int fail_nl(const char *what)
{
	fprintf(stderr, "vmakctl: %s: %s\n", what, vmak_last_error());
	return 1;
}

static int usage_err(const char *msg)
{
	fprintf(stderr, "vmakctl: %s\n", msg);
	usage(stderr);
	return 2;
}

/* A decimal number in [0, max], or -1. */
static int64_t parse_num(const char *s, int64_t max)
{
	char *end;
	long long v;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < 0 || v > max)
		return -1;
	return v;
}

static const char *state_name(uint32_t state)
{
	switch (state) {
	case VMAK_STATE_READY:
		return "ready";
	case VMAK_STATE_BOUND:
		return "bound";
	case VMAK_STATE_UNBOUND:
		return "unbound";
	}
	return "unknown";
}

/* The counters of struct vmak_statistics, in order. */
static const char *const stat_names[] = {
	"rx-packets", "rx-bytes", "rx-ring-full", "rx-fill-empty",
	"rx-invalid-fill", "rx-too-big", "rx-passed", "rx-rule-dead",
	"tx-packets", "tx-bytes", "tx-invalid", "tx-header-drop",
	"tx-cq-full", "tx-dummy", "tx-error", "rx-foreign",
};

static void addr_str(const struct vmak_ctl_key *k, const uint8_t *a,
		     char *buf, size_t len)
{
	static const uint8_t zero[16];

	if (!memcmp(a, zero, k->af == AF_INET ? 4 : 16))
		snprintf(buf, len, "*");
	else if (!inet_ntop((int)k->af, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

static void print_key(const struct vmak_ctl_key *k)
{
	char d[INET6_ADDRSTRLEN], src[INET6_ADDRSTRLEN];

	addr_str(k, k->dst_addr, d, sizeof(d));
	addr_str(k, k->src_addr, src, sizeof(src));
	if (json) {
		printf("{\"af\":\"%s\",\"dst\":\"%s\",\"dport\":%u",
		       k->af == AF_INET ? "inet" : "inet6", d, k->dst_port);
		if (k->src_port)
			printf(",\"src\":\"%s\",\"sport\":%u", src, k->src_port);
		putchar('}');
		return;
	}
	printf(" %s %s%s%s:%u", k->af == AF_INET ? "inet" : "inet6",
	       k->af == AF_INET6 ? "[" : "", d, k->af == AF_INET6 ? "]" : "",
	       k->dst_port);
	if (k->src_port)
		printf(" from %s%s%s:%u", k->af == AF_INET6 ? "[" : "", src,
		       k->af == AF_INET6 ? "]" : "", k->src_port);
}

static void print_rule(const struct vmak_ctl_rule *r, bool with_ring)
{
	const char *kind = r->kind == VMAK_RULE_SOCKET ? "socket" :
			   r->kind == VMAK_RULE_RAW ? "raw" : "unknown";
	uint32_t i;

	if (json) {
		printf("{");
		if (with_ring)
			printf("\"ring\":%u,", r->ring_id);
		printf("\"cookie\":%u,\"kind\":\"%s\",\"keys\":[", r->cookie, kind);
		for (i = 0; i < r->nkeys; i++) {
			if (i)
				putchar(',');
			print_key(&r->key[i]);
		}
		printf("]}");
		return;
	}
	if (with_ring)
		printf("ring %u ", r->ring_id);
	printf("cookie %u %s", r->cookie, kind);
	for (i = 0; i < r->nkeys; i++)
		print_key(&r->key[i]);
	putchar('\n');
}

static void print_stats(const struct vmak_ring_status *st)
{
	uint32_t i, n = sizeof(stat_names) / sizeof(stat_names[0]);

	/* Counters a newer module adds are shown once vmakctl names them. */
	if (n > st->nstats)
		n = st->nstats;
	for (i = 0; i < n; i++) {
		if (json)
			printf("%s\"%s\":%" PRIu64, i ? "," : "", stat_names[i],
			       st->stats[i]);
		else
			printf("%s%s %" PRIu64, i ? " " : "", stat_names[i],
			       st->stats[i]);
	}
}

/* One ring; in JSON an object (the caller writes the separators). */
static void print_ring(const struct vmak_ring_status *st)
{
	char ifname[IF_NAMESIZE] = "";
	uint32_t i;

	if (st->bound && !if_indextoname(st->ifindex, ifname))
		snprintf(ifname, sizeof(ifname), "?");
	if (json) {
		printf("{\"id\":%u,\"owner_pid\":%u,\"owner_uid\":%u,\"state\":\"%s\"",
		       st->id, st->owner_pid, st->owner_uid, state_name(st->state));
		if (st->bound) {
			printf(",\"ifindex\":%u,\"ifname\":", st->ifindex);
			json_str(ifname);
			if (st->queue_id == VMAK_QUEUE_ANY)
				printf(",\"queue\":\"any\"");
			else
				printf(",\"queue\":%u", st->queue_id);
			printf(",\"bind_flags\":%u", st->bind_flags);
		}
		printf(",\"rx_size\":%u,\"tx_size\":%u,\"fill_size\":%u,"
		       "\"completion_size\":%u,\"umem_size\":%" PRIu64
		       ",\"chunk_size\":%u,\"napi_id\":%u,"
		       "\"moderation\":{\"count\":%u,\"usec\":%u},"
		       "\"rule_count\":%u,\"rules\":[",
		       st->rx_size, st->tx_size, st->fill_size,
		       st->completion_size, st->umem_size, st->chunk_size,
		       st->napi_id, st->moderation_count, st->moderation_usec,
		       st->rule_count);
		for (i = 0; i < st->nrules; i++) {
			if (i)
				putchar(',');
			print_rule(&st->rules[i], false);
		}
		printf("],\"stats\":{");
		print_stats(st);
		printf("}}");
		return;
	}
	printf("ring %u owner pid %u uid %u state %s", st->id, st->owner_pid,
	       st->owner_uid, state_name(st->state));
	if (st->bound) {
		printf(" dev %s ifindex %u queue ", ifname, st->ifindex);
		if (st->queue_id == VMAK_QUEUE_ANY)
			printf("any");
		else
			printf("%u", st->queue_id);
		printf(" flags 0x%x", st->bind_flags);
	}
	printf("\n    rx %u tx %u fill %u completion %u umem %" PRIu64
	       " chunk %u napi %u\n", st->rx_size, st->tx_size, st->fill_size,
	       st->completion_size, st->umem_size, st->chunk_size, st->napi_id);
	printf("    moderation count %u usec %u\n", st->moderation_count,
	       st->moderation_usec);
	printf("    rules %u\n", st->rule_count);
	for (i = 0; i < st->nrules; i++) {
		printf("      ");
		print_rule(&st->rules[i], false);
	}
	if (st->nrules < st->rule_count)
		printf("      ... %u more (vmakctl rule show %u)\n",
		       st->rule_count - st->nrules, st->id);
	printf("    ");
	print_stats(st);
	putchar('\n');
}

struct list_ctx {
	int n;
	bool stats_only;
};

static int list_one(const struct vmak_ring_status *st, void *arg)
{
	struct list_ctx *c = arg;

	if (json && c->n)
		putchar(',');
	c->n++;
	if (!c->stats_only) {
		print_ring(st);
		return 0;
	}
	if (json) {
		printf("{\"id\":%u,", st->id);
		print_stats(st);
		putchar('}');
	} else {
		printf("ring %u ", st->id);
		print_stats(st);
		putchar('\n');
	}
	return 0;
}

/* ring show [ID] and stats [ID] */
static int cmd_ring_show(int argc, char **argv, bool stats_only)
{
	const char *what = stats_only ? "stats" : "ring show";
	struct list_ctx c = { 0, stats_only };
	struct vmak_ring_status *st;
	int64_t id;
	int err;

	if (argc > 1)
		return usage_err("too many arguments");
	if (argc == 1) {
		id = parse_num(argv[0], UINT32_MAX);
		if (id < 1)
			return usage_err("ring id: a number from 1");
		err = vmak_ctl_ring_get((uint32_t)id, &st);
		if (err)
			return fail_nl(what);
		list_one(st, &c);
		vmak_ctl_status_free(st);
		if (json)
			putchar('\n');
		return 0;
	}
	if (json)
		putchar('[');
	err = vmak_ctl_ring_list(NULL, list_one, &c);
	if (json)
		printf("]\n");
	if (err)
		return fail_nl(what);
	return 0;
}

static int cmd_ring_set(int argc, char **argv)
{
	int64_t id, count = -1, usec = -1;
	int i;

	if (argc < 2)
		return usage_err("ring set ID moderation [count N] [usec T]");
	id = parse_num(argv[0], UINT32_MAX);
	if (id < 1)
		return usage_err("ring id: a number from 1");
	if (strcmp(argv[1], "moderation"))
		return usage_err("ring set: only 'moderation' can be set");
	for (i = 2; i < argc; i += 2) {
		int64_t *v;

		if (!strcmp(argv[i], "count"))
			v = &count;
		else if (!strcmp(argv[i], "usec"))
			v = &usec;
		else
			return usage_err("moderation: 'count N' or 'usec T'");
		if (i + 1 >= argc)
			return usage_err("moderation: a value is missing");
		/* Range checks are the kernel's, which names the attribute. */
		*v = parse_num(argv[i + 1], UINT32_MAX);
		if (*v < 0)
			return usage_err("moderation: values are numbers from 0");
	}
	if (count < 0 && usec < 0)
		return usage_err("moderation: give count, usec or both");
	if (vmak_ctl_set_moderation((uint32_t)id, count, usec))
		return fail_nl("ring set");
	return 0;
}

static int cmd_ring_arm(int argc, char **argv)
{
	int64_t id;

	if (argc != 1)
		return usage_err("ring arm ID");
	id = parse_num(argv[0], UINT32_MAX);
	if (id < 1)
		return usage_err("ring id: a number from 1");
	if (vmak_ctl_arm((uint32_t)id))
		return fail_nl("ring arm");
	return 0;
}

static int rule_one(const struct vmak_ctl_rule *r, void *arg)
{
	int *n = arg;

	if (json && (*n)++)
		putchar(',');
	print_rule(r, true);
	return 0;
}

static int cmd_rule_show(int argc, char **argv)
{
	int64_t id = 0;
	int n = 0, err;

	if (argc > 1)
		return usage_err("rule show [RING-ID]");
	if (argc == 1) {
		id = parse_num(argv[0], UINT32_MAX);
		if (id < 1)
			return usage_err("ring id: a number from 1");
	}
	if (json)
		putchar('[');
	err = vmak_ctl_rule_list((uint32_t)id, rule_one, &n);
	if (json)
		printf("]\n");
	return err ? fail_nl("rule show") : 0;
}

static const char *event_name(int cmd)
{
	switch (cmd) {
	case VMAK_CMD_RING_CREATE_NTF:
		return "create";
	case VMAK_CMD_RING_DELETE_NTF:
		return "delete";
	case VMAK_CMD_RING_CHANGE_NTF:
		return "change";
	}
	return "unknown";
}

static int cmd_monitor(int argc, char **argv)
{
	struct vmak_ring_status *st;
	struct vmak_monitor *mon;
	int64_t left = -1;
	int cmd, err;

	if (argc == 2 && !strcmp(argv[0], "count")) {
		left = parse_num(argv[1], INT32_MAX);
		if (left < 1)
			return usage_err("monitor count: a number from 1");
	} else if (argc) {
		return usage_err("monitor [count N]");
	}
	if (vmak_ctl_monitor_open(&mon))
		return fail_nl("monitor");
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (left) {
		err = vmak_ctl_monitor_next(mon, -1, &cmd, &st);
		if (err) {
			vmak_ctl_monitor_close(mon);
			return fail("monitor", err);
		}
		if (json) {
			printf("{\"event\":\"%s\",\"ring\":", event_name(cmd));
			print_ring(st);
			printf("}\n");
		} else {
			printf("%s ", event_name(cmd));
			print_ring(st);
		}
		vmak_ctl_status_free(st);
		if (left > 0)
			left--;
	}
	vmak_ctl_monitor_close(mon);
	return 0;
}

static int cmd_ring(int argc, char **argv)
{
	if (argc < 1 || !strcmp(argv[0], "show"))
		return cmd_ring_show(argc ? argc - 1 : 0, argv + 1, false);
	if (!strcmp(argv[0], "set"))
		return cmd_ring_set(argc - 1, argv + 1);
	if (!strcmp(argv[0], "arm"))
		return cmd_ring_arm(argc - 1, argv + 1);
	return usage_err("ring: show, set or arm");
}

/* ---- sockets: libvmak's per-process files (vmak/sockstats.h) ---- */

static void sock_addr(char *buf, size_t len, int family, const uint8_t *a,
		      uint16_t port)
{
	char ip[INET6_ADDRSTRLEN];

	inet_ntop(family, a, ip, sizeof(ip));
	snprintf(buf, len, family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port);
}

static void print_sockstat(int pid, const struct vmak_sockstat *st,
			   bool *first)
{
	char local[64], peer[64] = "-";

	sock_addr(local, sizeof(local), st->family, st->local_addr,
		  st->local_port);
	if (st->peer_port)
		sock_addr(peer, sizeof(peer), st->family, st->peer_addr,
			  st->peer_port);
	if (!json) {
		printf("pid %d fd %d %s local %s peer %s rings %u%s rx-ring %" PRIu64
		       " rx-kernel %" PRIu64 " rx-drops %" PRIu64
		       " rx-callback %" PRIu64 "\n",
		       pid, st->fd, st->family == AF_INET6 ? "udp6" : "udp4",
		       local, peer, st->rings,
		       st->flags & VMAK_SOCKSTAT_OS_ONLY ? " kernel-only" : "",
		       st->c.rx_ring, st->c.rx_os, st->c.rx_drops,
		       st->c.rx_callback);
		return;
	}
	printf("%s{\"pid\":%d,\"fd\":%d,\"family\":\"%s\",\"local\":",
	       *first ? "" : ",", pid, st->fd,
	       st->family == AF_INET6 ? "udp6" : "udp4");
	json_str(local);
	printf(",\"peer\":");
	json_str(peer);
	printf(",\"rings\":%u,\"kernel_only\":%s,\"rx_ring\":%" PRIu64
	       ",\"rx_kernel\":%" PRIu64 ",\"rx_drops\":%" PRIu64
	       ",\"rx_callback\":%" PRIu64 "}",
	       st->rings, st->flags & VMAK_SOCKSTAT_OS_ONLY ? "true" : "false",
	       st->c.rx_ring, st->c.rx_os, st->c.rx_drops, st->c.rx_callback);
	*first = false;
}

/*
 * /dev/shm is writable by every user: a file is read only if it is a
 * regular file (not a FIFO that would hang us, not a link) owned by the
 * user running the process it names, so nobody can show counters for
 * another user's process.
 */
static FILE *open_owned(const char *path, int pid)
{
	struct stat st, proc;
	char pp[32];
	FILE *f;
	int fd;

	snprintf(pp, sizeof(pp), "/proc/%d", pid);
	if (stat(pp, &proc))
		return NULL;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != proc.st_uid) {
		close(fd);
		errno = EPERM;
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

/* One process's file; stale, foreign and unreadable ones are skipped. */
static int sockets_of(const char *path, int pid, bool *first)
{
	struct vmak_sockstats_hdr hdr;
	struct vmak_sockstat st;
	uint32_t i;
	FILE *f;

	if (vmak_sockstats_stale(pid))
		return 0;
	f = open_owned(path, pid);
	if (!f)
		return errno == EACCES || errno == EPERM || errno == ELOOP ||
		       errno == ENOENT ? 0 : -errno;
	if (fread(&hdr, sizeof(hdr), 1, f) != 1 ||
	    hdr.magic != VMAK_SOCKSTATS_MAGIC ||
	    hdr.version != VMAK_SOCKSTATS_VERSION || hdr.pid != pid) {
		fclose(f);
		return 0;
	}
	for (i = 0; i < hdr.nslots && i < VMAK_SOCKSTATS_SLOTS; i++) {
		if (fread(&st, sizeof(st), 1, f) != 1)
			break;
		if (st.in_use)
			print_sockstat(pid, &st, first);
	}
	fclose(f);
	return 0;
}

static int cmd_sockets(int argc, char **argv)
{
	char path[PATH_MAX];
	bool first = true;
	struct dirent *de;
	long want = 0;
	DIR *d;
	int pid;

	if (argc == 2 && !strcmp(argv[0], "-p")) {
		want = (long)parse_num(argv[1], INT32_MAX);
		if (want <= 0)
			return usage_err("sockets -p PID: a process id");
	} else if (argc) {
		return usage_err("sockets [-p PID]");
	}
	d = opendir(VMAK_SOCKSTATS_DIR);
	if (!d)
		return fail(VMAK_SOCKSTATS_DIR, -errno);
	if (json)
		putchar('[');
	while ((de = readdir(d))) {
		pid = vmak_sockstats_pid(de->d_name);
		if (!pid || (want && pid != want))
			continue;
		snprintf(path, sizeof(path), "%s/%s", VMAK_SOCKSTATS_DIR,
			 de->d_name);
		sockets_of(path, pid, &first);
	}
	closedir(d);
	if (json)
		printf("]\n");
	return 0;
}

static int cmd_info(void)
{
	struct vmak_info info = { .sz = sizeof(info) };
	int err = vmak_info_get(&info);

	if (err)
		return fail("info", err);
	if (json) {
		printf("{\"version\":");
		json_str(info.version);
		printf(",\"family\":%u,\"pinned_pages\":%" PRIu64
		       ",\"hooked_devices\":%u}\n",
		       info.family, info.pinned_pages, info.hooked_devices);
	} else {
		printf("version %s\nfamily %u\npinned pages %" PRIu64
		       "\nhooked devices %u\n", info.version, info.family,
		       info.pinned_pages, info.hooked_devices);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const char *cmd;
	int c;

	while ((c = getopt_long(argc, argv, "+jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	cmd = argv[optind++];
	argc -= optind;
	argv += optind;
	if (!strcmp(cmd, "info"))
		return argc ? usage_err("info takes no arguments") : cmd_info();
	if (!strcmp(cmd, "ring"))
		return cmd_ring(argc, argv);
	if (!strcmp(cmd, "rule")) {
		if (argc < 1 || strcmp(argv[0], "show"))
			return usage_err("rule show [RING-ID]");
		return cmd_rule_show(argc - 1, argv + 1);
	}
	if (!strcmp(cmd, "stats"))
		return cmd_ring_show(argc, argv, true);
	if (!strcmp(cmd, "monitor"))
		return cmd_monitor(argc, argv);
	if (!strcmp(cmd, "sockets"))
		return cmd_sockets(argc, argv);
	fprintf(stderr, "vmakctl: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}
