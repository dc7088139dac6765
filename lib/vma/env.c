// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Configuration from the environment: libvma's VMA_* names, each also
 * accepted as VMAK_* (which wins), but for the few read under one name
 * (VMA_APPLICATION_ID, VMAK_FORK). A malformed value costs one log line
 * naming the variable and what it expects; the default stays.
 *
 * A program the kernel runs with AT_SECURE (set-user-ID, set-group-ID,
 * file capabilities) gets none of this: its environment comes from a
 * less privileged user, so every variable keeps its default, as the C
 * library ignores MALLOC_* there, and no file a variable names is opened.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/auxv.h>

#include "linux/vmak.h"

#include "reply.h"
#include "vma.h"

struct vconf vconf VMAK_HIDDEN;

static void vconf_defaults(struct vconf *c)
{
	memset(c, 0, sizeof(*c));
	c->trace_level = VLOG_WARNING;
	c->offload = true;
	c->rx_poll = 0;
	c->select_poll = 0;
	c->reply_poll_ns = VREPLY_POLL_US * 1000LL;
	c->ring_logic_rx = RING_LOGIC_PER_INTERFACE;
	c->ring_logic_tx = RING_LOGIC_PER_INTERFACE;
	c->rx_ring = 2048;
	c->rx_chunks = 1024;
	c->rx_timestamp = true;	/* SO_TIMESTAMP* sockets stay on rings */
	c->chunk_size = 2048;
	c->umem_size = 4ULL << 20;
	c->os_poll_ratio = 100;
	snprintf(c->config_file, sizeof(c->config_file), "/etc/libvma.conf");
}

bool vconf_int(const char *name, const char *val, int64_t min, int64_t max,
	       int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(val, &end, 0);
	if (errno || end == val || *end || v < min || v > max) {
		vlog(VLOG_WARNING, "%s=\"%s\": expected an integer in [%lld, %lld]; using %lld",
		     name, val, (long long)min, (long long)max,
		     (long long)*out);
		return false;
	}
	*out = v;
	return true;
}

bool vconf_size(const char *name, const char *val, uint64_t min,
		uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;
	int shift = 0;

	errno = 0;
	v = strtoull(val, &end, 0);
	if (!errno && end != val && *val != '-') {
		switch (toupper((unsigned char)*end)) {
		case 'K': shift = 10; end++; break;
		case 'M': shift = 20; end++; break;
		case 'G': shift = 30; end++; break;
		}
		if (shift && toupper((unsigned char)*end) == 'B')
			end++;
		if (!*end && v <= (max >> shift) && (v << shift) >= min) {
			*out = (uint64_t)v << shift;
			return true;
		}
	}
	vlog(VLOG_WARNING, "%s=\"%s\": expected a size in [%llu, %llu] bytes (K, M, G allowed); using %llu",
	     name, val, (unsigned long long)min, (unsigned long long)max,
	     (unsigned long long)*out);
	return false;
}

bool vconf_bool(const char *name, const char *val, bool *out)
{
	if (!strcmp(val, "1") || !strcasecmp(val, "yes") ||
	    !strcasecmp(val, "true") || !strcasecmp(val, "on")) {
		*out = true;
		return true;
	}
	if (!strcmp(val, "0") || !strcasecmp(val, "no") ||
	    !strcasecmp(val, "false") || !strcasecmp(val, "off")) {
		*out = false;
		return true;
	}
	vlog(VLOG_WARNING, "%s=\"%s\": expected 0 or 1; using %d", name, val,
	     *out);
	return false;
}

static bool conf_level(const char *name, const char *val, int *out)
{
	static const char *const lv[] = {
		"PANIC", "ERROR", "WARNING", "INFO", "DETAILS", "DEBUG",
		"FINE", "FINER",
	};
	int64_t v = *out;
	unsigned int i;

	for (i = 0; i < sizeof(lv) / sizeof(lv[0]); i++)
		if (!strcasecmp(val, lv[i]) ||
		    (i == VLOG_WARNING && !strcasecmp(val, "WARN"))) {
			*out = (int)i;
			return true;
		}
	if (!isdigit((unsigned char)*val)) {
		vlog(VLOG_WARNING, "%s=\"%s\": expected 0-7 or PANIC, ERROR, WARNING, INFO, DETAILS, DEBUG, FINE, FINER; using %d",
		     name, val, *out);
		return false;
	}
	if (!vconf_int(name, val, 0, 7, &v))
		return false;
	*out = (int)v;
	return true;
}

bool vconf_logic_valid(int64_t v)
{
	switch (v) {
	case RING_LOGIC_PER_INTERFACE: case RING_LOGIC_PER_IP:
	case RING_LOGIC_PER_SOCKET: case RING_LOGIC_PER_USER_ID:
	case RING_LOGIC_PER_THREAD: case RING_LOGIC_PER_CORE:
	case RING_LOGIC_PER_CORE_ATTACH_THREADS:
		return true;
	}
	return false;
}

static bool conf_logic(const char *name, const char *val, int *out)
{
	int64_t v = *out;

	if (!vconf_int(name, val, 0, 31, &v))
		return false;
	if (vconf_logic_valid(v)) {
		*out = (int)v;
		return true;
	}
	vlog(VLOG_WARNING, "%s=\"%s\": expected a ring_logic_t (0, 1, 10, 11, 20, 30 or 31); using %d",
	     name, val, *out);
	return false;
}

