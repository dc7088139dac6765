// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libvma.conf: which sockets to offload.
 *
 *   application-id <program|*> <id|*>     starts a section; the rules
 *                                         after it apply to that program
 *                                         (and VMA_APPLICATION_ID)
 *   use <vma|os> <role> <local>[:<peer>]  a rule
 *
 * role: udp_receiver, udp_sender, udp_connect, tcp_server, tcp_client.
 * An endpoint is <addr>[/<prefix>]:<port>[-<port>], either half '*'; IPv6
 * addresses go in brackets. '#' starts a comment. Rules before the first
 * section apply to every program. The first matching rule decides.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sys.h"
#include "vma.h"

struct vrules vrules VMAK_HIDDEN;

static const char *const roles[] = {
	[VROLE_UDP_RECEIVER] = "udp_receiver",
	[VROLE_UDP_SENDER] = "udp_sender",
	[VROLE_UDP_CONNECT] = "udp_connect",
	[VROLE_TCP_SERVER] = "tcp_server",
	[VROLE_TCP_CLIENT] = "tcp_client",
};

static bool parse_port(const char *s, struct vaddr_range *r)
{
	char *end;
	unsigned long lo, hi;

	if (!strcmp(s, "*")) {
		r->port_lo = 0;
		r->port_hi = 65535;
		return true;
	}
	lo = strtoul(s, &end, 10);
	if (end == s || lo > 65535)
		return false;
	hi = lo;
	if (*end == '-') {
		s = end + 1;
		hi = strtoul(s, &end, 10);
		if (end == s || hi > 65535 || hi < lo)
			return false;
	}
	if (*end)
		return false;
	r->port_lo = (uint16_t)lo;
	r->port_hi = (uint16_t)hi;
	return true;
}

/* "<addr>[/<len>]:<port>" or "*:<port>" or "*"; *rest after it. */
static bool parse_endpoint(const char *s, struct vaddr_range *r,
			   const char **rest)
{
	char addr[64], port[32];
	const char *p, *colon;
	size_t n;
	char *slash, *end;
	long len;

	memset(r, 0, sizeof(*r));
	r->port_hi = 65535;
	if (*s == '[') {
		p = strchr(s, ']');
		if (!p)
			return false;
		n = (size_t)(p - s - 1);
		p++;
		if (*p == '/') {	/* [addr]/len */
			while (*p && *p != ':')
				p++;
		}
		if (n >= sizeof(addr))
			return false;
		memcpy(addr, s + 1, n);
		addr[n] = 0;
		slash = strchr(s, '/');
		if (slash && slash < p) {
			len = strtol(slash + 1, &end, 10);
			if (end != p || len < 0 || len > 128)
				return false;
			r->prefix = (int)len;
		} else {
			r->prefix = 128;
		}
		if (inet_pton(AF_INET6, addr, r->addr) != 1)
			return false;
		r->af = AF_INET6;
		colon = p;
	} else {
		colon = strchr(s, ':');
		n = colon ? (size_t)(colon - s) : strlen(s);
		if (n >= sizeof(addr))
			return false;
		memcpy(addr, s, n);
		addr[n] = 0;
		if (strcmp(addr, "*")) {
			slash = strchr(addr, '/');
			r->prefix = 32;
			if (slash) {
				*slash = 0;
				len = strtol(slash + 1, &end, 10);
				if (end == slash + 1 || *end || len < 0 ||
				    len > 32)
					return false;
				r->prefix = (int)len;
			}
			if (inet_pton(AF_INET, addr, r->addr) != 1)
				return false;
			r->af = AF_INET;
		}
	}
	if (!colon || !*colon) {	/* no port: any */
		*rest = colon ? colon : s + strlen(s);
		return true;
	}
	p = colon + 1;
	n = strcspn(p, ": \t");
	if (!n || n >= sizeof(port))
		return false;
	memcpy(port, p, n);
	port[n] = 0;
	if (!parse_port(port, r))
		return false;
	*rest = p + n;
	return true;
}

