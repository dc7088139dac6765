// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The library's log: one line per event, "vmak <LEVEL>: ...", to stderr or
 * VMA_LOG_FILE, at or below VMA_TRACELEVEL (libvma's numbering). A line is
 * always one line: control characters in it (a newline in a variable's
 * value, say) are written as \xNN, so nothing from outside can forge
 * another line.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sys.h"
#include "vma.h"
#include "fd.h"

int vlog_level VMAK_HIDDEN = VLOG_WARNING;
static int log_fd = -1;

static const char *const names[] = {
	"PANIC", "ERROR", "WARNING", "INFO", "DETAILS", "DEBUG", "FINE",
	"FINER",
};

/*
 * Never following a symbolic link at the name (a link planted in a shared
 * directory), created for the user alone.
 */
void vlog_open(const char *path)
{
	char buf[300];
	const char *p = strstr(path, "%d");
	int fd;

	if (p) {
		snprintf(buf, sizeof(buf), "%.*s%d%s", (int)(p - path), path,
			 (int)getpid(), p + 2);
		path = buf;
	}
	fd = vmak_sys_open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
		  0600);
	if (fd < 0) {
		vlog(VLOG_WARNING, "VMA_LOG_FILE: cannot open %s: %m; logging to stderr",
		     path);
		return;
	}
	log_fd = vfd_adopt(fd);
}

static size_t escape(char *out, size_t cap, const char *in, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0, i;
	unsigned char c;

	for (i = 0; i < n && o + 4 < cap; i++) {
		c = (unsigned char)in[i];
		if (c >= 0x20 && c != 0x7f) {
			out[o++] = (char)c;
			continue;
		}
		out[o++] = '\\';
		out[o++] = 'x';
		out[o++] = hex[c >> 4];
		out[o++] = hex[c & 15];
	}
	return o;
}

void vlog(int level, const char *fmt, ...)
{
	char line[512], out[1024];
	va_list ap;
	int n, m;
	size_t o;

	if (level > vlog_level)
		return;
	if (level < 0)
		level = 0;
	if (level > VLOG_FINER)
		level = VLOG_FINER;
	n = snprintf(line, sizeof(line), "vmak %s: ", names[level]);
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	n += m;
	if (n > (int)sizeof(line) - 1)
		n = (int)sizeof(line) - 1;
	o = escape(out, sizeof(out) - 1, line, (size_t)n);
	out[o++] = '\n';
	if (vmak_sys_write(log_fd >= 0 ? log_fd : STDERR_FILENO, out, o) < 0)
		o = 0;
}
