// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of the libvma-compatible layer's configuration:
 * variables (lib/vma/env.c) and libvma.conf rules (lib/vma/rules.c). A
 * malformed value must cost exactly one log line that names the
 * variable, and keep the default.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"
#include "vma.h"

/* Run fn with stderr captured; returns what it printed (malloc'd). */
static char *capture(void (*fn)(void *), void *arg)
{
	char path[] = "/tmp/vma-config.XXXXXX", *buf;
	int fd = mkstemp(path), saved = dup(STDERR_FILENO);
	long n;
	FILE *f;

	unlink(path);
	dup2(fd, STDERR_FILENO);
	fn(arg);
	dup2(saved, STDERR_FILENO);
	close(saved);
	n = lseek(fd, 0, SEEK_END);
	buf = calloc(1, (size_t)n + 1);
	f = fdopen(fd, "r");
	fseek(f, 0, SEEK_SET);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		buf[0] = 0;
	fclose(f);
	return buf;
}

static int lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void load(void *arg)
{
	(void)arg;
	vconf_load();
}

static void clear_env(void)
{
	static const char *const names[] = {
		"TRACELEVEL", "LOG_FILE", "SPEC", "OFFLOADED_SOCKETS", "RX_POLL",
		"SELECT_POLL", "RING_ALLOCATION_LOGIC_RX",
		"RING_ALLOCATION_LOGIC_TX", "RX_UDP_POLL_OS_RATIO", "RX_RING",
		"RX_WRE", "CHUNK_SIZE", "UMEM_SIZE", "RX_TIMESTAMP",
		"CONFIG_FILE", "REPLY_POLL",
	};
	char n[64];
	unsigned int i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(n, sizeof(n), "VMA_%s", names[i]);
		unsetenv(n);
		snprintf(n, sizeof(n), "VMAK_%s", names[i]);
		unsetenv(n);
	}
}

TEST(defaults_without_environment)
{
	char *log;

	clear_env();
	log = capture(load, NULL);
	EXPECT_STREQ("", log);
	EXPECT_EQ(true, vconf.offload);
	EXPECT_EQ(0, vconf.rx_poll);
	EXPECT_TRUE(vconf.rx_timestamp);	/* SO_TIMESTAMP* stay on rings */
	EXPECT_EQ(50000, vconf.reply_poll_ns);
	EXPECT_EQ(RING_LOGIC_PER_INTERFACE, vconf.ring_logic_rx);
	EXPECT_EQ(2048, vconf.chunk_size);
	EXPECT_EQ(4ULL << 20, vconf.umem_size);
	free(log);
}

TEST(values_parsed)
{
	char *log;

	clear_env();
	setenv("VMA_RX_POLL", "-1", 1);
	setenv("VMA_SELECT_POLL", "100000", 1);
	setenv("VMA_RING_ALLOCATION_LOGIC_RX", "10", 1);
	setenv("VMA_OFFLOADED_SOCKETS", "0", 1);
	setenv("VMAK_UMEM_SIZE", "2M", 1);
	setenv("VMA_RX_WRE", "256", 1);
	setenv("VMAK_CHUNK_SIZE", "4096", 1);
	setenv("VMA_TRACELEVEL", "details", 1);
	setenv("VMAK_REPLY_POLL", "200", 1);
	log = capture(load, NULL);
	EXPECT_STREQ("", log);
	EXPECT_EQ(-1, vconf.rx_poll);
	EXPECT_EQ(200000, vconf.reply_poll_ns);
	EXPECT_EQ(100000, vconf.select_poll);
	EXPECT_EQ(RING_LOGIC_PER_SOCKET, vconf.ring_logic_rx);
	EXPECT_EQ(false, vconf.offload);
	EXPECT_EQ(2ULL << 20, vconf.umem_size);
	EXPECT_EQ(256, vconf.rx_chunks);
	EXPECT_EQ(4096, vconf.chunk_size);
	EXPECT_EQ(VLOG_DETAILS, vconf.trace_level);
	free(log);
	clear_env();
	/* every ring_logic_t of vma_extra.h, by its value there */
	setenv("VMA_RING_ALLOCATION_LOGIC_RX", "11", 1);
	log = capture(load, NULL);
	EXPECT_STREQ("", log);
	EXPECT_EQ(RING_LOGIC_PER_USER_ID, vconf.ring_logic_rx);
	EXPECT_EQ(11, RING_LOGIC_PER_USER_ID);
	free(log);
	clear_env();
}

TEST(vmak_name_wins_over_vma_name)
{
	char *log;

	clear_env();
	setenv("VMA_RX_POLL", "5", 1);
	setenv("VMAK_RX_POLL", "7", 1);
	log = capture(load, NULL);
	EXPECT_EQ(7, vconf.rx_poll);
	free(log);
	clear_env();
}