/*
 * add_conf_rule() adds while other threads match sockets without a lock
 * (vrules_offload()): a full array is copied to a bigger one, published
 * before the count that covers the new rule, and the old one is never
 * freed (a reader may still be in it; the arrays double, so all the old
 * ones together are smaller than the last). Writers take push_lock.
 */
static pthread_mutex_t push_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vrule *retired[32];	/* kept, not leaked: one per doubling */
static unsigned int nretired;

static int rules_push(struct vrules *rs, const struct vrule *r)
{
	struct vrule *v;
	int n, err = 0;

	pthread_mutex_lock(&push_lock);
	v = rs->v;
	n = rs->n;
	if (n == rs->cap) {
		v = malloc(sizeof(*v) * (size_t)(rs->cap ? rs->cap * 2 : 8));
		if (!v) {
			err = -1;
			goto out;
		}
		if (n)
			memcpy(v, rs->v, sizeof(*v) * (size_t)n);
		if (rs->v && nretired < sizeof(retired) / sizeof(retired[0]))
			retired[nretired++] = rs->v;
		rs->cap = rs->cap ? rs->cap * 2 : 8;
	}
	v[n] = *r;
	__atomic_store_n(&rs->v, v, __ATOMIC_RELEASE);
	__atomic_store_n(&rs->n, n + 1, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&push_lock);
	return err;
}

int vrules_add_line(struct vrules *rs, const char *line)
{
	char word[3][128];
	struct vrule r;
	const char *rest;
	unsigned int i;

	memset(&r, 0, sizeof(r));
	if (sscanf(line, " %127s %127s %127s", word[0], word[1], word[2]) != 3 ||
	    strcmp(word[0], "use"))
		return -1;
	if (!strcmp(word[1], "vma"))
		r.use_vma = true;
	else if (strcmp(word[1], "os"))
		return -1;
	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		if (!strcmp(word[2], roles[i]))
			break;
	if (i == sizeof(roles) / sizeof(roles[0]))
		return -1;
	r.role = (enum vrule_role)i;
	/* the endpoints: everything after the third word */
	rest = strstr(line, word[2]) + strlen(word[2]);
	while (isspace((unsigned char)*rest))
		rest++;
	if (!*rest || !parse_endpoint(rest, &r.local, &rest))
		return -1;
	if (*rest == ':') {
		if (!parse_endpoint(rest + 1, &r.peer, &rest))
			return -1;
		r.has_peer = true;
	}
	while (isspace((unsigned char)*rest))
		rest++;
	if (*rest)
		return -1;
	return rules_push(rs, &r);
}

static bool glob_match(const char *pat, const char *s)
{
	return !strcmp(pat, "*") || (s && !strcmp(pat, s));
}

int vrules_parse(struct vrules *rs, const char *text, const char *file,
		 const char *prog, const char *app_id)
{
	char line[512], a[128], b[128];
	bool active = true;
	const char *p = text, *nl;
	int lineno = 0;
	size_t n;
	char *hash, *s;

	while (*p) {
		nl = strchr(p, '\n');
		n = nl ? (size_t)(nl - p) : strlen(p);
		lineno++;
		if (n >= sizeof(line))
			n = sizeof(line) - 1;
		memcpy(line, p, n);
		line[n] = 0;
		p = nl ? nl + 1 : p + strlen(p);
		hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		for (s = line; isspace((unsigned char)*s); s++)
			;
		if (!*s)
			continue;
		if (!strncmp(s, "application-id", 14) &&
		    isspace((unsigned char)s[14])) {
			if (sscanf(s + 14, " %127s %127s", a, b) != 2)
				goto bad;
			active = glob_match(a, prog) &&
				 (!strcmp(b, "*") || (app_id && !strcmp(b, app_id)));
			continue;
		}
		if (!strncmp(s, "log", 3) && isspace((unsigned char)s[3]))
			continue;	/* libvma's own logging lines */
		if (!active)
			continue;
		if (vrules_add_line(rs, s))
			goto bad;
	}
	return 0;
bad:
	vlog(VLOG_WARNING, "VMA_CONFIG_FILE %s:%d: expected \"use vma|os <role> <addr>[/<len>]:<port>[-<port>][:<addr>:<port>]\" or \"application-id <program> <id>\"; the rest of the file is ignored",
	     file, lineno);
	return -1;
}

