// SPDX-License-Identifier: GPL-2.0
/*
 * vmakctl: inspect and tune vmak rings over the "vmak" generic netlink
 * family. Output is text, or JSON with -j.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vmak/vmak.h"

static bool json;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: vmakctl [-j] COMMAND\n"
		"  info     module version and socket family\n"
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

static int cmd_info(void)
{
	struct vmak_info info;
	int err = vmak_info_get(&info);

	if (err)
		return fail("info", err);
	if (json) {
		printf("{\"version\":");
		json_str(info.version);
		printf(",\"family\":%u}\n", info.family);
	} else {
		printf("version %s\nfamily %u\n", info.version, info.family);
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
	if (!strcmp(argv[optind], "info"))
		return cmd_info();
	fprintf(stderr, "vmakctl: unknown command '%s'\n", argv[optind]);
	usage(stderr);
	return 2;
}