TEST(spec_then_variables)
{
	char *log;

	clear_env();
	setenv("VMA_SPEC", "latency", 1);
	setenv("VMA_SELECT_POLL", "0", 1);
	log = capture(load, NULL);
	EXPECT_STREQ("", log);
	EXPECT_EQ(-1, vconf.rx_poll);
	EXPECT_EQ(0, vconf.select_poll);
	free(log);
	/* throughput: no polling at all, for answers neither */
	clear_env();
	setenv("VMA_SPEC", "throughput", 1);
	log = capture(load, NULL);
	EXPECT_STREQ("", log);
	EXPECT_EQ(0, vconf.rx_poll);
	EXPECT_EQ(0, vconf.reply_poll_ns);
	free(log);
	clear_env();
	setenv("VMA_SPEC", "throughput", 1);
	setenv("VMAK_REPLY_POLL", "20", 1);
	log = capture(load, NULL);
	EXPECT_EQ(20000, vconf.reply_poll_ns);
	free(log);
	clear_env();
}

struct bad {
	const char *name, *value, *expect;
};

static const struct bad bads[] = {
	{ "VMA_RX_POLL", "fast", "VMA_RX_POLL=\"fast\": expected an integer" },
	{ "VMA_RX_POLL", "12x", "VMA_RX_POLL=\"12x\": expected an integer" },
	{ "VMA_RX_POLL", "-2", "VMA_RX_POLL=\"-2\": expected an integer in [-1, " },
	{ "VMA_RING_ALLOCATION_LOGIC_RX", "5", "VMA_RING_ALLOCATION_LOGIC_RX=\"5\": expected a ring_logic_t" },
	{ "VMA_RING_ALLOCATION_LOGIC_RX", "40", "VMA_RING_ALLOCATION_LOGIC_RX=\"40\": expected an integer in [0, 31]" },
	{ "VMA_OFFLOADED_SOCKETS", "maybe", "VMA_OFFLOADED_SOCKETS=\"maybe\": expected 0 or 1" },
	{ "VMAK_UMEM_SIZE", "10Q", "VMAK_UMEM_SIZE=\"10Q\": expected a size" },
	{ "VMAK_UMEM_SIZE", "-4M", "VMAK_UMEM_SIZE=\"-4M\": expected a size" },
	{ "VMAK_CHUNK_SIZE", "3000", "VMAK_CHUNK_SIZE=\"3000\": expected a power of two" },
	{ "VMA_TRACELEVEL", "loud", "VMA_TRACELEVEL=\"loud\": expected 0-7 or PANIC" },
	{ "VMA_SPEC", "fastest", "VMA_SPEC=\"fastest\": expected latency" },
	{ "VMAK_REPLY_POLL", "-1", "VMAK_REPLY_POLL=\"-1\": expected an integer in [0, 1000000]; using 50" },
	{ "VMAK_REPLY_POLL", "soon", "VMAK_REPLY_POLL=\"soon\": expected an integer" },
};

TEST(each_bad_value_one_line_naming_it_and_the_default_kept)
{
	struct vconf def;
	unsigned int i;
	char *log;

	clear_env();
	free(capture(load, NULL));
	def = vconf;
	for (i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		clear_env();
		setenv(bads[i].name, bads[i].value, 1);
		log = capture(load, NULL);
		EXPECT_EQ(1, lines(log)) TH_LOG("%s=%s: %s", bads[i].name,
						bads[i].value, log);
		EXPECT_NE(NULL, strstr(log, bads[i].expect)) TH_LOG("%s", log);
		EXPECT_EQ(def.rx_poll, vconf.rx_poll);
		EXPECT_EQ(def.ring_logic_rx, vconf.ring_logic_rx);
		EXPECT_EQ(def.offload, vconf.offload);
		EXPECT_EQ(def.umem_size, vconf.umem_size);
		EXPECT_EQ(def.chunk_size, vconf.chunk_size);
		EXPECT_EQ(def.reply_poll_ns, vconf.reply_poll_ns);
		free(log);
	}
	clear_env();
}

/* ---- libvma.conf ---- */

static struct sockaddr *sa_of(const char *a, int port)
{
	static struct sockaddr_storage ss[4];
	static int i;
	struct sockaddr_storage *s = &ss[i++ % 4];

	memset(s, 0, sizeof(*s));
	if (inet_pton(AF_INET, a, &((struct sockaddr_in *)s)->sin_addr) == 1) {
		((struct sockaddr_in *)s)->sin_family = AF_INET;
		((struct sockaddr_in *)s)->sin_port = htons((uint16_t)port);
	} else {
		inet_pton(AF_INET6, a, &((struct sockaddr_in6 *)s)->sin6_addr);
		((struct sockaddr_in6 *)s)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)s)->sin6_port = htons((uint16_t)port);
	}
	return (struct sockaddr *)s;
}