/* libvma's profiles: what each sets before the other variables apply. */
bool vconf_spec(const char *val, struct vconf *c)
{
	if (!strcasecmp(val, "latency") || !strcmp(val, "15") ||
	    !strcasecmp(val, "multi_ring_latency")) {
		c->rx_poll = -1;
		c->select_poll = -1;
		c->os_poll_ratio = 100;
		if (!strcasecmp(val, "multi_ring_latency"))
			c->ring_logic_rx = c->ring_logic_tx = RING_LOGIC_PER_SOCKET;
		return true;
	}
	if (!strcasecmp(val, "throughput")) {
		c->rx_poll = 0;
		c->select_poll = 0;
		c->reply_poll_ns = 0;
		c->rx_ring = 4096;
		return true;
	}
	vlog(VLOG_WARNING, "VMA_SPEC=\"%s\": expected latency, multi_ring_latency or throughput; no profile applied",
	     val);
	return false;
}

const char *vconf_getenv(const char *name)
{
	return secure_getenv(name);
}

/* VMAK_<x> wins over VMA_<x>; the name given back is the one set. */
static const char *env(const char *suffix, char *name, size_t len)
{
	const char *v;

	snprintf(name, len, "VMAK_%s", suffix);
	v = vconf_getenv(name);
	if (v)
		return v;
	snprintf(name, len, "VMA_%s", suffix);
	return vconf_getenv(name);
}

/* Under AT_SECURE: was anything set that we now ignore? */
static bool any_set(void)
{
	extern char **environ;
	char **e;

	for (e = environ; e && *e; e++)
		if (!strncmp(*e, "VMA_", 4) || !strncmp(*e, "VMAK_", 5))
			return true;
	return false;
}

static void conf_pow2(const char *name, const char *val, uint64_t min,
		      uint64_t max, uint32_t *out)
{
	uint64_t u = *out;

	if (!vconf_size(name, val, min, max, &u))
		return;
	if (u & (u - 1))
		vlog(VLOG_WARNING, "%s=\"%s\": expected a power of two; using %u",
		     name, val, *out);
	else
		*out = (uint32_t)u;
}

void vconf_load(void)
{
	struct vconf *c = &vconf;
	char name[64];
	const char *v;
	int64_t i;
	uint64_t u;
	int lvl;

	vconf_defaults(c);
	c->secure = getauxval(AT_SECURE) != 0;
	if (c->secure) {
		vlog_level = c->trace_level;
		if (any_set())
			vlog(VLOG_WARNING, "a set-user-ID or capability program: the VMA_* and VMAK_* variables are ignored");
		return;
	}
	if ((v = env("TRACELEVEL", name, sizeof(name)))) {
		lvl = c->trace_level;
		conf_level(name, v, &lvl);
		c->trace_level = lvl;
	}
	vlog_level = c->trace_level;
	if ((v = env("LOG_FILE", name, sizeof(name))) && *v) {
		snprintf(c->log_file, sizeof(c->log_file), "%s", v);
		vlog_open(c->log_file);
	}
	if ((v = env("SPEC", name, sizeof(name))))
		vconf_spec(v, c);
	if ((v = env("OFFLOADED_SOCKETS", name, sizeof(name))))
		vconf_bool(name, v, &c->offload);
	if ((v = env("RX_POLL", name, sizeof(name))))
		vconf_int(name, v, -1, 100000000, &c->rx_poll);
	if ((v = env("SELECT_POLL", name, sizeof(name))))
		vconf_int(name, v, -1, 100000000, &c->select_poll);
	if ((v = env("REPLY_POLL", name, sizeof(name)))) {
		i = c->reply_poll_ns / 1000;
		if (vconf_int(name, v, 0, 1000000, &i))
			c->reply_poll_ns = i * 1000;
	}
	if ((v = env("RING_ALLOCATION_LOGIC_RX", name, sizeof(name))))
		conf_logic(name, v, &c->ring_logic_rx);
	if ((v = env("RING_ALLOCATION_LOGIC_TX", name, sizeof(name))))
		conf_logic(name, v, &c->ring_logic_tx);
	if ((v = env("RX_UDP_POLL_OS_RATIO", name, sizeof(name)))) {
		i = c->os_poll_ratio;
		if (vconf_int(name, v, 0, 1000000, &i))
			c->os_poll_ratio = (uint32_t)i;
	}
	if ((v = env("RX_RING", name, sizeof(name))))
		conf_pow2(name, v, VMAK_RING_MIN, VMAK_RING_MAX, &c->rx_ring);
	if ((v = env("RX_WRE", name, sizeof(name)))) {
		u = c->rx_chunks;
		if (vconf_size(name, v, 64, VMAK_RING_MAX, &u))
			c->rx_chunks = (uint32_t)u;
	}
	if ((v = env("CHUNK_SIZE", name, sizeof(name))))
		conf_pow2(name, v, VMAK_CHUNK_MIN, VMAK_CHUNK_MAX, &c->chunk_size);
	if ((v = env("UMEM_SIZE", name, sizeof(name))))
		vconf_size(name, v, 1ULL << 16, 1ULL << 32, &c->umem_size);
	if ((v = env("RX_TIMESTAMP", name, sizeof(name))))
		vconf_bool(name, v, &c->rx_timestamp);
	if ((v = env("SOCKETXTREME", name, sizeof(name))))
		vconf_bool(name, v, &c->socketxtreme);
	if ((v = env("CONFIG_FILE", name, sizeof(name))))
		snprintf(c->config_file, sizeof(c->config_file), "%s", v);
	if ((v = vconf_getenv("VMAK_FORK"))) {
		if (!strcmp(v, "kernel"))
			c->fork_kernel = true;
		else if (strcmp(v, "parent"))
			vlog(VLOG_WARNING, "VMAK_FORK=\"%s\": expected parent or kernel; using parent",
			     v);
	}
}