void vrules_free(struct vrules *rs)
{
	free(rs->v);
	memset(rs, 0, sizeof(*rs));
}

static bool range_match(const struct vaddr_range *r, const struct sockaddr *sa)
{
	const uint8_t *addr;
	uint16_t port;
	int af, bits, i;

	if (!sa)
		return !r->af && r->port_lo == 0 && r->port_hi == 65535;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)sa;

		af = AF_INET;
		addr = (const uint8_t *)&in->sin_addr;
		port = ntohs(in->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const void *)sa;

		af = AF_INET6;
		addr = (const uint8_t *)&in6->sin6_addr;
		port = ntohs(in6->sin6_port);
		/* a mapped IPv4 address matches IPv4 ranges */
		if (r->af == AF_INET && IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
			af = AF_INET;
			addr += 12;
		}
	} else {
		return false;
	}
	if (port < r->port_lo || port > r->port_hi)
		return false;
	if (!r->af)
		return true;
	if (r->af != af)
		return false;
	bits = r->prefix;
	for (i = 0; bits > 0; i++, bits -= 8) {
		uint8_t mask = bits >= 8 ? 0xff : (uint8_t)(0xff << (8 - bits));

		if ((addr[i] ^ r->addr[i]) & mask)
			return false;
	}
	return true;
}

bool vrules_offload(const struct vrules *rs, enum vrule_role role,
		    const struct sockaddr *local, const struct sockaddr *peer)
{
	int i, n = __atomic_load_n(&rs->n, __ATOMIC_ACQUIRE);
	const struct vrule *v = __atomic_load_n(&rs->v, __ATOMIC_ACQUIRE);

	for (i = 0; i < n; i++) {
		const struct vrule *r = &v[i];

		if (r->role != role || !range_match(&r->local, local))
			continue;
		if (r->has_peer && !range_match(&r->peer, peer))
			continue;
		return r->use_vma;
	}
	return true;
}

/*
 * VMA_CONFIG_FILE, for this program (the basename of /proc/self/exe) and
 * VMA_APPLICATION_ID. The default file missing is not worth a line.
 */
void vrules_load(void)
{
	char prog[256] = "", *text = NULL, *base;
	const char *app = vconf_getenv("VMA_APPLICATION_ID");
	FILE *f;
	long n;

	f = fopen(vconf.config_file, "re");
	if (!f) {
		if (vconf_getenv("VMA_CONFIG_FILE") || vconf_getenv("VMAK_CONFIG_FILE"))
			vlog(VLOG_WARNING, "VMA_CONFIG_FILE=\"%s\": cannot read it: %m; offloading every UDP socket",
			     vconf.config_file);
		return;
	}
	if (!fseek(f, 0, SEEK_END) && (n = ftell(f)) > 0 && n < 1 << 20 &&
	    !fseek(f, 0, SEEK_SET) && (text = calloc(1, (size_t)n + 1)) &&
	    fread(text, 1, (size_t)n, f) == (size_t)n) {
		n = readlink("/proc/self/exe", prog, sizeof(prog) - 1);
		prog[n > 0 ? n : 0] = 0;
		base = strrchr(prog, '/');
		vrules_parse(&vrules, text, vconf.config_file,
			     base ? base + 1 : prog, app);
	}
	free(text);
	vmak_sys_fclose(f);
}
