// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The library's log: one line per event, "vmak <LEVEL>: ...", to stderr or
 * VMA_LOG_FILE, at or below VMA_TRACELEVEL (libvma's numbering).
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sys.h"
#include "vma.h"

int vlog_level VMAK_HIDDEN = VLOG_WARNING;
static int log_fd = -1;

static const char *const names[] = {
	"PANIC", "ERROR", "WARNING", "INFO", "DETAILS", "DEBUG", "FINE",
	"FINER",
};

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
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		vlog(VLOG_WARNING, "VMA_LOG_FILE: cannot open %s: %m; logging to stderr",
		     path);
		return;
	}
	log_fd = vfd_hide(fd);
	vfd_set_internal(log_fd, true);
}

void vlog(int level, const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n, m;

	if (level > vlog_level)
		return;
	if (level < 0)
		level = 0;
	if (level > VLOG_FINER)
		level = VLOG_FINER;
	n = snprintf(line, sizeof(line), "vmak %s: ", names[level]);
	va_start(ap, fmt);
	m = vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	n += m;
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (vmak_sys_write(log_fd >= 0 ? log_fd : STDERR_FILENO, line, (size_t)n) < 0)
		n = 0;
}