static const char conf[] =
	"# comment\n"
	"log min-level 9\n"
	"use os udp_receiver 10.0.0.0/8:1000-2000   # not these\n"
	"use vma udp_receiver *:*\n"
	"application-id feed *\n"
	"use os udp_connect *:*:192.168.1.1:7000\n"
	"use os udp_receiver [fd00::]/16:*\n"
	"application-id other *\n"
	"use os udp_receiver *:*\n";

TEST(conf_rules_first_match_decides)
{
	struct vrules rs = { 0 };

	ASSERT_EQ(0, vrules_parse(&rs, conf, "t.conf", "feed", NULL));
	EXPECT_EQ(4, rs.n);
	EXPECT_FALSE(vrules_offload(&rs, VROLE_UDP_RECEIVER, sa_of("10.1.2.3", 1500), NULL));
	EXPECT_TRUE(vrules_offload(&rs, VROLE_UDP_RECEIVER, sa_of("10.1.2.3", 999), NULL));
	EXPECT_TRUE(vrules_offload(&rs, VROLE_UDP_RECEIVER, sa_of("11.1.2.3", 1500), NULL));
	/* a mapped IPv4 address matches the IPv4 range */
	EXPECT_FALSE(vrules_offload(&rs, VROLE_UDP_RECEIVER, sa_of("::ffff:10.0.0.1", 1000), NULL));
	EXPECT_FALSE(vrules_offload(&rs, VROLE_UDP_CONNECT, sa_of("10.9.9.9", 5),
				    sa_of("192.168.1.1", 7000)));
	EXPECT_TRUE(vrules_offload(&rs, VROLE_UDP_CONNECT, sa_of("10.9.9.9", 5),
				   sa_of("192.168.1.1", 7001)));
	vrules_free(&rs);
}

TEST(conf_sections_by_program)
{
	struct vrules rs = { 0 };

	ASSERT_EQ(0, vrules_parse(&rs, conf, "t.conf", "other", NULL));
	EXPECT_EQ(3, rs.n);
	ASSERT_EQ(0, vrules_parse(&rs, conf, "t.conf", "feed", NULL));
	vrules_free(&rs);
	/* the receiver rule of "feed" for IPv6: after the catch-all, so vma */
	ASSERT_EQ(0, vrules_parse(&rs, conf, "t.conf", "feed", NULL));
	EXPECT_TRUE(vrules_offload(&rs, VROLE_UDP_RECEIVER, sa_of("fd00::5", 9), NULL));
	vrules_free(&rs);
}

TEST(conf_ipv6_prefix)
{
	struct vrules rs = { 0 };

	ASSERT_EQ(0, vrules_add_line(&rs, "use os udp_receiver [fd00::]/16:5000"));
	EXPECT_FALSE(vrules_offload(&rs, VROLE_UDP_RECEIVER, sa_of("fd00::5", 5000), NULL));
	EXPECT_TRUE(vrules_offload(&rs, VROLE_UDP_RECEIVER, sa_of("fd01::5", 5000), NULL));
	EXPECT_TRUE(vrules_offload(&rs, VROLE_UDP_RECEIVER, sa_of("fd00::5", 5001), NULL));
	EXPECT_TRUE(vrules_offload(&rs, VROLE_UDP_RECEIVER, sa_of("10.0.0.1", 5000), NULL));
	vrules_free(&rs);
}

static const char *const bad_lines[] = {
	"use", "use vma", "use vmx udp_receiver *:*", "use vma udp_listener *:*",
	"use vma udp_receiver 10.0.0.0/33:1", "use vma udp_receiver 10.0.0.1:70000",
	"use vma udp_receiver 10.0.0.1:20-10", "use vma udp_receiver 10.0.0.300:1",
	"use vma udp_receiver [fd00::1:1", "use vma udp_receiver *:* junk",
	"use vma udp_receiver 1.2.3.4:1:5.6.7.8:x",
};

TEST(conf_malformed_lines_refused)
{
	struct vrules rs = { 0 };
	unsigned int i;

	for (i = 0; i < sizeof(bad_lines) / sizeof(bad_lines[0]); i++) {
		const char *l = bad_lines[i];

		EXPECT_EQ(-1, vrules_add_line(&rs, l)) TH_LOG("[%u]", i);
	}
	EXPECT_EQ(0, rs.n);
	vrules_free(&rs);
}

static void parse_bad(void *arg)
{
	struct vrules *rs = arg;

	vrules_parse(rs, "use vma udp_receiver *:*\nuse vma bogus\nuse os udp_receiver *:*\n",
		     "my.conf", "p", NULL);
}

TEST(conf_malformed_file_one_line_naming_file_and_line)
{
	struct vrules rs = { 0 };
	char *log;

	vlog_level = VLOG_WARNING;
	log = capture(parse_bad, &rs);
	EXPECT_EQ(1, lines(log));
	EXPECT_NE(NULL, strstr(log, "my.conf:2:")) TH_LOG("%s", log);
	EXPECT_EQ(1, rs.n);	/* the rules before it are kept */
	free(log);
	vrules_free(&rs);
}

TEST_HARNESS_MAIN
